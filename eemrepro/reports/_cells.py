"""What every table shape makes its cells with: the records of one kind, facets, solvers, fit counts, order.

The shapes (``_shapes``) make a table's cells from stored records (never by
running a model); these are the pieces they share.
"""

import json
from collections import defaultdict

import numpy as np
import pandas as pd

from ..experiments._selection import FIT_COUNTS, UNCONVERGED
from ..store._segments import as_frame
from ._render import FOLD_VALUES


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
               **{c: sum(r.get(c, 0) for r in group) for c in COUNT_COLUMNS}}  # the facets' grids are one
        if bad:
            row.update(status=bad[0]["status"], point=None, **{m: np.nan, m + "_std": np.nan})
        elif how == "max":
            values = np.array([r[m] for r in group]) * (1 if greater_is_better else -1)
            best = int(np.argmax(values))
            row.update(status="ok", point=f"{names[best]}: {group[best]['point']}",
                       **{m: group[best][m], m + "_std": group[best][m + "_std"],
                          FOLD_VALUES: group[best].get(FOLD_VALUES)})
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



def timeout_limit(records, default=600.0):
    """The fit budget the timed-out records ran into (their recorded fit seconds)."""
    df = as_frame(records)
    if df.empty or "fit_seconds" not in df:
        return default
    limits = pd.to_numeric(df.loc[df["status"] == "timed-out", "fit_seconds"], errors="coerce")
    limits = limits[limits.notna() & (limits != 0)]
    return float(limits.max()) if len(limits) else default



#: The counts a table's row carries of its cell's fits: those that did not finish (``FIT_COUNTS``), then those
#: whose solver stopped short of convergence (``UNCONVERGED``).
COUNT_COLUMNS = (*FIT_COUNTS.values(), UNCONVERGED)


def _fit_counts(s):
    """A selected cell's counts of its fits (``COUNT_COLUMNS``), as integers (0 where none)."""
    return {c: int(s.get(c, 0) or 0) for c in COUNT_COLUMNS}


def count_columns(df):
    """The count columns a table frame ``df`` (of ``_fit_counts`` rows) keeps, last and in this order:
    ``FIT_COUNTS``' always, ``UNCONVERGED`` where a cell has a fit that stopped short of convergence (a table of
    converged fits, or of solvers that do not say, keeps the columns it had)."""
    unconverged = UNCONVERGED in df and bool(pd.to_numeric(df[UNCONVERGED]).fillna(0).to_numpy().any())
    return [*FIT_COUNTS.values(), *([UNCONVERGED] if unconverged else [])]

