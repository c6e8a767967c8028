"""``ResultStore``: a results folder's records, written ahead as JSON lines, sealed as Parquet.

See the package docstring for the layout. Only one process writes a folder at
a time (``writing``: a lock the kernel drops when its holder dies); readers
need no lock, since a sealed segment is written to a temporary file and
renamed into place, and a write-ahead segment's torn last line is skipped.
"""

import functools
import gzip
import itertools
import json
import os
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ._files import (
    MARKER,
    SUMS,
    atomic_write,
    check_out_folder,
    fsync_dir,
    read_sums,
    record_sums,
    refuse_link,
    sha256_of,
    write_marker,
)
from ._folder import FolderFiles, run_order
from ._segments import (
    StoreError,
    StoreWarning,
    checked_line,
    decode,
    disagreements,
    disk_columns,
    encode,
    frame_names,
    has_line_sums,
    parse_lines,
    said,
    table_meta,
    to_pandas,
    warn_damaged,
)

#: The frame columns that make a record's key (what "the latest record of a key" means).
KEY_COLUMNS = ["dataset", "model", "point", "repeat", "fold", "inner"]
_WAL_SUFFIXES = (".jsonl", ".jsonl.gz")
_SEAL_CHUNK = 50_000  # lines encoded at a time when sealing
_SNAPSHOT_TRIES = 50  # passes a reader makes while writers keep changing the folder under it
_PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 9}

try:  # POSIX record locks; elsewhere one writer at a time is the user's to ensure
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None


class StoreLockedError(StoreError):
    """Another live process is writing the results folder."""


_HELD = {}  # lock path -> [fd, depth]: this process's locks (a POSIX lock is per process)


def _stem(path):
    name = path.name
    for suffix in (".parquet", *_WAL_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


class DamagedSegmentError(StoreError):
    """A sealed segment does not match the checksum recorded when it was sealed (named), or cannot be parsed."""


def write_parquet(table, path):
    """Write ``table`` to ``path`` atomically (temporary file, fsync, rename), with Parquet page checksums,
    its sha256 recorded in the folder's ``SHA256SUMS`` before it is renamed into place."""
    path = Path(path)
    floats = [f.name for f in table.schema if pa.types.is_floating(f.type)]
    # Lists of floats (EEM Table 1's D_CS pairs, a million distinct values a store): byte-stream-split
    # their elements, which dictionary encoding would otherwise take first (16 % smaller, lossless).
    float_lists = [f.name for f in table.schema if pa.types.is_list(f.type) and pa.types.is_floating(f.type.value_type)]
    dictionary = [n for n in table.column_names if n not in float_lists] if float_lists else True
    split = floats + [n + ".list.element" for n in float_lists]

    def write(fh):  # a file object: pyarrow never parses the path as a URI
        pq.write_table(table, fh, use_dictionary=dictionary, use_byte_stream_split=split or False,
                       write_page_checksum=True, **_PARQUET_OPTIONS)

    return atomic_write(path, write, before_rename=lambda tmp: record_sums(path.parent, {path.name: sha256_of(tmp)}))


def read_verified(path, sums=None):
    """The bytes of a sealed segment, checked against its ``SHA256SUMS`` entry (if it has one).

    A mismatch is read once more (a writer may have replaced the file between
    the two reads) before :class:`DamagedSegmentError` names the file.
    """
    import hashlib

    path = Path(path)
    for attempt in range(3):
        sums = read_sums(path.parent) if sums is None or attempt else sums
        data = path.read_bytes()
        want = sums.get(path.name)
        if want is None or hashlib.sha256(data).hexdigest() == want:
            break
        time.sleep(0.01 * (attempt + 1))
    else:
        raise DamagedSegmentError(
            f"{path}: damaged (its sha256 is not the one recorded in {path.parent / 'SHA256SUMS'} when it was "
            f"sealed); it is not read. Restore it (git checkout, a backup) or move it out of {path.parent} "
            "to read the rest of the store")
    return data


class ResultStore:
    """The records of one results folder.

    Parameters
    ----------
    root : path
        The results folder (``results/<config name>``).
    """

    def __init__(self, root):
        self.root = Path(root)
        self.records_dir = self.root / "records"
        self.run_id = None
        self._wal = None
        self._fh = None
        self.appended = 0  # units written by this process's writer (``append_units`` counts each of its units)

    # -- reading ----------------------------------------------------------
    def segments(self):
        """Every record segment in write order (a write-ahead file already sealed is left out)."""
        if not self.records_dir.is_dir():
            return []
        sealed = {_stem(p) for p in self.records_dir.glob("*.parquet")}
        paths = [*self.records_dir.glob("*.parquet"),
                 *(p for s in _WAL_SUFFIXES for p in self.records_dir.glob("*" + s) if _stem(p) not in sealed)]
        return sorted(paths, key=lambda p: (run_order(_stem(p)), p.suffix == ".parquet"))

    def _legacy_upgrade(self):
        """A function upgrading a record written before record identities (``_legacy``)."""
        from ._legacy import upgrade

        config = FolderFiles(self.root).raw()
        return lambda record: upgrade(record, config)

    def _wal_chunks(self, path, size=None, sums=None, sealing=False):
        """(records, damaged lines) of a JSON-lines segment, ``size`` lines at a time (None: all at once).

        Every record read is checked: a segment listed in its folder's
        ``SHA256SUMS`` (``sums``; None: read now) is verified whole first
        (``_wal_listed``), and the lines of a segment written with line
        checksums (``checked_line``: every segment this version writes) one by
        one, a line that fails being damaged. A segment with neither (an older
        store's) is read with a :class:`StoreWarning` saying its records are
        not verified, unless ``sealing`` (sealing it is what gives them a
        checksum). Damaged lines are reported once, for the whole file.
        """
        listed = self._wal_listed(path, sums)
        opener = gzip.open if path.name.endswith(".gz") else open
        upgrade = self._legacy_upgrade()
        damaged_all, read = [], 0
        try:
            # Whether the segment has line checksums is a fact of the whole file: scanned first when read in chunks.
            checked = None if size is None else _has_line_sums(path, opener)
            with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
                first = 1
                while True:
                    lines = fh.readlines() if size is None else list(itertools.islice(fh, size))
                    if not lines and first > 1:
                        break
                    if checked is None:
                        checked = has_line_sums(lines)
                    records, damaged = parse_lines(path, lines, upgrade=upgrade, first_line=first, checked=checked)
                    damaged_all += damaged
                    read += len(records)
                    first += len(lines)
                    yield records, damaged
                    if size is None or len(lines) < size:
                        break
        except (OSError, EOFError) as exc:
            # A gzip member cut short, an unreadable file: named, never half-read silently.
            raise StoreError(f"{path}: cannot be read ({exc}); move it out of {self.records_dir} "
                             "to read the rest of the store") from None
        warn_damaged(path, damaged_all)
        if read and not checked and not listed and not sealing:
            warnings.warn(StoreWarning(f"{path}: {_UNVERIFIED.format(n=read)}"), stacklevel=3)

    def _wal_listed(self, path, sums=None):
        """Whether a write-ahead segment is listed in its folder's ``SHA256SUMS`` (``sums``; None: read now),
        verified whole when it is: :class:`DamagedSegmentError` when its sha256 is not the one listed."""
        path = Path(path)
        want = (read_sums(path.parent) if sums is None else sums).get(path.name)
        if want is None:
            return False
        if sha256_of(path) != want:
            raise DamagedSegmentError(
                f"{path}: damaged (its sha256 is not the one recorded in {path.parent / SUMS}); it is not read. "
                f"Restore it (git checkout, a backup) or move it out of {path.parent} to read the rest of the store")
        return True

    def _wal_records(self, path, sums=None):
        (records, damaged), = self._wal_chunks(path, sums=sums)
        return records, damaged

    def _table(self, path, wanted=None, raw=False, sums=None):
        """One segment as an Arrow table: the stored columns giving the frame columns ``wanted``
        (None: all of them), or (``raw``) every stored column. A sealed segment is verified first
        (``read_verified``; ``sums``: its folder's ``SHA256SUMS``, read once per pass)."""
        if path.suffix == ".parquet":
            data = read_verified(path, sums)
            try:
                source = pa.BufferReader(data)
                schema = pq.read_schema(source)
                table_meta(schema)
                columns = None if raw else disk_columns(schema.names, wanted)
                # Strings stay dictionary-encoded in memory, as on disk (a handful of distinct values each).
                strings = [f.name for f in schema
                           if pa.types.is_string(f.type) and (columns is None or f.name in columns)]
                return pq.read_table(pa.BufferReader(data), columns=columns,
                                     read_dictionary=None if raw else strings, page_checksum_verification=True)
            except (OSError, pa.ArrowException, ValueError) as exc:
                raise DamagedSegmentError(
                    f"{path}: not a readable record segment ({str(exc).splitlines()[0][:200]}); "
                    f"move it out of {self.records_dir} to read the rest of the store") from None
        records, _ = self._wal_records(path, sums)
        table = encode(records, _stem(path))
        return table if raw else table.select(disk_columns(table.column_names, wanted))

    def segment_records(self, path):
        """The records of one segment as written, in order (no deduplication)."""
        path = Path(path)
        return decode(self._table(path, raw=True)) if path.suffix == ".parquet" else self._wal_records(path)[0]

    def run_facts(self):
        """{run id: {"versions": ..., "host": ...}} of every segment (read from the files' metadata)."""
        facts = {}
        for path in self.segments():
            if path.suffix == ".parquet":
                facts.update(table_meta(pq.read_schema(pa.BufferReader(read_verified(path))))[0])
            else:
                facts.update(table_meta(self._table(path, raw=True).schema)[0])
        return facts

    def frame(self, columns=None, datasets=None):
        """The latest record of each key as a DataFrame, one column per field.

        ``columns``: the frame columns to read (the key columns always come;
        ``"metrics"`` / ``"criteria"`` stand for all of them); None reads every
        column. Names: ``point`` is the grid point as canonical JSON,
        ``param_<name>`` its parameters (with ``columns=None`` or when asked for),
        a metric or a criterion its bare name, ``error_message`` the error
        text; ``identity`` and ``fixed_params`` are JSON text. ``datasets``:
        the records of these data sets only (None: all), each segment's others
        left in Arrow as it is read: the frame of the rest is the same rows as
        the whole frame's of those data sets, in the same order.
        """
        wanted = None if columns is None else list(dict.fromkeys([*KEY_COLUMNS, *columns]))
        params = None if columns is None else [c.removeprefix("param_") for c in columns if c.startswith("param_")]
        disk = None if wanted is None else [c for c in wanted if not c.startswith("param_")]
        # Segments become frames as they are read, in runs of at least LARGE_SEGMENT records (``_FramePieces``),
        # and their Arrow memory is handed back: the peak is the frame's pieces and one run in Arrow, not every
        # segment in Arrow beside the whole frame.
        pieces, facts = self._snapshot(disk, sink=_FramePieces, datasets=datasets)
        frames = pieces.frames()
        del pieces
        if not frames:
            return _empty_frame(wanted or KEY_COLUMNS)
        if len(frames) == 1:
            (df,) = frames
        else:
            df = concat_frames(frames)
            for c in [c for c in df.columns if df[c].dtype == np.dtype(object)]:
                # A piece without the column (or with it all null) gave NaN where Arrow's union gives None.
                df[c] = df[c].where(df[c].notna(), None)
        del frames
        if len(df) >= LARGE_FRAME:
            release_memory()  # the pieces, before the work on the frame allocates more
        for c in KEY_COLUMNS:
            if c not in df:
                df[c] = None
        df["inner"] = pd.to_numeric(df["inner"]).astype(float)
        df = _latest(df)
        if "run_id" in df and (wanted is None or "host" in wanted or "versions" in wanted):
            for fact in ("host", "versions"):
                if wanted is None or fact in wanted:
                    values = {rid: f.get(fact) for rid, f in facts.items()}
                    if fact == "versions":
                        values = {k: None if v is None else json.dumps(v, sort_keys=True) for k, v in values.items()}
                    df[fact] = df["run_id"].map(values)
        if params is None or params:
            df = add_param_columns(df, params)
        df.attrs["run_facts"] = facts
        return df

    def record_count(self):
        """The records over every segment, as written (the sum of ``dataset_counts``), from the sealed segments'
        footers and the write-ahead files' records: no column read. What plans a read, which verifies every
        segment; None where a segment cannot tell (``dataset_counts`` then reads it, and names what is wrong)."""
        total = 0
        try:
            for path in self.segments():
                total += pq.ParquetFile(path).metadata.num_rows if path.suffix == ".parquet" else \
                    len(self._wal_records(path)[0])
        except (OSError, pa.ArrowException, ValueError, StoreError):
            return None
        return total

    def dataset_counts(self):
        """{data set: records} over every segment, as written (a retried unit counted each time): what a
        reader plans its passes by, from the data set column alone."""
        counts, _ = self._snapshot(["dataset"], sink=_DatasetCounts)
        return counts.counts

    def _snapshot(self, disk, sink=list, datasets=None):
        """Every segment's table (of the records of ``datasets`` only, unless None), appended in order to a
        fresh ``sink()`` (a list: the tables themselves), as one consistent state of the folder.

        A writer may seal a write-ahead segment (or ``compact`` may) while this
        reads: a segment that vanished, or a write-ahead file whose sealed
        Parquet appeared meanwhile, makes the whole pass start again (until the
        folder holds still), so a reader never sees a record twice or misses one, and never
        calls a just-sealed file unreadable.
        """
        for attempt in range(_SNAPSHOT_TRIES):
            listing = self.segments()
            sums = read_sums(self.records_dir)
            tables, facts = sink(), {}
            try:
                for path in listing:
                    table = self._table(path, disk, sums=sums)
                    facts.update(table_meta(table.schema)[0])
                    table = _dictionary_strings(frame_names(table).replace_schema_metadata(None))
                    if datasets is not None and "dataset" in table.column_names:  # (an empty segment has none)
                        table = table.filter(pc.is_in(table.column("dataset"),
                                                      value_set=pa.array(sorted(datasets), pa.string())))
                    tables.append(table)
                    del table
            except (FileNotFoundError, StoreError):
                if attempt == _SNAPSHOT_TRIES - 1 or self.segments() == listing:
                    raise
                time.sleep(min(0.2, 0.01 * (attempt + 1)))
                continue
            if self.segments() == listing:
                return tables, facts
        return tables, facts

    def read(self):
        """Every record (the latest of each key, a retried unit's) as the mapping that was written.

        Records written before record identities are upgraded (``_legacy``).
        For analysis, :meth:`frame` is faster and leaner.
        """
        latest = {}
        for path in self.segments():
            for r in self.segment_records(path):
                latest[(r["dataset"], r["model"], json.dumps(r["params"], sort_keys=True), r["repeat"], r["fold"],
                        r.get("inner"))] = r
        return list(latest.values())

    # -- writing ----------------------------------------------------------
    @contextmanager
    def writing(self, what="eemrepro"):
        """Hold the folder's write lock (refused, naming the holder, while another live process holds it).

        A killed holder's lock is released by the kernel, never left stuck.
        """
        check_out_folder(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        for name in (".lock", "records", "runs", "config.yaml", MARKER):
            refuse_link(self.root / name)
        write_marker(self.root)
        path = str(self.root.resolve() / ".lock")
        if fcntl is None:  # pragma: no cover
            yield
            return
        held = _HELD.get(path)
        if held is not None:  # this process holds it already (a forget inside a run)
            held[1] += 1
            try:
                yield
            finally:
                held[1] -= 1
            return
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        for attempt in range(3):  # (``check_unlocked`` of a status or dry run holds it for microseconds)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if attempt == 2:
                    os.close(fd)
                    raise StoreLockedError(self._held_by(path)) from None
                time.sleep(0.05)
        import socket

        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "what": what,
                                  "since": time.time()}).encode(), 0)
        _HELD[path] = [fd, 1]
        try:
            yield
        finally:
            del _HELD[path]
            os.close(fd)  # releases the lock

    def check_unlocked(self):
        """Refuse (``StoreLockedError``, in the words of :meth:`writing`) where another live process holds the
        folder's write lock: what a run would meet, said by its dry run and ``status``. Only reads: nothing is
        created, and the lock file a killed holder left (the kernel released its lock) is no holder."""
        path = self.root / ".lock"
        if fcntl is None or str(path.resolve()) in _HELD or not path.is_file() or path.is_symlink():
            return
        try:  # a shared lock, given up at once: refused only while a writer holds the exclusive one
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            raise StoreLockedError(self._held_by(path)) from None
        finally:
            os.close(fd)  # (this process holds no other lock on it: ``_HELD`` above)

    def _held_by(self, path):
        """Why a write of this folder is refused: the live process holding ``path`` (its lock), as it wrote
        itself there."""
        try:
            holder = json.loads(Path(path).read_text() or "{}")
        except (OSError, ValueError):
            holder = {}
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder["since"])) if "since" in holder \
            else "an unknown time"
        return (f"{self.root} is being written by process {holder.get('pid', '?')} on {holder.get('host', '?')} "
                f"({holder.get('what', 'unknown')}, since {since}); wait for it to finish or stop it")

    def new_run_id(self):
        """A run id no segment or run file of this folder has: ``s<sequence>-<local time>.<µs>-<pid>``.

        The sequence is one more than the largest of the folder's ids
        (``run_order``): segments are read in that order and the latest record
        of a key wins, so a later run's records win whatever the clock says.
        Taken under the write lock, so two writers never draw the same one.
        """
        names = [*(_stem(p) for p in self.records_dir.glob("*")),
                 *(p.stem for p in (self.root / "runs").glob("*.json"))]
        sequence = 1 + max((run_order(n)[1] for n in names), default=0)
        now = time.time()
        return f"s{sequence:06d}-{time.strftime('%Y%m%dT%H%M%S', time.localtime(now))}." \
               f"{int(now * 1e6) % 1_000_000:06d}-{os.getpid()}"

    def _open(self):
        if self._fh is None:
            self.records_dir.mkdir(parents=True, exist_ok=True)
            refuse_link(self.records_dir)
            self.run_id = self.run_id or self.new_run_id()
            self._wal = self.records_dir / f"{self.run_id}.jsonl"
            fd = os.open(self._wal, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
            self._fh = os.fdopen(fd, "a", encoding="utf-8")
        return self._fh

    def append(self, records):
        """Append one unit's records to this process's write-ahead segment, flushed and fsync'ed."""
        self.append_units([records])

    def append_units(self, units):
        """Append several units' records (a list of record lists) in one write, flushed and fsync'ed once:
        a batch of small units handed back together costs the main process one fsync, not one a unit."""
        fh = self._open()
        fh.write("".join(checked_line(r) for records in units for r in records))  # each line its own sha256
        # Counted once written: an interrupt from here on still stores them (closing the file flushes it).
        self.appended += len(units)
        fh.flush()
        os.fsync(fh.fileno())

    def close(self, seal=True):
        """Close this process's write-ahead segment and (``seal``) seal it into Parquet."""
        if self._fh is None:
            return None
        self._fh.close()
        self._fh = None
        return self.seal(self._wal) if seal else None

    def seal(self, path):
        """Seal one closed write-ahead segment into ``<stem>.parquet``; return the new file.

        The complete records are written atomically before the source is
        removed (a crash in between leaves both, and readers take the sealed
        one). Damaged lines (a line checksum that does not match among them) are
        reported, and kept in ``damaged-<stem>.jsonl``. A segment listed in
        ``SHA256SUMS`` is verified whole first, and its entry dropped once sealed.
        """
        path = Path(path)
        target = path.with_name(_stem(path) + ".parquet")
        listed = path.name in read_sums(path.parent)
        # Encoded a chunk at a time: a long run's records never sit in memory as mappings all at once.
        tables, damaged, run_of = [], [], {}
        for records, bad in self._wal_chunks(path, size=_SEAL_CHUNK, sealing=True):
            tables.append(encode(records, _stem(path), run_of))
            damaged += bad
            del records
        write_parquet(_concat_chunks(tables), target)
        if damaged:
            atomic_write(self.root / f"damaged-{_stem(path)}.jsonl",
                         "".join(line if line.endswith("\n") else line + "\n" for _, line, _ in damaged))
        if listed:  # before the unlink: a crash in between leaves an unlisted segment its Parquet stands for
            record_sums(path.parent, {path.name: None})
        path.unlink()
        fsync_dir(path.parent)
        return target

    def compact(self, check=True):
        """Seal every closed write-ahead segment (today's JSON lines or an older store's); return the new files.

        Takes the write lock: refused while a run writes the folder. ``check``:
        first ``check_sealed`` (a damaged segment refused by name, nothing changed).
        """
        if self._fh is not None:
            raise StoreError("close the store before compacting it")
        with self.writing("compact"):
            if check:
                self.check_sealed()
            for path in self.records_dir.glob("*.parquet"):
                stale = [path.with_name(_stem(path) + s) for s in _WAL_SUFFIXES]
                for wal in stale:  # sealed before a crash removed it
                    wal.unlink(missing_ok=True)
            return [self.seal(p) for p in self.segments() if p.suffix != ".parquet"]

    def check_sealed(self):
        """Raise :class:`DamagedSegmentError` naming the first sealed segment whose bytes are not the ones its
        ``SHA256SUMS`` records (``read_verified``) or that does not read whole: what a compaction or an upgrade
        checks before changing anything."""
        sums = read_sums(self.records_dir)
        for path in self.segments():
            if path.suffix != ".parquet":
                self._wal_listed(path, sums)  # a write-ahead segment listed in SHA256SUMS: its sha256 too
                continue
            why = _unreadable(read_verified(path, sums))
            if why is not None:
                raise DamagedSegmentError(f"{path}: {why}; move it out of {path.parent} (or restore it), "
                                          "then run this again")

    def add_checksums(self):
        """Record the sha256 of every sealed segment that has none (a store sealed before checksums),
        once its bytes read whole without error. The caller holds the write lock."""
        import hashlib

        sums = read_sums(self.records_dir)
        new = {}
        for path in self.segments():
            if path.suffix == ".parquet" and path.name not in sums:
                data = path.read_bytes()  # read once: parsed whole, then hashed
                why = _unreadable(data)
                if why is not None:
                    raise DamagedSegmentError(f"{path}: {why}; not checksummed (move it out, then upgrade)")
                new[path.name] = hashlib.sha256(data).hexdigest()
        if new:
            record_sums(self.records_dir, new)
        return new

    def segment_problem(self, path, sums):
        """What is wrong with one segment (None: nothing): a sha256 that is not the recorded one, no
        recorded sha256 (``sums``: the folder's SHA256SUMS; ``{}`` checks only that it reads),
        a Parquet page or footer that does not read, a damaged write-ahead line (a line checksum that does
        not match among them), a write-ahead segment with neither line checksums nor a listed sha256."""
        import hashlib

        path = Path(path)
        if path.suffix == ".parquet":
            data = path.read_bytes()
            if sums and path.name not in sums:
                return "no sha256 recorded for it (`eemrepro store upgrade` records one)"
            if sums and hashlib.sha256(data).hexdigest() != sums[path.name]:
                return "damaged: its sha256 is not the one recorded when it was sealed"
            return _unreadable(data) or _disagreeing(pq.read_table(pa.BufferReader(data)))
        if path.name in sums and sha256_of(path) != sums[path.name]:
            return f"damaged: its sha256 is not the one recorded in {SUMS}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                records, damaged = self._wal_records(path, sums)
                checked = _has_line_sums(path, gzip.open if path.name.endswith(".gz") else open)
            except StoreError as exc:
                return str(exc)
        if damaged:
            return f"{len(damaged)} damaged line(s) (line {damaged[0][0]}: {damaged[0][2]})"
        if records and not checked and path.name not in sums:
            return _UNVERIFIED.format(n=len(records))
        return None

    def forget(self, models=None, datasets=None, cells=None):
        """Move the records of these models / data sets aside so that a resume runs them again.

        For re-measuring after a change to a model (its records no longer
        describe the code). The store is compacted first; each segment holding
        a match is rewritten without it, atomically, and the matching records
        go to ``superseded-<stamp>/`` (nothing is deleted). ``cells``: (data
        set, model) pairs instead of names. Raises ValueError, moving nothing,
        for a name with no stored record. Returns ``(records moved, folder or None)``.
        """
        import pyarrow.compute as pc

        with self.writing("forget"):
            self.compact()
            # A segment with no record (its only line was torn, then sealed) has no columns to match.
            tables = [(p, t) for p in self.segments() if (t := self._table(p, raw=True)).num_rows]
            for label, chosen, field in (("model", models, "model"), ("data set", datasets, "dataset")):
                known = sorted({v for _, t in tables for v in t.column(field).unique().to_pylist()})
                unknown = sorted(set(chosen or ()) - set(known))
                if unknown:
                    raise ValueError(f"{self.root}: no stored records of {label}(s) {unknown}; stored: {known}")
            target = None
            moved = 0
            for path, table in tables:
                if cells is not None:
                    pairs = [f"{d}\x1f{m}" for d, m in cells]
                    both = pc.binary_join_element_wise(table.column("dataset"), table.column("model"), "\x1f")
                    mask = pc.is_in(both, pa.array(pairs, pa.string()))
                else:
                    mask = pa.array([True] * table.num_rows)
                    if models is not None:
                        mask = pc.and_(mask, pc.is_in(table.column("model"), pa.array(list(models), pa.string())))
                    if datasets is not None:
                        mask = pc.and_(mask, pc.is_in(table.column("dataset"), pa.array(list(datasets), pa.string())))
                mask = pc.fill_null(mask, False)
                n = pc.sum(mask).as_py() or 0
                if not n:
                    continue
                target = target or self._new_aside()
                write_parquet(table.filter(mask), target / path.name)
                write_parquet(table.filter(pc.invert(mask)), path)
                moved += n
            return moved, (target if moved else None)

    def _new_aside(self):
        """A new, empty ``superseded-<stamp>[-<k>]/`` folder: made exclusively, so a second move aside
        within the same second never writes into (or over) the first's."""
        stamp = time.strftime('%Y%m%dT%H%M%S')
        for k in itertools.count(1):
            target = self.root / (f"superseded-{stamp}" + (f"-{k}" if k > 1 else ""))
            try:
                target.mkdir()
            except FileExistsError:
                continue
            return target

    def supersede(self):
        """Move existing records aside (``--fresh``): nothing computed is deleted."""
        if not self.segments():
            return None
        target = self._new_aside()
        os.rename(self.records_dir, target)  # onto the empty folder just made: atomic, never over another's
        fsync_dir(self.root)
        return target

    def write_run(self, info):
        """Write (or rewrite) ``runs/<run id>.json``: what is the same for a whole run."""
        runs = self.root / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        refuse_link(runs)
        self.run_id = self.run_id or self.new_run_id()
        return atomic_write(runs / f"{self.run_id}.json", json.dumps({**info, "run_id": self.run_id}, indent=2,
                                                                     sort_keys=True))


#: Rows from which a frame's read hands its freed memory back (``release_memory``) before going on.
LARGE_FRAME = 1_000_000
#: Rows of a run of segments converted to a frame together as they are read (``_FramePieces``).
LARGE_SEGMENT = 200_000


class _DatasetCounts:
    """A ``_snapshot`` sink counting each data set's records."""

    def __init__(self):
        self.counts = {}

    def append(self, table):
        if "dataset" not in table.column_names:  # an empty segment
            return
        for row in pc.value_counts(table.column("dataset").combine_chunks().cast(pa.string())).to_pylist():
            if row["values"] is not None:
                self.counts[row["values"]] = self.counts.get(row["values"], 0) + row["counts"]


class _FramePieces:
    """Segments' tables turned into frames as they come, in runs of at least ``LARGE_SEGMENT`` rows (one
    conversion per run, not per segment: a store of many small runs), each run's Arrow memory handed back
    once converted. Before, small segments were all held in Arrow until the last was read and converted
    together beside their frame (a store of a million records in 50-150 thousand record segments: 260 MB
    over its frame)."""

    def __init__(self):
        self._done, self._run, self._rows = [], [], 0

    def append(self, table):
        self._run.append(table)
        self._rows += table.num_rows
        if self._rows >= LARGE_SEGMENT:
            self._convert()

    def _convert(self):
        if self._run:
            run, self._run, self._rows = self._run, [], 0
            table = run[0] if len(run) == 1 else pa.concat_tables(run, promote_options="permissive")
            self._done.append(to_pandas(table))
            del table, run
            pa.default_memory_pool().release_unused()

    def frames(self):
        """The frames, in segment order (the last run converted now)."""
        self._convert()
        return self._done


def release_memory():
    """Hand back to the system what a large read freed: Arrow's pool and the C heap keep freed blocks (glibc's
    ``malloc_trim`` returns them): else the next large arrays come on top. (A full garbage collection here
    freed nothing more once the pieces were joined column by column, and cost 0.15 s a call: measured.)"""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's ``malloc_trim`` from the running process's own symbols (None elsewhere); looked up on first use,
    not when the store is imported (every command and worker imports it)."""
    import ctypes

    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except (OSError, TypeError):
        return None


#: What a reader and ``store verify`` say of a write-ahead segment that nothing checks.
_UNVERIFIED = ("written before line checksums and not listed in SHA256SUMS: its {n} record(s) cannot be verified "
               "(`eemrepro store upgrade` seals it into a checksummed segment)")


def _has_line_sums(path, opener):
    """Whether a write-ahead segment's lines carry checksums (any of them: then every one must); read until
    the first one that does."""
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        return has_line_sums(fh)


def _unreadable(data):
    """Why a sealed segment's bytes do not read whole as a record segment (footer, pages, page checksums),
    or None."""
    try:
        table_meta(pq.read_schema(pa.BufferReader(data)))
        pq.read_table(pa.BufferReader(data), page_checksum_verification=True)
    except (OSError, pa.ArrowException, ValueError) as exc:
        return f"not a readable record segment ({str(exc).splitlines()[0][:200]})"
    return None


def _disagreeing(table):
    """What ``store verify`` says of a sealed segment's records whose key lists and columns disagree (a value
    edited by hand that the reports read and the record as written has not), or None."""
    found = disagreements(table)
    if not found:
        return None
    row = min(found)
    return (f"{len(found)} record(s) whose key lists and columns disagree (row {row + 1}: {said(found[row])}; "
            "the reports read its columns): edited by hand, not as written. Restore the segment (git checkout, "
            "a backup)")


def _concat_chunks(tables):
    """One segment's chunks as one table, their run facts and JSON columns united."""
    if len(tables) == 1:
        return tables[0]
    runs, json_columns = {}, set()
    for t in tables:
        r, j = table_meta(t.schema)
        runs.update(r)
        json_columns |= j
    bare = [t.replace_schema_metadata(None) for t in tables]
    for name in json_columns:  # a field JSON in one chunk is JSON in all
        for i, t in enumerate(bare):
            if name in t.column_names and not pa.types.is_string(t.schema.field(name).type):
                values = [None if v is None else json.dumps(v, sort_keys=True) for v in t.column(name).to_pylist()]
                bare[i] = t.set_column(t.schema.get_field_index(name), name, pa.array(values, pa.string()))
    table = pa.concat_tables(bare, promote_options="permissive")
    return table.replace_schema_metadata({**tables[0].schema.metadata, b"eemrepro.runs": json.dumps(runs),
                                          b"eemrepro.json": json.dumps(sorted(json_columns))})


def _dictionary_strings(table):
    """String columns dictionary-encoded (segments from JSON lines have plain strings)."""
    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            table = table.set_column(i, field.name, table.column(i).dictionary_encode())
    return table


def _empty_frame(columns):
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


def _latest(df):
    """The latest row of each key, at the place of the key's first row (a retried unit's record wins)."""
    if len(df) < 2:
        return df
    key = _key_number(df)
    if key is None:
        stale = df.duplicated(KEY_COLUMNS, keep="last").to_numpy()
        if not stale.any():
            return df
        first = df.groupby(KEY_COLUMNS, sort=False, dropna=False, observed=True).ngroup().to_numpy()
        keep = np.flatnonzero(~stale)
        return df.iloc[keep[np.argsort(first[keep], kind="stable")]].reset_index(drop=True)
    # One integer per key, sorted stably: a key's rows are a run, in store order (a hash table over the six
    # columns took a gigabyte per ten million records; this takes two arrays of the rows).
    order = np.argsort(key, kind="stable")
    repeated = key[order]
    repeated = repeated[1:] == repeated[:-1]  # sorted position i holds the same key as i + 1
    if not repeated.any():
        return df
    starts = np.r_[True, ~repeated]
    first_row = order[starts][np.cumsum(starts) - 1]  # per sorted position, its key's first row
    last = np.flatnonzero(np.r_[~repeated, True])  # the latest row of each key, at the end of its run
    rows = order[last][np.argsort(first_row[last], kind="stable")]  # at the place of the key's first row
    return df.iloc[rows].reset_index(drop=True)


def _key_number(df):
    """One int64 per row, equal exactly where the rows' key columns are (missing equal to missing); None
    where the columns' ranges do not fit one int64 or a column is neither categorical nor whole numbers."""
    number = np.zeros(len(df), dtype=np.int64)
    span = 1.0
    for name in KEY_COLUMNS:
        column = df[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            codes = column.cat.codes.to_numpy().astype(np.int64) + 1  # missing (-1) is 0
            size = len(column.cat.categories) + 1
        elif pd.api.types.is_integer_dtype(column.dtype):
            values = column.to_numpy()
            low, high = int(values.min()), int(values.max())
            codes = values - (low - 1)
            size = high - low + 2
        elif pd.api.types.is_float_dtype(column.dtype):
            values = column.to_numpy()
            if np.isnan(values).all():
                codes, size = 0, 1
            else:
                low, high = np.nanmin(values), np.nanmax(values)
                if not (np.isnan(values) | (np.fmod(values, 1.0) == 0)).all():
                    return None  # not whole numbers
                codes = values - (low - 1)
                np.nan_to_num(codes, copy=False, nan=0.0)  # missing is 0
                codes = codes.astype(np.int64)
                size = int(high - low) + 2
        else:
            return None
        span *= size
        if span >= 2.0 ** 62:
            return None
        number *= size
        number += codes
        del codes
    return number


#: The most combinations ``distinct`` numbers with one int64 key.
_KEY_LIMIT = 2.0 ** 62


def distinct(frame, columns):
    """The distinct combinations of ``columns``' values in ``frame``, as tuples (missing values and absent
    columns None), found on integer codes: no Python object per row (a store of ten million records).

    Each column's codes are folded into one integer per row as they are made (one row array beside the key,
    not one per column), and the distinct keys are found by hashing (no sorted copy of the rows' keys).
    """
    combined = np.zeros(len(frame), dtype=np.int64)
    values, size = [], 1.0
    for c in columns:
        k, u = _column_codes(frame, c)
        values.append(u)
        size *= len(u)
        if size >= _KEY_LIMIT:  # the combinations do not fit one int64
            return _distinct_rows(frame, columns)
        combined *= len(u)
        combined += k
        combined += 1  # missing (-1) is 0
        del k
    found = np.sort(pd.unique(combined))
    out = []
    for number in found.tolist():
        combo = []
        for u in reversed(values):
            number, i = divmod(number, len(u))
            combo.append(u[i])
        out.append(tuple(reversed(combo)))
    return out


def _distinct_rows(frame, columns):
    """``distinct`` by pandas' row de-duplication (combinations too many for one integer key), in the order
    they first appear."""
    codes, values = {}, []
    for i, c in enumerate(columns):
        k, u = _column_codes(frame, c)
        codes[i] = k.astype(np.int64) + 1  # missing (-1) is 0
        values.append(u)
    rows = pd.DataFrame(codes).drop_duplicates().to_numpy()
    return [tuple(u[i] for u, i in zip(values, row, strict=True)) for row in rows]


def _column_codes(frame, name):
    """(each row's code, -1 where missing; [None, *the values the codes number]) of a column (an absent one:
    every row missing)."""
    if name not in frame:
        return np.full(len(frame), -1, dtype=np.int8), [None]
    column = frame[name]
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), [None, *column.cat.categories]
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    return codes, [None, *uniques]


def repeats_per_cell(frame):
    """{(data set, model): how many distinct repeats its records hold}, on integer codes (``distinct``)."""
    counts = {}
    for dataset, model, _ in distinct(frame, ["dataset", "model", "repeat"]):
        counts[(dataset, model)] = counts.get((dataset, model), 0) + 1
    return counts


def concat_frames(frames):
    """Concatenate store frames, keeping their categorical columns categorical (categories united).

    Column by column, each piece's column dropped from it once copied: the peak is the pieces and one
    column of the result beside them, not the pieces and the whole result (ten million records: a gigabyte
    less). The pieces are consumed (left without columns); each column follows pandas' own rules for
    frames concatenated whole (a piece without the column counts as missing values there).
    """
    frames = [f for f in frames if len(f)]
    if len(frames) <= 1:
        return frames[0] if frames else pd.DataFrame()
    categorical = {c for f in frames for c in f.columns if isinstance(f[c].dtype, pd.CategoricalDtype)}
    united = {}
    for c in categorical:
        cats = set()
        for f in frames:
            if c in f:
                cats |= set(f[c].cat.categories if isinstance(f[c].dtype, pd.CategoricalDtype) else f[c].dropna())
        united[c] = pd.CategoricalDtype(sorted(cats))
    # The columns in the order pandas gives frames concatenated whole (each piece's own, then the categorical
    # ones it lacks).
    names = list(dict.fromkeys(c for f in frames for c in [*f.columns, *(u for u in united if u not in f)]))
    large = sum(len(f) for f in frames) >= LARGE_FRAME
    columns = {}
    for c in names:
        parts = []
        for f in frames:
            if c in united:
                dtype = united[c]
                if c not in f:
                    part = pd.Categorical.from_codes(np.full(len(f), -1), dtype=dtype)
                elif isinstance(f[c].dtype, pd.CategoricalDtype):
                    part = f[c].cat.set_categories(dtype.categories).array
                else:
                    part = f[c].astype(dtype).array
                parts.append(pd.DataFrame({c: part}, index=pd.RangeIndex(len(f)), copy=False))
            else:
                parts.append(f[[c]] if c in f else pd.DataFrame(index=pd.RangeIndex(len(f))))
        columns[c] = pd.concat(parts, ignore_index=True)[c]
        del parts
        for f in frames:
            if c in f:
                del f[c]
        if large:
            release_memory()  # the pieces' columns just freed (Arrow's pool allocated the converted ones)
    return pd.DataFrame(columns, copy=False)


def add_param_columns(df, names=None):
    """``param_<name>`` columns from the ``point`` JSON (each distinct point parsed once)."""
    if df.empty or "point" not in df:
        return df
    codes, uniques = pd.factorize(df["point"])
    parsed = [json.loads(p) if isinstance(p, str) else {} for p in uniques]
    keys = list(dict.fromkeys(k for p in parsed for k in p)) if names is None else names
    extra = {}
    for k in keys:
        values = pd.Series([p.get(k) for p in parsed], dtype=object)
        try:
            values = pd.to_numeric(values) if all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                   for v in values if v is not None) else values
        except (TypeError, ValueError):
            pass
        column = values.take(codes).reset_index(drop=True)
        column[codes < 0] = None
        extra[f"param_{k}"] = column.to_numpy()
    return pd.concat([df, pd.DataFrame(extra, index=df.index)], axis=1) if extra else df
