"""The first dry run's estimate on a fresh store against the real run (issue 67, finding 4).

For each config: ``eemrepro run CONFIG --dry-run --jobs 1`` into a fresh folder (its estimate line), then
``nice -n 10 eemrepro run CONFIG --jobs 1`` into the same folder, timed: wall seconds and the CPU seconds
of the run's processes (what an idle core would have taken; the machine may be shared). Prints a Markdown
table (benchmarks/RESULTS.md keeps one).

    python benchmarks/bench_first_estimate.py                 # the three configs below
    python benchmarks/bench_first_estimate.py --dry-only      # the estimates alone (seconds)
    python benchmarks/bench_first_estimate.py configs/quick.yaml

Needs the mirror (``--mirror`` or ``$EEMREPRO_MIRROR``) for the registry's data sets.
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "first-estimate"
#: Three shapes: the issue's user case (3 small CSVs, ten models, SVM's wide grid), the quick start
#: (2 bundled sets, small grids) and one model on a larger set (the paper's LS-SVM grid on abalone7).
CONFIGS = (HERE / "user-case.yaml", ROOT / "configs" / "quick.yaml", HERE / "one-model.yaml")


def _cli(config, out, *extra, nice=False):
    command = [sys.executable, "-m", "eemrepro", "run", str(config), "--jobs", "1", "--out", str(out), *extra]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run((["nice", "-n", "10"] if nice else []) + command, env=env, capture_output=True,
                          text=True, check=True)


def dry_estimate(config, out):
    """(the dry run's estimate line, its minutes)."""
    line = _cli(config, out, "--dry-run").stdout.strip().splitlines()[-1]
    return line, float(re.search(r"rough estimate ([0-9.]+) min", line).group(1))


def real_run(config, out):
    """(wall seconds, CPU seconds of the run's processes) of the run, niced."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    _cli(config, out, nice=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="*", type=Path, default=list(CONFIGS))
    parser.add_argument("--dry-only", action="store_true", help="print the estimates, run nothing")
    parser.add_argument("--mirror", default=None)
    args = parser.parse_args(argv)
    if args.mirror:
        os.environ["EEMREPRO_MIRROR"] = args.mirror
    print("| config | estimate (jobs 1) | real wall, niced | CPU of the run | wall / estimate |")
    print("|---|---|---|---|---|")
    for config in args.configs:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "store"
            line, minutes = dry_estimate(config, out)
            print(f"<!-- {line} -->", file=sys.stderr)
            if args.dry_only:
                print(f"| {config.name} | {minutes} min | | | |")
                continue
            wall, cpu = real_run(config, out)
            print(f"| {config.name} | {minutes} min | {wall / 60:.2f} min | {cpu / 60:.2f} min | "
                  f"{wall / 60 / minutes:.2f} |", flush=True)


if __name__ == "__main__":
    main()
