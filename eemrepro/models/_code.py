"""The code of a user's estimator, taken from what the import system loaded.

When the tool imports a user's estimator (``_lookup``), it notes the modules that
import brought into ``sys.modules``. :func:`what_ran` starts from those and from
the estimator's own module, and follows every module a user's module refers to
(the modules, functions and classes its namespace holds: ``from helper import f``
and ``import helper`` alike, even where ``helper`` was imported before). Each
module found is one of:

* the tool's environment: the standard library, built-in modules, eemrepro and the
  distributions it depends on (their versions are in every record); left out;
* a module of an installed distribution (under a ``site-packages`` folder): the
  distribution's name, version and file list (its ``RECORD``), not followed further
  (its own imports are its version's);
* a module of an editable install: every top-level package the distribution
  declares, file by file (an edit changes no version);
* a user's file: the module's file, or every file of the regular package it lies
  in, symbolic links followed (a namespace package's modules one by one); a module
  loaded by its path, which ``sys.modules`` does not hold, is found as a module
  another refers to (or as the globals of a function it binds) and stands for its
  own file.

:func:`code_text` digests those files (their paths from the import-path folder
they were found in, and their contents) into one text, e.g.
``"my_classifier.py + helper.py sha256:1f2e3d4c5b6a7980"``, which a record's
identity holds and a changed-setting message shows as it is. A single module file
keeps the form records had before (``"my_classifier.py sha256:..."``).

What no import shows is not in it: environment variables, data files a module opens
by path (outside a package), distributions imported only inside a function. A
user's module imported only inside a function fails the fits that import it
(``_lookup.imported_outside``). ``eemrepro audit`` re-runs stored units to check the
rest.
"""

import functools
import hashlib
import json
import os
import site
import sys
import sysconfig
import types
from pathlib import Path

# (tuple of files) -> (their stat, their digest): files hashed again only when they change.
_DIGESTS = {}


def what_ran(start, loaded=()):
    """(user modules, distributions) of the code reached from the modules named ``start``.

    ``loaded``: the names of modules an import brought in (those of users' files are followed too; those of
    distributions only where a user's module refers to them, so that what was imported before makes no
    difference). User modules: {name: origin}; distributions: {name: Distribution}.
    """
    users, dists, seen = {}, {}, set()
    queue = list(start) + [m for m in loaded if isinstance(sys.modules.get(m), types.ModuleType)
                           and _origin(sys.modules[m])[0] in ("file", "editable")]
    while queue:
        name, module = _named(queue.pop())
        if name in seen or module is None:
            continue
        seen.add(name)
        origin = _origin(module)
        if origin[0] == "environment":
            continue
        if origin[0] == "distribution":
            dists[origin[1].metadata["Name"]] = origin[1]
            continue
        users[name] = origin
        queue += _referenced(module)
        if "." in name and module is sys.modules.get(name):
            queue.append(name.rpartition(".")[0])
    return users, dists


def _named(item):
    """(a key, the module) of a module's name or of a module object: one that ``sys.modules`` does not hold
    (a file loaded by its path, ``importlib.util.spec_from_file_location``) keyed by its file too, so that it
    stands for itself and no module of the same name is taken for it."""
    if isinstance(item, str):  # (a library may register any object in ``sys.modules``: no module, no code)
        found = sys.modules.get(item)
        return item, found if isinstance(found, types.ModuleType) else None
    if sys.modules.get(item.__name__) is item:
        return item.__name__, item
    return f"{item.__name__} ({getattr(item, '__file__', None)})", item


def _loaded_by_path(module):
    """Whether ``module`` is a file's module that ``sys.modules`` does not hold under its name
    (``importlib.util.spec_from_file_location``)."""
    return sys.modules.get(module.__name__) is not module and bool(getattr(module, "__file__", None))


def _referenced(module):
    """The modules ``module``'s namespace refers to (names, or module objects): modules bound there, and the
    modules that define the functions and classes bound there. A package's own submodules are left out: the
    import system binds each one there when anything imports it, so they tell what this process imported, not
    what the package uses (its files are the package's anyway)."""
    out, own = [], module.__name__ + "."
    for value in list(vars(module).values()):
        if isinstance(value, types.ModuleType):
            if not value.__name__.startswith(own):
                out.append(value)
        elif isinstance(value, type | types.FunctionType | types.BuiltinFunctionType | functools.partial):
            out += _defined_in(value.func if isinstance(value, functools.partial) else value)
    return out


def _defined_in(value):
    """The modules a function or class comes from: the one its ``__module__`` names (a wrapper's names the
    wrapped function's), and the one holding its globals: its name, or, where no module of ``sys.modules``
    holds them (a file loaded by its path), a module object made of them."""
    owner = getattr(value, "__module__", None)
    out = [owner] if isinstance(owner, str) else []
    functions = [value] if isinstance(value, types.FunctionType) else \
        [f for f in vars(value).values() if isinstance(f, types.FunctionType)] if isinstance(value, type) else []
    found = functions[0].__globals__ if functions else None
    if found is None or not isinstance(found.get("__name__"), str):
        return out
    name = found["__name__"]
    if isinstance(sys.modules.get(name), types.ModuleType) and vars(sys.modules[name]) is found:
        return out if name == owner else [*out, name]
    loaded = types.ModuleType(name)
    vars(loaded).update(found)
    return [*out, loaded]


def _origin(module):
    """("environment",), ("distribution", dist), ("editable", dist) or ("file", unit): where ``module`` came
    from (``unit``: (name shown, import-path folder, the files))."""
    if _loaded_by_path(module):  # its name tells nothing (it is the caller's choice), its place does
        where = Path(module.__file__).resolve()
        inside = any(where.is_relative_to(s) for s in (*_site_folders(), *_stdlib_folders()))
        return ("environment",) if inside else ("file", _file_unit(module))
    top = module.__name__.partition(".")[0]
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) if spec is not None else getattr(module, "__file__", None)
    locations = list(getattr(spec, "submodule_search_locations", None) or []) if spec is not None else []
    if (top == "__main__" or top in sys.stdlib_module_names or top in sys.builtin_module_names
            or top in environment_modules()
            or (origin in (None, "built-in", "frozen") and not locations)):
        return ("environment",)
    where = Path(origin if origin not in (None, "built-in", "frozen") else locations[0]).resolve()
    registered = _registered_under(module, top, where)
    if registered is not None:
        return registered
    if any(where.is_relative_to(s) for s in _site_folders()):
        dist = _distribution(top)
        return ("distribution", dist) if dist is not None else ("file", _file_unit(module))
    if any(where.is_relative_to(s) for s in _stdlib_folders()):
        return ("environment",)
    dist = _distribution(top)
    source = _editable_source(dist) if dist is not None else None
    if source is not None and where.is_relative_to(source):
        return ("editable", dist)
    return ("file", _file_unit(module))


def _registered_under(module, top, where):
    """("distribution", dist) where ``module`` is code an installed regular package registered under its own name
    from outside its folders (a library's generated code: torch.compile writes it to a temporary folder), else
    None. A file in one of the package's folders (``__path__``) is left to the rules for files."""
    outer = sys.modules.get(top)
    path = getattr(outer, "__file__", None) if outer is not module else None
    if not isinstance(outer, types.ModuleType) or not path:
        return None
    if any(where.is_relative_to(Path(f).resolve()) for f in getattr(outer, "__path__", None) or ()):
        return None
    if not any(Path(path).resolve().is_relative_to(s) for s in _site_folders()):
        return None
    dist = _distribution(top)
    return ("distribution", dist) if dist is not None else None


def installed_beside(module):
    """Whether ``module``, a user's file by :func:`_origin` (outside site-packages), is an installed (not
    editable) distribution's: one whose metadata lies in the import-path folder its top-level module was found
    in (``pip install --target DIR``, a cluster's module system). Its files are hashed as a user's where a user's
    module refers to them; a method that imports it is importing a library, not code of the user's."""
    name = module.__name__.partition(".")[0]
    top = sys.modules.get(name)
    path = getattr(top, "__file__", None)
    if path:  # a regular package or a module: the folder above its own
        root = Path(path).resolve().parent
        root = root.parent if getattr(top, "__path__", None) is not None else root
    else:  # a namespace package (google, jaraco): the folder above the portion that holds the module
        where = Path(getattr(module, "__file__", None) or "").resolve()
        roots = [Path(f).resolve() for f in getattr(top, "__path__", None) or ()]
        root = next((f.parent for f in roots if getattr(module, "__file__", None) and where.is_relative_to(f)), None)
    dist = _distribution(name) if root is not None else None
    # (an installation writes RECORD; an .egg-info a development install leaves in a project's folder has none)
    if dist is None or _editable_source(dist) is not None or dist.read_text("RECORD") is None:
        return False
    return Path(dist.locate_file("")).resolve() == root


def origin_kind(module):
    """Where ``module`` came from, in a word (:func:`_origin`'s first): "environment", "distribution",
    "editable" or "file"."""
    return _origin(module)[0]


def _file_unit(module):
    """(name, root, files) of the files a user's module stands for: the regular package it lies in (its
    outermost), else its own file; a namespace package alone stands for nothing (its modules stand for
    themselves)."""
    parts = module.__name__.split(".")
    if _loaded_by_path(module):
        path = Path(module.__file__)
        return (path.name, path.parent, (path,), ())
    for i in range(1, len(parts) + 1):
        outer = sys.modules.get(".".join(parts[:i]))
        if outer is None:
            break
        path = getattr(outer, "__file__", None)
        if path is None:  # a namespace package: look one level further in
            continue
        path = Path(path)
        if getattr(outer, "__path__", None) is not None:  # a regular package: all of its files
            folder = path.parent
            files, folders = _listing(folder)
            return (f"package {'.'.join(parts[:i])}", folder.parents[i - 1], files, folders)
        return (path.name, path.parents[i - 1], (path,), ())
    return (module.__name__, None, (), ())


def package_files(package):
    """Every file of the package folder ``package`` (compiled files and hidden folders aside; symbolic links
    followed, each real folder once), sorted."""
    return list(_listing(package)[0])


def _listing(package):
    """(files, folders) of ``package`` (:func:`package_files`; the folders, whose times tell a file added)."""
    files, folders, visited = [], [], set()
    for root, dirs, names in os.walk(package, followlinks=True):
        real = os.path.realpath(root)
        if real in visited:
            dirs[:] = []
            continue
        visited.add(real)
        folders.append(Path(root))
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        files += [Path(root) / n for n in sorted(names) if not n.startswith(".")]  # (a .pyc here may be imported)
    return tuple(sorted(files)), tuple(folders)


def watched_paths(users):
    """The files and folders whose stat tells that the code :func:`what_ran` found may have changed."""
    paths = set()
    for origin in users.values():
        if origin[0] == "file":
            paths.update((*origin[1][2], *origin[1][3]))
        elif origin[0] == "editable":
            _, pairs, folders = _editable_listing(origin[1])
            paths.update((*(f for _, f in pairs), *folders))
    return tuple(sorted(paths, key=str))


def code_text(users, dists, first=None):
    """The text an identity holds for the code found by :func:`what_ran` (None where it found none): the files
    of the module ``first`` (the estimator's) named first, the others in name order."""
    units, editable = {}, {}
    for origin in users.values():
        if origin[0] == "file" and origin[1][2]:
            units[origin[1][0]] = origin[1]
        elif origin[0] == "editable":
            editable[origin[1].metadata["Name"]] = origin[1]
    parts = []
    if units:
        lead = users[first][1][0] if first in users and users[first][0] == "file" else None
        names = sorted(units, key=lambda n: (n != lead, n.startswith("package "), n))
        shown = " + ".join(names[:3]) + (f" + {len(names) - 3} more" if len(names) > 3 else "")
        if len(names) == 1 and names[0].startswith("package "):
            shown += f" ({_files(len(units[names[0]][2]))})"
        parts.append(f"{shown} sha256:{_digest([(root, f) for _, root, files, _ in units.values() for f in files])}")
    for name in sorted(editable):
        parts.append(_editable_code(editable[name]))
    for name in sorted(dists):
        if name not in editable:
            record = dists[name].read_text("RECORD") or ""
            parts.append(f"{name} {dists[name].version} sha256:{hashlib.sha256(record.encode()).hexdigest()[:16]}")
    return " + ".join(parts) or None


def _editable_code(dist):
    """An editable install's code: every file of every top-level package (or module) it declares."""
    shown, pairs, _ = _editable_listing(dist)
    return (f"{dist.metadata['Name']} {dist.version} (editable) {' + '.join(shown)} ({_files(len(pairs))}) "
            f"sha256:{_digest(pairs)}")


def _files(n):
    return f"{n} file{'s' * (n != 1)}"


def _editable_listing(dist):
    """(what it declares, as "package x" / "module y"; (root, file) pairs; folders) of an editable install's
    top-level packages and modules, as the import system finds them (a declared name it cannot find is left
    out)."""
    import importlib.util

    tops = sorted(t for t, names in _distributions_of_tops().items() if dist.metadata["Name"] in names)
    shown, pairs, folders = [], [], []
    for top in tops:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        if spec.submodule_search_locations:
            shown.append(f"package {top}")
            for folder in spec.submodule_search_locations:
                files, dirs = _listing(Path(folder))
                pairs += [(Path(folder).parent, f) for f in files]
                folders += dirs
        elif spec.origin not in (None, "built-in", "frozen"):
            shown.append(f"module {top}")
            pairs.append((Path(spec.origin).parent, Path(spec.origin)))
    return shown, pairs, folders


def _digest(pairs):
    """sha256 over (root, file) pairs' paths from their root and contents, the first 16 hex digits; read again
    only when a file's stat changed (a worker checks the code of every unit it runs)."""
    pairs = sorted({(str(f.relative_to(root)), f) for root, f in pairs})
    key = tuple(str(f) for _, f in pairs)
    stamp = stamp_of(f for _, f in pairs)
    known = _DIGESTS.get(key)
    if known is not None and known[0] == stamp:
        return known[1]
    h = hashlib.sha256()
    for name, f in pairs:
        h.update(name.encode() + b"\0")
        try:
            h.update(f.read_bytes() + b"\0")
        except OSError:  # a file gone since it was listed: a change, said as such
            h.update(b"\0missing\0")
    _DIGESTS[key] = (stamp, h.hexdigest()[:16])
    return _DIGESTS[key][1]


def stamp_of(files):
    """What tells that files changed without reading them: each one's path, size and modification time."""
    out = []
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            out.append((f, -1, -1))
            continue
        out.append((f, st.st_size, st.st_mtime_ns))
    return tuple(out)


@functools.cache
def _site_folders():
    folders = set(site.getsitepackages()) | {site.getusersitepackages()} | \
        {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    return tuple(Path(f).resolve() for f in folders if f)


@functools.cache
def _stdlib_folders():
    return tuple(Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "platstdlib"))


def _distributions_of_tops():
    """{top-level module: [distribution names]} of the distributions on the import path now."""
    return _packages_distributions(tuple(sys.path))


@functools.lru_cache(maxsize=4)
def _packages_distributions(path):
    from importlib.metadata import packages_distributions

    return packages_distributions()


def _distribution(top):
    """The installed distribution that provides top-level module ``top``, or None."""
    from importlib.metadata import PackageNotFoundError, distribution

    for name in _distributions_of_tops().get(top) or []:
        try:
            return distribution(name)
        except PackageNotFoundError:
            continue
    return None


def _editable_source(dist):
    """The source folder of an editable install (its ``direct_url.json``), else None."""
    text = dist.read_text("direct_url.json")
    try:
        info = json.loads(text) if text else {}
    except ValueError:
        return None
    if not (info.get("dir_info") or {}).get("editable") or not str(info.get("url", "")).startswith("file://"):
        return None
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(info["url"]).path)).resolve()


@functools.cache
def environment_modules():
    """Top-level modules of eemrepro and of the distributions it depends on (scikit-learn, ...): their
    versions are in every record (``versions``), so their estimators are the tool's environment, not a
    user's code."""
    import re
    from importlib.metadata import PackageNotFoundError, requires

    try:
        declared = [r for r in requires("eemrepro") or [] if "extra ==" not in r]
    except PackageNotFoundError:
        declared = []
    normal = lambda d: re.sub(r"[-_.]+", "-", d).lower()
    names = {normal(re.split(r"[\s<>=!~;\[(]", r, maxsplit=1)[0]) for r in declared} | {"eemrepro"}
    return frozenset(top for top, dists in _distributions_of_tops().items()
                     if any(normal(d) in names for d in dists)) | {"eemrepro"}
