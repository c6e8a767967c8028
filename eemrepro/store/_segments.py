"""Record segments: write-ahead JSON lines, sealed Parquet files, and the columns between them.

A record (a mapping; ``experiments`` says what it holds) becomes one row of
an Arrow table:

* ``params``, ``identity``, ``fixed_params`` (and any other field whose values
  are mappings or of mixed types) as canonical JSON strings: a grid point's
  JSON is its ``point`` as the reports group by it, and Parquet's dictionary
  encoding stores each distinct value once;
* ``metrics`` and ``criteria`` as one float column per name
  (``metrics.gmean``, ``criteria.dcs_kde``), with the names each record held in
  ``metrics.keys`` / ``criteria.keys``;
* ``versions`` and ``host``, the same for a whole run, once per run in the
  file's metadata (``eemrepro.runs``: run id -> facts), each row naming its run
  in ``run_id``;
* every other field as a typed column (Arrow's inference: numbers, strings,
  lists of numbers), and ``fields``, the record's own field names, so that
  decoding gives back exactly the mapping that was written (a field absent
  stays absent, ``None`` stays ``None``).

Readers that want a DataFrame (``frame``) ask for columns by their frame names
(``point`` for ``params``, a metric's or a criterion's bare name,
``error_message`` for the error text) and get only those read from disk.
"""

import hashlib
import json
import math
import warnings

import pyarrow as pa

FORMAT_VERSION = "1"
_JSON_MAPPINGS = ("params", "identity", "fixed_params")
_FLOAT_MAPS = ("metrics", "criteria")
_RUN_FACTS = ("versions", "host")
_RESERVED = {"fields", "run_id", "line_sha256"}  # the last: ``LINE_SUM``
#: Fields every record has, and their types (what tells a record from other JSON).
_REQUIRED = {"dataset": str, "model": str, "params": dict, "repeat": int, "fold": int, "status": str}
#: The frame's name for a stored column, where they differ.
FRAME_NAMES = {"params": "point", "error": "error_message"}
_DISK_NAMES = {v: k for k, v in FRAME_NAMES.items()}


class StoreWarning(UserWarning):
    """A damaged part of a store was skipped (its file and lines are named)."""


class StoreError(ValueError):
    """A store cannot be read or written (its file and the reason are named)."""


def not_a_record(obj):
    """Why ``obj`` (a parsed JSON line) is not a record, or None when it is one."""
    if not isinstance(obj, dict):
        return f"a JSON {type(obj).__name__}, not a record"
    for name, kind in _REQUIRED.items():
        value = obj.get(name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return f"field {name!r} is {'missing' if name not in obj else repr(value)[:40]}"
    if "inner" in obj and obj["inner"] is not None and not isinstance(obj["inner"], int):
        return f"field 'inner' is {obj['inner']!r}"
    return None


#: The field every write-ahead line ends with: the sha256 of the line's record as JSON, i.e. of the line
#: without this field (``checked_line``).
LINE_SUM = "line_sha256"
_SUM_HEAD = f', "{LINE_SUM}": "'
_SUM_TAIL_LEN = len(_SUM_HEAD) + 64 + len('"}\n')


def checked_line(record):
    """One write-ahead line: the record as canonical JSON with its own sha256 as the last field.

    ``{...record..., "line_sha256": "<sha256 of {...record...}>"}`` and a line
    end: still one JSON object per line, and a reader checks it by slicing off
    the fixed-length tail and hashing what is left (no second serialization).
    A line torn anywhere loses its line end or its tail, and a changed byte
    changes the hash.
    """
    body = json.dumps(record, sort_keys=True)
    return f'{body[:-1]}{_SUM_HEAD}{hashlib.sha256(body.encode("utf-8")).hexdigest()}"}}\n'


def has_line_sums(lines):
    """Whether any of ``lines`` carries a line checksum (a segment written with them: every line must)."""
    return any(_SUM_HEAD in line for line in lines)


def _checked_body(line):
    """(the record's JSON of a line written by ``checked_line``, None) or (None, why it fails its check)."""
    tail = line[-_SUM_TAIL_LEN:]
    if not (tail.startswith(_SUM_HEAD) and tail.endswith('"}\n')):
        return None, f"no {LINE_SUM} at its end (every line of this segment must carry one)"
    body = line[:-_SUM_TAIL_LEN] + "}"
    # errors="replace" when the file was read: a byte that is not UTF-8 reads as U+FFFD and fails here too.
    if hashlib.sha256(body.encode("utf-8")).hexdigest() != tail[len(_SUM_HEAD):-3]:
        return None, f"its {LINE_SUM} does not match its content (changed since it was written)"
    return body, None


def parse_lines(path, lines, upgrade=None, first_line=1, checked=None):
    """Records of a JSON-lines segment, skipping (and reporting) what is not a complete, intact record.

    ``lines``: the file's lines with their line ends (from line ``first_line``);
    one without (the last, torn by a kill mid-write or still being written) is
    skipped too. ``checked``: whether the segment's lines carry checksums
    (``checked_line``; None: whether any of ``lines`` does); then a line whose
    checksum is missing or does not match is damaged. ``upgrade``: called on a
    record written before record identities. Returns (records, [(line number,
    line, why)]).
    """
    if checked is None:
        checked = has_line_sums(lines)
    records, damaged = [], []
    for number, line in enumerate(lines, start=first_line):
        if not line.strip():
            continue
        if not line.endswith("\n"):
            damaged.append((number, line, "incomplete line (torn by a kill, or still being written)"))
            continue
        text = line
        if checked:
            text, why = _checked_body(line)
            if why is not None:
                damaged.append((number, line, why))
                continue
        try:
            record = json.loads(text)
        except ValueError as exc:
            damaged.append((number, line, f"not JSON ({exc})"))
            continue
        why = not_a_record(record)
        if why is not None:
            damaged.append((number, line, why))
            continue
        if upgrade is not None and "identity" not in record:
            record = upgrade(record)
        records.append(record)
    return records, damaged


def warn_damaged(path, damaged):
    if not damaged:
        return
    where = ", ".join(str(n) for n, _, _ in damaged[:10]) + (" ..." if len(damaged) > 10 else "")
    warnings.warn(StoreWarning(f"{path}: skipped {len(damaged)} damaged line(s) (line {where}; "
                               f"first: {damaged[0][2]})"), stacklevel=3)


def _dumps(value):
    return json.dumps(value, sort_keys=True, allow_nan=True)


def _typed_array(values):
    """An Arrow array of ``values`` (None where absent), or None when they need JSON."""
    def nested(v):
        return isinstance(v, dict) or (isinstance(v, (list, tuple)) and any(nested(x) for x in v))

    if any(nested(v) for v in values):
        return None
    try:
        array = pa.array(values, from_pandas=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
        return None
    # Inference that changed a value (a string column taken for numbers, say) is refused.
    if pa.types.is_struct(array.type) or pa.types.is_union(array.type):
        return None
    return array


def encode(records, run_stem, run_of=None):
    """Records (in write order) as an Arrow table; run facts go to the schema metadata.

    ``run_stem``: the id of the first distinct run facts (the segment's run);
    further ones (a store written before run ids) get ``<stem>.<k>``.
    ``run_of``: {facts JSON: run id}, shared by the chunks of one segment.
    """
    n = len(records)
    columns, json_columns, runs = {}, [], {}
    run_of = {} if run_of is None else run_of
    columns["fields"] = pa.array([_dumps(list(r)) for r in records], pa.string())
    run_ids = []
    for r in records:
        if not any(k in r for k in _RUN_FACTS):
            run_ids.append(None)
            continue
        fact = _dumps({k: r[k] for k in _RUN_FACTS if k in r})
        if fact not in run_of:
            run_of[fact] = run_stem if not run_of else f"{run_stem}.{len(run_of)}"
        runs.setdefault(run_of[fact], json.loads(fact))
        run_ids.append(run_of[fact])
    columns["run_id"] = pa.array(run_ids, pa.string())
    names = list(dict.fromkeys(k for r in records for k in r))
    for name in names:
        if name in _RUN_FACTS:
            continue
        if name in _RESERVED or "." in name:
            raise StoreError(f"a record field may not be named {name!r}")
        values = [r.get(name) for r in records]
        if name in _FLOAT_MAPS and all(v is None or isinstance(v, dict) for v in values):
            keys = list(dict.fromkeys(k for v in values if v for k in v))
            arrays = {}
            for key in keys:
                column = [None if v is None else v.get(key) for v in values]
                if all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool)) for x in column):
                    arrays[f"{name}.{key}"] = pa.array(column, pa.float64())
                else:
                    break
            else:
                columns[f"{name}.keys"] = pa.array([None if v is None else _dumps(list(v)) for v in values],
                                                   pa.string())
                columns.update(arrays)
                continue
        array = None if name in _JSON_MAPPINGS else _typed_array(values)
        if array is None:
            array = pa.array([None if name not in r else _dumps(r[name]) for r in records], pa.string())
            json_columns.append(name)
        columns[name] = array
    table = pa.table(columns) if n else pa.table({"fields": pa.array([], pa.string())})
    return table.replace_schema_metadata({
        "eemrepro.format": FORMAT_VERSION, "eemrepro.runs": _dumps(runs), "eemrepro.json": _dumps(json_columns)})


def table_meta(schema):
    meta = schema.metadata or {}
    if b"eemrepro.runs" not in meta:
        raise StoreError("not an eemrepro record segment (no eemrepro metadata)")
    return json.loads(meta[b"eemrepro.runs"]), set(json.loads(meta.get(b"eemrepro.json", b"[]")))


def _key_lists(table):
    """{key list column (``fields``, ``metrics.keys``, ``criteria.keys``): (each row's code, the names of each
    code)}; code -1 is a row without a list."""
    import numpy as np

    out = {}
    for name in ("fields", *(f"{m}.keys" for m in _FLOAT_MAPS)):
        if name not in table.column_names:
            continue
        column = table.column(name).combine_chunks()
        encoded = column if pa.types.is_dictionary(column.type) else column.dictionary_encode()
        codes = np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
        names = []
        for text in encoded.dictionary.to_pylist():
            try:
                listed = json.loads(text)
            except (TypeError, ValueError):
                listed = None
            names.append(set(listed) if isinstance(listed, list) and all(isinstance(x, str) for x in listed)
                         else None)
        out[name] = codes, names
    return out


def disagreements(table):
    """The rows of an ``encode``d table whose key lists and columns disagree: {row: [(column, key list)]}.

    A value is part of a row's record only where its key lists name it
    (``fields``; a metric's or a criterion's column where ``fields`` names
    ``metrics`` and ``metrics.keys`` the metric): ``encode`` never writes a
    value they leave out, nor a name without its column. A row that does so
    was edited by hand, and the frame (what the reports read: every column)
    and ``decode`` (the record as written: the names listed) would read it
    otherwise. Each (column, key list): a value in ``column`` that ``key list``
    leaves out; (None, text): a key list that names a field without its
    column, or is not a list of names. ``said`` puts a row's in words.
    """
    import numpy as np

    lists, columns = _key_lists(table), set(table.column_names)
    n, found = table.num_rows, {}

    def named(list_column, name):
        if list_column not in lists:
            return np.zeros(n, dtype=bool)
        codes, names = lists[list_column]
        return np.array([s is not None and name in s for s in names] + [False])[codes]

    def carried(list_column, name):
        if list_column == "fields":
            return name in columns or name in _RUN_FACTS or f"{name}.keys" in columns
        return f"{list_column.removesuffix('.keys')}.{name}" in columns

    for list_column, (codes, names) in lists.items():  # a name listed without its column
        for code, listed in enumerate(names):
            why = [f"its {list_column} is not a list of names"] if listed is None else \
                [f"its {list_column} name {x!r}, which has no column" for x in sorted(listed)
                 if not carried(list_column, x)]
            for row in np.flatnonzero(codes == code) if why else ():
                found.setdefault(int(row), []).extend((None, w) for w in why)
    for name in table.column_names:  # a value its row's key lists leave out
        if name in _RESERVED or name.endswith(".keys"):
            continue
        group, dot, key = name.partition(".")
        in_fields = named("fields", group if dot else name)
        listed = in_fields & named(f"{group}.keys", key) if dot else in_fields
        held = np.asarray(table.column(name).is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        for row in np.flatnonzero(held & ~listed):
            found.setdefault(int(row), []).append((name, f"{group}.keys" if dot and in_fields[row] else "fields"))
    return found


def said(items):
    """One row's ``disagreements`` in words: "its fields leave out metrics.auc and metrics.gmean, which its
    columns hold"."""
    texts, left = [], {}
    for column, lister in items:
        if column is None:
            texts.append(lister)
        else:
            left.setdefault(lister, []).append(column)
    for lister, names in left.items():
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        texts.append(f"its {lister} leave out {listed}, which its column{'s hold' if len(names) > 1 else ' holds'}")
    return "; ".join(texts)


def decode(table, disagreeing=None):
    """The records of an ``encode``d table, as the mappings that were written.

    ``disagreeing``: the table's ``disagreements``, whose values are folded
    into their rows' records: the records as the frame (the reports) reads
    them, not as their key lists say.
    """
    runs, json_columns = table_meta(table.schema)
    cols = {name: table.column(name).to_pylist() for name in table.column_names}
    none = [None] * table.num_rows
    parsed = {}

    def loads(text):
        if text not in parsed:
            parsed[text] = json.loads(text)
        return parsed[text]

    out = []
    for i in range(table.num_rows):
        record = {}
        for key in loads(cols["fields"][i]):
            if key in _RUN_FACTS:
                record[key] = runs[cols["run_id"][i]][key]
            elif f"{key}.keys" in cols:
                names = cols[f"{key}.keys"][i]
                record[key] = None if names is None else {m: cols.get(f"{key}.{m}", none)[i] for m in loads(names)}
            elif key in json_columns or key in _JSON_MAPPINGS:
                text = cols.get(key, none)[i]
                record[key] = None if text is None else json.loads(text)
            else:
                record[key] = cols.get(key, none)[i]
        for name, _ in (disagreeing or {}).get(i, ()):
            if name is None:  # a name listed without its column: None, as the frame reads it
                continue
            value = cols[name][i]
            group, _, metric = name.partition(".")
            if metric and group in _FLOAT_MAPS:
                record[group] = {**(record.get(group) or {}), metric: value}
            else:
                record[name] = json.loads(value) if name in json_columns or name in _JSON_MAPPINGS else value
        out.append(record)
    return out


def disk_columns(schema_names, wanted):
    """The stored columns that give the frame columns ``wanted`` (None: all).

    ``"metrics"`` / ``"criteria"`` stand for every metric / criterion column;
    ``host`` and ``versions`` come from ``run_id``.
    """
    names = [n for n in schema_names if n != "fields" and not n.endswith(".keys")]
    if wanted is None:
        return names
    out = []
    for w in wanted:
        if w in ("metrics", "criteria"):
            out += [n for n in names if n.startswith(w + ".")]
        elif w in _RUN_FACTS:
            out.append("run_id")
        else:
            disk = _DISK_NAMES.get(w, w)
            out += [n for n in (disk, f"metrics.{w}", f"criteria.{w}") if n in names]
    return [n for n in dict.fromkeys(out) if n in names]


def frame_names(table):
    """Rename a table's stored columns to the frame's names."""
    renamed = []
    for name in table.column_names:
        if name.startswith(("metrics.", "criteria.")):
            renamed.append(name.split(".", 1)[1])
        else:
            renamed.append(FRAME_NAMES.get(name, name))
    return table.rename_columns(renamed)


def to_pandas(table):
    """An Arrow table as a DataFrame: strings as categoricals (categories sorted), numbers stored
    with nulls as floats, list columns holding one numpy array per row."""
    import pandas as pd

    # A column null throughout (a field no record of the segment has) is read as floats at once: as Arrow's
    # nulls it would become a Python None per row first (ten million of them for a large segment).
    nulls = [i for i, f in enumerate(table.schema) if pa.types.is_null(f.type)]
    for i in nulls:
        table = table.set_column(i, table.schema.field(i).name, pa.nulls(len(table), pa.float64()))
    df = table.to_pandas(split_blocks=True, strings_to_categorical=True)
    for name in df.columns:
        column = df[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            cats = column.cat.categories
            if not cats.is_monotonic_increasing:
                df[name] = column.cat.set_categories(sorted(cats))
    return df


def as_frame(records):
    """A store frame as it is, or one (as ``ResultStore.frame`` reads it) of records held in memory."""
    import pandas as pd

    if isinstance(records, pd.DataFrame):
        return records
    records = list(records)
    return records_frame(records) if records else pd.DataFrame()


def records_frame(records):
    """A frame (as ``ResultStore.frame`` reads one) of records held in memory, in their order."""
    table = encode(list(records), "memory")
    df = to_pandas(frame_names(table.select(disk_columns(table.column_names, None))))
    if "inner" in df:
        df["inner"] = df["inner"].astype(float)
    return df


def is_nan(value):
    return isinstance(value, float) and math.isnan(value)


def same_values(a, b):
    """Equality of two decoded values, NaN equal to NaN (a round trip's test)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_values(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b, strict=True))
    if is_nan(a) or is_nan(b):
        return is_nan(a) and is_nan(b)
    return a == b and (a is None) == (b is None) and isinstance(a, bool) == isinstance(b, bool)

