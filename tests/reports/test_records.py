"""The one reader of records (``reports.Records``): read whole or a group of data sets at a time, it gives the
same records, the same provenance and the same tables, whatever the memory budget."""

from pathlib import Path

import numpy as np
import pytest

from eemrepro.reports import Records
from eemrepro.reports._records import split_by_kind
from eemrepro.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
#: Committed stores of three kinds of table (a metric table, a time table, the benchmark), small enough to
#: read whole in a test: records per data set 600 (lssvm_ensemble), 5,602 to 6,900 (extreme).
DIRS = [ROOT / "results" / "lssvm_ensemble", ROOT / "results" / "extreme"]
#: Budgets: smaller than any one data set's records (each alone), a few data sets a group, all in one group.
BUDGETS = [1, 700, 7_000, 13_000, 10**12]


def _rows(frame):
    """A frame's rows as plain values (categorical or not, NaN as None), in order."""
    return [tuple(None if (v is None or (isinstance(v, float) and np.isnan(v))) else v for v in row)
            for row in frame.astype(object).itertuples(index=False, name=None)]


@pytest.fixture(scope="module")
def whole():
    return Records(DIRS).read()


@pytest.mark.parametrize("budget", BUDGETS)
def test_each_group_is_the_whole_read_cut_to_its_data_sets_and_the_provenance_is_the_same(whole, budget):
    records, prov = whole
    counts = {}
    for d in DIRS:
        for dataset, n in ResultStore(d).dataset_counts().items():
            counts[dataset] = counts.get(dataset, 0) + n
    read = Records(DIRS, budget)
    # Every record within the budget: one group, every data set (None, as with no budget), told from the
    # segments' record counts without reading a column.
    groups = [sorted(counts) if g is None else g for g in read.groups]
    # Consecutive sorted data sets, each group within the budget unless one data set alone is larger.
    assert [d for g in groups for d in g] == sorted(counts)
    assert all(sum(counts[d] for d in g) <= budget or len(g) == 1 for g in groups)
    if budget == 1:
        assert read.groups == [[d] for d in sorted(counts)]
    if budget == 10**12:
        assert read.groups == [None]
    seen = 0
    for group, (frame, parts) in zip(groups, read.by_kind(), strict=True):
        expected = records[records["dataset"].isin(group)]
        shared = [c for c in records.columns if c in frame]
        assert _rows(frame[shared]) == _rows(expected[shared]), group
        assert {k: len(v) for k, v in parts.items()} == {k: len(v) for k, v in split_by_kind(expected).items()}
        seen += len(frame)
    assert seen == len(records) == prov["records"]
    assert read.provenance == prov
    assert sorted(read.unfinished) == sorted(tuple(c) for c in prov["unfinished"])


def test_the_tables_of_every_budget_are_the_tables_read_whole_byte_for_byte(tmp_path, monkeypatch):
    # ``tables`` reads its records a group of data sets at a time (``TABLE_CHUNK_RECORDS``): the files it
    # writes (the papers' tables, the check, the benchmark, each with its provenance header) are those of one
    # whole read, under a budget smaller than one data set's records too.
    from eemrepro.reports import _tables
    from eemrepro.reports._build import build_tables

    monkeypatch.chdir(ROOT)
    written = {}
    for budget in (10**12, 700, 1):
        monkeypatch.setattr(_tables, "TABLE_CHUNK_RECORDS", budget)
        out = tmp_path / str(budget)
        build_tables([d.relative_to(ROOT) for d in DIRS], out, formats=("md", "csv"))
        written[budget] = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
    assert len(written[10**12]) > 5
    assert written[700] == written[10**12]
    assert written[1] == written[10**12]


def test_a_read_of_folders_without_records_fails_closed_unless_asked_not_to(tmp_path):
    (tmp_path / "s" / "records").mkdir(parents=True)  # a results folder no run has written a record into
    with pytest.raises(ValueError, match=f"no records in {tmp_path / 's'}: nothing to report"):
        Records([tmp_path / "s"]).read()
    records, prov = Records([tmp_path / "s"], require=False).read()
    assert len(records) == 0 and prov["records"] == 0
    with pytest.raises(RuntimeError, match="read once"):  # a second pass would count every record twice
        read = Records([tmp_path / "s"], require=False)
        read.read()
        read.read()


def test_the_provenance_carries_each_folders_data_checksums_and_last_config_from_its_run_files(whole):
    # Expected: the run files themselves (runs/*.json, read here with json), each folder's checksums merged over
    # its runs, and the config of its last run (these stores' run ids are local time stamps: in name order).
    import json

    _, prov = whole
    for d in DIRS:
        runs = sorted((d / "runs").glob("*.json"))
        assert runs and all(p.name[0].isdigit() for p in runs)
        infos = [json.loads(p.read_text()) for p in runs]
        expected = {}
        for info in infos:
            expected.update(info.get("data_sha256") or {})
        assert prov["data_sha256"][str(d)] == expected and len(expected) == 3
        assert prov["run_configs"][str(d)] == infos[-1]["config"]
