"""Quick fixes (textDocument/codeAction):

- the edit a size-check diagnostic carries in its data (analysis/fixes.py writes it, diagnostics.py places
  it in the document's coordinates), as a code action on that diagnostic, once a run of the text with the
  edit made showed it right (fixcheck.py; `checked` gives its re-checked title, None before or after);
- on a kernel that no run launched (`no-launch`), the workspace's tests and scripts that import the file
  (source/harnesses.py), each offered as the run comment that makes the file run through it. Found
  when the user asks for the actions (the light bulb), not on every run."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lsprotocol import types as lsp

from ..source.harnesses import harnesses
from ..source.plan import RUN_COMMENT
from .diagnostics import SOURCE


def _range(d: dict[str, Any]) -> lsp.Range:  # a range as JSON (the diagnostic's data, untyped)
    s, e = d["start"], d["end"]
    return lsp.Range(lsp.Position(s["line"], s["character"]), lsp.Position(e["line"], e["character"]))


def run_comment_offers(
    uri: str, path: str, lines: list[str], roots: list[str], d: lsp.Diagnostic
) -> list[lsp.CodeAction]:
    """One action per test or script that imports this file: the run comment above the kernel's decorators."""
    if any(RUN_COMMENT.match(t) for t in lines):
        return []  # the file has its run already: a second comment would be ignored
    line = min(d.range.start.line, len(lines))
    while line > 0 and lines[line - 1].lstrip().startswith("@"):
        line -= 1
    indent = lines[line][: len(lines[line]) - len(lines[line].lstrip())] if line < len(lines) else ""
    out: list[lsp.CodeAction] = []
    for h in harnesses(path, roots):
        at = lsp.Position(line, 0)
        edit = lsp.TextEdit(range=lsp.Range(at, at), new_text=f"{indent}# triton-lens: run {h.command}\n")
        out.append(
            lsp.CodeAction(
                title=f"Run this file's kernels through {h.relative} (add `# triton-lens: run {h.command}`)",
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[d],
                is_preferred=not out,
                edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
            )
        )
    return out


def quick_fixes(
    uri: str,
    params: lsp.CodeActionParams,
    checked: Callable[[dict[str, Any]], str | None],
    path: str | None = None,
    lines: list[str] | None = None,
    roots: Iterable[str] = (),
) -> list[lsp.CodeAction]:
    """`path`, `lines`, `roots`: the document's file, text lines and the workspace folders, for the run
    offers (None outside a file of the workspace, e.g. a notebook cell)."""
    only = params.context.only
    if only and not any(str(k).startswith(lsp.CodeActionKind.QuickFix) for k in only):
        return []
    out = []
    for d in params.context.diagnostics:
        if d.source == SOURCE and d.code == "no-launch" and path and lines is not None:
            out += run_comment_offers(uri, path, lines, list(roots), d)
            continue
        fix = d.data.get("fix") if d.source == SOURCE and isinstance(d.data, dict) else None
        if not isinstance(fix, dict):
            continue
        title = checked(fix)
        if title is None:
            continue  # not re-checked yet, or the re-check refuted it: the client asks again when it is
        try:
            edit = lsp.TextEdit(range=_range(fix["range"]), new_text=str(fix["newText"]))
        except (KeyError, TypeError):
            continue  # a diagnostic from another version of the server
        out.append(
            lsp.CodeAction(
                title=title,
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[d],
                is_preferred=True,
                edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
            )
        )
    return out
