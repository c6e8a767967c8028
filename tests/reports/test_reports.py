"""Tables, check and figures on a hand-made record set; expected values computed by hand."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

import eemrepro.papers
from eemrepro.cli import app
from eemrepro.experiments import ResultStore
from eemrepro.reports import (
    Tolerance,
    build_tables,
    check,
    load_tolerance,
    metric_table,
    registered_tables,
    summary_line,
)
from eemrepro.reports import correlation_table as _correlation_table
from eemrepro.reports import time_table as _time_table
from eemrepro.reports._tables import table_title
from tests.helpers import hand_made, hand_made_with_a_failed_cell
from tests.helpers import report_record as rec

runner = CliRunner()
# The EEM paper's tables as its plug-in declares them (eemrepro/papers/eem.py).
SPECS = {t.id: t for t in registered_tables()}


def gmean_table(records, **kw):
    return metric_table(records, SPECS["eem_table4"], **kw)


def time_table(records, **kw):
    return _time_table(records, SPECS["eem_table5"], **kw)


def correlation_table(records, **kw):
    return _correlation_table(records, SPECS["eem_table1"], **kw)


def shifted(r, delta):
    """The record with its GMean moved by ``delta``."""
    return dict(r, metrics=dict(r["metrics"], gmean=r["metrics"]["gmean"] + delta))


def test_gmean_table_values_by_hand():
    t = gmean_table(hand_made()).set_index(["dataset", "method"])
    cell = t.loc[("australian", "EEMrbf")]
    assert cell["point"] == '{"n_hidden": 50}'
    assert cell["gmean"] == pytest.approx(85.0)
    assert cell["gmean_std"] == pytest.approx(100 * np.std([0.8, 0.9], ddof=1))  # 7.0711
    # Published EEM Table 4, australian EEMrbf: 86.9 +- 3.8 (eem_table4_gmean.csv).
    assert cell["published"] == 86.9 and cell["delta"] == pytest.approx(85.0 - 86.9)
    assert t.loc[("abalone7", "SVMrbf"), "status"] == "timed-out"
    assert t.loc[("sonar", "EEMrbf"), "status"] == "missing"


def test_time_table_by_hand():
    t = time_table(hand_made()).set_index(["dataset", "method"])
    # Standalone timing of the selected point where recorded (fold 0 only).
    assert t.loc[("abalone7", "EEMrbf"), "seconds"] == 0.5 and t.loc[("abalone7", "EEMrbf"), "timing"] == "standalone"
    assert math.isinf(t.loc[("abalone7", "SVMrbf"), "seconds"])
    # Published Table 5 (eem_table5_time_seconds.csv): abalone7 EEMrbf 1.2 s; LS-SVM on forest cover "> 600".
    assert t.loc[("abalone7", "EEMrbf"), "published"] == pytest.approx(1.2)
    assert math.isinf(t.loc[("forest-cover", "LS-SVMrbf"), "published"])


def test_time_table_names_each_columns_solver_and_a_mixed_column(tmp_path):
    # SVM's default solver is LIBSVM (models.SVM); a record's fixed "solver" names another one.
    svm = [rec("ecoli", "SVMrbf", {"C": 1.0, "gamma": 1.0}, f, 0.9, estimator="SVM") for f in (0, 1)]
    t = time_table(hand_made() + svm)
    assert t.attrs["solvers"] == {"SVMrbf": ["libsvm"]}
    assert t.set_index(["dataset", "method"]).loc[("ecoli", "SVMrbf"), "solver"] == "libsvm"
    assert table_title(SPECS["eem_table5"], t, "best-of-grid") == (
        "EEM Table 5: training seconds at the selected grid point (solvers: SVMrbf: LIBSVM)")
    onedal = [rec("arrhythmia", "SVMrbf", {"C": 1.0, "gamma": 1.0}, f, 0.9, estimator="SVM",
                  fixed_params={"solver": "onedal"}) for f in (0, 1)]
    mixed = time_table(hand_made() + svm + onedal)
    assert mixed.attrs["solvers"] == {"SVMrbf": ["libsvm", "onedal"]}
    cells = mixed.set_index(["dataset", "method"])["solver"]
    assert cells[("ecoli", "SVMrbf")] == "libsvm" and cells[("arrhythmia", "SVMrbf")] == "onedal"  # each cell its own
    assert "(solvers: SVMrbf: LIBSVM and oneDAL (mixed))" in table_title(SPECS["eem_table5"], mixed, "best-of-grid")
    # The written table carries it in its heading.
    store = ResultStore(tmp_path / "res")
    store.append(hand_made() + svm + onedal)
    store.close()
    build_tables([tmp_path / "res"], tmp_path / "t", formats=("md",))
    assert "LIBSVM and oneDAL (mixed)" in (tmp_path / "t" / "eem_table5_time.md").read_text().splitlines()[0]
    # Issue 52: models of another paper in the same records (ESMM's SMM on a KEEL set, not in EEM Table 5) are
    # not named in this table's heading.
    smm = [rec("keel-glass2", "SMM", {"C": 1.0}, f, 0.9, estimator="SMM") for f in (0, 1)]
    assert time_table(hand_made() + svm + smm).attrs["solvers"] == {"SVMrbf": ["libsvm"]}


def test_tables_written_with_provenance_and_rebuild_identically(tmp_path):
    store = ResultStore(tmp_path / "res")
    store.append(hand_made())
    store.close()
    first = build_tables([tmp_path / "res"], tmp_path / "t1", formats=("md", "csv", "latex"))
    second = build_tables([tmp_path / "res"], tmp_path / "t2", formats=("md", "csv", "latex"))
    assert [p.name for p in first] == [p.name for p in second]
    for a, b in zip(first, second, strict=False):
        assert a.read_bytes() == b.read_bytes(), a.name
    md = (tmp_path / "t1" / "eem_table4_gmean.md").read_text()
    # (The config and commit lines come from a run file, which a folder of records a script wrote has not: the
    # committed tables, rebuilt byte for byte in test_readers, carry them.)
    # hand_made's records: 4 + 2 + 2 + 2.
    assert md.startswith("# EEM Table 4") and f"results: {tmp_path / 'res'} (10 records" in md
    assert "85.0±7.1 (-1.9)" in md
    t5 = (tmp_path / "t1" / "eem_table5_time.md").read_text()
    assert "> 600" in t5
    csv = (tmp_path / "t1" / "eem_table4_gmean.csv").read_text()
    assert csv.startswith("# EEM Table 4") and '{""n_hidden"": 50}' in csv


def test_provenance_names_the_range_of_repeats_when_cells_differ(tmp_path):
    # One cell (australian WELMrbf) at 2 repeats, the others at 1 (the extreme store: the ELM family at 5, SVM at 1):
    # the header reads "1 to 2", not the largest count.
    store = ResultStore(tmp_path / "res")
    extra = [dict(r, repeat=1) for r in hand_made() if r["model"] == "WELMrbf" and r["dataset"] == "australian"]
    assert extra
    store.append(hand_made() + extra)
    store.close()
    build_tables([tmp_path / "res"], tmp_path / "t", formats=("md",))
    assert "records, 1 to 2 repeat(s) of the CV;" in (tmp_path / "t" / "eem_table4_gmean.md").read_text()
    whole = ResultStore(tmp_path / "whole")
    whole.append(hand_made())
    whole.close()
    build_tables([tmp_path / "whole"], tmp_path / "t2", formats=("md",))
    assert "records, 1 repeat(s) of the CV;" in (tmp_path / "t2" / "eem_table4_gmean.md").read_text()


def test_correlation_table_equals_scipy_spearmanr():
    rng = np.random.RandomState(0)
    dcs = [rng.rand(10), rng.rand(10)]
    ratio = [d + 0.3 * rng.rand(10) for d in dcs]
    records = [rec("heart", "dcs-correlation", {"n_hidden": 10}, layer, dcs=list(dcs[layer]), ratio=list(ratio[layer]))
               for layer in (0, 1)]
    t = correlation_table(records).set_index(["dataset", "h"])
    expected = stats.spearmanr(np.concatenate(dcs), np.concatenate(ratio)).statistic
    assert t.loc[("heart", 10), "spearman"] == pytest.approx(expected)
    # Published EEM Table 1: heart, h = 10 -> 0.829.
    assert t.loc[("heart", 10), "published"] == 0.829 and t.loc[("heart", 10), "pairs"] == 20


def test_correlation_table_variance_share_is_the_median_share_of_the_variance_term():
    # D_CS = v + ratio with v = ln(((S+ + S-)/2)/sqrt(S+ S-)) >= 0; choosing the share s = v / D_CS
    # per pair gives D_CS = ratio / (1 - s), so the expected column is median(s) by construction.
    rng = np.random.RandomState(1)
    ratio = rng.rand(2, 9) + 0.1
    share = rng.rand(2, 9) * 0.9
    dcs = ratio / (1 - share)
    records = [rec("ionosphere", "dcs-correlation", {"n_hidden": 100}, layer,
                   dcs=list(dcs[layer]) + [float("inf")], ratio=list(ratio[layer]) + [1.0]) for layer in (0, 1)]
    t = correlation_table(records).set_index(["dataset", "h"])
    # The infinite pair (a class projected onto one point) is left out, as it is from rho.
    assert t.loc[("ionosphere", 100), "var_share"] == pytest.approx(np.median(share))
    assert t.loc[("ionosphere", 100), "pairs"] == 18


def test_variance_share_note_is_scipy_spearman_over_measured_cells():
    from eemrepro.papers.eem import variance_share_notes

    t1 = pd.DataFrame({"spearman": [0.99, 0.95, 0.7, 0.2, np.nan], "var_share": [0.05, 0.3, 0.1, 0.9, np.nan]})
    notes = variance_share_notes(t1)
    # Closed form: ranks (4, 3, 2, 1) and (1, 3, 2, 4), sum d^2 = 18, rho = 1 - 6 * 18 / (4 * 15) = -0.8.
    expected = stats.spearmanr([0.99, 0.95, 0.7, 0.2], [0.05, 0.3, 0.1, 0.9]).statistic
    assert notes[-1] == f"Spearman of rho and var. share over the 4 measured cells: {expected:.2f}"
    assert expected == pytest.approx(-0.8)


def test_check_passes_fails_and_counts():
    records = hand_made_with_a_failed_cell()
    cells = check(records)
    by = {(c.table, c.dataset, c.method): c for c in cells}
    # australian EEMrbf: |85.0 - 86.9| = 1.9 <= max(2, 4.4): pass.
    assert by[("eem_table4", "australian", "EEMrbf")].outcome == "pass"
    # australian WELMrbf: |86.0 - 85.8| = 0.2: pass. sonar EEMrbf ran and has no value: missing.
    assert by[("eem_table4", "sonar", "EEMrbf")].outcome == "missing"
    # A cell with no record at all (sonar WELMrbf, every cell of ionosphere): not run here, skipped.
    assert by[("eem_table4", "sonar", "WELMrbf")].outcome == "skipped"
    assert by[("eem_table4", "ionosphere", "EEMrbf")].outcome == "skipped"
    assert by[("eem_table4", "ionosphere", "EEMrbf")].reason == "not run here"
    # The paper did not report LS-SVM on forest cover: skipped and counted.
    assert by[("eem_table4", "forest-cover", "LS-SVMrbf")].outcome == "skipped"
    line = summary_line(cells)
    # Counted, the cells with records: australian EEMrbf and WELMrbf and abalone7 EEMrbf (pass), abalone7 SVMrbf
    # (past the time budget) and sonar EEMrbf (failed): missing. Every other published cell is skipped.
    counted = {(c.dataset, c.method): c.outcome for c in cells if c.outcome != "skipped"}
    assert counted == {("australian", "EEMrbf"): "pass", ("australian", "WELMrbf"): "pass",
                       ("abalone7", "EEMrbf"): "pass", ("abalone7", "SVMrbf"): "missing",
                       ("sonar", "EEMrbf"): "missing"}
    assert line == f"within tolerance: 3 of 5 cells ({len(cells) - 5} skipped)"
    strict = Tolerance()
    strict.tables["eem_table4"] = {"abs": 1.0, "use_std": False}
    assert {c.dataset: c.outcome for c in check(records, strict) if c.method == "EEMrbf"}["australian"] == "fail"


def test_tolerance_file_pins_known_differences(tmp_path):
    spec = tmp_path / "tol.yaml"
    spec.write_text("""missing: skip
tables:
  eem_table4: {abs: 1.0, use_std: false}
cells:
  - {table: eem_table4, dataset: australian, method: EEMrbf, abs: 2.5, reason: known}
""")
    cells = check(hand_made(), load_tolerance(spec))
    assert all(c.outcome in ("pass", "skipped") for c in cells)
    assert summary_line(cells) == f"within tolerance: 3 of 3 cells ({len(cells) - 3} skipped)"
    bad = tmp_path / "bad.yaml"
    bad.write_text("tables: {eem_table9: {abs: 1}}\n")
    with pytest.raises(ValueError, match="tables.eem_table9': unknown table"):
        load_tolerance(bad)


def test_check_cli_exit_codes_and_last_line(tmp_path):
    store = ResultStore(tmp_path / "res")
    store.append(hand_made_with_a_failed_cell())
    store.close()
    result = runner.invoke(app, ["check", str(tmp_path / "res")])
    assert result.exit_code == 1
    lines = result.stdout.strip().splitlines()
    assert "MISSING eem_table4 sonar EEMrbf: no reproduced value (published 82.8)" in lines
    assert lines[-1].startswith("within tolerance: 3 of ")
    report = runner.invoke(app, ["check", str(tmp_path / "res"), "--report-only"])
    assert report.exit_code == 0 and report.stdout.strip().splitlines()[-1] == lines[-1]
    tol = tmp_path / "t.yaml"
    tol.write_text("missing: skip\n")
    assert runner.invoke(app, ["check", str(tmp_path / "res"), "--tolerance", str(tol)]).exit_code == 0
    assert runner.invoke(app, ["check", str(tmp_path / "res"), "--tolerance", "gmean=0.01"]).exit_code == 1
    assert runner.invoke(app, ["check", str(tmp_path / "res"), "--tolerance", "bogus=1"]).exit_code == 2


def test_pinned_differences_pass_now_and_catch_a_later_drift(tmp_path):
    store = ResultStore(tmp_path / "res")
    store.append(hand_made_with_a_failed_cell())
    store.close()
    pins, strict = tmp_path / "pins.yaml", tmp_path / "strict.yaml"
    strict.write_text("tables: {eem_table4: {abs: 1.0, use_std: false}}\n")
    out = runner.invoke(app, ["check", str(tmp_path / "res"), "--tolerance", str(strict), "--pin", str(pins)])
    assert out.exit_code == 0, out.stdout
    import yaml

    raw = yaml.safe_load(pins.read_text())
    by = {(c["dataset"], c.get("method")): c for c in raw["cells"]}
    # australian EEMrbf: |85.0 - 86.9| = 1.9 > 1 -> pinned at 1.9 + 0.2 margin.
    assert by[("australian", "EEMrbf")]["abs"] == pytest.approx(2.1)
    assert by[("sonar", "EEMrbf")]["skip"] is True  # no reproduced value
    assert ("australian", "WELMrbf") not in by  # within tolerance: not pinned
    assert runner.invoke(app, ["check", str(tmp_path / "res"), "--tolerance", str(pins)]).exit_code == 0
    # A hand-written reason survives regeneration.
    pins.write_text(pins.read_text().replace("known difference, see REPRODUCTION.md", "because", 1))
    runner.invoke(app, ["check", str(tmp_path / "res"), "--tolerance", str(strict), "--pin", str(pins)])
    assert yaml.safe_load(pins.read_text())["cells"][0]["reason"] == "because"
    # Regenerating with the pin file itself as --tolerance keeps every pin (under its
    # own cell rules they all pass; the pins come from the table rules alone).
    before = yaml.safe_load(pins.read_text())
    out = runner.invoke(app, ["check", str(tmp_path / "res"), "--tolerance", str(pins), "--pin", str(pins)])
    assert out.exit_code == 0, out.stdout
    assert yaml.safe_load(pins.read_text()) == before
    # The same pins fail a result that drifted further (85.0 -> 84.5: delta 2.4 > 2.1).
    drifted = [shifted(r, -0.005) if r["model"] == "EEMrbf" and r["dataset"] == "australian"
               else r for r in hand_made()]
    assert any(c.outcome == "fail" for c in check(drifted, load_tolerance(pins)))


def test_figures_are_written_and_non_empty(tmp_path):
    pytest.importorskip("matplotlib")
    from eemrepro.reports import scatter_figure, sweep_figure

    records = [rec("heart", "EEMrbf", {"n_hidden": h}, f, 0.7 + 0.001 * h + 0.01 * f) for h in range(5, 105, 5) for f in (0, 1)]
    paths = sweep_figure(records, tmp_path / "fig3", "EEMrbf", "n_hidden") + scatter_figure(gmean_table(hand_made()), tmp_path / "scatter")
    assert sorted(p.suffix for p in paths) == [".png", ".png", ".svg", ".svg"]
    assert all(p.stat().st_size > 1000 for p in paths)
    assert (tmp_path / "fig3.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_two_folders_with_the_same_cell_are_refused_and_figures_can_be_chosen(tmp_path):
    pytest.importorskip("matplotlib")
    for name in ("a", "b"):
        store = ResultStore(tmp_path / name)
        store.append(hand_made())
        store.close()
    out = runner.invoke(app, ["tables", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "t")])
    assert out.exit_code != 0 and "both hold" in out.output and "EEMrbf on abalone7" in out.output
    fig = runner.invoke(app, ["figures", str(tmp_path / "a"), "--figure", "scatter", "--out", str(tmp_path / "f")])
    # (with the manifest that says which results each figure was drawn from)
    assert fig.exit_code == 0 and sorted(p.name for p in (tmp_path / "f").iterdir()) == [
        "figures-manifest.json", "gmean_reproduced_vs_published.png", "gmean_reproduced_vs_published.svg"]
    # hand_made has EEMrbf at two values of h only: Figure 3 cannot be drawn from it.
    bad = runner.invoke(app, ["figures", str(tmp_path / "a"), "--figure", "stability", "--out", str(tmp_path / "g")])
    assert bad.exit_code != 0 and ">= 20 values of n_hidden" in bad.output


def test_wins_draws_losses_ranks_and_tests_by_hand():
    import pandas as pd

    from eemrepro.reports import ranks_and_tests, wins_draws_losses

    # Three data sets; EEMrbf beats WELMrbf on two and draws (at one decimal) on one.
    table = pd.DataFrame([
        {"dataset": d, "method": m, "gmean": v}
        for d, vals in {"a": (80.0, 85.0, 70.0), "b": (60.04, 60.0, 50.0), "c": (90.0, 95.0, 99.0)}.items()
        for m, v in zip(("WELMrbf", "EEMrbf", "SVMrbf"), vals, strict=False)
    ])
    wdl = wins_draws_losses(table, [("WELMrbf", "EEMrbf")]).set_index("pair").loc["EEMrbf vs WELMrbf"]
    assert (wdl["wins"], wdl["draws"], wdl["losses"]) == (2, 1, 0)
    out = ranks_and_tests(table)
    # Ranks per data set (1 = best): a: EEM 1, WELM 2, SVM 3; b: WELM 1, EEM 2, SVM 3; c: SVM 1, EEM 2, WELM 3.
    assert out["average_rank"] == pytest.approx({"EEMrbf": 5 / 3, "WELMrbf": 2.0, "SVMrbf": 7 / 3})
    expected = stats.friedmanchisquare(table[table.method == "WELMrbf"].gmean.values,
                                       table[table.method == "EEMrbf"].gmean.values,
                                       table[table.method == "SVMrbf"].gmean.values)
    assert out["friedman_p"] == pytest.approx(expected.pvalue)
    # Nemenyi CD = q_0.05(k=3, inf) / sqrt(2) * sqrt(k (k+1) / (6 N)) = 2.343 * sqrt(12 / 18).
    assert out["nemenyi_cd"] == pytest.approx(2.3437 * math.sqrt(12 / 18), rel=1e-3)


def test_check_against_a_reference_reproduction(tmp_path):
    base = hand_made()
    same = check(base, reference=base)
    assert all(c.outcome in ("pass", "skipped") for c in same) and summary_line(same).startswith("within tolerance: 3 of 3")
    drifted = [shifted(r, -0.05) if r["model"] == "EEMrbf" and r["metrics"]["gmean"] else r for r in base]
    spec = tmp_path / "strict.yaml"
    spec.write_text("tables: {eem_table4: {abs: 1.0, use_std: false}}\n")
    strict = load_tolerance(spec)
    cells = {(c.dataset, c.method): c.outcome for c in check(drifted, strict, reference=base)}
    # EEMrbf dropped by 5 points on both data sets: beyond 1 point; WELMrbf unchanged.
    assert cells[("australian", "EEMrbf")] == "fail" and cells[("australian", "WELMrbf")] == "pass"


def test_figures_rebuild_byte_for_byte(tmp_path):
    pytest.importorskip("matplotlib")
    from eemrepro.reports import scatter_figure

    a = scatter_figure(gmean_table(hand_made()), tmp_path / "a")
    b = scatter_figure(gmean_table(hand_made()), tmp_path / "b")
    for x, y in zip(a, b, strict=True):
        assert x.read_bytes() == y.read_bytes(), x.name


def test_tables_go_beside_their_store_and_never_overwrite_another_stores_tables(tmp_path):
    from typer.testing import CliRunner

    from eemrepro.cli import app

    for name, records in (("res", hand_made()), ("other", hand_made()[:4])):
        store = ResultStore(tmp_path / name)
        store.append(records)
        store.close()
    runner = CliRunner()
    res = runner.invoke(app, ["tables", str(tmp_path / "res")])
    assert res.exit_code == 0, res.output
    beside = tmp_path / "res" / "tables"
    assert (beside / "eem_table4_gmean.md").is_file()
    before = {p.name: p.read_bytes() for p in beside.iterdir()}
    # Rebuilding from the same results overwrites its own files, byte for byte the same.
    assert runner.invoke(app, ["tables", str(tmp_path / "res")]).exit_code == 0
    assert {p.name: p.read_bytes() for p in beside.iterdir()} == before
    # Another store's tables into that folder: refused, naming the files and the results they came from.
    res = runner.invoke(app, ["tables", str(tmp_path / "other"), "--out", str(beside)])
    assert res.exit_code == 1 and "would overwrite" in res.output and str(tmp_path / "res") in res.output
    assert "--force" in res.output and {p.name: p.read_bytes() for p in beside.iterdir()} == before
    assert not list(beside.glob(".tables-*"))  # nothing left half-written
    # A file the command did not write is never taken over silently either.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "check.md").write_text("my notes\n")
    res = runner.invoke(app, ["tables", str(tmp_path / "res"), "--out", str(tmp_path / "mine")])
    assert res.exit_code == 1 and "results it does not know" in res.output
    assert (tmp_path / "mine" / "check.md").read_text() == "my notes\n"
    res = runner.invoke(app, ["tables", str(tmp_path / "other"), "--out", str(beside), "--force"])
    assert res.exit_code == 0 and (beside / "check.md").read_bytes() != before["check.md"]
    # Several folders need a named output.
    res = runner.invoke(app, ["tables", str(tmp_path / "res"), str(tmp_path / "other")])
    assert res.exit_code == 1 and "--out" in res.output


def test_check_of_a_store_of_ones_own_exits_0(tmp_path):
    # A user's store (here the CI quick baseline: the EEM paper's data sets, a few of its models, a small grid)
    # compares the cells it ran; the paper's other cells are not run here, not missing.
    from pathlib import Path

    baseline = Path(__file__).resolve().parents[2] / ".ci" / "quick-baseline"
    res = runner.invoke(app, ["check", str(baseline)])
    assert res.exit_code == 0, res.stdout
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("within tolerance: ") and "MISSING" not in res.stdout


@pytest.mark.parametrize("shift, with_std, without_std", [
    # australian EEMrbf: reproduced 85.0 by hand_made, published 86.9 with std 4.4 (EEM Table 4).
    (-0.011, "pass", "fail"),  # 83.9: |delta| 3.0 is past abs 2 but within the published std 4.4
    (-0.026, "fail", "fail"),  # 82.4: |delta| 4.5 is past both
    (+0.028, "pass", "pass"),  # 87.8: |delta| 0.9 is within abs 2 (the larger of the two limits is the rule)
])
def test_the_published_std_rule_widens_the_limit_to_the_papers_std(shift, with_std, without_std):
    records = [shifted(r, shift) if (r["dataset"], r["model"]) == ("australian", "EEMrbf") else r
               for r in hand_made()]
    outcome = {}
    for use_std in (True, False):
        tol = Tolerance()
        tol.tables["eem_table4"] = {"abs": 2.0, "use_std": use_std}
        (cell,) = [c for c in check(records, tol) if (c.dataset, c.method) == ("australian", "EEMrbf")]
        outcome[use_std] = cell.outcome
    assert outcome == {True: with_std, False: without_std}


# -- check's rules, each pinned by its own case (what mutation testing found unpinned; benchmarks/MUTATION.md) --
def _correlation_records(shift=0.0):
    """heart, h=10: two layers whose pairs give scipy's Spearman rho; ``shift`` moves the ratios of layer 1."""
    rng = np.random.RandomState(0)
    dcs = [rng.rand(10), rng.rand(10)]
    ratio = [d + 0.3 * rng.rand(10) for d in dcs]
    ratio[1] = ratio[1] + shift * np.arange(10)[::-1]
    return [rec("heart", "dcs-correlation", {"n_hidden": 10}, layer, dcs=list(dcs[layer]), ratio=list(ratio[layer]))
            for layer in (0, 1)], dcs, ratio


def test_check_compares_a_correlation_cell_by_h_with_its_own_rule_and_pins():
    records, dcs, ratio = _correlation_records()
    rho = stats.spearmanr(np.concatenate(dcs), np.concatenate(ratio)).statistic
    cells = [c for c in check(records) if c.table == "eem_table1" and c.dataset == "heart"]
    (cell,) = [c for c in cells if c.method == "h=10"]
    # Published heart h=10: 0.829; EEM Table 1's rule is |delta| <= 0.1.
    assert cell.reproduced == pytest.approx(rho) and cell.published == 0.829 and cell.tolerance == 0.1
    assert cell.outcome == ("pass" if abs(rho - 0.829) <= 0.1 else "fail")
    # The other published h of heart were not run here: skipped with the reason, never failed.
    assert {c.method: c.outcome for c in cells if c.method != "h=10"} == {f"h={h}": "skipped"
                                                                          for h in (1, 100, 200, 500)}
    assert all(c.reason == "not run here" for c in cells if c.method != "h=10")
    # A pin for h=10 alone changes that cell, and only it.
    tol = Tolerance(cells=[{"table": "eem_table1", "dataset": "heart", "h": 10, "abs": 0.9, "reason": "r"}])
    pinned = {c.method: c for c in check(records, tol) if c.table == "eem_table1" and c.dataset == "heart"}
    assert pinned["h=10"].tolerance == 0.9 and pinned["h=10"].reason == "r" and pinned["h=10"].outcome == "pass"
    tol = Tolerance(cells=[{"table": "eem_table1", "dataset": "heart", "h": 100, "abs": 0.9}])
    heart = {c.method: c.tolerance for c in check(records, tol) if c.table == "eem_table1" and c.dataset == "heart"}
    assert heart["h=10"] == 0.1 and heart["h=100"] == 0.9


def test_a_cell_pin_without_a_method_holds_for_every_method_of_its_data_set():
    tol = Tolerance(cells=[{"table": "eem_table4", "dataset": "australian", "abs": 9.0, "reason": "why"}])
    cells = {c.method: c for c in check(hand_made(), tol) if c.dataset == "australian"}
    assert cells["EEMrbf"].tolerance == cells["WELMrbf"].tolerance == 9.0 and cells["EEMrbf"].reason == "why"
    # A pin naming a method leaves the others at the table's rule (abs 2, or the published std where larger).
    tol = Tolerance(cells=[{"table": "eem_table4", "dataset": "australian", "method": "EEMrbf", "abs": 9.0}])
    cells = {c.method: c for c in check(hand_made(), tol) if c.dataset == "australian"}
    # WELMrbf on australian: published 85.8 with std 4.9 (EEM Table 4), so its limit is max(2, 4.9).
    assert cells["EEMrbf"].tolerance == 9.0 and cells["WELMrbf"].tolerance == pytest.approx(4.9)
    assert cells["WELMrbf"].reason is None


def test_a_failing_cells_line_gives_reproduced_published_and_the_signed_delta():
    from eemrepro.reports._check import CellResult

    line = CellResult("eem_table4", "sonar", "SVMrbf", 80.0, 86.5, 2.0, "fail").line()
    assert line == "FAIL eem_table4 sonar SVMrbf: reproduced 80, published 86.5, delta -6.5 exceeds tolerance 2"
    line = CellResult("eem_table4", "sonar", "SVMrbf", float("nan"), 86.5, 2.0, "missing").line()
    assert line == "MISSING eem_table4 sonar SVMrbf: no reproduced value (published 86.5)"


def test_the_default_rules_and_their_words():
    from eemrepro.reports._check import defaults, describe_rule

    assert defaults()["eem_table4"] == {"abs": 2.0, "use_std": True}
    assert defaults()["eem_table1"] == {"abs": 0.1, "use_std": False}
    assert describe_rule(SPECS["eem_table4"]) == "|delta| <= max(2, published std)"
    assert describe_rule(SPECS["eem_table1"]) == "|delta| <= 0.1"


def test_pins_are_the_delta_plus_the_tables_margin_rounded_up():
    from eemrepro.reports import pin_differences
    from eemrepro.reports._check import CellResult

    cells = [CellResult("eem_table4", "sonar", "SVMrbf", 80.0, 86.53, 2.0, "fail"),   # margin 0.2 (default)
             CellResult("eem_table1", "heart", "h=10", 0.5, 0.829, 0.1, "fail"),      # margin 0.02 (EEM Table 1)
             CellResult("eem_table4", "abalone7", "SVMrbf", None, 70.0, 2.0, "missing")]
    pins = pin_differences(cells)["cells"]
    assert pins[0] == {"table": "eem_table4", "dataset": "sonar", "method": "SVMrbf", "abs": 6.73,
                       "reason": "known difference, see REPRODUCTION.md"}
    assert pins[1]["h"] == 10 and pins[1]["abs"] == pytest.approx(0.35)  # ceil((0.329 + 0.02) * 100) / 100
    assert pins[2] == {"table": "eem_table4", "dataset": "abalone7", "method": "SVMrbf", "skip": True,
                       "reason": "known difference, see REPRODUCTION.md"}
    kept = pin_differences(cells, previous={"cells": [{"table": "eem_table1", "dataset": "heart", "h": 10,
                                                       "reason": "kept"}]})["cells"]
    assert kept[1]["reason"] == "kept" and kept[0]["reason"] == "known difference, see REPRODUCTION.md"


@pytest.mark.parametrize("text, message", [
    ("[1, 2]\n", "{f}: a tolerance file is a mapping with keys missing, tables, cells"),
    ("extra: 1\n", "{f}: unknown key(s) ['extra']; valid: missing, tables, cells"),
    ("missing: maybe\n", "{f}: key 'missing' must be fail or skip, got 'maybe'"),
    ("tables: {nope: {abs: 1}}\n", "{f}: key 'tables.nope': unknown table; valid: "),
    ("tables: {eem_table4: {abz: 1}}\n", "{f}: key 'tables.eem_table4': unknown key(s) ['abz']"),
    ("cells: [{table: eem_table4}]\n", "{f}: key 'cells.0': needs table and dataset; unknown []"),
    ("cells: [{dataset: heart, method: M}]\n", "{f}: key 'cells.0': needs table and dataset; unknown []"),
    ("cells: [{table: eem_table4, dataset: heart, wat: 1}]\n",
     "{f}: key 'cells.0': needs table and dataset; unknown ['wat']"),
    ("cells: [{table: nope, dataset: heart}]\n", "{f}: key 'cells.0.table': unknown table 'nope'"),
])
def test_a_bad_tolerance_file_names_the_file_and_the_key(tmp_path, text, message):
    from eemrepro.reports import ToleranceError

    path = tmp_path / "tol.yaml"
    path.write_text(text)
    with pytest.raises(ToleranceError) as err:
        load_tolerance(str(path))
    assert str(err.value).startswith(message.format(f=path)), str(err.value)


def test_an_inline_tolerance_sets_every_table_of_its_metric():
    from eemrepro.reports import ToleranceError

    tol = load_tolerance("gmean=3, spearman=0.25")
    assert tol.tables["eem_table4"]["abs"] == 3.0 and tol.tables["eem_table1"]["abs"] == 0.25
    assert tol.tables["eem_table4"]["use_std"] is True  # the rest of the table's rule stays
    with pytest.raises(ToleranceError, match=r"^--tolerance 'gmean=x': 'gmean=x' is not key=number$"):
        load_tolerance("gmean=x")
    with pytest.raises(ToleranceError, match=r"^--tolerance 'gmaen=3': unknown key 'gmaen'; use one of \["):
        load_tolerance("gmaen=3")
    with pytest.raises(ToleranceError, match=r"^--tolerance 'loose': neither a file nor key=value pairs$"):
        load_tolerance("loose")


def test_check_reads_what_it_is_asked_and_marks_an_unfinished_cell_missing():
    records = hand_made()
    assert {c.table for c in check(records, tables=["eem_table4"])} == {"eem_table4"}
    by = {(c.dataset, c.method): c for c in check(records) if c.table == "eem_table4"}
    assert by[("australian", "EEMrbf")].outcome == "pass"
    # The store says australian EEMrbf lacks a unit: its value is not a result, so the cell is missing.
    by = {(c.dataset, c.method): c for c in check(records, unfinished={("australian", "EEMrbf")})
          if c.table == "eem_table4"}
    assert by[("australian", "EEMrbf")].outcome == "missing"


def test_a_skipped_or_pinned_cell_keeps_its_numbers_and_reason():
    tol = Tolerance(cells=[{"table": "eem_table4", "dataset": "australian", "method": "EEMrbf", "skip": True,
                            "reason": "why"},
                           {"table": "eem_table4", "dataset": "australian", "method": "WELMrbf", "use_std": False}])
    by = {c.method: c for c in check(hand_made(), tol) if c.table == "eem_table4" and c.dataset == "australian"}
    skipped = by["EEMrbf"]
    assert skipped.outcome == "skipped" and skipped.reason == "why"
    assert skipped.reproduced == pytest.approx(85.0) and skipped.published == 86.9 and skipped.tolerance == 4.4
    # use_std: false in a pin: the limit is abs alone (2), not WELMrbf's published std 4.9.
    assert by["WELMrbf"].tolerance == 2.0 and by["WELMrbf"].reproduced == pytest.approx(86.0)


def test_a_correlation_cell_of_one_layer_is_compared_and_a_pin_without_h_holds_for_every_h():
    records, dcs, ratio = _correlation_records()
    one = records[:1]  # a single layer: still run here
    (cell,) = [c for c in check(one) if c.table == "eem_table1" and c.dataset == "heart" and c.method == "h=10"]
    assert cell.outcome in ("pass", "fail")
    assert cell.reproduced == pytest.approx(stats.spearmanr(dcs[0], ratio[0]).statistic)
    tol = Tolerance(cells=[{"table": "eem_table1", "dataset": "heart", "abs": 0.7}])
    assert {c.tolerance for c in check(records, tol) if c.table == "eem_table1" and c.dataset == "heart"} == {0.7}


def test_a_pin_of_a_table_no_paper_registers_gets_the_default_margin_and_halves_round_up():
    from eemrepro.reports import pin_differences
    from eemrepro.reports._check import CellResult

    cells = [CellResult("other_table", "d", "M", 10.0, 11.0, 0.5, "fail"),   # margin 0.2: 1.2
             CellResult("eem_table4", "d", "M", 80.0, 86.525, 2.0, "fail")]  # 6.725 rounds up to 6.73
    pins = pin_differences(cells)["cells"]
    assert pins[0]["abs"] == pytest.approx(1.2) and pins[1]["abs"] == pytest.approx(6.73)


def test_a_tolerance_file_that_is_not_yaml_names_the_file(tmp_path):
    from eemrepro.reports import ToleranceError

    path = tmp_path / "tol.yaml"
    path.write_text("tables: {eem_table4: [\n")
    with pytest.raises(ToleranceError, match=str(path)):
        load_tolerance(str(path))


def test_check_covers_every_table_the_records_hold_and_a_reference_only_metric_tables():
    records = hand_made() + _correlation_records()[0]
    # Records of two kinds: the metric tables and the correlation table are all checked, in one call.
    assert {"eem_table4", "eem_table1"} <= {c.table for c in check(records)}
    # Against a reference reproduction only the metric tables of the run's selection are compared.
    assert {c.table for c in check(records, reference=records)} == {"eem_table4"}


def test_check_counts_every_published_cell_and_keeps_numbers_of_cells_not_run():
    published = pd.read_csv(Path(eemrepro.papers.__file__).parent / "published" / "eem_table4_gmean.csv")
    cells = [c for c in check(hand_made()) if c.table == "eem_table4"]
    assert len(cells) == len(published)  # the paper's whole table: every cell counted, run or not
    (not_run,) = [c for c in cells if (c.dataset, c.method) == ("sonar", "WELMrbf")]
    row = published[(published["dataset"] == "sonar") & (published["method"] == "WELMrbf")].iloc[0]
    assert not_run.outcome == "skipped" and not_run.published == row["gmean_mean"]
    # A missing cell keeps the reason of its pin.
    tol = Tolerance(cells=[{"table": "eem_table4", "dataset": "sonar", "method": "EEMrbf", "reason": "known"}])
    (missing,) = [c for c in check(hand_made_with_a_failed_cell(), tol)
                  if (c.table, c.dataset, c.method) == ("eem_table4", "sonar", "EEMrbf")]
    assert missing.outcome == "missing" and missing.reason == "known"


def test_a_reference_without_records_of_the_kind_compares_with_nothing():
    # The reference holds only correlation records: no metric cell has a reference value, so none is judged
    # (never the published values in its place).
    cells = [c for c in check(hand_made(), reference=_correlation_records()[0]) if c.table == "eem_table4"]
    assert cells and all(c.outcome == "skipped" for c in cells)


def test_a_reference_check_compares_every_papers_plain_metric_table():
    # EEM records with D_CS criteria (so EEM Table 6, a selection table, applies and is left out against a
    # reference) and LS-SVM ensemble records on wine (Hwang's Table 4.1, registered after it): both plain
    # metric tables are compared with the reference, the selection tables after the first are not the end.
    eem = [dict(r, criteria={"dcs_gaussian": 1.0, "dcs_kde": 1.0}) for r in hand_made()]
    wine = [rec("wine", "LS-SVM", {"C": 1.0}, f, None, metrics={"gmean": None, "bac": None, "auc": None,
                                                              "error": 0.03 + 0.01 * f}) for f in (0, 1)]
    tables = {c.table for c in check(eem + wine, reference=eem + wine)}
    assert {"eem_table4", "lssvm_ensemble_table41"} <= tables
    assert not tables & {"eem_table6_gaussian", "eem_table6_kde"}


def test_a_facet_moves_its_value_from_the_point_into_the_model_name():
    # Worked by hand: MELM's points name a classifier, SVM's do not (its rows keep their name and point). Each
    # model becomes one model per classifier; an unfinished MELM cell becomes one cell per classifier it ran.
    from eemrepro.reports._tables import _facet

    rows = [("d1", "MELM", '{"classifier": "svm", "k": 2}'), ("d1", "MELM", '{"classifier": "knn", "k": 2}'),
            ("d1", "MELM", '{"classifier": "svm", "k": 1}'), ("d2", "SVM", '{"C": 1.0}'),
            ("d2", "GEM", '{"classifier": "knn"}')]
    df = pd.DataFrame(rows, columns=["dataset", "model", "point"]).astype({"model": "category", "point": "category"})
    df["fold"] = range(len(df))
    out, cells = _facet(df, "classifier", {("d1", "MELM"), ("d2", "SVM")})
    assert list(out["model"].astype(object)) == ["MELM + svm", "MELM + knn", "MELM + svm", "SVM", "GEM + knn"]
    assert list(out["point"].astype(object)) == ['{"k": 2}', '{"k": 2}', '{"k": 1}', '{"C": 1.0}', "{}"]
    assert list(out["fold"]) == [0, 1, 2, 3, 4]
    # Sorted as the names sort, as the rows are ordered by model when a cell is selected.
    assert list(out["model"].cat.categories) == sorted({"MELM + svm", "MELM + knn", "SVM", "GEM + knn"})
    assert cells == {("d1", "MELM + svm"), ("d1", "MELM + knn"), ("d2", "SVM")}
