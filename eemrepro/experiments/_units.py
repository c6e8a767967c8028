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
from ._identity import CODE_PREFIX


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


def cell_key(unit):
    """A unit's cell as identities are kept: (data set, model, is inner) -- an inner split's fits are made
    under their own identity."""
    return unit.dataset, unit.model, unit.inner is not None


def record_cell(record):
    """``cell_key`` of a stored record (a dict or a frame row): its ``inner`` is None or NaN outside one."""
    inner = record["inner"]
    return record["dataset"], record["model"], not (inner is None or inner != inner)


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
    ``keys``: unused (the scope is matched on the frame's columns, not its keys).
    """
    return scope_rows(scope_of_units(units), df)


def unit_positions(unit):
    """Every (repeat, fold, inner) whose records ``unit`` makes, as a tuple (a unit that spans folds says so in
    ``n_folds``; most make one position)."""
    n_folds = getattr(unit, "n_folds", None)
    if n_folds is None:
        return ((unit.repeat, unit.fold, unit.inner),)
    return tuple((unit.repeat, f, unit.inner) for f in range(n_folds))


def scope_of_units(units):
    """{(data set, model): (point ids, positions)}: the records ``units`` make, as a product per cell.

    Every kind's units cover, in each cell, every grid point at every split
    position (which points one unit groups changes nothing of which records
    they make); :class:`NotAProduct` says where a kind's do not.
    """
    points, positions, count = {}, {}, {}
    for u in units:
        cell = (u.dataset, u.model)
        ids = point_ids(u.points)
        where = unit_positions(u)
        points.setdefault(cell, {}).update(dict.fromkeys(ids))
        positions.setdefault(cell, {}).update(dict.fromkeys(where))
        count[cell] = count.get(cell, 0) + len(ids) * len(where)
    scope = {cell: (tuple(points[cell]), tuple(positions[cell])) for cell in points}
    for cell, (p, s) in scope.items():
        if len(p) * len(s) != count[cell]:
            raise NotAProduct(f"the units of {cell} do not cover every grid point at every position "
                              f"({count[cell]} records, {len(p)} points x {len(s)} positions)")
    return scope


class NotAProduct(ValueError):
    """A kind whose units in a cell are not every point at every position (``scope_of_units``)."""


def as_category(column):
    """``column`` as a categorical (a store frame's strings are already): its codes number its values."""
    return column if isinstance(column.dtype, pd.CategoricalDtype) else column.astype("category")


def _codes(column, values):
    """(codes of ``column``'s rows, codes of ``values``) in one shared numbering (-1: a value the rows lack)."""
    col = as_category(column)
    categories = col.cat.categories
    return col.cat.codes.to_numpy(np.int64), categories.get_indexer(pd.Index(values, dtype=object))


def scope_rows(scope, df):
    """``Scope`` of a store frame (one row per record key) under a config's ``scope`` ({(data set, model):
    (point ids, positions)}).

    Vectorised: each row's (data set, model, point) and (data set, model,
    repeat, fold, inner) are matched as integer codes against the scope's, and
    a cell is unfinished where one of the repeats its records have lacks one
    of its points x positions; no per-record Python. The rows are matched
    ``SCOPE_BLOCK`` at a time: the integer keys of ten million rows (80 MB
    each, six of them and the sorts of two membership tests) are never made
    at once.
    """
    if df.empty:
        return Scope(np.ones(0, dtype=bool), set(), {})
    cells = list(scope)
    columns = {c: as_category(df[c]) for c in ("dataset", "model", "point")}
    d_cells = columns["dataset"].cat.categories.get_indexer(pd.Index([c[0] for c in cells], dtype=object))
    m_cells = columns["model"].cat.categories.get_indexer(pd.Index([c[1] for c in cells], dtype=object))
    d_rows, m_rows, p_rows = (columns[c].cat.codes.to_numpy() for c in ("dataset", "model", "point"))
    # Radixes: a code plus one (missing, -1, is 0) is below them.
    n_m, n_p = len(columns["model"].cat.categories) + 1, len(columns["point"].cat.categories) + 1
    cell_ids = (d_cells + 1) * n_m + (m_cells + 1)
    present = (d_cells >= 0) & (m_cells >= 0)
    # (cell, point) pairs the scope has, as integers in the rows' numbering.
    p_categories = columns["point"].cat.categories
    want_points = pd.Index(np.unique(np.asarray(
        [cid * n_p + code + 1 for cid, ok, (ids, _) in zip(cell_ids, present, scope.values(), strict=True)
         if ok for code in p_categories.get_indexer(pd.Index(ids, dtype=object)) if code >= 0], dtype=np.int64)))
    repeat, fold = df["repeat"].to_numpy(), df["fold"].to_numpy()
    inner = pd.to_numeric(df["inner"], errors="coerce").to_numpy(dtype=float)
    n_r = int(max(repeat.max(initial=0), max((r for _, s in scope.values() for r, _, _ in s), default=0))) + 1
    n_f = int(max(fold.max(initial=0), max((f for _, s in scope.values() for _, f, _ in s), default=0))) + 1
    n_i = int(max(np.nanmax(inner, initial=-1),
                  max((-1 if i is None else i for _, s in scope.values() for _, _, i in s), default=0))) + 2
    want_positions = pd.Index(np.unique(np.asarray(
        [((cid * n_r + r) * n_f + f) * n_i + (0 if i is None else i + 1)
         for cid, ok, (_, s) in zip(cell_ids, present, scope.values(), strict=True) if ok for r, f, i in s],
        dtype=np.int64)))
    keep = np.empty(len(df), dtype=bool)
    # Unfinished: a (cell, repeat) of the kept records with fewer distinct (point, fold, inner) than the scope has.
    # A store frame holds one row per record key (the latest): the kept rows of a (cell, repeat) are its
    # distinct keys, counted as the blocks pass.
    counts = np.zeros((len(columns["dataset"].cat.categories) + 1) * n_m * n_r, dtype=np.int64)
    for a in range(0, len(df), SCOPE_BLOCK):
        b = min(a + SCOPE_BLOCK, len(df))
        cell_rows = d_rows[a:b].astype(np.int64)
        cell_rows += 1  # -1 (a value no row has) shifted to 0
        cell_rows *= n_m
        cell_rows += m_rows[a:b]
        cell_rows += 1
        point_rows = cell_rows * n_p
        point_rows += p_rows[a:b]
        point_rows += 1
        point_ok = want_points.get_indexer(point_rows) >= 0
        del point_rows
        position_rows = cell_rows * n_r
        position_rows += repeat[a:b]
        position_rows *= n_f
        position_rows += fold[a:b]
        position_rows *= n_i
        position_rows += np.nan_to_num(inner[a:b], nan=-1.0).astype(np.int64)
        position_rows += 1
        block = want_positions.get_indexer(position_rows) >= 0
        del position_rows
        block &= point_ok
        keep[a:b] = block
        counts += np.bincount(cell_rows[block] * n_r + repeat[a:b][block], minlength=len(counts))
    have = {(int(cr // n_r), int(cr % n_r)): int(counts[cr]) for cr in np.flatnonzero(counts)}
    expected = {}
    for cid, ok, cell, (ids, s) in zip(cell_ids, present, cells, scope.values(), strict=True):
        if ok:
            per_repeat = {}
            for r, _, _ in s:
                per_repeat[r] = per_repeat.get(r, 0) + 1
            for r, n in per_repeat.items():
                expected[(int(cid), r)] = (cell, len(ids) * n)
    unfinished = {expected[key][0] for key, n in have.items() if key in expected and n < expected[key][1]}
    return Scope(keep, unfinished, _left_out(scope, df[~keep]) if not keep.all() else {})


#: Rows ``scope_rows`` matches at a time.
SCOPE_BLOCK = 1_000_000


def _left_out(scope, rows):
    """{reason: count} of store rows that no unit makes: the first of data set, model, point, split that differs."""
    datasets = {d for d, _ in scope}
    models = {m for _, m in scope}
    points = {(d, m, p) for (d, m), (ids, _) in scope.items() for p in ids}
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


def changed_identities(df, expected, said_only=frozenset()):
    """Cells whose stored records were made under another identity than ``expected``.

    ``df``: a store frame with ``identity`` (JSON text); ``expected``:
    {(data set, model, is_inner): identity}; ``said_only``: the cells whose
    expected identity is only what their config says of a user's estimator
    (``identity_changes``), asked only of a cell whose stored identity differs
    from the expected one (its fewer keys compared then). Returns [(data set, model, {key: (stored value,
    config value)})], one per cell, naming the identity keys that differ.
    """
    if df.empty:
        return []
    stored = df.assign(_inner=df["inner"].notna())[["dataset", "model", "_inner", "identity"]].drop_duplicates()
    out, seen = [], set()
    for dataset, model, is_inner, identity in stored.itertuples(index=False, name=None):
        cell = (dataset, model, bool(is_inner))  # record_cell, for a whole frame at once
        want = expected.get(cell)
        if want is None or cell in seen:
            continue
        have = json.loads(identity) if isinstance(identity, str) else (identity or {})
        # Not imported compares a subset of the keys: only where the whole identity differs can it matter.
        diff = identity_changes(have, want)
        if diff and cell in said_only:
            diff = identity_changes(have, want, imported=False)
        if diff:
            seen.add(cell)
            out.append((cell[0], cell[1], diff))
    return out


def identity_changes(have, want, imported=True):
    """{key: (stored value, value now)} of the keys where a stored identity ``have`` differs from ``want``.

    ``imported`` false: ``want`` is what a config says of a user's estimator without importing it
    (``_identity.config_identity``, as the reports read a folder): its code, and a parameter that only one
    side names (a default the import adds, a speed-only one it leaves out), are not compared.
    """
    out = {}
    for k in sorted(set(want) | set(have)):
        # Compared as the JSON text a record stores (and its ``identity_sha`` digests), not by ``==``: a NaN is
        # equal to itself there, and ``1`` is not ``1.0`` (another digest: the run would not find the records).
        if json.dumps(have.get(k), sort_keys=True) == json.dumps(want.get(k), sort_keys=True):
            continue
        if not imported and (k.startswith(CODE_PREFIX) or (k.startswith("params.") and (k not in have or
                                                                                          k not in want))):
            continue
        out[k] = (have.get(k), want.get(k))
    return out


def describe_changes(diff, now="in the config", defaults=()):
    """``identity_changes``' {key: (stored, now)} in words: "seed: 1 stored, 2 in the config" (a code key's value
    now is the module's, and one of ``defaults``' the estimator's default: neither is the config's)."""
    def source(key):
        return "now" if key.startswith("code.") else "now (the estimator's default)" if key in defaults else now

    return ", ".join(f"{k}: {old!r} stored, {new!r} {source(k)}" for k, (old, new) in diff.items())


def _unit_groups(units, d_units, m_units, n_m):
    """``done_units``'s tables of ``units``: cells, each cell's groups of points and of positions, the unit
    of each (cell, group, group) and the records each unit needs; None where a kind's units are not so
    grouped."""
    # Cells numbered by the units' own (data set, model); a row's cell found through its category codes.
    cell_ids, cell_codes = {}, {}
    for u, d, m in zip(units, d_units.tolist(), m_units.tolist(), strict=True):
        cid = cell_ids.setdefault((u.dataset, u.model), len(cell_ids))
        if d >= 0 and m >= 0:
            cell_codes[(d + 1) * n_m + (m + 1)] = cid
    # Per cell: point -> its group, position -> its group, (group, group) -> unit.
    point_group, position_group, unit_of, need = {}, {}, {}, []
    groups_of = {}
    # A kind's units of one cell share their points' tuple (one per group of points): its group is looked up by
    # the tuple's identity first, by its value (a hash of every point) only when the tuple is new.
    seen_points = {}
    last = None
    for k, u in enumerate(units):
        if (u.dataset, u.model) != last:  # a kind's units come cell by cell: the cell's tables looked up once
            last = (u.dataset, u.model)
            cell = cell_ids[last]
            if cell not in groups_of:
                groups_of[cell] = ({}, {})
            g_by_points, h_by_positions = groups_of[cell]
        g = seen_points.get((cell, id(u.points)))
        new_g = g is None and u.points not in g_by_points
        if g is None:
            g = seen_points[(cell, id(u.points))] = g_by_points.setdefault(u.points, len(g_by_points))
        positions = unit_positions(u)
        h = h_by_positions.get(positions)
        new_h = h is None
        if new_h:
            h = h_by_positions[positions] = len(h_by_positions)
        if (cell, g, h) in unit_of:
            return None
        unit_of[(cell, g, h)] = k
        need.append(len(u.points) * len(positions))
        # A group's points (positions) are checked when the group first appears: a cell's units share them.
        for p in point_ids(u.points) if new_g else ():
            if point_group.setdefault((cell, p), g) != g:
                return None
        for s in positions if new_h else ():
            if position_group.setdefault((cell, s), h) != h:
                return None
    return cell_ids, cell_codes, point_group, position_group, unit_of, need, groups_of


def _lookup(keys, table_keys, table_values):
    """``table_values`` at ``keys`` in ``table_keys`` (-1 where a key is not in it)."""
    size = int(table_keys.max(initial=-1)) + 1
    if size <= max(4 * len(keys), 1 << 20):  # a dense table: one index per row, no binary search
        dense = np.full(size + 1, -1, dtype=np.int64)  # the last slot: every key outside the table
        dense[table_keys[table_keys >= 0]] = table_values[table_keys >= 0]
        return dense[np.where((keys >= 0) & (keys < size), keys, size)]
    order = np.argsort(table_keys)
    sorted_keys = table_keys[order]
    at = np.searchsorted(sorted_keys, keys)
    at = np.minimum(at, max(len(sorted_keys) - 1, 0))
    found = (sorted_keys[at] == keys) if len(sorted_keys) else np.zeros(len(keys), dtype=bool)
    return np.where(found, table_values[order][at] if len(sorted_keys) else -1, -1)


def done_units(units, df, ok, shas):
    """Which of ``units`` have every record key among the rows of ``df`` (a store frame) that ``ok`` marks and
    whose identity sha is their cell's (``shas``: {(data set, model, is inner): sha}); a bool array.

    Vectorised: each row is mapped to its unit through integer codes (its cell, its point's group of points
    and its position's group of positions; every kind's units are such groups) and the rows counted per
    unit. Returns None where a kind's units are not so grouped (the caller checks keys one by one).
    """
    if df.empty or not units:
        return np.zeros(len(units), dtype=bool)
    d_rows, d_units = _codes(df["dataset"], [u.dataset for u in units])
    m_rows, m_units = _codes(df["model"], [u.model for u in units])
    p_rows, _ = _codes(df["point"], [])
    p_categories = as_category(df["point"]).cat.categories
    n_m = int(max(m_rows.max(initial=0), m_units.max(initial=0))) + 2
    grouped = _unit_groups(units, d_units, m_units, n_m)
    if grouped is None:
        return None
    cell_ids, cell_codes, point_group, position_group, unit_of, need, groups_of = grouped
    repeat = df["repeat"].to_numpy(np.int64)
    fold = df["fold"].to_numpy(np.int64)
    inner = pd.to_numeric(df["inner"], errors="coerce").fillna(-1).to_numpy(np.int64)
    n_r = int(max(repeat.max(initial=0), max((s[0] for _, s in position_group), default=0))) + 1
    n_f = int(max(fold.max(initial=0), max((s[1] for _, s in position_group), default=0))) + 1
    n_i = int(max(inner.max(initial=0), max((-1 if s[2] is None else s[2] for _, s in position_group),
                                            default=0))) + 2
    n_p = len(p_categories) + 1
    # Lookup tables from integer keys to groups (-1: the config has no such point or position there).
    p_index = p_categories.get_indexer(pd.Index([p for _, p in point_group], dtype=object))
    point_keys = np.array([c * n_p + i + 1 for (c, _), i in zip(point_group, p_index, strict=True) if i >= 0],
                          dtype=np.int64)
    point_values = np.array([g for ((_, _), g), i in zip(point_group.items(), p_index, strict=True) if i >= 0],
                            dtype=np.int64)
    pos_keys = np.array([((c * n_r + r) * n_f + f) * n_i + (0 if i is None else i + 1)
                         for (c, (r, f, i)) in position_group], dtype=np.int64)
    pos_values = np.fromiter(position_group.values(), dtype=np.int64, count=len(position_group))

    cell_rows = _lookup((d_rows + 1) * n_m + (m_rows + 1), np.fromiter(cell_codes, dtype=np.int64),
                       np.fromiter(cell_codes.values(), dtype=np.int64))
    g_rows = _lookup(cell_rows * n_p + p_rows + 1, point_keys, point_values)
    h_rows = _lookup(((cell_rows * n_r + repeat) * n_f + fold) * n_i + inner + 1, pos_keys, pos_values)
    # The identity each row's cell asks for (outer and inner units have their own), compared as codes.
    sha_rows, _ = _codes(df["identity_sha"], [])
    sha_categories = as_category(df["identity_sha"]).cat.categories
    wanted = {}
    for (dataset, model, is_inner), sha in shas.items():
        if (dataset, model) in cell_ids:
            wanted[cell_ids[(dataset, model)] * 2 + int(is_inner)] = sha_categories.get_indexer([sha])[0]
    want_keys = np.fromiter(wanted.keys(), dtype=np.int64, count=len(wanted))
    want_values = np.fromiter(wanted.values(), dtype=np.int64, count=len(wanted))
    expected_sha = _lookup(cell_rows * 2 + (inner >= 0), want_keys, want_values)
    good = np.asarray(ok, dtype=bool) & (cell_rows >= 0) & (g_rows >= 0) & (h_rows >= 0) & \
        (expected_sha >= 0) & (sha_rows == expected_sha)
    n_g = max(len(gs) for gs, _ in groups_of.values())
    n_h = max(len(hs) for _, hs in groups_of.values())
    unit_keys = np.array([(c * n_g + g) * n_h + h for (c, g, h) in unit_of], dtype=np.int64)
    unit_index = np.fromiter(unit_of.values(), dtype=np.int64, count=len(unit_of))
    row_units = _lookup((cell_rows[good] * n_g + g_rows[good]) * n_h + h_rows[good], unit_keys, unit_index)
    counts = np.bincount(row_units[row_units >= 0], minlength=len(units))
    return counts >= np.array(need, dtype=np.int64)
