"""Where a first ``tables`` over CI's stores spends its time, phase by phase (issue 66, item 6).

    EEMREPRO_CACHE=0 python benchmarks/first_tables_phases.py [--runs 3]

Each run is a process of its own with nothing kept (``EEMREPRO_CACHE=0``): the
imports ``tables`` needs (the reports and matplotlib's PDF and SVG backends),
then ``build_tables`` (CI's command: md, csv and LaTeX, full layout), with the
reading and selection (``rows_by_datasets``), the figures (``_draw``) and the
whole document timed by wrapping those functions. Medians of wall seconds are
printed. The phases are what a first read cannot skip: the 5 s target of
``make tables`` is compared with their sum.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_reports import TABLE_RESULTS  # noqa: E402

CHILD = """
import json, sys, time
start = time.perf_counter()
import matplotlib.backends.backend_pdf, matplotlib.backends.backend_svg, matplotlib.pyplot  # noqa: F401
import eemrepro.reports._build as build
seconds = {"imports": time.perf_counter() - start}

def timed(name, fn):
    def wrapper(*args, **kwargs):
        begun = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - begun
    return wrapper

build.rows_by_datasets = timed("read and select (rows_by_datasets)", build.rows_by_datasets)
build._draw = timed("figures (_draw)", build._draw)
build._tables_document = timed("document (all of the above but imports)", build._tables_document)
begun = time.perf_counter()
build.build_tables(sys.argv[1:-1], sys.argv[-1], formats=("md", "csv", "latex"), layout="full", force=True)
seconds["build_tables"] = time.perf_counter() - begun
seconds["whole"] = time.perf_counter() - start
print(json.dumps(seconds))
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    env = {**os.environ, "EEMREPRO_CACHE": "0"}
    runs = []
    with tempfile.TemporaryDirectory() as out:
        for _ in range(args.runs):
            done = subprocess.run([sys.executable, "-c", CHILD, *TABLE_RESULTS, str(Path(out) / "tables")],
                                  cwd=ROOT, env=env, capture_output=True, text=True, check=True)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    for name in runs[0]:
        values = [r[name] for r in runs]
        print(f"{name:45s} {statistics.median(values):6.2f} s  ({', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
