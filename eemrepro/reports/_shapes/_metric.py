"""The metric table: a metric at the selected grid point per (data set, method), mean +- std, beside the
published cell (every paper's accuracy/G-mean tables, and the benchmark of any store: ``_benchmark``)."""

import weakref
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...experiments import get_metric, select
from ...experiments._selection import FIT_COUNTS, _point_sort_key
from ...store._segments import as_frame
from ...store._store import repeats_per_cell
from .._cells import _combine, _facet, _fit_counts, _of_kind, _order, count_columns
from .._matrix import mark_text
from .._render import (
    FOLD_VALUES,
    RUN_LEGEND,
    RUN_LEGEND_UNPUBLISHED,
    RowFormat,
    _fmt,
    _signed,
    fits_mark,
    fits_note,
    metric_cell,
    printed,
    run_cell,
)
from ._base import UNJUDGED, VERDICTS, Table, TableShape, register_shape


def metric_table(records, spec, selection="best-of-grid", reference=None, unfinished=(), layout="full",
                 all_datasets=False, per_fold=None):
    """A metric at the selected grid point per (data set, method), mean +- std, next to the published cell.

    ``reference``: records of another reproduction to compare with instead of
    the published table (its cells become the "published" columns); every data
    set of the two is compared then, not only the paper's (``all_datasets``).

    Returns
    -------
    DataFrame with columns dataset, method, status, <metric>, <metric>_std,
    published, published_std, delta, point, n_folds, repeats, and the cell's
    fits that did not finish: failed_fits, timed_out_fits, skipped_fits
    (``select``).
    """
    rows = metric_rows(records, spec, selection, unfinished, all_datasets=all_datasets or reference is not None,
                       per_fold=per_fold)
    if reference is None:
        return metric_frame(rows, spec, layout)
    m = spec.metric
    ref = metric_table(reference, spec, Table(spec, selection).selection, layout="run", all_datasets=True)
    ref = ref[ref["status"] == "ok"]
    pub = pd.DataFrame({"dataset": ref["dataset"], "method": ref["method"],
                        spec.value_column: ref[m] / spec.scale, spec.std_column: ref[m + "_std"] / spec.scale})
    return metric_frame(rows, spec, layout, pub=pub, pub_scale=spec.scale)


def metric_rows(records, spec, selection="best-of-grid", unfinished=(), all_datasets=False, per_fold=None):
    """{(data set, method): row} of a metric table from ``records``, each cell from its own records alone
    (``metric_frame`` makes the table of them; the rows of two frames of different data sets are the union).

    The published table's data sets only, unless ``all_datasets``. ``per_fold``: filled as ``metric_table``
    says.
    """
    m = spec.metric
    selection = Table(spec, selection).selection
    pub = spec.published_frame()
    # A paper's table holds its own data sets: records of other data sets (another paper's, loaded from the same
    # results folders) are not its rows, and are left out before selecting (each cell is selected on its own
    # records alone: the same cells, a fraction of the work).
    datasets = None if all_datasets or pub is None else set(pub["dataset"])
    grid = _of_kind(as_frame(records), spec.kind)
    if spec.facet:
        grid, unfinished = _facet(grid, spec.facet, unfinished)
    if spec.requires_criterion:
        c = spec.requires_criterion
        with_values = set(grid.loc[grid[c].notna(), "dataset"]) if c in grid else set()
        grid = grid[grid["dataset"].isin(with_values)]
    sel = select(grid, selection, metric=m, unfinished=unfinished, datasets=datasets) if len(grid) else \
        pd.DataFrame()
    # The repeats of the table's own cells (the rows below are those alone).
    mine = grid if datasets is None or not len(grid) else \
        grid.loc[grid["dataset"].isin(datasets).to_numpy(), ["dataset", "model", "repeat"]]
    repeats = repeats_per_cell(mine) if len(mine) else {}
    folds = _fold_values(grid, sel, m, spec.scale)
    rows = {}
    for s in sel.to_dict("records"):  # (plain values: a Series a row cost more than the row)
        if datasets is not None and s["dataset"] not in datasets:
            continue
        ok = s.get("status") == "ok"
        # A frame of records none of which has the metric has no column of its means: NaN, as its cells read
        # in a frame where other records have it.
        std = s.get(m + "_std", np.nan)
        spread = std / np.sqrt(s["n_folds"]) if spec.spread == "se" and ok else std
        rows[(s["dataset"], s["model"])] = {
            "dataset": s["dataset"], "method": s["model"], "status": s["status"],
            m: spec.scale * s.get(m + "_mean", np.nan) if ok else np.nan,
            m + "_std": spec.scale * spread if ok else np.nan,
            "point": s["point"], "n_folds": s.get("n_folds"), "repeats": repeats.get((s["dataset"], s["model"]), 0),
            FOLD_VALUES: folds.get((str(s["dataset"]), str(s["model"]))) if ok else None, **_fit_counts(s),
        }
    if spec.combine:
        rows = _combine(rows, spec.combine, m, get_metric(m).greater_is_better)
    # Where the rule chooses per fold (nested CV, a criterion): each cell's {(repeat, fold): point}, for the
    # report's drill-down (which would otherwise run the selection again). Not in ``attrs``: pandas deep-copies
    # those into every row the report iterates.
    if per_fold is not None and "folds" in sel:
        per_fold.update({(str(r["dataset"]), str(r["model"])): dict(zip(map(tuple, r["folds"]), r["points"],
                                                                        strict=True))
                         for r in sel.to_dict("records") if isinstance(r.get("folds"), list)})
    return rows


def _fold_values(grid, sel, metric, scale):
    """{(data set, model): ((repeat, fold, value), ...)} of each selected cell: its test folds' ``metric`` (times
    ``scale``) at the point it selected (the point each fold chose, where the rule chooses per fold), in (repeat,
    fold) order; what the Bayesian correlated t-test pairs fold by fold (``_stats.correlated_ttest``)."""
    if not len(sel) or "status" not in sel or metric not in grid or not len(grid):
        return {}
    chosen = sel[sel["status"] == "ok"]
    per_fold = "folds" in chosen
    if per_fold:  # chosen per fold: one (data set, model, repeat, fold, point) each
        wanted = {(str(d), str(m), int(r), int(f), str(p))
                  for d, m, fs, ps in zip(chosen["dataset"], chosen["model"], chosen["folds"], chosen["points"],
                                          strict=True) if isinstance(fs, list)
                  for (r, f), p in zip(fs, ps, strict=True)}
        cells = {k[:2] + k[4:] for k in wanted}
    else:
        cells = {(str(d), str(m), str(p)) for d, m, p in zip(chosen["dataset"], chosen["model"], chosen["point"],
                                                              strict=True)}
    # The chosen (data set, model, point)s' finished test folds, told by their columns' codes (no row copied).
    codes, names = zip(*(_codes(grid[k]) for k in ("dataset", "model", "point")), strict=True)
    dims = tuple(max(len(n), 1) for n in names)
    lookup = [{n: i for i, n in enumerate(ns)} for ns in names]
    wanted_codes = [np.ravel_multi_index(tuple(x[k] for x, k in zip(lookup, cell, strict=True)), dims)
                    for cell in cells if all(k in x for x, k in zip(lookup, cell, strict=True))]
    usable = grid["inner"].isna().to_numpy() & (grid["status"] == "ok").to_numpy() & np.all(
        [c >= 0 for c in codes], axis=0)
    candidates = np.flatnonzero(usable)
    combined = np.ravel_multi_index(tuple(c[candidates] for c in codes), dims)
    rows = candidates[np.isin(combined, wanted_codes)]
    d, m, p = (n[c[rows]] for n, c in zip(names, codes, strict=True))
    r, f = grid["repeat"].to_numpy()[rows].astype(int), grid["fold"].to_numpy()[rows].astype(int)
    v = scale * grid[metric].to_numpy(dtype=float)[rows]
    if per_fold:
        ok = np.array([k in wanted for k in zip(d, m, r.tolist(), f.tolist(), p, strict=True)], dtype=bool)
        d, m, r, f, v = d[ok], m[ok], r[ok], f[ok], v[ok]
    if not len(d):
        return {}
    order = np.lexsort((f, r, m, d))
    d, m, triples = d[order], m[order], list(zip(r[order].tolist(), f[order].tolist(), v[order].tolist(),
                                                  strict=True))
    starts = np.flatnonzero(np.r_[True, (d[1:] != d[:-1]) | (m[1:] != m[:-1])])
    ends = np.r_[starts[1:], len(d)]
    return {(d[a], m[a]): tuple(triples[a:b]) for a, b in zip(starts, ends, strict=True)}


def _codes(column):
    """(codes, the distinct values as text): a categorical's own codes, else factorized (-1: missing)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), np.asarray([str(c) for c in column.cat.categories], dtype=object)
    codes, uniques = pd.factorize(column)
    return codes, np.asarray([str(u) for u in uniques], dtype=object)


def metric_frame(rows, spec, layout="full", pub=None, pub_scale=None):
    """A metric table (``metric_table``'s frame) of its cells' rows (``metric_rows``), beside the published
    cells (``pub``, default the spec's published table, its values times ``pub_scale``)."""
    m = spec.metric
    if pub is None:
        pub, pub_scale = spec.published_frame(), 1.0
    rows = dict(rows)
    if pub is not None:
        for _, p in pub.iterrows():
            key = (p["dataset"], p["method"])
            if layout == "run" and key not in rows:
                continue
            row = rows.setdefault(key, {"dataset": key[0], "method": key[1], "status": "missing", m: np.nan,
                                        m + "_std": np.nan, "point": None, "n_folds": 0, "repeats": 0,
                                        **dict.fromkeys(FIT_COUNTS.values(), 0)})
            row = rows[key] = dict(row)  # the caller's rows stay as they were
            row["published"] = p[spec.value_column] * pub_scale
            row["published_std"] = p[spec.std_column] * pub_scale if spec.std_column in p else np.nan
    df = pd.DataFrame(list(rows.values()),
                      columns=None if rows else ["dataset", "method", "status", m, m + "_std", "point", "n_folds",
                                                 "repeats", FOLD_VALUES, *FIT_COUNTS.values()])
    counts = count_columns(df)
    for col in ("published", "published_std"):
        if col not in df:
            df[col] = np.nan
    if FOLD_VALUES not in df:
        df[FOLD_VALUES] = None
    df = df[["dataset", "method", "status", m, m + "_std", "point", "n_folds", "repeats", "published",
             "published_std", FOLD_VALUES, *counts]]
    df["delta"] = df[m] - df["published"]
    # After the delta: the columns a reader of the table's csv had keep their places.
    df = df[[c for c in df.columns if c not in (*counts, FOLD_VALUES)] + [FOLD_VALUES] + counts]
    df[counts] = df[counts].fillna(0).astype(np.int64)
    return _order(df, pub)


def _cell_frames(spec, mine):
    """{(data set, method): its ``_CellFolds``} of a metric table (facets split as the table splits them)."""
    grid = _of_kind(mine, spec.kind)
    if spec.facet:
        grid, _ = _facet(grid, spec.facet, ())
    outer = grid[grid["inner"].isna()] if len(grid) else grid
    if not len(outer) or spec.metric not in outer:
        return {}
    # What a click shows reads the finished folds alone, in (repeat, fold) order: filtered and sorted once here,
    # and only the columns it shows.
    wanted = [c for c in ("dataset", "model", "point", "repeat", "fold", "status", spec.metric, "fit_seconds",
                          "predict_seconds") if c in outer]
    ok = outer.loc[outer["status"] == "ok", wanted]
    # (A fold without its data set, model or point is no cell's, and no point's of a curve.)
    known = ok[["dataset", "model", "point"]].notna().all(axis=1).to_numpy()
    keyed = (ok if known.all() else ok[known]).sort_values(["repeat", "fold"], kind="stable")
    if not len(keyed):
        return {}
    # Every cell's grid curve from one groupby (each group's rows summed in the same order as alone: the same
    # means), and its folds from the columns as arrays: a report has thousands of cells, each a frame and a
    # groupby of its own before. The keys as codes and their text (not a Python string a fold).
    (datasets, dataset_names), (models, model_names), (codes, names) = (
        _text_codes(keyed[c]) for c in ("dataset", "model", "point"))
    cells, firsts = pd.factorize(datasets * len(model_names) + models)
    group = pd.Series(keyed[spec.metric].to_numpy()).groupby(cells * len(names) + codes, sort=False)
    stats = group.agg(["mean", "count"])
    table = _TableFolds([keyed[c].to_numpy() if c in keyed else np.full(len(keyed), np.nan)
                         for c in ("repeat", "fold", spec.metric, "fit_seconds", "predict_seconds")],
                        codes, names, group.ngroup().to_numpy(), stats.index.to_numpy() % len(names),
                        stats["mean"].to_numpy(), stats["count"].to_numpy())
    order = np.argsort(cells, kind="stable")  # each cell's folds, in (repeat, fold) order
    ends = np.cumsum(np.bincount(cells, minlength=len(firsts)))
    width = len(model_names)
    return {(dataset_names[f // width], model_names[f % width]): _CellFolds(table, order[e - n:e])
            for f, e, n in zip(firsts.tolist(), ends.tolist(), np.diff(ends, prepend=0).tolist(), strict=True)}


def _text_codes(column):
    """(codes, names) of ``column.astype(str)`` (no missing value), names an object array; a categorical column's
    codes as they are and its categories as text (not a string a row)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy().astype(np.int64), np.asarray(column.cat.categories.astype(str),
                                                                         dtype=object)
    codes, names = pd.factorize(column.astype(str))
    return codes, np.asarray(names, dtype=object)


@dataclass(frozen=True)
class _TableFolds:
    """A metric table's finished test folds (``_cell_frames``), in (repeat, fold) order: ``columns`` (repeat,
    fold, value, fit s, predict s), each fold's point (its code in ``names``) and (data set, model, point) group,
    and each group's point (code), mean and count of values."""

    columns: list
    point: np.ndarray
    names: np.ndarray
    group: np.ndarray
    group_point: np.ndarray
    means: np.ndarray
    counts: np.ndarray


@dataclass(frozen=True)
class _CellFolds:
    """A metric cell's folds: its ``rows`` of the table's ``_TableFolds``."""

    table: _TableFolds
    rows: np.ndarray

    @property
    def folds(self):
        """(repeat, fold, point, value, fit s, predict s) of each fold, as Python scalars."""
        t = self.table
        repeat, fold, value, fit, predict = (c[self.rows].tolist() for c in t.columns)
        return list(zip(repeat, fold, t.names[t.point[self.rows]].tolist(), value, fit, predict, strict=True))

    @property
    def curve(self):
        """{point: (mean, count) of its folds' values}: the cell's grid curve."""
        t = self.table
        groups = np.unique(t.group[self.rows])
        return dict(zip(t.names[t.group_point[groups]].tolist(),
                        zip(t.means[groups].tolist(), t.counts[groups].tolist(), strict=True), strict=True))


def _details(spec, row, frames, verdict, reason, per_fold=None):
    """What a click on a metric cell shows: its test folds (at the point each fold selected) and its grid curve.

    ``per_fold``: {(repeat, fold): point} where the selection rule chooses per fold
    (nested CV, a criterion); else every fold is shown at the cell's selected point.
    """
    scale, digits = spec.scale, spec.printed_digits
    cell = {"cell": f"{row['dataset']} / {row['method']}", "verdict": verdict, "reason": reason,
            "point": row.get("point") if isinstance(row.get("point"), str) else None, "fits": fits_note(row)}
    g = frames.get((row["dataset"], row["method"]))
    if g is None:
        return cell
    if per_fold:
        at = [x for x in g.folds if x[2] == per_fold.get((int(x[0]), int(x[1])))]
    else:
        at = [x for x in g.folds if x[2] == cell["point"]] if cell["point"] else []
    cell["fold_headers"] = ["repeat", "fold", "selected", spec.metric, "fit s", "predict s"]
    cell["folds"] = [[int(r), int(f), p, _fmt(scale * v, digits), _fmt(fs, 3), _fmt(ps, 4)]
                     for r, f, p, v, fs, ps in at[:200]]
    curve = g.curve
    points = sorted(curve, key=_point_sort_key)  # the grid's own order: parameters by name, values ascending
    cell["grid"] = [[p, _fmt(scale * curve[p][0], digits), int(curve[p][1])] for p in points][:300]
    return cell


def _per_fold_points(table, mine, unfinished):
    """{(data set, method): {(repeat, fold): point}} where the table's rule selects per fold."""
    spec, rule = table.spec, table.selection
    if rule == "best-of-grid":
        return {}
    grid = _of_kind(mine, spec.kind)
    if spec.facet:
        grid, unfinished = _facet(grid, spec.facet, unfinished)
    sel = select(grid, rule, metric=spec.metric, unfinished=unfinished) if len(grid) else pd.DataFrame()
    if "folds" not in sel:
        return {}
    return {(str(r["dataset"]), str(r["model"])): dict(zip(map(tuple, r["folds"]), r["points"], strict=True))
            for r in sel.to_dict("records") if isinstance(r.get("folds"), list)}


def _metric_section(spec, df, verdicts, mine, per_fold, cell, judged=True):
    """A metric table as a sortable list (and each cell's details), each cell printed as the long view prints
    it (``cell``: ``_render.printed``); ``judged``: False for a benchmark, whose cells have no published value
    and no verdict."""
    m = spec.metric
    frames = _cell_frames(spec, mine)
    rows, details, classes, tips = [], [], [], []
    for _, r in df.iterrows():
        verdict, reason = verdicts.get((spec.id, r["dataset"], r["method"]),
                                       ("not compared", "not checked") if judged else UNJUDGED)
        rows.append({"data set": r["dataset"], "method": r["method"], "reproduced": cell[m](r),
                     spec.spread: cell[m + "_std"](r), "paper": cell["published"](r),
                     "paper " + spec.spread: cell["published_std"](r), "delta": cell["delta"](r),
                     "status": r["status"], "repeats": r.get("repeats"), "verdict": verdict})
        cls = VERDICTS[verdict] if judged else ""
        classes.append(["", "", cls, "", "", "", cls, "", "", cls])
        tips.append(["", "", fits_note(r), "", "", "", reason or "", "", "", reason or ""])
        details.append(_details(spec, r, frames, verdict, reason, per_fold.get((r["dataset"], r["method"]))))
    display = pd.DataFrame(rows)
    classes, tips = pd.DataFrame(classes, columns=display.columns), pd.DataFrame(tips, columns=display.columns)
    if not judged:  # nothing published to show beside, no verdict
        unjudged = [c for c in display.columns if c in ("paper", "paper " + spec.spread, "delta", "verdict")]
        display, classes, tips = (f.drop(columns=unjudged) for f in (display, classes, tips))
    return display, classes, tips, details


def _wide_section(spec, df, verdicts, judged=True, matrix=None):
    """The table in the paper's shape: data sets as rows, methods as columns (the paper's, then any other), each
    cell ours with its delta, coloured by verdict, the published value and the reason on hover; a click shows
    the cell's folds (``cell-<k>``: its row of the long list, whose details the page holds). A benchmark (not
    ``judged``: no published value, no verdict) shows "–" where a model was not run on a data set, each cell as
    its ``matrix`` (``_matrix.Matrix``) prints it (mean±std, its mark); with a matrix (a benchmark's, a paper's
    ranked table's), the best of each data set in the class ``best``."""
    digits = spec.printed_digits
    m = spec.metric
    datasets = list(dict.fromkeys(df["dataset"]))
    methods = list(dict.fromkeys(df["method"]))
    text = pd.DataFrame("" if judged else "–", index=datasets, columns=methods)
    classes, tips = pd.DataFrame("", index=datasets, columns=methods), pd.DataFrame("", index=datasets,
                                                                                     columns=methods)
    for k, (_, r) in enumerate(df.iterrows()):
        verdict, reason = verdicts.get((spec.id, r["dataset"], r["method"]),
                                       ("not compared", "not checked") if judged else UNJUDGED)
        key = (r["dataset"], r["method"])
        # A paper's cell: its reproduced mean beside its delta; a benchmark's as its matrix prints it (mean±std).
        value = _fmt(r[m], digits) + fits_mark(r) if matrix is None or judged else \
            matrix.cell(key, bold=str, mark=mark_text)
        delta = r.get("delta")
        has_delta = delta is not None and not (isinstance(delta, float) and np.isnan(delta))
        text.at[r["dataset"], r["method"]] = f"{value} ({_signed(delta, digits)})" if has_delta else value
        cls = VERDICTS[verdict] + " " if judged else ""
        best = "best " if matrix is not None and key in matrix.best else ""
        classes.at[r["dataset"], r["method"]] = f"{cls}{best}cell-{k}"
        paper = r.get("published")
        said = (verdict, reason or "") if judged else ()
        tips.at[r["dataset"], r["method"]] = "; ".join(
            t for t in (f"paper {_fmt(paper, digits)}" if paper is not None and paper == paper else "",
                        *said, fits_note(r)) if t)
    text, classes, tips = (f.reset_index(drop=True) for f in (text, classes, tips))
    text.insert(0, "data set", datasets)
    classes.insert(0, "data set", "")
    tips.insert(0, "data set", "")
    styler = text.style.hide(axis="index").set_td_classes(classes).set_tooltips(tips).set_uuid(f"{spec.id}_wide")
    return styler.to_html(doctype_html=False)



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


class MetricShape(TableShape):
    """A metric per (data set, method) at the selected grid point (``metric_table``)."""

    name = "metric"
    compares_methods = True
    takes_reference = True
    marks_fits = True

    def run_legend(self, df):
        """The paper's value and the delta explained where a cell has one; else the cell alone."""
        published = df["published"].notna().any() if "published" in df else False
        return RUN_LEGEND if published else RUN_LEGEND_UNPUBLISHED

    def rows(self, records, table, unfinished=(), per_fold=None):
        return metric_rows(records, table.spec, table.selection, unfinished, per_fold=per_fold), {}

    def frame(self, rows, extra, table, layout="full"):
        return metric_frame(rows, table.spec, layout)

    def build(self, records, table, reference=None, unfinished=(), layout="full", per_fold=None):
        return metric_table(records, table.spec, table.selection, reference=reference, unfinished=unfinished,
                            layout=layout, per_fold=per_fold)

    def columns(self, table, limit):
        spec, m, digits = table.spec, table.spec.metric, table.digits
        unit = " %" if spec.scale == 100 else ""
        fmt = lambda v: _fmt(v, digits)
        # The value beside its cell's mark (failed or timed-out fits), where the number is read.
        value = RowFormat(lambda r: fmt(r[m]) + fits_mark(r))
        columns = [("dataset", "data set", None), ("method", "method", None), ("status", "status", None),
                   (m, get_metric(m).title + unit, value), (m + "_std", spec.spread, fmt), ("published", "paper", fmt),
                   ("published_std", f"paper {spec.spread}", fmt), ("delta", "delta", lambda v: _signed(v, digits)),
                   ("point", "selected point", None), ("repeats", "repeats", None)]
        return columns, ("dataset", "method", metric_cell(m, limit, digits))

    def run_view(self, table, limit):
        return "dataset", "method", run_cell(table.spec.metric, limit, table.digits)

    def in_run_table(self, spec, select_metric):
        return spec.metric == select_metric

    def claim_view(self, df, table, claim):
        wide = _pivot(df, table.value)
        return wide[wide.index.isin(claim.datasets)] if claim.datasets else wide

    def site_section(self, table, df, verdicts, records, per_fold, limit, judged=True, matrix=None):
        cell = printed(self.columns(table, limit)[0])
        display, classes, tips, details = _metric_section(table.spec, df, verdicts, records, per_fold, cell, judged)
        return {"display": display, "classes": classes, "tips": tips, "details": details,
                "wide": _wide_section(table.spec, df, verdicts, judged, matrix)}

    def per_fold_points(self, table, records, unfinished=()):
        return _per_fold_points(table, records, unfinished)


register_shape(MetricShape())
