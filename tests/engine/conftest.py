import pytest

pytestmark = pytest.mark.engine

# scripts/ holds user scripts the engine runs (one is itself a pytest project): not our tests.
collect_ignore_glob = ["scripts/*"]
