"""Draw where a run's time went, from its store alone: workers busy over time, per model and per data set.

    python benchmarks/timeline.py results/unbalanced [--run RUN_ID] [--out timeline.png]

Each unit's records say when it started and on which worker (``started_at``, ``worker``, with ``host``) and
when each of its records was finished (``finished_at``): a unit is busy from its start to its last record.
Records written before units recorded their start (before issue 60) have no timeline and are left out (the
script says how many). Printed: the run's span, the units' summed seconds, and the share of the workers'
time they filled (the ``jobs`` of the run file); the figure stacks the units running at each moment, one
colour per model (top) and per data set (bottom).
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eemrepro.store import ResultStore  # noqa: E402

KEY = ["run_id", "host", "worker", "started_at", "dataset", "model"]


def units_of(store, run=None):
    """One row per unit: (run id, host, worker, model, data set, start, end), and how many records had none."""
    frame = ResultStore(store).frame(["run_id", "host", "worker", "started_at", "finished_at"])
    if run is not None:
        frame = frame[frame["run_id"].astype(str) == run]
    if "started_at" not in frame:
        return pd.DataFrame(columns=[*KEY, "end"]), len(frame)
    timed = frame[pd.to_numeric(frame["started_at"], errors="coerce").notna()]
    timed = timed.assign(started_at=pd.to_numeric(timed["started_at"]), end=pd.to_numeric(timed["finished_at"]))
    units = timed.groupby([timed[c].astype(str) if c != "started_at" else timed[c] for c in KEY],
                          observed=True)["end"].max().reset_index()
    return units, len(frame) - len(timed)


def busy(units, grid):
    """Units running at each time of ``grid`` (seconds since the first start), per group (a column each)."""
    t0 = units["started_at"].min()
    starts, ends = units["started_at"].to_numpy() - t0, units["end"].to_numpy() - t0
    return ((starts[:, None] <= grid[None]) & (grid[None] < ends[:, None])).astype(float)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store")
    parser.add_argument("--run", help="the run id to draw (default: the store's last run with unit starts)")
    parser.add_argument("--out", default="timeline.png")
    args = parser.parse_args(argv)
    units, untimed = units_of(args.store, args.run)
    if untimed:
        print(f"{untimed} record(s) without a unit start (written before units recorded it): left out")
    if units.empty:
        raise SystemExit(f"{args.store}: no unit records when it started; run it with this eemrepro first")
    runs = sorted(units["run_id"].unique())
    run = args.run or runs[-1]
    units = units[units["run_id"] == run]
    info_path = Path(args.store) / "runs" / f"{run}.json"
    info = json.loads(info_path.read_text()) if info_path.is_file() else {}
    span = units["end"].max() - units["started_at"].min()
    seconds = (units["end"] - units["started_at"]).sum()
    jobs = info.get("jobs") or units.groupby(["host", "worker"]).ngroups
    print(f"run {run}: {len(units)} units on {units.groupby(['host', 'worker']).ngroups} worker(s) "
          f"(jobs {jobs}), span {span:.1f} s, {seconds:.1f} unit-seconds: {seconds / (span * jobs):.1%} of the "
          f"workers' time; stages {info.get('stage_seconds', {})}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.linspace(0, span, 400)
    running = busy(units, grid)
    fig, axes = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for ax, by in zip(axes, ("model", "dataset"), strict=True):
        names = sorted(units[by].unique())
        stacks = [running[(units[by] == n).to_numpy()].sum(0) for n in names]
        ax.stackplot(grid, stacks, labels=names, step="post")
        ax.axhline(jobs, color="k", lw=0.8, ls="--")
        ax.set_ylabel(f"units running\n(per {by})")
        ax.legend(fontsize=6, ncol=4, loc="upper right")
    axes[-1].set_xlabel("seconds since the first unit started")
    fig.suptitle(f"{args.store}, run {run}: {seconds / (span * jobs):.0%} of {jobs} workers' time")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
