"""Extreme Entropy Machines: EEM and EEKM share one solver.

The two models differ only in the feature map phi (a random hidden layer for
EEM, a whitened kernel map for EEKM). Everything else -- chunked class moments,
Ledoit–Wolf covariances, the Cauchy–Schwarz-optimal direction beta and the
density-based decision rule -- is :class:`_BaseEntropyMachine`.
"""

import math
import numbers
import warnings

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state

from ._base import (
    _BinaryClassifierMixin,
    _check_choice,
    _check_number,
    _check_sample_weight,
    _chunk_rows,
    _chunked,
    _PathMixin,
)
from ._features import (
    ACTIVATIONS,
    _draw_hidden_layer,
    _hidden_activations,
    _kernel_features,
    _kernel_whitening,
    _rbf,
)
from ._fuzzy import _EntropyMembershipMixin
from ._moments import _accumulate_class_moments, _ledoit_wolf_from_moments

__all__ = ["EEM", "EEKM", "DegenerateProjectionWarning"]


class DegenerateProjectionWarning(UserWarning):
    """The class means coincide in feature space to within rounding: the model is constant."""


# How many times the projection's rounding error the separation of the projected class means must exceed
# (``_entropy_projection``).
DEGENERATE_MARGIN = 100.0


def _entropy_projection(mean_pos, cov_pos, mean_neg, cov_neg):
    """beta = 2 Sigma^-1 m / (m^T Sigma^-1 m), Sigma = Sigma+ + Sigma-, m = m+ - m-.

    The maximiser of the Cauchy–Schwarz divergence of the projected classes
    under beta^T m = 2 (EEM paper, eq. for beta in section 3). Returns ``None``
    when no direction separates the means by more than rounding can make:

        beta^T m = 2  <=  DEGENERATE_MARGIN * h * eps * sum_j |beta_j| r_j,

    r_j the root mean square of feature j (mean^2 + variance, the larger of the
    two classes), eps the float64 unit roundoff. The right side is 100 times
    the rounding error of a projection beta^T phi(x) of h terms at the
    features' own size (a dot product of h terms carries up to h eps of its
    sum of absolute terms), which also bounds what rounding the class means
    (eps |m+-_j|) contributes. Past it the projected classes differ by
    rounding noise, which followed the BLAS thread count, CPU and library:
    arrhythmia's saturated sigmoid layer (features 1 - O(eps)) separates its
    projected means by 4e-17 to 3.5e-16 of the projection's size; every other
    fit of EEM Table 4's data sets by 3e-8 or more. ``m = 0`` exactly
    (identical class means) is the limit case. The rule is invariant to the
    scale of each feature.
    """
    m = mean_pos - mean_neg
    sigma = cov_pos + cov_neg
    try:
        direction = linalg.cho_solve(linalg.cho_factor(sigma), m)
    except linalg.LinAlgError:
        # Ledoit–Wolf makes Sigma positive definite unless both classes have a
        # zero covariance (one sample each); fall back to the pseudo-inverse.
        direction = linalg.lstsq(sigma, m)[0]
    denom = m @ direction
    if not np.isfinite(denom) or denom <= 0:
        return None
    beta = 2.0 * direction / denom
    rms = np.sqrt(np.maximum(mean_pos**2 + np.diag(cov_pos), mean_neg**2 + np.diag(cov_neg)))
    if 2.0 <= DEGENERATE_MARGIN * m.shape[0] * np.finfo(np.float64).eps * (np.abs(beta) @ rms):
        return None
    return beta


def _log_normal_pdf(z, mean, var):
    return -0.5 * (np.log(2.0 * np.pi * var) + (z - mean) ** 2 / var)


def _density_thresholds(mu_pos, var_pos, mu_neg, var_neg, prior_pos, prior_neg):
    """Points where prior+ N(mu+, var+) = prior- N(mu-, var-): zero, one or two.

    g(z) = log of the posterior ratio is a z^2 + b z + c. Equal variances give
    the paper's single threshold (mu- + 1 at equal priors, since beta^T m = 2);
    unequal ones give its two thresholds t+- (section 3).
    """
    a = 0.5 / var_neg - 0.5 / var_pos
    b = mu_pos / var_pos - mu_neg / var_neg
    c = (
        math.log(prior_pos / prior_neg)
        - 0.5 * math.log(var_pos / var_neg)
        - 0.5 * mu_pos**2 / var_pos
        + 0.5 * mu_neg**2 / var_neg
    )
    if abs(a) <= 1e-12 * (0.5 / var_pos + 0.5 / var_neg):
        return np.array([-c / b]) if b != 0 else np.empty(0)
    disc = b * b - 4.0 * a * c
    if disc < 0:
        return np.empty(0)
    # Numerically stable roots of a quadratic.
    q = -0.5 * (b + math.copysign(math.sqrt(disc), b))
    roots = [q / a, c / q] if q != 0 else [0.0, 0.0]
    return np.sort(np.array(roots))


class _BaseEntropyMachine(_PathMixin, _BinaryClassifierMixin, ClassifierMixin, BaseEstimator):
    """Solver shared by EEM and EEKM; subclasses provide the feature map."""

    # The grid parameter fit_path covers in one fit (used by the experiment runner).
    _path_param = "n_hidden"

    @staticmethod
    def _fit_flops(n, d, params):
        """Rough operation count of one fit (the runner's time estimate)."""
        h = params.get("n_hidden", 100)
        return n * (h * h + d * h)

    def _check_params(self):
        _check_number(self, "n_hidden", numbers.Integral, low=1)
        _check_choice(self, "dtype", ("float64", "float32"))

    # -- the feature map (subclasses) ------------------------------------------
    def _feature_plan(self, X, n_hidden_grid, rng):
        """Return ``(transform_chunk, blocks, per_h)``.

        ``transform_chunk(X_chunk)`` -> {key: feature rows}; ``blocks`` ->
        {key: (n_columns, prefixes)}; ``per_h`` -> for each requested h,
        ``(key, q, fitted_map_attributes)``: the model with that h uses the
        first q columns of block ``key``.
        """
        raise NotImplementedError

    def _transform(self, X):
        """The fitted feature map applied to a chunk of rows."""
        raise NotImplementedError

    # -- fitting ---------------------------------------------------------------
    def fit_path(self, X, y, n_hidden, sample_weight=None):
        """Fit one model per hidden-layer size from one pass over the largest layer.

        The largest layer's features and class statistics are computed once;
        each smaller model uses their leading block (the first h neurons are the
        same for every h, given ``random_state``). Each returned model equals
        ``clone(self).set_params(n_hidden=h).fit(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        n_hidden : sequence of int

        sample_weight : array-like of shape (n_samples,), default=None
            As in ``fit``.

        Returns
        -------
        models : list of fitted estimators, in the order of ``n_hidden``
        """
        return self._fit_path(X, y, [int(h) for h in n_hidden], sample_weight=sample_weight)

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes, any labels; the minority one is the positive class.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the class means and covariances, a weight k
            counting as k copies of the row (also in the Ledoit–Wolf intensity).

        Returns
        -------
        self : object
        """
        self._check_params()
        X, t = self._validate_training_data(X, y)
        (state,) = self._fit_states(X, t, [self.n_hidden], sample_weight=sample_weight)
        self._set_state(state)
        return self

    def _sample_weight(self, X, t, sample_weight):
        """The checked weights (None when not given); each class needs a positive total."""
        if sample_weight is None:
            return None
        s = _check_sample_weight(sample_weight, X.shape[0])
        for sign, name in ((1, "positive (minority)"), (-1, "negative (majority)")):
            if not s[t == sign].sum() > 0:
                raise ValueError(f"sample_weight is zero for every sample of the {name} class; "
                                 f"{type(self).__name__} needs both classes' means.")
        return s

    def _priors(self):
        if self.priors is None:
            return 0.5, 0.5
        priors = np.asarray(self.priors, dtype=np.float64)
        if priors.shape != (2,) or np.any(priors <= 0) or not np.all(np.isfinite(priors)):
            raise ValueError(f"priors must be two positive numbers (in classes_ order), got {self.priors!r}")
        priors = priors / priors.sum()
        pos = 1 if self._pos_is_second else 0
        return priors[pos], priors[1 - pos]

    def _fit_states(self, X, t, n_hidden_grid, sample_weight=None):
        rng = check_random_state(self.random_state)
        s = self._sample_weight(X, t, sample_weight)
        dtype = np.dtype(self.dtype)
        prior_pos, prior_neg = self._priors()
        transform_chunk, blocks, per_h = self._feature_plan(X, n_hidden_grid, rng)

        max_columns = max(n_cols for n_cols, _ in blocks.values())
        # Rows grouped by class so no chunk has to be split by a mask.
        moments = _accumulate_class_moments(
            [X[t > 0], X[t < 0]], transform_chunk, blocks, dtype, _chunk_rows(max_columns),
            class_weights=None if s is None else [s[t > 0], s[t < 0]],
        )

        states = []
        for key, q, map_attrs in per_h:
            stats = []
            for acc in moments[key]:
                mean, cov, norm4, n = acc.leading_block(q)
                shrunk, shrinkage = _ledoit_wolf_from_moments(cov, norm4, n)
                stats.append((mean, shrunk, shrinkage))
            (m_pos, s_pos, e_pos), (m_neg, s_neg, e_neg) = stats
            beta = _entropy_projection(m_pos, s_pos, m_neg, s_neg)
            if beta is None:
                warnings.warn(
                    f"{type(self).__name__}: the class means coincide in feature space to within rounding "
                    f"(n_hidden={q}); beta = 0 and the model predicts one class.",
                    DegenerateProjectionWarning,
                    stacklevel=3,
                )
                beta = np.zeros(q)
            mu = np.array([beta @ m_pos, beta @ m_neg])
            var = np.array([beta @ s_pos @ beta, beta @ s_neg @ beta])
            # beta^T (m+ - m-) = 2 fixes the scale; a zero variance (a class of
            # one sample, or beta = 0) would make its density a point mass.
            var = np.maximum(var, 1e-12)
            states.append(
                dict(
                    map_attrs,
                    beta_=beta,
                    _mu=mu,
                    _var=var,
                    _priors=(prior_pos, prior_neg),
                    shrinkage_=np.array([e_pos, e_neg]),
                    class_means_=np.vstack([m_pos, m_neg]),
                )
            )
        return states

    def _set_state(self, state):
        # Internal arrays are (positive, negative); public ones follow classes_.
        order = [1, 0] if self._pos_is_second else [0, 1]
        mu, var, (p_pos, p_neg) = state.pop("_mu"), state.pop("_var"), state.pop("_priors")
        self._rule = (mu[0], var[0], mu[1], var[1], p_pos, p_neg)
        self.projected_means_ = mu[order]
        self.projected_variances_ = var[order]
        self.shrinkage_ = state.pop("shrinkage_")[order]
        self.class_means_ = state.pop("class_means_")[order]
        self.thresholds_ = _density_thresholds(*self._rule)
        for key, value in state.items():
            setattr(self, key, value)

    # -- prediction ------------------------------------------------------------
    def project(self, X):
        """beta^T phi(x) for each row: the 1-D projection the decision is made on.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        z : ndarray of shape (n_samples,)
        """
        X = self._validate_prediction_data(X)
        dtype = np.dtype(self.dtype)
        beta = self.beta_.astype(dtype)
        return _chunked(X, beta.shape[0], lambda chunk: self._transform(chunk.astype(dtype)) @ beta)

    def _log_posterior_ratio(self, X):
        z = self.project(X)
        mu_pos, var_pos, mu_neg, var_neg, p_pos, p_neg = self._rule
        return (
            math.log(p_pos / p_neg)
            + _log_normal_pdf(z, mu_pos, var_pos)
            - _log_normal_pdf(z, mu_neg, var_neg)
        )

    def decision_function(self, X):
        """Log posterior ratio of ``classes_[1]`` against ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        return self._orient(self._log_posterior_ratio(X))

    def predict_proba(self, X):
        """Posterior of each class from the two fitted 1-D normals (and priors).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, 2), columns in ``classes_`` order
        """
        from scipy.special import expit

        p_second = expit(self.decision_function(X))
        return np.column_stack([1.0 - p_second, p_second])


class EEM(_BaseEntropyMachine):
    """Extreme Entropy Machine (Czarnecki & Tabor 2017).

    A random hidden layer phi with ``n_hidden`` neurons, the class means and
    Ledoit–Wolf covariances of phi(X) per class, the projection
    beta = 2 Sigma^-1 m / (m^T Sigma^-1 m) that maximises the Cauchy–Schwarz
    divergence of the projected classes, and a decision by the larger of the
    two fitted 1-D normal densities (one or two thresholds).

    Parameters
    ----------
    n_hidden : int, default=100
        Number of hidden neurons h.
    activation : {"sig", "nsig", "rbf"}, default="sig"
        Hidden neuron G(x, w, b); weights and biases are i.i.d. U[0, 1].
    priors : array-like of shape (2,), default=None
        Class priors in ``classes_`` order for a cost-sensitive decision;
        ``None`` means equal priors (the paper's rule).
    dtype : {"float64", "float32"}, default="float64"
        Precision of the hidden-layer features and their products; statistics
        are accumulated and solved in float64 either way.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    pos_label_ : object
        The minority class (the paper's positive class).
    hidden_weights_ : ndarray of shape (n_hidden, n_features)
    hidden_biases_ : ndarray of shape (n_hidden,)
    beta_ : ndarray of shape (n_hidden,)
    class_means_ : ndarray of shape (2, n_hidden)
    projected_means_ : ndarray of shape (2,)
        beta^T m for each class, in ``classes_`` order.
    projected_variances_ : ndarray of shape (2,)
        beta^T Sigma beta for each class.
    shrinkage_ : ndarray of shape (2,)
        Ledoit–Wolf shrinkage intensity of each class.
    thresholds_ : ndarray of shape (0,), (1,) or (2,)
        Points of the projection where the decision changes.

    Notes
    -----
    A degenerate fit: when the class means differ in feature space by no more
    than rounding can make, that is when the projected means' separation
    beta^T m = 2 is at most 100 h eps sum_j |beta_j| r_j (r_j the root mean
    square of feature j, the larger over the two classes; eps = 2.2e-16), the
    fit sets beta = 0, warns ``DegenerateProjectionWarning`` and predicts one
    class (the log prior ratio everywhere; at equal priors the tie of
    ``predict``: ``classes_[0]``). The rule does not depend on the features'
    scale, and it decides the same way on any BLAS, thread count or CPU, where
    a projection of rounding noise did not (a sigmoid layer saturated to
    1 - O(eps), as on arrhythmia). EEKM shares it.

    References
    ----------
    W. M. Czarnecki and J. Tabor, "Extreme entropy machines: robust
    information theoretic classification", Pattern Analysis and Applications
    20 (2017) 383-400.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from eemrepro.models import EEM
    >>> from sklearn.preprocessing import MinMaxScaler
    >>> X, y = make_classification(n_samples=200, random_state=0)
    >>> X = MinMaxScaler().fit_transform(X)  # the activations expect [0, 1] features
    >>> clf = EEM(n_hidden=50, activation="rbf", random_state=0).fit(X, y)
    >>> clf.beta_.shape
    (50,)
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    def _check_params(self):
        super()._check_params()
        _check_choice(self, "activation", ACTIVATIONS)

    def __init__(self, n_hidden=100, activation="sig", priors=None, dtype="float64", random_state=None):
        self.n_hidden = n_hidden
        self.activation = activation
        self.priors = priors
        self.dtype = dtype
        self.random_state = random_state

    def _feature_plan(self, X, n_hidden_grid, rng):
        h_max = max(n_hidden_grid)
        weights, biases = _draw_hidden_layer(h_max, X.shape[1], rng)
        activation = self.activation

        def transform_chunk(X_chunk):
            return {0: _hidden_activations(X_chunk, weights, biases, activation)}

        per_h = [
            (0, h, {"hidden_weights_": weights[:h], "hidden_biases_": biases[:h]})
            for h in n_hidden_grid
        ]
        return transform_chunk, {0: (h_max, n_hidden_grid)}, per_h

    def _transform(self, X):
        return _hidden_activations(X, self.hidden_weights_, self.hidden_biases_, self.activation)



class EntropyFuzzyEEM(_EntropyMembershipMixin, EEM):
    """EEM with ESMM's entropy-based fuzzy memberships as sample weights (not in the papers).

    The class means and Ledoit–Wolf covariances are weighted by s_i =
    ``entropy_fuzzy_membership`` of the training data (1 for the minority class,
    1 - alpha (j - 1) for a majority point in entropy bin j): what ESMM does to
    SMM, done to EEM, so that majority points in mixed neighbourhoods count less
    in the majority's density.

    Parameters
    ----------
    n_hidden : int, default=100
    activation : {"sig", "nsig", "rbf"}, default="sig"
    priors : array-like of shape (2,), default=None
    n_neighbors : int, default=10
    n_bins : int, default=10
    alpha : float, default=0.05
    membership_order : {"text", "literal"}, default="text"
        See ``entropy_fuzzy_membership``.
    dtype : {"float64", "float32"}, default="float64"
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    memberships_ : ndarray of shape (n_samples,)
    classes_, pos_label_, hidden_weights_, hidden_biases_, beta_, class_means_, projected_means_, \
projected_variances_, shrinkage_, thresholds_
        As in ``EEM``.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.preprocessing import MinMaxScaler
    >>> from eemrepro.models import EntropyFuzzyEEM
    >>> X, y = make_classification(n_samples=200, weights=[0.8], random_state=0)
    >>> X = MinMaxScaler().fit_transform(X)
    >>> clf = EntropyFuzzyEEM(n_hidden=50, n_neighbors=5, random_state=0).fit(X, y)
    >>> float(clf.memberships_.min()) >= 0.55
    True
    """

    def __init__(self, n_hidden=100, activation="sig", priors=None, n_neighbors=10, n_bins=10, alpha=0.05,
                 membership_order="text", dtype="float64", random_state=None):
        super().__init__(n_hidden=n_hidden, activation=activation, priors=priors, dtype=dtype,
                         random_state=random_state)
        self.n_neighbors = n_neighbors
        self.n_bins = n_bins
        self.alpha = alpha
        self.membership_order = membership_order

    def _fit_states(self, X, t, n_hidden_grid, sample_weight=None):
        given = None if sample_weight is None else _check_sample_weight(sample_weight, X.shape[0])
        s = self._memberships(X, t, given)
        states = super()._fit_states(X, t, n_hidden_grid, sample_weight=s)
        return [dict(state, memberships_=s) for state in states]


class EEKM(_BaseEntropyMachine):
    """Extreme Entropy Kernel Machine (Czarnecki & Tabor 2017).

    EEM with the kernel feature map phi_K(x) = K(X[h], X[h])^(-1/2) K(X[h], x),
    X[h] a random subset of h training points (all of them if h >= n) and K the
    Gaussian kernel exp(-gamma ||x - y||^2): a Nystroem approximation of the
    kernel's feature space.

    Parameters
    ----------
    n_hidden : int, default=100
        Number of landmarks h.
    gamma : float, default=1.0
        Gaussian kernel width.
    priors : array-like of shape (2,), default=None
    dtype : {"float64", "float32"}, default="float64"
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    pos_label_ : object
    landmarks_ : ndarray of shape (min(n_hidden, n_samples), n_features)
    whitening_ : ndarray of shape (h, h)
        K(X[h], X[h])^(-1/2), eigenvalues under the rank tolerance dropped.
    beta_, class_means_, projected_means_, projected_variances_, shrinkage_, thresholds_
        As in :class:`EEM`.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from eemrepro.models import EEKM
    >>> X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    >>> clf = EEKM(n_hidden=50, gamma=2.0, random_state=0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    def _check_params(self):
        super()._check_params()
        _check_number(self, "gamma", numbers.Real, low=0, low_open=True)

    def __init__(self, n_hidden=100, gamma=1.0, priors=None, dtype="float64", random_state=None):
        self.n_hidden = n_hidden
        self.gamma = gamma
        self.priors = priors
        self.dtype = dtype
        self.random_state = random_state

    def _feature_plan(self, X, n_hidden_grid, rng):
        n = X.shape[0]
        order = rng.permutation(n)
        sizes = sorted({min(h, n) for h in n_hidden_grid})
        landmarks = X[order[: sizes[-1]]]
        K_landmarks = _rbf(landmarks, landmarks, self.gamma)
        whitening = {q: _kernel_whitening(K_landmarks[:q, :q]) for q in sizes}
        gamma = self.gamma

        def transform_chunk(X_chunk):
            # The kernel columns of the largest landmark set serve every h.
            K = _rbf(X_chunk, landmarks, gamma)
            return {q: K[:, :q] @ whitening[q].astype(K.dtype) for q in sizes}

        per_h = []
        for h in n_hidden_grid:
            q = min(h, n)
            per_h.append((q, q, {"landmarks_": landmarks[:q], "whitening_": whitening[q]}))
        return transform_chunk, {q: (q, [q]) for q in sizes}, per_h

    def _transform(self, X):
        return _kernel_features(X, self.landmarks_, self.whitening_, self.gamma)
