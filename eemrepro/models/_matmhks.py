"""MatMHKS: the matrix-pattern Ho-Kashyap classifier with regularisation (Chen, Wang & Tian 2007).

g(A) = u^T A v + v0 minimises sum_i (y_i g(A_i) - 1 - b_i)^2 + c (u^T u + v^T v) over u, v,
v0 and margins b >= 0, by alternating regularised least squares in v (with v0) and u, with
the Ho-Kashyap margin update b <- b + rho (e + |e|) (SPEC section 6).
"""

import numbers
import warnings

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from ._base import _BinaryClassifierMixin, _check_number
from ._smm import _matrix_shape

__all__ = ["MatMHKS"]


def _ridge_solve(Z, target, c, penalised):
    """argmin_x ||Z x - target||^2 + c ||x[penalised]||^2 (the bias column unpenalised)."""
    H = Z.T @ Z + c * np.diag(penalised.astype(float))
    # A tiny ridge on the bias keeps H positive definite when the column is constant.
    H[~penalised, ~penalised] += 1e-12 * (1.0 + np.trace(H))
    return scipy.linalg.solve(H, Z.T @ target, assume_a="pos")


def _matmhks(A, t, c, rho, b0, max_iter, tol):
    """Alternate the v-step (with v0), the u-step and the margin update; return (u, v, v0, n_iter, converged).

    Stops when an iteration moves neither the margins b nor u (relative) by more than ``tol``:
    b alone stands still whenever no margin is exceeded, before u and v have settled.
    """
    n, r, q = A.shape
    u = np.ones(r) / np.sqrt(r)
    b = np.full(n, b0)
    v_mask = np.r_[np.ones(q, dtype=bool), False]
    for k in range(1, max_iter + 1):
        # v-step: rows t_i [u^T A_i, 1]
        Y = t[:, None] * np.c_[np.einsum("r,irq->iq", u, A), np.ones(n)]
        vv = _ridge_solve(Y, 1.0 + b, c, v_mask)
        v, v0 = vv[:q], vv[q]
        # u-step: rows t_i (A_i v)^T, v0 fixed
        Z = t[:, None] * np.einsum("irq,q->ir", A, v)
        u_new = _ridge_solve(Z, 1.0 + b - t * v0, c, np.ones(r, dtype=bool))
        e = Z @ u_new + t * v0 - 1.0 - b
        b_new = b + rho * (e + np.abs(e))
        moved = max(np.linalg.norm(b_new - b), np.linalg.norm(u_new - u) / max(np.linalg.norm(u_new), 1e-300))
        u, b = u_new, b_new
        if moved < tol:
            return u, v, v0, k, True
    return u, v, v0, max_iter, False


class MatMHKS(_BinaryClassifierMixin, ClassifierMixin, BaseEstimator):
    """Matrix-pattern-oriented modified Ho-Kashyap classifier (MatMHKS).

    Each point is read row-major as an r x c matrix A (``shape``, default the
    most square with r <= c, as ``SMM``); the score is u^T A v + v0.

    Parameters
    ----------
    c : float, default=1.0
        Regularisation of u and v.
    shape : (int, int) or None, default=None
    rho : float, default=0.99
        Ho-Kashyap learning rate, 0 < rho < 1.
    b0 : float, default=1e-6
        Initial margins.
    max_iter : int, default=500
    tol : float, default=1e-4
        Stop when the margins move by less than this (Euclidean norm).

    Attributes
    ----------
    classes_, pos_label_
    u_ : ndarray of shape (r,)
    v_ : ndarray of shape (c,)
    intercept_ : float
        v0, oriented for ``classes_[1]`` like ``u_``.
    shape_ : tuple of int
    n_iter_ : int

    References
    ----------
    S. Chen, Z. Wang and Y. Tian, "Matrix-pattern-oriented Ho-Kashyap classifier
    with regularization learning", Pattern Recognition 40 (2007) 1533-1543.

    Examples
    --------
    >>> import numpy as np
    >>> from eemrepro.models import MatMHKS
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(80, 6))  # rows (x0, x1, x2) and (x3, x4, x5)
    >>> y = (X[:, 0] + X[:, 1] - X[:, 3] - X[:, 4] > 0).astype(int)  # u = (1, -1), v = (1, 1, 0)
    >>> float(MatMHKS(c=1.0).fit(X, y).score(X, y)) > 0.9
    True
    """

    def __init__(self, c=1.0, shape=None, rho=0.99, b0=1e-6, max_iter=500, tol=1e-4):
        self.c = c
        self.shape = shape
        self.rho = rho
        self.b0 = b0
        self.max_iter = max_iter
        self.tol = tol

    def _check_params(self):
        _check_number(self, "c", numbers.Real, low=0)
        _check_number(self, "b0", numbers.Real, low=0)
        _check_number(self, "max_iter", numbers.Integral, low=1)
        _check_number(self, "tol", numbers.Real, low=0, low_open=True)
        if not (isinstance(self.rho, numbers.Real) and 0 < self.rho < 1):
            raise ValueError(f"MatMHKS: parameter 'rho' must be in (0, 1), got {self.rho!r}.")

    def fit(self, X, y):
        """Fit u, v and v0.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        self._check_params()
        X, t = self._validate_training_data(X, y)
        shape = _matrix_shape(X.shape[1], self.shape)
        u, v, v0, n_iter, converged = _matmhks(X.reshape(-1, *shape), t, float(self.c), float(self.rho),
                                               float(self.b0), self.max_iter, self.tol)
        if not converged:
            warnings.warn(f"MatMHKS (c={self.c!r}) stopped after max_iter={self.max_iter} iterations with the "
                          f"margins still moving by more than tol={self.tol!r}.", ConvergenceWarning, stacklevel=2)
        sign = 1.0 if self._pos_is_second else -1.0
        self.u_, self.v_, self.intercept_ = sign * u, v, sign * float(v0)
        self.shape_, self.n_iter_ = shape, n_iter
        return self

    def decision_function(self, X):
        """u^T A v + v0, positive for ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        X = self._validate_prediction_data(X)
        A = X.reshape(-1, *self.shape_)
        return np.einsum("r,irq,q->i", self.u_, A, self.v_) + self.intercept_
