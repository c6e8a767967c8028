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
(:func:`estimator_code`): the module's file, its top-level package's files, or
an installed distribution's name, version and file list. A module imported
here is imported again when its files change (a researcher edits the model
between two runs of one Python process, a notebook's or a reused worker's).
"""

import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import threading
from pathlib import Path

#: The entry-point group under which installed packages register estimators.
ENTRY_POINT_GROUP = "eemrepro.estimators"

_IMPORT_LOCK = threading.Lock()
# Top-level modules this process imported from a config's folder: name -> (the modules that import brought in
# from that folder, the stat of their files then).
_IMPORTED = {}
# (folder, top-level module) -> (the stat of its files, its code): files hashed again only when they change.
_CODES = {}


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
        now = estimator_code(name, home)
        if now != code:
            raise ValueError(f"estimator {name!r}: its code changed since the run started ({now}; the run "
                             f"was planned with {code}); run again to use the new code")
    return cls


def _estimator_class(name, home=None):
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
        except ShadowingError:
            raise
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
    """Import ``module``, its top-level package taken from ``home`` when it lies there.

    Modules imported from a config's folder (the module and what it imports
    from beside it) whose files changed since, or that another folder's module
    of the same name now stands for, are dropped, all of them, and imported
    again: the class a run fits is the code on disk now, its parameters'
    defaults included, not a copy imported before an edit. A module there
    named like one of the standard library's or of the tool's dependencies is
    refused: the user's imports and the tool's never resolve to each other's.
    """
    top = module.partition(".")[0]
    folder = Path(home).resolve() if home is not None else None
    beside = folder is not None and bool(_module_files(folder, top))
    if top in _IMPORTED:
        where, modules, stamp = _IMPORTED[top]
        if (beside and where != folder) or _stamp(_files_of(modules)) != stamp:
            with _IMPORT_LOCK:
                _drop(modules | {top})
                del _IMPORTED[top]
            importlib.invalidate_caches()
    if beside:
        _refuse_shadowing(folder, [top])
    if not beside or top in sys.modules:
        return importlib.import_module(module)
    with _IMPORT_LOCK:
        before = set(sys.modules)
        sys.path.insert(0, str(folder))
        try:
            imported = importlib.import_module(module)
        finally:
            sys.path.remove(str(folder))
        modules = {m for m in set(sys.modules) - before if _lies_under(sys.modules[m], folder)} | {top}
        try:
            _refuse_shadowing(folder, sorted(modules))
        except ValueError:
            _drop(modules)
            raise
        _IMPORTED[top] = (folder, modules, _stamp(_files_of(modules)))
        return imported


class ShadowingError(ValueError):
    """A user's module named like a module of the standard library or of the tool's dependencies."""


def _refuse_shadowing(folder, names):
    """Refuse a module of ``folder`` named like a standard library module or one of the tool's."""
    for name in names:
        top = name.partition(".")[0]
        whose = "the standard library's" if top in sys.stdlib_module_names else \
            "the installed package" if top in _environment_modules() else None
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


def _files_of(modules):
    return sorted(Path(sys.modules[m].__file__) for m in modules
                  if m in sys.modules and getattr(sys.modules[m], "__file__", None))


def lies_in(name, home):
    """Whether the estimator ``name`` is a ``module:Class`` whose module lies in the folder ``home``."""
    return ":" in name and bool(_module_files(Path(home).resolve(), name.partition(":")[0].partition(".")[0]))


def _module_files(folder, top):
    """The files of top-level module ``top`` in ``folder``: ``top.py``, or every file of the package ``top/``
    (compiled files and hidden folders aside), sorted; empty where it is not there."""
    folder = Path(folder)
    if (folder / f"{top}.py").is_file():
        return [folder / f"{top}.py"]
    package = folder / top
    if not (package / "__init__.py").is_file():
        return []
    files = []
    for root, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        files += [Path(root) / n for n in sorted(names) if not n.endswith((".pyc", ".pyo")) and not n.startswith(".")]
    return files


def _stamp(files):
    """What tells that files changed without reading them: each one's path, size and modification time."""
    out = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        out.append((str(f), st.st_size, st.st_mtime_ns))
    return tuple(out)


def _digest(files, root):
    """sha256 over the files' paths (from ``root``) and contents, the first 16 hex digits."""
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root)).encode() + b"\0")
        h.update(f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@functools.cache
def _environment_modules():
    """Top-level modules of eemrepro and of the distributions it depends on (scikit-learn, ...): their
    versions are in every record (``versions``), so their estimators are the tool's environment, not a
    user's code."""
    import re
    from importlib.metadata import PackageNotFoundError, packages_distributions, requires

    try:
        declared = [r for r in requires("eemrepro") or [] if "extra ==" not in r]
    except PackageNotFoundError:
        declared = []
    normal = lambda d: re.sub(r"[-_.]+", "-", d).lower()
    names = {normal(re.split(r"[\s<>=!~;\[(]", r, maxsplit=1)[0]) for r in declared} | {"eemrepro"}
    return frozenset(top for top, dists in packages_distributions().items()
                     if any(normal(d) in names for d in dists)) | {"eemrepro"}


def is_users(name):
    """Whether the estimator ``name`` is a user's (its code part of a record's identity): not a built-in, not
    one of the tool's own dependencies' (``sklearn.svm:SVC``, whose version each record holds)."""
    if is_builtin(name):
        return False
    return ":" not in name or name.partition(":")[0].partition(".")[0] not in _environment_modules()


def estimator_code(name, home=None):
    """What identifies the code of a user's estimator (part of every record's identity); None for a built-in.

    * a module beside the config (``home``): the sha256 of its file, or of every
      file of its top-level package;
    * a module or entry point of an installed distribution: its name and
      version and the sha256 of its file list with their hashes (``RECORD``); an
      editable install's package files instead, which change without a version;
    * another module on the import path: its file's (its package's) sha256.

    Found without importing anything. A text such as
    ``"my_classifier.py sha256:1f2e3d4c5b6a7980"``, which a changed-setting
    message shows as it is.

    >>> estimator_code("EEM") is None
    True
    """
    if not is_users(name):
        return None
    if ":" not in name:
        plugins = registered_estimators()
        if name not in plugins:
            return None
        dist = getattr(plugins[name], "dist", None)
        module = plugins[name].value.partition(":")[0]
        return _distribution_code(dist, module.partition(".")[0]) if dist is not None else None
    top = name.partition(":")[0].partition(".")[0]
    if home is not None:
        folder = Path(home).resolve()
        files = _module_files(folder, top)
        if files:
            return _files_code(files, folder, top)
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        return None
    from importlib.metadata import packages_distributions

    dists = packages_distributions().get(top) or []
    if dists:
        from importlib.metadata import PackageNotFoundError, distribution

        try:
            code = _distribution_code(distribution(dists[0]), top)
        except PackageNotFoundError:
            code = None
        if code is not None:
            return code
    origin = Path(spec.origin)
    folder = origin.parent.parent if origin.name == "__init__.py" else origin.parent
    files = _module_files(folder, top)
    return _files_code(files, folder, top) if files else None


def _files_code(files, folder, top):
    # Read again only when a file's stat changed: a worker checks the code of every unit it runs.
    stamp = _stamp(files)
    known = _CODES.get((str(folder), top))
    if known is not None and known[0] == stamp:
        return known[1]
    what = files[0].name if len(files) == 1 and files[0].name == f"{top}.py" else f"package {top} ({len(files)} files)"
    code = f"{what} sha256:{_digest(files, folder)}"
    _CODES[(str(folder), top)] = (stamp, code)
    return code


def _distribution_code(dist, top):
    """An installed distribution's code: its version and file list, or (editable) its package's files."""
    import json

    name, version = dist.metadata["Name"], dist.version
    direct = dist.read_text("direct_url.json")
    editable = False
    if direct:
        try:
            editable = bool(json.loads(direct).get("dir_info", {}).get("editable"))
        except (ValueError, AttributeError):
            editable = False
    if editable:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin not in (None, "built-in", "frozen"):
            origin = Path(spec.origin)
            folder = origin.parent.parent if origin.name == "__init__.py" else origin.parent
            files = _module_files(folder, top)
            if files:
                return f"{name} {version} (editable) {_files_code(files, folder, top)}"
    record = dist.read_text("RECORD") or ""
    return f"{name} {version} sha256:{hashlib.sha256(record.encode()).hexdigest()[:16]}"
