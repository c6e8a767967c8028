"""Choosing the grid point, from stored records only (never during a run).

* ``best-of-grid`` (what the EEM paper's tables show): every grid point is run
  on the same outer folds and the point with the best mean GMean is reported.
  Only points that finished on every outer fold compete (a cell where some
  point has no record yet for a fold that others have, or, read through
  ``reports.load_results``, a unit of its config has no record, reads "incomplete");
  ties go to the
  smallest parameter values (the simpler model), an order that does not depend
  on how the run was scheduled.
* ``nested`` (an honest estimate): on each outer fold the point with the best
  mean GMean over the inner folds of its training part is chosen, and that
  point's outer-test GMean is what is reported.
* ``dcs-gaussian`` / ``dcs-kde`` (EEM Table 6): on each outer fold the point
  whose training projection has the largest Cauchy–Schwarz divergence between
  the classes (normal fit or Silverman KDE) is chosen; no validation data.
"""

import json

import numpy as np
import pandas as pd

METRICS = ("gmean", "bac", "auc")


def records_frame(records):
    """Records as a DataFrame with a ``point`` column (the grid point as canonical JSON)."""
    df = pd.DataFrame.from_records(list(records))
    if df.empty:
        return df
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
        for m in METRICS:
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


def select_best_of_grid(df, ddof=1):
    """One row per (data set, model): the selected point and its outer-fold metrics."""
    summary = grid_summary(df, ddof=ddof)
    outer = df[df["inner"].isna()]
    n_splits = outer.drop_duplicates(["dataset", "model", "repeat", "fold"]).groupby(["dataset", "model"]).size()
    # ``_unfinished``: set by reports.load_results where the folder's config has
    # units this cell's records lack (see experiments._units.unfinished_cells).
    unfinished = (outer["_unfinished"].eq(True).groupby([outer["dataset"], outer["model"]]).any().to_dict()
                  if "_unfinished" in outer else {})
    rows = []
    for (dataset, model), g in summary.groupby(["dataset", "model"], sort=False):
        stopped = (g[["n_timed_out", "n_failed", "n_skipped_after_timeout"]].to_numpy() > 0).any()
        if (g["n_folds"] < n_splits[(dataset, model)]).any() or (unfinished.get((dataset, model)) and not stopped):
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
        has_values = complete["gmean_mean"].notna().any()
        best = complete.loc[complete["gmean_mean"].idxmax()] if has_values else complete.iloc[0]
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
        chosen, fits, scores = [], [], {m: [] for m in METRICS}
        for (repeat, fold), fold_records in g.groupby(["repeat", "fold"], sort=True):
            point = choose(dataset, model, repeat, fold, fold_records)
            if point is None:
                continue
            rec = fold_records[fold_records["point"] == point].iloc[0]
            if rec["status"] != "ok":
                continue
            chosen.append(point)
            fits.append(rec["fit_seconds"])
            for m in METRICS:
                scores[m].append(rec[m])
        if not chosen:
            rows.append({"dataset": dataset, "model": model, "status": _cell_status(grid_summary(g)), "point": None})
            continue
        row = {"dataset": dataset, "model": model, "status": "ok", "n_folds": len(chosen),
               "point": pd.Series(chosen).mode().iloc[0], "points": chosen,
               "fit_seconds_mean": float(np.mean(fits))}
        for m in METRICS:
            v = np.array([x for x in scores[m] if x is not None and not pd.isna(x)], dtype=float)
            row[m + "_mean"] = v.mean() if v.size else np.nan
            row[m + "_std"] = v.std(ddof=ddof) if v.size > ddof else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _first_max(table, column):
    table = table.sort_values("order")
    values = table[column].astype(float)
    if values.notna().sum() == 0:
        return None
    return table.loc[values.idxmax(), "point"]


def select_nested(df, ddof=1):
    """One row per (data set, model): outer metrics of the points chosen by inner CV."""
    inner = df[df["inner"].notna()]

    def choose(dataset, model, repeat, fold, _):
        cand = inner[(inner["dataset"] == dataset) & (inner["model"] == model)
                     & (inner["repeat"] == repeat) & (inner["fold"] == fold)]
        ok = cand.groupby("point", sort=False).filter(lambda c: (c["status"] == "ok").all())
        if ok.empty:
            return None
        means = ok.groupby("point", sort=False).agg(gmean=("gmean", "mean"), order=("order", "min")).reset_index()
        return _first_max(means, "gmean")

    return _per_fold_choice(df, choose, ddof)


def select_by_dcs(df, criterion, ddof=1):
    """One row per (data set, model): points chosen per fold by the training D_CS."""
    column = {"dcs-gaussian": "dcs_gaussian", "dcs-kde": "dcs_kde"}[criterion]
    if column not in df or df.loc[df["status"] == "ok", column].isna().all():
        raise ValueError(f"the records have no {column} values: run with protocol.train_dcs: true")

    def choose(dataset, model, repeat, fold, fold_records):
        return _first_max(fold_records[fold_records["status"] == "ok"], column)

    return _per_fold_choice(df, choose, ddof)


def select(records, mode="best-of-grid", ddof=1):
    """Selected point and metrics per (data set, model) under ``mode``."""
    df = records_frame(records)
    if df.empty:
        return df
    if mode == "best-of-grid":
        return select_best_of_grid(df, ddof)
    if mode == "nested":
        return select_nested(df, ddof)
    if mode in ("dcs-gaussian", "dcs-kde"):
        return select_by_dcs(df, mode, ddof)
    raise ValueError(f"selection must be best-of-grid, nested, dcs-gaussian or dcs-kde, got {mode!r}")
