"""Choosing the grid point, from stored records only (never during a run).

Every rule ranks by a named metric (its registry entry says which way is
better) or by a named criterion:

* ``best-of-grid`` (what most papers' tables show): every grid point is run
  on the same outer folds and the point with the best mean metric is reported.
  A point is a candidate only where it has a finished ("ok") record for every
  split (repeat, fold) of the cell, in every repeat: a point one of whose fits
  failed or ran past the fit budget is never averaged over the folds that
  survived, it drops out of the grid (and the cell says so, below). A cell
  where some point has no record at all for a split that another point has
  (an interrupted run), or where the store says a unit of its config has no
  record (``unfinished``), reads "incomplete"; ties go to the smallest
  parameter values (the simpler model), an order that does not depend on how
  the run was scheduled.
* ``nested`` (an honest estimate): on each outer fold the point with the best
  mean metric over the inner folds of its training part is chosen (means equal
  up to round-off are ties, which go to the smallest parameter values), among
  the points whose every inner fit on that fold finished; that point's
  outer-test metrics are what is reported.
* a criterion (``dcs-gaussian`` / ``dcs-kde``, any registered
  one): on each outer fold the finished point whose training-part criterion is
  best is chosen; no validation data.
* ``best-per-fold``: on each outer fold the finished point with the best test
  metric (an optimistic reading, never a protocol's default).

The rules that choose per fold never average over the folds that survived a
failure either: a fold whose chosen point's outer fit did not finish (nested
chooses by the inner folds alone), or where no point could be chosen and
some fit the rule read there did not finish, leaves the cell without a value
("failed" or "timed-out"). As in best-of-grid, a cell where some point lacks
a record for a split (for nested, an inner split too) that another point has
reads "incomplete".

Whatever the rule, each cell's row counts the fits it read that did not
finish: ``failed_fits``, ``timed_out_fits`` and ``skipped_fits`` (a point not
tried after a timeout). The tables mark a cell with failed or timed-out fits
("†k", k their number), so a grid reduced by failures is never shown as
the whole grid.
"""

import functools
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


def records_frame(records, columns=None, rows=None):
    """Records (a list of mappings, or a store frame) as the frame selection works on.

    One column per metric and criterion, ``point`` the grid point as canonical
    JSON and ``order`` its rank in the canonical grid order (parameters by
    name, values ascending), sorted by data set, model, point, repeat, fold.
    ``columns``: the columns to keep (None: all), in the records' order.
    ``rows``: of a store frame, only the records at these positions (taken
    with the sort: the kept columns of those rows are copied once).
    """
    from ..store._segments import as_frame

    df = as_frame(records)
    if rows is not None and len(rows) == len(df):
        rows = None
    if rows is not None and not len(rows):
        df = df.iloc[:0]
    if df.empty:
        return df if columns is None else df[[c for c in df.columns if c in set(columns)]]
    if "inner" not in df:
        df = df.assign(inner=np.nan)

    def column(name):  # one key column of the rows taken (a copy of that column alone)
        return df[name] if rows is None else df[name].iloc[rows]

    codes, uniques = pd.factorize(column("point"), sort=False)
    ranks = np.empty(len(uniques), dtype=np.int64)
    ranks[sorted(range(len(uniques)), key=lambda i: _point_sort_key(uniques[i]))] = np.arange(len(uniques))
    order = ranks[codes]
    del codes
    # One stable sort by data set, model, order, repeat, fold, inner (outer first) as one permutation, taken
    # once: the frame is copied once, not once per step.
    inner = pd.to_numeric(column("inner"), errors="coerce").fillna(-1).to_numpy()
    perm = np.lexsort([inner, _sort_codes(column("fold")), _sort_codes(column("repeat")), order,
                       _sort_codes(column("model")), _sort_codes(column("dataset"))])
    del inner
    take = perm if rows is None else np.asarray(rows)[perm]
    keep = list(df.columns) if columns is None else [c for c in df.columns if c in set(columns) or c == "inner"]
    # Column by column into a frame that shares them (no copy of the records beside the sorted copy).
    data = {c: df[c].array.take(take) if isinstance(df[c].dtype, pd.api.extensions.ExtensionDtype)
            else df[c].to_numpy()[take] for c in keep}
    data["order"] = order[perm]
    return pd.DataFrame(data, copy=False)


def _sort_codes(column):
    """Integers that sort as ``column`` sorts (categories by their order, NaN last, as ``sort_values``)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        # In the narrowest integers that hold them (a store frame's columns have a handful of values: two bytes
        # a row, not eight, over every record of a kind).
        missing = len(column.cat.categories)
        codes = column.cat.codes.to_numpy().astype(np.min_scalar_type(-missing - 1))
        codes[codes < 0] = missing
        return codes
    codes, _ = pd.factorize(column, sort=True)
    return np.where(codes < 0, codes.max(initial=0) + 1, codes)


@functools.lru_cache(maxsize=65536)
def _point_sort_key(point):
    items = sorted(json.loads(point).items())
    return tuple((k, (0, v) if isinstance(v, (int, float)) else (1, str(v))) for k, v in items)


def group_mean_std(codes, values, n_groups, ddof=1):
    """Per group, the mean and std of its non-NaN ``values`` in row order, as ``np.mean`` / ``np.std`` give them.

    Groups of one size are reduced together as the rows of one matrix, which
    numpy sums exactly as it sums each group alone (a pairwise sum per row):
    the figures are the same to the last bit as a loop over groups, so the
    tables do not depend on how they were computed.
    """
    values = np.asarray(values, dtype=float)
    codes = np.asarray(codes)
    keep = ~np.isnan(values)
    if not keep.all():
        codes, values = codes[keep], values[keep]
    del keep
    if not (codes[1:] >= codes[:-1]).all():  # the selection's frames come grouped: no sort, no copies then
        order = np.argsort(codes, kind="stable")
        codes, values = codes[order], values[order]
        del order
    sizes = np.bincount(codes, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    mean = np.full(n_groups, np.nan)
    std = np.full(n_groups, np.nan)
    for size in np.unique(sizes[sizes > 0]):
        groups = np.flatnonzero(sizes == size)
        block = values[starts[groups][:, None] + np.arange(size)]
        mean[groups] = block.mean(axis=1)
        if size > ddof:
            std[groups] = block.std(axis=1, ddof=ddof)
    return mean, std


def grid_summary(df, ddof=1):
    """Per (data set, model, grid point): outer-fold counts by status and metric means/stds."""
    outer = _outer(df)
    if outer.empty:
        return pd.DataFrame()
    codes, firsts = _group_codes(outer, ["dataset", "model", "point"])
    n = len(firsts)
    out = outer.iloc[firsts][["dataset", "model", "point"]].reset_index(drop=True)
    out["order"] = pd.Series(outer["order"].to_numpy()).groupby(codes).min().to_numpy()
    out["n_folds"] = np.bincount(codes, minlength=n)
    # Compared as a column (a categorical by its codes): ``to_numpy`` would make a string object per record.
    status = outer["status"]
    ok = (status == "ok").to_numpy()
    out["n_ok"] = np.bincount(codes[ok], minlength=n)
    for name in ("timed-out", "failed", "skipped-after-timeout"):
        out["n_" + name.replace("-", "_")] = np.bincount(codes[(status == name).to_numpy()], minlength=n)
    for m in _metric_columns(df):
        values = pd.to_numeric(outer[m], errors="coerce").to_numpy(dtype=float)
        out[m + "_mean"], out[m + "_std"] = group_mean_std(codes[ok], values[ok], n, ddof)
    fit = _numeric(outer, "fit_seconds")
    out["fit_seconds_mean"] = group_mean_std(codes[ok], fit[ok], n, ddof)[0]
    path = pd.Series(_numeric(outer, "path_size")[ok]).groupby(codes[ok]).max()
    out["path_size"] = path.reindex(range(n)).to_numpy()
    return out


def _outer(df):
    """The outer-fold rows: the frame itself where it has no inner-fold rows (no copy of every record)."""
    mask = df["inner"].isna().to_numpy()
    return df if mask.all() else df[mask]


def _numeric(df, column):
    if column not in df:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)


def _group_codes(df, keys):
    """Group number of each row (groups numbered by first appearance) and each group's first row.

    The frames selection works on are sorted so that each group's rows are adjacent: the groups are then
    the runs of equal keys, found in one pass (a group-by over millions of rows costs a gigabyte).
    """
    columns = [_sort_codes(df[k]) for k in keys]
    starts = _run_starts(columns)
    firsts = np.flatnonzero(starts)
    radix = [int(c.max(initial=0)) + 1 for c in columns]
    key = np.zeros(len(firsts), dtype=np.int64)
    for c, r in zip(columns, radix, strict=True):
        key = key * r + c[firsts]
    if len(np.unique(key)) == len(firsts) and np.prod(radix, dtype=float) < 2.0 ** 62:  # each group one run
        return np.cumsum(starts) - 1, firsts
    codes = df.groupby(keys, sort=False, dropna=False, observed=True).ngroup().to_numpy()
    _, firsts = np.unique(codes, return_index=True)
    return codes, firsts


def _run_starts(columns):
    """Where each run of rows with equal keys begins (``columns``: one integer array per key, same length)."""
    starts = np.zeros(len(columns[0]), dtype=bool)
    starts[:1] = True
    for c in columns:
        starts[1:] |= c[1:] != c[:-1]
    return starts


#: The statuses of a fit that did not finish, each with the column of a selection's row that counts them in its
#: cell (``select``): the tables mark a cell by these counts.
FIT_COUNTS = {"failed": "failed_fits", "timed-out": "timed_out_fits", "skipped-after-timeout": "skipped_fits"}
#: The column of a selection's row that counts its cell's fits whose solver stopped short of convergence (records
#: whose ``converged`` is False: LIBSVM at its iteration limit, a scikit-learn ``ConvergenceWarning``).
UNCONVERGED = "unconverged_fits"


def _lacking(frame, inner=False):
    """{(data set, model): whether some grid point of the cell lacks a record (whatever its status) for a split
    that another point of the cell has}: an interrupted run, whose stored points would be a smaller grid than
    the config's.

    A split is (repeat, fold), with ``inner`` (repeat, fold, inner fold): told apart by their repeat, so that
    a point missing a whole repeat lacks its splits (fold 0 of repeat 1 is not fold 0 of repeat 0).
    """
    if not len(frame):
        return {}
    cells, firsts = _group_codes(frame, ["dataset", "model"])
    points, point_firsts = _group_codes(frame, ["dataset", "model", "point"])
    split = np.zeros(len(frame), dtype=np.int64)
    for name in ("repeat", "fold", "inner") if inner else ("repeat", "fold"):
        codes = _sort_codes(frame[name]).astype(np.int64)
        split = split * (int(codes.max(initial=0)) + 1) + codes
    width = int(split.max(initial=0)) + 1
    # Each cell's distinct splits: a presence table of cells x splits where it is small (a hash of every record
    # costs seconds over a million), else the distinct (cell, split) pairs.
    pairs = cells.astype(np.int64) * width + split
    if len(firsts) * width <= 4 * len(frame) + 4096:
        per_cell = (np.bincount(pairs, minlength=len(firsts) * width) > 0).reshape(len(firsts), width).sum(axis=1)
    else:
        per_cell = np.bincount(np.unique(pairs) // width, minlength=len(firsts))
    # Each point's distinct splits: ``records_frame`` sorts a point's records by repeat, fold and inner fold,
    # so equal (point, split) records are adjacent: the runs of equal pairs.
    starts = _run_starts([points, split])
    per_point = np.bincount(points[starts], minlength=len(point_firsts))
    cell_of_point = cells[point_firsts]
    lacking = np.bincount(cell_of_point, weights=per_point < per_cell[cell_of_point], minlength=len(firsts)) > 0
    keys = frame.iloc[firsts][["dataset", "model"]].itertuples(index=False, name=None)
    return dict(zip(keys, lacking.tolist(), strict=True))


def _with_fit_counts(rows, frame):
    """``rows`` (one per cell) with ``FIT_COUNTS``' columns and ``UNCONVERGED``: of each cell's records in
    ``frame`` (those its rule read), how many failed, ran past the fit budget, were skipped after a timeout, and
    stopped short of convergence (``converged`` False; 0 where the records do not say)."""
    if rows.empty:
        return rows
    columns = [*FIT_COUNTS.values(), UNCONVERGED]
    counts = {}
    if len(frame):
        cells, firsts = _group_codes(frame, ["dataset", "model"])
        status = frame["status"]
        masks = {column: (status == name).to_numpy() for name, column in FIT_COUNTS.items()}
        masks[UNCONVERGED] = (frame["converged"] == False).to_numpy(dtype=bool, na_value=False) \
            if "converged" in frame else np.zeros(len(frame), dtype=bool)  # noqa: E712 (a column of bools and NA)
        by_column = {c: np.bincount(cells[mask], minlength=len(firsts)) for c, mask in masks.items()}
        keys = frame.iloc[firsts][["dataset", "model"]].itertuples(index=False, name=None)
        counts = {key: [int(by_column[c][i]) for c in columns] for i, key in enumerate(keys)}
    found = [counts.get(key, [0] * len(columns)) for key in zip(rows["dataset"], rows["model"], strict=True)]
    rows = rows.copy()
    for j, column in enumerate(columns):
        rows[column] = np.array([f[j] for f in found], dtype=np.int64)
    return rows


def select_best_of_grid(df, ddof=1, metric="gmean", unfinished=()):
    """One row per (data set, model): the selected point and its outer-fold metrics.

    A point is a candidate only where it finished on every split (repeat,
    fold) the cell has: a point with a failed or timed-out fold is never
    averaged over its other folds (the module's docstring gives the rule).
    ``unfinished``: (data set, model) cells the store says lack a unit's
    record (``experiments.unfinished_cells_in``). Vectorised over the cells (one
    sort of the grid summary, not a pandas pass per cell).
    """
    summary = grid_summary(df, ddof=ddof)
    if summary.empty:
        return pd.DataFrame()
    outer = _outer(df)
    n_splits = outer.drop_duplicates(["dataset", "model", "repeat", "fold"]).groupby(
        ["dataset", "model"], observed=True).size()
    cell, firsts = _group_codes(summary, ["dataset", "model"])
    n_cells = len(firsts)
    cells = summary.iloc[firsts][["dataset", "model"]].reset_index(drop=True)
    splits = n_splits.reindex(pd.MultiIndex.from_frame(cells.astype(object))).to_numpy()
    n_folds, n_ok = summary["n_folds"].to_numpy(), summary["n_ok"].to_numpy()
    short = np.bincount(cell, weights=n_folds < splits[cell], minlength=n_cells) > 0
    stopped_rows = (summary[["n_timed_out", "n_failed", "n_skipped_after_timeout"]].to_numpy() > 0).any(axis=1)
    stopped = np.bincount(cell, weights=stopped_rows, minlength=n_cells) > 0
    unfinished = set(unfinished)
    listed = np.array([(d, m) in unfinished for d, m in cells.itertuples(index=False, name=None)], dtype=bool)
    # A run was interrupted inside the cell: some point lacks a (repeat, fold) that others have, or a unit of
    # the config has no record. Choosing among what is stored would report a smaller grid as if it were the
    # paper's; resume the run instead.
    incomplete = short | (listed & ~stopped)
    complete = (n_ok == n_folds) & ~incomplete[cell]
    column = metric + "_mean"
    values = summary[column].to_numpy(dtype=float) if column in summary else np.full(len(summary), np.nan)
    if not get_metric(metric).greater_is_better:
        values = -values
    # The best value of each cell's complete points (NaN last), ties to the earliest point in canonical order;
    # a cell without values takes its first complete point.
    rank = np.where(np.isnan(values), np.inf, -values)
    order = np.lexsort((summary["order"].to_numpy(), rank, cell))
    order = order[complete[order]]
    chosen_cells, first = np.unique(cell[order], return_index=True)
    best = summary.iloc[order[first]].assign(status="ok")
    best.index = chosen_cells
    timed_out = np.bincount(cell, weights=summary["n_timed_out"].to_numpy() > 0, minlength=n_cells) > 0
    failed = np.bincount(cell, weights=summary["n_failed"].to_numpy() > 0, minlength=n_cells) > 0
    rows = []
    for c, (dataset, model) in enumerate(cells.itertuples(index=False, name=None)):
        if incomplete[c]:
            rows.append({"dataset": dataset, "model": model, "status": "incomplete", "point": None})
        elif c in best.index:
            rows.append(best.loc[c].to_dict())
        else:
            status = "timed-out" if timed_out[c] or not failed[c] else "failed"
            rows.append({"dataset": dataset, "model": model, "status": status, "point": None})
    return pd.DataFrame(rows)


def chosen_by_inner(chosen):
    """Whether ``chosen`` (a per-fold choice) came from inner folds (``select_nested`` marks it)."""
    return bool(chosen.attrs.get("by_inner"))


def _per_fold_choice(df, chosen, ddof, read=None):
    """Aggregate the outer-test metrics of a point chosen on each outer fold.

    ``chosen``: a frame of (dataset, model, repeat, fold, point), at most one
    row per outer fold (a fold where nothing can be chosen has none).
    ``read``: the records the rule chose by (default the outer ones). A fold
    is lost to a failure where its chosen point's outer fit did not finish, or
    where no point was chosen and some fit the rule read on that fold did not
    finish: a cell with a lost fold reads what stopped it ("failed" or
    "timed-out"), never the mean of the folds that survived.
    """
    keys = ["dataset", "model", "repeat", "fold"]
    outer = _outer(df)
    read = outer if read is None else read
    metrics = _metric_columns(df)
    picked = outer.merge(chosen[keys + ["point"]], on=keys + ["point"], how="inner", sort=False)
    picked = picked[picked["status"] == "ok"].sort_values(keys, kind="stable")
    # The outer splits where some fit the rule read did not finish (failures are few: a set of them).
    unfinished_splits = {}
    for d, m, r, f in read.loc[(read["status"] != "ok").to_numpy(), keys].drop_duplicates().itertuples(
            index=False, name=None):
        unfinished_splits.setdefault((d, m), set()).add((int(r), int(f)))
    # Each column read once as an array; a cell's rows are then positions into them (no pandas per cell).
    groups = picked.groupby(["dataset", "model"], sort=False, observed=True).indices if len(picked) else {}
    values = {m: _numeric(picked, m) for m in metrics}
    fit = _numeric(picked, "fit_seconds")
    points_of = picked["point"].to_numpy(dtype=object)
    repeats = picked["repeat"].astype(int).to_numpy()
    folds = picked["fold"].astype(int).to_numpy()
    rows = []
    stops = None
    for dataset, model in outer[["dataset", "model"]].drop_duplicates().itertuples(index=False, name=None):
        g = groups.get((dataset, model))
        lost = unfinished_splits.get((dataset, model), set())
        if g is not None and lost:
            lost = lost - set(zip(repeats[g].tolist(), folds[g].tolist(), strict=True))
        if g is None or not len(g) or lost:
            if stops is None:  # what stopped the cells that lost a fold: inner fits count too
                stops = df.groupby(["dataset", "model"], sort=False, observed=True)["status"].agg(set).to_dict()
                nested = set(df.loc[df["inner"].notna(), ["dataset", "model"]].itertuples(index=False, name=None))
            st = stops.get((dataset, model), set())
            # A cell run without inner folds (under best of grid), or whose finished fits hold no value of the
            # criterion (a model without a projection to measure), has nothing a per-fold rule can choose by:
            # said so, never called timed out (no fit of it ran past the budget).
            status = "no inner CV" if (dataset, model) not in nested and chosen_by_inner(chosen) else \
                "no criterion" if (dataset, model) in chosen.attrs.get("no_criterion", ()) else \
                "failed" if "failed" in st and "timed-out" not in st else "timed-out"
            rows.append({"dataset": dataset, "model": model, "point": None, "status": status,
                         **{f"{m}_{s}": np.nan for m in metrics for s in ("mean", "std")}})
            continue
        points = points_of[g].tolist()
        row = {"dataset": dataset, "model": model, "status": "ok", "n_folds": len(g),
               "point": pd.Series(points).mode().iloc[0], "points": points,
               "folds": list(zip(repeats[g], folds[g], strict=True)),
               "fit_seconds_mean": float(np.mean(fit[g]))}
        for m in metrics:
            v = values[m][g]
            v = v[~np.isnan(v)]
            row[m + "_mean"] = v.mean() if v.size else np.nan
            row[m + "_std"] = v.std(ddof=ddof) if v.size > ddof else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def select_nested(df, ddof=1, metric="gmean"):
    """One row per (data set, model): outer metrics of the points chosen by inner CV."""
    keys = ["dataset", "model", "repeat", "fold"]
    rows = np.flatnonzero(df["inner"].notna().to_numpy())
    # One pass over the inner records (a per-fold scan of them all is quadratic
    # in the store's size): per outer fold and point, whether every inner fold
    # finished, the mean metric over them, and the point's canonical order.
    # ``records_frame`` sorted them by data set, model, point, repeat, fold: a group is a run of rows.
    starts = _run_starts([_sort_codes(df[c].iloc[rows]) for c in ("dataset", "model")] +
                         [df[c].to_numpy()[rows] for c in ("order", "repeat", "fold")])
    group = np.cumsum(starts) - 1
    firsts = rows[starts]
    value = pd.Series(_numeric(df, metric)[rows] if metric in df else np.full(len(rows), np.nan))
    not_ok = (df["status"] != "ok").to_numpy()[rows].astype(np.int64)
    points = df.iloc[firsts][keys + ["point", "order"]].reset_index(drop=True)
    points["value"] = value.groupby(group).mean().to_numpy()  # pandas' group mean, as over the named keys
    points = points[(np.bincount(group, weights=not_ok, minlength=len(firsts)) == 0) & points["value"].notna()]
    # The best value first, ties to the earliest point in canonical order. Means
    # that differ only in round-off are ties: the inner folds of two points are
    # summed in the order their records arrived, so equal fold values can give
    # means an ulp apart, which would otherwise decide the choice.
    sign = -1.0 if get_metric(metric).greater_is_better else 1.0
    rank = sign * points["value"].astype(float).round(_TIE_DECIMALS)
    points = points.assign(_rank=rank).sort_values(["_rank", "order"], kind="stable")
    chosen = points.drop_duplicates(keys)
    chosen.attrs["by_inner"] = True
    return _per_fold_choice(df, chosen, ddof, read=df)


def select_by_criterion(df, criterion, ddof=1):
    """One row per (data set, model): points chosen per fold by a training-part criterion."""
    if criterion not in df or df.loc[df["status"] == "ok", criterion].isna().all():
        raise ValueError(f"the records have no {criterion} values: run with protocol.criteria: [{criterion}]")
    better = get_criterion(criterion).greater_is_better
    keys = ["dataset", "model", "repeat", "fold"]
    # On each outer fold the finished point with the best criterion; ties go to
    # the earliest in canonical order.
    ok = df[df["inner"].isna() & (df["status"] == "ok")]
    value = pd.to_numeric(ok[criterion], errors="coerce")
    # The cells that finished fits and measured the criterion on none of them (not those with no finished fit:
    # what stopped those is their status).
    finished = set(ok[["dataset", "model"]].itertuples(index=False, name=None))
    measured = set(ok.loc[value.notna().to_numpy(), ["dataset", "model"]].itertuples(index=False, name=None))
    ok = ok.assign(_rank=-value if better else value).dropna(subset=["_rank"])
    chosen = ok.sort_values(["_rank", "order"], kind="stable").drop_duplicates(keys)
    chosen.attrs["no_criterion"] = finished - measured
    return _per_fold_choice(df, chosen, ddof)


def select_best_per_fold(df, ddof=1, metric="gmean"):
    """One row per (data set, model): on each outer fold, the point with the best *test* ``metric``.

    An optimistic rule (the test fold itself picks), for readings of papers
    that report "the best classifier" per split (SPEC section 8); never a
    protocol's default. Ties go to the earliest point in canonical order.
    """
    keys = ["dataset", "model", "repeat", "fold"]
    ok = df[df["inner"].isna() & (df["status"] == "ok")]
    value = pd.to_numeric(ok[metric], errors="coerce") if metric in ok else pd.Series(np.nan, index=ok.index)
    sign = -1.0 if get_metric(metric).greater_is_better else 1.0
    ok = ok.assign(_rank=sign * value.round(_TIE_DECIMALS)).dropna(subset=["_rank"])
    chosen = ok.sort_values(["_rank", "order"], kind="stable").drop_duplicates(keys)
    return _per_fold_choice(df, chosen, ddof)


def select(records, mode="best-of-grid", ddof=1, metric="gmean", unfinished=(), datasets=None):
    """Selected point and metrics per (data set, model) under ``mode``.

    ``mode``: ``best-of-grid``, ``nested`` or ``best-per-fold`` (by ``metric``),
    or a criterion name (``dcs-gaussian`` or ``dcs_gaussian``). ``datasets``:
    select the cells of these data sets only (None: all).
    """
    from ..store._segments import as_frame

    records = as_frame(records)
    rows = None if datasets is None or records.empty else \
        np.flatnonzero(records["dataset"].isin(set(datasets)).to_numpy())
    # Each cell is chosen from its own records alone: a store larger than CHUNK_RECORDS is selected a few data
    # sets at a time (the same rows, in the same order), so that its sorted copy is a chunk's, not the whole.
    if (len(records) if rows is None else len(rows)) > CHUNK_RECORDS and \
            mode in ("best-of-grid", "nested", "best-per-fold"):
        parts = [_select(records, mode, ddof, metric, unfinished, rows=chunk)
                 for chunk in _dataset_chunks(records["dataset"], CHUNK_RECORDS, rows)]
        parts = [p for p in parts if len(p)]
        return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0] if parts else pd.DataFrame()
    return _select(records, mode, ddof, metric, unfinished, rows=rows)


#: The records selection sorts at once (a store frame larger than this is selected data sets at a time). Measured
#: over TABLE_RESULTS (peak of ``tables``): 2 million 927 MB, 1 million 894 MB, 500 thousand 794 MB, 250 thousand
#: 789 MB, the time the same; ten million records: 17.3 s at 2 million, 20.3 s at 500 thousand. Once a chunk's rows
#: were taken with the sort: 500 thousand 605-619 MB, 250 thousand 588-603 MB; ten million records 11.1 s and
#: 11.5 s, both 1.47 GB.
CHUNK_RECORDS = 250_000


def _dataset_chunks(datasets, budget, rows=None):
    """Row positions (of ``rows`` only, if given) of consecutive groups of data sets (in sorted order), each
    group of at most ``budget`` records where a data set alone is not larger (``budget_groups``); rows in
    their order."""
    codes = _sort_codes(datasets)
    if rows is None:
        rows = np.arange(len(codes))
    else:
        codes = codes[rows]
    counts = np.bincount(codes)
    sizes = counts[counts > 0]
    ends = np.cumsum(sizes)
    order = rows[np.argsort(codes, kind="stable")]
    return [np.sort(order[ends[g[0]] - sizes[g[0]]:ends[g[-1]]]) for g in budget_groups(sizes.tolist(), budget)]


def budget_groups(sizes, budget):
    """The positions of ``sizes`` in consecutive groups, each of at most ``budget`` in total where one item
    alone is not larger (then a group of its own); no group for no item."""
    groups, group, total = [], [], 0
    for i, size in enumerate(sizes):
        if group and total + size > budget:
            groups.append(group)
            group, total = [], 0
        group.append(i)
        total += size
    return groups + [group] if group else groups


def _select(records, mode, ddof, metric, unfinished, rows=None):
    # Selection reads the keys, the status, the metrics and criteria and two timings: the other columns (the
    # projections' embeddings, D_CS pairs) would only be copied by every filter and sort below. ``rows``: the
    # positions of the records to select from (None: all), taken with the sort.
    from ._criteria import criterion_names

    wanted = ["dataset", "model", "point", "repeat", "fold", "inner", "status", "converged", "fit_seconds",
              "path_size", *metric_names(), *criterion_names()]
    df = records_frame(records, columns=wanted if len(records.columns) > len(wanted) else None, rows=rows)
    if df.empty:
        return df
    # Each cell's row counts the fits its rule read that did not finish (nested reads the inner fits too).
    if mode == "best-of-grid":
        return _with_fit_counts(select_best_of_grid(df, ddof, metric=metric, unfinished=unfinished), _outer(df))
    if mode == "best-per-fold":
        rows = _mark_incomplete(select_best_per_fold(df, ddof, metric=metric), df, unfinished)
        return _with_fit_counts(rows, _outer(df))
    if mode == "nested":
        return _with_fit_counts(_mark_incomplete(select_nested(df, ddof, metric=metric), df, unfinished,
                                                 inner=True), df)
    try:
        get_criterion(mode.replace("-", "_"))
    except ValueError:
        raise ValueError(f"selection must be best-of-grid, nested, best-per-fold or a criterion, got {mode!r}") \
            from None
    return _with_fit_counts(_mark_incomplete(select_by_criterion(df, mode.replace("-", "_"), ddof), df, unfinished),
                            _outer(df))


def _mark_incomplete(rows, df, unfinished, inner=False):
    """Per-fold rules choose among the points stored for each fold: in a cell
    where some point lacks a record for a split that another point has (with
    ``inner``, inner splits too), or that the store says is unfinished (and
    that no timeout or failure stopped), that would be a smaller grid reported
    as the paper's, so it reads "incomplete" as in best-of-grid."""
    unfinished = set(unfinished)
    if rows.empty:
        return rows
    lacking = _lacking(df if inner else _outer(df), inner=inner)
    stopped = set(map(tuple, df.loc[df["status"].isin(["timed-out", "failed", "skipped-after-timeout"]),
                                    ["dataset", "model"]].drop_duplicates().to_numpy())) if unfinished else set()
    hit = [lacking.get((d, m), False) or ((d, m) in unfinished and (d, m) not in stopped)
           for d, m in zip(rows["dataset"], rows["model"], strict=True)]
    if not any(hit):
        return rows
    rows = rows.copy()
    rows.loc[hit, "status"] = "incomplete"
    for column in ("point", "points"):
        if column in rows:
            rows[column] = [None if h else v for h, v in zip(hit, rows[column], strict=True)]
    rows.loc[hit, [c for c in rows if c.endswith(("_mean", "_std"))]] = np.nan
    return rows
