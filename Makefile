# Two commands for a fresh machine: `make demo` (set up, build, serve VS Code with the extension)
# and `make test` (set up and run every test). Both build on `make setup`.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
VENV32 := .venv-triton32
TRITON ?= 3.9.0
PIP_FLAGS := --disable-pip-version-check -q
# npm packages (TypeScript, esbuild, eslint, prettier, vitest) are installed from package-lock.json. Defined
# here, above every rule that needs it: make expands a prerequisite when it reads the rule.
NODE_STAMP := node_modules/.install-stamp

.SECONDEXPANSION:
.PHONY: setup setup32 setup-releases test-releases test test-deps e2e-deps browser lint test-python test-engine32 test-node test-e2e test-package vsix demo demo-plan dist release bench bench-all viz-deps clean

setup: $(VENV)/.done
$(VENV)/.done: pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install $(PIP_FLAGS) --upgrade pip
	# torch 2.13.0 takes the CPU wheel on local disk; any numpy (trace_engine/interpreter/semantics.py makes triton<=3.6 work on 2.4+).
	$(VENV)/bin/pip install $(PIP_FLAGS) torch==2.13.0 triton==$(TRITON) numpy \
	    pygls==2.1.1 lsprotocol==2025.0.0 debugpy==1.8.22 flask==3.1.3 \
	    pytest pytest-lsp==1.0.1 pytest-asyncio \
	    pytest-xdist jsonschema build ruff==0.17.5 mypy==2.4.1
	# Real-world kernels for tests/realworld (imported, not copied). --no-deps: they must not pull another
	# torch or triton; einops is fla's one other import.
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps liger-kernel==0.8.5 fla-core==0.6.0 conch-triton-kernels==1.3 einops
	# FlagGems (2.2 MB wheel): its two imports besides numpy and packaging, pinned as it pins them.
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps flag-gems==5.0.2 PyYAML==6.0.3 sqlalchemy==2.0.48 greenlet
	# gemlite (180 kB sdist, pure Python, needs triton >= 3.6): its one other import is tqdm.
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps gemlite==0.6.0.post2 tqdm==4.70.1
	# z3-solver (the optional extra triton-lens[symbolic]: trace_engine/recording/size_symbolic.py), a binary wheel with no deps.
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps z3-solver==5.4.0.0
	# cut-cross-entropy (a pure-Python wheel): torch and triton only.
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps cut-cross-entropy==25.1.1
	# xformers (3.3 MB wheel, 14 MB installed, about 2 s): its Triton kernels are Python; its _C extension (built
	# for torch 2.10+cu128) does not load on this torch, which xformers only warns about.
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps xformers==0.0.35
	# lmdeploy (PyPI has wheels only, no sdist: 106.7 MB downloaded, 383 MB installed, 366 MB of it the turbomind
	# CUDA engine; about 10 s): tests/realworld imports only its Triton kernel modules.
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps lmdeploy==0.18.0
	# mamba-ssm and flash-attn are sdists whose setup.py builds CUDA extensions: the SKIP flags build none
	# (their Triton ops are Python), FORCE_BUILD stops setup.py fetching a prebuilt CUDA wheel, and
	# --no-build-isolation builds against this torch (setuptools and wheel are what setup.py imports).
	# About 20-40 s (8.7 MB downloaded, 6 MB installed); the sdists stay in $(VENV)/sdists, where tests/realworld reads
	# flash-attn's own tests/test_rotary.py.
	$(VENV)/bin/pip install $(PIP_FLAGS) setuptools wheel
	export MAMBA_SKIP_CUDA_BUILD=TRUE MAMBA_FORCE_BUILD=TRUE FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE \
	    FLASH_ATTENTION_FORCE_BUILD=TRUE; \
	$(VENV)/bin/pip download $(PIP_FLAGS) --no-deps --no-build-isolation -d $(VENV)/sdists \
	    mamba-ssm==2.3.2.post1 flash-attn==2.8.3.post2 && \
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps --no-build-isolation \
	    $(VENV)/sdists/mamba_ssm-2.3.2.post1.tar.gz $(VENV)/sdists/flash_attn-2.8.3.post2.tar.gz
	$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps -e .
	touch $@

# ---- every supported triton release, for the engine tests -------------------------------------
# One venv per release, .venv-triton<MAJOR><MINOR> (3.2.0 -> .venv-triton32). Each holds only its triton
# and this package; torch, numpy and pytest come from $(VENV) through a site dir appended after its own
# (its own triton shadows $(VENV)'s), so a release costs one triton wheel, not another torch.
RELEASES := 3.2.0 3.3.1 3.4.0 3.5.1 3.6.0 3.7.1 3.8.0 3.9.0
release_venv = .venv-triton$(subst .,,$(basename $(1)))
# The releases other than $(TRITON) (that one is $(VENV) itself).
OTHER_RELEASES := $(filter-out $(TRITON),$(RELEASES))
RELEASE_VENVS := $(foreach r,$(OTHER_RELEASES),$(call release_venv,$(r)))
SITE = lib/python3.11/site-packages

define release_rule
$(call release_venv,$(1))/.done: $(VENV)/.done pyproject.toml
	rm -rf $(call release_venv,$(1))
	$(PY) -m venv $(call release_venv,$(1))
	echo "import site; site.addsitedir('$(CURDIR)/$(VENV)/$(SITE)')" > $(call release_venv,$(1))/$(SITE)/zz_triton_lens_base.pth
	$(call release_venv,$(1))/bin/pip install $(PIP_FLAGS) --no-deps triton==$(1)
	# One editable install at a time (make -j4 test-deps builds the venvs side by side; each writes
	# server/triton_lens.egg-info).
	flock .editable-install.lock $(call release_venv,$(1))/bin/pip install $(PIP_FLAGS) --no-deps -e .
	touch $$@
endef
$(foreach r,$(OTHER_RELEASES),$(eval $(call release_rule,$(r))))

# The oldest supported release (kept as its own target: `make setup32`).
setup32: $(VENV32)/.done
setup-releases: $(addsuffix /.done,$(RELEASE_VENVS))

# Every test: engine (triton 3.9 and 3.2), language server, Triton-Viz API and viewer, webview page,
# extension unit tests, and the extension in a real VS Code.
# It first sets up all it needs at once (the venvs of every release and the npm packages: mostly downloads,
# run side by side by `make -j4 test-deps`), then runs the stages one after another, so that no two
# stages' tests share the cores (their time limits assume they do not).
test:
	$(MAKE) -j4 test-deps
	$(MAKE) lint test-python test-engine32 test-releases test-package test-webview test-node test-e2e
test-deps: setup setup32 setup-releases viz-deps webview-deps $(NODE_STAMP) e2e-deps
# code-server and its browser (tests/e2e/setup.sh: reused when present); after `browser`, so that no two
# apt-gets run at once.
e2e-deps: browser
	bash tests/e2e/setup.sh $(E2E_ROOT)

# The quality gate, first: lint and format of the Python (ruff), its types (mypy, configured in
# pyproject.toml: strict on model/, source/, the engine, analysis/ and lsp/), lint and format of the extension, the page and the
# test scripts (eslint, prettier), and the types (tsc, strict) of the extension and of the page
# (tsconfig.webview.json: its JSDoc-typed modules, checked, never compiled).
lint: setup $(NODE_STAMP)
	$(VENV)/bin/ruff check server tests bench
	$(VENV)/bin/ruff format --check server tests bench
	$(VENV)/bin/mypy
	npx eslint .
	npx prettier --check extension tests/webview tests/e2e "tests/viz/*.mjs"
	npx tsc -p . --noEmit
	npx tsc -p tsconfig.webview.json

# pytest: tests/engine, tests/lsp, tests/viz (the viz tests drive Chromium through tests/viz's playwright-core).
# (tests/realworld runs FlagGems on triton 3.6 too, the newest release it compiles on.)
test-python: setup viz-deps $(call release_venv,3.6.0)/.done
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=25

viz-deps: tests/viz/node_modules/.done browser
# Debian's Chromium, for the viz, webview and e2e tests (one rule: two apt-gets at once fight for dpkg's lock).
browser:
	@test -x /usr/bin/chromium || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)
tests/viz/node_modules/.done: tests/viz/package.json tests/viz/package-lock.json
	cd tests/viz && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Without the z3 extra (TRITON_LENS_SYMBOLIC=0) on the other releases: it reads the kernel's source, the same on
# every release, and test-python runs it on $(TRITON); here it would only add its solver time to each size check.
# The corpus-wide equivalences (a split launch over two workers, a progressive sample, each compared with the
# plain run, file by file: ~40% of this stage) run on every corpus file on $(TRITON) in test-python; here on the
# order-sensitive files only (atomics, a lock, races, several launches), where a release's program order would
# show. Every targeted split and progressive test of those files still runs here.
ORDER_SENSITIVE := atomic_histogram or lock_critical_section or race_read_write or race_write_write or multi_launch
CORPUS_EQUIVALENCES := test_check_json_is_the_same_with_two_workers or test_marker_holds_with_two_workers \
    or test_a_sampled_run_completes_as_a_plain_one
test-engine32: setup32
	TRITON_LENS_SYMBOLIC=0 $(VENV32)/bin/python -m pytest -q -p no:cacheprovider -p no:warnings -n 2 --dist loadfile tests/engine \
	    -k "not ($(CORPUS_EQUIVALENCES)) or $(ORDER_SENSITIVE)"

# The releases between 3.2 and $(TRITON) (both run every engine test above): the corpus markers and
# the semantics tests, which are what differs between releases. `make test-releases` runs them all.
MIDDLE_RELEASES := $(filter-out 3.2.0 $(TRITON),$(RELEASES))
test-releases: $(foreach r,$(MIDDLE_RELEASES),test-release-$(r))
test-release-%: $$(call release_venv,%)/.done
	@echo "== triton $*"
	TRITON_LENS_SYMBOLIC=0 $(call release_venv,$*)/bin/python -m pytest -q -p no:cacheprovider -p no:warnings -n 2 --dist loadfile \
	    tests/engine/test_engine_corpus.py tests/engine/test_semantics.py \
	    tests/engine/test_allocator.py tests/engine/test_dot_precision.py

# The published package: `python -m build` makes a wheel + sdist that install with
# `pip install 'triton-lens[kernel,lsp,viewer]'` into a clean venv and run `triton-lens check` on corpus files.
# Dependency wheels are kept in .wheelhouse/ (only the first run downloads).
test-package: setup
	bash tests/package/check_package.sh $(VENV)/bin/python

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
	$(VENV)/bin/python bench/parallel.py --scale $(PARALLEL_SCALE) --out bench/results/parallel_$$(date +%F)_$$(nproc)core.txt

# bench/parallel.py's sizes: 1 is the issue's (minutes of bare interpreter on one core); 0.02 runs quickly.
PARALLEL_SCALE ?= 1

clean:
	rm -rf $(VENV) .venv-triton* $(DEMO_VENV) node_modules dist release bundled/libs *.vsix

# ---- webview: the access-map page (extension/webview) in headless Debian Chromium -------------
# Its own npm deps (playwright-core only) live in tests/webview. The engine test there renders a
# real engine result and needs $(VENV) (make setup); without it that one test is skipped.
WEBVIEW_TESTS := tests/webview
CHROMIUM ?= /usr/bin/chromium

.PHONY: test-webview bench-webview webview-deps
webview-deps: $(WEBVIEW_TESTS)/node_modules/.done browser
$(WEBVIEW_TESTS)/node_modules/.done: $(WEBVIEW_TESTS)/package.json $(WEBVIEW_TESTS)/package-lock.json
	cd $(WEBVIEW_TESTS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

test-webview: setup webview-deps
	cd $(WEBVIEW_TESTS) && CHROMIUM=$(CHROMIUM) node --test --test-concurrency=1 *.test.mjs

# prints render times; `make bench-webview ARGS=--write` also writes bench/results/webview_render_<date>.txt
bench-webview: webview-deps
	cd $(WEBVIEW_TESTS) && CHROMIUM=$(CHROMIUM) node bench_render.mjs $(ARGS)

# ---------------------------------------------------------------- the VS Code extension
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

# A real VS Code (code-server) driven by Playwright + Debian chromium, on kernel files and on a Jupyter notebook
# (notebook.test.mjs); screenshots in tests/e2e/artifacts/.
# tests/e2e/setup.sh installs code-server & co. once into $(E2E_ROOT) (gitignored, reused when present).
test-e2e: setup vsix
	bash tests/e2e/setup.sh $(E2E_ROOT)
	# one file at a time (each starts its own code-server)
	node --test --test-concurrency=1 tests/e2e/vscode.test.mjs tests/e2e/notebook.test.mjs

# Serve a real VS Code with the extension installed and examples/ open; also installs into a local `code`.
# Only what it serves, as this user (no root, no browser, no test or lint tools): the kernel stack for the
# runs (.venv when `make setup` made it, else $(DEMO_VENV) with torch, triton, numpy and debugpy only), the npm
# packages that build the .vsix, Node 24 and code-server (tests/e2e/setup.sh --serve-only).
DEMO_VENV := .venv-demo
DEMO_PYENV := $(if $(wildcard $(VENV)/.done),$(VENV),$(DEMO_VENV))
# (.venv is used as it is: `make demo` never starts the full `make setup`)
demo: demo-plan $(if $(wildcard $(VENV)/.done),,$(DEMO_VENV)/.done) vsix
	bash tests/e2e/setup.sh --serve-only $(E2E_ROOT)
	TRITON_LENS_PYTHON=$(CURDIR)/$(DEMO_PYENV)/bin/python node tests/e2e/demo.mjs $(VSIX)

demo-plan:
	@echo "make demo downloads, once, into this folder (later runs reuse it; outside it only pip's and npm's caches, and the .vsix into your own VS Code when a code command is on PATH):"
	@$(if $(wildcard $(DEMO_PYENV)/.done),echo "  - nothing for Python: $(DEMO_PYENV) is there",echo "  - into $(DEMO_VENV): torch $(DEMO_TORCH), triton $(TRITON), numpy, debugpy from your pip index, with pip's progress bars." && echo "    On Linux PyPI's torch is the CUDA build (several GB); the CPU one is a few hundred MB:" && echo "    make demo DEMO_PIP='--extra-index-url https://download.pytorch.org/whl/cpu'")
	@echo "  - into node_modules, unless it is up to date: the npm packages that build the .vsix (package-lock.json)"
	@$(if $(wildcard $(E2E_ROOT)/cs/.done-*),echo "  - nothing for VS Code: $(E2E_ROOT) is there",echo "  - into $(E2E_ROOT): Node 24 (about 190 MB on disk) and code-server, VS Code's workbench (about 600 MB on disk, compiled here: 2-8 min on 2 cores), from the npm registry")
	@echo "  Then it serves VS Code on 127.0.0.1 with examples/ open: open the printed address in your browser."

DEMO_TORCH := 2.13.0
DEMO_PIP ?=
$(DEMO_VENV)/.done:
	$(PY) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/pip install --disable-pip-version-check --upgrade pip
	$(DEMO_VENV)/bin/pip install --disable-pip-version-check $(DEMO_PIP) torch==$(DEMO_TORCH) triton==$(TRITON) numpy debugpy==1.8.22
	touch $@

# What a user without a clone installs, in release/ (dist/ is the extension's esbuild output): the wheel and
# sdist (python -m build) and the .vsix.
#   pip install "release/triton_lens-<version>-py3-none-any.whl[kernel,lsp,viewer]"
#   code --install-extension release/triton-lens.vsix
release: vsix
	PY="$$( [ -x $(VENV)/bin/python ] && echo $(VENV)/bin/python || echo $(PY) )"; \
	  "$$PY" -m build --version >/dev/null 2>&1 || { echo "make dist needs the build package: $$PY -m pip install build (make setup has it)" >&2; exit 1; }; \
	  rm -rf release && "$$PY" -m build --outdir release .
	cp $(VSIX) release/
	@echo "release/:" && ls -1 release
dist: release
