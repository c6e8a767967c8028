"""An estimator class by the name a config or a stored record gives it.

Three kinds of name (``estimator_class``):

* a built-in estimator (``EEM``, ``SVM``, ...);
* ``"module:Class"``: a user's classifier, its module looked up first in the
  folder of the config that names it (``home``), then on the import path;
* a short name registered by an installed package under the entry-point group
  ``eemrepro.estimators`` (as pytest and benchopt find their plug-ins)::

      [project.entry-points."eemrepro.estimators"]
      nearest-centroid = "my_package.models:NearestCentroid"

Only a run imports a user's module; the reports read what the store holds
(:func:`is_builtin` tells the names they may look up).
"""

import functools
import importlib
import inspect
import sys
import threading
from pathlib import Path

#: The entry-point group under which installed packages register estimators.
ENTRY_POINT_GROUP = "eemrepro.estimators"

_IMPORT_LOCK = threading.Lock()


@functools.cache
def builtin_estimators():
    """The names of the package's classifiers and transformers (a tuple; computed once)."""
    from .. import models

    return tuple(n for n in models.__all__
                 if inspect.isclass(getattr(models, n)) and hasattr(getattr(models, n), "fit"))


def is_builtin(name):
    """Whether ``name`` is one of the package's own estimators (looking it up imports nothing of a user's)."""
    return name in builtin_estimators()


def registered_estimators():
    """{short name: entry point} of the estimators installed packages register (``ENTRY_POINT_GROUP``)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def estimator_class(name, home=None):
    """A built-in estimator, ``"module:Class"`` or a registered short name as its class.

    ``home``: the folder of the config that names it; a ``module:Class``
    whose module (``module.py`` or a package folder) lies there is imported
    from there before the import path is searched.

    Raises ValueError naming what was wrong.
    """
    if is_builtin(name):
        from .. import models

        return getattr(models, name)
    if ":" in name:
        module, _, attr = name.partition(":")
        if not module or not attr or module.startswith(".") or not all(p.isidentifier() for p in module.split(".")) \
                or not attr.isidentifier():
            raise ValueError(f"estimator {name!r} is not 'package.module:Class' (absolute module, class name)")
        where = f" (looked up in {home} and on the import path)" if home else ""
        try:
            return getattr(_import(module, home), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"estimator {name!r} cannot be imported{where}: {exc}") from exc
        except Exception as exc:  # the user's module raised while it was imported
            raise ValueError(f"estimator {name!r}: importing {module} raised {type(exc).__name__}: {exc}") from exc
    plugins = registered_estimators()
    if name in plugins:
        try:
            return plugins[name].load()
        except Exception as exc:
            raise ValueError(f"estimator {name!r} (entry point {plugins[name].value!r} of group "
                             f"{ENTRY_POINT_GROUP!r}) cannot be loaded: {type(exc).__name__}: {exc}") from exc
    installed = f", the installed plug-ins {sorted(plugins)}" if plugins else ""
    raise ValueError(f"unknown estimator {name!r}; use one of {builtin_estimators()}{installed} "
                     "or 'module:Class' (a module beside the config or on the import path)")


def _import(module, home):
    """Import ``module``, its top-level package taken from ``home`` when it lies there."""
    top = module.partition(".")[0]
    if home is None or top in sys.modules:
        return importlib.import_module(module)
    folder = Path(home).resolve()
    if not ((folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file()):
        return importlib.import_module(module)
    with _IMPORT_LOCK:
        sys.path.insert(0, str(folder))
        try:
            return importlib.import_module(module)
        finally:
            sys.path.remove(str(folder))
