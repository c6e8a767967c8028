"""Shared plumbing of the binary classifiers: labels, balance weights, chunks."""

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

# Rows per chunk are chosen so one chunk of features holds about this many
# values (32 MiB in float64): large enough for BLAS to run at full speed,
# small enough that memory stays O(h^2 + chunk * h) whatever N is.
_CHUNK_VALUES = 1 << 22


def _chunk_rows(n_columns):
    """Rows per chunk for a feature block with ``n_columns`` columns."""
    return max(64, _CHUNK_VALUES // max(1, n_columns))


def _iter_slices(n_rows, rows_per_chunk):
    for start in range(0, n_rows, rows_per_chunk):
        yield slice(start, min(start + rows_per_chunk, n_rows))


def _balance_weights(t):
    """Per-sample balance weights w_i = |larger class| / |class of x_i|.

    With these weights sum_i w_i t_i = 0 (EEM paper, section 7).
    """
    n_pos = np.count_nonzero(t > 0)
    n_neg = t.shape[0] - n_pos
    n_max = max(n_pos, n_neg)
    return np.where(t > 0, n_max / n_pos, n_max / n_neg)


class _BinaryClassifierMixin:
    """Label handling common to the five estimators.

    Any two labels are accepted. Internally the minority class is the positive
    one (t = +1), as in the paper; ties go to ``classes_[1]``. Public outputs
    follow scikit-learn: ``decision_function`` is positive for ``classes_[1]``
    and ``predict_proba`` columns are in ``classes_`` order.
    """

    def _validate_training_data(self, X, y, dtype=np.float64):
        X, y = validate_data(self, X, y, dtype=dtype, y_numeric=False)
        check_classification_targets(y)
        classes, counts = np.unique(y, return_counts=True)
        name = type(self).__name__
        if classes.shape[0] < 2:
            raise ValueError(
                f"{name} needs samples of 2 classes to train, but the data "
                f"contains only one class: {classes[0]!r}."
            )
        if classes.shape[0] > 2:
            raise ValueError(
                "Only binary classification is supported. The type of the "
                f"target is multiclass: {name} got {classes.shape[0]} classes "
                f"{classes.tolist()!r}; reduce the problem to two classes "
                "(one-vs-rest) first."
            )
        self.classes_ = classes
        pos_index = 0 if counts[0] < counts[1] else 1
        self.pos_label_ = classes[pos_index]
        t = np.where(y == self.pos_label_, 1.0, -1.0)
        return X, t

    def _validate_prediction_data(self, X, dtype=np.float64):
        check_is_fitted(self)
        return validate_data(self, X, dtype=dtype, reset=False)

    @property
    def _pos_is_second(self):
        return self.pos_label_ == self.classes_[1]

    def _orient(self, score_pos):
        """Turn a score that is positive for ``pos_label_`` into one for ``classes_[1]``."""
        return score_pos if self._pos_is_second else -score_pos

    def predict(self, X):
        """Predict class labels for samples in ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


def _check_sample_weight(sample_weight, n_samples):
    """``sample_weight`` as float64 of shape (n_samples,): finite, non-negative, not all zero."""
    s = np.asarray(sample_weight, dtype=np.float64)
    if s.shape != (n_samples,):
        raise ValueError(f"sample_weight has shape {s.shape}; expected ({n_samples},), one weight per sample.")
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise ValueError("sample_weight must be finite and non-negative.")
    if not s.any():
        raise ValueError("sample_weight is zero for every sample; nothing to fit.")
    return s


def _check_number(estimator, name, kind, low=None, low_open=False):
    """Raise a ValueError naming the parameter when it is not a number in range."""
    value = getattr(estimator, name)
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if not ok:
        bound = "" if low is None else f" {'>' if low_open else '>='} {low}"
        raise ValueError(
            f"{type(estimator).__name__}: parameter {name!r} must be a "
            f"{kind.__name__.lower()}{bound}, got {value!r}."
        )


def _check_choice(estimator, name, choices):
    value = getattr(estimator, name)
    if value not in choices:
        raise ValueError(
            f"{type(estimator).__name__}: parameter {name!r} must be one of "
            f"{list(choices)!r}, got {value!r}."
        )


def _chunked(X, n_columns, fn, n_outputs=None):
    """``fn`` applied to row chunks of X (sized for ``n_columns`` intermediate columns), concatenated.

    ``fn`` returns one value per row, or ``n_outputs`` values per row.
    """
    out = np.empty(X.shape[0] if n_outputs is None else (X.shape[0], n_outputs))
    for sl in _iter_slices(X.shape[0], _chunk_rows(n_columns)):
        out[sl] = fn(X[sl])
    return out


class _PathMixin:
    """``fit`` and ``fit_path`` for estimators that fit a whole grid of one parameter at once.

    A subclass names the parameter in ``_path_param`` and implements
    ``_fit_states(X, t, values) -> [state per value]`` (a state is the dict of
    fitted attributes) and, if a state needs processing, ``_set_state``.
    """

    _path_param = None

    def _set_state(self, state):
        self.__dict__.update(state)

    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes, any labels; the minority one is the positive class.

        Returns
        -------
        self : object
        """
        self._check_params()
        X, t = self._validate_training_data(X, y)
        (state,) = self._fit_states(X, t, [getattr(self, self._path_param)])
        self._set_state(state)
        return self

    def _fit_path(self, X, y, values, **fit_params):
        values = list(values)
        if not values:
            raise ValueError(f"{self._path_param} must be a non-empty list of values")
        from sklearn.base import clone

        # The path parameter is set as an attribute: set_params would look up every
        # parameter's name again for each value (about a tenth of SMM's benchmark path).
        proto = clone(self)
        for v in values:
            setattr(proto, self._path_param, v)
            proto._check_params()
        X, t = proto._validate_training_data(X, y)
        states = proto._fit_states(X, t, values, **fit_params)
        # What the fit set on the estimator for every value (classes_, ESMM's memberships_).
        fitted = {k: v for k, v in proto.__dict__.items() if k.endswith("_") and not k.startswith("_")}
        models = []
        for v, state in zip(values, states, strict=True):
            model = clone(self)
            setattr(model, self._path_param, v)
            model.__dict__.update(fitted)
            model._set_state(state)
            models.append(model)
        return models
