"""Multiclass LS-SVM ensemble with GCV model selection (Hwang 2016; SPEC section 4).

One-vs-all targets Y in {-1, +1}^(n x m) share one bordered system per member
(the hat matrix does not depend on Y, eq. 3.6), so the m columns cost one
solve. The training set is cut into M random disjoint subsets (stratified by
class by default), one LS-SVM is fitted per subset, and their outputs are
averaged (eq. 2.5, 3.8). ``LSSVMEnsembleGCV`` picks each member's (C, sigma^2)
by generalized cross-validation (eq. 3.5) or exact leave-one-out (eq. 3.4),
computed for every C from one eigendecomposition of K per sigma^2
(``_lssvm_hat_path``).
"""

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import _check_choice, _check_number
from ._features import _kernel_expansion, _rbf
from ._lssvm import _lssvm_cholesky, _lssvm_hat_path, _LSSVMEigenPath, _selection_criterion

__all__ = ["LSSVMEnsemble", "LSSVMEnsembleGCV"]

#: SPEC section 4's grids (the paper gives none).
DEFAULT_CS = tuple(10.0**k for k in range(-2, 7))
DEFAULT_SIGMA2S = tuple(10.0 ** (k / 2) for k in range(-4, 7))


def _n_members(n_samples, params):
    """M: ``n_subsets``, raised so that no member exceeds ``max_subset_size`` if set."""
    m = max(1, params.get("n_subsets", 1))
    if params.get("max_subset_size"):
        m = max(m, math.ceil(n_samples / params["max_subset_size"]))
    return m


def _class_weights(codes, n_classes):
    """w_i = |largest class| / |class of x_i| (the EEM paper's balance weights, SPEC section 1)."""
    counts = np.bincount(codes, minlength=n_classes)
    return counts.max() / counts[codes]


def _subset_indices(codes, n_classes, n_subsets, stratify, rng, name):
    """M disjoint index arrays of near-equal size covering every point, each holding every class."""
    counts = np.bincount(codes, minlength=n_classes)
    if n_subsets > codes.shape[0]:
        raise ValueError(f"{name}: n_subsets={n_subsets} is larger than the number of training samples "
                         f"({codes.shape[0]}).")
    member = np.empty(codes.shape[0], dtype=np.intp)
    if stratify:
        if n_subsets > counts.min():
            raise ValueError(
                f"{name}: n_subsets={n_subsets} is larger than the smallest class ({counts.min()} samples of "
                f"class index {int(counts.argmin())}): some member would miss that class. Use at most "
                f"{counts.min()} subsets.")
        offset = 0
        for c in range(n_classes):
            idx = rng.permutation(np.flatnonzero(codes == c))
            # Deal each class round-robin, continuing where the previous class stopped,
            # so member sizes differ by at most one.
            member[idx] = (offset + np.arange(idx.shape[0])) % n_subsets
            offset += idx.shape[0]
    else:
        member[rng.permutation(codes.shape[0])] = np.arange(codes.shape[0]) % n_subsets
    subsets = [np.flatnonzero(member == j) for j in range(n_subsets)]
    for j, idx in enumerate(subsets):
        missing = np.setdiff1d(np.arange(n_classes), codes[idx])
        if missing.size:
            raise ValueError(f"{name}: random subset {j} of {n_subsets} misses class index {int(missing[0])} "
                             "(stratify=False); use stratify=True or fewer subsets.")
    return subsets


def _merge_duplicates(X, Y, codes, w):
    """Identical rows of one class as one point weighted by their summed weights.

    Exact for the fit: their squared errors are equal, so the LS-SVM objective
    (and its solution) is the same. But GCV and leave-one-out then see each
    distinct point once: with copies kept, a pair of identical rows leaves a
    direction of K with eigenvalue 0, n - tr H >= 1 per pair however C and
    sigma^2 go, while the residuals vanish as sigma^2 -> 0 and C -> infinity,
    so GCV is drawn to that interpolating corner (and a left-out copy is
    predicted by its twin).
    """
    _, first, inverse = np.unique(np.column_stack([X, codes]), axis=0, return_index=True, return_inverse=True)
    if first.shape[0] == X.shape[0]:
        return X, Y, codes, w
    inverse = inverse.ravel()
    keep = np.sort(first)
    summed = np.bincount(inverse, weights=np.ones(X.shape[0]) if w is None else w)
    return X[keep], Y[keep], codes[keep], summed[inverse[keep]]


class _LSSVMEnsembleBase(ClassifierMixin, BaseEstimator):
    """Fit skeleton shared by the fixed and the GCV ensemble: targets, subsets, members, averaging."""

    def _check_common(self):
        _check_number(self, "n_subsets", numbers.Integral, low=1)
        if self.max_subset_size is not None:
            _check_number(self, "max_subset_size", numbers.Integral, low=2)
        _check_choice(self, "stratify", (True, False))
        if not isinstance(self.class_weight, dict):
            _check_choice(self, "class_weight", (None, "balanced"))
        _check_choice(self, "duplicates", ("keep", "merge"))

    def fit(self, X, y):
        """Fit one LS-SVM per random subset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Any number (>= 2) of classes.

        Returns
        -------
        self : object
        """
        self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        m = self.classes_.shape[0]
        name = type(self).__name__
        if m < 2:
            raise ValueError(f"{name} needs samples of at least 2 classes to train, but the data contains only "
                             f"one class: {self.classes_[0]!r}.")
        self.n_subsets_ = n_subsets = _n_members(X.shape[0], self.get_params())
        rng = check_random_state(self.random_state)
        subsets = _subset_indices(codes, m, n_subsets, self.stratify, rng, name)
        Y = np.where(codes[:, None] == np.arange(m)[None, :], 1.0, -1.0)
        per_class = None
        if isinstance(self.class_weight, dict):
            unknown = set(self.class_weight) - set(self.classes_.tolist())
            if unknown:
                raise ValueError(f"{name}: class_weight names classes {sorted(unknown)!r} that are not in the "
                                 f"training labels {self.classes_.tolist()!r}.")
            per_class = np.array([float(self.class_weight.get(c, 1.0)) for c in self.classes_.tolist()])
            if not np.all(per_class > 0):
                raise ValueError(f"{name}: class_weight values must be > 0, got {self.class_weight!r}.")
        parts = []
        for idx in subsets:
            w = None
            if self.class_weight == "balanced":
                w = _class_weights(codes[idx], m)
            elif per_class is not None:
                w = per_class[codes[idx]]
            part = (X[idx], Y[idx], codes[idx], w)
            parts.append(_merge_duplicates(*part) if self.duplicates == "merge" else part)
        self._fit_members(parts)
        return self

    def _scores(self, X):
        """The members' averaged Y_hat (n x m)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        total = np.zeros((X.shape[0], self.classes_.shape[0]))
        for sv, alpha, b, sigma2 in zip(self.support_vectors_, self.dual_coef_, self.intercept_, self.sigma2_,
                                        strict=True):
            total += _kernel_expansion(X, sv, alpha, b, 1.0 / sigma2)
        return total / len(self.support_vectors_)

    def decision_function(self, X):
        """The members' averaged one-vs-all outputs Y_hat (eq. 3.8).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
            Two classes give the score of ``classes_[1]`` (Y_hat_2 - Y_hat_1) / 2,
            which equals Y_hat_2 = -Y_hat_1 (the system is linear in Y).
        """
        scores = self._scores(X)
        if scores.shape[1] == 2:
            return 0.5 * (scores[:, 1] - scores[:, 0])
        return scores

    def predict(self, X):
        """argmax_k Y_hat_k(x) (SPEC section 4: the paper's sign rule wherever it decides).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def _set_members(self, solutions):
        """solutions: [(X_j, alpha_j, b_j, C_j, sigma2_j)] -> the fitted attributes."""
        self.support_vectors_ = [s[0] for s in solutions]
        self.dual_coef_ = [s[1] for s in solutions]
        self.intercept_ = [s[2] for s in solutions]
        self.C_ = np.array([s[3] for s in solutions], dtype=float)
        self.sigma2_ = np.array([s[4] for s in solutions], dtype=float)

    @staticmethod
    def _member_solution(X, Y, w, C, sigma2):
        """alpha, b of one member at a fixed (C, sigma^2): Cholesky, else the eigendecomposition."""
        solution = _lssvm_cholesky(_rbf(X, X, 1.0 / sigma2), Y, w, C)
        if solution is None:
            solution = _LSSVMEigenPath(_rbf(X, X, 1.0 / sigma2), Y, w).solve(C)
        return solution


_ENSEMBLE_PARAMS_DOC = """
    n_subsets : int, default=1
        M, the number of random disjoint training subsets (one LS-SVM each).
        1 is the plain multiclass LS-SVM.
    max_subset_size : int, optional
        If set, M = max(n_subsets, ceil(n_samples / max_subset_size)): enough
        members that none exceeds this size (a member's n x n kernel bounds
        the memory).
    stratify : bool, default=True
        Deal every class evenly over the subsets, so every member sees every
        class (SPEC section 4; the paper says only "randomly").
    class_weight : {None, "balanced"} or dict, default=None
        "balanced": inside each member D = diag(1 / (C w_i)) with
        w_i = |largest class| / |class of x_i| (the EEM paper's weighting,
        SPEC section 1; scikit-learn's "balanced" n / (k n_c) would rescale C).
        A dict {label: weight} sets w_i per class (1 for a class not named).
        None: D = I / C, the paper's unweighted LS-SVM.
    duplicates : {"keep", "merge"}, default="keep"
        "merge": identical rows of one class in a member become one point
        weighted by their number (the same fit; GCV and leave-one-out then
        count each distinct point once and are not drawn to interpolation by
        the copies). "keep": every row as given (the paper).
"""


class LSSVMEnsemble(_LSSVMEnsembleBase):
    __doc__ = """Multiclass LS-SVM ensemble at fixed (C, sigma^2) (Hwang 2016, eq. 2.5, 3.1, 3.8).

    Each member solves [[K + D, 1], [1^T, 0]] [A; b^T] = [Y; 0] for the one-vs-all
    target matrix Y in {-1, +1}^(n_j x m) of its subset, with the Gaussian kernel
    exp(-||x - y||^2 / sigma^2); the prediction averages the members' Y_hat and
    takes the argmax.

    Parameters
    ----------""" + _ENSEMBLE_PARAMS_DOC + """    C : float, default=1.0
    sigma2 : float, default=1.0
        Kernel width sigma^2.
    random_state : int, RandomState instance or None, default=None
        Draws the subsets.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_subsets_ : int
    support_vectors_, dual_coef_, intercept_ : lists of length n_subsets_
        Each member's training points, alpha (n_j, n_classes) and b (n_classes,).
    C_, sigma2_ : ndarray of shape (n_subsets_,)

    References
    ----------
    C. Hwang, "Multiclass LS-SVM ensemble for large data", Journal of the Korean
    Data & Information Science Society 26 (2015/2016).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from eemrepro.models import LSSVMEnsemble
    >>> X, y = load_iris(return_X_y=True)
    >>> model = LSSVMEnsemble(n_subsets=3, C=10.0, sigma2=1.0, random_state=0).fit(X, y)
    >>> model.decision_function(X[:2]).shape, float(model.score(X, y)) > 0.9
    ((2, 3), True)
    """

    @staticmethod
    def _fit_flops(n, d, params):
        m = _n_members(n, params)
        s = n / m
        return m * (s**3 / 3 + s * s * d)

    def __init__(self, n_subsets=1, C=1.0, sigma2=1.0, max_subset_size=None, stratify=True, class_weight=None,
                 duplicates="keep", random_state=None):
        self.n_subsets = n_subsets
        self.C = C
        self.sigma2 = sigma2
        self.max_subset_size = max_subset_size
        self.stratify = stratify
        self.class_weight = class_weight
        self.duplicates = duplicates
        self.random_state = random_state

    def _check_params(self):
        self._check_common()
        _check_number(self, "C", numbers.Real, low=0, low_open=True)
        _check_number(self, "sigma2", numbers.Real, low=0, low_open=True)

    def _fit_members(self, parts):
        solutions = []
        for X, Y, _, w in parts:
            alpha, b = self._member_solution(X, Y, w, self.C, self.sigma2)
            solutions.append((X, alpha, b, self.C, self.sigma2))
        self._set_members(solutions)


class LSSVMEnsembleGCV(_LSSVMEnsembleBase):
    __doc__ = """Multiclass LS-SVM ensemble whose members pick (C, sigma^2) by GCV or leave-one-out.

    For every sigma^2 of the grid one symmetric eigendecomposition of the
    member's kernel gives alpha, b, tr H and diag H for every C in O(n^2) each
    (``_lssvm_hat_path``); the criterion is GCV (Hwang 2016, eq. 3.5)
    n sum_i (1 - Y_hat_{i,k_i})^2 / (n - tr H)^2, or the exact leave-one-out
    error (eq. 3.4) with h_ii. Like ``sklearn.linear_model.RidgeCV``, the
    criterion over the whole grid is kept in ``cv_values_``.

    Parameters
    ----------""" + _ENSEMBLE_PARAMS_DOC + """    Cs : sequence of float, default=(1e-2, 1e-1, ..., 1e6)
    sigma2s : sequence of float, default=(1e-2, 10^-1.5, ..., 1e3)
        The grids of SPEC section 4.
    criterion : {"gcv", "loo"}, default="gcv"
    shared : bool, default=False
        False: each member minimises its own criterion (the paper). True: one
        pair for all members, minimising the members' mean criterion.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_subsets_ : int
    C_, sigma2_ : ndarray of shape (n_subsets_,)
        The pair each member uses.
    cv_values_ : ndarray of shape (n_subsets_, len(sigma2s), len(Cs))
        The criterion of each member over the grid (+inf where a fit interpolates).
    support_vectors_, dual_coef_, intercept_ : lists of length n_subsets_

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from eemrepro.models import LSSVMEnsembleGCV
    >>> X, y = load_iris(return_X_y=True)
    >>> model = LSSVMEnsembleGCV(n_subsets=2, random_state=0).fit(X, y)
    >>> model.cv_values_.shape, float(model.score(X, y)) > 0.9
    ((2, 11, 9), True)
    """

    # Stored in experiment records beside the metrics: what each member selected.
    _recorded_attributes = ("C_", "sigma2_")

    @staticmethod
    def _fit_flops(n, d, params):
        m = _n_members(n, params)
        s = n / m
        n_sigma2 = len(params.get("sigma2s") or DEFAULT_SIGMA2S)
        n_c = len(params.get("Cs") or DEFAULT_CS)
        return m * n_sigma2 * (5 * s**3 + s * s * (d + 4 * n_c))

    def __init__(self, n_subsets=1, Cs=DEFAULT_CS, sigma2s=DEFAULT_SIGMA2S, criterion="gcv", shared=False,
                 max_subset_size=None, stratify=True, class_weight=None, duplicates="keep", random_state=None):
        self.n_subsets = n_subsets
        self.Cs = Cs
        self.sigma2s = sigma2s
        self.criterion = criterion
        self.shared = shared
        self.max_subset_size = max_subset_size
        self.stratify = stratify
        self.class_weight = class_weight
        self.duplicates = duplicates
        self.random_state = random_state

    def _check_params(self):
        self._check_common()
        _check_choice(self, "criterion", ("gcv", "loo"))
        _check_choice(self, "shared", (True, False))
        for name in ("Cs", "sigma2s"):
            values = getattr(self, name)
            ok = (isinstance(values, (list, tuple, np.ndarray)) and len(values) > 0
                  and all(isinstance(v, numbers.Real) and not isinstance(v, bool) and v > 0 and math.isfinite(v)
                          for v in values))
            if not ok:
                raise ValueError(f"{type(self).__name__}: parameter {name!r} must be a non-empty sequence of "
                                 f"finite numbers > 0, got {values!r}.")

    def _scan(self, X, Y, codes, w, keep):
        """The criterion over the grid; with ``keep`` also the best (alpha, b, C, sigma2)."""
        values = np.full((len(self.sigma2s), len(self.Cs)), np.inf)
        best, best_value = None, np.inf
        rows = np.arange(Y.shape[0])
        for i, sigma2 in enumerate(self.sigma2s):
            path = _lssvm_hat_path(_rbf(X, X, 1.0 / sigma2), Y, self.Cs, w)
            for j, (alpha, b, fitted, hat) in enumerate(path):
                residual = Y[rows, codes] - fitted[rows, codes]
                values[i, j] = _selection_criterion(residual, hat, self.criterion, w)
                # Strict < keeps the first minimum: the smallest sigma^2, then the smallest C.
                if keep and values[i, j] < best_value:
                    best_value, best = values[i, j], (alpha, b, self.Cs[j], sigma2)
        return values, best

    def _fit_members(self, parts):
        scans = [self._scan(X, Y, codes, w, keep=not self.shared) for X, Y, codes, w in parts]
        self.cv_values_ = np.stack([v for v, _ in scans])
        if not np.isfinite(self.cv_values_).any(axis=(1, 2)).all():
            raise ValueError(f"{type(self).__name__}: every grid point interpolates the training data "
                             "(n - tr H = 0); widen the grids.")
        solutions = []
        if self.shared:
            i, j = np.unravel_index(np.argmin(self.cv_values_.mean(axis=0)), self.cv_values_.shape[1:])
            C, sigma2 = self.Cs[j], self.sigma2s[i]
            for X, Y, _, w in parts:
                alpha, b = self._member_solution(X, Y, w, C, sigma2)
                solutions.append((X, alpha, b, C, sigma2))
        else:
            for (X, _, _, _), (_, (alpha, b, C, sigma2)) in zip(parts, scans, strict=True):
                solutions.append((X, alpha, b, C, sigma2))
        self._set_members(solutions)
