"""eemrepro: reproduce the Extreme Entropy Machines experiments.

The package is laid out as the data flows: ``models`` (estimators),
``datasets``, ``experiments`` (config, kinds, runner), ``store`` (the result
store), ``reports`` and ``cli``. ``read_results`` gives stored results as a
pandas DataFrame.
"""

from ._version import __version__


def read_results(dirs, columns=None):
    """Stored results as a DataFrame, one row per record (see :func:`eemrepro.store.read_results`)."""
    from .store import read_results as _read

    return _read(dirs, columns=columns)


__all__ = ["__version__", "read_results"]
