"""Learn the fresh-store cost prior (eemrepro/experiments/cost_prior.json) from the committed stores.

``make cost-prior``, or ``python benchmarks/derive_cost_prior.py [STORE ...] [--out FILE]``: every
grid-search store under results/ by default. The same stores give the same bytes (a test checks the
committed file against them); see eemrepro/experiments/_cost_prior.py for the model.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eemrepro.experiments._cost_prior import PRIOR_FILE, prior_from_stores, prior_text  # noqa: E402

#: The committed stores the prior is learned from: those of the grid-search kind (the others time projections).
STORES = ("uci", "unbalanced", "extreme", "esmm_table4", "esmm_fuzzy_weights", "lssvm_ensemble", "stability",
          "unbalanced-5-repeats")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="*", type=Path, default=[ROOT / "results" / s for s in STORES])
    parser.add_argument("--out", type=Path, default=PRIOR_FILE)
    args = parser.parse_args(argv)
    text = prior_text(prior_from_stores(args.stores))
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} from {len(args.stores)} stores")


if __name__ == "__main__":
    main()
