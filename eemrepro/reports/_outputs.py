"""Where the report commands write, and how: never into a store's own files, never through a symbolic link,
never over a file they did not write (unless told to), and only ever to a regular file or into a folder.

``tables``, ``figures``, ``report``, ``export`` and ``check --pin`` write a
user's outputs. A store (``results/<name>``) is the runner's: its records, run
files and config are read by every other command, so an output folder inside
one is refused except the folders the commands write by default
(``<store>/tables``, ``<store>/figures``, ``<store>/report``). Files are built
in a staging folder and moved into place (``os.replace`` replaces a link, never
writes through it); an output folder's manifest records which files the
command wrote, and from which results folders, in one format for every command (``publish``; an older
``report``'s list of the files it wrote is still read), and any other file of the same name is left alone
unless ``force``. ``force`` never replaces what is not a regular file or a link (a
device, a FIFO, a folder: ``export --out /dev/null --force`` once renamed a
regular file over a machine's ``/dev/null``), and a place that cannot be
written is said in one line naming the user's path (:func:`writing`), never a
temporary file's.
"""

import contextlib
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

#: The folders inside a store that the report commands write by default.
OUTPUT_FOLDERS = ("tables", "figures", "report")


class OutputPlaceError(ValueError):
    """An output path inside a store's own files, a symbolic link, something other than a regular file (a file
    output) or a folder (a folder output), or a place that cannot be written."""


class FilesExistError(ValueError):
    """The output folder holds files of the same names that this command did not write from these results."""


def _kind(mode):
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a regular file"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a file"  # pragma: no cover (every POSIX file type is named above)


def in_the_way(path, folder=False):
    """What is at ``path`` that an output must not replace ("a FIFO", "a device", "a folder" where a file goes,
    "a regular file" where a folder goes), or None: nothing, the kind wanted, or (for a file) a link, which
    is replaced, never written through."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # nothing there (a file above it: check_place says so)
        return None
    fine = stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode) or stat.S_ISLNK(mode)
    return None if fine else _kind(mode)


def check_place(path, what="output", folder=True, option="--out"):
    """Refuse (:class:`OutputPlaceError`) ``path`` (an output ``folder``, else a file) inside a store other than
    as one of its ``OUTPUT_FOLDERS``, a symbolic link, something else than what it is to be
    (:func:`in_the_way`), or under a file."""
    from ..store._files import is_store

    path = Path(os.path.abspath(path))
    if path.is_symlink():
        raise OutputPlaceError(f"{path} is a symbolic link; eemrepro writes nothing through one: choose another "
                               f"{option} (the place it points to, say)")
    there = in_the_way(path, folder)
    if there:
        raise OutputPlaceError(f"{path} is {there}; eemrepro writes the {what} only "
                               f"{'into a folder' if folder else 'to a regular file'}, never over anything else: "
                               f"choose another {option}")
    blocker = next((p for p in path.parents if os.path.lexists(p)), None)
    if blocker is not None and not blocker.is_dir():
        raise OutputPlaceError(f"{path} cannot be made: {blocker} is {_kind(os.lstat(blocker).st_mode)}, not a "
                               f"folder; choose another {option}")
    for parent in (path, *path.parents):
        if parent.is_dir() and is_store(parent):
            inside = path.relative_to(parent).parts
            if len(inside) == 1 and inside[0] in OUTPUT_FOLDERS and not path.is_file():
                return
            raise OutputPlaceError(
                f"{path} is inside the results folder {parent}, whose files the store keeps; write the {what} "
                f"elsewhere (or into {parent}/tables, /figures or /report)")


def _about(exc, path):
    """Whether the OSError ``exc`` is about the output ``path``: it, a file in it, a folder above it that could
    not be made, or a temporary file beside it (``<name>.<pid>.tmp``). (A folder above it that exists, a store
    the command reads, say, is another matter.)"""
    path = Path(os.path.abspath(path))
    for name in (exc.filename, exc.filename2):
        if name is None:
            continue
        p = Path(os.path.abspath(os.fsdecode(name)))
        if p == path or path in p.parents or (p in path.parents and not os.path.lexists(p)) or (
                p.parent == path.parent and p.name.startswith(path.name + ".")):
            return True
    return False


@contextlib.contextmanager
def writing(path, what="output", option="--out"):
    """Turn an OSError met writing the output ``path`` (permission denied, a read-only or full file system)
    into one line naming ``path``, not a temporary file of it, and the fix: :class:`OutputPlaceError`.
    An OSError about another file (a store being read) passes unchanged."""
    try:
        yield
    except OSError as exc:
        if not _about(exc, path):
            raise
        why = (exc.strerror or type(exc).__name__).lower()
        raise OutputPlaceError(f"{path}: cannot write the {what} there ({why}); choose another {option}, or make "
                               "it writable") from None


def refuse_special(out, names, command):
    """Refuse (:class:`OutputPlaceError`) to write the files ``names`` of the folder ``out`` when one of them is
    something no ``--force`` replaces (a FIFO, a device, a folder: :func:`in_the_way`)."""
    for name in names:
        there = in_the_way(Path(out) / name)
        if there:
            raise OutputPlaceError(f"{Path(out) / name} is {there}, not a file {command} wrote; it is never "
                                   "replaced, even with --force: move it away, or choose another --out")


def recorded_owners(path):
    """{file: the results folders it was written from} of an output folder's manifest ``path`` ({} where there is
    none, or it is not one). A file an older manifest lists without its results (``report`` once kept a list of
    the pages it wrote) maps to None: written by the command, from results it did not record."""
    try:
        recorded = json.loads(path.read_text()) if path.is_file() else {}
    except (ValueError, OSError):
        recorded = {}
    files = recorded.get("files", {}) if isinstance(recorded, dict) else {}
    if isinstance(files, list):
        return {str(name): None for name in files}
    return dict(files) if isinstance(files, dict) else {}


def publish_built(make, out, manifest, sources, force, command):
    """Build an output folder's files in a staging folder inside ``out`` (``make(staging)`` returns their paths)
    and move them into place with :func:`publish`; the staging folder is gone afterwards, whatever happened, and
    so is ``out`` where this call made it and nothing was published (``figures`` with nothing to draw left an
    empty folder in the store).
    The one route of every command that writes a folder of files (``tables``, ``figures``, ``report``)."""
    out = Path(out)
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{command.split()[-1]}-", dir=out))
    try:
        return publish(make(staging), out, manifest, sources, force, command)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if made and not any(out.iterdir()):
            out.rmdir()


def publish(built, out, manifest, sources, force, command):
    """Move the files ``built`` (in a staging folder) into ``out``; return their new paths.

    ``manifest``: the file of ``out`` recording which results folders each file was written from
    (``sources``), ``{"written_by": command, "files": {file: [results folder, ...]}}``, the one format of
    every output folder the tool owns (``tables``, ``figures``, ``report``). A file of ``out`` of the same name
    that it does not record as written from these (another store's, or a user's) is not replaced unless
    ``force``: :class:`FilesExistError` names them and nothing moves. A file an older manifest records without
    its results (``recorded_owners``) is the command's own: re-running it over an older output folder is
    never refused.
    """
    out = Path(out)
    manifest_path = out / manifest
    owners = recorded_owners(manifest_path)
    refuse_special(out, [p.name for p in built] + [manifest], command)
    clash = [p.name for p in built if ((out / p.name).exists() or (out / p.name).is_symlink())
             and (p.name not in owners or owners[p.name] not in (None, sources))]
    if clash and not force:
        others = sorted({", ".join(owners[n]) for n in clash if owners.get(n)})
        raise FilesExistError(
            f"{out} already holds {len(clash)} file(s) this command would overwrite "
            f"({', '.join(clash[:4])}{' ...' if len(clash) > 4 else ''}), which {command} did not write from these "
            f"results (written from {'; '.join(others) if others else 'results it does not know, or not by eemrepro'})"
            "; write elsewhere with --out, or overwrite them with --force")
    written = []
    for p in built:
        os.replace(p, out / p.name)
        written.append(out / p.name)
        owners[p.name] = sources
    tmp = manifest_path.with_name(manifest + ".tmp")
    tmp.write_text(json.dumps({"written_by": command, "files": dict(sorted(owners.items()))}, indent=1) + "\n")
    os.replace(tmp, manifest_path)
    return written


#: The manifest of the files ``export`` wrote into a folder, beside them (hidden: an export goes into the user's
#: own folders): ``{"written_by": "eemrepro export", "files": {name: {"sha256": ..., "from": [results folder,
#: ...]}}}``. A file it lists with the checksum it has now is the command's own, overwritten without ``--force``.
EXPORT_MANIFEST = ".eemrepro-exports.json"


def _written_files(manifest_path):
    """{file: {"sha256", "from"}} of a single-file command's manifest ({} where there is none, or it is not one)."""
    try:
        recorded = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    except (ValueError, OSError):
        recorded = {}
    files = recorded.get("files") if isinstance(recorded, dict) else None
    return {str(k): v for k, v in files.items() if isinstance(v, dict)} if isinstance(files, dict) else {}


def not_its_own(path, command, manifest=EXPORT_MANIFEST):
    """Why the existing file ``path`` is not ``command``'s to overwrite, in words, or None where it is: a regular
    file its folder's ``manifest`` lists with the sha256 it has now (written by the command, unchanged since)."""
    from ..store._files import sha256_of

    path = Path(path)
    entry = _written_files(path.parent / manifest).get(path.name)
    if entry is None or path.is_symlink() or not path.is_file():
        return f"not written by {command}"
    if entry.get("sha256") != sha256_of(path):
        return f"changed since {command} wrote it"
    return None


def record_written(path, sources, command, manifest=EXPORT_MANIFEST):
    """List the file ``path`` that ``command`` just wrote from ``sources`` (results folders) in its folder's
    ``manifest``, with its sha256, so that the next call overwrites it (:func:`not_its_own`)."""
    from ..store._files import atomic_write, sha256_of

    path = Path(path)
    manifest_path = path.parent / manifest
    files = _written_files(manifest_path)
    files[path.name] = {"sha256": sha256_of(path), "from": [str(s) for s in sources]}
    atomic_write(manifest_path, json.dumps({"written_by": command, "files": dict(sorted(files.items()))},
                                           indent=1) + "\n")


def write_file(path, text, what, option):
    """Write ``text`` to the user's output file ``path`` (``check --pin``): placed as :func:`check_place` wants
    a file, written atomically (never through a link), an OSError said as :func:`writing` says it."""
    from ..store._files import atomic_write

    check_place(path, what, folder=False, option=option)
    with writing(path, what, option):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    return path
