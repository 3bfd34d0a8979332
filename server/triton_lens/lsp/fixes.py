"""Quick fixes (textDocument/codeAction): the edit a size-check diagnostic carries in its data
(analysis/fixes.py writes it, diagnostics.py places it in the document's coordinates), as a code action
on that diagnostic. Stateless: the request's own diagnostics hold everything."""

from __future__ import annotations

from lsprotocol import types as lsp

from .diagnostics import SOURCE


def _range(d: dict) -> lsp.Range:
    s, e = d["start"], d["end"]
    return lsp.Range(lsp.Position(s["line"], s["character"]), lsp.Position(e["line"], e["character"]))


def quick_fixes(uri: str, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    only = params.context.only
    if only and not any(str(k).startswith(lsp.CodeActionKind.QuickFix) for k in only):
        return []
    out = []
    for d in params.context.diagnostics:
        fix = d.data.get("fix") if d.source == SOURCE and isinstance(d.data, dict) else None
        if not isinstance(fix, dict):
            continue
        try:
            edit = lsp.TextEdit(range=_range(fix["range"]), new_text=str(fix["newText"]))
        except (KeyError, TypeError):
            continue  # a diagnostic from another version of the server
        out.append(
            lsp.CodeAction(
                title=str(fix["title"]),
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[d],
                is_preferred=True,
                edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
            )
        )
    return out
