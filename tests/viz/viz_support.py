"""Helpers the viz tests import by name (a module name of their own: several test folders have a conftest)."""

import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
