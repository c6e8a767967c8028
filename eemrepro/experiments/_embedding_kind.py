"""Two kinds that store what figures draw: a projection's image, and an optimiser's restarts.

* ``embedding``: each projection (``models:``) fitted on a data set (at most
  ``analysis.max_points`` points, a stratified subsample beyond that) and the
  2-D coordinates of those points stored with their labels (MELM Figure 5;
  ``eemrepro figures --figure projection --dataset NAME``).
* ``restarts``: an estimator fitted ``analysis.batches`` times with its own
  seed per batch, storing the per-start values it lists in
  ``analysis.attribute`` (MELM's ``start_dcs_`` with ``pca_start: false``: the
  D_CS of every random start, MELM Figures 3 and 4).

Both fit on the whole (scaled) data set; records hold no metrics.
"""

import time
from dataclasses import dataclass

import numpy as np

from ._guards import check_transform
from ._identity import config_params
from ._kinds import ExperimentKind, register_kind
from ._splitters import derive_seed
from ._units import Unit, make_points
from ._watchdog import load_data, make_record, run_points, scale_parts, short_error


@dataclass(frozen=True)
class EmbeddingAnalysis:
    max_points: int = 2000


@dataclass(frozen=True)
class RestartsAnalysis:
    batches: int = 10
    attribute: str = "start_dcs_"


def _positive_int(ctx, raw, key):
    if key in raw and not (isinstance(raw[key], int) and not isinstance(raw[key], bool) and raw[key] >= 1):
        raise ctx.error(("analysis", key), f"an integer >= 1, got {raw[key]!r}")


def _fit_steps(task, data, points):
    """Fit the estimator once; the record carries what ``task["keep"]`` takes from it."""
    from ._config import resolve_estimator
    from ._identity import code_of

    X, y = data
    (point,) = points
    yield "start", points
    try:
        start = time.perf_counter()
        code = code_of(task.get("identity")).get(task["estimator"])
        est = resolve_estimator(task["estimator"], task.get("home"), code)(**task["params"], **point)
        if "random_state" in est.get_params():
            est.set_params(random_state=task["seed"])
        est.fit(X, y)
        fields = {"status": "ok", "fit_seconds": time.perf_counter() - start, "extra": task["keep"](est, X, y)}
    except Exception as exc:
        fields = {"status": "failed", "error": short_error(exc)}
    yield "record", point, fields


class _WholeDataKind(ExperimentKind):
    """One fit of each model (and grid point) on the whole data set per repeat."""

    models_are = None  # projections (MELM), whose embeddings the figures draw

    def _repeats(self, config):
        return 1

    def units(self, config):
        return [Unit(dataset=d, model=spec.name, points=make_points([p]), repeat=r, fold=0)
                for d in config.datasets for spec in config.models for p in spec.grid_points()
                for r in range(self._repeats(config))]

    def identity(self, config, unit):
        spec = config.model(unit.model)
        return {"kind": self.name, "estimator": spec.estimator, "seed": config.protocol.seed,
                "scaling": config.protocol.scaling, **{f"analysis.{k}": v for k, v in vars(config.analysis).items()},
                **config_params(spec, unit.dataset)}

    def task(self, config, unit):
        spec = config.model(unit.model)
        proto = config.protocol
        return {"estimator": spec.estimator, "home": spec.home, "params": spec.params_for(unit.dataset),
                "analysis": vars(config.analysis), "fit_timeout": proto.fit_timeout,
                "fit_memory_gb": proto.fit_memory_gb,
                "scaling": proto.scaling,
                "seed": derive_seed(proto.seed, unit.dataset, unit.model, self.name, unit.repeat)}

    @classmethod
    def run(cls, task):
        scaling = task.get("scaling", "global")
        X, y, meta = load_data(task["dataset"], scaling, task["data_home"], task["mirror"])
        X, _ = scale_parts(scaling, X)  # a per-fold scaling of the whole data set scales it whole
        X, y = cls._rows(task, X, y)
        sub = dict(task, keep=cls._keep(task), skip_points=[])
        (point,) = task["points"]
        fields = next(iter(run_points(sub, _fit_steps, (X, y)).values()))
        return [make_record(task, point, fields, meta["sha256"], X.shape[0], 0)]

    @staticmethod
    def _rows(task, X, y):
        return X, y


class Embedding(_WholeDataKind):
    name = "embedding"
    analysis_cls = EmbeddingAnalysis
    analysis_optional = True

    def parse_analysis(self, ctx, raw):
        ctx.check_section("analysis", raw, EmbeddingAnalysis, "a mapping (max_points)")
        _positive_int(ctx, raw, "max_points")
        return EmbeddingAnalysis(**raw)

    @staticmethod
    def _rows(task, X, y):
        n = task["analysis"]["max_points"]
        if X.shape[0] <= n:
            return X, y
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(np.arange(X.shape[0]), train_size=n, stratify=y,
                                   random_state=derive_seed(task["seed"], "rows"))
        keep = np.sort(keep)
        return X[keep], y[keep]

    @staticmethod
    def _keep(task):
        return _embedding_fields


class Restarts(_WholeDataKind):
    name = "restarts"
    analysis_cls = RestartsAnalysis
    analysis_optional = True

    def parse_analysis(self, ctx, raw):
        ctx.check_section("analysis", raw, RestartsAnalysis, "a mapping (batches, attribute)")
        _positive_int(ctx, raw, "batches")
        if not isinstance(raw.get("attribute", "start_dcs_"), str):
            raise ctx.error(("analysis", "attribute"), f"a fitted attribute's name, got {raw['attribute']!r}")
        return RestartsAnalysis(**raw)

    def _repeats(self, config):
        return config.analysis.batches

    @staticmethod
    def _keep(task):
        return _RestartFields(task["analysis"]["attribute"])


def _embedding_fields(est, X, y):
    Z = check_transform(est, est.transform(X), len(X))
    if Z.shape[1] < 2:
        raise ValueError(f"an embedding needs >= 2 output columns, got shape {Z.shape}")
    return {"embedding": np.round(Z[:, :2], 6).tolist(), "labels": [str(v) for v in y]}


class _RestartFields:
    """Picklable: the per-start values an estimator lists in one attribute."""

    def __init__(self, attribute):
        self.attribute = attribute

    def __call__(self, est, X, y):
        values = np.asarray(getattr(est, self.attribute), dtype=float).ravel()
        return {"values": [float(v) if np.isfinite(v) else None for v in values]}


register_kind(Embedding())
register_kind(Restarts())

__all__ = ["Embedding", "Restarts"]
