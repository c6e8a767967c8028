"""Parsers, one per file format: ``parse(paths, entry) -> (X, raw_labels)``.

X is float64 with NaN for a missing value; labels are returned as the file
writes them. Errors name the file and, where the format has lines, the line.
"""

import gzip
import zipfile

import numpy as np

from ._errors import DatasetParseError


def _open_text(path):
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="strict", newline=None)
    return open(path, encoding="utf-8", errors="strict", newline=None)


def _float(token, path, lineno):
    token = token.strip()
    if token in ("?", "<null>", ""):
        return np.nan
    try:
        return float(token)
    except ValueError:
        raise DatasetParseError(f"{path}, line {lineno}: {token!r} is not a number") from None


def _rows_to_arrays(rows, path, n_columns=None):
    """rows: list of (lineno, tokens). Checks a constant field count."""
    if not rows:
        raise DatasetParseError(f"{path}: no data rows")
    width = n_columns or len(rows[0][1])
    for lineno, tokens in rows:
        if len(tokens) != width:
            raise DatasetParseError(
                f"{path}, line {lineno}: expected {width} fields, found {len(tokens)} "
                "(truncated or garbled file?)"
            )
    return rows, width


def parse_csv(paths, entry, delimiter=","):
    """Comma-separated values, the label in ``entry.label_column`` (UCI files)."""
    (path,) = paths
    rows = []
    try:
        with _open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.strip()
                if line:
                    rows.append((lineno, [t.strip() for t in line.split(delimiter)]))
    except (UnicodeDecodeError, EOFError, OSError) as exc:
        raise DatasetParseError(f"{path}: unreadable text ({exc})") from exc
    rows, width = _rows_to_arrays(rows, path)
    label_col = entry.label_column % width
    labels = np.array([tokens[label_col] for _, tokens in rows], dtype=object)
    X = np.array(
        [[_float(t, path, n) for j, t in enumerate(tokens) if j != label_col] for n, tokens in rows],
        dtype=np.float64,
    )
    return X, _numeric_labels_if_possible(labels)


def parse_keel(paths, entry):
    """KEEL ``.dat``: an ``@``-header, ``@data``, then comma-separated rows, class last."""
    (path,) = paths
    rows, in_data = [], False
    try:
        with _open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.strip()
                if not line:
                    continue
                if not in_data:
                    if line.lower() == "@data":
                        in_data = True
                    elif not line.startswith("@"):
                        raise DatasetParseError(f"{path}, line {lineno}: expected an @-header line or @data")
                    continue
                rows.append((lineno, [t.strip() for t in line.split(",")]))
    except (UnicodeDecodeError, OSError) as exc:
        raise DatasetParseError(f"{path}: unreadable text ({exc})") from exc
    if not in_data:
        raise DatasetParseError(f"{path}: no @data line")
    rows, _ = _rows_to_arrays(rows, path)
    labels = np.array([tokens[-1] for _, tokens in rows], dtype=object)
    X = np.array([[_float(t, path, n) for t in tokens[:-1]] for n, tokens in rows], dtype=np.float64)
    return X, labels


def parse_libsvm(paths, entry):
    """LIBSVM sparse format, densified (``sklearn.datasets.load_svmlight_file``)."""
    from sklearn.datasets import load_svmlight_file

    (path,) = paths
    try:
        X, y = load_svmlight_file(str(path), n_features=entry.n_features)
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise DatasetParseError(f"{path}{_first_bad_libsvm_line(path)}: {exc}") from exc
    return X.toarray(), y


def _first_bad_libsvm_line(path):
    """', line N' for the first line that is not 'label index:value ...', else ''."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                tokens = line.split("#")[0].split()
                if not tokens:
                    continue
                try:
                    float(tokens[0])
                    for tok in tokens[1:]:
                        index, value = tok.split(":")
                        int(index)
                        float(value)
                except ValueError:
                    return f", line {lineno}"
    except OSError:
        pass
    return ""


def parse_npz(paths, entry):
    """imbalanced-learn benchmark member: ``data`` (n, d) and ``label`` (n,)."""
    (path,) = paths
    try:
        with np.load(path, allow_pickle=False) as npz:
            X, y = np.asarray(npz["data"], dtype=np.float64), np.asarray(npz["label"])
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, EOFError) as exc:
        raise DatasetParseError(f"{path}: not a readable benchmark .npz with 'data' and 'label' ({exc})") from exc
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise DatasetParseError(f"{path}: data {X.shape} and label {y.shape} do not match")
    return X, y


def _read_table(path, sep, usecols=None, compression="infer"):
    import pandas as pd

    try:
        return pd.read_csv(path, sep=sep, header=None, usecols=usecols, compression=compression,
                           na_values=["?"], dtype=np.float64, engine="c")
    except (ValueError, OSError, EOFError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        # pandas' messages name the line ("Expected 77 fields in line 12, saw 3").
        raise DatasetParseError(f"{path}: {exc}") from exc


def parse_kdd_bio(paths, entry):
    """KDD Cup 2004 ``bio_train.dat``: block id, example id, label, 74 features (tab-separated)."""
    (path,) = paths
    table = _read_table(path, "\t", usecols=range(77))
    values = table.to_numpy()
    if values.shape[1] != 77:
        raise DatasetParseError(f"{path}: expected 77 columns, found {values.shape[1]}")
    return values[:, 3:], values[:, 2].astype(np.int64)


def parse_covtype(paths, entry):
    """UCI ``covtype.data(.gz)``: 54 features then the cover type 1..7."""
    (path,) = paths
    values = _read_table(path, ",").to_numpy()
    if values.shape[1] != 55:
        raise DatasetParseError(f"{path}: expected 55 columns, found {values.shape[1]}")
    return values[:, :54], values[:, 54].astype(np.int64)


def parse_ctg_xls(paths, entry):
    """UCI ``CTG.xls``, sheet ``Data``: the 21 features LB..Tendency and the class NSP.

    Read with xlrd directly (pandas has deprecated its xlrd engine). Columns are
    found by their header in row 2; data rows are those with a numeric NSP.
    """
    import xlrd

    (path,) = paths
    try:
        sheet = xlrd.open_workbook(str(path), on_demand=True).sheet_by_name("Data")
    except Exception as exc:  # xlrd raises its own error types for garbled files
        raise DatasetParseError(f"{path}: not a readable CTG workbook ({exc})") from exc
    header = [str(v).strip() for v in sheet.row_values(1)]
    try:
        first, nsp = header.index("LB"), header.index("NSP")
    except ValueError:
        raise DatasetParseError(f"{path}, sheet Data, row 2: no 'LB'/'NSP' header") from None
    X, labels = [], []
    for r in range(2, sheet.nrows):
        row = sheet.row_values(r)
        if not isinstance(row[nsp], float):
            continue
        try:
            X.append([float(v) for v in row[first : first + 21]])
        except ValueError:
            raise DatasetParseError(f"{path}, sheet Data, row {r + 1}: non-numeric feature") from None
        labels.append(int(row[nsp]))
    return np.array(X, dtype=np.float64), np.array(labels, dtype=np.int64)


def parse_sklearn_wine(paths, entry):
    from sklearn.datasets import load_wine

    data = load_wine()
    return data.data.astype(np.float64), data.target


def _numeric_labels_if_possible(labels):
    try:
        values = np.array([float(v) for v in labels])
    except ValueError:
        return labels
    return values.astype(np.int64) if np.all(values == np.round(values)) else values


PARSERS = {
    "libsvm": parse_libsvm,
    "csv": parse_csv,
    "keel": parse_keel,
    "npz": parse_npz,
    "kdd-bio": parse_kdd_bio,
    "covtype": parse_covtype,
    "ctg-xls": parse_ctg_xls,
    "sklearn-wine": parse_sklearn_wine,
    "local": lambda paths, entry: _parse_local(paths, entry),
}


def _parse_local(paths, entry):
    from ._local import parse_local

    return parse_local(paths, entry)
