"""The runner's cost per unit on small units: a fit process forked per unit against one per run.

Every unit's fits run in a forked child under the watchdog (fit timeout, crash isolation). Until
the fifteenth sitting a child was forked per unit; on small units that fork (and the pages the
child then copies) cost more than the fits: an ESMM path over C on a 150-point KEEL set fits in
about 20 ms. Now one child serves all the units of a run (forked anew after a kill or a crash).

Both ways run here on the same units, in turns, in one process (the runner's loop without its
store): (f) a child per unit (what a task without a run id still gets: the old behaviour, the
unit's data sent through the pipe instead of inherited), (r) one child for the run, and (i) the
fits in this process without a watchdog, the floor. The records' metrics must be equal.

Units: the first N ESMM units (one C path each) of configs/esmm_table4.yaml on one KEEL set.

Usage: python benchmarks/bench_units.py [--dataset keel-glass-0-1-6_vs_2] [--units 300] [--repeat 3]
       [--mirror DIR]
"""

import argparse
import time
import warnings
from dataclasses import replace
from pathlib import Path

from eemrepro.experiments import _watchdog as watchdog
from eemrepro.experiments import load_config
from eemrepro.experiments._dispatch import run_task as _run_task
from eemrepro.experiments._kinds import get_kind
from eemrepro.experiments._runner import unit_task
from eemrepro.experiments._schedule import records_seconds
from eemrepro.store._keys import identity_sha

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "esmm_table4.yaml"


def tasks(dataset, n_units, mirror, run_id):
    config = load_config(CONFIG)
    config = replace(config, datasets=(dataset,))
    kind = get_kind(config.kind)
    units = [u for u in kind.units(config) if u.model == "ESMM"][:n_units]
    out = []
    for u in units:  # the runner's own task of each unit
        ident = kind.identity(config, u)
        out.append(unit_task(config, u, ident, identity_sha(ident), run_id, None, mirror))
    return out


def in_process(task, steps, data, points, timeout):
    """The watchdog's fit step without a child (the floor)."""
    done = {}
    for message in steps(task, data, points):
        if message[0] == "record":
            done[watchdog.point_id(message[1])] = message[2]
    return done, [], [], None


def run(unit_tasks, mode):
    saved = watchdog._run_points_in_child
    if mode == "i":
        watchdog._run_points_in_child = in_process
    try:
        start = time.perf_counter()
        records = [_run_task(t) for t in unit_tasks]
        seconds = time.perf_counter() - start
    finally:
        watchdog._run_points_in_child = saved
        watchdog.close_fit_child()
    return seconds, [[r["metrics"] for r in recs] for recs in records], sum(map(records_seconds, records))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="keel-glass-0-1-6_vs_2")
    parser.add_argument("--units", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mirror", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    per_unit = tasks(args.dataset, args.units, args.mirror, run_id=None)
    per_run = tasks(args.dataset, args.units, args.mirror, run_id="bench")
    run(per_unit[:5], "f")  # data loaded and cached, imports done
    best, metrics, outside = {"f": float("inf"), "r": float("inf"), "i": float("inf")}, {}, float("inf")
    for _ in range(args.repeat):
        for mode, unit_tasks in (("f", per_unit), ("r", per_run), ("i", per_run)):
            seconds, metrics[mode], stored = run(unit_tasks, mode)
            best[mode] = min(best[mode], seconds)
            if mode == "r":
                outside = min(outside, seconds - stored)
    n = len(per_unit)
    print(f"Runner overhead: {n} ESMM units (one C path of 5 points each) of {args.dataset}, "
          f"best of {args.repeat}; milliseconds per unit:")
    names = {"f": "(f) a fit child per unit", "r": "(r) one fit child per run", "i": "(i) in process, no watchdog"}
    for mode in "fri":
        print(f"  {names[mode]:30s} {1000 * best[mode] / n:8.1f}")
    print(f"  (r) outside the records' own timings {1000 * outside / n:8.1f}   (split, scoring, records: the "
          "scheduling simulator's --unit-overhead)")
    print("ratios (measured in this run):")
    print(f"  (f) / (r)   {best['f'] / best['r']:5.2f}   a child per unit against one per run")
    print(f"  (r) / (i)   {best['r'] / best['i']:5.2f}   the watchdog's remaining cost")
    same = metrics["f"] == metrics["r"] == metrics["i"]
    print(f"metrics equal in all three: {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
