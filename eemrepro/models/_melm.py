"""Maximum Entropy Linear Manifold (Czarnecki, Jozefowicz & Tabor 2015; SPEC section 5).

MELM finds V in R^(d x k) maximising

    MELM(V) = D_CS(V) - ||V^T V - I||_F^2,
    D_CS(V) = log ip(A, A) + log ip(B, B) - 2 log ip(A, B),

the Cauchy-Schwarz divergence of the two classes' Gaussian kernel density
estimates after projecting onto V. The information potentials have a closed
form (section 4 of the paper):

    ip(A, B) = 1 / (|A| |B|) sum_{a, b} N(V^T (a - b); 0, V^T Sigma_AB V),
    Sigma_AB = gamma^2 (4 / (k + 2))^(2 / (k + 4)) (|A|^(-2/(k+4)) cov_A + |B|^(-2/(k+4)) cov_B).

``_log_ip`` evaluates log ip and its gradient without forming any d x d matrix
per pair: with u = V^T w for a pair difference w, S = (V^T Sigma V)^-1 and
psi_w = exp(-u^T S u / 2), the paper's gradient sums to

    grad log ip = -Sigma V S - (G S - Sigma V S (V^T G) S) / sum_w psi_w,
    G = sum_w psi_w w u^T = A^T (diag(r) P_A - Psi P_B) + B^T (diag(c) P_B - Psi^T P_A),

where P = X V are the projected points and r, c the row and column sums of
the pair matrix Psi, which is built one block of rows of A at a time (memory
O(|B| chunk), not O(|A| |B| d)). The exponents are shifted by a running
maximum, so the log stays finite when every cross pair is far apart.
"""

import numbers

import numpy as np
import scipy.linalg
import scipy.optimize
from sklearn.covariance import empirical_covariance, ledoit_wolf
from sklearn.utils import check_random_state

from ._base import _check_choice, _check_number
from ._projections import _LinearProjection

__all__ = ["MELM"]

_LOG_2PI = np.log(2.0 * np.pi)

#: Rows of A per block of the pair matrix (block size chunk x |B|).
_CHUNK = 256


class _Degenerate(ArithmeticError):
    """V^T Sigma V is not positive definite (V lost rank): no density in this projection."""


def _kde_covariances(classes, gamma, k, covariance):
    """The paper's KDE covariances: per class H_c = gamma^2 (4/(k+2))^(2/(k+4)) |c|^(-2/(k+4)) cov_c.

    Sigma_AB = H_A + H_B (Sigma_AA = 2 H_A); returns the list of H_c (d x d).
    """
    estimate = ledoit_wolf if covariance == "ledoit-wolf" else (lambda X: (empirical_covariance(X), None))
    factor = gamma**2 * (4.0 / (k + 2)) ** (2.0 / (k + 4))
    return [factor * X.shape[0] ** (-2.0 / (k + 4)) * estimate(X)[0] for X in classes]


def _log_ip(V, A, B, sigma, chunk=_CHUNK, same=False):
    """log ip(A, B) in the projection onto V, and its gradient with respect to V.

    ``same``: B is A (the pair matrix is symmetric, so its column sums are its
    row sums and G = 2 A^T (diag(r) P_A - Psi P_A)).
    """
    k = V.shape[1]
    sigma_v = sigma @ V
    try:
        low = scipy.linalg.cholesky(V.T @ sigma_v, lower=True)
    except np.linalg.LinAlgError:
        raise _Degenerate from None
    S = scipy.linalg.cho_solve((low, True), np.eye(k))
    P_A = A @ V
    P_B = P_A if same else B @ V
    # Whitened projections, |z_a - z_b|^2 = (p_a - p_b)^T S (p_a - p_b); the exponent
    # -|z_a - z_b|^2 / 2 of a whole block is one product of [z_a, -|z_a|^2/2, 1] and
    # [z_b, 1, -|z_b|^2/2], and the row (and column) sums ride along as a column of ones.
    Z_A = scipy.linalg.solve_triangular(low, P_A.T, lower=True).T
    Z_B = Z_A if same else scipy.linalg.solve_triangular(low, P_B.T, lower=True).T
    ones_A, ones_B = np.ones((A.shape[0], 1)), np.ones((B.shape[0], 1))
    left = np.hstack([Z_A, -0.5 * np.einsum("ij,ij->i", Z_A, Z_A)[:, None], ones_A])
    right = np.hstack([Z_B, ones_B, -0.5 * np.einsum("ij,ij->i", Z_B, Z_B)[:, None]])
    PB1 = np.hstack([P_B, ones_B])
    PA1 = np.hstack([P_A, ones_A])
    shift = -np.inf  # running maximum of the exponent
    g_rows = np.zeros((A.shape[1], k))
    rows_total = 0.0
    cols = np.zeros((B.shape[0], k + 1))  # [Psi^T P_A, column sums]
    for start in range(0, A.shape[0], chunk):
        sl = slice(start, start + chunk)
        psi = left[sl] @ right.T
        top = psi.max()
        if top > shift:
            # Re-express what was summed under the old shift under the new, larger one.
            if np.isfinite(shift):
                scale = np.exp(shift - top)
                g_rows *= scale
                rows_total *= scale
                cols *= scale
            shift = top
        psi -= shift
        np.exp(psi, out=psi)
        pb = psi @ PB1  # [Psi P_B, row sums]
        rows = pb[:, k]
        rows_total += rows.sum()
        g_rows += A[sl].T @ (rows[:, None] * P_A[sl] - pb[:, :k])
        if not same:
            cols += psi.T @ PA1[sl]
    if same:
        G = 2.0 * g_rows
    else:
        G = g_rows + B.T @ (cols[:, k:] * P_B - cols[:, :k])
    logdet = 2.0 * np.log(np.diag(low)).sum()
    value = (-0.5 * k * _LOG_2PI - 0.5 * logdet - np.log(A.shape[0] * B.shape[0])
             + np.log(rows_total) + shift)
    sigma_v_s = sigma_v @ S
    grad = -sigma_v_s - (G @ S - sigma_v_s @ (V.T @ G) @ S) / rows_total
    return value, grad


def _dcs(V, classes, widths, chunk=_CHUNK):
    """D_CS(V) of the projected classes' KDEs and its gradient (``widths`` from ``_kde_covariances``).

    Two classes: the paper's log ip(A, A) + log ip(B, B) - 2 log ip(A, B). More
    classes (not in the paper): the sum of that over every pair of classes,
    (m - 1) sum_c log ip(c, c) - 2 sum_{a<b} log ip(a, b).
    """
    m = len(classes)
    value, grad = 0.0, np.zeros_like(V)
    for a in range(m):
        v, g = _log_ip(V, classes[a], classes[a], 2.0 * widths[a], chunk, same=True)
        value, grad = value + (m - 1) * v, grad + (m - 1) * g
        for b in range(a + 1, m):
            v, g = _log_ip(V, classes[a], classes[b], widths[a] + widths[b], chunk)
            value, grad = value - 2.0 * v, grad - 2.0 * g
    return value, grad


def _melm_objective(V, classes, widths, chunk=_CHUNK):
    """MELM(V) = D_CS(V) - ||V^T V - I||_F^2 (eq. 2) and its gradient."""
    dcs, grad = _dcs(V, classes, widths, chunk)
    gram = V.T @ V - np.eye(V.shape[1])
    return dcs - np.sum(gram**2), grad - 4.0 * V @ gram


def _maximise(V0, classes, widths, max_iter, tol):
    """L-BFGS-B from V0; returns (V, penalised objective, D_CS, iterations). -inf when V degenerates."""
    shape = V0.shape

    def negative(x):
        try:
            value, grad = _melm_objective(x.reshape(shape), classes, widths)
        except _Degenerate:
            return np.inf, np.zeros_like(x)
        return -value, -grad.ravel()

    res = scipy.optimize.minimize(negative, V0.ravel(), jac=True, method="L-BFGS-B",
                                  options={"maxiter": max_iter, "gtol": tol})
    V = res.x.reshape(shape)
    try:
        dcs, _ = _dcs(V, classes, widths)
    except _Degenerate:
        return V, -np.inf, -np.inf, res.nit
    return V, -res.fun, dcs, res.nit


def _starting_points(X, k, n_random, rng):
    """The first k principal components (as columns), then ``n_random`` N(0, 1) matrices."""
    centred = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    starts = [vt[:k].T.copy()]
    starts += [rng.standard_normal((X.shape[1], k)) for _ in range(n_random)]
    return starts


class MELM(_LinearProjection):
    """Maximum Entropy Linear Manifold: the k-D projection whose class KDEs diverge most.

    A supervised transformer (``fit`` needs y). It maximises the
    Cauchy-Schwarz divergence of the classes' Gaussian KDEs in the projection
    minus a penalty ``||V^T V - I||^2`` by L-BFGS-B with the analytic gradient
    from ``n_starts`` starting points (the first k principal components, then
    N(0, 1) matrices) and keeps the best penalised objective. ``transform``
    uses an orthonormal basis of span(V) (D_CS does not depend on the basis).
    With more than two classes (not in the paper) it maximises the sum of the
    pairwise divergences.

    Parameters
    ----------
    n_components : int, default=2
        k, the dimension of the projection (at most the number of features;
        k = d returns the identity basis, which every V of full rank spans).
    gamma : float, default=1.0
        Scale of Silverman's bandwidth (the KDE covariance is gamma^2 h^2 cov).
    n_starts : int, default=17
        Optimisation starts: the principal components and ``n_starts - 1``
        random ones (SPEC section 5: 17).
    covariance : {"ledoit-wolf", "empirical"}, default="ledoit-wolf"
        Class covariance estimator in the kernel width (the authors' code
        uses Ledoit-Wolf; the paper is silent).
    max_iter : int, default=500
        L-BFGS-B iterations per start.
    tol : float, default=1e-5
        L-BFGS-B's projected gradient tolerance.
    pca_start : bool, default=True
        Make the first start the principal components; False: every start is
        N(0, 1) (the paper's Figures 3 and 4 study random starts alone).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal rows spanning the best V.
    dcs_ : float
        D_CS of the training classes in that projection.
    start_dcs_ : ndarray of shape (n_starts,)
        D_CS reached from each start (the PCA start first when
        ``pca_start``; -inf where the optimisation degenerated).
    n_iter_ : int
        L-BFGS-B iterations of the winning start.
    constant_features_ : ndarray of int
        Features constant in the training data: MELM is fitted without them
        and their loadings in ``components_`` are 0.
    start_n_iter_ : ndarray of shape (n_starts,)
        L-BFGS-B iterations of each start.
    mean_ : ndarray of shape (n_features,)
    classes_ : ndarray of shape (n_classes,)

    References
    ----------
    W. M. Czarnecki, R. Jozefowicz and J. Tabor, "Maximum Entropy Linear
    Manifold for Learning Discriminative Low-dimensional Representation",
    ECML PKDD 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from eemrepro.models import MELM
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(size=(80, 4))
    >>> y = (X[:, 3] > 0.5).astype(int)
    >>> melm = MELM(n_starts=3, random_state=0).fit(X, y)
    >>> melm.transform(X).shape
    (80, 2)
    >>> bool(melm.dcs_ > 1.0)
    True
    """

    _min_class_size = 2

    def __init__(self, n_components=2, gamma=1.0, n_starts=17, covariance="ledoit-wolf", max_iter=500, tol=1e-5,
                 pca_start=True, random_state=None):
        self.n_components = n_components
        self.gamma = gamma
        self.n_starts = n_starts
        self.pca_start = pca_start
        self.covariance = covariance
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _check_params(self):
        super()._check_params()
        _check_number(self, "gamma", numbers.Real, low=0, low_open=True)
        _check_number(self, "n_starts", numbers.Integral, low=1)
        _check_number(self, "max_iter", numbers.Integral, low=1)
        _check_number(self, "tol", numbers.Real, low=0, low_open=True)
        _check_choice(self, "covariance", ("ledoit-wolf", "empirical"))
        _check_choice(self, "pca_start", (True, False))

    def _components(self, X, codes):
        # A feature constant in the training data projects every point to the same value:
        # it cannot separate the classes and its zero variance makes an empirical class
        # covariance singular. MELM is fitted on the other features and gives it a zero
        # loading (ionosphere's second feature is all zeros; the paper runs MELM on it).
        informative = np.ptp(X, axis=0) > 0
        self.constant_features_ = np.flatnonzero(~informative)
        if informative.sum() < self.n_components:
            raise ValueError(
                f"MELM: only {int(informative.sum())} feature(s) vary in the training data (constant: "
                f"{self.constant_features_.tolist()}), fewer than n_components={self.n_components}.")
        # D_CS is translation invariant; centring keeps the pair sums well conditioned.
        basis = np.zeros((X.shape[1], self.n_components))
        basis[informative] = self._optimise((X - self.mean_)[:, informative], codes)
        return basis

    def _optimise(self, X, codes):
        """An orthonormal basis (d x k) of the best V on centred, non-constant features."""
        classes = [X[codes == c] for c in range(self.classes_.shape[0])]
        k = self.n_components
        widths = _kde_covariances(classes, self.gamma, k, self.covariance)
        rng = check_random_state(self.random_state)
        if k == X.shape[1]:
            # k = d (fourclass in the paper): every full-rank V spans the whole space and
            # D_CS does not depend on the basis, so there is nothing to optimise.
            basis = np.eye(k)
            self.dcs_ = float(_dcs(basis, classes, widths)[0])
            self.start_dcs_, self.start_n_iter_, self.n_iter_ = np.array([self.dcs_]), np.array([0]), 0
            return basis
        best = None
        dcs_values, iterations = [], []
        starts = _starting_points(X, k, self.n_starts - 1, rng) if self.pca_start else \
            [rng.standard_normal((X.shape[1], k)) for _ in range(self.n_starts)]
        for V0 in starts:
            V, objective, dcs, nit = _maximise(V0, classes, widths, self.max_iter, self.tol)
            dcs_values.append(dcs)
            iterations.append(nit)
            if np.isfinite(objective) and (best is None or objective > best[1]):
                best = (V, objective, dcs, nit)
        if best is None:
            raise ValueError("MELM: every start degenerated (V^T Sigma V lost rank); the class covariances "
                             "are singular along every projection tried.")
        self.start_dcs_ = np.asarray(dcs_values)
        self.start_n_iter_ = np.asarray(iterations)
        self.n_iter_ = int(best[3])
        self.dcs_ = float(best[2])
        basis, _ = np.linalg.qr(best[0])
        return basis
