PYTHON ?= python3
VENV ?= .venv
PY = $(VENV)/bin/python

.PHONY: install test bench lint clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

install: $(VENV)/bin/python
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"

test: install
	$(PY) -m pytest

bench: install
	$(PY) benchmarks/bench_eem.py

lint: install
	$(PY) -m pip install --quiet ruff
	$(VENV)/bin/ruff check eemrepro tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
