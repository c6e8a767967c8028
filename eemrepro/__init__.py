"""eemrepro: reproduce the Extreme Entropy Machines experiments.

The package is laid out as the data flows: ``models`` (estimators),
``datasets``, ``experiments`` (config, runner, result store), ``reports`` and
``cli``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("eemrepro")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
