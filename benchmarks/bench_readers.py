"""The readers at scale: tables, check and the resume dry run over TABLE_RESULTS and a synthetic store.

    python benchmarks/bench_readers.py [--records 10000000] [--mirror DIR]

The synthetic store (``benchmarks/make_synthetic_store.py``: a user's grid of
4,256 points over 47 data sets, 5 repeats of 10-fold CV, the records' real
schema) is written once into ``.cache/bench-store/synthetic-<records>`` and
reused. Each command runs as its own process; wall seconds and the peak
resident memory of it and its children come from the operating system.
Targets (issue 53): over TABLE_RESULTS, tables <= 10 s and <= 600 MB, check
<= 8 s; over 10 million records, tables <= 60 s and <= 1 GB, the resume dry
run <= 10 s.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import ROOT, TABLE_RESULTS, measure  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--mirror", default=os.environ.get("EEMREPRO_MIRROR"))
    args = parser.parse_args(argv)
    env = dict(os.environ, **({"EEMREPRO_MIRROR": args.mirror} if args.mirror else {}))
    eemrepro = [sys.executable, "-m", "eemrepro"]
    synthetic = ROOT / ".cache" / "bench-store" / f"synthetic-{args.records}"
    if not (synthetic / "records").is_dir():
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_synthetic_store.py"), str(synthetic),
                        "--records", str(args.records), *(["--mirror", args.mirror] if args.mirror else [])],
                       cwd=ROOT, env=env, check=True)
    out = ROOT / ".cache" / "bench-store" / "tables"
    rows = [
        ("tables, TABLE_RESULTS", [*eemrepro, "tables", *TABLE_RESULTS, "--format", "md", "--format", "csv",
                                   "--format", "latex", "--layout", "full", "--out", str(out / "table-results"),
                                   "--force"], "<= 10 s, <= 600 MB"),
        ("check, TABLE_RESULTS", [*eemrepro, "check", *TABLE_RESULTS, "--tolerance", ".ci/published-pins.yaml",
                                  "--claims", ".ci/claim-verdicts.yaml"], "<= 8 s"),
        (f"tables, {args.records:,} records", [*eemrepro, "tables", str(synthetic), "--out", str(out / "synthetic"),
                                               "--force"], "<= 60 s, <= 1 GB"),
        (f"check, {args.records:,} records", [*eemrepro, "check", str(synthetic), "--report-only"], ""),
        (f"resume dry run, {args.records:,} records", [*eemrepro, "run", str(synthetic / "config.yaml"), "--out",
                                                        str(synthetic), "--dry-run"], "<= 10 s"),
    ]
    print(f"{'command':<40} {'wall s':>8} {'peak MB':>9}  target")
    for name, cmd, target in rows:
        wall, peak, code = measure(cmd, ROOT, env)
        print(f"{name:<40} {wall:>8.1f} {peak:>9.0f}  {target}{'' if code in (0, 1) else f'  (exit {code})'}")


if __name__ == "__main__":
    main()
