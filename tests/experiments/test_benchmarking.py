"""Your classifier against the papers' (issue 52): plug-ins, baselines on the same footing, the comparison.

Expected numbers come from closed forms written out here (Friedman's statistic
without ties, Holm's step-down adjustment, ranks of a hand-made table) or from
a clean run of the same config (the independent reference).
"""

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from eemrepro.cli import app
from eemrepro.experiments import ConfigError, load_config
from eemrepro.models import estimator_class
from tests.helpers import CENTROID, blobs_frame, user_folder
from tests.helpers import run_config as _run

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]

CONFIG = """name: {name}
datasets: [{datasets}]
models:
{models}
{extra}
protocol: {{folds: 3, repeats: {repeats}, seed: 5}}
"""


def _config(folder, name, models, datasets="heart", repeats=1, extra=""):
    path = folder / f"{name}.yaml"
    path.write_text(CONFIG.format(name=name, datasets=datasets, models=models, extra=extra, repeats=repeats))
    return path


# -- plug-ins found as users expect ---------------------------------------------------------------------------
def test_a_module_beside_the_config_is_found_without_pythonpath(tmp_path):
    folder, module = user_folder(tmp_path)
    cfg = _config(folder, "mine", f'  C: {{estimator: "{module}:Centroid", grid: {{shrink: [0.0, 0.1]}}}}')
    assert str(folder) not in sys.path
    config = load_config(cfg)
    assert config.model("C").estimator_class().__name__ == "Centroid"
    assert str(folder) not in sys.path  # found there without the folder left on the path
    # The same name from a config elsewhere is looked up there and on the path, and the error says both.
    other = tmp_path / "elsewhere"
    other.mkdir()
    with pytest.raises(ConfigError, match=rf"{module}:Missing.*cannot be imported \(looked up in {other}"):
        load_config(_config(other, "other", f'  C: {{estimator: "{module}:Missing"}}'))


def test_an_installed_package_registers_an_estimator_by_its_short_name(tmp_path, monkeypatch):
    # An installed distribution as importlib.metadata sees one: a dist-info folder with entry_points.txt.
    module = f"plug_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(CENTROID)
    info = tmp_path / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[eemrepro.estimators]\nshort-{module} = {module}:Centroid\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert estimator_class(f"short-{module}").__name__ == "Centroid"
    folder = tmp_path / "cfg"
    folder.mkdir()
    config = load_config(_config(folder, "plug", f"  C: {{estimator: short-{module}, grid: {{shrink: [0.0]}}}}"))
    assert config.model("C").estimator == f"short-{module}"
    with pytest.raises(ValueError, match=rf"unknown estimator 'nope'.*installed plug-ins \['short-{module}'\]"):
        estimator_class("nope")


def test_reports_over_a_store_whose_user_module_is_gone_build_without_importing_it(tmp_path):
    folder, module = user_folder(tmp_path)
    cfg = _config(folder, "mine", f'  C: {{estimator: "{module}:Centroid", grid: {{shrink: [0.0, 0.2]}}}}')
    out = tmp_path / "results"
    _run(cfg, out)
    before = pd.read_csv(_tables(out, tmp_path / "t1") / "eem_table4_gmean.csv", comment="#")
    shutil.rmtree(folder)  # the module and the config are gone; the store holds what the reports need
    sys.modules.pop(module, None)
    after = pd.read_csv(_tables(out, tmp_path / "t2") / "eem_table4_gmean.csv", comment="#")
    pd.testing.assert_frame_equal(before, after)
    assert after.loc[after["method"] == "C", "gmean"].notna().all()
    for args in (["report", str(out), "--out", str(tmp_path / "site"), "--no-figures"],
                 ["check", str(out), "--report-only"], ["status", str(out)],
                 ["export", str(out), "--out", str(tmp_path / "r.csv")]):
        result = runner.invoke(app, args)
        if args[0] == "status":  # what is stored, and that a run would stop at the module: as a refusal, exit 1
            assert result.exit_code == 1 and "a run of this folder stops there" in result.output, result.output
            # (units done unknown without the module; its 3 folds x 2 grid points stored ok)
            assert re.search(r"heart\s+C\s+\?/3\s+6\s", result.output), result.output
            continue
        assert result.exit_code == 0, (args, result.output)
    assert module not in sys.modules


def _tables(out, where, *dirs):
    result = runner.invoke(app, ["tables", str(out), *map(str, dirs), "--out", str(where), "--format", "csv",
                                 "--format", "md"])
    assert result.exit_code == 0, result.output
    return where


# -- baselines on the same footing ------------------------------------------------------------------------------
BASELINE_MODELS = """  EEMrbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [10, 40]}}
  WELMrbf: {estimator: WELM, activation: rbf, grid: {n_hidden: [10, 40]}}"""


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """A paper-like store: two of EEM Table 4's models on heart and sonar, 3 folds, 1 repeat."""
    tmp = tmp_path_factory.mktemp("baseline")
    cfg = _config(tmp, "paper", BASELINE_MODELS, datasets="heart, sonar")
    _run(cfg, tmp / "results" / "paper")
    return tmp / "results" / "paper"


def test_a_baseline_of_another_protocol_is_refused_naming_the_first_difference(tmp_path, baseline):
    folder, module = user_folder(tmp_path)
    rel = os.path.relpath(baseline, folder)
    cfg = _config(folder, "mine", f'  C: {{estimator: "{module}:Centroid"}}', repeats=2,
                  extra=f"baselines: [{rel}]")
    result = _run(cfg, tmp_path / "out", code=1)
    assert f"key 'baselines': {os.path.normpath(folder / rel)} was made with protocol.repeats 1, this config " \
           "has 2" in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()  # refused before anything was written
    # A folder that is no results folder is named too.
    cfg.write_text(cfg.read_text().replace(rel, "nowhere").replace("repeats: 2", "repeats: 1"))
    result = _run(cfg, tmp_path / "out", code=1)
    assert f"'nowhere' ({folder.resolve() / 'nowhere'}), from the config's folder, is no such folder" in \
        " ".join(result.output.split())


def test_a_baseline_made_on_other_data_is_refused(tmp_path, baseline):
    from eemrepro.experiments._baselines import BaselineError, check_baselines

    folder, module = user_folder(tmp_path)
    cfg = _config(folder, "mine", f'  C: {{estimator: "{module}:Centroid"}}',
                  extra=f"baselines: [{os.path.relpath(baseline, folder)}]")
    config = load_config(cfg)
    with pytest.raises(BaselineError, match=r"holds records of heart made on other data \(sha256 [0-9a-f]{12}"):
        check_baselines(config, {"heart": "0" * 64})


def test_user_models_are_ranked_beside_the_baselines_in_run_tables_and_report(tmp_path, baseline):
    folder, module = user_folder(tmp_path)
    cfg = _config(folder, "mine", f'  Mine: {{estimator: "{module}:Centroid", grid: {{shrink: [0.0]}}}}',
                  datasets="heart, sonar", extra=f"baselines: [{os.path.relpath(baseline, folder)}]")
    out = tmp_path / "results" / "mine"
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    # The run's own table sets the baselines' columns beside the user's, with the paper's values.
    header = next(line for line in result.output.splitlines() if line.startswith("| dataset"))
    assert [c.strip() for c in header.strip("|").split("|")] == ["dataset", "WELMrbf", "EEMrbf", "Mine"]  # the paper's order, then yours
    assert "(paper 81.9" in result.output  # EEMrbf on heart in EEM Table 4 (published/eem_table4_gmean.csv)
    # The stored config names the baseline relative to the store: the two move together.
    assert (out / "config.yaml").read_text().count(os.path.relpath(baseline, out)) == 1
    tables = _tables(out, tmp_path / "tables")
    table = pd.read_csv(tables / "eem_table4_gmean.csv", comment="#")
    assert {"EEMrbf", "WELMrbf", "Mine"} <= set(table["method"])
    pairs = pd.read_csv(tables / "eem_table4_gmean_comparison.csv")
    assert sorted(pairs["baseline"]) == ["EEMrbf", "WELMrbf"] and set(pairs["model"]) == {"Mine"}
    # The comparison's W/D/L agree with the table's own values (each pair on the data sets both have).
    wide = table.pivot_table(index="dataset", columns="method", values="gmean").round(1)
    for r in pairs.itertuples():
        assert (r.wins, r.draws, r.losses) == ((wide["Mine"] > wide[r.baseline]).sum(),
                                               (wide["Mine"] == wide[r.baseline]).sum(),
                                               (wide["Mine"] < wide[r.baseline]).sum())
    text = (tables / "eem_table4_gmean_comparison.md").read_text()
    assert "on 2 of 2 data sets" in text and f"baselines of {out}" in text
    site = tmp_path / "site"
    result = runner.invoke(app, ["report", str(out), "--out", str(site), "--no-figures"])
    assert result.exit_code == 0, result.output
    page = (site / "comparison.html").read_text()
    assert "<svg" in page and "Mine" in page and "comparison.html" in (site / "index.html").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("one_data_set_at_a_time", [False, True])  # the folders read a data set at a time
def test_stores_of_different_repeats_combined_are_flagged_in_the_output(tmp_path, baseline, monkeypatch,
                                                                       one_data_set_at_a_time):
    from eemrepro.reports import _tables as tables_module

    if one_data_set_at_a_time:
        monkeypatch.setattr(tables_module, "TABLE_CHUNK_RECORDS", 1)
    folder, module = user_folder(tmp_path)
    cfg = _config(folder, "mine", f'  Mine: {{estimator: "{module}:Centroid"}}', datasets="heart", repeats=2)
    out = tmp_path / "two-repeats"
    _run(cfg, out)
    tables = _tables(out, tmp_path / "tables", baseline)
    text = (tables / "eem_table4_gmean.md").read_text()
    assert f"WARNING, protocols differ: {out} and {baseline} were made under different protocols (repeats 2 in " \
           f"{out}, 1 in {baseline}; repeats run '2' in {out}, '1' in {baseline}), yet are combined on heart" in text
    # Two stores of one protocol on other data sets: no warning.
    other = _config(folder, "other", f'  Mine: {{estimator: "{module}:Centroid"}}', datasets="sonar")
    _run(other, tmp_path / "other")
    heart_only = _config(folder, "paper2", BASELINE_MODELS, datasets="heart")
    _run(heart_only, tmp_path / "paper2")
    text = (_tables(tmp_path / "other", tmp_path / "t2", tmp_path / "paper2") / "eem_table4_gmean.md").read_text()
    assert "WARNING" not in text


def test_a_run_against_a_baseline_that_ran_fewer_repeats_warns_under_its_own_table_as_tables_does(tmp_path):
    # The baseline's config says 2 repeats, but it ran 1 (--repeats 1: its config.yaml keeps 2), so the
    # protocol check passes; the run's cells at 2 repeats and the baseline's at 1 meet in one table.
    folder, module = user_folder(tmp_path)
    paper = _config(tmp_path, "paper", BASELINE_MODELS, repeats=2)
    base = tmp_path / "results" / "paper"
    _run(paper, base, "--repeats", "1")
    cfg = _config(folder, "mine", f'  Mine: {{estimator: "{module}:Centroid"}}', repeats=2,
                  extra=f"baselines: [{os.path.relpath(base, folder)}]")
    out = tmp_path / "mine-out"
    printed = _run(cfg, out).output
    tables = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t")])
    assert tables.exit_code == 0, tables.output
    # One source for the warning: the run's table says what `tables` says, word for word.
    (warning,) = [line for line in tables.output.splitlines() if line.startswith("WARNING, protocols differ")]
    assert f"repeats run '2' in {out}, '1' in {base}" in warning and "combined on heart" in warning
    assert warning in printed.splitlines(), printed


# -- the statistics -------------------------------------------------------------------------------------------
def _spec():
    from eemrepro.reports._spec import registered_tables

    return next(s for s in registered_tables() if s.id == "eem_table4")


def test_comparison_statistics_match_their_closed_forms():
    from eemrepro.reports._compare import compare_methods

    # Four methods (two of the paper's, two new) on five data sets, no ties within a data set; "X" is missing
    # on e, so every test uses a-d: "4 of 5".
    values = {"EEMrbf": [80, 70, 91, 60, 50], "SVMrbf": [85, 72, 90, 65, 55], "New": [90, 60, 95, 62, 58],
              "X": [70, 65, 80, 61, np.nan]}
    rows = [{"dataset": d, "method": m, "gmean": v[i]} for m, v in values.items() for i, d in enumerate("abcde")]
    result = compare_methods(_spec(), pd.DataFrame(rows))
    assert result["new"] == ["New", "X"] and result["baselines"] == ["EEMrbf", "SVMrbf"]
    assert result["datasets"] == list("abcd") and len(result["of"]) == 5
    # Ranks per data set (1 = highest): a: New 1, SVM 2, EEM 3, X 4; b: SVM 1, EEM 2, X 3, New 4;
    # c: New 1, EEM 2, SVM 3, X 4; d: SVM 1, New 2, X 3, EEM 4.
    expected = {"New": (1 + 4 + 1 + 2) / 4, "SVMrbf": (2 + 1 + 3 + 1) / 4, "EEMrbf": (3 + 2 + 2 + 4) / 4,
                "X": (4 + 3 + 4 + 3) / 4}
    got = dict(zip(result["ranks"]["method"], result["ranks"]["average rank"], strict=True))
    assert got == pytest.approx(expected)
    # Friedman without ties: 12 n / (k (k + 1)) * sum(R_j^2) - 3 n (k + 1), R_j the average ranks.
    n, k = 4, 4
    chi2 = 12 * n / (k * (k + 1)) * sum(r * r for r in expected.values()) - 3 * n * (k + 1)
    assert result["friedman"][0] == pytest.approx(chi2)
    # Nemenyi CD (Demsar 2006): q_0.05 for k = 4 is 2.569.
    assert result["cd"] == pytest.approx(2.569 * np.sqrt(k * (k + 1) / (6 * n)), abs=1e-3)
    pairs = result["pairs"].set_index(["model", "baseline"])
    # New vs EEMrbf on all five: wins on a, c, d, e, loses on b.
    assert tuple(pairs.loc[("New", "EEMrbf"), ["wins", "draws", "losses", "datasets"]]) == (4, 0, 1, 5)
    assert pairs.loc[("X", "SVMrbf"), "datasets"] == 4
    assert np.isnan(pairs.loc[("X", "SVMrbf"), "wilcoxon p"])  # 4 pairs: under MIN_WILCOXON, not tested


def test_holm_adjusts_the_wilcoxon_p_values_step_down():
    from scipy import stats

    from eemrepro.reports._compare import compare_methods

    rng = np.random.default_rng(3)
    base = rng.uniform(60, 90, size=8)
    values = {"EEMrbf": base, "SVMrbf": base + rng.normal(0, 3, 8), "WELMrbf": base - rng.normal(1, 2, 8),
              "New": base + rng.normal(2, 1, 8)}
    rows = [{"dataset": f"d{i}", "method": m, "gmean": v[i]} for m, v in values.items() for i in range(8)]
    pairs = compare_methods(_spec(), pd.DataFrame(rows))["pairs"]
    raw = [stats.wilcoxon(values["New"], values[b]).pvalue for b in pairs["baseline"]]
    assert pairs["wilcoxon p"].tolist() == pytest.approx(raw)
    # Holm: the i-th smallest of m p-values times (m - i), made monotone, capped at 1.
    order = np.argsort(raw)
    adjusted = np.minimum(1, np.maximum.accumulate([(len(raw) - i) * raw[j] for i, j in enumerate(order)]))
    expected = np.empty(len(raw))
    expected[order] = adjusted
    assert pairs["holm p"].tolist() == pytest.approx(expected.tolist())
    assert not np.allclose(expected, raw)  # the correction changed something: a wrong rule would show


def test_a_table_of_the_papers_models_only_has_no_comparison():
    from eemrepro.reports._compare import compare_methods

    rows = [{"dataset": d, "method": m, "gmean": 70.0 + i} for i, d in enumerate("abc") for m in ("EEMrbf", "SVMrbf")]
    assert compare_methods(_spec(), pd.DataFrame(rows)) is None


# -- the worked example, as a new user runs it ------------------------------------------------------------------
@pytest.mark.slow
def test_the_worked_example_ranks_a_users_classifier_among_the_eem_papers_nine_in_three_commands(tmp_path):
    """From a folder of the user's own, no PYTHONPATH: run, tables, report (README, docs/benchmarking.md)."""
    example = ROOT / "examples" / "benchmark-a-classifier"
    folder = tmp_path / "my-project"
    shutil.copytree(example, folder)
    cfg = folder / "benchmark.yaml"
    cfg.write_text(cfg.read_text().replace("../../results/uci", str(ROOT / "results" / "uci")))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    eemrepro = [sys.executable, "-m", "eemrepro"]

    def command(*args):
        done = subprocess.run([*eemrepro, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    ran = command("run", "benchmark.yaml", "--only-datasets", "heart,sonar")
    assert "KNM" in ran and "(paper 83.6" in ran  # EEKMrbf on heart in EEM Table 4
    command("tables", "results/my-classifier")
    text = (folder / "results" / "my-classifier" / "tables" / "eem_table4_gmean_comparison.md").read_text()
    ranked = text.split("## Average rank")[1].split("##")[0]
    assert ranked.count("|") >= 11 * 3 and "KNM" in ranked  # ten models: the paper's nine and KNM
    assert "on 2 of 2 data sets" in text
    command("report", "results/my-classifier", "--no-figures")
    page = (folder / "results" / "my-classifier" / "report" / "comparison.html").read_text()
    assert "<svg" in page and "KNM" in page and "SVMrbf" in page


# -- defects seen by a new user --------------------------------------------------------------------------------
def _progress_lines(monkeypatch, clock, total, label):
    """The lines ``Progress`` writes for ``total`` units done one by one, its clock reading ``clock`` in turn."""
    import io

    from eemrepro.experiments import _dispatch

    clock = iter(clock)
    monkeypatch.setattr(_dispatch.time, "monotonic", lambda: next(clock))
    stream = io.StringIO()
    progress = _dispatch.Progress(total, stream=stream)
    for _ in range(total):
        progress.update(label)
    return stream.getvalue().splitlines()


def test_the_progress_eta_leaves_the_start_up_out(monkeypatch):
    """A 10 s start-up, then 100 units of 0.1 s each: 9.9 s of units remain after the first, not 16.5 min."""
    lines = _progress_lines(monkeypatch, [0.0] + [10.0 + 0.1 * i for i in range(100)], 100, "heart KNM")
    assert lines[0] == "[1/100] 1%  ETA --  heart KNM"  # no rate yet: no number made up from the start-up
    # At 11 done: 10 units in 1.0 s since the first, 89 left: 8.9 s (elapsed / done * left would say 81 s).
    assert lines[1] == "[11/100] 11%  ETA 0m09s  heart KNM"
    assert lines[-1] == "[100/100] 100%  ETA 0m00s  heart KNM"


def test_the_progress_eta_of_a_long_run_is_in_hours_and_minutes(monkeypatch):
    """Units of 61.3 s each after the first, 1000 in all: an hour or more reads hours and minutes, less minutes and
    seconds."""
    from eemrepro.experiments import _dispatch

    lines = _progress_lines(monkeypatch, [0.0] + [61.3 * i for i in range(1000)], 1000, "abalone7 SVM")
    # At 100 done: 900 left x 61.3 s = 55,170 s = 15 h 19 min 30 s; at 900 done: 100 x 61.3 = 6,130 s = 1 h 42 min.
    assert lines[1] == "[100/1000] 10%  ETA 15h19m  abalone7 SVM"
    assert lines[9] == "[900/1000] 90%  ETA 1h42m  abalone7 SVM"
    # 3,065 s = 51 min 5 s; 3,599.6 s rounds to 3,600 s: one hour.
    assert _dispatch._fmt_seconds(3065.0) == "51m05s" and _dispatch._fmt_seconds(3599.6) == "1h00m"


# -- your own data set --------------------------------------------------------------------------------------------
LOCAL_CONFIG = """name: local
datasets: [mine]
local_datasets:
  mine: {spec}
models:
  EEMrbf: {{estimator: EEM, activation: rbf, grid: {{n_hidden: [10, 40]}}}}
protocol: {{folds: 3, repeats: 1, seed: 5}}
"""


def test_a_local_csv_runs_like_a_registry_set_and_its_checksum_is_in_every_record(tmp_path):
    import hashlib

    from eemrepro import read_results

    frame = blobs_frame()
    frame.to_csv(tmp_path / "mine.csv", index=False)
    cfg = tmp_path / "local.yaml"
    cfg.write_text(LOCAL_CONFIG.format(spec="{file: mine.csv, target: status}"))
    out = tmp_path / "out"
    _run(cfg, out)
    df = read_results(out)
    assert len(df) == 2 * 3 and set(df["status"]) == {"ok"}
    # The registry's checksum rule (sha256 of the files' hex digests) over the one file.
    file_sha = hashlib.sha256((tmp_path / "mine.csv").read_bytes()).hexdigest()
    assert set(df["data_sha256"]) == {hashlib.sha256(file_sha.encode()).hexdigest()}
    # The minority class ("sick", 20 of 60) is the positive one, as the papers take it: n_train + n_test = 60.
    assert set(df["n_train"] + df["n_test"]) == {60}
    stored = (out / "config.yaml").read_text()
    assert "file: ../mine.csv" in stored and "- sick" in stored and f"sha256: {file_sha}" in stored
    # A changed file changes the data's checksum: the resumed run fits every unit again.
    assert "ran 0 of 0 pending units" in " ".join(_run(cfg, out).output.split())  # unchanged: nothing to do
    pd.concat([frame, frame.iloc[:3]]).to_csv(tmp_path / "mine.csv", index=False)
    assert "ran 3 of 3 pending units" in " ".join(_run(cfg, out).output.split())  # 3 folds, one h path each
    assert set(read_results(out)["n_train"] + read_results(out)["n_test"]) == {63}


def test_local_arff_and_libsvm_files_read_as_their_csv(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    from eemrepro.datasets import load_dataset, local_entry, register_local

    frame = blobs_frame(seed=1)
    frame.to_csv(tmp_path / "d.csv", index=False)
    arff = ["@relation blobs", "@attribute a numeric", "@attribute status {sick,well}", "@attribute b numeric",
            "@attribute c numeric", "@data"] + [f"{r.a},{r.status},{r.b},{r.c}" for r in frame.itertuples()]
    (tmp_path / "d.arff").write_text("\n".join(arff) + "\n")
    dump_svmlight_file(frame[["a", "b", "c"]].to_numpy(), np.where(frame["status"] == "sick", 1, -1),
                       str(tmp_path / "d.libsvm"))
    loaded = {}
    for ext, spec in (("csv", {"target": "status"}), ("arff", {"target": "status"}), ("libsvm", {})):
        register_local(local_entry(f"blobs-{ext}", {"file": str(tmp_path / f"d.{ext}"), **spec}))
        loaded[ext] = load_dataset(f"blobs-{ext}", scaling=None)
    for ext in ("arff", "libsvm"):
        np.testing.assert_allclose(loaded[ext].X, loaded["csv"].X, rtol=1e-6)  # svmlight writes %.16g
        np.testing.assert_array_equal(loaded[ext].y, loaded["csv"].y)
    assert (loaded["csv"].y == 1).sum() == 20  # "sick", the minority, is +1


@pytest.mark.parametrize(("content", "spec", "message"), [
    ("a,b,y\n1,2,p\n3,4,p\n5,6,p\n", "", r"one class \('p'\) in column 'y'"),
    ("a,b,y\n1,,p\n3,4,q\n5,6,p\n", "", r"a missing value in row 1 \(column 'b'\)"),
    ("a,b,y\n1,2,p\n", "", r"1 row\(s\)"),
    ("a,b,y\n1,red,p\n3,blue,q\n5,red,p\n", "", r"column 'b' is not numeric \(such as 'red'\)"),
    ("a,b,y\n1,2,p\n3,4,q\n5,6,q\n7,8,q\n", "", r"3 folds, but data set mine \(.*bad\.csv\) has a class of 1"),
    ("a,b,y\n1,2,p\n3,4,q\n", ", target: label", r"no column 'label' \(the target\)"),
    ("a,b,y\n1,2,p\n3,4,q\n", ", positive: z", r"positive label\(s\) \['z'\] not in the file"),
])
def test_a_bad_local_file_is_refused_in_one_line_naming_it(tmp_path, content, spec, message):
    (tmp_path / "bad.csv").write_text(content)
    cfg = tmp_path / "local.yaml"
    cfg.write_text(LOCAL_CONFIG.format(spec=f"{{file: bad.csv{spec}}}"))
    result = _run(cfg, tmp_path / "out", code=1)
    line = " ".join(result.output.split())
    assert re.search(message, line), line
    assert str(tmp_path / "bad.csv") in line or "bad.csv" in line
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()
