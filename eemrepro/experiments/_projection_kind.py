"""Projection + classifier kinds: a (supervised) transformer, then classifiers on its output.

The config's ``models:`` are the projections (any scikit-learn transformer
whose ``fit`` takes y, with a grid of its own); ``analysis.classifiers`` are
the classifiers put on each projection, each with its grid. A record's point
names all three: ``{"projection__gamma": 1.0, "classifier": "SVM",
"classifier__C": 10.0, ...}``, so the reports can select per classifier
(``TableSpec.facet``) and combine the classifiers of one projection
(``TableSpec.combine``).

Two kinds share this module:

* ``projection``: the projection is fitted on each training part of the outer
  splitter (and of each inner fold under nested selection), the classifiers
  on its image of that part, and every metric is measured on the test part
  (an honest pipeline).
* ``projection-visual``: the projection is fitted once on each repeat's
  training part (a subsample of the data set, ``splitter: train-test``), and
  the classifiers are cross-validated on its image of that same subsample
  over ``analysis.cv_folds`` stratified folds: how separable the classes are
  in the projection, not how well it generalises. One unit
  covers every fold, so the projection is fitted once per subsample.

Each projection fit and each classifier fit runs under the watchdog
(``protocol.fit_timeout``).
"""

import json
import time
from dataclasses import asdict, dataclass, field

from ._guards import check_transform
from ._identity import config_params
from ._kinds import ExperimentKind, register_kind
from ._splitters import derive_seed, inner_split, make_splitter, split_positions
from ._units import Unit, make_points, point_ids
from ._watchdog import load_data, make_record, run_points, scale_parts, short_error

CLASSIFIER = "classifier"


@dataclass(frozen=True)
class ProjectionAnalysis:
    """``analysis:`` of the projection kinds.

    ``classifiers``: name -> {estimator, fixed parameters, grid} (the form of
    a ``models:`` entry); ``cv_folds``: the classifiers' folds on each
    subsample (``projection-visual`` only).
    """

    classifiers: dict = field(default_factory=dict)
    cv_folds: int = 5

    def classifier_specs(self):
        from ._config import ModelSpec

        return [ModelSpec(name=name, estimator=raw["estimator"], grid=raw.get("grid", {}),
                          params={k: v for k, v in raw.items() if k not in ("estimator", "grid", "score")},
                          score=raw.get("score", "decision"))
                for name, raw in self.classifiers.items()]


@dataclass(frozen=True)
class _FoldsUnit(Unit):
    """A unit whose records span folds 0 .. n_folds - 1 (one projection fit for all of them)."""

    n_folds: int = 1

    def keys(self):
        inner = "-" if self.inner is None else self.inner
        return [f"{self.dataset}|{self.model}|{p}|{self.repeat}|{f}|{inner}"
                for f in range(self.n_folds) for p in point_ids(self.points)]


def _classifier_points(analysis, projection_point):
    """Every (classifier, classifier grid point) merged with one projection grid point."""
    points = []
    for spec in analysis.classifier_specs():
        for p in spec.grid_points():
            points.append({**{f"projection__{k}": v for k, v in projection_point.items()},
                           CLASSIFIER: spec.name, **{f"classifier__{k}": v for k, v in p.items()}})
    return points


def _seeded(estimator, seed):
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=seed)
    return estimator


def _projection_steps(task, data, points):
    """Fit the projection once; its record carries the images of both parts."""
    from ._config import resolve_estimator
    from ._identity import code_of

    X_fit, y_fit, X_other = data
    (point,) = points
    yield "start", points
    seconds = None
    try:
        start = time.perf_counter()
        code = code_of(task.get("identity")).get(task["estimator"])
        proj = _seeded(resolve_estimator(task["estimator"], task.get("home"), code)(**task["params"], **point),
                       task["seed"])
        Z_fit = check_transform(proj, proj.fit(X_fit, y_fit).transform(X_fit), len(X_fit))
        seconds = time.perf_counter() - start
        Z_other = check_transform(proj, proj.transform(X_other), len(X_other)) if X_other is not None else None
        fields = {"status": "ok", "fit_seconds": seconds, "Z_fit": Z_fit, "Z_other": Z_other,
                  "dcs": float(proj.dcs_) if hasattr(proj, "dcs_") else None}
    except Exception as exc:  # a failed projection fails its classifiers' points, never the run
        fields = {"status": "failed", "error": short_error(exc), "fit_seconds": seconds}
    yield "record", point, fields


def _classifier_steps(task, data, points):
    """Fit each classifier point on the projected training part; metrics on the projected test part."""
    from ._config import resolve_estimator
    from ._identity import code_of
    from ._metrics import evaluate

    specs = {s.name: s for s in task["classifier_specs"]}
    for p in points:
        yield "start", [p]
        spec = specs[p[CLASSIFIER]]
        params = {k.removeprefix("classifier__"): v for k, v in p.items() if k.startswith("classifier__")}
        try:
            start = time.perf_counter()
            code = code_of(task.get("identity")).get(spec.estimator)
            model = _seeded(resolve_estimator(spec.estimator, spec.home, code)(**spec.params, **params), task["seed"])
            model.fit(data[0], data[1])
            fields = evaluate(model, data, (), spec.score)
            fields.update(status="ok", fit_seconds=time.perf_counter() - start)
        except Exception as exc:
            fields = {"status": "failed", "error": short_error(exc)}
        yield "record", p, fields


def _scaled(proto, X, fit_rows, other_rows):
    return scale_parts(proto.scaling, X[fit_rows], None if other_rows is None else X[other_rows])


def _fit_projection(task, point, X_fit, y_fit, X_other):
    """The projection's images of both parts under the watchdog, or the fields of its failure."""
    sub = dict(task, points=[point], skip_points=[])
    return run_points(sub, _projection_steps, (X_fit, y_fit, X_other))[json.dumps(point, sort_keys=True)]


def _failed_records(task, points, projection, meta, n_train, n_test, fold):
    fields = {"status": projection["status"], "error": "projection: " + str(projection.get("error")),
              "fit_seconds": projection.get("fit_seconds")}
    return [make_record(dict(task, fold=fold), p, fields, meta["sha256"], n_train, n_test) for p in points]


class ProjectionPipeline(ExperimentKind):
    """A projection fitted on each training part, classifiers on its image."""

    name = "projection"
    models_are = None  # projections; the classifiers on their image are ``analysis.classifiers``
    analysis_cls = ProjectionAnalysis
    whole_subsample = False

    # -- config ----------------------------------------------------------------

    def parse_analysis(self, ctx, raw):
        from ._config import _model

        ctx.check_section("analysis", raw, ProjectionAnalysis, "a mapping with 'classifiers' (and 'cv_folds')")
        classifiers = raw.get("classifiers")
        if not isinstance(classifiers, dict) or not classifiers:
            raise ctx.error(("analysis", "classifiers"), "a non-empty mapping: classifier name -> "
                                                         "{estimator, grid, fixed parameters}")
        normalised = {}
        for name, spec_raw in classifiers.items():
            spec = _model(ctx, str(name), spec_raw, section=("analysis", "classifiers"))
            normalised[spec.name] = {"estimator": spec.estimator, **spec.params, "grid": spec.grid}
        cv_folds = raw.get("cv_folds", 5)
        if not (isinstance(cv_folds, int) and not isinstance(cv_folds, bool) and cv_folds >= 2):
            raise ctx.error(("analysis", "cv_folds"), f"an integer >= 2, got {cv_folds!r}")
        # (A stored config.yaml spells out the default; only another value is a mistake.)
        if cv_folds != ProjectionAnalysis.cv_folds and not self.whole_subsample:
            raise ctx.error(("analysis", "cv_folds"), f"only for kind: projection-visual (kind: {self.name} "
                                                      "measures on the splitter's test parts)")
        return ProjectionAnalysis(classifiers=normalised, cv_folds=cv_folds)

    # -- units -----------------------------------------------------------------

    def units(self, config):
        units = []
        for dataset in config.datasets:
            positions = split_positions(config.protocol, dataset)
            for spec in config.models:
                for ppoint in spec.grid_points():
                    points = make_points(_classifier_points(config.analysis, ppoint))
                    units += [Unit(dataset=dataset, model=spec.name, points=points, repeat=repeat, fold=fold,
                                   inner=inner) for repeat, fold, inner in positions]
        return units

    def identity(self, config, unit):
        spec = config.model(unit.model)
        proto = config.protocol
        ident = {"kind": self.name, "estimator": spec.estimator,
                 **config_params(spec, unit.dataset),
                 "classifiers": json.dumps(config.analysis.classifiers, sort_keys=True),
                 **make_splitter(proto, unit.dataset).identity(), "scaling": proto.scaling}
        if unit.inner is not None:
            ident["inner_folds"] = proto.inner_folds
        return ident

    def estimators(self, config, unit):
        return [*super().estimators(config, unit),
                *((c.estimator, c.home) for c in config.analysis.classifier_specs())]

    def task(self, config, unit):
        spec = config.model(unit.model)
        proto = config.protocol
        (ppoint,) = {json.dumps({k.removeprefix("projection__"): v for k, v in p.items()
                                 if k.startswith("projection__")}, sort_keys=True) for p in unit.point_dicts()}
        return {
            "estimator": spec.estimator, "home": spec.home, "params": spec.params_for(unit.dataset),
            "projection_point": json.loads(ppoint), "protocol": asdict(proto),
            "classifier_specs": config.analysis.classifier_specs(), "cv_folds": config.analysis.cv_folds,
            "fit_timeout": proto.fit_timeout, "fit_memory_gb": proto.fit_memory_gb,
            "seed": derive_seed(proto.seed, unit.dataset, unit.model, unit.repeat, unit.fold,
                                *(() if unit.inner is None else ("inner", unit.inner))),
        }

    # -- running ---------------------------------------------------------------

    @classmethod
    def run(cls, task):
        from ._config import Protocol

        proto = Protocol(**task["protocol"])
        X, y, meta = load_data(task["dataset"], proto.scaling, task["data_home"], task["mirror"])
        train, test = make_splitter(proto, task["dataset"]).split_at(y, task["repeat"], task["fold"])
        if task["inner"] is not None:
            tr, va = inner_split(y[train], proto.inner_folds, proto.seed, task["dataset"], task["repeat"],
                                 task["fold"], task["inner"])
            train, test = train[tr], train[va]
        return cls._run_parts(task, proto, X, y, meta, train, test)

    @staticmethod
    def _run_parts(task, proto, X, y, meta, train, test):
        X_fit, X_test = _scaled(proto, X, train, test)
        projection = _fit_projection(task, task["projection_point"], X_fit, y[train], X_test)
        if projection["status"] != "ok":
            return _failed_records(task, task["points"], projection, meta, len(train), len(test), task["fold"])
        data = (projection["Z_fit"], y[train], projection["Z_other"], y[test])
        return _classifier_records(task, data, projection, meta, task["fold"])

    def seconds(self, config, unit):
        from ..datasets import get_entry

        e = get_entry(unit.dataset)
        n = e.expected.get("n") or 1000
        # A projection fit (MELM: 17 L-BFGS starts over the n^2 pairs) and many small 2-D fits.
        return 2e-5 * n * n / 10 + 0.01 * len(unit.points) + 0.2


def _classifier_records(task, data, projection, meta, fold):
    results = run_points(dict(task, fold=fold), _classifier_steps, data)
    extra = {"projection_seconds": projection["fit_seconds"]}
    if projection.get("dcs") is not None:
        extra["projection_dcs"] = projection["dcs"]
    records = []
    for p in task["points"]:
        fields = dict(results[json.dumps(p, sort_keys=True)])
        fields["extra"] = {**fields.get("extra", {}), **extra}
        records.append(make_record(dict(task, fold=fold), p, fields, meta["sha256"], len(data[1]), len(data[3])))
    return records


class ProjectionVisual(ProjectionPipeline):
    """A projection fitted on a whole subsample, classifiers cross-validated on its image."""

    name = "projection-visual"
    whole_subsample = True

    def units(self, config):
        proto = config.protocol
        if proto.splitter == "stratified-kfold":
            raise ValueError(f"{config.source or config.name}: kind: projection-visual fits the projection on a "
                             "subsample per repeat (protocol.splitter: train-test, or whole) and cross-validates "
                             "the classifiers on it; splitter: stratified-kfold has no such subsample")
        units = []
        for dataset in config.datasets:
            for spec in config.models:
                for ppoint in spec.grid_points():
                    points = make_points(_classifier_points(config.analysis, ppoint))
                    for repeat in range(proto.repeats):
                        units.append(_FoldsUnit(dataset=dataset, model=spec.name, points=points, repeat=repeat,
                                                fold=0, n_folds=config.analysis.cv_folds))
        return units

    def identity(self, config, unit):
        return {**super().identity(config, unit), "cv_folds": config.analysis.cv_folds}

    @classmethod
    def run(cls, task):
        from ._config import Protocol

        proto = Protocol(**task["protocol"])
        X, y, meta = load_data(task["dataset"], proto.scaling, task["data_home"], task["mirror"])
        subsample, _ = make_splitter(proto, task["dataset"]).split_at(y, task["repeat"], 0)
        X_sub, _ = _scaled(proto, X, subsample, None)
        y_sub = y[subsample]
        projection = _fit_projection(task, task["projection_point"], X_sub, y_sub, None)
        records = []
        for fold in range(task["cv_folds"]):
            tr, te = inner_split(y_sub, task["cv_folds"], proto.seed, task["dataset"], task["repeat"], "cv", fold)
            if projection["status"] != "ok":
                records += _failed_records(task, task["points"], projection, meta, len(tr), len(te), fold)
                continue
            Z = projection["Z_fit"]
            records += _classifier_records(task, (Z[tr], y_sub[tr], Z[te], y_sub[te]), projection, meta, fold)
        return records

    def seconds(self, config, unit):
        return super().seconds(config, unit) + 0.01 * len(unit.points) * (config.analysis.cv_folds - 1)


register_kind(ProjectionPipeline())
register_kind(ProjectionVisual())

__all__ = ["ProjectionPipeline", "ProjectionVisual", "ProjectionAnalysis"]
