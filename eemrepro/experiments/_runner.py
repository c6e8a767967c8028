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

import os
import re
import sys
import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..store import ResultStore, StoreWarning
from ..store._files import atomic_write
from ._identity import cell_identity
from ._kinds import get_kind
from ._units import (
    as_category,
    changed_identities,
    done_units,
    frame_keys,
    identity_sha,
    point_id,
    scope_rows,
)
from ._watchdog import (
    close_fit_child,
    environment,
    exit_with_parent,
    fit_threads,
    limit_fit_threads,
    out_of_memory,
)


class ChangedConfigError(ValueError):
    """A results folder holds records made under another identity than the config now asks for."""


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or SIGTERM, where the caller maps it): its workers are stopped and
    every finished unit is stored. ``summary`` says how far it got."""

    def __init__(self, summary):
        super().__init__(f"interrupted: {summary.total_units - summary.pending_units + summary.done_units} of "
                         f"{summary.total_units} units stored in {summary.out}; the same command resumes")
        self.summary = summary


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
            "fit_threads": config.protocol.fit_threads,
            "identity": identity, "identity_sha": sha,
            "data_home": None if data_home is None else str(data_home),
            "mirror": None if mirror is None else str(mirror),
            "local_dataset": config.local_datasets.get(u.dataset),
    }


def _run_task(task):
    if task.get("local_dataset") is not None:  # a user's own file: known to the worker as to the run
        from ..datasets import register_local

        register_local(task["local_dataset"])
    # Every kind, every backend: what a kind computes here (a fit without a fork, D_CS pairs) as in the fit child.
    limit_fit_threads(fit_threads(task))
    return get_kind(task["kind"]).run(task)


def _timeout_key(rule, dataset, model, point):
    """What a timed-out fit abandons under ``protocol.after_timeout`` ``rule``: "skip", its grid point on the
    other folds; "skip-model", the whole model on that data set."""
    return (dataset, model) if rule == "skip-model" else (dataset, model, point)


def _abandons(rule, record):
    """Whether a record abandons its key: a fit past the time budget; under skip-model also one out of memory."""
    return record["status"] == "timed-out" or (rule == "skip-model" and out_of_memory(record))


def _run_batch(tasks):
    """A batch of units (``_schedule.Scheduler``) run one after the other in one worker: (each one's
    ``unit_index``, its records).

    The run's timeout rule holds inside the batch as between dispatches: a
    unit after a timed-out one skips what that timeout abandons.
    """
    out, abandoned = [], set()
    for t in tasks:
        index = t.pop("unit_index", None)
        rule = (t.get("protocol") or {}).get("after_timeout", t.get("after_timeout", "skip"))
        if abandoned and rule != "run":
            skip = [p for p in t["points"] if _timeout_key(rule, t["dataset"], t["model"], point_id(p)) in abandoned]
            if skip:
                t = {**t, "skip_points": [*t["skip_points"], *skip]}
        records = _run_task(t)
        if rule != "run":
            abandoned |= {_timeout_key(rule, r["dataset"], r["model"], point_id(r["params"]))
                          for r in records if _abandons(rule, r)}
        out.append((index, records))
    return out


@dataclass
class RunSummary:
    out: Path
    total_units: int
    pending_units: int
    done_units: int = 0
    status_counts: dict = field(default_factory=dict)
    seconds: float = 0.0
    estimate_seconds: float = None
    superseded: Path = None
    unavailable: dict = field(default_factory=dict)  # data set -> why it was skipped
    changed: list = field(default_factory=list)  # cells whose stored identity differs (see rerun_changed)
    interrupted: bool = False
    left_out: dict = field(default_factory=dict)  # stored records the config no longer names: {reason: count}
    warnings: dict = field(default_factory=dict)  # what the fits warned: {"Category: message": fits}


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

    def update(self, label):
        self.done += 1
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=label[:40])
            return
        now = time.monotonic()
        if self._first is None:
            self._first = now
        # The rate from the first finished unit on: the start-up before it (workers, data) is paid once, and
        # extrapolated over every unit it made a 20 s run's first estimate read 26 min.
        eta = (now - self._first) / (self.done - 1) * (self.total - self.done) if self.done > 1 else None
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


def estimate_seconds(config, units, n_jobs, timed=None, shas=None):
    """A rough wall-time estimate of ``units`` on ``n_jobs`` workers (for --dry-run).

    Each unit's cost is ``_schedule.unit_costs``: from the stored timings of
    the same data set, model and point made under the config's identity
    (``timed``: a store frame; ``shas``: {cell: identity sha}) where there are
    any, a resumed run so estimated from its own first part whatever its
    solver costs; any other unit from the kind's cost model.
    """
    from ._schedule import unit_costs

    return float(unit_costs(config, units, timed, shas).sum()) / max(1, n_jobs)


def _git_commit():
    """The eemrepro checkout's commit (with '+dirty' for uncommitted changes), if any.

    Changes under ``results/`` do not count: a run rewrites its folder's
    ``config.yaml`` itself, and a committed store's config would otherwise make
    every later run of the same checkout look dirty.
    """
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)results"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _n_jobs(jobs):
    if jobs is None or jobs == -1:
        return os.cpu_count() or 1
    return max(1, int(jobs))


_STORED_COLUMNS = ["status", "identity_sha", "data_sha256", "identity", "error_message"]


def done_keys(stored, data_sha256, retry_failed=False, keys=None):
    """(key, identity sha) of the stored records made with this data (what resume skips).

    With ``retry_failed``, failed fits do not count as done (timed-out ones do). ``keys``: the
    ``frame_keys`` of ``stored`` as a list, if the caller has them already.
    """
    if stored.empty:
        return set()
    # As plain strings: a categorical column compared with values outside its categories (data that changed
    # since the records were made) raises instead of saying "not the same data".
    ok = stored["data_sha256"].astype(object) == stored["dataset"].astype(object).map(data_sha256)
    if retry_failed:
        ok &= stored["status"] != "failed"
    ok = ok.fillna(False).astype(bool).to_numpy()
    keys = np.asarray(frame_keys(stored).tolist() if keys is None else keys, dtype=object)
    return set(zip(keys[ok].tolist(), stored["identity_sha"].to_numpy()[ok].tolist(), strict=True))


def _data_ok(stored, data_sha256, retry_failed=False):
    """Per stored row: made with the data as it is now (``data_sha256``: {data set: checksum}), and (with
    ``retry_failed``) not a failed fit. Compared as category codes, never as ten million strings."""
    if stored.empty:
        return np.zeros(0, dtype=bool)
    datasets, shas = as_category(stored["dataset"]), as_category(stored["data_sha256"])
    expected = shas.cat.categories.get_indexer(pd.Index([data_sha256.get(d) for d in datasets.cat.categories],
                                                        dtype=object))
    codes = datasets.cat.codes.to_numpy()
    ok = (codes >= 0) & (shas.cat.codes.to_numpy() == np.where(codes >= 0, expected[codes], -2)) & \
        (shas.cat.codes.to_numpy() >= 0)
    if retry_failed:
        ok &= (stored["status"] != "failed").to_numpy()
    return ok


def run_experiment(config, out=None, jobs=None, backend="loky", scheduler=None, fresh=False,
                   dry_run=False, mirror=None, data_home=None, progress=True, echo=print, repeats=None,
                   skip_unavailable=False, retry_failed=False, only_models=None, only_datasets=None,
                   rerun_changed=False):
    """Run (or resume) every unit of a config and store the records.

    Parameters
    ----------
    config : ExperimentConfig
    out : path, default ``results/<config.name>``
    jobs : int, default config.jobs, else all cores
    backend : {"loky", "dask"}
    scheduler : str, optional
        Dask scheduler address; default a local cluster on 127.0.0.1.
    fresh : bool
        Move the existing records aside and start over.
    dry_run : bool
        Count the units and estimate the time; run nothing.
    repeats : int, optional
        Override the config's ``protocol.repeats`` for this run (a command-line flag wins over YAML);
        the folder's config.yaml keeps the larger of the two.
    skip_unavailable : bool
        Skip (and report in ``RunSummary.unavailable``) data sets whose files
        cannot be fetched, instead of failing before anything runs.
    retry_failed : bool
        Run again the units with failed fits (their new records supersede the old).
    only_models, only_datasets : sequence of str, optional
        Run only these models / data sets of the config now (cheap ones first,
        say); the stored config stays whole and a later run resumes the rest.
    rerun_changed : bool
        Where stored records of a cell were made under another identity than
        the config's, move them aside (``superseded-<stamp>/``) and run the cell
        afresh, instead of refusing with :class:`ChangedConfigError`.

    Returns
    -------
    RunSummary
    """
    from ..datasets import DatasetError, dataset_checksum

    # The folder's config.yaml keeps the config's own repeats unless the flag asks for more: a run at fewer
    # repeats (a screen, a chunk of a long run) is a partial run of the config, whose reports read every
    # repeat stored; what the config.yaml names is all that the reports read.
    stored_config = config
    if repeats is not None:
        if repeats < 1:
            raise ValueError(f"repeats must be >= 1, got {repeats}")
        config = replace(config, protocol=replace(config.protocol, repeats=int(repeats)))
        if repeats > stored_config.protocol.repeats:
            stored_config = config
    mirror = mirror if mirror is not None else config.mirror
    data_home = data_home if data_home is not None else config.data_home
    out = Path(out) if out is not None else Path("results") / config.name
    store = ResultStore(out)
    proto = config.protocol
    kind = get_kind(config.kind)
    n_jobs = _n_jobs(jobs if jobs is not None else config.jobs)

    _refuse_another_configs_store(out, config)
    model_names = sorted({u.model for u in kind.units(replace(config, datasets=config.datasets[:1]))})
    for label, chosen, known in (("model", only_models, model_names),
                                 ("data set", only_datasets, list(config.datasets))):
        unknown = sorted(set(chosen or ()) - set(known))
        if unknown:
            raise ValueError(f"unknown {label}(s) {unknown}; the config has {known}")
    # Only the data sets run now are fetched and checksummed.
    running = [d for d in config.datasets if not only_datasets or d in only_datasets]

    # Validate the data before touching the store: a failed checksum moves nothing aside.
    data_sha, unavailable = {}, {}
    for d in running:
        try:
            data_sha[d] = dataset_checksum(d, data_home=data_home, mirror=mirror)
        except DatasetError as exc:
            if not skip_unavailable:
                raise
            unavailable[d] = str(exc)
    if config.baselines:  # refused before anything runs: a comparison made under two protocols means nothing
        from ._baselines import check_baselines

        check_baselines(config, data_sha, out)
    # The store is locked from here: a second run on it is refused (a dry run only reads).
    with nullcontext() if dry_run else store.writing(f"eemrepro run {config.source or config.name}"):
        superseded = store.supersede() if fresh and not dry_run else None
        # The stored config stays whole (what was skipped is in run_info's
        # unavailable_datasets); only the units run now are enumerated.
        now = replace(config, datasets=tuple(d for d in running if d not in unavailable))
        units = [u for u in kind.units(now) if not only_models or u.model in only_models]
        # Identities of every cell of the config, not only of those run now: the
        # folder's config.yaml is rewritten below and must not claim a setting
        # that stored records of another cell were not made with.
        identities, codes = {}, {}
        whole = now.datasets == config.datasets and not only_models
        every_unit = units if whole else kind.units(config)
        for u in every_unit:
            cell = (u.dataset, u.model, u.inner is not None)
            if cell not in identities:
                identities[cell] = cell_identity(kind, config, u, codes)
        shas = {cell: identity_sha(i) for cell, i in identities.items()}
        # The stored timings: a dry run's estimate and the run's longest-first order are made from them.
        columns = [*_STORED_COLUMNS, "fit_seconds", "predict_seconds", "path_size", "standalone_fit_seconds"]
        stored = store.frame(columns)
        changed = changed_identities(stored, identities)
        if changed and not dry_run:
            if not rerun_changed:
                raise ChangedConfigError(_changed_message(out, config, changed))
            moved, where = store.forget(cells={(d, m) for d, m, _ in changed})
            superseded = superseded or where
            stored = store.frame(_STORED_COLUMNS)
        # Stored records the config no longer names (a grid shrunk since) stay, but count for nothing.
        scope = kind.scope_with(stored_config, every_unit if stored_config is config else None)
        left_out = scope_rows(scope, stored).left_out
        # What resume skips: units whose every record is stored, made with this data under the cell's identity
        # (matched as integer codes; a kind whose units are not groups of points x positions, key by key).
        finished = done_units(units, stored, _data_ok(stored, data_sha, retry_failed), shas)
        if finished is None:
            done = done_keys(stored, data_sha, retry_failed=retry_failed)
            finished = [all((k, shas[(u.dataset, u.model, u.inner is not None)]) in done for k in u.keys())
                        for u in units]
        pending = [u for u, f in zip(units, finished, strict=True) if not f]
        summary = RunSummary(out=out, total_units=len(units), pending_units=len(pending), superseded=superseded,
                             unavailable=unavailable, changed=changed, left_out=left_out)
        if dry_run:
            summary.estimate_seconds = estimate_seconds(config, pending, n_jobs, stored, shas)
            return summary

        versions, host = environment()
        out.mkdir(parents=True, exist_ok=True)
        commit = _git_commit()
        atomic_write(out / "config.yaml", yaml.safe_dump(_stored_dict(stored_config, out), sort_keys=False))
        store.run_id = store.new_run_id()
        run_info = {"config": config.to_dict(), "config_file": config.source, "versions": versions, "host": host,
                    "started_at": time.time(), "jobs": n_jobs, "backend": backend, "units_total": len(units),
                    "units_pending": len(pending), "data_sha256": data_sha, "unavailable_datasets": unavailable,
                    "commit": commit}
        # Written now and again at the end: a killed run's records still name a run file.
        store.write_run(run_info)

        abandoned = set()

        def timeout_key(dataset, model, point):
            return _timeout_key(proto.after_timeout, dataset, model, point)

        def abandons(record):
            return _abandons(proto.after_timeout, record)

        if proto.after_timeout != "run" and not stored.empty:
            stopped = stored[stored["status"].isin(["timed-out", "failed"])]
            for r in stopped.to_dict("records"):
                cell = (r["dataset"], r["model"], not pd.isna(r["inner"]))
                if r["identity_sha"] == shas.get(cell) and abandons({**r, "error": r.get("error_message")}):
                    abandoned.add(timeout_key(r["dataset"], r["model"], r["point"]))

        from ._schedule import Scheduler, records_seconds, unit_costs

        # Longest first by the cost model (stored timings where there are any, else a prior corrected by what
        # the run's finished units take), small measured units batched.
        order = Scheduler(*unit_costs(config, pending, stored, shas, known=True),
                          [(u.dataset, u.model) for u in pending])

        def task(u):
            cell = (u.dataset, u.model, u.inner is not None)
            return unit_task(config, u, identities[cell], shas[cell], store.run_id, data_home, mirror,
                             skip=lambda p: timeout_key(u.dataset, u.model, point_id(p)) in abandoned)

        def tasks():  # built as each batch is dispatched: a timeout seen meanwhile reaches its units
            while (batch := order.next_batch()) is not None:
                yield [dict(task(pending[i]), unit_index=i) for i in batch]

        bar = Progress(len(pending), enabled=progress)
        start = time.monotonic()
        counts = {}
        # With --jobs 1 the units run in this process (limit_fit_threads): its thread counts are its own again
        # when the run ends.
        from threadpoolctl import threadpool_limits

        threads = threadpool_limits(limits=None)
        execution = _execute(tasks(), n_jobs, backend, scheduler)
        try:
            for index, records in (done for batch in execution for done in batch):
                ok = [r for r in records if r["status"] == "ok"]  # a failed fit's time says nothing of its cost
                order.observe(index, records_seconds(ok) if ok else float("nan"))
                store.append(records)
                for r in records:
                    counts[r["status"]] = counts.get(r["status"], 0) + 1
                    for text in r.get("warnings") or ():
                        text = re.sub(r" \(x\d+\)$", "", text)
                        summary.warnings[text] = summary.warnings.get(text, 0) + 1
                    if proto.after_timeout != "run" and abandons(r):
                        abandoned.add(timeout_key(r["dataset"], r["model"], point_id(r["params"])))
                summary.done_units += 1
                bar.update(f"{records[0]['dataset']} {records[0]['model']}")
        except KeyboardInterrupt:
            # The units stored are those written, even one whose append the interrupt cut short after its write.
            summary.done_units = store.appended
            # Closing the generator makes joblib abort: the workers are stopped, not left running. joblib then
            # warns that the cancelled tasks were wasted, which is what an interrupt means: the user reads one line.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=UserWarning,
                                        message=r".*You could benefit from adjusting the input task iterator")
                execution.close()
            summary.interrupted = True
            raise RunInterrupted(summary) from None
        finally:
            bar.close()
            close_fit_child()  # the one this process forked when the run's units ran here (jobs=1)
            threads.restore_original_limits()
            try:
                store.close()  # seals the run's write-ahead segment into Parquet
            except OSError as exc:
                # Nothing is lost: the write-ahead segment stays and is read as it is.
                warnings.warn(StoreWarning(f"{out}: could not seal the records into Parquet ({exc.strerror or exc}); "
                                           f"they stay in {store.records_dir} as JSON lines (`eemrepro compact {out}` "
                                           "seals them)"), stacklevel=2)
            summary.seconds = time.monotonic() - start
            summary.status_counts = counts
            run_info.update(finished_at=time.time(), units_done=summary.done_units, status_counts=counts,
                            interrupted=summary.interrupted)
            try:
                store.write_run(run_info)
            except OSError as exc:  # the run's facts are also in its segment; a full disk must not mask why
                warnings.warn(StoreWarning(f"{out}: could not update the run file ({exc.strerror or exc})"),
                              stacklevel=2)
        return summary



class AnotherConfigsStoreError(ValueError):
    """``--out`` names a results folder that another config (another name or kind) made."""


def _refuse_another_configs_store(out, config):
    """A results folder belongs to the config that made it: a run of another name or kind into it would
    replace its config.yaml, and every report would then read its records as this config's (or drop them)."""
    path = Path(out) / "config.yaml"
    if not path.is_file():
        return
    from .._yaml import YAMLDocumentError, load_yaml_file

    try:
        raw = load_yaml_file(path)[0]
    except YAMLDocumentError:
        return  # the scope check names what is wrong with it
    if not isinstance(raw, dict):
        return
    name, kind = raw.get("name"), raw.get("kind", "grid-search")
    if name != config.name or kind != config.kind:
        raise AnotherConfigsStoreError(
            f"{out} holds the results of config {name!r} (kind {kind}), not of {config.name!r} (kind "
            f"{config.kind}, {config.source or 'this config'}): nothing was run; use another --out")


def record_derived_reading(out, config, readings=()):
    """Note in ``out/config.yaml`` a reading that changes only how tables read the records.

    Such a reading (``tables.`` keys only) has nothing to run: its tables are
    the folder's own records (or those of the reading it names under
    ``records``) read its way, and ``eemrepro tables`` finds it in the
    folder's config, with the reading whose records it reads (found among
    ``readings``, the primary config's) so that the stored config names
    both. Returns the config path.
    """

    path = Path(out) / "config.yaml"
    if not path.is_file():
        raise ValueError(f"{path}: no stored run of {config.name}; run the primary reading first "
                                f"(reading {config.reading.name} is reported beside it)")
    other = config.reading.records
    if other and not (Path(out) / "readings" / other / "records").is_dir():
        raise ValueError(f"{Path(out) / 'readings' / other}: no stored run of reading {other}, whose records "
                         f"reading {config.reading.name} reads; run it first (eemrepro run CONFIG --reading {other})")
    raw = yaml.safe_load(path.read_text()) or {}
    if not isinstance(raw, dict) or raw.get("name") != config.name:
        raise ValueError(f"{path} is not a stored config of {config.name}")
    base = next((r for r in readings if other and r.name == other), None)
    stored = raw.setdefault("readings", {})
    for reading in (base, config.reading):
        if reading is not None:
            entry = reading.to_dict()
            stored[entry.pop("name")] = entry
    return atomic_write(path, yaml.safe_dump(raw, sort_keys=False))


def _stored_dict(config, out):
    """The config as ``out/config.yaml`` holds it: its baselines' paths made relative to ``out``."""
    raw = config.to_dict()
    if config.baselines:
        from ._baselines import stored_baselines

        raw["baselines"] = stored_baselines(config, out)
    from ..models._lookup import lies_in

    for spec in config.models:  # where a user's module lies, like the baselines, named from the results folder
        if spec.home is not None and lies_in(spec.estimator, spec.home):
            raw["models"][spec.name]["home"] = os.path.relpath(Path(spec.home).resolve(), Path(out).resolve())
    if config.local_datasets:  # the files, like the baselines, named from the results folder
        from ..datasets._local import stored_spec

        raw["local_datasets"] = {k: stored_spec(e, out) for k, e in config.local_datasets.items()}
    return raw


def unfinished_cells_in(folder, df):
    """(data set, model) cells of a results folder's config whose units lack a record in ``df`` (its frame).

    The run state the reports need to tell an interrupted grid from a
    finished one; empty without a config.yaml.
    """
    scope = config_scope_in(folder, df)
    return set() if scope is None else scope.unfinished


def config_scope_in(folder, df):
    """What of ``df`` (a results folder's frame) the folder's config.yaml names now (``_units.Scope``).

    None without a config.yaml (every record is read then).
    """
    from ._config import load_config
    from ._units import scope_rows

    path = Path(folder) / "config.yaml"
    if not path.is_file():
        return None
    config = load_config(path, import_estimators=False)  # reports never import a user's module
    return scope_rows(get_kind(config.kind).scope(config), df)


def _changed_message(out, config, changed):
    lines = [f"{out} holds records made under another setting than {config.source or config.name} now asks for:"]
    for dataset, model, diff in changed[:10]:
        # An estimator's code is the module's now; every other key is the config's.
        what = ", ".join(f"{k}: {old!r} stored, {new!r} {'now' if k.startswith('code.') else 'in the config'}"
                         for k, (old, new) in diff.items())
        lines.append(f"  {model} on {dataset}: {what}")
    if len(changed) > 10:
        lines.append(f"  ... and {len(changed) - 10} more cell(s)")
    models = ",".join(sorted({m for _, m, _ in changed}))
    lines.append(f"Nothing was run. Run those cells afresh with --rerun-changed (their records are moved aside), "
                 f"start over with --fresh, use another --out, or `eemrepro forget {out} --models {models}`.")
    return "\n".join(lines)


def _execute(tasks, n_jobs, backend, scheduler):
    """Yield each unit's records as it finishes (joblib; tasks are consumed lazily,
    so a timeout seen on one fold reaches the units dispatched after it)."""
    from joblib import Parallel, delayed, parallel_config

    if backend == "loky":
        # Workers exit when the run's process dies (kill -9): no orphans computing for nobody.
        with parallel_config(backend="loky", n_jobs=n_jobs, initializer=exit_with_parent, initargs=(os.getpid(),)):
            yield from Parallel(return_as="generator_unordered", pre_dispatch="2*n_jobs")(
                delayed(_run_batch)(t) for t in tasks
            )
        return
    if backend != "dask":
        raise ValueError(f"backend must be 'loky' or 'dask', got {backend!r}")
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise RuntimeError("--backend dask needs dask.distributed: pip install 'eemrepro[dask]'") from exc
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        # The cluster's processes ignore Ctrl-C (they inherit it ignored): the run stops them itself, and a
        # terminal's SIGINT reaching them too would only print their tracebacks.
        import signal

        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, host="127.0.0.1",
                                   dashboard_address=None, processes=True)
        finally:
            signal.signal(signal.SIGINT, previous)
        client = Client(cluster)
    try:
        with parallel_config(backend="dask", n_jobs=n_jobs):
            yield from Parallel(return_as="generator_unordered", pre_dispatch="2*n_jobs")(
                delayed(_run_batch)(t) for t in tasks
            )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
