"""Experiments: YAML configs, grid search under repeated stratified CV, a resumable store.

Data flows config -> units -> runner -> result store; selection of the grid
point is computed from stored records (``select``), never during a run.
"""

from ._config import ConfigError, ExperimentConfig, ModelSpec, Protocol, load_config, parse_config
from ._execute import gmean_score, run_unit
from ._runner import RunSummary, run_experiment
from ._selection import grid_summary, records_frame, select
from ._store import ResultStore
from ._units import Unit, derive_seed, enumerate_units

__all__ = [
    "load_config", "parse_config", "ConfigError", "ExperimentConfig", "ModelSpec", "Protocol",
    "run_experiment", "RunSummary", "run_unit", "gmean_score", "ResultStore",
    "select", "grid_summary", "records_frame", "enumerate_units", "derive_seed", "Unit",
]
