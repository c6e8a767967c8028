"""The files of a results folder: written only by the tool, atomically, never through a link; checksummed.

* ``atomic_write``: every file the store writes goes to a temporary file in
  the same folder (created exclusively, never following a link), is fsync'ed
  and renamed into place; the folder is fsync'ed after.
* ``SHA256SUMS`` (in ``records/`` and in each ``superseded-*/``): the sha256 of
  every sealed segment, in ``sha256sum`` format (``sha256sum -c SHA256SUMS``
  checks it with coreutils), recorded when the segment is sealed, before it is
  renamed into place. Readers verify a segment against it before reading it.
* ``MARKER``: written into every results folder the tool makes; a folder with
  neither it nor an older store's layout is not the tool's to write.
"""

import hashlib
import json
import os
import re
from pathlib import Path

from .._version import __version__
from ._segments import StoreError

SUMS = "SHA256SUMS"
MARKER = ".eemrepro-store"
_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")


def fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover (no directory handles on this platform)
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def refuse_link(path):
    """A StoreError when ``path`` is a symbolic link: the store never writes through one."""
    path = Path(path)
    if path.is_symlink():
        raise StoreError(f"{path} is a symbolic link (to {os.readlink(path)}): eemrepro writes only files it made "
                         f"inside the results folder, never through a link; remove the link")


def open_new(path):
    """A file object for a new file at ``path`` (binary, write): created exclusively, no link followed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    return os.fdopen(fd, "wb")


def temp_path(path):
    """A temporary name beside ``path`` that no other writer uses (``<name>.<pid>.tmp``)."""
    path = Path(path)
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")


def atomic_write(path, data, before_rename=None):
    """Write ``data`` (bytes, str, or a function writing to a binary file object) to ``path``: temporary file,
    fsync, rename; never through a link.

    ``before_rename(tmp)``: called with the written temporary file before it
    is renamed into place (to record its checksum, say). Returns ``path``.
    """
    path = Path(path)
    refuse_link(path)
    tmp = temp_path(path)
    tmp.unlink(missing_ok=True)
    try:
        with open_new(tmp) as fh:
            if callable(data):  # a writer of its own (pyarrow's)
                data(fh)
            else:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        if before_rename is not None:
            before_rename(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_sums(folder):
    """{file name: sha256} of a folder's ``SHA256SUMS`` ({} without one); a damaged line is ignored
    (the segment it named then reads as unchecked, and ``store verify`` names the line)."""
    path = Path(folder) / SUMS
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return {}
    sums = {}
    for line in text.splitlines():
        m = _SUM_LINE.match(line)
        if m:
            sums[m.group(2)] = m.group(1)
    return sums


def damaged_sum_lines(folder):
    """Line numbers of a ``SHA256SUMS`` that are not ``<sha256>  <name>`` (for ``store verify``)."""
    path = Path(folder) / SUMS
    if not path.is_file():
        return []
    return [n for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if line.strip() and not _SUM_LINE.match(line)]


def record_sums(folder, changes):
    """Set (``{name: sha256}``) or drop (``{name: None}``) entries of a folder's ``SHA256SUMS``, atomically.

    The caller holds the store's write lock.
    """
    sums = read_sums(folder)
    for name, digest in changes.items():
        if digest is None:
            sums.pop(name, None)
        else:
            sums[name] = digest
    atomic_write(Path(folder) / SUMS, "".join(f"{sums[n]}  {n}\n" for n in sorted(sums)))


def stores_inside(folder):
    """The results folders directly inside ``folder`` (``results/`` given where one of them was meant)."""
    return sorted(str(p.parent) for p in Path(folder).glob("*/records") if p.is_dir())


def write_marker(root):
    """Mark ``root`` as a results folder of the tool's (kept; written once)."""
    path = Path(root) / MARKER
    if not path.exists() or path.is_symlink():
        atomic_write(path, json.dumps({"eemrepro_store": 1, "created_by": f"eemrepro {__version__}"}) + "\n")


def is_store(root):
    """Whether ``root`` is a results folder of the tool's: its marker, or (a store written before markers)
    a run file the tool wrote, or a first record segment that is one."""
    root = Path(root)
    if (root / MARKER).is_file() and not (root / MARKER).is_symlink():
        return True
    for run in sorted((root / "runs").glob("*.json"))[:3]:
        try:
            info = json.loads(run.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and isinstance(info.get("config"), dict) and "run_id" in info:
            return True
    return any(_is_segment(p) for p in sorted((root / "records").glob("*"))[:3])


def _is_segment(path):
    from ._segments import not_a_record

    try:
        if path.name.endswith(".parquet"):
            import pyarrow.parquet as pq

            with open(path, "rb") as fh:
                return b"eemrepro.runs" in (pq.read_schema(fh).metadata or {})
        if path.name.endswith((".jsonl", ".jsonl.gz")):
            import gzip

            opener = gzip.open if path.name.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as fh:
                return not_a_record(json.loads(fh.readline())) is None
    except Exception:  # anything unreadable (torn, foreign, truncated) is not a segment of ours
        return False
    return False


def check_out_folder(root):
    """Refuse a results folder that is not the tool's to write: ``/``, the home folder, a folder that
    holds other files and no store. A new or empty folder, or a store, passes."""
    root = Path(root)
    resolved = root.resolve()
    if resolved == Path(resolved.anchor) or resolved == Path.home().resolve():
        raise StoreError(f"{root} ({resolved}) cannot be a results folder: name a folder of its own "
                         "(default results/<config name>)")
    if root.is_symlink() and not root.is_dir():
        refuse_link(root)
    if not root.is_dir():  # new (or a file in the way, which making the folder reports)
        return
    if is_store(root):
        return
    if any(root.iterdir()):
        raise StoreError(f"{root} holds files and is not an eemrepro results folder (no {MARKER} in it): "
                         "eemrepro writes only folders it made; name a new or empty folder")
