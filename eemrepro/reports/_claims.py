"""A paper's qualitative claims as predicates over its reproduced tables.

A paper plug-in lists ``Claim`` objects (``Paper(claims=...)``): the claim in
the paper's words, the sentence it comes from, the table it is about and a
test, one of

* ``wins``: ``method`` has more wins than losses against ``other`` over the
  data sets (a draw: equal at the table's printed precision, as in the summaries;
  every comparison below uses that precision);
* ``close``: ``method`` within ``value`` of ``other`` on every data set;
* ``wilcoxon``: ``method`` above ``other`` by a Wilcoxon signed-rank test at
  level ``value``; ``comparable``: no difference by that test at level ``value``;
* ``best-count``: ``method`` best (ties included) on at least ``value`` data sets;
* ``above-count``: ``method`` above ``other`` on at least ``value`` data sets;
* ``mean-difference``: ``method``'s mean over the data sets at least ``value``
  above ``other``'s;
* ``never-worst``: ``method`` never the worst (a tie for the worst counts as worst; a
  data set where every method ties has no worst);
* ``best-rank``: ``method`` first by average rank;
* ``rho-at-least``: the correlation table's rho at least ``value`` for
  h >= ``min_h`` on ``datasets``.

``evaluate_claims`` gives each a verdict (confirmed / not confirmed / not
measured / too few data sets: ``MIN_DATASETS``) with the numbers behind it, computed from the same tables ``tables``
writes; ``check --claims FILE`` fails when a verdict differs from the one FILE
pins, so a changed store cannot change a conclusion silently.
"""

import weakref
from dataclasses import dataclass, field

import numpy as np

from .._stats import MIN_WILCOXON, DrawRule, average_ranks, wilcoxon_p
from ..papers import Claim, registered_papers


@dataclass
class ClaimResult:
    claim: Claim
    verdict: str  # confirmed | not confirmed | not measured | too few data sets
    numbers: str
    paper: str = field(default="")

    def line(self):
        return f"{self.verdict.upper()} {self.claim.id}: {self.claim.wording} -- {self.numbers}"


def _wide(table, metric, datasets):
    wide = _pivot(table, metric)
    if datasets:
        wide = wide[wide.index.isin(datasets)]
    return wide


# A built table's (data set x method) pivot, kept while the table lives: every claim on a table (and every reading
# of it) judges the same pivot, which pandas took 5 ms to make each time (a third of the claims' cost).
_PIVOTS = {}


def _pivot(table, metric):
    key = (id(table), metric)
    held = _PIVOTS.get(key)
    if held is not None and held[0]() is table:
        return held[1]
    ok = table[table["status"] == "ok"] if "status" in table else table
    wide = ok.pivot_table(index="dataset", columns="method", values=metric)
    for k in [k for k, (ref, _) in _PIVOTS.items() if ref() is None]:
        del _PIVOTS[k]
    _PIVOTS[key] = (weakref.ref(table), wide)
    return wide


def _evaluate(claim, table, spec):
    if spec.builder == "correlation":
        t = table[(table["h"] >= claim.min_h) & table["spearman"].notna()]
        if claim.datasets:
            t = t[t["dataset"].isin(claim.datasets)]
        if t.empty:
            return "not measured", "no rho for these data sets"
        lo, hi = t["spearman"].min(), t["spearman"].max()
        ok = lo >= claim.value
        return ("confirmed" if ok else "not confirmed"), (f"rho {lo:.2f} to {hi:.2f} over {len(t)} cells "
                                                          f"(h >= {claim.min_h}; claim: >= {claim.value:g})")
    wide = _wide(table, spec.metric, claim.datasets)
    # Ties are equal values as the table prints them, wins in the metric's direction (the summaries' rule).
    rule = DrawRule.of(spec)
    sign = 1.0 if rule.greater_is_better else -1.0
    if claim.method not in wide or (claim.other is not None and claim.other not in wide):
        return "not measured", f"{claim.method}" + (f" or {claim.other}" if claim.other else "") + " not in the table"
    if claim.other is not None:
        both = wide[[claim.method, claim.other]].dropna()
        if both.empty:
            return "not measured", "no data set with both"
        wins, draws, losses = rule.count(both[claim.method], both[claim.other])
        diff = sign * (both[claim.method] - both[claim.other])
        if claim.test == "close":
            gaps = (both[claim.method] - both[claim.other]).abs()
            return ("confirmed" if (gaps <= claim.value).all() else "not confirmed"), \
                ", ".join(f"{d}: {both.at[d, claim.method]:.4g} vs {both.at[d, claim.other]:.4g}"
                          for d in both.index) + f" (claim: within {claim.value:g})"
        if claim.test == "wins":
            return ("confirmed" if wins > losses else "not confirmed"), \
                f"{wins} wins, {draws} draws, {losses} losses on {len(both)} data sets"
        if claim.test in ("wilcoxon", "comparable"):
            p = wilcoxon_p(both[claim.method], both[claim.other])
            ok = p < claim.value and diff.median() > 0 if claim.test == "wilcoxon" else p >= claim.value
            return ("confirmed" if ok else "not confirmed"), \
                f"median difference {diff.median():+.2f}, Wilcoxon p = {p:.3g} on {len(both)} data sets"
        if claim.test == "above-count":
            return ("confirmed" if wins >= claim.value else "not confirmed"), \
                f"above on {wins} of {len(both)} data sets (claim: >= {claim.value:g})"
        if claim.test == "mean-difference":
            mean = float(diff.mean())
            return ("confirmed" if mean >= claim.value else "not confirmed"), \
                f"mean difference {mean:+.1f} over {len(both)} data sets (claim: >= {claim.value:+g})"
    full = wide.dropna()
    if full.empty:
        return "not measured", "no data set with every method"
    scores = rule.scores(full)
    if claim.test == "best-count":
        best = int((scores[claim.method] >= scores.max(axis=1)).sum())
        return ("confirmed" if best >= claim.value else "not confirmed"), \
            f"best (ties included) on {best} of {len(full)} data sets (claim: >= {claim.value:g})"
    if claim.test == "never-worst":
        # A data set where every method ties (as printed) has no worst method.
        spread = scores.max(axis=1) > scores.min(axis=1)
        worst = list(full.index[spread & (scores[claim.method] <= scores.min(axis=1))])
        note = f" ({int((~spread).sum())} with every method tied left out)" if (~spread).any() else ""
        return ("confirmed" if not worst else "not confirmed"), \
            (f"never the worst on {len(full)} data sets{note}" if not worst
             else f"worst (ties included) on {len(worst)} of {len(full)}: {', '.join(worst[:5])}{note}")
    if claim.test == "best-rank":
        ranks = average_ranks(full, rule.greater_is_better).sort_values()
        first = ranks.index[0]
        position = int(np.flatnonzero(ranks.index == claim.method)[0]) + 1
        return ("confirmed" if first == claim.method else "not confirmed"), \
            (f"average rank {ranks[claim.method]:.2f}, position {position} of {len(ranks)} "
             f"(first: {first} {ranks.iloc[0]:.2f}) on {len(full)} data sets")
    raise ValueError(f"claim {claim.id}: test {claim.test!r} needs 'other'")


#: The fewest data sets a claim over a table's data sets is judged on: below it, the verdict is "too few data sets"
#: (fails closed, never "confirmed" by one or two sets). A Wilcoxon signed-rank test on n pairs cannot reach
#: p < 0.05 below n = 6 (its smallest two-sided p is 2 / 2^n), so saying "no difference" there means nothing.
MIN_DATASETS = {"wilcoxon": MIN_WILCOXON, "comparable": MIN_WILCOXON}
MIN_DATASETS_DEFAULT = 3


def _judged_on(claim, table, spec):
    """How many data sets the claim is judged on (every method it names has a value there), or None."""
    if spec.builder == "correlation":
        return None  # judged on cells of h, per data set; the claim names its data sets
    wide = _wide(table, spec.metric, claim.datasets)
    methods = [m for m in (claim.method, claim.other) if m is not None]
    if not all(m in wide for m in methods):
        return None
    return len(wide[methods].dropna() if claim.other is not None else wide.dropna())


def judge(claim, table, spec):
    """(verdict, numbers) of ``claim`` on ``spec``'s built ``table``."""
    verdict, numbers = _evaluate(claim, table, spec)
    # A claim about fewer named data sets than that ("similar on wine") is judged on each of them.
    least = MIN_DATASETS.get(claim.test, MIN_DATASETS_DEFAULT)
    if claim.datasets:
        least = min(least, len(claim.datasets))
    n = _judged_on(claim, table, spec)
    if verdict != "not measured" and n is not None and n < least:
        return "too few data sets", f"{numbers}; judged on {n} data set(s), at least {least} needed"
    return verdict, numbers


def evaluate_claims(records, selection="best-of-grid", unfinished=(), papers=None, built=None):
    """Every registered claim whose table the records hold, with its verdict and numbers.

    ``built``: {table id: table} already built from these records with ``selection``
    (either layout: only the cells with a value count). ``records`` None: ``built``
    holds every table that applies.
    """
    from ._records import split_by_kind
    from ._tables import applying_records, build_table

    parts = split_by_kind(records) if records is not None else None  # None: ``built`` holds every table
    results = []
    for paper in papers or registered_papers():
        specs = {s.id: s for s in paper.tables}
        tables = dict(built or {})
        for claim in paper.claims:
            spec = specs.get(claim.table)
            if spec is None:
                raise ValueError(f"claim {claim.id}: {paper.id} has no table {claim.table!r}")
            applies, mine = applying_records(spec, parts, tables)
            if not applies:
                continue
            if spec.id not in tables:
                tables[spec.id] = build_table(spec, mine, selection, unfinished=unfinished, layout="run")
            verdict, numbers = judge(claim, tables[spec.id], spec)
            results.append(ClaimResult(claim, verdict, numbers, paper.id))
    return results
