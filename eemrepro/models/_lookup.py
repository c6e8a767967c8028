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

A user's estimator is part of a record's identity by its code
(:func:`estimator_code`): what its import loaded (``_code``). A module imported
here is imported again when its files change (a researcher edits the model
between two runs of one Python process, a notebook's or a reused worker's).
"""

import builtins
import contextlib
import functools
import importlib
import importlib.util
import sys
import threading
import types
from pathlib import Path

from .. import models  # (the package's face imports its modules when first asked: no cycle)
from ._code import (code_text, environment_modules, installed_beside, origin_kind, package_files, stamp_of,
                    watched_paths, what_ran)

#: The entry-point group under which installed packages register estimators.
ENTRY_POINT_GROUP = "eemrepro.estimators"

_IMPORT_LOCK = threading.Lock()
# Top-level modules of users' estimators this process imported: name -> (the config's folder it was imported
# from, or None; the users' modules that import reached; the files and folders that stand for their code
# (``watched_paths``: a package's every file, so that a module it imports later, at fit time, is watched too) and
# their stat then).
_IMPORTED = {}
# (estimator, home) -> (the modules its code was found in, the files and folders watched, their stat, the code).
_CODE_TEXTS = {}
# What a user's module a fit asked for brings that a unit's code does not hold: codes -> {module: {module: shown}}
# (a fact of the module's files and the codes, which a run holds fixed: judged once a process).
_VERDICTS = {}
# Modules a fit asked for that are the environment's or an installed distribution's (no user's code).
_NOT_USERS = set()
# The sets that the import functions add the names asked for to, while a unit's steps run (``recording_imports``).
_RECORDERS = []
# The import functions a recording calls through: (``builtins.__import__``, importlib's ``_gcd_import``) as they
# were when it began (a plug-in may have wrapped the first itself).
_INNER = [builtins.__import__, importlib._bootstrap._gcd_import]


def builtin_estimators():
    """The names of the package's classifiers and transformers (a tuple, known without importing them)."""
    return models.ESTIMATORS


def is_builtin(name):
    """Whether ``name`` is one of the package's own estimators (looking it up imports nothing of a user's)."""
    return name in builtin_estimators()


def registered_estimators():
    """{short name: entry point} of the estimators installed packages register (``ENTRY_POINT_GROUP``)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def estimator_class(name, home=None, code=None):
    """A built-in estimator, ``"module:Class"`` or a registered short name as its class.

    ``home``: the folder of the config that names it; a ``module:Class``
    whose module (``module.py`` or a package folder) lies there is imported
    from there before the import path is searched. ``code``: the
    :func:`estimator_code` the caller's records will carry (a run's, fixed when
    it was planned); a module whose code is not that any more is refused.

    Raises ValueError naming what was wrong.
    """
    cls = _estimator_class(name, home)
    if code is not None:
        now = _code_of_class(name, home, cls)
        if now != code:
            raise ValueError(f"estimator {name!r}: its code changed since the run started ({now}; the run "
                             f"was planned with {code}); run again with --rerun-changed to run its cells with the "
                             "new code")
    return cls


def _estimator_class(name, home=None):
    if is_builtin(name):
        return getattr(models, name)  # (imported when first asked for: ``models.__getattr__``)
    if ":" in name:
        module, _, attr = name.partition(":")
        if not module or not attr or module.startswith(".") or not all(p.isidentifier() for p in module.split(".")) \
                or not attr.isidentifier():
            raise ValueError(f"estimator {name!r} is not 'package.module:Class' (absolute module, class name)")
        where = f" (looked up in {home} and on the import path)" if home else ""
        try:
            return getattr(_import(module, home), attr)
        except ShadowingError:
            raise
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"estimator {name!r} cannot be imported{where}: {exc}") from exc
        except Exception as exc:  # the user's module raised while it was imported
            raise ValueError(f"estimator {name!r}: importing {module} raised {type(exc).__name__}: {exc}") from exc
    plugins = registered_estimators()
    if name in plugins:
        module, _, attr = plugins[name].value.partition(":")
        try:
            return functools.reduce(getattr, attr.split("."), _import(module.strip(), None)) if attr \
                else _import(module.strip(), None)
        except Exception as exc:
            raise ValueError(f"estimator {name!r} (entry point {plugins[name].value!r} of group "
                             f"{ENTRY_POINT_GROUP!r}) cannot be loaded: {type(exc).__name__}: {exc}") from exc
    installed = f", the installed plug-ins {sorted(plugins)}" if plugins else ""
    raise ValueError(f"unknown estimator {name!r}; use one of {builtin_estimators()}{installed} "
                     "or 'module:Class' (a module beside the config or on the import path)")


def _import(module, home):
    """Import ``module``, its top-level package taken from ``home`` when it lies there.

    What the import loads is noted (``_IMPORTED``): the users' modules it
    reached (:func:`._code.what_ran`) and the stat of their files. Modules
    whose files changed since, or that another folder's module of the same
    name now stands for, are dropped, all of them, and imported again: the
    class a run fits is the code on disk now, its parameters' defaults
    included, not a copy imported before an edit. A module there named like
    one of the standard library's or of the tool's dependencies is refused:
    the user's imports and the tool's never resolve to each other's.
    """
    top = module.partition(".")[0]
    folder = Path(home).resolve() if home is not None else None
    beside = folder is not None and bool(_module_files(folder, top))
    if top in _IMPORTED:
        where, modules, watched, stamp = _IMPORTED[top]
        if (beside and where != folder) or stamp_of(watched) != stamp:
            with _IMPORT_LOCK:
                _drop(set(modules) | {top})
                del _IMPORTED[top]
            importlib.invalidate_caches()
    if beside:
        _refuse_shadowing(folder, [top])
    if top in _IMPORTED and module in sys.modules:  # imported and noted, its files unchanged
        return sys.modules[module]
    with _IMPORT_LOCK:
        before = set(sys.modules)
        if beside and top not in sys.modules:
            sys.path.insert(0, str(folder))
            try:
                imported = importlib.import_module(module)
            finally:
                sys.path.remove(str(folder))
        else:
            imported = importlib.import_module(module)
        loaded = set(sys.modules) - before
        if beside:
            mine = {m for m in loaded if _lies_under(sys.modules[m], folder)} | {top}
            try:
                _refuse_shadowing(folder, sorted(mine))
            except ValueError:
                _drop(mine)
                raise
        if top not in _IMPORTED or loaded:
            users, _ = what_ran([module, top], loaded | _IMPORTED.get(top, (None, set()))[1])
            watched = watched_paths(users)
            _IMPORTED[top] = (folder if beside else None, set(users), watched, stamp_of(watched))
        return imported


class ShadowingError(ValueError):
    """A user's module named like a module of the standard library or of the tool's dependencies."""


def _refuse_shadowing(folder, names):
    """Refuse a module of ``folder`` named like a standard library module or one of the tool's."""
    for name in names:
        top = name.partition(".")[0]
        whose = "the standard library's" if top in sys.stdlib_module_names else \
            "the installed package" if top in environment_modules() else None
        if whose:
            path = folder / f"{top}.py" if (folder / f"{top}.py").is_file() else folder / top
            raise ShadowingError(f"{path} is named like {whose} {top!r}, which eemrepro uses: rename it "
                                 "(a module of yours must not stand in for the tool's)")


def _drop(modules):
    """Take ``modules`` and their submodules out of ``sys.modules`` (to be imported afresh)."""
    for loaded in [m for m in list(sys.modules) if m in modules or m.partition(".")[0] in modules]:
        del sys.modules[loaded]


def _lies_under(module, folder):
    path = getattr(module, "__file__", None)
    return path is not None and Path(path).resolve().is_relative_to(folder)


def lies_in(name, home):
    """Whether the estimator ``name`` is a ``module:Class`` whose module lies in the folder ``home``."""
    return ":" in name and bool(_module_files(Path(home).resolve(), name.partition(":")[0].partition(".")[0]))


def _module_files(folder, top):
    """The files of top-level module ``top`` in ``folder`` as the import system would find it there: the
    package ``top/`` (every file; a folder without ``__init__.py`` is a namespace package), else ``top.py``;
    empty where it is not there."""
    folder = Path(folder)
    package = folder / top
    if (package / "__init__.py").is_file():
        return package_files(package)
    if (folder / f"{top}.py").is_file():
        return [folder / f"{top}.py"]
    files = package_files(package) if package.is_dir() else []
    return files if any(f.suffix == ".py" for f in files) else []


def is_users(name):
    """Whether the estimator ``name`` is a user's (its code part of a record's identity): not a built-in, not
    one of the tool's own dependencies' (``sklearn.svm:SVC``, whose version each record holds)."""
    if is_builtin(name):
        return False
    return ":" not in name or name.partition(":")[0].partition(".")[0] not in environment_modules()


def estimator_code(name, home=None):
    """What identifies the code of a user's estimator (part of every record's identity); None for a built-in.

    The estimator is imported (as a run imports it: from ``home`` first), and its
    code is what that import loaded and its module refers to
    (:func:`._code.what_ran`): the files of the user's modules (a module beside the
    config, the helpers it imports, its package), the name, version and file list
    of an installed distribution, every package of an editable install. A text
    such as ``"my_classifier.py + helper.py sha256:1f2e3d4c5b6a7980"``, which a
    changed-setting message shows as it is.

    Raises ValueError where the estimator cannot be imported.

    >>> estimator_code("EEM") is None
    True
    """
    if not is_users(name):
        return None
    return _code_of_class(name, home, _estimator_class(name, home))


def _code_of_class(name, home, cls):
    # Found again only when a module was imported anew or a file or folder of the code changed: a worker
    # checks the code of every unit it runs.
    key = (name, None if home is None else str(Path(home).resolve()))
    known = _CODE_TEXTS.get(key)
    if known is not None and all(sys.modules.get(m) is mod for m, mod in known[0].items()) \
            and stamp_of(known[1]) == known[2]:
        return known[3]
    module = _module_of(name)
    top = module.partition(".")[0]
    users, dists = what_ran([module, top, getattr(cls, "__module__", module)],
                            _IMPORTED.get(top, (None, set()))[1])
    code = code_text(users, dists, first=module)
    watched = watched_paths(users)
    _CODE_TEXTS[key] = ({m: sys.modules.get(m) for m in users}, watched, stamp_of(watched), code)
    return code


def _module_of(name):
    """The module a ``module:Class`` or a registered short name is imported from."""
    if ":" in name:
        return name.partition(":")[0]
    return registered_estimators()[name].value.partition(":")[0].strip()


def _recorded(names):
    for names_asked in _RECORDERS:
        names_asked.update(names)


def _recording_import(name, globals=None, locals=None, fromlist=(), level=0):
    """``builtins.__import__`` that notes the modules an import statement asks for, imported already or not."""
    if getattr(_LOCAL, "importing", False):  # reached again through a hook that wraps this one: the interpreter's
        module = _INTERPRETERS[0](name, globals, locals, fromlist, level)
    else:
        _LOCAL.importing = True
        try:
            module = _INNER[0](name, globals, locals, fromlist, level)
        finally:
            _LOCAL.importing = False
    if _RECORDERS:
        try:
            full = importlib.util.resolve_name("." * level + name, (globals or {}).get("__package__")) \
                if level else name
        except (ImportError, ValueError):
            return module
        _recorded([full, *(f"{full}.{item}" for item in fromlist or () if isinstance(item, str) and item != "*")])
    return module


def _recording_gcd_import(name, package=None, level=0):
    """importlib's ``_gcd_import``, which ``importlib.import_module`` calls each time (a reference to
    ``import_module`` taken before the recording began reaches it too), noting the name asked for."""
    if getattr(_LOCAL, "finding", False):
        module = _INTERPRETERS[1](name, package, level)
    else:
        _LOCAL.finding = True
        try:
            module = _INNER[1](name, package, level)
        finally:
            _LOCAL.finding = False
    if _RECORDERS:
        try:
            _recorded([importlib.util.resolve_name("." * level + name, package) if level else name])
        except (ImportError, ValueError):
            pass
    return module


#: The frames of a recording's import functions, which a failed import's error passes over to name the import
#: that failed (``experiments._watchdog.short_error``): a frame of this file whose function's name holds this.
RECORDING_FRAMES = (__file__, "_recording_")
_BOOTSTRAP = importlib._bootstrap  # (``importlib.import_module`` calls its ``_gcd_import`` at each call)
# The interpreter's import functions (as they were when this module was imported), which the wrappers call when a
# hook they call through calls them again (a plug-in's hook installed over them during a recording).
_INTERPRETERS = (builtins.__import__, _BOOTSTRAP._gcd_import)
_LOCAL = threading.local()


@contextlib.contextmanager
def recording_imports():
    """A set of the names of the modules asked for while inside: by an import statement, ``__import__`` or
    ``importlib.import_module`` (those imported already included), and the modules new in ``sys.modules``
    when it is read (see :func:`imported_outside`). The import functions in place when it begins (a plug-in's
    own hook among them) are called through, and put back at its end unless something replaced them since; a
    hook installed over the wrappers that calls them again reaches the interpreter's own, once."""
    asked = _Asked(set(sys.modules))
    if not _RECORDERS:
        if builtins.__import__ is not _recording_import:
            _INNER[0], builtins.__import__ = builtins.__import__, _recording_import
        if _BOOTSTRAP._gcd_import is not _recording_gcd_import:
            _INNER[1], _BOOTSTRAP._gcd_import = _BOOTSTRAP._gcd_import, _recording_gcd_import
    _RECORDERS.append(asked)
    try:
        yield asked
    finally:
        _RECORDERS[:] = [r for r in _RECORDERS if r is not asked]
        if not _RECORDERS:
            if builtins.__import__ is _recording_import:
                builtins.__import__ = _INNER[0]
            if _BOOTSTRAP._gcd_import is _recording_gcd_import:
                _BOOTSTRAP._gcd_import = _INNER[1]


class _Asked(set):
    """The names asked for (a set), and ``before``: those ``sys.modules`` held when the recording began."""

    def __init__(self, before):
        super().__init__()
        self.before = before

    def names(self):
        return self | (sys.modules.keys() - self.before)


def imported_outside(codes, asked):
    """{module: its file (or package, or distribution) as shown} of the users' modules a fit asked for
    (``asked``: :func:`recording_imports`) that none of ``codes`` holds (texts of :func:`estimator_code`, their
    estimators found in this process), with the users' modules those refer to.

    A module of a user's file, package or editable install counts; one of the environment or of an installed
    distribution does not (an installed distribution a method imports is not in the identity either: the docs
    say so). Such a module is imported inside a function, not when the estimator's module is: its code is in no
    identity, and a record made with it could not say when it changed.
    """
    verdicts = _VERDICTS.setdefault(frozenset(codes), {})
    names = [m for m in asked.names() - _NOT_USERS if isinstance(sys.modules.get(m), types.ModuleType)]
    for m in names:
        if m not in verdicts and (origin_kind(sys.modules[m]) not in ("file", "editable")
                                  or installed_beside(sys.modules[m])):
            _NOT_USERS.add(m)  # (judged once: a fit imports hundreds of the environment's modules)
    fresh = [m for m in names if m not in verdicts and m not in _NOT_USERS]
    if fresh:
        held = set().union(*(set(k[1]) for k in list(_CODE_TEXTS.values()) if k[3] in codes))
        for m in fresh:
            users, _ = what_ran([], [m])
            verdicts[m] = {n: o[1][0] if o[0] == "file" else o[1].metadata["Name"] for n, o in users.items()
                           if (files := set(watched_paths({n: o}))) and not files <= held}
    outside = {}
    for m in names:
        outside.update(verdicts.get(m) or {})
    return dict(sorted(outside.items()))


def outside_imports_error(estimators, outside, what="the fit"):
    """The one-line reason a fit of ``estimators`` (the unit's users' estimators) that imported ``outside``
    (:func:`imported_outside`) fails (``what``: the fit, or building the estimator): the modules, one per file or
    package shown (three at most), and where to import them."""
    by_shown = {}
    for module, shown in outside.items():
        by_shown.setdefault(shown, []).append(module)
    named = [f"{ms[0]}{f' and {len(ms) - 1} more' if len(ms) > 1 else ''} ({shown})" for shown, ms in by_shown.items()]
    names = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
    modules = " or ".join(sorted({_module_of(e) for e in estimators}))
    them = "it" if len(named) == 1 else "them"
    return (f"{what} imported {names}, code of yours that importing {modules} does not load, so no record could "
            f"say when it changes; import {them} at the top of {modules} (or of a module it imports)")
