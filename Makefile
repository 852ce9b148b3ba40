SHELL := /bin/bash
VENV   ?= .venv
PY     := $(VENV)/bin/python
WORK   := .work
# console scripts (caveman-mcp, ...) must be on PATH for notebook and pytest subprocesses
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
# The team's shared data (real payloads, TOON fixtures) sits beside the checkout in ../shared; a clone
# made elsewhere on our machines finds it at /work/shared. Tests fail, never skip, without it.
SHARED ?= $(firstword $(wildcard $(CURDIR)/../shared/corpus/SOURCES.md /work/shared/corpus/SOURCES.md))
ifneq ($(SHARED),)
export CAVEMAN_CORPUS ?= $(abspath $(dir $(SHARED)))
export CAVEMAN_TOON_CONFORMANCE ?= $(abspath $(dir $(SHARED))/../toon-conformance)
endif
NBTEST_TIMEOUT ?= 1200
PYTEST_ARGS    ?=

.PHONY: venv install demo test test-nbs test-py test-fast export clean-nbs readme docs check-sync bench eval clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

venv: $(PY)

# The verbose pip log of this install is kept: `make demo` compresses it as a real log payload.
install: $(PY)
	@mkdir -p $(WORK)
	$(PY) -m pip install -v -e ".[dev]" > $(WORK)/pip-install-verbose.log 2>&1 || { tail -40 $(WORK)/pip-install-verbose.log; exit 1; }
	@echo "installed caveman into $(VENV) (log: $(WORK)/pip-install-verbose.log)"

export:
	nbdev_export

clean-nbs:
	nbdev_clean

# Notebook tests first, pytest last so its count line closes the output. Notebook runs start no warm
# hook server that would outlive them (64b_hook_server starts its own, with a short idle time).
test-nbs:
	CAVEMAN_HOOK_SERVER=off timeout $(NBTEST_TIMEOUT) nbdev_test --n_workers 2 --do_print --timing

test-py:
	$(PY) -m pytest -q $(PYTEST_ARGS) tests

test: install
	$(MAKE) --no-print-directory test-nbs
	$(MAKE) --no-print-directory test-py

# everything but tests marked slow (for the edit-run loop; CI runs `make test`)
test-fast:
	CAVEMAN_HOOK_SERVER=off timeout $(NBTEST_TIMEOUT) nbdev_test --n_workers 2
	$(PY) -m pytest -q -m "not slow" tests

# README.md is nbs/index.ipynb executed and written as Markdown (docs/nbdocs.py; nbdev_readme needs quarto)
readme: install
	CAVEMAN_HOOK_SERVER=off $(PY) docs/nbdocs.py readme README.md

# every notebook executed (as nbdev_test runs them) and rendered with its outputs: open build/docs/index.html
docs: install
	CAVEMAN_HOOK_SERVER=off $(PY) docs/nbdocs.py site build/docs

check-sync: install
	nbdev_export
	nbdev_clean
	$(PY) docs/nbdocs.py readme README.md
	@if [ -n "$$(git status --porcelain -- caveman nbs settings.ini README.md)" ]; then \
	  echo "Out of sync: run 'nbdev_export && nbdev_clean && make readme' and commit:"; \
	  git status --porcelain -- caveman nbs settings.ini README.md; exit 1; fi
	@echo "notebooks, caveman/ and README.md are in sync"

demo: install
	$(PY) demo/run_demo.py --venv $(VENV) --work $(WORK)

bench: install
	$(PY) benchmarks/run.py

# the eval table (caveman.evals, evals/manifest.yaml), then the live corpus (evals/live_capture.py); fails when either fails
eval: install
	$(PY) -c 'import sys; from caveman.evals import main; sys.exit(main())'
	$(PY) evals/live_capture.py     # the live part: ~50 real commands of this machine, captured now

clean:
	rm -rf $(VENV) $(WORK) build dist *.egg-info
