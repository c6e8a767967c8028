"""The result store: what the runner writes and every report reads.

Layout of a results folder ``DIR`` (default ``results/<config name>``)::

    .eemrepro-store              the marker: the folder is the tool's to write (``_files``)
    config.yaml                  the config of the latest run (resolved): what the reports read
    runs/<run id>.json           one per run, written at its start and its end: config, package
                                 versions, host, code commit, data checksums, start/end, unit counts
    records/<run id>.jsonl       the write-ahead segment of a live run: one record per line, each
                                 ending with its own sha256 (``line_sha256``), each finished
                                 unit's records flushed and fsync'ed together
    records/<run id>.parquet     a sealed segment (Apache Parquet, zstd, page checksums): the same
                                 records as columns, written to a temporary file and renamed into place
    records/SHA256SUMS           the sha256 of every sealed segment, recorded before it is renamed
                                 into place and verified by every reader (and of any older
                                 JSON-lines segment listed there)
    records/*.jsonl.gz           an older store's segments, without line checksums (``compact`` or
                                 ``eemrepro store upgrade`` seals them)
    superseded-<stamp>/          records moved aside by ``forget``, ``--rerun-changed``, ``--fresh``
    damaged-<run id>.jsonl       lines that sealing found damaged (kept, not read)
    .lock                        the write lock (held by a live run, ``compact``, ``forget``)

A run appends to its write-ahead segment as units finish and seals it into
Parquet when it ends; a killed run loses at most the units in flight, and its
write-ahead segment is read as it is until ``compact`` seals it.

Every record read is checked, sealed or not: a sealed segment against its
sha256 in ``SHA256SUMS`` (and its Parquet page checksums), a write-ahead line
against its own ``line_sha256``: the sha256 of the record's canonical JSON,
i.e. of the line without that last field (``_segments.checked_line``). A line
that is torn, not JSON, not a record, or whose checksum is missing or does not
match is skipped and reported (a :class:`StoreWarning` naming the file and
lines), kept in ``damaged-<run id>.jsonl`` when the segment is sealed, and
named by ``verify_store``. In a segment written with line checksums every line
must carry one, so taking a checksum off a line does not make it pass. An older
JSON-lines segment (no line checksums) listed in ``SHA256SUMS`` is checked
whole; one that is not listed cannot be checked: it is read with a
:class:`StoreWarning` saying so, ``verify_store`` names it, and sealing it
(``compact``, ``upgrade_store``) gives its records, as they are then, a
checksum.

One column per field (``_segments``): key fields, parameters and metrics as
real columns, strings dictionary-encoded, and what is the same for a whole run
(package versions, host) once per run in the file's metadata, each row naming
its run in ``run_id``. The latest record of a key (data set, model, grid point, repeat,
fold, inner fold) wins: a retried unit's. Run ids are ``s<sequence>-<local
time>-<pid>``: segments are read in the store's own sequence, never a clock's
order (``run_order``).

Readers ask for the columns they use (``ResultStore.frame(columns=...)``) and
aggregate with group-by; ``read_results`` gives a user the same frame.
"""

from pathlib import Path

from ._files import stores_inside
from ._folder import CONFIG_FILE, FolderConfigError, FolderFiles, _damaged_run, read_runs
from ._keys import identity_sha, point_id, record_key, stored_key
from ._segments import StoreError, StoreWarning, same_values
from ._store import KEY_COLUMNS, DamagedSegmentError, ResultStore, StoreLockedError, add_param_columns


def read_results(dirs, columns=None):
    """Every stored record of one or more results folders as a DataFrame, one row per record.

    The latest record of a retried unit, as the reports see it. Columns: the
    record's fields (``dataset``, ``model``, ``repeat``, ``fold``, ``inner``,
    ``status``, timings, ...), the grid point as canonical JSON (``point``) and
    as one ``param_<name>`` column per parameter, one column per metric and
    criterion (``gmean``, ``auc``, ``dcs_kde``, ...), ``error_message``, the
    run's ``host`` and package ``versions`` (JSON), and ``store``, the folder.

    Parameters
    ----------
    dirs : path or list of paths
        Results folders (``results/<config name>``).
    columns : list of str, optional
        Only these columns (and the key columns); default all.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from eemrepro import read_results
    >>> df = read_results("results/uci")                      # doctest: +SKIP
    >>> df.groupby(["dataset", "model", "point"])["gmean"].mean()   # doctest: +SKIP
    """
    import pandas as pd

    dirs = _folders(dirs)
    if columns is not None and (isinstance(columns, (str, bytes)) or not all(isinstance(c, str) for c in columns)):
        raise TypeError(f"columns must be a list of column names, got {columns!r}"
                        + (f" (a string: columns=[{columns!r}])" if isinstance(columns, str) else ""))
    frames = []
    for d in dirs:
        if not d.is_dir():
            raise StoreError(f"{d} is not a results folder (no such folder)")
        if not (d / "records").is_dir() and not (d / "runs").is_dir():
            inside = stores_inside(d)
            raise StoreError(f"{d} is not a results folder (no records/ or runs/ in it)"
                             + (f"; the results folders inside are: {', '.join(inside[:8])}" if inside else ""))
        df = ResultStore(d).frame(None if columns is None else list(columns))
        frames.append(df.assign(store=str(d)))
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    missing = [c for c in columns or () if c not in df]
    if missing and len(df):
        known = sorted(c for c in ResultStore(dirs[0]).frame(None).columns if c != "store")
        raise ValueError(f"no column(s) {missing} in {', '.join(map(str, dirs))}; the columns are: {', '.join(known)}")
    return df


def _folders(dirs):
    """``dirs`` (a path or a sequence of paths) as a non-empty list of Paths, or a TypeError / ValueError."""
    if isinstance(dirs, (str, Path)):
        return [Path(dirs)]
    try:
        dirs = list(dirs)
    except TypeError:
        raise TypeError(f"dirs must be a results folder or a list of them, got {type(dirs).__name__}") from None
    if not dirs:
        raise ValueError("name at least one results folder (got an empty list)")
    bad = [d for d in dirs if not isinstance(d, (str, Path))]
    if bad:
        raise TypeError(f"dirs must be paths, got {bad[0]!r}")
    return [Path(d) for d in dirs]


def export_results(dirs, path, fmt="csv"):
    """Write ``read_results(dirs)`` to ``path`` as CSV or Parquet; return the number of rows.

    In CSV, a list-valued column (D_CS values, embeddings) is written as JSON text.
    """
    import json

    import numpy as np

    df = read_results(dirs)
    if not len(df):
        raise StoreError(f"no records in {', '.join(map(str, _folders(dirs)))}: nothing to export")
    from ._files import atomic_write

    if fmt not in ("csv", "parquet"):
        raise ValueError(f"format must be csv or parquet, got {fmt!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        atomic_write(path, lambda fh: df.to_parquet(fh, index=False, compression="zstd"))
    else:
        for c in df.columns:
            if df[c].dtype == object and df[c].map(lambda v: isinstance(v, (list, np.ndarray))).any():
                df[c] = [json.dumps(np.asarray(v).tolist()) if isinstance(v, (list, np.ndarray)) else v
                         for v in df[c]]
        atomic_write(path, lambda fh: fh.write(df.to_csv(index=False, lineterminator="\n").encode("utf-8")))
    return len(df)


def upgrade_store(root):
    """Bring a results folder (any older layout) to today's: every JSON-lines segment sealed into Parquet,
    every sealed segment's sha256 recorded in its folder's ``SHA256SUMS``, the folder marked as a store.

    Lossless: the new segments read back as the same records (``read``); a
    segment already sealed is not rewritten (its bytes are checksummed as they
    are, once they are read whole without error). A sealed segment that does not
    match its recorded sha256 or does not read whole stops it before any file
    changes (:class:`DamagedSegmentError` naming it). Returns ``(segments sealed or
    checksummed, bytes before, bytes after)``.
    """
    store = ResultStore(root)
    if not store.records_dir.is_dir():
        raise StoreError(f"{root} has no records/ folder: not a results folder")
    # Records moved aside (``superseded-*``) are sealed too: nothing of the old layout is left.
    stores = [store] + [_Aside(p) for p in sorted(Path(root).glob("superseded-*")) if p.is_dir()]
    before = sum(p.stat().st_size for s in stores for p in s.segments())
    with store.writing("store upgrade"):
        for s in stores:  # refused, changing nothing, as a reader refuses: a damaged segment named
            s.check_sealed()
        written = [path for s in stores for path in s.compact(check=False)]
        # Segments sealed before checksums: recorded as they are (not rewritten), listed after the sealed ones.
        written += [s.records_dir / name for s in stores for name in s.add_checksums()]
    after = sum(p.stat().st_size for s in stores for p in s.segments())
    return written, before, after


def verify_store(root):
    """Check every part of a results folder; return ``(files checked, [(path, what is wrong)])``.

    Every sealed segment against its recorded sha256 and read whole (Parquet
    page checksums verified), every write-ahead segment's lines against their
    checksums (an older one without them: against its listed sha256, or named
    as unverifiable), every run file,
    the ``SHA256SUMS`` files themselves (a listed segment that is gone is a
    lost segment), in the folder, its readings (``readings/*``) and what it
    moved aside (``superseded-*``).
    """
    from ._files import SUMS, damaged_sum_lines, read_sums
    from ._store import _stem

    root = Path(root)
    if not (root / "records").is_dir() and not (root / "runs").is_dir():
        raise StoreError(f"{root} is not a results folder (no records/ or runs/ in it)")
    problems, checked = [], 0
    folders = [ResultStore(root)] + [_Aside(p) for p in sorted(root.glob("superseded-*")) if p.is_dir()]
    for store in folders:
        sums = read_sums(store.records_dir)
        for n in damaged_sum_lines(store.records_dir):
            problems.append((store.records_dir / SUMS, f"line {n} is not '<sha256>  <file name>'"))
        segments = store.segments()
        names = {p.name for p in segments}
        for name in sorted(set(sums) - names):
            # A sealed segment stands for its write-ahead file, and the write-ahead file (a seal cut short) for it.
            stem = _stem(Path(name))
            if not any((store.records_dir / (stem + s)).exists() for s in (".parquet", ".jsonl", ".jsonl.gz")):
                problems.append((store.records_dir / name, f"listed in {SUMS} but missing: a lost segment"))
        for path in segments:
            checked += 1
            why = store.segment_problem(path, sums) if sums or path.suffix != ".parquet" else \
                "no sha256 recorded for it (`eemrepro store upgrade` records one)"
            if why is not None:
                problems.append((path, why))
    for path in sorted((root / "runs").glob("*.json")):
        checked += 1
        why = _damaged_run(path)
        if why is not None:
            problems.append((path, why))
    for sub in sorted((root / "readings").glob("*")) if (root / "readings").is_dir() else ():
        if (sub / "records").is_dir() or (sub / "runs").is_dir():
            n, more = verify_store(sub)
            checked += n
            problems += more
    return checked, problems


class _Aside(ResultStore):
    """A ``superseded-*`` folder: record segments directly inside it, upgraded with the store's config."""

    def __init__(self, folder):
        super().__init__(Path(folder).parent)
        self.records_dir = Path(folder)


__all__ = [
    "ResultStore", "read_results", "export_results", "upgrade_store", "verify_store", "read_runs", "StoreError",
    "FolderFiles", "FolderConfigError", "CONFIG_FILE",
    "StoreWarning", "DamagedSegmentError",
    "StoreLockedError", "KEY_COLUMNS", "point_id", "record_key", "stored_key", "identity_sha", "same_values",
    "add_param_columns",
]
