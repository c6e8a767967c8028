"""Support matrix machine (Luo, Xie, Zhang & Li 2015) and entropy-based SMM (Zhu 2017).

SMM solves, for the points A_i reshaped into r x c matrices and weights s_i,

    min_{W, b}  1/2 tr(W^T W) + tau ||W||_* + C sum_i s_i [1 - y_i (tr(W^T A_i) + b)]_+

by ADMM, and stops on a certified relative duality gap (SPEC section 6). ESMM is SMM with
the entropy-based fuzzy memberships of ``entropy_fuzzy_membership`` as the weights.
"""

import numbers
import warnings

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning

from ._base import _BinaryClassifierMixin, _check_number
from ._fuzzy import entropy_fuzzy_membership

__all__ = ["SMM", "ESMM"]

_CHECK_EVERY = 10  # iterations between duality-gap certificates
_RELAXATION = 1.6  # over-relaxation (Boyd et al. 2011, section 3.4.3)


def _matrix_shape(n_features, shape=None):
    """(r, c) with r c = n_features: the given ``shape``, else the most square one with r <= c."""
    if shape is None:
        r = max(k for k in range(1, int(np.sqrt(n_features)) + 1) if n_features % k == 0)
        return r, n_features // r
    try:
        r, c = (int(v) for v in shape)
        ok = r >= 1 and c >= 1 and all(float(v) == int(v) for v in shape)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"shape must be two positive integers [r, c], got {shape!r}.")
    if r * c != n_features:
        raise ValueError(
            f"shape {[r, c]!r} holds {r * c} values but the data have {n_features} features; "
            "r * c must equal the number of features."
        )
    return r, c


def _svt(M, threshold):
    """Singular value thresholding: the prox of threshold * ||.||_* at M."""
    if M.shape[0] == 1:  # one row: ||.||_* is the l2 norm, its prox a shrinkage (no SVD call)
        norm = np.sqrt(np.sum(M * M))
        return M * (max(norm - threshold, 0.0) / norm) if norm > 0 else M
    U, sv, Vt = np.linalg.svd(M, full_matrices=False)
    return (U * np.maximum(sv - threshold, 0.0)) @ Vt


def _best_intercept(f, t, c):
    """argmin_b sum_i c_i [1 - t_i (f_i + b)]_+ (exact: the slope changes sign at a breakpoint)."""
    breaks = t - f  # the term of point i has its kink at b = t_i - f_i (t_i = +-1)
    order = np.argsort(breaks, kind="stable")
    # Left of every kink the slope is -sum of the positives' c; each kink adds its c_i.
    slope = -c[t > 0].sum() + np.cumsum(c[order])
    j = min(int(np.searchsorted(slope, 0.0)), order.shape[0] - 1)
    return breaks[order[j]]


def _smm_objective(W, b, F, t, c, tau):
    """The primal objective at (W, b); F holds the vectorised points row-major."""
    w = W.ravel()
    hinge = np.maximum(0.0, 1.0 - t * (F @ w + b))
    return 0.5 * w @ w + tau * np.linalg.norm(W, "nuc") + c @ hinge


def _smm_dual(alpha, Ft, t, tau, shape):
    """Dual objective sum(alpha) - 1/2 ||SVT_tau(sum_i alpha_i t_i A_i)||^2 after making alpha feasible.

    ``alpha`` is clipped into its box by the caller; the equality sum_i alpha_i t_i = 0 is
    restored by shrinking the heavier class's multipliers, which keeps them in the box. Any
    such alpha gives a lower bound on the primal optimum (weak duality), which is what the
    stopping rule needs.
    """
    pos, neg = alpha[t > 0].sum(), alpha[t < 0].sum()
    alpha = alpha.copy()
    if pos > neg:
        alpha[t > 0] *= neg / pos
    elif neg > 0:
        alpha[t < 0] *= pos / neg
    W = _svt((Ft.T @ alpha).reshape(shape), tau)
    return alpha.sum() - 0.5 * np.sum(W * W), W


def _smm_admm(F, t, c, tau, shape, max_iter=10000, tol=1e-5, state=None):
    """Solve SMM by ADMM; return (W, b, n_iter, relative gap, converged, state).

    The splitting is x = (w, b) with z = 1 - t (F w + b) (the hinge's argument) and S = w
    (the nuclear norm's), so the x-step is one (d + 1) x (d + 1) linear solve (a cached
    inverse), the z-step the hinge's prox and the S-step singular value
    thresholding. (Luo et al. split only the nuclear norm and solve the x-step as an SVM
    dual QP; that is exact per step but each step is a QP: see SPEC section 6 and
    REPRODUCTION.md for the timings that made us split the hinge as well.) Every
    ``_CHECK_EVERY`` iterations a primal point (W = S or the SVT of the dual's matrix, each
    with its exact best intercept) and a dual-feasible point from the hinge's multipliers
    bound the optimum; the solver stops when their gap is below ``tol`` times the primal
    value. ``state`` warm-starts from a previous solve of the same data.
    """
    n, d = F.shape
    Ft = F * t[:, None]
    X1 = np.c_[Ft, t]  # margins t_i (w.x_i + b) = X1 @ (w, b)
    gram = X1.T @ X1
    w_mask = np.r_[np.ones(d), 0.0]

    def factor(rho_h, rho_s):
        # w gets 1 + rho_s on the diagonal; b only what the hinge block gives it, so the tiny
        # ridge keeps the factor defined when every margin is equal (it does not move b).
        H = rho_h * gram + np.diag(w_mask * (1.0 + rho_s))
        H[d, d] += 1e-12 * (1.0 + H[d, d])
        # The (d + 1) x (d + 1) inverse, from the Cholesky factor: one small matrix product a
        # step costs less than a triangular solve's call overhead at these sizes.
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(H), np.eye(d + 1))

    # The hinge block's penalty follows the weights' scale (C): measured on n = 500, 3 x 3,
    # C = 0.1 .. 1000, this needs 220-1,120 iterations where residual balancing (Boyd et al.
    # 2011, section 3.4.1) needed 270-10,000; the nuclear block's penalty barely matters.
    rho_h, rho_s = max(float(c.max()), 1e-12), 1.0
    if state is None:
        z, u, S, v = np.zeros(n), np.zeros(n), np.zeros(d), np.zeros(d)
    else:
        z, u, S, v, old_rho_h = state
        u = u * (old_rho_h / rho_h)  # scaled duals: the multipliers rho * u carry over
        z, S, v = z.copy(), S.copy(), v.copy()
    H_inv = factor(rho_h, rho_s)
    one = np.ones(n)
    best = (np.inf, np.zeros(shape), 0.0)
    gap, converged, k = np.inf, False, 0
    for k in range(1, max_iter + 1):
        x = H_inv @ (rho_h * (X1.T @ (one - z + u)) + np.r_[rho_s * (S - v), 0.0])
        w, margins = x[:d], X1 @ x
        relaxed_z = _RELAXATION * (one - margins) + (1 - _RELAXATION) * z
        relaxed_w = _RELAXATION * w + (1 - _RELAXATION) * S
        q = relaxed_z + u
        step = c / rho_h  # prox of (c_i / rho_h) [.]_+ at q
        z = np.where(q > step, q - step, np.minimum(q, 0.0))
        S = _svt((relaxed_w + v).reshape(shape), tau / rho_s).ravel()
        u += relaxed_z - z
        v += relaxed_w - S
        if k % _CHECK_EVERY and k != max_iter:
            continue
        for W in (S.reshape(shape), None):
            if W is None:
                dual, W = _smm_dual(np.clip(rho_h * u, 0.0, c), Ft, t, tau, shape)
            b = _best_intercept(F @ W.ravel(), t, c)
            value = _smm_objective(W, b, F, t, c, tau)
            if value < best[0]:
                best = (value, W.copy(), b)
        gap = (best[0] - dual) / max(abs(best[0]), 1e-300)
        if gap <= tol:
            converged = True
            break
    return best[1], best[2], k, gap, converged, (z, u, S, v, rho_h)


class SMM(_BinaryClassifierMixin, ClassifierMixin, BaseEstimator):
    """Support matrix machine: hinge loss, Frobenius and nuclear-norm penalties on W.

    Each d-dimensional point is read row-major as an r x c matrix A (``shape``, by
    default the most square r x c with r <= c; a prime d gives 1 x d, where
    ||W||_* = ||w||_2 and SMM is a linear SVM with an extra l2 term). The score is
    tr(W^T A) + b. Solved by ADMM to a certified relative duality gap ``tol``.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the hinge loss.
    tau : float, default=0.1
        Weight of the nuclear norm; 0 gives a linear SVM on the vectorised data.
    shape : (int, int) or None, default=None
        (r, c) with r c = n_features; None: the most square one.
    max_iter : int, default=10000
        ADMM iterations; a ``ConvergenceWarning`` when they run out.
    tol : float, default=1e-5
        Stop when (primal - dual) / primal <= tol, the primal's relative distance
        from the optimum being at most that.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    pos_label_ : object
        The minority class (scores are positive for it before orientation).
    coef_ : ndarray of shape (r, c)
        W, oriented so that the score is positive for ``classes_[1]``.
    intercept_ : float
    shape_ : tuple of int
    n_iter_ : int
    duality_gap_ : float
        Relative duality gap at the returned point.
    objective_ : float
        The primal objective (with the minority class as +1).

    References
    ----------
    L. Luo, Y. Xie, Z. Zhang and W.-J. Li, "Support matrix machines", ICML 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from eemrepro.models import SMM
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(80, 6)); y = (X[:, 0] + X[:, 4] > 0).astype(int)
    >>> clf = SMM(C=10.0, tau=0.1).fit(X, y)
    >>> clf.coef_.shape, float(clf.score(X, y)) > 0.9
    ((2, 3), True)
    """

    # The grid parameter fit_path covers in one fit (used by the experiment runner).
    _path_param = "C"

    def __init__(self, C=1.0, tau=0.1, shape=None, max_iter=10000, tol=1e-5):
        self.C = C
        self.tau = tau
        self.shape = shape
        self.max_iter = max_iter
        self.tol = tol

    def _check_params(self):
        _check_number(self, "C", numbers.Real, low=0, low_open=True)
        _check_number(self, "tau", numbers.Real, low=0)
        _check_number(self, "max_iter", numbers.Integral, low=1)
        _check_number(self, "tol", numbers.Real, low=0, low_open=True)

    def _weights(self, X, t, sample_weight):
        """Per-sample weights s_i of the hinge (ESMM replaces them)."""
        if sample_weight is None:
            return np.ones(X.shape[0])
        s = np.asarray(sample_weight, dtype=np.float64)
        if s.shape != (X.shape[0],):
            raise ValueError(f"sample_weight has shape {s.shape}; expected ({X.shape[0]},), one weight per sample.")
        if not np.all(np.isfinite(s)) or np.any(s < 0):
            raise ValueError("sample_weight must be finite and non-negative.")
        if not s.any():
            raise ValueError("sample_weight is zero for every sample; nothing to fit.")
        return s

    def fit(self, X, y, sample_weight=None):
        """Fit W and b.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes, any labels; the minority one is the positive class.
        sample_weight : array-like of shape (n_samples,), default=None
            s_i, the hinge's per-sample weights (default 1).

        Returns
        -------
        self : object
        """
        self._check_params()
        X, t = self._validate_training_data(X, y)
        (state,) = self._solve_path(X, t, [self.C], sample_weight)
        self.__dict__.update(state)
        return self

    def fit_path(self, X, y, C, sample_weight=None):
        """One fitted model per value of C, each solve warm-started from the previous one.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        C : list of float
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        models : list of SMM
        """
        values = list(C)
        if not values:
            raise ValueError("C must be a non-empty list of values")
        proto = clone(self)
        for value in values:
            proto.set_params(C=value)._check_params()
        X, t = proto._validate_training_data(X, y)
        states = proto._solve_path(X, t, values, sample_weight)
        fitted = {k: v for k, v in proto.__dict__.items() if k.endswith("_") and not k.startswith("_")}
        models = []
        for value, state in zip(values, states, strict=True):
            model = clone(self).set_params(C=value)
            model.__dict__.update(fitted)
            model.__dict__.update(state)
            models.append(model)
        return models

    def _solve_path(self, X, t, Cs, sample_weight):
        shape = _matrix_shape(X.shape[1], self.shape)
        s = self._weights(X, t, sample_weight)
        # Solve from the smallest C up (the hinge's multipliers grow with C), warm-started.
        order = np.argsort(Cs, kind="stable")
        states, warm = [None] * len(Cs), None
        for i in order:
            c = float(Cs[i]) * s
            W, b, n_iter, gap, converged, warm = _smm_admm(X, t, c, float(self.tau), shape,
                                                           self.max_iter, self.tol, warm)
            if not converged:
                warnings.warn(
                    f"{type(self).__name__} (C={Cs[i]!r}, tau={self.tau!r}) stopped after max_iter="
                    f"{self.max_iter} ADMM iterations with a relative duality gap of {gap:.2e} "
                    f"> tol={self.tol!r}; raise max_iter.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            # The solver's +1 is the minority class; scikit-learn's scores favour classes_[1].
            sign = 1.0 if self._pos_is_second else -1.0
            states[i] = {"coef_": sign * W, "intercept_": sign * float(b), "shape_": shape,
                         "n_iter_": n_iter, "duality_gap_": float(gap),
                         "objective_": float(_smm_objective(W, b, X, t, c, self.tau))}
        return states

    def decision_function(self, X):
        """tr(coef_^T A) + intercept_, positive for ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        X = self._validate_prediction_data(X)
        return X @ self.coef_.ravel() + self.intercept_


class ESMM(SMM):
    """Entropy-based SMM (Zhu 2017): SMM with entropy-based fuzzy memberships as weights.

    The memberships come from ``entropy_fuzzy_membership`` on the training data
    (minority points 1, majority points in [1 - alpha (n_bins - 1), 1] by their
    neighbourhood's class entropy); a ``sample_weight`` given to ``fit``
    multiplies them.

    Parameters
    ----------
    C : float, default=1.0
    tau : float, default=0.1
    n_neighbors : int, default=10
        k of the memberships' neighbourhoods.
    n_bins : int, default=10
    alpha : float, default=0.05
    membership_order : {"text", "literal"}, default="text"
        See ``entropy_fuzzy_membership`` (``order``).
    shape : (int, int) or None, default=None
    max_iter : int, default=10000
    tol : float, default=1e-5

    Attributes
    ----------
    memberships_ : ndarray of shape (n_samples,)
        The training points' memberships.
    classes_, pos_label_, coef_, intercept_, shape_, n_iter_, duality_gap_, objective_
        As in ``SMM``.

    References
    ----------
    C. Zhu, "Entropy-based support matrix machine", 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from eemrepro.models import ESMM
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(80, 6)); y = (X[:, 0] + X[:, 4] > 1).astype(int)
    >>> clf = ESMM(C=10.0, n_neighbors=5).fit(X, y)
    >>> float(clf.memberships_.min()) >= 0.55
    True
    """

    def __init__(self, C=1.0, tau=0.1, n_neighbors=10, n_bins=10, alpha=0.05,
                 membership_order="text", shape=None, max_iter=10000, tol=1e-5):
        super().__init__(C=C, tau=tau, shape=shape, max_iter=max_iter, tol=tol)
        self.n_neighbors = n_neighbors
        self.n_bins = n_bins
        self.alpha = alpha
        self.membership_order = membership_order

    def _weights(self, X, t, sample_weight):
        s = super()._weights(X, t, sample_weight)
        self.memberships_ = entropy_fuzzy_membership(X, t, self.n_neighbors, n_bins=self.n_bins,
                                                     alpha=self.alpha, order=self.membership_order)
        return s * self.memberships_
