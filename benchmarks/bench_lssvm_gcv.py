"""LS-SVM GCV speed and LS-SVM ensemble memory, printed as ratios measured in one run.

GCV over the whole C grid (9 values) for one sigma^2 at n = 2000, 3 classes:
  (e) the eigendecomposition of K alone (the floor of the path);
  (g) the path: eigendecomposition, then alpha, b, diag H and GCV for every C
      (``_lssvm_hat_path`` + ``_selection_criterion``);
  (s) per C, the bordered system solved by ``scipy.linalg.solve`` for the m
      target columns and the n columns of the identity (the hat matrix's
      diagonal needs (K + I/C)^-1, not only alpha), then GCV.
The GCV values of (g) and (s) must agree (rtol 1e-6).

Targets (issue 20): (g) <= 1.3 x (e); (s) >= 5 x (g).

Ensemble memory: a synthetic 145,751 x 74 binary problem (protein homology's
shape and class ratio), ``LSSVMEnsemble`` with members of at most s points,
each fit in a fresh process whose peak RSS is read from ``getrusage``.
Target: peak memory <= 4 GB; the fit time per member size is reported.

Usage: python benchmarks/bench_lssvm_gcv.py [--quick] [--repeat K]
"""

import argparse
import json
import subprocess
import sys

import numpy as np
from _timing import best_of
from scipy import linalg
from sklearn.metrics.pairwise import rbf_kernel

from eemrepro.models._lssvm import _lssvm_hat_path, _selection_criterion

CS = [10.0**k for k in range(-2, 7)]  # SPEC section 4's C grid: 9 values


def make_problem(n, d, m, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, d))
    y = rng.randint(m, size=n)
    Y = np.where(y[:, None] == np.arange(m)[None, :], 1.0, -1.0)
    return X, y, Y


def gcv_path(K, Y, y):
    rows = np.arange(len(y))
    return [_selection_criterion(Y[rows, y] - fitted[rows, y], hat, "gcv")
            for _, _, fitted, hat in _lssvm_hat_path(K.copy(), Y, CS)]


def gcv_per_c(K, Y, y):
    n, m = Y.shape
    rows = np.arange(n)
    values = []
    for C in CS:
        A = np.zeros((n + 1, n + 1))
        A[0, 1:] = A[1:, 0] = 1.0
        A[1:, 1:] = K + np.eye(n) / C
        rhs = np.zeros((n + 1, m + n))
        rhs[1:, :m] = Y
        rhs[1:, m:] = np.eye(n)
        sol = linalg.solve(A, rhs, check_finite=False)
        alpha, b = sol[1:, :m], sol[0, :m]
        fitted = K @ alpha + b
        # H = (K, 1) [inverse block]: its diagonal from the columns of the identity.
        hat = np.einsum("ij,ji->i", K, sol[1:, m:]) + sol[0, m:]
        values.append(_selection_criterion(Y[rows, y] - fitted[rows, y], hat, "gcv"))
    return values


def speed(n, repeat):
    X, y, Y = make_problem(n, 10, 3)
    K = rbf_kernel(X, gamma=1.0)
    t_eig, _ = best_of(lambda: linalg.eigh(K.copy(), driver="evd", overwrite_a=True, check_finite=False), repeat)
    t_path, ours = best_of(lambda: gcv_path(K, Y, y), repeat)
    t_solve, ref = best_of(lambda: gcv_per_c(K, Y, y), max(1, repeat - 1))
    np.testing.assert_allclose(ours, ref, rtol=1e-6)
    return {"eigh": t_eig, "gcv_path": t_path, "per_c_solve": t_solve}


_CHILD = """
import json, resource, sys, time
import numpy as np
from eemrepro.models import LSSVMEnsemble
n, d, size = {n}, {d}, {size}
rng = np.random.RandomState(0)
X = rng.uniform(size=(n, d))
y = np.where(rng.uniform(size=n) < 1296 / 145751, 1, -1)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
model = LSSVMEnsemble(max_subset_size=size, C=10.0, sigma2=10.0, class_weight="balanced", random_state=0).fit(X, y)
fit = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"fit": fit, "members": model.n_subsets_, "peak_gb": peak / 2**20, "data_gb": base / 2**20}}))
"""


def ensemble(n, d, size):
    out = subprocess.run([sys.executable, "-c", _CHILD.format(n=n, d=d, size=size)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run, not the targets)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    n = 500 if args.quick else 2000
    big_n, sizes = (20000, [500]) if args.quick else (145751, [500, 1000, 2000, 4000])
    t = speed(n, args.repeat)
    print(f"LS-SVM GCV benchmark: n={n}, 3 classes, {len(CS)} C values, one sigma^2, best of {args.repeat}; seconds:")
    for k, v in t.items():
        print(f"  {k:<14} {v:8.3f}")
    ratio_path, ratio_solve = t["gcv_path"] / t["eigh"], t["per_c_solve"] / t["gcv_path"]
    met = lambda ok: "met" if ok else "NOT met"
    print("ratios (measured in this run):")
    print(f"  GCV path / eigh alone       {ratio_path:6.2f}   target <= 1.3: {met(ratio_path <= 1.3)}")
    print(f"  per-C solve / GCV path      {ratio_solve:6.2f}   target >= 5: {met(ratio_solve >= 5)}")
    print(f"LS-SVM ensemble on a synthetic {big_n} x 74 binary problem (one fresh process per size):")
    worst = 0.0
    for size in sizes:
        r = ensemble(big_n, 74, size)
        worst = max(worst, r["peak_gb"])
        print(f"  members <= {size:>5}: M = {r['members']:>4}, fit {r['fit']:7.1f} s, peak RSS {r['peak_gb']:.2f} GB "
              f"(data and interpreter {r['data_gb']:.2f} GB)")
    print(f"  largest peak RSS {worst:.2f} GB; target <= 4 GB: {met(worst <= 4)}")


if __name__ == "__main__":
    main()
