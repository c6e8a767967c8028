"""LIBSVM's kernel cache: fit time with two ``cache_size`` values, one run.

The SVM column of ``configs/extreme.yaml`` sets ``cache_size: 4000`` (MB) where
LIBSVM's default is 100. This measures why: the same fit (webpages by default,
fold 0 of repeat 0 with the configs' seed, so the data that Table 4's run trains on) with
each cache size, one after the other in this process, and checks that the two
solutions are bit-identical (the cache changes speed, never the model).

The default point, C = 1e10 and gamma = 1, is the grid's hardest: nearly every
training point is a support vector, and the 31k x 31k float kernel (3.9 GB)
does not fit LIBSVM's default cache. ``--n`` trains on a stratified subsample
instead (a quick run; the gap shrinks with the kernel's size).

Needs the data set: the cache, ``--mirror`` or ``$EEMREPRO_MIRROR``.

Usage: python benchmarks/bench_svm_cache.py [--dataset NAME] [--C C] [--gamma G] [--sizes 100 4000]
       [--n N] [--mirror DIR]
"""

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from eemrepro.datasets import load_dataset
from eemrepro.experiments import load_config, make_splitter
from eemrepro.models import SVM


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="webpages")
    parser.add_argument("--C", type=float, default=1e10)
    parser.add_argument("--gamma", type=float, default=1.0)
    parser.add_argument("--sizes", type=float, nargs=2, default=[100.0, 4000.0], metavar=("SMALL", "LARGE"))
    parser.add_argument("--n", type=int, help="train on a stratified subsample of this many points")
    parser.add_argument("--mirror", help="a folder or URL standing in for the data hosts")
    args = parser.parse_args(argv)

    X, y, _ = load_dataset(args.dataset, mirror=args.mirror)
    protocol = load_config(Path(__file__).resolve().parents[1] / "configs" / "extreme.yaml").protocol
    train, _ = make_splitter(protocol, args.dataset).split_at(y, repeat=0, fold=0)
    X, y = X[train], y[train]
    if args.n and args.n < len(y):
        X, _, y, _ = train_test_split(X, y, train_size=args.n, stratify=y, random_state=0)
    kernel_mb = 4 * len(y) ** 2 / 2**20

    seconds, models = [], []
    for size in args.sizes:
        start = time.perf_counter()
        models.append(SVM(C=args.C, gamma=args.gamma, cache_size=size).fit(X, y))
        seconds.append(time.perf_counter() - start)
    a, b = models
    identical = (np.array_equal(a.support_, b.support_) and np.array_equal(a.dual_coef_, b.dual_coef_)
                 and a.intercept_ == b.intercept_)

    print(f"SVM cache benchmark: {args.dataset} fold 0, n={len(y)}, C={args.C:g}, gamma={args.gamma:g}, "
          f"{len(a.support_)} support vectors, kernel {kernel_mb:.0f} MB as floats; seconds:")
    for size, t in zip(args.sizes, seconds, strict=True):
        print(f"  cache_size {size:>7g} MB  {t:8.1f}")
    print(f"ratio (measured in this run): {seconds[0] / seconds[1]:.2f}x faster with the larger cache")
    print(f"solutions bit-identical: {'yes' if identical else 'NO'}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
