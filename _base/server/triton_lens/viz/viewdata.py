"""The launches the Triton-Viz API recorded in this process, as a viewer service
(`analysis/viewer_service.py` answers the requests; `viz/server.py` is its HTTP transport).
`triton-lens view FILE` serves a worker's run with `ViewerService.from_result` instead."""

from __future__ import annotations

import os

from ..analysis.viewer_service import ViewerService
from ..model import OK, RunResult


def in_process_data() -> ViewerService:
    """The launches the tracer recorded in this process (`triton_lens.launches`), read at each request."""
    import sys

    from . import clients

    main = getattr(sys.modules.get("__main__"), "__file__", None)

    def get() -> RunResult:
        launches = list(clients.launches)
        file = os.path.abspath(main) if main else ""
        for L in launches:  # spelled as the launches spell it (code objects keep the path as it was run)
            if file and os.path.abspath(L.def_file) == file:
                file = L.def_file
                break
        else:
            file = file or (launches[0].def_file if launches else "")
        return RunResult(file=file, status=OK, launches=launches)

    return ViewerService(get, clients.sources)
