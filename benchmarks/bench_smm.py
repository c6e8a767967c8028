"""SMM solver against the same problem in cvxpy (Clarabel); ratios from one run.

Problem (issue 22): n = 500 points read as 3 x 3 matrices, 30 % positives shifted
by 0.4, weights uniform in [0.5, 1] (ESMM's membership range), tau = 0.1, and SPEC
section 6's C grid 0.1 .. 1000.

  (c) cvxpy + Clarabel, the problem written as in tests/test_smm.py, one cold
      solve per C (problem construction included: what a user of cvxpy pays);
  (a) ``eemrepro.models._smm._smm_admm`` per C, cold;
  (p) ``SMM.fit_path`` over the C grid (warm starts, smallest C first).

Targets: equal objective to 1e-4 relative (each C), and (c) / (a) >= 10 at C = 1.

Usage: python benchmarks/bench_smm.py [--n N] [--repeat K]
"""

import argparse

import cvxpy as cp
import numpy as np
from _timing import best_of

from eemrepro.models import SMM
from eemrepro.models._smm import _smm_admm, _smm_objective

C_GRID = (0.1, 1.0, 10.0, 100.0, 1000.0)


def problem(n, seed=0):
    rng = np.random.RandomState(seed)
    A = rng.normal(size=(n, 3, 3))
    t = np.where(rng.rand(n) < 0.3, 1.0, -1.0)
    A[t > 0] += 0.4
    return A.reshape(n, 9), t, rng.uniform(0.5, 1.0, n)


def cvxpy_solve(F, t, weights, tau):
    W, b = cp.Variable((3, 3)), cp.Variable()
    margins = cp.multiply(t, F @ cp.reshape(W, (9,), order="C") + b)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W) + tau * cp.normNuc(W) + weights @ cp.pos(1 - margins)))
    prob.solve(solver="CLARABEL")
    return prob.value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tau", type=float, default=0.1)
    args = parser.parse_args()
    F, t, s = problem(args.n)
    tau = args.tau
    print(f"SMM, n = {args.n}, 3 x 3, tau = {tau}, best of {args.repeat}; seconds and relative objective gaps:")
    total_c = total_a = 0.0
    worst = 0.0
    ratio_at_1 = None
    for C in C_GRID:
        tc, optimum = best_of(lambda C=C: cvxpy_solve(F, t, C * s, tau), args.repeat)
        ta, sol = best_of(lambda C=C: _smm_admm(F, t, C * s, tau, (3, 3)), args.repeat)
        W, b, n_iter = sol[0], sol[1], sol[2]
        gap = (_smm_objective(W, b, F, t, C * s, tau) - optimum) / abs(optimum)
        worst = max(worst, abs(gap))
        total_c, total_a = total_c + tc, total_a + ta
        if C == 1.0:
            ratio_at_1 = tc / ta
        print(f"  C = {C:7g}: cvxpy {tc:8.4f}  ADMM {ta:8.4f} ({n_iter:5d} iterations)  "
              f"cvxpy / ADMM {tc / ta:6.2f}  objective vs cvxpy {gap:+.1e}")
    tp, _ = best_of(lambda: SMM(tau=tau).fit_path(F, t, list(C_GRID), sample_weight=s), args.repeat)
    print(f"  C grid: cvxpy {total_c:.4f}, ADMM cold {total_a:.4f}, fit_path (warm) {tp:.4f}")
    print("ratios (measured in this run):")
    met = "met" if ratio_at_1 >= 10 else "NOT met"
    print(f"  cvxpy / ADMM at C = 1        {ratio_at_1:6.2f}   target >= 10: {met}")
    print(f"  cvxpy grid / fit_path grid   {total_c / tp:6.2f}")
    print(f"  worst objective difference   {worst:.1e}   target <= 1e-4: {'met' if worst <= 1e-4 else 'NOT met'}")


if __name__ == "__main__":
    main()
