"""``load_dataset``: registry entry -> verified files -> parsed arrays -> the paper's problem."""

import hashlib
import warnings
from typing import NamedTuple

import numpy as np

from ._errors import DatasetParseError
from ._fetch import fetch_file, get_data_home, sha256_of
from ._parsers import PARSERS
from ._registry import _registry, get_entry

SCALINGS = ("minmax", "standard", None)


class Dataset(NamedTuple):
    """What :func:`load_dataset` returns: ``X, y, meta = load_dataset(name)``."""

    X: np.ndarray
    y: np.ndarray
    meta: dict


def minmax_scale(X, reference=None):
    """Scale each feature to [0, 1]; a constant feature becomes 0 (SPEC section 2).

    With ``reference`` (per-fold scaling), the minimum and range come from
    those rows (the training fold) and are applied to ``X``.
    """
    X = np.asarray(X, dtype=np.float64)
    ref = X if reference is None else np.asarray(reference, dtype=np.float64)
    lo = ref.min(axis=0)
    span = ref.max(axis=0) - lo
    out = X - lo
    nonconstant = span > 0
    out[:, nonconstant] /= span[nonconstant]
    out[:, ~nonconstant] = 0.0
    return out


def _positive_mask(raw, positive):
    mask = np.zeros(raw.shape[0], dtype=bool)
    for p in positive:
        if isinstance(p, str):
            mask |= np.array([str(v).strip() == p for v in raw])
        else:
            try:
                mask |= raw.astype(np.float64) == float(p)
            except (TypeError, ValueError):
                mask |= np.array([str(v).strip() == str(p) for v in raw])
    return mask


def _sizes(X, y, entry):
    if entry.is_binary:
        return {"n": int(X.shape[0]), "d": int(X.shape[1]),
                "n_neg": int(np.sum(y < 0)), "n_pos": int(np.sum(y > 0))}
    counts = [int(np.sum(y == c)) for c in entry.classes]
    return {"n": int(X.shape[0]), "d": int(X.shape[1]), "class_counts": counts}


def compare_with_paper(entry, sizes):
    """Every size that differs from the paper's, with the registry's explanation.

    Returns
    -------
    differences : dict
        ``{key: {"paper": p, "loaded": v, "why": text or None}}``; ``why`` is
        ``None`` for a difference the registry does not explain.
    """
    out = {}
    for key, paper_value in entry.paper.items():
        if key in sizes and sizes[key] != paper_value:
            out[key] = {"paper": paper_value, "loaded": sizes[key], "why": entry.differences.get(key)}
    return out


def load_dataset(name, scaling="minmax", data_home=None, mirror=None, download=True):
    """Load a registered data set as the problem the paper studied.

    Parameters
    ----------
    name : str
        A registry id (``eemrepro datasets list``).
    scaling : {"minmax", "standard", None}, default="minmax"
        Min-max scale every feature to [0, 1] (constant features become 0) on
        the whole data set, as the EEM paper describes; ``"standard"`` for zero
        mean and unit variance on the whole data set (scikit-learn's
        ``StandardScaler``; constant features become 0); ``None`` for raw values.
    data_home : str or Path, optional
        Cache root (default ``$EEMREPRO_DATA`` or the per-user cache).
    mirror : str or Path, optional
        Folder or URL standing in for the canonical hosts (default ``$EEMREPRO_MIRROR``).
    download : bool, default=True
        Fetch missing files; if False, a file that is not bundled or cached is an error.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        -1/+1 for binary problems (+1 = the paper's positive class), else the
        raw class labels.
    meta : dict
        Sizes, the paper's sizes and every difference, processing steps, and
        provenance: each file's sha256 and origin, and ``sha256``, one checksum
        of the data set's files.

    Examples
    --------
    >>> from eemrepro.datasets import load_dataset
    >>> X, y, meta = load_dataset("heart")
    >>> X.shape, int((y == 1).sum()), float(X.min()), float(X.max())
    ((270, 13), 120, 0.0, 1.0)
    """
    entry = get_entry(name)
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {list(SCALINGS)}, got {scaling!r}")
    paths, files = [], []
    for spec in entry.files:
        path, origin, sha = fetch_file(entry.id, spec, bundled=entry.bundled, data_home=data_home,
                                       mirror=mirror, download=download)
        paths.append(path)
        files.append({"name": spec.name, "sha256": sha, "origin": origin})
    X, raw = PARSERS[entry.format](paths, entry)

    steps = []
    missing = np.isnan(X).any(axis=1)
    if missing.any():
        X, raw = X[~missing], raw[~missing]
        steps.append(f"dropped {int(missing.sum())} rows with missing values")
    X, y = _as_registered(X, _labels(entry, raw), entry, steps)
    sizes = _sizes(X, y, entry)
    _warn_unexpected_sizes(entry, sizes)
    X = _scaled(X, scaling, steps)
    return Dataset(X, y, _meta(entry, sizes, steps, scaling, files))


def _labels(entry, raw):
    """The target: -1/+1 for a binary entry (+1: its positive labels), else the raw labels, checked against the
    entry's classes."""
    if entry.is_binary:
        y = np.where(_positive_mask(raw, entry.positive), 1, -1)
        if np.all(y == 1) or np.all(y == -1):
            raise DatasetParseError(
                f"{entry.id}: positive labels {list(entry.positive)} give a single class; "
                f"labels in the file: {sorted(set(map(str, raw)))[:10]}"
            )
        return y
    unknown = set(np.unique(raw).tolist()) - set(entry.classes)
    if unknown:
        raise DatasetParseError(f"{entry.id}: unexpected class labels {sorted(map(str, unknown))}")
    return raw


def _as_registered(X, y, entry, steps):
    """(X, y) with the entry's duplicate rows and constant columns removed where it says so (each step noted)."""
    if entry.deduplicate:
        before = X.shape[0]
        _, keep = np.unique(np.column_stack([X, y.astype(np.float64)]), axis=0, return_index=True)
        keep.sort()
        X, y = X[keep], y[keep]
        steps.append(f"removed {before - X.shape[0]} duplicate (x, y) rows")
    if entry.drop_constant_columns:
        constant = np.ptp(X, axis=0) == 0
        X = X[:, ~constant]
        steps.append(f"dropped {int(constant.sum())} constant columns {np.flatnonzero(constant).tolist()}")
    return X, y


def _warn_unexpected_sizes(entry, sizes):
    """A warning (pointing at ``load_dataset``'s caller) when the loaded sizes are not the registry's."""
    expected = {k: v for k, v in entry.expected.items() if v is not None}
    # A binary set's class sizes may be recorded as [negatives, positives] (a local file's entry).
    loaded = dict(sizes, class_counts=[sizes["n_neg"], sizes["n_pos"]]) if "n_neg" in sizes else sizes
    if any(loaded.get(k) != v for k, v in expected.items()):
        warnings.warn(
            f"{entry.id}: loaded sizes {sizes} differ from the registry's {expected}: "
            "a different version of the data?",
            stacklevel=3,
        )


def _scaled(X, scaling, steps):
    """X scaled on the whole data set as ``scaling`` says (the step noted)."""
    if scaling == "minmax":
        X = minmax_scale(X)
        steps.append("min-max scaled to [0, 1] (whole data set)")
    elif scaling == "standard":
        from sklearn.preprocessing import StandardScaler

        X = StandardScaler().fit_transform(X)
        steps.append("standardised to zero mean, unit variance (whole data set)")
    return X


def _meta(entry, sizes, steps, scaling, files):
    """``load_dataset``'s ``meta``: the entry's facts, the sizes loaded against the paper's, the steps and the
    files' provenance with one checksum of them."""
    return {
        "id": entry.id,
        "paper_name": entry.paper_name,
        "group": entry.group,
        "papers": list(entry.papers),
        "task": "binary" if entry.is_binary else "multiclass",
        "classes": [-1, 1] if entry.is_binary else list(entry.classes),
        **sizes,
        "paper": dict(entry.paper),
        "differences": compare_with_paper(entry, sizes),
        "steps": steps,
        "scaling": scaling,
        "files": files,
        "sha256": _combined_checksum(f["sha256"] for f in files),
        "notes": entry.notes,
    }


def _combined_checksum(file_digests):
    return hashlib.sha256("".join(file_digests).encode()).hexdigest()


def dataset_checksum(name, data_home=None, mirror=None):
    """The ``meta["sha256"]`` of a data set without parsing it (fetches missing files)."""
    return _combined_checksum(sha for _, _, sha in fetch_dataset(name, data_home=data_home, mirror=mirror))


def is_cached(name, data_home=None):
    """'bundled', 'cached' or 'missing' (no download, no checksum)."""
    entry = get_entry(name)
    if entry.bundled or not entry.files:
        return "bundled"
    home = get_data_home(data_home)
    present = all((home / entry.id / spec.name).is_file() for spec in entry.files)
    return "cached" if present else "missing"


def fetch_dataset(name, data_home=None, mirror=None, progress=None):
    """Fetch (or confirm) every file of a data set; return ``[(name, origin, sha256)]``."""
    entry = get_entry(name)
    return [
        (spec.name, *fetch_file(entry.id, spec, bundled=entry.bundled, data_home=data_home,
                                mirror=mirror, progress=progress)[1:])
        for spec in entry.files
    ]


def verify_cache(data_home=None, remove_corrupt=True):
    """Re-check the sha256 of every cached file.

    Returns
    -------
    report : list of (dataset id, file name, status)
        status is "ok", "corrupt (removed)" / "corrupt" or "unverified (no checksum)".
    """
    home = get_data_home(data_home)
    report = []
    for entry in _registry().values():
        if entry.bundled:
            continue
        for spec in entry.files:
            path = home / entry.id / spec.name
            if not path.is_file():
                continue
            expected = spec.sha256
            sidecar = path.with_name(spec.name + ".sha256")
            if expected is None and sidecar.is_file():
                expected = sidecar.read_text().split()[0]
            if expected is None:
                report.append((entry.id, spec.name, "unverified (no checksum)"))
            elif sha256_of(path) == expected:
                report.append((entry.id, spec.name, "ok"))
            else:
                if remove_corrupt:
                    path.unlink()
                report.append((entry.id, spec.name, "corrupt (removed)" if remove_corrupt else "corrupt"))
    return report
