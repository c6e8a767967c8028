"""One draw rule for every statement about a table's models (``eemrepro/_stats.py``): a draw is two
values equal as the table prints them, a win the better printed value in the metric's direction. The paper
summary (``<table>_summary.md``), the report's summary, the claims and the comparison pages say the same."""

import itertools
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from eemrepro._stats import fold_test_share, wilcoxon_p
from eemrepro.experiments import get_metric
from eemrepro.reports import Claim, TableSpec, registered_tables
from eemrepro.reports._document import compare, summarize
from eemrepro.reports._shapes import Table

TABLES = Path(__file__).resolve().parents[1] / "results" / "tables"


# -- the rule on hand-made tables, as each reader meets it ------------------------------------------------------


def _toy(tmp_path, metric, scale, digits, values):
    """A paper table of two methods A and B (pair (A, B): "B vs A") and its records' table."""
    published = tmp_path / "published.csv"
    datasets = [f"d{i}" for i in range(len(values["A"]))]
    pd.DataFrame([{"dataset": d, "method": m} for d in datasets for m in "AB"]).to_csv(published, index=False)
    spec = TableSpec(id="toy", stem="toy", title="toy", published=published, metric=metric, scale=scale,
                     digits=digits, pairs=(("A", "B"),), summary="toy_summary")
    df = pd.DataFrame([{"dataset": d, "method": m, "status": "ok", metric: v[i]}
                       for m, v in values.items() for i, d in enumerate(datasets)])
    return spec, df


def _from_summary(spec, df, tmp_path):
    from eemrepro.reports._build import summary_markdown

    text = summary_markdown(summarize(Table(spec), df))
    row = next(line for line in text.splitlines() if line.startswith("| B vs A"))
    return tuple(int(c) for c in _cells(row)[1:5])


def _from_claims(spec, df, tmp_path):
    from eemrepro.reports._claims import judge

    claim = Claim(id="x", table="toy", wording="w", source="s", test="wins", method="B", other="A")
    numbers = judge(claim, df, spec)[1]
    return tuple(int(n) for n in re.match(r"(\d+) wins, (\d+) draws, (\d+) losses on (\d+)", numbers).groups())


def _from_comparison(spec, df, tmp_path):
    from eemrepro.reports._compare import compare_methods, comparison_markdown

    result = compare_methods(spec, df, new=["B"])
    row = next(_cells(line) for line in comparison_markdown(spec, result, "t").splitlines()
               if _cells(line)[:2] == ["B", "A"])
    return tuple(int(c) for c in row[2:6])


#: The summary file and the report's summary render one ``Summary`` (``reports._document``): the summary stands
#: for both here, and ``tests/reports/test_document.py`` shows the two renderings say the same numbers.
READERS = {"summary": _from_summary, "claims": _from_claims, "comparison": _from_comparison}

#: (metric, scale, digits, A's values, B's values, B's wins / draws / losses against A and the data sets counted),
#: each worked out by hand with the values as the table prints them; the neighbour rule each case tells apart is
#: in its comment.
CASES = {
    # AUC % at two decimals (ESMM's Table 4): 85.14 > 85.12, 70.00 = 70.00, 59.00 < 60.00. At one decimal
    # 85.1 = 85.1 would draw: (0, 2, 1, 3).
    "printed decimals, not one": ("auc", 100.0, 2, [85.12, 70.0, 60.0], [85.14, 70.0, 59.0], (1, 1, 1, 3)),
    # One decimal: 83.45 prints 83.5 (Python formats the binary value, 83.4500000000000028...), as 83.5 does:
    # a draw. numpy's and pandas' round scale by ten first (834.4999...) and give 83.4: a loss, (1, 0, 2, 3).
    "as printed, not numpy's round": ("gmean", 100.0, None, [83.5, 70.0, 60.0], [83.45, 70.1, 59.0], (1, 1, 1, 3)),
    # Error (lower is better) at four decimals: B's 0.0900 < 0.1000 and 0.2000 < 0.2001 are wins, 0.30004 and
    # 0.30001 both print 0.3000 (a draw), 0.05 > 0.04 a loss. Read as higher-is-better: (1, 1, 2, 4).
    "a lower error wins": ("error", 1.0, 4, [0.1, 0.2001, 0.30001, 0.04], [0.09, 0.2, 0.30004, 0.05], (2, 1, 1, 4)),
    # Exact ties draw (a ">=" would count 80.00 against 80.00 as B's win too); a data set where one of the two has
    # no value counts nowhere (not as a draw, not among the data sets).
    "ties and a missing value": ("auc", 100.0, 2, [80.0, 75.0, 60.0, np.nan], [80.0, 75.0, 61.0, 50.0], (1, 2, 0, 3)),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", CASES)
def test_every_reader_counts_wins_draws_losses_by_the_printed_values_in_the_metrics_direction(case, reader,
                                                                                              tmp_path):
    metric, scale, digits, a, b, expected = CASES[case]
    spec, df = _toy(tmp_path, metric, scale, digits, {"A": a, "B": b})
    assert READERS[reader](spec, df, tmp_path) == expected


def test_the_rule_counts_what_the_printed_strings_say():
    # The rule's rounding is the printer's, value for value: f"{x:.{d}f}" read back, on numbers around the
    # half-ways where numpy's scaled round and the printed string part.
    from eemrepro._stats import DrawRule

    rng = np.random.default_rng(0)
    values = pd.Series(np.concatenate([np.round(rng.uniform(0, 100, 2000), 3) + 0.0005 * k for k in (0, 1)]))
    for d in (1, 2, 3, 4):
        assert DrawRule(d).printed(values).tolist() == [float(f"{v:.{d}f}") for v in values]
    assert (values.round(2) != DrawRule(2).printed(values)).any()  # (the neighbour this rules out exists here)


def test_the_printed_decimals_have_one_owner():
    # A table prints its values at ``digits``, else one decimal of a percent and three of a fraction; a table
    # that asks for none at all (digits=0) prints integers, not one decimal.
    assert TableSpec(id="t", stem="t", title="t").printed_digits == 1
    assert TableSpec(id="t", stem="t", title="t", scale=1.0).printed_digits == 3
    assert TableSpec(id="t", stem="t", title="t", digits=2).printed_digits == 2
    assert TableSpec(id="t", stem="t", title="t", digits=0).printed_digits == 0
    # No module of the package writes the rule again.
    package = Path(__file__).resolve().parents[1] / "eemrepro"
    again = [str(p.relative_to(package)) for p in package.rglob("*.py")
             if re.search(r"digits or \(1 if", p.read_text()) and p.name != "_spec.py"]
    assert again == []


# -- the committed tables: what they print against what is said about them -------------------------------------


def _cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _html_rows(html):
    """The body cells of a pandas Styler table, row by row."""
    body = html[html.index("<tbody>"):]
    return [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def printed_values(spec):
    """{method: {data set: Decimal}} as ``<stem>.md`` prints the values of its finished cells (the long table)."""
    lines = (TABLES / f"{spec.stem}.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines)
                 if {"method", "status"} <= set(_cells(line)))
    head = _cells(lines[start])
    value = head.index("status") + 1
    out = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = _cells(line)
        number = re.match(r"[+-]?\d+\.\d+", cells[value])
        if cells[head.index("status")] == "ok" and number:
            assert len(number.group().split(".")[1]) == spec.printed_digits, line
            out.setdefault(cells[1], {})[cells[0]] = Decimal(number.group())
    return out


def printed_wdl(spec, values, a, b, datasets=None):
    """(wins, draws, losses, data sets) of ``a`` against ``b`` counted from the printed strings alone."""
    better = 1 if get_metric(spec.metric).greater_is_better else -1
    both = [d for d in values.get(a, {}) if d in values.get(b, {}) and (not datasets or d in datasets)]
    diff = [better * (values[a][d] - values[b][d]) for d in both]
    return sum(x > 0 for x in diff), sum(x == 0 for x in diff), sum(x < 0 for x in diff), len(both)


def _committed_frame(spec):
    """The table's committed CSV as the frame the report renders."""
    return pd.read_csv(TABLES / f"{spec.stem}.csv", comment="#")


def _claim_numbers(spec):
    """{claim: its numbers} of ``claims.md`` for the registered claims on ``spec``'s table."""
    from eemrepro.papers import registered_papers

    rows = {_cells(line)[0]: _cells(line)[3] for line in (TABLES / "claims.md").read_text().splitlines()
            if line.startswith("| ") and len(_cells(line)) == 4}
    return {c: rows[c.wording] for p in registered_papers() for c in p.claims
            if c.table == spec.id and c.wording in rows}


COMMITTED = [s for s in registered_tables() if (TABLES / f"{s.stem}.md").is_file()
             and (s.pairs or (TABLES / f"{s.stem}_comparison.md").is_file())]


def test_the_committed_tables_with_pairs_are_all_checked():
    # The paper tables whose comparisons are committed: EEM Table 4 (pairs, summary, comparison), ESMM Table 4
    # (pairs, summary), the LS-SVM ensemble's Table 4.1 (an error table: comparison only).
    assert sorted(s.id for s in COMMITTED) == ["eem_table4", "esmm_table4", "lssvm_ensemble_table41"]


@pytest.mark.parametrize("spec", [s for s in COMMITTED if s.pairs], ids=lambda s: s.id)
def test_the_committed_summary_counts_the_printed_table(spec):
    values = printed_values(spec)
    # The wins / draws / losses section alone (the Bayesian tests' tables follow, tests/reports/test_bayes.py).
    text = (TABLES / f"{spec.summary}.md").read_text().split("## Wins / draws / losses", 1)[1].split("\n## ", 1)[0]
    rows = {_cells(line)[0]: tuple(int(c) for c in _cells(line)[1:5]) for line in text.splitlines()
            if line.startswith("| ") and " vs " in line}
    assert [f"{b} vs {a}" for a, b in spec.pairs if f"{b} vs {a}" in rows] == list(rows)
    for a, b in spec.pairs:
        assert rows[f"{b} vs {a}"] == printed_wdl(spec, values, b, a), (a, b)


@pytest.mark.parametrize("spec", [s for s in COMMITTED if s.pairs], ids=lambda s: s.id)
def test_the_committed_claims_count_the_printed_table(spec):
    values = printed_values(spec)
    said = _claim_numbers(spec)
    checked = 0
    for claim, numbers in said.items():
        wins, draws, losses, n = printed_wdl(spec, values, claim.method, claim.other, claim.datasets) \
            if claim.other else (None,) * 4
        if claim.test == "wins":
            assert numbers.startswith(f"{wins} wins, {draws} draws, {losses} losses on {n} data sets"), claim.id
        elif claim.test == "above-count":
            assert numbers.startswith(f"above on {wins} of {n} data sets"), claim.id
        else:
            continue
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("spec", [s for s in COMMITTED if s.pairs], ids=lambda s: s.id)
def test_the_reports_summary_counts_the_printed_table(spec):
    from eemrepro.reports._site import _summaries

    values = printed_values(spec)
    df = _committed_frame(spec)
    # The committed CSV (6 significant digits) prints as the Markdown table does: the report reads that table.
    shown = df[df["status"] == "ok"]
    assert {(r.method, r.dataset): Decimal(f"{r[spec.metric]:.{spec.printed_digits}f}") for _, r in shown.iterrows()
            if r.method in values} == {(m, d): v for m, cells in values.items() for d, v in cells.items()}
    wdl = next(s for s in _summaries(summarize(Table(spec), df))[0] if s["title"].startswith("Wins / draws / losses"))
    rows = {r[0]: tuple(int(c) for c in r[1:5]) for r in _html_rows(wdl["html"])}
    assert len(rows) == len(spec.pairs)
    for a, b in spec.pairs:
        assert rows[f"{b} vs {a}"] == printed_wdl(spec, values, b, a), (a, b)


@pytest.mark.parametrize("spec", [s for s in COMMITTED if (TABLES / f"{s.stem}_comparison.md").is_file()],
                         ids=lambda s: s.id)
def test_the_committed_comparison_and_the_reports_count_the_printed_table(spec):
    from eemrepro.reports._site import _comparison_section

    values = printed_values(spec)
    lines = (TABLES / f"{spec.stem}_comparison.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| model") and "| wins" in line)
    # The pairs' table alone (the Bayesian tests' tables follow it, tests/reports/test_bayes.py).
    rows = [_cells(line) for line in itertools.takewhile(lambda line: line.startswith("|"), lines[start + 2:])]
    assert rows
    for model, baseline, wins, draws, losses, n, *_ in rows:
        assert (int(wins), int(draws), int(losses), int(n)) == printed_wdl(spec, values, model, baseline)
    section = _comparison_section(compare(spec, _committed_frame(spec), "best-of-grid"))
    html = next(s["html"] for s in section["summaries"] if "wins / draws / losses" in s["title"])
    assert [r[:6] for r in _html_rows(html)] == [r[:6] for r in rows]


@pytest.mark.parametrize("a, b", [
    ([0.81, 0.72, 0.90, 0.66, 0.75, 0.70], [0.80, 0.70, 0.88, 0.66, 0.73, 0.71]),  # a zero and tied |d|
    ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.5, 1.5, 2.5, 3.5, 6.0, 5.0, 8.0, 7.0]),  # ties only
    ([0.3, 0.5, 0.9, 0.2, 0.4, 0.8, 0.1], [0.1, 0.2, 0.4, 0.6, 0.35, 0.6, 0.15]),  # neither: scipy's exact test
    ([0.81, 0.72, np.nan, 0.66, 0.75, 0.70], [0.80, 0.70, 0.88, 0.66, 0.73, 0.71]),  # a missing value: scipy's NaN
])
def test_wilcoxon_p_is_scipys(a, b):
    """The small samples with ties or zeros take scipy's exact permutation test, evaluated for every sign flip at
    once (``_stats.wilcoxon_p``): the p is scipy's own, to the bit (expected: ``scipy.stats.wilcoxon``)."""
    np.testing.assert_array_equal(wilcoxon_p(a, b), float(scipy_stats.wilcoxon(a, b).pvalue))


@pytest.mark.parametrize("keys, share", [
    ([(r, f) for r in range(3) for f in range(5)], 1 / 5),  # 3 x 5-fold CV: each test part a fifth
    ([(0, f) for f in range(10)] + [(1, f) for f in range(4)], 1 / 4),  # the fewest folds of a repeat
    ([(r, 0) for r in range(5)], None),  # a train-test split a repeat: the folds do not tell its share
    ([(0, 0), (0, 1), (np.nan, 2), (1, np.nan), (1, 0), (1, 1)], 1 / 2),  # missing keys not counted
    ([], None),
])
def test_fold_test_share_is_one_over_the_folds_a_repeat(keys, share):
    """The correlated t-test's correlation: 1/k for k-fold CV (Nadeau and Bengio), k the fewest distinct folds of
    a repeat (expected: counted by hand)."""
    assert fold_test_share(keys) == share


def test_friedman_of_models_tied_on_every_data_set_is_no_evidence_and_warns_nothing():
    """Two or three models whose values tie on every data set (a model registered twice under two names): every
    rank is equal, so the statistic is 0 and p is 1 (scipy's tie correction divides 0 by 0 there, with a raw
    RuntimeWarning the user saw from ``tables``). One data set not tied is scipy's own test (expected: scipy)."""
    import warnings

    from eemrepro._stats import friedman

    tied = pd.DataFrame({"A": [0.8, 0.7, 0.9, 0.6], "B": [0.8, 0.7, 0.9, 0.6], "C": [0.8, 0.7, 0.9, 0.6]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert friedman(tied) == (0.0, 1.0)
        assert friedman(tied[["A", "B"]]) == (0.0, 1.0)
    one_apart = tied.assign(C=[0.8, 0.7, 0.9, 0.65])
    expected = scipy_stats.friedmanchisquare(one_apart["A"], one_apart["B"], one_apart["C"])
    assert friedman(one_apart) == pytest.approx((expected.statistic, expected.pvalue), rel=1e-12)
    assert 0 < expected.pvalue < 1
