"""An estimator class by the name a config or a stored record gives it."""

import functools
import importlib
import inspect


@functools.cache
def builtin_estimators():
    """The names of the package's classifiers and transformers (a tuple; computed once)."""
    from .. import models

    return tuple(n for n in models.__all__
                 if inspect.isclass(getattr(models, n)) and hasattr(getattr(models, n), "fit"))


def estimator_class(name):
    """A built-in estimator name or ``"package.module:Class"`` (a user's classifier) as its class.

    Raises ValueError naming what was wrong.
    """
    if name in builtin_estimators():
        from .. import models

        return getattr(models, name)
    if ":" in name:
        module, _, attr = name.partition(":")
        if not module or not attr or module.startswith(".") or not all(p.isidentifier() for p in module.split(".")) \
                or not attr.isidentifier():
            raise ValueError(f"estimator {name!r} is not 'package.module:Class' (absolute module, class name)")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"estimator {name!r} cannot be imported: {exc}") from exc
        except Exception as exc:  # the user's module raised while it was imported
            raise ValueError(f"estimator {name!r}: importing {module} raised {type(exc).__name__}: {exc}") from exc
    raise ValueError(f"unknown estimator {name!r}; use one of {builtin_estimators()} or 'package.module:Class'")
