#!/usr/bin/env bash
# The published package, as a user without a clone gets it: `python -m build` makes a wheel and an
# sdist; the wheel installs with `pip install 'triton-lens[kernel,lsp,viewer]'` into a clean venv (no
# system site-packages, run from outside the source tree) and its `triton-lens check` works on corpus
# files, its language server and viewer import, the viewer page is inside it, and pytest finds the
# plugin; then the sdist installs over it and checks again. Fast after the first run: the wheels of
# the dependencies (pinned to the versions of .venv) are kept in .wheelhouse/ (gitignored; set
# TRITON_LENS_WHEELHOUSE to share one), so only the first run downloads triton.
#   bash tests/package/check_package.sh [PYTHON]      (default: .venv/bin/python)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${1:-$ROOT/.venv/bin/python}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "check_package: $*" >&2; exit 1; }

"$PY" -m build --outdir "$WORK/dist" "$ROOT" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "python -m build failed"; }
wheel=$(ls "$WORK"/dist/triton_lens-*.whl)
sdist=$(ls "$WORK"/dist/triton_lens-*.tar.gz)
echo "built $(basename "$wheel") and $(basename "$sdist")"

pins=$("$PY" - <<'PY'
from importlib.metadata import version
print(f"torch=={version('torch')} triton=={version('triton')} numpy=={version('numpy')}")
PY
)
"$PY" -m venv "$WORK/venv"
V="$WORK/venv/bin"
WHEELS=${TRITON_LENS_WHEELHOUSE:-$ROOT/.wheelhouse}
mkdir -p "$WHEELS"
PIP=(--disable-pip-version-check -q --find-links "$WHEELS")
# shellcheck disable=SC2086  # $pins is a list of requirements
"$V/pip" download "${PIP[@]}" -d "$WHEELS" "$wheel[kernel,lsp,viewer]" $pins pytest >/dev/null
# shellcheck disable=SC2086
"$V/pip" install "${PIP[@]}" "triton-lens[kernel,lsp,viewer] @ file://$wheel" $pins pytest

# Every file of the viewer page (extension/webview: its modules import each other) is in the package.
page_shipped() {
  TL_PAGE="$ROOT/extension/webview" "$V/python" - <<'PY' || fail "$1: the viewer page is incomplete"
import os, pathlib
from triton_lens.viz.webview import require_webview
page = {p.name for p in pathlib.Path(os.environ["TL_PAGE"]).iterdir() if p.suffix in {".html", ".js", ".css"}}
missing = page - {p.name for p in require_webview().iterdir()}
assert not missing, sorted(missing)
PY
}

cd "$WORK"  # nothing of the source tree on sys.path
"$V/python" - <<'PY' || fail "the installed package is incomplete"
import importlib.metadata as md, pathlib, triton_lens, triton_lens.lsp.server, triton_lens.viz.server
from triton_lens.viz.webview import require_webview
assert "site-packages" in triton_lens.__file__, triton_lens.__file__
assert (require_webview() / "index.html").is_file() and "site-packages" in str(require_webview())
assert any(e.value == "triton_lens.pytest_plugin" for e in md.entry_points(group="pytest11"))
assert (pathlib.Path(triton_lens.__file__).parent / "py.typed").is_file()
from triton_lens.analysis.viewer_service import SCHEMA_PATH, load_schema
assert "site-packages" in str(SCHEMA_PATH) and "accessMap" in load_schema()["methods"]  # the viewer protocol
PY
"$V/triton-lens" check "$ROOT/tests/corpus/vector_add.py" >"$WORK/clean.txt" || { cat "$WORK/clean.txt"; fail "clean file did not exit 0"; }
grep -q "vector_add.py: ok, 1 launch, 0 errors" "$WORK/clean.txt" || { cat "$WORK/clean.txt"; fail "unexpected output"; }
set +e
"$V/triton-lens" check "$ROOT/tests/corpus/oob_missing_mask.py" --format sarif >"$WORK/oob.sarif"
rc=$?
set -e
[ "$rc" = 1 ] || fail "an out-of-bounds file exited $rc, not 1"
grep -q '"ruleId": "oob"' "$WORK/oob.sarif" || fail "no oob result in the SARIF log"
"$V/pytest" --help >"$WORK/pytest-help.txt"
grep -q -- "--triton-lens" "$WORK/pytest-help.txt" || fail "pytest does not offer --triton-lens"
page_shipped wheel
echo "wheel: installed with [kernel,lsp,viewer] into a clean venv; check, lsp, viewer and the pytest plugin work"

"$V/pip" install "${PIP[@]}" --no-deps --force-reinstall "$sdist"
"$V/triton-lens" check "$ROOT/tests/corpus/vector_add.py" >/dev/null || fail "the sdist's check failed"
"$V/python" -c "from triton_lens.viz.webview import require_webview; require_webview()" || fail "sdist without the viewer page"
page_shipped sdist
"$V/python" -c "from triton_lens.analysis.viewer_service import load_schema; load_schema()" || fail "sdist without the viewer protocol's schema"
echo "sdist: installs and checks"
