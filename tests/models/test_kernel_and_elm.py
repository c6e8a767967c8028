"""WELM, LS-SVM and SVM against independent solvers."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from eemrepro.models import LSSVM, SVM, WELM
from eemrepro.models._lssvm import _lssvm_direct

from tests.helpers import make_imbalanced


def _weights(t):
    n_pos, n_neg = (t > 0).sum(), (t < 0).sum()
    return np.where(t > 0, max(n_pos, n_neg) / n_pos, max(n_pos, n_neg) / n_neg)


@pytest.mark.parametrize("activation,h", [("sig", 30), ("rbf", 30), ("rbf", 400)])
def test_welm_matches_weighted_lstsq(activation, h, small_chunks):
    # Expected: numpy.linalg.lstsq (min-norm, SVD) of sqrt(w) * H against sqrt(w) * t.
    X, y = make_imbalanced(n=180, d=5, seed=20)
    est = WELM(n_hidden=h, activation=activation, random_state=0).fit(X, y)
    Z = X @ est.hidden_weights_.T
    if activation == "sig":
        H = 1 / (1 + np.exp(-Z + est.hidden_biases_))
    else:
        sq = ((X[:, None, :] - est.hidden_weights_[None]) ** 2).sum(-1)
        H = np.exp(-est.hidden_biases_ * sq)
    t = np.where(y == est.pos_label_, 1.0, -1.0)
    s = np.sqrt(_weights(t))
    beta = np.linalg.lstsq(s[:, None] * H, s * t, rcond=None)[0]
    np.testing.assert_allclose(H @ est.beta_, H @ beta, rtol=1e-6, atol=1e-8)
    if h < X.shape[0]:
        np.testing.assert_allclose(est.beta_, beta, rtol=1e-6, atol=1e-9 * np.abs(beta).max())
    else:
        # h > N: the minimum-norm interpolant, so the norms agree too.
        assert np.linalg.norm(est.beta_) == pytest.approx(np.linalg.norm(beta), rel=1e-6)


def test_lssvm_matches_bordered_system_and_c_path():
    X, y = make_imbalanced(n=120, d=4, seed=21)
    Cs = [0.1, 1.0, 10.0, 1000.0]
    path = LSSVM(gamma=2.0).fit_path(X, y, C=Cs)
    t = np.where(y == 1, 1.0, -1.0)
    K = rbf_kernel(X, gamma=2.0)
    for C, model in zip(Cs, path, strict=False):
        # Expected: scipy.linalg.solve of [[0, 1^T], [1, K + diag(1/(C w))]].
        alpha, b = _lssvm_direct(K, t, _weights(t), C)
        single = LSSVM(C=C, gamma=2.0).fit(X, y)
        for est in (model, single):
            np.testing.assert_allclose(est.dual_coef_, alpha, rtol=1e-7, atol=1e-9 * np.abs(alpha).max())
            assert est.intercept_ == pytest.approx(b, rel=1e-7, abs=1e-9)
        assert abs(model.dual_coef_.sum()) < 1e-8 * np.abs(model.dual_coef_).sum()
        np.testing.assert_allclose(model.decision_function(X), K @ alpha + b, rtol=1e-7, atol=1e-9)


def test_lssvm_single_fit_is_a_cholesky_solve_with_eigen_fallback(monkeypatch):
    # A single C needs no eigendecomposition (Table 5 times this fit); when the
    # Cholesky factorisation fails (K + D not numerically PD) the eigen path
    # takes over. Expected: scipy.linalg.solve of the bordered system.
    from scipy import linalg

    from eemrepro.models import _lssvm

    X, y = make_imbalanced(n=90, d=3, seed=23)
    t = np.where(y == 1, 1.0, -1.0)
    alpha, b = _lssvm_direct(rbf_kernel(X, gamma=0.7), t, _weights(t), 50.0)

    def no_eigh(*args, **kwargs):
        raise AssertionError("a single-C fit must not decompose K")

    with monkeypatch.context() as m:
        m.setattr(_lssvm, "_LSSVMEigenPath", no_eigh)
        est = LSSVM(C=50.0, gamma=0.7).fit(X, y)
    np.testing.assert_allclose(est.dual_coef_, alpha, rtol=1e-7, atol=1e-9 * np.abs(alpha).max())

    def not_pd(*args, **kwargs):
        raise linalg.LinAlgError("not positive definite")

    monkeypatch.setattr(_lssvm.linalg, "cho_factor", not_pd)
    est = LSSVM(C=50.0, gamma=0.7).fit(X, y)
    np.testing.assert_allclose(est.dual_coef_, alpha, rtol=1e-7, atol=1e-9 * np.abs(alpha).max())
    assert est.intercept_ == pytest.approx(b, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("C,gamma", [(1.0, 0.5), (100.0, 5.0), (10.0, 0.05)])
def test_svm_agrees_with_sklearn_svc(C, gamma):
    # Expected: sklearn.svm.SVC (its own LIBSVM build) with the same class weights.
    X, y = make_imbalanced(n=200, d=4, seed=22, shift=0.5)
    t = np.where(y == 1, 1.0, -1.0)
    w = _weights(t)
    ref = SVC(C=C, gamma=gamma, class_weight={1: w[t > 0][0], -1: w[t < 0][0]}).fit(X, y)
    est = SVM(C=C, gamma=gamma).fit(X, y)
    # The comparison needs a unique optimum: with no free support vector
    # (all at their bound C w_i) any intercept in an interval is optimal and
    # the two LIBSVM builds may pick different ones.
    bound = C * w[est.support_]
    assert np.any(np.abs(est.dual_coef_) < bound * (1 - 1e-6))
    assert np.mean(est.predict(X) == ref.predict(X)) >= 0.99
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), atol=5e-3 * max(1.0, C))
    assert abs(len(est.support_) - len(ref.support_)) <= 2


def test_svm_handles_label_order():
    # LIBSVM orients its decision by the first label it sees; ours follows classes_.
    X, y = make_imbalanced(n=100, d=3, seed=23)
    order = np.argsort(-y)  # +1 rows first, then -1
    a = SVM(C=10, gamma=1.0).fit(X, y)
    b = SVM(C=10, gamma=1.0).fit(X[order], y[order])
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)
    assert np.mean(a.predict(X) == y) > 0.8


def test_svm_cache_size_reaches_libsvm_and_changes_nothing_else(monkeypatch):
    # Expected: LIBSVM stores kernel columns as the same floats whether they are
    # cached or recomputed, so a 0.01 MB cache (far below the 0.16 MB kernel:
    # columns are evicted and recomputed) and a 50 MB one give bit-identical solutions.
    from libsvm import svmutil

    X, y = make_imbalanced(n=200, d=4, seed=24, shift=0.5)
    seen = []
    train = svmutil.svm_train
    # SVM passes svm_train a problem and an svm_parameter (whose print function it reads).
    monkeypatch.setattr(svmutil, "svm_train", lambda *a: seen.append(a[-1].cache_size) or train(*a))
    small = SVM(C=100.0, gamma=5.0, cache_size=0.01).fit(X, y)
    large = SVM(C=100.0, gamma=5.0, cache_size=50).fit(X, y)
    assert seen == [0.01, 50.0]
    np.testing.assert_array_equal(small.support_, large.support_)
    np.testing.assert_array_equal(small.dual_coef_, large.dual_coef_)
    assert small.intercept_ == large.intercept_
