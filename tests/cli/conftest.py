# tests/cli: `triton-lens check` on many files and its output formats, the script's own output, and the pytest
# plugin. Run by `make test-python` (the main venv: jsonschema, pytest-xdist), not on triton 3.2.
