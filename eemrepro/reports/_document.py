"""One document, two renderings: what a set of results says, built once for every output.

A ``Document`` holds each table's ``Section`` (one :class:`Table`, its rules; the frame it was built into; its
title and notes; the paper's summary of its columns, ``Summary``; the comparison of the models the paper has
not, ``Comparison``, each computed once by ``_stats``), the check's cells, the judged claims and the readings.
``tables`` renders it as Markdown, CSV and LaTeX (``_build``), ``report`` as HTML (``_site``): neither computes
a number, a title or a note of its own, and each prints a cell with its table's column formatters
(``Table.columns``, ``_render.printed``).
"""

from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from .._stats import average_ranks, ranks_and_tests, wins_draws_losses
from ..experiments import get_metric
from ._benchmark import SIDES, benchmark_frame, benchmarks, compared
from ._cells import timeout_limit
from ._benchmark import comparison_title as benchmark_title
from ._compare import (
    PAPER_SIDES,
    bayes_tests,
    cd_files,
    compare_methods,
    configured_rope,
    configured_shares,
    plotted_pairs,
    posterior_files,
)
from ._matrix import Matrix
from ._records import SITE_COLUMNS, Records
from ._shapes import Table


@dataclass(frozen=True)
class Summary:
    """A paper's method comparisons on its metric table: the paper's columns ranked (``_stats``)."""

    table: Table
    frame: pd.DataFrame  # the table's rows of the paper's methods alone
    extra: list  # the table's methods the paper has not: left out of the ranking
    wdl: pd.DataFrame  # wins / draws / losses of the paper's pairs
    tests: dict  # average ranks, Friedman, Nemenyi CD, Wilcoxon (``ranks_and_tests``)
    bayes: dict = None  # the Bayesian tests of the paper's pairs, "b vs a" as (b, a) (``_compare.bayes_tests``)

    @property
    def rule(self):
        return self.table.draw_rule

    @property
    def stem(self):
        """The name of its files: ``<summary>.md``, its diagram ``<summary>_cd.svg`` and ``.pdf``."""
        return self.table.spec.summary

    @cached_property
    def diagram(self):
        """The critical-difference diagram of the paper's columns (``_compare.cd_files``: SVG and PDF bytes), drawn
        once for the files and the page; None under three data sets or three methods."""
        wide = self.frame.pivot_table(index="dataset", columns="method", values=self.table.value).dropna()
        return cd_files(wide, self.rule.greater_is_better, min_datasets=3, name=f"{self.table.id}-summary-cd")

    @cached_property
    def posterior(self):
        """The signed-rank posteriors of the paper's pairs (``_compare.posterior_files``: SVG and PDF bytes, one
        simplex a pair), drawn once for the files (``<summary>_posterior``) and the page; None without one."""
        if self.bayes is None:
            return None
        return posterior_files(self.bayes, list(zip(self.bayes["pairs"]["model"], self.bayes["pairs"]["baseline"],
                                                    strict=True)))


@dataclass(frozen=True)
class Comparison:
    """The statistics of the models the paper has not, beside the others (``_compare.compare_methods``)."""

    spec: object
    result: dict
    title: str
    sides: tuple = PAPER_SIDES

    @property
    def stem(self):
        """The name of its files: ``<table>_comparison.md``; its diagram's ``<table>_cd.svg`` and ``.pdf``."""
        return self.spec.stem

    @cached_property
    def diagram(self):
        """The critical-difference diagram of its models (``_compare.cd_files``: SVG and PDF bytes), the new ones
        in red where there are others, drawn once for the files and the page; None where none can be drawn."""
        result = self.result
        return cd_files(result["wide"], result["rule"].greater_is_better,
                        highlight=result["new"] if result["baselines"] else (), name=f"{self.spec.id}-cd")

    @cached_property
    def posterior(self):
        """The signed-rank posteriors of its ``_compare.plotted_pairs`` (``_compare.posterior_files``: SVG and PDF
        bytes), drawn once for the files (``<table>_posterior``) and the page; None without one."""
        return posterior_files(self.result, plotted_pairs(self.result))


@dataclass(frozen=True)
class Section:
    """One table as every output shows it: ``tables`` writes it in each format, ``report`` draws it."""

    table: Table
    frame: pd.DataFrame
    title: str
    notes: list
    summary: Summary = None
    comparison: Comparison = None
    matrix: Matrix = None  # data sets x models, its best cells marked (``_matrix``): a benchmark's, a paper's ranked

    @property
    def spec(self):
        return self.table.spec


def comparison_title(spec, selection):
    """The heading of a metric table's comparison of new models with the paper's."""
    return f"{spec.id}: new models ranked with the paper's on reproduced {get_metric(spec.metric).title} ({selection})"


def summarize(table, df, rope=None, shares=None):
    """The paper's summary of ``df`` (its table's frame), or None where the paper declares none. An extra column
    (a user's model, a variant of ours) would cut the data sets to those where it ran: only the paper's columns
    are ranked. Its pairs' Bayesian tests take ``rope`` (the metric's units; None: the default) and ``shares``
    (``compare``'s)."""
    spec = table.spec
    if not spec.summary:
        return None
    pub = spec.published_frame()
    extra = sorted(set(df["method"]) - set(pub["method"])) if pub is not None else []
    df = df[~df["method"].isin(extra)]
    rule = table.draw_rule
    wdl = wins_draws_losses(df, spec.pairs, value=table.value, rule=rule)
    tests = ranks_and_tests(df, spec.pairs, value=table.value, greater_is_better=rule.greater_is_better)
    wide = df.pivot_table(index="dataset", columns="method", values=table.value, sort=False)
    pairs = [(b, a) for a, b in spec.pairs if a in wide and b in wide]  # "b vs a": b's wins, b's probabilities
    bayes = bayes_tests(spec, df, wide, pairs, rope, rule.greater_is_better, shares) if pairs else None
    return Summary(table, df, extra, wdl, tests, bayes)


def compare(spec, df, selection, new=None, sides=None, title=None, rope=None, shares=None):
    """The ``Comparison`` of the models of ``df`` the paper has not (or ``new``) with the others, or None.
    ``sides``, ``title``: how the two sides are named, the heading (a benchmark's); ``rope``: the Bayesian tests'
    (the metric's units; None: the default), ``shares`` the test share of each data set split once a repeat."""
    result = compare_methods(spec, df, new=new, rope=rope, shares=shares)
    if result is None:
        return None
    return Comparison(spec, result, title or comparison_title(spec, selection), sides or PAPER_SIDES)


def paper_section(table, df, selection, rope=None, shares=None, limit=None):
    """A paper's table's ``Section``: its title and notes, the paper's summary of its columns and the comparison
    of its new models (a table that compares methods: the metric shape's), its Bayesian tests under ``rope``
    (``shares``: ``compare``'s), and its ``Matrix`` (the reproduced values, the best of each data set marked, the
    average ranks of ``paper_ranks``; ``limit``: the fit budget a timed-out cell ran past)."""
    if not table.shape.compares_methods:
        return Section(table, df, table.title(df), table.notes(df))
    summary = summarize(table, df, rope, shares)
    comparison = compare(table.spec, df, selection, rope=rope, shares=shares)
    ranks, ranked, what = paper_ranks(table, df, summary, comparison)
    matrix = Matrix.of(table, df, ranks=ranks, limit=limit, ranked=ranked, rank_note=what)
    return Section(table, df, table.title(df), table.notes(df), summary=summary, comparison=comparison,
                   matrix=matrix)


def paper_ranks(table, df, summary=None, comparison=None):
    """(average ranks {method: rank}, the data sets they are taken on, what they rank in words) of a paper's
    ranked table: its summary's (the paper's columns on the data sets where each has a value, as ``<summary>.md``
    ranks them), else its comparison's (every model, new ones too, as ``<table>_comparison.md``), else every
    method's on the data sets where all have a value (``_stats.average_ranks``); (None, None, "") where fewer than
    two methods have a value on one data set."""
    if summary is not None and "average_rank" in summary.tests:
        return summary.tests["average_rank"], summary.tests["datasets"], \
            f"the paper's columns, as {summary.stem}.md ranks them"
    if comparison is not None and "ranks" in comparison.result:
        ranks = comparison.result["ranks"]
        return dict(zip(ranks["method"], ranks["average rank"], strict=True)), len(comparison.result["datasets"]), \
            f"every model, as {comparison.stem}_comparison.md ranks them"
    ok = df[df["status"] == "ok"]
    wide = ok.pivot_table(index="dataset", columns="method", values=table.value, sort=False).dropna()
    if len(wide) < 1 or wide.shape[1] < 2:
        return None, None, ""
    return average_ranks(wide, table.draw_rule.greater_is_better).to_dict(), len(wide), "every method"


def benchmark_section(bench, df, selection, limit=None):
    """A benchmark's ``Section`` (``_benchmark``: every data set and model of the results): its models ranked
    with each other (``compared``), no summary, and its matrix (``Matrix``: the best of each data set marked,
    the comparison's average ranks as its last row). ``limit``: the fit budget a timed-out cell ran past."""
    table = Table(bench.spec, selection)
    comparison = compare(bench.spec, df, selection, new=compared(bench, df), sides=SIDES,
                         title=benchmark_title(bench.spec, selection), rope=bench.rope, shares=bench.shares)
    ranks = comparison.result.get("ranks") if comparison is not None else None
    matrix = Matrix.of(table, df, limit=limit,
                       ranks=None if ranks is None else ranks.set_index("method")["average rank"],
                       ranked=None if ranks is None else len(comparison.result["datasets"]))
    return Section(table, df, table.title(df), table.notes(df), comparison=comparison, matrix=matrix)


@dataclass(frozen=True)
class BenchmarkPart:
    """A benchmark's ``Section`` as the report and ``figures`` read it, with what its page's drill-down reads:
    the records it was built from (``mine``), each cell's points chosen per fold, the fit budget."""

    section: Section
    records: pd.DataFrame
    per_fold: dict
    limit: float


def benchmark_parts(dirs, parts, unfinished, selection, read_once=None):
    """[``BenchmarkPart``] of every benchmark of the results folders ``dirs`` (``_benchmark.benchmarks``):
    built from ``parts`` (the folders' records by kind, ``unfinished`` their unfinished cells), or, for a
    benchmark of some of the folders, from those folders' own records (``read_once``: the folders read
    already, ``Records``')."""
    out = []
    for bench in benchmarks(dirs):
        own_parts, own_unfinished = parts, unfinished
        if bench.dirs is not None:  # a group of its own among the folders: its records alone
            own_parts, prov = Records(list(bench.dirs), columns=SITE_COLUMNS, read_once=read_once).read_by_kind()
            own_unfinished = {tuple(c) for c in prov["unfinished"]}
        mine = own_parts.get(bench.spec.kind)
        if mine is None:
            continue
        per_fold, table = {}, Table(bench.spec, selection)
        df = benchmark_frame(bench, table.build(mine, unfinished=own_unfinished, layout="run", per_fold=per_fold))
        if df is not None:
            limit = timeout_limit(mine)
            out.append(BenchmarkPart(benchmark_section(bench, df, selection, limit), mine, per_fold, limit))
    return out


@dataclass(frozen=True)
class Document:
    """What a set of results says, built once from its tables (``document``): ``tables`` writes it as Markdown,
    CSV and LaTeX (``_build``), ``report`` draws it as HTML (``_site``)."""

    prov: dict  # the results' provenance (``Records``)
    selection: str
    sections: dict  # {table id: Section} of every registered table the results show, in the registry's order
    cells: list = None  # check's cells (the default rule, the full layout); None where there is no record
    claims: list = ()  # the papers' claims judged on these tables (``_claims.evaluate_claims``)
    readings: dict = field(default_factory=dict)  # {table id: its readings' frame} (``_readings``)


def document(specs, built, prov, selection, cells=None, claims=(), readings=None, limit=None):
    """The ``Document`` of ``built`` ({table id: frame}, the tables of ``specs`` the results hold, read under
    ``selection``), with the check's ``cells``, the judged ``claims`` and the ``readings``' frames; ``limit``: the
    fit budget the timed-out records ran into (a matrix's "> N" cell)."""
    tables = [Table(s, selection) for s in specs if s.id in built]
    rope, shares = configured_rope(prov), configured_shares((prov or {}).get("run_configs", {}).values())
    sections = {t.id: paper_section(t, built[t.id], selection, rope, shares, limit) for t in tables
                if t.shape.shows(built[t.id])}
    return Document(prov, selection, sections, cells, list(claims or ()), dict(readings or {}))
