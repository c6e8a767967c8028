"""Running one unit: load, split, fit (under a watchdog), score, return records.

Fits run in a forked child process that reports the start of each fit and each
finished record through a pipe. The parent kills the child (SIGKILL: really
stopped, LIBSVM's C code included) when a fit runs past ``fit_timeout``, records
that fit as timed out, and forks a new child for the grid points left. A crash
of the child (segfault, out of memory) fails only the fit in flight. The
watchdog runs wherever the unit runs: in a joblib/loky worker, a Dask worker or
the main process.
"""

import math
import os
import pickle
import platform
import select
import signal
import socket
import struct
import time
import traceback
from functools import cache, lru_cache

import numpy as np

from ._units import inner_split, outer_split

_HEADER = struct.Struct("<Q")


@cache
def environment():
    """Package versions and host, recorded with every result."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for pkg in ("eemrepro", "numpy", "scipy", "scikit-learn", "libsvm-official", "pandas"):
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = None
    host = {"name": socket.gethostname(), "platform": platform.platform(), "cpus": os.cpu_count()}
    return versions, host


@lru_cache(maxsize=8)
def _load(dataset, raw, data_home, mirror):
    from ..datasets import load_dataset

    return load_dataset(dataset, scaling=None if raw else "minmax", data_home=data_home, mirror=mirror)


def gmean_score(y_true, y_pred):
    """sqrt(TPR * TNR) with +1 the positive class (SPEC section 2)."""
    pos, neg = y_true > 0, y_true < 0
    tpr = np.mean(y_pred[pos] > 0) if pos.any() else float("nan")
    tnr = np.mean(y_pred[neg] < 0) if neg.any() else float("nan")
    return math.sqrt(tpr * tnr), (tpr + tnr) / 2


def _score(model, X_test, y_test):
    from sklearn.metrics import roc_auc_score

    start = time.perf_counter()
    y_pred = model.predict(X_test)
    score = None
    if hasattr(model, "decision_function"):
        score = model.decision_function(X_test)
    elif hasattr(model, "predict_proba"):
        score = model.predict_proba(X_test)[:, list(model.classes_).index(1)]
    predict_seconds = time.perf_counter() - start
    gmean, bac = gmean_score(y_test, np.asarray(y_pred))
    auc = None
    if score is not None and np.all(np.isfinite(score)) and len(np.unique(y_test)) == 2:
        auc = float(roc_auc_score(y_test, score))
    return {"gmean": gmean, "bac": bac, "auc": auc, "predict_seconds": predict_seconds}


def _fit_steps(task, X_train, y_train, X_test, y_test, points):
    """Yield ("start", points) before each fit and ("record", point, fields) after."""
    from sklearn.base import clone

    from ._config import resolve_estimator
    from ._units import point_id

    cls = resolve_estimator(task["estimator"])
    base = cls(**task["params"])
    if "random_state" in base.get_params():
        base.set_params(random_state=task["seed"])
    path = task["path_param"]
    if path is not None:
        steps = [points]
    else:
        steps = [[p] for p in points]
    for step in steps:
        yield "start", step
        try:
            if path is not None:
                est = clone(base).set_params(**{k: v for k, v in step[0].items() if k != path})
                start = time.perf_counter()
                models = est.fit_path(X_train, y_train, [p[path] for p in step])
                fit_seconds = time.perf_counter() - start
            else:
                est = clone(base).set_params(**step[0])
                start = time.perf_counter()
                models = [est.fit(X_train, y_train)]
                fit_seconds = time.perf_counter() - start
        except Exception as exc:  # a failed fit fails its grid points, never the run
            for p in step:
                yield "record", p, {"status": "failed", "error": _short_error(exc)}
            continue
        standalone = {}
        if path is not None and task.get("standalone_timing") == "first-fold" and task["fold"] == 0 \
                and task["inner"] is None:
            for p in step:
                yield "start", [p]
                single = clone(base).set_params(**p)
                t0 = time.perf_counter()
                try:
                    single.fit(X_train, y_train)
                    standalone[point_id(p)] = time.perf_counter() - t0
                except Exception:
                    standalone[point_id(p)] = None
            yield "start", step
        for p, model in zip(step, models, strict=False):
            try:
                fields = _score(model, X_test, y_test)
                fields.update(status="ok", fit_seconds=fit_seconds, path_size=len(step))
                if path is None:
                    fields["standalone_fit_seconds"] = fit_seconds
                elif point_id(p) in standalone:
                    fields["standalone_fit_seconds"] = standalone[point_id(p)]
                if task.get("train_dcs"):
                    try:
                        fields["dcs_gaussian"], fields["dcs_kde"] = _train_dcs(model, X_train, y_train)
                    except Exception as exc:  # a diagnostic must never fail the fit
                        fields["error"] = f"train D_CS: {_short_error(exc)}"
            except Exception as exc:
                fields = {"status": "failed", "error": _short_error(exc), "fit_seconds": fit_seconds}
            yield "record", p, fields


def _train_dcs(model, X_train, y_train):
    """D_CS of the training data's 1-D projection: beta^T phi(x) for EEM/EEKM,
    the decision value for the others (EEM paper, section 7.4)."""
    from ._dcs import projection_dcs

    z = model.project(X_train) if hasattr(model, "project") else model.decision_function(X_train)
    return projection_dcs(np.asarray(z, dtype=np.float64), y_train)


def out_of_memory(fields):
    """Whether a record's fields say its fit failed for lack of memory."""
    return fields.get("status") == "failed" and str(fields.get("error") or "").startswith("MemoryError")


def _short_error(exc):
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _send(fd, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


class _Reader:
    def __init__(self, fd):
        self.fd, self.buf = fd, b""

    def read(self, timeout):
        """Next message; None at end of stream; raises TimeoutError."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if len(self.buf) >= _HEADER.size:
                (n,) = _HEADER.unpack_from(self.buf)
                if len(self.buf) >= _HEADER.size + n:
                    data = self.buf[_HEADER.size : _HEADER.size + n]
                    self.buf = self.buf[_HEADER.size + n :]
                    return pickle.loads(data)
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                raise TimeoutError
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk


def _run_points_in_child(task, data, points, timeout):
    """Fork, fit ``points``; return (records by point id, timed-out points, crashed points)."""
    from ._units import point_id

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        code = 0
        try:
            # libgomp's thread pool does not survive fork: a child that uses
            # OpenMP (LIBSVM in libsvm-official) with a pool its parent started
            # waits forever for threads that do not exist. One OpenMP thread
            # never touches the pool; LIBSVM's reference build is single-
            # threaded anyway, and the cores go to parallel units.
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=1, user_api="openmp")
            if task.get("fit_memory_gb"):
                import resource

                limit = int(task["fit_memory_gb"] * 2**30)
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            for message in _fit_steps(task, *data, points):
                _send(w, message)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    reader, done, in_flight, timed_out, crashed = _Reader(r), {}, [], [], []
    try:
        while True:
            try:
                message = reader.read(timeout if in_flight else None)
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                timed_out = in_flight
                break
            if message is None:
                crashed = [p for p in in_flight if point_id(p) not in done]
                break
            if message[0] == "start":
                in_flight = message[1]
            else:
                _, point, fields = message
                done[point_id(point)] = fields
                if all(point_id(p) in done for p in in_flight):
                    in_flight = []
    finally:
        os.close(r)
        _, status = os.waitpid(pid, 0)
    crash_reason = None
    if crashed:
        crash_reason = (f"the fit's process died (signal {os.WTERMSIG(status)})" if os.WIFSIGNALED(status)
                        else f"the fit's process exited with status {os.WEXITSTATUS(status)}")
    return done, timed_out, crashed, crash_reason


def run_unit(task):
    """Run one unit; return its records (one per grid point).

    ``task`` is a plain dict (picklable for any joblib backend): the unit's
    data set, model, estimator, fixed params, points, split, seeds, protocol
    options and the points to skip because they timed out on another fold.
    """
    from ._units import point_id

    X, y, meta = _load(task["dataset"], task["scaling"] == "per-fold", task["data_home"], task["mirror"])
    train, test = outer_split(y, task["folds"], task["base_seed"], task["dataset"], task["repeat"], task["fold"])
    if task["inner"] is not None:
        tr, va = inner_split(y[train], task["inner_folds"], task["base_seed"], task["dataset"],
                             task["repeat"], task["fold"], task["inner"])
        train, test = train[tr], train[va]
    X_train, X_test = X[train], X[test]
    if task["scaling"] == "per-fold":
        from ..datasets import minmax_scale

        X_train, X_test = minmax_scale(X_train), minmax_scale(X_test, reference=X_train)
    data = (X_train, y[train], X_test, y[test])

    skip = {point_id(p) for p in task["skip_points"]}
    points = [p for p in task["points"] if point_id(p) not in skip]
    results = {point_id(p): {"status": "skipped-after-timeout"} for p in task["points"] if point_id(p) in skip}
    use_fork = hasattr(os, "fork")
    while points:
        if use_fork:
            done, timed_out, crashed, reason = _run_points_in_child(task, data, points, task["fit_timeout"])
        else:  # no fork (Windows): no watchdog, the fit runs here
            done, timed_out, crashed, reason = {}, [], [], None
            for message in _fit_steps(task, *data, points):
                if message[0] == "record":
                    done[point_id(message[1])] = message[2]
        results.update(done)
        for p in timed_out:
            results[point_id(p)] = {"status": "timed-out", "fit_seconds": task["fit_timeout"],
                                    "error": f"fit ran past fit_timeout={task['fit_timeout']} s and was killed"}
        for p in crashed:
            results[point_id(p)] = {"status": "failed", "error": reason}
        points = [p for p in points if point_id(p) not in results]
        if task.get("after_timeout") == "skip-model" and (timed_out or any(map(out_of_memory, done.values()))):
            # The model has run past the time (or memory) budget on this data
            # set: the rest of its grid is not attempted (the paper's "> 600,
            # not finished").
            results.update({point_id(p): {"status": "skipped-after-timeout"} for p in points})
            points = []

    versions, host = environment()
    records = []
    for p in task["points"]:
        fields = results[point_id(p)]
        records.append({
            "dataset": task["dataset"], "model": task["model"], "estimator": task["estimator"],
            "params": p, "fixed_params": task["params"], "repeat": task["repeat"], "fold": task["fold"],
            "inner": task["inner"], "status": fields["status"],
            "gmean": fields.get("gmean"), "bac": fields.get("bac"), "auc": fields.get("auc"),
            "fit_seconds": fields.get("fit_seconds"), "predict_seconds": fields.get("predict_seconds"),
            "path_size": fields.get("path_size"), "error": fields.get("error"),
            "dcs_gaussian": fields.get("dcs_gaussian"), "dcs_kde": fields.get("dcs_kde"),
            "standalone_fit_seconds": fields.get("standalone_fit_seconds"),
            "n_train": int(len(train)), "n_test": int(len(test)),
            "seed": task["seed"], "protocol": task["protocol_fingerprint"], "data_sha256": meta["sha256"],
            "versions": versions, "host": host["name"], "finished_at": time.time(),
        })
    return records
