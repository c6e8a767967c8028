"""Weighted Extreme Learning Machine (Zong et al. 2013), the paper's WELM.

beta = pinv(s * H) (s * t) with s_i = sqrt(w_i) and balance weights w_i.

The least-squares problem is solved from the R factor of the QR decomposition
of the augmented matrix [s*H | s*t], accumulated over row chunks (TSQR), so a
fit never holds the N x h matrix for large N. The pseudo-inverse is exact
through it: with A = Q R (Q orthonormal columns), pinv(A) b = pinv(R) Q^T b,
and Q^T b is the last column of the augmented R. The R factor of the first q
columns is the leading block of R, so one QR of the largest layer serves every
hidden-layer size of a grid.
"""

import numbers

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state

from ._base import (
    _balance_weights,
    _BinaryClassifierMixin,
    _check_choice,
    _check_number,
    _chunk_rows,
    _chunked,
    _iter_slices,
    _PathMixin,
)
from ._features import ACTIVATIONS, _draw_hidden_layer, _hidden_activations

__all__ = ["WELM"]


def _augmented_r(chunks, n_columns):
    """R factor of the row-stacked chunks, accumulated one chunk at a time."""
    R = np.empty((0, n_columns))
    for block in chunks:
        R = linalg.qr(np.vstack([R, block]), mode="r", check_finite=False)[0]
        R = R[: min(R.shape[0], n_columns)]
    return R


def _min_norm_solution(R, q, n_samples):
    """pinv(A_q) b for A_q the first q columns, from the augmented R.

    The singular values of A_q are those of its R block; those at or below
    ``eps * max(n_samples, q) * s_max`` are treated as zero, the default cutoff
    of :func:`numpy.linalg.lstsq`.
    """
    k = min(q, R.shape[0])
    U, s, Vt = linalg.svd(R[:k, :q], full_matrices=False, check_finite=False)
    keep = s > np.finfo(np.float64).eps * max(n_samples, q) * s[0] if s.size and s[0] > 0 else s > 0
    return Vt[keep].T @ ((U[:, keep].T @ R[:k, -1]) / s[keep])


class WELM(_PathMixin, _BinaryClassifierMixin, ClassifierMixin, BaseEstimator):
    """Weighted Extreme Learning Machine without regularisation (the paper's WELM).

    Parameters
    ----------
    n_hidden : int, default=100
    activation : {"sig", "nsig", "rbf"}, default="sig"
        Same random hidden layer as :class:`EEM`.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    pos_label_ : object
    hidden_weights_ : ndarray of shape (n_hidden, n_features)
    hidden_biases_ : ndarray of shape (n_hidden,)
    beta_ : ndarray of shape (n_hidden,)
        Output weights; the decision is sign(phi(x)^T beta) with t = +1 for
        ``pos_label_``.

    References
    ----------
    W. Zong, G.-B. Huang and Y. Chen, "Weighted extreme learning machine for
    imbalance learning", Neurocomputing 101 (2013) 229-242.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from eemrepro.models import WELM
    >>> from sklearn.preprocessing import MinMaxScaler
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> X = MinMaxScaler().fit_transform(X)
    >>> clf = WELM(n_hidden=20, activation="rbf", random_state=0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.85
    True
    """

    # The grid parameter fit_path covers in one fit (used by the experiment runner).
    _path_param = "n_hidden"

    @staticmethod
    def _fit_flops(n, d, params):
        """Rough operation count of one fit (the runner's time estimate)."""
        h = params.get("n_hidden", 100)
        return 2 * n * h * h + n * d * h

    def __init__(self, n_hidden=100, activation="sig", random_state=None):
        self.n_hidden = n_hidden
        self.activation = activation
        self.random_state = random_state

    def _check_params(self):
        _check_number(self, "n_hidden", numbers.Integral, low=1)
        _check_choice(self, "activation", ACTIVATIONS)

    def fit_path(self, X, y, n_hidden):
        """One model per hidden-layer size from one QR of the largest layer.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        n_hidden : sequence of int

        Returns
        -------
        models : list of fitted WELM, in the order of ``n_hidden``
        """
        return self._fit_path(X, y, [int(h) for h in n_hidden])

    def _fit_states(self, X, t, hs):
        rng = check_random_state(self.random_state)
        h_max = max(hs)
        weights, biases = _draw_hidden_layer(h_max, X.shape[1], rng)
        s = np.sqrt(_balance_weights(t))

        def chunks():
            for sl in _iter_slices(X.shape[0], _chunk_rows(h_max)):
                H = _hidden_activations(X[sl], weights, biases, self.activation)
                H *= s[sl, None]
                yield np.column_stack([H, s[sl] * t[sl]])

        R = _augmented_r(chunks(), h_max + 1)
        return [
            {
                "hidden_weights_": weights[:h],
                "hidden_biases_": biases[:h],
                "beta_": _min_norm_solution(R, h, X.shape[0]),
            }
            for h in hs
        ]

    def decision_function(self, X):
        """phi(x)^T beta, oriented so that it is positive for ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        X = self._validate_prediction_data(X)
        features = lambda chunk: _hidden_activations(chunk, self.hidden_weights_, self.hidden_biases_, self.activation)
        return self._orient(_chunked(X, self.beta_.shape[0], lambda chunk: features(chunk) @ self.beta_))
