"""The ESMM paper's baselines: SVM without class weights, FSVM, B-FSVM, MatMHKS (SPEC section 6).

Expected values: memberships worked out by hand; LIBSVM (``libsvm-official``) against
scikit-learn's ``SVC`` (the same solver with instance weights), each stopping at
tol = 1e-3, so decision values agree to 5e-3; B-FSVM against the doubled training set
built by hand; MatMHKS on a separable toy problem.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

from eemrepro.models import BFSVM, FSVM, SVM, EntropyFuzzySVM, MatMHKS, entropy_fuzzy_membership
from eemrepro.models._fuzzy_svm import _lin_wang_membership

from tests.helpers import make_imbalanced


@pytest.fixture
def data():
    X, y = make_classification(n_samples=120, n_features=6, weights=[0.75], class_sep=0.8, random_state=0)
    return (X - X.min(0)) / (X.max(0) - X.min(0)), y


def test_lin_wang_membership_by_hand():
    # Class -1 at 0, 1, 2 (mean 1, radius 1); class +1 at 10, 14 (mean 12, radius 2).
    X = np.array([[0.0], [1.0], [2.0], [10.0], [14.0]])
    t = np.array([-1.0, -1.0, -1.0, 1.0, 1.0])
    np.testing.assert_allclose(_lin_wang_membership(X, t, delta=1e-6),
                               [1 - 1 / (1 + 1e-6), 1.0, 1 - 1 / (1 + 1e-6), 1 - 2 / (2 + 1e-6), 1 - 2 / (2 + 1e-6)])


def test_unit_weights_give_the_plain_svm(data):
    # sample_weight = 1 trains through scikit-learn's SVC, none through libsvm-official.
    X, y = data
    plain = SVM(C=10.0, gamma=2.0, balanced=False).fit(X, y)
    weighted = SVM(C=10.0, gamma=2.0, balanced=False).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_allclose(weighted.decision_function(X), plain.decision_function(X), atol=5e-3)


def test_balanced_false_is_svc_without_class_weights(data):
    X, y = data
    ours = SVM(C=3.0, gamma=1.5, balanced=False).fit(X, y).decision_function(X)
    ref = SVC(C=3.0, gamma=1.5).fit(X, y).decision_function(X)
    np.testing.assert_allclose(ours, ref, atol=5e-3)
    balanced = SVM(C=3.0, gamma=1.5).fit(X, y).decision_function(X)
    assert np.abs(balanced - ours).max() > 0.05  # the class weights do change the model here


def test_fsvm_is_the_svm_weighted_by_its_memberships(data):
    X, y = data
    fsvm = FSVM(C=10.0, gamma=2.0).fit(X, y)
    t = np.where(y == fsvm.pos_label_, 1.0, -1.0)
    s = _lin_wang_membership(X, t, 1e-6)
    np.testing.assert_array_equal(fsvm.memberships_, s)
    ref = SVC(C=10.0, gamma=2.0).fit(X, y, sample_weight=s).decision_function(X)
    np.testing.assert_allclose(fsvm.decision_function(X), ref, atol=5e-3)


def test_bfsvm_is_the_doubled_training_set(data):
    X, y = data
    bfsvm = BFSVM(C=10.0, gamma=2.0).fit(X, y)
    t = np.where(y == bfsvm.pos_label_, 1.0, -1.0)
    m = LogisticRegression().fit(X, t).predict_proba(X)[:, 1]
    np.testing.assert_allclose(bfsvm.memberships_, m)
    X2, t2, w2 = np.vstack([X, X]), np.r_[np.ones(len(y)), -np.ones(len(y))], np.r_[m, 1 - m]
    ref = SVC(C=10.0, gamma=2.0).fit(X2, t2, sample_weight=w2).decision_function(X)
    sign = 1.0 if bfsvm.pos_label_ == bfsvm.classes_[1] else -1.0
    np.testing.assert_allclose(bfsvm.decision_function(X), sign * ref, atol=5e-3)


def test_bfsvm_prior_corrected_membership_is_the_equal_prior_posterior():
    # Expected: Bayes' rule with equal priors, written as the logistic fit's log-odds plus
    # log(n- / n+) (SPEC section 8's reading of B-FSVM on imbalanced data); the SVM on the
    # doubled set with those weights, fitted by scikit-learn's SVC.
    X, y = make_imbalanced(n=300, d=4, ratio=0.1, seed=4)
    clf = BFSVM(C=10.0, gamma=2.0, membership="prior-corrected").fit(X, y)
    t = np.where(y == clf.pos_label_, 1.0, -1.0)
    logit = LogisticRegression().fit(X, t).decision_function(X)
    expected = 1.0 / (1.0 + np.exp(-(logit + np.log(np.sum(t < 0) / np.sum(t > 0)))))
    np.testing.assert_allclose(clf.memberships_, expected, rtol=1e-9)
    plain = BFSVM(C=10.0, gamma=2.0).fit(X, y).memberships_
    # The logistic probability is below 1/2 for most positives on a 1:9 set; corrected, it is not.
    assert np.mean(plain[t > 0] > 0.5) < 0.5 < np.mean(clf.memberships_[t > 0] > 0.5)
    X2, t2 = np.vstack([X, X]), np.r_[np.ones(len(y)), -np.ones(len(y))]
    ref = SVC(C=10.0, gamma=2.0).fit(X2, t2, sample_weight=np.r_[expected, 1 - expected]).decision_function(X)
    sign = 1.0 if clf.pos_label_ == clf.classes_[1] else -1.0
    np.testing.assert_allclose(clf.decision_function(X), sign * ref, atol=5e-3)
    with pytest.raises(ValueError, match="'membership' must be 'logistic' or 'prior-corrected'"):
        BFSVM(membership="balanced").fit(X, y)


def test_entropy_fuzzy_svm_is_the_svm_weighted_by_the_memberships(data):
    X, y = data
    clf = EntropyFuzzySVM(C=10.0, gamma=2.0, n_neighbors=5).fit(X, y)
    s = entropy_fuzzy_membership(X, y, 5)
    np.testing.assert_array_equal(clf.memberships_, s)
    assert s.min() < 1.0
    ref = SVC(C=10.0, gamma=2.0).fit(X, y, sample_weight=s).decision_function(X)
    np.testing.assert_allclose(clf.decision_function(X), ref, atol=5e-3)


def test_matmhks_separates_a_separable_problem():
    rng = np.random.RandomState(3)
    X = rng.uniform(-1, 1, size=(100, 6))
    score = X[:, 0] + X[:, 1] - X[:, 3] - X[:, 4]  # u = (1, -1), v = (1, 1, 0) on the 2 x 3 reading
    keep = np.abs(score) > 0.3  # a margin
    X, y = X[keep], (score[keep] > 0).astype(int)
    clf = MatMHKS(c=1.0).fit(X, y)
    assert clf.shape_ == (2, 3)
    assert clf.score(X, y) == 1.0
    # The learned rank-one weights point along the true ones.
    W = np.outer(clf.u_, clf.v_)
    truth = np.outer([1, -1], [1, 1, 0])
    assert np.sum(W * truth) / (np.linalg.norm(W) * np.linalg.norm(truth)) > 0.9


def test_bad_input(data):
    X, y = data
    with pytest.raises(ValueError, match="r \\* c must equal"):
        MatMHKS(shape=(4, 2)).fit(X, y)
    with pytest.raises(ValueError, match="'rho'"):
        MatMHKS(rho=1.0).fit(X, y)
    with pytest.raises(ValueError, match="'balanced'"):
        SVM(balanced="yes").fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        FSVM().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="sample_weight"):
        SVM().fit(X, y, sample_weight=-np.ones(len(y)))
