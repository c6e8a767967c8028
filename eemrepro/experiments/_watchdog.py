"""Fits under a watchdog, and what every record of every kind carries.

Fits run in a forked child process that reports the start of each fit and each
finished record through a pipe. The child leads a process group of its own;
the parent kills that whole group (SIGKILL: really stopped, LIBSVM's C code
included, and every process a fit started: a subprocess, a pool's workers) when
a fit runs past ``fit_timeout``, records that fit as timed out, and forks a new
child for the grid points left; what a finished fit left running goes with the
group when the child is closed. A crash of the child (segfault, out of memory)
fails only the fit in flight; an error before a fit (the estimator's module
cannot be imported, or its code changed since the run started) fails the
unit's points with that error's line, not an exit status. The
watchdog runs wherever the unit runs: in a joblib/loky worker, a Dask worker or
the main process. An experiment kind supplies the fitting steps
(``steps(task, data, points)`` yielding ``("start", points)`` before a fit and
``("record", point, fields)`` after). The steps get the unit's arrays read-only
(``_guards.read_only``): the unit's points share them, and a fit that wrote into
them would change the data of the points after it. Every fit runs with
``protocol.fit_threads`` BLAS threads and one OpenMP thread
(``limit_fit_threads``), in the fit child as where there is no fork, whatever
the number of workers beside it.

The child serves every unit of one run that its process runs, one at a time
(the unit's task, steps and data go to it through a pipe), and is forked anew
only after a kill or a crash, for another run or another memory limit: a fork
per unit cost more than the fits of small units (an ESMM path on 150 points: about
40 ms of forking and copied pages against 20 ms of fitting; ``make bench-units``).
"""

import os
import pickle
import platform
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from functools import cache, lru_cache

from ._guards import EstimatorOutputError, input_write_error, read_only
from ._timeouts import TimeoutLedger, out_of_memory  # noqa: F401  (out_of_memory: re-exported)
from ._units import point_id

_HEADER = struct.Struct("<Q")


@cache
def environment():
    """Package versions (eemrepro and every runtime dependency it declares) and host, recorded with every result."""
    from importlib.metadata import PackageNotFoundError, requires, version

    try:
        declared = [r for r in requires("eemrepro") or [] if "extra ==" not in r]
    except PackageNotFoundError:
        declared = []
    names = [re.split(r"[\s<>=!~;\[(]", r, maxsplit=1)[0] for r in declared]
    versions = {}
    for pkg in ["eemrepro", *sorted(set(names) | {"numpy", "scipy", "scikit-learn", "libsvm-official", "pandas"})]:
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = None
    host = {"name": socket.gethostname(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "cpu": _cpu_model(), "blas": blas_kernels()}
    return versions, host


def _cpu_model():
    """The processor's model name (Linux's /proc/cpuinfo; elsewhere what ``platform`` knows), or None."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


@cache
def blas_kernels():
    """Each BLAS library loaded, as ``"openblas 0.3.30 SkylakeX"``: its kind, version and the kernels it picked.

    OpenBLAS picks its kernels by CPU at load time (``OPENBLAS_CORETYPE`` picks others): two machines with the
    same packages then round an ill-conditioned number differently, and an audit on another CPU tells that from a
    change of code only if the run said which kernels made its records. scipy's BLAS is loaded first, as the fits
    load it.
    """
    import scipy.linalg  # noqa: F401  (scipy's own OpenBLAS, beside numpy's)
    from threadpoolctl import threadpool_info

    return sorted({" ".join(str(i[k]) for k in ("internal_api", "version", "architecture") if i.get(k))
                   for i in threadpool_info() if i.get("user_api") == "blas"})


def other_kernels(hosts):
    """(the BLAS kernels recorded in run files' ``hosts`` that are not this machine's, this machine's), or None
    (the same kernels, or hosts that did not record theirs: runs written before they were). A host that found
    no BLAS recorded an empty list: that is a record too."""
    now = tuple(blas_kernels())
    theirs = sorted({tuple(h["blas"]) for h in hosts if isinstance(h, dict) and isinstance(h.get("blas"), list)}
                    - {now})
    return (theirs, now) if theirs else None


def openblas_coretype(theirs, now):
    """The OpenBLAS architecture that ``OPENBLAS_CORETYPE`` would pick here to round as ``theirs`` (lists of
    ``blas_kernels``' texts) did: only where they name one architecture of OpenBLAS, and this machine (``now``)
    has OpenBLAS of the same versions picking another (a version apart, or no OpenBLAS here, no setting helps).
    None otherwise."""
    def parsed(kernels):  # {(version, architecture)} of the OpenBLAS libraries
        return {tuple(k.split()[1:3]) for k in kernels if k.startswith("openblas ") and len(k.split()) > 2}

    stored, here = set().union(*map(parsed, theirs)), parsed(now)
    cores = {core for _, core in stored}
    if len(cores) != 1 or not here or {v for v, _ in stored} != {v for v, _ in here} \
            or {core for _, core in here} == cores:
        return None
    return cores.pop()


def kernels_said(theirs, now):
    """``other_kernels``' pair as ``run`` and ``audit`` say it: (the stored runs' kernels, this machine's, in
    words; the ``OPENBLAS_CORETYPE`` that picks the stored ones here, or None)."""
    return (" / ".join(", ".join(k) or "none found" for k in theirs), ", ".join(now) or "none found",
            openblas_coretype(theirs, now))


# protocol.scaling -> what load_dataset does to the whole data set; the per-fold
# scalings load raw values and scale each part by its training rows (``scale_parts``).
_WHOLE_SET_SCALING = {"global": "minmax", "standard": "standard"}


def load_data(dataset, scaling, data_home, mirror):
    """The data set as ``protocol.scaling`` wants it loaded (``global``: min-max on the whole set).

    Kept for the next unit of the same process; a user's own file is kept by its checksum and its definition
    too (an edited file, or the same file read as another problem, is read again).
    """
    import json

    from ..datasets import get_entry

    entry = get_entry(dataset)
    version = None
    if entry.local:
        from ..datasets._local import definition

        version = (entry.files[0].sha256, json.dumps(definition(entry), sort_keys=True))
    return _load_data(dataset, scaling, data_home, mirror, version)


@lru_cache(maxsize=8)
def _load_data(dataset, scaling, data_home, mirror, version):
    from ..datasets import load_dataset

    return load_dataset(dataset, scaling=_WHOLE_SET_SCALING.get(scaling), data_home=data_home, mirror=mirror)


def scale_parts(scaling, X_fit, X_other=None):
    """The parts scaled by the rows of ``X_fit`` for a per-fold ``protocol.scaling``; else as they are.

    ``per-fold``: min-max from the training part; ``standard-per-fold``: zero mean
    and unit variance from the training part (scikit-learn's ``StandardScaler``,
    as LS-SVMlab's default preprocessing does it).
    """
    if scaling == "per-fold":
        from ..datasets import minmax_scale

        return minmax_scale(X_fit), None if X_other is None else minmax_scale(X_other, reference=X_fit)
    if scaling == "standard-per-fold":
        from sklearn.preprocessing import StandardScaler

        scaler = StandardScaler().fit(X_fit)
        return scaler.transform(X_fit), None if X_other is None else scaler.transform(X_other)
    return X_fit, X_other


def short_error(exc):
    """A failed fit's error for its record, in one line: the exception and where it was raised; an
    estimator's broken promise (a write into its read-only input, a prediction that is not a label) in
    words of its own (``_guards``)."""
    if isinstance(exc, EstimatorOutputError):
        return str(exc)
    wrote = input_write_error(exc)
    if wrote is not None:
        return wrote
    from ..models._lookup import RECORDING_FRAMES

    # (the frames of the import functions a fit's check wraps are passed over: a failed import is the caller's)
    tb = [f for f in traceback.extract_tb(exc.__traceback__)
          if f.filename != RECORDING_FRAMES[0] or RECORDING_FRAMES[1] not in f.name]
    where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _send(fd, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


class _Reader:
    def __init__(self, fd):
        self.fd, self.buf = fd, bytearray()

    def read(self, timeout):
        """Next message; None at end of stream; raises TimeoutError."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if len(self.buf) >= _HEADER.size:
                (n,) = _HEADER.unpack_from(self.buf)
                if len(self.buf) >= _HEADER.size + n:
                    message = pickle.loads(memoryview(self.buf)[_HEADER.size : _HEADER.size + n])
                    del self.buf[: _HEADER.size + n]
                    return message
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                raise TimeoutError
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk


def fit_threads(task):
    """The BLAS threads a unit's fits run with: its ``fit_threads`` (``protocol.fit_threads``), else 1."""
    return int(task.get("fit_threads") or 1)


# This process's threadpoolctl controller and the number of modules imported when it was made: finding the
# loaded BLAS and OpenMP libraries takes milliseconds (a unit's fits may take less), setting their thread
# counts microseconds; a library is loaded by importing an extension module, which is when it is looked for again.
_THREADPOOLS = {}


def _loaded_libraries():
    """What tells that a shared library was loaded since: (count, sum of load addresses) of the process's shared
    objects (``dl_iterate_phdr``, a fraction of a millisecond); the module count where that is not available."""
    global _PHDR
    if _PHDR is None:
        import ctypes

        class _Info(ctypes.Structure):
            _fields_ = [("addr", ctypes.c_void_p), ("name", ctypes.c_char_p)]

        callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Info), ctypes.c_size_t, ctypes.c_void_p)
        try:
            iterate = ctypes.CDLL(None).dl_iterate_phdr
        except (OSError, AttributeError):
            iterate = None
        _PHDR = (iterate, callback)
    iterate, callback = _PHDR
    if iterate is None:
        return ("modules", len(sys.modules))
    seen = [0, 0]

    def count(info, size, data):
        seen[0] += 1
        seen[1] += info.contents.addr or 0
        return 0

    iterate(callback(count), None)
    return tuple(seen)


_PHDR = None


def limit_fit_threads(n):
    """Set this process's BLAS libraries to ``n`` threads and OpenMP to one, for the fits it runs now.

    A fixed count, never derived from the cores or from how many workers run beside the fit: the sums a
    multithreaded BLAS makes are split by its thread count, so their rounding, and the few records that hang
    on it, would follow ``--jobs`` (cores / workers threads each in a loky worker, all of them with
    ``--jobs 1``). OpenMP stays at one thread (LIBSVM's loops): libgomp's pool does not survive the fork of
    the fit child (``_FitChild``). Left set afterwards: the processes that fit are the run's (the caller's
    own process, with ``--jobs 1``, is restored by the runner when the run ends).
    """
    from threadpoolctl import ThreadpoolController

    # The libraries are scanned again only when the loaded shared objects changed (a BLAS loaded since); the
    # count of Python modules, the key before, can return to a count it had (modules dropped and imported again).
    loaded = _loaded_libraries()
    if _THREADPOOLS.get("loaded") != loaded:
        _THREADPOOLS.update(loaded=loaded, controller=ThreadpoolController())
    controller = _THREADPOOLS["controller"]
    controller.limit(limits=int(n), user_api="blas")
    controller.limit(limits=1, user_api="openmp")


def exit_with_parent(parent=None, poll_seconds=1.0, group=False):
    """Exit this process (at once, nothing to clean) soon after its parent dies.

    A run's workers and fit children are not the user's to find and kill: when
    the run's process is killed (``kill -9``, the machine's OOM killer) they would
    otherwise go on computing for nobody. A daemon thread notices the parent's
    death as a change of parent pid. ``parent``: the pid the parent had when it
    started this process (a process started after its parent died sees the
    adoptive one as its parent: it exits at once). ``group``: this process leads
    a process group of its own (a fit child): the whole group is killed with it,
    what its fits started included.
    """
    parent = os.getppid() if parent is None else parent

    def watch():
        while os.getppid() == parent:
            time.sleep(poll_seconds)
        if group:
            os.killpg(0, signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


class _FitChild:
    """A forked process that runs units' fits for the process that forked it, one unit at a time.

    It is forked for one run (``key``: the run's id and the memory limit): a
    child forked earlier would not see what changed in its parent since (an
    estimator registered between two runs). It exits when its parent closes the
    pipe or dies, when it is killed, or when a unit's steps raise (a crash).
    """

    def __init__(self, key, memory_gb):
        self.key, self.owner = key, os.getpid()
        job_r, job_w = os.pipe()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            os.close(job_w)
            os.close(r)
            code = 0
            try:
                # A process group of its own, killed whole (``close``): a fit's subprocesses and pool workers
                # stop with it. Set on both sides of the fork, so that neither can act before it holds.
                os.setpgid(0, 0)
                exit_with_parent(self.owner, group=True)
                # libgomp's thread pool does not survive fork: a child that uses
                # OpenMP (LIBSVM in libsvm-official) with a pool its parent started
                # waits forever for threads that do not exist. One OpenMP thread
                # never touches the pool; LIBSVM's reference build is single-
                # threaded anyway, and the cores go to parallel units.
                from threadpoolctl import threadpool_limits

                threadpool_limits(limits=1, user_api="openmp")
                if memory_gb:
                    import resource

                    limit = int(memory_gb * 2**30)
                    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                jobs = _Reader(job_r)
                while (job := jobs.read(None)) is not None:
                    task, steps, data, points = job
                    limit_fit_threads(fit_threads(task))
                    for message in _with_imports(task, _with_warnings(steps(task, read_only(data), points))):
                        _send(w, message)
                    _send(w, ("done",))
                    del job, task, data  # not held while waiting for the next unit
            except BaseException as exc:  # (a fit's own error is its record's: only the steps' reach here)
                code = 1
                _say_why(w, exc)
            finally:
                os._exit(code)
        os.close(job_r)
        os.close(w)
        try:
            os.setpgid(pid, pid)
        except OSError:  # the child set it first (EACCES once it ran on; it never execs)
            pass
        self.pid, self.job_fd, self.reader = pid, job_w, _Reader(r)

    def submit(self, task, steps, data, points):
        """Send a unit; False where the child is gone (it died between two units)."""
        try:
            _send(self.job_fd, (task, steps, data, points))
        except BrokenPipeError:
            return False
        return True

    def close(self, kill=False):
        """Stop the child (``kill``: SIGKILL at once) and every process of its group (what its fits started and
        left running: a subprocess, a pool's workers, a process of theirs); the child's wait status."""
        if kill:
            self._kill_group()
        os.close(self.job_fd)
        os.close(self.reader.fd)
        _, status = os.waitpid(self.pid, 0)
        # The group outlives its leader while a member lives, and its id is not given to another process
        # meanwhile: killing it after the wait reaches only what the fits left.
        self._kill_group()
        return status

    def _kill_group(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:  # nobody left in it
            pass
        except PermissionError:  # pragma: no cover (not its group yet: the child alone)
            os.kill(self.pid, signal.SIGKILL)


def _say_why(fd, exc):
    """Tell the parent, in one line, why this fit child stops (an estimator that cannot be imported, or whose
    code changed since the run started): the records of the points it leaves carry that, not an exit status."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        return
    try:
        _send(fd, ("error", short_error(exc)))
    except BaseException:  # noqa: S110 (the parent gone, or the error unpicklable: the exit status says it)
        pass


# Each thread's own (a Dask worker may run units in several threads of one process).
_LOCAL = threading.local()


def _fit_child(task):
    """This thread's fit child for ``task``'s run, forked where there is none for it."""
    key = (task.get("run_id"), task.get("fit_memory_gb"))
    child = getattr(_LOCAL, "child", None)
    if child is not None and child.key != key:
        close_fit_child()
        child = None
    if child is None:
        child = _LOCAL.child = _FitChild(key, task.get("fit_memory_gb"))
    return child


def close_fit_child(kill=False):
    """Stop this thread's fit child, if it has one (the end of a run here); its wait status."""
    child, _LOCAL.child = getattr(_LOCAL, "child", None), None
    if child is not None and child.owner == os.getpid():  # (a forked process does not own its parent's)
        return child.close(kill=kill)
    return None


def _with_warnings(messages):
    """``messages`` of a unit's steps, each record carrying the warnings its fit raised (``warnings``: one
    "Category: message" per distinct warning, on one line, its count after it). Caught here, in the fit process,
    on every backend alike: the run summarises them (loky and Dask workers would print them each their own way).
    A fit that warned a ``ConvergenceWarning`` did not converge: its record says ``converged`` False, as where
    the solver says so itself (scikit-learn's say it in the warning alone)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for message in messages:
            if message[0] == "record" and caught:
                counts = {}
                for w in caught:
                    text = " ".join(f"{w.category.__name__}: {w.message}".split())
                    counts[text] = counts.get(text, 0) + 1
                fields = {**message[2], "warnings": [t if n == 1 else f"{t} (x{n})" for t, n in counts.items()]}
                if any(issubclass(w.category, ConvergenceWarning) for w in caught):
                    fields["extra"] = {**(fields.get("extra") or {}), "converged": False}
                caught.clear()
                message = (message[0], message[1], fields)
            yield message


def _with_imports(task, messages):
    """``messages`` of a unit's steps, a record ``ok`` failed where the unit's steps asked for a user's module that
    the code of the unit's identity does not hold (``models._lookup.imported_outside``): a module imported inside
    a method, whose edit no record could tell. Such a module the unit imported is dropped from ``sys.modules``
    after it, so that a later unit of this process imports it anew and is judged alike."""
    from ..models._lookup import imported_outside, outside_imports_error, recording_imports
    from ._identity import code_of

    codes = code_of(task.get("identity"))
    if not codes:
        yield from messages
        return
    outside = {}
    with recording_imports() as asked:
        try:
            for message in messages:
                if message[0] == "record" and message[2].get("status") == "ok":
                    outside = imported_outside(set(codes.values()), asked)
                    if outside:
                        message = ("record", message[1], {"status": "failed", "error": outside_imports_error(
                            codes, outside), "fit_seconds": message[2].get("fit_seconds")})
                yield message
        finally:  # (what the whole unit asked for, a failed fit's too; a package's submodules with it)
            try:
                outside = imported_outside(set(codes.values()), asked)
            except Exception:  # noqa: S110 (the unit's records said what they could; nothing to drop)
                outside = {}
            for name in [m for m in list(sys.modules) if m not in asked.before]:
                if name in outside or any(name.startswith(f"{m}.") for m in outside):
                    sys.modules.pop(name, None)


def _run_points_in_child(task, steps, data, points, timeout):
    """Fit ``points`` in the fit child; return (records by point id, timed-out points, crashed points, why)."""
    if not _fit_child(task).submit(task, steps, data, points):  # it died between two units
        close_fit_child(kill=True)
        _fit_child(task).submit(task, steps, data, points)
    reader = _LOCAL.child.reader
    done, in_flight, timed_out, crashed, status, why = {}, [], [], [], None, None
    try:
        while True:
            try:
                message = reader.read(timeout if in_flight else None)
            except TimeoutError:
                timed_out = in_flight
                status = close_fit_child(kill=True)
                break
            if message is None:
                # A child that died before it started a fit (its job unreadable) fails the unit's points.
                crashed = [p for p in (in_flight if in_flight or done else points) if point_id(p) not in done]
                status = close_fit_child()
                break
            if message[0] == "done":
                break
            if message[0] == "error":  # why it stops (``_say_why``); the end of its stream follows
                why = message[1]
            elif message[0] == "start":
                in_flight = message[1]
            else:
                _, point, fields = message
                done[point_id(point)] = fields
                if all(point_id(p) in done for p in in_flight):
                    in_flight = []
    except BaseException:  # interrupted mid-unit: the child's state is unknown, and its fit may be long
        close_fit_child(kill=True)
        raise
    if status is None and task.get("run_id") is None:  # outside a run: a child per unit
        close_fit_child()
    crash_reason = None
    if crashed:
        crash_reason = why or (f"the fit's process died (signal {os.WTERMSIG(status)})" if os.WIFSIGNALED(status)
                               else f"the fit's process exited with status {os.WEXITSTATUS(status)}")
    return done, timed_out, crashed, crash_reason


def run_points(task, steps, data):
    """Fit ``task["points"]`` (less ``task["skip_points"]``) under the watchdog; {point id: fields}.

    ``task`` needs ``points``, ``skip_points``, ``fit_timeout``, ``after_timeout``
    and (optionally) ``fit_memory_gb``.
    """
    skip = {point_id(p) for p in task["skip_points"]}
    points = [p for p in task["points"] if point_id(p) not in skip]
    results = {point_id(p): {"status": "skipped-after-timeout"} for p in task["points"] if point_id(p) in skip}
    use_fork = hasattr(os, "fork")
    ledger = TimeoutLedger.of(task)
    while points:
        if use_fork:
            done, timed_out, crashed, reason = _run_points_in_child(task, steps, data, points, task["fit_timeout"])
        else:  # no fork (Windows): no watchdog, the fit runs here
            limit_fit_threads(fit_threads(task))
            done, timed_out, crashed, reason = {}, [], [], None
            for message in _with_imports(task, steps(task, read_only(data), points)):
                if message[0] == "record":
                    done[point_id(message[1])] = message[2]
        results.update(done)
        for p in timed_out:
            results[point_id(p)] = {"status": "timed-out", "fit_seconds": task["fit_timeout"],
                                    "error": f"fit ran past fit_timeout={task['fit_timeout']} s and was killed"}
        for p in crashed:
            results[point_id(p)] = {"status": "failed", "error": reason}
        # What a fit of this round abandoned (under skip-model the rest of the model's grid on this data set:
        # the cell reads "not finished within the budget") is not attempted.
        for p in [*done, *map(point_id, timed_out), *map(point_id, crashed)]:
            ledger.note(task.get("dataset"), task.get("model"), p, results[p])
        points = [p for p in points if point_id(p) not in results]
        abandoned = [p for p in points if ledger.skips(task.get("dataset"), task.get("model"), point_id(p))]
        results.update({point_id(p): {"status": "skipped-after-timeout"} for p in abandoned})
        points = [p for p in points if point_id(p) not in results]
    return results


def make_record(task, point, fields, data_sha256, n_train, n_test):
    """A stored record: the unit's identity and provenance around one point's ``fields``."""
    versions, host = environment()
    return {
        "kind": task["kind"], "dataset": task["dataset"], "model": task["model"],
        "estimator": task.get("estimator"), "params": point, "fixed_params": task.get("params", {}),
        "repeat": task["repeat"], "fold": task["fold"], "inner": task["inner"],
        "status": fields["status"], "metrics": fields.get("metrics") or {},
        "criteria": fields.get("criteria") or {},
        **{k: fields.get(k) for k in ("fit_seconds", "predict_seconds", "path_size", "error",
                                      "standalone_fit_seconds")},
        **fields.get("extra", {}),
        **({"fitted": fields["fitted"]} if fields.get("fitted") else {}),
        **({"warnings": fields["warnings"]} if fields.get("warnings") else {}),  # what the fit warned
        "n_train": int(n_train), "n_test": int(n_test), "seed": task["seed"], "fit_threads": fit_threads(task),
        "identity": task["identity"], "identity_sha": task["identity_sha"], "data_sha256": data_sha256,
        "versions": versions, "host": host["name"], "finished_at": time.time(),
    }
