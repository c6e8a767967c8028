"""Dispatch: tasks out to workers (joblib on loky or Dask), records back, progress. Nothing about resume.

A task is a batch of units (``_schedule.Scheduler``); a worker runs them one
after the other (``run_batch``) and hands back each unit's records, stamped
with when the unit started and on which worker (``started_at``, ``worker``):
any store then draws its own timeline (``benchmarks/timeline.py``).
"""

import os
import sys
import time

from ._kinds import get_kind
from ._timeouts import TimeoutLedger
from ._watchdog import exit_with_parent, fit_threads, limit_fit_threads


def run_task(task):
    """One unit's records (its kind's ``run``), in this process."""
    if task.get("local_dataset") is not None:  # a user's own file: known to the worker as to the run
        from ..datasets import register_local

        register_local(task["local_dataset"])
    # Every kind, every backend: what a kind computes here (a fit without a fork, D_CS pairs) as in the fit child.
    limit_fit_threads(fit_threads(task))
    return get_kind(task["kind"]).run(task)


def run_batch(tasks):
    """A batch of units run one after the other in one worker: (each one's ``unit_index``, its records).

    The run's timeout rule holds inside the batch as between dispatches (the
    ledger): a unit after a timed-out one skips what that timeout abandons.
    """
    out, ledger, worker = [], None, os.getpid()
    for t in tasks:
        index = t.pop("unit_index", None)
        ledger = ledger or TimeoutLedger.of(t)
        t = {**t, "skip_points": ledger.skip_points(t)}
        started = time.time()
        records = run_task(t)
        for r in records:
            r.update(started_at=started, worker=worker)
        ledger.note_records(records)
        out.append((index, records))
    return out


def dispatch(tasks, n_jobs, backend="loky", scheduler=None):
    """Yield each batch's ``run_batch`` result as it finishes (joblib; ``tasks``, an iterable of batches, is
    consumed lazily, so a timeout seen on one fold reaches the units dispatched after it)."""
    from joblib import Parallel, delayed, parallel_config

    if backend == "loky":
        # Workers exit when the run's process dies (kill -9): no orphans computing for nobody.
        with parallel_config(backend="loky", n_jobs=n_jobs, initializer=exit_with_parent, initargs=(os.getpid(),)):
            yield from Parallel(return_as="generator_unordered", pre_dispatch="2*n_jobs")(
                delayed(run_batch)(t) for t in tasks
            )
        return
    if backend != "dask":
        raise ValueError(f"backend must be 'loky' or 'dask', got {backend!r}")
    client, cluster = _dask_client(n_jobs, scheduler)
    try:
        with parallel_config(backend="dask", n_jobs=n_jobs):
            yield from Parallel(return_as="generator_unordered", pre_dispatch="2*n_jobs")(
                delayed(run_batch)(t) for t in tasks
            )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _dask_client(n_jobs, scheduler):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise RuntimeError("--backend dask needs dask.distributed: pip install 'eemrepro[dask]'") from exc
    if scheduler:
        return Client(scheduler), None
    # The cluster's processes ignore Ctrl-C (they inherit it ignored): the run stops them itself, and a
    # terminal's SIGINT reaching them too would only print their tracebacks.
    import signal

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, host="127.0.0.1",
                               dashboard_address=None, processes=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    return Client(cluster), cluster


class Progress:
    """Units done/total, ETA and the current cell: a live bar on a terminal (rich), plain lines in a log."""

    def __init__(self, total, stream=None, enabled=True):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self._first = None  # when the first unit finished: the rate is measured from there
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self._last_pct = -10
        self._bar = None
        if self.enabled and self.stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeRemainingColumn(), console=Console(file=self.stream), transient=False)
            self._bar.start()
            self._task = self._bar.add_task("starting", total=total)

    def update(self, label, units=1):
        self.done += units
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, advance=units, description=label[:40])
            return
        now = time.monotonic()
        if self._first is None:
            self._first = now
            self._first_done = self.done
        # The rate from the first finished unit on: the start-up before it (workers, data) is paid once, and
        # extrapolated over every unit it made a 20 s run's first estimate read 26 min.
        since = self.done - self._first_done
        eta = (now - self._first) / since * (self.total - self.done) if since > 0 else None
        pct = 100 * self.done // self.total
        if pct >= self._last_pct + 10 or self.done == self.total:
            self._last_pct = pct
            when = "--" if eta is None and self.done < self.total else _fmt_seconds(eta or 0)
            self.stream.write(f"[{self.done}/{self.total}] {pct}%  ETA {when}  {label}\n")

    def close(self):
        if self._bar is not None:
            self._bar.stop()


def _fmt_seconds(s):
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"
