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

import hashlib
import json
from dataclasses import dataclass


def point_id(point):
    return json.dumps(point, sort_keys=True)


def record_key(dataset, model, point, repeat, fold, inner):
    return f"{dataset}|{model}|{point_id(point)}|{repeat}|{fold}|{'-' if inner is None else inner}"


def stored_key(record):
    """The ``record_key`` of a stored record (what ``Unit.keys`` lists for it)."""
    return record_key(record["dataset"], record["model"], record["params"], record["repeat"], record["fold"],
                      record["inner"])


def identity_sha(identity):
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


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
        return [record_key(self.dataset, self.model, p, self.repeat, self.fold, self.inner)
                for p in self.point_dicts()]


def make_points(points):
    """Point dicts as the hashable tuples a Unit holds."""
    return tuple(tuple(sorted(p.items())) for p in points)


def unfinished_cells(units, records):
    """(data set, model) cells whose stored ``records`` lack one of ``units``' records.

    Only the repeats that a cell's records have are expected (a run may use
    fewer repeats than the config names). A cell stopped by the budget rule
    (a timeout or a failure, after which ``skip-model`` records the rest as
    skipped) is judged by its records' status, not here.
    """
    done = {stored_key(r) for r in records}
    repeats = {}
    for r in records:
        repeats.setdefault((r["dataset"], r["model"]), set()).add(r["repeat"])
    return {(u.dataset, u.model) for u in units
            if u.repeat in repeats.get((u.dataset, u.model), ()) and not set(u.keys()) <= done}


def changed_identities(stored, expected):
    """Cells whose stored records were made under another identity than ``expected``.

    ``stored``: records; ``expected``: {(data set, model, is_inner): identity}.
    Returns [(data set, model, {key: (stored value, config value)})], one per
    cell, naming the identity keys that differ.
    """
    out, seen = [], set()
    for r in stored:
        cell = (r["dataset"], r["model"], r["inner"] is not None)
        want = expected.get(cell)
        if want is None or cell in seen or r["identity"] == want:
            continue
        seen.add(cell)
        keys = sorted(set(want) | set(r["identity"]))
        diff = {k: (r["identity"].get(k), want.get(k)) for k in keys if r["identity"].get(k) != want.get(k)}
        out.append((cell[0], cell[1], diff))
    return out
