"""EEM and EEKM: the shared entropy solver against independent computations."""


import numpy as np
import pytest
from scipy.stats import norm
from sklearn.covariance import ledoit_wolf
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics.pairwise import rbf_kernel

from eemrepro.models import EEKM, EEM, WELM, DegenerateProjectionWarning
from eemrepro.models._entropy import _density_thresholds, _entropy_projection
from eemrepro.models._welm import _augmented_r, _min_norm_solution

from tests.helpers import make_imbalanced


def _reference_features(X, est):
    """The paper's activations written out independently of the package."""
    W, b = est.hidden_weights_, est.hidden_biases_
    if est.activation == "sig":
        return 1.0 / (1.0 + np.exp(-(X @ W.T) + b))
    if est.activation == "nsig":
        return 1.0 / (1.0 + np.exp(-(X @ W.T) / X.shape[1] + b))
    sq = ((X[:, None, :] - W[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-b * sq)


def _reference_beta(H, t):
    """beta = 2 Sigma^-1 m / (m^T Sigma^-1 m) from sklearn's Ledoit–Wolf."""
    cov_pos, _ = ledoit_wolf(H[t > 0])
    cov_neg, _ = ledoit_wolf(H[t < 0])
    m = H[t > 0].mean(axis=0) - H[t < 0].mean(axis=0)
    x = np.linalg.solve(cov_pos + cov_neg, m)
    return 2 * x / (m @ x), cov_pos, cov_neg


@pytest.mark.parametrize("activation", ["sig", "nsig", "rbf"])
@pytest.mark.parametrize("chunked", [False, True])
def test_eem_beta_equals_closed_form(activation, chunked, request):
    if chunked:
        request.getfixturevalue("small_chunks")
    X, y = make_imbalanced(n=260, d=6, seed=3)
    est = EEM(n_hidden=40, activation=activation, random_state=0).fit(X, y)
    H = _reference_features(X, est)
    t = np.where(y == est.pos_label_, 1, -1)
    beta, cov_pos, cov_neg = _reference_beta(H, t)
    np.testing.assert_allclose(est.beta_, beta, rtol=1e-6, atol=1e-9 * np.abs(beta).max())
    # Projected class statistics: beta^T m = 2 apart, variances beta^T Sigma beta.
    mu = {c: est.beta_ @ H[t == c].mean(axis=0) for c in (1, -1)}
    assert mu[1] - mu[-1] == pytest.approx(2.0, rel=1e-9)
    i_pos = list(est.classes_).index(est.pos_label_)
    assert est.projected_means_[i_pos] == pytest.approx(mu[1], rel=1e-8, abs=1e-8)
    assert est.projected_variances_[i_pos] == pytest.approx(beta @ cov_pos @ beta, rel=1e-6)
    assert est.projected_variances_[1 - i_pos] == pytest.approx(beta @ cov_neg @ beta, rel=1e-6)


def test_density_argmax_and_thresholds_classify_identically():
    X, y = make_imbalanced(n=300, d=4, seed=5)
    est = EEM(n_hidden=30, activation="rbf", random_state=1).fit(X, y)
    i_pos = list(est.classes_).index(est.pos_label_)
    mu_p, mu_n = est.projected_means_[i_pos], est.projected_means_[1 - i_pos]
    v_p, v_n = est.projected_variances_[i_pos], est.projected_variances_[1 - i_pos]
    z = est.project(X)
    # Rule 1: argmax of the two normal densities (scipy.stats.norm).
    by_density = norm.pdf(z, mu_p, np.sqrt(v_p)) > norm.pdf(z, mu_n, np.sqrt(v_n))
    # Rule 2: the thresholds alone. Between the two roots when the positive
    # class has the smaller variance, outside them otherwise.
    t = est.thresholds_
    assert t.shape in ((1,), (2,))
    if t.size == 2:
        inside = (z >= t[0]) & (z <= t[1])
        by_threshold = inside if v_p < v_n else ~inside
    else:
        by_threshold = (z > t[0]) if mu_p > mu_n else (z < t[0])
    np.testing.assert_array_equal(by_density, by_threshold)
    np.testing.assert_array_equal(est.predict(X) == est.pos_label_, by_density)


@pytest.mark.parametrize("var_pos,var_neg", [(0.3, 0.3), (0.2, 0.7), (1.5, 0.4)])
def test_thresholds_equal_paper_formulas(var_pos, var_neg):
    # Expected: EEM paper section 3 with beta^T(m+ - m-) = 2 and equal priors:
    # t0 = m- + 1; t+- = m- + (2 S- +- sqrt(S- S+ (ln(S-/S+)(S- - S+) + 4))) / (S- - S+).
    mu_neg = -0.7
    mu_pos = mu_neg + 2.0
    roots = _density_thresholds(mu_pos, var_pos, mu_neg, var_neg, 0.5, 0.5)
    if var_pos == var_neg:
        np.testing.assert_allclose(roots, [mu_neg + 1.0])
    else:
        root = np.sqrt(var_neg * var_pos * (np.log(var_neg / var_pos) * (var_neg - var_pos) + 4))
        paper = mu_neg + (2 * var_neg + np.array([-root, root])) / (var_neg - var_pos)
        np.testing.assert_allclose(roots, np.sort(paper), rtol=1e-12)


def test_predict_proba_is_the_normal_posterior():
    X, y = make_imbalanced(n=200, d=3, seed=7)
    est = EEM(n_hidden=20, activation="rbf", priors=[0.3, 0.7], random_state=0).fit(X, y)
    z = est.project(X)
    # Expected: Bayes' rule with scipy.stats.norm densities and the given priors
    # (classes_ order: -1, +1; +1 is the minority).
    like = np.column_stack(
        [norm.pdf(z, m, np.sqrt(v)) for m, v in zip(est.projected_means_, est.projected_variances_, strict=False)]
    )
    post = like * np.array([0.3, 0.7])
    post /= post.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(est.predict_proba(X), post, rtol=1e-8, atol=1e-12)


def test_priors_make_the_rule_cost_sensitive():
    X, y = make_imbalanced(n=300, d=3, seed=8, shift=0.4)
    pos = EEM(n_hidden=20, activation="rbf", priors=[0.1, 0.9], random_state=0).fit(X, y).predict(X)
    neg = EEM(n_hidden=20, activation="rbf", priors=[0.9, 0.1], random_state=0).fit(X, y).predict(X)
    assert (pos == 1).sum() > (neg == 1).sum()


def test_equal_class_means_give_a_constant_classifier_with_a_warning():
    X, _ = make_imbalanced(n=40, d=3, seed=9)
    X2 = np.vstack([X, X])  # every point once in each class: identical means
    y2 = np.r_[np.ones(40), -np.ones(40)]
    with pytest.warns(DegenerateProjectionWarning, match="class means coincide"):
        est = EEM(n_hidden=10, random_state=0).fit(X2, y2)
    assert not np.any(est.beta_)
    assert np.unique(est.predict(X2)).size == 1


@pytest.mark.parametrize("scale", [1.0, 1e-20])
def test_class_means_equal_to_within_rounding_give_no_direction_at_any_feature_scale(scale):
    """The documented rule (``_entropy_projection``): no direction when beta^T m = 2 <= 100 h eps sum |beta_j| r_j.

    Closed form: h features of size ``scale`` (the negative class's mean), the positive mean ``delta * scale``
    above it in every feature, isotropic covariances s^2 I in both classes. Then beta = 2 m / |m|^2 (all
    entries 2 / (h delta scale)), sum_j |beta_j| r_j = 2 (1 + delta) / delta, so the rule says degenerate
    exactly when delta / (1 + delta) <= 100 h eps: delta* = 100 * 50 * 2.22e-16 = 1.11e-12 at h = 50.
    Means equal, equal up to 1e-15 noise, or 1e-14 apart (arrhythmia's saturated sigmoid layer: 20 to 60 ulps,
    past the former rule's 16 ulps) are all degenerate; half of delta* is, twice delta* is not, and the
    outcome is the same at features of size 1e-20 (the rule has no absolute floor).
    """
    h, eps = 50, np.finfo(np.float64).eps
    threshold = 100 * h * eps
    rng = np.random.RandomState(0)
    base = np.full(h, scale)
    cov = (1e-3 * scale) ** 2 * np.eye(h)

    def beta_for(mean_pos):
        return _entropy_projection(mean_pos, cov, base, cov)

    assert beta_for(base.copy()) is None
    assert beta_for(base + rng.uniform(-1e-15, 1e-15, h) * scale) is None
    assert beta_for(base * (1 + 1e-14)) is None
    assert beta_for(base * (1 + 0.5 * threshold)) is None
    for delta in (2 * threshold, 1e-9, 0.1):
        beta = beta_for(base * (1 + delta))
        assert beta is not None
        # (1 + delta) - 1 in float64 carries eps / delta of relative error (1e-4 at 2 delta*).
        np.testing.assert_allclose(beta, 2 / (h * delta * scale), rtol=max(1e-9, 10 * eps / delta))


def test_a_fit_whose_class_means_differ_by_rounding_is_constant_and_warns():
    # Through EEM: a sigmoid layer saturated on both classes (<w, x> - b > 100 for every row and neuron: phi = 1
    # exactly, exp(-100) being under half an ulp of 1) has equal class means; beta = 0 and one class.
    rng = np.random.RandomState(3)
    X = rng.uniform(0.9, 1.0, size=(200, 300))
    y = np.r_[np.ones(20), -np.ones(180)]
    with pytest.warns(DegenerateProjectionWarning, match="class means coincide in feature space to within rounding"):
        est = EEM(n_hidden=30, activation="sig", random_state=0).fit(X, y)
    assert not np.any(est.beta_)
    assert np.unique(est.predict(X)).size == 1


def test_theorem_1_welm_beta_proportional_to_eem_beta():
    """EEM paper, Theorem 1: balanced, centred data with homogeneous class
    covariances gives beta_WELM = a * beta_EEM with a > 0.

    The theorem's literal h = N is impossible for centred data (1^T H = 0 makes
    H singular), and its proof uses the plain covariance (Ledoit–Wolf shrinkage
    breaks exact proportionality), so it is checked on the solvers with h < N:
    mirrored classes H- = -H+ are balanced, centred and have equal covariances.
    """
    rng = np.random.RandomState(0)
    H_pos = rng.normal(size=(60, 15)) @ rng.normal(size=(15, 15)) + rng.normal(size=15)
    H = np.vstack([H_pos, -H_pos])
    t = np.r_[np.ones(60), -np.ones(60)]
    cov = np.cov(H_pos.T, bias=True)
    beta_eem = _entropy_projection(H_pos.mean(0), cov, -H_pos.mean(0), cov)
    R = _augmented_r([np.column_stack([H, t])], H.shape[1] + 1)
    beta_welm = _min_norm_solution(R, H.shape[1], H.shape[0])
    a = (beta_welm @ beta_eem) / (beta_eem @ beta_eem)
    assert a > 0
    np.testing.assert_allclose(beta_welm, a * beta_eem, rtol=1e-9)


def test_eekm_with_all_points_reproduces_the_gram_matrix():
    # Expected: phi_K(X) phi_K(X)^T = K K^-1 K = K (sklearn's rbf_kernel).
    X, y = make_imbalanced(n=60, d=4, seed=10)
    est = EEKM(n_hidden=1000, gamma=2.0, random_state=0).fit(X, y)
    assert est.landmarks_.shape[0] == 60
    phi = est._transform(X)
    np.testing.assert_allclose(phi @ phi.T, rbf_kernel(X, gamma=2.0), atol=1e-8)


def test_eekm_map_equals_sklearn_nystroem():
    # Same landmarks (first h of one permutation) and, for a well-conditioned
    # kernel, the same symmetric K^(-1/2): the maps agree.
    X, y = make_imbalanced(n=120, d=4, seed=11)
    est = EEKM(n_hidden=30, gamma=1.0, random_state=4).fit(X, y)
    ny = Nystroem(gamma=1.0, n_components=30, random_state=4).fit(X)
    np.testing.assert_allclose(est.landmarks_, ny.components_)
    np.testing.assert_allclose(est._transform(X), ny.transform(X), atol=1e-7)


def test_eekm_drops_numerically_null_directions_at_tiny_gamma():
    X, y = make_imbalanced(n=150, d=4, seed=12)
    est = EEKM(n_hidden=50, gamma=1e-10, random_state=0).fit(X, y)
    rank = np.linalg.matrix_rank(est.whitening_)
    assert rank < 50
    assert np.all(np.isfinite(est.decision_function(X)))
    # The map is bounded: ||phi(x)||^2 <= K(x, x) = 1 up to round-off.
    assert np.max(np.sum(est._transform(X) ** 2, axis=1)) < 1.0 + 1e-6


@pytest.mark.parametrize("cls,kwargs", [(EEM, {"activation": "rbf"}), (EEM, {"activation": "sig"}), (EEKM, {"gamma": 0.5}), (WELM, {"activation": "rbf"})])
def test_fit_path_equals_separate_fits_and_prefix_property(cls, kwargs, small_chunks):
    X, y = make_imbalanced(n=150, d=5, seed=13)
    grid = [5, 20, 60, 200]
    path = cls(random_state=3, **kwargs).fit_path(X, y, n_hidden=grid)
    big = cls(n_hidden=200, random_state=3, **kwargs).fit(X, y)
    for h, model in zip(grid, path, strict=False):
        single = cls(n_hidden=h, random_state=3, **kwargs).fit(X, y)
        assert model.n_hidden == h
        np.testing.assert_allclose(model.beta_, single.beta_, rtol=1e-7, atol=1e-10 * np.abs(single.beta_).max())
        np.testing.assert_allclose(model.decision_function(X), single.decision_function(X), rtol=1e-6, atol=1e-8)
        if cls is EEKM:
            np.testing.assert_array_equal(single.landmarks_, big.landmarks_[: min(h, 150)])
        else:
            np.testing.assert_array_equal(single.hidden_weights_, big.hidden_weights_[:h])
            np.testing.assert_array_equal(single.hidden_biases_, big.hidden_biases_[:h])


def test_float32_agrees_with_float64():
    X, y = make_imbalanced(n=400, d=6, seed=14)
    a = EEM(n_hidden=100, activation="rbf", random_state=0).fit(X, y)
    b = EEM(n_hidden=100, activation="rbf", dtype="float32", random_state=0).fit(X, y)
    cos = a.beta_ @ b.beta_ / np.linalg.norm(a.beta_) / np.linalg.norm(b.beta_)
    assert cos > 0.999
    assert np.mean(a.predict(X) == b.predict(X)) > 0.99


def test_chunked_fit_equals_one_chunk(small_chunks):
    X, y = make_imbalanced(n=230, d=5, seed=15)
    chunked = EEM(n_hidden=25, activation="sig", random_state=0).fit(X, y)
    small_chunks._CHUNK_VALUES = 1 << 22
    whole = EEM(n_hidden=25, activation="sig", random_state=0).fit(X, y)
    np.testing.assert_allclose(chunked.beta_, whole.beta_, rtol=1e-8)


def test_result_does_not_depend_on_the_number_of_threads(small_chunks):
    # Chunks are summed in fixed partitions merged in a fixed order, so one
    # BLAS thread (as inside a joblib worker) and several give the same bits.
    from threadpoolctl import threadpool_limits

    X, y = make_imbalanced(n=400, d=5, seed=16)
    many = EEM(n_hidden=30, activation="rbf", random_state=0).fit(X, y)
    with threadpool_limits(limits=1, user_api="blas"):
        one = EEM(n_hidden=30, activation="rbf", random_state=0).fit(X, y)
    np.testing.assert_array_equal(many.beta_, one.beta_)


# -- sample weights (scikit-learn's meaning: a weight k counts as k copies of the row) --------------


@pytest.mark.parametrize("chunked", [False, True])
def test_integer_weights_equal_repeated_rows(chunked, request):
    # Expected values: the unweighted EEM on the rows repeated (that fit is checked against
    # scikit-learn's ledoit_wolf above); weight 0 drops a row.
    if chunked:
        request.getfixturevalue("small_chunks")
    X, y = make_imbalanced(n=140, d=5, seed=21)
    w = np.random.RandomState(0).randint(0, 4, size=140)
    w[:3] = 1  # keep some minority rows whatever the draw
    weighted = EEM(n_hidden=30, activation="rbf", random_state=0).fit(X, y, sample_weight=w)
    repeated = EEM(n_hidden=30, activation="rbf", random_state=0).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.beta_, repeated.beta_, rtol=1e-8, atol=1e-10 * np.abs(repeated.beta_).max())
    np.testing.assert_allclose(weighted.shrinkage_, repeated.shrinkage_, rtol=1e-8)
    np.testing.assert_allclose(weighted.class_means_, repeated.class_means_, rtol=1e-10)
    np.testing.assert_allclose(weighted.decision_function(X), repeated.decision_function(X), rtol=1e-7, atol=1e-9)


def test_fractional_weights_against_the_weighted_formulas(small_chunks):
    # Expected values written out here from the definitions: the weighted mean and 1/N
    # covariance (N = sum of the weights), and Ledoit and Wolf's intensity with n -> N:
    # beta = (sum_k s_k ||x_k - m||^4 / N - ||S||_F^2) / (p N), delta = ||S - mu I||_F^2 / p.
    X, y = make_imbalanced(n=160, d=4, seed=22)
    s = np.random.RandomState(1).uniform(0.55, 1.0, size=160)
    est = EEM(n_hidden=20, activation="sig", random_state=0).fit(X, y, sample_weight=s)
    H = _reference_features(X, est)
    t = np.where(y == est.pos_label_, 1, -1)
    shrunk = {}
    for c in (1, -1):
        Hc, sc = H[t == c], s[t == c]
        N, p = sc.sum(), Hc.shape[1]
        m = sc @ Hc / N
        D = Hc - m
        S = (D * sc[:, None]).T @ D / N
        mu = np.trace(S) / p
        delta = np.sum((S - mu * np.eye(p)) ** 2) / p
        beta = min((sc @ np.sum(D * D, axis=1) ** 2 / N - np.sum(S * S)) / (p * N), delta)
        shrinkage = beta / delta
        shrunk[c] = (1 - shrinkage) * S + shrinkage * mu * np.eye(p)
        i = list(est.classes_).index(est.pos_label_) if c == 1 else 1 - list(est.classes_).index(est.pos_label_)
        np.testing.assert_allclose(est.class_means_[i], m, rtol=1e-10)
        assert est.shrinkage_[i] == pytest.approx(shrinkage, rel=1e-7)
    diff = est.class_means_[list(est.classes_).index(est.pos_label_)] - est.class_means_[1 - list(est.classes_).index(est.pos_label_)]
    x = np.linalg.solve(shrunk[1] + shrunk[-1], diff)
    np.testing.assert_allclose(est.beta_, 2 * x / (diff @ x), rtol=1e-6, atol=1e-9 * np.abs(x).max())


def test_weighted_fit_path_equals_separate_fits():
    X, y = make_imbalanced(n=150, d=5, seed=23)
    s = np.random.RandomState(2).uniform(0.5, 1.5, size=150)
    path = EEM(activation="rbf", random_state=3).fit_path(X, y, n_hidden=[10, 40], sample_weight=s)
    for model in path:
        single = EEM(n_hidden=model.n_hidden, activation="rbf", random_state=3).fit(X, y, sample_weight=s)
        np.testing.assert_allclose(model.beta_, single.beta_, rtol=1e-9, atol=1e-12 * np.abs(single.beta_).max())


def test_entropy_fuzzy_eem_is_eem_weighted_by_the_memberships():
    from eemrepro.models import EntropyFuzzyEEM, entropy_fuzzy_membership

    X, y = make_imbalanced(n=200, d=5, seed=24, shift=0.5)
    fuzzy = EntropyFuzzyEEM(n_hidden=40, n_neighbors=7, random_state=0).fit(X, y)
    t = np.where(y == fuzzy.pos_label_, 1, -1)
    s = entropy_fuzzy_membership(X, t, 7)
    np.testing.assert_array_equal(fuzzy.memberships_, s)
    assert s.min() < 1.0  # some majority point is down-weighted, or the test proves nothing
    plain = EEM(n_hidden=40, random_state=0).fit(X, y, sample_weight=s)
    np.testing.assert_allclose(fuzzy.beta_, plain.beta_, rtol=1e-10)
    (path_model,) = EntropyFuzzyEEM(n_neighbors=7, random_state=0).fit_path(X, y, n_hidden=[40])
    np.testing.assert_array_equal(path_model.memberships_, s)
    np.testing.assert_allclose(path_model.beta_, plain.beta_, rtol=1e-10)


def test_bad_sample_weight():
    X, y = make_imbalanced(n=60, d=3, seed=25)
    with pytest.raises(ValueError, match="zero for every sample of the positive"):
        EEM(n_hidden=5).fit(X, y, sample_weight=np.where(y == 1, 0.0, 1.0))
    with pytest.raises(ValueError, match="non-negative"):
        EEM(n_hidden=5).fit(X, y, sample_weight=np.full(60, -1.0))
    with pytest.raises(ValueError, match=r"expected \(60,\)"):
        EEM(n_hidden=5).fit(X, y, sample_weight=np.ones(59))
