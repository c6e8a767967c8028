"""Feature maps: the random hidden layer (WELM, EEM) and the kernel map (EEKM).

Both maps have the *prefix property* the grid path relies on: the map with h
units is the first h units of the map with H > h units drawn from the same
``random_state``.
"""

import numpy as np

ACTIVATIONS = ("sig", "nsig", "rbf")


def _draw_hidden_layer(n_hidden, n_features, rng):
    """Weights (h, d) and biases (h,), i.i.d. U[0, 1] (EEM paper, section 7).

    One (h, d + 1) draw, split by column, so that the first h rows are the same
    whatever the total number of neurons drawn (the prefix property).
    """
    params = rng.uniform(0.0, 1.0, size=(n_hidden, n_features + 1))
    return np.ascontiguousarray(params[:, :-1]), params[:, -1].copy()


def _sigmoid_inplace(Z):
    """1 / (1 + exp(-Z)) in place.

    numpy's vectorised exp makes this 3-5x faster than scipy.special.expit on
    the hidden layer (measured by benchmarks/bench_eem.py's floor). exp(-z)
    overflows to inf for z < -88 (float32) or -709 (float64), and 1 / inf = 0
    is the exact limit, so the overflow warning is silenced.
    """
    np.negative(Z, out=Z)
    with np.errstate(over="ignore"):
        np.exp(Z, out=Z)
    Z += 1.0
    return np.reciprocal(Z, out=Z)


def _hidden_activations(X, weights, biases, activation):
    """G(x, w_j, b_j) for every row of X and neuron j, in X's dtype.

    Literal forms of SPEC section 1 (the paper's), including the sign of b in
    the sigmoids::

        sig   1 / (1 + exp(-<w, x> + b))
        nsig  1 / (1 + exp(-<w, x> / d + b))
        rbf   exp(-b ||w - x||^2)
    """
    dtype = X.dtype
    weights = weights.astype(dtype, copy=False)
    biases = biases.astype(dtype, copy=False)
    Z = X @ weights.T
    if activation == "sig":
        Z -= biases
        return _sigmoid_inplace(Z)
    if activation == "nsig":
        Z /= X.shape[1]
        Z -= biases
        return _sigmoid_inplace(Z)
    if activation == "rbf":
        Z *= -2.0
        Z += np.einsum("ij,ij->i", X, X)[:, None]
        Z += np.einsum("ij,ij->i", weights, weights)[None, :]
        # ||w - x||^2 >= 0; the expansion can go slightly negative by round-off.
        np.maximum(Z, 0.0, out=Z)
        Z *= -biases
        return np.exp(Z, out=Z)
    raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")


def _kernel_whitening(K_landmarks):
    """Symmetric K^(-1/2) of a landmark Gram matrix, with small eigenvalues dropped.

    K is PSD but numerically singular for small gamma (every entry is close to
    1 at gamma = 1e-10). Eigenvalues below the rank tolerance of
    :func:`numpy.linalg.matrix_rank` (``lambda_max * h * eps``) are dropped
    instead of being inverted; the map then has rank r < h.

    This is why EEKM does not call :class:`sklearn.kernel_approximation.Nystroem`
    directly, though its map is the same otherwise: Nystroem clamps singular
    values at an absolute 1e-12 and inverts the rest, which amplifies round-off
    by up to 1e6 at the small gammas of the paper's grid; and the grid path
    reuses the kernel columns of the largest landmark set for every h, which
    Nystroem's API does not expose. Landmarks are chosen the way Nystroem does
    (the first h of one permutation of the training rows).
    """
    K = np.asarray(K_landmarks, dtype=np.float64)
    eigval, eigvec = np.linalg.eigh((K + K.T) / 2)
    tol = eigval[-1] * K.shape[0] * np.finfo(np.float64).eps
    keep = eigval > tol
    V = eigvec[:, keep]
    return (V / np.sqrt(eigval[keep])) @ V.T


def _rbf(X, Y, gamma):
    """Gaussian kernel exp(-gamma ||x - y||^2) in X's dtype."""
    from sklearn.metrics.pairwise import rbf_kernel  # here: a config's check of ``activation`` reads ACTIVATIONS

    return rbf_kernel(X, Y.astype(X.dtype, copy=False), gamma=gamma)


def _kernel_features(X, landmarks, whitening, gamma):
    """phi_K(x) = K(X[h], X[h])^(-1/2) K(X[h], x), one row per sample."""
    return _rbf(X, landmarks, gamma) @ whitening.astype(X.dtype, copy=False)


def _kernel_expansion(X, support_vectors, coef, intercept, gamma):
    """sum_i coef_i K(x, sv_i) + intercept for each row, in chunks (LS-SVM, SVM).

    ``coef`` of shape (n_sv,) gives one score per row, (n_sv, m) m scores.
    """
    from ._base import _chunked

    return _chunked(X, max(1, support_vectors.shape[0]),
                    lambda chunk: _rbf(chunk, support_vectors, gamma) @ coef + intercept,
                    n_outputs=None if coef.ndim == 1 else coef.shape[1])
