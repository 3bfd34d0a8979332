"""A run forked from the zygote imports nothing of the tool, triton, numpy or z3 (process/worker.py,
`import_what_runs_import`): every such import is paid by every run, before an edit's first hints, and where no
bytecode is written (PYTHONDONTWRITEBYTECODE, a read-only install) it is a compile from source (the size
check's modules: 0.1-0.3 s a run). The worker reports what it did import late (RunResult.late_imports)."""

from __future__ import annotations

import os

import pytest
from markers import CORPUS
from test_zygote import _ready_zygote

from triton_lens.trace_engine.process import runner, zygote_client
from triton_lens.trace_engine.process.runner import RunRequest, run

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not zygote_client.supported(), reason="the zygote needs Linux"),
]

# A launch with a size-check finding, a CUDA script on the stand-in, libdevice calls, an autotuner, and a
# launch long enough to be sampled (progressive results): between them, every room a typical run enters.
SCRIPTS = ("oob_gather.py", "cuda_script_without_gpu.py", "libdevice_math.py", "autotune.py", "softmax.py")
# One environment for every run here: a zygote serves runs of one interpreter and environment, and pytest's
# PYTEST_CURRENT_TEST differs between a fixture's setup and each test (each would start a zygote of its own).
ENV = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


@pytest.fixture(scope="module")
def zygote():
    runner.discard_spares()
    z = _ready_zygote(RunRequest(path=str(CORPUS / "vector_add.py"), keep_warm=True, env=ENV))
    yield z
    runner.discard_spares()


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_forked_run_imports_nothing_late(zygote, name):
    result = run(RunRequest(path=str(CORPUS / name), timeout_s=120, keep_warm=True, progressive=True, env=ENV))
    assert result.status in ("ok", "exception"), result.error
    assert result.launches, "the script launched nothing: the check would be empty"
    assert result.late_imports == []
    assert zygote.is_ready()  # (served by the zygote, not by a cold worker beside it)


def test_a_module_imported_late_is_reported(zygote, tmp_path):
    # What the check above rests on: a script that itself imports a numpy module nobody imported before
    # has it in late_imports (the worker reports, not only stays quiet).
    script = tmp_path / "late.py"
    script.write_text("import numpy.f2py\nprint('ran')\n")
    result = run(RunRequest(path=str(script), timeout_s=120, keep_warm=True, env=ENV))
    assert result.status == "no-launch", result.error
    assert "numpy.f2py" in result.late_imports
