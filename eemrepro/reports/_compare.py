"""Your models against a paper's: the statistics of a metric table that holds models the paper has not.

The paper's own tables and summaries stay what they are (they rank the
paper's columns); this is a table and a report page of its own, made when a
metric table holds other models (a user's, run with ``baselines:`` naming the
paper's store), and for every benchmark table (``_benchmark``: a store's data
sets x models, whatever the data sets). Everything is computed on the data
sets where every compared model has a value, and says which ("on 7 of 9 data
sets"):

* wins / draws / losses of each new model against each of the paper's
  (a draw: equal as printed, a win in the metric's direction; the ranks use
  the unrounded means);
* average ranks, Friedman's test and the Nemenyi critical difference
  (Demšar 2006), drawn as a critical-difference diagram by scikit-posthocs
  with the scale of the critical difference above it;
* a Wilcoxon signed-rank test of each new model against each of the
  paper's, with Holm's correction over those tests (statsmodels);
* beside them, the Bayesian tests (Benavoli et al. 2017) with a rope (the
  region of practical equivalence, ``_stats.ROPE`` by default): the signed-rank
  test of each pair across the data sets both have, and the correlated t-test of
  each pair on each data set, on the test folds of every repeat.

The statistics themselves are ``_stats``' (one draw rule for every page).
"""

import io
import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from .._stats import (
    BAYES_COLUMNS,
    MIN_WILCOXON,
    ROPE,
    average_ranks,
    correlated_pairs,
    friedman,
    nemenyi_cd,
    pair_tests,
    signed_rank_pairs,
    SIGNED_RANK_SAMPLES,
)
from ..experiments._config import split_test_share
from ._render import FOLD_VALUES
from ._shapes import Table


#: Why two models can rank apart and still draw: said wherever both are shown.
RANKS_NOTE = ("Average ranks are taken on the unrounded means, a draw on the values as printed ({digits} "
              "decimal(s)): two models whose means print alike draw, yet rank apart (83.49 and 83.50 both print "
              "83.5 at one decimal).")
#: Why Nemenyi's bar and Wilcoxon-Holm can disagree on a pair: said wherever both are shown.
TESTS_NOTE = ("Nemenyi and Wilcoxon-Holm can disagree on a pair: Nemenyi compares the two models' average ranks "
              "among all the models with one family-wise critical difference (a pair is told apart only if its "
              "ranks differ by more), while Wilcoxon tests the paired differences of that pair alone, on the data "
              "sets both have, and Holm corrects over the pairs tested.")


def _with_values(df, metric):
    """The methods of a table with a value somewhere, in their order."""
    have = df.loc[df[metric].notna(), "method"] if metric in df else df["method"].iloc[:0]
    return list(dict.fromkeys(have))


def new_methods(spec, df):
    """The methods of a metric table ``df`` that the paper's table does not have, in their order."""
    pub, table = spec.published_frame(), Table(spec)
    if pub is None or not table.shape.compares_methods or df.empty:
        return []
    return [m for m in _with_values(df, table.value) if m not in set(pub["method"])]


def compare_methods(spec, df, alpha=0.05, new=None, rope=None, shares=None):
    """The comparison of the new methods of ``df`` (a metric table) with the others; None without new ones.

    ``new``: the methods compared with the others (default those the paper's
    table does not have, ``new_methods``); where no other method has a value,
    every pair of them is compared instead (a benchmark of a user's models
    alone). Ranks and wins read the table's metric in its direction and a draw
    is equal as printed (``Table.draw_rule``).

    Returns a dict: ``new`` and ``baselines`` (method names), ``datasets``
    (those where every compared method has a value), ``of`` (the table's data
    sets with a value of a new method), ``ranks`` (a frame: method, average
    rank, sorted best first), ``friedman`` (statistic, p) and ``cd`` (the
    Nemenyi critical difference) where there are two or more data sets,
    ``pairs`` (a frame: new method, baseline, wins, draws, losses, median
    difference, Wilcoxon p, Holm-adjusted p: ``_stats.pair_tests``), ``wide``
    (the values, data sets x methods, for the diagram), ``digits`` and ``rule``
    (the draw rule). The Bayesian tests, ``rope`` in the metric's own units
    (0 to 1; default ``_stats.ROPE``, one point of a percent metric): ``rope``
    (in the table's units, as every output states it), the pairs' signed-rank
    probabilities in ``pairs`` (``BAYES_COLUMNS``), ``by_dataset`` (a frame: each
    pair's correlated t-test on each data set, ``_stats.correlated_pairs``) and
    ``posteriors`` ({(model, baseline): the signed-rank posterior's samples}); ``shares``: the test share of
    each data set split once a repeat (train-test), ``configured_shares``.
    """
    table = Table(spec)
    metric = table.value
    if new is None:
        new = new_methods(spec, df)
    else:
        have = set(_with_values(df, metric))
        new = [m for m in dict.fromkeys(new) if m in have]
    if not new:
        return None
    rule = table.draw_rule
    wide_all = df.pivot_table(index="dataset", columns="method", values=metric, sort=False)
    baselines = [m for m in dict.fromkeys(df["method"]) if m not in new and m in wide_all
                 and wide_all[m].notna().any()]
    methods = [*baselines, *new]
    wide = wide_all[methods].dropna()
    of = wide_all[new].dropna(how="all").index
    out = {"new": new, "baselines": baselines, "datasets": list(wide.index), "of": list(of), "wide": wide,
           "digits": rule.decimals, "rule": rule}
    if len(wide) >= 1 and len(methods) >= 2:
        ranks = average_ranks(wide, rule.greater_is_better)
        out["ranks"] = pd.DataFrame({"method": ranks.index, "average rank": ranks.to_numpy()}) \
            .sort_values(["average rank", "method"], kind="stable").reset_index(drop=True)
    if len(wide) >= 2 and len(methods) >= 3:
        out["friedman"] = friedman(wide)
        out["cd"] = nemenyi_cd(len(methods), len(wide), alpha)
    pairs = [(m, b) for m in new for b in baselines] if baselines else list(itertools.combinations(new, 2))
    out["pairs"] = pair_tests(wide_all, pairs, rule)
    _bayes(out, spec, df, wide_all, pairs, rope, shares)
    return out


def _bayes(out, spec, df, wide_all, pairs, rope, shares):
    """The Bayesian tests of ``compare_methods``' ``pairs`` into ``out`` (``bayes_tests``): the signed-rank
    probabilities beside each pair's frequentist tests (on ``wide_all``'s data sets both have, as Wilcoxon's)."""
    bayes = bayes_tests(spec, df, wide_all, pairs, rope, out["rule"].greater_is_better, shares)
    out.update({k: v for k, v in bayes.items() if k != "pairs"})
    out["pairs"] = pd.concat([out["pairs"], bayes["pairs"][["rope", *BAYES_COLUMNS]]], axis=1)


def bayes_tests(spec, df, wide, pairs, rope, greater_is_better, shares=None):
    """The Bayesian tests of the (model, baseline) ``pairs`` of a metric table ``df`` (``wide``: its values, data
    sets x methods), ``rope`` in the metric's own units (None: ``_stats.ROPE``): a dict of ``rope`` and ``scale``
    (the rope in the table's units, the table's scale), ``pairs`` (each pair's signed-rank test across the data
    sets both have, ``_stats.signed_rank_pairs``), ``by_dataset`` (each pair's correlated t-test on each data
    set's test folds, ``_stats.correlated_pairs``, ``shares`` the test share of the data sets split once a
    repeat) and ``posteriors`` (the signed-rank samples of each pair)."""
    scaled = (ROPE if rope is None else rope) * spec.scale
    out = {"rope": scaled, "scale": spec.scale, "digits": Table(spec).digits}
    out["pairs"], out["posteriors"] = signed_rank_pairs(wide, pairs, scaled, greater_is_better)
    folds = {}
    if FOLD_VALUES in df:
        for d, m, v in zip(df["dataset"], df["method"], df[FOLD_VALUES], strict=True):
            if isinstance(v, tuple) and v:
                folds[(d, m)] = v
    out["by_dataset"] = correlated_pairs(folds, pairs, scaled, greater_is_better, shares)
    return out


#: What the Bayesian probabilities are, and when to read them rather than the ranks: said wherever they are shown.
BAYES_NOTE = ("The Bayesian tests (Benavoli, Corani, Demšar and Zaffalon, JMLR 2017) give, for a pair, the "
              "probability that the model is better by more than the rope, that the two are practically "
              "equivalent (their difference within the rope, {rope}: the config's tables.rope), and "
              "that the other is better. The signed-rank test reads the pair's means on the data sets both have "
              "(the share of {samples:,} seeded posterior draws in which each region is the most probable); the "
              "correlated t-test reads one data set's test folds of every repeat, paired, their correlation the "
              "test part's share (1/k for k folds, n_test / n for a train-test split; Nadeau and Bengio's "
              "correction). Unlike a mean-rank post-hoc verdict, which depends on which other models are "
              "compared (Benavoli, Corani and Mangili, JMLR 2016), they read the pair alone.")


#: The probabilities' headers in the Markdown and on the page (``_stats.BAYES_COLUMNS``, the pair's "vs" model
#: the baseline).
BAYES_HEADERS = ("P(model better)", "P(rope)", "P(vs better)")


def configured_rope(prov):
    """The rope the results folders' configs set (``tables: {rope}``, their last run's config in the provenance),
    the first folder's that sets one; None where none does (the default)."""
    for config in (prov or {}).get("run_configs", {}).values():
        rope = ((config or {}).get("tables") or {}).get("rope")
        if rope is not None:
            return float(rope)
    return None


def configured_shares(configs):
    """{data set: its test part's share} of the data sets that ``configs`` (config mappings, ``to_dict``'s: the
    provenance's run configs) split once a repeat (``splitter: train-test``): the correlated t-test's correlation
    there (``experiments._config.split_test_share``); a k-fold's folds say theirs (1/k)."""
    out = {}
    for config in configs:
        protocol = (config or {}).get("protocol") or {}
        if protocol.get("splitter") != "train-test":
            continue
        for d in config.get("datasets") or ():
            share = split_test_share(d, protocol.get("train_size"))
            if share is not None:
                out.setdefault(str(d), share)
    return out


def rope_text(result, metric):
    """The rope of a ``compare_methods`` result in the table's units, in words: "±1 GMean point (of 100)" on a
    percent table, "±0.01 error" on one of fractions."""
    rope = result["rope"]
    if result["scale"] == 100:
        return f"±{rope:g} {metric.title} point{'' if rope == 1 else 's'} (of 100)"
    return f"±{rope:g} {metric.title}"


#: Who is compared with whom: (the new models, the others) as a paper's comparison names them.
PAPER_SIDES = ("New models", "the paper's", "Each new model against each of the paper's")


def compared_sides(result, sides=PAPER_SIDES):
    """(the line naming the models compared, the heading of the pairs) of a ``compare_methods`` result."""
    if not result["baselines"]:
        return f"Models: {', '.join(result['new'])}; each pair of them compared.", "Each pair of models"
    return f"{sides[0]}: {', '.join(result['new'])}; {sides[1]}: {', '.join(result['baselines'])}.", sides[2]


def comparison_markdown(spec, result, title, sides=PAPER_SIDES):
    """The comparison as a Markdown page (``tables`` writes it as ``<stem>_comparison.md``); ``sides`` names
    the two sides compared (``compared_sides``)."""
    from tabulate import tabulate

    from ..experiments import get_metric

    metric = get_metric(spec.metric)
    n, of = len(result["datasets"]), len(result["of"])
    who, heading = compared_sides(result, sides)
    lines = [f"# {title}", "", who,
             f"Ranks and tests on {n} of {of} data sets (those where every compared model has a value"
             + (f": {', '.join(result['datasets'])})." if n else ")."), ""]
    if "ranks" in result:
        lines += [f"## Average rank on {metric.title} (1 = best)", "",
                  tabulate(result["ranks"].to_numpy().tolist(), headers=["model", "average rank"], tablefmt="github",
                           floatfmt=".2f"), ""]
    if "friedman" in result:
        stat, p = result["friedman"]
        lines += [f"Friedman chi2 = {stat:.3f}, p = {p:.3g}; Nemenyi critical difference (alpha 0.05) = "
                  f"{result['cd']:.2f} ({n} data sets, {len(result['ranks'])} models): two models whose average "
                  "ranks differ by less are not told apart.", ""]
    else:
        lines += ["Friedman / Nemenyi: needs two or more data sets where every model ran, and three models.", ""]
    pairs = result["pairs"]
    if len(pairs):
        lines += [f"## {heading}", "",
                  f"wins / draws / losses on {metric.title} (a draw: equal at the printed {result['digits']} "
                  "decimal(s)), each pair on the data sets both have; Wilcoxon signed-rank p (none under "
                  f"{MIN_WILCOXON} data sets, where it cannot reach 0.05) and Holm's correction over all these tests.",
                  ""]
        rows = [[r["model"], r["baseline"], r["wins"], r["draws"], r["losses"], r["datasets"],
                 _num(r["median difference"], "+.2f"), _num(r["wilcoxon p"], ".3g"), _num(r["holm p"], ".3g")]
                for r in pairs.to_dict("records")]
        lines += [tabulate(rows, headers=["model", "vs", "wins", "draws", "losses", "data sets", "median diff.",
                                          "Wilcoxon p", "Holm p"], tablefmt="github", disable_numparse=True), ""]
        lines += bayes_markdown(result, metric, heading)
    lines += [RANKS_NOTE.format(digits=result["digits"]), "", TESTS_NOTE, "",
              BAYES_NOTE.format(rope=rope_text(result, metric), samples=SIGNED_RANK_SAMPLES), ""]
    return "\n".join(lines) + "\n"


def comparison_notes(result):
    """The lines under a comparison's table of pairs (its LaTeX): the data sets, Friedman and Nemenyi, the tests."""
    n, of = len(result["datasets"]), len(result["of"])
    notes = [f"on {n} of {of} data sets (those where every compared model has a value)"]
    if "friedman" in result:
        stat, p = result["friedman"]
        notes.append(f"Friedman chi2 = {stat:.3f}, p = {p:.3g}; Nemenyi critical difference (alpha 0.05) = "
                     f"{result['cd']:.2f}")
    notes.append(f"wins / draws / losses: a draw equal at the printed {result['digits']} decimal(s); Wilcoxon "
                 f"signed-rank p (none under {MIN_WILCOXON} data sets), Holm's correction over these tests")
    return notes
def bayes_markdown(result, metric, heading):
    """The Markdown lines of Bayesian tests (``bayes_tests``' dict, or a comparison's): each pair's signed-rank
    probabilities across the data sets, then each pair's correlated t-test on each data set."""
    from tabulate import tabulate

    rope, p = rope_text(result, metric), lambda x: _num(x, ".3f")
    lines = [f"## {heading}: Bayesian signed-rank test across data sets (rope {rope})", "",
             "P(model better) / P(rope) / P(vs better): the probability that the model is better by more than the "
             "rope, that the two are practically equivalent, that the other is better (on the data sets both have).",
             ""]
    rows = [[r["model"], r["baseline"], r["datasets"], *(p(r[c]) for c in BAYES_COLUMNS)]
            for r in result["pairs"].to_dict("records")]
    lines += [tabulate(rows, headers=["model", "vs", "data sets", *BAYES_HEADERS], tablefmt="github",
                       disable_numparse=True), ""]
    by = result["by_dataset"]
    lines += [f"## {heading}: Bayesian correlated t-test on each data set (rope {rope})", ""]
    if not len(by):
        return lines + ["No data set where both models of a pair have test folds whose test share is known (k-fold "
                        "cross-validation, or a train-test split of a data set whose size the registry records).",
                        ""]
    diff = f"+.{result['digits']}f"
    rows = [[r["model"], r["baseline"], r["dataset"], r["folds"], _num(r["mean difference"], diff),
             *(p(r[c]) for c in BAYES_COLUMNS)] for r in by.to_dict("records")]
    return lines + [tabulate(rows, headers=["model", "vs", "data set", "folds", "mean diff.", *BAYES_HEADERS],
                             tablefmt="github", disable_numparse=True), ""]


def _num(x, fmt):
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, fmt)


def comparison_frame(result):
    """The pairs table as a frame (the report page's and the CSV's)."""
    return result["pairs"]


#: A paper's column, 8.5 cm, in inches: the CD diagram is drawn this wide, its text at ``CD_POINTS``, so that printed
#: at a column's width no label is smaller than that.
COLUMN_INCHES = 8.5 / 2.54
CD_POINTS = 8
#: The colour of the models compared with the others (yours) in a CD diagram; the others are black.
HIGHLIGHT = "#d62728"  # matplotlib's tab:red


def cd_figure(wide, greater_is_better=True, highlight=(), size=None, alpha=0.05, name="cd"):
    """Demšar's critical-difference diagram of ``wide`` (data sets x methods; two data sets and three methods at
    least) as a matplotlib figure: scikit-posthocs' diagram (ranks, and a bar joining the methods
    Nemenyi does not tell apart) with the scale of the critical difference above it, a bar of length CD
    from the best rank, labelled with its value (Demšar's Figure 1). ``size``: (width, height) in inches, by
    default a paper's column (``COLUMN_INCHES``) and a height for the methods, every text at ``CD_POINTS`` and
    the axis placed so that the labels fit the width. ``highlight``: methods drawn in red, the others in black
    (none: scikit-posthocs' own colours). Returns (figure, the CD bar's line, its label); the artists' ids
    (SVG) are ``<name>-bar`` and ``<name>-label``. Needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import scikit_posthocs as sp

    ranks = average_ranks(wide, greater_is_better)
    significance = sp.posthoc_nemenyi_friedman(wide.to_numpy())
    significance.index = significance.columns = list(wide.columns)
    # Each label with its rank where the labels leave an axis of an inch in a column's width; else the names
    # alone (the rank axis gives them).
    for with_ranks in (True, False):
        drawn = _draw(plt, sp, ranks, significance, len(wide), highlight, size, with_ranks, alpha, name)
        if size is not None or drawn[0].get_figwidth() <= COLUMN_INCHES or not with_ranks:
            return drawn
        plt.close(drawn[0])


def _draw(plt, sp, ranks, significance, n_datasets, highlight, size, with_ranks, alpha, name):
    """``cd_figure``'s drawing: (figure, CD bar, its label)."""
    methods = list(significance.columns)
    rows = (len(methods) + 1) // 2
    fig, ax = plt.subplots(figsize=size or (COLUMN_INCHES, 0.8 + 0.22 * rows))
    # scikit-posthocs wants a colour for every label when it is given any.
    colors = {m: HIGHLIGHT if m in set(highlight) else "k" for m in methods} if highlight else None
    formats = ("{label} ({rank:.2f})", "({rank:.2f}) {label}") if with_ranks else ("{label}", "{label}")
    drawn = sp.critical_difference_diagram(ranks, significance, ax=ax, color_palette=colors,
                                           label_props={"fontsize": CD_POINTS}, label_fmt_left=formats[0],
                                           label_fmt_right=formats[1])
    levels = _in_order(ax, [line for lines in drawn["crossbars"] for line in lines])
    if size is None:  # a line of text a label's row or a crossbar's level
        fig.set_figheight(0.7 + 0.19 * (rows + levels))
    ax.tick_params(labelsize=CD_POINTS)
    # The scale a reader measures the gaps with: scikit-posthocs (before 0.12) draws none. Above the rank axis
    # (whose tick labels sit just over it), starting at the best rank as in Demšar's figures.
    cd = nemenyi_cd(len(methods), n_datasets, alpha)
    low, high = ax.get_ylim()
    y = high + 0.35 * (high - low)
    start = float(ranks.min())
    (bar,) = ax.plot([start, start + cd], [y, y], color="k", linewidth=1.5, marker="|", markersize=8,
                     clip_on=False, gid=f"{name}-bar")
    label = ax.annotate(f"CD = {cd:.2f}", (start + cd / 2, y), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=CD_POINTS, gid=f"{name}-label", annotation_clip=False)
    ax.set_ylim(low, y + 0.1 * (high - low))
    ax.set_xlim(1, len(methods))  # the ranks' whole range, each rank a tick, as Demšar draws it
    ax.set_xticks(range(1, len(methods) + 1))
    if size is None:
        _fit_labels(fig, ax)
    return fig, bar, label


def _in_order(ax, crossbars):
    """scikit-posthocs draws each crossbar through a set of the methods' names (its cliques), in the set's order,
    and stacks bars of equal lowest rank in the order its sets gave: the drawing (and the SVG's bytes) followed
    PYTHONHASHSEED. Each bar's points are put in rank order, the bars stacked again by (lowest, highest rank)
    as scikit-posthocs stacks them (first fit: as many levels whatever the order), and added back in that order.
    Returns the number of levels."""
    bars = sorted(crossbars, key=lambda line: (min(line.get_xdata()), max(line.get_xdata()),
                                               tuple(sorted(line.get_xdata()))))
    levels = []
    for line in bars:
        xs = sorted(line.get_xdata())
        low, high = xs[0], xs[-1]
        level = next((k for k, spans in enumerate(levels) if not any(low <= b and a <= high for a, b in spans)),
                     len(levels))
        if level == len(levels):
            levels.append([])
        levels[level].append((low, high))
        line.set_data(xs, [-level - 1] * len(xs))
        line.remove()
        ax.add_line(line)
    return len(levels)


def _fit_labels(fig, ax, pad=0.04, axis=1.0):
    """Place the axis so that what hangs off its ends (the labels, a label's width in points whatever the axis)
    fits the figure's width: a few passes, each moving the axis ends by what the drawing overflows (or leaves
    free); the figure is widened only where the labels leave less than ``axis`` inches of axis."""
    width = fig.get_figwidth()
    for _ in range(4):
        fig.canvas.draw()
        drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches: the labels, the ticks, the CD bar
        box = ax.get_position()
        x0 = box.x0 * width + pad - drawn.x0
        x1 = box.x1 * width - (drawn.x1 - (width - pad))
        if x1 - x0 < axis:
            width += axis - (x1 - x0)
            fig.set_figwidth(width)
            x1 = x0 + axis
        ax.set_position([x0 / width, box.y0, (x1 - x0) / width, box.height])
        if abs(drawn.x0 - pad) < 0.01 and abs(drawn.x1 - (width - pad)) < 0.01:
            break


def cd_files(wide, greater_is_better=True, highlight=(), min_datasets=2, name="cd"):
    """{"svg": bytes, "pdf": bytes} of ``wide``'s critical-difference diagram (``cd_figure``, a paper's column
    wide), or None under ``min_datasets`` data sets or three methods, or without matplotlib. The same records
    give the same bytes: the SVG's ids salted with a fixed text, its text kept as text (a paper's fonts), the
    PDF's fonts embedded (TrueType), no date or matplotlib version in either."""
    if wide.shape[0] < min_datasets or wide.shape[1] < 3:
        return None
    try:
        import matplotlib.pyplot as plt
        import scikit_posthocs  # noqa: F401
    except ImportError:
        return None
    out = {}
    with plt.rc_context({"svg.hashsalt": "eemrepro", "svg.fonttype": "none", "pdf.fonttype": 42}):
        fig, _, _ = cd_figure(wide, greater_is_better, highlight, name=name)
        # No date, and no matplotlib version: a committed diagram rebuilds alike under another release.
        for fmt, metadata in (("svg", {"Date": None, "Creator": None}),
                              ("pdf", {"CreationDate": None, "Creator": None, "Producer": None})):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, bbox_inches="tight", pad_inches=0.01, metadata=metadata)
            out[fmt] = buf.getvalue()
    plt.close(fig)
    return out


def write_cd_files(wide, stem, greater_is_better=True, highlight=(), min_datasets=2, name="cd"):
    """``stem.svg`` and ``stem.pdf``: ``wide``'s critical-difference diagram (``cd_files``); the paths written,
    [] where none can be drawn."""
    return write_cd(cd_files(wide, greater_is_better, highlight, min_datasets, name), stem)


def write_cd(drawn, stem):
    """``stem.svg`` and ``stem.pdf`` of a drawn figure (``cd_files``' or ``posterior_files``' bytes); [] for
    None."""
    if drawn is None:
        return []
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_name(f"{stem.name}.{fmt}") for fmt in ("svg", "pdf")]
    for path in paths:
        path.write_bytes(drawn[path.suffix[1:]])
    return paths


def svg_inline(drawn):
    """The ``<svg>`` element of a diagram's files (``cd_files``), for a page; None without one."""
    if drawn is None:
        return None
    text = drawn["svg"].decode("utf-8")
    return text[text.index("<svg"):]


def cd_diagram(wide, greater_is_better=True, highlight=(), min_datasets=2, name="cd"):
    """Demšar's critical-difference diagram (``cd_figure``) of ``wide`` (data sets x methods) as SVG text (the
    ``<svg>`` element of ``cd_files``' SVG); None under ``min_datasets`` data sets or three methods, or without
    matplotlib. ``highlight``: methods drawn in red, the others in black (none: scikit-posthocs' own colours).
    ``name``: the prefix of the ids of its CD bar and label (one per diagram of a page)."""
    return svg_inline(cd_files(wide, greater_is_better, highlight, min_datasets, name))
def plotted_pairs(result):
    """The pairs of a ``compare_methods`` result whose posterior is drawn (``posterior_diagram``): each of the
    new models (yours) against each of the others; where there are no others, the first model against each."""
    frame = result["pairs"]
    if not len(frame):  # a single model: no pair
        return []
    pairs = [(m, b) for m, b in zip(frame["model"], frame["baseline"], strict=True)
             if (m, b) in result.get("posteriors", {})]
    return pairs if result["baselines"] else [(m, b) for m, b in pairs if result["new"][0] in (m, b)]


def _simplex(ax, draws, names, probabilities):
    """One pair's signed-rank posterior drawn as baycomp draws it: each draw (P(model better), P(rope), P(vs
    better)) a point of the triangle whose corners are the three regions (density as hexagons), the lines
    between the regions where one region holds the most mass, the corners labelled with the probabilities."""
    h = np.sqrt(3) / 2
    x, y = draws[:, 2] + draws[:, 1] / 2, draws[:, 1] * h  # the model's corner left, the other's right, rope on top
    ax.hexbin(x, y, gridsize=24, extent=(0, 1, 0, h), mincnt=1, bins="log", cmap="Blues",
              linewidths=0.1)
    ax.plot([0, 1, 0.5, 0], [0, 0, h, 0], color="0.3", linewidth=0.8)
    centre = (0.5, h / 3)
    for mx, my in ((0.5, 0), (0.25, h / 2), (0.75, h / 2)):
        ax.plot([centre[0], mx], [centre[1], my], color="tab:orange", linewidth=0.8)
    (left, right), (pl, pe, pr) = names, probabilities
    ax.text(0, -0.04, f"{left}\n{pl:.3f}", ha="center", va="top", fontsize=8)
    ax.text(1, -0.04, f"{right}\n{pr:.3f}", ha="center", va="top", fontsize=8)
    ax.text(0.5, h + 0.03, f"rope {pe:.3f}", ha="center", va="bottom", fontsize=8)
    ax.set_xlim(-0.25, 1.25)
    ax.set_ylim(-0.3, h + 0.15)
    ax.set_aspect("equal")
    ax.axis("off")


def posterior_files(result, pairs, cols=4):
    """{"svg": bytes, "pdf": bytes}: the Bayesian signed-rank posterior of each of ``pairs`` ((model, baseline)
    pairs of ``result``: a ``compare_methods`` result or a ``bayes_tests`` dict, whose ``pairs`` frame holds their
    probabilities and ``posteriors`` their draws), one simplex each (``_simplex``); None without a pair drawn or
    without matplotlib. Its points are the seeded draws, and as ``cd_files``' the files carry no date or version
    and the SVG's ids are salted with a fixed text: the same records give the same bytes."""
    pairs = [p for p in pairs if p in result.get("posteriors", {})]
    if not pairs:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    cols = min(cols, len(pairs))
    rows = -(-len(pairs) // cols)
    probabilities = result["pairs"].set_index(["model", "baseline"])[list(BAYES_COLUMNS)]
    out = {}
    # Its labels as text (the probabilities a reader can select and a test can find), not glyph outlines.
    with plt.rc_context({"svg.hashsalt": "eemrepro", "svg.fonttype": "none", "pdf.fonttype": 42}):
        fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.5 * rows), squeeze=False)
        for ax, (m, b) in zip(axes.flat, pairs, strict=False):
            _simplex(ax, result["posteriors"][(m, b)], (m, b), tuple(probabilities.loc[(m, b)]))
        for ax in list(axes.flat)[len(pairs):]:
            ax.axis("off")
        # No metadata block in the SVG: a page that draws it inline links nothing on the network.
        for fmt, metadata in (("svg", {"Date": None, "Creator": None, "Format": None, "Type": None}),
                              ("pdf", {"CreationDate": None, "Creator": None, "Producer": None})):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, bbox_inches="tight", metadata=metadata)
            out[fmt] = buf.getvalue()
    plt.close(fig)
    return out


def posterior_diagram(result, cols=4):
    """The posteriors of a ``compare_methods`` result's ``plotted_pairs`` (``posterior_files``) as SVG text (the
    ``<svg>`` element); None without a pair or without matplotlib."""
    return svg_inline(posterior_files(result, plotted_pairs(result), cols))
