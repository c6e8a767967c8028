"""The statistics of a metric table's models, each computed here once: average ranks, Friedman's test and
Nemenyi's critical difference (Demšar 2006), wins / draws / losses, Wilcoxon signed-rank tests with Holm's
correction, and the Bayesian tests beside them (Benavoli et al. 2017): the correlated t-test on one data set's
repeated cross-validation folds and the signed-rank test across data sets, each giving the probabilities that one
model is better, that the two are practically equivalent (their difference inside the rope), or that the other is
better. The paper summaries, the claims, the comparison pages and the report all ask here.

One draw rule (``DrawRule``): two values draw when they print alike at the table's printed decimals
(``TableSpec.printed_digits``), and a win is the better printed value in the metric's direction (a lower
error wins). Average ranks, Friedman and Wilcoxon take the unrounded means. scipy computes the ranks, the
tests and the studentized range, statsmodels Holm's correction: nothing here re-implements them.
"""

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from threadpoolctl import threadpool_limits

from .experiments import get_metric
from .experiments._config import ROPE  # noqa: F401  (the rope by default: the config's key owns it; asked here)

#: A Wilcoxon signed-rank test on fewer pairs cannot reach p < 0.05 (two-sided: n = 6 gives 0.031 at best).
MIN_WILCOXON = 6

#: Monte Carlo draws of the Bayesian signed-rank test's posterior (baycomp's default).
SIGNED_RANK_SAMPLES = 50_000
#: The Dirichlet process' prior strength, its pseudo-observation at a difference of 0 (Benavoli et al. 2017).
SIGNED_RANK_PRIOR = 0.5

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
    """(statistic, p) of Friedman's test of equal ranks of the columns of ``wide`` (scipy); (0, 1) where every
    row ties every column (scipy's tie correction is then 0 / 0: every rank equal, no evidence of a difference)."""
    if (wide.nunique(axis=1, dropna=False) <= 1).all():
        return 0.0, 1.0
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
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if not np.any(d != 0):
        return 1.0
    ranks = np.where(d != 0, stats.rankdata(np.where(d != 0, np.abs(d), np.nan), nan_policy="omit"), 0.0)
    ties = np.unique(ranks[d != 0]).size < np.count_nonzero(d)
    if d.size > 13 or not (ties or np.any(d == 0)) or np.isnan(d).any():
        return float(stats.wilcoxon(a, b).pvalue)
    # scipy's own test here (up to 13 pairs, with ties or zeros): the exact permutation test over the 2**n sign
    # flips of the differences, whose statistic (the positive differences' rank sum) it evaluates one flip at a
    # time; evaluated here for every flip at once. The ranks (of |d|, which a flip keeps) are halves, so the sums
    # are exact and the p the same, in a hundredth of the time.
    return float(stats.permutation_test((d,), lambda x, axis: ((x > 0) * ranks).sum(axis=axis),
                                        permutation_type="samples", vectorized=True,
                                        alternative="two-sided").pvalue)


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


@dataclass(frozen=True)
class Posterior:
    """The three probabilities of a Bayesian comparison of two models a and b (in the metric's direction): a is
    better by more than the rope, the two are practically equivalent (their difference within the rope), b is
    better by more than the rope. ``samples``: the posterior's draws (a better, rope, b better), where it is
    sampled (the signed-rank test)."""

    better: float
    rope: float
    worse: float
    samples: np.ndarray = None

    def probabilities(self):
        return self.better, self.rope, self.worse


def _signed_differences(a, b, greater_is_better):
    """``a - b`` as floats, signed so that a positive difference is a's advantage."""
    return (np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) * (1.0 if greater_is_better else -1.0)


def correlated_ttest(a, b, rope, test_share, greater_is_better=True):
    """The Bayesian correlated t-test of the paired test-fold scores ``a`` and ``b`` of one data set (every fold of
    every repeat of a cross-validation): a ``Posterior`` (P(a better), P(rope), P(b better)), or None under two
    folds.

    Corani and Benavoli (2015): the folds' training sets overlap, so the differences are correlated, with
    correlation ``test_share`` (the test part's share of the data, 1/k for k-fold CV; Nadeau and Bengio's
    correction). The posterior of the mean difference is Student's t with n - 1 degrees of freedom, located at the
    mean difference, scaled by sqrt((1/n + rho / (1 - rho)) var) (var the differences' sample variance). P(a
    better) is its mass above ``rope``, P(b better) below ``-rope`` (the metric's units, as ``a`` and ``b``).

    Examples
    --------
    >>> post = correlated_ttest([0.90, 0.92, 0.91, 0.93], [0.80, 0.81, 0.79, 0.82], rope=0.01, test_share=0.5)
    >>> round(post.better, 3), round(post.worse, 3)
    (0.999, 0.0)
    """
    diff = _signed_differences(a, b, greater_is_better)
    n = diff.size
    if n < 2:
        return None
    mean, var = float(diff.mean()), float(diff.var(ddof=1))
    if var == 0:  # every fold the same difference: the posterior is a point there
        better, worse = float(mean > rope), float(mean < -rope)
        return Posterior(better, 1.0 - better - worse, worse)
    scale = np.sqrt((1.0 / n + test_share / (1.0 - test_share)) * var)
    worse = float(stats.t.cdf(-rope, n - 1, loc=mean, scale=scale))
    better = float(stats.t.sf(rope, n - 1, loc=mean, scale=scale))
    return Posterior(better, max(0.0, 1.0 - better - worse), worse)  # (not -1e-17 where the rope holds nothing)


def signed_rank(a, b, rope, greater_is_better=True, samples=SIGNED_RANK_SAMPLES, seed=0, prior=SIGNED_RANK_PRIOR):
    """The Bayesian signed-rank test of the paired per-data-set scores ``a`` and ``b``: a ``Posterior`` (P(a
    better), P(rope), P(b better), and its ``samples``), or None without a data set.

    Benavoli et al. (2014, 2017): a Dirichlet process over the differences, with a prior pseudo-observation of
    weight ``prior`` at 0. Each Monte Carlo draw of its weights w gives the posterior's three masses: the sums
    w_i w_j over the pairs of differences (the pseudo-observation's included) whose mean is above ``rope`` (a
    better), below ``-rope`` (b better), else within it (a mean on the rope's edge counting half). Each
    probability is the share of the draws in which its region has the largest mass, as baycomp reads them. The
    draws come from numpy's Generator seeded with ``seed``: the same inputs give the same bytes.

    Examples
    --------
    >>> post = signed_rank([0.9, 0.8, 0.7, 0.85, 0.75], [0.7, 0.6, 0.5, 0.65, 0.55], rope=0.01, samples=2000)
    >>> post.better > 0.9
    True
    """
    diff = _signed_differences(a, b, greater_is_better)
    if diff.size == 0:
        return None
    z = np.concatenate(([0.0], diff))
    sums = z[:, None] + z[None, :]
    above = (sums > 2 * rope) + 0.5 * (sums == 2 * rope)
    below = (sums < -2 * rope) + 0.5 * (sums == -2 * rope)
    weights = np.ones(z.size)
    weights[0] = prior
    w = np.random.default_rng(seed).dirichlet(weights, samples)
    # Each draw's quadratic forms w A w^T, as one matrix product per region (a third of einsum's time), on one
    # BLAS thread: products this small take twice the CPU (and more time on a busy machine) split over threads,
    # and each element's sum is the same one (BLAS splits the rows and columns, not the sum).
    with threadpool_limits(1, user_api="blas"):
        better = ((w @ above) * w).sum(axis=1)
        worse = ((w @ below) * w).sum(axis=1)
    draws = np.column_stack([better, 1.0 - better - worse, worse])
    share = np.bincount(np.argmax(draws, axis=1), minlength=3) / samples
    return Posterior(float(share[0]), float(share[1]), float(share[2]), draws)


def pair_seed(*names):
    """A signed-rank test's seed from the names it compares (CRC-32 of them): the same pair draws the same
    samples whatever else is compared, and another pair other ones."""
    return zlib.crc32("\x1f".join(map(str, names)).encode("utf-8"))


#: The probabilities' columns of a pair's row, in the order of a ``Posterior``'s.
BAYES_COLUMNS = ("P(model better)", "P(rope)", "P(baseline better)")


def _probability_row(post):
    return dict(zip(BAYES_COLUMNS, post.probabilities() if post is not None else (np.nan,) * 3, strict=True))


def signed_rank_pairs(wide, pairs, rope, greater_is_better=True, samples=SIGNED_RANK_SAMPLES):
    """The Bayesian signed-rank test of each (model, baseline) pair of ``wide`` (data sets x methods, the table's
    units) on the data sets both have, ``rope`` in those units: (a frame of model, baseline, data sets, rope and
    the three probabilities ``BAYES_COLUMNS``, {(model, baseline): the posterior's samples}). Each pair's draws
    are seeded by its names (``pair_seed``)."""
    rows, draws = [], {}
    for m, b in pairs:
        both = wide[[m, b]].dropna()
        post = signed_rank(both[m], both[b], rope, greater_is_better, samples, seed=pair_seed(m, b))
        rows.append({"model": m, "baseline": b, "datasets": len(both), "rope": rope, **_probability_row(post)})
        if post is not None:
            draws[(m, b)] = post.samples
    return pd.DataFrame(rows, columns=["model", "baseline", "datasets", "rope", *BAYES_COLUMNS]), draws


def fold_test_share(keys):
    """The correlation of the correlated t-test of test folds ``keys`` ((repeat, fold) pairs): 1/k for k folds a
    repeat (k-fold cross-validation: each test part is 1/k of the data); None with one test part a repeat (a
    train-test split, whose share the folds do not tell)."""
    # The distinct folds of each repeat, a missing repeat or fold (None, NaN) not counted (as pandas' nunique of a
    # groupby would): a set each, not a Series and a groupby for each of a report's thousands of pairs.
    per_repeat = {}
    for r, f in keys:
        if r is not None and r == r:
            folds = per_repeat.setdefault(r, set())
            if f is not None and f == f:
                folds.add(f)
    k = min(map(len, per_repeat.values()), default=0)
    return 1.0 / k if k >= 2 else None


#: The columns of ``correlated_pairs``' frame: a pair on a data set, the (repeat, fold) test folds both have
#: (``folds``, of ``repeats`` repeats), the correlation used (the test part's share), the mean difference, the rope
#: and the three probabilities.
CORRELATED_COLUMNS = ("model", "baseline", "dataset", "folds", "repeats", "test share", "mean difference", "rope",
                      *BAYES_COLUMNS)


def correlated_pairs(folds, pairs, rope, greater_is_better=True, shares=None):
    """The Bayesian correlated t-test of each (model, baseline) pair on each data set where both have test folds:
    ``folds`` {(data set, method): ((repeat, fold, value), ...)} (the table's units, as ``rope``), the two paired
    on the (repeat, fold) both have. A frame (``CORRELATED_COLUMNS``): model, baseline, data set, folds (and the
    repeats they come from), test share (the correlation), mean difference (the model's minus the baseline's),
    rope and ``BAYES_COLUMNS``. The correlation is the folds' test share
    (``fold_test_share``), else the data set's in ``shares`` ({data set: its test part's share}, a train-test
    split's); a data set with neither is left out."""
    datasets = list(dict.fromkeys(d for d, _ in folds))
    rows = []
    for m, b in pairs:
        for d in datasets:
            mine, theirs = folds.get((d, m)), folds.get((d, b))
            if not mine or not theirs:
                continue
            theirs = {(r, f): v for r, f, v in theirs}
            paired = [((r, f), v, theirs[(r, f)]) for r, f, v in mine if (r, f) in theirs]
            share = fold_test_share([k for k, _, _ in paired]) or (shares or {}).get(d)
            if share is None:
                continue
            a, c = np.array([v for _, v, _ in paired]), np.array([v for _, _, v in paired])
            rows.append({"model": m, "baseline": b, "dataset": d, "folds": len(paired),
                         "repeats": len({r for (r, _), _, _ in paired}), "test share": float(share),
                         "mean difference": float((a - c).mean()), "rope": rope,
                         **_probability_row(correlated_ttest(a, c, rope, share, greater_is_better))})
    return pd.DataFrame(rows, columns=list(CORRELATED_COLUMNS))
