"""The reports over CI's stores: ``tables``, ``report`` and ``check`` over TABLE_RESULTS, against issue 66's targets.

    python benchmarks/bench_reports.py [--runs 5] [--only tables]

Each command runs as its own process, ``--runs`` times; the median of each
figure is printed: wall seconds, CPU seconds (user + system of the command and
of the worker processes it waited for, as ``/usr/bin/time`` counts them) and
the peak resident memory of the command and its workers, from the operating
system (``os.wait4``). CPU seconds are what to compare on a busy machine; wall
seconds only on a quiet one. The ratio is the median wall time over the target
(at most 1.00 meets it).

Each command is measured twice: ``first``, with nothing kept (``EEMREPRO_CACHE=0``: what a fresh checkout, a
changed store or changed code costs), and ``kept``, after one unmeasured run in a cache folder of its own (what
the next ``make tables``, ``report`` or ``check`` of unchanged folders costs: ``eemrepro._kept``).

Targets (issue 66, item 6), on a 2-core machine: ``tables`` (every format,
full layout, CI's command) at most 5 s and 600 MB; ``report`` with the pins at
most 8 s; ``check`` with the pins and the claims at most 3 s.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE_RESULTS = ["results/uci", "results/unbalanced", "results/extreme", "results/dcs_correlation",
                 "results/lssvm_ensemble", "results/melm_table2", "results/melm_table3", "results/esmm_table4"]
PINS, CLAIMS = ".ci/published-pins.yaml", ".ci/claim-verdicts.yaml"


def commands(out):
    """[(name, argv, target wall seconds, target peak MB or None)] of the three commands, writing under ``out``."""
    eemrepro = [sys.executable, "-m", "eemrepro"]
    return [
        ("tables", [*eemrepro, "tables", *TABLE_RESULTS, "--format", "md", "--format", "csv", "--format", "latex",
                    "--layout", "full", "--out", str(out / "tables"), "--force"], 5.0, 600.0),
        ("report", [*eemrepro, "report", *TABLE_RESULTS, "--tolerance", PINS, "--out", str(out / "report"),
                    "--force"], 8.0, None),
        ("check", [*eemrepro, "check", *TABLE_RESULTS, "--tolerance", PINS, "--claims", CLAIMS], 3.0, None),
    ]


def measure(cmd, env):
    """(wall s, CPU s, peak RSS MB, exit code) of one run of ``cmd`` and the worker processes it waited for."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if code != 0:
        sys.stderr.write(f"{' '.join(cmd)} exited {code}:\n{err[-2000:]}\n")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (the median is printed)")
    parser.add_argument("--only", action="append", choices=["tables", "report", "check"],
                        help="measure this command only (repeatable)")
    args = parser.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryDirectory(prefix="bench-reports-") as tmp:
        print(f"{'command':<14} {'wall s':>7} {'CPU s':>7} {'peak MB':>8}  {'target':<16} {'wall/target':>11}"
              f" {'MB/target':>9}   (median of {args.runs})")
        for (name, cmd, seconds, megabytes), (mode, extra) in (
                (c, m) for c in commands(Path(tmp)) for m in (("first", {"EEMREPRO_CACHE": "0"}),
                                                              ("kept", {"EEMREPRO_CACHE": "1"}))):
            if args.only and name not in args.only:
                continue
            mine = dict(env, **extra, EEMREPRO_CACHE_DIR=str(Path(tmp) / f"cache-{name}"))
            if mode == "kept":
                measure(cmd, mine)  # what is kept for the counted runs
            runs = [measure(cmd, mine) for _ in range(args.runs)]
            name = f"{name} {mode}"
            wall, cpu, peak = (statistics.median(r[i] for r in runs) for i in range(3))
            failed = [r[3] for r in runs if r[3] != 0]
            target = f"<= {seconds:g} s" + (f", {megabytes:g} MB" if megabytes else "")
            memory = f"{peak / megabytes:9.2f}" if megabytes else f"{'':>9}"
            print(f"{name:<14} {wall:7.2f} {cpu:7.2f} {peak:8.0f}  {target:<16} {wall / seconds:11.2f} {memory}"
                  + (f"   (exit {failed[0]})" if failed else ""))


if __name__ == "__main__":
    main()
