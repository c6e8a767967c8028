"""The statistics of a metric table's models, each computed here once: average ranks, Friedman's test and
Nemenyi's critical difference (Demšar 2006), wins / draws / losses, and Wilcoxon signed-rank tests with Holm's
correction. The paper summaries, the claims, the comparison pages and the report all ask here.

One draw rule (``DrawRule``): two values draw when they print alike at the table's printed decimals
(``TableSpec.printed_digits``), and a win is the better printed value in the metric's direction (a lower
error wins). Average ranks, Friedman and Wilcoxon take the unrounded means. scipy computes the ranks, the
tests and the studentized range, statsmodels Holm's correction: nothing here re-implements them.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .experiments import get_metric

#: A Wilcoxon signed-rank test on fewer pairs cannot reach p < 0.05 (two-sided: n = 6 gives 0.031 at best).
MIN_WILCOXON = 6

_DECIMALS = {1: "one decimal", 2: "two decimals", 3: "three decimals", 4: "four decimals"}


@dataclass(frozen=True)
class DrawRule:
    """What a draw and a win are on a table: values equal as printed at ``decimals`` draw; otherwise the higher
    printed value wins, or the lower where not ``greater_is_better``.

    Examples
    --------
    >>> rule = DrawRule(decimals=1)
    >>> rule.count(pd.Series([83.45, 80.0, 70.0]), pd.Series([83.5, 80.1, 69.0]))  # 83.45 prints 83.5
    (1, 1, 1)
    >>> DrawRule(decimals=4, greater_is_better=False).count(pd.Series([0.09]), pd.Series([0.1]))
    (1, 0, 0)
    """

    decimals: int = 1
    greater_is_better: bool = True

    @classmethod
    def of(cls, spec):
        """The rule of a metric table: its printed decimals, its metric's direction."""
        return cls(spec.printed_digits, get_metric(spec.metric).greater_is_better)

    def printed(self, values):
        """``values`` (a Series or a frame) as the table prints them: Python's ``round`` of each float, the rounding
        of ``f"{x:.{d}f}"`` (numpy's and pandas' ``round`` scale first: 83.45 becomes 83.4 where the table prints
        83.5)."""
        return values.map(lambda v: round(float(v), self.decimals))

    def scores(self, values):
        """The printed ``values`` signed so that higher is better."""
        return self.printed(values) * (1.0 if self.greater_is_better else -1.0)

    def count(self, a, b):
        """(wins, draws, losses) of ``a`` against ``b`` (Series on the same index; a missing value counts
        nowhere)."""
        sa, sb = self.scores(a), self.scores(b)
        return int((sa > sb).sum()), int((sa == sb).sum()), int((sa < sb).sum())

    def best(self, values):
        """A mask of ``values`` (one data set's models) that print as the best value in the metric's direction:
        every value tied with it at the printed decimals is best too; a missing value never is.

        Examples
        --------
        >>> DrawRule(decimals=1).best(pd.Series([83.45, 83.5, 80.0])).tolist()  # both print 83.5
        [True, True, False]
        >>> DrawRule(decimals=3, greater_is_better=False).best(pd.Series([0.3, 0.25, np.nan])).tolist()
        [False, True, False]
        """
        values = pd.Series(values, dtype=float)
        known = values.notna().to_numpy()
        if not known.any():
            return np.zeros(len(values), dtype=bool)
        scores = self.scores(values[known])
        out = np.zeros(len(values), dtype=bool)
        out[known] = (scores == scores.max()).to_numpy()
        return out

    def describe(self):
        """The rule in words, for a heading: "equal at one decimal"."""
        text = "equal at " + _DECIMALS.get(self.decimals, f"{self.decimals} decimals")
        return text if self.greater_is_better else text + ", the lower value winning"


def average_ranks(wide, greater_is_better=True):
    """Each method's (column's) rank averaged over the data sets (rows) of ``wide``, 1 = best, ties sharing
    their mean rank (Demšar 2006)."""
    return wide.rank(axis=1, ascending=not greater_is_better).mean()


def friedman(wide):
    """(statistic, p) of Friedman's test of equal ranks of the columns of ``wide`` (scipy)."""
    result = stats.friedmanchisquare(*[wide[c] for c in wide.columns])
    return float(result.statistic), float(result.pvalue)


def nemenyi_cd(k, n, alpha=0.05):
    """Nemenyi's critical difference of average ranks for ``k`` methods on ``n`` data sets (Demšar 2006, eq. 5):
    q_alpha sqrt(k (k + 1) / (6 n)), q_alpha the studentized range quantile over sqrt(2)."""
    q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
    return float(q * np.sqrt(k * (k + 1) / (6 * n)))


def wilcoxon_p(a, b):
    """scipy's two-sided Wilcoxon signed-rank p of the pairs (a, b); 1 where every difference is zero (no
    statistic: no evidence of a difference)."""
    if not np.any(np.asarray(a) - np.asarray(b) != 0):
        return 1.0
    return float(stats.wilcoxon(a, b).pvalue)


def holm(pvalues):
    """Holm's step-down adjustment of ``pvalues`` (statsmodels)."""
    from statsmodels.stats.multitest import multipletests

    return multipletests(pvalues, method="holm")[1]


def pair_tests(wide, pairs, rule):
    """Each (model, baseline) pair of ``wide`` (data sets x methods) on the data sets both have: wins / draws /
    losses by ``rule``, the median difference, Wilcoxon's p (from ``MIN_WILCOXON`` data sets on) and Holm's
    correction over the pairs tested. A frame: model, baseline, wins, draws, losses, datasets, median
    difference, wilcoxon p, holm p."""
    rows = []
    for m, b in pairs:
        both = wide[[m, b]].dropna()
        wins, draws, losses = rule.count(both[m], both[b])
        p = wilcoxon_p(both[m], both[b]) if len(both) >= MIN_WILCOXON else np.nan
        rows.append({"model": m, "baseline": b, "wins": wins, "draws": draws, "losses": losses,
                     "datasets": len(both),
                     "median difference": float((both[m] - both[b]).median()) if len(both) else np.nan,
                     "wilcoxon p": p})
    out = pd.DataFrame(rows)
    tested = out["wilcoxon p"].notna() if len(out) else pd.Series(dtype=bool)
    out["holm p"] = np.nan
    if tested.any():
        out.loc[tested, "holm p"] = holm(out.loc[tested, "wilcoxon p"])
    return out


def wins_draws_losses(table, pairs, value="gmean", rule=None):
    """For each pair (a, b) of a table (rows of dataset, method, ``value``): the data sets where b wins, draws,
    loses against a by ``rule`` (a table's own is ``DrawRule.of(spec)``; None: ``DrawRule()``, one decimal,
    higher is better). A frame: pair ("b vs a"), wins, draws, losses, datasets."""
    rule = rule or DrawRule()
    wide = table.pivot_table(index="dataset", columns="method", values=value)
    rows = []
    for a, b in pairs:
        if a not in wide or b not in wide:
            continue
        both = wide[[a, b]].dropna()
        wins, draws, losses = rule.count(both[b], both[a])
        rows.append({"pair": f"{b} vs {a}", "wins": wins, "draws": draws, "losses": losses, "datasets": len(both)})
    return pd.DataFrame(rows)


def ranks_and_tests(table, pairs=(), value="gmean", alpha=0.05, greater_is_better=True):
    """Average rank per method (1 = best), Friedman test, Nemenyi CD and Wilcoxon tests of the pairs.

    Only data sets where every method has a value take part.
    """
    wide = table.pivot_table(index="dataset", columns="method", values=value).dropna()
    out = {"datasets": len(wide), "methods": list(wide.columns)}
    if len(wide) < 2 or wide.shape[1] < 2:
        return out
    out["average_rank"] = average_ranks(wide, greater_is_better).sort_values().to_dict()
    if wide.shape[1] >= 3:
        out["friedman_statistic"], out["friedman_p"] = friedman(wide)
        out["nemenyi_cd"] = nemenyi_cd(wide.shape[1], len(wide), alpha)
    out["wilcoxon"] = [{"pair": f"{b} vs {a}", "median_difference": float((wide[b] - wide[a]).median()),
                        "wilcoxon_p": wilcoxon_p(wide[b], wide[a])}
                       for a, b in pairs if a in wide and b in wide]
    return out
