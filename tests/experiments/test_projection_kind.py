"""The projection + classifier kinds (MELM Tables 2 and 3) and the tables' facets.

Expected values are independent refits: scikit-learn pipelines (or a
projection then a classifier) on the same splits, recomputed here from the
splitters, and BAC from ``sklearn.metrics.balanced_accuracy_score``.
"""

import json

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.metrics import balanced_accuracy_score
from sklearn.neighbors import KNeighborsClassifier

from eemrepro.datasets import load_dataset
from eemrepro.experiments import (
    ConfigError,
    ResultStore,
    StratifiedKFoldSplitter,
    StratifiedTrainTestSplitter,
    load_config,
    run_experiment,
)
from eemrepro.experiments._splitters import inner_split
from eemrepro.models import GEM, KDEClassifier
from eemrepro.reports._spec import TableSpec
from eemrepro.reports._tables import metric_table

CLASSIFIERS = """analysis:
  classifiers:
    KNN: {estimator: "sklearn.neighbors:KNeighborsClassifier", grid: {n_neighbors: [3, 7]}}
    KDE: {estimator: KDEClassifier, grid: {bandwidth: [0.5, 1]}}
"""

PIPELINE = """name: pipe
kind: projection
datasets: [heart]
models:
  PCA: {estimator: "sklearn.decomposition:PCA", n_components: 2}
  GEM: {estimator: GEM, grid: {gamma: [0.5, 2.0]}}
  I:   {estimator: "sklearn.preprocessing:FunctionTransformer"}
""" + CLASSIFIERS + """protocol: {splitter: stratified-kfold, folds: 3, repeats: 1, seed: 3, selection: nested, inner_folds: 2,
           select_metric: bac}
"""

VISUAL = """name: vis
kind: projection-visual
datasets: [heart]
models:
  MELM: {estimator: MELM, n_starts: 2}
  PCA:  {estimator: "sklearn.decomposition:PCA", n_components: 2}
""" + CLASSIFIERS + """  cv_folds: 3
protocol: {splitter: train-test, train_size: 0.8, repeats: 2, seed: 5, select_metric: bac}
"""


def _cfg(tmp_path, text, name="c.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return load_config(path)


@pytest.fixture(scope="module")
def pipeline_records(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pipe")
    summary = run_experiment(_cfg(tmp, PIPELINE), out=tmp / "o", jobs=1, progress=False)
    # (1 + 2 + 1 projection points) x 3 folds x (1 outer + 2 inner) units, 4 classifier points each.
    assert summary.status_counts == {"ok": 4 * 3 * 3 * 4}
    return ResultStore(tmp / "o").read()


def _find(records, model, fold, inner, **point):
    (r,) = [r for r in records if r["model"] == model and r["fold"] == fold and r["inner"] == inner
            and r["params"] == point]
    return r


def test_pipeline_records_equal_an_independent_refit(pipeline_records):
    X, y, _ = load_dataset("heart")
    splitter = StratifiedKFoldSplitter(n_splits=3, n_repeats=1, random_state=3, salt="heart")
    for fold in range(3):
        train, test = splitter.split_at(y, 0, fold)
        proj = PCA(n_components=2).fit(X[train], y[train])
        knn = KNeighborsClassifier(n_neighbors=7).fit(proj.transform(X[train]), y[train])
        expected = balanced_accuracy_score(y[test], knn.predict(proj.transform(X[test])))
        r = _find(pipeline_records, "PCA", fold, None, classifier="KNN", classifier__n_neighbors=7)
        assert r["metrics"]["bac"] == pytest.approx(expected, abs=1e-12)
        # GEM's gamma is a projection parameter of the point; an inner fold fits on its own part.
        tr, va = inner_split(y[train], 2, 3, "heart", 0, fold, 1)
        inner_train, inner_test = train[tr], train[va]
        gem = GEM(gamma=2.0).fit(X[inner_train], y[inner_train])
        kde = KDEClassifier(bandwidth=0.5).fit(gem.transform(X[inner_train]), y[inner_train])
        expected = balanced_accuracy_score(y[inner_test], kde.predict(gem.transform(X[inner_test])))
        r = _find(pipeline_records, "GEM", fold, 1, classifier="KDE", classifier__bandwidth=0.5,
                  projection__gamma=2.0)
        assert r["metrics"]["bac"] == pytest.approx(expected, abs=1e-12)
        assert r["n_train"] == len(inner_train) and r["projection_seconds"] > 0


def test_table2_is_the_best_classifier_of_nested_per_classifier_cells(pipeline_records):
    spec = TableSpec(id="t2", stem="t2", title="t", kind="projection", metric="bac", scale=1.0,
                     selection="nested", facet="classifier", combine="max")
    per = TableSpec(id="t2c", stem="t2c", title="t", kind="projection", metric="bac", scale=1.0,
                    selection="nested", facet="classifier")
    best = metric_table(pipeline_records, spec, layout="run").set_index("method")
    cells = metric_table(pipeline_records, per, layout="run").set_index("method")
    assert sorted(cells.index) == sorted(f"{m} + {c}" for m in ("PCA", "GEM", "I") for c in ("KNN", "KDE"))
    for model in ("PCA", "GEM", "I"):
        assert best.loc[model, "bac"] == max(cells.loc[f"{model} + KNN", "bac"], cells.loc[f"{model} + KDE", "bac"])
    # Nested, by hand, for one cell: per outer fold, the point with the best inner mean BAC.
    chosen = []
    for fold in range(3):
        inner = {}
        for r in pipeline_records:
            if r["model"] == "GEM" and r["fold"] == fold and r["inner"] is not None and r["params"]["classifier"] == "KNN":
                inner.setdefault(json.dumps(r["params"], sort_keys=True), []).append(r["metrics"]["bac"])
        means = {p: np.mean(v) for p, v in inner.items()}
        top = max(means.values())
        point = json.loads(min(p for p, v in means.items() if v == top))  # ties: the canonical first
        chosen.append(_find(pipeline_records, "GEM", fold, None, **point)["metrics"]["bac"])
    assert cells.loc["GEM + KNN", "bac"] == pytest.approx(np.mean(chosen), abs=1e-12)


def test_visual_kind_fits_the_projection_once_per_subsample_and_cross_validates_on_it(tmp_path):
    cfg = _cfg(tmp_path, VISUAL)
    summary = run_experiment(cfg, out=tmp_path / "o", jobs=1, progress=False)
    # 2 projections x 2 subsamples = 4 units; each 3 folds x 4 classifier points.
    assert summary.total_units == 4 and summary.status_counts == {"ok": 4 * 3 * 4}
    records = ResultStore(tmp_path / "o").read()
    melm = [r for r in records if r["model"] == "MELM" and r["repeat"] == 1]
    assert len({r["projection_dcs"] for r in melm}) == 1 and len({r["projection_seconds"] for r in melm}) == 1
    X, y, _ = load_dataset("heart")
    subsample, _ = StratifiedTrainTestSplitter(0.8, 2, 5, "heart").split_at(y, 1, 0)
    Z = PCA(n_components=2).fit(X[subsample], y[subsample]).transform(X[subsample])
    y_sub = y[subsample]
    for fold in range(3):
        tr, te = inner_split(y_sub, 3, 5, "heart", 1, "cv", fold)
        knn = KNeighborsClassifier(n_neighbors=3).fit(Z[tr], y_sub[tr])
        r = _find([r for r in records if r["repeat"] == 1], "PCA", fold, None, classifier="KNN",
                  classifier__n_neighbors=3)
        assert r["metrics"]["bac"] == pytest.approx(balanced_accuracy_score(y_sub[te], knn.predict(Z[te])),
                                                    abs=1e-12)
    # Table 3's cell: the mean over the classifiers of each one's best-of-grid mean.
    spec = TableSpec(id="t3", stem="t3", title="t", kind="projection-visual", metric="bac", scale=1.0,
                     selection="best-of-grid", facet="classifier", combine="mean")
    per = TableSpec(id="t3c", stem="t3c", title="t", kind="projection-visual", metric="bac", scale=1.0,
                    selection="best-of-grid", facet="classifier")
    cell = metric_table(records, spec, layout="run").set_index("method").loc["PCA", "bac"]
    cells = metric_table(records, per, layout="run").set_index("method")["bac"]
    assert cell == pytest.approx((cells["PCA + KNN"] + cells["PCA + KDE"]) / 2, abs=1e-12)
    # Resuming finds every fold's record: nothing is pending.
    assert run_experiment(cfg, out=tmp_path / "o", jobs=1, progress=False).pending_units == 0


def test_a_failed_projection_fails_its_points_and_not_the_run(tmp_path):
    # (more components than heart's 13 features: a failure only the data show; a value GEM refuses by itself,
    # gamma: -1.0, is refused when the config is read)
    text = PIPELINE.replace("grid: {gamma: [0.5, 2.0]}", "n_components: 20").replace("selection: nested",
                                                                                   "selection: best-of-grid")
    summary = run_experiment(_cfg(tmp_path, text), out=tmp_path / "o", jobs=1, progress=False)
    assert summary.status_counts == {"ok": 2 * 3 * 4, "failed": 3 * 4}
    failed = [r for r in ResultStore(tmp_path / "o").read() if r["status"] == "failed"]
    assert {r["model"] for r in failed} == {"GEM"}
    assert all(r["error"].startswith("projection: ") and "n_components=20" in r["error"] for r in failed)


@pytest.mark.parametrize("text, message", [
    (PIPELINE.replace("select_metric: bac}", "select_metric: bac}").replace("KDE: {", "KDE: {foo: 1, "),
     r"analysis\.classifiers\.KDE\.foo.*KDEClassifier has no parameter 'foo'"),
    (PIPELINE.replace("    KDE: {estimator: KDEClassifier, grid: {bandwidth: [0.5, 1]}}\n",
                      "    KDE: {estimator: KDEClassifier, grid: {bandwidth: [0.5, 1]}}\n  cv_folds: 4\n"),
     r"analysis\.cv_folds.*only for kind: projection-visual"),
    (PIPELINE.replace(CLASSIFIERS, "analysis: {classifiers: {}}\n"), r"analysis\.classifiers.*non-empty mapping"),
])
def test_projection_config_errors_name_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        _cfg(tmp_path, text)


def test_visual_kind_needs_a_subsample_splitter(tmp_path):
    text = VISUAL.replace("splitter: train-test, train_size: 0.8", "splitter: stratified-kfold, folds: 3")
    with pytest.raises(ValueError, match="projection-visual fits the projection on a subsample"):
        run_experiment(_cfg(tmp_path, text), out=tmp_path / "o", jobs=1, progress=False)


# -- what the figures draw: restarts and embeddings ---------------------------------


def test_expected_max_is_the_exact_bootstrap_expectation():
    import itertools

    from eemrepro.reports._figures import expected_max

    values = [0.3, 1.0, 2.5, 2.5, 4.0]
    for s in (1, 2, 3):
        # Every ordered draw of s values with replacement, equally likely.
        draws = [max(t) for t in itertools.product(values, repeat=s)]
        assert expected_max(values, [s])[0] == pytest.approx(np.mean(draws), rel=1e-12)


def test_restarts_and_embedding_records_equal_independent_fits(tmp_path):
    from eemrepro.models import MELM

    text = """name: rst
kind: restarts
datasets: [heart]
models:
  MELM: {estimator: MELM, n_starts: 3, pca_start: false}
analysis: {batches: 2}
protocol: {seed: 1}
"""
    run_experiment(_cfg(tmp_path, text), out=tmp_path / "r", jobs=1, progress=False)
    X, y, _ = load_dataset("heart")
    records = ResultStore(tmp_path / "r").read()
    assert sorted(r["repeat"] for r in records) == [0, 1] and records[0]["seed"] != records[1]["seed"]
    for r in records:
        expected = MELM(n_starts=3, pca_start=False, random_state=r["seed"]).fit(X, y).start_dcs_
        np.testing.assert_allclose(r["values"], expected, rtol=1e-12)
    text = """name: emb
kind: embedding
datasets: [heart]
models:
  PCA: {estimator: "sklearn.decomposition:PCA", n_components: 2}
analysis: {max_points: 100}
protocol: {seed: 0}
"""
    run_experiment(_cfg(tmp_path, text, "e.yaml"), out=tmp_path / "e", jobs=1, progress=False)
    (r,) = ResultStore(tmp_path / "e").read()
    labels = np.asarray(r["labels"])
    assert len(labels) == 100 and abs(np.mean(labels == "1") - np.mean(y == 1)) < 0.01  # stratified
    # The stored points: a PCA fitted on the stratified subsample drawn with the record's seed.
    from sklearn.model_selection import train_test_split

    from eemrepro.experiments import derive_seed

    keep, _ = train_test_split(np.arange(len(y)), train_size=100, stratify=y,
                               random_state=derive_seed(r["seed"], "rows"))
    keep = np.sort(keep)
    np.testing.assert_array_equal(labels, [str(v) for v in y[keep]])
    np.testing.assert_allclose(r["embedding"], PCA(n_components=2).fit(X[keep]).transform(X[keep]), atol=1e-6)


def test_melm_figures_and_the_projection_command(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from typer.testing import CliRunner

    from eemrepro.cli import app

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["figures", "--figure", "projection", "--dataset", "heart", "--out", "figs"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "figs" / "projection_heart.png").stat().st_size > 1000
    (r,) = ResultStore(tmp_path / "results" / "projection-heart").read()
    assert r["model"] == "MELM" and len(r["embedding"]) == 270
    result = CliRunner().invoke(app, ["figures", "--figure", "projection", "--dataset", "no-such-set"])
    assert result.exit_code == 1 and "unknown data set 'no-such-set'" in result.output
