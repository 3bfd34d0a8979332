import pytest

pytestmark = pytest.mark.engine
