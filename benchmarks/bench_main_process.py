"""What grows with the number of workers: the main process's own seconds per unit and per record, the
dispatch round trip, and the fit child's cost per unit; then the simulator's makespan at 16 and 64 workers
with those costs, before and after.

    python benchmarks/bench_main_process.py [--units 2000]

* **main process** (``_runner._collect``, fed results without workers, into a real store under its lock):
  receiving a unit's records, storing them (write-ahead segment: written and fsync'ed), the scheduler's and
  the timeout ledger's bookkeeping, the warnings and the progress count. *before*: one store write and fsync
  per unit (the runner until issue 60); *after*: one per batch of units handed back together.
* **dispatch**: joblib's loky round trip of an empty task (``_dispatch.dispatch`` at 2 workers, warm).
* **fit child**: ``_watchdog.run_points`` of a fit that does nothing, per unit (the fork-server child that
  runs every fit of a worker).

Then ``simulate_schedule``'s list scheduler replays N units of 10 ms (the issue's bound: the main process must
not hold 16 workers back on such units) on 16 and 64 workers, with the measured costs: its makespan against
the ideal (N x 10 ms / workers). Ratios are of one run on one machine.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from simulate_schedule import makespan, replay  # noqa: E402

from eemrepro.experiments import _runner  # noqa: E402
from eemrepro.experiments._dispatch import Progress, dispatch  # noqa: E402
from eemrepro.experiments._runner import RunSummary  # noqa: E402
from eemrepro.experiments._schedule import Scheduler  # noqa: E402
from eemrepro.experiments._timeouts import TimeoutLedger  # noqa: E402
from eemrepro.store import ResultStore  # noqa: E402


def record(i, j):
    """A grid-search record as a worker hands it back (the fields and sizes of a real one)."""
    return {"kind": "grid-search", "dataset": "heart", "model": "EEMrbf", "estimator": "EEM",
            "params": {"n_hidden": 10 * (j + 1)}, "fixed_params": {"activation": "rbf"}, "repeat": i // 10,
            "fold": i % 10, "inner": None, "status": "ok",
            "metrics": {"gmean": 0.81234567, "bac": 0.8123, "auc": 0.9012345},
            "criteria": {}, "fit_seconds": 0.0123, "predict_seconds": 0.0012, "path_size": None, "error": None,
            "standalone_fit_seconds": None, "n_train": 243, "n_test": 27, "seed": 1234567 + i, "fit_threads": 1,
            "identity": {"estimator": "EEM", "kind": "grid-search", "folds": 10, "seed": 0, "scaling": "global",
                         "splitter": "stratified-kfold", "params.activation": "rbf"},
            "identity_sha": "0123456789abcdef", "data_sha256": "ab" * 32,
            "versions": {"numpy": "2.4.6", "scikit-learn": "1.9.1", "eemrepro": "0.1.0"}, "host": "vm",
            "finished_at": 1.7e9 + i, "started_at": 1.7e9 + i, "worker": 4242}


def collect_seconds(n_units, per_unit, batch, per_batch_store):
    """Seconds of the main process per unit: ``n_units`` units of ``per_unit`` records, handed back in
    batches of ``batch`` units, stored one write per unit (``per_batch_store`` False) or one per batch."""
    results = [(i, [record(i, j) for j in range(per_unit)]) for i in range(n_units)]
    batches = [results[k:k + batch] for k in range(0, n_units, batch)]
    order = Scheduler(np.full(n_units, 0.01), np.ones(n_units, dtype=bool), [("heart", "EEMrbf")] * n_units)
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultStore(Path(tmp) / "out")
        with store.writing("bench"):
            store.run_id = store.new_run_id()
            summary = RunSummary(out=Path(tmp), total_units=n_units, pending_units=n_units)
            saved = store.append_units
            if not per_batch_store:  # the runner before: a write and an fsync per unit
                store.append_units = lambda units: [saved([r]) for r in units]
            start = time.perf_counter()
            _runner._collect(iter(batches), order, store, TimeoutLedger("skip"), summary,
                             Progress(n_units, enabled=False))
            seconds = time.perf_counter() - start
            store.append_units = saved
            store.close()
    return seconds / n_units


def dispatch_seconds(n_tasks, jobs=2):
    list(dispatch(([] for _ in range(4)), jobs))  # start the workers first
    start = time.perf_counter()
    for _ in dispatch(([] for _ in range(n_tasks)), jobs):
        pass
    return (time.perf_counter() - start) / n_tasks * jobs  # a worker's seconds per task, overlap aside


def fit_child_seconds(n_units):
    from eemrepro.experiments._watchdog import close_fit_child, run_points
    from tests.helpers import echo_steps

    data = np.zeros((10, 3))
    task = {"points": [{"i": 0}], "skip_points": [], "fit_timeout": 60, "after_timeout": "skip", "run_id": "b"}
    run_points(task, echo_steps, data)
    start = time.perf_counter()
    for _ in range(n_units):
        run_points(task, echo_steps, data)
    seconds = (time.perf_counter() - start) / n_units
    close_fit_child()
    return seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, default=2000)
    parser.add_argument("--store", default="results/unbalanced", help="a store whose timings are replayed")
    parser.add_argument("--config", default="configs/unbalanced.yaml")
    parser.add_argument("--datasets", nargs="+", default=["libras-move", "spectrometer", "arrhythmia", "ecoli",
                                                            "oil-spill", "car-evaluation", "solar-flare"])
    args = parser.parse_args(argv)
    n = args.units
    print(f"main process, {n} units (seconds per unit; per record = per unit / records):")
    costs = {}
    for per_unit, batch in ((1, 1), (1, 16), (10, 1), (10, 16)):
        before = collect_seconds(n, per_unit, batch, per_batch_store=False)
        after = collect_seconds(n, per_unit, batch, per_batch_store=True)
        costs[(per_unit, batch)] = (before, after)
        print(f"  {per_unit:>2} record(s)/unit, {batch:>2} unit(s)/task: before {before * 1e3:7.3f} ms, "
              f"after {after * 1e3:7.3f} ms ({before / after:5.2f}x); per record after "
              f"{after / per_unit * 1e3:6.3f} ms")
    task = dispatch_seconds(400)
    unit = fit_child_seconds(200)
    print(f"dispatch round trip (loky, 2 workers): {task * 1e3:.2f} ms a task; fit child: {unit * 1e3:.2f} ms a unit")
    units = 20_000
    durations = np.full(units, 0.010)
    print(f"simulated: {units} units of 10 ms, one unit a task (a fresh store: priors are never batched) and 16 "
          "a task (measured), with the main process's measured cost per unit (1 record a unit)")
    for workers in (16, 64):
        ideal = units * 0.010 / workers
        for batch in (1, 16):
            batches = [list(range(k, min(units, k + batch))) for k in range(0, units, batch)]
            spans = [makespan(durations, batches, workers, unit, task, collector=costs[(1, batch)][which])
                     for which in (0, 1)]
            print(f"  {workers:>2} workers, {batch:>2} unit(s)/task: makespan before {spans[0]:6.1f} s, after "
                  f"{spans[1]:6.1f} s, ideal {ideal:5.1f} s; efficiency before {ideal / spans[0]:6.1%}, "
                  f"after {ideal / spans[1]:6.1%}")
    # The 7-set chunk (1 repeat), its stored timings replayed with the measured costs (10 records a unit
    # is about a grid's; the fresh store's order: one unit a task, so the per-unit cost of 1 unit a task).
    print(f"replayed: {args.config} over {args.store}, {' '.join(args.datasets)}, 1 repeat")
    for which, label in ((0, "before"), (1, "after")):
        n, total, rows = replay(args.config, args.store, [16, 64], unit, task, args.datasets, 1,
                                costs[(10, 1)][which])
        for workers, name, _, span, ideal, eff, _, _ in rows:
            if name != "today":
                print(f"  {label:>6} {workers:>2} workers, {name:>9} order: makespan {span:6.1f} s, ideal {ideal:5.1f}"
                      f" s, efficiency {eff:6.1%}")
    durations = _unit_durations(args.config, args.store, args.datasets)
    print(f"  the longest unit takes {durations.max():.1f} s of the {durations.sum():.0f} s: no order makes 64 "
          f"workers finish before it (ideal at 64: {durations.sum() / 64:.1f} s)")


def _unit_durations(config_path, store_path, datasets):
    from dataclasses import replace as _replace

    from eemrepro.experiments import get_kind, load_config
    from eemrepro.experiments._schedule import record_seconds
    from eemrepro.experiments._units import frame_keys

    config = load_config(config_path, import_estimators=False)
    config = _replace(config, datasets=tuple(d for d in config.datasets if d in datasets),
                      protocol=_replace(config.protocol, repeats=1))
    frame = ResultStore(store_path).frame(["fit_seconds", "predict_seconds", "path_size", "standalone_fit_seconds"])
    seconds = dict(zip(frame_keys(frame).tolist(), record_seconds(frame).fillna(0.0).tolist(), strict=True))
    return np.array([sum(seconds.get(k, 0.0) for k in u.keys()) for u in get_kind(config.kind).units(config)])


if __name__ == "__main__":
    main()
