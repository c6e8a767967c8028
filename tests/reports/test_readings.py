"""Readings of a paper's open choices (SPEC section 8): config, runs into their own stores, tables."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from eemrepro.cli import app
from eemrepro.experiments import ConfigError, ResultStore, load_config, parse_config
from eemrepro.reports import build_tables, registered_tables

runner = CliRunner()

CONFIG = """name: t1
kind: dcs-correlation
datasets: [heart]
analysis: {n_hidden: [1, 10], layers: 3, betas: 10, beta: uniform}
protocol: {seed: 0}
readings:
  beta-normal:
    about: beta ~ N(0, I)
    set: {analysis.beta: normal}
  raw:
    set: {analysis.scaling: none, analysis.layers: 2}
"""


#: A small grid-search config on heart (EEM Table 4's GMean), for readings of its protocol.
HEART_EEM = """name: u
datasets: [heart]
models:
  EEMrbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [5, 20, 60]}}
protocol: {folds: 3, repeats: 1, seed: 0}
"""


def _best_of_grid_gmean(folder, model=None):
    """GMean (%) of a store's best grid point (of ``model``'s, if given), mean over its folds (pandas)."""
    frame = ResultStore(folder).frame(["model", "point", "fold", "gmean"])
    frame = frame if model is None else frame[frame["model"] == model]
    return 100 * frame.groupby("point")["gmean"].mean().max()


def _write(tmp_path, text, name="t1.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_reading_is_the_config_with_its_keys_set(tmp_path):
    cfg = load_config(_write(tmp_path, CONFIG))
    assert cfg.reading is None and cfg.reading_names() == ["beta-normal", "raw"]
    normal = cfg.with_reading("beta-normal")
    assert normal.analysis.beta == "normal" and normal.analysis.layers == 3 and normal.reading.name == "beta-normal"
    raw = cfg.with_reading("raw")
    assert (raw.analysis.scaling, raw.analysis.layers, raw.analysis.beta) == ("none", 2, "uniform")
    assert raw.readings == () and cfg.analysis.scaling == "minmax"  # the primary one is untouched
    # The reading's config, as a store writes it, reads back as the same reading.
    import yaml

    again = parse_config(yaml.safe_load(yaml.safe_dump(raw.to_dict(), sort_keys=False)))
    assert again.to_dict() == raw.to_dict() and again.reading.describe() == "analysis.scaling: none, analysis.layers: 2"
    with pytest.raises(ConfigError, match=r"no reading 'nope'; its readings are \['beta-normal', 'raw'\]"):
        cfg.with_reading("nope")


@pytest.mark.parametrize("bad, message", [
    ("  raw:\n    set: {analysis.beta: cauchy}\n", r"key 'readings.raw.set': gives a config that does not validate"
                                                   r".*'analysis.beta': must be one of \['uniform', 'normal'\]"),
    ("  raw:\n    set: {nonsense.key: 1}\n", r"key 'readings.raw.set.nonsense.key': a dotted key under one of"),
    ("  a/b:\n    set: {analysis.beta: normal}\n", r"key 'readings.a/b': a reading's name is letters"),
    ("  raw: {about: x}\n", r"key 'readings.raw': a reading is a mapping \{set:"),
    ("  raw:\n    set: {}\n", r"key 'readings.raw.set': a non-empty mapping"),
    ("  a: {set: {analysis.beta: normal}, against: nope}\n",
     r"key 'readings.a.against': names no reading of this config; its readings are \['a'\]"),
    ("  a: {set: {analysis.beta: normal}, against: a}\n", r"key 'readings.a.against': the name of another reading"),
])
def test_a_bad_reading_names_its_key(tmp_path, bad, message):
    text = CONFIG.split("readings:")[0] + "readings:\n" + bad
    with pytest.raises(ConfigError, match=message):
        load_config(_write(tmp_path, text))


def _spearman_cells(folder):
    """(data set, h) -> Spearman rho of the stored pairs, computed here with scipy; the published values."""
    df = ResultStore(folder).frame(["dataset", "point", "dcs", "ratio", "identity"])
    rho = {}
    for h, g in df.assign(h=[json.loads(p)["n_hidden"] for p in df["point"]]).groupby("h"):
        d, q = np.concatenate(list(g["dcs"])), np.concatenate(list(g["ratio"]))
        ok = np.isfinite(d) & np.isfinite(q)
        rho[("heart", int(h))] = stats.spearmanr(d[ok], q[ok]).statistic
    return rho, df


@pytest.mark.slow
def test_readings_run_into_their_own_stores_and_are_counted_beside_the_primary_one(tmp_path):
    cfg = _write(tmp_path, CONFIG)
    out = tmp_path / "res"
    for extra in ([], ["--reading", "beta-normal"], ["--reading", "raw"]):
        result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet", *extra])
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--reading", "nope"])
    assert result.exit_code == 1 and "no reading 'nope'" in result.output
    folders = {"primary": out, "beta-normal": out / "readings" / "beta-normal", "raw": out / "readings" / "raw"}
    rho, frames = {}, {}
    for name, folder in folders.items():
        rho[name], frames[name] = _spearman_cells(folder)
    # Each store holds its own reading: the same layers (same seeds), other betas or other data.
    identities = {n: {json.dumps(json.loads(i), sort_keys=True) for i in f["identity"]} for n, f in frames.items()}
    assert [json.loads(next(iter(identities[n]))).get("beta") for n in folders] == ["uniform", None, "uniform"]
    assert json.loads(next(iter(identities["raw"])))["scaling"] == "none"
    assert len(frames["primary"]) == 6 and len(frames["raw"]) == 4
    assert not np.allclose(np.concatenate(list(frames["primary"]["ratio"])),
                           np.concatenate(list(frames["beta-normal"]["ratio"])))
    # The published EEM Table 1 (heart, h = 1 and 10); default rule |delta| <= 0.1.
    spec = next(s for s in registered_tables() if s.id == "eem_table1")
    pub = spec.published_frame().set_index(["dataset", "h"])["spearman"]
    expected = {n: sum(abs(r[k] - pub[k]) <= 0.1 for k in r) for n, r in rho.items()}
    build_tables([out], tmp_path / "tables", formats=("md", "csv"))
    table = pd.read_csv(tmp_path / "tables" / f"{spec.stem}_readings.csv", comment="#").set_index("reading")
    assert list(table.index) == ["primary", "beta-normal", "raw"]
    assert table["within_tolerance"].to_dict() == expected and set(table["cells"]) == {2}
    per_h = {n: {h: int(abs(r[("heart", h)] - pub[("heart", h)]) <= 0.1) for h in (1, 10)} for n, r in rho.items()}
    assert table.loc["primary", "by_column"] == f"h=1 {per_h['primary'][1]}; h=10 {per_h['primary'][10]}"
    assert table.loc["raw", "by_column"].startswith(f"h=1 {per_h['raw'][1]}")
    assert int(table.loc["beta-normal", "change"]) == expected["beta-normal"] - expected["primary"]
    assert table.loc["raw", "size"] == "2 layers per cell" and table.loc["primary", "size"] == "3 layers per cell"
    assert table.loc["beta-normal", "changes"] == "beta ~ N(0, I) (analysis.beta: normal)"
    # The cell that moved most, against the primary reading, by the scipy values above.
    moved = max(rho["primary"], key=lambda k: abs(rho["beta-normal"][k] - rho["primary"][k]))
    assert table.loc["beta-normal", "moved_most"].startswith(f"heart h={moved[1]} ")
    # The primary table and check judge the primary reading only.
    main = pd.read_csv(tmp_path / "tables" / f"{spec.stem}.csv", comment="#").set_index(["dataset", "h"])
    for k, v in rho["primary"].items():
        assert main.loc[k, "spearman"] == pytest.approx(v)
    result = runner.invoke(app, ["check", str(out)])
    assert f"within tolerance: {expected['primary']} of 2 cells" in result.output
    assert "judged: the primary reading; not judged: the readings beta-normal, raw" in result.output
    # The report's page shows the same readings table under the paper's table.
    from eemrepro.reports import build_report

    build_report([out], tmp_path / "site", figures=False)
    page = (tmp_path / "site" / "eem.html").read_text()
    assert "Readings of the paper&#39;s open choices" in page or "Readings of the paper's open choices" in page
    assert "<td>beta-normal</td>" in page and f"<td>{expected['raw']}</td>" in page


def test_standard_scaling_is_scikit_learns_on_the_whole_data_set():
    # Expected: sklearn's StandardScaler on the raw bundled data (a reading of scaling, SPEC section 8).
    from sklearn.preprocessing import StandardScaler

    from eemrepro.datasets import load_dataset

    raw, y, _ = load_dataset("heart", scaling=None)
    X, y2, meta = load_dataset("heart", scaling="standard")
    np.testing.assert_allclose(X, StandardScaler().fit_transform(raw), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(X.mean(0), 0, atol=1e-12)
    assert (y == y2).all() and meta["scaling"] == "standard" and "standardised" in meta["steps"][-1]


@pytest.mark.parametrize("scaling", ["global", "per-fold", "standard", "standard-per-fold", "none"])
def test_protocol_scaling_scales_as_scikit_learn_does(tmp_path, scaling):
    # Expected: the same split, scaled here by scikit-learn's MinMaxScaler / StandardScaler (fitted on
    # the whole set or on the training part), a 3-NN fitted by hand, sklearn's balanced accuracy.
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    from eemrepro.datasets import load_dataset
    from eemrepro.experiments import make_splitter, run_experiment

    cfg = load_config(_write(tmp_path, f"""name: s
datasets: [heart]
models:
  KNN: {{estimator: "sklearn.neighbors:KNeighborsClassifier", grid: {{n_neighbors: [3]}}}}
protocol: {{splitter: train-test, train_size: 0.6, repeats: 1, scaling: {scaling}, select_metric: bac}}
"""))
    run_experiment(cfg, out=tmp_path / "r", jobs=1, progress=False)
    stored = ResultStore(tmp_path / "r").frame(["bac", "identity"])
    X, y, _ = load_dataset("heart", scaling=None)
    train, test = make_splitter(cfg.protocol, "heart").split_at(y, 0, 0)
    scaler = {"global": MinMaxScaler, "per-fold": MinMaxScaler, "standard": StandardScaler,
              "standard-per-fold": StandardScaler}.get(scaling)
    if scaler is None:
        X_train, X_test = X[train], X[test]
    else:
        fitted = scaler().fit(X[train] if scaling.endswith("per-fold") else X)
        X_train, X_test = fitted.transform(X[train]), fitted.transform(X[test])
    pred = KNeighborsClassifier(3).fit(X_train, y[train]).predict(X_test)
    assert stored["bac"].iloc[0] == pytest.approx(balanced_accuracy_score(y[test], pred), abs=1e-12)
    assert json.loads(stored["identity"].iloc[0])["scaling"] == scaling


def test_a_model_scored_on_its_labels_has_the_auc_of_one_threshold(tmp_path):
    # Expected: scikit-learn's roc_auc_score of the predicted labels, fitted here by hand on the same
    # split; for two classes that is the balanced accuracy (SPEC section 8, ESMM's label reading).
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score
    from sklearn.svm import SVC

    from eemrepro.datasets import load_dataset
    from eemrepro.experiments import make_splitter, run_experiment

    text = """name: s
datasets: [heart]
models:
  SVC: {estimator: "sklearn.svm:SVC", grid: {C: [1.0]}}
  SVC-labels: {estimator: "sklearn.svm:SVC", score: labels, grid: {C: [1.0]}}
protocol: {splitter: train-test, train_size: 0.6, repeats: 1, select_metric: auc}
"""
    cfg = load_config(_write(tmp_path, text))
    assert cfg.model("SVC-labels").score == "labels" and "score" not in cfg.to_dict()["models"]["SVC"]
    run_experiment(cfg, out=tmp_path / "r", jobs=1, progress=False)
    stored = ResultStore(tmp_path / "r").frame(["model", "auc", "bac", "identity"]).set_index("model")
    X, y, _ = load_dataset("heart")
    train, test = make_splitter(cfg.protocol, "heart").split_at(y, 0, 0)
    svc = SVC(C=1.0).fit(X[train], y[train])
    assert stored.loc["SVC", "auc"] == pytest.approx(roc_auc_score(y[test], svc.decision_function(X[test])))
    labels = roc_auc_score(y[test], svc.predict(X[test]))
    assert labels == pytest.approx(balanced_accuracy_score(y[test], svc.predict(X[test])))
    assert stored.loc["SVC-labels", "auc"] == pytest.approx(labels) != stored.loc["SVC", "auc"]
    assert json.loads(stored.loc["SVC-labels", "identity"])["score"] == "labels"
    assert "score" not in json.loads(stored.loc["SVC", "identity"])
    with pytest.raises(ConfigError, match=r"'models.SVC.score': must be one of \['decision', 'labels'\]"):
        load_config(_write(tmp_path, text.replace('"sklearn.svm:SVC", grid', '"sklearn.svm:SVC", score: ranks, grid')))


def test_a_reading_of_tables_keys_runs_nothing_and_reads_the_records_its_way(tmp_path):
    # Expected: the per-fold oracle (best *test* GMean on each fold) and the BAC-selected BAC,
    # both computed here from the stored outer records with pandas, against the primary
    # best-of-grid GMean (SPEC section 8: MELM T3's "best classifier" and ESMM's label readings).
    text = """name: u
datasets: [heart]
models:
  EEMrbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [5, 20, 60]}}
protocol: {folds: 3, repeats: 1}
readings:
  oracle:
    about: the best point of each test fold
    set: {tables.selection: best-per-fold}
  bac: {set: {tables.metric: bac}}
"""
    cfg = _write(tmp_path, text)
    out = tmp_path / "r"
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--reading", "oracle"])
    assert result.exit_code == 1 and "no stored run of u; run the primary reading first" in result.output
    assert runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"]).exit_code == 0
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--reading", "oracle"])
    assert result.exit_code == 0 and "nothing to run" in result.output and not (out / "readings").exists()
    df = ResultStore(out).frame(["point", "fold", "gmean", "bac", "inner"])
    by_point = df.groupby("point")[["gmean", "bac"]].mean()
    primary = 100 * by_point["gmean"].max()
    oracle = 100 * df.groupby("fold")["gmean"].max().mean()
    bac = 100 * by_point["bac"].max()
    build_tables([out], tmp_path / "t", formats=("csv",))
    table = pd.read_csv(tmp_path / "t" / "eem_table4_gmean_readings.csv", comment="#").set_index("reading")
    assert list(table.index) == ["primary", "oracle", "bac"]

    def moved(name):
        text = table.loc[name, "moved_most"]
        assert text.startswith("heart EEMrbf ")
        return float(text.split()[-1])

    assert moved("oracle") == pytest.approx(oracle - primary, rel=1e-2) and oracle >= primary
    assert moved("bac") == pytest.approx(bac - primary, rel=1e-2)
    assert table.loc["oracle", "changes"] == "the best point of each test fold (tables.selection: best-per-fold)"
    main = pd.read_csv(tmp_path / "t" / "eem_table4_gmean.csv", comment="#").set_index(["dataset", "method"])
    assert main.loc[("heart", "EEMrbf"), "gmean"] == pytest.approx(primary)


def test_a_reading_of_tables_keys_can_read_another_readings_records(tmp_path):
    # Expected: the per-fold oracle GMean of reading 'seed1's own stored records (pandas, here)
    # against the primary reading's best-of-grid GMean, as MELM T3's subset-150 read per test fold.
    text = HEART_EEM + """readings:
  seed2: {set: {protocol.seed: 2}}
  seed1: {set: {protocol.seed: 1}}
  seed1-oracle:
    about: the best point of each test fold, on seed1's records
    records: seed1
    set: {tables.selection: best-per-fold}
"""
    # The primary reading ran before the config named any reading (as the committed stores did).
    cfg = _write(tmp_path, HEART_EEM)
    out = tmp_path / "r"
    assert runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"]).exit_code == 0
    cfg = _write(tmp_path, text)
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--reading", "seed1-oracle"])
    assert (result.exit_code, " ".join(result.output.split())) == (1, (
        f"error: {out / 'readings' / 'seed1'}: no stored run of reading seed1, whose records reading seed1-oracle "
        "reads; run it first (eemrepro run CONFIG --reading seed1)")), result.output
    assert runner.invoke(app, ["run", str(cfg), "--out", str(out), "--reading", "seed1", "--jobs", "1",
                               "--quiet"]).exit_code == 0
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--reading", "seed1-oracle"])
    assert result.exit_code == 0 and "reading seed1's records" in result.output
    assert not (out / "readings" / "seed1-oracle").exists()
    # The folder's config names the derived reading and the one whose records it reads, not another reading.
    import yaml

    assert sorted(yaml.safe_load((out / "config.yaml").read_text())["readings"]) == ["seed1", "seed1-oracle"]
    other = _write(tmp_path, text.replace("name: u", "name: v"), name="v.yaml")
    result = runner.invoke(app, ["run", str(other), "--out", str(out), "--reading", "seed1-oracle"])
    assert (result.exit_code, result.output) == (1, f"error: {out / 'config.yaml'} is not a stored config of v\n")

    primary = _best_of_grid_gmean(out)
    seed1 = ResultStore(out / "readings" / "seed1").frame(["point", "fold", "gmean"])
    oracle = 100 * seed1.groupby("fold")["gmean"].max().mean()
    build_tables([out], tmp_path / "t", formats=("csv",))
    table = pd.read_csv(tmp_path / "t" / "eem_table4_gmean_readings.csv", comment="#").set_index("reading")
    assert list(table.index) == ["primary", "seed1", "seed1-oracle"]
    moved = float(table.loc["seed1-oracle", "moved_most"].split()[-1])
    assert moved == pytest.approx(oracle - primary, rel=1e-2)
    assert table.loc["seed1-oracle", "changes"] == ("the best point of each test fold, on seed1's records "
                                                    "(tables.selection: best-per-fold; on the records of reading seed1)")


@pytest.mark.parametrize("bad, message", [
    ("  raw: {records: nope, set: {tables.selection: best-per-fold}}\n",
     r"key 'readings.raw.records': names no reading of this config that stores records; those are \[\]"),
    ("  a: {set: {analysis.beta: normal}}\n  b: {records: a, set: {analysis.layers: 2}}\n",
     r"key 'readings.b.set': a reading on the records of reading 'a' sets only tables keys"),
    ("  a: {set: {analysis.beta: normal}}\n  b: {records: 'a b', set: {tables.metric: bac}}\n",
     r"key 'readings.b.records': the name of another reading"),
])
def test_a_bad_records_key_names_the_reading(tmp_path, bad, message):
    text = CONFIG.split("readings:")[0] + "readings:\n" + bad
    with pytest.raises(ConfigError, match=message):
        load_config(_write(tmp_path, text))


@pytest.mark.slow
def test_a_reading_is_compared_with_the_reading_it_names_under_against(tmp_path):
    # Expected: the 'moved most' value is the pandas difference of the two readings' own
    # best-of-grid GMeans (seed1-folds2 against seed1, not against the primary reading).
    text = HEART_EEM + """readings:
  seed1: {set: {protocol.seed: 1}}
  seed2: {set: {protocol.seed: 2}}
  seed1-folds2:
    about: two outer folds on seed 1
    against: seed1
    set: {protocol.seed: 1, protocol.folds: 2}
  seed2-folds2:
    against: seed2
    set: {protocol.seed: 2, protocol.folds: 2}
"""
    cfg = _write(tmp_path, text)
    out = tmp_path / "r"
    for extra in ([], ["--reading", "seed1"], ["--reading", "seed1-folds2"], ["--reading", "seed2-folds2"]):
        result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet", *extra])
        assert result.exit_code == 0, result.output

    primary, seed1, folds2 = (_best_of_grid_gmean(f) for f in (out, out / "readings" / "seed1", out / "readings" / "seed1-folds2"))
    assert abs((folds2 - seed1) - (folds2 - primary)) > 0.01  # the two comparisons can be told apart
    build_tables([out], tmp_path / "t", formats=("csv",))
    table = pd.read_csv(tmp_path / "t" / "eem_table4_gmean_readings.csv", comment="#").set_index("reading")
    assert list(table.index) == ["primary", "seed1", "seed1-folds2", "seed2-folds2"]
    row = table.loc["seed1-folds2"]
    assert row["changes"] == ("two outer folds on seed 1 (protocol.seed: 1, protocol.folds: 2; "
                              "compared with reading seed1)")
    assert row["moved_most"].startswith("vs seed1: heart EEMrbf ")
    assert float(row["moved_most"].split()[-1]) == pytest.approx(folds2 - seed1, rel=1e-2)
    assert row["change"].startswith("vs seed1: ") and row["by_column"].startswith("vs seed1: EEMrbf ")
    # seed1 itself is still compared with the primary reading.
    assert float(table.loc["seed1", "moved_most"].split()[-1]) == pytest.approx(seed1 - primary, rel=1e-2)
    # The reading it names was never run: said so, not compared with the primary one instead.
    assert table.loc["seed2-folds2", "change"] == "vs seed2: not stored"
    assert pd.isna(table.loc["seed2-folds2", "moved_most"])


def test_a_reading_screened_at_fewer_repeats_on_some_sets_gives_its_range_of_repeats(tmp_path):
    # Expected: the repeats each run was given (2 on heart, 1 on sonar for the reading; 2 for
    # the primary one), as the size column of the readings table.
    text = HEART_EEM.replace("[heart]", "[heart, sonar]").replace("repeats: 1", "repeats: 2")
    cfg = _write(tmp_path, text + "readings:\n  seed1: {set: {protocol.seed: 1}}\n")
    out = tmp_path / "r"
    for extra in ([], ["--reading", "seed1", "--only-datasets", "heart"],
                  ["--reading", "seed1", "--only-datasets", "sonar", "--repeats", "1"]):
        result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet", *extra])
        assert result.exit_code == 0, result.output
    stored = ResultStore(out / "readings" / "seed1").frame(["dataset", "repeat"]).groupby("dataset")["repeat"].nunique()
    assert stored.to_dict() == {"heart": 2, "sonar": 1}
    build_tables([out], tmp_path / "t", formats=("csv",))
    table = pd.read_csv(tmp_path / "t" / "eem_table4_gmean_readings.csv", comment="#").set_index("reading")
    assert table.loc["primary", "size"] == "2 repeats" and table.loc["seed1", "size"] == "1 to 2 repeats"


@pytest.mark.slow
def test_a_readings_row_names_the_claims_whose_verdict_its_cells_change(tmp_path):
    # The claim eem_rbf_beats_welm (EEM Table 4: EEMrbf wins over WELMrbf on more of its
    # data sets than it loses; here three of them, the fewest a claim is judged on). The primary
    # run cripples EEM's grid (h = 1, a one-neuron EEM), the reading restores it and runs EEMrbf alone, so the verdict it
    # reads takes WELMrbf's cell from the primary store. Expected: each verdict from the
    # pandas best-of-grid GMeans of the stores' own records.
    text = """name: u
datasets: [heart, sonar, liver-disorders]
models:
  EEMrbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [1]}}
  WELMrbf: {estimator: WELM, activation: rbf, grid: {n_hidden: [5, 20, 60]}}
protocol: {folds: 3, repeats: 1, seed: 0}
readings:
  eem-grid: {set: {models.EEMrbf.grid: {n_hidden: [5, 20, 60]}}}
  same-seed: {set: {protocol.seed: 0, models.EEMrbf.grid: {n_hidden: [1]}}}
"""
    cfg = _write(tmp_path, text)
    out = tmp_path / "r"
    for extra in ([], ["--reading", "eem-grid", "--only-models", "EEMrbf"],
                  ["--reading", "same-seed", "--only-models", "EEMrbf"]):
        result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet", *extra])
        assert result.exit_code == 0, result.output

    def per_set(folder, model):  # {data set: best-of-grid GMean (%)}, by pandas from the store's records
        frame = ResultStore(folder).frame(["model", "point", "fold", "gmean"])
        frame = frame[frame["model"] == model]
        return (100 * frame.groupby(["dataset", "point"], observed=True)["gmean"].mean()).groupby(
            level="dataset", observed=True).max().round(1).to_dict()

    welm = per_set(out, "WELMrbf")
    eem = {"primary": per_set(out, "EEMrbf"), "eem-grid": per_set(out / "readings" / "eem-grid", "EEMrbf")}
    verdict = {}
    for name, values in eem.items():
        wins = sum(values[d] > welm[d] for d in welm)
        losses = sum(values[d] < welm[d] for d in welm)
        verdict[name] = "confirmed" if wins > losses else "not confirmed"
    assert verdict["primary"] != verdict["eem-grid"]  # the row has a change to report
    build_tables([out], tmp_path / "t", formats=("csv",))
    table = pd.read_csv(tmp_path / "t" / "eem_table4_gmean_readings.csv", comment="#").set_index("reading")
    assert table.loc["eem-grid", "verdicts"] == (
        f"eem_rbf_beats_welm: {verdict['primary']} -> {verdict['eem-grid']}")
    # The same cells as the primary reading's (its own run of the same config): no verdict moves.
    assert table.loc["same-seed", "verdicts"] == "none" and pd.isna(table.loc["primary", "verdicts"])


@pytest.mark.slow
@pytest.mark.skipif((__import__("os").cpu_count() or 1) < 2, reason="the readings are judged in workers on 2+ cores")
def test_judging_readings_in_workers_leaves_a_later_run_in_the_same_process_working():
    # The readings were judged on loky's process-wide reusable executor; joblib, asked next for a run's workers
    # (same size, as on a 2-core machine), got that executor without the state it gives its own and failed with
    # AttributeError '_temp_folder_manager' (seen when a test of tables preceded a test of a run).
    import os

    from joblib import Parallel, delayed, parallel_config

    from eemrepro.experiments._watchdog import exit_with_parent
    from eemrepro.reports._readings import _submit

    collect = _submit(abs, [(-1,), (-2,)])
    assert collect() == [1, 2]
    with parallel_config(backend="loky", n_jobs=2, initializer=exit_with_parent, initargs=(os.getpid(),)):
        assert list(Parallel(return_as="generator")(delayed(abs)(x) for x in (-3, -4))) == [3, 4]
