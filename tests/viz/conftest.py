import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # viz_kernels.py


@pytest.fixture
def viz():
    """triton_lens as a Triton-Viz user imports it, with no launches recorded and no viewer left running."""
    import triton_lens as triton_viz

    triton_viz.clear()
    yield triton_viz
    triton_viz.stop()
    triton_viz.clear()


from viz_support import free_port  # noqa: E402


@pytest.fixture
def port():
    return free_port()


def node_modules_ready() -> bool:
    return (HERE / "node_modules" / "playwright-core").is_dir()


@pytest.fixture(scope="session")
def browser_env():
    """node + playwright-core (tests/viz/package.json) + Debian's chromium; fails loudly when missing."""
    node = shutil.which("node")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    assert node, "node is needed for the browser tests (apt-get install -y nodejs)"
    assert os.path.exists(chromium), "chromium is needed for the browser tests (apt-get install -y chromium)"
    if not node_modules_ready():
        import subprocess

        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE, check=True)
    return {"node": node, "chromium": chromium}
