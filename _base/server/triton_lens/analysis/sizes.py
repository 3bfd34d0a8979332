"""Findings at sizes the script did not run (`oob-sizes`, `wrap`): the size check's confirmed witnesses.

The engine's size check (trace_engine/recording/size_probe.py) re-launched each kernel at other sizes it admits and
kept only what a run at that size showed: lanes out of their tensor, and for `wrap` the int32 operation
that overflowed first. Here they become warnings at the access, once per access and kind over the run;
an access already out of bounds at the script's own sizes has its `oob` error, and nothing more here.
"""

from __future__ import annotations

from ..model import Finding, LaunchTrace, Site


def size_findings(launches: list[LaunchTrace], oob_at: set[tuple[str, int, str]]) -> list[Finding]:
    out: dict[tuple[str, int, str, str], Finding] = {}
    for L in launches:
        for w in L.size_findings:
            if w["kind"] == "sizes-comment":  # a `# triton-lens: sizes` condition the check cannot use
                k = (w["file"], w["line"], w["message"], w["kind"])
                out.setdefault(
                    k, Finding(kind=w["kind"], severity="warning", file=w["file"], line=w["line"], message=w["message"])
                )
                continue
            s = w["site"]
            key = (s["file"], s["line"], w["arg"], w["kind"])
            if key in out or key[:3] in oob_at:
                continue
            site = Site.from_json(s)
            out[key] = Finding.at(
                site,
                kind=w["kind"],
                severity="warning",
                arg=w["arg"],
                access=site.kind,
                lanes=int(w["lanes"]),
                programs=int(w["programs"]),
                example_programs=[tuple(p) for p in w["example_programs"]],
                message=w["message"],
                witness={
                    k: w[k] for k in ("size", "size_value", "grid", "assumed", "op", "found_by") if w.get(k) is not None
                },
            )
    return list(out.values())
