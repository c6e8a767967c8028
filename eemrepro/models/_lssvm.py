"""Least-squares SVM (Suykens & Vandewalle 1999) weighted for class balance.

Solves the bordered system [[0, 1^T], [1, K + D]] [b; alpha] = [0; t] with
D = diag(1 / (C w_i)) and balance weights w_i (SPEC section 1).

For a grid over C the Gram matrix is decomposed once: with W = diag(w),
K + D = W^(-1/2) (W^(1/2) K W^(1/2) + I / C) W^(-1/2), so one symmetric
eigendecomposition W^(1/2) K W^(1/2) = Q L Q^T gives
(K + D)^(-1) v = W^(1/2) Q (L + I/C)^(-1) Q^T W^(1/2) v for every C in O(n^2).
A single C (``fit``) needs no eigenvectors: K + D is symmetric positive definite,
so one Cholesky factorisation solves it, about 15 times faster than the
eigendecomposition at n = 2,000-4,000. That is the fit Table 5 times.
"""

import numbers

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin

from ._base import _balance_weights, _BinaryClassifierMixin, _check_number, _PathMixin
from ._features import _kernel_expansion, _rbf

__all__ = ["LSSVM"]


def _lssvm_direct(K, t, w, C):
    """Reference solution of the bordered system by a dense solve (tests use it)."""
    n = K.shape[0]
    A = np.zeros((n + 1, n + 1))
    A[0, 1:] = 1.0
    A[1:, 0] = 1.0
    A[1:, 1:] = K + np.diag(1.0 / (C * w))
    sol = linalg.solve(A, np.concatenate([[0.0], t]))
    return sol[1:], sol[0]


def _bordered_solution(u_t, u_1):
    """alpha, b from u_t = (K + D)^-1 t and u_1 = (K + D)^-1 1.

    1^T alpha = 0 with alpha = (K + D)^-1 (t - b 1) gives b = 1^T u_t / 1^T u_1.
    """
    b = u_t.sum() / u_1.sum()
    return u_t - b * u_1, b


def _lssvm_cholesky(K, t, w, C):
    """alpha, b for one C by a Cholesky solve of K + D; None if K + D is not numerically PD.

    Overwrites ``K``. Near-singular K (a tiny gamma) with a large C can lose
    positive definiteness to round-off; the caller then falls back to the
    eigendecomposition, which clips the round-off eigenvalues.
    """
    K[np.diag_indices_from(K)] += 1.0 / (C * w)
    try:
        factor = linalg.cho_factor(K, overwrite_a=True, check_finite=False)
    except linalg.LinAlgError:
        return None
    u = linalg.cho_solve(factor, np.column_stack([t, np.ones_like(t)]), check_finite=False)
    return _bordered_solution(u[:, 0], u[:, 1])


class _LSSVMEigenPath:
    """Per-(gamma, training set) eigendecomposition serving every C."""

    def __init__(self, K, t, w):
        sw = np.sqrt(w)
        K *= sw[:, None]
        K *= sw[None, :]
        eigval, Q = linalg.eigh(K, overwrite_a=True, check_finite=False)
        # K is PSD; negative eigenvalues are round-off and would make
        # L + I/C singular at the large C of the grid (1e10).
        self._eigval = np.maximum(eigval, 0.0)
        self._Q = Q
        self._sw = sw
        self._qt_t = Q.T @ (sw * t)
        self._qt_1 = Q.T @ sw

    def solve(self, C):
        inv = 1.0 / (self._eigval + 1.0 / C)
        u_t = self._sw * (self._Q @ (inv * self._qt_t))
        u_1 = self._sw * (self._Q @ (inv * self._qt_1))
        return _bordered_solution(u_t, u_1)


class LSSVM(_PathMixin, _BinaryClassifierMixin, ClassifierMixin, BaseEstimator):
    """Balanced least-squares SVM with the Gaussian kernel.

    Parameters
    ----------
    C : float, default=1.0
        Regularisation; D = diag(1 / (C w_i)).
    gamma : float, default=1.0
        Kernel exp(-gamma ||x - y||^2).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    pos_label_ : object
    support_vectors_ : ndarray of shape (n_samples, n_features)
        The training points (every point is a support vector in LS-SVM).
    dual_coef_ : ndarray of shape (n_samples,)
    intercept_ : float

    References
    ----------
    J. A. K. Suykens and J. Vandewalle, "Least squares support vector machine
    classifiers", Neural Processing Letters 9 (1999) 293-300.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from eemrepro.models import LSSVM
    >>> X, y = make_moons(n_samples=100, noise=0.1, random_state=0)
    >>> float(LSSVM(C=10.0, gamma=2.0).fit(X, y).score(X, y)) > 0.9
    True
    """

    # The grid parameter fit_path covers in one fit (used by the experiment runner).
    _path_param = "C"

    @staticmethod
    def _fit_flops(n, d, params):
        """Rough operation count of one fit (the runner's time estimate)."""
        return 9 * n**3 + n * n * d

    def __init__(self, C=1.0, gamma=1.0):
        self.C = C
        self.gamma = gamma

    def _check_params(self):
        _check_number(self, "C", numbers.Real, low=0, low_open=True)
        _check_number(self, "gamma", numbers.Real, low=0, low_open=True)

    def fit_path(self, X, y, C):
        """One model per C from one eigendecomposition.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        C : sequence of float

        Returns
        -------
        models : list of fitted LSSVM, in the order of ``C``
        """
        return self._fit_path(X, y, C)

    def _fit_states(self, X, t, Cs):
        w = _balance_weights(t)
        if len(Cs) == 1:
            solution = _lssvm_cholesky(_rbf(X, X, self.gamma), t, w, Cs[0])
            if solution is not None:
                return [{"dual_coef_": solution[0], "intercept_": solution[1], "support_vectors_": X}]
        path = _LSSVMEigenPath(_rbf(X, X, self.gamma), t, w)
        states = []
        for c in Cs:
            alpha, b = path.solve(c)
            states.append({"dual_coef_": alpha, "intercept_": b, "support_vectors_": X})
        return states

    def decision_function(self, X):
        """K(x, X) alpha + b, oriented so that it is positive for ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        X = self._validate_prediction_data(X)
        return self._orient(_kernel_expansion(X, self.support_vectors_, self.dual_coef_, self.intercept_, self.gamma))
