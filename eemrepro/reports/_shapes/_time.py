"""The time table: seconds of one training fit at the selected grid point per (data set, method),
beside the published cell; never checked (training times depend on the machine)."""

import numpy as np
import pandas as pd

from ...experiments import select
from ...experiments._selection import FIT_COUNTS
from ...store._segments import as_frame
from .._cells import COUNT_COLUMNS, _fit_counts, _of_kind, _order, cell_solvers, column_solvers, count_columns
from .._render import RowFormat, _fmt, fits_mark, fits_note, printed
from ._base import Table, TableShape, register_shape


def time_table(records, spec, selection="best-of-grid", unfinished=(), layout="full"):
    """Seconds of one training fit at the selected grid point (the time shape).

    Uses standalone fit times (``protocol.standalone_timing``) where recorded,
    otherwise the unit's fit time (for a path unit that covers the whole grid,
    flagged in ``timing``). A cell whose every grid point timed out is +inf,
    and so is a published cell noted "more than" the budget.
    """
    return time_frame(time_rows(records, spec, selection, unfinished), spec, layout)


def time_rows(records, spec, selection="best-of-grid", unfinished=()):
    """({(data set, method): row}, {(data set, model): solvers}) of a time table from ``records``, each cell
    from its own records alone (``time_frame`` makes the table of them)."""
    pub = spec.published_frame()
    frame = _of_kind(as_frame(records), spec.kind)
    # A paper's table holds its own data sets (as in ``metric_table``): the other data sets' records (another
    # paper's, from the same results folders) are neither selected nor read; each cell is selected on its own.
    datasets = set(pub["dataset"]) if pub is not None else None
    mine = frame["dataset"].isin(datasets).to_numpy() if datasets is not None and len(frame) else \
        np.ones(len(frame), dtype=bool)
    sel = select(frame, Table(spec, selection).selection, metric=spec.metric, unfinished=unfinished,
                 datasets=datasets) if len(frame) else pd.DataFrame()
    solver_columns = [c for c in ("dataset", "model", "estimator", "fixed_params", "point") if c in frame]
    cells = cell_solvers(frame.loc[mine, solver_columns] if len(frame) else frame)
    # The finished outer-fold rows of each (data set, model, point), in store order.
    columns = [c for c in ("dataset", "model", "point", "standalone_fit_seconds", "path_size", "fit_seconds")
               if c in frame]
    done = frame.loc[(frame["inner"].isna() & (frame["status"] == "ok")).to_numpy() & mine, columns] \
        if len(frame) else frame
    by_point = done.groupby(["dataset", "model", "point"], sort=False, observed=True).indices if len(done) else {}
    rows = {}
    for _, s in sel.iterrows():
        key = (s["dataset"], s["model"])
        row = {"dataset": key[0], "method": key[1], "status": s["status"], "seconds": np.nan,
               "timing": None, "point": s["point"], "solver": ", ".join(cells.get(key, [])) or None,
               **_fit_counts(s)}
        if s["status"] == "timed-out":
            row["seconds"], row["timing"] = np.inf, "timed out"
        elif s["status"] == "ok":
            g = done.iloc[by_point.get((key[0], key[1], s["point"]), [])]
            standalone = g["standalone_fit_seconds"].dropna() if "standalone_fit_seconds" in g else pd.Series([])
            if len(standalone):
                row["seconds"], row["timing"] = standalone.mean(), "standalone"
            else:
                # (A frame whose records have no path size or fit time has no such column: as missing values.)
                path = g["path_size"].max() if len(g) and "path_size" in g else 1
                row["seconds"] = g["fit_seconds"].mean() if "fit_seconds" in g else np.nan
                row["timing"] = "path (whole grid)" if path and path > 1 else "standalone"
        rows[key] = row
    return rows, cells


def time_frame(rows_and_solvers, spec, layout="full"):
    """A time table (``time_table``'s frame) of its cells' rows and solvers (``time_rows``)."""
    rows, cells = rows_and_solvers
    rows = dict(rows)
    pub = spec.published_frame()
    value = spec.published_value or "seconds"
    for _, p in pub.iterrows() if pub is not None else ():
        key = (p["dataset"], p["method"])
        if layout == "run" and key not in rows:
            continue
        row = rows.setdefault(key, {"dataset": key[0], "method": key[1], "status": "missing",
                                    "seconds": np.nan, "timing": None, "point": None, "solver": None,
                                    **dict.fromkeys(FIT_COUNTS.values(), 0)})
        row = rows[key] = dict(row)  # the caller's rows stay as they were
        row["published"] = np.inf if "more than" in str(p.get("note", "")) else float(p[value])
    df = pd.DataFrame(list(rows.values()),
                      columns=None if rows else ["dataset", "method", "status", "seconds", "timing", "point",
                                                 "solver", *FIT_COUNTS.values()])
    counts = count_columns(df)
    if "published" not in df:
        df["published"] = np.nan
    # Last: the columns a reader of the table's csv had keep their places.
    df = df[[c for c in df.columns if c not in COUNT_COLUMNS] + counts]
    df[counts] = df[counts].fillna(0).astype(np.int64)
    if pub is not None:
        df = df[df["dataset"].isin(set(pub["dataset"]))]
    df = _order(df, pub)
    # The solvers of this table's own cells: the store may hold other papers' models too (ESMM's SMM, its SVM).
    shown = set(zip(df["dataset"], df["method"], strict=True))
    df.attrs["solvers"] = column_solvers({k: v for k, v in cells.items() if k in shown})
    return df



class TimeShape(TableShape):
    """Seconds of one training fit at the selected point (``time_table``); its point is selected by the metric."""

    name = "time"
    marks_fits = True

    def value_column(self, spec):
        return "seconds"

    def greater_is_better(self, spec):
        return False

    def digits(self, spec):
        return 2

    def rows(self, records, table, unfinished=(), per_fold=None):
        return time_rows(records, table.spec, table.selection, unfinished)

    def frame(self, rows, extra, table, layout="full"):
        return time_frame((rows, extra), table.spec, layout)

    def shows(self, df):
        return not df.empty and bool(df["seconds"].notna().any())

    def columns(self, table, limit):
        seconds = RowFormat(lambda r: _fmt(r["seconds"], 2, limit) + fits_mark(r))
        columns = [("dataset", "data set", None), ("method", "method", None),
                   ("seconds", "seconds", seconds),
                   ("published", "paper", lambda v: _fmt(v, 1, limit)),
                   ("timing", "timing", None), ("point", "selected point", None)]
        return columns, ("dataset", "method", seconds)

    def site_section(self, table, df, verdicts, records, per_fold, limit, judged=True, matrix=None):
        rows, details, cell = [], [], printed(self.columns(table, limit)[0])
        for _, r in df.iterrows():
            verdict, reason = "not compared", "training times depend on the machine"
            rows.append({"data set": r["dataset"], "method": r["method"], "seconds": cell["seconds"](r),
                         "paper": cell["published"](r), "timing": r.get("timing") or "",
                         "selected point": r.get("point") or ""})
            details.append({"cell": f"{r['dataset']} / {r['method']}", "verdict": verdict, "reason": reason,
                            "fits": fits_note(r)})
        display = pd.DataFrame(rows)
        classes = pd.DataFrame([[""] * 6 for _ in rows], columns=display.columns)
        return {"display": display, "classes": classes, "tips": None, "details": details, "wide": None}


register_shape(TimeShape())
