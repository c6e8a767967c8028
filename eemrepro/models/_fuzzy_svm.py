"""Fuzzy SVMs, the ESMM paper's baselines (SPEC section 6).

FSVM (Lin & Wang 2002) weights each point by its distance from its class mean;
B-FSVM (Wang, Wang & Lai 2005) enters every point twice, once per class, with
memberships from a logistic regression. Both train the RBF C-SVC of ``SVM`` with
per-sample weights and no class weights. ``EntropyFuzzySVM`` (not in the papers)
weights the same SVM by ESMM's entropy-based memberships.
"""

import numbers

import numpy as np
from scipy.special import expit, logit
from sklearn.linear_model import LogisticRegression

from ._base import _check_number
from ._fuzzy import _EntropyMembershipMixin
from ._svm import SVM

__all__ = ["FSVM", "BFSVM", "EntropyFuzzySVM"]


def _lin_wang_membership(X, t, delta):
    """s_i = 1 - ||x_i - mean of its class|| / (radius of its class + delta)."""
    s = np.empty(X.shape[0])
    for label in (-1.0, 1.0):
        members = t == label
        distances = np.linalg.norm(X[members] - X[members].mean(axis=0), axis=1)
        s[members] = 1.0 - distances / (distances.max() + delta)
    return s


class FSVM(SVM):
    """Fuzzy SVM (Lin & Wang 2002): the RBF C-SVC with distance-to-class-mean memberships.

    Point i's C is C s_i with s_i = 1 - ||x_i - xbar_{y_i}|| / (r_{y_i} + delta),
    r the class radius (largest distance from the class mean); no class weights.

    Parameters
    ----------
    C : float, default=1.0
    gamma : float, default=1.0
        The kernel is exp(-gamma ||x - y||^2) (the ESMM paper's 1 / sigma^2).
    delta : float, default=1e-6
        Keeps the farthest point's membership positive.
    cache_size : float, default=100

    Attributes
    ----------
    memberships_ : ndarray of shape (n_samples,)
    classes_, pos_label_, support_, support_vectors_, dual_coef_, intercept_
        As in ``SVM``.

    References
    ----------
    C.-F. Lin and S.-D. Wang, "Fuzzy support vector machines", IEEE TNN 13 (2002) 464-471.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from eemrepro.models import FSVM
    >>> X, y = make_moons(n_samples=100, noise=0.1, random_state=0)
    >>> clf = FSVM(C=10.0, gamma=2.0).fit(X, y)
    >>> float(clf.memberships_.min()) > 0, float(clf.score(X, y)) > 0.9
    (True, True)
    """

    balanced = False  # no class weights (SPEC section 6); not a parameter

    def __init__(self, C=1.0, gamma=1.0, delta=1e-6, cache_size=100):
        self.C = C
        self.gamma = gamma
        self.delta = delta
        self.cache_size = cache_size

    def _check_params(self):
        super()._check_params()
        _check_number(self, "delta", numbers.Real, low=0, low_open=True)

    def _weighted_training_set(self, X, t, sample_weight):
        self.memberships_ = _lin_wang_membership(X, t, self.delta)
        given = super()._weighted_training_set(X, t, sample_weight)
        return X, t, self.memberships_ * (1.0 if given is None else given[2])


class BFSVM(SVM):
    """Bilateral-weighted fuzzy SVM (Wang, Wang & Lai 2005).

    Every training point enters twice: as the positive (minority) class with
    weight m_i and as the negative class with weight 1 - m_i, m_i being a
    logistic regression's probability of the positive class fitted on the
    training data (their "basic credit scoring" membership). The RBF C-SVC is
    trained on the 2n weighted points; no class weights.

    On imbalanced data that probability is below 1/2 for almost every positive.
    ``membership="prior-corrected"`` (a reading, SPEC section 8) divides its odds
    by the training part's class odds, m / (1 - m) -> (m / (1 - m)) (n- / n+):
    the posterior under equal class priors (Bayes' rule with the priors
    swapped; Saerens, Latinne & Decaestecker 2002).

    Parameters
    ----------
    C : float, default=1.0
    gamma : float, default=1.0
    cache_size : float, default=100
    membership : {"logistic", "prior-corrected"}, default="logistic"

    Attributes
    ----------
    memberships_ : ndarray of shape (n_samples,)
        m_i, the probability of the positive class.
    support_ : ndarray of shape (n_SV,)
        Indices into the doubled training set (i and n + i are point i).
    classes_, pos_label_, support_vectors_, dual_coef_, intercept_
        As in ``SVM``.

    References
    ----------
    Y. Wang, S. Wang and K. K. Lai, "A new fuzzy support vector machine to
    evaluate credit risk", IEEE TFS 13 (2005) 820-831.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from eemrepro.models import BFSVM
    >>> X, y = make_moons(n_samples=100, noise=0.1, random_state=0)
    >>> float(BFSVM(C=10.0, gamma=2.0).fit(X, y).score(X, y)) > 0.85
    True
    """

    balanced = False

    def __init__(self, C=1.0, gamma=1.0, cache_size=100, membership="logistic"):
        self.C = C
        self.gamma = gamma
        self.cache_size = cache_size
        self.membership = membership

    def _check_params(self):
        super()._check_params()
        if self.membership not in ("logistic", "prior-corrected"):
            raise ValueError("BFSVM: parameter 'membership' must be 'logistic' or 'prior-corrected', "
                             f"got {self.membership!r}.")

    def _weighted_training_set(self, X, t, sample_weight):
        given = super()._weighted_training_set(X, t, sample_weight)
        s = 1.0 if given is None else given[2]
        m = LogisticRegression().fit(X, t).predict_proba(X)[:, 1]  # classes [-1, 1]: column 1 is +1
        if self.membership == "prior-corrected":  # the log-odds shifted by log(n- / n+)
            m = expit(logit(m) + np.log(np.sum(t < 0) / np.sum(t > 0)))
        self.memberships_ = m
        n = X.shape[0]
        return (np.vstack([X, X]), np.r_[np.ones(n), -np.ones(n)], np.r_[m * s, (1.0 - m) * s])


class EntropyFuzzySVM(_EntropyMembershipMixin, SVM):
    """The RBF C-SVC weighted by ESMM's entropy-based fuzzy memberships (not in the papers).

    Point i's C is C s_i, s_i = ``entropy_fuzzy_membership`` of the training data
    (1 for the minority class, 1 - alpha (j - 1) for a majority point in entropy
    bin j): what ESMM does to SMM, done to the SVM, to see whether the weights
    help a kernel machine too.

    Parameters
    ----------
    C : float, default=1.0
    gamma : float, default=1.0
    balanced : bool, default=False
        Class weights as ``SVM``'s on top of the memberships.
    n_neighbors : int, default=10
    n_bins : int, default=10
    alpha : float, default=0.05
    membership_order : {"text", "literal"}, default="text"
    cache_size : float, default=100

    Attributes
    ----------
    memberships_ : ndarray of shape (n_samples,)
    classes_, pos_label_, support_, support_vectors_, dual_coef_, intercept_
        As in ``SVM``.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from eemrepro.models import EntropyFuzzySVM
    >>> X, y = make_classification(n_samples=120, weights=[0.8], random_state=0)
    >>> clf = EntropyFuzzySVM(C=10.0, gamma=0.1, n_neighbors=5).fit(X, y)
    >>> float(clf.memberships_.min()) >= 0.55
    True
    """

    def __init__(self, C=1.0, gamma=1.0, balanced=False, n_neighbors=10, n_bins=10, alpha=0.05,
                 membership_order="text", cache_size=100):
        self.C = C
        self.gamma = gamma
        self.balanced = balanced
        self.n_neighbors = n_neighbors
        self.n_bins = n_bins
        self.alpha = alpha
        self.membership_order = membership_order
        self.cache_size = cache_size

    def _weighted_training_set(self, X, t, sample_weight):
        given = super()._weighted_training_set(X, t, sample_weight)
        return X, t, self._memberships(X, t, None if given is None else given[2])
