"""An autotuned kernel whose scale load is out of bounds with one of its three configs only, opened in the
real server: the diagnostic names that config, and the hints and the kernel's code lens are the first
config's (the one the autotuner keeps under the tool), every run."""

from __future__ import annotations

import shutil

import pytest
from lsp_harness import Session, session_fixture
from markers import CORPUS

pytestmark = pytest.mark.asyncio(loop_scope="module")

SCALE_LINE = 22  # 0-based: the corpus file's unmasked scale load
N = 640


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return tmp_path_factory.mktemp("autotune")


client = session_fixture({"timeLimit": 120}, with_workspace=True)


async def test_the_diagnostic_names_the_config_and_the_hints_show_the_first(session: Session, workspace):
    path = workspace / "group_scales.py"
    shutil.copy(CORPUS / "autotune_group_scales.py", path)
    uri = session.open(path)
    done = await session.finished_run(uri, 1, timeout=120)
    assert done["status"] == "ok"
    (oob,) = [d for d in session.diagnostics(uri) if d.code == "oob"]
    assert oob.range.start.line == SCALE_LINE
    assert "Autotune: only with BLOCK=256 (1 of 3 configs tried; the hints show BLOCK=64" in oob.message
    (load,) = [h for h in await session.hints(uri) if h.position.line == SCALE_LINE]
    assert f"{N // 64} prog" in load.label  # BLOCK=64: 10 programs, the kept config's
    titles = [lens.command.title for lens in await session.lenses(uri)]
    assert any(
        "1 launch" in t and "autotuned: hints show BLOCK=64, the first of 3 configs tried" in t for t in titles
    ), titles
