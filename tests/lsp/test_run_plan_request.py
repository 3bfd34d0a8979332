"""`tritonLens/runPlan`: the server's run plan of a file (what "Debug this kernel" runs), from the
run comment of the buffer, the runCommands setting, or the file itself."""

from __future__ import annotations

import asyncio

import pytest
from lsp_harness import Session, file_uri, session_fixture

pytestmark = pytest.mark.asyncio(loop_scope="module")

KERNEL = "import triton\n\n\n@triton.jit\ndef k(x_ptr):\n    pass\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return tmp_path_factory.mktemp("plan")


client = session_fixture(
    {"runCommands": {"kernels/*.py": "pytest tests -k ${fileBasenameNoExtension} ${file}"}, "debounceMs": 60_000},
    with_workspace=True,
)


async def test_run_plan_follows_comment_setting_and_file(session: Session, workspace):
    (workspace / "kernels").mkdir()
    k = workspace / "kernels" / "add.py"
    k.write_text(KERNEL)
    plain = workspace / "plain.py"
    plain.write_text(KERNEL)
    for _ in range(100):  # the server pulls the configuration (runCommands) right after `initialized`
        p = await session.request("tritonLens/runPlan", {"uri": file_uri(k)})
        if p.origin != "file":
            break
        await asyncio.sleep(0.1)
    assert p.origin == "setting" and p.cwd == str(workspace)
    assert list(p.command) == ["pytest", "tests", "-k", "${fileBasenameNoExtension}", str(k)]
    # the editor's buffer, not the file on disk: its run comment wins over the setting
    text = KERNEL + "# triton-lens: run python -m bench --n 3\n"
    p = await session.request("tritonLens/runPlan", {"uri": file_uri(k), "text": text})
    assert p.origin == "comment" and p.originLine == 7 and list(p.command) == ["python", "-m", "bench", "--n", "3"]
    p = await session.request("tritonLens/runPlan", {"uri": file_uri(plain)})
    assert p.origin == "file" and p.command is None and p.runnable is True
    p = await session.request("tritonLens/runPlan", {"uri": file_uri(workspace / "notes.py"), "text": "print(1)\n"})
    assert p.runnable is False and "no @triton.jit" in p.whyNot
