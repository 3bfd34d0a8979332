# tests/cli: `triton-lens check` on many files and its output formats, the pytest plugin, packaging.
# Run by `make test-python` (the main venv: jsonschema, pytest-xdist, build), not on triton 3.2.
collect_ignore_glob = ["projects/*"]
