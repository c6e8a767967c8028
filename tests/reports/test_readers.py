"""The readers at scale (issue 53): what of a store a config names, found by a vectorised join.

The reference is the per-key rule the readers used before (every unit's
record keys formatted as strings and looked up one by one), written out here
independently of ``scope_rows``.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from eemrepro.experiments import get_kind, load_config
from eemrepro.experiments._units import frame_keys, scope_of_units, scope_rows
from eemrepro.store import ResultStore
from tests.helpers import store_record

ROOT = Path(__file__).resolve().parents[2]


def _per_key_reference(units, df):
    """(keep, unfinished) by the per-key rule: a row is the config's if its key is one of a unit's keys; a cell
    is unfinished if a unit of one of the repeats its kept rows have lacks a key."""
    keys = frame_keys(df).tolist()
    unit_keys = [(u, u.keys()) for u in units]
    wanted = {k for _, ks in unit_keys for k in ks}
    keep = np.array([k in wanted for k in keys], dtype=bool)
    done = wanted.intersection(keys)
    repeats = {}
    for d, m, r in df.loc[keep, ["dataset", "model", "repeat"]].drop_duplicates().itertuples(index=False, name=None):
        repeats.setdefault((d, m), set()).add(int(r))
    unfinished = {(u.dataset, u.model) for u, ks in unit_keys
                  if u.repeat in repeats.get((u.dataset, u.model), ()) and not done.issuperset(ks)}
    return keep, unfinished


@pytest.mark.slow
@pytest.mark.parametrize("store", [".ci/quick-baseline", "results/melm_table2", "results/melm_table3",
                                   "results/dcs_correlation",
                                   "results/lssvm_ensemble"])
@pytest.mark.parametrize("block", [None, 997])  # rows matched a block at a time: a prime, so blocks cut cells
def test_the_vectorised_scope_is_the_per_key_rule_on_committed_stores_and_damaged_copies(store, block,
                                                                                         monkeypatch):
    from eemrepro.experiments import _units

    if block:
        monkeypatch.setattr(_units, "SCOPE_BLOCK", block)
    folder = ROOT / store
    config = load_config(folder / "config.yaml", import_estimators=False)
    kind = get_kind(config.kind)
    units = kind.units(config)
    # A kind that says its scope from the config says what its units make (each cell's points and positions).
    def as_sets(scope):
        return {cell: (set(points), set(positions)) for cell, (points, positions) in scope.items()}

    assert as_sets(kind.scope(config)) == as_sets(scope_of_units(units))
    df = ResultStore(folder).frame(["status"])
    rng = np.random.default_rng(0)
    # The store as it is; a copy with a random tenth of its records gone (unfinished cells); a copy with rows
    # the config does not name (a point shifted into a value no grid has, a repeat past the config's).
    holes = df.drop(index=rng.choice(df.index, size=max(1, len(df) // 10), replace=False)).reset_index(drop=True)
    extra = df.sample(n=min(50, len(df)), random_state=1).copy()
    extra["point"] = extra["point"].astype(str).str.replace("}", ', "zz": 1}', regex=False)
    later = df.sample(n=min(50, len(df)), random_state=2).copy()
    later["repeat"] = later["repeat"] + 1000
    grown = pd.concat([df, extra, later], ignore_index=True)
    for frame in (df, holes, grown):
        keep, unfinished = _per_key_reference(units, frame)
        scope = scope_rows(kind.scope(config), frame)
        np.testing.assert_array_equal(scope.keep, keep)
        assert scope.unfinished == unfinished
        assert scope_rows(scope_of_units(units), frame).unfinished == unfinished  # the generic derivation agrees
    # The holes were seen (the test can fail), where a (cell, repeat) holds more than one record: Hwang's
    # splits hold one each, and a dropped one takes its repeat with it (only the repeats a cell has count).
    if df.groupby(["dataset", "model", "repeat"], observed=True).size().max() > 1:
        assert scope_rows(kind.scope(config), holes).unfinished
    reasons = scope_rows(kind.scope(config), grown).left_out
    assert reasons["repeats or folds outside the config's protocol"] == len(later)
    assert reasons["grid points the config no longer has"] == len(extra)


def test_a_table_that_selects_by_inner_folds_over_cells_run_without_them_says_so(tmp_path):
    """ESMM's table selects by nested CV; a store of its data sets run under best of grid has no inner folds:
    its cells read "no inner CV" with no value (the reader once raised KeyError 'auc_std', or called them
    timed out)."""
    from typer.testing import CliRunner

    from eemrepro.cli import app

    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: keel\ndatasets: [keel-wisconsin]\nmodels:\n"
                   "  SVM: {estimator: SVM, grid: {C: [1.0, 10.0], gamma: [1.0]}}\n"
                   "protocol: {folds: 3, repeats: 1, seed: 0}\n")
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "out"), "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["tables", str(tmp_path / "out"), "--out", str(tmp_path / "t"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "t" / "esmm_table4_auc.csv", comment="#")
    row = table[(table["dataset"] == "keel-wisconsin") & (table["method"] == "SVM")].iloc[0]
    assert row["status"] == "no inner CV" and np.isnan(row["auc"])


@pytest.mark.parametrize("store", ["results/melm_table2", "results/melm_table3", "results/lssvm_ensemble",
                                   "results/dcs_correlation"])
def test_resume_finds_the_done_units_as_the_per_key_rule_does(store):
    """``done_units`` (integer codes, one count per unit) against every unit's keys looked up one by one, on a
    committed store and on copies with records gone, an identity changed and data changed under one cell."""
    from eemrepro.experiments._units import done_units, identity_sha

    folder = ROOT / store
    config = load_config(folder / "config.yaml", import_estimators=False)
    kind = get_kind(config.kind)
    units = kind.units(config)
    shas = {}
    for u in units:
        cell = (u.dataset, u.model, u.inner is not None)
        shas.setdefault(cell, identity_sha(kind.identity(config, u)))
    df = ResultStore(folder).frame(["status", "identity_sha", "data_sha256"])
    rng = np.random.default_rng(3)
    holes = df.drop(index=rng.choice(df.index, size=max(1, len(df) // 20), replace=False)).reset_index(drop=True)
    other = df.copy()
    first = (other["dataset"] == other["dataset"].iloc[0]) & (other["model"] == other["model"].iloc[0])
    other["identity_sha"] = other["identity_sha"].astype(object).where(~first, "0" * 64)
    for frame in (df, holes, other):
        ok = rng.random(len(frame)) > 0.01  # a few rows made with other data
        keys = frame_keys(frame).tolist()
        done = {(k, s) for k, s, good in zip(keys, frame["identity_sha"].astype(object), ok, strict=True) if good}
        expected = [all((k, shas[(u.dataset, u.model, u.inner is not None)]) in done for k in u.keys())
                    for u in units]
        got = done_units(units, frame, ok, shas)
        assert got is not None and got.tolist() == expected
        assert 0 < sum(expected) or frame is not df  # the test can tell done from not done
    assert not all(done_units(units, holes, np.ones(len(holes), dtype=bool), shas))


# -- the readers' own group-bys, held to pandas' ------------------------------------------------------------


def _random_store_frame(rng, n, object_inner=False):
    datasets = pd.Categorical(rng.choice(["heart", "sonar", "abalone7", "yeast6"], n))
    points = pd.Categorical(rng.choice(['{"C": 1}', '{"C": 10}', '{"C": 0.1}'], n))
    inner = np.where(rng.random(n) < 0.5, np.nan, rng.integers(0, 3, n)).astype(float)
    return pd.DataFrame({
        "dataset": datasets, "model": pd.Categorical(rng.choice(["EEM", "SVM"], n)), "point": points,
        "repeat": rng.integers(0, 3, n), "fold": rng.integers(-1, 4, n),  # a negative value too
        "inner": inner.astype(object) if object_inner else inner,
        "status": pd.Categorical(rng.choice(["ok", "failed"], n)), "gmean": rng.random(n)})


@pytest.mark.parametrize("object_inner", [False, True])  # True: no integer key; pandas' own group-by then
def test_the_latest_record_of_each_key_is_pandas_duplicated_and_first_appearance(object_inner):
    from eemrepro.store._store import KEY_COLUMNS, _latest

    rng = np.random.default_rng(3)
    for n in (1, 7, 40, 400):
        df = _random_store_frame(rng, n, object_inner)
        # The rule as pandas states it: the last row of each key, ordered by where the key first appears.
        stale = df.duplicated(KEY_COLUMNS, keep="last").to_numpy()
        first = df.groupby(KEY_COLUMNS, sort=False, dropna=False, observed=True).ngroup().to_numpy()
        keep = np.flatnonzero(~stale)
        expected = df.iloc[keep[np.argsort(first[keep], kind="stable")]].reset_index(drop=True)
        got = _latest(df)
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expected)
        assert (n == 400) <= (len(got) < n)  # duplicates were among the cases


def test_distinct_combinations_are_pandas_drop_duplicates():
    from eemrepro.store._store import distinct

    rng = np.random.default_rng(4)
    df = _random_store_frame(rng, 500)
    df.loc[rng.random(500) < 0.1, "dataset"] = np.nan
    got = distinct(df, ["dataset", "model", "repeat", "inner", "absent"])
    reference = df[["dataset", "model", "repeat", "inner"]].astype(object).drop_duplicates()
    expected = {tuple(None if pd.isna(v) else v for v in row) + (None,)
                for row in reference.itertuples(index=False, name=None)}
    assert len(got) == len(set(got)) == len(expected)
    assert {tuple(None if v is None or pd.isna(v) else v for v in row) for row in got} == expected


def test_distinct_combinations_too_many_for_one_key_are_pandas_drop_duplicates_too(monkeypatch):
    from eemrepro.store import _store

    rng = np.random.default_rng(5)
    df = _random_store_frame(rng, 400)
    df.loc[rng.random(400) < 0.1, "model"] = np.nan
    columns = ["dataset", "model", "repeat", "inner", "absent"]
    fast = _store.distinct(df, columns)
    monkeypatch.setattr(_store, "_KEY_LIMIT", 4.0)  # any two columns' combinations overflow it
    rows = _store.distinct(df, columns)
    reference = df[["dataset", "model", "repeat", "inner"]].astype(object).drop_duplicates()
    expected = [tuple(None if pd.isna(v) else v for v in row) + (None,)
                for row in reference.itertuples(index=False, name=None)]
    assert [tuple(None if v is None or pd.isna(v) else v for v in row) for row in rows] == expected  # in order
    assert sorted(map(repr, rows)) == sorted(map(repr, fast))


@pytest.mark.parametrize("mode, store", [("best-of-grid", "results/uci"), ("nested", "results/esmm_table4"),
                                         ("best-per-fold", "results/uci")])
def test_selecting_a_few_data_sets_at_a_time_is_selecting_all_at_once(monkeypatch, mode, store):
    # Large stores are selected in chunks of data sets; the rows and every figure must be what one pass gives,
    # also with the data sets restricted (a paper's table).
    from eemrepro.experiments import _selection
    from eemrepro.reports import Records

    records, _ = Records([ROOT / store]).read()
    metric = "auc" if "esmm" in store else "gmean"
    whole = _selection.select(records, mode, metric=metric)
    some = sorted(set(records["dataset"]))[1::2]
    whole_some = _selection.select(records[records["dataset"].isin(some)], mode, metric=metric)
    monkeypatch.setattr(_selection, "CHUNK_RECORDS", len(records) // 5)
    chunked = _selection.select(records, mode, metric=metric)
    assert len(_selection._dataset_chunks(records["dataset"], len(records) // 5)) >= 5
    pd.testing.assert_frame_equal(chunked, whole)
    pd.testing.assert_frame_equal(_selection.select(records, mode, metric=metric, datasets=some), whole_some)


def test_group_codes_of_rows_out_of_order_fall_back_to_pandas_numbering():
    from eemrepro.experiments._selection import _group_codes

    rng = np.random.default_rng(5)
    df = _random_store_frame(rng, 300)
    for frame in (df, df.sort_values(["dataset", "model", "point"], kind="stable")):  # scattered, then runs
        codes, firsts = _group_codes(frame, ["dataset", "model", "point"])
        expected = frame.groupby(["dataset", "model", "point"], sort=False, dropna=False,
                                 observed=True).ngroup().to_numpy()
        assert (codes == expected).all()
        assert (firsts == np.unique(expected, return_index=True)[1]).all()


def test_frames_concatenated_column_by_column_are_pandas_concat_of_the_whole_frames():
    # Reference: pandas' concat of the whole frames, once their categorical columns share the united categories
    # (what the store's pieces were joined with before). Pieces with other row labels, a column only some
    # pieces have (ints there: floats with NaN after; text: NaN), categories that differ, a list column.
    from eemrepro.store._store import concat_frames

    def pieces():
        a = pd.DataFrame({"dataset": pd.Categorical(["b", "a", "b"]), "n": [1, 2, 3], "x": [0.5, np.nan, 2.0],
                          "arr": pd.Series([np.arange(2), np.arange(0), np.arange(1)], dtype=object).to_numpy()},
                         index=[10, 3, 7])
        b = pd.DataFrame({"x": [1.5, 2.5], "dataset": pd.Categorical(["c", "a"]), "note": ["u", None],
                          "status": pd.Categorical(["ok", "failed"])}, index=[0, 1])
        c = pd.DataFrame({"dataset": pd.Categorical(["a"] * 4), "n": [4, 0, 8, 6],
                          "x": [0.25, 0.75, 0.125, 1.0], "status": pd.Categorical(["ok"] * 4)}, index=[5, 4, 9, 8])
        return [a, b, c]

    frames = pieces()
    united = {}
    for col in ("dataset", "status"):
        cats = sorted({v for f in frames if col in f for v in f[col].cat.categories})
        united[col] = pd.CategoricalDtype(cats)
    reference = []
    for f in frames:
        f = f.copy()
        for col, dtype in united.items():
            f[col] = f[col].cat.set_categories(dtype.categories) if col in f else \
                pd.Categorical.from_codes(np.full(len(f), -1), dtype=dtype)
        reference.append(f)
    expected = pd.concat(reference, ignore_index=True)
    mine = pieces()
    got = concat_frames(mine)
    pd.testing.assert_frame_equal(got, expected)
    assert got["n"].dtype == np.float64 and np.isnan(got["n"][3])  # ints of two pieces, missing in one
    assert list(got["dataset"].cat.categories) == ["a", "b", "c"]
    assert all(len(f.columns) == 0 for f in mine)  # the pieces were consumed, column by column


def test_a_resume_reuses_the_units_at_hand_only_where_the_kind_derives_its_scope_from_them():
    # The projection kind's scope is its units' (the default): the units given are what it is made of (half of
    # them, half the scope). Grid search says its scope from the config: the units given change nothing.
    projection = load_config(ROOT / "results" / "melm_table2" / "config.yaml", import_estimators=False)
    kind = get_kind(projection.kind)
    units = kind.units(projection)
    half = units[: len(units) // 2]
    assert kind.scope_with(projection, half) == scope_of_units(half) != kind.scope(projection)
    assert kind.scope_with(projection) == kind.scope(projection)
    grid = load_config(ROOT / ".ci" / "quick-baseline" / "config.yaml", import_estimators=False)
    assert get_kind(grid.kind).scope_with(grid, []) == get_kind(grid.kind).scope(grid)


def test_records_frame_of_some_rows_is_records_frame_of_those_rows_taken_first():
    # ``rows`` (the selection's chunks) are taken with the sort; reference: the rows taken by pandas first.
    # Rows out of order and a repeated-looking subset, so a take of the wrong positions (or unsorted) shows.
    from eemrepro.experiments._selection import records_frame

    rng = np.random.default_rng(11)
    df = _random_store_frame(rng, 200)
    rows = np.sort(rng.choice(200, 77, replace=False))[::-1].copy()
    for wanted in (None, ["dataset", "model", "point", "repeat", "fold", "gmean"]):
        got = records_frame(df, columns=wanted, rows=rows)
        pd.testing.assert_frame_equal(got, records_frame(df.iloc[rows], columns=wanted))
    assert records_frame(df, rows=np.arange(0)).empty
    pd.testing.assert_frame_equal(records_frame(df, rows=np.arange(200)), records_frame(df))


def test_small_segments_become_frames_in_runs_of_at_least_large_segment_rows(monkeypatch):
    # Five segments of 2 rows with runs of 3: converted after the 2nd and the 4th, the last alone at the end
    # (all at the end would be one frame, one per segment five); the frames in order make the whole.
    import pyarrow as pa

    from eemrepro.store import _store

    monkeypatch.setattr(_store, "LARGE_SEGMENT", 3)
    pieces = _store._FramePieces()
    tables = [pa.table({"dataset": pa.array([f"d{i}", f"d{i}"]).dictionary_encode(), "x": [i, 10 * i]})
              for i in range(5)]
    sizes = []
    for t in tables:
        pieces.append(t)
        sizes.append(len(pieces._run))  # segments still held in Arrow
    assert sizes == [1, 0, 1, 0, 1]
    frames = pieces.frames()
    assert [len(f) for f in frames] == [4, 4, 2]
    whole = pd.concat(frames, ignore_index=True)
    assert whole["x"].tolist() == [0, 0, 1, 10, 2, 20, 3, 30, 4, 40]
    assert whole["dataset"].astype(str).tolist() == [f"d{i}" for i in range(5) for _ in (0, 1)]


def test_the_report_frame_carries_no_provenance_only_column_and_the_provenance_spans_every_folder(tmp_path):
    # Finish times are read per folder and dropped: the range must still be the earliest of all folders to the
    # latest of all (folder a: days 3 and 9, folder b: days 1 and 5: a first-folder or last-folder rule fails).
    from eemrepro.reports import Records

    day = 86400.0
    base = 1.7e9
    for name, model, stamps in (("a", "EEM", (3, 9)), ("b", "SVM", (1, 5))):
        store = ResultStore(tmp_path / name)
        store.append([{"kind": "grid-search", "dataset": "heart", "model": model, "params": {"C": 1.0},
                       "repeat": 0, "fold": f, "inner": None, "status": "ok", "metrics": {"gmean": 0.5},
                       "criteria": {}, "fit_seconds": 0.1, "predict_seconds": 0.01,
                       "identity": {"kind": "grid-search"}, "identity_sha": "abc", "versions": {"numpy": "2"},
                       "host": f"host-{name}", "finished_at": base + s * day} for f, s in enumerate(stamps)])
        store.close()
    records, prov = Records([tmp_path / "a", tmp_path / "b"]).read()
    assert not {"finished_at", "run_id", "predict_seconds"} & set(records.columns)
    assert records["repeat"].dtype == np.int32 and records["fold"].dtype == np.int32
    assert sorted(records["fold"].tolist()) == [0, 0, 1, 1]
    import datetime as dt

    first, last = (dt.datetime.fromtimestamp(base + s * day, dt.timezone.utc).strftime("%Y-%m-%d") for s in (1, 9))
    assert first in prov["records_finished"] and last in prov["records_finished"]
    assert prov["hosts"] == ["host-a", "host-b"]


@pytest.mark.parametrize("n_categories", [3, 127, 128, 300])  # int8, its edge, int16
def test_sort_codes_in_narrow_integers_sort_as_pandas_sorts_with_missing_last(n_categories):
    # Reference: pandas' sort_values (categories by their order, NaN last), as the codes must sort.
    from eemrepro.experiments._selection import _sort_codes

    rng = np.random.default_rng(n_categories)
    cats = [f"d{i:03d}" for i in range(n_categories)]
    values = rng.choice(cats, 500).astype(object)
    values[rng.random(500) < 0.1] = None
    values[:3] = cats[-1]  # the last category, whose code a too-narrow type wraps
    column = pd.Series(pd.Categorical(values, categories=cats))
    codes = _sort_codes(column)
    expected = column.sort_values(kind="stable", na_position="last").index.to_numpy()
    np.testing.assert_array_equal(np.argsort(codes, kind="stable"), expected)
    assert codes.itemsize <= 2


@pytest.mark.parametrize("categorical", [True, False])
def test_a_frame_split_by_kind_is_pandas_group_by_kind_without_the_rows_of_no_kind(categorical):
    # Reference: pandas' group-by (missing kinds dropped). Kinds in blocks (sliced) and scattered (grouped).
    from eemrepro.reports._records import split_by_kind

    blocks = ["grid-search"] * 4 + [None] * 2 + ["dcs-correlation"] * 3
    scattered = ["grid-search", "dcs-correlation", None, "grid-search", "dcs-correlation"]
    for kinds in (blocks, scattered):
        df = pd.DataFrame({"kind": pd.Categorical(kinds) if categorical else pd.Series(kinds, dtype=object),
                           "x": np.arange(len(kinds))})
        parts = split_by_kind(df)
        expected = {k: g["x"].tolist() for k, g in df.groupby("kind", observed=True, dropna=True)}
        assert {k: g["x"].tolist() for k, g in parts.items()} == expected


# -- reading a group of data sets at a time ------------------------------------------------------------------

TABLE_RESULTS = ["results/uci", "results/unbalanced", "results/extreme", "results/dcs_correlation",
                 "results/lssvm_ensemble", "results/melm_table2", "results/melm_table3", "results/esmm_table4"]


def _frame_rows(df):
    """A frame's rows as plain values (categorical or not), for comparing frames read differently."""
    return [tuple(None if (v is None or (isinstance(v, float) and np.isnan(v))) else v for v in row)
            for row in df.astype(object).itertuples(index=False, name=None)]


def test_a_store_frame_of_some_data_sets_is_the_whole_frame_restricted_to_them(tmp_path):
    # A retried unit in a later segment (the latest wins, at its first place), an empty segment, three data
    # sets in scattered order: the frame of two of them is the whole frame's rows of those two, in order.
    store = ResultStore(tmp_path / "s")
    store.append([store_record(i, d) for i, d in enumerate(["heart", "sonar", "heart", "wine", "sonar"])])
    store.close()
    store = ResultStore(tmp_path / "s")
    store.append([store_record(2, "heart", status="failed"), store_record(9, "wine")])
    store.close()
    ResultStore(tmp_path / "s").close()  # a segment of no record, if any is written
    store = ResultStore(tmp_path / "s")
    whole = store.frame(["status", "metrics"])
    some = store.frame(["status", "metrics"], datasets={"heart", "wine"})
    expected = whole[whole["dataset"].isin(["heart", "wine"])].reset_index(drop=True)
    assert list(some.columns) == list(expected.columns)
    assert _frame_rows(some) == _frame_rows(expected)
    assert some.loc[some["fold"] == 2, "status"].tolist() == ["failed"]  # the retry won
    assert store.dataset_counts() == {"heart": 3, "sonar": 2, "wine": 2}  # as written: the retry counted


@pytest.mark.slow
def test_results_read_a_group_of_data_sets_at_a_time_are_the_whole_read_and_its_provenance():
    # Groups: consecutive in sorted data set order, each within the budget unless one data set alone is
    # larger; their frames are the Records' whole frame cut to each group's data sets, their provenance its own.
    from eemrepro.reports import Records

    dirs = [ROOT / d for d in ("results/uci", "results/esmm_table4", "results/melm_table3")]
    whole, prov = Records(dirs).read()
    budget = 150_000
    results = Records(dirs, budget)
    counts = {}
    for d in dirs:
        for dataset, n in ResultStore(d).dataset_counts().items():
            counts[dataset] = counts.get(dataset, 0) + n
    groups = results.groups
    assert [d for g in groups for d in g] == sorted(counts) and len(groups) > 3
    assert all(sum(counts[d] for d in g) <= budget or len(g) == 1 for g in groups)
    # Each group as large as it can be: with the next one's first data set it would not fit.
    assert all(sum(counts[d] for d in a + b[:1]) > budget for a, b in zip(groups, groups[1:], strict=False))
    frames = list(results)
    assert len(frames) == len(groups)
    for group, frame in zip(groups, frames, strict=True):
        expected = whole[whole["dataset"].isin(group)]
        # A column no record of the group has may be absent from its frame (it reads as missing, as in the whole).
        assert set(frame.columns) <= set(whole.columns)
        assert all(expected[c].isna().all() for c in set(whole.columns) - set(frame.columns))
        shared = [c for c in whole.columns if c in frame]
        assert _frame_rows(frame[shared]) == _frame_rows(expected[shared])
    assert results.provenance == prov
    assert set(results.unfinished) == {tuple(c) for c in prov["unfinished"]}
    with pytest.raises(RuntimeError, match="read once"):  # a second pass would count every record twice
        next(iter(results))


@pytest.mark.slow
def test_tables_built_a_group_of_data_sets_at_a_time_are_the_committed_tables_byte_for_byte(tmp_path, monkeypatch):
    # The committed tables were built from the whole frame (CI rebuilds them so and compares); here every
    # table, check, claim and reading is made from groups of at most 300 thousand stored records.
    from eemrepro.reports import _build, _tables

    monkeypatch.setattr(_tables, "TABLE_CHUNK_RECORDS", 300_000)
    monkeypatch.chdir(ROOT)
    out = tmp_path / "tables"
    _build.build_tables(TABLE_RESULTS, out, formats=("md", "csv", "latex"), layout="full")
    committed = ROOT / "results" / "tables"
    names = sorted(p.name for p in committed.iterdir() if p.is_file())
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == names
    for name in names:
        assert (out / name).read_bytes() == (committed / name).read_bytes(), name


@pytest.mark.slow
def test_the_check_and_the_claims_of_groups_of_data_sets_are_those_of_the_whole_frame():
    # Reference: check and evaluate_claims over the Records' whole frame (building their tables themselves).
    from eemrepro.reports import Records, check, evaluate_claims, load_tolerance
    from eemrepro.reports._check import build_checked

    dirs = [ROOT / d for d in ("results/uci", "results/esmm_table4", "results/melm_table3",
                               "results/dcs_correlation", "results/lssvm_ensemble")]
    tol = load_tolerance(str(ROOT / ".ci" / "published-pins.yaml"))
    records, prov = Records(dirs).read()
    unfinished = {tuple(c) for c in prov["unfinished"]}
    built, results = build_checked(dirs, budget=200_000)
    assert len(results.groups) > 3
    whole = check(records, tol, unfinished=unfinished)
    grouped = check(None, tol, unfinished=results.unfinished, built=built)
    assert [repr(c) for c in grouped] == [repr(c) for c in whole]
    assert len(whole) > 100
    claims = [(r.claim.id, r.verdict, r.numbers) for r in evaluate_claims(records, unfinished=unfinished)]
    assert [(r.claim.id, r.verdict, r.numbers)
            for r in evaluate_claims(None, unfinished=results.unfinished, built=built)] == claims
    assert len(claims) > 5


def test_a_table_that_names_its_own_selection_is_made_once_for_every_rule():
    # MELM Table 2 selects by nested CV whatever the command's rule: one maker for both rules; Hwang's Table
    # 4.1 follows the rule: one each.
    from eemrepro.reports._spec import registered_tables
    from eemrepro.reports._tables import rows_by_datasets

    specs = {s.id: s for s in registered_tables() if s.id in ("melm_table2", "lssvm_ensemble_table41")}
    own, follows = specs["melm_table2"], specs["lssvm_ensemble_table41"]
    assert own.selection and not follows.selection
    dirs = [ROOT / "results" / "melm_table2", ROOT / "results" / "lssvm_ensemble"]
    _, made, applies, _ = rows_by_datasets(dirs, list(specs.values()), ["nested", "best-of-grid"])
    assert set(specs) <= applies
    assert made[(own.id, "nested")] is made[(own.id, "best-of-grid")]
    assert made[(follows.id, "nested")] is not made[(follows.id, "best-of-grid")]
    assert made[(follows.id, "nested")].rows and made[(follows.id, "best-of-grid")].rows  # each rule's cells
