"""Dispatch: tasks out to workers (joblib on loky or Dask), records back, progress. Nothing about resume.

A task is a batch of units (``_schedule.Scheduler``); a worker runs them one
after the other (``run_batch``) and hands back each unit's records, stamped
with when the unit started and on which worker (``started_at``, ``worker``):
any store then draws its own timeline (``benchmarks/timeline.py``).
"""

import contextlib
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


class DispatchError(RuntimeError):
    """The workers cannot be reached: Dask not installed, a scheduler without workers."""


class SchedulerLost(RuntimeError):
    """The Dask scheduler stopped answering mid-run (killed, its machine or network gone): the run stops as an
    interrupted one does, every unit stored so far kept."""


def dispatch(tasks, n_jobs, backend="loky", scheduler=None, where=None):
    """Yield each batch's ``run_batch`` result as it finishes (``tasks``, an iterable of batches, is consumed
    lazily, so a timeout seen on one fold reaches the units dispatched after it).

    ``where``: called once, before the first result, with what runs the units, in words (the run file and
    the terminal say it): this process, loky workers, or the Dask cluster used (its address, workers and
    threads).
    """
    where = where or (lambda text: None)
    if backend == "loky":
        from joblib import Parallel, delayed, parallel_config

        # joblib runs one job in this process (its fits in this process's fit child), more in loky workers.
        where("this process (one job)" if n_jobs == 1 else f"{n_jobs} loky worker processes on this machine")
        # Workers exit when the run's process dies (kill -9): no orphans computing for nobody.
        with parallel_config(backend="loky", n_jobs=n_jobs, initializer=exit_with_parent, initargs=(os.getpid(),)):
            yield from Parallel(return_as="generator_unordered", pre_dispatch="2*n_jobs")(
                delayed(run_batch)(t) for t in tasks
            )
        return
    if backend != "dask":
        raise ValueError(f"backend must be 'loky' or 'dask', got {backend!r}")
    yield from _dask_dispatch(tasks, n_jobs, scheduler, where)


#: Seconds a scheduler may go without a worker before the run says so (a cluster whose workers start late).
WORKER_WAIT_SECONDS = 60


def _dask_dispatch(tasks, n_jobs, scheduler, where):
    """``dispatch`` on a Dask cluster: each batch a future of the cluster, whatever its size (joblib's Dask
    backend runs every task in the calling process when the cluster has one thread: the run said "dask" and
    ran here). About two batches per worker thread are in flight; more are built as results come back."""
    from concurrent.futures import CancelledError

    from dask.distributed import as_completed
    from distributed.comm import CommClosedError

    client, cluster = _dask_client(n_jobs, scheduler)
    address = client.scheduler.address
    flying, batches, done = set(), iter(tasks), as_completed()
    try:
        with _quiet_client():
            try:
                threads = _cluster_threads(client, address)
                where(f"the Dask cluster at {address}{' (started here)' if cluster is not None else ''}: "
                      f"{len(threads)} worker(s), {sum(threads.values())} thread(s)")
                _top_up(client, batches, flying, done, 2 * sum(threads.values()))
                for future in done:
                    flying.discard(future)
                    result = future.result()
                    _top_up(client, batches, flying, done, 2 * max(1, sum(client.nthreads().values())))
                    yield result
            except (CancelledError, CommClosedError):
                # distributed says it as a closed connection or as cancelled futures, whichever it meets first: one
                # event, said one way.
                raise SchedulerLost(f"the Dask scheduler at {address} was lost mid-run (its connection closed)") \
                    from None
    finally:
        _close_dask(client, cluster, flying)


def _top_up(client, batches, flying, done, window):
    """Submit batches until ``window`` are in flight (or none is left)."""
    while len(flying) < window and (batch := next(batches, None)) is not None:
        future = client.submit(run_batch, batch, pure=False)
        flying.add(future)
        done.add(future)


def _cluster_threads(client, address):
    """{worker: threads} of the cluster, waiting a while for a first worker."""
    threads = client.nthreads()
    if not threads:
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
        except TimeoutError:
            raise DispatchError(f"the Dask scheduler at {address} has no worker after {WORKER_WAIT_SECONDS} s: "
                                f"start one (`dask worker {address}`), or leave --scheduler out for a local "
                                "cluster") from None
        threads = client.nthreads()
    return threads


def _close_dask(client, cluster, flying):
    """Cancel what is still in flight on a scheduler of another's (an interrupted run: a cluster started here
    stops whole), then close the client and a cluster started here; a scheduler already gone is not waited
    for long."""
    with _quiet_client():
        try:
            if flying and client.status == "running" and cluster is None:
                client.cancel(list(flying))
        except Exception:  # noqa: S110 (the scheduler gone: nothing to cancel there)
            pass
        client.close(timeout=5)
        if cluster is not None:
            cluster.close()


@contextlib.contextmanager
def _quiet_client():
    """The Dask client's own log of a lost scheduler (tracebacks of every reconnection tried) is not printed:
    the run says it in one line (``SchedulerLost``)."""
    import logging

    logs = [logging.getLogger(name) for name in ("distributed.client", "distributed.comm", "distributed.core")]
    levels = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for log, level in zip(logs, levels, strict=True):
            log.setLevel(level)


def _dask_client(n_jobs, scheduler):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise DispatchError("--backend dask needs dask.distributed: pip install 'eemrepro[dask]'") from None
    if scheduler:
        try:
            return Client(scheduler), None  # (waiting dask's distributed.comm.timeouts.connect: 30 s)
        except OSError as exc:
            raise DispatchError(f"no Dask scheduler answers at {scheduler} ({exc}): start one (`dask scheduler`) "
                                "or leave --scheduler out for a local cluster") from None
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
