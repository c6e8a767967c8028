"""How the papers' models do on *your* data (issue 59): every store gets a table, and what the user reads is right.

A user writes a CSV of their own, a config naming it with their classifier, scikit-learn's logistic regression
and a model copied from ``configs/uci.yaml``, runs it, and asks ``tables`` and ``report`` for the results. The
expected numbers come from the stored records, recomputed here with numpy (each cell's mean over its test
folds at the best grid point), from scipy (``rankdata``, ``friedmanchisquare``) and from Demšar (2006), Table 5
(the Nemenyi q_0.05 for k models).
"""

import os
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app
from tests.helpers import benchmark_store, blobs_frame, html_table_rows, user_folder
from tests.helpers import run_config as _run

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
#: Demšar (2006), Table 5(a): the Nemenyi critical values q_0.05 for k = 3, 4 classifiers.
Q05 = {3: 2.343, 4: 2.569}


def _uci_line(model):
    """A model's line of configs/uci.yaml, as a user copies it into their own config."""
    return next(line for line in (ROOT / "configs" / "uci.yaml").read_text().splitlines()
                if line.strip().startswith(f"{model}:"))


LOCAL = ("one", "two", "three", "four")


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """A store of four local CSVs x three models: the user's (Centroid), LR, and EEMrbf copied from uci.yaml."""
    folder, out, _ = benchmark_store(tmp_path_factory.mktemp("local"), sizes=(60,) * len(LOCAL), names=LOCAL,
                                     name="local", repeats=2, status_at=3, shift=(0.6, 0.3),
                                     paper_line=_uci_line("EEMrbf"))
    return folder, out


def _cells(store):
    """{(data set, model): (mean, std)} in percent: each cell at the grid point whose mean over the test folds
    is best (the records recomputed with numpy; every point finished on every fold here)."""
    df = read_results(store)
    df = df[df["inner"].isna() & (df["status"] == "ok")]
    out = {}
    for (dataset, model), g in df.groupby(["dataset", "model"]):
        per_point = {p: 100 * np.asarray(v["gmean"], float) for p, v in g.groupby("point")}
        best = max(per_point, key=lambda p: per_point[p].mean())
        out[(dataset, model)] = (per_point[best].mean(), per_point[best].std(ddof=1), best, per_point)
    return out


def test_tables_write_every_data_set_and_model_of_a_store_of_local_data(local, tmp_path):
    """Main wrote only check.md for this store: no table of its numbers anywhere but the run's console."""
    _, out = local
    result = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t"), "--format", "md",
                                 "--format", "csv", "--format", "latex"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "t" / "benchmark_gmean.csv", comment="#")
    assert list(dict.fromkeys(table["dataset"])) == list(LOCAL)  # the config's order
    assert list(dict.fromkeys(table["method"])) == ["Mine", "LR", "EEMrbf"]
    expected = _cells(out)
    assert len(table) == len(expected) == 12
    for r in table.itertuples():
        mean, std, best, per_point = expected[(r.dataset, r.method)]
        # The stored point's mean is the cell (the CSV writes 6 significant digits), and it is the grid's best.
        assert r.gmean == pytest.approx(per_point[r.point].mean(), rel=1e-5)
        assert r.gmean == pytest.approx(mean, rel=1e-5) and r.gmean_std == pytest.approx(std, rel=1e-5)
    # The wide view of the Markdown table: one row per data set, the cell at one decimal.
    md = (tmp_path / "t" / "benchmark_gmean.md").read_text()
    mean, std, _, _ = expected[("two", "LR")]
    row = next(line for line in md.splitlines() if line.startswith("| two "))
    assert f"{mean:.1f}±{std:.1f}" in row and "(" not in row  # no published value: no delta
    assert (tmp_path / "t" / "benchmark_gmean.tex").is_file()

    # The comparison: ranks with scipy's rankdata (1 = best) on the unrounded values, Friedman with scipy's,
    # the Nemenyi CD with Demšar's q for k = 3.
    wide = np.array([[expected[(d, m)][0] for m in ("Mine", "LR", "EEMrbf")] for d in LOCAL])
    ranks = np.mean([stats.rankdata(-row) for row in wide], axis=0)
    text = (tmp_path / "t" / "benchmark_gmean_comparison.md").read_text()
    shown = dict(re.findall(r"^\| (\w+)\s+\|\s+([\d.]+) \|$", text.split("## Average rank", 1)[1].split("##")[0],
                            re.M))
    assert {m: float(v) for m, v in shown.items()} == pytest.approx(dict(zip(("Mine", "LR", "EEMrbf"), ranks,
                                                                             strict=True)), abs=0.005)
    chi2 = stats.friedmanchisquare(*wide.T).statistic
    stat, cd = re.search(r"Friedman chi2 = ([\d.]+), p = [\d.e-]+; Nemenyi critical difference \(alpha 0.05\) = "
                         r"([\d.]+)", text).groups()
    assert float(stat) == pytest.approx(chi2, abs=5e-4)
    assert float(cd) == pytest.approx(Q05[3] * np.sqrt(3 * 4 / (6 * len(LOCAL))), abs=0.006)
    # The user's models against the paper's (EEMrbf, a model of EEM Table 4): W/D/L at the printed decimal.
    assert "Your models: Mine, LR; the papers' and the baselines' models: EEMrbf." in text
    pairs = pd.read_csv(tmp_path / "t" / "benchmark_gmean_comparison.csv")
    shown = np.round(wide, 1)
    for r in pairs.itertuples():
        a, b = shown[:, ["Mine", "LR", "EEMrbf"].index(r.model)], shown[:, 2]
        assert r.baseline == "EEMrbf"
        assert (r.wins, r.draws, r.losses) == ((a > b).sum(), (a == b).sum(), (a < b).sum())


def test_the_report_of_local_data_has_a_benchmark_page_with_its_cd_diagram(local, tmp_path):
    """Main wrote an index.html that was empty for this store."""
    _, out = local
    result = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "site"), "--no-figures"])
    assert result.exit_code == 0, result.output
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'href="benchmark.html"' in index
    page = (tmp_path / "site" / "benchmark.html").read_text()
    # The table in the paper's shape: data sets as rows, models as columns, each cell mean±std at one decimal (as
    # the page's legend says: issue 67).
    expected = _cells(out)
    wide = html_table_rows(page, "benchmark_gmean", "benchmark_gmean_wide")
    assert [r[0] for r in wide] == list(LOCAL)
    assert [[f"{expected[(r[0], m)][0]:.1f}±{expected[(r[0], m)][1]:.1f}" for m in ("Mine", "LR", "EEMrbf")]
            for r in wide] == [r[1:] for r in wide]
    # The critical-difference diagram, with its CD scale bar and label (``cd_figure``'s artists).
    assert "<svg" in page and 'id="benchmark_gmean-cd-bar"' in page and 'id="benchmark_gmean-cd-label"' in page
    # Why Nemenyi and Wilcoxon-Holm can disagree, and how ranks and draws are read, said on the page.
    assert "Nemenyi and Wilcoxon-Holm can disagree on a pair" in page
    assert "Average ranks are taken on the unrounded means" in page


def test_the_cd_scale_bar_is_nemenyis_critical_difference():
    """scikit-posthocs' diagram (before 0.12) draws no scale: the bar is ours, of length CD from the best rank."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("scikit_posthocs")
    import matplotlib.pyplot as plt

    from eemrepro.reports._compare import cd_figure

    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.uniform(60, 90, size=(5, 4)), columns=["A", "B", "C", "D"])
    fig, bar, label = cd_figure(wide)
    cd = Q05[4] * np.sqrt(4 * 5 / (6 * 5))  # Demšar (2006), eq. 5 with Table 5's q: k = 4 models, N = 5 data sets
    x = bar.get_xdata()
    best = wide.rank(axis=1, ascending=False).mean().min()
    assert x[0] == pytest.approx(best) and x[1] - x[0] == pytest.approx(cd, abs=1e-3)
    assert label.get_text() == f"CD = {cd:.2f}"
    plt.close(fig)


def test_a_run_whose_every_fit_failed_shows_its_cells_not_a_figures_hint(tmp_path):
    """Main ended such a run with "draw them with: eemrepro figures", as if it were an embedding run."""
    folder, module = user_folder(tmp_path)
    (folder / "broken.py").write_text(textwrap.dedent("""\
        from sklearn.base import BaseEstimator, ClassifierMixin

        class Broken(ClassifierMixin, BaseEstimator):
            def __init__(self, c=1.0):
                self.c = c

            def fit(self, X, y):
                raise RuntimeError("cannot fit")

            def predict(self, X):
                return X[:, 0]
        """))
    blobs_frame(seed=0, status_at=3, shift=1.0).to_csv(folder / "one.csv", index=False)
    cfg = folder / "broken.yaml"
    cfg.write_text("name: broken\ndatasets: [one]\nlocal_datasets:\n  one: {file: one.csv, target: status}\n"
                   "models:\n  Broken: {estimator: \"broken:Broken\", grid: {c: [0.1, 1.0]}}\n"
                   "protocol: {folds: 3, repeats: 1, seed: 5}\n")
    out = tmp_path / "results"
    result = _run(cfg, out)
    assert "eemrepro figures" not in result.output
    row = next(line for line in result.output.splitlines() if line.startswith("| one "))
    assert row.split("|")[2].strip() == "– †6"  # 3 folds x 2 grid points, each failed: no value, and the count
    result = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "t" / "benchmark_gmean.csv", comment="#")
    assert table[["dataset", "method", "status", "failed_fits"]].values.tolist() == [["one", "Broken", "failed", 6]]


def test_stores_of_different_protocols_combined_are_flagged_on_the_terminal(tmp_path):
    """Main said it inside the written files only: tables, report and check printed nothing of it."""
    folder, module = user_folder(tmp_path)
    blobs_frame(seed=1, status_at=3, shift=1.0).to_csv(folder / "one.csv", index=False)
    for name, model, repeats in (("a", "Mine", 1), ("b", "Other", 2)):
        (folder / f"{name}.yaml").write_text(
            f"name: {name}\ndatasets: [one]\nlocal_datasets:\n  one: {{file: one.csv, target: status}}\n"
            f"models:\n  {model}: {{estimator: \"{module}:Centroid\"}}\n"
            f"protocol: {{folds: 3, repeats: {repeats}, seed: 5}}\n")
        _run(folder / f"{name}.yaml", tmp_path / name)
    a, b = tmp_path / "a", tmp_path / "b"
    warning = f"WARNING, protocols differ: {a} and {b} were made under different protocols (repeats 1 in {a}, " \
              f"2 in {b}"
    for args in (["tables", str(a), str(b), "--out", str(tmp_path / "t")],
                 ["report", str(a), str(b), "--out", str(tmp_path / "r"), "--no-figures"],
                 ["check", str(a), str(b), "--report-only"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert warning in " ".join(result.stderr.split()), args
    # Two stores of one protocol: nothing said.
    result = runner.invoke(app, ["tables", str(a), "--out", str(tmp_path / "t2")])
    assert "WARNING" not in result.stderr


# -- a user's model beside a paper's store --------------------------------------------------------------------------
PAPER = """name: paper
datasets: [heart, sonar]
models:
  EEMrbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [10, 40]}}
  WELMrbf: {estimator: WELM, activation: rbf, grid: {n_hidden: [10, 40]}}
protocol: {folds: 3, repeats: 1, seed: 5, train_dcs: true}
"""


@pytest.fixture(scope="module")
def beside_paper(tmp_path_factory):
    """A checkout's committed store of two EEM Table 4 models (<checkout>/results/paper, its known differences
    pinned in <checkout>/.ci/published-pins.yaml by `check --pin`, as the checkout pins its own), and a user's
    store of their model on heart naming it as baseline."""
    tmp = tmp_path_factory.mktemp("beside")
    checkout = tmp / "checkout"
    checkout.mkdir()
    (checkout / "paper.yaml").write_text(PAPER)
    paper = checkout / "results" / "paper"
    _run(checkout / "paper.yaml", paper)
    pins = checkout / ".ci" / "published-pins.yaml"
    result = runner.invoke(app, ["check", str(paper), "--pin", str(pins)])
    assert result.exit_code == 0, result.output
    folder, module = user_folder(tmp)
    cfg = folder / "mine.yaml"
    # The user's protocol records no D_CS (``train_dcs`` is not a key a baseline must share: it changes no cell).
    cfg.write_text(f"name: mine\ndatasets: [heart]\nmodels:\n  Mine: {{estimator: \"{module}:Centroid\"}}\n"
                   f"baselines: [{os.path.relpath(paper, folder)}]\n"
                   "protocol: {folds: 3, repeats: 1, seed: 5}\n")
    out = folder / "results" / "mine"
    _run(cfg, out)
    return paper, pins, out


def test_the_summary_points_to_the_file_that_ranks_the_users_model(beside_paper, tmp_path):
    """Main said "Not in the paper, not ranked here: Mine" while the comparison file ranked it."""
    _, _, out = beside_paper
    result = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    summary = (tmp_path / "t" / "summary.md").read_text()
    assert "Not in the paper, not ranked here: Mine (ranked with the paper's models in " \
           "eem_table4_gmean_comparison.md)" in summary
    ranked = (tmp_path / "t" / "eem_table4_gmean_comparison.md").read_text().split("## Average rank")[1]
    assert "| Mine " in ranked.split("##")[0]


def test_a_model_that_never_measured_the_criterion_reads_dash_in_table6(beside_paper, tmp_path):
    """Main showed the user's model as "> 600" (past the fit budget) in every row of EEM Table 6, the HTML "–"."""
    _, _, out = beside_paper
    result = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "t" / "eem_table6_dcs_gaussian.csv", comment="#")
    mine = table[table["method"] == "Mine"]
    assert mine[["dataset", "status"]].values.tolist() == [["heart", "no criterion"]]
    assert mine["timed_out_fits"].tolist() == [0]
    md = (tmp_path / "t" / "eem_table6_dcs_gaussian.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| dataset"))
    heart = next(line for line in md.splitlines() if line.startswith("| heart"))
    column = [c.strip() for c in header.split("|")].index("Mine")
    assert heart.split("|")[column].strip() == "–" and "> 600" not in md
    # The models that measured it keep their cells (EEMrbf's D_CS of its projection chose its points).
    assert table.loc[table["method"] == "EEMrbf", "status"].eq("ok").all()


def test_the_report_judges_a_committed_baseline_against_its_pins(beside_paper, tmp_path):
    """Main's index opened with the baseline's known differences as "outside" unless --tolerance named the pins."""
    paper, pins, out = beside_paper
    unpinned = runner.invoke(app, ["check", str(paper), "--tolerance", "gmean=2"])
    outside = len(re.findall(r"^FAIL ", unpinned.output, re.M))
    assert outside >= 1, unpinned.output  # the precondition: the baseline has cells outside the table's rule
    result = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "site"), "--no-figures"])
    assert result.exit_code == 0, result.output
    index = (tmp_path / "site" / "index.html").read_text()
    counts = re.findall(r"<td>(\d+)</td>", index.split('href="eem.html">', 2)[2].split("</tr>", 1)[0])
    within, pinned, out_of, missing = map(int, counts[1:])
    assert out_of == 0 and pinned >= outside and str(pins.resolve()) in index
    # check judges them the same way, and says so.
    result = runner.invoke(app, ["check", str(out)])
    assert result.exit_code == 0, result.output
    assert f"judging the baselines' cells against {pins.resolve()}" in " ".join(result.stderr.split())
    # A --tolerance given is what judges.
    result = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "site2"), "--no-figures",
                                 "--tolerance", str(tmp_path / "none.yaml")])
    assert result.exit_code != 0  # a tolerance file that is not there is named, not replaced by the pins


def test_the_paper_page_shows_only_the_data_sets_the_results_hold(beside_paper, tmp_path):
    """Main added a row of "–" for each of EEM Table 4's data sets the user never asked for."""
    _, _, out = beside_paper
    result = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "site"), "--no-figures"])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "site" / "eem.html").read_text()
    section = html.split('<section class="table" id="eem_table4">', 1)[1].split("</section>", 1)[0]
    rows = [r[0] for r in html_table_rows(html, "eem_table4", "eem_table4_wide")]
    assert rows == ["heart", "sonar"]
    note = section.split("Not shown: ", 1)[1].split("</p>", 1)[0]
    assert "australian" in note and "abalone7" in note and "heart" not in note
    # The comparison page explains why its two tests can disagree.
    assert "Nemenyi and Wilcoxon-Holm can disagree on a pair" in (tmp_path / "site" / "comparison.html").read_text()


def test_ranks_use_unrounded_means_while_a_draw_is_equal_as_printed():
    """83.49 against 83.50: ranks 2 and 1, a draw at the printed decimal; the comparison and the docs say so."""
    from eemrepro.reports._compare import compare_methods, comparison_markdown
    from eemrepro.reports._spec import registered_tables

    spec = next(s for s in registered_tables() if s.id == "eem_table4")
    rows = [{"dataset": d, "method": m, "gmean": v} for d, values in
            (("a", {"EEMrbf": 83.49, "SVMrbf": 70.0, "Mine": 83.50}), ("b", {"EEMrbf": 60.0, "SVMrbf": 65.0,
                                                                          "Mine": 61.0}))
            for m, v in values.items()]
    result = compare_methods(spec, pd.DataFrame(rows))
    ranks = dict(zip(result["ranks"]["method"], result["ranks"]["average rank"], strict=True))
    assert ranks == pytest.approx({"Mine": (1 + 2) / 2, "EEMrbf": (2 + 3) / 2, "SVMrbf": (3 + 1) / 2})
    pair = result["pairs"].set_index("baseline").loc["EEMrbf"]
    assert (pair["wins"], pair["draws"], pair["losses"]) == (1, 1, 0)  # 83.5 = 83.5 at one decimal; 61.0 > 60.0
    text = comparison_markdown(spec, result, "t")
    assert "Average ranks are taken on the unrounded means, a draw on the values as printed (1 decimal(s))" in text
    for doc in ("docs/benchmarking.md", "docs/reports.md"):
        assert "unrounded means" in (ROOT / doc).read_text(), doc

