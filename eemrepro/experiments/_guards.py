"""A user's estimator is untrusted code: read-only arrays in.

* **In.** Every array a unit's fits and predictions get is a read-only view
  (:func:`read_only`, applied once where the fit process receives the unit's
  data, for every kind alike). The arrays are shared by the unit's grid points:
  a fit that centred its input in place (``X -= self.mean_``) would otherwise
  hand the next point centred data, and every record would still say ``ok``.
  A write now fails with numpy's "read-only" error, which
  :func:`input_write_error` turns into the record's error: the estimator's
  method, the array, the line, and the fix (copy first).
"""

import linecache
import re

import numpy as np

# numpy's words for a write into a read-only array: "assignment destination is read-only" (x[i] = v),
# "output array is read-only" (x -= v, out=x); Cython memoryviews say "buffer source array is read-only".
_READ_ONLY = "read-only"
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_OUT = re.compile(r"\bout\s*=\s*\(?\s*([A-Za-z_][\w.]*)")


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
