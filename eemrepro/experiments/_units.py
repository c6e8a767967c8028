"""Units of work, their record keys and their identity.

A unit is one (data set, model, repeat, fold[, inner fold]) and a tuple of
grid points run together (a ``fit_path`` call, or points fitted one after the
other under one process); it yields one record per point. Which units a config
has is its experiment kind's business (``_kinds``); everything here is shared.

A record is found again by its key (data set, model, point, repeat, fold,
inner) *and* its identity: everything else that changes its value (estimator,
fixed parameters, splitter, scaling, inner folds, a kind's settings). A stored
record whose identity differs from what the config now asks for is never
taken as done.
"""

import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from ..store import identity_sha, point_id, record_key, stored_key  # noqa: F401  (the store owns record keys)


@dataclass(frozen=True)
class Unit:
    dataset: str
    model: str
    points: tuple  # each point as a tuple of sorted (parameter, value) pairs
    repeat: int
    fold: int
    inner: int | None = None
    fit_path: str | None = None  # the parameter one fit_path call covers; None: points fitted one by one

    def point_dicts(self):
        return [dict(p) for p in self.points]

    def keys(self):
        inner = "-" if self.inner is None else self.inner
        return [f"{self.dataset}|{self.model}|{p}|{self.repeat}|{self.fold}|{inner}" for p in point_ids(self.points)]


@lru_cache(maxsize=65536)
def point_ids(points):
    """The ``point_id`` of each point of a unit's ``points`` tuple (the record keys' middle part).

    A config's units share a few thousand distinct point tuples: each is serialised once.
    """
    return tuple(point_id(dict(p)) for p in points)


def frame_keys(df):
    """The ``record_key`` of each row of a store frame (``ResultStore.frame``), vectorised.

    Each distinct (data set, model, point) and (repeat, fold, inner) is formatted once.
    """
    if df.empty:
        return pd.Series([], dtype=object)
    inner = pd.to_numeric(df["inner"], errors="coerce")
    parts = []
    for columns, fmt in ((["dataset", "model", "point"], lambda d, m, p: f"{d}|{m}|{p}|"),
                         (["repeat", "fold", "_inner"], lambda r, f, i: f"{int(r)}|{int(f)}|"
                                                                        f"{'-' if i != i else int(i)}")):
        frame = df.assign(_inner=inner)[columns]
        codes = frame.groupby(columns, sort=False, dropna=False, observed=True).ngroup().to_numpy()
        firsts = frame.iloc[np.unique(codes, return_index=True)[1]]
        text = np.array([fmt(*row) for row in firsts.itertuples(index=False, name=None)], dtype=object)
        parts.append(text[codes])
    return pd.Series(parts[0] + parts[1], index=df.index)


def make_points(points):
    """Point dicts as the hashable tuples a Unit holds."""
    return tuple(tuple(sorted(p.items())) for p in points)


def unfinished_cells(units, df):
    """(data set, model) cells whose stored records (a store frame) lack one of ``units``' records.

    Only the repeats that a cell's records have are expected (a run may use
    fewer repeats than the config names). A cell stopped by the budget rule
    (a timeout or a failure, after which ``skip-model`` records the rest as
    skipped) is judged by its records' status, not here.
    """
    return config_scope(units, df).unfinished


@dataclass(frozen=True)
class Scope:
    """What of a store frame a config names now (``config_scope``)."""

    keep: np.ndarray  # per row: its key is one of the config's units' records
    unfinished: set  # (data set, model) cells lacking a unit's record
    left_out: dict  # why the other rows are not the config's: {reason: number of records}


def describe_left_out(reasons):
    """``Scope.left_out`` in words: "3 record(s) of grid points the config no longer has, ..."."""
    return ", ".join(f"{n} record(s) of {why}" for why, n in sorted(reasons.items()))


def config_scope(units, df, keys=None):
    """The rows of ``df`` (a store frame) that ``units`` (a config's) make, and the cells they leave unfinished.

    A record whose data set, model, grid point, repeat or fold the config no
    longer has (a grid shrunk after a run, a model taken out) is kept in the
    store but is not the config's: reports leave it out, and say so.
    """
    if df.empty:
        return Scope(np.ones(0, dtype=bool), set(), {})
    keys = frame_keys(df).tolist() if keys is None else keys  # ``keys``: the caller's, if built already
    unit_keys = [(u, u.keys()) for u in units]  # each unit's keys formatted once
    wanted = {k for _, ks in unit_keys for k in ks}
    # Set lookups in Python: pandas' isin on a million keys against a set this size is many times slower.
    keep = np.fromiter((k in wanted for k in keys), dtype=bool, count=len(keys))
    done = wanted.intersection(keys)
    pairs = df.loc[keep, ["dataset", "model", "repeat"]].drop_duplicates()
    repeats = {}
    for dataset, model, repeat in pairs.itertuples(index=False, name=None):
        repeats.setdefault((dataset, model), set()).add(int(repeat))
    unfinished = {(u.dataset, u.model) for u, ks in unit_keys
                  if u.repeat in repeats.get((u.dataset, u.model), ()) and not done.issuperset(ks)}
    return Scope(keep, unfinished, _left_out(units, df[~keep]) if not keep.all() else {})


def _left_out(units, rows):
    """{reason: count} of store rows that no unit makes: the first of data set, model, point, split that differs."""
    datasets = {u.dataset for u in units}
    models = {u.model for u in units}
    points = {(u.dataset, u.model, p) for u in units for p in point_ids(u.points)}
    out = {}
    for dataset, model, point in rows[["dataset", "model", "point"]].astype(object).itertuples(index=False,
                                                                                            name=None):
        if dataset not in datasets:
            why = "data sets the config no longer names"
        elif model not in models:
            why = "models the config no longer names"
        elif (dataset, model, point) not in points:
            why = "grid points the config no longer has"
        else:
            why = "repeats or folds outside the config's protocol"
        out[why] = out.get(why, 0) + 1
    return out


def changed_identities(df, expected):
    """Cells whose stored records were made under another identity than ``expected``.

    ``df``: a store frame with ``identity`` (JSON text); ``expected``:
    {(data set, model, is_inner): identity}. Returns [(data set, model,
    {key: (stored value, config value)})], one per cell, naming the identity
    keys that differ.
    """
    if df.empty:
        return []
    stored = df.assign(_inner=df["inner"].notna())[["dataset", "model", "_inner", "identity"]].drop_duplicates()
    out, seen = [], set()
    for dataset, model, is_inner, identity in stored.itertuples(index=False, name=None):
        cell = (dataset, model, bool(is_inner))
        want = expected.get(cell)
        have = json.loads(identity) if isinstance(identity, str) else (identity or {})
        if want is None or cell in seen or have == want:
            continue
        seen.add(cell)
        keys = sorted(set(want) | set(have))
        diff = {k: (have.get(k), want.get(k)) for k in keys if have.get(k) != want.get(k)}
        out.append((cell[0], cell[1], diff))
    return out
