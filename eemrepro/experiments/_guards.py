"""A user's estimator is untrusted code: read-only arrays in, labels and scores checked out.

* **In.** Every array a unit's fits and predictions get is a read-only view
  (:func:`read_only`, applied once where the fit process receives the unit's
  data, for every kind alike). The arrays are shared by the unit's grid points:
  a fit that centred its input in place (``X -= self.mean_``) would otherwise
  hand the next point centred data, and every record would still say ``ok``.
  A write now fails with numpy's "read-only" error, which
  :func:`input_write_error` turns into the record's error: the estimator's
  method, the array, the line, and the fix (copy first).
* **Out.** A prediction must be one label of the training data per test point
  (:func:`check_labels`); ``classes_`` must list each training label once, in
  any order, as the key to the scores' columns (:func:`check_classes`);
  decision values (``decision_function``, else ``predict_proba``) must be
  finite numbers of the shape the metrics read (:func:`check_scores`); a projection's image must have one row per point
  (:func:`check_transform`). Otherwise the record fails with an
  :class:`EstimatorOutputError` naming the model and what it returned: a GMean
  of 0/1 predictions against -1/+1 labels is a number, but not a score of the
  model.
"""

import linecache
import re

import numpy as np

# numpy's words for a write into a read-only array: "assignment destination is read-only" (x[i] = v),
# "output array is read-only" (x -= v, out=x); Cython memoryviews say "buffer source array is read-only".
_READ_ONLY = "read-only"
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_OUT = re.compile(r"\bout\s*=\s*\(?\s*([A-Za-z_][\w.]*)")


class EstimatorOutputError(ValueError):
    """An estimator returned what a record cannot be scored from; its message is the record's error as is."""


def read_only(data):
    """``data`` (an array, or a tuple of arrays and None) as read-only views of the same memory.

    Views, not the arrays themselves: where the unit runs in the calling process (no fork) the caller's
    arrays (a data set kept for the next unit) stay as they were.
    """
    if isinstance(data, np.ndarray):
        view = data.view()
        view.flags.writeable = False
        return view
    if isinstance(data, tuple):
        return tuple(read_only(a) for a in data)
    return data


def input_write_error(exc):
    """The record's error where ``exc`` is an estimator's write into an array it got read-only; else None.

    The method named is the one eemrepro called (``fit``, ``fit_path``, ``predict``, ...: the outermost
    frame outside ``eemrepro.experiments`` and scikit-learn's method wrappers); the line is where the write
    happened (the innermost frame outside numpy, which may be a helper the method called); the array is
    the method's parameter whose memory was written, else the expression written.
    """
    if not isinstance(exc, ValueError) or _READ_ONLY not in str(exc):
        return None
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    # (scikit-learn's wrappers of a method, such as set_output's of ``transform``, are not the method)
    outside = [(f, n) for f, n in frames if not _module(f).startswith(("eemrepro.experiments", "sklearn.utils."))]
    called = next((f for f, _ in outside if "self" in f.f_locals), None)
    if called is None:
        return None
    method = f"{type(called.f_locals['self']).__name__}.{called.f_code.co_name}"
    frame, lineno = next(((f, n) for f, n in reversed(outside) if not _module(f).startswith("numpy")), outside[0])
    code = linecache.getline(frame.f_code.co_filename, lineno).strip()
    expression, array = _written(frame, code)
    name = _parameter(called, array) if array is not None else None
    what = f"its input {name}" if name else (f"{expression}, an array it was given read-only" if expression
                                              else "an array it was given read-only")
    where = f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{lineno}"
    if frame is not called:
        where += f" in {frame.f_code.co_name}"
    if code:
        where += f": `{code}`"
    copy = name or expression or "X"
    return (f"{method} wrote into {what} ({where}); the arrays a fit or prediction gets are "
            f"read-only, shared by the unit's grid points: copy it before changing it in place "
            f"({copy} = {copy}.copy())")


def _module(frame):
    return frame.f_globals.get("__name__") or ""


def _written(frame, code):
    """The expression of ``code`` that names a read-only array (an ``out=`` first), and that array."""
    names = _OUT.findall(code) + _NAME.findall(code)
    for expression in names:
        head, *rest = expression.split(".")
        if head not in frame.f_locals:
            continue
        value = frame.f_locals[head]
        try:
            for attribute in rest:
                value = getattr(value, attribute)
        except Exception:  # (a property of the user's that raises: not the array written)
            continue
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            return expression, value
    return None, None


def _parameter(frame, array):
    """The parameter of the method ``frame`` runs whose array shares memory with ``array``."""
    code = frame.f_code
    for name in code.co_varnames[:code.co_argcount]:
        value = frame.f_locals.get(name)
        if isinstance(value, np.ndarray) and np.may_share_memory(value, array):
            return name
    return None


def _listed(values, most=10):
    """The distinct values, sorted where they sort, as a Python list's text (``[0, 1]``)."""
    import pandas as pd

    distinct = list(pd.unique(pd.Series(np.asarray(values, dtype=object).ravel())))
    try:
        distinct = sorted(distinct)
    except TypeError:  # (mixed types: in order of appearance)
        pass
    shown = [v.item() if isinstance(v, np.generic) else v for v in distinct[:most]]
    text = repr(shown)
    return text if len(distinct) <= most else f"{text[:-1]}, ... ({len(distinct)} distinct)]"


def check_labels(model, y_pred, n, train_labels):
    """``y_pred`` (``model.predict`` on ``n`` test points) as an array, where it is one training label per point."""
    import pandas as pd

    where = f"{type(model).__name__}.predict"
    y_pred = np.asarray(y_pred)
    if y_pred.shape != (n,):
        raise EstimatorOutputError(f"{where} returned shape {y_pred.shape}, expected ({n},) (one label per test "
                                   "point)")
    known = pd.Series(y_pred.astype(object)).isin(list(np.asarray(train_labels).tolist())).to_numpy()
    if not known.all():
        raise EstimatorOutputError(f"{where} returned labels {_listed(y_pred)}, not among the training labels "
                                   f"{_listed(train_labels)}")
    return y_pred


def check_classes(model, labels):
    """The place in ``model.classes_`` of each of the sorted training ``labels``, where ``classes_`` lists each of
    them once (in any order); ``0..k-1`` for a model without ``classes_`` (scikit-learn's order is assumed).

    A score's columns (and the sign of a two-class decision value) follow ``classes_``: a plug-in whose
    ``classes_`` is ``[1, -1]`` or ``pd.unique(y)`` is read through it, never as if it were sorted.
    """
    labels = np.asarray(labels)
    classes = getattr(model, "classes_", None)
    if classes is None:
        return np.arange(len(labels))
    listed = np.asarray(classes, dtype=object).ravel().tolist() if np.ndim(classes) == 1 else []
    order = [[i for i, c in enumerate(listed) if _same_label(c, label)] for label in labels.tolist()]
    if len(listed) != len(labels) or any(len(found) != 1 for found in order):
        shown = ([v.item() if isinstance(v, np.generic) else v for v in listed[:10]] + ["..."] * (len(listed) > 10)
                 if np.ndim(classes) == 1 else f"of shape {np.shape(classes)}")
        raise EstimatorOutputError(
            f"{type(model).__name__}.classes_ is {shown}, not the training labels {_listed(labels)} in some "
            "order: its scores cannot be matched to the classes; set classes_ = np.unique(y) in fit (or list "
            "every training label once)")
    return np.array([found[0] for found in order])


def _same_label(a, b):
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # (an array or an object that does not compare as one label)
        return False


def check_scores(model, method, values, n, n_classes):
    """``values`` (``model.<method>`` on ``n`` test points) as floats, where they are finite and of the shape
    the score-based metrics read: (n,) for two classes from ``decision_function``, else (n, n_classes)."""
    where = f"{type(model).__name__}.{method}"
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise EstimatorOutputError(f"{where} returned values that are not numbers "
                                   f"(dtype {np.asarray(values).dtype})") from None
    expected = (n,) if n_classes == 2 and method == "decision_function" else (n, n_classes)
    if values.shape != expected:
        raise EstimatorOutputError(f"{where} returned shape {values.shape}, expected {expected}")
    _check_finite(where, values)
    return values


def check_transform(model, Z, n):
    """``Z`` (``model.transform`` of ``n`` points) as floats, where it has one finite row per point."""
    where = f"{type(model).__name__}.transform"
    try:
        Z = np.asarray(Z, dtype=np.float64)
    except (TypeError, ValueError):
        raise EstimatorOutputError(f"{where} returned values that are not numbers") from None
    if Z.ndim != 2 or Z.shape[0] != n:
        raise EstimatorOutputError(f"{where} returned shape {Z.shape}, expected ({n}, k) (one row per point)")
    _check_finite(where, Z)
    return Z


def _check_finite(where, values):
    nan, inf = int(np.isnan(values).sum()), int(np.isinf(values).sum())
    if nan or inf:
        said = " and ".join(t for t in (f"{nan} NaN" if nan else "", f"{inf} infinite" if inf else "") if t)
        raise EstimatorOutputError(f"{where} returned {said} values")
