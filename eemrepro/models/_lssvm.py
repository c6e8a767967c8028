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


def _lssvm_direct(K, Y, w, C):
    """Reference solution of the bordered system by a dense solve (tests use it).

    ``Y`` of shape (n,) or (n, m) (one system, m right-hand sides); ``w=None``
    is the unweighted system K + I/C.
    """
    n = K.shape[0]
    w = np.ones(n) if w is None else w
    A = np.zeros((n + 1, n + 1))
    A[0, 1:] = 1.0
    A[1:, 0] = 1.0
    A[1:, 1:] = K + np.diag(1.0 / (C * w))
    rhs = np.concatenate([np.zeros((1,) + Y.shape[1:]), Y])
    sol = linalg.solve(A, rhs)
    return sol[1:], sol[0]


def _bordered_solution(u_y, u_1):
    """alpha, b from u_y = (K + D)^-1 Y and u_1 = (K + D)^-1 1.

    1^T alpha = 0 with alpha = (K + D)^-1 (Y - 1 b^T) gives b = 1^T u_y / 1^T u_1
    (a scalar for one column, one per column of Y otherwise).
    """
    b = u_y.sum(axis=0) / u_1.sum()
    return u_y - np.multiply.outer(u_1, b), b


def _lssvm_cholesky(K, Y, w, C):
    """alpha, b for one C by a Cholesky solve of K + D; None if K + D is not numerically PD.

    Overwrites ``K``. Near-singular K (a tiny gamma) with a large C can lose
    positive definiteness to round-off; the caller then falls back to the
    eigendecomposition, which clips the round-off eigenvalues.
    """
    K[np.diag_indices_from(K)] += 1.0 / (C * (1.0 if w is None else w))
    try:
        factor = linalg.cho_factor(K, overwrite_a=True, check_finite=False)
    except linalg.LinAlgError:
        return None
    rhs = np.column_stack([Y, np.ones(K.shape[0])])
    u = linalg.cho_solve(factor, rhs, check_finite=False)
    u_y = u[:, 0] if Y.ndim == 1 else u[:, :-1]
    return _bordered_solution(u_y, u[:, -1])


class _LSSVMEigenPath:
    """Per-(kernel, training set) eigendecomposition serving every C.

    With W = diag(w) and D = diag(1 / (C w)), K + D = W^(-1/2) (W^(1/2) K W^(1/2)
    + I/C) W^(-1/2); one symmetric eigendecomposition W^(1/2) K W^(1/2) = Q L Q^T
    gives (K + D)^-1 v = W^(1/2) Q (L + I/C)^-1 Q^T W^(1/2) v for every C in
    O(n^2 m). ``w=None``: unweighted (the hat-matrix LS-SVM of Hwang 2016).
    """

    def __init__(self, K, Y, w=None):
        sw = None if w is None else np.sqrt(w)
        if sw is not None:
            K *= sw[:, None]
            K *= sw[None, :]
        eigval, Q = linalg.eigh(K, overwrite_a=True, check_finite=False, driver="evd")
        # K is PSD; negative eigenvalues are round-off and would make
        # L + I/C singular at the large C of the grid (1e10).
        self._eigval = np.maximum(eigval, 0.0)
        self._Q = Q
        self._sw = sw
        self._qt_y = Q.T @ self._scale(Y)
        self._qt_1 = Q.T @ self._scale(np.ones(K.shape[0]))

    def _scale(self, v):
        """W^(1/2) v, row-wise for a matrix."""
        return v if self._sw is None else self._sw.reshape((-1,) + (1,) * (v.ndim - 1)) * v

    def solve(self, C):
        """alpha, b of the bordered system at ``C``."""
        inv = 1.0 / (self._eigval + 1.0 / C)
        u_y = self._scale(self._Q @ (inv.reshape((-1,) + (1,) * (self._qt_y.ndim - 1)) * self._qt_y))
        u_1 = self._scale(self._Q @ (inv * self._qt_1))
        return _bordered_solution(u_y, u_1)


def _lssvm_hat_path(K, Y, Cs, w=None):
    """alpha, b and diag H of the bordered system for every C from one eigendecomposition.

    The core of the GCV / leave-one-out model selection (Hwang 2016, eq. 3.4-3.6).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The kernel matrix; overwritten.
    Y : ndarray of shape (n,) or (n, m)
        Targets (one-vs-all columns of +-1 for classification).
    Cs : sequence of float
    w : ndarray of shape (n,), optional
        Per-sample weights, D = diag(1 / (C w)); None: D = I / C.

    Yields
    ------
    alpha : ndarray like Y
    b : float or ndarray of shape (m,)
    fitted : ndarray like Y
        Y_hat = K alpha + b on the training points (= Y - D alpha).
    hat_diagonal : ndarray of shape (n,)
        h_ii; tr H is its sum.
    """
    path = _LSSVMEigenPath(K, Y, w)
    Cs = np.asarray(Cs, dtype=float)
    # Every C at once: three matrix products with Q and Q * Q instead of a few
    # matrix-vector passes per C (memory-bound at large n). The hat diagonal:
    # Y_hat = K alpha + 1 b^T = Y - D alpha = (I - D P) Y with
    # P = G^-1 - G^-1 1 1^T G^-1 / (1^T G^-1 1), G = K + D, so h_ii = 1 - D_ii P_ii
    # and G^-1_ii = w_i sum_j Q_ij^2 / (l_j + 1/C).
    inv = 1.0 / (path._eigval[:, None] + 1.0 / Cs[None, :])  # (n, n_C)
    qt_y = path._qt_y.reshape(path._qt_y.shape[0], -1)  # (n, m)
    m = qt_y.shape[1]
    u_y = path._scale(path._Q @ (inv[:, :, None] * qt_y[:, None, :]).reshape(inv.shape[0], -1))
    u_1 = path._scale(path._Q @ (inv * path._qt_1[:, None]))
    ww = np.ones(inv.shape[0]) if w is None else w
    g_diag = ww[:, None] * ((path._Q * path._Q) @ inv)  # diag of (K + D)^-1 per C
    for j, C in enumerate(Cs):
        u_yj = u_y[:, j * m:(j + 1) * m].reshape(Y.shape)
        alpha, b = _bordered_solution(u_yj, u_1[:, j])
        d = 1.0 / (C * ww)
        fitted = Y - (d.reshape((-1,) + (1,) * (Y.ndim - 1))) * alpha
        p_diag = g_diag[:, j] - u_1[:, j] ** 2 / u_1[:, j].sum()
        yield alpha, b, fitted, 1.0 - p_diag * d


def _selection_criterion(residual, hat_diagonal, criterion="gcv", w=None):
    """GCV (Hwang 2016, eq. 3.5) or leave-one-out (eq. 3.4) from training residuals.

    ``residual``: Y_ik - Y_hat_ik of each point's own class column k = k_i.
    GCV = n sum_i w_i r_i^2 / (n - tr H)^2; LOO = mean_i w_i (r_i / (1 - h_ii))^2
    (w_i = 1 unweighted: the paper's formulas; weighted: weighted GCV, and the
    exact leave-one-out error with the weights held fixed). A fit that
    interpolates (tr H = n, or h_ii = 1) has no estimate: +inf, never selected.
    """
    w = 1.0 if w is None else w
    n = residual.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        if criterion == "gcv":
            denom = n - hat_diagonal.sum()
            value = n * np.sum(w * residual**2) / denom**2 if denom > 1e-10 * n else np.inf
        else:
            loo = residual / (1.0 - hat_diagonal)
            value = float(np.mean(w * loo**2))
    return float(value) if np.isfinite(value) else np.inf


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
