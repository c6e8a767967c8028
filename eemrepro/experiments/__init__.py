"""Experiments: YAML configs, experiment kinds, splitters, metrics, selection, the runner.

Data flows config -> units (the config's kind) -> runner -> result store (``eemrepro.store``);
selection of the grid point is computed from stored records (``select``),
never during a run. Nothing here knows a paper: kinds, metrics and criteria
are registries a plug-in can add to.
"""

from ..store import ResultStore  # noqa: E402  (re-exported: the runner writes it, the reports read it)

# The built-in experiment kinds register themselves on import (after the kind registry).
from . import _correlation_kind, _embedding_kind, _grid, _projection_kind  # noqa: E402, F401, I001
from ._config import (
    ConfigError,
    ExperimentConfig,
    ModelSpec,
    Protocol,
    ProtocolWarning,
    Reading,
    load_config,
    parse_config,
)
from ._criteria import Criterion, criterion_names, get_criterion, register_criterion
from ._kinds import ExperimentKind, get_kind, kind_names, register_kind
from ._metrics import Metric, get_metric, metric_names, register_metric, score_all
from ._model_sets import ModelSet, model_set_names, register_model_set
from ._plan import Plan, RunOptions, done_keys, plan_run
from ._run_folder import unfinished_cells_in
from ._runner import ChangedConfigError, RunInterrupted, RunSummary, enumerate_units, run_experiment
from ._selection import grid_summary, records_frame, select
from ._splitters import (
    StratifiedKFoldSplitter,
    StratifiedTrainTestSplitter,
    WholeDataSplitter,
    derive_seed,
    make_splitter,
)
from ._units import Unit

__all__ = [
    "load_config", "parse_config", "ConfigError", "ProtocolWarning", "ExperimentConfig", "ModelSpec", "Protocol",
    "Reading",
    "run_experiment", "RunSummary", "ChangedConfigError", "ResultStore", "enumerate_units", "Unit",
    "unfinished_cells_in", "done_keys", "RunInterrupted", "Plan", "RunOptions", "plan_run",
    "select", "grid_summary", "records_frame",
    "ExperimentKind", "register_kind", "get_kind", "kind_names",
    "Metric", "register_metric", "get_metric", "metric_names", "score_all",
    "Criterion", "register_criterion", "get_criterion", "criterion_names",
    "ModelSet", "register_model_set", "model_set_names",
    "StratifiedKFoldSplitter", "StratifiedTrainTestSplitter", "WholeDataSplitter", "make_splitter", "derive_seed",
]
