# Every entry point of eukhe. Each target sets up .venv itself when it is missing.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST := $(BIN)/python -m pytest
CROSSHAIR_TIMEOUT ?= 5

.PHONY: laws test bridge scenarios hunt crosshair mutants bench types core clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

core: $(STAMP)  ## the planner core compiled with mypyc (a no-op when current); the pure form stays
	$(BIN)/python -m eukhe.corebuild

laws: $(STAMP) core  ## every law in the laws profile; the table; build/laws.json and build/laws.html
	$(PYTEST) -q tests/laws

test: $(STAMP) core  ## the CI command: types, laws, then bridges (scenario currency included) and tests
	$(BIN)/python -m eukhe.corebuild --check
	$(BIN)/python -m mypy
	$(PYTEST) -q tests/laws
	$(PYTEST) -q tests --ignore=tests/laws

bridge: $(STAMP) core  ## replay every committed scenario, both sides, byte for byte
	$(BIN)/python -m bridge replay

scenarios: $(STAMP)  ## regenerate scenario files and digests
	$(BIN)/python -m bridge scenarios

hunt: $(STAMP)  ## long random Hypothesis hunt, then the CrossHair backend
	HYPOTHESIS_PROFILE=hunt EUKHE_HUNT=1 $(PYTEST) -q tests --laws-dir build/hunt
	HYPOTHESIS_PROFILE=hunt-crosshair EUKHE_HUNT=1 $(PYTEST) -q tests/laws --laws-dir build/hunt-crosshair

crosshair: $(STAMP)  ## contracts of bend/ and diffbehavior of model/production pairs
	$(BIN)/python -m spec.crosshair --timeout $(CROSSHAIR_TIMEOUT)

mutants: $(STAMP) core  ## every named deliberate break, and what caught it
	$(BIN)/python -m spec.mutants

bench: $(STAMP) core  ## pytest-benchmark suites, then the view-fit run as JSON (never part of make test)
	$(PYTEST) benchmarks --benchmark-only -p no:cacheprovider
	$(BIN)/python benchmarks/bench_view_fit.py

types: $(STAMP)  ## mypy --strict on impl/, bend/, spec/, bridge/
	$(BIN)/python -m mypy

clean:
	rm -rf build .hypothesis .benchmarks impl/eukhe/memory/core_c*.so
