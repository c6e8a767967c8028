"""Table builders, from stored records (never by running a model) and a paper's ``TableSpec``.

Every builder returns a long-format DataFrame: one row per (data set, method)
cell with the reproduced value, the published one and their difference, plus
what a reader needs to judge it (selected grid point, folds, status).
``layout="full"`` keeps every published cell (a cell not run reads
"missing"); ``layout="run"`` only the cells that have records.
"""

import json
from collections import defaultdict

import numpy as np
import pandas as pd
from scipy import stats

from ..experiments import get_metric, select
from ..experiments._selection import FIT_COUNTS
from ..store._segments import as_frame
from ..store._store import LARGE_FRAME, release_memory, repeats_per_cell
from ._records import Records
from ._spec import published  # noqa: F401  (re-exported through reports)


def _order(df, pub, index="method"):
    """Rows in the published table's data set and method order."""
    if pub is None or pub.empty:
        return df.reset_index(drop=True)
    ds = {d: i for i, d in enumerate(dict.fromkeys(pub["dataset"]))}
    ms = {m: i for i, m in enumerate(dict.fromkeys(pub[index]))}
    df = df.assign(_d=df["dataset"].map(ds).fillna(len(ds)), _m=df[index].map(ms).fillna(len(ms)))
    return df.sort_values(["_d", "_m", "dataset", index]).drop(columns=["_d", "_m"]).reset_index(drop=True)


def _of_kind(df, kind):
    """The rows of a store frame (``Records``') of one experiment kind."""
    if df is None or len(df) == 0 or "kind" not in df:
        return df.iloc[:0] if isinstance(df, pd.DataFrame) else pd.DataFrame()
    mask = (df["kind"] == kind).to_numpy(dtype=bool, na_value=False)
    return df if mask.all() else df[mask]


#: Joins a model and a facet value in a cell's method name ("MELM + SVM").
FACET_SEP = " + "


def _facet(df, key, unfinished):
    """Rows (and unfinished cells) with ``key``'s value moved from the point into the model name."""
    if df.empty:
        return df, set(unfinished)
    codes, uniques = pd.factorize(df["point"])
    has, values, points = [], [], []
    for text in uniques:
        params = json.loads(text)
        has.append(key in params)
        values.append(str(params.pop(key)) if key in params else "")
        points.append(json.dumps(params, sort_keys=True))
    has, values, points = np.array(has), np.array(values, dtype=object), np.array(points, dtype=object)
    # The new names and points are made once per distinct (model, point) and given to the rows as category
    # codes (categories in sorted order, as the strings sort): not a Python string per record.
    model_codes, models = pd.factorize(df["model"])
    models = np.asarray(models, dtype=object)
    pair_codes, pairs = pd.factorize(model_codes.astype(np.int64) * len(uniques) + codes)
    pair_model, pair_point = np.divmod(pairs, len(uniques))
    faceted = has[pair_point]
    names = np.where(faceted, models[pair_model] + FACET_SEP + values[pair_point], models[pair_model])
    new_points = np.where(faceted, points[pair_point], np.asarray(uniques, dtype=object)[pair_point])
    out = df.assign(model=_as_sorted_categorical(names, pair_codes),
                    point=_as_sorted_categorical(new_points, pair_codes))
    by_model = {}  # each model's facet values, from its distinct points
    for m, v in zip(models[pair_model[faceted]], values[pair_point[faceted]], strict=True):
        by_model.setdefault(m, set()).add(v)
    cells = set()
    for dataset, name in unfinished:
        cells |= {(dataset, f"{name}{FACET_SEP}{v}") for v in by_model.get(name, ())} or {(dataset, name)}
    return out, cells


def _as_sorted_categorical(labels, codes):
    """``labels[codes]`` as a categorical whose categories are the distinct labels in sorted order."""
    categories = sorted(set(labels))
    position = {c: i for i, c in enumerate(categories)}
    recode = np.array([position[label] for label in labels], dtype=np.int64)
    return pd.Categorical.from_codes(recode[codes], categories=categories)


def _combine(rows, how, m, greater_is_better):
    """One cell per (data set, model) from its facets' cells: the best one, or their mean."""
    groups = defaultdict(list)
    for (dataset, method), row in rows.items():
        groups[(dataset, method.split(FACET_SEP)[0])].append(row)
    out = {}
    for (dataset, model), group in groups.items():
        names = [r["method"].split(FACET_SEP, 1)[-1] for r in group]
        bad = [r for r in group if r["status"] != "ok"]
        row = {"dataset": dataset, "method": model, "n_folds": min(r["n_folds"] or 0 for r in group),
               "repeats": min(r["repeats"] for r in group),
               **{c: sum(r.get(c, 0) for r in group) for c in FIT_COUNTS.values()}}  # the facets' grids are one
        if bad:
            row.update(status=bad[0]["status"], point=None, **{m: np.nan, m + "_std": np.nan})
        elif how == "max":
            values = np.array([r[m] for r in group]) * (1 if greater_is_better else -1)
            best = int(np.argmax(values))
            row.update(status="ok", point=f"{names[best]}: {group[best]['point']}",
                       **{m: group[best][m], m + "_std": group[best][m + "_std"]})
        else:
            row.update(status="ok", point="; ".join(f"{n}: {r['point']}" for n, r in zip(names, group, strict=True)),
                       **{m: float(np.mean([r[m] for r in group])), m + "_std": float(np.mean([r[m + "_std"]
                                                                                             for r in group]))})
        out[(dataset, model)] = row
    return out


_SOLVER_NAMES = {"libsvm": "LIBSVM", "onedal": "oneDAL"}


def cell_solvers(frame):
    """{(data set, method): its records' solvers} for the methods whose estimator takes a ``solver`` parameter.

    The solver is the record's fixed or grid parameter, else the estimator's
    default, so a table can name the solver behind each cell and column and show
    a column that mixes solvers (an SVM column run partly with oneDAL, say) as such.
    """
    from ..models import estimator_class
    from ..models._lookup import is_builtin

    columns = ["dataset", "model", "estimator", "fixed_params", "point"]
    if not len(frame) or not set(columns) <= set(frame.columns):
        return {}
    out = defaultdict(set)
    defaults = {}
    for dataset, model, est, fixed, point in frame[columns].drop_duplicates().itertuples(index=False):
        if est not in defaults:
            # The reports never import a user's module: a user's estimator names its solver in its parameters.
            defaults[est] = estimator_class(str(est))().get_params().get("solver") if is_builtin(str(est)) else None
        params = {**json.loads(fixed or "{}"), **json.loads(point or "{}")}
        solver = params.get("solver", defaults[est])
        if solver is not None:
            out[(str(dataset), str(model))].add(str(solver))
    return {k: sorted(v) for k, v in out.items()}


def column_solvers(cells):
    """{method: the solvers of its cells} from ``cell_solvers``."""
    out = defaultdict(set)
    for (_, method), names in cells.items():
        out[method].update(names)
    return {m: sorted(v) for m, v in out.items()}


def solvers_phrase(solvers):
    """'SVMrbf: LIBSVM' for a title; a mixed column reads 'SVMrbf: LIBSVM and oneDAL (mixed)'."""
    parts = []
    for method, names in sorted(solvers.items()):
        label = " and ".join(_SOLVER_NAMES.get(n, n) for n in names)
        parts.append(f"{method}: {label}" + (" (mixed)" if len(names) > 1 else ""))
    return "; ".join(parts) if parts else "no solver choice"


def table_title(spec, df, selection):
    """A spec's title with its placeholders filled: ``{selection}``, and ``{solvers}`` from the table's records."""
    solvers = df.attrs.get("solvers", {}) if df is not None else {}
    return spec.title.format(selection=spec.selection or selection, solvers=solvers_phrase(solvers))


def timeout_limit(records, default=600.0):
    """The fit budget the timed-out records ran into (their recorded fit seconds)."""
    df = as_frame(records)
    if df.empty or "fit_seconds" not in df:
        return default
    limits = pd.to_numeric(df.loc[df["status"] == "timed-out", "fit_seconds"], errors="coerce")
    limits = limits[limits.notna() & (limits != 0)]
    return float(limits.max()) if len(limits) else default


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
    ref = metric_table(reference, spec, spec.selection or selection, layout="run", all_datasets=True)
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
    selection = spec.selection or selection
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
    rows = {}
    for _, s in sel.iterrows():
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
            **_fit_counts(s),
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


def _fit_counts(s):
    """A selected cell's counts of fits that did not finish (``FIT_COUNTS``), as integers (0 where none)."""
    return {c: int(s.get(c, 0) or 0) for c in FIT_COUNTS.values()}


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
    counts = list(FIT_COUNTS.values())
    df = pd.DataFrame(list(rows.values()),
                      columns=None if rows else ["dataset", "method", "status", m, m + "_std", "point", "n_folds",
                                                 "repeats", *counts])
    for col in ("published", "published_std"):
        if col not in df:
            df[col] = np.nan
    df = df[["dataset", "method", "status", m, m + "_std", "point", "n_folds", "repeats", "published",
             "published_std", *counts]]
    df["delta"] = df[m] - df["published"]
    # After the delta: the columns a reader of the table's csv had keep their places.
    df = df[[c for c in df.columns if c not in counts] + counts]
    df[counts] = df[counts].astype(np.int64)
    return _order(df, pub)


def time_table(records, spec, selection="best-of-grid", unfinished=(), layout="full"):
    """Seconds of one training fit at the selected grid point (EEM Table 5's shape).

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
    sel = select(frame, spec.selection or selection, metric=spec.metric, unfinished=unfinished,
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
    counts = list(FIT_COUNTS.values())
    df = pd.DataFrame(list(rows.values()),
                      columns=None if rows else ["dataset", "method", "status", "seconds", "timing", "point",
                                                 "solver", *counts])
    if "published" not in df:
        df["published"] = np.nan
    # Last: the columns a reader of the table's csv had keep their places.
    df = df[[c for c in df.columns if c not in counts] + counts]
    df[counts] = df[counts].astype(np.int64)
    if pub is not None:
        df = df[df["dataset"].isin(set(pub["dataset"]))]
    df = _order(df, pub)
    # The solvers of this table's own cells: the store may hold other papers' models too (ESMM's SMM, its SVM).
    shown = set(zip(df["dataset"], df["method"], strict=True))
    df.attrs["solvers"] = column_solvers({k: v for k, v in cells.items() if k in shown})
    return df


def correlation_table(records, spec, layout="full"):
    """The D_CS correlation kind's table: Spearman rho between D_CS and (m+ - m-)^2 / (S+ + S-),
    pooled over layers x betas, per (data set, h).

    ``var_share`` is the median over the pairs of the variance term
    ln(((S+ + S-) / 2) / sqrt(S+ S-)) = D_CS - ratio as a share of D_CS: the part
    of D_CS that is not a function of the ratio (were it the same for every pair,
    rho would be exactly 1).
    """
    return correlation_frame(correlation_rows(records, spec), spec, layout)


def correlation_rows(records, spec):
    """{(data set, h): row} of a correlation table from ``records``, each from its own records alone."""
    rows = {}
    ok = _of_kind(as_frame(records), spec.kind)
    ok = ok[ok["status"] == "ok"] if len(ok) else ok
    if len(ok):
        h = [json.loads(p)["n_hidden"] for p in ok["point"]]
        for (dataset, n_hidden), g in ok.assign(_h=h).groupby(["dataset", "_h"], sort=False):
            d = np.concatenate([np.asarray(v, float) for v in g["dcs"]]) if len(g) else np.array([])
            q = np.concatenate([np.asarray(v, float) for v in g["ratio"]]) if len(g) else np.array([])
            finite = np.isfinite(d) & np.isfinite(q)
            rho = stats.spearmanr(d[finite], q[finite]).statistic if finite.sum() > 2 else np.nan
            positive = finite & (d > 0)
            share = float(np.median((d[positive] - q[positive]) / d[positive])) if positive.any() else np.nan
            rows[(dataset, n_hidden)] = {"dataset": dataset, "h": n_hidden, "spearman": rho, "var_share": share,
                                         "pairs": int(finite.sum()), "layers": len(g)}
    return rows


def correlation_frame(rows, spec, layout="full"):
    """A correlation table (``correlation_table``'s frame) of its rows (``correlation_rows``)."""
    pub = spec.published_frame()
    if pub is not None:
        pub = pub.rename(columns={spec.published_value or "spearman": "published"})
    rows = dict(rows)
    for _, p in pub.iterrows() if pub is not None else ():
        key = (p["dataset"], int(p["h"]))
        if layout == "run" and key not in rows:
            continue
        rows[key] = dict(rows.get(key) or {"dataset": key[0], "h": key[1], "spearman": np.nan, "var_share": np.nan,
                                           "pairs": 0, "layers": 0})
        rows[key]["published"] = p["published"]
    df = pd.DataFrame(list(rows.values()))
    if df.empty:
        return df
    if "published" not in df:
        df["published"] = np.nan
    df["delta"] = df["spearman"] - df["published"]
    order = {d: i for i, d in enumerate(dict.fromkeys(pub["dataset"]))} if pub is not None else {}
    df["_d"] = df["dataset"].map(order).fillna(len(order))
    return df.sort_values(["_d", "dataset", "h"]).drop(columns="_d").reset_index(drop=True)


def build_table(spec, records, selection="best-of-grid", reference=None, unfinished=(), layout="full",
                per_fold=None):
    """Dispatch on ``spec.builder``. ``per_fold``: a dict a metric table fills with each cell's points chosen
    per fold, where its rule chooses per fold."""
    if spec.builder == "metric":
        return metric_table(records, spec, selection, reference=reference, unfinished=unfinished, layout=layout,
                            per_fold=per_fold)
    if spec.builder == "time":
        return time_table(records, spec, selection, unfinished=unfinished, layout=layout)
    return correlation_table(records, spec, layout=layout)


#: The stored records ``tables`` and ``check`` read at once: larger folders are read a group of data sets at a
#: time (``Records``), every table's cells made group by group.
TABLE_CHUNK_RECORDS = 3_000_000


def rows_by_datasets(dirs, specs, rules=("best-of-grid",), budget=None):
    """Every table of ``specs`` under each selection of ``rules``, its cells made a group of data sets at a
    time (``Records``, groups of at most ``budget`` stored records, default ``TABLE_CHUNK_RECORDS``).

    Returns (results, {(table id, rule): TableRows}, the ids of the tables that apply, the fit budget the
    timed-out records ran into): ``results.provenance`` and ``results.unfinished`` are the ``Records``'.
    A group's cells are made wherever its records hold cells of the table (``_applies``, whatever its values):
    a group whose cells all timed out still shows them where the table applies in another.
    """
    results = Records(dirs, TABLE_CHUNK_RECORDS if budget is None else budget)
    made, makers = {}, {}  # a table whose spec names its own selection is made once for every rule
    for spec in specs:
        for rule in rules:
            key = (spec.id, spec.selection or rule)
            made[(spec.id, rule)] = makers.setdefault(key, TableRows(spec, rule, results.unfinished))
    applies, limits = set(), []
    for records, parts in results.by_kind():
        limit = timeout_limit(records, default=None)
        if limit is not None:
            limits.append(limit)
        for spec in specs:
            mine = parts.get(spec.kind)
            cells, values = _applies(spec, mine) if mine is not None else (False, False)
            if not cells:
                continue
            if values:
                applies.add(spec.id)
            for rule in dict.fromkeys(spec.selection or rule for rule in rules):
                makers[(spec.id, rule)].add(mine)
            if len(records) >= LARGE_FRAME:
                # What a table's selection allocated over a large frame is handed back before the next table's:
                # else each table's arrays come on top of the heap the last left (TABLE_RESULTS: 45 MB a table).
                release_memory()
        records = parts = mine = None  # this group's frame, before the next is read
    return results, made, applies, max(limits) if limits else timeout_limit(())


class TableRows:
    """A table's cells made part by part (``add`` the records of some data sets at a time), then the table
    (``frame``): what ``build_table`` makes of all the records at once, as every cell is made from its own
    records alone (its data set's)."""

    def __init__(self, spec, selection="best-of-grid", unfinished=()):
        self.spec, self.selection, self.unfinished = spec, selection, unfinished
        self.rows, self.solvers = {}, {}

    def add(self, records):
        spec = self.spec
        if spec.builder == "metric":
            self.rows.update(metric_rows(records, spec, self.selection, self.unfinished))
        elif spec.builder == "time":
            rows, solvers = time_rows(records, spec, self.selection, self.unfinished)
            self.rows.update(rows)
            self.solvers.update(solvers)
        else:
            self.rows.update(correlation_rows(records, spec))

    def frame(self, layout="full"):
        if self.spec.builder == "metric":
            return metric_frame(self.rows, self.spec, layout)
        if self.spec.builder == "time":
            return time_frame((self.rows, self.solvers), self.spec, layout)
        return correlation_frame(self.rows, self.spec, layout)


def applying_records(spec, parts, built=None):
    """(whether ``spec``'s table applies, the records it is built from) of ``parts`` ({kind: frame},
    ``split_by_kind``); with ``parts`` None (the tables were built a group of data sets at a time, no frame of
    every record is kept), the table applies where ``built`` ({table id: table}) holds it."""
    if parts is None:
        return spec.id in (built or {}), None
    mine = parts.get(spec.kind)
    return mine is not None and table_applies(spec, mine), mine


def table_applies(spec, records):
    """Whether ``records`` hold data for ``spec``: its kind, one of its published data sets,
    its metric, its criterion if it needs one."""
    return _applies(spec, records)[1]


def _applies(spec, records):
    """(whether ``records`` hold cells ``spec``'s table shows: its kind, one of its published data sets;
    whether they also hold its values: its metric, its criterion if it needs one)."""
    mine = _of_kind(as_frame(records), spec.kind)
    pub = spec.published_frame()
    rows = np.ones(len(mine), dtype=bool)  # a mask, not a copy of the rows
    if len(mine) and pub is not None and spec.builder in ("metric", "time"):
        rows = mine["dataset"].isin(set(pub["dataset"])).to_numpy()
    if not rows.any():
        return False, False
    column = spec.requires_criterion or (spec.metric if spec.builder in ("metric", "time") else None)
    if column is None:
        return True, True
    # A time table selects its point by the metric.
    return True, column in mine and bool((mine[column].notna().to_numpy() & rows).any())
