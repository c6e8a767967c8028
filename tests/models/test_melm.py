"""MELM, its baseline projections and the KDE classifier (SPEC section 5).

Expected numbers come from independent computations: central finite
differences (gradients), ``scipy.integrate`` over the explicit KDE densities
(D_CS), explicit pair sums with ``scipy.special.logsumexp``, ``numpy`` /
``scipy`` eigen-solvers on hand-built covariances (baselines), and
``scipy.stats.multivariate_normal`` (the KDE classifier).
"""

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.stats
from scipy.special import logsumexp
from sklearn.decomposition import PCA

from eemrepro.models import GEM, MELM, ClassPCA, KDEClassifier, PerClassPCA, TwoEllipsoidPCA
from eemrepro.models._melm import _dcs, _kde_covariances, _log_ip, _melm_objective


def _two_classes(rng, n_pos=30, n_neg=25, d=5, shift=0.7):
    X_pos = rng.normal(size=(n_pos, d))
    X_neg = rng.normal(size=(n_neg, d)) * rng.uniform(0.5, 1.5, size=d) + shift
    return X_pos, X_neg


def _numerical_gradient(f, V, h=1e-6):
    grad = np.zeros_like(V)
    for idx in np.ndindex(V.shape):
        step = np.zeros_like(V)
        step[idx] = h
        grad[idx] = (f(V + step) - f(V - step)) / (2 * h)
    return grad


@pytest.mark.parametrize("d, k, gamma, covariance, n_classes", [
    (5, 2, 1.0, "ledoit-wolf", 2),
    (6, 2, 0.5, "empirical", 2),
    (7, 3, 2.0, "ledoit-wolf", 2),
    (4, 1, 1.0, "empirical", 2),
    (5, 2, 1.0, "ledoit-wolf", 3),
])
def test_gradient_matches_finite_differences(d, k, gamma, covariance, n_classes):
    rng = np.random.RandomState(d * 10 + k)
    classes = [rng.normal(size=(20 + 3 * c, d)) * rng.uniform(0.5, 1.5, size=d) + 0.6 * c
               for c in range(n_classes)]
    widths = _kde_covariances(classes, gamma, k, covariance)
    V = rng.normal(size=(d, k))
    value, grad = _melm_objective(V, classes, widths, chunk=7)  # several blocks per pair
    numeric = _numerical_gradient(lambda W: _melm_objective(W, classes, widths)[0], V)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(numeric).max()))
    # The blocked sum does not depend on the block size.
    assert value == pytest.approx(_melm_objective(V, classes, widths, chunk=1000)[0], rel=1e-12)


@pytest.mark.slow
def test_dcs_matches_numerical_integration_of_the_two_kdes():
    rng = np.random.RandomState(3)
    X_pos, X_neg = _two_classes(rng, n_pos=6, n_neg=5, d=3, shift=1.0)
    k, gamma = 2, 1.0
    V = rng.normal(size=(3, k))
    # The KDE of each projected class, built independently of eemrepro: Silverman's
    # h^2 = (4/(k+2))^(2/(k+4)) n^(-2/(k+4)) times the (biased) projected covariance.
    densities, spread = [], 0.0
    for X in (X_pos, X_neg):
        P = X @ V
        h2 = gamma**2 * (4 / (k + 2)) ** (2 / (k + 4)) * X.shape[0] ** (-2 / (k + 4))
        cov = h2 * np.cov(P, rowvar=False, bias=True)
        spread = max(spread, np.sqrt(np.diag(cov).max()))
        inv, norm = np.linalg.inv(cov), 1 / (2 * np.pi * np.sqrt(np.linalg.det(cov)))

        def density(x, y, P=P, inv=inv, norm=norm):
            r = np.array([x, y]) - P
            return norm * np.mean(np.exp(-0.5 * np.einsum("ij,jk,ik->i", r, inv, r)))

        densities.append(density)
    P_all = np.r_[X_pos, X_neg] @ V
    # Ten kernel standard deviations past the outermost points: the tails left out are < 1e-20.
    lo, hi = P_all.min(axis=0) - 10 * spread, P_all.max(axis=0) + 10 * spread

    def integral(f):
        return scipy.integrate.dblquad(lambda y, x: f(x, y), lo[0], hi[0], lo[1], hi[1], epsabs=1e-12,
                                       epsrel=1e-9)[0]

    f_pos, f_neg = densities
    ip_pp = integral(lambda x, y: f_pos(x, y) ** 2)
    ip_nn = integral(lambda x, y: f_neg(x, y) ** 2)
    ip_pn = integral(lambda x, y: f_pos(x, y) * f_neg(x, y))
    expected = np.log(ip_pp) + np.log(ip_nn) - 2 * np.log(ip_pn)
    widths = _kde_covariances([X_pos, X_neg], gamma, k, "empirical")
    assert _dcs(V, [X_pos, X_neg], widths)[0] == pytest.approx(expected, rel=1e-5)


def test_log_ip_stays_finite_when_every_cross_pair_is_far_apart():
    # Classes 60 kernel widths apart: every cross term exp(-q/2) underflows to 0 in
    # float64, so the shifted sum must still give log ip = logsumexp of the exponents.
    rng = np.random.RandomState(0)
    A = rng.normal(size=(9, 3)) * 0.01
    B = rng.normal(size=(7, 3)) * 0.01 + np.array([60.0, 0, 0])
    sigma = np.eye(3) * 1e-3
    V = np.eye(3)[:, :2]
    value, _ = _log_ip(V, A, B, sigma, chunk=4)
    S = np.linalg.inv(V.T @ sigma @ V)
    diffs = (A @ V)[:, None, :] - (B @ V)[None, :, :]
    q = np.einsum("abi,ij,abj->ab", diffs, S, diffs)
    assert np.all(np.exp(-q / 2) == 0.0)
    expected = (-np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(V.T @ sigma @ V)[1] - np.log(9 * 7)
                + logsumexp(-q / 2))
    assert value == pytest.approx(expected, rel=1e-12)


def test_dcs_is_invariant_to_an_invertible_change_of_basis():
    rng = np.random.RandomState(1)
    classes = list(_two_classes(rng))
    widths = _kde_covariances(classes, 1.0, 2, "ledoit-wolf")
    V = rng.normal(size=(5, 2))
    M = rng.normal(size=(2, 2))
    assert abs(np.linalg.det(M)) > 0.1
    assert _dcs(V @ M, classes, widths)[0] == pytest.approx(_dcs(V, classes, widths)[0], rel=1e-10)


def test_melm_finds_a_low_variance_discriminative_direction_pca_misses():
    # Features 0-2: large shared noise; feature 3: small variance, the classes 4 of its
    # standard deviations apart. PCA keeps the noise, MELM the separating direction.
    rng = np.random.RandomState(0)
    n = 120
    X = rng.normal(size=(n, 5)) * np.array([3.0, 2.5, 2.0, 0.1, 0.1])
    y = np.arange(n) % 2
    X[y == 1, 3] += 0.4
    melm = MELM(n_starts=4, random_state=0).fit(X, y)
    classes = [X[y == 1], X[y == 0]]
    widths = _kde_covariances(classes, 1.0, 2, "ledoit-wolf")
    pca_dcs = _dcs(PCA(n_components=2).fit(X).components_.T, classes, widths)[0]
    assert melm.dcs_ > pca_dcs + 0.5  # 0.81 against 0.16 when written
    assert np.linalg.norm(melm.components_[:, 3]) > 0.95  # the separating axis lies in the plane
    # The reported D_CS is the one of the returned (orthonormal) basis.
    assert melm.dcs_ == pytest.approx(_dcs(melm.components_.T, [X[y == 0], X[y == 1]], widths[::-1])[0],
                                      rel=1e-8)
    np.testing.assert_allclose(melm.components_ @ melm.components_.T, np.eye(2), atol=1e-12)
    assert melm.start_dcs_.shape == (4,) and melm.dcs_ == pytest.approx(melm.start_dcs_.max(), rel=0.05)
    np.testing.assert_allclose(melm.transform(X), (X - X.mean(axis=0)) @ melm.components_.T)


def test_melm_is_reproducible_and_seeded():
    rng = np.random.RandomState(2)
    X = rng.uniform(size=(60, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    a = MELM(n_starts=3, random_state=5).fit(X, y)
    b = MELM(n_starts=3, random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.components_, b.components_)


def _exact_sample(covariance, rotation, mean, copies=1):
    """Points whose mean and (biased) covariance are exactly ``mean`` and R diag(covariance) R^T."""
    d = len(covariance)
    axes = [s * np.sqrt(d * lam) * rotation[:, i] for i, lam in enumerate(covariance) for s in (1, -1)]
    return np.tile(np.array(axes) + mean, (copies, 1))


@pytest.fixture
def known_covariances():
    rng = np.random.RandomState(4)
    R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    # Class 0 (3 times as many points): cov R diag(1, 3, 0.1) R^T; class 1: R diag(5, 0.5, 0.2) R^T.
    # Weighted sum (3 A + B) / 4 = R diag(2, 2.375, 0.125) R^T: leading axis R e2.
    # Unweighted sum A + B = R diag(6, 3.5, 0.3) R^T: leading axis R e1.
    X0 = _exact_sample([1, 3, 0.1], R, np.array([0.0, 0, 0]), copies=3)
    X1 = _exact_sample([5, 0.5, 0.2], R, np.array([1.0, 2, 3]))
    X = np.r_[X0, X1]
    y = np.r_[np.zeros(len(X0)), np.ones(len(X1))]
    return X, y, R


def _same_axis(u, v):
    return abs(abs(np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v)) - 1) < 1e-10


def test_cpca_2epca_ppca_on_known_covariances(known_covariances):
    X, y, R = known_covariances
    assert _same_axis(ClassPCA(n_components=1).fit(X, y).components_[0], R[:, 1])
    assert _same_axis(TwoEllipsoidPCA(n_components=1).fit(X, y).components_[0], R[:, 0])
    two = ClassPCA(n_components=2).fit(X, y).components_
    assert _same_axis(two[0], R[:, 1]) and _same_axis(two[1], R[:, 0])
    per_class = PerClassPCA().fit(X, y).components_
    # One column per class: class 0's first component is R e2, class 1's is R e1.
    assert _same_axis(per_class[0], R[:, 1]) and _same_axis(per_class[1], R[:, 0])
    np.testing.assert_allclose(np.linalg.norm(per_class, axis=1), 1.0)


def test_gem_against_generalized_eigenproblems():
    rng = np.random.RandomState(5)
    X = rng.normal(size=(80, 4)) * np.array([1.0, 0.5, 2.0, 1.0])
    y = np.arange(80) % 2
    X[y == 1] *= np.array([2.0, 0.3, 1.0, 1.0])
    gamma = 0.5
    gem = GEM(gamma=gamma).fit(X, y)
    S = [X[y == c].T @ X[y == c] / np.count_nonzero(y == c) for c in (0, 1)]
    for row, (i, j) in zip(gem.components_, [(0, 1), (1, 0)], strict=True):
        b = S[j] + gamma * np.eye(4)
        _, vectors = scipy.linalg.eigh(S[i], b)
        assert _same_axis(row, vectors[:, -1])
        # Independently: the top eigenvector of the non-symmetric (S_j + gamma I)^-1 S_i.
        values, vecs = np.linalg.eig(np.linalg.solve(b, S[i]))
        assert _same_axis(row, np.real(vecs[:, np.argmax(np.real(values))]))


def test_kde_classifier_against_explicit_gaussian_mixtures():
    rng = np.random.RandomState(6)
    X = np.r_[rng.normal(0, 1, (30, 2)), rng.normal(1.5, 0.7, (20, 2))]
    y = np.r_[np.zeros(30), np.ones(20)]
    X_test = rng.normal(0.7, 1.2, (15, 2))
    for bandwidth in (0.5, 2.0):
        clf = KDEClassifier(bandwidth=bandwidth).fit(X, y)
        log_d = []
        for c in (0, 1):
            Xc = X[y == c]
            n, k = Xc.shape
            silverman = (n * (k + 2) / 4.0) ** (-1.0 / (k + 4))
            cov = (silverman * bandwidth) ** 2 * np.cov(Xc, rowvar=False)  # gaussian_kde: unbiased covariance
            dens = np.mean([scipy.stats.multivariate_normal(x, cov).pdf(X_test) for x in Xc], axis=0)
            log_d.append(np.log(dens))
        expected = log_d[1] - log_d[0]
        np.testing.assert_allclose(clf.decision_function(X_test), expected, rtol=1e-9)
        np.testing.assert_array_equal(clf.predict(X_test), (expected > 0).astype(float))
        np.testing.assert_allclose(clf.predict_proba(X_test)[:, 1], 1 / (1 + np.exp(-expected)), rtol=1e-9)
        # And scipy's gaussian_kde with the same factor gives the same densities.
        for c in (0, 1):
            kde = scipy.stats.gaussian_kde(X[y == c].T)
            kde.set_bandwidth(kde.silverman_factor() * bandwidth)
            np.testing.assert_allclose(clf._log_densities(X_test)[:, c], kde.logpdf(X_test.T), rtol=1e-9)
        assert not clf.regularized_.any()


@pytest.mark.parametrize("estimator", [MELM(n_starts=1), ClassPCA(), GEM(), PerClassPCA(), TwoEllipsoidPCA()])
def test_projections_reject_one_class(estimator):
    X = np.random.RandomState(0).uniform(size=(10, 4))
    with pytest.raises(ValueError, match="only one class"):
        estimator.fit(X, np.zeros(10))


def test_melm_bad_input():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(20, 3))
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match=r"n_components=4 must be at most the number of features \(n_features = 3\)"):
        MELM(n_components=4).fit(X, y)
    # k = d (the paper's fourclass): the whole space, the identity basis, no optimisation.
    full = MELM(n_components=3).fit(X, y)
    np.testing.assert_array_equal(np.abs(full.components_), np.eye(3))
    assert full.n_iter_ == 0
    y_single = np.r_[np.zeros(19), 1]
    with pytest.raises(ValueError, match="has 1 sample"):
        MELM(n_starts=1).fit(X, y_single)
    X_const = X.copy()
    X_const[:, 1] = 0.5
    X_const[:, 2] = 0.1
    with pytest.raises(ValueError, match=r"only 1 feature\(s\) vary in the training data \(constant: \[1, 2\]\)"):
        MELM(n_starts=1).fit(X_const, y)
    with pytest.raises(ValueError, match="covariance"):
        MELM(covariance="shrunk").fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        MELM(gamma=0.0).fit(X, y)


def test_a_constant_feature_gets_a_zero_loading_and_changes_nothing_else():
    # ionosphere's second feature is all zeros: MELM on the other features, padded with 0.
    rng = np.random.RandomState(7)
    X = rng.uniform(size=(60, 4))
    y = (X[:, 0] + 0.5 * X[:, 2] > 0.8).astype(int)
    X_const = np.insert(X, 1, 0.0, axis=1)
    with_const = MELM(n_starts=3, random_state=0).fit(X_const, y)
    without = MELM(n_starts=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(with_const.constant_features_, [1])
    np.testing.assert_array_equal(with_const.components_[:, 1], 0.0)
    np.testing.assert_allclose(np.delete(with_const.components_, 1, axis=1), without.components_, atol=1e-12)
    assert with_const.dcs_ == pytest.approx(without.dcs_, rel=1e-12)


def test_kde_classifier_on_a_class_with_a_constant_feature():
    # scipy's gaussian_kde refuses a singular covariance (ionosphere's raw data has an
    # all-zero feature); here the kernel gets a small ridge and still predicts.
    rng = np.random.RandomState(1)
    X = np.c_[rng.normal(size=(40, 2)), np.zeros(40)]
    X[20:, :2] += 3.0
    y = np.r_[np.zeros(20), np.ones(20)]
    with pytest.raises(np.linalg.LinAlgError):
        scipy.stats.gaussian_kde(X[y == 0].T)
    clf = KDEClassifier().fit(X, y)
    assert clf.regularized_.all()
    assert (clf.predict(X) == y).mean() > 0.95
    # On the varying features the ridge (1e-6 of the mean variance) changes the density
    # ratio only slightly: the same decisions as a KDE of the first two features.
    plain = KDEClassifier().fit(X[:, :2], y)
    np.testing.assert_array_equal(clf.predict(X), plain.predict(X[:, :2]))


def test_kde_classifier_bad_input():
    with pytest.raises(ValueError, match="has 1 sample"):
        KDEClassifier().fit(np.random.RandomState(0).normal(size=(5, 2)), [0, 0, 0, 0, 1])
