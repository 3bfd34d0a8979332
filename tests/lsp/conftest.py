"""The `session` fixture of the end-to-end tests (the harness itself is lsp_harness.py)."""

import pytest


@pytest.fixture
def session(client):
    """The module's server session (see lsp_harness.session_fixture)."""
    return client._session
