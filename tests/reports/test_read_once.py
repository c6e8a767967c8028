"""The reports do their work once (issue 66, item 6): a folder's records read once per command, a config's units
made once per folder read, a claim judged on a base table once however many readings are compared with it."""

from pathlib import Path

import pytest

from eemrepro.experiments import get_kind
from eemrepro.reports import Records, build_report
from eemrepro.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
#: Two committed stores of different benchmark groups (grid search at two selection metrics): the report's
#: benchmark reads each group of folders alone, besides the pages' read of every folder.
DIRS = [ROOT / "results" / "lssvm_ensemble", ROOT / "results" / "extreme"]


def _count_frames(monkeypatch):
    reads = {}
    frame = ResultStore.frame

    def counted(self, *args, **kwargs):
        reads[self.root.name] = reads.get(self.root.name, 0) + 1
        return frame(self, *args, **kwargs)

    monkeypatch.setattr(ResultStore, "frame", counted)
    return reads


@pytest.mark.slow
def test_the_report_reads_each_folder_once_and_its_benchmark_pages_are_those_of_a_fresh_read(tmp_path, monkeypatch):
    import eemrepro.reports._records as records_module

    reads = _count_frames(monkeypatch)
    pages = {p.name: p.read_bytes() for p in build_report(DIRS, tmp_path / "once", figures=False)}  # (PDFs too)
    # Before: 2 reads each (the pages' read of every folder, then each benchmark group's own).
    assert reads == {"lssvm_ensemble": 1, "extreme": 1}
    assert "benchmark.html" in pages
    # The benchmark groups' records taken from the pages' read are the records a read of the group alone gives.
    fresh = records_module._folder_frame
    monkeypatch.setattr(records_module, "_folder_frame", lambda d, columns, datasets=None, read_once=None:
                        fresh(d, columns, datasets))
    again = {p.name: p.read_bytes() for p in build_report(DIRS, tmp_path / "fresh", figures=False)}
    assert again == pages


def test_a_folder_of_a_kind_whose_scope_is_its_units_makes_them_once_per_read(monkeypatch):
    # results/melm_table2: the projection kind, whose scope is made of its units (not said from the config).
    kind = get_kind("projection")
    assert kind.scope_from_units
    calls = []
    units = type(kind).units
    monkeypatch.setattr(type(kind), "units", lambda self, config: calls.append(config) or units(self, config))
    records, _ = Records([ROOT / "results" / "melm_table2"]).read()
    assert len(records) and len(calls) == 1  # before: 2 (the scope's, then the identities' of one repeat)


def test_the_installed_distributions_are_not_read_where_every_cell_is_what_its_config_says(monkeypatch):
    # results/melm_table2 names scikit-learn's PCA (``module:Class``): whether a cell's estimator is a user's is
    # asked only of a cell whose records differ from its config (reading every distribution's files: 0.3-2 s).
    import eemrepro.models._lookup as lookup

    asked = []
    monkeypatch.setattr(lookup, "environment_modules", lambda: asked.append(1) or frozenset({"sklearn"}))
    records, _ = Records([ROOT / "results" / "melm_table2"]).read()
    assert len(records) and asked == []


def test_a_claim_is_judged_on_the_primary_table_once_however_many_readings_are_compared_with_it(monkeypatch):
    # results/lssvm_ensemble: four stored readings of Table 4.1, each compared with the primary reading, whose
    # claims' verdicts before the reading's cells replace them are the primary table's own.
    from eemrepro.papers import registered_papers
    from eemrepro.reports import _claims
    from eemrepro.reports._check import build_checked, check
    from eemrepro.reports._readings import readings_frames
    from eemrepro.reports._spec import registered_tables

    dirs = [ROOT / "results" / "lssvm_ensemble"]
    built, results = build_checked(dirs)
    cells = check(None, unfinished=results.unfinished, built=built)
    on_primary = []
    judge = _claims.judge

    def counted(claim, table, spec):
        if any(table is t for t in built.values()):
            on_primary.append(claim.id)
        return judge(claim, table, spec)

    monkeypatch.setattr(_claims, "judge", counted)
    frames = readings_frames(dirs, registered_tables(), cells, primary_tables=built)
    claims = [c.id for p in registered_papers() for c in p.claims if c.table == "lssvm_ensemble_table41"]
    assert len(frames["lssvm_ensemble_table41"]) == 5  # the primary reading and four stored ones
    assert sorted(on_primary) == sorted(claims)  # before: once per reading (4 times each)
