"""Run a kernel script under the engine and print the viewer data as a test fixture (JSON on stdout).

    python engine_fixture.py /work/shared/corpus/vector_add.py

The fixture has the shape of the hand-written ones in fixtures/: {"kernels": overview,
"maps": {"<launch>/<tensor>": access_map}, "values": {"<launch>/<tensor>": [values]}}.
"""

import json
import sys

from triton_lens.analysis.access_map import access_map, kernels_overview, tensor_values
from triton_lens.analysis.viewer_service import ViewerService
from triton_lens.trace_engine.process.runner import RunRequest, run


def main(path: str) -> None:
    result = run(RunRequest(path=path, timeout_s=120.0))
    overview = kernels_overview(result)
    service = ViewerService.from_result(result)
    maps, values = {}, {}
    extra = {"valueMap": {}, "dots": {}, "dotTiles": {}, "performance": {}, "sampled": {}}
    for k in overview["kernels"]:
        for launch in k["launches"]:
            for m in ("dots", "performance"):
                extra[m][str(launch["index"])] = service.request(m, {"launch": launch["index"]})
            for e in range(len(extra["dots"][str(launch["index"])]["executions"])):
                p = {"launch": launch["index"], "execution": e}
                extra["dotTiles"][f"{launch['index']}/{e}"] = service.request("dotTiles", p)
            for t in launch.get("tensors") or []:
                key = f"{launch['index']}/{t['index']}"
                maps[key] = access_map(result, launch=launch["index"], tensor=t["index"])
                got = tensor_values(result, launch=launch["index"], tensor=t["index"], start=0, count=int(t["numel"]))
                values[key] = got["values"]
                if "sampled" in got:  # a large tensor's kept values: 1 in [rows, columns]
                    extra["sampled"][key] = got["sampled"]
                for when in ("after", "before"):
                    extra["valueMap"][f"{key}/{when}"] = service.request(
                        "valueMap", {"launch": launch["index"], "tensor": t["index"], "when": when}
                    )
    json.dump(
        {"about": f"engine result for {path}", "kernels": overview, "maps": maps, "values": values, "extra": extra},
        sys.stdout,
    )


if __name__ == "__main__":
    main(sys.argv[1])
