"""Entropy-based fuzzy memberships (Zhu 2017, section 2.1; SPEC section 6).

Each training point's class certainty is the entropy of the class shares among
its k nearest other training points; the minority (positive) class gets
membership 1, the majority's points are binned by entropy into ``n_bins``
equal-width bins between their smallest and largest entropy, and bin j gets
1 - alpha (j - 1). The memberships are sample weights for any estimator.
"""

import numbers

import numpy as np
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_X_y

__all__ = ["entropy_fuzzy_membership"]


def _class_entropies(X, positive, n_neighbors):
    """H_i = -p+ ln p+ - p- ln p- over each point's k nearest *other* training points."""
    # kneighbors() without X leaves each point out of its own neighbours.
    neighbours = NearestNeighbors(n_neighbors=n_neighbors).fit(X).kneighbors(return_distance=False)
    p = positive[neighbours].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0) + np.where(p < 1, -(1 - p) * np.log(1 - p), 0.0)
    return terms


def _entropy_bins(H, n_bins, order):
    """Bin j (1-based) of each entropy, bin 1 the most certain ("text") or the least ("literal")."""
    h_min, h_max = H.min(), H.max()
    if h_max == h_min:
        return np.ones(H.shape[0], dtype=int)  # all equally certain: one bin, membership 1
    # The pseudo-code's bins (Low, Up] with Up = H_max - (k - 1)/m (H_max - H_min), numbered
    # from the highest entropy down; the same edges read from the lowest entropy up are the
    # text's order. H = H_min lies in no (Low, Up] of the pseudo-code: it joins the lowest bin.
    edges = h_max - np.arange(n_bins, 0, -1) / n_bins * (h_max - h_min)  # Low_m ... Low_1, ascending
    below = np.searchsorted(edges, H, side="left")  # number of Low edges strictly below H
    from_bottom = np.clip(below, 1, n_bins)  # 1 = the lowest-entropy bin
    return from_bottom if order == "text" else n_bins + 1 - from_bottom


def entropy_fuzzy_membership(X, y, n_neighbors, n_bins=10, alpha=0.05, order="text"):
    """Entropy-based fuzzy memberships of the training points (Zhu 2017, section 2.1).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled features (Euclidean neighbours).
    y : array-like of shape (n_samples,)
        Two classes; the smaller one is the positive (minority) class.
    n_neighbors : int
        k, the neighbours whose class shares give a point's entropy (the
        point itself excluded); 1 <= k < n_samples.
    n_bins : int, default=10
        m, the entropy bins of the negative class.
    alpha : float, default=0.05
        Membership step between bins: bin j gets 1 - alpha (j - 1); alpha (m - 1) < 1.
    order : {"text", "literal"}, default="text"
        "text": bin 1 holds the lowest entropies (the most certain negatives
        get 1, as the paper's text says); "literal": the paper's pseudo-code,
        bin 1 the highest entropies (SPEC section 6).

    Returns
    -------
    memberships : ndarray of shape (n_samples,)
        1 for positives; 1 - alpha (j - 1) for a negative in bin j.

    Examples
    --------
    >>> import numpy as np
    >>> from eemrepro.models import entropy_fuzzy_membership
    >>> X = np.array([[0.0], [0.1], [0.2], [0.7], [1.0], [1.1]])
    >>> y = np.array([0, 0, 0, 0, 1, 1])
    >>> entropy_fuzzy_membership(X, y, n_neighbors=3, n_bins=2, alpha=0.5)
    array([1. , 1. , 1. , 0.5, 1. , 1. ])
    """
    X, y = check_X_y(X, y, dtype=np.float64)
    check_classification_targets(y)
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if classes.shape[0] != 2:
        raise ValueError(f"entropy_fuzzy_membership needs two classes, got {classes.shape[0]}: "
                         f"{classes.tolist()!r}.")
    if not (isinstance(n_neighbors, numbers.Integral) and not isinstance(n_neighbors, bool)
            and 1 <= n_neighbors < X.shape[0]):
        raise ValueError(f"n_neighbors must be an integer in [1, n_samples - 1] = [1, {X.shape[0] - 1}] "
                         f"(the point itself is not its own neighbour), got {n_neighbors!r}.")
    if not (isinstance(n_bins, numbers.Integral) and n_bins >= 1):
        raise ValueError(f"n_bins must be an integer >= 1, got {n_bins!r}.")
    if not (isinstance(alpha, numbers.Real) and alpha > 0 and alpha * (n_bins - 1) < 1):
        raise ValueError(f"alpha must be in (0, 1/(n_bins - 1)) so every membership is positive, got {alpha!r} "
                         f"with n_bins={n_bins}.")
    if order not in ("text", "literal"):
        raise ValueError(f"order must be 'text' or 'literal', got {order!r}.")
    positive = codes == (0 if counts[0] < counts[1] else 1)  # ties: classes[1], as the EEM models
    H = _class_entropies(X, positive.astype(float), n_neighbors)
    memberships = np.ones(X.shape[0])
    negative = ~positive
    bins = _entropy_bins(H[negative], n_bins, order)
    memberships[negative] = 1.0 - alpha * (bins - 1)
    return memberships


class _EntropyMembershipMixin:
    """The memberships of ``entropy_fuzzy_membership`` as an estimator's per-sample weights.

    The estimator has ``n_neighbors``, ``n_bins``, ``alpha`` and ``membership_order``
    parameters; ``_memberships`` sets ``memberships_`` and returns them times any
    ``sample_weight`` given to ``fit``.
    """

    def _memberships(self, X, t, given=None):
        self.memberships_ = entropy_fuzzy_membership(X, t, self.n_neighbors, n_bins=self.n_bins,
                                                     alpha=self.alpha, order=self.membership_order)
        return self.memberships_ if given is None else self.memberships_ * given
