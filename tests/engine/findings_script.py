"""Runs one of tests/engine/scripts/findings/ once and finds its `# at: NAME` lines."""

from __future__ import annotations

from pathlib import Path

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

SCRIPTS = Path(__file__).parent / "scripts" / "findings"


class Script:
    def __init__(self, name: str):
        self.path = SCRIPTS / name
        self.lines = {}
        for i, text in enumerate(self.path.read_text().splitlines(), 1):
            if "# at: " in text:
                self.lines[text.split("# at: ")[1].strip()] = i
        self.analysis = analyze(run(RunRequest(path=str(self.path), timeout_s=300)))
        assert self.analysis.result.status == "ok", self.analysis.result.error

    def at(self, name: str, kind: str | None = None):
        line = self.lines[name]
        return [f for f in self.analysis.findings if f.line == line and (kind is None or f.kind == kind)]
