"""Entropy-based fuzzy memberships (Zhu 2017 section 2.1, SPEC section 6).

Expected values are worked out by hand in the comments, or computed by a
literal transcription of the paper's steps (brute-force neighbours, the
pseudo-code's (Low, Up] loop over bins).
"""

import numpy as np
import pytest

from eemrepro.models import entropy_fuzzy_membership


def _literal(X, y, k, m, alpha, order):
    """The paper's steps one by one: neighbours by sorting distances, Table 1's loop."""
    classes, counts = np.unique(y, return_counts=True)
    pos = classes[np.argmin(counts)]
    H = []
    for i in range(len(X)):
        d = np.linalg.norm(X - X[i], axis=1)
        d[i] = np.inf
        nn = np.argsort(d, kind="stable")[:k]
        p = np.mean(y[nn] == pos)
        H.append(sum(-q * np.log(q) for q in (p, 1 - p) if q > 0))
    H = np.array(H)
    neg = np.flatnonzero(y != pos)
    h_min, h_max = H[neg].min(), H[neg].max()
    s = np.ones(len(X))
    for i in neg:
        if h_max == h_min:
            continue
        bin_ = None
        for kk in range(1, m + 1):
            up = h_max - (kk - 1) / m * (h_max - h_min)
            low = h_max - kk / m * (h_max - h_min)
            if low < H[i] <= up:
                bin_ = kk
        if bin_ is None:  # H = H_min: in no (Low, Up]; it joins the lowest-entropy bin (bin m)
            bin_ = m
        j = bin_ if order == "literal" else m + 1 - bin_
        s[i] = 1 - alpha * (j - 1)
    return s


def test_hand_computed_case():
    # k = 3. Negatives at 0, 0.1, 0.2: their 3 neighbours are the other two and 0.7, all
    # negative: p+ = 0, H = 0 (= H_min). The negative at 0.7: neighbours 1.0, 1.1 (positive)
    # and 0.2: p+ = 2/3, H = -(2/3) ln(2/3) - (1/3) ln(1/3) = 0.6365 (= H_max).
    X = np.array([[0.0], [0.1], [0.2], [0.7], [1.0], [1.1]])
    y = np.array([0, 0, 0, 0, 1, 1])
    # text: H_min in bin 1 (membership 1), H_max in bin 10 (1 - 9 * 0.05 = 0.55); positives 1.
    np.testing.assert_allclose(entropy_fuzzy_membership(X, y, n_neighbors=3), [1, 1, 1, 0.55, 1, 1])
    # literal (the pseudo-code): bin 1 is the highest entropy, so the order flips.
    np.testing.assert_allclose(entropy_fuzzy_membership(X, y, n_neighbors=3, order="literal"),
                               [0.55, 0.55, 0.55, 1, 1, 1])


def test_all_equal_entropies_give_membership_one():
    # Every negative has only negatives around it (H = 0 for all): one bin, membership 1.
    X = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [5.1]])
    y = np.array([0, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(entropy_fuzzy_membership(X, y, n_neighbors=2), np.ones(6))


@pytest.mark.parametrize("k", [1, 4, 9])
@pytest.mark.parametrize("order", ["text", "literal"])
def test_against_a_literal_transcription(k, order):
    rng = np.random.RandomState(k)
    X = rng.normal(size=(80, 3))
    y = np.where(np.arange(80) < 20, "minority", "majority")
    X[:20] += 0.8
    expected = _literal(X, y, k, 10, 0.05, order)
    np.testing.assert_allclose(entropy_fuzzy_membership(X, y, n_neighbors=k, order=order), expected)
    if k == 1:  # one neighbour: p+ is 0 or 1, every entropy 0, every membership 1
        assert np.all(expected == 1.0)
    else:
        assert expected.min() >= 0.55 and len(np.unique(expected)) > 2


def test_memberships_are_sample_weights():
    from sklearn.svm import SVC

    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 2))
    y = (np.arange(60) < 15).astype(int)
    X[y == 1] += 1.0
    s = entropy_fuzzy_membership(X, y, n_neighbors=5)
    # Weighted SVC: the same as each sample's C scaled by its weight (LIBSVM's per-sample C).
    SVC(kernel="linear").fit(X, y, sample_weight=s)
    assert np.all(s[y == 1] == 1.0) and np.all((s > 0) & (s <= 1))


@pytest.mark.parametrize("kwargs, message", [
    ({"n_neighbors": 6}, r"n_neighbors must be an integer in \[1, n_samples - 1\] = \[1, 5\]"),
    ({"n_neighbors": 0}, r"n_neighbors must be an integer"),
    ({"n_neighbors": 2, "alpha": 0.2}, r"alpha must be in \(0, 1/\(n_bins - 1\)\)"),
    ({"n_neighbors": 2, "order": "reversed"}, r"order must be 'text' or 'literal'"),
])
def test_bad_input(kwargs, message):
    X = np.arange(6.0)[:, None]
    y = np.array([0, 0, 0, 0, 1, 1])
    with pytest.raises(ValueError, match=message):
        entropy_fuzzy_membership(X, y, **kwargs)
    with pytest.raises(ValueError, match="needs two classes, got 1"):
        entropy_fuzzy_membership(X, np.zeros(6), n_neighbors=2)
