"""Chunked moments and Ledoit–Wolf from moments against scikit-learn's estimator."""

import numpy as np
import pytest
from sklearn.covariance import ledoit_wolf, ledoit_wolf_shrinkage

from eemrepro.models._moments import _ledoit_wolf_from_moments, _ShiftedMoments


def _accumulate(X, prefixes, chunk):
    acc = _ShiftedMoments(X.shape[1], prefixes)
    for start in range(0, X.shape[0], chunk):
        acc.update(X[start : start + chunk].copy())
    return acc


@pytest.mark.parametrize(
    "kind",
    ["gaussian", "saturated", "skewed"],
)
@pytest.mark.parametrize("chunk", [7, 1000])
def test_ledoit_wolf_matches_sklearn_on_every_prefix(kind, chunk):
    rng = np.random.RandomState(1)
    if kind == "gaussian":
        X = rng.normal(size=(250, 40)) @ rng.normal(size=(40, 40))
    elif kind == "saturated":
        # Sigmoid units near 1 with tiny spread: the case where E[xx^T] - mm^T
        # cancels catastrophically without the shift.
        X = 1.0 - 1e-5 * rng.exponential(size=(250, 40))
    else:
        X = rng.exponential(size=(250, 40)) ** 2 + 3.0
    prefixes = [1, 5, 17, 40]
    acc = _accumulate(X, prefixes, chunk)
    for q in prefixes:
        mean, cov, norm4, n = acc.leading_block(q)
        shrunk, shrinkage = _ledoit_wolf_from_moments(cov, norm4, n)
        # Expected: scikit-learn's LedoitWolf on the same columns (independent code).
        ref_cov, ref_shrinkage = ledoit_wolf(X[:, :q])
        if q > 1:
            assert shrinkage == pytest.approx(ledoit_wolf_shrinkage(X[:, :q]), abs=1e-10)
        assert shrinkage == pytest.approx(ref_shrinkage, abs=1e-10)
        np.testing.assert_allclose(mean, X[:, :q].mean(axis=0), rtol=1e-12)
        scale = np.abs(ref_cov).max()
        np.testing.assert_allclose(shrunk, ref_cov, rtol=0, atol=1e-9 * scale)


def test_fourth_moment_equals_direct_sum():
    # Expected: sum_k ||x_k - mean||^4 computed directly.
    rng = np.random.RandomState(2)
    X = rng.uniform(size=(97, 12)) + 10.0
    acc = _accumulate(X, [12], chunk=10)
    _, _, norm4, _ = acc.leading_block(12)
    direct = np.sum(np.sum((X - X.mean(axis=0)) ** 2, axis=1) ** 2)
    assert norm4 == pytest.approx(direct, rel=1e-10)


def test_prefixes_are_validated():
    with pytest.raises(ValueError, match="prefixes"):
        _ShiftedMoments(5, [6])
