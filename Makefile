# Two commands for a fresh machine: `make demo` (set up, build, serve VS Code with the extension)
# and `make test` (set up and run every test). Both build on `make setup`.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
VENV32 := .venv-triton32
TRITON ?= 3.9.0
PIP_FLAGS := --disable-pip-version-check -q

.PHONY: setup setup32 test test-python test-engine32 test-node test-e2e vsix demo bench clean

setup: $(VENV)/.done
$(VENV)/.done: pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install $(PIP_FLAGS) --upgrade pip
	# torch 2.13.0 takes the CPU wheel on local disk; numpy<2.4 keeps triton<=3.6 working too.
	$(VENV)/bin/pip install $(PIP_FLAGS) torch==2.13.0 triton==$(TRITON) "numpy<2.4" \
	    pygls==2.1.1 lsprotocol==2025.0.0 debugpy==1.8.22 flask==3.1.3 \
	    pytest pytest-lsp==1.0.1 pytest-asyncio
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps -e .
	touch $@

# The oldest supported triton release, for the engine tests.
setup32: $(VENV32)/.done
$(VENV32)/.done: pyproject.toml
	$(PY) -m venv $(VENV32)
	$(VENV32)/bin/pip install $(PIP_FLAGS) --upgrade pip
	$(VENV32)/bin/pip install $(PIP_FLAGS) torch==2.13.0 triton==3.2.0 "numpy<2.4" pytest
	$(VENV32)/bin/pip install $(PIP_FLAGS) --no-deps -e .
	touch $@

test: test-python test-engine32

test-python: setup
	$(VENV)/bin/python -m pytest -q

test-engine32: setup32
	$(VENV32)/bin/python -m pytest -q -p no:warnings tests/engine

bench: setup
	$(VENV)/bin/python bench/trace_overhead.py

clean:
	rm -rf $(VENV) $(VENV32) node_modules dist bundled/libs *.vsix
