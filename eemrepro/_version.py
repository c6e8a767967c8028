"""The package's version, in a module that imports nothing of the package (the store writes it in its marker)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("eemrepro")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
