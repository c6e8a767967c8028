"""``run_experiment``: config -> units (its kind) -> (joblib: loky or Dask) -> result store.

The runner resumes by default: units whose records are already stored (same
identity, same data checksum) are skipped. A stored cell made under another
identity (a changed estimator, fixed parameter, splitter, scaling, inner folds
or kind setting) is refused, naming the changed keys, unless the run is told to
move its records aside (``rerun_changed``) or to start over (``fresh``).
Records are written by this process as units finish, so an interrupted run
keeps everything it finished. The runner knows no paper and no model: the
config's kind enumerates, describes and runs the units.
"""

import re
import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..store import ResultStore, StoreWarning
from ._config import ProtocolWarning, inner_folds_notes
from ._dispatch import Progress, SchedulerLost, dispatch
from ._kinds import get_kind
from ._plan import ChangedConfigError, FewerRepeatsError, RunOptions, check_data, plan_run  # noqa: F401  (re-exported)
from ._run_folder import (  # noqa: F401  (AnotherConfigsStoreError: re-exported, what refuse_... raises)
    AnotherConfigsStoreError,
    RunFile,
    check_config_size,
    git_commit,
    refuse_another_configs_store,
    remove_unused_folder,
    write_config,
)
from ._timeouts import TimeoutLedger
from ._units import point_id
from ._watchdog import close_fit_child, environment


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or SIGTERM, where the caller maps it), or by the loss of its Dask scheduler
    (``reason``): its workers are stopped and every finished unit is stored. ``summary`` says how far it got."""

    def __init__(self, summary, reason=None):
        super().__init__(f"{reason or 'interrupted'}: "
                         f"{summary.total_units - summary.pending_units + summary.done_units} of "
                         f"{summary.total_units} units stored in {summary.out}; the same command resumes")
        self.summary, self.reason = summary, reason


def enumerate_units(config):
    """Every unit of a config, in a fixed order (its kind's ``units``)."""
    return get_kind(config.kind).units(config)


def unit_task(config, u, identity, sha, run_id, data_home, mirror, skip=None):
    """The task a worker runs for unit ``u`` of ``config`` (``_run_batch``): its kind's task and what every
    record carries. ``skip``: a predicate on a point dict, true for the points recorded as skipped after a
    timeout instead of run. The runner and ``eemrepro audit`` build their tasks here, so that both run the same.
    """
    points = u.point_dicts()
    return {
            **get_kind(config.kind).task(config, u), "kind": config.kind, "dataset": u.dataset, "model": u.model,
            "points": points,
            "skip_points": [p for p in points if skip is not None and skip(p)],
            "repeat": u.repeat, "fold": u.fold, "inner": u.inner, "run_id": run_id,
            "fit_threads": config.protocol.fit_threads, "after_timeout": config.protocol.after_timeout,
            "identity": identity, "identity_sha": sha,
            "data_home": None if data_home is None else str(data_home),
            "mirror": None if mirror is None else str(mirror),
            "local_dataset": config.local_datasets.get(u.dataset),
    }


@dataclass
class RunSummary:
    out: Path
    total_units: int
    pending_units: int
    done_units: int = 0
    status_counts: dict = field(default_factory=dict)
    seconds: float = 0.0
    estimate_seconds: float = None
    estimate: object = None  # the dry run's ``_plan.Estimate``: its seconds and, from a prior, its range
    superseded: Path = None  # where the records set aside went (``superseded-<stamp>/``)
    set_aside: tuple = (0, 0)  # (records, cells) moved aside (a dry run: that would be) to run those cells again
    unavailable: dict = field(default_factory=dict)  # data set -> why it was skipped
    changed: list = field(default_factory=list)  # cells whose stored identity differs (see rerun_changed)
    # Of those, the cells not run now (--only-*): their records stay, and the reports refuse them until they run.
    stale: list = field(default_factory=list)
    # Data sets run now whose stored records were made on other data (``_plan.DataChange``): moved aside, run again.
    data_changes: list = field(default_factory=list)
    interrupted: bool = False
    left_out: dict = field(default_factory=dict)  # stored records the config no longer names: {reason: count}
    warnings: dict = field(default_factory=dict)  # what the fits warned: {"Category: message": fits}
    failures: dict = field(default_factory=dict)  # why fits failed: {error: fits}
    run_id: str = None  # the run file (runs/<run id>.json) of a run that executed
    ran_on: str = None  # what ran the units, in words (``_dispatch.dispatch``): this process, workers, a cluster
    # (the BLAS kernels of the folder's earlier runs that are not this machine's, this machine's): a resumed run
    # on another CPU, whose ill-conditioned numbers round otherwise than the stored ones
    other_kernels: tuple = None


def run_experiment(config, out=None, jobs=None, backend=None, scheduler=None, fresh=False,
                   dry_run=False, mirror=None, data_home=None, progress=True, echo=print, repeats=None,
                   skip_unavailable=False, retry_failed=False, only_models=None, only_datasets=None,
                   rerun_changed=False):
    """Run (or resume) every unit of a config and store the records.

    The stages, in turn: the options resolved and the data checksummed
    (``_plan.check_data``, before the store is locked: a failed checksum moves
    nothing); the plan (``_plan.plan_run``, under the lock), which a dry run
    returns as it is (it takes no lock, and refuses as the run would while
    another live process holds it); the run folder written (``_run_folder``: config.yaml and
    the run file, before the first task); the pending units dispatched
    (``_dispatch``) and their records stored as they come; the seal, in
    ``finally``.

    Parameters
    ----------
    config : ExperimentConfig
    out : path, default ``results/<config.name>``
    jobs : int, default config.jobs, else all cores
    backend : {"loky", "dask"}, default "dask" with a ``scheduler``, else "loky"
        With "dask" every unit runs on the cluster, whatever its size; ``RunSummary.ran_on`` (and the run
        file's ``ran_on``) says what ran them.
    scheduler : str, optional
        Dask scheduler address (implies ``backend="dask"``; refused with "loky"); default a local cluster
        on 127.0.0.1 of ``jobs`` worker processes.
    fresh : bool
        Move the existing records aside and start over (with ``only_*``: those of the cells run now only).
    dry_run : bool
        Count the units and estimate the time; run nothing.
    repeats : int, optional
        Override the config's ``protocol.repeats`` for this run (a command-line flag wins over YAML);
        the folder's config.yaml keeps the largest of the flag's, the config's and its own.
    skip_unavailable : bool
        Skip (and report in ``RunSummary.unavailable``) data sets whose files
        cannot be fetched, instead of failing before anything runs.
    retry_failed : bool
        Run again the units with failed fits (their new records supersede the old).
    only_models, only_datasets : sequence of str, optional
        Run only these models / data sets of the config now (cheap ones first,
        say); the stored config stays whole and a later run resumes the rest.
        ``fresh`` and ``rerun_changed`` then move aside only the cells run now;
        changed cells not run now are ``RunSummary.stale`` (the reports refuse
        them until they run).
    rerun_changed : bool
        Where stored records of a cell were made under another identity than
        the config's, move them aside (``superseded-<stamp>/``) and run the cell
        afresh, instead of refusing with :class:`ChangedConfigError`.

    A config of fewer repeats than the folder holds is refused
    (:class:`FewerRepeatsError`) unless ``repeats`` is given (a part of the
    folder's repeats, which it keeps) or ``fresh`` starts the folder over.

    Returns
    -------
    RunSummary
    """
    started = time.monotonic()
    options = RunOptions(out=out, jobs=jobs, backend=backend, scheduler=scheduler, fresh=fresh, dry_run=dry_run,
                         mirror=mirror, data_home=data_home, progress=progress, repeats=repeats,
                         skip_unavailable=skip_unavailable, retry_failed=retry_failed, only_models=only_models,
                         only_datasets=only_datasets, rerun_changed=rerun_changed)
    config, stored_config, options = options.resolve(config)
    check_config_size(options.out, stored_config)
    store = ResultStore(options.out)
    refuse_another_configs_store(options.out, config)
    data = check_data(config, options)
    _before_planning(config, store, dry_run)
    existed = options.out.exists()
    try:
        return _locked_run(config, stored_config, store, options, data, started)
    except Exception:  # (an interrupt says what it stored and that the same command resumes)
        if not existed:
            remove_unused_folder(options.out)
        raise


def _locked_run(config, stored_config, store, options, data, started):
    """The plan, and the run of it (a dry run returns the plan's summary and estimate), under the store's lock: a
    second run on it is refused."""
    with nullcontext() if options.dry_run else store.writing(f"eemrepro run {config.source or config.name}"):
        plan, summary, move_aside = _planned(config, stored_config, store, options, data)
        if options.dry_run:
            summary.estimate = plan.estimate()
            summary.estimate_seconds = summary.estimate.seconds
            return summary
        summary.superseded = move_aside()
        execute_plan(plan, store, summary, planning_seconds=time.monotonic() - started)
    return summary


def _before_planning(config, store, dry_run):
    """What the run and its dry run say before the first unit (a weak protocol, one line each), and what a dry
    run, which only reads and takes no lock, refuses where the run would: another live process writing the
    folder."""
    for note in inner_folds_notes(config):
        warnings.warn(ProtocolWarning(note), stacklevel=3)
    if dry_run:
        store.check_unlocked()


def _planned(config, stored_config, store, options, data):
    """(the plan, its summary so far, a callable that moves aside what it runs again and returns where to):
    refused (``ChangedConfigError``) where ``Plan.refusal`` says so, and planned as the store will be once
    those records are moved aside, for the run and its dry run alike."""
    plan = plan_run(config, store, options, data, stored_config=stored_config)
    refusal = plan.refusal()
    if refusal:  # a dry run refuses as the run would, with the same words
        raise ChangedConfigError(refusal)
    # A fresh run of the whole config moves the records folder itself (with the records it no longer names);
    # any other moves aside exactly the cells it runs again (``Plan.aside``).
    whole = options.fresh and not (options.selects or data.unavailable)
    aside = plan.stored_cells() if whole else plan.aside()
    changed, stored, rest = plan.changed, len(plan.stored), plan.stored.iloc[:0] if whole else plan.without(aside)
    data_changes = plan.data_changes
    if aside:
        plan = plan_run(config, store, options, data, stored=rest, stored_config=stored_config)
        # (their units counted as they run: the whole of each cell moved aside)
        data_changes = [replace(c, units=sum((u.dataset, u.model) in c.cells for u in plan.pending))
                        for c in data_changes]
    summary = RunSummary(out=options.out, total_units=len(plan.units), pending_units=len(plan.pending),
                         unavailable=data.unavailable, changed=changed, left_out=plan.left_out,
                         set_aside=(stored - len(rest), len(aside)), stale=plan.changed, data_changes=data_changes,
                         other_kernels=_other_kernels(store, aside) if len(rest) and plan.pending else None)

    def move_aside():
        if not aside:
            return None
        return store.supersede() if whole else store.forget(cells=aside)[1]

    return plan, summary, move_aside


def _other_kernels(store, aside):
    """(the BLAS kernels of the runs that made ``store``'s records kept (all but those of the cells ``aside``)
    that are not this machine's, this machine's), or None. The records' run ids are read only where some run
    of the folder used other kernels."""
    import pandas as pd

    from ..store import read_runs
    from ._watchdog import other_kernels

    hosts = {r.get("run_id"): r.get("host") for r in read_runs(store.root)}
    if other_kernels(hosts.values()) is None:
        return None
    df = store.frame(["run_id"])
    cells = pd.MultiIndex.from_arrays([df["dataset"].astype(object), df["model"].astype(object)])
    kept = df.loc[~cells.isin(list(aside)), "run_id"].dropna().unique()
    return other_kernels(hosts.get(run_id) for run_id in kept)


def execute_plan(plan, store, summary, planning_seconds=0.0):
    """Run a plan's pending units into ``store`` (locked by the caller), filling ``summary``: the run folder
    written first, the records stored as they come, the store sealed and the run file finished in ``finally``.
    """
    config, options, pending = plan.config, plan.options, plan.pending
    versions, host = environment()
    options.out.mkdir(parents=True, exist_ok=True)
    write_config(options.out, plan.stored_config)
    store.run_id = summary.run_id = store.new_run_id()
    run_file = RunFile(store, {
        "config": config.to_dict(), "config_file": config.source, "versions": versions, "host": host,
        "started_at": time.time(), "jobs": options.jobs, "backend": options.backend, "units_total": len(plan.units),
        "units_pending": len(pending), "data_sha256": plan.data.sha256,
        "unavailable_datasets": plan.data.unavailable, "commit": git_commit()})
    run_file.stage("planning", planning_seconds)
    run_file.write()  # now and again at the end: a killed run's records still name a run file
    ledger = TimeoutLedger(config.protocol.after_timeout)
    ledger.note_stored(plan.stored, plan.shas)  # what the stored part of the run abandoned stays abandoned
    from threadpoolctl import threadpool_limits

    from ._schedule import Scheduler, unit_costs

    # Longest first by the cost model (stored timings where there are any, else a prior corrected by what
    # the run's finished units take), small measured units batched.
    order = Scheduler(*unit_costs(config, pending, plan.stored, plan.shas, known=True),
                      [(u.dataset, u.model) for u in pending])

    def tasks():  # built as each batch is dispatched: a timeout seen meanwhile reaches its units
        while (batch := order.next_batch()) is not None:
            yield [dict(unit_task(config, pending[i], plan.identity(pending[i]), plan.sha(pending[i]),
                                  store.run_id, options.data_home, options.mirror,
                                  skip=lambda p, u=pending[i]: ledger.skips(u.dataset, u.model, point_id(p))),
                        unit_index=i) for i in batch]

    bar = Progress(len(pending), enabled=options.progress)
    # With --jobs 1 the units run in this process (limit_fit_threads): its thread counts are its own again
    # when the run ends.
    threads = threadpool_limits(limits=None)
    dispatched, start = time.time(), time.monotonic()
    def ran_on(text):  # known once the workers are: in the run file at once (a killed run's says it too)
        summary.ran_on = text
        run_file.write(ran_on=text)

    execution = dispatch(tasks(), options.jobs, options.backend, options.scheduler, where=ran_on)
    timing = {"first": None}
    try:
        _collect(execution, order, store, ledger, summary, bar, timing)
    except KeyboardInterrupt:
        _interrupted(execution, store, summary)
    except SchedulerLost as exc:
        _interrupted(execution, store, summary, reason=str(exc))
    finally:
        bar.close()
        close_fit_child()  # the one this process forked when the run's units ran here (jobs=1)
        threads.restore_original_limits()
        _seal(store, summary, run_file, dispatched, timing["first"])
        summary.seconds = time.monotonic() - start


def _collect(execution, order, store, ledger, summary, bar, timing):
    """Store each batch's records as they come back (one write), then feed the scheduler, the timeout ledger,
    the counts and the progress; ``timing["first"]``: the first unit's start (``time.time()``), kept in the
    caller's dict so that an interrupted run's file has its worker-start stage too."""
    from ._schedule import records_seconds

    for batch in execution:
        store.append_units([records for _, records in batch])  # a batch's units: one write, one fsync
        summary.done_units += len(batch)
        label = ""
        for index, records in batch:
            ok = [r for r in records if r["status"] == "ok"]  # a failed fit's time says nothing of its cost
            order.observe(index, records_seconds(ok) if ok else float("nan"))
            ledger.note_records(records)
            for r in records:
                summary.status_counts[r["status"]] = summary.status_counts.get(r["status"], 0) + 1
                if r["status"] == "failed" and r.get("error"):
                    summary.failures[r["error"]] = summary.failures.get(r["error"], 0) + 1
                for text in r.get("warnings") or ():
                    text = re.sub(r" \(x\d+\)$", "", text)
                    summary.warnings[text] = summary.warnings.get(text, 0) + 1
            if records:
                label = f"{records[0]['dataset']} {records[0]['model']}"
                started = records[0].get("started_at")
                if started is not None and (timing["first"] is None or started < timing["first"]):
                    timing["first"] = started
        bar.update(label, units=len(batch))


def _interrupted(execution, store, summary, reason=None):
    """Ctrl-C (or ``reason``: the scheduler lost): stop the workers, count what was stored, and say so
    (``RunInterrupted``)."""
    # The units stored are those written, even one whose append the interrupt cut short after its write.
    summary.done_units = store.appended
    # Closing the generator makes joblib abort: the workers are stopped, not left running. joblib then
    # warns that the cancelled tasks were wasted, which is what an interrupt means: the user reads one line.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning,
                                message=r".*You could benefit from adjusting the input task iterator")
        execution.close()
    summary.interrupted = True
    raise RunInterrupted(summary, reason) from None


def _seal(store, summary, run_file, dispatched, first_start):
    """Seal the run's write-ahead segment into Parquet and finish its run file, with the stage timings."""
    ended = time.time()
    run_file.stage("dispatch", ended - dispatched)
    if first_start is not None:
        run_file.stage("worker_start", max(0.0, first_start - dispatched))
    sealing = time.monotonic()
    out = summary.out
    try:
        store.close()  # seals the run's write-ahead segment into Parquet
    except OSError as exc:
        # Nothing is lost: the write-ahead segment stays and is read as it is.
        warnings.warn(StoreWarning(f"{out}: could not seal the records into Parquet ({exc.strerror or exc}); "
                                   f"they stay in {store.records_dir} as JSON lines (`eemrepro compact {out}` "
                                   "seals them)"), stacklevel=4)
    run_file.stage("seal", time.monotonic() - sealing)
    try:
        run_file.write(finished_at=time.time(), units_done=summary.done_units, status_counts=summary.status_counts,
                       interrupted=summary.interrupted)
    except OSError as exc:  # the run's facts are also in its segment; a full disk must not mask why
        warnings.warn(StoreWarning(f"{out}: could not update the run file ({exc.strerror or exc})"), stacklevel=4)
