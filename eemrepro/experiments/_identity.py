"""A cell's identity: everything besides its record keys that makes its numbers.

A kind says what of the config its units depend on (``ExperimentKind.identity``:
estimator, fixed parameters, splitter, scaling, its own settings). What is the
same for every kind is added here, once:

* the code of every user's estimator the unit runs (``code.<estimator>``:
  ``models._lookup.estimator_code``, what its import loaded: the user's files,
  installed distributions' versions and files);
* every parameter of a user's estimator as it is built, its defaults included,
  by value (``params.<name>``; a grid parameter is in the record's key instead);
* the definition of a user's own data set (``data.<key>``: the label column,
  the positive label(s) or the classes, the feature columns, the format), which
  the file's checksum (``data_sha256``) does not hold.

The papers' built-in estimators, those of the tool's own dependencies
(``sklearn.svm:SVC``) and the registry's data sets add nothing: their code is
the environment's (a record holds every version and the commit), and their
definition the registry's. A change of any of these is a changed identity: the
run refuses and names it, ``--rerun-changed`` runs the cells again.
"""

import functools
import json
import numbers

from ..datasets._local import LISTED_COLUMNS

#: The key prefix of an estimator's code in an identity.
CODE_PREFIX = "code."


def cell_identity(kind, config, unit, codes=None):
    """The identity of ``unit``'s cell: ``kind.identity`` with the user's code, parameters and data definition.

    ``codes``: a dict shared by the calls of one plan, {(estimator, home): code}, so that a package's files are
    read once per plan, not once per cell.
    """
    from ..models._lookup import estimator_code, is_users

    ident = dict(kind.identity(config, unit))
    codes = {} if codes is None else codes
    for name, home in kind.estimators(config, unit):
        if not is_users(name):
            continue
        if (name, home) not in codes:
            codes[(name, home)] = estimator_code(name, home)
        if codes[(name, home)] is not None:
            ident[CODE_PREFIX + name] = codes[(name, home)]
    if kind.needs_models:
        ident.update({k: v for k, v in _default_params(config.model(unit.model), unit.dataset).items()
                      if k not in ident})
    ident.update(data_identity(config, unit.dataset))
    return ident


def config_identity(kind, config, unit):
    """What of ``unit``'s cell identity its config says by itself: ``kind.identity`` and a user's data definition,
    without what only importing a user's estimator tells (its code, its parameters' defaults). What the reports,
    which import no user's module, check a folder's records against (``_units.identity_changes``)."""
    return {**kind.identity(config, unit), **data_identity(config, unit.dataset)}


def _default_params(spec, dataset):
    """``params.<name>`` of every parameter a user's estimator is built with that the config leaves at its
    default (not a grid parameter, not a speed-only one); empty for a built-in or an estimator not imported."""
    from ..models._lookup import is_users

    if not is_users(spec.estimator) or not spec.imported:
        return {}
    cls = spec.estimator_class()
    try:
        params = cls(**spec.params_for(dataset)).get_params(deep=False)
    except Exception:  # a class that cannot be built so: the config's check said why already
        return {}
    speed_only = set(getattr(cls, "_speed_only_params", ()))
    return {f"params.{k}": _plain(v) for k, v in sorted(params.items())
            if k not in spec.grid and k not in speed_only}


#: Lists and mappings longer than this are held as a digest (a record's identity stays small).
_LONGEST_LISTED = 32

#: A parameter, or any part of one, whose JSON text in the identity would be longer than this many characters is
#: held as its readable form and digest, so that each record's identity and every message naming a changed
#: parameter stay bounded whatever the value's size (a 2,000,000-character default made each record's identity
#: 2 MB and one refusal line 4 MB). The bound a user's feature-column list is held by (``LISTED_COLUMNS``, 2,000):
#: one rule for every long value of an identity. Every parameter of the committed stores is far below it (the
#: longest, ``params.Cs``, is 115 characters), as is a list at the lists' bound of 32 numbers.
_LONGEST_TEXT = LISTED_COLUMNS


def _plain(value):
    """A parameter value as the identity's JSON holds it, by value and the same in every process.

    Numbers, strings, booleans and None as they are, short lists and mappings element by element; anything
    else (an array, a long list, a function, a set, a random state, an object) as a readable form and the
    digest of its value (``value_digest``): ``"array(float64, shape (2000,)) joblib:1f2e..."``. A ``repr``
    would cut an array at 1,000 elements and 8 digits, and name a function or a set by what changes from one
    process to the next. A string, list or mapping whose JSON text would be over ``_LONGEST_TEXT`` characters
    is held so too (``_bounded``): ``"str of 2000000 characters 'iVBORw0KGgo...'... joblib:9a0c..."``.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _bounded(value, value)
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):  # np.True_: not Integral
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, list | tuple) and len(value) <= _LONGEST_LISTED:
        return _bounded(value, [_plain(v) for v in value])
    if isinstance(value, dict) and len(value) <= _LONGEST_LISTED and all(isinstance(k, str) for k in value):
        return _bounded(value, {k: _plain(v) for k, v in value.items()})
    return _held(value)


def as_written(value):
    """A parameter the config sets (JSON already: what the user wrote) as the identity holds it: as written, and
    any part of it whose JSON text would be over ``_LONGEST_TEXT`` characters as its readable form and digest,
    by the rule ``_plain`` holds a default by. A config's list of 40 numbers stays a list (its identity was
    that before the rule)."""
    if isinstance(value, list):
        return _bounded(value, [as_written(v) for v in value])
    if isinstance(value, dict):
        return _bounded(value, {k: as_written(v) for k, v in value.items()})
    return _bounded(value, value)


def config_params(spec, dataset, leave_out=()):
    """``params.<name>`` of every parameter ``spec`` sets for ``dataset`` in its config (``as_written``) but those
    in ``leave_out`` (the speed-only ones): what a kind's identity holds of its estimator's parameters."""
    return {f"params.{k}": as_written(v) for k, v in sorted(spec.params_for(dataset).items()) if k not in leave_out}


def _bounded(value, plain):
    """``plain`` (``value`` as the identity's JSON holds it, its parts bounded already), or ``value``'s readable
    form and digest where ``plain``'s JSON text is over ``_LONGEST_TEXT`` characters."""
    if isinstance(plain, str) and len(plain) > _LONGEST_TEXT:  # its JSON text is longer still: not written out
        return _held(value)
    # (measured as a record stores it: its JSON with ASCII escapes, six characters for an accented letter)
    return _held(value) if len(json.dumps(plain, default=repr)) > _LONGEST_TEXT else plain


def _held(value):
    """``value`` as its readable form and the digest of its value: what decides is the digest."""
    return f"{_readable(value)} joblib:{value_digest(value)}"


def _readable(value):
    """A short form of ``value`` for the messages that name a changed parameter (the digest decides)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return f"array({value.dtype}, shape {value.shape})"
    if isinstance(value, str):  # only a long one is held so: its length and first characters
        return f"str of {len(value)} characters {value[:24]!r}..."
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{type(value).__name__} {getattr(value, '__module__', '?')}.{value.__qualname__}"
    if isinstance(value, list | tuple | dict | set | frozenset):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__qualname__


def value_digest(value):
    """``joblib.hash`` of ``value`` made canonical first: the same value gives the same digest in every
    process (arrays by dtype, shape and bytes; functions and classes by module and qualified name; sets in an
    order of their own; random states by their state), another value another digest."""
    return _hasher()().hash(_canonical(value))


@functools.cache
def _hasher():
    """``joblib.hash``'s hasher, with a frozenset hashed as joblib hashes a set (its elements in order) wherever
    it lies: inside an object (a dataclass's field), which ``_canonical`` does not open, joblib pickles it in its
    iteration order, which string hashing changes per process. Every other value's digest is joblib's."""
    from joblib.hashing import NumpyHasher, _ConsistentSet

    class Hasher(NumpyHasher):
        dispatch = NumpyHasher.dispatch.copy()

        def save_frozenset(self, items):
            NumpyHasher.save(self, ("frozenset", _ConsistentSet(items)))

        dispatch[frozenset] = save_frozenset

    return Hasher


def _canonical(value):
    """``value`` with what ``joblib.hash`` cannot hash the same in every process replaced: functions (a
    lambda cannot be pickled) by their module and qualified name, sets (a frozenset pickles in iteration
    order, which string hashing changes per process) sorted by their elements' digests."""
    import types

    import joblib
    import numpy as np

    if isinstance(value, np.ndarray) and value.dtype != object:
        return value
    if isinstance(value, type | types.FunctionType | types.BuiltinFunctionType | types.MethodType):
        owner = _canonical(value.__self__) if isinstance(value, types.MethodType) else None
        return ("function", getattr(value, "__module__", None), getattr(value, "__qualname__", repr(value)), owner)
    if isinstance(value, functools.partial):
        return ("partial", _canonical(value.func), _canonical(value.args), _canonical(value.keywords))
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_canonical(v) for v in value])
    if isinstance(value, dict):
        items = [(_canonical(k), _canonical(v)) for k, v in value.items()]
        return ("dict", sorted(items, key=lambda kv: joblib.hash(kv[0])))
    if isinstance(value, set | frozenset | np.ndarray):
        elements = [_canonical(v) for v in (value.ravel().tolist() if isinstance(value, np.ndarray) else value)]
        shape = value.shape if isinstance(value, np.ndarray) else None
        return (type(value).__name__, shape, sorted(elements, key=joblib.hash) if shape is None else elements)
    try:
        joblib.hash(value)
        return value
    except Exception:  # an object that cannot be pickled: its type and, where it has them, its attributes
        state = getattr(value, "__dict__", None)
        return ("object", type(value).__module__, type(value).__qualname__,
                _canonical(state) if isinstance(state, dict) else None)


def data_identity(config, dataset):
    """``data.<key>`` of a user's own data set (how its file is read into X and y); empty for a registry set."""
    entry = config.local_datasets.get(dataset)
    if entry is None:
        return {}
    from ..datasets._local import definition

    return {f"data.{k}": v for k, v in definition(entry).items()}


def code_of(identity):
    """{estimator: code} that an identity names (what a worker checks its imported module against)."""
    return {k[len(CODE_PREFIX):]: v for k, v in (identity or {}).items() if k.startswith(CODE_PREFIX)}
