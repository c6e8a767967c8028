"""Chunked class moments and the Ledoit–Wolf estimator computed from them.

EEM needs, per class, the mean and the Ledoit–Wolf shrunk covariance of the
hidden-layer features H (N x h). Forming H whole costs O(N h) memory, and
scikit-learn's ``ledoit_wolf_shrinkage`` also forms the second N h^2 product
(X**2).T @ X**2. Both are avoidable: the shrinkage intensity needs only

* the empirical covariance S (from sum of rows and sum of outer products),
* sum_k ||x_k - mean||^4 (one number per class),

and the fourth-moment term expands into sums that are O(h) to accumulate.
Everything here is accumulated over row chunks, so memory is O(h^2 + chunk h).

To avoid the cancellation of ``E[x x^T] - m m^T`` when features are nearly
constant (saturated sigmoids), rows are shifted by the mean of the first chunk
before accumulating; covariance is shift invariant and the fourth-moment sums
are corrected for the residual shift exactly.

Statistics of any *leading block* of the columns (the first q features) are
available for every q in ``prefixes``: the covariance of a prefix is the leading
block of the covariance, and the per-prefix row norms are accumulated for the
fourth moment. This is what lets EEM fit a whole grid of hidden-layer sizes
from one pass over the largest layer.
"""

import numpy as np


class _ShiftedMoments:
    """Running moments of one class's feature rows.

    Parameters
    ----------
    n_features : int
        Number of columns of the rows passed to :meth:`update`.
    prefixes : sequence of int
        Leading-block sizes for which :meth:`leading_block` must be exact.
    """

    def __init__(self, n_features, prefixes):
        self.n_features = int(n_features)
        self.prefixes = sorted({int(q) for q in prefixes})
        if not self.prefixes or self.prefixes[0] < 1 or self.prefixes[-1] > n_features:
            raise ValueError(
                f"prefixes must lie in [1, {n_features}], got {list(prefixes)!r}"
            )
        self.n_samples = 0
        self.shift = None
        self.sum_ = np.zeros(n_features)
        self.outer_ = np.zeros((n_features, n_features))
        k = len(self.prefixes)
        self.norm2_sum_ = np.zeros(k)  # sum_k a_k,      a_k = ||y_k[:q]||^2
        self.norm4_sum_ = np.zeros(k)  # sum_k a_k^2
        self.norm2_rows_ = [np.zeros(q) for q in self.prefixes]  # sum_k a_k y_k[:q]

    def update(self, rows):
        """Add a chunk of rows (modified in place: it is shifted)."""
        if rows.shape[0] == 0:
            return
        if self.shift is None:
            self.shift = rows.mean(axis=0)
        rows -= self.shift.astype(rows.dtype, copy=False)
        self.n_samples += rows.shape[0]
        self.sum_ += rows.sum(axis=0, dtype=np.float64)
        # rows.T @ rows is dispatched to BLAS syrk (half the flops of gemm).
        self.outer_ += rows.T @ rows
        norm2 = np.zeros(rows.shape[0], dtype=rows.dtype)
        start = 0
        for i, q in enumerate(self.prefixes):
            block = rows[:, start:q]
            norm2 += np.einsum("ij,ij->i", block, block)
            start = q
            self.norm2_sum_[i] += norm2.sum(dtype=np.float64)
            norm2_64 = norm2.astype(np.float64)
            self.norm4_sum_[i] += norm2_64 @ norm2_64
            self.norm2_rows_[i] += norm2 @ rows[:, :q]

    def leading_block(self, q):
        """Mean, 1/n covariance and sum of centred fourth powers of the first q columns.

        Returns
        -------
        mean : ndarray of shape (q,)
        covariance : ndarray of shape (q, q)
        sum_norm4 : float
            sum_k ||x_k[:q] - mean||^4, what the Ledoit–Wolf intensity needs.
        n_samples : int
        """
        i = self.prefixes.index(q)
        n = self.n_samples
        if n == 0:
            raise ValueError("no rows were accumulated")
        s1 = self.sum_[:q]
        s2 = self.outer_[:q, :q]
        delta = s1 / n  # mean of the shifted rows
        covariance = s2 / n - np.outer(delta, delta)
        # Keep the exact symmetry that syrk-then-add can lose in the last bit.
        covariance = (covariance + covariance.T) / 2
        dd = delta @ delta
        sum_norm4 = (
            self.norm4_sum_[i]
            + 4.0 * (delta @ s2 @ delta)
            + n * dd * dd
            - 4.0 * (delta @ self.norm2_rows_[i])
            + 2.0 * dd * self.norm2_sum_[i]
            - 4.0 * dd * (delta @ s1)
        )
        mean = self.shift[:q].astype(np.float64) + delta
        return mean, covariance, max(float(sum_norm4), 0.0), n


def _ledoit_wolf_from_moments(covariance, sum_norm4, n_samples):
    """Ledoit–Wolf shrunk covariance from the 1/n covariance and sum ||x_k - m||^4.

    Computes the same estimator as :func:`sklearn.covariance.ledoit_wolf`
    (``assume_centered=False``): with S the empirical covariance, mu = tr(S)/p,

    * beta = (sum_k ||x_k||^4 / n - ||S||_F^2) / (p n)
    * delta = ||S - mu I||_F^2 / p
    * shrinkage = min(beta, delta) / delta

    Parameters
    ----------
    covariance : ndarray of shape (p, p)
    sum_norm4 : float
    n_samples : int

    Returns
    -------
    shrunk : ndarray of shape (p, p)
    shrinkage : float
    """
    p = covariance.shape[0]
    if p == 1:
        # scikit-learn does not shrink a single feature.
        return covariance.copy(), 0.0
    trace = np.trace(covariance)
    mu = trace / p
    frob2 = np.sum(covariance * covariance)
    beta = (sum_norm4 / n_samples - frob2) / (p * n_samples)
    delta = (frob2 - 2.0 * mu * trace + p * mu * mu) / p
    beta = min(beta, delta)
    # beta >= 0 in exact arithmetic (Jensen); a negative value is round-off.
    shrinkage = 0.0 if beta <= 0 else beta / delta
    shrunk = (1.0 - shrinkage) * covariance
    shrunk.flat[:: p + 1] += shrinkage * mu
    return shrunk, float(shrinkage)
