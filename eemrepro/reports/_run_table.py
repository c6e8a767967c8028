"""The result table a run ends with: what it ran, with the published values beside it."""

from pathlib import Path

from ._benchmark import metric_scale
from ._build import protocol_warnings
from ._records import Records
from ._render import fits_legends
from ._shapes import Table
from ._spec import TableSpec, registered_tables
from ._tables import build_table, timeout_limit


def run_table(config, out):
    """Markdown text: per data set and model of ``config``, the selected result in ``out``.

    Shows each registered table of the config's kind whose metric is the one
    the run selects by (with the paper's value and the delta where the paper
    has the cell); a run no paper table covers gets a table of that metric alone.
    """
    from tabulate import tabulate

    records, prov = Records([Path(out)], require=False).read()
    tables = run_tables(config, records, prov, out)
    if isinstance(tables, str):
        return tables
    parts = []
    for _, df, title, (index, columns, cell) in tables:
        rows = list(dict.fromkeys(df[index]))
        cols = list(dict.fromkeys(df[columns]))
        grid = {(r[index], r[columns]): cell(r) for _, r in df.iterrows()}
        body = [[i] + [grid.get((i, c), "") for c in cols] for i in rows]
        parts.append(f"{title}\n\n" + tabulate(body, headers=[index] + cols, tablefmt="github",
                                               disable_numparse=True))
    legends = [Table(s).shape.run_legend(df) for s, df, *_ in tables]
    legend = next((text for text in legends if text), "")
    marks = fits_legends(*(df for text, (_, df, *_) in zip(legends, tables, strict=True) if text))
    if legend and marks:
        legend += "; " + "; ".join(marks)  # said where a cell shows the mark
    # Stores of different protocols combined (a baseline that ran fewer repeats than its config says): said
    # under the table as `eemrepro tables` says it.
    warnings = "\n".join(protocol_warnings(prov, left_out=False))  # the run said what it keeps, not used
    return "\n\n".join(parts) + ("\n\n" + legend if legend else "") + ("\n\n" + warnings if warnings else "")


def printed_cells(config, records, prov):
    """{(table title, row, column): (the cell as the run's table prints it, its selected point)} of ``records``
    (a store frame, as ``Records`` reads it; ``prov``: its provenance), or {} where the run prints no table.

    What ``eemrepro audit`` compares before and after re-derived records replace stored ones.
    """
    tables = run_tables(config, records, prov)
    if isinstance(tables, str):
        return {}
    return {(title, r[index], r[columns]): (cell(r), r.get("point"))
            for _, df, title, (index, columns, cell) in tables for _, r in df.iterrows()}


def run_tables(config, records, prov, out="DIR"):
    """The tables the run prints of ``records`` (``Records``' frame and provenance of the results folder
    ``out``): [(spec, table frame, title, (index column, column of columns, cell formatter))], or a message
    where there is none."""
    from ..experiments import metric_names

    if not len(records):
        return "no stored results for this config yet"
    # The config's own models, and the models of the baselines it names (read with it by ``Records``).
    models = {m.name for m in config.models} or set(records["model"])
    if prov.get("baselines"):
        models = set(records["model"])
    records = records[records["dataset"].isin(set(config.datasets)) & records["model"].isin(models)]
    if not len(records):
        return "no stored results for this config yet"
    if not any(m in records and records[m].notna().any() for m in metric_names()) and \
            (records["status"] == "ok").any():
        # The kinds that store what figures draw (embedding, restarts) measure nothing. (A run whose every fit
        # failed has no value either: its table shows each cell's "–" and the count of its failed fits.)
        return f"{len(records)} records of kind {config.kind} (no metrics); draw them with: eemrepro figures {out}"
    unfinished = {tuple(c) for c in prov["unfinished"]}
    proto = config.protocol
    specs = [s for s in registered_tables(config.kind)
             if s.selection is None and s.requires_criterion is None
             and Table(s).shape.in_run_table(s, proto.select_metric)]
    tables = [(s, build_table(s, records, proto.selection, unfinished=unfinished, layout="run")) for s in specs]
    with_paper = [(s, t) for s, t in tables if not t.empty and t["published"].notna().any()]
    # A paper's table holds only its data sets; the others get a table of the metric alone.
    covered = {d for _, t in with_paper for d in t["dataset"]}
    rest = records[~records["dataset"].isin(covered)]
    if len(rest):
        scale = metric_scale(proto.select_metric)
        # A table of every data set of its kind (not only the paper's) shows them; else the metric alone.
        spec = specs[0] if specs and not Table(specs[0]).shape.own_datasets and not with_paper else TableSpec(
            id="run", stem="run", title=f"{config.name}", kind=config.kind, metric=proto.select_metric, scale=scale)
        with_paper.append((spec, build_table(spec, rest, proto.selection, unfinished=unfinished, layout="run")))
    limit = timeout_limit(records)
    out = []
    for spec, df in with_paper:
        table = Table(spec, proto.selection)
        index, columns, cell = table.shape.run_view(table, limit)
        title = table.title(df) if spec.id != "run" else \
            f"{config.name}: {spec.metric} ({proto.selection}), mean±std over the test folds " \
            f"({'the data sets no paper table has' if len(with_paper) > 1 else 'no published table'})"
        out.append((spec, df, title, (index, columns, cell)))
    return out
