"""Choosing the grid point, from stored records only (never during a run).

Every rule ranks by a named metric (its registry entry says which way is
better) or by a named criterion:

* ``best-of-grid`` (what most papers' tables show): every grid point is run
  on the same outer folds and the point with the best mean metric is reported.
  Only points that finished on every outer fold compete (a cell where some
  point has no record yet for a fold that others have, or where the store says
  a unit of its config has no record (``unfinished``), reads "incomplete"); ties
  go to the smallest parameter values (the simpler model), an order that does
  not depend on how the run was scheduled.
* ``nested`` (an honest estimate): on each outer fold the point with the best
  mean metric over the inner folds of its training part is chosen (means equal
  up to round-off are ties, which go to the smallest parameter values), and
  that point's outer-test metrics are what is reported.
* a criterion (``dcs-gaussian`` / ``dcs-kde`` for EEM Table 6, any registered
  one): on each outer fold the point whose training-part criterion is best is
  chosen; no validation data.
"""

import json

import numpy as np
import pandas as pd

from ._criteria import get_criterion
from ._metrics import get_metric, metric_names

# Metric means equal to this many decimals are ties (far above round-off, far
# below any difference a table shows).
_TIE_DECIMALS = 12


def _metric_columns(df):
    return [m for m in metric_names() if m in df]


def records_frame(records):
    """Records as a DataFrame with a ``point`` column (the grid point as canonical JSON)."""
    records = list(records)
    df = pd.DataFrame.from_records(records)
    if df.empty:
        return df
    # One column per metric and criterion (a record holds them as mappings).
    metrics = list(dict.fromkeys(k for r in records for k in r.get("metrics") or {}))
    criteria = list(dict.fromkeys(k for r in records for k in r.get("criteria") or {}))
    for key, names in (("metrics", metrics), ("criteria", criteria)):
        for name in names:
            df[name] = [(r.get(key) or {}).get(name) for r in records]
    df["point"] = [json.dumps(p, sort_keys=True) for p in df["params"]]
    # Canonical grid order: parameters by name, values ascending.
    ranks = {p: i for i, p in enumerate(sorted(set(df["point"]), key=_point_sort_key))}
    df["order"] = df["point"].map(ranks)
    return df.sort_values(["dataset", "model", "order", "repeat", "fold"], kind="stable").reset_index(drop=True)


def _point_sort_key(point):
    items = sorted(json.loads(point).items())
    return tuple((k, (0, v) if isinstance(v, (int, float)) else (1, str(v))) for k, v in items)


def grid_summary(df, ddof=1):
    """Per (data set, model, grid point): outer-fold counts by status and metric means/stds."""
    outer = df[df["inner"].isna()]
    rows = []
    for (dataset, model, point), g in outer.groupby(["dataset", "model", "point"], sort=False):
        ok = g[g["status"] == "ok"]
        row = {"dataset": dataset, "model": model, "point": point, "order": g["order"].min(),
               "n_folds": len(g), "n_ok": len(ok)}
        for status in ("timed-out", "failed", "skipped-after-timeout"):
            row["n_" + status.replace("-", "_")] = int((g["status"] == status).sum())
        for m in _metric_columns(df):
            values = ok[m].dropna().to_numpy(dtype=float)
            row[m + "_mean"] = values.mean() if values.size else np.nan
            row[m + "_std"] = values.std(ddof=ddof) if values.size > ddof else np.nan
        row["fit_seconds_mean"] = ok["fit_seconds"].mean() if len(ok) else np.nan
        row["path_size"] = ok["path_size"].max() if len(ok) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _cell_status(g):
    # A timeout wins; a failure (say out of memory, after which skip-model
    # skips the rest) comes next; skipped points alone mean a timeout elsewhere.
    if (g["n_timed_out"] > 0).any():
        return "timed-out"
    if (g["n_failed"] > 0).any():
        return "failed"
    return "timed-out"


def select_best_of_grid(df, ddof=1, metric="gmean", unfinished=()):
    """One row per (data set, model): the selected point and its outer-fold metrics.

    ``unfinished``: (data set, model) cells the store says lack a unit's
    record (``ResultStore.unfinished_cells``).
    """
    summary = grid_summary(df, ddof=ddof)
    outer = df[df["inner"].isna()]
    n_splits = outer.drop_duplicates(["dataset", "model", "repeat", "fold"]).groupby(["dataset", "model"]).size()
    unfinished = set(unfinished)
    better = get_metric(metric).greater_is_better
    rows = []
    for (dataset, model), g in summary.groupby(["dataset", "model"], sort=False):
        stopped = (g[["n_timed_out", "n_failed", "n_skipped_after_timeout"]].to_numpy() > 0).any()
        if (g["n_folds"] < n_splits[(dataset, model)]).any() or ((dataset, model) in unfinished and not stopped):
            # A run was interrupted inside this cell: some point lacks a (repeat,
            # fold) that others have, or a unit of the config has no record.
            # Choosing among what is stored would report a smaller grid as if
            # it were the paper's; resume the run instead.
            rows.append({"dataset": dataset, "model": model, "status": "incomplete", "point": None})
            continue
        complete = g[g["n_ok"] == g["n_folds"]].sort_values("order")
        if complete.empty:
            rows.append({"dataset": dataset, "model": model, "status": _cell_status(g), "point": None})
            continue
        column = metric + "_mean"
        has_values = column in complete and complete[column].notna().any()
        values = complete[column] if better or not has_values else -complete[column]
        best = complete.loc[values.idxmax()] if has_values else complete.iloc[0]
        # idxmax returns the first maximum; complete is in canonical order.
        rows.append(dict(best.to_dict(), status="ok"))
    return pd.DataFrame(rows)


def _per_fold_choice(df, choose, ddof):
    """Aggregate the outer-test metrics of a point chosen on each outer fold.

    ``choose(dataset, model, repeat, fold, outer_fold_records)`` returns the
    chosen point (or None when nothing can be chosen on that fold).
    """
    outer = df[df["inner"].isna()]
    rows = []
    for (dataset, model), g in outer.groupby(["dataset", "model"], sort=False):
        metrics = _metric_columns(df)
        chosen, fits, scores = [], [], {m: [] for m in metrics}
        for (repeat, fold), fold_records in g.groupby(["repeat", "fold"], sort=True):
            point = choose(dataset, model, repeat, fold, fold_records)
            if point is None:
                continue
            rec = fold_records[fold_records["point"] == point].iloc[0]
            if rec["status"] != "ok":
                continue
            chosen.append(point)
            fits.append(rec["fit_seconds"])
            for m in metrics:
                scores[m].append(rec[m])
        if not chosen:
            rows.append({"dataset": dataset, "model": model, "status": _cell_status(grid_summary(g)), "point": None})
            continue
        row = {"dataset": dataset, "model": model, "status": "ok", "n_folds": len(chosen),
               "point": pd.Series(chosen).mode().iloc[0], "points": chosen,
               "fit_seconds_mean": float(np.mean(fits))}
        for m in metrics:
            v = np.array([x for x in scores[m] if x is not None and not pd.isna(x)], dtype=float)
            row[m + "_mean"] = v.mean() if v.size else np.nan
            row[m + "_std"] = v.std(ddof=ddof) if v.size > ddof else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _first_best(table, column, greater_is_better=True):
    table = table.sort_values("order")
    values = table[column].astype(float) * (1 if greater_is_better else -1)
    if values.notna().sum() == 0:
        return None
    return table.loc[values.idxmax(), "point"]


def select_nested(df, ddof=1, metric="gmean"):
    """One row per (data set, model): outer metrics of the points chosen by inner CV."""
    keys = ["dataset", "model", "repeat", "fold"]
    inner = df[df["inner"].notna()].assign(_ok=lambda d: d["status"] == "ok")
    # One pass over the inner records (a per-fold scan of them all is quadratic
    # in the store's size): per outer fold and point, whether every inner fold
    # finished, the mean metric over them, and the point's canonical order.
    points = inner.groupby(keys + ["point"], sort=False).agg(
        value=(metric, "mean"), order=("order", "min"), all_ok=("_ok", "all")).reset_index()
    points = points[points["all_ok"] & points["value"].notna()]
    # The best value first, ties to the earliest point in canonical order. Means
    # that differ only in round-off are ties: the inner folds of two points are
    # summed in the order their records arrived, so equal fold values can give
    # means an ulp apart, which would otherwise decide the choice.
    sign = -1.0 if get_metric(metric).greater_is_better else 1.0
    rank = sign * points["value"].astype(float).round(_TIE_DECIMALS)
    points = points.assign(_rank=rank).sort_values(["_rank", "order"], kind="stable")
    best = points.drop_duplicates(keys)
    chosen = dict(zip(best[keys].itertuples(index=False, name=None), best["point"], strict=True))

    def choose(dataset, model, repeat, fold, _):
        return chosen.get((dataset, model, repeat, fold))

    return _per_fold_choice(df, choose, ddof)


def select_by_criterion(df, criterion, ddof=1):
    """One row per (data set, model): points chosen per fold by a training-part criterion."""
    if criterion not in df or df.loc[df["status"] == "ok", criterion].isna().all():
        raise ValueError(f"the records have no {criterion} values: run with protocol.criteria: [{criterion}]")
    better = get_criterion(criterion).greater_is_better

    def choose(dataset, model, repeat, fold, fold_records):
        return _first_best(fold_records[fold_records["status"] == "ok"], criterion, better)

    return _per_fold_choice(df, choose, ddof)


def select(records, mode="best-of-grid", ddof=1, metric="gmean", unfinished=()):
    """Selected point and metrics per (data set, model) under ``mode``.

    ``mode``: ``best-of-grid`` or ``nested`` (by ``metric``), or a criterion
    name (``dcs-gaussian`` or ``dcs_gaussian``).
    """
    df = records_frame(records)
    if df.empty:
        return df
    if mode == "best-of-grid":
        return select_best_of_grid(df, ddof, metric=metric, unfinished=unfinished)
    if mode == "nested":
        return _mark_incomplete(select_nested(df, ddof, metric=metric), df, unfinished)
    try:
        get_criterion(mode.replace("-", "_"))
    except ValueError:
        raise ValueError(f"selection must be best-of-grid, nested or a criterion, got {mode!r}") from None
    return _mark_incomplete(select_by_criterion(df, mode.replace("-", "_"), ddof), df, unfinished)


def _mark_incomplete(rows, df, unfinished):
    """Per-fold rules choose among the points stored for each fold: in a cell the
    store says is unfinished (and that no timeout or failure stopped), that would
    be a smaller grid reported as the paper's, so it reads "incomplete" as in
    best-of-grid."""
    unfinished = set(unfinished)
    if rows.empty or not unfinished:
        return rows
    stopped = set(map(tuple, df.loc[df["status"].isin(["timed-out", "failed", "skipped-after-timeout"]),
                                    ["dataset", "model"]].drop_duplicates().to_numpy()))
    hit = [(d, m) in unfinished and (d, m) not in stopped for d, m in zip(rows["dataset"], rows["model"], strict=True)]
    if not any(hit):
        return rows
    rows = rows.copy()
    rows.loc[hit, "status"] = "incomplete"
    for column in ("point", "points"):
        if column in rows:
            rows[column] = [None if h else v for h, v in zip(hit, rows[column], strict=True)]
    rows.loc[hit, [c for c in rows if c.endswith(("_mean", "_std"))]] = np.nan
    return rows
