#!/bin/bash
# Installs the server's pure-Python dependencies (extension/requirements-bundled.txt) into bundled/libs, the way
# Microsoft's python-tools extension template does: pure-Python wheels only, no dependency resolution (every
# package is pinned in the file). Skipped when bundled/libs already matches the requirements.
set -euo pipefail
cd "$(dirname "$0")/../.."
REQ=extension/requirements-bundled.txt
OUT=bundled/libs
PY=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
STAMP="$OUT/.requirements.sha256"
want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "bundled/libs is up to date"
  exit 0
fi
rm -rf "$OUT"
"$PY" -m pip install --disable-pip-version-check -q -t "$OUT" --no-deps --implementation py --only-binary=:all: \
  --python-version 3.10 --no-compile --no-cache-dir -r "$REQ"
rm -rf "$OUT/bin"
find "$OUT" -name __pycache__ -prune -exec rm -rf {} +
echo "$want" > "$STAMP"
echo "bundled/libs: $(ls "$OUT" | grep -v dist-info | tr '\n' ' ')"
