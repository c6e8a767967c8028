"""The benchmark table of any results folder: its data sets x its models, at the metric its config selects by.

A paper's table holds the paper's data sets only; this one holds whatever the
records hold: a registry data set, a paper's, or a user's own file
(``local_datasets:``), and every model, the baselines' included. It is a
metric table with no published column (``_tables.metric_rows``: each cell from
its own records, the failed-fit mark where fits did not finish), written beside
the comparison statistics of ``_compare`` (average ranks, Friedman and
Nemenyi, wins/draws/losses, Wilcoxon-Holm) and, in the report, a page with the
critical-difference diagram.

The folders a command reads are grouped by their config's kind and selection
metric (a folder comes with the baselines it names): one table per group, the
records of that group alone.
"""

import os
from dataclasses import dataclass

from ..experiments import get_metric
from ._compare import configured_shares
from ._shapes import Table
from ._spec import TableSpec

#: How ``tables --table`` and the help name the benchmark tables (their ids are ``benchmark_<metric>``).
BENCHMARK = "benchmark"
#: The two sides of a benchmark's comparison (``_compare.compared_sides``).
SIDES = ("Your models", "the papers' and the baselines' models",
         "Each of your models against each of the papers' and the baselines' models")
#: The long table's and the CSV's columns a benchmark has no use for (it has no published cell).
PUBLISHED_COLUMNS = ("published", "published_std", "delta")


def metric_scale(metric):
    """The factor a table shows a metric at: percent, but for the error rate (a fraction)."""
    return 1.0 if metric == "error" else 100.0


@dataclass(frozen=True)
class Benchmark:
    """One benchmark table: its spec, the folders read for it (None: every folder the command reads), the order
    of its rows and columns (the configs'), and the models compared with the others (``yours``; none: every
    pair of models is compared)."""

    spec: TableSpec
    dirs: tuple | None
    datasets: tuple
    models: tuple
    yours: tuple
    rope: float = None  # the Bayesian tests' rope its folders' configs set (``tables: {rope}``); None: the default
    shares: dict = None  # the test share of each data set its configs split once a repeat (``configured_shares``)


def benchmarks(dirs):
    """The benchmark tables of the results folders ``dirs``: one per (kind, selection metric) of their configs."""
    from ..experiments._run_folder import ResultsFolder
    from ._records import with_baselines
    from ._spec import registered_tables

    everything = {os.path.realpath(d) for d in with_baselines(dirs)[0]}
    groups = {}
    for d in dirs:
        config = ResultsFolder(d).config()
        if config is not None:
            groups.setdefault((config.kind, config.protocol.select_metric), []).append(d)
    metrics = [metric for _, metric in groups]
    papers = set()
    for spec in registered_tables():
        papers.update(Table(spec).shape.published_methods(spec))
    out = []
    for (kind, metric), folders in groups.items():
        read, _ = with_baselines(folders)
        mine = {os.path.realpath(d) for d in folders}
        configs = [(os.path.realpath(d) in mine, ResultsFolder(d).config()) for d in read]
        configs = [(own, c) for own, c in configs if c is not None]
        datasets = [d for _, c in configs for d in c.datasets]
        # The baselines' models first, then the folders' own (the run's table: the paper's, then yours).
        theirs = [m.name for own, c in configs if not own for m in c.models]
        own = [m.name for own, c in configs if own for m in c.models]
        yours = [m for m in own if m not in papers and m not in theirs]
        stem = f"{BENCHMARK}_{metric}" if metrics.count(metric) == 1 else f"{BENCHMARK}_{kind}_{metric}"
        title = get_metric(metric).title + (" %" if metric_scale(metric) == 100 else "")
        spec = TableSpec(
            id=stem, stem=stem, kind=kind, metric=metric, scale=metric_scale(metric),
            title=f"Benchmark: {title} ({{selection}}) of every model on every data set of these results, "
                  "mean±std over the test folds",
            notes=("cell: mean±std over the test folds at the selected grid point; '–' not run here, or no "
                   "value (its fits failed or ran past the fit budget)",
                   "a paper's own tables show its cells beside the published values; this one holds every data "
                   "set and model of the results, whatever their data set"))
        ropes = [c.rope for own, c in configs if own]
        out.append(Benchmark(spec, None if {os.path.realpath(d) for d in read} == everything else tuple(read),
                             tuple(dict.fromkeys(datasets)), tuple(dict.fromkeys([*theirs, *own])), tuple(yours),
                             ropes[0] if ropes else None, configured_shares([c.to_dict() for _, c in configs])))
    return out


def benchmark_frame(bench, df):
    """A benchmark's table (``TableRows.frame``'s, run layout) in its configs' order, without published columns."""
    if df is None or df.empty:
        return None
    datasets = {d: i for i, d in enumerate(bench.datasets)}
    models = {m: i for i, m in enumerate(bench.models)}
    df = df.assign(_d=df["dataset"].map(datasets).fillna(len(datasets)),
                   _m=df["method"].map(models).fillna(len(models)))
    df = df.sort_values(["_d", "dataset", "_m", "method"], kind="stable").drop(columns=["_d", "_m"])
    return df.drop(columns=[c for c in PUBLISHED_COLUMNS if c in df]).reset_index(drop=True)


def compared(bench, df):
    """The models a benchmark compares with the others (``compare_methods``' ``new``): the folders' own that no
    paper's table and no baseline has; where there are none (or nothing else), every model, pair by pair."""
    present = list(dict.fromkeys(df.loc[df[bench.spec.metric].notna(), "method"]))
    yours = [m for m in present if m in set(bench.yours)]
    return yours if yours and len(yours) < len(present) else present


def benchmark_tables(benches, made, prov, selection):
    """[(benchmark, its table, the provenance of the folders it was read from)] of ``benches``: a benchmark
    of every folder from the command's own read (``made``: ``rows_by_datasets``'), the others from a read of
    their own folders. A table whose every cell failed is written too (its cells "–" with their marks)."""
    from ._tables import rows_by_datasets

    out = []
    for bench in benches:
        if bench.dirs is None:
            out.append((bench, benchmark_frame(bench, made[(bench.spec.id, selection)].frame("run")), prov))
            continue
        results, own, _, _ = rows_by_datasets(list(bench.dirs), [bench.spec], [selection])
        out.append((bench, benchmark_frame(bench, own[(bench.spec.id, selection)].frame("run")),
                    results.provenance))
    return [(b, df, p) for b, df, p in out if df is not None]


def comparison_title(spec, selection):
    """The heading of a benchmark's comparison."""
    return f"{spec.id}: every model ranked on {get_metric(spec.metric).title} ({selection})"

