"""Reports: the papers' tables and figures from stored results, and ``check``.

A report never runs a model: everything is computed from the result store.
"""

from ._build import build_tables
from ._check import Tolerance, ToleranceError, check, load_tolerance, pin_differences, summary_line
from ._figures import build_figures, scatter_figure, stability_figure
from ._render import load_results
from ._tables import correlation_table, gmean_table, published, ranks_and_tests, time_table, wins_draws_losses

__all__ = [
    "build_tables", "build_figures", "check", "load_tolerance", "pin_differences", "summary_line",
    "Tolerance", "ToleranceError",
    "load_results", "gmean_table", "time_table", "correlation_table", "wins_draws_losses", "ranks_and_tests",
    "published", "scatter_figure", "stability_figure",
]
