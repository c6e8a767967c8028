"""Work units, their seeds and the cross-validation splits.

A unit is one (data set, model, non-path parameters, repeat, fold[, inner
fold]); it covers every value of the model's path parameter (h for WELM, EEM
and EEKM, C for LS-SVM) in one ``fit_path`` call, and yields one record per
grid point. A model without a path (SVM) is batched instead over its last grid
parameter: one unit fits those points one after the other (each under the
fit timeout), which keeps the number of processes down. Seeds are derived by hashing, so a record does not depend on the
order or the parallelism of the run (benchopt's ``get_seed`` idea).
"""

import hashlib
import json
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedKFold


def derive_seed(*parts):
    """A 31-bit seed from the sha256 of the parts' text."""
    text = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF


def point_id(point):
    return json.dumps(point, sort_keys=True)


def record_key(dataset, model, point, repeat, fold, inner):
    return f"{dataset}|{model}|{point_id(point)}|{repeat}|{fold}|{'-' if inner is None else inner}"


def stored_key(record):
    """The ``record_key`` of a stored record (what ``Unit.keys`` lists for it)."""
    return record_key(record["dataset"], record["model"], record["params"], record["repeat"], record["fold"],
                      record["inner"])


@dataclass(frozen=True)
class Unit:
    dataset: str
    model: str
    fixed: tuple  # ((param, value), ...) of the non-path grid parameters
    path_param: str | None  # a fit_path parameter, or a batched one (see path_is_fit_path)
    path_values: tuple
    repeat: int
    fold: int
    inner: int | None = None
    path_is_fit_path: bool = True

    def points(self):
        base = dict(self.fixed)
        if self.path_param is None:
            return [base]
        return [dict(base, **{self.path_param: v}) for v in self.path_values]

    def keys(self):
        return [record_key(self.dataset, self.model, p, self.repeat, self.fold, self.inner) for p in self.points()]


CORRELATION_MODEL = "dcs-correlation"


def enumerate_units(config):
    """Every unit of a config, data set by data set, in a fixed order."""
    proto = config.protocol
    if config.kind == "dcs-correlation":
        # One unit per (data set, h, random layer); the layer index is the "fold".
        return [
            Unit(dataset=d, model=CORRELATION_MODEL, fixed=(("n_hidden", h),), path_param=None,
                 path_values=(), repeat=0, fold=layer, path_is_fit_path=False)
            for d in config.datasets for h in config.analysis.n_hidden for layer in range(config.analysis.layers)
        ]
    inners = [None] + (list(range(proto.inner_folds)) if proto.selection == "nested" else [])
    units = []
    for dataset in config.datasets:
        for spec in config.models:
            path = spec.path_param
            is_path = path is not None
            if path is None and spec.grid:
                path = sorted(spec.grid)[-1]
            others = {k: v for k, v in spec.grid.items() if k != path}
            fixed_points = [{}]
            for key in sorted(others):
                fixed_points = [dict(p, **{key: v}) for p in fixed_points for v in others[key]]
            for fixed in fixed_points:
                for repeat in range(proto.repeats):
                    for fold in range(proto.folds):
                        for inner in inners:
                            units.append(Unit(
                                dataset=dataset, model=spec.name, fixed=tuple(sorted(fixed.items())),
                                path_param=path, path_values=tuple(spec.grid[path]) if path else (),
                                repeat=repeat, fold=fold, inner=inner, path_is_fit_path=is_path,
                            ))
    return units


def unfinished_cells(config, records):
    """(data set, model) cells of ``config`` whose stored ``records`` lack a unit's record.

    Only the repeats that a cell's records have are expected (a run may use
    fewer repeats than the config names). A cell stopped by the budget rule
    (a timeout or a failure, after which ``skip-model`` records the rest as
    skipped) is judged by its records' status, not here.
    """
    done = {stored_key(r) for r in records}
    repeats = {}
    for r in records:
        repeats.setdefault((r["dataset"], r["model"]), set()).add(r["repeat"])
    return {(u.dataset, u.model) for u in enumerate_units(config)
            if u.repeat in repeats.get((u.dataset, u.model), ()) and not set(u.keys()) <= done}


def outer_split(y, folds, seed, dataset, repeat, fold):
    """(train, test) indices of one outer fold; the same for every model on a data set."""
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=derive_seed(seed, dataset, "split", repeat))
    return list(skf.split(np.zeros(len(y)), y))[fold]


def inner_split(y_train, inner_folds, seed, dataset, repeat, fold, inner):
    """(train, validation) positions within an outer training fold (nested selection)."""
    skf = StratifiedKFold(n_splits=inner_folds, shuffle=True,
                          random_state=derive_seed(seed, dataset, "inner", repeat, fold))
    return list(skf.split(np.zeros(len(y_train)), y_train))[inner]
