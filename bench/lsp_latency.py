"""Language-server latency, measured the way an editor sees it (a client over stdio):

- change -> results: from sending a textDocument/didChange to receiving the publishDiagnostics of
  that version's run, and to an inlay-hint answer computed from it (debounce included);
- hover and inlay-hint round trips once the run is done (the server answers from precomputed data);
- with progressive results (trace_engine/recording/progressive.py): change -> the first publication of that
  version (the partial one, a launch's sample, when the run has one; tritonLens/runPartial says so) and
  change -> the complete one, with their ratio.

On the shared corpus (every file the installed triton admits, except the one that hangs on purpose)
and on tutorial-size kernels (bench/kernels/: softmax 1823×781, matmul 512³, layer norm 1151×8192).

    python bench/lsp_latency.py [--edits 3] [--debounce 400] [--workers N] [--out bench/results/...txt] [--only NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import BaseLanguageClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from markers import CORPUS, corpus_files  # noqa: E402

TUTORIALS = [ROOT / "bench" / "kernels" / n for n in ("softmax_1823x781.py", "matmul_512.py", "layernorm_1151x8192.py")]
REQUESTS = 100


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    k = min(len(v) - 1, max(0, int(round(q / 100 * (len(v) - 1)))))
    return v[k]


class Client:
    def __init__(self, settings: dict):
        self.c = BaseLanguageClient("lsp-latency-bench", "1")
        self.settings = settings
        self.events: list[tuple[float, str, dict]] = []
        self.cond = asyncio.Condition()
        c = self.c

        async def note(kind: str, payload: dict):
            self.events.append((time.perf_counter(), kind, payload))
            async with self.cond:
                self.cond.notify_all()

        @c.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def _diag(params: lsp.PublishDiagnosticsParams):
            await note(
                "diagnostics",
                {"uri": params.uri, "version": params.version, "n": len(params.diagnostics), "d": params.diagnostics},
            )

        @c.feature("tritonLens/runFinished")
        async def _finished(params):
            await note("finished", params._asdict())

        @c.feature("tritonLens/runPartial")
        async def _partial(params):
            await note("partial", params._asdict())

        @c.feature("tritonLens/runStarted")
        async def _started(params):
            await note("started", params._asdict())

        @c.feature(lsp.WORKSPACE_CONFIGURATION)
        def _config(params: lsp.ConfigurationParams):
            return [self.settings for _ in params.items]

        @c.feature(lsp.WORKSPACE_INLAY_HINT_REFRESH)
        async def _hint_refresh(params):
            await note("hint-refresh", {})

        @c.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
        def _lens_refresh(params):
            return None

        @c.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def _progress_create(params):
            return None

        @c.feature(lsp.PROGRESS)
        def _progress(params):
            return None

        @c.feature(lsp.WINDOW_LOG_MESSAGE)
        def _log(params):
            return None

    async def start(self):
        await self.c.start_io(sys.executable, "-m", "triton_lens", "lsp")
        caps = lsp.ClientCapabilities(
            workspace=lsp.WorkspaceClientCapabilities(
                configuration=True,
                inlay_hint=lsp.InlayHintWorkspaceClientCapabilities(refresh_support=True),
                code_lens=lsp.CodeLensWorkspaceClientCapabilities(refresh_support=True),
            ),
            window=lsp.WindowClientCapabilities(work_done_progress=True),
            text_document=lsp.TextDocumentClientCapabilities(
                publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True)
            ),
        )
        await self.c.initialize_async(
            lsp.InitializeParams(
                capabilities=caps,
                process_id=os.getpid(),
                root_uri=ROOT.as_uri(),
                # What the extension sends in a trusted workspace (trust fails closed without it).
                initialization_options={"trusted": True, "settings": self.settings},
            )
        )
        self.c.initialized(lsp.InitializedParams())

    async def stop(self):
        await self.c.shutdown_async(None)
        self.c.exit(None)
        await self.c.stop()

    async def wait(self, pred, timeout: float):
        deadline = time.perf_counter() + timeout
        async with self.cond:
            while True:
                got = pred()
                if got:
                    return got
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise TimeoutError("no answer in time")
                try:
                    await asyncio.wait_for(self.cond.wait(), left)
                except asyncio.TimeoutError:
                    pass

    def first(self, since: int, kind: str, **match):
        for t, k, p in self.events[since:]:
            if k == kind and all(p.get(a) == b for a, b in match.items()):
                return t, p
        return None

    async def hints(self, uri: str):
        return await self.c.text_document_inlay_hint_async(
            lsp.InlayHintParams(
                text_document=lsp.TextDocumentIdentifier(uri),
                range=lsp.Range(lsp.Position(0, 0), lsp.Position(100000, 0)),
            )
        )

    async def hover(self, uri: str, line: int, char: int):
        return await self.c.text_document_hover_async(
            lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri), position=lsp.Position(line, char))
        )


async def measure_file(cl: Client, path: Path, edits: int, timeout: float) -> dict:
    uri = path.resolve().as_uri()
    text = path.read_text()
    out = {
        "file": path.name,
        "open_ms": None,
        "change_diag_ms": [],
        "change_hint_ms": [],
        "change_first_ms": [],  # the first publication of the version: the partial one when there is one
        "partial": [],  # "done/total" programs of each edit's partial, "" for none
        "run_ms": [],
        "hover_ms": [],
        "hint_ms": [],
        "status": None,
    }
    since = len(cl.events)
    t0 = time.perf_counter()
    cl.c.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    t_fin, fin = await cl.wait(lambda: cl.first(since, "finished", uri=uri, version=1), timeout)
    out["open_ms"] = (t_fin - t0) * 1000
    out["status"] = fin["status"]
    version = 1
    lines = text.split("\n")
    for i in range(edits):
        version += 1
        since = len(cl.events)
        end = len(lines) - 1
        t0 = time.perf_counter()
        cl.c.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [
                    lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(lsp.Position(end, len(lines[end])), lsp.Position(end, len(lines[end]))),
                        text=f"\n# bench edit {i}",
                    )
                ],
            )
        )
        lines.append(f"# bench edit {i}")
        t_fin, fin = await cl.wait(lambda: cl.first(since, "finished", uri=uri, version=version), timeout)
        # the diagnostics of this version's run: published just before runFinished
        diag_t = None
        for t, k, p in cl.events[since:]:
            if k == "diagnostics" and p["uri"] == uri and p["version"] == version and t <= t_fin:
                diag_t = t
        await cl.hints(uri)
        t_hint = time.perf_counter()
        out["complete_findings"] = _lsp_findings(cl, since, uri, version, t_fin)
        first_t = None
        for t, k, p in cl.events[since:]:
            if k == "diagnostics" and p["uri"] == uri and p["version"] == version:
                first_t = t
                break
        part = cl.first(since, "partial", uri=uri, version=version)
        out["partial"].append(f"{part[1]['programsDone']}/{part[1]['programsTotal']}" if part else "")
        out["change_first_ms"].append(((first_t or t_fin) - t0) * 1000)
        out["change_diag_ms"].append(((diag_t or t_fin) - t0) * 1000)
        out["change_hint_ms"].append((t_hint - t0) * 1000)
        out["run_ms"].append(fin["ms"])
    out["text"] = "\n".join(lines)
    # hover and inlay hints once the run is done
    hints = await cl.hints(uri) or []
    spots = []
    for h in hints:
        m = re.search(r"tl\.|\.load\(|\.store\(", lines[h.position.line])
        spots.append((h.position.line, m.start() + 1 if m else 4))
    for i in range(REQUESTS):
        t = time.perf_counter()
        await cl.hints(uri)
        out["hint_ms"].append((time.perf_counter() - t) * 1000)
        if spots:
            line, char = spots[i % len(spots)]
            t = time.perf_counter()
            hv = await cl.hover(uri, line, char)
            out["hover_ms"].append((time.perf_counter() - t) * 1000)
            assert hv is not None, (path.name, line, char)
    cl.c.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
    return out


def _lsp_findings(cl: Client, since: int, uri: str, version: int, t_fin: float) -> list[tuple]:
    """The findings of a version's complete run, as its last diagnostics before runFinished give them."""
    last = None
    for t, k, p in cl.events[since:]:
        if k == "diagnostics" and p["uri"] == uri and p["version"] == version and t <= t_fin:
            last = p["d"]
    out = []
    for d in last or []:
        data = d.data if isinstance(d.data, dict) else {}
        if "kind" in data:  # a finding's (not the run's own notes)
            out.append((d.range.start.line + 1, data["kind"], data.get("arg"), data.get("lanes"), d.message))
    return sorted(out, key=repr)


def check_findings(path: Path, text: str) -> list[tuple] | str:
    """`triton-lens check --json` of the same text, beside the file (its imports and folder as the server's run
    has them): its findings as _lsp_findings gives the server's; a string when the check failed."""
    import subprocess
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-check-", suffix=".py", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        p = subprocess.run(
            [sys.executable, "-m", "triton_lens", "check", "--json", "--timeout", "600", tmp],
            capture_output=True,
            text=True,
            cwd=path.parent,
        )
        try:
            report = json.loads(p.stdout.splitlines()[0])
        except (IndexError, ValueError):
            return f"check failed (rc {p.returncode}): {p.stderr.strip()[-300:]}"
    finally:
        os.unlink(tmp)
    out = [
        (f["line"], f["kind"], f.get("arg"), f.get("lanes"), f["message"])
        for f in report.get("findings", [])
        if os.path.abspath(f.get("file") or tmp) == os.path.abspath(tmp)
    ]
    return sorted(out, key=repr)


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import triton

    return (
        f"{platform.node()}: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, triton {triton.__version__}"
    )


def summary(rows: list[dict], key: str) -> str:
    vals = [v for r in rows for v in (r[key] if isinstance(r[key], list) else [r[key]]) if v is not None]
    return f"p50 {pct(vals, 50):8.1f}  p90 {pct(vals, 90):8.1f}  p99 {pct(vals, 99):8.1f}  max {max(vals):8.1f}  (n={len(vals)})"


async def main_async(args) -> int:
    files = [
        cf.path
        for cf in corpus_files()
        if cf.applies_to(_triton()) and not any(e.kind == "timeout" for e in cf.expects)
    ]
    excluded = [cf.name for cf in corpus_files() if not cf.applies_to(_triton())]
    if args.only:
        files = [f for f in files if args.only in f.name]
    tutorials = [t for t in TUTORIALS if not args.only or args.only in t.name]
    settings = {"debounceMs": args.debounce, "timeLimit": 600, "workers": args.workers, "progressive": not args.plain}
    if args.tutorials_only:
        files = []
    cl = Client(settings)
    await cl.start()
    load_before = os.getloadavg()
    corpus_rows, tut_rows = [], []
    for f in files:
        corpus_rows.append(await measure_file(cl, f, args.edits, 300))
        print(
            json.dumps(
                {
                    k: (round(v, 1) if isinstance(v, float) else v)
                    for k, v in corpus_rows[-1].items()
                    if k not in ("hover_ms", "hint_ms", "text", "complete_findings")
                }
            ),
            flush=True,
        )
    for f in tutorials:
        tut_rows.append(await measure_file(cl, f, args.tutorial_edits, 900))
        got = check_findings(f, tut_rows[-1]["text"])
        lsp_side = tut_rows[-1]["complete_findings"]
        tut_rows[-1]["same_as_check"] = (
            got
            if isinstance(got, str)
            else f"{'yes' if got == lsp_side else 'NO'} ({len(got)} findings in check --json, {len(lsp_side)} in the editor)"
        )
        print(
            json.dumps(
                {
                    k: (round(v, 1) if isinstance(v, float) else v)
                    for k, v in tut_rows[-1].items()
                    if k not in ("hover_ms", "hint_ms", "text", "complete_findings")
                }
            ),
            flush=True,
        )
    load_after = os.getloadavg()
    await cl.stop()

    out = [
        f"# LSP latency — {datetime.date.today().isoformat()}",
        f"machine: {machine()}",
        f"load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} (other work shares these cores)",
        f"settings: debounceMs={args.debounce}, workers={args.workers or 'default (cores, at most 16, less one)'}; edits per file: corpus {args.edits}, tutorials {args.tutorial_edits}; "
        f"{REQUESTS} hover and {REQUESTS} inlay-hint requests per file after its run",
        f"corpus: {len(files)} files (hangs_after_launch.py left out: it runs to the time limit by design"
        + (f"; not for this triton: {', '.join(excluded)}" if excluded else "")
        + ")",
        "",
        "All times in ms, measured in the client (JSON-RPC over stdio included).",
        "change->diagnostics: didChange sent -> publishDiagnostics of that version's run received (debounce included)",
        "change->hints: didChange sent -> inlay-hint answer computed from that run received",
        "change->first: didChange sent -> the first publishDiagnostics of that version (the partial results of a"
        " launch's sample when the run has them, with the hints refresh; else the complete ones)",
        f"progressive results: {'off' if args.plain else 'on'}",
        "run: the server's own time for the run (worker process start, script, analysis, view)",
        "complete = check: the last edit's complete findings (line, kind, tensor, lanes, message) are those of a"
        " `triton-lens check --json` of the same text",
        "",
    ]
    if corpus_rows:
        out += [
            "## corpus",
            f"open->results          {summary(corpus_rows, 'open_ms')}",
            f"change->diagnostics    {summary(corpus_rows, 'change_diag_ms')}",
            f"change->hints          {summary(corpus_rows, 'change_hint_ms')}",
            f"run (server side)      {summary(corpus_rows, 'run_ms')}",
            f"hover                  {summary(corpus_rows, 'hover_ms')}",
            f"inlay hints            {summary(corpus_rows, 'hint_ms')}",
            "",
        ]
    if tut_rows:
        out += ["## tutorial-size kernels"]
        for r in tut_rows:
            out += [
                f"{r['file']}: status {r['status']}",
                f"  open->results        {r['open_ms']:9.1f}",
                f"  change->diagnostics  {summary([r], 'change_diag_ms')}",
                f"  change->hints        {summary([r], 'change_hint_ms')}",
                f"  change->first        {summary([r], 'change_first_ms')}  partial: {', '.join(r['partial']) or '-'}",
                f"  first / complete     {_ratio(r)}",
                f"  complete = check     {r['same_as_check']}",
                f"  run (server side)    {summary([r], 'run_ms')}",
                f"  hover                {summary([r], 'hover_ms')}",
                f"  inlay hints          {summary([r], 'hint_ms')}",
            ]
        out.append("")
    out += ["## per corpus file (change->diagnostics p50, run p50)"]
    for r in corpus_rows:
        out.append(
            f"{r['file']:<28} {statistics.median(r['change_diag_ms']) if r['change_diag_ms'] else float('nan'):8.1f}"
            f" {statistics.median(r['run_ms']) if r['run_ms'] else float('nan'):8.1f}  {r['status']}"
        )
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0


def _ratio(r: dict) -> str:
    pairs = list(zip(r["change_first_ms"], r["change_diag_ms"]))
    return ", ".join(f"{f / c:.2f}" for f, c in pairs if c) or "-"


def _triton() -> str:
    import triton

    return triton.__version__


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--edits", type=int, default=3)
    p.add_argument("--tutorial-edits", type=int, default=1)
    p.add_argument("--debounce", type=int, default=100, help="tritonLens.debounceMs (the default: lsp/settings.py)")
    p.add_argument(
        "--workers", type=int, default=0, help="tritonLens.workers (0: the default, the machine's cores less one)"
    )
    p.add_argument("--only", default="")
    p.add_argument("--tutorials-only", action="store_true", help="only the tutorial-size kernels")
    p.add_argument("--plain", action="store_true", help="progressive results off (tritonLens.progressive false)")
    p.add_argument("--out", default="")
    args = p.parse_args()
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 2
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
