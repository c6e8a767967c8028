"""Writing tables as Markdown, CSV or LaTeX, each with its provenance.

Nothing here reads the clock: the provenance comes from the stored runs, so
rebuilding from the same store gives the same bytes (``make tables``).
"""

import math
from pathlib import Path

import numpy as np
import pandas as pd


def provenance_lines(prov, title, notes=()):
    lines = [title, f"results: {', '.join(prov['results'])} ({prov['records']} records, "
                    f"{prov['repeats']} repeat(s) of the CV; records finished {prov['records_finished']})"]
    for name, path in prov["configs"].items():
        lines.append(f"config {name}: {path}")
    if prov["commits"]:
        lines.append("code commit(s): " + ", ".join(prov["commits"]))
    for v in prov["package_versions"]:
        lines.append("versions: " + ", ".join(f"{k} {v[k]}" for k in sorted(v)))
    for folder, baselines in prov.get("baselines", {}).items():
        lines.append(f"baselines of {folder} (its config.yaml names them): {', '.join(baselines)}")
    lines.extend(f"WARNING, protocols differ: {line}" for line in prov.get("protocol_differences", ()))
    lines.extend(left_out_lines(prov))
    lines.extend(notes)
    return lines


def left_out_lines(prov):
    """One line per results folder with stored records its config no longer names (kept, not read), and how they
    are read again."""
    from ..experiments._units import describe_left_out

    return [f"left out of {folder} (kept in the store, not named by its config.yaml): {describe_left_out(reasons)}; "
            f"a run of a config that names them into {folder} reads them again" for folder, reasons in
            prov.get("left_out", {}).items()]


def _fmt(x, digits=1, limit=None):
    """A number at ``digits``; NaN "–"; +inf (past the fit budget ``limit``) "> limit"."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return f"> {limit:g}" if limit is not None else "inf"
    return f"{x:.{digits}f}"


def _signed(x, digits=1):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "–"
    return f"{x:+.{digits}f}"


class RowFormat:
    """A long-view column's formatter that reads the whole row (a value beside its cell's mark, ``fits_mark``),
    where the others read the column's value alone."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, row):
        return self.fn(row)


def _text(r, column, fn):
    """A row's cell as the long view prints it (a column the row lacks reads as no value)."""
    if isinstance(fn, RowFormat):
        return fn(r)
    v = r.get(column)
    if fn:
        return fn(v)
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def printed(columns):
    """{column: its text of a row} of a table's long-view ``columns`` ([(column, header, formatter)]): how
    every rendering prints a cell, the Markdown, LaTeX and HTML alike."""
    return {c: (lambda r, c=c, fn=fn: _text(r, c, fn)) for c, _, fn in columns}


#: A metric table's column of each cell's test-fold values at its selected point (what the Bayesian correlated
#: t-test pairs); the CSV leaves it out (a tuple a cell), as the Markdown and LaTeX views do.
FOLD_VALUES = "fold_values"


def write_table(df, path_stem, fmt, title, prov, columns, wide=None, notes=(), fill="", matrix=None):
    """Write ``df`` (long format) as ``path_stem.<ext>`` with a provenance header.

    ``columns``: [(column, header, formatter)] for Markdown/LaTeX long tables
    (a ``RowFormat`` formatter is given the row);
    ``wide``: optional (index, columns, cell formatter) for a compact wide view,
    ``fill`` its text where a (row, column) has no row of ``df``; ``matrix``: a ``_matrix.Matrix`` that is the
    wide view instead (the Markdown's, and the whole LaTeX: data sets x models, its best cells in bold).
    """
    head = provenance_lines(prov, title, notes)
    path_stem = Path(path_stem)
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        out = path_stem.with_suffix(".csv")
        shown = df.drop(columns=[c for c in (FOLD_VALUES,) if c in df])
        body = shown.to_csv(index=False, float_format="%.6g", lineterminator="\n")
        out.write_text("".join(f"# {line}\n" for line in head) + body)
        return out
    rows = [[_text(r, c, fn) for c, _, fn in columns] for _, r in df.iterrows()]
    headers = [h for _, h, _ in columns]
    if fmt == "md":
        from tabulate import tabulate

        out = path_stem.with_suffix(".md")
        text = f"# {head[0]}\n\n" + "".join(f"- {line}\n" for line in head[1:]) + "\n"
        if matrix is not None:
            text += matrix.markdown() + "\n\n"
        elif wide is not None:
            index, cols, cell = wide
            pivot = _wide(df, index, cols, cell, fill)
            text += tabulate(pivot.values.tolist(), headers=[index] + list(pivot.columns[1:]),
                             tablefmt="github", disable_numparse=True) + "\n\n"
        text += tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True) + "\n"
        out.write_text(text)
        return out
    if fmt == "latex" and matrix is not None:
        out = path_stem.with_suffix(".tex")
        out.write_text(matrix.latex(head))
        return out
    if fmt == "latex":
        out = path_stem.with_suffix(".tex")
        # The long list's own escapes (a paper's committed tables are these bytes); a matrix escapes every
        # special character (``_matrix.latex_escape``).
        esc = lambda s: str(s).replace("_", r"\_").replace("%", r"\%").replace("&", r"\&").replace("±", r"$\pm$") \
            .replace(FAILED_MARK, r"$^\dagger$").replace(UNCONVERGED_MARK, r"$^\ddagger$")
        text = "".join(f"% {line}\n" for line in head)
        text += "\\begin{tabular}{" + "l" * len(headers) + "}\n\\hline\n"
        text += " & ".join(esc(h) for h in headers) + " \\\\\n\\hline\n"
        text += "".join(" & ".join(esc(c) for c in row) + " \\\\\n" for row in rows)
        text += "\\hline\n\\end{tabular}\n"
        out.write_text(text)
        return out
    raise ValueError(f"format must be md, csv or latex, got {fmt!r}")


def _wide(df, index, cols, cell, fill=""):
    order_rows = list(dict.fromkeys(df[index]))
    order_cols = list(dict.fromkeys(df[cols]))
    table = {r: {c: fill for c in order_cols} for r in order_rows}
    for _, r in df.iterrows():
        table[r[index]][r[cols]] = cell(r)
    return pd.DataFrame([[r] + [table[r][c] for c in order_cols] for r in order_rows],
                        columns=[index] + order_cols)


#: The mark of a cell some of whose fits failed or ran past the fit budget, followed by how many ("†3").
FAILED_MARK = "†"
#: What the mark means, in the legend of every table that shows one.
FITS_LEGEND = (f"'{FAILED_MARK}k': k of the cell's fits failed or ran past the fit budget; its value is over the "
               "grid points (per-fold rules: the points chosen per fold) that finished on every test fold, never over "
               "the folds that survived a failure (csv: failed_fits, timed_out_fits, and skipped_fits, not tried "
               "after a timeout)")
#: The mark of a cell some of whose fits stopped short of convergence, followed by how many ("‡3").
UNCONVERGED_MARK = "‡"
#: What it means, in the legend of every table that shows one.
UNCONVERGED_LEGEND = (f"'{UNCONVERGED_MARK}k': k of the cell's fits stopped short of convergence (LIBSVM at its "
                      "iteration limit, a solver's ConvergenceWarning): each is the solver's last iterate, read as "
                      "any other fit (csv: unconverged_fits)")


def _count(r, column):
    v = r.get(column, 0)
    return 0 if v is None or v != v else int(v)


def unfinished_fits(r):
    """How many fits of a table row's cell failed or ran past the fit budget (``select``'s counts)."""
    return _count(r, "failed_fits") + _count(r, "timed_out_fits")


def unconverged_fits(r):
    """How many fits of a table row's cell stopped short of convergence (``select``'s count)."""
    return _count(r, "unconverged_fits")


def fits_mark(r):
    """" †k" after a cell's text where k of its fits failed or ran past the fit budget, " ‡k" where k stopped
    short of convergence; "" where neither. Every rendering of a cell (Markdown, csv's long view, LaTeX, the
    page, the run's table) takes its marks from here."""
    n, k = unfinished_fits(r), unconverged_fits(r)
    return (f" {FAILED_MARK}{n}" if n else "") + (f" {UNCONVERGED_MARK}{k}" if k else "")


def fits_note(r):
    """The counts behind a cell's mark in words ("2 fits failed, 1 ran past the fit budget"), or ""."""
    failed, timed_out, skipped = (_count(r, c) for c in ("failed_fits", "timed_out_fits", "skipped_fits"))
    unconverged = unconverged_fits(r)
    parts = [f"{failed} fit{'s' if failed != 1 else ''} failed" if failed else "",
             f"{timed_out} ran past the fit budget" if timed_out else "",
             # (skipped fits said beside the failures and timeouts that caused them)
             f"{skipped} {'were' if skipped != 1 else 'was'} not tried after a timeout"
             if skipped and failed + timed_out else "",
             f"{unconverged} stopped short of convergence" if unconverged else ""]
    return ", ".join(p for p in parts if p)


def fits_legends(*frames):
    """The legends of the marks the cells of ``frames`` (table frames) show (``fits_mark``), in order; [] where
    no cell shows one."""
    rows = [r for df in frames for r in df.to_dict("records")]
    return [legend for legend, count in ((FITS_LEGEND, unfinished_fits), (UNCONVERGED_LEGEND, unconverged_fits))
            if any(count(r) for r in rows)]


def run_cell(metric, limit, digits=1):
    """The run's printed table: reproduced mean±std, then the paper's value and the delta where it has one."""
    wide = metric_cell(metric, limit, digits)

    def cell(r):
        if r["status"] != "ok":
            return wide(r)
        text = f"{_fmt(r[metric], digits)}±{_fmt(r[metric + '_std'], digits)}{fits_mark(r)}"
        published = r.get("published", np.nan)
        if published is None or np.isnan(published):
            return text
        return f"{text} (paper {_fmt(published, digits)}, {_signed(r['delta'], digits)})"

    return cell


#: The legend printed under a run's table.
RUN_LEGEND = ("cell: reproduced mean±std over the test folds; (paper P, D): the published value and "
              "D = reproduced - published; '> N': past the fit budget; '–': not run or no value")
#: The legend under a run's table where no cell has a published value (a benchmark of the user's data).
RUN_LEGEND_UNPUBLISHED = "cell: mean±std over the test folds; '> N': past the fit budget; '–': not run or no value"


def plain_cell(r, metric, digits=1, limit=None):
    """A metric cell's text without its mark: mean±std; "> limit" past the fit budget; "–" no value."""
    if r["status"] == "timed-out":
        return f"> {limit:g}" if limit is not None else "> the fit budget"
    if r["status"] != "ok":
        return "–"
    return f"{_fmt(r[metric], digits)}±{_fmt(r[metric + '_std'], digits)}"


def metric_cell(metric, limit, digits=1, delta=True, best=frozenset()):
    """Wide-view cell: reproduced mean±std (delta, unless not ``delta``: a table with no published value);
    "> limit" past the fit budget; "–" not run; each with the cell's mark where some of its fits failed or ran
    past the budget (``fits_mark``). ``best``: the (data set, method) cells whose mean±std is in Markdown bold
    (a ``_matrix.Matrix``'s best: the one rule that marks them)."""

    def cell(r):
        text = plain_cell(r, metric, digits, limit)
        text = (f"**{text}**" if (r["dataset"], r["method"]) in best else text) + fits_mark(r)
        if r["status"] == "timed-out":
            return text
        if r["status"] != "ok":
            published = r.get("published", np.nan)
            return text if np.isnan(published) else f"{text} ({_fmt(published, digits)})"
        return f"{text} ({_signed(r['delta'], digits)})" if delta else text

    return cell
