PYTHON ?= python3
VENV ?= .venv
PY = $(VENV)/bin/python

# The paper's reproduction stores (.ci/quick-baseline is CI's regression baseline, not a paper table).
# Table results; results/stability (Figure 3's h sweep) is kept apart: its EEMrbf
# grid would otherwise merge into Table 4's UCI cells (load_results refuses that).
RESULTS ?= $(wildcard results/uci results/unbalanced results/extreme results/dcs_correlation results/lssvm_ensemble \
                     results/melm_table2 results/melm_table3 results/esmm_table4)
SWEEP ?= $(wildcard results/stability)
# Stores that hold what figures draw and no table (MELM Figs. 3-5).
FIGURE_STORES ?= $(wildcard results/melm_restarts results/melm_embedding)

.PHONY: install test docs mutate cost-prior bench-estimate bench bench-svm bench-svm-cache bench-lssvm bench-melm bench-smm bench-store bench-reports bench-units bench-main fuzz lint clean tables figures report

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# setuptools warns on every editable install that a folder named like the package may shadow it:
# this checkout is that folder, on purpose.
install: $(VENV)/bin/python
	$(PY) -m pip install --quiet --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -e ".[test]"

test: install
	$(PY) -m pytest

# docs/config-reference.md, generated from the config validator (a test fails when the committed page differs).
docs: install
	$(PY) -c "from eemrepro.experiments._reference import config_reference; import sys; sys.stdout.write(config_reference())" > docs/config-reference.md

# The readers of user input (configs, record lines) fuzzed at length; `make test` runs a fixed, short sample.
fuzz: install
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest tests/store/test_fuzz.py -q

# Mutation testing ([tool.mutmut] in pyproject.toml: selection, check's rules, the store's keys, the scheduler, the
# readers of a group of data sets at a time, the baseline check, local data sets, the comparison statistics); the
# survivors and what was done about each are in benchmarks/MUTATION.md. Resumable: `mutmut results` lists them.
# MUTANTS runs some only, by mutmut's names (globs allowed): make mutate MUTANTS='eemrepro.experiments._schedule.*'
MUTATE_JOBS ?= 2
mutate: install
	$(PY) -m pip install --quiet "mutmut>=3.3"
	$(VENV)/bin/mutmut run --max-children $(MUTATE_JOBS) $(foreach m,$(MUTANTS),'$(m)')
	$(VENV)/bin/mutmut results

bench: install
	$(PY) benchmarks/bench_eem.py

bench-lssvm: install
	$(PY) benchmarks/bench_lssvm_gcv.py

bench-melm: install
	$(PY) benchmarks/bench_melm.py

bench-smm: install
	$(PY) benchmarks/bench_smm.py

# The result store: the old JSON-lines reader against the columnar one (old = the commit before it, in a
# temporary git worktree; its `tables` takes 10-15 min). Resume rows need the data: MIRROR=... or $$EEMREPRO_MIRROR.
# The readers: tables, check and the resume dry run over TABLE_RESULTS and a 10-million-record synthetic store
# (written once into .cache/bench-store); then the columnar store against the JSON-lines one.
bench-store: install
	$(PY) benchmarks/bench_readers.py $(if $(MIRROR),--mirror $(MIRROR))
	$(PY) benchmarks/bench_store.py $(if $(MIRROR),--mirror $(MIRROR)) --skip-old

# The reports over CI's stores (TABLE_RESULTS): tables, report and check, wall and CPU seconds and peak memory
# (median of RUNS runs) against issue 66's targets.
RUNS ?= 5
bench-reports: install
	$(PY) benchmarks/bench_reports.py --runs $(RUNS)

# The paper's SVM grid, LIBSVM's separate fits against each fast path (fit_path; oneDAL with eemrepro[fast]) on a
# webpages- and a mammography-shaped fold (needs the data: the cache, MIRROR=... or $$EEMREPRO_MIRROR).
bench-svm: install
	$(PY) benchmarks/bench_svm.py $(if $(MIRROR),--mirror $(MIRROR))

# The runner's cost per unit on small units (ESMM paths on a KEEL set): a fit child per unit against one per run
# (needs the data: the cache, MIRROR=... or $$EEMREPRO_MIRROR).
# The main process's own seconds per unit and per record, dispatch and fit-child costs, and the simulator's
# makespan at 16 and 64 workers with them (issue 60; benchmarks/RESULTS.md).
bench-main: install
	$(PY) benchmarks/bench_main_process.py

bench-units: install
	$(PY) benchmarks/bench_units.py $(if $(MIRROR),--mirror $(MIRROR))

# The fresh-store cost prior (eemrepro/experiments/cost_prior.json), learned from the committed grid-search
# stores' timed fits; the same stores give the same bytes (tests/experiments/test_cost_prior.py checks it).
cost-prior: install
	$(PY) benchmarks/derive_cost_prior.py

# The first dry run's estimate against the real run (niced, --jobs 1) for three configs of different shapes
# (issue 67; benchmarks/RESULTS.md). Needs the data: MIRROR=... or $$EEMREPRO_MIRROR.
bench-estimate: install
	$(PY) benchmarks/bench_first_estimate.py $(if $(MIRROR),--mirror $(MIRROR))

# LIBSVM's kernel cache, webpages by default.
bench-svm-cache: install
	$(PY) benchmarks/bench_svm_cache.py $(if $(MIRROR),--mirror $(MIRROR))

tables: install
	$(VENV)/bin/eemrepro tables $(RESULTS) --format md --format csv --format latex --layout full --out results/tables

# The reproduction as a static site (build/report/index.html; not committed: rebuilt from the stores).
report: install
	$(VENV)/bin/eemrepro report $(RESULTS) --tolerance .ci/published-pins.yaml --out build/report \
		$(foreach d,$(SWEEP) $(FIGURE_STORES),--figures-from $(d))

figures: install
	$(VENV)/bin/eemrepro figures $(RESULTS) --figure scatter --out results/figures
	$(if $(SWEEP),$(VENV)/bin/eemrepro figures $(SWEEP) --figure stability --out results/figures)
	$(if $(FIGURE_STORES),$(VENV)/bin/eemrepro figures $(FIGURE_STORES) --out results/figures)

lint: install
	$(PY) -m pip install --quiet ruff
	$(VENV)/bin/ruff check eemrepro tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
