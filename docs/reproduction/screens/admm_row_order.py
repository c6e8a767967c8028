"""Screen for ESMM Table 4's reading smm-admm-5: what its AUC on a W = 0 set depends on.

Where SMM's exact optimum is W = 0, the ADMM stopped at maxIter = 500 (or at its residual
rule) returns a tiny W, and the test AUC ranks points by that W's direction. Two questions:

- Is that direction rounding? ADMM's iterates do not depend on the order of the training
  points in exact arithmetic, so a change in AUC when the same training part is presented
  in another order would be the QP solver's rounding, not the model.
- Does it depend on the ADMM's penalty rho? Neither the ESMM paper nor SPEC section 6 gives
  rho (the reading runs SMM's default, 1).

This fits ESMM (the reading's ADMM, k = 5) on the first outer split of the config in the
stored order, then SMM by the same ADMM with ESMM's memberships as weights (the same
problem: ESMM is SMM so weighted; the memberships' k-NN is not refitted, so its ties
cannot move) in ``ORDERS`` random permutations of the training rows and, in the stored
order, at each rho of ``RHOS``. It prints the test AUC (%) of each grid point (C, tau).
The exact solver (the primary reading) is the control: W = 0, AUC 50. Run from the
repository root (the data: the cache, or EEMREPRO_MIRROR):

    python docs/reproduction/screens/admm_row_order.py keel-yeast-1-2-8-9_vs_7 keel-glass2
"""

import sys
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

from eemrepro.datasets import load_dataset
from eemrepro.experiments import load_config, make_splitter
from eemrepro.models import ESMM, SMM

ORDERS = 2
RHOS = (0.1, 10.0)
NEIGHBORS = 5


def _path(model, Cs, X, y, X_test, y_test, weights=None):
    """(test AUC (%) per C, the first fitted model) of ``model``'s C path."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = model.fit_path(X, y, C=Cs, sample_weight=weights)
    return [100 * roc_auc_score(y_test, m.decision_function(X_test)) for m in fitted], fitted[0]


def main(datasets):
    config = load_config("configs/esmm_table4.yaml").with_reading("smm-admm-5")
    grid = config.model("ESMM").grid
    Cs, taus = grid["C"], grid["tau"]
    rng = np.random.default_rng(0)
    for name in datasets:
        X, y, _ = load_dataset(name)
        train, test = make_splitter(config.protocol, name).split_at(y, 0, 0)
        X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]
        orders = [rng.permutation(len(train)) for _ in range(ORDERS)]
        print(f"\n{name}: {len(train)} training points, repeat 0; ESMM k = {NEIGHBORS}; test AUC (%)")
        print("C | tau | ADMM, rho = 1 | permuted rows (max - min) | " + " | ".join(f"rho = {r:g}" for r in RHOS)
              + " | exact")
        spreads, moves = [], []
        for tau in taus:
            admm, model = _path(ESMM(tau=tau, n_neighbors=NEIGHBORS, solver="admm"), Cs, X_train, y_train,
                                X_test, y_test)
            s = model.memberships_
            same, _ = _path(SMM(tau=tau, solver="admm"), Cs, X_train, y_train, X_test, y_test, s)
            assert same == admm, "SMM with ESMM's memberships is not ESMM"
            permuted = [_path(SMM(tau=tau, solver="admm"), Cs, X_train[o], y_train[o], X_test, y_test, s[o])[0]
                        for o in orders]
            by_rho = [_path(SMM(tau=tau, solver="admm", rho=r), Cs, X_train, y_train, X_test, y_test, s)[0]
                      for r in RHOS]
            exact, _ = _path(ESMM(tau=tau, n_neighbors=NEIGHBORS), Cs, X_train, y_train, X_test, y_test)
            for j, C in enumerate(Cs):
                values = [admm[j]] + [p[j] for p in permuted]
                spreads.append(max(values) - min(values))
                moves.append(max(abs(r[j] - admm[j]) for r in by_rho))
                print(f"{C:g} | {tau:g} | {admm[j]:.2f} | {spreads[-1]:.2f} | "
                      + " | ".join(f"{r[j]:.2f}" for r in by_rho) + f" | {exact[j]:.2f}")
        print(f"over {len(spreads)} grid points: permuted rows move the AUC by at most {max(spreads):.2f}; "
              f"rho in {RHOS} by median {np.median(moves):.2f}, at most {max(moves):.2f} AUC points")


if __name__ == "__main__":
    main(sys.argv[1:] or ["keel-yeast-1-2-8-9_vs_7"])
