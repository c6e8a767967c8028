"""What the commands made of unchanged inputs, kept for the next command that reads them: the reports' reading
of results folders, and a config's verdict on the parameters of the package's own estimators.

Reading a folder (its segments checked, decoded and joined, each record's identity checked against the
folder's config: ``_records._folder_frame``) and choosing each table's cells from its records
(``_tables.TableRows``) are most of what ``tables``, ``report`` and ``check`` do, and they read the same
unchanged folders one after the other (``make tables``, CI, a researcher's own store beside the papers'). Each
such piece is kept under the user's cache folder, named by everything it was made of:

- every file the read opens, by name, size, modification and status-change times, inode and mode (as git's
  index knows a file unchanged): the folder's own files (``config.yaml``), its ``records/`` and its ``runs/``.
  An edit in place changes the status-change time even where the modification time is set back; a sealed
  segment replaced by another is another inode. The state is taken before the read, so a folder written
  meanwhile is read again next time;
- the code that reads, checks and selects (every file of this package, by content: the papers' published
  tables too), and the versions of Python, numpy, pandas and pyarrow;
- what was asked: the columns and data sets read; a table's specification, selection rule and the cells the
  folders' configs leave unfinished.

A config names the package's estimators and their parameter values; whether each estimator takes them (its
declared constraints, its own check: ``experiments._params``) is the same answer for the same values, code and
versions of the libraries the checks consult (``experiments._config.JUDGES``, "absent" where one is not
installed), so the answer "all taken" is kept under those: ``status`` of an unchanged config of the package's
estimators imports no scikit-learn. A refusal is not kept (it is said again, judged afresh); any other estimator
(a user's, scikit-learn's ``sklearn.svm:SVC``) is imported and judged every time.

The warnings raised while a piece was made (a damaged line, an unverified segment) are kept with it and said
again whenever it is given: a command says the same as when nothing was kept. An entry that cannot be read is
made again; a cache folder that cannot be written is passed over: the cache never fails a command and never
changes what it writes (the tests build the committed tables from a cold and from a kept read and compare them
byte for byte).

``EEMREPRO_CACHE_DIR`` names the cache folder (default ``$XDG_CACHE_HOME/eemrepro-kept``, else
``~/.cache/eemrepro-kept``); ``EEMREPRO_CACHE=0`` turns it off. The least recently used entries go when it holds
more than ``EEMREPRO_CACHE_MB`` (default 2,048) MB.
"""

import contextlib
import dataclasses
import hashlib
import inspect
import os
import pickle
import platform
import tempfile
import warnings
from functools import cache
from pathlib import Path

#: Bumped when what an entry holds changes shape.
_FORMAT = 2


def _folder():
    """The cache folder, or None when the cache is off."""
    if os.environ.get("EEMREPRO_CACHE", "1").strip().lower() in ("0", "off", "no", "false"):
        return None
    named = os.environ.get("EEMREPRO_CACHE_DIR")
    if named:
        return Path(named) / "kept-reports"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "eemrepro-kept"  # beside the data sets' cache (``EEMREPRO_DATA``), not in it


@cache
def _code_digest():
    """The digest of this package's files and of the libraries that decode the records (per process)."""
    import numpy
    import pandas
    import pyarrow

    root = Path(__file__).resolve().parent
    h = hashlib.sha256(f"{_FORMAT} {platform.python_version()} {numpy.__version__} {pandas.__version__} "
                       f"{pyarrow.__version__}".encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _stat_line(path):
    s = path.lstat()
    return f"{path.name} {s.st_size} {s.st_mtime_ns} {s.st_ctime_ns} {s.st_ino} {s.st_mode}\n"


def folder_state(folder):
    """The digest of what a read of the results folder ``folder`` opens, as the file system describes it
    (the module's docstring), or None when a file of it cannot be looked at (nothing is kept then)."""
    folder = Path(folder)
    h = hashlib.sha256(f"{folder.resolve()}\n".encode())
    try:
        for where in (folder, folder / "records", folder / "runs"):
            h.update(f"[{where.name}]\n".encode())
            if not where.is_dir():
                continue
            for path in sorted(where.iterdir()):
                if path.name != ".lock" and (where is not folder or not path.is_dir()):
                    h.update(_stat_line(path).encode())
    except OSError:
        return None
    return h.hexdigest()


def tree_state(folders):
    """The digest of every file under ``folders`` (a results folder with its readings, superseded records and
    all), as ``folder_state`` describes a file, or None when one cannot be looked at."""
    h = hashlib.sha256()
    try:
        for folder in folders:
            folder = Path(folder)
            h.update(f"[{folder.resolve()}]\n".encode())
            for root, dirs, files in os.walk(folder):
                dirs.sort()
                for name in sorted(files):
                    if name != ".lock":
                        h.update(f"{os.path.relpath(root, folder)}/".encode() + _stat_line(Path(root) / name).encode())
    except OSError:
        return None
    return h.hexdigest()


def file_state(path):
    """The digest of a file's content (a tolerance or claims file a command is given), or of its absence."""
    if path is None:
        return "none"
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        return f"unreadable {exc.errno}"


def stable_text(value):
    """``value`` (a specification: dataclasses, tuples, mappings, plain values) as text that names it the same in
    every process: a function by its module, name and source file's digest, not by its address (a plug-in's
    function is named by its own file; this package's code is in every key already)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ", ".join(f"{f.name}={stable_text(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__module__}.{type(value).__qualname__}({fields})"
    if isinstance(value, list | tuple):
        return f"{type(value).__name__}[{', '.join(map(stable_text, value))}]"
    if isinstance(value, set | frozenset):
        return f"{type(value).__name__}{{{', '.join(sorted(map(stable_text, value)))}}}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{stable_text(k)}: {stable_text(v)}" for k, v in value.items()) + "}"
    if callable(value) and hasattr(value, "__qualname__"):
        try:
            source = hashlib.sha256(Path(inspect.getsourcefile(value)).read_bytes()).hexdigest()[:16]
        except (OSError, TypeError):
            source = "unknown"
        return f"<{getattr(value, '__module__', '?')}.{value.__qualname__} {source}>"
    return repr(value)


def kept(what, make):
    """``make()``, or what it gave last time for the same ``what`` (a text naming everything the value is made
    of; None: nothing to name it by, made each time). The warnings raised while it was made are kept with it and
    said again whenever it is given: a command says the same from a kept value as from a new one."""
    where = _folder()
    if where is None or what is None:
        return make()
    name = hashlib.sha256(f"{_code_digest()}\n{what}".encode()).hexdigest()
    entry = where / f"{name}.pickle"
    got = _recall(entry)
    if got is None:
        got = with_warnings(make)
        _keep(where, entry, got)
    return say_again(*got)


def with_warnings(make):
    """(``make()``, the warnings it raised): to be said again where the value is used (``say_again``), as a
    kept value's are, or a worker process's."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = make()
    except BaseException:
        say_again(None, _said(caught))  # what was said before the failure is said, as without a cache
        raise
    return value, _said(caught)


def _said(caught):
    return [(w.category, str(w.message), w.filename, w.lineno) for w in caught]


def say_again(value, said):
    """``value``, once the warnings ``said`` are said through this process's filters, as when they were raised
    (a registry per source file, as a module's own: said once per place under the default filter)."""
    for category, message, filename, lineno in said:
        warnings.warn_explicit(message, category, filename, lineno, registry=_SAID.setdefault(filename, {}))
    return value


#: The warnings said again in this process, per source file (``warnings``' registry of a module).
_SAID = {}


def _recall(entry):
    """(value, warnings) kept as ``entry``, or None (none kept, or one that cannot be read: made again)."""
    try:
        with open(entry, "rb") as f:
            got = pickle.load(f)
    except Exception:  # noqa: BLE001  (whatever a damaged or foreign entry raises, it is made again)
        return None
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], list)):
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # the least recently used entries go first
    return got


def kept_read(folder, columns, datasets, read):
    """``read()`` (the results folder ``folder``'s reading of ``columns``, of ``datasets`` unless None), or what
    it gave last time for the same files, code and request."""
    state = folder_state(folder) if _folder() is not None else None
    what = None if state is None else \
        f"read {state} {list(columns)} {None if datasets is None else sorted(datasets)}"
    return kept(what, read)


def _keep(where, entry, got):
    """Write ``got`` as ``entry`` (a temporary file renamed into place); a cache that cannot be written is
    passed over."""
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(got, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, entry)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        _trim(where)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        return


def _trim(where):
    """Remove the least recently used entries beyond ``EEMREPRO_CACHE_MB``."""
    try:
        limit = float(os.environ.get("EEMREPRO_CACHE_MB", "2048")) * 2**20
    except ValueError:
        limit = 2048 * 2**20
    entries = []
    for path in where.glob("*.pickle"):
        with contextlib.suppress(OSError):
            s = path.stat()
            entries.append((s.st_mtime_ns, s.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            total -= size


__all__ = ["file_state", "folder_state", "kept", "kept_read", "say_again", "stable_text", "tree_state",
           "with_warnings"]
