"""What the tests share (one support module; no test file imports another): classifiers a config names as
``tests.helpers:Sleepy`` and the like, a user's own classifier modules written into a folder of their own, the run
of a config through the CLI, hand-made records and stores, and the data mirror."""

import hashlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class Sleepy(ClassifierMixin, BaseEstimator):
    """Nearest-centroid classifier whose fit first sleeps ``delay`` seconds.

    After sleeping it appends to ``marker`` (if given), so a test can tell
    whether a killed fit really stopped.
    """

    def __init__(self, delay=0.0, marker=None, fail=False):
        self.delay = delay
        self.marker = marker
        self.fail = fail

    def fit(self, X, y):
        time.sleep(self.delay)
        if self.marker:
            with open(self.marker, "a") as fh:
                fh.write(f"finished delay={self.delay}\n")
        if self.fail:
            raise ArithmeticError("this fit always fails")
        self.classes_ = np.unique(y)
        self.centroids_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        return self

    def decision_function(self, X):
        d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(-1)
        return d[:, 0] - d[:, 1]

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class Hungry(Sleepy):
    """Sleepy that first reserves ``gib`` GiB (address space, not touched)."""

    def __init__(self, gib=0.0, delay=0.0, marker=None, fail=False):
        super().__init__(delay=delay, marker=marker, fail=fail)
        self.gib = gib

    def fit(self, X, y):
        buffer = np.empty(int(self.gib * 2**30), dtype=np.uint8)
        del buffer
        return super().fit(X, y)


class SleepyPath(Sleepy):
    """Sleepy with a path over ``delay`` fitted one model at a time (``iter_path``, as SVM's over C)."""

    _path_param = "delay"

    def iter_path(self, X, y, delay):
        from sklearn.base import clone

        for d in delay:
            yield clone(self).set_params(delay=d).fit(X, y)


class WhereFitted(Sleepy):
    """Sleepy that records the process it was fitted in (``pid_``, stored with the record's ``fitted``)
    and, with ``crash``, kills that process instead of fitting (as the kernel's OOM killer does)."""

    _recorded_attributes = ("pid_",)

    def __init__(self, crash=False, delay=0.0, marker=None, fail=False):
        super().__init__(delay=delay, marker=marker, fail=fail)
        self.crash = crash

    def fit(self, X, y):
        import os
        import signal

        if self.crash:
            os.kill(os.getpid(), signal.SIGKILL)
        self.pid_ = os.getpid()
        return super().fit(X, y)


def echo_steps(task, data, points):
    """Watchdog steps that send each point the digest and shape of the data they got, and the data back."""
    import hashlib

    for p in points:
        yield "start", [p]
        yield "record", p, {"status": "ok", "sha": hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest(),
                            "shape": list(np.shape(data)), "back": data}


class FailWhile(Sleepy):
    """Sleepy whose fit fails while the file ``flag`` exists (a fault that goes away, for retry tests)."""

    def __init__(self, flag="", delay=0.0, marker=None, fail=False):
        super().__init__(delay=delay, marker=marker, fail=fail)
        self.flag = flag

    def fit(self, X, y):
        import os

        if self.flag and os.path.exists(self.flag):
            raise RuntimeError(f"{self.flag} exists")
        return super().fit(X, y)


class Warns(Sleepy):
    """Sleepy whose fit warns (a UserWarning naming its delay), for the runner's warning summary."""

    def fit(self, X, y):
        import warnings

        warnings.warn(f"this fit warns (delay={self.delay})", UserWarning, stacklevel=2)
        return super().fit(X, y)


class BlasThreads(Sleepy):
    """Sleepy that records the thread counts its fit ran with (``blas_threads_``, ``openmp_threads_``: the
    distinct counts of the loaded libraries of each kind), stored with the record's ``fitted``."""

    _recorded_attributes = ("blas_threads_", "openmp_threads_")

    def fit(self, X, y):
        import scipy.linalg  # noqa: F401  (its BLAS loaded, as a fit's would be)
        from threadpoolctl import threadpool_info

        info = threadpool_info()
        # (a BLAS built without threads, such as scs's OpenBLAS that cvxpy loads, always runs one: left out)
        self.blas_threads_ = sorted({i["num_threads"] for i in info
                                     if i["user_api"] == "blas" and i.get("threading_layer") != "disabled"})
        self.openmp_threads_ = sorted({i["num_threads"] for i in info if i["user_api"] == "openmp"})
        return super().fit(X, y)


class Breakable(Sleepy):
    """Nearest centroid (``Sleepy``) that predicts the positive class for every sample when
    ``$EEMREPRO_TEST_BREAK`` names its ``variant`` (or is ``all``), read at prediction time: the same code and
    parameters (the same record identity) predicting otherwise, as a changed library or a bug would
    (``eemrepro audit``'s tests). Broken, its gmean is 0 and its balanced accuracy 0.5 (one class all wrong).
    ``$EEMREPRO_TEST_SLOW`` seconds: each fit sleeps that long first (a machine slower than the run's)."""

    def __init__(self, variant=0, delay=0.0, marker=None, fail=False):
        super().__init__(delay=delay, marker=marker, fail=fail)
        self.variant = variant

    def fit(self, X, y):
        import os

        time.sleep(float(os.environ.get("EEMREPRO_TEST_SLOW", "0")))
        return super().fit(X, y)

    def _broken(self):
        import os

        which = os.environ.get("EEMREPRO_TEST_BREAK", "")
        return which == "all" or which == str(self.variant)

    def decision_function(self, X):
        d = super().decision_function(X)
        return np.ones_like(d) if self._broken() else d


class WaitsFor(Sleepy):
    """Sleepy whose fit first waits until the file ``flag`` exists (at most ``hold`` seconds): a run held open
    until the test lets it go, whatever the machine's load."""

    def __init__(self, flag="", hold=120.0, delay=0.0, marker=None, fail=False):
        super().__init__(delay=delay, marker=marker, fail=fail)
        self.flag = flag
        self.hold = hold

    def fit(self, X, y):
        import os

        deadline = time.monotonic() + self.hold
        while self.flag and not os.path.exists(self.flag) and time.monotonic() < deadline:
            time.sleep(0.02)
        return super().fit(X, y)


def store_record(fold, dataset, **extra):
    """A minimal ok grid-search record of model M at C = 1 on ``dataset``'s ``fold`` (the store tests' unit)."""
    r = {"kind": "grid-search", "dataset": dataset, "model": "M", "params": {"C": 1.0}, "repeat": 0,
         "fold": fold, "inner": None, "status": "ok", "metrics": {"gmean": 0.5 + fold / 100}, "criteria": {},
         "fit_seconds": 0.1, "identity": {"kind": "grid-search"}, "identity_sha": "abc",
         "versions": {"numpy": "2"}, "host": "h", "finished_at": 1.7e9 + fold}
    r.update(extra)
    return r


KILLED_CONFIG = """name: killed
datasets: [heart]
models:
  Centroid: {estimator: 'tests.helpers:Sleepy', grid: {fail: [false]}}
protocol: {folds: 3, repeats: 1, seed: 0}
"""


def killed_run(folder):
    """``folder/o``: a results folder whose run finished every unit and died before sealing: its records are all in
    its write-ahead segment (a kill after the last unit; ``close`` never came)."""
    import pytest

    from eemrepro.experiments import load_config, run_experiment
    from eemrepro.store import ResultStore

    (folder / "c.yaml").write_text(KILLED_CONFIG)
    close = ResultStore.close
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ResultStore, "close", lambda self, seal=True: close(self, seal=False))
        run_experiment(load_config(folder / "c.yaml"), out=folder / "o", jobs=1, progress=False)
    return folder / "o"


def latex_rows(tex):
    """The body rows of a booktabs tabular: [[cell, ...]] between \\midrule/\\toprule and \\bottomrule, the
    rule lines left out."""
    body = tex.split("\\begin{tabular}", 1)[1].split("\\end{tabular}", 1)[0]
    rows = []
    for line in body.splitlines()[1:]:
        line = line.strip()
        if not line or line.startswith(("\\toprule", "\\midrule", "\\bottomrule", "\\multicolumn")):
            continue
        assert line.endswith("\\\\"), line
        rows.append([c.strip() for c in line[:-2].split(" & ")])
    return rows


def hand_edit_sealed(folder, model, fold, point, column, value, hide=None):
    """Edit one stored value of a results folder's sealed segment by hand, as a user with pandas would: the
    row of ``model``'s ``point`` (a grid point's JSON) at ``fold`` gets ``value`` in ``column`` (a stored column:
    ``metrics.gmean``, ``n_train``), and ``hide`` (``"keys"``: the column's name taken out of the row's
    ``metrics.keys``; ``"fields"``: the field taken out of the row's ``fields``) leaves it out of the record's
    key lists; the segment is written back through the store's own sealing (``write_parquet``: its sha256
    recorded in SHA256SUMS), so that it passes every checksum. Returns the value it held."""
    import json
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    from eemrepro.store._store import write_parquet

    (path,) = sorted(Path(folder, "records").glob("*.parquet"))
    table = pq.read_table(path)
    rows = [i for i in range(table.num_rows) if table.column("model")[i].as_py() == model
            and table.column("fold")[i].as_py() == fold and table.column("params")[i].as_py() == point]
    assert len(rows) == 1, rows
    (row,) = rows
    old = table.column(column)[row].as_py()
    group, _, name = column.rpartition(".")

    def replaced(col, fn):
        values = table.column(col).to_pylist()
        values[row] = fn(values[row])
        return table.set_column(table.schema.get_field_index(col), col, pa.array(values, table.schema.field(col).type))

    table = replaced(column, lambda _: value)
    if hide == "keys":
        table = replaced(f"{group}.keys", lambda text: json.dumps([k for k in json.loads(text) if k != name]))
    elif hide == "fields":
        table = replaced("fields", lambda text: json.dumps([k for k in json.loads(text) if k != (group or name)]))
    write_parquet(table, path)
    return old


def read_only_folder(path):
    """Make the folder ``path`` unwritable, as a read-only place a user names; a context manager giving it back
    writable after. Root ignores permission bits, so there the folder is made immutable (``chattr +i``); where
    neither holds the calling test is skipped."""
    import contextlib
    import os
    import subprocess

    import pytest

    @contextlib.contextmanager
    def unwritable():
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o555)
        immutable = os.access(path, os.W_OK) and subprocess.run(["chattr", "+i", str(path)],
                                                                capture_output=True).returncode == 0
        try:
            probe = path / ".probe"
            try:
                probe.touch()
            except OSError:
                pass
            else:
                probe.unlink()
                pytest.skip(f"{path} stays writable here (root without chattr)")
            yield path
        finally:
            if immutable:
                subprocess.run(["chattr", "-i", str(path)], check=True)
            path.chmod(0o755)

    return unwritable()


class Spawns(Sleepy):
    """A fit that starts a process of its own, writes its pid to the file ``pids`` and then sleeps ``delay``
    seconds: what a fit_timeout must stop whole. ``how``: ``subprocess`` (a Python child), ``detached`` (a
    shell's background ``sleep``, orphaned at once: its parent exits) or ``process`` (a multiprocessing child,
    as a pool's workers are)."""

    def __init__(self, delay=0.0, pids=None, how="subprocess"):
        self.delay = delay
        self.pids = pids
        self.how = how

    def fit(self, X, y):
        import multiprocessing
        import subprocess
        import sys

        if self.how == "subprocess":
            pid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]).pid
        elif self.how == "detached":
            pid = int(subprocess.run(["sh", "-c", "sleep 120 >/dev/null 2>&1 & echo $!"], capture_output=True,
                                     text=True, check=True).stdout)
        else:
            child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(120,), daemon=False)
            child.start()
            pid = child.pid
        with open(self.pids, "a") as fh:
            fh.write(f"{pid}\n")
        time.sleep(self.delay)
        self.classes_ = np.unique(y)
        self.centroids_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        return self


_HOLD = """
import sys, time
from eemrepro.store import ResultStore
with ResultStore(sys.argv[1]).writing("holder"):
    print("held", flush=True)
    time.sleep(60)
"""


@contextmanager
def lock_held(folder):
    """Another live process (yielded, a ``subprocess.Popen``) holding ``folder``'s write lock, as a run in
    progress does; killed on exit, which leaves its lock file behind with its pid, as a killed run does."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(folder)], cwd=Path(__file__).resolve().parents[1],
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        yield holder
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        holder.stdout.close()


def alive(pid):
    """Whether the process ``pid`` runs (a zombie, dead but not yet reaped by whoever adopted it, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# -- data: a toy problem, the committed fixtures, the offline mirror ------------------------------------------
def make_imbalanced(n=300, d=5, ratio=0.2, seed=0, shift=0.8):
    """Two Gaussian blobs in [0, 1]-ish, the positive (minority) class shifted."""
    rng = np.random.RandomState(seed)
    n_pos = int(n * ratio)
    X = rng.normal(0.5, 0.15, size=(n, d))
    y = np.full(n, -1)
    y[:n_pos] = 1
    X[:n_pos] += shift * 0.15
    return X, y


#: The committed fixtures (tiny data files in each format the parsers read).
DATA = Path(__file__).parent / "data"


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def find_mirror():
    """The offline mirror: $EEMREPRO_MIRROR, else ../shared/datasets beside the checkout."""
    env = os.environ.get("EEMREPRO_MIRROR")
    if env:
        return Path(env)
    candidate = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    return candidate if candidate.is_dir() else None


def require_mirror():
    """The mirror, or skip -- a failure instead where EEMREPRO_REQUIRE_MIRROR is set (CI)."""
    import pytest

    mirror = find_mirror()
    if mirror is None:
        message = "no mirror: ../shared/datasets beside the checkout or EEMREPRO_MIRROR"
        if os.environ.get("EEMREPRO_REQUIRE_MIRROR"):
            pytest.fail(message + " (required: EEMREPRO_REQUIRE_MIRROR is set)")
        pytest.skip(message)
    return mirror


# -- a user's own classifier modules, folders and runs -------------------------------------------------------
#: A user's classifier module (a nearest class mean), written into a folder of the user's own by ``user_folder``.
CENTROID = textwrap.dedent('''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin


    class Centroid(ClassifierMixin, BaseEstimator):
        def __init__(self, shrink=0.0):
            self.shrink = shrink

        def fit(self, X, y):
            self.classes_ = np.unique(y)
            self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_]) * (1 - self.shrink)
            return self

        def decision_function(self, X):
            d = ((X[:, None, :] - self.means_[None]) ** 2).sum(-1)
            return d[:, 0] - d[:, 1]

        def predict(self, X):
            return self.classes_[(self.decision_function(X) > 0).astype(int)]
''')


#: A user's classifier (a nearest class mean) whose fit first sleeps ``delay`` seconds on data of
#: ``on_features`` columns only: a grid point slow on one data set and quick on the others.
NAPPER = textwrap.dedent('''
    import time

    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin


    class Napper(ClassifierMixin, BaseEstimator):
        def __init__(self, delay=0.0, on_features=60, shrink=0.0):
            self.delay = delay
            self.on_features = on_features
            self.shrink = shrink

        def fit(self, X, y):
            if X.shape[1] == self.on_features:
                time.sleep(self.delay)
            self.classes_ = np.unique(y)
            self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_]) * (1 - self.shrink)
            return self

        def decision_function(self, X):
            d = ((X[:, None, :] - self.means_[None]) ** 2).sum(-1)
            return d[:, 0] - d[:, 1]

        def predict(self, X):
            return self.classes_[(self.decision_function(X) > 0).astype(int)]
''')


#: A user's classifier (nearest class mean) whose fit raises for every shrink but 0: 2 of the 3 grid values fail.
FLAKY = textwrap.dedent('''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin


    class Flaky(ClassifierMixin, BaseEstimator):
        def __init__(self, shrink=0.0):
            self.shrink = shrink

        def fit(self, X, y):
            if self.shrink > 0:
                raise ArithmeticError("this shrink does not converge")
            self.classes_ = np.unique(y)
            self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
            return self

        def decision_function(self, X):
            d = ((X[:, None, :] - self.means_[None]) ** 2).sum(-1)
            return d[:, 0] - d[:, 1]

        def predict(self, X):
            return self.classes_[(self.decision_function(X) > 0).astype(int)]
''')


#: A nearest-mean classifier; ``SIGN`` flips its decision (the edit a researcher makes), ``scale`` is a
#: parameter whose default comes from a helper module beside it (not the module's own text).
NEAREST_MEAN = textwrap.dedent('''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin

    from {helper} import DEFAULT_SCALE

    SIGN = {sign}


    class NearestMean(ClassifierMixin, BaseEstimator):
        def __init__(self, shrink=0.0, scale=DEFAULT_SCALE):
            self.shrink = shrink
            self.scale = scale

        def fit(self, X, y):
            self.classes_ = np.unique(y)
            self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_]) * (1 - self.shrink)
            return self

        def decision_function(self, X):
            d = ((X[:, None, :] * self.scale - self.means_[None] * self.scale) ** 2).sum(-1)
            return SIGN * (d[:, 0] - d[:, 1])

        def predict(self, X):
            return self.classes_[(self.decision_function(X) > 0).astype(int)]
''')


#: A nearest-mean classifier whose distance comes from a helper module (imported by name from ``{source}``;
#: test_identity's ``HELPER``): editing the helper alone changes what the classifier does.
SPLIT_NEAREST_MEAN = textwrap.dedent('''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin

    from {source} import distance


    class NearestMean(ClassifierMixin, BaseEstimator):
        def __init__(self, shrink=0.0):
            self.shrink = shrink

        def fit(self, X, y):
            self.classes_ = np.unique(y)
            self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_]) * (1 - self.shrink)
            return self

        def decision_function(self, X):
            return distance(X, self.means_[0]) - distance(X, self.means_[1])

        def predict(self, X):
            return self.classes_[(self.decision_function(X) > 0).astype(int)]
''')


def user_folder(tmp_path, text=CENTROID, prefix="user_clf", name="mine"):
    """A folder of the user's own holding a classifier module (``text``) and nothing on the import path:
    (folder, module name). The module's name is made unique (``prefix`` and a random suffix) so that each test
    imports its own copy."""
    folder = tmp_path / name
    folder.mkdir()
    module = f"{prefix}_{uuid.uuid4().hex[:8]}"
    (folder / f"{module}.py").write_text(text)
    return folder, module


def run_config(cfg, out, *extra, code=0):
    """``eemrepro run CFG --out OUT --jobs 1 --quiet EXTRA...`` through typer's CliRunner, its exit status
    asserted to be ``code``; the result."""
    from typer.testing import CliRunner

    from eemrepro.cli import app

    result = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet", *extra])
    assert result.exit_code == code, result.output
    return result


def blobs_frame(n=60, seed=0, shift=1.5, status_at=1):
    """Two Gaussian blobs in three features (a minority of a third, ``sick``, moved by ``shift``), as a user's
    CSV would hold them: a frame with a text label column ``status`` at column ``status_at`` (the target need
    not be last)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) < n // 3, "sick", "well")
    X = rng.normal(size=(n, 3)) + (y == "sick")[:, None] * shift
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame.insert(status_at, "status", y)
    return frame


# -- the reports: hand-made records, the site's tables ---------------------------------------------------------
def report_record(dataset, model, point, fold, gmean=None, status="ok", fit=1.0, standalone=None, path_size=1, **kw):
    """A record as the runner stores it, of ``model`` at ``point`` on ``dataset``'s ``fold`` (the hand-made
    record sets of the report tests)."""
    kind = "dcs-correlation" if model == "dcs-correlation" else "grid-search"
    return dict({"kind": kind, "dataset": dataset, "model": model, "params": point, "repeat": 0, "fold": fold,
                 "inner": None, "status": status, "metrics": {"gmean": gmean, "bac": gmean, "auc": None},
                 "criteria": {}, "fit_seconds": fit,
                 "standalone_fit_seconds": standalone, "path_size": path_size, "versions": {"eemrepro": "t"},
                 "host": "h", "finished_at": 1.8e9, "identity": {"kind": kind}, "identity_sha": "i",
                 "data_sha256": "d", "seed": 1, "estimator": "EEM", "fixed_params": {}}, **kw)


def hand_made():
    """A hand-made record set of the EEM paper's data sets, each cell's numbers written out beside it."""
    rec = report_record
    r = []
    # australian EEMrbf: h=50 folds (0.80, 0.90) mean 85.0 %; h=100 folds (0.70, 0.80) mean 75 %.
    r += [rec("australian", "EEMrbf", {"n_hidden": 50}, 0, 0.80, fit=3.0, standalone=1.0, path_size=2),
          rec("australian", "EEMrbf", {"n_hidden": 50}, 1, 0.90, fit=5.0, path_size=2),
          rec("australian", "EEMrbf", {"n_hidden": 100}, 0, 0.70, fit=3.0, standalone=2.0, path_size=2),
          rec("australian", "EEMrbf", {"n_hidden": 100}, 1, 0.80, fit=5.0, path_size=2)]
    # australian WELMrbf: one point, folds (0.86, 0.86).
    r += [rec("australian", "WELMrbf", {"n_hidden": 50}, f, 0.86, fit=2.0 + f) for f in (0, 1)]
    # abalone7 SVMrbf: every fit timed out or skipped -> "> 600".
    r += [rec("abalone7", "SVMrbf", {"C": 1.0, "gamma": 1.0}, 0, status="timed-out", fit=600.0),
          rec("abalone7", "SVMrbf", {"C": 1.0, "gamma": 1.0}, 1, status="skipped-after-timeout", fit=None)]
    r += [rec("abalone7", "EEMrbf", {"n_hidden": 50}, f, 0.80, fit=1.0, standalone=0.5 if f == 0 else None)
          for f in (0, 1)]
    return r


def hand_made_with_a_failed_cell():
    """hand_made, plus sonar EEMrbf run with every fit failed: run here, no value (a "missing" cell)."""
    return hand_made() + [report_record("sonar", "EEMrbf", {"n_hidden": 50}, f, status="failed", fit=None)
                          for f in (0, 1)]


def html_table_rows(html, table_id, uuid=None):
    """The body rows of a section's table, each as its cells' texts (a light HTML reading, enough for Styler's).

    ``uuid``: which of its tables (Styler's ``T_<uuid>``); default the long list of every cell.
    """
    section = html.split(f'<section class="table" id="{table_id}">', 1)[1].split("</section>", 1)[0]
    table = section.split(f'id="T_{uuid or table_id}"', 1)[1]
    body = table.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


#: A model of EEM Table 4 as a user copies it from configs/uci.yaml, its grid cut to what a test can run.
PAPER_MODEL_LINE = "  EEMrbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [10, 30]}}\n"


def benchmark_store(root, sizes=(90, 60, 120), names=None, name="mine", repeats=1, status_at=2, shift=(0.5, 0.4),
                    paper_line=PAPER_MODEL_LINE):
    """The user's journey of issue 67, small: imbalanced CSVs of the user's own (``names``, default set0, set1,
    ...; ``sizes`` rows; the k-th minority moved by ``shift[0] + k * shift[1]``, its label column at
    ``status_at``), their classifier (``Centroid``), scikit-learn's logistic regression and a model of a paper
    (``paper_line``, default EEMrbf), run into the store ``name`` that no paper's table holds. Returns (the
    user's folder, the store, the run's result)."""
    from typer.testing import CliRunner

    from eemrepro.cli import app

    folder, module = user_folder(root)
    names = names or [f"set{k}" for k in range(len(sizes))]
    for k, (data, n) in enumerate(zip(names, sizes, strict=True)):
        blobs_frame(n=n, seed=k, status_at=status_at, shift=shift[0] + shift[1] * k).to_csv(folder / f"{data}.csv",
                                                                                            index=False)
    cfg = folder / f"{name}.yaml"
    cfg.write_text(f"name: {name}\n"
                   f"datasets: [{', '.join(names)}]\n"
                   "local_datasets:\n" + "".join(f"  {n}: {{file: {n}.csv, target: status}}\n" for n in names) +
                   "models:\n"
                   f'  Mine: {{estimator: "{module}:Centroid", grid: {{shrink: [0.0, 0.3]}}}}\n'
                   '  LR: {estimator: "sklearn.linear_model:LogisticRegression", grid: {C: [0.01, 1.0]}}\n'
                   + paper_line.rstrip("\n") + "\n" +
                   f"protocol: {{folds: 3, repeats: {repeats}, seed: 5}}\n")
    out = folder / "results" / name
    result = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    return folder, out, result


def bayes_against_baycomp(store, tables, metric="gmean", scale=100.0, greater_is_better=True):
    """Check the Bayesian probabilities that ``eemrepro tables`` wrote for ``store`` (a results folder run with
    k-fold cross-validation) into the folder ``tables``, against baycomp (Benavoli et al.'s own package):
    ``benchmark_<metric>_comparison.csv``'s signed-rank probabilities against ``baycomp.SignedRankTest`` on the
    benchmark CSV's per-data-set means (within the Monte Carlo error of 50,000 draws a side), and each row of the
    Markdown's per-data-set table against ``baycomp.CorrelatedTTest`` on the records' test folds at the cells'
    selected points (``read_results``; exactly, at the printed three decimals). Returns (signed-rank pairs,
    correlated t-tests) checked. Needs baycomp (the ``test`` extra)."""
    import baycomp
    import pandas as pd

    from eemrepro import read_results

    tables = Path(tables)
    sign = 1.0 if greater_is_better else -1.0
    cells = pd.read_csv(tables / f"benchmark_{metric}.csv", comment="#")
    pairs = pd.read_csv(tables / f"benchmark_{metric}_comparison.csv")
    wide = cells.pivot_table(index="dataset", columns="method", values=metric)
    tolerance = 5 * np.sqrt(2 * 0.25 / 50_000)
    probabilities = ["P(model better)", "P(rope)", "P(baseline better)"]
    for r in pairs.to_dict("records"):
        both = wide[[r["model"], r["baseline"]]].dropna()
        theirs = baycomp.SignedRankTest.probs(sign * both[r["model"]].to_numpy(), sign * both[r["baseline"]].to_numpy(),
                                              rope=r["rope"], random_state=0)
        assert np.allclose([r[p] for p in probabilities], theirs, atol=tolerance), (r, theirs)
    records = read_results([store])
    records = records[records["inner"].isna() & (records["status"] == "ok")]
    point = cells.set_index(["dataset", "method"])["point"]
    text = (tables / f"benchmark_{metric}_comparison.md").read_text()
    section = text.split("Bayesian correlated t-test on each data set", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| model")]
    rope = float(pairs["rope"].iloc[0])
    for model, baseline, dataset, n, _, *printed in rows:
        folds = [records[(records["dataset"] == dataset) & (records["model"] == m)
                         & (records["point"] == point[(dataset, m)])].set_index(["repeat", "fold"])[metric]
                 for m in (model, baseline)]
        paired = pd.concat(folds, axis=1, join="inner").sort_index()
        assert len(paired) == int(n)
        runs = paired.index.get_level_values("repeat").nunique()
        theirs = baycomp.CorrelatedTTest.probs(sign * scale * paired.iloc[:, 0].to_numpy(),
                                               sign * scale * paired.iloc[:, 1].to_numpy(), rope=rope, runs=runs)
        assert [float(p) for p in printed] == [round(float(p), 3) + 0.0 for p in theirs], (model, baseline, dataset)
    return len(pairs), len(rows)


def figure_bytes_under_hash_seeds(script, folder, name, seeds=("1", "2", "3")):
    """{seed: [svg bytes, pdf bytes]}: ``script`` (Python source writing ``<argv[1]>.svg`` and ``.pdf``) run in a
    fresh process under each ``PYTHONHASHSEED`` of ``seeds``, from the checkout, its output under ``folder/<seed>``
    named ``name`` (what a figure's bytes-independent-of-the-hash-seed tests compare)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    built = {}
    for seed in seeds:
        (folder / seed).mkdir()
        done = subprocess.run([sys.executable, "-c", script, str(folder / seed / name)], cwd=root,
                              capture_output=True, text=True,
                              env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(root),
                                   "MPLBACKEND": "Agg"})
        assert done.returncode == 0, done.stderr
        built[seed] = [(folder / seed / f"{name}.{ext}").read_bytes() for ext in ("svg", "pdf")]
    return built

