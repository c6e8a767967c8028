"""Table shapes, registered as experiment kinds are (``experiments._kinds``): a table's shape is a plug-in.

``_base`` says the protocol a shape follows and ``Table``, one table as every
output reads it; one module per built-in shape (``metric``, ``time``,
``correlation``) registers it. The benchmark table of any store
(``_benchmark``) is a metric table with no published cell. A new shape is one
module: a ``TableShape`` subclass passed to ``register_shape``.
"""

from . import _correlation, _metric, _time  # noqa: F401  (each registers its shape)
from ._base import (
    UNJUDGED,
    VERDICTS,
    Table,
    TableShape,
    register_shape,
    shape_names,
    shape_of,
    unregister_shape,
)
from ._correlation import correlation_frame, correlation_rows, correlation_table
from ._metric import metric_frame, metric_rows, metric_table
from ._time import time_frame, time_rows, time_table

__all__ = ["Table", "TableShape", "register_shape", "unregister_shape", "shape_names", "shape_of", "VERDICTS",
           "UNJUDGED",
           "metric_table", "metric_rows", "metric_frame", "time_table", "time_rows", "time_frame",
           "correlation_table", "correlation_rows", "correlation_frame"]
