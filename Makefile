# fluidnet — every target creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q
# Re-install when pyproject.toml changes.
STAMP  := $(VENV)/.stamp

.PHONY: all test reproduce bench lint typecheck notebooks clean venv docs browser

# One BLAS thread per process: the analyses solve many small eigenproblems, where threaded BLAS
# on 2 cores is 10-40x slower, and the tests already use one process per core.
export OPENBLAS_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Installing builds the compiled code (setup.py: the C extensions fluidnet.dde._integrator and
# fluidnet.linear._samples, in place for this editable install), and an edit of their C sources
# builds them again (by hand, faster: .venv/bin/python setup.py build_ext --inplace, with
# setuptools in the venv). An integrator older than its sources is refused at import
# (fluidnet.dde.engine); stale samples give way to NumPy's with a warning (linear/samples.py).
$(STAMP)-core: pyproject.toml setup.py | $(BIN)/python
	$(PIP) install -e .
	touch $@ $(STAMP)-integrator

INTEGRATOR_SRC := $(wildcard fluidnet/dde/src/*.c fluidnet/dde/src/*.h fluidnet/linear/src/*.c) setup.py
$(STAMP)-integrator: $(INTEGRATOR_SRC) | $(STAMP)-core
	$(PIP) install --no-deps -e .
	touch $@

# `make reproduce` runs every registered item, the ns-3 packet items included, so its environment
# has the packet extra (ns-3): typed first on a fresh machine, it installs what every item needs.
$(STAMP)-reproduce: pyproject.toml setup.py | $(BIN)/python
	$(PIP) install -e ".[packet]"
	touch $@ $(STAMP)-core $(STAMP)-integrator

# The tests compare the integrator with jitcdde, so the test environment has the bench extra;
# they run sweeps on a local Dask cluster, so it has the dask extra too; they compare fluid models
# with ns-3 packet simulations, so it has the packet extra.
$(STAMP)-dev: pyproject.toml setup.py | $(BIN)/python
	$(PIP) install -e ".[dev,notebooks,bench,dask,packet]"
	touch $@ $(STAMP)-core $(STAMP)-integrator $(STAMP)-reproduce

venv: $(STAMP)-dev $(STAMP)-integrator

# The browser tests (tests/test_explore_browser.py, tests/test_docs_browser.py) drive Debian's
# Chromium with playwright (its own browser download does not work offline): installed here
# with apt-get where it is missing and we are root; elsewhere they skip, saying why (in CI,
# with CI set, they fail instead).
browser:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else \
	    echo "make: no /usr/bin/chromium and no apt-get as root: the browser tests will skip"; \
	fi

## make test: the whole test suite, notebooks included (runs on 2 cores)
test: $(STAMP)-dev $(STAMP)-integrator browser
	$(BIN)/python -m pytest -n 2 --doctest-modules fluidnet tests --nbmake notebooks

## make reproduce: regenerate every reproduced figure and table, print the target report
# Items run JOBS at a time (default: one per core); an item whose code, environment and files
# are unchanged since the last run is read back from papers/.cache, and so is every ns-3 run
# already made (RERUN=1: run everything again).
JOBS ?= auto
reproduce: $(STAMP)-reproduce $(STAMP)-integrator
	$(BIN)/fluidnet reproduce --all -j $(JOBS) --out papers $(if $(RERUN),--rerun)

## make bench: side-by-side comparisons with peer tools (jitcdde, ddeint)
bench: $(STAMP)-dev $(STAMP)-integrator
	$(BIN)/python benchmarks/run.py

# The documentation site builds with its own extra; its paper pages show the figures and targets
# of the last `make reproduce` (run first when there is none).
$(STAMP)-docs: pyproject.toml | $(BIN)/python
	$(PIP) install -e ".[docs]"
	touch $@

papers/REPORT.md:
	$(MAKE) reproduce

## make docs: the documentation site in docs/_build/html (warnings are errors), then the test of
## the built pages (tests/test_docs_html.py) and every page loaded in Chromium
## (tests/test_docs_browser.py). Notebooks run only when their code changed (their
## outputs are cached in docs/_build/.jupyter_cache; FLUIDNET_DOCS_EXECUTE=force runs them all);
## MathJax is installed from npm into docs/_build/mathjax and served with the site.
docs: $(STAMP)-dev $(STAMP)-docs $(STAMP)-integrator papers/REPORT.md browser
	$(BIN)/sphinx-build -W --keep-going -n -b html docs docs/_build/html
	FLUIDNET_DOCS_SITE_REQUIRED=1 $(BIN)/python -m pytest -p no:cacheprovider -q \
	    tests/test_docs_html.py tests/test_docs_browser.py

## make lint: ruff's checks and formatting over the code, tests, benchmarks, examples and docs,
## and the import contracts of pyproject.toml (stages, no cycles) with import-linter
lint: $(STAMP)-dev
	$(BIN)/ruff check fluidnet tests benchmarks examples docs setup.py
	$(BIN)/ruff format --check fluidnet tests benchmarks examples docs setup.py
	$(BIN)/lint-imports

## make typecheck: pyright (basic mode) on fluidnet/, configured in pyproject.toml [tool.pyright]
# pyright (with its node runtime from PyPI) is installed on its own, from the "typecheck" extra's
# requirements, without reinstalling fluidnet: .ci/run runs this beside `make test`. `-p .`: the
# configuration of this checkout's pyproject.toml, never a pyrightconfig.json of a parent directory.
$(STAMP)-typecheck: pyproject.toml | $(STAMP)-dev
	$(PIP) install -q $$($(BIN)/python -c "import tomllib; print(' '.join(r for r in \
	    tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['typecheck']))")
	touch $@

typecheck: $(STAMP)-dev $(STAMP)-typecheck
	nice -n 10 $(BIN)/pyright -p .

notebooks: $(STAMP)-dev
	$(BIN)/jupyter lab notebooks

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .fluidnet_cache build dist fluidnet.egg-info
	rm -rf docs/_build docs/api docs/papers docs/auto_examples docs/jupyter_execute docs/notebooks
	rm -f docs/sg_execution_times.rst
	rm -f fluidnet/dde/_integrator*.so
