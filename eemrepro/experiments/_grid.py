"""The grid-search kind: every grid point of every model on every split.

A unit is one (data set, model, non-path parameters, repeat, fold[, inner
fold]); it covers every value of the model's path parameter (the one its
estimator's ``_path_param`` names) and yields one record per grid point. A path
is one ``fit_path`` call timed as a whole, or, for an estimator with
``iter_path`` (SVM), one model at a time, each timed and under the fit timeout
on its own. A model without a path is batched instead over its last grid
parameter: one unit fits those points one after the other (each under the fit
timeout), which keeps the number of processes down. Seeds are derived by
hashing, so a record does not depend on the order or the parallelism of the run.
"""

import numbers
import time
from dataclasses import asdict

import numpy as np

from ._cost_prior import load_prior
from ._identity import code_of, config_params
from ._kinds import ExperimentKind, register_kind
from ._metrics import evaluate
from ._splitters import derive_seed, inner_split, make_splitter, split_positions
from ._units import Unit, make_points, point_id
from ._watchdog import load_data, make_record, run_points, scale_parts, short_error


class GridSearch(ExperimentKind):
    name = "grid-search"

    def units(self, config):
        units = []
        for dataset in config.datasets:
            positions = split_positions(config.protocol, dataset)
            for spec in config.models:
                path = spec.path_param
                batched = path if path is not None or not spec.grid else sorted(spec.grid)[-1]
                others = {k: v for k, v in spec.grid.items() if k != batched}
                fixed_points = [{}]
                for key in sorted(others):
                    fixed_points = [dict(p, **{key: v}) for p in fixed_points for v in others[key]]
                for fixed in fixed_points:
                    points = [dict(fixed, **{batched: v}) for v in spec.grid[batched]] if batched else [fixed]
                    points = make_points(points)  # one tuple shared by the unit of every split
                    units += [Unit(dataset=dataset, model=spec.name, points=points, repeat=repeat,
                                   fold=fold, inner=inner, fit_path=path) for repeat, fold, inner in positions]
        return units

    def scope(self, config):
        """Every grid point of each model at every split position of each data set (no units built)."""
        points = {spec.name: tuple(point_id(p) for p in spec.grid_points()) for spec in config.models}
        out = {}
        for dataset in config.datasets:
            positions = tuple(split_positions(config.protocol, dataset))
            for spec in config.models:
                out[(dataset, spec.name)] = (points[spec.name], positions)
        return out

    def identity(self, config, unit):
        spec = config.model(unit.model)
        proto = config.protocol
        # An estimator names the parameters that change only its speed (a cache size).
        # (A user's estimator read back for the reports, not imported, names none.)
        speed_only = (spec.trait("_speed_only_params") or ()) if spec.imported else ()
        ident = {"kind": self.name, "estimator": spec.estimator,
                 **config_params(spec, unit.dataset, leave_out=speed_only),
                 **make_splitter(proto, unit.dataset).identity(), "scaling": proto.scaling}
        if spec.score != "decision":  # (stores made before the option have no key)
            ident["score"] = spec.score
        if unit.inner is not None:
            ident["inner_folds"] = proto.inner_folds
        return ident

    def task(self, config, unit):
        spec = config.model(unit.model)
        proto = config.protocol
        return {
            "estimator": spec.estimator, "home": spec.home, "params": spec.params_for(unit.dataset),
            "fit_path": unit.fit_path,
            "score": spec.score,
            "protocol": asdict(proto),
            "seed": derive_seed(proto.seed, unit.dataset, unit.model, unit.repeat, unit.fold,
                                *(() if unit.inner is None else ("inner", unit.inner))),
        }

    @staticmethod
    def run(task):
        from ._config import Protocol

        proto = Protocol(**task["protocol"])
        X, y, meta = load_data(task["dataset"], proto.scaling, task["data_home"], task["mirror"])
        splitter = make_splitter(proto, task["dataset"])
        train, test = splitter.split_at(y, task["repeat"], task["fold"])
        if task["inner"] is not None:
            tr, va = inner_split(y[train], proto.inner_folds, proto.seed, task["dataset"],
                                 task["repeat"], task["fold"], task["inner"])
            train, test = train[tr], train[va]
        X_train, X_test = scale_parts(proto.scaling, X[train], X[test])
        data = (X_train, y[train], X_test, y[test])
        task = dict(task, fit_timeout=proto.fit_timeout, fit_memory_gb=proto.fit_memory_gb)
        results = run_points(task, _fit_steps, data)
        return [make_record(task, p, results[point_id(p)], meta["sha256"], len(train), len(test))
                for p in task["points"]]

    def seconds(self, config, unit, flops_per_second=2e10):
        """The prior learned from the committed stores' fits (``_cost_prior``) where it knows the estimator,
        else an operation count (``_fit_flops``) at ``flops_per_second``."""
        n_train, d = _train_shape(config, unit)
        spec = config.model(unit.model)
        prior = load_prior()
        if prior.knows(spec.estimator):
            return sum(prior.record_seconds(spec.estimator, n_train, d, p) for p in unit.point_dicts()) + \
                prior.unit_seconds
        cls = spec.estimator_class()
        cost = getattr(cls, "_fit_flops", None)
        fixed = spec.params_for(unit.dataset)
        flops = [cost(n_train, d, {**fixed, **p}) if cost else n_train * d * 100 for p in unit.point_dicts()]
        # A path fitted as one (a hidden layer's sizes) costs about its largest point; one fitted point by point, all.
        total = max(flops) if unit.fit_path and not hasattr(cls, "iter_path") else sum(flops)
        return total / flops_per_second + 0.05  # + process overhead

    def spread(self, config, unit):
        """(low, high): how far the learned prior's estimate of a data set's grid was off on the stores' data
        sets (10th and 90th percentiles); None for an estimator it has not learned."""
        low, high = load_prior().spread(config.model(unit.model).estimator)
        return None if low is None else (low, high)


def _train_shape(config, unit):
    """(training rows, features) of ``unit``'s fits, from its data set's registered (or read) shape."""
    from ..datasets import get_entry

    e = get_entry(unit.dataset)
    n = e.expected.get("n") or 1000
    d = e.expected.get("d") or 10
    proto = config.protocol
    splitter = make_splitter(proto, unit.dataset)
    if proto.splitter == "train-test":
        n_train = n * splitter.train_size if isinstance(splitter.train_size, float) else splitter.train_size
    else:
        n_train = n * (splitter.n_folds - 1) / splitter.n_folds if splitter.n_folds > 1 else n
    if unit.inner is not None:
        n_train *= (proto.inner_folds - 1) / proto.inner_folds
    return n_train, d


def _fit_steps(task, data, points):
    """Yield ("start", points) before each fit and ("record", point, fields) after."""
    from sklearn.base import clone

    from ._config import resolve_estimator

    X_train, y_train = data[0], data[1]
    proto = task["protocol"]
    cls = resolve_estimator(task["estimator"], task.get("home"), code_of(task.get("identity")).get(task["estimator"]))
    base = cls(**task["params"])
    if "random_state" in base.get_params():
        base.set_params(random_state=task["seed"])
    path = task["fit_path"]
    if path is not None and hasattr(base, "iter_path"):
        yield from _iterated_path_steps(task, data, points, base, path)
        return
    steps = [points] if path is not None else [[p] for p in points]
    for step in steps:
        yield "start", step
        try:
            start = time.perf_counter()
            if path is not None:
                est = clone(base).set_params(**{k: v for k, v in step[0].items() if k != path})
                models = est.fit_path(X_train, y_train, [p[path] for p in step])
            else:
                models = [clone(base).set_params(**step[0]).fit(X_train, y_train)]
            fit_seconds = time.perf_counter() - start
        except Exception as exc:  # a failed fit fails its grid points, never the run
            for p in step:
                yield "record", p, {"status": "failed", "error": short_error(exc)}
            continue
        standalone = {}
        if path is not None and _times_standalone(task):
            for p in step:
                yield "start", [p]
                standalone[point_id(p)] = _standalone_seconds(base, p, X_train, y_train)
            yield "start", step
        for p, model in zip(step, models, strict=False):
            fields = _evaluated(model, data, proto, fit_seconds, len(step), task.get("score", "decision"))
            if fields["status"] == "ok":
                if path is None:
                    fields["standalone_fit_seconds"] = fit_seconds
                elif point_id(p) in standalone:
                    fields["standalone_fit_seconds"] = standalone[point_id(p)]
            yield "record", p, fields


def _times_standalone(task):
    """Whether this unit also times a standalone fit of each point (fold 0 of each repeat: a time table's seconds)."""
    return task["protocol"]["standalone_timing"] == "first-fold" and task["fold"] == 0 and task["inner"] is None


def _standalone_seconds(base, point, X_train, y_train):
    from sklearn.base import clone

    single = clone(base).set_params(**point)
    t0 = time.perf_counter()
    try:
        single.fit(X_train, y_train)
    except Exception:
        return None
    return time.perf_counter() - t0


def _evaluated(model, data, proto, fit_seconds, path_size, score="decision"):
    try:
        fields = evaluate(model, data, proto["criteria"], score)
        fields.update(status="ok", fit_seconds=fit_seconds, path_size=path_size)
    except Exception as exc:
        return {"status": "failed", "error": short_error(exc), "fit_seconds": fit_seconds}
    facts = _solver_facts(model)
    if facts:
        fields["extra"] = facts
    return fields


def _solver_facts(model):
    """What a model's solver says of its run, where it says it: ``n_iter_`` and ``converged_`` (False where
    LIBSVM stopped at its iteration limit), stored as the record's ``n_iter`` and ``converged``."""
    facts = {}
    n_iter, converged = getattr(model, "n_iter_", None), getattr(model, "converged_", None)
    if isinstance(n_iter, numbers.Integral) and not isinstance(n_iter, bool | np.bool_):
        facts["n_iter"] = int(n_iter)
    if isinstance(converged, bool | np.bool_):
        facts["converged"] = bool(converged)
    return facts


def _iterated_path_steps(task, data, points, base, path):
    """A path fitted one model at a time (``iter_path``): each point its own step, timed and watched alone.

    A point whose model is a smaller C's, reused (``solution_C_``), took no fit;
    its standalone time (a time table's), where asked for, comes from a fit of its own.
    A failed fit fails its point; the path restarts after it.
    """
    from sklearn.base import clone

    X_train, y_train = data[0], data[1]
    proto = task["protocol"]
    remaining = list(points)
    while remaining:
        est = clone(base).set_params(**{k: v for k, v in remaining[0].items() if k != path})
        models = est.iter_path(X_train, y_train, [p[path] for p in remaining])
        while remaining:
            p = remaining[0]
            yield "start", [p]
            try:
                start = time.perf_counter()
                model = next(models)
                fit_seconds = time.perf_counter() - start
            except Exception as exc:  # a failed fit fails its grid point, never the run
                remaining.pop(0)
                yield "record", p, {"status": "failed", "error": short_error(exc)}
                break
            remaining.pop(0)
            fields = _evaluated(model, data, proto, fit_seconds, 1, task.get("score", "decision"))
            if fields["status"] == "ok":
                value, source = model.get_params()[path], getattr(model, f"solution_{path}_", None)
                if source is None or source == value:  # fitted at this point
                    fields["standalone_fit_seconds"] = fit_seconds
                else:  # a smaller value's model, bit for bit (provenance: which one)
                    fields["extra"] = {**fields.get("extra", {}), "reused_from": source}
                    if _times_standalone(task):
                        fields["standalone_fit_seconds"] = _standalone_seconds(base, p, X_train, y_train)
            yield "record", p, fields


register_kind(GridSearch())

__all__ = ["GridSearch"]
