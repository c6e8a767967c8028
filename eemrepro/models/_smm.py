"""Support matrix machine (Luo, Xie, Zhang & Li 2015) and entropy-based SMM (Zhu 2017).

SMM solves, for the points A_i reshaped into r x c matrices and weights s_i,

    min_{W, b}  1/2 tr(W^T W) + tau ||W||_* + C sum_i s_i [1 - y_i (tr(W^T A_i) + b)]_+

with an interior-point method (Clarabel) on the problem's conic form, certified by a
relative duality gap (SPEC section 6 chose ADMM; REPRODUCTION.md has the timings that
replaced it). ``solver="admm"`` runs Luo et al.'s ADMM instead, to its iteration cap (the
ESMM paper's maxIter = 500), a reading of what the paper ran (SPEC section 8). ESMM is SMM with
the entropy-based fuzzy memberships of ``entropy_fuzzy_membership`` as the weights.
"""

import functools
import numbers
import warnings

import clarabel
import numpy as np
import scipy.sparse
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from ._base import _BinaryClassifierMixin, _check_number, _check_sample_weight, _PathMixin
from ._fuzzy import _EntropyMembershipMixin

__all__ = ["SMM", "ESMM"]

# Along a C path, the points whose margin at the previous solution is within _BAND of 1 are
# the working set: measured on n = 500, 3 x 3, C = 0.1 .. 1000, 0.1 needs one round per C
# (0.05: two rounds at C = 1) and 0.5 keeps 180 of the 500 points (twice the time); on four
# KEEL sets (ESMM paths) 0.05-0.3 are within noise of each other.
_BAND = 0.1


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
    """The primal objective at (W, b); F holds the vectorised points row-major.

    ``b`` may be a sequence of intercepts: then one value each (W's terms computed once).
    """
    w = W.ravel()
    scores = F @ w
    penalty = 0.5 * w @ w + tau * np.linalg.svd(W, compute_uv=False).sum()
    values = [penalty + c @ np.maximum(0.0, 1.0 - t * (scores + v)) for v in np.atleast_1d(b)]
    return values[0] if np.ndim(b) == 0 else values


def _smm_dual(alpha, Ft, t, tau, shape):
    """Dual objective sum(alpha) - 1/2 ||SVT_tau(sum_i alpha_i t_i A_i)||^2 after making alpha feasible.

    ``alpha`` is clipped into its box by the caller; the equality sum_i alpha_i t_i = 0 is
    restored by shrinking the heavier class's multipliers, which keeps them in the box. Any
    such alpha gives a lower bound on the primal optimum (weak duality), which is what the
    stopping rule needs.
    """
    total, excess = alpha.sum(), t @ alpha  # excess: the positives' sum minus the negatives'
    pos, neg = 0.5 * (total + excess), 0.5 * (total - excess)
    if pos > neg:
        alpha = alpha * np.where(t > 0, neg / pos, 1.0)
    elif neg > 0:
        alpha = alpha * np.where(t < 0, pos / neg, 1.0)
    W = _svt((Ft.T @ alpha).reshape(shape), tau)
    return alpha.sum() - 0.5 * np.sum(W * W), W


@functools.lru_cache(maxsize=64)
def _cone_columns(d, shape):
    """The nuclear norm's cone in Clarabel's form: ||W||_* <= (tr P + tr Q) / 2 with [[P, W], [W^T, Q]] PSD.

    In the cone's rows (s = -A x, s in the cone) every variable appears once: returns, for
    w_0 .. w_{d-1} and then for the cone's own variables (P's and Q's entries), that row
    and value, the number of rows, the own variables' objective coefficients per unit tau,
    and the cone. One row (r = 1): ||w||_2 <= u, a second-order cone (smaller than the
    (1 + d) x (1 + d) PSD one). Cached: along a path every solve shares it.
    """
    r, c = shape
    if r == 1:
        rows = np.arange(1, d + 1), np.zeros(1, dtype=np.intp)
        values = -np.ones(d), -np.ones(1)
        return rows, values, d + 1, np.ones(1), clarabel.SecondOrderConeT(d + 1)
    m = r + c
    # Clarabel's PSDTriangleCone: the upper triangle column by column, off-diagonals times sqrt 2.
    ii = np.concatenate([np.arange(j + 1) for j in range(m)])
    jj = np.concatenate([np.full(j + 1, j) for j in range(m)])
    pos = np.arange(ii.size)
    scale = -np.where(ii == jj, 1.0, np.sqrt(2.0))
    in_w = (ii < r) & (jj >= r)
    own = np.flatnonzero(((ii < r) & (jj < r)) | ((ii >= r) & (jj >= r)))  # P's entries, then Q's
    w_rows = np.empty(d, dtype=np.intp)
    w_rows[ii[in_w] * c + (jj[in_w] - r)] = pos[in_w]  # W[i, j] is w[i c + j]
    rows = w_rows, pos[own]
    values = np.full(d, -np.sqrt(2.0)), scale[own]
    diagonal = (ii[own] == jj[own]) * 0.5
    return rows, values, ii.size, diagonal, clarabel.PSDTriangleConeT(m)


@functools.lru_cache(maxsize=256)
def _conic_layout(k, d, shape):
    """What of Clarabel's problem depends on the working set's size k only (cached along a path).

    Returns A's row indices and column pointers and its shape, P, the right-hand side and
    the cones; ``_smm_conic`` fills in A's values and q. The arrays are read-only: Clarabel
    copies what it is given.
    """
    (w_rows, own_rows), _, n_cone_rows, _, cone = _cone_columns(d, shape)
    n_own = own_rows.size
    n_vars = d + 1 + k + n_own
    # The constraint matrix column by column (CSC): w_j has the k hinge rows and its cone
    # row, b the k hinge rows, each slack its two rows, each cone variable its cone row.
    slack_rows = np.arange(k)
    indices = np.concatenate([
        np.c_[np.tile(slack_rows, (d, 1)), 2 * k + w_rows].ravel(), slack_rows,
        np.c_[slack_rows, k + slack_rows].ravel(), 2 * k + own_rows,
    ])
    indptr = np.concatenate([
        np.arange(d + 1) * (k + 1), d * (k + 1) + k + 2 * np.arange(k + 1),
        d * (k + 1) + 3 * k + np.arange(1, n_own + 1),
    ])
    P = scipy.sparse.csc_matrix(
        (np.ones(d), np.arange(d), np.r_[np.arange(d + 1), np.full(n_vars - d, d)]), shape=(n_vars, n_vars)
    )
    rhs = np.concatenate([-np.ones(k), np.zeros(k + n_cone_rows)])
    for array in (indices, indptr, rhs, P.data, P.indices, P.indptr):
        array.setflags(write=False)
    return indices, indptr, (2 * k + n_cone_rows, n_vars), P, rhs, (clarabel.NonnegativeConeT(2 * k), cone)


def _smm_conic(X1, c, tau, shape, work, lower, settings):
    """Clarabel on the points ``work``; the points ``lower`` (margin < 1) enter as their linear loss.

    X1 holds t_i (x_i, 1), so the margins are X1 @ (w, b). Variables: w, b, the slacks xi of
    the working points and the cone's variables. Constraint rows 0..k-1: 1 - margin_i <= xi_i;
    rows k..2k-1: 0 <= xi_i; then the cone. Returns (w, b, the working points'
    multipliers, iterations, status).
    """
    d = X1.shape[1] - 1
    k = work.size
    _, (w_values, own_values), _, diagonal, _ = _cone_columns(d, shape)
    indices, indptr, A_shape, P, rhs, cones = _conic_layout(k, d, shape)
    # A's values in the layout's order: w_j's k hinge entries then its cone entry, b's k
    # hinge entries, the slacks' -1s, the cone variables' entries.
    data = np.empty(indices.size)
    w_block = data[: d * (k + 1)].reshape(d, k + 1)
    hinge = X1[work].T
    np.negative(hinge[:d], out=w_block[:, :k])
    w_block[:, k] = w_values
    start = d * (k + 1)
    np.negative(hinge[d], out=data[start:start + k])
    data[start + k:start + 3 * k] = -1.0
    data[start + 3 * k:] = own_values
    A = scipy.sparse.csc_matrix((data, indices, indptr), shape=A_shape)
    q = np.concatenate([-(c[lower] @ X1[lower]), c[work], tau * diagonal])
    solution = clarabel.DefaultSolver(P, q, A, rhs, list(cones), settings).solve()
    x = np.asarray(solution.x)
    return x[:d], x[d], np.asarray(solution.z)[:k], solution.iterations, str(solution.status)


# A cold solve starts from liblinear's linear SVM (tau = 0) when its dual coordinate descent,
# stopped at tol 0.1 (a start needs no more), converges within _SEED_EPOCHS epochs: at
# C = 0.1 it takes 15-33 epochs on the benchmark's n = 200-2,000 (3 x 3) and 4-13 on nine
# KEEL sets, then the solve takes one working-set round (2.6 instead of 6.5 ms on n = 500);
# at large C liblinear needs hundreds of epochs and the cap costs about 1-2 ms.
_SEED_EPOCHS = 50


def _linear_svm_start(F, t, c):
    """(w, b) of the weighted linear SVM by liblinear, b the exact best intercept for w; None if not converged.

    liblinear penalises its intercept, so b is recomputed. None also when liblinear refuses
    the weights (e.g. one class weighted 0): the caller then starts cold.
    """
    svm = LinearSVC(C=1.0, loss="hinge", dual=True, tol=0.1, max_iter=_SEED_EPOCHS, random_state=0)
    try:
        # The data and weights were validated by the caller: scikit-learn's checks skipped
        # (about a sixth of this fit on the benchmark's n = 500).
        with warnings.catch_warnings(), sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
            warnings.simplefilter("ignore", ConvergenceWarning)
            svm.fit(F, t, sample_weight=c)
    except ValueError:
        return None
    if svm.n_iter_ >= _SEED_EPOCHS:
        return None
    w = svm.coef_.ravel()
    return w, _best_intercept(F @ w, t, c)


def _smm_admm(F, t, c, tau, shape, rho=1.0, max_iter=500, tol=1e-4):
    """Luo et al.'s ADMM for SMM; return (W, b, iterations, converged, objective).

    The split W = S (the nuclear norm on S, multiplier Lam, penalty ``rho``), from
    W = S = Lam = 0:

    - (W, b): min 1/2 ||W||^2 - <Lam, W> + rho/2 ||W - S||^2 + sum_i c_i hinge_i, by its
      dual, a box QP in alpha (0 <= alpha_i <= c_i, sum_i alpha_i t_i = 0), solved by
      Clarabel with u = sum_i alpha_i t_i a_i as extra variables (the Gram matrix is never
      formed); W = (Lam + rho S + u) / (1 + rho);
    - S = SVT_{tau / rho}(W - Lam / rho);  Lam += rho (S - W).

    It stops after ``max_iter`` rounds, or earlier when the primal residual ||W - S|| and
    the dual one rho ||S - S_prev|| are at most ``tol`` relative to ||W|| and ||Lam||
    (Boyd et al.'s rule). The model is the last W (the hinge's variable) with its exact
    best intercept; unconverged, W is not S and need not be low-rank or zero.
    """
    n, d = F.shape
    Yf = F * t[:, None]  # row i: t_i a_i
    eye_n, eye_d = scipy.sparse.identity(n, format="csc"), scipy.sparse.identity(d, format="csc")
    P = scipy.sparse.block_diag([scipy.sparse.csc_matrix((n, n)), eye_d / (1.0 + rho)], format="csc")
    A = scipy.sparse.vstack([
        scipy.sparse.hstack([-scipy.sparse.csc_matrix(Yf.T), eye_d]),  # u - sum_i alpha_i t_i a_i = 0
        scipy.sparse.hstack([scipy.sparse.csc_matrix(t[None, :]), scipy.sparse.csc_matrix((1, d))]),  # t'alpha = 0
        scipy.sparse.hstack([-eye_n, scipy.sparse.csc_matrix((n, d))]),  # alpha >= 0
        scipy.sparse.hstack([eye_n, scipy.sparse.csc_matrix((n, d))]),  # alpha <= c
    ], format="csc")
    rhs = np.concatenate([np.zeros(d + 1 + n), c])
    cones = [clarabel.ZeroConeT(d + 1), clarabel.NonnegativeConeT(2 * n)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    W, S, Lam = np.zeros(d), np.zeros(d), np.zeros(d)
    q = np.concatenate([-np.ones(n), np.zeros(d)])
    solver = clarabel.DefaultSolver(P, q, A, rhs, cones, settings)  # set up once: each round changes only q
    converged, rounds = False, 0
    while rounds < int(max_iter):
        rounds += 1
        m = Lam + rho * S
        q[:n] = Yf @ m / (1.0 + rho) - 1.0
        solver.update(q=q)
        solution = solver.solve()
        u = np.asarray(solution.x)[n:]
        W = (m + u) / (1.0 + rho)
        S_prev = S
        S = _svt((W - Lam / rho).reshape(shape), tau / rho).ravel()
        Lam = Lam + rho * (S - W)
        primal, dual = np.linalg.norm(W - S), rho * np.linalg.norm(S - S_prev)
        if primal <= tol * max(1.0, np.linalg.norm(W)) and dual <= tol * max(1.0, np.linalg.norm(Lam)):
            converged = True
            break
    f = F @ W
    b = _best_intercept(f, t, c)
    return W.reshape(shape), b, rounds, converged, _smm_objective(W.reshape(shape), b, F, t, c, tau)


def _conic_settings(c, max_iter, tol):
    """Clarabel's settings for ``_smm_solve``'s reduced problems, and the floor its relative gap is measured by."""
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.max_iter = int(max_iter)
    settings.iterative_refinement_enable = False  # on again if a solve is not certified (``_smm_solve``)
    # The gap is relative to the optimum, or to a thousandth of one average point's loss at
    # margin 0 when the optimum is about 0 (one class weighted 0, where the interior point's
    # W ~ 1e-8 is what is left); Clarabel stops 100x inside it.
    floor = max(1e-3 * c.mean(), 1e-300)
    settings.tol_gap_rel, settings.tol_gap_abs = 1e-2 * tol, 1e-2 * tol * floor
    return settings, floor


def _first_working_set(X1, t, start):
    """(working points, lower points) of the first reduced problem: every point without a ``start`` (w, b); with
    one, the points whose margin there lies within ``_BAND`` of 1, and those below it as lower points."""
    n, d = X1.shape[0], X1.shape[1] - 1
    if start is None:
        return np.arange(n), np.zeros(0, dtype=np.intp)
    margins = X1[:, :d] @ start[0] + t * start[1]
    distance = np.abs(margins - 1.0)
    near = distance <= _BAND
    # At least d + 2 points (the ones nearest the margin), or b and W are not pinned down.
    near[np.argsort(distance)[: d + 2]] = True
    return np.flatnonzero(near), np.flatnonzero(~near & (margins < 1.0))


def _wrong_side(X1, t, w, b, inside, lower):
    """The points on the wrong side of (w, b)'s margin for their role: a lower point above it, or a point neither
    working (``inside``) nor lower below it."""
    n, d = X1.shape[0], X1.shape[1] - 1
    margins = X1[:, :d] @ w + t * b
    is_lower = np.zeros(n, dtype=bool)
    is_lower[lower] = True
    return (is_lower & (margins > 1.0)) | (~inside & ~is_lower & (margins < 1.0))


def _smm_solve(F, t, c, tau, shape, max_iter=200, tol=1e-5, start=None):
    """Solve SMM exactly; return (W, b, iterations, relative duality gap, converged, objective).

    An interior-point method (Clarabel) solves the conic form of the problem. With a
    ``start`` (w, b) (the previous C's solution along a path), only the points whose
    margin there lies within ``_BAND`` of 1 are kept as constraints; those below enter the
    objective as their (linear) loss and those above are dropped. Without one, liblinear's
    linear SVM is the start when it converges quickly (``_linear_svm_start``), else every
    point is a constraint. The result is certified
    on all points: the primal value at (W, b) (with the exact best intercept for W) against
    the dual value of the multipliers (the working points' from Clarabel, c_i below, 0
    above); points on the wrong side of the margin join the working set until the relative
    gap is at most ``tol``; the last resort is all points.
    """
    n, d = F.shape
    X1 = np.empty((n, d + 1))
    np.multiply(F, t[:, None], out=X1[:, :d])
    X1[:, d] = t
    settings, floor = _conic_settings(c, max_iter, tol)
    if start is None:
        start = _linear_svm_start(F, t, c)
    work, lower = _first_working_set(X1, t, start)
    # W = 0 with its best intercept is the first candidate. Where it is the optimum (tau large
    # against C, or the positives' mean inside the negatives' reduced hull: glass2 at every C
    # and tau), the interior point ends at W ~ 1e-8 along its central path: a certified
    # solution whose scores still rank the points (an AUC of 0.7-0.9 on glass2) by the
    # solver's path rather than by the model, and that ranking moved with any change to the
    # solver. A point replaces the best one only when lower by more than
    # rounding (1e-12 relative), so an exact W = 0 optimum is returned as W = 0.
    zero = np.zeros(shape)
    b_zero = _best_intercept(np.zeros(n), t, c)
    iterations, best, dual = 0, (_smm_objective(zero, b_zero, F, t, c, tau), zero, b_zero), -np.inf
    gap = np.inf
    while True:
        w, b, alpha_work, used, status = _smm_conic(X1, c, tau, shape, work, lower, settings)
        iterations += used
        solved = status in ("Solved", "AlmostSolved")
        # Any point certifies itself: also the last iterate of a solve that ran out of iterations.
        if np.all(np.isfinite(w)) and np.isfinite(b) and np.all(np.isfinite(alpha_work)):
            alpha = np.zeros(n)
            alpha[lower] = c[lower]
            alpha[work] = np.clip(alpha_work, 0.0, c[work])
            dual = max(dual, _smm_dual(alpha, X1[:, :d], t, tau, shape)[0])  # any dual point bounds below
            W = w.reshape(shape)
            intercepts = (b, _best_intercept(F @ w, t, c))
            for b_try, value in zip(intercepts, _smm_objective(W, intercepts, F, t, c, tau), strict=True):
                if value < best[0] - 1e-12 * abs(best[0]):
                    best = (value, W, b_try)
            gap = (best[0] - dual) / max(abs(best[0]), floor)
            if gap <= tol:
                return best[1], best[2], iterations, gap, True, best[0]
        exhausted = not solved and status == "MaxIterations"
        inside = np.zeros(n, dtype=bool)
        inside[work] = True
        wrong = _wrong_side(X1, t, w, b, inside, lower) if solved else np.zeros(n, dtype=bool)
        if not wrong.any() and not exhausted and not settings.iterative_refinement_enable:
            # Not certified, yet no point says the working set is wrong (or the solve failed
            # numerically): the solve was inexact. The same points again, with Clarabel's
            # iterative refinement (off until now: a quarter of its time, and never needed on
            # the benchmark or on the KEEL paths measured in benchmarks/RESULTS.md).
            settings.iterative_refinement_enable = True
            continue
        if work.size == n or exhausted:
            return best[1], best[2], iterations, gap, False, best[0]
        # Points on the wrong side of the margin join the working set (all of them when the
        # reduced problem failed, e.g. unbounded in b without its lower points' kinks).
        inside |= wrong if wrong.any() else True
        work = np.flatnonzero(inside)
        lower = np.setdiff1d(lower, work, assume_unique=True)


class SMM(_PathMixin, _BinaryClassifierMixin, ClassifierMixin, BaseEstimator):
    """Support matrix machine: hinge loss, Frobenius and nuclear-norm penalties on W.

    Each d-dimensional point is read row-major as an r x c matrix A (``shape``, by
    default the most square r x c with r <= c; a prime d gives 1 x d, where
    ||W||_* = ||w||_2 and SMM is a linear SVM with an extra l2 term). The score is
    tr(W^T A) + b. Solved by an interior-point method (Clarabel) to a certified relative
    duality gap ``tol``; along a C path (``fit_path``) each solve keeps only the points near
    the previous solution's margin as constraints and certifies the result on all points
    (the first solve starts from liblinear's linear SVM when that converges quickly).

    Parameters
    ----------
    C : float, default=1.0
        Weight of the hinge loss.
    tau : float, default=0.1
        Weight of the nuclear norm; 0 gives a linear SVM on the vectorised data.
    shape : (int, int) or None, default=None
        (r, c) with r c = n_features; None: the most square one.
    max_iter : int, default=200
        Interior-point iterations per solve; a ``ConvergenceWarning`` when the gap is not
        certified within them.
    tol : float, default=1e-5
        Stop when (primal - dual) / primal <= tol, the primal's relative distance
        from the optimum being at most that.
    solver : {"exact", "admm"}, default="exact"
        ``"admm"``: Luo et al.'s ADMM (``_smm_admm``), each C from zero, stopped after
        ``admm_iter`` rounds or on Boyd et al.'s residual rule at ``tol``; a reading of
        the ESMM paper's iterative solver with its maxIter (SPEC section 8), whose
        unconverged W need not be the optimum (``converged_`` says).
    admm_iter : int, default=500
        The ADMM's iteration cap (the ESMM paper's maxIter).
    rho : float, default=1.0
        The ADMM's penalty.

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
        Interior-point iterations (summed over the working-set rounds).
    duality_gap_ : float
        Relative duality gap at the returned point (NaN with the ADMM).
    converged_ : bool
        Whether the solver met its stopping rule (the ADMM within ``admm_iter``).
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

    def __init__(self, C=1.0, tau=0.1, shape=None, max_iter=200, tol=1e-5, solver="exact", admm_iter=500,
                 rho=1.0):
        self.C = C
        self.tau = tau
        self.shape = shape
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.admm_iter = admm_iter
        self.rho = rho

    def _check_params(self):
        _check_number(self, "C", numbers.Real, low=0, low_open=True)
        _check_number(self, "tau", numbers.Real, low=0)
        _check_number(self, "max_iter", numbers.Integral, low=1)
        _check_number(self, "tol", numbers.Real, low=0, low_open=True)
        _check_number(self, "admm_iter", numbers.Integral, low=1)
        _check_number(self, "rho", numbers.Real, low=0, low_open=True)
        if self.solver not in ("exact", "admm"):
            raise ValueError(f"{type(self).__name__}: parameter 'solver' must be 'exact' or 'admm', "
                             f"got {self.solver!r}.")

    def _weights(self, X, t, sample_weight):
        """Per-sample weights s_i of the hinge (ESMM replaces them)."""
        if sample_weight is None:
            return np.ones(X.shape[0])
        return _check_sample_weight(sample_weight, X.shape[0])

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
        (state,) = self._fit_states(X, t, [self.C], sample_weight)
        self.__dict__.update(state)
        return self

    def fit_path(self, X, y, C, sample_weight=None):
        """One fitted model per value of C, each solve started from the previous C's solution.

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
        return self._fit_path(X, y, C, sample_weight=sample_weight)

    def _fit_states(self, X, t, Cs, sample_weight=None):
        shape = _matrix_shape(X.shape[1], self.shape)
        s = self._weights(X, t, sample_weight)
        # Solve from the smallest C up, each from the previous solution's margins.
        order = np.argsort(Cs, kind="stable")
        states, start = [None] * len(Cs), None
        for i in order:
            c = float(Cs[i]) * s
            if self.solver == "admm":  # each C from zero, as a separate run of the paper's method would
                W, b, n_iter, converged, objective = _smm_admm(X, t, c, float(self.tau), shape, float(self.rho),
                                                               self.admm_iter, self.tol)
                gap = np.nan
                if not converged:
                    warnings.warn(f"{type(self).__name__} (C={Cs[i]!r}, tau={self.tau!r}): the ADMM stopped at "
                                  f"admm_iter={self.admm_iter} before its residuals reached tol={self.tol!r}.",
                                  ConvergenceWarning, stacklevel=3)
            else:
                W, b, n_iter, gap, converged, objective = _smm_solve(X, t, c, float(self.tau), shape,
                                                                     self.max_iter, self.tol, start)
                start = (W.ravel(), b)
            if not converged and self.solver == "exact":
                warnings.warn(
                    f"{type(self).__name__} (C={Cs[i]!r}, tau={self.tau!r}) stopped after "
                    f"{n_iter} interior-point iterations (max_iter={self.max_iter}) with a relative "
                    f"duality gap of {gap:.2e} > tol={self.tol!r}; raise max_iter.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            # The solver's +1 is the minority class; scikit-learn's scores favour classes_[1].
            sign = 1.0 if self._pos_is_second else -1.0
            states[i] = {"coef_": sign * W, "intercept_": sign * float(b), "shape_": shape,
                         "n_iter_": n_iter, "duality_gap_": float(gap), "converged_": bool(converged),
                         "objective_": float(objective)}
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


class ESMM(_EntropyMembershipMixin, SMM):
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
    max_iter : int, default=200
    tol : float, default=1e-5
    solver : {"exact", "admm"}, default="exact"
    admm_iter : int, default=500
    rho : float, default=1.0
        As in ``SMM``.

    Attributes
    ----------
    memberships_ : ndarray of shape (n_samples,)
        The training points' memberships.
    classes_, pos_label_, coef_, intercept_, shape_, n_iter_, duality_gap_, converged_, objective_
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
                 membership_order="text", shape=None, max_iter=200, tol=1e-5, solver="exact", admm_iter=500,
                 rho=1.0):
        super().__init__(C=C, tau=tau, shape=shape, max_iter=max_iter, tol=tol, solver=solver,
                         admm_iter=admm_iter, rho=rho)
        self.n_neighbors = n_neighbors
        self.n_bins = n_bins
        self.alpha = alpha
        self.membership_order = membership_order

    def _weights(self, X, t, sample_weight):
        return self._memberships(X, t, super()._weights(X, t, sample_weight))
