"""MELM objective + gradient: speed against a literal transcription, and memory; ratios from one run.

Problem: N = 1000 points (two classes of 500), d = 60, k = 2, uniform features
with the classes shifted on a few of them (splice's shape).

  (t) a straightforward transcription of the paper's section 4, as the
      authors' code does it: Ledoit-Wolf refitted on each class at every call,
      then Python-level sums over every pair (a, b) of the three potentials,
      psi_w and grad psi_w = -psi_w (w u^T S - Sigma V S u u^T S) per pair;
  (f) ``eemrepro.models._melm._melm_objective``: blocked pair matrices, the
      gradient through A^T (diag(r) P_A - Psi P_B) + ... (covariances fixed
      once per fit, as ``MELM.fit`` does).

Both must agree to 1e-10 (relative, value and gradient). Target (issue 21):
(t) / (f) >= 10. Memory: tracemalloc's peak during one call of (f), against
the N^2 d / 4 doubles of the pair differences of one potential that an
all-pairs vectorisation would hold (the target: O(N chunk), not O(N^2 d)).

Usage: python benchmarks/bench_melm.py [--n N] [--d D] [--repeat K]
"""

import argparse
import time
import tracemalloc

import numpy as np
from sklearn.covariance import LedoitWolf

from eemrepro.models._melm import _CHUNK, _kde_covariances, _melm_objective


def transcription(V, X_pos, X_neg, gamma=1.0):
    """The paper's formulas pair by pair (the slow reference)."""
    d, k = V.shape
    covs = {}
    for name, X in (("+", X_pos), ("-", X_neg)):
        h2 = gamma**2 * (4.0 / (k + 2)) ** (2.0 / (k + 4)) * X.shape[0] ** (-2.0 / (k + 4))
        covs[name] = h2 * LedoitWolf().fit(X).covariance_
    data = {"+": X_pos, "-": X_neg}
    value, grad = 0.0, np.zeros_like(V)
    for (a_name, b_name), weight in ((("+", "+"), 1.0), (("-", "-"), 1.0), (("+", "-"), -2.0)):
        A, B = data[a_name], data[b_name]
        sigma = covs[a_name] + covs[b_name]
        sigma_v = sigma @ V
        S = np.linalg.inv(V.T @ sigma_v)
        phi = 1.0 / ((2 * np.pi) ** (k / 2) * np.sqrt(np.linalg.det(V.T @ sigma_v)) * A.shape[0] * B.shape[0])
        grad_phi = -phi * sigma_v @ S
        total, grad_total = 0.0, np.zeros_like(V)
        for a in A:
            for b in B:
                w = a - b
                u = V.T @ w
                psi = np.exp(-0.5 * u @ S @ u)
                total += psi
                grad_total -= psi * (np.outer(w, S @ u) - sigma_v @ S @ np.outer(u, u) @ S)
        ip = phi * total
        grad_ip = phi * grad_total + total * grad_phi
        value += weight * np.log(ip)
        grad += weight * grad_ip / ip
    gram = V.T @ V - np.eye(k)
    return value - np.sum(gram**2), grad - 4.0 * V @ gram


def fast(V, X_pos, X_neg, widths):
    return _melm_objective(V, [X_pos, X_neg], widths)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--d", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(args.n, args.d))
    y = np.arange(args.n) % 2
    X[y == 1, :5] += 0.2
    X -= X.mean(axis=0)
    X_pos, X_neg = X[y == 1], X[y == 0]
    # An orthonormal V: the penalty is then 0 and the comparison is all D_CS.
    V, _ = np.linalg.qr(rng.normal(size=(args.d, 2)))

    start = time.perf_counter()
    ref_value, ref_grad = transcription(V, X_pos, X_neg)
    t_slow = time.perf_counter() - start

    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        widths = _kde_covariances([X_pos, X_neg], 1.0, 2, "ledoit-wolf")  # refitted each call here too
        value, grad = fast(V, X_pos, X_neg, widths)
        times.append(time.perf_counter() - start)
    t_fast = min(times)
    rel_value = abs(value - ref_value) / abs(ref_value)
    rel_grad = np.abs(grad - ref_grad).max() / np.abs(ref_grad).max()

    tracemalloc.start()
    fast(V, X_pos, X_neg, widths)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    all_pairs = (args.n // 2) ** 2 * args.d * 8

    print(f"MELM objective + gradient, N = {args.n}, d = {args.d}, k = 2 (best of {args.repeat})")
    print(f"  transcription (per-pair sums, Ledoit-Wolf per call): {t_slow:9.3f} s")
    print(f"  eemrepro _melm_objective (covariances included):     {t_fast:9.4f} s")
    print(f"  speed-up: {t_slow / t_fast:.1f} x (target >= 10)   agreement: value {rel_value:.1e}, "
          f"gradient {rel_grad:.1e} (target <= 1e-10)")
    print(f"  peak memory of one call: {peak / 2**20:.1f} MiB; one potential's N^2 d pair differences: "
          f"{all_pairs / 2**20:.0f} MiB (ratio {all_pairs / peak:.0f} x); block = {_CHUNK} rows")
    ok = t_slow / t_fast >= 10 and max(rel_value, rel_grad) <= 1e-10
    print("  targets met" if ok else "  TARGET MISSED")


if __name__ == "__main__":
    main()
