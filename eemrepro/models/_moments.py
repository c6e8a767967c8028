"""Chunked class moments and the Ledoit–Wolf estimator computed from them.

EEM needs, per class, the mean and the Ledoit–Wolf shrunk covariance of the
hidden-layer features H (N x h). Forming H whole costs O(N h) memory, and
scikit-learn's ``ledoit_wolf_shrinkage`` also forms the second N h^2 product
(X**2).T @ X**2. Both are avoidable: the shrinkage intensity needs only

* the empirical covariance S (from sum of rows and sum of outer products),
* sum_k ||x_k - mean||^4 (one number per class),

and the fourth-moment term expands into sums that are O(h) to accumulate.
Everything here is accumulated over row chunks, so memory is O(h^2 + chunk h).

Rows may carry weights with scikit-learn's meaning of ``sample_weight``: a row of
weight k counts as k copies of it, so every sum is weighted and n is the sum of
the weights (the Ledoit–Wolf intensity is the one of the repeated rows).

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

    def __init__(self, n_features, prefixes, shift=None):
        self.n_features = int(n_features)
        self.prefixes = sorted({int(q) for q in prefixes})
        if not self.prefixes or self.prefixes[0] < 1 or self.prefixes[-1] > n_features:
            raise ValueError(
                f"prefixes must lie in [1, {n_features}], got {list(prefixes)!r}"
            )
        self.n_samples = 0.0  # the sum of the rows' weights
        self.shift = shift
        self.sum_ = np.zeros(n_features)
        self.outer_ = np.zeros((n_features, n_features))
        k = len(self.prefixes)
        self.norm2_sum_ = np.zeros(k)  # sum_k a_k,      a_k = ||y_k[:q]||^2
        self.norm4_sum_ = np.zeros(k)  # sum_k a_k^2
        self.norm2_rows_ = [np.zeros(q) for q in self.prefixes]  # sum_k a_k y_k[:q]

    def update(self, rows, sample_weight=None):
        """Add a chunk of rows (modified in place: it is shifted), optionally weighted."""
        if rows.shape[0] == 0:
            return
        if self.shift is None:
            self.shift = rows.mean(axis=0)
        rows -= self.shift.astype(rows.dtype, copy=False)
        s = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.n_samples += rows.shape[0] if s is None else float(s.sum())
        # weights[0] = s (1 unweighted) gives the column sums; weights[i + 1] =
        # s ||row[:q_i]||^2 gives sum_k s_k a_k y_k. One small GEMM reads the chunk
        # once for all of them.
        weights = np.empty((len(self.prefixes) + 1, rows.shape[0]), dtype=rows.dtype)
        weights[0] = 1.0 if s is None else s
        norm2 = np.zeros(rows.shape[0], dtype=rows.dtype)
        start = 0
        for i, q in enumerate(self.prefixes):
            block = rows[:, start:q]
            norm2 += np.einsum("ij,ij->i", block, block)
            start = q
            weights[i + 1] = norm2 if s is None else norm2 * s
            norm2_64 = norm2.astype(np.float64)
            self.norm2_sum_[i] += norm2_64.sum() if s is None else s @ norm2_64
            self.norm4_sum_[i] += norm2_64 @ (norm2_64 if s is None else s * norm2_64)
        weighted = weights @ rows
        self.sum_ += weighted[0]
        for i, q in enumerate(self.prefixes):
            self.norm2_rows_[i] += weighted[i + 1, :q]
        # rows.T @ rows is dispatched to BLAS syrk (half the flops of gemm).
        self.outer_ += rows.T @ rows if s is None else (rows * s[:, None].astype(rows.dtype)).T @ rows

    def empty_like(self):
        """A new accumulator with the same columns, prefixes and shift (for a worker)."""
        if self.shift is None:
            raise ValueError("update once before making accumulators that share the shift")
        return _ShiftedMoments(self.n_features, self.prefixes, shift=self.shift)

    def merge(self, other):
        """Add the sums of an accumulator that used the same shift."""
        if other.n_samples == 0:
            return self
        if other.shift is not self.shift:
            raise ValueError("only accumulators sharing one shift can be merged")
        self.n_samples += other.n_samples
        self.sum_ += other.sum_
        self.outer_ += other.outer_
        self.norm2_sum_ += other.norm2_sum_
        self.norm4_sum_ += other.norm4_sum_
        for mine, theirs in zip(self.norm2_rows_, other.norm2_rows_, strict=False):
            mine += theirs
        return self

    def leading_block(self, q):
        """Mean, 1/n covariance and sum of centred fourth powers of the first q columns.

        Returns
        -------
        mean : ndarray of shape (q,)
        covariance : ndarray of shape (q, q)
        sum_norm4 : float
            sum_k s_k ||x_k[:q] - mean||^4, what the Ledoit–Wolf intensity needs.
        n_samples : float
            The number of rows, or the sum of their weights.
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


# Chunks are dealt round-robin into this many partitions, each summed on its
# own and merged in a fixed order, so the floating-point result does not depend
# on how many worker threads ran them.
_N_PARTITIONS = 8


def _blas_threads():
    """Threads BLAS may use now (``protocol.fit_threads`` in a run's fits: 1 by default)."""
    from threadpoolctl import threadpool_info

    counts = [info["num_threads"] for info in threadpool_info() if info.get("user_api") == "blas"]
    return max(counts, default=1)


def _accumulate_class_moments(class_rows, transform_chunk, blocks, dtype, rows_per_chunk, class_weights=None):
    """Class moments of every feature block, over row chunks, on a thread pool.

    Parameters
    ----------
    class_rows : list of ndarray
        The input rows of each class (none empty).
    transform_chunk : callable
        ``transform_chunk(X_chunk) -> {key: features}``.
    blocks : dict
        ``{key: (n_columns, prefixes)}``.
    dtype : numpy dtype of the features.
    rows_per_chunk : int
    class_weights : list of ndarray or None
        The rows' sample weights, per class (None: unweighted).

    Returns
    -------
    moments : dict ``{key: [accumulator per class]}``

    The hidden-layer activations and the O(chunk h) passes are single-threaded
    numpy; BLAS alone would leave the other cores idle during them. Chunks are
    therefore run on as many threads as BLAS may use, each with a single BLAS
    thread, so a fit uses the cores it is allowed and never oversubscribes them.
    """
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    def features(cls, sl):
        return transform_chunk(class_rows[cls][sl].astype(dtype)).items()

    def weights(cls, sl):
        return None if class_weights is None else class_weights[cls][sl]

    def slices(n):
        return [slice(s, min(s + rows_per_chunk, n)) for s in range(0, n, rows_per_chunk)]

    moments = {key: [None] * len(class_rows) for key in blocks}
    jobs = []
    for cls, X in enumerate(class_rows):
        first, *rest = slices(X.shape[0])
        # The first chunk of each class fixes the shift every partition shares.
        for key, F in features(cls, first):
            moments[key][cls] = _ShiftedMoments(*blocks[key])
            moments[key][cls].update(F, weights(cls, first))
        jobs += [(cls, sl) for sl in rest]
    if not jobs:
        return moments

    partitions = [jobs[i::_N_PARTITIONS] for i in range(min(_N_PARTITIONS, len(jobs)))]

    def run(partition):
        local = {key: [acc.empty_like() for acc in accs] for key, accs in moments.items()}
        for cls, sl in partition:
            for key, F in features(cls, sl):
                local[key][cls].update(F, weights(cls, sl))
        return local

    n_workers = min(_blas_threads(), len(partitions))
    if n_workers > 1:
        with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(n_workers) as pool:
            parts = list(pool.map(run, partitions))
    else:
        parts = [run(p) for p in partitions]
    for local in parts:
        for key, accs in local.items():
            for mine, theirs in zip(moments[key], accs, strict=False):
                mine.merge(theirs)
    return moments
