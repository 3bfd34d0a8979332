import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/corpus.py, shared by every layer's tests


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadfile":
        return None
    from xdist_scopes import scheduler

    return scheduler(config, log)
