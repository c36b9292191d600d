# fluidnet — every target creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q
# Re-install when pyproject.toml changes.
STAMP  := $(VENV)/.stamp

.PHONY: all test reproduce bench lint notebooks clean venv

# One BLAS thread per process: the analyses solve many small eigenproblems, where threaded BLAS
# on 2 cores is 10-40x slower, and the tests already use one process per core.
export OPENBLAS_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP)-core: pyproject.toml | $(BIN)/python
	$(PIP) install -e .
	touch $@

# After installing, and after any edit of the integrator's sources, compile it once (python -m
# fluidnet.dde.warmup, about a minute of CPU): numba caches the kernel next to the sources, and
# the warm-up builds it ahead of time into an extension module that later processes import
# without numba. numba's cache does not notice edits to the kernel's callees, so it is cleared.
ENGINE_SRC := $(wildcard fluidnet/dde/_*.py) fluidnet/dde/methods.py fluidnet/dde/engine.py
$(STAMP)-engine: $(ENGINE_SRC) $(STAMP)-core
	find fluidnet/dde -name '*.nbi' -delete -o -name '*.nbc' -delete
	$(BIN)/python -m fluidnet.dde.warmup
	touch $@

# The tests compare the integrator with jitcdde, so the test environment has the bench extra;
# they run sweeps on a local Dask cluster, so it has the dask extra too; they compare fluid models
# with ns-3 packet simulations, so it has the packet extra.
$(STAMP)-dev: pyproject.toml | $(BIN)/python
	$(PIP) install -e ".[dev,notebooks,bench,dask,packet]"
	touch $@ $(STAMP)-core

venv: $(STAMP)-dev $(STAMP)-engine

## make test: the whole test suite, notebooks included (runs on 2 cores)
test: $(STAMP)-dev $(STAMP)-engine
	$(BIN)/python -m pytest -n 2 --doctest-modules fluidnet tests --nbmake notebooks

## make reproduce: regenerate every reproduced figure and table, print the target report
reproduce: $(STAMP)-core $(STAMP)-engine
	$(BIN)/fluidnet reproduce --all --out papers

## make bench: side-by-side comparisons with peer tools (jitcdde, ddeint)
bench: $(STAMP)-dev $(STAMP)-engine
	$(BIN)/python benchmarks/run.py

lint: $(STAMP)-dev
	$(BIN)/ruff check fluidnet tests benchmarks
	$(BIN)/ruff format --check fluidnet tests benchmarks

notebooks: $(STAMP)-dev
	$(BIN)/jupyter lab notebooks

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .fluidnet_cache
	# numba's on-disk cache does not notice edits to the kernels' callees
	find fluidnet -name '*.nbi' -delete -o -name '*.nbc' -delete
