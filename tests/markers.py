"""The kernel corpus and its `# expect:` markers, parsed once for every test layer.

The project keeps its own copy in tests/corpus (a fresh clone tests alone); ../shared/corpus, where it
exists, is checked too, so files that appear there are picked up (a file of the same name there wins:
it is the newer specification). Marker grammar: tests/corpus/README.md. A marker at the end of a code line applies to that
statement; alone on a line, to the next code line; `clean`, `timeout`, `no-launch` to the file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"  # the project's copy
SHARED_CORPUS = Path(os.environ.get("TRITON_LENS_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()
FILE_LEVEL = {"clean", "timeout", "no-launch"}


@dataclass
class Expect:
    kind: str  # stats | launches | oob | race | dead | unwritten | uninit | exception | clean | timeout | no-launch
    line: int  # 0 for file-level
    words: list[str] = field(default_factory=list)  # positional words after the kind
    keys: dict[str, int] = field(default_factory=dict)  # k=v numbers
    severity: str | None = None  # `severity=LEVEL`: the finding must have this severity

    def __str__(self) -> str:
        kv = " ".join(f"{k}={v}" for k, v in self.keys.items())
        return f"line {self.line}: {self.kind} {' '.join(self.words)} {kv}".strip()


@dataclass
class CorpusFile:
    path: Path
    expects: list[Expect]
    requires: list[str]

    @property
    def name(self) -> str:
        return self.path.name

    def applies_to(self, triton_version: str) -> bool:
        return all(_satisfies(triton_version, r) for r in self.requires)


def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def _satisfies(version: str, req: str) -> bool:
    m = re.fullmatch(r"\s*triton\s*(<=|>=|==|<|>)\s*([\d.]+)\s*", req)
    if not m:
        raise ValueError(f"unknown requirement {req!r}")
    op, want = m.groups()
    a, b = _version_tuple(version), _version_tuple(want)
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b}[op]


def _parse_one(text: str, line: int) -> Expect:
    words = text.split()
    kind, rest = words[0], words[1:]
    keys = {}
    pos = []
    severity = None
    for w in rest:
        if w.startswith("severity="):
            severity = w.split("=", 1)[1]
        elif "=" in w:
            k, v = w.split("=", 1)
            keys[k] = int(v)
        else:
            pos.append(w)
    if kind.startswith("launches="):
        keys["launches"] = int(kind.split("=", 1)[1])
        kind = "launches"
    return Expect(kind, line, pos, keys, severity)


def parse(path: Path) -> CorpusFile:
    lines = path.read_text().splitlines()
    expects: list[Expect] = []
    requires: list[str] = []
    pending: list[str] = []
    for i, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if stripped.startswith("# requires:"):
            requires.append(stripped.split(":", 1)[1].strip())
            continue
        code, _, comment = raw.partition("# expect:")
        if _ and code.strip() and not code.strip().startswith("#"):
            for part in comment.split(";"):
                expects.append(_parse_one(part.strip(), i))
        elif _:
            for part in comment.split(";"):
                part = part.strip()
                if part.split()[0] in FILE_LEVEL:
                    expects.append(_parse_one(part, 0))
                else:
                    pending.append(part)
        if not _ and stripped and not stripped.startswith("#") and pending:
            expects.extend(_parse_one(p, i) for p in pending)
            pending = []
    return CorpusFile(path, expects, requires)


def corpus_paths() -> list[Path]:
    """Every corpus file by name: the project's copy, and ../shared/corpus's where it exists."""
    by_name = {p.name: p for p in CORPUS.glob("*.py")}
    if SHARED_CORPUS.is_dir():
        by_name.update({p.name: p for p in SHARED_CORPUS.glob("*.py")})
    return [by_name[n] for n in sorted(by_name)]


def corpus_files() -> list[CorpusFile]:
    return [parse(p) for p in corpus_paths()]
