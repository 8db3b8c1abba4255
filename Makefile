# Chat Nodes: every target creates .venv from nothing when it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUN := $(VENV)/.stamp-run
STAMP_TEST := $(VENV)/.stamp-test
STAMP_BENCH := $(VENV)/.stamp-bench
PIP_FLAGS := --disable-pip-version-check -q

.PHONY: run demo test lint typecheck bench screenshots bundle bundle-check clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP_RUN): pyproject.toml | $(PY)
	$(PY) -m pip install $(PIP_FLAGS) -e .
	touch $@

# The test run includes the bench extra: tests/bench runs every benchmark once at tiny sizes,
# SDK baselines included, so a broken benchmark fails CI instead of the next `make bench`.
$(STAMP_TEST): pyproject.toml | $(PY)
	$(PY) -m pip install $(PIP_FLAGS) -e '.[test,bench]'
	touch $@ $(STAMP_RUN) $(STAMP_BENCH)

$(STAMP_BENCH): pyproject.toml $(STAMP_TEST)
	touch $@

run: $(STAMP_RUN)
	$(PY) -m desktop $(ARGS)

demo: $(STAMP_RUN)
	$(PY) -m desktop --demo $(ARGS)

lint: $(STAMP_TEST)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/vulture

test: lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

bench: $(STAMP_BENCH)
	QT_QPA_PLATFORM=offscreen $(PY) -m benchmarks $(ARGS)

screenshots: $(STAMP_RUN)
	QT_QPA_PLATFORM=offscreen $(PY) -m desktop.screenshots docs/screenshots

# A one-folder PyInstaller bundle built from its own clean venv (never the dev venv: qasync's
# optional imports of other Qt bindings would abort PyInstaller).
bundle:
	bash packaging/build.sh

bundle-check:
	bash packaging/check.sh

clean:
	rm -rf $(VENV) .venv-bundle build dist .pytest_cache .mypy_cache .ruff_cache
