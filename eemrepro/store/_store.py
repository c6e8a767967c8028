"""``ResultStore``: a results folder's records, written ahead as JSON lines, sealed as Parquet.

See the package docstring for the layout. Only one process writes a folder at
a time (``writing``: a lock the kernel drops when its holder dies); readers
need no lock, since a sealed segment is written to a temporary file and
renamed into place, and a write-ahead segment's torn last line is skipped.
"""

import gzip
import itertools
import json
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ._segments import (
    StoreError,
    decode,
    disk_columns,
    encode,
    frame_names,
    parse_lines,
    table_meta,
    to_pandas,
    warn_damaged,
)

#: The frame columns that make a record's key (what "the latest record of a key" means).
KEY_COLUMNS = ["dataset", "model", "point", "repeat", "fold", "inner"]
_WAL_SUFFIXES = (".jsonl", ".jsonl.gz")
_SEAL_CHUNK = 50_000  # lines encoded at a time when sealing
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


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover (no directory handles on this platform)
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_parquet(table, path):
    """Write ``table`` to ``path`` atomically: a temporary file, fsync'ed, renamed into place."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    floats = [f.name for f in table.schema if pa.types.is_floating(f.type)]
    # Lists of floats (EEM Table 1's D_CS pairs, a million distinct values a store): byte-stream-split
    # their elements, which dictionary encoding would otherwise take first (16 % smaller, lossless).
    float_lists = [f.name for f in table.schema if pa.types.is_list(f.type) and pa.types.is_floating(f.type.value_type)]
    dictionary = [n for n in table.column_names if n not in float_lists] if float_lists else True
    split = floats + [n + ".list.element" for n in float_lists]
    try:
        pq.write_table(table, tmp, use_dictionary=dictionary, use_byte_stream_split=split or False, **_PARQUET_OPTIONS)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


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

    # -- reading ----------------------------------------------------------
    def segments(self):
        """Every record segment in write order (a write-ahead file already sealed is left out)."""
        if not self.records_dir.is_dir():
            return []
        sealed = {_stem(p) for p in self.records_dir.glob("*.parquet")}
        paths = [*self.records_dir.glob("*.parquet"),
                 *(p for s in _WAL_SUFFIXES for p in self.records_dir.glob("*" + s) if _stem(p) not in sealed)]
        return sorted(paths, key=lambda p: (_stem(p), p.suffix == ".parquet"))

    def _legacy_upgrade(self):
        """A function upgrading a record written before record identities (``_legacy``)."""
        from .._yaml import YAMLDocumentError, load_yaml_file
        from ._legacy import upgrade

        config = None
        path = self.root / "config.yaml"
        if path.is_file():
            try:
                config = load_yaml_file(path)[0]
            except YAMLDocumentError as exc:
                raise StoreError(f"{exc} (the store's config, read for its records written before "
                                 "record identities)") from None
        return lambda record: upgrade(record, config)

    def _wal_chunks(self, path, size=None):
        """(records, damaged lines) of a JSON-lines segment, ``size`` lines at a time (None: all at once).

        Damaged lines are reported once, for the whole file.
        """
        opener = gzip.open if path.name.endswith(".gz") else open
        upgrade = self._legacy_upgrade()
        damaged_all = []
        try:
            with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
                first = 1
                while True:
                    lines = fh.readlines() if size is None else list(itertools.islice(fh, size))
                    if not lines and first > 1:
                        break
                    records, damaged = parse_lines(path, lines, upgrade=upgrade, first_line=first)
                    damaged_all += damaged
                    first += len(lines)
                    yield records, damaged
                    if size is None or len(lines) < size:
                        break
        except (OSError, EOFError) as exc:
            # A gzip member cut short, an unreadable file: named, never half-read silently.
            raise StoreError(f"{path}: cannot be read ({exc}); move it out of {self.records_dir} "
                             "to read the rest of the store") from None
        warn_damaged(path, damaged_all)

    def _wal_records(self, path):
        (records, damaged), = self._wal_chunks(path)
        return records, damaged

    def _table(self, path, wanted=None, raw=False):
        """One segment as an Arrow table: the stored columns giving the frame columns ``wanted``
        (None: all of them), or (``raw``) every stored column."""
        if path.suffix == ".parquet":
            try:
                schema = pq.read_schema(path)
                table_meta(schema)
                columns = None if raw else disk_columns(schema.names, wanted)
                # Strings stay dictionary-encoded in memory, as on disk (a handful of distinct values each).
                strings = [f.name for f in schema
                           if pa.types.is_string(f.type) and (columns is None or f.name in columns)]
                return pq.read_table(path, columns=columns, read_dictionary=None if raw else strings)
            except (OSError, pa.ArrowException, ValueError) as exc:
                raise StoreError(f"{path}: not a readable record segment ({str(exc).splitlines()[0][:200]}); "
                                 f"move it out of {self.records_dir} to read the rest of the store") from None
        records, _ = self._wal_records(path)
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
                facts.update(table_meta(pq.read_schema(path))[0])
            else:
                facts.update(table_meta(self._table(path, raw=True).schema)[0])
        return facts

    def frame(self, columns=None):
        """The latest record of each key as a DataFrame, one column per field.

        ``columns``: the frame columns to read (the key columns always come;
        ``"metrics"`` / ``"criteria"`` stand for all of them); None reads every
        column. Names: ``point`` is the grid point as canonical JSON,
        ``param_<name>`` its parameters (with ``columns=None`` or when asked for),
        a metric or a criterion its bare name, ``error_message`` the error
        text; ``identity`` and ``fixed_params`` are JSON text.
        """
        wanted = None if columns is None else list(dict.fromkeys([*KEY_COLUMNS, *columns]))
        params = None if columns is None else [c.removeprefix("param_") for c in columns if c.startswith("param_")]
        disk = None if wanted is None else [c for c in wanted if not c.startswith("param_")]
        tables, facts = [], {}
        for path in self.segments():
            table = self._table(path, disk)
            facts.update(table_meta(table.schema)[0])
            tables.append(_dictionary_strings(frame_names(table).replace_schema_metadata(None)))
        if not tables:
            return _empty_frame(wanted or KEY_COLUMNS)
        table = pa.concat_tables(tables, promote_options="permissive")
        del tables
        df = to_pandas(table)
        del table
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
        return df

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
        self.root.mkdir(parents=True, exist_ok=True)
        path = str((self.root / ".lock").resolve())
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
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            try:
                holder = json.loads(Path(path).read_text() or "{}")
            except (OSError, ValueError):
                holder = {}
            since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder["since"])) if "since" in holder \
                else "an unknown time"
            raise StoreLockedError(
                f"{self.root} is being written by process {holder.get('pid', '?')} on {holder.get('host', '?')} "
                f"({holder.get('what', 'unknown')}, since {since}); wait for it to finish or stop it") from None
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

    def new_run_id(self):
        """A run id no segment or run file of this folder has: ``<local time stamp>.<microseconds>-<pid>``.

        Ids sort in time order (segments are read in that order: the latest
        record of a key wins), and two runs of one process within a second
        never share one (the second would overwrite the first's segment).
        """
        while True:
            now = time.time()
            run_id = f"{time.strftime('%Y%m%dT%H%M%S', time.localtime(now))}.{int(now * 1e6) % 1_000_000:06d}-" \
                     f"{os.getpid()}"
            taken = [self.records_dir / f"{run_id}{s}" for s in (".parquet", *_WAL_SUFFIXES)]
            if not any(p.exists() for p in taken) and not (self.root / "runs" / f"{run_id}.json").exists():
                return run_id

    def _open(self):
        if self._fh is None:
            self.records_dir.mkdir(parents=True, exist_ok=True)
            self.run_id = self.run_id or self.new_run_id()
            self._wal = self.records_dir / f"{self.run_id}.jsonl"
            self._fh = open(self._wal, "a", encoding="utf-8")
        return self._fh

    def append(self, records):
        """Append one unit's records to this process's write-ahead segment, flushed and fsync'ed."""
        fh = self._open()
        fh.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
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
        one). Damaged lines are reported, and kept in ``damaged-<stem>.jsonl``.
        """
        path = Path(path)
        target = path.with_name(_stem(path) + ".parquet")
        # Encoded a chunk at a time: a long run's records never sit in memory as mappings all at once.
        tables, damaged, run_of = [], [], {}
        for records, bad in self._wal_chunks(path, size=_SEAL_CHUNK):
            tables.append(encode(records, _stem(path), run_of))
            damaged += bad
            del records
        write_parquet(_concat_chunks(tables), target)
        if damaged:
            (self.root / f"damaged-{_stem(path)}.jsonl").write_text(
                "".join(line if line.endswith("\n") else line + "\n" for _, line, _ in damaged), encoding="utf-8")
        path.unlink()
        return target

    def compact(self):
        """Seal every closed write-ahead segment (today's JSON lines or an older store's); return the new files.

        Takes the write lock: refused while a run writes the folder.
        """
        if self._fh is not None:
            raise StoreError("close the store before compacting it")
        with self.writing("compact"):
            for path in self.records_dir.glob("*.parquet"):
                stale = [path.with_name(_stem(path) + s) for s in _WAL_SUFFIXES]
                for wal in stale:  # sealed before a crash removed it
                    wal.unlink(missing_ok=True)
            return [self.seal(p) for p in self.segments() if p.suffix != ".parquet"]

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
            tables = [(p, self._table(p, raw=True)) for p in self.segments()]
            for label, chosen, field in (("model", models, "model"), ("data set", datasets, "dataset")):
                known = sorted({v for _, t in tables for v in t.column(field).unique().to_pylist()})
                unknown = sorted(set(chosen or ()) - set(known))
                if unknown:
                    raise ValueError(f"{self.root}: no stored records of {label}(s) {unknown}; stored: {known}")
            target = self.root / f"superseded-{time.strftime('%Y%m%dT%H%M%S')}"
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
                target.mkdir(parents=True, exist_ok=True)
                write_parquet(table.filter(mask), target / path.name)
                write_parquet(table.filter(pc.invert(mask)), path)
                moved += n
            return moved, (target if moved else None)

    def supersede(self):
        """Move existing records aside (``--fresh``): nothing computed is deleted."""
        if not self.segments():
            return None
        target = self.root / f"superseded-{time.strftime('%Y%m%dT%H%M%S')}"
        shutil.move(str(self.records_dir), str(target))
        return target

    def write_run(self, info):
        """Write (or rewrite) ``runs/<run id>.json``: what is the same for a whole run."""
        runs = self.root / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        self.run_id = self.run_id or self.new_run_id()
        path = runs / f"{self.run_id}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({**info, "run_id": self.run_id}, indent=2, sort_keys=True))
        os.replace(tmp, path)
        return path


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
    stale = df.duplicated(KEY_COLUMNS, keep="last").to_numpy()
    if not stale.any():
        return df
    first = df.groupby(KEY_COLUMNS, sort=False, dropna=False, observed=True).ngroup().to_numpy()
    keep = np.flatnonzero(~stale)
    return df.iloc[keep[np.argsort(first[keep], kind="stable")]].reset_index(drop=True)


def concat_frames(frames):
    """Concatenate store frames, keeping their categorical columns categorical (categories united)."""
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
    out = []
    for f in frames:
        f = f.copy(deep=False)
        for c, dtype in united.items():
            if c not in f:
                f[c] = pd.Categorical.from_codes(np.full(len(f), -1), dtype=dtype)
            elif isinstance(f[c].dtype, pd.CategoricalDtype):
                f[c] = f[c].cat.set_categories(dtype.categories)
            else:
                f[c] = f[c].astype(dtype)
        out.append(f)
    return pd.concat(out, ignore_index=True)


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
