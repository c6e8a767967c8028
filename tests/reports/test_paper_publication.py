"""The papers' tables as a paper's reader expects them (issue 67's publication outputs for the papers' benchmarks):
each ranked metric table as a LaTeX data sets x models matrix (``<stem>_matrix.tex``: the best of each data set in
bold, ties at the printed digits too, in the metric's direction, an average-rank row), the same best cells bold in
its Markdown and marked on its report page; the Bayesian signed-rank posterior of a summary's and a comparison's
pairs as standalone SVG and PDF files (``<name>_posterior.svg``/``.pdf``) that rebuild byte for byte; and each
comparison's per-data-set correlated t-tests as a CSV (``<name>_ttests.csv``).

The stores are two committed ones: ``results/uci`` (EEM's Table 4 and its summary: G-mean, higher is better, 10
folds x 5 repeats) and ``results/lssvm_ensemble`` (Hwang's Table 4.1: misclassification error, lower is better,
100 train-test splits, with models the paper has not, hence a comparison). Expected numbers come from the long
list's CSV (each cell's reproduced mean, printed here at the table's digits), the stored records
(``read_results``) and scipy's Student t for the correlated t-test (Corani and Benavoli 2015, with Nadeau and
Bengio's correction), the data sets' sizes from the UCI pages (wine 178, cardiotocography 2,126, sensor-readings-4
5,456 rows).
"""

import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from eemrepro import read_results
from tests.helpers import figure_bytes_under_hash_seeds, html_table_rows, latex_rows

ROOT = Path(__file__).resolve().parents[2]
UCI, LSSVM = ROOT / "results" / "uci", ROOT / "results" / "lssvm_ensemble"
PROBABILITIES = ["P(model better)", "P(rope)", "P(baseline better)"]
#: (store, table id, file stem, metric, printed decimals, greater is better)
EEM = (UCI, "eem_table4", "eem_table4_gmean", "gmean", 1, True)
HWANG = (LSSVM, "lssvm_ensemble_table41", "lssvm_ensemble_table41_error", "error", 4, False)
#: Each data set's rows (UCI) and the training rows of each split (results/lssvm_ensemble/config.yaml).
ROWS, TRAIN = {"wine": 178, "cardiotocography": 2126, "sensor-readings-4": 5456}, \
    {"wine": 144, "cardiotocography": 1800, "sensor-readings-4": 5000}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """{store: the folder ``tables`` wrote its paper's table into (every format, the papers' full layout)}."""
    from eemrepro.reports import build_tables

    out = {}
    for store, table, *_ in (EEM, HWANG):
        folder = tmp_path_factory.mktemp(store.name)
        build_tables([store], folder, layout="full", tables=[table])
        out[store] = folder
    return out


def _expected_best(csv, metric, digits, greater):
    """{(data set, method)} whose reproduced mean, printed at ``digits``, is the best of its data set in the
    metric's direction (ties too), where two methods at least have a value: from the long list's CSV alone."""
    cells = pd.read_csv(csv, comment="#")
    cells = cells[cells["status"] == "ok"]
    best = set()
    for dataset, g in cells.groupby("dataset"):
        if len(g) < 2:
            continue
        printed = {m: float(f"{v:.{digits}f}") for m, v in zip(g["method"], g[metric], strict=True)}
        top = (max if greater else min)(printed.values())
        best |= {(dataset, m) for m, v in printed.items() if v == top}
    return best


@pytest.mark.parametrize("case", [EEM, HWANG], ids=["eem-gmean", "lssvm-error"])
def test_a_papers_matrix_tex_bolds_the_best_reproduced_cell_of_each_data_set(built, case):
    """Main wrote the papers' ranked tables as long lists only (data set, method, status, value, ...), no best cell
    marked anywhere. ``<stem>_matrix.tex``: data sets x models, each cell the reproduced mean±std, the best of each
    data set bold (ties at the printed digits too; the lowest error for Hwang's table), an average-rank row."""
    store, _, stem, metric, digits, greater = case
    out = built[store]
    tex = (out / f"{stem}_matrix.tex").read_text()
    assert "\\toprule" in tex and "\\bottomrule" in tex and tex.count("{") == tex.count("}")
    rows = latex_rows(tex)
    header, body = rows[0], rows[1:]
    assert header[0] == "data set"
    ranks = [r for r in body if r[0].startswith("average rank")]
    assert len(ranks) == 1 and len(ranks[0]) == len(header)
    cells = pd.read_csv(out / f"{stem}.csv", comment="#").set_index(["dataset", "method"])
    bold, seen = set(), 0
    for row in body:
        if row is ranks[0]:
            continue
        dataset = row[0].replace("\\_", "_")
        for method, cell in zip(header[1:], row[1:], strict=True):
            method = method.replace("\\_", "_")
            if cell.startswith("\\textbf{"):
                bold.add((dataset, method))
            shown = re.match(r"(?:\\textbf\{)?([\d.]+)\$\\pm\$", cell)
            if shown:  # the reproduced mean, never the published one
                assert float(shown.group(1)) == pytest.approx(cells.loc[(dataset, method), metric],
                                                              abs=0.51 * 10 ** -digits), (dataset, method, cell)
                seen += 1
    expected = _expected_best(out / f"{stem}.csv", metric, digits, greater)
    assert bold == expected
    assert seen >= 9 and len(expected) >= 3


@pytest.mark.parametrize("case", [EEM, HWANG], ids=["eem-gmean", "lssvm-error"])
def test_a_papers_markdown_bolds_the_same_cells(built, case):
    """The Markdown's data sets x methods view (each cell with its delta to the paper) bolds the same cells."""
    store, _, stem, metric, digits, greater = case
    md = (built[store] / f"{stem}.md").read_text()
    lines = [line for line in md.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    bold = set()
    for line in lines[1:]:
        row = [c.strip() for c in line.strip("|").split("|")]
        if row[0] == "data set" or len(row) != len(header):
            break  # the long list starts
        bold |= {(row[0], m) for m, c in zip(header[1:], row[1:], strict=True) if c.startswith("**")}
    assert bold == _expected_best(built[store] / f"{stem}.csv", metric, digits, greater)


def test_a_papers_page_marks_the_same_best_cells(tmp_path):
    """Hwang's page: the cells of its data sets x methods view in the class ``best`` are the lowest errors."""
    from eemrepro.reports import build_report, build_tables

    build_report([LSSVM], tmp_path / "site", figures=False)
    build_tables([LSSVM], tmp_path / "t", formats=("csv",), layout="full", tables=["lssvm_ensemble_table41"])
    html = (tmp_path / "site" / "lssvm_ensemble.html").read_text()
    wide = html.split('id="T_lssvm_ensemble_table41_wide"', 1)[1].split("</table>", 1)[0]
    header = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<th[^>]*>(.*?)</th>", wide, re.S)]
    bold = set()
    for row in re.findall(r"<tr>(.*?)</tr>", wide.split("<tbody>", 1)[1], re.S):
        cells = re.findall(r'<td[^>]*class="([^"]*)"[^>]*>(.*?)</td>', row, re.S)
        dataset = re.sub(r"<[^>]+>", "", cells[0][1]).strip()
        bold |= {(dataset, m) for m, (cls, _) in zip(header[1:], cells[1:], strict=True) if "best" in cls.split()}
    assert bold == _expected_best(tmp_path / "t" / "lssvm_ensemble_table41_error.csv", "error", 4, False)
    assert html_table_rows(html, "lssvm_ensemble_table41")  # the long list is still there
    # Its new models' comparison page draws their posteriors and links the files, which the site holds.
    comparison = (tmp_path / "site" / "comparison.html").read_text()
    figure = comparison.split('<figure class="posterior">', 1)[1].split("</figure>", 1)[0]
    assert 'href="lssvm_ensemble_table41_error_posterior.pdf"' in figure and "<svg" in figure
    assert (tmp_path / "site" / "lssvm_ensemble_table41_error_posterior.pdf").read_bytes().startswith(b"%PDF")


def test_a_papers_summary_page_draws_its_posterior(tmp_path):
    """EEM's page: its summary (the paper's pairs) draws their signed-rank posteriors beside its CD diagram, with
    links to the files, which the site holds."""
    from eemrepro.reports import build_report

    build_report([UCI], tmp_path / "site", figures=False)
    html = (tmp_path / "site" / "eem.html").read_text()
    figure = html.split('<figure class="posterior">', 1)[1].split("</figure>", 1)[0]
    assert 'href="summary_posterior.svg"' in figure and figure.count("<svg") == 1
    for pair in ("EEMsig", "WELMsig", "EEKMrbf", "SVMrbf"):
        assert pair in figure
    assert (tmp_path / "site" / "summary_posterior.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize("store, name", [(UCI, "summary"), (LSSVM, "lssvm_ensemble_table41_error")])
def test_the_posterior_files_are_written_beside_the_cd_files(built, store, name):
    """A summary's and a comparison's signed-rank posteriors (one simplex a pair) as SVG and PDF files a paper
    can take, the pairs' probabilities as the SVG's text."""
    out = built[store]
    svg, pdf = (out / f"{name}_posterior.svg").read_bytes(), (out / f"{name}_posterior.pdf").read_bytes()
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert pdf.startswith(b"%PDF") and pdf.rstrip().endswith(b"%%EOF")
    text = svg.decode()
    assert "http://" not in text.replace("http://www.w3.org", "")  # no metadata block: a page inlines it offline
    md = (out / (f"{name}.md" if name == "summary" else f"{name}_comparison.md")).read_text()
    section = md.split("Bayesian signed-rank test across data sets", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| model")]
    assert rows
    for *_, better, rope, worse in rows:
        assert better in text and f"rope {rope}" in text and worse in text


def test_the_posterior_files_rebuild_byte_for_byte_whatever_the_hash_seed(tmp_path):
    """The same pairs give the same bytes under any PYTHONHASHSEED (as the CD files: no date, no version, ids
    salted with a fixed text)."""
    script = textwrap.dedent("""
        import sys
        import numpy as np, pandas as pd
        from eemrepro.reports import TableSpec
        from eemrepro.reports._compare import compare_methods, plotted_pairs, posterior_files, write_cd
        rng = np.random.default_rng(4)
        spec = TableSpec(id="toy", stem="toy", title="toy", published=None, metric="gmean", scale=100.0)
        models = ["alpha", "beta", "gamma", "mine", "yours"]
        df = pd.DataFrame([{"dataset": f"d{i}", "method": m, "status": "ok", "gmean": 80 + rng.normal(0, 2)}
                           for i in range(7) for m in models])
        result = compare_methods(spec, df, new=["mine", "yours"])
        write_cd(posterior_files(result, plotted_pairs(result)), sys.argv[1])
    """)
    built = figure_bytes_under_hash_seeds(script, tmp_path, "p")
    assert built["1"] == built["2"] == built["3"]
    assert built["1"][0].startswith(b"<?xml") and built["1"][1].startswith(b"%PDF")


def _md_ttests(md):
    """{(model, vs, data set): (folds, (three probabilities as printed))} of a Markdown's correlated t-tests."""
    section = md.split("Bayesian correlated t-test on each data set", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith("| model"):
            model, vs, dataset, folds, _, *p = [c.strip() for c in line.strip().strip("|").split("|")]
            out[(model, vs, dataset)] = (int(folds), tuple(p))
    return out


@pytest.mark.parametrize("store, name, md", [(UCI, "summary", "summary.md"),
                                             (LSSVM, "lssvm_ensemble_table41_error_comparison",
                                              "lssvm_ensemble_table41_error_comparison.md")])
def test_the_ttests_csv_holds_what_the_markdown_shows(built, store, name, md):
    """Main printed each data set's correlated t-tests in the Markdown only. ``<name>_ttests.csv``: one row a pair
    and data set, its probabilities those the Markdown prints (three decimals) and summing to 1, the rope in the
    table's units, the folds and repeats paired."""
    out = built[store]
    csv = pd.read_csv(out / f"{name}_ttests.csv")
    shown = _md_ttests((out / md).read_text())
    assert len(csv) == len(shown) >= 3
    np.testing.assert_allclose(csv[PROBABILITIES].sum(axis=1), 1.0, atol=2e-6)  # (6 significant digits)
    for r in csv.to_dict("records"):
        folds, printed = shown[(r["model"], r["baseline"], r["dataset"])]
        assert r["folds"] == folds
        assert [f"{r[p]:.3f}" for p in PROBABILITIES] == list(printed)
    assert set(csv["rope"]) == ({1.0} if store == UCI else {0.01})
    assert set(csv["repeats"]) == ({5} if store == UCI else {100})


def test_the_ttests_csv_is_the_correlated_ttest_of_the_stored_splits(built):
    """Hwang's table, lower is better: each row recomputed from the records (each cell's test splits at its
    selected point, paired by repeat) with scipy's Student t, scale sqrt((1/n + rho/(1-rho)) var), rho the test
    share n_test / n of the data set (Nadeau and Bengio's correction)."""
    out = built[LSSVM]
    csv = pd.read_csv(out / "lssvm_ensemble_table41_error_comparison_ttests.csv")
    cells = pd.read_csv(out / "lssvm_ensemble_table41_error.csv", comment="#").set_index(["dataset", "method"])
    records = read_results([LSSVM])
    records = records[records["inner"].isna() & (records["status"] == "ok")]
    for r in csv.to_dict("records"):
        d = r["dataset"]
        folds = [records[(records["dataset"] == d) & (records["model"] == m)
                         & (records["point"] == cells.loc[(d, m), "point"])].set_index(["repeat", "fold"])["error"]
                 for m in (r["model"], r["baseline"])]
        paired = pd.concat(folds, axis=1, join="inner")
        diff = (paired.iloc[:, 1] - paired.iloc[:, 0]).to_numpy()  # lower is better: the baseline's minus the model's
        n, rho = len(diff), (ROWS[d] - TRAIN[d]) / ROWS[d]
        assert r["folds"] == n and r["test share"] == pytest.approx(rho, rel=1e-5)  # (6 significant digits)
        scale = np.sqrt((1 / n + rho / (1 - rho)) * diff.var(ddof=1))
        better = stats.t.sf(0.01, n - 1, loc=diff.mean(), scale=scale)
        worse = stats.t.cdf(-0.01, n - 1, loc=diff.mean(), scale=scale)
        assert (r["P(model better)"], r["P(baseline better)"]) == pytest.approx((better, worse), abs=1e-5)
        assert r["P(rope)"] == pytest.approx(1 - better - worse, abs=1e-5)
