"""Reports: the registered papers' tables and figures from stored results, and ``check``.

A report never runs a model: everything is computed from the result store.
What tables and figures exist is declared by the paper plug-ins
(``eemrepro.papers``) with :class:`TableSpec` and :class:`FigureSpec`.
"""

from ._build import build_tables
from ._check import Tolerance, ToleranceError, check, load_tolerance, pin_differences, summary_line
from ._claims import Claim, ClaimResult, evaluate_claims
from ._figures import build_figures, scatter_figure, sweep_figure
from ._readings import derived_readings, reading_stores, readings_frames
from ._records import NoRecordsError, Records
from ._run_table import run_table
from ._shapes import Table, TableShape, register_shape, shape_names, unregister_shape
from ._site import build_report
from ._spec import FigureSpec, Paper, TableSpec, published, registered_figures, registered_tables
from .._stats import DrawRule, average_ranks, ranks_and_tests, wins_draws_losses
from ._tables import (
    build_table,
    correlation_table,
    metric_table,
    time_table,
)

__all__ = [
    "build_tables", "build_figures", "build_report", "Claim", "ClaimResult", "evaluate_claims",
    "check", "load_tolerance", "pin_differences", "summary_line",
    "Tolerance", "ToleranceError", "Records", "NoRecordsError", "run_table",
    "TableSpec", "FigureSpec", "Paper", "registered_tables", "registered_figures", "published",
    "build_table", "metric_table", "time_table", "correlation_table", "wins_draws_losses", "ranks_and_tests",
    "DrawRule", "average_ranks", "Table", "TableShape", "register_shape", "unregister_shape",
    "shape_names",
    "scatter_figure", "sweep_figure", "reading_stores", "derived_readings", "readings_frames",
]
