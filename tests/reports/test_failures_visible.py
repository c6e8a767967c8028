"""Failed and timed-out fits are visible where the number is (issue 58).

A user's grid where 2 of 3 points raise on every fold printed a bare ``80.9±6.3``: the failures vanished from
the cell. Here a cell with failed fits carries ``†k`` (k: how many) in the table a run prints, in ``eemrepro
tables`` (md, LaTeX; the csv has the counts as columns) and in the report; and a best point that failed on some
folds is never averaged over the folds that survived (``eemrepro.experiments._selection``'s rule).

Expected numbers: each cell's mean and std computed here with numpy (``np.mean``, ``np.std(ddof=1)``) over the
per-fold metrics the run stored, or written out by hand for hand-made records; the counts of failed fits are
closed forms (points x folds x repeats).
"""

import csv
import io
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app
from eemrepro.experiments import ResultStore, select
from tests.helpers import FLAKY, user_folder

runner = CliRunner()

FOLDS, REPEATS = 3, 2
#: 2 failing grid values, each on every fold of every repeat.
FAILED = 2 * FOLDS * REPEATS


def _flaky_run(tmp_path):
    """Run the user's config through the CLI; (the run's output, the results folder)."""
    folder, module = user_folder(tmp_path, FLAKY, "user_flaky")
    cfg = folder / "flaky.yaml"
    cfg.write_text(f"name: flaky\ndatasets: [heart]\nmodels:\n"
                   f"  F: {{estimator: \"{module}:Flaky\", grid: {{shrink: [0.0, 0.1, 0.2]}}}}\n"
                   f"protocol: {{folds: {FOLDS}, repeats: {REPEATS}, seed: 5}}\n")
    out = tmp_path / "results"
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    return result.output, out


def _surviving_cell(out):
    """The surviving point's mean and std (%) over its stored test folds, by numpy, and the failed fits' count."""
    df = read_results(out)
    assert set(df.loc[df["status"] == "failed", "point"]) == {'{"shrink": 0.1}', '{"shrink": 0.2}'}
    ok = df[(df["status"] == "ok") & (df["point"] == '{"shrink": 0.0}')]
    assert len(ok) == FOLDS * REPEATS
    values = 100 * ok["gmean"].to_numpy(dtype=float)
    return np.mean(values), np.std(values, ddof=1), int((df["status"] == "failed").sum())


def test_a_grid_whose_points_fail_shows_the_mark_and_the_count_in_every_table(tmp_path):
    output, out = _flaky_run(tmp_path)
    mean, std, failed = _surviving_cell(out)
    assert failed == FAILED
    value = f"{mean:.1f}±{std:.1f}"
    # The table the run prints: the surviving point's mean±std, then the mark with the count; the legend says why.
    row = next(line for line in output.splitlines() if line.startswith("| heart"))
    assert re.search(rf"\| {re.escape(value)} †{FAILED} +\|$", row), row
    assert "'†k': k of the cell's fits failed or ran past the fit budget" in output

    tables = tmp_path / "tables"
    result = runner.invoke(app, ["tables", str(out), "--format", "md", "--format", "csv", "--format", "latex",
                                 "--out", str(tables)])
    assert result.exit_code == 0, result.output
    md = (tables / "eem_table4_gmean.md").read_text()
    # The paper-shaped view (no published cell for a user's model: delta "–") and the long list.
    assert re.search(rf"\| heart +\| {re.escape(value)} †{FAILED} \(–\) +\|", md), md
    assert re.search(rf"\| heart +\| F +\| ok +\| {mean:.1f} †{FAILED} +\| {std:.1f} ", md), md
    assert "- '†k': k of the cell's fits failed or ran past the fit budget" in md
    tex = (tables / "eem_table4_gmean.tex").read_text()
    assert f"heart & F & ok & {mean:.1f} $^\\dagger${FAILED} & {std:.1f} &" in tex
    # The csv: the value as it is, the counts in columns of their own (lossless).
    text = (tables / "eem_table4_gmean.csv").read_text()
    cells = pd.read_csv(io.StringIO("".join(line for line in text.splitlines(True) if not line.startswith("#"))))
    cell = cells.set_index(["dataset", "method"]).loc[("heart", "F")]
    assert cell["gmean"] == pytest.approx(mean, rel=1e-5) and cell["gmean_std"] == pytest.approx(std, rel=1e-5)
    assert (cell["failed_fits"], cell["timed_out_fits"], cell["skipped_fits"]) == (FAILED, 0, 0)
    assert list(cells.columns[-3:]) == ["failed_fits", "timed_out_fits", "skipped_fits"]

    site = tmp_path / "site"
    result = runner.invoke(app, ["report", str(out), "--out", str(site), "--no-figures"])
    assert result.exit_code == 0, result.output
    page = (site / "eem.html").read_text()
    # The paper-shaped cell (the value, no delta: no published value) and the long list both show the mark.
    assert len(re.findall(rf'class="[^"]*\bv-notrun[^"]*" >{mean:.1f} †{FAILED}<', page)) == 2
    # The counts in words: the cells' tooltips and the drill-down a click shows.
    assert f'content: "{FAILED} fits failed"' in page and f'"fits": "{FAILED} fits failed"' in page
    assert "k of the cell&#39;s fits failed or ran past the fit budget" in page  # the legend


# -- the rule: a best point that failed on one fold ---------------------------------------------------------------
def rec(point, fold, gmean, status="ok", inner=None, repeat=0, criterion=None):
    return {"dataset": "D", "model": "M", "params": point, "repeat": repeat, "fold": fold, "inner": inner,
            "status": status, "metrics": {"gmean": gmean if status == "ok" else None, "bac": None, "auc": None},
            "criteria": {"dcs_gaussian": criterion if status == "ok" else None}, "fit_seconds": 1.0, "path_size": 1}


def _one_fold_failed():
    """h=2 beats h=1 on every fold it finished (0.90, 0.92 vs 0.70, 0.74) but failed on fold 1."""
    return ([rec({"h": 1}, f, g, criterion=1.0) for f, g in enumerate([0.70, 0.72, 0.74])]
            + [rec({"h": 2}, 0, 0.90, criterion=2.0), rec({"h": 2}, 1, None, "failed"),
               rec({"h": 2}, 2, 0.92, criterion=2.0)])


def test_best_of_grid_drops_a_point_that_failed_on_a_fold_and_counts_the_failure():
    row = select(_one_fold_failed()).iloc[0]
    # h=2 is no candidate: averaged over its surviving folds it would read mean(0.90, 0.92) = 0.91. The cell is
    # h=1's three folds, by hand: mean 0.72, std sqrt((0.02^2 + 0 + 0.02^2) / 2) = 0.02.
    assert row["status"] == "ok" and row["point"] == '{"h": 1}'
    assert row["gmean_mean"] == pytest.approx(0.72, abs=1e-12)
    assert row["gmean_std"] == pytest.approx(0.02, abs=1e-12)
    assert (row["failed_fits"], row["timed_out_fits"], row["skipped_fits"]) == (1, 0, 0)


def test_the_per_fold_rules_never_average_over_the_folds_that_survived():
    records = _one_fold_failed()
    # Best per fold and the criterion choose, on each fold, among the points that finished there: h=2 on folds 0
    # and 2, h=1 on fold 1 (its only finished point). Over all three folds: mean(0.90, 0.72, 0.92) = 0.84667,
    # std (ddof=1) 0.11015 (np.std below); the failure is counted.
    for mode in ("best-per-fold", "dcs-gaussian"):
        row = select(records, mode).iloc[0]
        assert row["points"] == ['{"h": 2}', '{"h": 1}', '{"h": 2}'], mode
        assert row["gmean_mean"] == pytest.approx(np.mean([0.90, 0.72, 0.92]), abs=1e-12), mode
        assert row["gmean_std"] == pytest.approx(np.std([0.90, 0.72, 0.92], ddof=1), abs=1e-12), mode
        assert row["n_folds"] == 3 and row["failed_fits"] == 1, mode
    # A fold where every point failed: no value, never the mean of the other two folds.
    lost = [r for r in records if not (r["fold"] == 1 and r["params"] == {"h": 1})] + [rec({"h": 1}, 1, None,
                                                                                             "failed")]
    for mode in ("best-per-fold", "dcs-gaussian"):
        row = select(lost, mode).iloc[0]
        assert row["status"] == "failed" and pd.isna(row["gmean_mean"]) and row["failed_fits"] == 2, mode


def test_nested_reports_no_value_where_the_point_its_inner_folds_chose_failed_on_the_test_fold():
    # On each outer fold the inner folds prefer h=2 (0.9 vs 0.5); h=2's outer fit failed on fold 1.
    records = [rec({"h": h}, f, 0.9 if h == 2 else 0.5, inner=i) for h in (1, 2) for f in range(3) for i in range(2)]
    records += [rec({"h": 1}, f, 0.6) for f in range(3)]
    records += [rec({"h": 2}, 0, 0.8), rec({"h": 2}, 1, None, "failed"), rec({"h": 2}, 2, 0.7)]
    row = select(records, "nested").iloc[0]
    # Neither mean(0.8, 0.7) over the survivors nor h=1's 0.6 put in on fold 1 (a choice the inner folds did not
    # make): the cell failed, and says how many fits.
    assert row["status"] == "failed" and pd.isna(row["gmean_mean"]) and row["failed_fits"] == 1
    # Once h=2 finishes there (0.75), the value is over the three folds: mean(0.8, 0.75, 0.7) = 0.75.
    fixed = [r for r in records if r["status"] == "ok"] + [rec({"h": 2}, 1, 0.75)]
    row = select(fixed, "nested").iloc[0]
    assert row["gmean_mean"] == pytest.approx(0.75, abs=1e-12) and row["failed_fits"] == 0
    # An inner fit failed: counted too (nested reads the inner folds), the point is no candidate on that fold.
    inner_failed = [r for r in fixed if not (r["params"] == {"h": 2} and r["fold"] == 2 and r["inner"] == 0)]
    inner_failed += [rec({"h": 2}, 2, None, "failed", inner=0)]
    row = select(inner_failed, "nested").iloc[0]
    assert row["points"] == ['{"h": 2}', '{"h": 2}', '{"h": 1}'] and row["failed_fits"] == 1
    assert row["gmean_mean"] == pytest.approx(np.mean([0.8, 0.75, 0.6]), abs=1e-12)


@pytest.mark.parametrize("mode", ["best-of-grid", "best-per-fold", "dcs-gaussian", "nested"])
def test_a_point_missing_a_whole_repeat_never_wins(mode):
    # Two repeats of two folds. h=2 is better on every split it has, but it has no record of repeat 1 at all
    # (an interrupted run): its folds are numbered 0 and 1 like repeat 1's, so counting splits without their
    # repeat would call it complete. The cell reads incomplete, as any cell a run left unfinished.
    records = [rec({"h": 1}, f, 0.7, repeat=r, criterion=1.0) for r in range(2) for f in range(2)]
    records += [rec({"h": 2}, f, 0.9, repeat=0, criterion=2.0) for f in range(2)]
    if mode == "nested":
        records += [rec({"h": 1}, f, 0.5, repeat=r, inner=0) for r in range(2) for f in range(2)]
        records += [rec({"h": 2}, f, 0.8, repeat=0, inner=0) for f in range(2)]
    row = select(records, mode).iloc[0]
    assert row["status"] == "incomplete" and pd.isna(row.get("gmean_mean")), mode
    # Once repeat 1 of h=2 is stored the cell has a value again, over the four splits.
    records += [rec({"h": 2}, f, 0.9, repeat=1, criterion=2.0) for f in range(2)]
    if mode == "nested":
        records += [rec({"h": 2}, f, 0.8, repeat=1, inner=0) for f in range(2)]
    row = select(records, mode).iloc[0]
    assert row["status"] == "ok" and row["gmean_mean"] == pytest.approx(0.9), mode


def test_nested_with_a_point_missing_an_inner_fold_reads_incomplete():
    # h=2 has inner fold 0 only on outer fold 0 (inner fold 1 never stored): its inner mean would be over fewer
    # folds than h=1's.
    records = [rec({"h": 1}, 0, 0.5, inner=i) for i in range(2)] + [rec({"h": 2}, 0, 0.9, inner=0)]
    records += [rec({"h": 1}, 0, 0.6), rec({"h": 2}, 0, 0.8)]
    assert select(records, "nested").iloc[0]["status"] == "incomplete"
    assert select(records + [rec({"h": 2}, 0, 0.9, inner=1)], "nested").iloc[0]["gmean_mean"] == pytest.approx(0.8)


# -- as a user reads a store: tables and check ------------------------------------------------------------------
def store_rec(point, fold, gmean, status="ok"):
    return {"kind": "grid-search", "dataset": "australian", "model": "EEMrbf", "params": point, "repeat": 0,
            "fold": fold, "inner": None, "status": status,
            "metrics": {"gmean": gmean, "bac": gmean, "auc": None} if status == "ok" else {}, "criteria": {},
            "fit_seconds": 1.0 if status == "ok" else None, "path_size": 1, "versions": {"eemrepro": "t"},
            "host": "h", "finished_at": 1.8e9, "identity": {"kind": "grid-search"}, "identity_sha": "i",
            "data_sha256": "d", "seed": 1, "estimator": "EEM", "fixed_params": {}}


def test_tables_and_check_of_a_store_whose_best_point_failed_on_a_fold(tmp_path):
    # australian EEMrbf (published 86.9 ± 4.4, EEM Table 4): h=100 is better where it finished (0.95, 0.97) but
    # failed on fold 1; h=50's folds 0.86, 0.88, 0.87 give 87.0 ± 1.0 (by hand), delta +0.1.
    records = [store_rec({"n_hidden": 50}, f, g) for f, g in enumerate([0.86, 0.88, 0.87])]
    records += [store_rec({"n_hidden": 100}, 0, 0.95), store_rec({"n_hidden": 100}, 1, None, "failed"),
                store_rec({"n_hidden": 100}, 2, 0.97)]
    store = ResultStore(tmp_path / "res")
    store.append(records)
    store.close()
    result = runner.invoke(app, ["tables", str(tmp_path / "res"), "--format", "md", "--format", "csv",
                                 "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    md = (tmp_path / "t" / "eem_table4_gmean.md").read_text()
    assert re.search(r"\| australian +\| 87\.0±1\.0 †1 \(\+0\.1\) +\|", md), md
    rows = [r for r in csv.DictReader(line for line in (tmp_path / "t" / "eem_table4_gmean.csv").read_text()
                                      .splitlines() if not line.startswith("#"))]
    (cell,) = [r for r in rows if r["dataset"] == "australian" and r["method"] == "EEMrbf"]
    assert float(cell["gmean"]) == pytest.approx(87.0) and float(cell["gmean_std"]) == pytest.approx(1.0)
    assert cell["point"] == '{"n_hidden": 50}' and cell["failed_fits"] == "1"
    # The mark is not a difference from the paper: check compares the value (|+0.1| <= 4.4) and passes.
    result = runner.invoke(app, ["check", str(tmp_path / "res")])
    assert result.exit_code == 0, result.output
    assert "within tolerance: 1 of 1 cells" in result.output.splitlines()[-1]
