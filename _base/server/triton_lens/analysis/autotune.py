"""Findings of every config an autotuner tried, not only of the one it kept.

Each config the autotuner tries (after the library's own pruning) is a kernel a GPU may run: the
recorder keeps each trial launch (RunResult.autotune_trials, LaunchTrace.autotune) and this module
finds, per trial, what the run's own findings find per launch (out of bounds, races, dead masks, row
overruns, unwritten outputs, uninitialised reads). A finding that every config tried has is the kept
launch's finding as it stands; one that only some configs have names them: the kept launch's finding
gets the note when its config is among them, and a finding only other configs have is added, from the
first config (in the order tried) that has it. Hints, hovers and the viewer show the kept launch only.
"""

from __future__ import annotations

from dataclasses import replace

from ..model import Finding, LaunchTrace, RunResult
from .findings import dead_findings, oob_findings
from .groups import group_executions
from .memory import uninit_findings, unwritten_findings
from .races import race_findings
from .rows import overrun_findings

FindingKey = tuple[str, str, int, int, str, str]


def _key(f: Finding) -> FindingKey:
    return (f.kind, f.file, f.line, f.col, f.arg, f.access)


def launch_findings(L: LaunchTrace) -> list[Finding]:
    """The findings one launch has by itself (the per-launch kinds of findings.all_findings)."""
    groups = group_executions([L])
    return (
        oob_findings(groups)
        + race_findings([L])
        + dead_findings(groups)
        + overrun_findings(groups)
        + unwritten_findings([L])
        + uninit_findings([L])
    )


def configs_text(configs: list[str], limit: int | None = None) -> str:
    """Configs as a reader takes them in: up to two as they are written (`BLOCK=64, num_warps=4`); more
    with what they share said once and the rest as one tuple each, `num_warps=4 and (BLOCK, SPLIT_K) =
    (64, 2), (128, 4), (256, 1)`; past `limit` configs, the first ones and how many more."""
    more = ""
    if limit is not None and len(configs) > limit:
        more = f", and {len(configs) - limit} more (--format json lists them)"
        configs = configs[:limit]
    if len(configs) <= 2:
        return "; ".join(configs) + more
    parsed = []
    for c in configs:
        items = [part.split("=", 1) for part in c.split(", ")]
        if not all(len(kv) == 2 for kv in items):
            return "; ".join(configs) + more  # not k=v pairs: as written
        parsed.append(dict((k, v) for k, v in items))
    keys = list(dict.fromkeys(k for p in parsed for k in p))
    common = [k for k in keys if all(k in p and p[k] == parsed[0].get(k) for p in parsed)]
    varying = [k for k in keys if k not in common]
    if not varying:
        return "; ".join(configs) + more
    rows = ", ".join("(" + ", ".join(p.get(k, "-") for k in varying) + ")" for p in parsed)
    shared = ", ".join(f"{k}={parsed[0][k]}" for k in common)
    names = varying[0] if len(varying) == 1 else "(" + ", ".join(varying) + ")"
    rows = rows if len(varying) > 1 else ", ".join(p.get(varying[0], "-") for p in parsed)
    return f"{shared + ' and ' if shared else ''}{names} = {rows}{more}"


def _note(configs: list[str], total: int, shown: str | None) -> str:
    which = configs_text(configs)
    if shown is None:
        tail = ""  # the run stopped before the autotuner launched the config it kept
    elif shown in configs:
        tail = f"; the hints show {shown}"
    else:
        tail = f"; the hints show {shown}, which does not have it"
    return f" Autotune: only with {which} ({len(configs)} of {total} configs tried{tail})."


def autotune_findings(result: RunResult, findings: list[Finding]) -> list[Finding]:
    """`findings` (the run's) with the configs named where only some of the configs tried have one,
    plus the findings only configs other than the kept one have."""
    if not result.autotune_trials:
        return findings
    kept = {L.index: L for L in result.launches if L.autotune is not None and not L.autotune.get("trial")}
    tunings: dict[int, list[LaunchTrace]] = {}
    for t in result.autotune_trials:
        tunings.setdefault(t.index, []).append(t)
    own = {_key(f): i for i, f in enumerate(findings)}
    out = list(findings)
    done: set[FindingKey] = set()  # a finding named by one tuning already (a kernel tuned for two keys)
    for index, trials in sorted(tunings.items()):
        if len(trials) < 2:
            continue
        shown_launch = kept.get(index)
        shown = shown_launch.autotune.get("config") if shown_launch is not None and shown_launch.autotune else None
        configs: dict[FindingKey, list[str]] = {}
        first: dict[FindingKey, Finding] = {}
        for t in trials:
            label = (t.autotune or {}).get("config", "?")
            for f in launch_findings(t):
                k = _key(f)
                if label not in configs.setdefault(k, []):
                    configs[k].append(label)
                first.setdefault(k, f)
        labels = {(t.autotune or {}).get("config") for t in trials}
        for k, having in configs.items():
            if len(having) >= len(labels) or k in done:
                continue  # every config has it: the kept launch's finding says it as it is
            done.add(k)
            witness = {"configs": having, "of": len(labels), "shown": shown}
            if k in own and shown in having:
                f = out[own[k]]
                out[own[k]] = replace(
                    f, message=f.message + _note(having, len(labels), shown), witness={**f.witness, "autotune": witness}
                )
            elif k not in own:
                f = first[k]
                out.append(
                    replace(
                        f,
                        message=f.message + _note(having, len(labels), shown),
                        witness={**f.witness, "autotune": witness},
                    )
                )
    return out


def kept_config(L: LaunchTrace) -> str | None:
    """What the hints of an autotuned launch show: `BLOCK=64, the first of 3 configs tried`; None for a
    launch no autotuner tuned."""
    a = L.autotune
    if a is None or a.get("trial") or not a.get("configs"):
        return None
    n = len(a["configs"])
    return f"{a['config']}, the first of {n} configs tried" if n > 1 else str(a["config"])


def autotune_notices(result: RunResult) -> list[str]:
    """One line per autotuned launch, for the top of `check`'s text: which config its table shows."""
    out = []
    for L in result.launches:
        kept = kept_config(L)
        if kept is not None and L.autotune is not None:
            tried = configs_text(L.autotune["configs"], limit=6)
            out.append(
                f"note: {L.kernel} autotuned at line {L.line}: the table and hints show {kept} ({tried}); "
                "the findings cover every one."
            )
    return out
