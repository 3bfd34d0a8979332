# Two commands for a fresh machine: `make demo` (set up, build, serve VS Code with the extension)
# and `make test` (set up and run every test). Both build on `make setup`.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
VENV32 := .venv-triton32
TRITON ?= 3.9.0
PIP_FLAGS := --disable-pip-version-check -q

.PHONY: setup setup32 test test-python test-engine32 test-node test-e2e vsix demo bench bench-all viz-deps clean

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

# Every test: engine (triton 3.9 and 3.2), language server, Triton-Viz API and viewer, webview page,
# extension unit tests, and the extension in a real VS Code.
test: test-python test-engine32 test-webview test-node test-e2e

# pytest: tests/engine, tests/lsp, tests/viz (the viz tests drive Chromium through tests/viz's playwright-core).
test-python: setup viz-deps
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider

viz-deps: tests/viz/node_modules/.done
	@test -x /usr/bin/chromium || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)
tests/viz/node_modules/.done: tests/viz/package.json tests/viz/package-lock.json
	cd tests/viz && npm ci --no-audit --no-fund --loglevel=error
	touch $@

test-engine32: setup32
	$(VENV32)/bin/python -m pytest -q -p no:warnings tests/engine

bench: setup
	$(VENV)/bin/python bench/trace_overhead.py

# Every benchmark, results appended under bench/results/.
bench-all: setup setup32 bench-webview
	$(VENV)/bin/python bench/trace_overhead.py --out bench/results/trace_overhead.txt
	$(VENV32)/bin/python bench/trace_overhead.py --out bench/results/trace_overhead.txt
	$(VENV)/bin/python bench/viewer_payload.py --out bench/results/viewer_payload-$$(date +%F).txt
	$(VENV)/bin/python bench/lsp_latency.py --out bench/results/lsp_latency_$$(date +%F).txt
	$(VENV)/bin/python bench/analysis_bound.py --out bench/results/analysis_bound_$$(date +%F).txt
	$(VENV)/bin/python bench/host_writes_overhead.py --out bench/results/host_writes_overhead_$$(date +%F).txt

clean:
	rm -rf $(VENV) $(VENV32) node_modules dist bundled/libs *.vsix

# ---- webview: the access-map page (extension/webview) in headless Debian Chromium -------------
# Its own npm deps (playwright-core only) live in tests/webview. The engine test there renders a
# real engine result and needs $(VENV) (make setup); without it that one test is skipped.
WEBVIEW_TESTS := tests/webview
CHROMIUM ?= /usr/bin/chromium

.PHONY: test-webview bench-webview webview-deps
webview-deps: $(WEBVIEW_TESTS)/node_modules/.done
	@test -x $(CHROMIUM) || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)
$(WEBVIEW_TESTS)/node_modules/.done: $(WEBVIEW_TESTS)/package.json $(WEBVIEW_TESTS)/package-lock.json
	cd $(WEBVIEW_TESTS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

test-webview: setup webview-deps
	cd $(WEBVIEW_TESTS) && CHROMIUM=$(CHROMIUM) node --test --test-concurrency=1 *.test.mjs

# prints render times; `make bench-webview ARGS=--write` also writes bench/results/webview_render_<date>.txt
bench-webview: webview-deps
	cd $(WEBVIEW_TESTS) && CHROMIUM=$(CHROMIUM) node bench_render.mjs $(ARGS)

# ---------------------------------------------------------------- the VS Code extension
# npm packages (TypeScript, esbuild, vsce, vitest) are installed from package-lock.json.
NODE_STAMP := node_modules/.install-stamp
VSIX := triton-lens.vsix
E2E_ROOT := .real-vscode

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The .vsix: server package + pygls & co. (pure Python, in bundled/libs) + the esbuild bundle + the webview page.
vsix: $(NODE_STAMP)
	PYTHON="$$( [ -x $(VENV)/bin/python ] && echo $(VENV)/bin/python || echo $(PY) )" bash extension/scripts/bundle-libs.sh
	npx tsc -p . --noEmit
	node extension/esbuild.mjs --production
	node extension/scripts/package-vsix.mjs $(VSIX)

# Unit tests of the extension logic, vscode mocked (vitest).
test-node: $(NODE_STAMP)
	npx vitest run

# A real VS Code (code-server) driven by Playwright + Debian chromium; screenshots in tests/e2e/artifacts/.
# tests/e2e/setup.sh installs code-server & co. once into $(E2E_ROOT) (gitignored, reused when present).
test-e2e: setup vsix
	bash tests/e2e/setup.sh $(E2E_ROOT)
	node --test tests/e2e/vscode.test.mjs

# Serve a real VS Code with the extension installed and examples/ open; also installs into a local `code`.
demo: setup vsix
	bash tests/e2e/setup.sh $(E2E_ROOT)
	node tests/e2e/demo.mjs $(VSIX)
