"""A user's own data set: a local CSV, ARFF or LIBSVM file named by a config (``local_datasets:``).

It becomes a registry entry of this process (``register_local``), so the
runner, the splitters and the loader treat it as any registered set: its
file is checksummed into every record's provenance, and scaled and split as
the protocol says. What a paper's method needs of the data is checked when
the config is read, each refusal one line naming the file and what is wrong:
a file that cannot be read, a non-numeric feature column, a missing value,
fewer than two rows or two classes, a class smaller than the folds.
"""

from pathlib import Path

import numpy as np

from ._errors import DatasetError, DatasetParseError

#: A local file's format by its extension (a config's ``format`` says it for any other name).
EXTENSIONS = {".csv": "csv", ".arff": "arff", ".libsvm": "libsvm", ".svm": "libsvm", ".svmlight": "libsvm"}
LOCAL_FORMATS = ("csv", "arff", "libsvm")
#: The most characters (as JSON) of a feature-column list that a record's identity and a results folder's config
#: hold as the list itself; a longer one is held as its digest (:func:`columns_identity`).
LISTED_COLUMNS = 2_000
#: A missing value's mark in an ARFF file (and in a CSV file: the UCI repository's files use it too).
MISSING = "?"


class LocalDatasetError(DatasetError):
    """A local data set file that cannot be used; the message names the file and what is wrong."""


def read_local_file(path, fmt, target=None, columns=None):
    """(X as float64, labels as an object array, the feature columns' names, the label column's name) of a
    local file; ``target``: the label column (CSV, ARFF; default the last); ``columns``: the feature columns in
    order (default every other column), names matched as Unicode NFC. Refuses with :class:`LocalDatasetError`
    what a classifier benchmark cannot use, and a first column that looks like a saved row index unless
    ``columns`` names it."""
    import pandas as pd

    path = Path(path)
    frame, target = _read_frame(path, fmt, target)
    if frame.shape[1] < 2:
        raise LocalDatasetError(f"{path}: {frame.shape[1]} column(s); a data set needs features and a label"
                                f"{_separator_hint(path, fmt)}")
    if frame.empty:  # a header alone: pandas reads its columns as text, which is not what is wrong with it
        raise LocalDatasetError(f"{path}: 0 row(s); a data set to cross-validate needs more")
    features, target = _features(path, frame, target, columns)
    # (the dtypes asked once: a column looked up one by one costs seconds at tens of thousands of columns)
    text = [j for j, t in enumerate(features.dtypes)
            if not pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t)]
    if text:
        values = features.iloc[:, text[0]].dropna()
        example = values.iloc[0] if len(values) else None
        example = example.item() if isinstance(example, np.generic) else example  # True, not np.True_
        raise LocalDatasetError(f"{path}: column {features.columns[text[0]]!r} is not numeric (such as {example!r}); "
                                "encode it as numbers first")
    X = features.to_numpy(dtype=np.float64)
    labels = frame[target]
    unlabelled = labels.isna().to_numpy()
    if unlabelled.any():  # not a class of its own, nor (under ``positive``) a negative
        raise LocalDatasetError(f"{path}: {int(unlabelled.sum())} row(s) without a class (column {target!r} "
                                f"empty, NA or {MISSING!r}; the first is row {int(np.flatnonzero(unlabelled)[0]) + 1})"
                                "; drop them first: a missing class is not a label")
    bad = np.isnan(X).any(axis=1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        column = features.columns[int(np.flatnonzero(np.isnan(X[row]))[0])]
        raise LocalDatasetError(f"{path}: a missing value in row {row + 1} (column {column!r}) and "
                                f"{int(bad.sum()) - 1} more row(s); drop or impute them first")
    if not np.isfinite(X).all():
        column = features.columns[int(np.flatnonzero(~np.isfinite(X).all(axis=0))[0])]
        raise LocalDatasetError(f"{path}: an infinite value in column {column!r}")
    # A feature's range and the squared distances of kernels must stay finite in float64 (about 1e308).
    big = np.abs(X).max(axis=0, initial=0.0) > 1e150
    if big.any():
        j = int(np.flatnonzero(big)[0])
        raise LocalDatasetError(f"{path}: column {features.columns[j]!r} holds values as large as "
                                f"{np.abs(X[:, j]).max():.3g}, past what scaling and squared distances hold in "
                                "float64; rescale it first")
    if len(X) < 2:
        raise LocalDatasetError(f"{path}: {len(X)} row(s); a data set to cross-validate needs more")
    labels = labels.astype(str).to_numpy(dtype=object) if labels.dtype == object else labels.to_numpy()
    if len(np.unique(labels)) < 2:
        raise LocalDatasetError(f"{path}: one class ({labels[0]!r}) in column {target!r}; a classifier needs two")
    return X, labels, [str(c) for c in features.columns], str(target)


def _read_frame(path, fmt, target):
    """(the file as a frame, the target: LIBSVM's labels are the column "(label)")."""
    import pandas as pd

    if not path.is_file():
        raise LocalDatasetError(f"{path}: no such file")
    try:
        if fmt == "libsvm":
            from sklearn.datasets import load_svmlight_file

            X, labels = load_svmlight_file(str(path))
            frame = pd.DataFrame(X.toarray(), columns=[f"feature {j + 1}" for j in range(X.shape[1])])
            frame["(label)"] = labels
            return frame, "(label)"
        if fmt == "arff":
            from scipy.io import arff

            data, _ = arff.loadarff(str(path))
            frame = pd.DataFrame(data)
            for c in frame.columns:  # nominal attributes come as bytes, ARFF's missing value as b"?"
                if frame[c].dtype == object:
                    text = frame[c].map(lambda v: v.decode() if isinstance(v, bytes) else v)
                    frame[c] = text.mask(text == MISSING)
            return frame, target
        # "?" is a missing value there too (the UCI files' mark), beside pandas' own (empty, NA, ...)
        frame = pd.read_csv(path, na_values=[MISSING])
        _refuse_repeated_names(path, pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False))
        return frame, target
    # scipy's ARFF reader raises a bare StopIteration when the file ends before its @data section.
    except (ValueError, UnicodeDecodeError, OSError, NotImplementedError, pd.errors.ParserError,
            StopIteration) as exc:
        why = (str(exc).splitlines() or ["it ends before its data"])[0][:200]
        fix = "; save it as UTF-8 text (e.g. iconv -f latin1 -t utf-8)" if isinstance(exc, UnicodeDecodeError) else ""
        if fmt == "arff" and f"{MISSING!r} value not in" in why:  # a quoted '?' is a nominal value, not the mark
            fix = (f"; a quoted {MISSING!r} is a value of its own in ARFF, not the missing-value mark: drop those "
                   f"rows (or write {MISSING} unquoted where a value is missing)")
        raise LocalDatasetError(f"{path}: not a readable {fmt} file ({why}){fix}") from None


def _refuse_repeated_names(path, header):
    """A CSV header (``header``: its first row, read as text) that names a column twice is refused: pandas reads
    the second as ``name.1``, and the label copied beside the features becomes one of them."""
    import pandas as pd

    names = pd.Index([str(v) for v in header.iloc[0]] if len(header) else [])
    repeated = names[names.duplicated()]
    if len(repeated):  # (one pass over the names: a file may have 100,000 columns)
        name = repeated[0]
        where = [int(i) + 1 for i in np.flatnonzero(names == name)]
        times = "twice" if len(where) == 2 else f"{len(where)} times"
        listed = ", ".join(map(str, where[:-1])) + f" and {where[-1]}"
        raise LocalDatasetError(f"{path}: its header names column {name!r} {times} (columns {listed}): rename "
                                "or drop one so that each column has a name of its own")


def _separator_hint(path, fmt):
    """Where a CSV file's header is split by ';' or a tab and holds no comma: that said, with the fix."""
    if fmt != "csv":
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            header = fh.readline()
    except OSError:
        return ""
    found = [(sep, name) for sep, name in ((";", "';'"), ("\t", "a tab")) if sep in header]
    if "," in header or not found:
        return ""
    sep, name = found[0]
    why = " (a spreadsheet's export where the decimal mark is a comma, say)" if sep == ";" else ""
    read = f"sep={sep!r}, decimal=','" if sep == ";" else f"sep={sep!r}"
    return (f": its header is separated by {name}, not by commas{why}; no local_datasets key sets a separator: "
            f"save it comma-separated with '.' decimals (pandas.read_csv(path, {read}).to_csv(new_path, "
            "index=False))")


def _features(path, frame, target, columns):
    """(the feature columns of ``frame``, the target's name as the file writes it): names matched as Unicode
    NFC, since one typed on one system and saved on another may differ in code points alone ('ó' as one, or
    as 'o' and a combining accent)."""
    import unicodedata

    import pandas as pd

    by_nfc = {}
    for c in frame.columns:
        by_nfc.setdefault(unicodedata.normalize("NFC", str(c)), []).append(c)

    def find(name):
        if name in frame.columns:
            return name
        same = by_nfc.get(unicodedata.normalize("NFC", str(name)), [])
        return same[0] if len(same) == 1 else None

    target = frame.columns[-1] if target is None else (find(target) or target)
    if target not in frame.columns:
        raise LocalDatasetError(f"{path}: no column {target!r} (the target); its columns are "
                                f"{[str(c) for c in frame.columns][:20]}")
    if columns is None:
        features = frame.drop(columns=[target])
        _refuse_an_index(path, features)
        return features, target
    found = [find(c) for c in columns]
    missing = [c for c, f in zip(columns, found, strict=True) if f is None]
    if missing or target in found:
        raise LocalDatasetError(f"{path}: " + (f"no column(s) {missing} (key 'columns'); its columns are "
                                               f"{[str(c) for c in frame.columns][:20]}" if missing else
                                               f"the target {target!r} is also listed in 'columns'"))
    listed = pd.Index(found)
    twice = listed[listed.duplicated()]  # (one pass: a list may name tens of thousands of columns)
    if len(twice):
        raise LocalDatasetError(f"{path}: column {str(twice[0])!r} is listed twice in 'columns'")
    return frame[found], target


def _refuse_an_index(path, features):
    """A first column that is a saved row index (pandas' ``Unnamed: 0``, or the row numbers 0..n-1 or 1..n in file
    order) would be a feature that tells the classes apart wherever the file is sorted by class: refused."""
    import pandas as pd

    if not features.shape[1]:
        return
    first = features.columns[0]
    values = features[first]
    numbered = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values) and len(values) > 2 \
        and any(np.array_equal(values.to_numpy(), np.arange(start, start + len(values))) for start in (0, 1))
    if str(first).startswith("Unnamed: 0") or numbered:
        what = "is unnamed, as pandas names a saved index" if str(first).startswith("Unnamed: 0") else \
            f"holds the row numbers {int(values.iloc[0])}..{int(values.iloc[-1])} in file order"
        raise LocalDatasetError(f"{path}: the first column {str(first)!r} {what}: as a feature it would tell "
                                "rows apart by their place in the file. Save the file with index=False or drop the "
                                "column; to keep it as a feature, list the feature columns under 'columns'")


def _text(v):
    """A label as the config writes it (YAML reads 1 as an int, the file may hold 1.0), in Unicode NFC (a label
    typed in the config and one saved in the file may differ in code points alone, as column names may)."""
    import unicodedata

    if isinstance(v, float | np.floating) and float(v).is_integer():
        return str(int(v))
    return unicodedata.normalize("NFC", str(v))


def local_entry(dataset_id, spec, home=None, read=True):
    """The registry entry of a local data set.

    ``spec``: ``{file, format, target, positive, sha256, n, d, class_counts}``
    (the last four written by a run into its stored config). ``read`` False
    (reports over a stored config): built from the spec alone, the file not
    opened (it may be gone).
    """
    from ._registry import DatasetEntry, FileSpec

    path = Path(spec["file"])
    if not path.is_absolute() and home is not None:
        path = Path(home) / path
    fmt = spec.get("format") or EXTENSIONS.get(path.suffix.lower())
    if fmt not in LOCAL_FORMATS:
        raise LocalDatasetError(f"{path}: format {fmt!r} unknown; name it with 'format' (one of "
                                f"{list(LOCAL_FORMATS)}; by extension: {sorted(EXTENSIONS)})")
    positive = spec.get("positive")
    if read:
        from ._fetch import sha256_of

        X, labels, columns, target = read_local_file(path, fmt, spec.get("target"), spec.get("columns"))
        text = np.array([_text(v) for v in labels], dtype=object)
        classes, counts = np.unique(text, return_counts=True)
        sha = sha256_of(path)
        if spec.get("sha256") and spec["sha256"] != sha:
            raise LocalDatasetError(f"{path}: sha256 {sha[:12]}... differs from the {spec['sha256'][:12]}... "
                                    "recorded for it: the file changed")
        if positive is not None:
            unknown = [p for p in map(_text, positive) if p not in set(classes)]
            if unknown:
                hint = " (YAML reads yes/no/on/off as true/false: quote the label)" \
                    if any(isinstance(p, bool) for p in positive) else ""
                raise LocalDatasetError(f"{path}: positive label(s) {unknown} not in the file; its classes are "
                                        f"{classes.tolist()[:20]}{hint}")
        elif len(classes) == 2:
            positive = [classes[int(np.argmin(counts))]]  # the minority class, as the papers take it
        if positive is not None:
            pos = np.isin(text, [_text(p) for p in positive])
            counts_by_class = [int((~pos).sum()), int(pos.sum())]
            if min(counts_by_class) == 0:
                raise LocalDatasetError(f"{path}: positive label(s) {positive} leave one class")
        else:
            counts_by_class = counts.tolist()
        expected = {"n": int(len(X)), "d": int(X.shape[1]), "class_counts": counts_by_class}
        features = columns_identity(columns)
    else:
        sha = spec.get("sha256")
        expected = {k: spec[k] for k in ("n", "d", "class_counts") if k in spec}
        classes, target = spec.get("classes"), spec.get("target")
        features = spec.get("feature_columns", None if spec.get("columns") is None
                            else columns_identity(spec["columns"]))
    # ``columns``: the user's selection (None: every column but the target); ``feature_columns``: the columns read,
    # as an identity holds them.
    local = {"format": fmt, "target": target, "positive": None if positive is None
             else [_text(p) for p in positive], "columns": None if spec.get("columns") is None
             else [str(c) for c in spec["columns"]], "feature_columns": features}
    binary = positive is not None
    return DatasetEntry(
        id=dataset_id, paper_name=str(path.name), papers=(), group="local", format="local",
        files=(FileSpec(name=path.name, sha256=sha, local=str(path.resolve())),), expected=expected,
        positive=tuple(local["positive"]) if binary else None,
        classes=None if binary else tuple(str(c) for c in (classes if classes is not None else ())),
        local=local, notes=f"a local {fmt} file: {path}")


def parse_local(paths, entry):
    """The loader's parser of a local entry: the file's features and its labels as text."""
    (path,) = paths
    try:
        X, labels, _, _ = read_local_file(path, entry.local["format"], entry.local.get("target"),
                                          entry.local.get("columns"))
    except LocalDatasetError as exc:
        raise DatasetParseError(str(exc)) from None
    return X, np.array([_text(v) for v in labels], dtype=object)


def columns_identity(columns):
    """The feature columns as a record's identity and a results folder's config hold them: the list, where its
    JSON is at most :data:`LISTED_COLUMNS` characters, else ``"<k> columns sha256:<digest of the list>"``.

    >>> columns_identity(["x1", "x2"])
    ['x1', 'x2']
    >>> columns_identity([f"probe_{j}" for j in range(40_000)])[:20]
    '40000 columns sha256'
    """
    import hashlib
    import json

    columns = [str(c) for c in columns]
    text = json.dumps(columns, ensure_ascii=False)
    if len(text) <= LISTED_COLUMNS:
        return columns
    return f"{len(columns)} columns sha256:{hashlib.sha256(text.encode()).hexdigest()}"


def stored_spec(entry, out=None):
    """A local entry as a stored config writes it: the file (relative to the results folder ``out``), how to
    read it (the user's ``columns`` as they wrote them, else the columns read as ``feature_columns``: a digest
    where the list is long), its checksum and sizes (what the reports need when the file is gone)."""
    import os

    (spec,) = entry.files
    file = os.path.relpath(spec.local, Path(out).resolve()) if out is not None else spec.local
    how = {k: v for k, v in definition(entry).items() if v is not None and k != "columns"}
    if entry.local.get("columns") is not None:
        how["columns"] = list(entry.local["columns"])
    elif entry.local.get("feature_columns") is not None:
        how["feature_columns"] = entry.local["feature_columns"]
    return {"file": file, **how, "sha256": spec.sha256, **entry.expected}


def definition(entry):
    """How a local data set's file becomes X and y, beside the file's checksum (part of every record's
    identity): its format, the label column, the positive label(s) (two classes: +1 those, -1 the rest) or
    the classes, and the feature columns in order (:func:`columns_identity`: a long list by its digest). A key
    the entry does not know (a stored config written before it was recorded) is left out."""
    out = {"format": entry.local["format"], "target": entry.local.get("target")}
    if entry.positive is not None:
        out["positive"] = list(entry.positive)
    else:
        out["classes"] = list(entry.classes)
    features = entry.local.get("feature_columns")
    if features is None and entry.local.get("columns") is not None:
        features = columns_identity(entry.local["columns"])
    if features is not None:
        out["columns"] = features
    return out
