"""The contract of every table shape (as scikit-learn tests its displays with one common test): a table's
document (``reports._document.Section``), built from the records read whole or a group of data sets at a time,
says the same numbers in each rendering: Markdown, CSV and LaTeX (``tables``) and HTML (``report``)."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from eemrepro.reports import Records, registered_tables, shape_names
from eemrepro.reports._benchmark import benchmark_frame, benchmarks
from eemrepro.reports._build import _write_benchmark, _write_paper_table
from eemrepro.reports._document import benchmark_section, document
from eemrepro.reports._records import split_by_kind
from eemrepro.reports._render import _text
from eemrepro.reports._shapes import Table
from eemrepro.reports._site import _benchmark_sections, _Judged, _summaries, _table_section
from eemrepro.reports._tables import rows_by_datasets, timeout_limit
from eemrepro.store import ResultStore
from tests.helpers import hand_made_with_a_failed_cell, html_table_rows
from tests.helpers import report_record as rec

BASELINE = Path(__file__).resolve().parents[2] / ".ci" / "quick-baseline"
SPECS = {t.id: t for t in registered_tables()}
#: A registered table of each built-in shape that the hand-made store holds. A shape registered without a case
#: here fails the contract by name.
CASES = {"metric": "eem_table4", "time": "eem_table5", "correlation": "eem_table1"}
#: The records read whole (None), a few data sets at a time, and one data set at a time (1).
BUDGETS = [None, 6, 1]
#: The long-view columns the report's list leaves out (the tables write them): the correlation table's share of
#: the variance term (its note says the median; the page keeps the paper's columns), and the selected point
#: (the report shows it in each cell's drill-down).
HTML_LEAVES_OUT = {"var_share", "point"}
SELECTION = "best-of-grid"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """EEM's data sets by hand (``hand_made``: a failed cell, a timed-out one), a model no paper has (``Mine``:
    the comparison) and two layers of D_CS pairs on heart (the correlation table)."""
    rng = np.random.RandomState(0)
    records = hand_made_with_a_failed_cell()
    records += [rec(d, "Mine", {"C": 1.0}, f, g) for d, g in (("australian", 0.84), ("abalone7", 0.79))
                for f in (0, 1)]
    records += [rec("heart", "dcs-correlation", {"n_hidden": 10}, layer, dcs=list(rng.rand(10)),
                    ratio=list(rng.rand(10))) for layer in (0, 1)]
    folder = tmp_path_factory.mktemp("document") / "res"
    s = ResultStore(folder)
    s.append(records)
    s.close()
    return folder


def _read(folder, spec, budget):
    """(the table's frame, the provenance, the records by kind, the unfinished cells, the fit budget) of one read
    of ``folder``: whole (``budget`` None), else a group of at most ``budget`` records at a time."""
    records, prov = Records([folder]).read()
    parts, unfinished = split_by_kind(records), {tuple(c) for c in prov["unfinished"]}
    if budget is None:
        df = Table(spec, SELECTION).build(parts[spec.kind], unfinished=unfinished, layout="full")
    else:
        results, made, _, _ = rows_by_datasets([folder], [spec], (SELECTION,), budget)
        assert results.provenance == prov
        df = made[(spec.id, SELECTION)].frame("full")
    return df, prov, parts, unfinished, timeout_limit(records)


def _by_role(paths, spec):
    """{".md"/".csv"/".tex": the table's file, "comparison": its comparison's Markdown, "summary": the paper's
    summary} of the files ``tables`` wrote of one table."""
    out = {}
    for p in paths:
        if p.stem == spec.stem:
            out[p.suffix] = p
        elif p.stem == f"{spec.stem}_comparison" and p.suffix == ".md":
            out["comparison"] = p
        elif p.stem == spec.summary:
            out["summary"] = p
    return out


def _md_rows(text):
    """Every Markdown table row of a file, as its cells' texts (the separator rows left out)."""
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|") and not set(line) <= set("|-: ")]


def _tex_rows(text):
    return [[c.strip() for c in line.removesuffix("\\\\").split(" & ")] for line in text.splitlines()
            if line.endswith("\\\\")]


def _tex(s):
    return str(s).replace("_", r"\_").replace("±", r"$\pm$").replace("†", r"$^\dagger$")


def _numbers(cells):
    """The numbers a row's cells print, as printed ("85.0", "+1.2", "> 600"), in order."""
    return [n for c in cells for n in re.findall(r"[-+>]?\s?\d+\.\d+|> \d+", c)]


def _html_rows(html, uuid):
    return html_table_rows(f'<section class="table" id="{uuid}">{html}</section>', uuid)


def _check_renderings(section, written, html_long, limit, not_shown=""):
    """Each row's long-view cells (the document's numbers, as its ``Table`` prints them) are the Markdown and
    LaTeX rows, its value is the CSV's at the printed decimals, and the HTML's row of the same cell prints them
    (the report names, in ``not_shown``, the paper's data sets the results neither hold nor name)."""
    table, df = section.table, section.frame
    columns, _ = table.columns(limit)
    md = _md_rows(written[".md"].read_text())
    tex = _tex_rows(written[".tex"].read_text())
    csv = pd.read_csv(written[".csv"], comment="#")
    assert len(csv) == len(df)
    html_rows = {tuple(r[:2]): r for r in html_long}
    for k, (_, r) in enumerate(df.iterrows()):
        cells = [_text(r, c, fn) for c, _, fn in columns]
        assert cells in md and [_tex(c) for c in cells] in tex, cells
        value = csv[table.value].iloc[k]
        if np.isfinite(r[table.value]):
            assert f"{value:.{table.digits}f}" == f"{r[table.value]:.{table.digits}f}"
        # The HTML's row of this cell (its data set and key first) prints the same numbers.
        html = html_rows.get(tuple(cells[:2]))
        if html is None:
            assert r["dataset"] in not_shown.split("(", 1)[1], cells
            continue
        shown = [_text(r, c, fn) for c, _, fn in columns if c not in HTML_LEAVES_OUT]
        assert _numbers(shown) == [n for n in _numbers(html) if n in _numbers(shown)] and \
            set(_numbers(shown)) <= set(_numbers(html)), (shown, html)
    assert len(html_rows) == len(html_long) and (html_rows or df.empty)


def _check_statistics(section, written, summaries):
    """The summary's and the comparison's numbers in Markdown are the HTML's."""
    if section.summary is not None:
        text = written["summary"].read_text()
        wdl = next(s for s in summaries if s["title"].startswith("Wins / draws / losses"))
        html_rows = _html_rows(wdl["html"], f"{section.spec.id}_wdl")
        wdl_md = _md_rows(text.split("## Wins / draws / losses", 1)[1].split("\n## ", 1)[0])
        assert [r[:5] for r in html_rows] == [r[:5] for r in wdl_md[1:]]
        for method, rank in section.summary.tests.get("average_rank", {}).items():
            assert f"- {method}: {rank:.2f}" in text
        # The paper's pairs' Bayesian signed-rank probabilities, the same in Markdown and HTML.
        bayes = section.summary.bayes["pairs"][["P(model better)", "P(rope)", "P(baseline better)"]].to_numpy()
        md = _md_rows(text.split("signed-rank test across data sets", 1)[1].split("\n## ", 1)[0])
        assert [r[3:] for r in md[1:]] == [[f"{p:.3f}" for p in row] for row in bayes]
        html = next(s for s in summaries if s["title"].startswith("Bayesian signed-rank"))
        assert [r[-3:] for r in _html_rows(html["html"], f"{section.spec.id}_bayes")] == [r[3:] for r in md[1:]]
    if section.comparison is not None:
        text = written["comparison"].read_text()
        md = _md_rows(text.split("wins / draws / losses", 1)[1].split("\n## ", 1)[0])
        pairs = section.comparison.result["pairs"]
        assert [r[:6] for r in md[1:]] == [[str(v) for v in row[:6]] for row in pairs.to_numpy().tolist()]
        # The Bayesian signed-rank probabilities of each pair, under their rope (``tests/reports/test_bayes.py``).
        bayes = _md_rows(text.split("signed-rank test across data sets", 1)[1].split("\n## ", 1)[0])
        assert [r[3:] for r in bayes[1:]] == [[f"{p:.3f}" for p in row] for row in
                                              pairs[["P(model better)", "P(rope)", "P(baseline better)"]].to_numpy()]
        return True
    return False


@pytest.mark.parametrize("budget", BUDGETS, ids=lambda b: f"budget={b}")
@pytest.mark.parametrize("shape", shape_names())
def test_a_tables_document_says_the_same_numbers_in_every_rendering(store, shape, budget, tmp_path):
    spec = SPECS[CASES[shape]]
    df, prov, parts, unfinished, limit = _read(store, spec, budget)
    whole = _read(store, spec, None)[0]
    pd.testing.assert_frame_equal(df, whole)  # the same table, whatever the budget
    doc = document([spec], {spec.id: df}, prov, SELECTION)
    section = doc.sections[spec.id]
    written = _by_role(_write_paper_table(section, tmp_path, ("md", "csv", "latex"), prov, limit), spec)
    judged = _Judged(None, prov, None, unfinished, parts, {spec.id: df}, {}, {}, doc, limit)
    html = _table_section(spec, judged)
    assert html["title"] == section.title and f"# {section.title}" in written[".md"].read_text()
    not_shown = next((n for n in html["notes"] if n.startswith("Not shown:")), "")
    _check_renderings(section, written, _html_rows(html["html"], spec.id), limit, not_shown)
    # The summary of the paper's pairs (EEM Table 4) in both, and the comparison of Mine with the paper's.
    assert (section.summary is not None) == (shape == "metric")
    assert _check_statistics(section, written, _summaries(section.summary)[0]) == (shape == "metric")


@pytest.mark.parametrize("budget", BUDGETS, ids=lambda b: f"budget={b}")
def test_the_benchmarks_document_says_the_same_numbers_in_every_rendering(budget, tmp_path):
    """The benchmark table of any store (every data set x every model, no published cell): CI's quick baseline,
    EEM's models on two data sets, compared pair by pair."""
    store = BASELINE
    (bench,) = benchmarks([store])
    records, prov = Records([store]).read()
    parts, unfinished = split_by_kind(records), {tuple(c) for c in prov["unfinished"]}
    results, made, _, limit = rows_by_datasets([store], [bench.spec], (SELECTION,), budget)
    df = benchmark_frame(bench, made[(bench.spec.id, SELECTION)].frame("run"))
    section = benchmark_section(bench, df, SELECTION)
    written = _by_role(_write_benchmark(benchmark_section(bench, df, SELECTION, limit), tmp_path,
                                        ("md", "csv", "latex"), prov, limit), bench.spec)
    sections = {s["id"]: s for s in _benchmark_sections([store], parts, unfinished, SELECTION)}
    long = _html_rows(sections[bench.spec.id]["html"], bench.spec.id)
    table = section.table
    columns = [c for c in table.columns(limit)[0] if c[0] not in ("published", "published_std", "delta")]
    md = _md_rows(written[".md"].read_text())
    for k, (_, r) in enumerate(df.iterrows()):
        cells = [_text(r, c, fn) for c, _, fn in columns]
        shown = [_text(r, c, fn) for c, _, fn in columns if c not in HTML_LEAVES_OUT]
        assert cells in md and long[k][:2] == cells[:2] and set(_numbers(shown)) <= set(_numbers(long[k]))
    html = sections[f"{bench.spec.id}-comparison"]
    assert html["title"] == section.comparison.title
    pairs = _html_rows(html["summaries"][0]["html"], f"{bench.spec.id}_cmp_pairs")
    assert _check_statistics(section, written, [])
    assert [r[:5] for r in pairs] == [[str(v) for v in row[:5]]
                                      for row in section.comparison.result["pairs"].to_numpy().tolist()]


@pytest.mark.parametrize("selection", ["best-of-grid", "best-per-fold"])
def test_the_report_builds_each_table_once_per_rule_it_is_read_under(store, selection, tmp_path, monkeypatch):
    """The pages' tables (under ``selection``) and the check's (under the default rule, judged against the tables'
    rules and against the pins) are built once each: under another selection the check built its tables once more
    for each of its two judgements."""
    from eemrepro.reports import build_report

    built = []
    real = Table.build

    def counted(self, *args, **kwargs):
        built.append((self.id, self.selection))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Table, "build", counted)
    pins = tmp_path / "pins.yaml"
    pins.write_text("tables: {eem_table4: {abs: 1.0, use_std: false}}\n")
    build_report([store], tmp_path / "site", tolerance=pins, selection=selection, figures=False)
    papers = [b for b in built if b[0] in CASES.values()]
    # Each once: the pages' three under the selection, and (another selection) the checked ones under the default.
    assert len(set(papers)) == len(papers), papers
    assert {t for t, rule in papers if rule == selection} == set(CASES.values())
    assert {t for t, rule in papers if rule != selection} <= {"eem_table4", "eem_table1"}
