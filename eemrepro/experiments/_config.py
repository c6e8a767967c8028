"""Experiment configs: YAML read at a bounded cost (``eemrepro._yaml``) and validated into typed objects.

Every error names the file, the key and (where YAML knows it) the line, and
lists what is allowed. Example::

    name: quick
    datasets: [heart, ecoli]
    models:
      EEM-rbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [50, 100]}}
      SVM: {estimator: SVM, grid: {C: {log10: [-1, 2]}, gamma: {log10: [-2, 0]}}}
    protocol: {folds: 10, repeats: 1, seed: 0}

A ``readings:`` section names the other readings of choices a paper leaves
open (SPEC section 8); each one is the config with some keys set otherwise,
written as dotted paths, and runs into its own store
(``eemrepro run CONFIG --reading NAME``)::

    readings:
      beta-normal:
        about: "beta ~ N(0, I) instead of U[0, 1]^h"
        set: {analysis.beta: normal}
      per-fold-best:
        set: {tables.selection: best-per-fold}

Keys under ``tables.`` (``selection``, ``metric``) change only how the tables
read the records: a reading with no other key runs nothing and is reported
from the config's own records, or from another reading's records when it
names that reading under ``records``::

      subset-150:
        set: {protocol.train_size: 150}
      subset-150-per-fold-best:
        records: subset-150
        set: {tables.selection: best-per-fold}

A reading that changes two things at once is compared, in the readings
tables, with the reading it names under ``against`` (one that changes only
the other thing) instead of the primary one, so that its counts show what
its own change does::

      inner-5:
        set: {protocol.inner_folds: 5}
      bfsvm-prior-5:
        against: inner-5
        set: {models.B-FSVM.membership: prior-corrected, protocol.inner_folds: 5}
"""

import functools
import inspect
import math
import os
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .._yaml import YAMLDocumentError, load_yaml, load_yaml_file
from ._params import refusal
from ._timeouts import RULES as AFTER_TIMEOUT  # the ledger states the rule; a config names one of its values

# global: min-max on the whole data set (SPEC section 2); per-fold: min-max from each training
# part; standard / standard-per-fold: zero mean, unit variance likewise; none: raw values.
SCALINGS = ("global", "per-fold", "standard", "standard-per-fold", "none")
_TOP_KEYS = {"name", "kind", "datasets", "models", "analysis", "protocol", "jobs", "data", "readings", "reading",
             "baselines", "local_datasets", "paper_models", "tables"}
_READING_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: What a model's or a data set's name may not hold: a record's key joins names with '|' (``record_key``, and a
#: unit's seed ``derive_seed``), and a control character would break a one-line message or a table. (A ',' is
#: fine: the command line's lists keep a name that holds one whole, ``cli._common.split_names``.)
_KEY_BREAKING = re.compile(r"[|\x00-\x1f\x7f]")
_DATA_KEYS = {"mirror", "data_home"}
#: The region of practical equivalence of the reports' Bayesian tests by default (``tables: {rope: ...}``), in the
#: metric's own units (0 to 1): one point of a percent metric.
ROPE = 0.01


class ConfigError(ValueError):
    """A config file that does not validate; the message names file, key and line."""


class ProtocolWarning(UserWarning):
    """A protocol a run follows, but whose numbers a user should know to be weak (inner folds without a
    point of a class): one line naming the config, the key and the fix, said before the first unit."""


def selections():
    """``best-of-grid``, ``nested``, ``best-per-fold`` (optimistic: the test fold picks), or any
    registered criterion (``dcs-gaussian`` for ``dcs_gaussian``)."""
    from ._criteria import criterion_names

    return ["best-of-grid", "nested", "best-per-fold"] + [c.replace("_", "-") for c in criterion_names()]


@dataclass(frozen=True)
class Protocol:
    """SPEC section 2; every ambiguous choice is a key whose default is the spec's.

    ``splitter``: ``stratified-kfold`` (``folds`` per repeat), ``train-test``
    (one stratified split of ``train_size``, a count or a fraction, per repeat;
    a mapping data set -> size gives each data set its own) or ``whole`` (train
    and evaluate on all the data). ``scaling``: ``global`` (min-max on the
    whole data set, SPEC section 2), ``per-fold`` (min-max from each training
    part), ``standard`` / ``standard-per-fold`` (zero mean, unit variance, the
    same two ways) or ``none`` (raw values). ``selection`` picks the
    grid point by ``select_metric`` (best of grid, or nested on ``inner_folds``)
    or by a criterion the fit computes; ``criteria`` are recorded on the
    training part of every fold.
    """

    folds: int = 10
    repeats: int = 5
    seed: int = 0
    splitter: str = "stratified-kfold"
    train_size: float | int | dict | None = None
    scaling: str = "global"
    selection: str = "best-of-grid"
    select_metric: str = "gmean"
    criteria: tuple = ()
    inner_folds: int = 3
    fit_timeout: float | None = 600.0
    after_timeout: str = "skip"
    # Address-space limit (GiB) of the process that fits: past it the fit fails
    # with MemoryError (recorded) instead of taking the machine down.
    fit_memory_gb: float | None = None
    # A path fit times every grid point at once; "first-fold" also times a
    # standalone fit of each point on fold 0 of each repeat (a time table's seconds).
    standalone_timing: str = "none"
    # BLAS threads of each fit (OpenMP: one), fixed whatever --jobs, backend or
    # machine: a thread count that followed cores / workers changed the rounding,
    # hence some records, with --jobs. Recorded in each record, not in its
    # identity: it changes the rounding only, as another BLAS build would.
    fit_threads: int = 1


@dataclass(frozen=True)
class ModelSpec:
    name: str
    estimator: str
    params: dict = field(default_factory=dict)  # fixed parameters
    grid: dict = field(default_factory=dict)  # parameter -> list of values
    per_dataset: dict = field(default_factory=dict)  # data set -> fixed parameters that differ there
    # What the score-based metrics (AUC) read: the decision values, or the predicted labels
    # (one threshold: the balanced accuracy), a reading of some papers' "AUC" (SPEC section 8).
    score: str = "decision"
    # Where a user's "module:Class" is looked up first: the folder of the config that names it.
    home: str | None = field(default=None, compare=False)
    # False in a config read back from a store for the reports: a user's estimator is not imported then.
    imported: bool = field(default=True, compare=False)
    # The class attributes a plan reads (``TRAITS``), as the config's check found them (kept with its verdict,
    # ``_Judge``); None: asked of the class.
    traits: dict | None = field(default=None, compare=False, repr=False)

    def params_for(self, dataset):
        """The fixed parameters on ``dataset`` (``per_dataset`` overrides the model's own)."""
        return {**self.params, **self.per_dataset.get(dataset, {})}

    def estimator_class(self):
        return resolve_estimator(self.estimator, self.home)

    def trait(self, name):
        """The estimator class's ``name`` (one of ``TRAITS``; None where it has none), without importing it where
        the config's check kept it."""
        if self.traits is not None and name in self.traits:
            return self.traits[name]
        return getattr(self.estimator_class(), name, None)

    @property
    def path_param(self):
        """The grid parameter the estimator's ``fit_path`` covers in one fit, if any.

        None for a user's estimator in a config read for the reports (not imported): which points one fit
        covers changes how units group them, not which records they make.
        """
        if not self.imported:
            return None
        name = self.trait("_path_param")
        return name if name in self.grid else None

    def grid_points(self):
        """Every grid point as a dict, in a fixed order."""
        points = [{}]
        for key in sorted(self.grid):
            points = [dict(p, **{key: v}) for p in points for v in self.grid[key]]
        return points


@dataclass(frozen=True)
class Reading:
    """One reading of a paper's open choice: the config with the dotted keys of ``set`` changed."""

    name: str
    set: dict  # dotted key ("analysis.beta") -> value
    about: str = ""
    records: str = ""  # a reading of tables keys only: the reading whose records it reads ("": the primary's)
    against: str = ""  # the reading the readings tables compare it with ("": the primary one)

    def to_dict(self):
        return {"name": self.name, "about": self.about, "set": dict(self.set),
                **({"records": self.records} if self.records else {}),
                **({"against": self.against} if self.against else {})}

    def describe(self):
        """What the reading changes, in one line: its ``about``, else its keys."""
        return self.about or ", ".join(f"{k}: {v}" for k, v in self.set.items())

    @property
    def config_set(self):
        """The keys that change the config (and so the records)."""
        return {k: v for k, v in self.set.items() if not k.startswith(TABLE_KEYS_PREFIX)}

    @property
    def table_set(self):
        """``{"selection": ..., "metric": ...}``: how the tables read the records under this reading."""
        return {k.removeprefix(TABLE_KEYS_PREFIX): v for k, v in self.set.items() if k.startswith(TABLE_KEYS_PREFIX)}

    @property
    def derived(self):
        """Whether the reading changes only how the tables read the records (nothing to run)."""
        return not self.config_set


TABLE_KEYS_PREFIX = "tables."
TABLE_KEYS = ("selection", "metric")


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
    analysis: object = None  # the kind's ``analysis:`` settings (a dataclass), if it has any
    readings: tuple = ()  # of Reading: the other readings this config names
    reading: Reading | None = None  # the reading this config is (None: the primary one)
    home: str | None = field(default=None, compare=False)  # the config file's folder
    # Results folders this config's models are compared with (paths from ``home``; ``_baselines``).
    baselines: tuple = ()
    # A user's own data sets: id -> registry entry of the file (``datasets._local``), registered in this process.
    local_datasets: dict = field(default_factory=dict)
    imported: bool = field(default=True, compare=False)  # False: read for the reports, user estimators not imported
    # The reports' region of practical equivalence (``tables: {rope: ...}``), the metric's units (0 to 1).
    rope: float = ROPE

    def model(self, name):
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(f"the config has no model {name!r}; it has {[m.name for m in self.models]}")

    def to_dict(self):
        lists = lambda d: {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}
        out = {"name": self.name, "kind": self.kind, "datasets": list(self.datasets)}
        if self.models:
            out["models"] = {m.name: {"estimator": m.estimator, **m.params, "grid": m.grid,
                                      **({"per_dataset": m.per_dataset} if m.per_dataset else {}),
                                      **({"score": m.score} if m.score != "decision" else {})}
                             for m in self.models}
        if self.analysis is not None:
            out["analysis"] = lists(asdict(self.analysis))
        out["protocol"] = lists(asdict(self.protocol))
        out["jobs"] = self.jobs
        if self.readings:
            out["readings"] = {r.name: {k: v for k, v in r.to_dict().items() if k != "name"} for r in self.readings}
        if self.reading is not None:
            out["reading"] = self.reading.to_dict()
        if self.baselines:
            out["baselines"] = list(self.baselines)
        if self.rope != ROPE:
            out["tables"] = {"rope": self.rope}
        if self.local_datasets:
            from ..datasets._local import stored_spec

            out["local_datasets"] = {k: stored_spec(e) for k, e in self.local_datasets.items()}
        return out

    def reading_names(self):
        return [r.name for r in self.readings]

    def with_reading(self, name):
        """The config of reading ``name``: its keys set, ``reading`` recording which."""
        for r in self.readings:
            if r.name == name:
                raw = {k: v for k, v in self.to_dict().items() if k not in ("readings", "reading")}
                if self.mirror or self.data_home:
                    raw["data"] = {k: v for k, v in (("mirror", self.mirror), ("data_home", self.data_home)) if v}
                raw = dict(_apply_reading(raw, r), reading=r.to_dict())
                return parse_config(raw, source=f"{self.source or self.name} (reading {name})", home=self.home,
                                    import_estimators=self.imported)
        names = self.reading_names()
        raise ConfigError(f"{self.source or self.name}: no reading {name!r}; "
                          + (f"its readings are {names}" if names else "it names no readings (key 'readings')"))


def resolve_estimator(name, home=None, code=None):
    """A built-in estimator name, ``"module:Class"`` (looked up in ``home`` first) or a registered plug-in name;
    ``code``: the code a run's records name for it (refused where it changed since, ``estimator_class``)."""
    from ..models import estimator_class

    try:
        return estimator_class(name, home, code)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


# -- line numbers -------------------------------------------------------------


def _key_lines(text):
    """{("models", "M", "grid"): line} for every mapping key (a bounded read: ``eemrepro._yaml``)."""
    if not text:
        return {}
    try:
        return load_yaml(text)[1]
    except YAMLDocumentError:
        return {}


class _Context:
    def __init__(self, source, text, lines=None, home=None, import_estimators=True):
        self.source = source
        self.lines = _key_lines(text) if lines is None else lines
        self.home = home  # the config's folder (a user's module beside it is found there)
        self.import_estimators = import_estimators

    def error(self, path, message):
        where = ".".join(str(p) for p in path) or "(top level)"
        line = None
        for k in range(len(path), 0, -1):
            line = self.lines.get(tuple(path[:k]))
            if line:
                break
        at = f", line {line}" if line else ""
        return ConfigError(f"{self.source}{at}: key '{where}': {message}")

    def check_section(self, section, raw, cls, not_a_mapping, extra=()):
        """A config section is a mapping whose keys are fields of ``cls`` (or ``extra``)."""
        if not isinstance(raw, dict):
            raise self.error((section,), not_a_mapping)
        allowed = set(cls.__dataclass_fields__) | set(extra)
        for key in raw:
            if key not in allowed:
                raise self.error((section, key), unknown_key(key, allowed))


def unknown_key(key, allowed):
    """"unknown key; valid keys are [...]", with the closest valid key or two where a typo is likely."""
    import difflib

    close = difflib.get_close_matches(str(key), sorted(map(str, allowed)), n=2, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown key; valid keys are {sorted(allowed)}{hint}"


# -- values -------------------------------------------------------------------


_YAML11_FLOAT = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)[eE][-+]?\d+")


def _number(value):
    """YAML 1.1 reads 1e-10 (no dot) as a string; accept it as the number it is.

    Only that form: any other string ("2", "ten") stays a string, so that a
    quoted number is refused where a number is due, as a word is.
    """
    if isinstance(value, str) and _YAML11_FLOAT.fullmatch(value.strip()):
        return float(value)
    return value


def _grid_values(ctx, path, spec):
    if isinstance(spec, dict):
        if set(spec) != {"log10"} or not isinstance(spec["log10"], list) or len(spec["log10"]) != 2:
            raise ctx.error(path, f"a grid range is written {{log10: [low, high]}} (integer exponents), got {spec!r}")
        lo, hi = (_number(v) for v in spec["log10"])
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi)) or lo > hi:
            raise ctx.error(path, f"log10 range needs integers low <= high, got {spec['log10']!r}")
        if lo < -307 or hi > 307:  # 10.0 ** k is a finite, normal float only within these
            raise ctx.error(path, f"log10 exponents must lie in [-307, 307] (the float range), got {spec['log10']!r}")
        if hi - lo + 1 > MAX_GRID_POINTS:
            raise ctx.error(path, f"{hi - lo + 1:,} values; at most {MAX_GRID_POINTS:,} points per model")
        return [10.0**k for k in range(lo, hi + 1)]
    if not isinstance(spec, list) or not spec:
        raise ctx.error(path, f"a grid is a non-empty list of values or {{log10: [low, high]}}, got {spec!r}")
    values = [_number(v) for v in spec]
    if len(set(map(repr, values))) != len(values):
        raise ctx.error(path, f"grid values repeat: {spec!r}")
    return values


def _check_param(ctx, path, cls, key, value):
    """Let the estimator judge a value before any unit runs (``_params.refusal``: its declared constraints, its
    own check, else a cheap check of the value as built); ``cls`` None: not imported."""
    if cls is None:
        return
    try:
        params = cls().get_params()
    except Exception as exc:  # a user's class that cannot be built without arguments
        raise ctx.error(path, f"estimator {cls.__name__} cannot be built with defaults: {exc}") from exc
    if key not in params:
        raise ctx.error(path, f"{cls.__name__} has no parameter {key!r}; valid: {sorted(params)}")
    problem = refusal(cls, key, value)
    if problem:
        raise ctx.error(path, problem)


#: The most grid points one model may have: a config past it is refused with its count before anything is
#: enumerated (a few {log10: [...]} ranges multiply fast; a real grid has tens to thousands).
MAX_GRID_POINTS = 100_000


def _check_grid_sizes(ctx, models):
    import math

    for spec in models:
        n = math.prod(len(v) for v in spec.grid.values())
        if n > MAX_GRID_POINTS:
            sizes = " x ".join(f"{len(v)} {k}" for k, v in sorted(spec.grid.items()))
            raise ctx.error(("models", spec.name, "grid"), f"{n:,} grid points ({sizes}); at most "
                                                          f"{MAX_GRID_POINTS:,} per model")


def _model(ctx, name, raw, datasets=(), section=("models",), classifier=True):
    path = tuple(section) + (name,)
    _check_name(ctx, path, name, "a model")
    if not isinstance(raw, dict) or "estimator" not in raw:
        raise ctx.error(path, "a model is a mapping with an 'estimator' key (and a 'grid')")
    from ..models._lookup import is_builtin

    # A config read back for the reports names a user's estimator without importing it: the run checked it.
    home = ctx.home
    if "home" in raw:  # where the module of a user's estimator lies, from the config's folder
        if not isinstance(raw["home"], str) or not raw["home"].strip():
            raise ctx.error(path + ("home",), f"a folder (a path from the config's folder), got {raw['home']!r}")
        home = os.path.normpath(os.path.join(ctx.home or ".", raw["home"]))
        ctx = _Context(ctx.source, "", ctx.lines, home=home, import_estimators=ctx.import_estimators)
    imported = ctx.import_estimators or is_builtin(str(raw["estimator"]))
    judge = _Judge(ctx, path, str(raw["estimator"]), classifier) if imported else None
    grid_raw = raw.get("grid", {}) or {}
    if not isinstance(grid_raw, dict):
        raise ctx.error(path + ("grid",), "the grid is a mapping parameter -> values")
    grid = {}
    for key, spec in grid_raw.items():
        values = _grid_values(ctx, path + ("grid", key), spec)
        for v in values:
            judge and judge.asks(path + ("grid", key), key, v)
        grid[key] = values
    params = {}
    from ._metrics import SCORES

    score = raw.get("score", "decision")
    if score not in SCORES:
        raise ctx.error(path + ("score",), f"must be one of {list(SCORES)} (what AUC reads), got {score!r}")
    for key, value in raw.items():
        if key in ("estimator", "grid", "per_dataset", "score", "home"):
            continue
        value = _number(value)
        judge and judge.asks(path + (key,), key, value)
        if key in grid:
            raise ctx.error(path + (key,), "set both as a fixed parameter and in the grid")
        params[key] = value
    per_dataset = {}
    per_raw = raw.get("per_dataset") or {}
    if not isinstance(per_raw, dict):
        raise ctx.error(path + ("per_dataset",), "a mapping data set -> {parameter: value}")
    for dataset, values in per_raw.items():
        where = path + ("per_dataset", dataset)
        if dataset not in datasets:
            raise ctx.error(where, f"not a data set of this config; its data sets are {list(datasets)}")
        if not isinstance(values, dict) or not values:
            raise ctx.error(where, "a non-empty mapping parameter -> value")
        per_dataset[str(dataset)] = {}
        for key, value in values.items():
            value = _number(value)
            judge and judge.asks(where + (key,), key, value)
            if key in grid:
                raise ctx.error(where + (key,), "set both as a per-data-set parameter and in the grid")
            per_dataset[str(dataset)][key] = value
    return ModelSpec(name=str(name), estimator=str(raw["estimator"]), params=params, grid=grid,
                     per_dataset=per_dataset, score=score, home=home, imported=imported,
                     traits=None if judge is None else judge.verdict())


@dataclass
class _Judge:
    """A model's estimator and the parameter values the config gives it, judged by the estimator once the model
    is read (``_estimator``, ``_check_param``), the first refusal raised naming its key and line.

    For one of the package's own estimators the answer "all taken" is kept (``eemrepro._kept``) under the package's
    code, the versions of the libraries its checks consult (``JUDGES``) and the values: the next read of the same
    config (``status``, a resumed run, the reports) imports no estimator and no scikit-learn for it. Any other
    estimator (a user's, scikit-learn's ``sklearn.svm:SVC``) is imported when the model is read, so that a name
    that cannot be imported is said first, and judged every time.
    """

    ctx: object
    path: tuple
    estimator: str
    classifier: bool
    asked: list = field(default_factory=list)
    cls: type = None  # the class, imported where no verdict of it is kept

    def __post_init__(self):
        from ..models._lookup import is_builtin

        if not is_builtin(self.estimator):
            self.cls = _estimator(self.ctx, self.path, self.estimator, self.classifier)

    def asks(self, path, key, value):
        self.asked.append((path, key, value))

    def verdict(self):
        """The class's ``TRAITS``, once it took every value asked (or a kept verdict said so)."""
        from .._kept import kept, stable_text

        what = None if self.cls is not None else (
            f"estimator judged: {_judges_versions()} {self.estimator} {self.classifier} "
            f"{stable_text([(key, value) for _, key, value in self.asked])}")
        return kept(what, self._judge)

    def _judge(self):
        cls = self.cls or _estimator(self.ctx, self.path, self.estimator, self.classifier)
        for path, key, value in self.asked:
            _check_param(self.ctx, path, cls, key, value)
        return {name: getattr(cls, name, None) for name in TRAITS}


#: The distributions whose presence and version the package's estimators' checks consult: scikit-learn's
#: constraint validator, and scikit-learn-intelex (``SVM(solver="onedal")`` is refused without it). A kept verdict
#: is named by their versions ("absent" where one is not installed): an install or an uninstall judges again.
JUDGES = ("scikit-learn", "scikit-learn-intelex")


def _judges_versions():
    from importlib.metadata import PackageNotFoundError, version

    def one(name):
        try:
            return version(name)
        except PackageNotFoundError:
            return "absent"

    return " ".join(f"{name} {one(name)}" for name in JUDGES)


#: The estimator class attributes a plan reads: the grid parameter one ``fit_path`` covers, and the parameters that
#: change only its speed (out of a record's identity).
TRAITS = ("_path_param", "_speed_only_params")


def _estimator(ctx, path, name, classifier):
    """The class a model's ``estimator`` names (imported), checked to be an estimator (a classifier)."""
    try:
        cls = resolve_estimator(str(name), ctx.home)
    except ConfigError as exc:
        raise ctx.error(path + ("estimator",), str(exc)) from None
    if not inspect.isclass(cls) or not hasattr(cls, "fit"):
        raise ctx.error(path + ("estimator",), f"{name!r} is not an estimator class")
    if classifier:
        _check_classifier(ctx, path + ("estimator",), cls, name)
    return cls


def _check_classifier(ctx, path, cls, name):
    """A model scored on its predictions must be a scikit-learn classifier: ``is_classifier`` on an instance
    (``ClassifierMixin``, or the tag a classifier declares in ``__sklearn_tags__``)."""
    from sklearn.base import is_classifier

    try:
        instance = cls()
    except Exception as exc:  # a user's class that cannot be built without arguments
        raise ctx.error(path, f"estimator {cls.__name__} cannot be built with defaults: {exc}") from exc
    try:
        ok = is_classifier(instance)
    except Exception:  # tags that cannot be read
        ok = False
    if not ok:
        raise ctx.error(path, f"{name!r} is not a scikit-learn classifier (is_classifier is false): derive it from "
                              "sklearn.base.ClassifierMixin, or declare the classifier tag in __sklearn_tags__")


def _train_size_ok(size):
    return not isinstance(size, bool) and ((isinstance(size, int) and size >= 2)
                                           or (isinstance(size, float) and 0 < size < 1))


def _positive_number(v):
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and math.isfinite(v))


def _one_of(values):
    return (lambda v: v in values), f"one of {list(values)}"


def protocol_rules():
    """{protocol key: (check, what a value must be)}: what the validator enforces on each key that has a rule
    of its own (and what ``docs/config-reference.md`` prints, generated from here)."""
    from ._metrics import metric_names
    from ._splitters import SPLITTERS

    integer = lambda low: ((lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low),
                           f"an integer >= {low}")
    return {
        "folds": integer(2), "repeats": integer(1), "seed": integer(0),
        "splitter": _one_of(SPLITTERS), "scaling": _one_of(SCALINGS), "selection": _one_of(selections()),
        "select_metric": _one_of(metric_names()), "inner_folds": integer(2),
        "fit_timeout": (_positive_number, "seconds > 0, or null for none"),
        "after_timeout": _one_of(AFTER_TIMEOUT),
        "fit_memory_gb": (_positive_number, "GiB > 0, or null for none"),
        "standalone_timing": _one_of(("none", "first-fold")),
        "fit_threads": integer(1),
    }


def _protocol(ctx, raw, datasets=()):
    if raw is None:
        return Protocol()
    # train_dcs: true (configs before the criteria registry) records both D_CS criteria.
    ctx.check_section("protocol", raw, Protocol, "protocol is a mapping", extra=("train_dcs",))
    values = {k: _number(v) for k, v in raw.items()}
    from ._criteria import criterion_names

    for key, (ok, want) in protocol_rules().items():
        if key in values and not ok(values[key]):
            raise ctx.error(("protocol", key), f"must be {want}, got {values[key]!r}")
    criteria = values.pop("criteria", [])
    if not isinstance(criteria, list) or not all(c in criterion_names() for c in criteria):
        raise ctx.error(("protocol", "criteria"), f"a list of criteria among {criterion_names()}, got {criteria!r}")
    train_dcs = values.pop("train_dcs", False)
    if not isinstance(train_dcs, bool):
        raise ctx.error(("protocol", "train_dcs"), f"must be true or false, got {train_dcs!r}")
    if train_dcs:
        criteria += ["dcs_gaussian", "dcs_kde"]
    if values.get("selection", "best-of-grid") not in ("best-of-grid", "nested", "best-per-fold"):
        criteria.append(values["selection"].replace("-", "_"))  # selecting by a criterion records it
    values["criteria"] = tuple(dict.fromkeys(criteria))
    splitter = values.get("splitter", "stratified-kfold")
    size = values.get("train_size")
    if splitter == "train-test":
        if isinstance(size, dict):
            missing = [d for d in datasets if d not in size]
            extra = [d for d in size if d not in datasets]
            if missing or extra:
                raise ctx.error(("protocol", "train_size"), "a per-data-set train_size names every data set of "
                                f"the config and no other: missing {missing}, not in the config {extra}")
            size = values["train_size"] = {str(d): _number(v) for d, v in size.items()}
            for d, v in size.items():
                if not _train_size_ok(v):
                    raise ctx.error(("protocol", "train_size", d), f"a count >= 2 or a fraction in (0, 1), got {v!r}")
        elif not _train_size_ok(size):
            raise ctx.error(("protocol", "train_size"), "splitter: train-test needs train_size, a count >= 2 "
                                                        "or a fraction in (0, 1) (or a mapping data set -> one), "
                                                        f"got {size!r}")
        _check_train_sizes(ctx, datasets, size)
    elif size is not None:
        raise ctx.error(("protocol", "train_size"), f"only for splitter: train-test (the splitter is {splitter})")
    for key in ("fit_timeout", "fit_memory_gb"):
        if values.get(key) is not None:
            values[key] = float(values[key])
    _check_class_sizes(ctx, datasets, values)
    return Protocol(**values)


def _class_sizes(dataset):
    """The class sizes of a registry data set as loaded (its entry's ``expected``), or None if not recorded."""
    from ..datasets import get_entry

    expected = get_entry(str(dataset)).expected or {}
    if "class_counts" in expected:
        return list(expected["class_counts"])
    if "n_pos" in expected and "n_neg" in expected:
        return [expected["n_neg"], expected["n_pos"]]
    return None


def split_test_share(dataset, train_size):
    """The test part's share of ``dataset`` under a stratified train-test split of ``train_size`` (a count, a
    fraction, or a mapping data set -> one; ``floor(fraction * n)`` points train, as scikit-learn's
    ``StratifiedShuffleSplit`` takes them): what the Bayesian correlated t-test's correlation is (Nadeau and
    Bengio: n_test / n). None where the data set's size is not recorded (its entry's ``expected``)."""
    import math

    try:
        sizes = _class_sizes(dataset)
    except Exception:  # a user's file named by a stored config, not registered in this process
        return None
    value = train_size.get(str(dataset)) if isinstance(train_size, dict) else train_size
    if not sizes or value is None:
        return None
    n = sum(sizes)
    n_train = math.floor(value * n) if isinstance(value, float) else int(value)
    return (n - n_train) / n if 0 < n_train < n else None


def _check_class_sizes(ctx, datasets, values):
    """Every class in every part, for each data set of the protocol ``values`` (its mapping, checked): under
    stratified k-fold a class smaller than ``folds`` is refused; under nested selection, whatever the splitter,
    inner folds that outnumber what a training part holds of every class (scikit-learn cannot split it) are
    refused (fewer of one class only: ``inner_folds_notes``, said before a run). Named, with the fix."""
    splitter, folds = values.get("splitter", "stratified-kfold"), values.get("folds", 10)
    for d in datasets:
        sizes = [c for c in (_class_sizes(d) or ()) if c > 0]
        if splitter == "stratified-kfold" and sizes and min(sizes) < folds:
            named = _named(d)
            raise ctx.error(("protocol", "folds"), f"{folds} folds, but data set {named} has a class of "
                                                   f"{min(sizes)} (class sizes {sizes}): some test folds would hold "
                                                   f"none of it; use at most {min(sizes)} folds or leave {named} out")
        short = _inner_folds_short(values, d)
        if short is not None and short[1]:
            raise ctx.error(("protocol", "inner_folds"), short[0])


def inner_folds_notes(config):
    """One line for each data set of ``config`` whose training parts may hold fewer points of a class than its
    nested selection's ``inner_folds`` (some inner test parts then hold none of that class: scikit-learn's
    "least populated class" warning), naming the config, the key, the data set and the fix; said by a run and
    its dry run before the first unit. (Where every class falls short, reading the config refused it.)"""
    values = asdict(config.protocol)
    shorts = (_inner_folds_short(values, d) for d in config.datasets)
    return [f"{config.source or config.name}: key 'protocol.inner_folds': {short[0]}"
            for short in shorts if short is not None]


def _inner_folds_short(values, dataset):
    """(the words, whether every class falls short) where the inner folds of nested selection in the protocol
    ``values`` outnumber the points of a class a training part of ``dataset`` may hold; None where they fit,
    under another selection, or where the data set's class sizes are not recorded. The one rule of every
    splitter (``_trained_counts``), with its fix."""
    sizes = [c for c in (_class_sizes(dataset) or ()) if c > 0]
    if values.get("selection") != "nested" or not sizes:
        return None
    inner, splitter, folds = values.get("inner_folds", 3), values.get("splitter", "stratified-kfold"), \
        values.get("folds", 10)
    size = values.get("train_size")
    n_train = size.get(str(dataset)) if isinstance(size, dict) else size
    if isinstance(n_train, float):
        n_train = math.floor(n_train * sum(sizes))  # (as scikit-learn's StratifiedShuffleSplit takes it)
    counts = _trained_counts(splitter, sizes, folds, n_train)
    if min(counts) >= inner:
        return None
    # Refused where a training part may hold fewer than inner_folds of every class (scikit-learn could not split
    # it: the run's units would fail); the fewest of each class may fall in different parts, so it may not.
    every = max(counts) < inner
    return (f"{inner} inner folds, but the training parts of data set {_named(dataset)} hold as few as "
            f"{min(counts)} point(s) of a class (class sizes {sizes}): "
            + ("a training part may hold fewer than that of every class, and scikit-learn could not make its "
               "inner folds" if every
               else "some inner test parts hold none of it")
            + "; " + _inner_folds_fix(splitter, sizes, folds, n_train, inner, min(counts), dataset), every)


def _named(dataset):
    """A data set as a message names it: a user's own with its file."""
    from ..datasets import get_entry

    entry = get_entry(str(dataset))
    return f"{dataset} ({entry.files[0].local})" if entry.local else dataset


def _trained_counts(splitter, sizes, folds, n_train):
    """The fewest points of each class (of ``sizes``) a training part of ``splitter`` may hold: under stratified
    k-fold each test fold takes at most ceil(c / folds) of a class of c; under a stratified train-test split of
    ``n_train`` rows scikit-learn's ``StratifiedShuffleSplit`` gives each class floor(c / n * n_train) and the
    rows left one each to the largest remainders, ties drawn at random (a class that may lose the draw counted
    without its row); the whole set trains otherwise."""
    if splitter == "stratified-kfold":
        return [c - math.ceil(c / folds) for c in sizes]
    if splitter == "train-test":
        shares = [c / sum(sizes) * n_train for c in sizes]  # (scikit-learn's own order of operations)
        rests = [s - math.floor(s) for s in shares]
        left = n_train - sum(math.floor(s) for s in shares)
        return [math.floor(s) + (sum(x >= r for x in rests) <= left) for s, r in zip(shares, rests, strict=True)]
    return list(sizes)


def _inner_folds_fix(splitter, sizes, folds, n_train, inner, low, dataset):
    """What makes ``inner`` inner folds fit a data set of class ``sizes`` whose training parts hold as few as
    ``low`` of a class: fewer inner folds, more outer folds (k-fold) or training rows (train-test), else leaving
    it out."""
    ways = [f"inner_folds <= {low}"] if low >= 2 else []
    if splitter == "stratified-kfold" and min(sizes) > inner:  # c - ceil(c / F) >= inner: F >= c / (c - inner)
        ways.append(f"folds >= {math.ceil(min(sizes) / (min(sizes) - inner))}")
    elif splitter == "train-test":
        n, start = sum(sizes), max(n_train + 1, (inner - 1) * sum(sizes) // min(sizes))  # (none below gives inner)
        more = next((m for m in range(start, n - len(sizes) + 1)
                     if min(_trained_counts(splitter, sizes, folds, m)) >= inner), None)
        if more is not None:
            ways.append(f"train_size: {more} (rows)")
    return "use " + " or ".join(ways) if ways else f"leave {dataset} out"


def _check_train_sizes(ctx, datasets, size):
    """A stratified train-test split needs a point of every class on each side (scikit-learn's
    ``StratifiedShuffleSplit``: ``floor(train_size * n)`` or the count, at least the number of classes k, at most
    n - k): a data set whose split cannot be made is refused, named with the valid range, before anything runs."""
    import math

    for d in datasets:
        sizes = [c for c in (_class_sizes(d) or ()) if c > 0]
        if not sizes:
            continue
        value = size[str(d)] if isinstance(size, dict) else size
        key = ("protocol", "train_size") + ((str(d),) if isinstance(size, dict) else ())
        n, k = sum(sizes), len(sizes)
        named = _named(d)
        if min(sizes) < 2:
            raise ctx.error(key, f"data set {named} has a class of 1 point (class sizes {sizes}): a stratified "
                                 "split needs two of each class; leave it out or use splitter: stratified-kfold")
        n_train = math.floor(value * n) if isinstance(value, float) else value
        if k <= n_train <= n - k:
            continue
        low, high = math.ceil(k / n * 1000), math.floor((n - k + 1) / n * 1000)  # (in thousandths)
        while math.floor(low / 1000 * n) < k:
            low += 1
        while math.floor(high / 1000 * n) > n - k:
            high -= 1
        raise ctx.error(key, f"{value!r} leaves {n_train} of the {n} points of data set {named} for training and "
                             f"{n - n_train} for testing; a stratified split needs at least one of each of its {k} "
                             f"classes on each side: use a count from {k} to {n - k} or a fraction from "
                             f"{low / 1000:g} to {high / 1000:g}")


def _set_dotted(raw, dotted, value):
    """``raw`` with ``raw[a][b][c] = value`` for ``dotted`` "a.b.c" (a deep copy along the path)."""
    head, _, rest = dotted.partition(".")
    out = dict(raw)
    if not rest:
        out[head] = value
        return out
    inner = out.get(head)
    out[head] = _set_dotted(inner if isinstance(inner, dict) else {}, rest, value)
    return out


def _apply_reading(raw, reading):
    """The raw config with the keys ``reading`` sets in it (its ``tables.`` keys are the reports')."""
    for key, value in reading.config_set.items():
        raw = _set_dotted(raw, key, value)
    return raw


def _reading(ctx, path, name, spec):
    if not isinstance(name, str) or not _READING_NAME.fullmatch(name):
        raise ctx.error(path, f"a reading's name is letters, digits, '.', '_' or '-' (a folder name), got {name!r}")
    if not isinstance(spec, dict) or set(spec) - {"about", "set", "name", "records", "against"} or "set" not in spec:
        raise ctx.error(path, "a reading is a mapping {set: {dotted.key: value, ...}, about: text}"
                              " (and records: <reading> for one of tables keys on another reading's records,"
                              " against: <reading> to be compared with another reading than the primary one)")
    records, against = spec.get("records") or "", spec.get("against") or ""
    for key, value in (("records", records), ("against", against)):
        if not isinstance(value, str) or (value and not _READING_NAME.fullmatch(value)) or value == name:
            raise ctx.error(path + (key,), f"the name of another reading, got {value!r}")
    about = spec.get("about") or ""
    if not isinstance(about, str):
        raise ctx.error(path + ("about",), f"a line of text, got {about!r}")
    changes = spec["set"]
    if not isinstance(changes, dict) or not changes:
        raise ctx.error(path + ("set",), "a non-empty mapping of dotted keys (analysis.beta) to values")
    heads = sorted(_TOP_KEYS - {"readings", "reading", "name", "baselines", "local_datasets"} | {"tables"})
    for key, value in changes.items():
        head, _, rest = str(key).partition(".")
        if head not in heads:
            raise ctx.error(path + ("set", key), f"a dotted key under one of {heads}")
        if head == "tables":
            from ._metrics import metric_names

            allowed = {"selection": selections(), "metric": metric_names()}
            if rest not in allowed:
                raise ctx.error(path + ("set", key), f"the tables' keys are {list(TABLE_KEYS)}")
            if value not in allowed[rest]:
                raise ctx.error(path + ("set", key), f"must be one of {allowed[rest]}, got {value!r}")
    reading = Reading(name=name, set={str(k): _number(v) for k, v in changes.items()}, about=about, records=records,
                      against=against)
    if records and not reading.derived:
        raise ctx.error(path + ("set",), f"a reading on the records of reading {records!r} sets only tables "
                                         f"keys ({list(TABLE_KEYS)}); {sorted(reading.config_set)} change the records")
    return reading


def _readings(ctx, raw):
    """The ``readings:`` section, each reading checked by parsing the config it gives."""
    section = raw.get("readings")
    if section is None:
        return ()
    if not isinstance(section, dict) or not section:
        raise ctx.error(("readings",), "a mapping: reading name -> {set: {dotted.key: value}, about: text}")
    base = {k: v for k, v in raw.items() if k not in ("readings", "reading")}
    out = []
    for name, spec in section.items():
        reading = _reading(ctx, ("readings", name), name, spec)
        try:
            parse_config(_apply_reading(base, reading), source=f"{ctx.source} (reading {name})", home=ctx.home,
                         import_estimators=ctx.import_estimators)
        except ConfigError as exc:
            raise ctx.error(("readings", name, "set"), f"gives a config that does not validate: {exc}") from None
        out.append(reading)
    by_name = {r.name: r for r in out}
    for r in out:
        if r.records and (r.records not in by_name or by_name[r.records].derived):
            stored = [n for n, o in by_name.items() if not o.derived]
            raise ctx.error(("readings", r.name, "records"),
                            f"names no reading of this config that stores records; those are {stored}")
        if r.against and r.against not in by_name:
            raise ctx.error(("readings", r.name, "against"),
                            f"names no reading of this config; its readings are {sorted(by_name)}")
    return tuple(out)


def parse_config(raw, source="<config>", text="", lines=None, home=None, import_estimators=True):
    """Validate a config mapping (as ``yaml.safe_load`` returns it); ``lines``: its keys' lines, if known.

    ``home``: the config's folder, where a user's ``module:Class`` is looked up
    first. ``import_estimators=False`` reads a stored config for the reports:
    a user's estimator is named, not imported (its module may be gone).
    """
    from ..datasets import UnknownDatasetError, get_entry

    ctx = _Context(source, text, lines, home=home, import_estimators=import_estimators)
    if not isinstance(raw, dict):
        raise ctx.error((), "a config is a mapping with keys " + ", ".join(sorted(_TOP_KEYS)))
    for key in raw:
        if key not in _TOP_KEYS:
            raise ctx.error((key,), unknown_key(key, _TOP_KEYS))
    from ._kinds import get_kind, kind_names

    kind_name = raw.get("kind", "grid-search")
    if kind_name not in kind_names():
        raise ctx.error(("kind",), f"must be one of {kind_names()}, got {kind_name!r}")
    kind = get_kind(kind_name)
    required = ["name", "datasets"] + (["models"] if kind.needs_models and "paper_models" not in raw else []) \
        + (["analysis"] if kind.analysis_cls is not None and not kind.analysis_optional else [])
    for key in required:
        if key not in raw:
            raise ctx.error((key,), "missing (required)")
    if kind.analysis_cls is None and "analysis" in raw:
        raise ctx.error(("analysis",), f"kind: {kind_name} has no analysis section")
    if not kind.needs_models and "models" in raw:
        raise ctx.error(("models",), f"kind: {kind_name} has no models")
    name = raw["name"]
    if not isinstance(name, str) or not name or "/" in name:
        raise ctx.error(("name",), f"a non-empty string without '/', got {name!r}")
    datasets = raw["datasets"]
    if not isinstance(datasets, list) or not datasets:
        raise ctx.error(("datasets",), "a non-empty list of data set ids")
    for i, d in enumerate(datasets):
        _check_name(ctx, ("datasets", i), d, "a data set")
    local = _local_datasets(ctx, raw.get("local_datasets"), datasets)
    for i, d in enumerate(datasets):
        try:
            get_entry(str(d))
        except UnknownDatasetError as exc:
            raise ctx.error(("datasets", i), str(exc)) from None
    _check_distinct_datasets(ctx, datasets)
    models, analysis = (), None
    if not kind.needs_models and "paper_models" in raw:
        raise ctx.error(("paper_models",), f"kind: {kind_name} has no models")
    if kind.needs_models:
        models_raw = raw.get("models", {})
        if not isinstance(models_raw, dict) or (not models_raw and "paper_models" not in raw):
            raise ctx.error(("models",), "a non-empty mapping: model name -> {estimator, grid, fixed parameters}")
        models_raw = {**_paper_models(ctx, raw.get("paper_models"), kind_name, datasets, models_raw), **models_raw}
        _check_one_form(ctx, lambda _, name: ("models", name), models_raw, "model")
        models = tuple(_model(ctx, str(k), v, datasets, classifier=kind.models_are == "classifier")
                       for k, v in models_raw.items())
        _check_grid_sizes(ctx, models)
    if kind.analysis_cls is not None:
        analysis = kind.parse_analysis(ctx, raw.get("analysis", {}))
    jobs = raw.get("jobs")
    if jobs is not None and not (isinstance(jobs, int) and not isinstance(jobs, bool) and (jobs >= 1 or jobs == -1)):
        raise ctx.error(("jobs",), f"a positive integer or -1 (all cores), got {jobs!r}")
    data = raw.get("data") or {}
    if not isinstance(data, dict) or set(data) - _DATA_KEYS:
        raise ctx.error(("data",), f"a mapping with keys among {sorted(_DATA_KEYS)}")
    reading = None
    if raw.get("reading") is not None:
        if "readings" in raw:
            raise ctx.error(("reading",), "a reading's config (key 'reading') names no other readings")
        spec = raw["reading"]
        reading = _reading(ctx, ("reading",), spec.get("name") if isinstance(spec, dict) else None, spec)
    return ExperimentConfig(
        name=name, datasets=tuple(str(d) for d in datasets), models=models,
        protocol=_protocol(ctx, raw.get("protocol"), tuple(str(d) for d in datasets)), jobs=jobs,
        mirror=data.get("mirror"), data_home=data.get("data_home"), source=source,
        kind=kind_name, analysis=analysis, readings=_readings(ctx, raw), reading=reading,
        home=home, imported=import_estimators, baselines=_baselines(ctx, raw.get("baselines")),
        local_datasets=local, rope=_tables(ctx, raw.get("tables")),
    )


def _tables(ctx, raw):
    """The ``tables:`` section: how the reports read the records (its one key, ``rope``); the rope it sets."""
    if raw is None:
        return ROPE
    if not isinstance(raw, dict):
        raise ctx.error(("tables",), "a mapping with the key rope")
    for key in raw:
        if key != "rope":
            raise ctx.error(("tables", key), unknown_key(key, {"rope"}))
    rope = _number(raw.get("rope", ROPE))
    if isinstance(rope, bool) or not isinstance(rope, (int, float)) or not 0 <= rope < 1:
        raise ctx.error(("tables", "rope"), "a number at least 0 and below 1 in the metric's own units (0.01 is "
                                            f"one point of a percent metric), got {rope!r}")
    return float(rope)


def key_breaking(name):
    """The first character of ``name`` (a model's or a data set's) that the store's record keys or the command
    line's lists cannot carry (``_KEY_BREAKING``), or None."""
    found = _KEY_BREAKING.search(str(name))
    return found.group() if found else None


def _check_name(ctx, path, name, what):
    char = key_breaking(name)
    if char is not None or not str(name).strip():
        held = f"may not hold {char!r}" if char is not None else "may not be empty"
        raise ctx.error(path, f"{what}'s name {held} (a record's key joins names with '|'; a control "
                              "character breaks messages and tables): rename it")


def _check_one_form(ctx, path, names, what):
    """Two of ``names`` that are one text in two Unicode forms (an accent as one character or as two) print
    alike in every table but are two keys of the store: refused, both named by their code points."""
    seen = {}
    for i, name in enumerate(map(str, names)):
        other = seen.setdefault(unicodedata.normalize("NFC", name), name)
        if other != name:
            raise ctx.error(path(i, name), f"{what} {ascii(name)} is {ascii(other)} in another Unicode form: they "
                                           "print alike in every table; rename one")


def _check_distinct_datasets(ctx, datasets):
    if len(set(datasets)) != len(datasets):
        raise ctx.error(("datasets",), "a data set is listed twice")
    _check_one_form(ctx, lambda i, _: ("datasets", i), datasets, "data set")


def _paper_models(ctx, names, kind, datasets, own):
    """``paper_models:``: a paper's model set (or a list of them), its models with their published grids
    (``_model_sets``), put before the config's own ``models:``; a paper's per-data-set parameters kept for the
    config's data sets among its own."""
    from ._model_sets import model_set, model_set_names

    if names is None:
        return {}
    names = [names] if isinstance(names, str) else names
    known = model_set_names()
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ctx.error(("paper_models",), f"a model set's name, or a list of them ({known}), got {names!r}")
    out = {}
    for name in names:
        if name not in known:
            import difflib

            close = difflib.get_close_matches(name, known, n=1)
            raise ctx.error(("paper_models",), f"no model set {name!r}; the model sets are {known}"
                                               + (f"; did you mean {close[0]!r}?" if close else ""))
        try:
            models, set_kind = model_set(name)
        except ValueError as exc:
            raise ctx.error(("paper_models",), str(exc)) from None
        if set_kind != kind:
            raise ctx.error(("paper_models",), f"model set {name!r} is of kind {set_kind}, this config of {kind}")
        for model, spec in models.items():
            if model in out or model in own:
                raise ctx.error(("models", model) if model in own else ("paper_models",),
                                f"model {model!r} is also in model set {name!r}: rename it")
            spec = dict(spec)
            if "per_dataset" in spec:
                kept = {d: v for d, v in spec["per_dataset"].items() if d in set(map(str, datasets))}
                spec = {k: v for k, v in spec.items() if k != "per_dataset"} | ({"per_dataset": kept} if kept else {})
            out[model] = spec
    return out


_LOCAL_KEYS = {"file", "format", "target", "positive", "classes", "columns", "feature_columns", "sha256", "n", "d",
               "class_counts"}


def _local_datasets(ctx, raw, datasets):
    """``local_datasets:``: id -> {file, format, target, positive}, a user's own files, each read and checked
    now (a stored config, read for the reports, is taken as it is: the file may be gone) and registered."""
    from ..datasets import DatasetError, local_entry, register_local

    if raw is None:
        return {}
    if not isinstance(raw, dict) or not raw:
        raise ctx.error(("local_datasets",), "a mapping id -> {file, target, positive} (a CSV, ARFF or LIBSVM file)")
    out = {}
    for name, spec in raw.items():
        where = ("local_datasets", name)
        if not isinstance(spec, dict) or "file" not in spec:
            raise ctx.error(where, "a mapping with a 'file' (and 'target', 'positive', 'format' where needed)")
        unknown = set(spec) - _LOCAL_KEYS
        if unknown:
            raise ctx.error(where + (sorted(unknown)[0],), unknown_key(sorted(unknown)[0], _LOCAL_KEYS))
        if "columns" in spec and (not isinstance(spec["columns"], list) or not spec["columns"]
                                  or not all(isinstance(c, str) for c in spec["columns"])):
            raise ctx.error(where + ("columns",), f"a list of the feature columns' names, got {spec['columns']!r}")
        if spec.get("positive") is not None and not isinstance(spec["positive"], list):
            spec = dict(spec, positive=[spec["positive"]])
        if str(name) not in map(str, datasets):
            same = [d for d in map(str, datasets) if unicodedata.normalize("NFC", d) ==
                    unicodedata.normalize("NFC", str(name))]
            raise ctx.error(where, f"{ascii(str(name))} is {ascii(same[0])} of 'datasets' in another Unicode form: "
                                   "they print alike; write both the same way" if same else
                            f"not in the config's 'datasets' {list(datasets)}; list it there to run it")
        try:
            entry = local_entry(str(name), spec, home=ctx.home, read=ctx.import_estimators)
            register_local(entry)
        except DatasetError as exc:
            raise ctx.error(where, str(exc)) from None
        out[str(name)] = entry
    return out


def _baselines(ctx, raw):
    """``baselines:``: results folders to compare with (checked by the run, ``_baselines.check_baselines``)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw or not all(isinstance(b, str) and b.strip() for b in raw):
        raise ctx.error(("baselines",), f"a non-empty list of results folders (paths from the config's folder, "
                                        f"such as ../results/uci), got {raw!r}")
    if len(set(raw)) != len(raw):
        raise ctx.error(("baselines",), "a results folder is listed twice")
    return tuple(raw)


def load_config(path, import_estimators=True):
    """Read and validate a YAML experiment config.

    Parameters
    ----------
    path : str or Path
    import_estimators : bool
        False to read a stored config for the reports: a user's estimator is
        named, not imported.

    Returns
    -------
    config : ExperimentConfig
    """
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        stat = None
    if stat is None or import_estimators:  # a run reads its config (and the files it names) afresh
        return _load_config.__wrapped__(path, None, import_estimators)
    return _load_config(path, (stat.st_mtime_ns, stat.st_size, stat.st_ino), import_estimators)


@functools.lru_cache(maxsize=64)
def _load_config(path, version, import_estimators):
    """A config file read and validated once per version (mtime, size, inode) of the file: the readers
    of one command read each store's config.yaml several times (a stored config, whose files are not read)."""
    try:
        raw, lines = load_yaml_file(path)
    except YAMLDocumentError as exc:
        raise ConfigError(str(exc)) from None
    # The folder as an absolute path: a worker started before the caller changed folder (a reused loky
    # worker, a Dask worker elsewhere) finds a module beside the config by it all the same.
    return parse_config(raw, source=str(path), lines=lines, home=str(path.resolve().parent),
                        import_estimators=import_estimators)
