"""The generic engine: splitters, metrics, selection rules, record identity, paper plug-ins, multiclass data.

Expected values come from scikit-learn (the splitters and metrics it has),
closed forms worked out in the comments, or an independent refit.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score, recall_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit
from typer.testing import CliRunner

from eemrepro.cli import app
from eemrepro.experiments import (
    ChangedConfigError,
    ResultStore,
    StratifiedKFoldSplitter,
    StratifiedTrainTestSplitter,
    WholeDataSplitter,
    derive_seed,
    enumerate_units,
    get_metric,
    load_config,
    run_experiment,
    score_all,
    select,
)

ROOT = Path(__file__).resolve().parents[2]


# -- splitters ------------------------------------------------------------------


def test_kfold_splitter_equals_sklearn_with_the_derived_seed():
    y = np.array([0] * 30 + [1] * 12 + [2] * 8)
    s = StratifiedKFoldSplitter(n_splits=5, n_repeats=2, random_state=3, salt="toy")
    assert s.get_n_splits() == 10
    for r in range(2):
        ref = list(StratifiedKFold(5, shuffle=True, random_state=derive_seed(3, "toy", "split", r)).split(y, y))
        tests = []
        for f in range(5):
            train, test = s.split_at(y, r, f)
            np.testing.assert_array_equal(test, ref[f][1])
            np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(50))
            tests.append(test)
        # Each repeat tests every point exactly once.
        np.testing.assert_array_equal(np.sort(np.concatenate(tests)), np.arange(50))
    assert len(list(s.split(np.zeros((50, 1)), y))) == 10


@pytest.mark.parametrize("train_size", [35, 0.7])
def test_train_test_splitter_equals_sklearn_stratified_shuffle_split(train_size):
    y = np.array([0] * 30 + [1] * 12 + [2] * 8)
    s = StratifiedTrainTestSplitter(train_size=train_size, n_repeats=3, random_state=1, salt="d")
    assert s.get_n_splits() == 3
    seen = set()
    for r in range(3):
        train, test = s.split_at(y, r, 0)
        sss = StratifiedShuffleSplit(1, train_size=train_size, random_state=derive_seed(1, "d", "split", r))
        ref_train, ref_test = next(sss.split(y, y))
        np.testing.assert_array_equal(train, ref_train)
        np.testing.assert_array_equal(test, ref_test)
        # 35 of 50 (0.7): per class 21/30, 8.4/12, 5.6/8 -> within one point of the proportions.
        assert len(train) == 35 and len(test) == 15 and not set(train) & set(test)
        for c, n in ((0, 30), (1, 12), (2, 8)):
            assert abs((y[train] == c).sum() - 0.7 * n) <= 1
        seen.add(tuple(sorted(train)))
    assert len(seen) == 3  # the repeats draw different splits
    with pytest.raises(IndexError):
        s.split_at(y, 0, 1)


def test_whole_data_splitter_trains_and_tests_on_everything():
    y = np.array([0, 1, 0, 1, 1])
    train, test = WholeDataSplitter(n_repeats=2).split_at(y, 1, 0)
    np.testing.assert_array_equal(train, np.arange(5))
    np.testing.assert_array_equal(test, np.arange(5))


# -- metrics ----------------------------------------------------------------------


def test_metrics_equal_sklearn_and_closed_forms_multiclass():
    y = np.array([0, 0, 0, 0, 1, 1, 2, 2])
    p = np.array([0, 0, 0, 0, 1, 0, 2, 1])
    # Recalls (1, 1/2, 1/2): GMean = (1/4)^(1/3), BAC = 2/3, error = 2/8.
    assert get_metric("gmean")(y, p) == pytest.approx(0.25 ** (1 / 3))
    assert get_metric("gmean")(y, p) == pytest.approx(np.prod(recall_score(y, p, average=None)) ** (1 / 3))
    assert get_metric("bac")(y, p) == pytest.approx(balanced_accuracy_score(y, p)) == pytest.approx(2 / 3)
    assert get_metric("error")(y, p) == pytest.approx(1 - accuracy_score(y, p)) == 0.25
    assert get_metric("error").greater_is_better is False


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_score_all_reads_the_prediction_metrics_off_one_confusion_matrix_bit_for_bit(n_classes):
    # score_all computes the confusion matrix once per fit; each metric's value must be exactly what its own
    # sklearn.metrics call gives (equality, not approx: stored records of old and new runs must not differ).
    # Cases: odd sizes, rare classes, predicted labels y_true lacks, true classes never predicted.
    rng = np.random.RandomState(n_classes)
    labels = np.array([-1, 1]) if n_classes == 2 else np.arange(n_classes) * 3 + 1
    seen = 0
    for _trial in range(300):
        n = rng.randint(3, 60)
        weights = rng.dirichlet(np.full(n_classes, 0.5))
        y = rng.choice(labels, size=n, p=weights)
        p = np.where(rng.rand(n) < rng.rand(), y, rng.choice(labels, size=n))
        got = score_all(y, p, None, labels)
        for name in ("gmean", "bac", "error"):
            expected = get_metric(name).func(y, p, labels)
            assert got[name] == float(expected), (name, y, p)
        seen += len(np.setdiff1d(p, y)) > 0
    assert seen > 20  # predictions outside y_true's classes were among the cases


def test_binary_auc_is_roc_auc_score_bit_for_bit():
    # The binary AUC calls roc_auc_score's own steps (roc_curve, auc) directly: equal to it exactly, ties
    # and all, whatever the two labels are.
    rng = np.random.RandomState(7)
    for trial in range(300):
        n = rng.randint(2, 80)
        labels = [(-1, 1), (0, 1), (1, 2), (3, 10)][trial % 4]
        y = rng.choice(labels, size=n)
        if len(np.unique(y)) < 2:
            continue
        score = np.round(rng.randn(n) + (y == labels[1]), rng.randint(0, 3))  # rounding makes ties
        assert get_metric("auc")(y, score) == roc_auc_score(y, score), (y, score)
        assert score_all(y, y, score, np.array(labels))["auc"] == roc_auc_score(y, score)


def test_auc_binary_and_multiclass_against_sklearn():
    rng = np.random.RandomState(0)
    y2 = np.array([-1] * 20 + [1] * 10)
    s2 = rng.randn(30) + (y2 > 0)
    assert get_metric("auc")(y2, s2) == pytest.approx(roc_auc_score(y2, s2))
    y3 = np.repeat([0, 1, 2], 10)
    proba = rng.dirichlet([1, 1, 1], size=30)
    # Probabilities: scikit-learn's one-vs-rest macro AUC.
    assert get_metric("auc")(y3, proba, [0, 1, 2]) == pytest.approx(roc_auc_score(y3, proba, multi_class="ovr"))
    # Decision values (rows need not sum to 1): the mean of the per-class AUCs of the columns.
    scores = rng.randn(30, 3)
    expected = np.mean([roc_auc_score(y3 == c, scores[:, c]) for c in range(3)])
    assert get_metric("auc")(y3, scores, [0, 1, 2]) == pytest.approx(expected)
    # A test part that misses a class has no one-vs-rest AUC: recorded as None, not an error.
    got = score_all(y3[:20], y3[:20], scores[:20], [0, 1, 2])
    assert got["auc"] is None and got["error"] == 0.0


# -- selection rules ----------------------------------------------------------------


def _rec(point, fold, metrics, criteria=None, inner=None):
    return {"dataset": "D", "model": "M", "params": point, "repeat": 0, "fold": fold, "inner": inner,
            "status": "ok", "metrics": metrics, "criteria": criteria or {}, "fit_seconds": 1.0, "path_size": 1}


def test_best_of_grid_follows_the_metric_direction():
    # error: h=1 (0.30, 0.10) mean 0.20, h=2 (0.25, 0.25) mean 0.25 -> h=1 is best (smaller);
    # bac of the same cells: h=1 0.70, h=2 0.80 -> h=2 is best (larger).
    recs = [_rec({"h": 1}, 0, {"error": 0.30, "bac": 0.6}), _rec({"h": 1}, 1, {"error": 0.10, "bac": 0.8}),
            _rec({"h": 2}, 0, {"error": 0.25, "bac": 0.8}), _rec({"h": 2}, 1, {"error": 0.25, "bac": 0.8})]
    by_error = select(recs, metric="error").iloc[0]
    assert by_error["point"] == '{"h": 1}' and by_error["error_mean"] == pytest.approx(0.20)
    by_bac = select(recs, metric="bac").iloc[0]
    assert by_bac["point"] == '{"h": 2}' and by_bac["bac_mean"] == pytest.approx(0.80)
    # The same cell read as unfinished by the store is not selected from.
    assert select(recs, metric="bac", unfinished={("D", "M")}).iloc[0]["status"] == "incomplete"


def test_nested_selection_by_error_picks_the_smallest_inner_mean():
    recs = [_rec({"h": 1}, 0, {"error": e}, inner=i) for i, e in enumerate((0.1, 0.3))]  # inner mean 0.2
    recs += [_rec({"h": 2}, 0, {"error": e}, inner=i) for i, e in enumerate((0.3, 0.3))]  # inner mean 0.3
    recs += [_rec({"h": 1}, 0, {"error": 0.4}), _rec({"h": 2}, 0, {"error": 0.05})]
    row = select(recs, "nested", metric="error").iloc[0]
    assert row["points"] == ['{"h": 1}'] and row["error_mean"] == pytest.approx(0.4)


# -- record identity ------------------------------------------------------------------

BASE = """name: ident
datasets: [heart]
models:
  E: {estimator: EEM, activation: rbf, grid: {n_hidden: [10, 20]}}
protocol: {folds: 3, repeats: 1, seed: 0}
"""


def _cfg(tmp_path, text, name="c.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return load_config(path)


@pytest.fixture
def stored(tmp_path):
    out = tmp_path / "out"
    run_experiment(_cfg(tmp_path, BASE), out=out, jobs=1, progress=False)
    return out


@pytest.mark.parametrize("change, keys", [
    (("activation: rbf", "activation: sig"), ["params.activation"]),             # a fixed parameter
    (("estimator: EEM, activation: rbf", "estimator: WELM, activation: rbf"), ["estimator"]),  # the estimator
    (("folds: 3", "splitter: train-test, train_size: 0.5"), ["folds", "splitter", "train_size"]),  # the splitter
    (("scaling", "scaling"), None),                                               # nothing: resumes
])
def test_a_changed_setting_is_refused_naming_its_keys_or_rerun(stored, tmp_path, change, keys):
    text = BASE.replace(*change)
    cfg = _cfg(tmp_path, text, "changed.yaml")
    before = ResultStore(stored).read()
    if keys is None:
        assert run_experiment(cfg, out=stored, jobs=1, progress=False).pending_units == 0
        return
    config_before = (stored / "config.yaml").read_text()
    with pytest.raises(ChangedConfigError) as err:
        run_experiment(cfg, out=stored, jobs=1, progress=False)
    message = str(err.value)
    assert "E on heart" in message and "--rerun-changed" in message and "--fresh" in message
    assert all(f"{k}:" in message for k in keys), message
    # Refused: nothing ran, nothing moved, the folder's config still tells the truth.
    assert ResultStore(stored).read() == before and (stored / "config.yaml").read_text() == config_before
    summary = run_experiment(cfg, out=stored, jobs=1, progress=False, rerun_changed=True)
    assert summary.pending_units == summary.total_units == len(enumerate_units(cfg))
    assert summary.superseded is not None and list(summary.superseded.glob("*.parquet"))  # moved aside, not deleted
    after = ResultStore(stored).read()
    assert {r["identity_sha"] for r in after} == {after[0]["identity_sha"]} != {before[0]["identity_sha"]}


def test_changed_inner_folds_is_refused_for_the_inner_records(tmp_path):
    nested = BASE.replace("seed: 0}", "seed: 0, selection: nested, inner_folds: 2}")
    out = tmp_path / "n"
    run_experiment(_cfg(tmp_path, nested), out=out, jobs=1, progress=False)
    cfg3 = _cfg(tmp_path, nested.replace("inner_folds: 2", "inner_folds: 3"), "n3.yaml")
    with pytest.raises(ChangedConfigError, match=r"inner_folds: 2 stored, 3 in the config"):
        run_experiment(cfg3, out=out, jobs=1, progress=False)
    summary = run_experiment(cfg3, out=out, jobs=1, progress=False, rerun_changed=True)
    assert summary.pending_units == summary.total_units == 3 * (1 + 3)  # outer folds x (outer + inner folds)


def test_a_store_written_before_record_identities_loads_and_resumes(tmp_path):
    # .ci/quick-baseline was written by the EEM-only engine (gmean fields, a protocol fingerprint).
    baseline = ROOT / ".ci" / "quick-baseline"
    import gzip

    (segment,) = ResultStore(baseline).segments()
    first = json.loads(gzip.open(segment, "rt").readline())
    assert "gmean" in first and "protocol" in first and "identity" not in first  # the old schema on disk
    records = ResultStore(baseline).read()
    assert len(records) == 400 and all("identity" in r and "gmean" in r["metrics"] for r in records)
    out = tmp_path / "old"
    shutil.copytree(baseline, out)
    summary = run_experiment(load_config(ROOT / "configs" / "quick.yaml"), out=out, dry_run=True)
    assert summary.pending_units == 0 and summary.changed == []
    # Records whose fingerprint does not match their folder's config are never reused.
    config = (out / "config.yaml").read_text().replace("seed: 0", "seed: 1")
    (out / "config.yaml").write_text(config)
    assert all("legacy_protocol" in r["identity"] for r in ResultStore(out).read())


# -- multiclass data end to end -----------------------------------------------------------


def test_multiclass_data_runs_end_to_end_and_matches_an_independent_refit(tmp_path):
    from sklearn.linear_model import LogisticRegression

    from eemrepro.datasets import load_dataset

    text = """name: mc
datasets: [wine]
models:
  LR: {estimator: "sklearn.linear_model:LogisticRegression", max_iter: 2000, grid: {C: [0.1, 10.0]}}
protocol: {splitter: train-test, train_size: 0.7, repeats: 2, seed: 4, select_metric: error}
"""
    cfg = _cfg(tmp_path, text)
    summary = run_experiment(cfg, out=tmp_path / "o", jobs=1, progress=False)
    assert summary.status_counts == {"ok": 4}
    records = ResultStore(tmp_path / "o").read()
    X, y, _ = load_dataset("wine")
    for r in records:
        train, test = StratifiedTrainTestSplitter(0.7, 2, 4, "wine").split_at(y, r["repeat"], 0)
        model = LogisticRegression(max_iter=2000, C=r["params"]["C"]).fit(X[train], y[train])
        assert r["metrics"]["error"] == pytest.approx(1 - model.score(X[test], y[test]))
        # AUC from the decision values: the mean of the per-class one-vs-rest AUCs of the columns.
        scores = model.decision_function(X[test])
        assert r["metrics"]["auc"] == pytest.approx(
            np.mean([roc_auc_score(y[test] == c, scores[:, i]) for i, c in enumerate(model.classes_)]))
        assert r["n_train"] == 124 and r["n_test"] == 54  # 0.7 of 178
    row = select(records, metric="error").iloc[0]
    errors = {p: np.mean([r["metrics"]["error"] for r in records if json.dumps(r["params"]) == p])
              for p in ('{"C": 0.1}', '{"C": 10.0}')}
    assert row["point"] == min(errors, key=errors.get)


# -- papers as plug-ins -------------------------------------------------------------------


def test_a_fourth_paper_gets_its_table_and_check_without_engine_edits(tmp_path):
    from eemrepro.papers import register_paper, unregister_paper
    from eemrepro.reports import Paper, TableSpec, build_tables, check

    csv = tmp_path / "toy_table2_bac.csv"
    csv.write_text("dataset,method,bac\nheart,E,0.80\nsonar,E,0.70\n")
    paper = Paper(id="toy", title="A toy paper", tables=(TableSpec(
        id="toy_table2", stem="toy_table2_bac", title="Toy Table 2: BAC", published=csv, published_value="bac",
        metric="bac", scale=1.0, tolerance={"abs": 0.05}),))
    recs = [_rec({"h": 1}, f, {"bac": v}) | {"dataset": "heart", "model": "E", "kind": "grid-search",
                                             "identity": {}, "identity_sha": "i", "data_sha256": "d"}
            for f, v in enumerate((0.70, 0.80))]  # mean 0.75: |0.75 - 0.80| = 0.05, within
    store = ResultStore(tmp_path / "res")
    store.append(recs)
    store.close()
    register_paper(paper)
    try:
        cells = {(c.table, c.dataset): c for c in check(recs)}
        assert cells[("toy_table2", "heart")].outcome == "pass"
        assert cells[("toy_table2", "heart")].reproduced == pytest.approx(0.75)
        assert cells[("toy_table2", "sonar")].outcome == "skipped"  # sonar never ran here
        build_tables([tmp_path / "res"], tmp_path / "tables", formats=("csv",), layout="full")
        body = [line for line in (tmp_path / "tables" / "toy_table2_bac.csv").read_text().splitlines()
                if not line.startswith("#")]
        assert body[0].startswith("dataset,method,status,bac,bac_std") and len(body) == 3
        run_only = build_tables([tmp_path / "res"], tmp_path / "run", formats=("csv",), layout="run")
        assert any(p.name == "toy_table2_bac.csv" for p in run_only)
        lines = (tmp_path / "run" / "toy_table2_bac.csv").read_text().splitlines()
        assert not any(line.startswith("sonar") for line in lines)  # not run: only in the full layout
    finally:
        unregister_paper("toy")
    assert not any(c.table == "toy_table2" for c in check(recs))


# -- the README's first command on a fresh clone ----------------------------------------------


def test_quick_start_runs_real_work_and_prints_its_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / "configs" / "quick.yaml", tmp_path / "configs" / "quick.yaml")
    runner = CliRunner()
    first = runner.invoke(app, ["run", "configs/quick.yaml", "--quiet"])
    assert first.exit_code == 0, first.output
    assert "ran 160 of 160 pending units" in first.output
    # What the line counts after the units is records (a unit makes one per grid point), as the store holds them.
    stored = ResultStore(tmp_path / "results" / "quick").frame(["status"])
    assert len(stored) > 160 and set(stored["status"]) == {"ok"}
    assert f": {len(stored)} record(s) ({len(stored)} ok); " in first.output
    assert "EEM Table 4: GMean (%)" in first.output and "| heart" in first.output and "| balance" in first.output
    # heart is in the paper's Table 4: its cells carry the published value and the delta to it (issue 52: the
    # delta alone, with no legend, was shown before); balance is not in it: its cells carry neither.
    heart = next(line for line in first.output.splitlines() if line.startswith("| heart"))
    assert heart.count("±") == 5 and heart.count("(paper ") == 5
    assert heart.count(", +") + heart.count(", -") == 5
    balance = next(line for line in first.output.splitlines() if line.startswith("| balance"))
    assert balance.count("±") >= 1 and "paper" not in balance
    assert "cell: reproduced mean±std over the test folds; (paper P, D): the published value and " \
           "D = reproduced - published" in first.output
    assert (tmp_path / "results" / "quick" / "records").is_dir()
    again = runner.invoke(app, ["run", "configs/quick.yaml", "--quiet"])
    assert again.exit_code == 0 and "ran 0 of 0 pending units (160 were stored)" in again.output
    assert heart in again.output  # the same table, read back from the store


# -- per-data-set settings (Hwang's sizes and members) ------------------------------------------

PER_DATASET = """name: pd
datasets: [wine, heart]
models:
  LR: {estimator: "sklearn.linear_model:LogisticRegression", max_iter: 500,
       per_dataset: {heart: {max_iter: 900}}}
protocol: {splitter: train-test, train_size: {wine: 144, heart: 0.6}, repeats: 2, seed: 0, select_metric: error}
"""


def test_per_data_set_train_size_and_parameters_reach_the_splits_and_the_identity(tmp_path):
    cfg = _cfg(tmp_path, PER_DATASET)
    assert cfg.model("LR").params_for("wine") == {"max_iter": 500}
    assert cfg.model("LR").params_for("heart") == {"max_iter": 900}
    run_experiment(cfg, out=tmp_path / "o", jobs=1, progress=False)
    records = ResultStore(tmp_path / "o").read()
    sizes = {(r["dataset"], r["n_train"], r["n_test"]) for r in records}
    assert sizes == {("wine", 144, 34), ("heart", 162, 108)}  # 144 of 178; 0.6 of 270
    ident = {r["dataset"]: r["identity"] for r in records}
    assert ident["wine"]["params.max_iter"] == 500 and ident["heart"]["params.max_iter"] == 900
    assert ident["wine"]["train_size"] == 144 and ident["heart"]["train_size"] == 0.6
    # Changing one data set's size makes only that data set's cells stale.
    changed = _cfg(tmp_path, PER_DATASET.replace("heart: 0.6", "heart: 0.5"), "c2.yaml")
    with pytest.raises(ChangedConfigError, match=r"LR on heart") as err:
        run_experiment(changed, out=tmp_path / "o", jobs=1, progress=False)
    assert "on wine" not in str(err.value)


@pytest.mark.parametrize("change, message", [
    (("heart: 0.6}", "heart: 1.5}"), r"protocol.train_size.heart'.*a count >= 2 or a fraction"),
    (("{wine: 144, heart: 0.6}", "{wine: 144}"), r"missing \['heart'\]"),
    (("{heart: {max_iter: 900}}", "{sonar: {max_iter: 900}}"), r"models.LR.per_dataset.sonar'.*not a data set"),
    (("{heart: {max_iter: 900}}", "{heart: {max_iterations: 9}}"), r"has no parameter 'max_iterations'"),
])
def test_per_data_set_settings_are_validated_naming_the_key(tmp_path, change, message):
    from eemrepro.experiments import ConfigError

    with pytest.raises(ConfigError, match=message):
        _cfg(tmp_path, PER_DATASET.replace(*change))


def test_a_table_shows_its_own_data_sets_and_standard_errors(tmp_path):
    """Records of another paper's data set are not rows of this table; se = std / sqrt(splits)."""
    from eemrepro.papers import register_paper, unregister_paper
    from eemrepro.reports import Paper, TableSpec, build_table
    from eemrepro.reports._tables import table_applies

    csv = tmp_path / "toy_table9_error.csv"
    csv.write_text("dataset,method,error_mean,error_se\nwine,M,0.05,0.01\n")
    spec = TableSpec(id="toy_table9", stem="toy_table9_error", title="t", published=csv, metric="error",
                     published_value="error_mean", published_std="error_se", scale=1.0, spread="se")
    recs = [_rec({}, f, {"error": v}) | {"dataset": d, "model": "M", "kind": "grid-search", "repeat": f,
                                          "fold": 0}
            for d in ("wine", "sonar") for f, v in enumerate((0.02, 0.04, 0.06, 0.08))]
    register_paper(Paper(id="toy9", title="t", tables=(spec,)))
    try:
        table = build_table(spec, recs, layout="run")
    finally:
        unregister_paper("toy9")
    assert list(table["dataset"]) == ["wine"]
    # Nor does the table apply (in tables or check) to records of other data sets only.
    assert table_applies(spec, recs) and not table_applies(spec, [r for r in recs if r["dataset"] == "sonar"])
    row = table.iloc[0]
    # mean 0.05; sample std of (0.02, 0.04, 0.06, 0.08) = 0.0258; / sqrt(4) = 0.0129
    assert row["error"] == pytest.approx(0.05) and row["error_std"] == pytest.approx(np.std([2, 4, 6, 8], ddof=1)
                                                                                      / 100 / 2)
    assert row["published_std"] == pytest.approx(0.01) and row["delta"] == pytest.approx(0.0)


def test_a_regression_check_against_a_reference_keeps_data_sets_no_paper_has():
    """CI's quick check compares every cell of the run with the baseline, balance included."""
    from eemrepro.reports import check

    def recs(shift):
        return [_rec({}, f, {"gmean": v + shift[d], "error": 1 - v - shift[d]})
                | {"dataset": d, "model": "EEMrbf", "kind": "grid-search"}
                for d in ("heart", "balance") for f, v in enumerate((0.7, 0.8))]

    # The reference: heart 1 point higher (within the table's 2 points), balance 10 points higher (past both
    # the 2 points and the reference's own std over its two folds, std(75, 85) = 7.07, which the rule allows).
    run, reference = recs({"heart": 0.0, "balance": 0.0}), recs({"heart": 0.01, "balance": 0.10})
    cells = {c.dataset: c for c in check(run, reference=reference) if c.table == "eem_table4"}
    assert {d: c.outcome for d, c in cells.items()} == {"heart": "pass", "balance": "fail"}
    assert all(c.reproduced == pytest.approx(75.0) for c in cells.values())  # the mean GMean, in percent
    assert cells["heart"].published == pytest.approx(76.0) and cells["balance"].published == pytest.approx(85.0)
