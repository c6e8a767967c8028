"""A model's parameter value checked against its estimator when the config is read, before any unit runs.

The estimator is the judge, and no data are needed: scikit-learn's declared ``_parameter_constraints`` (what
its ``fit`` validates first), our estimators' ``_check_params`` (what theirs calls first), for the estimator
and for every estimator among its parameters (a meta-estimator's, set as ``estimator__C``). A parameter that
neither declares gets one cheap check of the value as built: a string where the default is a number
(``C: one``, ``max_iter: '100'``) is refused, as a quoted number is where the protocol wants one. Nothing is
fitted: a user's class may be slow, or fail on data for reasons of its own that the run reports as it always
did.
"""

import functools
import numbers


@functools.cache
def _validator():
    """scikit-learn's validator of the constraints its estimators declare, or None. It is private, so guarded:
    without it each fit checks the declared constraints, as before, and nothing here does. (Imported when a
    config is checked, not with this module: ``eemrepro --help`` imports no scikit-learn.)"""
    try:
        from sklearn.utils._param_validation import validate_parameter_constraints
    except ImportError:  # pragma: no cover (a scikit-learn that moved it)
        return None
    return validate_parameter_constraints


def refusal(cls, key, value):
    """Why ``cls`` refuses ``key=value`` (``key`` may name a nested parameter, ``step__C``), in one line; None
    where it takes it. ``cls`` can be built with its defaults (the config checked that first)."""
    shown = f"{cls.__name__}({key}={value!r})"
    try:
        estimator = cls().set_params(**{key: value}) if "__" in key else cls(**{key: value})
    except Exception as exc:  # a constructor of the user's that checks (or fails) on its own
        return f"{shown} cannot be built: {_one_line(exc)}"
    for part in [estimator, *(v for v in estimator.get_params(deep=True).values() if _is_estimator(v))]:
        problem = _declared_problem(part)
        if problem:
            return problem
    return _string_for_number(cls, key, value, shown)


def _is_estimator(value):
    return hasattr(value, "get_params") and not isinstance(value, type)


def _declared_problem(estimator):
    """The message of the check ``estimator`` declares for its parameters as they are now, or None."""
    constraints = getattr(type(estimator), "_parameter_constraints", None)
    validate = _validator()
    if isinstance(constraints, dict) and validate is not None:
        try:
            validate(constraints, estimator.get_params(deep=False),
                                           caller_name=type(estimator).__name__)
        except (ValueError, TypeError) as exc:
            return _one_line(exc)
    check = getattr(estimator, "_check_params", None) if _ours(estimator) else None
    if check is not None:
        try:
            check()
        except (ValueError, TypeError) as exc:
            return _one_line(exc)
    return None


def _ours(estimator):
    # Our estimators check their parameters in ``_check_params()``; another library's method of that name
    # is private and may mean something else (scikit-learn's NMF's takes X).
    return type(estimator).__module__.startswith("eemrepro.")


def _string_for_number(cls, key, value, shown):
    """The cheap check of a parameter no check is declared for: a string is refused where the default is a
    number (a word or a quoted number: the fit would fail on it, or compare it as text)."""
    if not isinstance(value, str):
        return None
    *path, leaf = key.split("__")
    defaults = cls().get_params(deep=True)
    owner = defaults["__".join(path)] if path else cls()
    declared = leaf in (getattr(type(owner), "_parameter_constraints", None) or {}) or (
        _ours(owner) and hasattr(owner, "_check_params"))
    default = defaults.get(key)
    if declared or isinstance(default, bool) or not isinstance(default, numbers.Real):
        return None
    return (f"{shown}: a string where the default is a number ({key}={default!r}); write the number unquoted, "
            f"or, if {leaf} takes words, declare them in {type(owner).__name__}._parameter_constraints")


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__
