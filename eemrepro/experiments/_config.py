"""Experiment configs: YAML loaded with ``yaml.safe_load`` and validated into typed objects.

Every error names the file, the key and (where YAML knows it) the line, and
lists what is allowed. Example::

    name: quick
    datasets: [heart, ecoli]
    models:
      EEM-rbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [50, 100]}}
      SVM: {estimator: SVM, grid: {C: {log10: [-1, 2]}, gamma: {log10: [-2, 0]}}}
    protocol: {folds: 10, repeats: 1, seed: 0}
"""

import hashlib
import importlib
import inspect
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

BUILTIN_ESTIMATORS = ("WELM", "EEM", "EEKM", "LSSVM", "SVM")
SCALINGS = ("global", "per-fold")
SELECTIONS = ("best-of-grid", "nested", "dcs-gaussian", "dcs-kde")
AFTER_TIMEOUT = ("skip", "skip-model", "run")
_TOP_KEYS = {"name", "kind", "datasets", "models", "analysis", "protocol", "jobs", "data"}
KINDS = ("grid-search", "dcs-correlation")


@dataclass(frozen=True)
class CorrelationAnalysis:
    """EEM Table 1: Spearman correlation of D_CS and (m+ - m-)^2 / (S+ + S-) (SPEC section 3)."""

    n_hidden: tuple = (1, 10, 100, 200, 500)
    layers: int = 100
    betas: int = 100
    activation: str = "rbf"  # the paper names neither the activation ...
    covariance: str = "ledoit-wolf"  # ... nor the covariance estimator
_DATA_KEYS = {"mirror", "data_home"}


class ConfigError(ValueError):
    """A config file that does not validate; the message names file, key and line."""


@dataclass(frozen=True)
class Protocol:
    """SPEC section 2; every ambiguous choice is a key whose default is the spec's."""

    folds: int = 10
    repeats: int = 5
    seed: int = 0
    scaling: str = "global"
    selection: str = "best-of-grid"
    inner_folds: int = 3
    fit_timeout: float | None = 600.0
    after_timeout: str = "skip"
    # Address-space limit (GiB) of the process that fits: past it the fit fails
    # with MemoryError (recorded) instead of taking the machine down.
    fit_memory_gb: float | None = None
    train_dcs: bool = False  # record D_CS of the training projection (EEM Table 6)
    # A path fit times every grid point at once; "first-fold" also times a
    # standalone fit of each point on fold 0 of each repeat (EEM Table 5).
    standalone_timing: str = "none"

    def fingerprint(self):
        """Hash of what makes records comparable.

        Not the number of repeats (repeat r's splits and seeds do not depend on
        it, so a run with more repeats extends the store), the timeout or the
        selection rule.
        """
        key = {"folds": self.folds, "seed": self.seed, "scaling": self.scaling}
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    estimator: str
    params: dict = field(default_factory=dict)  # fixed parameters
    grid: dict = field(default_factory=dict)  # parameter -> list of values

    def estimator_class(self):
        return resolve_estimator(self.estimator)

    @property
    def path_param(self):
        """The grid parameter the estimator's ``fit_path`` covers in one fit, if any."""
        name = getattr(self.estimator_class(), "_path_param", None)
        return name if name in self.grid else None

    def grid_points(self):
        """Every grid point as a dict, in a fixed order."""
        points = [{}]
        for key in sorted(self.grid):
            points = [dict(p, **{key: v}) for p in points for v in self.grid[key]]
        return points


@dataclass(frozen=True)
class ExperimentConfig:
    name: str
    datasets: tuple
    models: tuple  # of ModelSpec
    protocol: Protocol = Protocol()
    jobs: int | None = None
    mirror: str | None = None
    data_home: str | None = None
    source: str | None = None
    kind: str = "grid-search"
    analysis: CorrelationAnalysis | None = None

    def to_dict(self):
        extra = {}
        if self.kind != "grid-search":
            extra = {"kind": self.kind, "analysis": {k: list(v) if isinstance(v, tuple) else v
                                                     for k, v in asdict(self.analysis).items()}}
        models = {}
        if self.kind == "grid-search":
            models = {"models": {m.name: {"estimator": m.estimator, **m.params, "grid": m.grid} for m in self.models}}
        return {
            "name": self.name,
            **extra,
            "datasets": list(self.datasets),
            **models,
            "protocol": asdict(self.protocol),
            "jobs": self.jobs,
        }


def resolve_estimator(name):
    """A built-in estimator name or ``"package.module:Class"`` for a user's classifier."""
    if name in BUILTIN_ESTIMATORS:
        from .. import models

        return getattr(models, name)
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"estimator {name!r} cannot be imported: {exc}") from exc
    raise ConfigError(
        f"unknown estimator {name!r}; use one of {list(BUILTIN_ESTIMATORS)} or 'package.module:Class'"
    )


# -- line numbers -------------------------------------------------------------


def _key_lines(text):
    """{("models", "EEM", "grid"): line} for every mapping key, from the YAML node tree."""
    lines = {}

    def walk(node, path):
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                p = path + (key.value,)
                lines[p] = key.start_mark.line + 1
                walk(value, p)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[path + (i,)] = item.start_mark.line + 1
                walk(item, path + (i,))

    try:
        walk(yaml.compose(text, Loader=yaml.SafeLoader), ())
    except yaml.YAMLError:
        pass
    return lines


class _Context:
    def __init__(self, source, text):
        self.source = source
        self.lines = _key_lines(text)

    def error(self, path, message):
        where = ".".join(str(p) for p in path) or "(top level)"
        line = None
        for k in range(len(path), 0, -1):
            line = self.lines.get(tuple(path[:k]))
            if line:
                break
        at = f", line {line}" if line else ""
        return ConfigError(f"{self.source}{at}: key '{where}': {message}")


# -- values -------------------------------------------------------------------


def _number(value):
    """YAML 1.1 reads 1e-10 (no dot) as a string; accept it as the number it is."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            f = float(value)
        except ValueError:
            return value
        return int(f) if f.is_integer() and "e" not in value.lower() and "." not in value else f
    return value


def _grid_values(ctx, path, spec):
    if isinstance(spec, dict):
        if set(spec) != {"log10"} or not isinstance(spec["log10"], list) or len(spec["log10"]) != 2:
            raise ctx.error(path, f"a grid range is written {{log10: [low, high]}} (integer exponents), got {spec!r}")
        lo, hi = (_number(v) for v in spec["log10"])
        if not all(isinstance(v, int) for v in (lo, hi)) or lo > hi:
            raise ctx.error(path, f"log10 range needs integers low <= high, got {spec['log10']!r}")
        return [10.0**k for k in range(lo, hi + 1)]
    if not isinstance(spec, list) or not spec:
        raise ctx.error(path, f"a grid is a non-empty list of values or {{log10: [low, high]}}, got {spec!r}")
    values = [_number(v) for v in spec]
    if len(set(map(repr, values))) != len(values):
        raise ctx.error(path, f"grid values repeat: {spec!r}")
    return values


def _check_param(ctx, path, cls, key, value):
    """Let the estimator validate a value by building it (its own error messages)."""
    try:
        params = cls().get_params()
    except Exception as exc:  # a user's class that cannot be built without arguments
        raise ctx.error(path, f"estimator {cls.__name__} cannot be built with defaults: {exc}") from exc
    if key not in params:
        raise ctx.error(path, f"{cls.__name__} has no parameter {key!r}; valid: {sorted(params)}")
    check = getattr(cls(**{key: value}), "_check_params", None)
    if check is not None:
        try:
            check()
        except ValueError as exc:
            raise ctx.error(path, str(exc)) from exc


def _model(ctx, name, raw):
    path = ("models", name)
    if not isinstance(raw, dict) or "estimator" not in raw:
        raise ctx.error(path, "a model is a mapping with an 'estimator' key (and a 'grid')")
    try:
        cls = resolve_estimator(str(raw["estimator"]))
    except ConfigError as exc:
        raise ctx.error(path + ("estimator",), str(exc)) from None
    if not inspect.isclass(cls) or not hasattr(cls, "fit"):
        raise ctx.error(path + ("estimator",), f"{raw['estimator']!r} is not an estimator class")
    grid_raw = raw.get("grid", {}) or {}
    if not isinstance(grid_raw, dict):
        raise ctx.error(path + ("grid",), "the grid is a mapping parameter -> values")
    grid = {}
    for key, spec in grid_raw.items():
        values = _grid_values(ctx, path + ("grid", key), spec)
        for v in values:
            _check_param(ctx, path + ("grid", key), cls, key, v)
        grid[key] = values
    params = {}
    for key, value in raw.items():
        if key in ("estimator", "grid"):
            continue
        value = _number(value)
        _check_param(ctx, path + (key,), cls, key, value)
        if key in grid:
            raise ctx.error(path + (key,), "set both as a fixed parameter and in the grid")
        params[key] = value
    return ModelSpec(name=str(name), estimator=str(raw["estimator"]), params=params, grid=grid)


def _check_section(ctx, section, raw, cls, not_a_mapping):
    """A config section is a mapping whose keys are fields of ``cls``."""
    if not isinstance(raw, dict):
        raise ctx.error((section,), not_a_mapping)
    allowed = set(cls.__dataclass_fields__)
    for key in raw:
        if key not in allowed:
            raise ctx.error((section, key), f"unknown key; valid keys are {sorted(allowed)}")


def _protocol(ctx, raw):
    if raw is None:
        return Protocol()
    _check_section(ctx, "protocol", raw, Protocol, "protocol is a mapping")
    values = {k: _number(v) for k, v in raw.items()}
    checks = {
        "folds": lambda v: isinstance(v, int) and v >= 2,
        "repeats": lambda v: isinstance(v, int) and v >= 1,
        "seed": lambda v: isinstance(v, int) and v >= 0,
        "inner_folds": lambda v: isinstance(v, int) and v >= 2,
        "fit_timeout": lambda v: v is None or (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)),
        "fit_memory_gb": lambda v: v is None or (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)),
    }
    wants = {"folds": "an integer >= 2", "repeats": "an integer >= 1", "seed": "an integer >= 0",
             "inner_folds": "an integer >= 2", "fit_timeout": "seconds > 0, or null for none",
             "fit_memory_gb": "GiB > 0, or null for none"}
    for key, ok in checks.items():
        if key in values and not ok(values[key]):
            raise ctx.error(("protocol", key), f"must be {wants[key]}, got {values[key]!r}")
    if "train_dcs" in values and not isinstance(values["train_dcs"], bool):
        raise ctx.error(("protocol", "train_dcs"), f"must be true or false, got {values['train_dcs']!r}")
    if values.get("selection", "").startswith("dcs-"):
        values.setdefault("train_dcs", True)
    for key, allowed_values in (("scaling", SCALINGS), ("selection", SELECTIONS), ("after_timeout", AFTER_TIMEOUT),
                                ("standalone_timing", ("none", "first-fold"))):
        if key in values and values[key] not in allowed_values:
            raise ctx.error(("protocol", key), f"must be one of {list(allowed_values)}, got {values[key]!r}")
    for key in ("fit_timeout", "fit_memory_gb"):
        if values.get(key) is not None:
            values[key] = float(values[key])
    return Protocol(**values)


def parse_config(raw, source="<config>", text=""):
    """Validate a config mapping (as ``yaml.safe_load`` returns it)."""
    from ..datasets import UnknownDatasetError, get_entry

    ctx = _Context(source, text)
    if not isinstance(raw, dict):
        raise ctx.error((), "a config is a mapping with keys " + ", ".join(sorted(_TOP_KEYS)))
    for key in raw:
        if key not in _TOP_KEYS:
            raise ctx.error((key,), f"unknown key; valid keys are {sorted(_TOP_KEYS)}")
    kind = raw.get("kind", "grid-search")
    if kind not in KINDS:
        raise ctx.error(("kind",), f"must be one of {list(KINDS)}, got {kind!r}")
    required = ("name", "datasets", "models") if kind == "grid-search" else ("name", "datasets", "analysis")
    for key in required:
        if key not in raw:
            raise ctx.error((key,), "missing (required)")
    if kind == "grid-search" and "analysis" in raw:
        raise ctx.error(("analysis",), "only for kind: dcs-correlation")
    if kind == "dcs-correlation" and "models" in raw:
        raise ctx.error(("models",), "kind: dcs-correlation has no models (it draws random layers)")
    name = raw["name"]
    if not isinstance(name, str) or not name or "/" in name:
        raise ctx.error(("name",), f"a non-empty string without '/', got {name!r}")
    datasets = raw["datasets"]
    if not isinstance(datasets, list) or not datasets:
        raise ctx.error(("datasets",), "a non-empty list of data set ids")
    for i, d in enumerate(datasets):
        try:
            entry = get_entry(str(d))
        except UnknownDatasetError as exc:
            raise ctx.error(("datasets", i), str(exc)) from None
        if not entry.is_binary:
            raise ctx.error(("datasets", i), f"{d!r} is a multiclass data set; the runner's models are binary")
    if len(set(datasets)) != len(datasets):
        raise ctx.error(("datasets",), "a data set is listed twice")
    models, analysis = (), None
    if kind == "grid-search":
        models_raw = raw["models"]
        if not isinstance(models_raw, dict) or not models_raw:
            raise ctx.error(("models",), "a non-empty mapping: model name -> {estimator, grid, fixed parameters}")
        models = tuple(_model(ctx, str(k), v) for k, v in models_raw.items())
    else:
        analysis = _analysis(ctx, raw["analysis"])
    jobs = raw.get("jobs")
    if jobs is not None and not (isinstance(jobs, int) and not isinstance(jobs, bool) and (jobs >= 1 or jobs == -1)):
        raise ctx.error(("jobs",), f"a positive integer or -1 (all cores), got {jobs!r}")
    data = raw.get("data") or {}
    if not isinstance(data, dict) or set(data) - _DATA_KEYS:
        raise ctx.error(("data",), f"a mapping with keys among {sorted(_DATA_KEYS)}")
    return ExperimentConfig(
        name=name, datasets=tuple(str(d) for d in datasets), models=models,
        protocol=_protocol(ctx, raw.get("protocol")), jobs=jobs,
        mirror=data.get("mirror"), data_home=data.get("data_home"), source=source,
        kind=kind, analysis=analysis,
    )


def _analysis(ctx, raw):
    _check_section(ctx, "analysis", raw, CorrelationAnalysis, "a mapping")
    values = dict(raw)
    if "n_hidden" in values:
        hs = values["n_hidden"]
        if not isinstance(hs, list) or not hs or not all(isinstance(h, int) and h >= 1 for h in hs):
            raise ctx.error(("analysis", "n_hidden"), f"a list of integers >= 1, got {hs!r}")
        values["n_hidden"] = tuple(hs)
    for key in ("layers", "betas"):
        if key in values and not (isinstance(values[key], int) and values[key] >= 1):
            raise ctx.error(("analysis", key), f"an integer >= 1, got {values[key]!r}")
    from ..models._features import ACTIVATIONS

    if values.get("activation", "rbf") not in ACTIVATIONS:
        raise ctx.error(("analysis", "activation"), f"must be one of {list(ACTIVATIONS)}")
    if values.get("covariance", "ledoit-wolf") not in ("ledoit-wolf", "empirical"):
        raise ctx.error(("analysis", "covariance"), "must be 'ledoit-wolf' or 'empirical'")
    return CorrelationAnalysis(**values)


def load_config(path):
    """Read and validate a YAML experiment config.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    config : ExperimentConfig
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config ({exc.strerror})") from exc
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    return parse_config(raw, source=str(path), text=text)
