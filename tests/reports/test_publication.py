"""From a benchmark to a paper (issue 67): the CD diagram as SVG and PDF files a paper can take, the LaTeX
matrix and pairs tables, the page's matrix as its legend says, and words that fit a store no paper's table holds.

The store is the user's journey in small (``tests.helpers.benchmark_store``: three CSVs of the user's own, their
classifier, scikit-learn's logistic regression and a model of EEM's Table 4). Expected numbers come from the
stored records (``read_results``, each cell's mean over its test folds at its best grid point, recomputed with
numpy), scipy's ``rankdata`` for the ranks, and hand-made matrices whose bold cells are written out beside them.
"""

import re
import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app
from tests.helpers import benchmark_store, figure_bytes_under_hash_seeds, html_table_rows, latex_rows

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
#: A paper's column: 8.5 cm in PostScript points (72 a inch).
COLUMN_PT = 8.5 / 2.54 * 72
MODELS = ("Mine", "LR", "EEMrbf")  # the config's order


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return benchmark_store(tmp_path_factory.mktemp("pub"))


def _cells(out):
    """{(data set, model): (mean, std)} in percent at each cell's best grid point (numpy on the records)."""
    df = read_results(out)
    df = df[df["inner"].isna() & (df["status"] == "ok")]
    cells = {}
    for (dataset, model), g in df.groupby(["dataset", "model"]):
        per_point = {p: 100 * np.asarray(v["gmean"], float) for p, v in g.groupby("point")}
        best = max(per_point, key=lambda p: per_point[p].mean())
        cells[(dataset, model)] = (per_point[best].mean(), per_point[best].std(ddof=1))
    return cells


def _svg_text(svg):
    """[(text, font size in pt, fill colour)] of an SVG's text elements (matplotlib's, ``svg.fonttype: none``)."""
    out = []
    for style, body in re.findall(r'<text[^>]*style="([^"]*)"[^>]*>(.*?)</text>', svg, re.S):
        size = re.search(r"font(?:-size)?:\s*(?:[a-z]+\s+)*([\d.]+)px", style)
        fill = re.search(r"fill:\s*(#[0-9a-f]{6})", style)
        out.append((re.sub(r"<[^>]+>", "", body).strip(), float(size.group(1)) if size else None,
                    fill.group(1) if fill else "#000000"))
    return out


def _svg_width_pt(svg):
    return float(re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg).group(1))


def test_tables_write_the_cd_diagram_as_svg_and_pdf_readable_at_a_papers_column(store, tmp_path):
    """Main drew the diagram only inside benchmark.html (the user cut the <svg> out by hand), at 494 pt wide with
    10 pt labels: 4.9 pt when printed at 8.5 cm."""
    _, out, _ = store
    result = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    svg = (tmp_path / "t" / "benchmark_gmean_cd.svg").read_text()
    pdf = (tmp_path / "t" / "benchmark_gmean_cd.pdf").read_bytes()
    assert svg.startswith("<?xml") and pdf.startswith(b"%PDF")
    width = _svg_width_pt(svg)
    texts = {t: (size, fill) for t, size, fill in _svg_text(svg)}
    for model in MODELS:
        # A label is the model's name with its average rank before or after it.
        label = next(k for k in texts if re.fullmatch(rf"(\(\d\.\d\d\) )?{model}( \(\d\.\d\d\))?", k))
        size, fill = texts[label]
        # Printed at a column's width, each label is 8 pt at least.
        assert size * COLUMN_PT / width >= 8.0, (label, size, width)
        # The user's models stand out (red); the paper's in black.
        assert (fill == "#d62728") == (model in ("LR", "Mine")), (label, fill)
    # The PDF is the same figure: its page as wide as the SVG.
    box = re.search(rb"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf)
    assert float(box.group(1)) == pytest.approx(width, abs=1.0)


def test_the_cd_files_rebuild_byte_for_byte_whatever_the_hash_seed(tmp_path):
    """scikit-posthocs draws its crossbars from sets of the models' names: their order (and the SVG's bytes)
    followed PYTHONHASHSEED. Seven models on six data sets whose ranks make several overlapping crossbars."""
    script = textwrap.dedent("""
        import sys
        import numpy as np, pandas as pd
        from eemrepro.reports._compare import write_cd_files
        rng = np.random.default_rng(3)
        base = np.linspace(70, 76, 7)
        wide = pd.DataFrame(base + rng.normal(0, 2.5, size=(6, 7)),
                            columns=["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"])
        write_cd_files(wide, sys.argv[1], highlight=("beta", "zeta"))
    """)
    built = figure_bytes_under_hash_seeds(script, tmp_path, "cd")
    # (Before the fix, this frame's diagram was four different SVGs under PYTHONHASHSEED 1 to 4.)
    assert built["1"] == built["2"] == built["3"]


def test_figures_of_a_benchmark_store_draw_its_cd_diagram(store, tmp_path):
    """Main said "no figure can be drawn" and left an empty figures/ folder behind."""
    _, out, _ = store
    result = runner.invoke(app, ["figures", str(out), "--out", str(tmp_path / "f")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "f").iterdir() if p.suffix in (".svg", ".pdf")) == \
        ["benchmark_gmean_cd.pdf", "benchmark_gmean_cd.svg", "benchmark_gmean_posterior.pdf",
         "benchmark_gmean_posterior.svg"]
    tables = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t")])
    assert tables.exit_code == 0, tables.output
    # The same figures as the tables' (one drawing, two commands).
    for name in ("benchmark_gmean_cd.svg", "benchmark_gmean_posterior.svg", "benchmark_gmean_posterior.pdf"):
        assert (tmp_path / "f" / name).read_bytes() == (tmp_path / "t" / name).read_bytes(), name


def _bold(cell):
    return cell.startswith("\\textbf{")


def _check_tex(tex):
    """A LaTeX table that compiles as far as a reading can tell: braces balanced, every row as many cells as the
    tabular's columns, booktabs' rules; pdflatex compiles it where there is one."""
    assert tex.count("{") == tex.count("}")
    spec = re.search(r"\\begin\{tabular\}\{([^}]*)\}", tex).group(1)
    columns = len(re.sub(r"[^lrc]", "", spec))
    for row in latex_rows(tex):
        assert len(row) == columns, row
    assert "\\toprule" in tex and "\\bottomrule" in tex and "\\hline" not in tex
    if shutil.which("pdflatex"):
        doc = ("\\documentclass{article}\\usepackage[utf8]{inputenc}\\usepackage{booktabs}\\begin{document}\n"
               + tex + "\n\\end{document}\n")
        with tempfile.TemporaryDirectory(prefix="eemrepro-tex-") as folder:
            (Path(folder) / "t.tex").write_text(doc)
            done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=folder,
                                  capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout[-2000:]


def test_tables_write_the_latex_matrix_and_pairs_by_default(store, tmp_path):
    """Main wrote no .tex by default (docs/benchmarking.md said it did), and with --format latex the long list
    (data set, method, status, value, ... : a row per cell), not the matrix of the .md."""
    _, out, _ = store
    result = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    tex = (tmp_path / "t" / "benchmark_gmean.tex").read_text()
    _check_tex(tex)
    rows = latex_rows(tex)
    assert rows[0] == ["data set", *MODELS]
    cells = _cells(out)
    datasets = ["set0", "set1", "set2"]
    assert [r[0] for r in rows[1:4]] == datasets
    for row, dataset in zip(rows[1:4], datasets, strict=True):
        printed = [round(cells[(dataset, m)][0], 1) for m in MODELS]
        for cell, model, value in zip(row[1:], MODELS, printed, strict=True):
            mean, std = cells[(dataset, model)]
            assert cell.removeprefix("\\textbf{").removesuffix("}") == f"{mean:.1f}$\\pm${std:.1f}"
            assert _bold(cell) == (value == max(printed)), (dataset, model, cell)
    # The average-rank row: scipy's rankdata (1 = best) on the unrounded means, averaged over the data sets.
    wide = np.array([[cells[(d, m)][0] for m in MODELS] for d in datasets])
    ranks = np.mean([stats.rankdata(-r) for r in wide], axis=0)
    assert rows[4][0] == "average rank"
    assert [float(c.removeprefix("\\textbf{").removesuffix("}")) for c in rows[4][1:]] == \
        pytest.approx(ranks, abs=0.005)
    # The pairs: each of the user's models against the paper's, every column of the comparison's frame.
    pairs = pd.read_csv(tmp_path / "t" / "benchmark_gmean_comparison.csv")
    ptex = (tmp_path / "t" / "benchmark_gmean_comparison.tex").read_text()
    _check_tex(ptex)
    prow = latex_rows(ptex)
    assert len(prow[0]) == len(pairs.columns) and len(prow) == 1 + len(pairs)
    for r, cells_ in zip(pairs.itertuples(index=False), prow[1:], strict=True):
        assert cells_[:6] == [r.model, r.baseline, str(r.wins), str(r.draws), str(r.losses), str(r.datasets)]
    assert "Friedman" in ptex and "Nemenyi" in ptex


def _hand_table():
    """A lower-is-better metric (the error rate, printed at three decimals) on three data sets x three models:

    * d1: A 0.1004 and B 0.0996 both print 0.100, the best: both bold (the unrounded minimum alone is B);
    * d2: B 0.250 is the lowest: bold (the highest, C 0.400, is not: the metric's direction);
    * d3: A 0.050 with 2 failed fits (``†2``), B failed (no value), C 0.060 with 3 fits that did not converge
      (``‡3``): A bold, the marks footnotes.
    """
    from eemrepro.papers import TableSpec
    from eemrepro.reports._shapes import Table

    spec = TableSpec(id="hand_error", stem="hand_error", title="hand", metric="error", scale=1.0)
    rows = [("d1", "A", 0.1004), ("d1", "B", 0.0996), ("d1", "C", 0.2),
            ("d2", "A", 0.30), ("d2", "B", 0.25), ("d2", "C", 0.40),
            ("d3", "A", 0.05), ("d3", "B", np.nan), ("d3", "C", 0.06)]
    df = pd.DataFrame([{"dataset": d, "method": m, "status": "ok" if v == v else "failed", "error": v,
                        "error_std": 0.01 if v == v else np.nan, "point": "{}", "n_folds": 3, "repeats": 1,
                        "failed_fits": 2 if (d, m) in (("d3", "A"), ("d3", "B")) else 0, "timed_out_fits": 0,
                        "skipped_fits": 0, "unconverged_fits": 3 if (d, m) == ("d3", "C") else 0}
                       for d, m, v in rows])
    return Table(spec), df


BOLD = {("d1", "A"), ("d1", "B"), ("d2", "B"), ("d3", "A")}


def test_the_matrix_bolds_the_best_at_the_printed_digits_in_the_metrics_direction():
    """One matrix, its marks made once (``Matrix``), read by the LaTeX and Markdown renderings alike."""
    from eemrepro.reports._matrix import Matrix

    table, df = _hand_table()
    matrix = Matrix.of(table, df, ranks=pd.Series({"A": 2.0, "B": 1.0, "C": 3.0}), limit=600)
    assert matrix.best == BOLD
    tex = matrix.latex(["hand-made"])
    _check_tex(tex)
    rows = latex_rows(tex)
    assert rows[0] == ["data set", "A", "B", "C"]
    bold = {(r[0], m) for r in rows[1:4] for m, c in zip("ABC", r[1:], strict=True) if _bold(c)}
    assert bold == BOLD
    assert rows[1][1] == "\\textbf{0.100$\\pm$0.010}" and rows[2][3] == "0.400$\\pm$0.010"
    assert rows[3][1] == "\\textbf{0.050$\\pm$0.010}$^{\\dagger 2}$" and rows[3][2] == "--$^{\\dagger 2}$"
    assert rows[4] == ["average rank", "2.00", "\\textbf{1.00}", "3.00"]
    assert rows[3][3] == "0.060$\\pm$0.010$^{\\ddagger 3}$"
    below = tex.split("\\bottomrule", 1)[1]  # the marks' footnotes, under the rule
    assert "$^{\\dagger k}$" in below and "$^{\\ddagger k}$" in below
    md = matrix.markdown()
    cells = {row[0]: row for row in ([c.strip() for c in line.split("|")[1:-1]] for line in md.splitlines())
             if row}
    assert cells["d1"] == ["d1", "**0.100±0.010**", "**0.100±0.010**", "0.200±0.010"]
    assert cells["d3"] == ["d3", "**0.050±0.010** †2", "– †2", "0.060±0.010 ‡3"]
    assert cells["average rank"] == ["average rank", "2.00", "**1.00**", "3.00"]
    # A data set where one model alone has a value: the best of nothing, no mark (d3 without C).
    alone = Matrix.of(table, df[~((df["dataset"] == "d3") & (df["method"] == "C"))])
    assert alone.best == BOLD - {("d3", "A")}


def test_the_page_shows_each_cell_as_its_legend_says_and_marks_the_best(store, tmp_path):
    """Main's page showed bare means under a legend saying mean±std, nothing marking the best, and a CD diagram
    of 520x140 pt with grey labels."""
    _, out, _ = store
    result = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "site"), "--no-figures"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "site" / "benchmark.html").read_text()
    rows = html_table_rows(page, "benchmark_gmean", "benchmark_gmean_wide")
    cells = _cells(out)
    for row in rows:
        printed = [round(cells[(row[0], m)][0], 1) for m in MODELS]
        for text, model in zip(row[1:], MODELS, strict=True):
            mean, std = cells[(row[0], model)]
            assert text == f"{mean:.1f}±{std:.1f}"
    # The best of each data set carries the class the style sheet makes bold, the others not.
    wide = page.split('id="T_benchmark_gmean_wide"', 1)[1].split("</table>", 1)[0]
    for dataset in ("set0", "set1", "set2"):
        printed = {m: round(cells[(dataset, m)][0], 1) for m in MODELS}
        best = {m for m, v in printed.items() if v == max(printed.values())}
        row = re.search(rf"<tr>\s*<td[^>]*>{dataset}</td>(.*?)</tr>", wide, re.S).group(1)
        classes = re.findall(r'<td[^>]*class="([^"]*)"', row)
        assert ["best" in c.split() for c in classes] == [m in best for m in MODELS], (dataset, classes)
    assert re.search(r"\.best\s*\{[^}]*font-weight:\s*bold", page)
    # The diagram: the column-width figure (the files beside the page), drawn across the page's width.
    assert (tmp_path / "site" / "benchmark_gmean_cd.svg").is_file()
    assert (tmp_path / "site" / "benchmark_gmean_cd.pdf").is_file()
    assert 'href="benchmark_gmean_cd.pdf"' in page
    assert re.search(r"figure\.cd svg\s*\{[^}]*width:\s*100%", page)


def test_words_fit_a_store_no_papers_table_holds(store, tmp_path):
    """Main's run legend explained "(paper P, D): the published value", the index was titled "Reproduction
    report", and tables wrote a check.md with an empty "tolerance:" and no table; check passed 0 of 0 cells."""
    _, out, run = store
    assert "mean±std" in run.output and "paper" not in run.output.split("(no published table)", 1)[1]
    site = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "site"), "--no-figures"])
    assert site.exit_code == 0, site.output
    index = (tmp_path / "site" / "index.html").read_text()
    assert "Reproduction report" not in index and "<h1>Benchmark report</h1>" in index
    tables = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t")])
    assert tables.exit_code == 0, tables.output
    assert not (tmp_path / "t" / "check.md").exists()
    check = runner.invoke(app, ["check", str(out)])
    lines = check.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("not judged: no paper's table holds"), check.output
    assert str(out) in lines[0] and check.exit_code == 1
    assert runner.invoke(app, ["check", str(out), "--report-only"]).exit_code == 0


def test_the_pairs_latex_renders_whatever_columns_the_comparison_holds():
    """The comparison's frame gains columns (a Bayesian test's probabilities, say): the LaTeX shows every one, by
    its kind (integers as they are, a probability at three significant digits, a difference at two decimals,
    a missing p "--"), never a fixed list."""
    from eemrepro.reports._matrix import latex_table

    pairs = pd.DataFrame({"model": ["my_model"], "baseline": ["EEMrbf"], "wins": [5], "draws": [1], "losses": [3],
                          "median difference": [-1.2345], "wilcoxon p": [np.nan], "P(yours better)": [0.91234]})
    tex = latex_table(pairs, ["hand-made"], ["rope: 1 point"])
    _check_tex(tex)
    rows = latex_rows(tex)
    assert rows == [["model", "baseline", "wins", "draws", "losses", "median difference", "wilcoxon p",
                     "P(yours better)"],
                    ["my\\_model", "EEMrbf", "5", "1", "3", "-1.23", "--", "0.912"]]
    assert "\\footnotesize rope: 1 point" in tex and tex.startswith("% hand-made\n")


def test_figures_with_nothing_to_draw_leave_no_empty_folder_behind(tmp_path):
    """Main said "no figure can be drawn" and left an empty figures/ folder in the store: one model on one data set
    has no diagram (three models and two data sets at least), and the command made the folder before knowing."""
    from tests.helpers import blobs_frame, run_config

    blobs_frame(n=45).to_csv(tmp_path / "one.csv", index=False)
    cfg = tmp_path / "one.yaml"
    cfg.write_text("name: one\ndatasets: [one]\nlocal_datasets: {one: {file: one.csv, target: status}}\n"
                   'models:\n  LR: {estimator: "sklearn.linear_model:LogisticRegression", grid: {C: [1.0]}}\n'
                   "protocol: {folds: 3, repeats: 1, seed: 0}\n")
    run_config(cfg, tmp_path / "store")
    result = runner.invoke(app, ["figures", str(tmp_path / "store")])
    assert result.exit_code == 1 and "no figure can be drawn" in result.output
    assert "three models with values on two data sets" in " ".join(result.output.split())
    assert not (tmp_path / "store" / "figures").exists()
    # A folder that was there before stays, with what it held.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("kept\n")
    assert runner.invoke(app, ["figures", str(tmp_path / "store"), "--out", str(tmp_path / "mine")]).exit_code == 1
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]
