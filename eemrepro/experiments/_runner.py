"""``run_experiment``: config -> units -> (joblib: loky or Dask) -> result store.

The runner resumes by default: units whose records are already stored (same
protocol, same data checksum) are skipped. Records are written by this process
as units finish, so an interrupted run keeps everything it finished.
"""

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ._execute import environment, out_of_memory, run_unit
from ._store import ResultStore
from ._units import derive_seed, enumerate_units, point_id


def _run_task(task):
    if task.get("kind") == "dcs-correlation":
        from ._correlation import run_correlation_unit

        return run_correlation_unit(task)
    return run_unit(task)


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


class Progress:
    """One status line: units done/total, ETA, current data set (redrawn on a TTY)."""

    def __init__(self, total, stream=None, enabled=True):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.enabled and self.stream.isatty()
        self._last_pct = -10

    def update(self, label):
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        pct = 100 * self.done // self.total
        line = f"[{self.done}/{self.total}] {pct}%  ETA {_fmt_seconds(eta)}  {label}"
        if self.tty:
            self.stream.write("\r" + line[:120].ljust(120))
            self.stream.flush()
        elif pct >= self._last_pct + 10 or self.done == self.total:
            self._last_pct = pct
            self.stream.write(line + "\n")

    def close(self):
        if self.tty:
            self.stream.write("\n")


def _fmt_seconds(s):
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def estimate_seconds(config, units, n_jobs, flops_per_second=2e10):
    """A rough wall-time estimate from the models' operation counts (for --dry-run)."""
    from ..datasets import get_entry

    specs = {m.name: m for m in config.models}
    total = 0.0
    if config.kind == "dcs-correlation":
        for u in units:
            e = get_entry(u.dataset)
            h = dict(u.fixed)["n_hidden"]
            total += (e.expected.get("n") or 1000) * (h * h + h * (e.expected.get("d") or 10)) / flops_per_second + 0.02
        return total / max(1, n_jobs)
    for u in units:
        e = get_entry(u.dataset)
        n = e.expected.get("n") or 1000
        d = e.expected.get("d") or 10
        n_train = n * (config.protocol.folds - 1) / config.protocol.folds
        if u.inner is not None:
            n_train *= (config.protocol.inner_folds - 1) / config.protocol.inner_folds
        est = specs[u.model].estimator
        h = max(u.path_values) if u.path_param == "n_hidden" else dict(u.fixed).get("n_hidden", 100)
        if est in ("EEM", "EEKM"):
            flops = n_train * (h * h + d * h)
        elif est == "WELM":
            flops = 2 * n_train * h * h + n_train * d * h
        elif est == "LSSVM":
            flops = 9 * n_train**3 + n_train * n_train * d
        elif est == "SVM":
            flops = 20 * n_train * n_train * d
        else:
            flops = n_train * d * 100
        total += flops / flops_per_second + 0.05  # + process overhead
    return total / max(1, n_jobs)


def _git_commit():
    """The eemrepro checkout's commit (with '+dirty' for uncommitted changes), if any."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _n_jobs(jobs):
    if jobs is None or jobs == -1:
        return os.cpu_count() or 1
    return max(1, int(jobs))


def run_experiment(config, out=None, jobs=None, backend="loky", scheduler=None, fresh=False,
                   dry_run=False, mirror=None, data_home=None, progress=True, echo=print, repeats=None,
                   skip_unavailable=False, retry_failed=False, only_models=None, only_datasets=None):
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
        Override the config's ``protocol.repeats`` (a command-line flag wins over YAML).
    skip_unavailable : bool
        Skip (and report in ``RunSummary.unavailable``) data sets whose files
        cannot be fetched, instead of failing before anything runs.
    retry_failed : bool
        Run again the units with failed fits (their new records supersede the old).
    only_models, only_datasets : sequence of str, optional
        Run only these models / data sets of the config now (cheap ones first,
        say); the stored config stays whole and a later run resumes the rest.

    Returns
    -------
    RunSummary
    """
    from dataclasses import replace

    from ..datasets import DatasetError, dataset_checksum

    if repeats is not None:
        if repeats < 1:
            raise ValueError(f"repeats must be >= 1, got {repeats}")
        config = replace(config, protocol=replace(config.protocol, repeats=int(repeats)))
    mirror = mirror if mirror is not None else config.mirror
    data_home = data_home if data_home is not None else config.data_home
    out = Path(out) if out is not None else Path("results") / config.name
    store = ResultStore(out)
    proto = config.protocol
    fingerprint = proto.fingerprint()
    n_jobs = _n_jobs(jobs if jobs is not None else config.jobs)

    for label, chosen, known in (("model", only_models, [m.name for m in config.models]),
                                 ("data set", only_datasets, list(config.datasets))):
        unknown = sorted(set(chosen or ()) - set(known))
        if unknown:
            raise ValueError(f"unknown {label}(s) {unknown}; the config has {known}")
    # Only the data sets run now are fetched and checksummed.
    running = [d for d in config.datasets if not only_datasets or d in only_datasets]

    superseded = store.supersede() if fresh and not dry_run else None
    data_sha, unavailable = {}, {}
    for d in running:
        try:
            data_sha[d] = dataset_checksum(d, data_home=data_home, mirror=mirror)
        except DatasetError as exc:
            if not skip_unavailable:
                raise
            unavailable[d] = str(exc)
    # The stored config stays whole (what was skipped is in run_info's
    # unavailable_datasets); only the units run now are enumerated.
    now = replace(config, datasets=tuple(d for d in running if d not in unavailable))
    units = [u for u in enumerate_units(now) if not only_models or u.model in only_models]
    done = store.done_keys(fingerprint, data_sha, retry_failed=retry_failed)
    pending = [u for u in units if not set(u.keys()) <= done]
    summary = RunSummary(out=out, total_units=len(units), pending_units=len(pending), superseded=superseded,
                         unavailable=unavailable)
    if dry_run:
        summary.estimate_seconds = estimate_seconds(config, pending, n_jobs)
        return summary

    versions, host = environment()
    out.mkdir(parents=True, exist_ok=True)
    commit = _git_commit()
    (out / "config.yaml").write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))
    run_info = {"config": config.to_dict(), "config_file": config.source, "versions": versions, "host": host,
                "started_at": time.time(), "jobs": n_jobs, "backend": backend, "units_total": len(units),
                "units_pending": len(pending), "data_sha256": data_sha, "protocol_fingerprint": fingerprint,
                "unavailable_datasets": unavailable, "commit": commit}

    abandoned = set()

    def timeout_key(dataset, model, params):
        # "skip": a timed-out grid point is not run on the other folds;
        # "skip-model": nothing more of that model is run on that data set.
        return (dataset, model) if proto.after_timeout == "skip-model" else (dataset, model, point_id(params))

    def abandons(record):
        # A fit past the time budget; under skip-model also one out of memory.
        return record["status"] == "timed-out" or (proto.after_timeout == "skip-model" and out_of_memory(record))

    if proto.after_timeout != "run":
        for r in store.read():
            if r["protocol"] == fingerprint and abandons(r):
                abandoned.add(timeout_key(r["dataset"], r["model"], r["params"]))

    specs = {m.name: m for m in config.models}

    def correlation_tasks():
        a = config.analysis
        for u in pending:
            yield {"kind": "dcs-correlation", "dataset": u.dataset, "model": u.model,
                   "n_hidden": dict(u.fixed)["n_hidden"],
                   "layer": u.fold, "activation": a.activation, "covariance": a.covariance, "betas": a.betas,
                   "base_seed": proto.seed, "protocol_fingerprint": fingerprint,
                   "data_home": None if data_home is None else str(data_home),
                   "mirror": None if mirror is None else str(mirror)}

    def tasks():
        if config.kind == "dcs-correlation":
            yield from correlation_tasks()
            return
        for u in pending:
            spec = specs[u.model]
            points = u.points()
            skip = [p for p in points if timeout_key(u.dataset, u.model, p) in abandoned]
            yield {
                "dataset": u.dataset, "model": u.model, "estimator": spec.estimator, "params": spec.params,
                "path_param": u.path_param if u.path_is_fit_path else None, "points": points, "skip_points": skip,
                "repeat": u.repeat, "fold": u.fold, "inner": u.inner,
                "folds": proto.folds, "inner_folds": proto.inner_folds, "base_seed": proto.seed,
                "seed": derive_seed(proto.seed, u.dataset, u.model, u.repeat, u.fold,
                                    *(() if u.inner is None else ("inner", u.inner))),
                "scaling": proto.scaling, "fit_timeout": proto.fit_timeout, "train_dcs": proto.train_dcs,
                "standalone_timing": proto.standalone_timing, "after_timeout": proto.after_timeout,
                "fit_memory_gb": proto.fit_memory_gb,
                "protocol_fingerprint": fingerprint, "data_home": None if data_home is None else str(data_home),
                "mirror": None if mirror is None else str(mirror),
            }

    bar = Progress(len(pending), enabled=progress)
    start = time.monotonic()
    counts = {}
    try:
        for records in _execute(tasks(), n_jobs, backend, scheduler):
            store.append(records)
            for r in records:
                counts[r["status"]] = counts.get(r["status"], 0) + 1
                if proto.after_timeout != "run" and abandons(r):
                    abandoned.add(timeout_key(r["dataset"], r["model"], r["params"]))
            summary.done_units += 1
            bar.update(f"{records[0]['dataset']} {records[0]['model']}")
    finally:
        bar.close()
        store.close()
        summary.seconds = time.monotonic() - start
        summary.status_counts = counts
        run_info.update(finished_at=time.time(), units_done=summary.done_units, status_counts=counts)
        store.write_run(run_info)
    return summary


def _execute(tasks, n_jobs, backend, scheduler):
    """Yield each unit's records as it finishes (joblib; tasks are consumed lazily,
    so a timeout seen on one fold reaches the units dispatched after it)."""
    from joblib import Parallel, delayed, parallel_config

    if backend == "loky":
        with parallel_config(backend="loky", n_jobs=n_jobs):
            yield from Parallel(return_as="generator_unordered", pre_dispatch="2*n_jobs")(
                delayed(_run_task)(t) for t in tasks
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
        cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, host="127.0.0.1",
                               dashboard_address=None, processes=True)
        client = Client(cluster)
    try:
        with parallel_config(backend="dask", n_jobs=n_jobs):
            yield from Parallel(return_as="generator_unordered", pre_dispatch="2*n_jobs")(
                delayed(_run_task)(t) for t in tasks
            )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
