"""Replay a store's unit timings under the config's order and the runner's longest-first plan, on N workers.

    python benchmarks/simulate_schedule.py configs/uci.yaml results/uci --workers 2 16 64

Each unit's duration is what its stored records took (a path's fit once, each
point's prediction, a standalone timing fit), plus a per-unit and a per-task
overhead (the fit child's fork and the dispatch round trip; measured on the
project machine, see benchmarks/RESULTS.md). Workers take the next task as
they free up, as joblib's do. Printed per order: the makespan, the ideal
(summed unit time / N) and the efficiency, ideal / makespan; and the summed
fit time alone over makespan x N (how issue 53 measured the runner on 16 cores), and
the efficiency with each unit's work outside its stored timings counted as work
(``--unit-overhead``: splitting, scoring, building records), which no order saves.
``--collector``: the main process's own seconds per unit (receiving a result,
storing its records, the progress line), done one unit at a time: with many
workers and short units it bounds the run however the units are ordered.

Orders:
  today      the config's order, one task per unit (the runner before the scheduler);
  new-prior  the plan from the cost model alone (a fresh run: no stored timings);
  new        the plan from stored timings of the other repeats (a resumed or re-run config: each repeat's
             units estimated from the rest, never from their own records).
"""

import argparse
import heapq
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eemrepro.experiments import get_kind, load_config  # noqa: E402
from eemrepro.experiments._schedule import Scheduler, record_seconds, unit_costs  # noqa: E402
from eemrepro.experiments._units import frame_keys, identity_sha  # noqa: E402
from eemrepro.store import ResultStore  # noqa: E402

COLUMNS = ["fit_seconds", "predict_seconds", "path_size", "standalone_fit_seconds", "identity_sha", "status"]


def collected(finished, collector):
    """When the main process has taken in every finished unit: ``finished`` holds (end time, units) of each
    task; the main process handles the units one at a time, ``collector`` seconds each, in the order they
    finish (receiving, storing, the progress line). The workers do not wait for it: joblib dispatches the
    next task from its callback thread as a task ends, and the pre-dispatched tasks are queued."""
    done = 0.0
    for end, units in sorted(finished):
        done = max(done, end) + collector * units
    return done


def makespan(durations, batches, workers, unit_overhead, task_overhead, collector=0.0):
    """List scheduling: each batch, in order, to the worker that frees up first; the run ends when the
    workers are done and the main process has taken in every unit (``collected``)."""
    free = [0.0] * workers
    finished = []
    for batch in batches:
        start = heapq.heappop(free)
        end = start + task_overhead + sum(durations[i] + unit_overhead for i in batch)
        heapq.heappush(free, end)
        finished.append((end, len(batch)))
    return max(max(free), collected(finished, collector))


def online_makespan(durations, scheduler, workers, unit_overhead, task_overhead, collector=0.0):
    """The runner's scheduler replayed: a freed worker takes ``scheduler.next_batch()``, and each finished
    batch's units are observed (their stored durations) before the next is taken. Returns (makespan, tasks)."""
    running, tasks, finished = [], 0, []

    def dispatch(now, worker):
        nonlocal tasks
        batch = scheduler.next_batch()
        if batch is not None:
            tasks += 1
            end = now + task_overhead + sum(durations[i] + unit_overhead for i in batch)
            heapq.heappush(running, (end, worker, batch))

    for w in range(workers):
        dispatch(0.0, w)
    end = 0.0
    while running:
        end, worker, batch = heapq.heappop(running)
        finished.append((end, len(batch)))
        for i in batch:
            scheduler.observe(i, durations[i])
        dispatch(end, worker)
    return max(end, collected(finished, collector)), tasks


def replay(config_path, store_path, workers, unit_overhead, task_overhead, datasets=None, repeats=None,
           collector=0.0):
    config = load_config(config_path, import_estimators=False)
    if datasets:
        config = replace(config, datasets=tuple(d for d in config.datasets if d in datasets))
    if repeats:
        config = replace(config, protocol=replace(config.protocol, repeats=repeats))
    kind = get_kind(config.kind)
    units = kind.units(config)
    frame = ResultStore(store_path).frame(COLUMNS)
    seconds = dict(zip(frame_keys(frame).tolist(), record_seconds(frame).fillna(0.0).tolist(), strict=True))
    timed = [i for i, u in enumerate(units) if all(k in seconds for k in u.keys())]
    units = [units[i] for i in timed]
    actual = np.array([sum(seconds[k] for k in u.keys()) for u in units])
    fit_only = dict(zip(frame_keys(frame).tolist(), (pd.to_numeric(frame["fit_seconds"], errors="coerce")
                                                      / pd.to_numeric(frame["path_size"], errors="coerce").fillna(1.0))
                        .fillna(0.0).tolist(), strict=True))
    fit = np.array([sum(fit_only[k] for k in u.keys()) for u in units])
    shas = {}
    for u in units:
        cell = (u.dataset, u.model, u.inner is not None)
        if cell not in shas:
            shas[cell] = identity_sha(kind.identity(config, u))
    prior, prior_known = unit_costs(config, units, known=True)
    # Each repeat's units estimated from the other repeats' records (as a resumed run would be).
    measured, measured_known = np.empty(len(units)), np.ones(len(units), dtype=bool)
    by_repeat = {}
    for i, u in enumerate(units):
        by_repeat.setdefault(u.repeat, []).append(i)
    for r, idx in by_repeat.items():
        others = frame[frame["repeat"] != r]
        costs, known = unit_costs(config, [units[i] for i in idx], others, shas, known=True)
        measured[idx], measured_known[idx] = costs, known
    cells = [(u.dataset, u.model) for u in units]
    orders = {"new-prior": (prior, prior_known), "new": (measured, measured_known)}
    rows = []
    for n in workers:
        ideal = actual.sum() / n
        span = makespan(actual, [[i] for i in range(len(units))], n, unit_overhead, task_overhead, collector)
        rows.append((n, "today", len(units), span, ideal, ideal / span, fit.sum() / (span * n)))
        for name, (costs, known) in orders.items():
            span, tasks = online_makespan(actual, Scheduler(costs, known, cells), n, unit_overhead, task_overhead,
                                          collector)
            rows.append((n, name, tasks, span, ideal, ideal / span, fit.sum() / (span * n)))
    # The same rows' work including each unit's own share of it outside the stored timings (splitting,
    # scoring, records): what no order can save, against which an order's makespan is judged too.
    rows = [(*r, (actual.sum() + len(units) * unit_overhead) / r[0] / r[3]) for r in rows]
    return len(units), actual.sum(), rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config")
    parser.add_argument("store")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 16, 64])
    parser.add_argument("--unit-overhead", type=float, default=0.013, help="seconds per unit (the fit child)")
    parser.add_argument("--task-overhead", type=float, default=0.013, help="seconds per dispatched task")
    parser.add_argument("--collector", type=float, default=0.0,
                        help="seconds of the main process's own work per unit (serial: receiving, storing)")
    parser.add_argument("--datasets", nargs="+", help="only these data sets of the config")
    parser.add_argument("--repeats", type=int, help="only the first N repeats")
    args = parser.parse_args(argv)
    n, total, rows = replay(args.config, args.store, args.workers, args.unit_overhead, args.task_overhead,
                            args.datasets, args.repeats, args.collector)
    print(f"{args.config} over {args.store}: {n} units, {total:.0f} s of stored unit time; overheads "
          f"{args.unit_overhead} s/unit, {args.task_overhead} s/task, main process {args.collector} s/unit")
    print(f"{'workers':>7} {'order':>10} {'tasks':>7} {'makespan s':>11} {'ideal s':>9} {'efficiency':>10} "
          f"{'fit / (makespan x N)':>20} {'incl. unit work':>15}")
    for w, name, tasks, span, ideal, eff, fit_eff, work_eff in rows:
        print(f"{w:>7} {name:>10} {tasks:>7} {span:>11.1f} {ideal:>9.1f} {eff:>10.1%} {fit_eff:>20.1%} "
              f"{work_eff:>15.1%}")


if __name__ == "__main__":
    main()
