"""The runner: determinism across --jobs and backends, kill-and-resume, timeouts, failures."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from eemrepro.experiments import ResultStore, enumerate_units, load_config, run_experiment

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path, text, name="c.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return load_config(path)


SMALL = """name: small
datasets: [heart, sonar]
models:
  EEMrbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [10, 40]}}
  WELMsig: {estimator: WELM, activation: sig, grid: {n_hidden: [10, 40]}}
  EEKM: {estimator: EEKM, grid: {n_hidden: [20], gamma: [0.1, 1.0]}}
  LSSVM: {estimator: LSSVM, grid: {C: [0.1, 10.0], gamma: [0.5]}}
  SVM: {estimator: SVM, grid: {C: [1.0, 10.0], gamma: [0.5]}}
protocol: {folds: 3, repeats: 2, seed: 7}
"""


def _facts(out):
    """key -> the deterministic part of each record (not timings or host)."""
    return {
        (r["dataset"], r["model"], json.dumps(r["params"], sort_keys=True), r["repeat"], r["fold"], r["inner"]):
            (r["status"], r["metrics"].get("gmean"), r["metrics"].get("bac"), r["metrics"].get("auc"), r["seed"],
             r["n_train"])
        for r in ResultStore(out).read()
    }


def _raw_keys(out):
    """The key of every record stored, in every segment (a unit recorded twice shows twice)."""
    store = ResultStore(out)
    return [(r["dataset"], r["model"], json.dumps(r["params"], sort_keys=True), r["repeat"], r["fold"])
            for seg in store.segments() for r in store.segment_records(seg)]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted sequential run of SMALL (the reference every variant must equal)."""
    tmp = tmp_path_factory.mktemp("ref")
    cfg = _config(tmp, SMALL)
    summary = run_experiment(cfg, out=tmp / "out", jobs=1, progress=False)
    return cfg, tmp / "out", summary


def test_records_have_provenance_and_metrics(reference):
    cfg, out, summary = reference
    records = ResultStore(out).read()
    n_points = 2 * 2 * (2 + 2 + 2 + 2 + 2) * 3  # data sets x repeats x points x folds
    assert len(records) == n_points and summary.status_counts == {"ok": n_points}
    r = records[0]
    for field in ("fit_seconds", "predict_seconds", "seed", "data_sha256",
                  "versions", "host", "identity", "identity_sha", "n_train", "n_test"):
        assert r[field] is not None, field
    assert set(r["metrics"]) == {"gmean", "bac", "auc", "error"} and None not in r["metrics"].values()
    assert 0 <= r["metrics"]["gmean"] <= 1 and r["versions"]["scikit-learn"]
    # Every runtime dependency the package declares (pyproject.toml) has its version recorded.
    from importlib.metadata import requires, version
    declared = {re.split(r"[\s<>=!~;\[(]", q, maxsplit=1)[0] for q in requires("eemrepro") if "extra ==" not in q}
    assert {"clarabel", "libsvm-official", "numpy"} <= declared
    assert all(r["versions"][name] == version(name) for name in declared)
    # What makes the record's values, besides its key (SMALL's protocol and the model's fixed parameters).
    assert r["identity"]["splitter"] == "stratified-kfold" and r["identity"]["folds"] == 3
    assert r["identity"]["seed"] == 7 and r["identity"]["scaling"] == "global"
    assert (out / "config.yaml").is_file() and list((out / "runs").glob("*.json"))


def test_identical_records_whatever_jobs(reference, tmp_path):
    cfg, out, _ = reference
    run_experiment(cfg, out=tmp_path / "par", jobs=2, progress=False)
    assert _facts(tmp_path / "par") == _facts(out)


def test_dask_backend_on_a_local_cluster_gives_the_same_records(reference, tmp_path):
    pytest.importorskip("dask.distributed")
    cfg, out, _ = reference
    run_experiment(cfg, out=tmp_path / "dask", jobs=2, backend="dask", progress=False)
    assert _facts(tmp_path / "dask") == _facts(out)


def test_resume_skips_finished_units_and_fresh_keeps_old_records(reference, tmp_path):
    cfg, out, _ = reference
    again = run_experiment(cfg, out=out, jobs=1, progress=False)
    assert again.pending_units == 0 and again.done_units == 0
    fresh = run_experiment(cfg, out=tmp_path / "f", jobs=1, progress=False, fresh=True)
    assert fresh.superseded is None and fresh.done_units == fresh.total_units
    redo = run_experiment(cfg, out=tmp_path / "f", jobs=1, progress=False, fresh=True)
    assert redo.superseded is not None and any(redo.superseded.glob("*.parquet"))
    assert _facts(tmp_path / "f") == _facts(out)


@pytest.mark.slow
def test_kill_midway_and_resume_equals_an_uninterrupted_run(tmp_path):
    text = SMALL.replace("models:", "models:\n  Slow: {estimator: 'tests.helpers:Sleepy', delay: 0.15, grid: {fail: [false]}}")
    cfg = _config(tmp_path, text)
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "eemrepro", "run", str(tmp_path / "c.yaml"), "--out", str(out), "--jobs", "2", "--quiet"],
        cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = sum(len(s.read_text().splitlines()) for s in ResultStore(out).segments() if s.suffix == ".jsonl")
        if lines >= 10:
            break
        if proc.poll() is not None:
            pytest.fail(f"run ended before it could be killed: {proc.stderr.read().decode()}")
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = len(ResultStore(out).read())
    total = len(enumerate_units(cfg))
    assert 0 < partial < 150, "the kill should land mid-run"
    resumed = run_experiment(cfg, out=out, jobs=2, progress=False)
    assert 0 < resumed.pending_units < total
    keys = _raw_keys(out)
    assert len(keys) == len(set(keys)), "a unit was recorded twice"
    uninterrupted = tmp_path / "whole"
    run_experiment(cfg, out=uninterrupted, jobs=2, progress=False)
    assert _facts(out) == _facts(uninterrupted)


def test_timed_out_fit_is_killed_recorded_and_the_run_goes_on(tmp_path):
    marker = tmp_path / "marker.txt"
    text = f"""name: slow
datasets: [heart]
models:
  Sleepy: {{estimator: 'tests.helpers:Sleepy', marker: '{marker}', grid: {{delay: [0.0, 3.0]}}}}
  Broken: {{estimator: 'tests.helpers:Sleepy', fail: true, grid: {{delay: [0.0]}}}}
protocol: {{folds: 3, repeats: 1, fit_timeout: 0.5}}
"""
    cfg = _config(tmp_path, text)
    start = time.monotonic()
    summary = run_experiment(cfg, out=tmp_path / "out", jobs=1, progress=False)
    records = {(r["model"], r["params"]["delay"], r["fold"]): r for r in ResultStore(tmp_path / "out").read()}
    statuses = {k: r["status"] for k, r in records.items()}
    assert statuses[("Sleepy", 0.0, 0)] == statuses[("Sleepy", 0.0, 1)] == statuses[("Sleepy", 0.0, 2)] == "ok"
    assert statuses[("Sleepy", 3.0, 0)] == "timed-out"
    assert records[("Sleepy", 3.0, 0)]["fit_seconds"] == 0.5 and "killed" in records[("Sleepy", 3.0, 0)]["error"]
    # The other folds of the timed-out point are not run (after_timeout: skip).
    assert statuses[("Sleepy", 3.0, 1)] == statuses[("Sleepy", 3.0, 2)] == "skipped-after-timeout"
    # A failing fit is recorded with its error; the run goes on.
    assert all(statuses[("Broken", 0.0, f)] == "failed" for f in range(3))
    assert "ArithmeticError: this fit always fails" in records[("Broken", 0.0, 0)]["error"]
    assert summary.status_counts == {"ok": 3, "timed-out": 1, "skipped-after-timeout": 2, "failed": 3}
    # The killed fit really stopped: it never reached the line after its sleep.
    time.sleep(max(0.0, 3.5 - (time.monotonic() - start)))
    assert "delay=3.0" not in (marker.read_text() if marker.exists() else "")


@pytest.mark.parametrize("how", ["subprocess", "detached", "process"])
@pytest.mark.parametrize("delay, status", [(30.0, "timed-out"), (0.0, "ok")])
def test_a_fit_is_stopped_with_every_process_it_started(tmp_path, how, delay, status):
    """Issue 65: a fit stopped at fit_timeout left the processes it started running (a subprocess, a pool's
    workers). The fit runs in a process group of its own, killed whole: at the timeout, and (what a fit that
    ended left behind) when the run ends."""
    from tests.helpers import alive

    pids = tmp_path / "pids.txt"
    cfg = _config(tmp_path, f"""name: spawns
datasets: [heart]
models:
  S: {{estimator: 'tests.helpers:Spawns', pids: '{pids}', how: {how}, grid: {{delay: [{delay}]}}}}
protocol: {{folds: 2, repeats: 1, seed: 0, fit_timeout: 2.0}}
""")
    started = []
    try:
        summary = run_experiment(cfg, out=tmp_path / "out", jobs=1, progress=False)
        started = [int(p) for p in pids.read_text().split()]
        assert summary.status_counts.get(status) == (1 if status == "timed-out" else 2)
        assert len(started) == (1 if status == "timed-out" else 2)  # the skipped fold started nothing
        deadline = time.monotonic() + 10  # SIGKILL is at once; the adopter reaps in its own time
        while any(alive(p) for p in started) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [p for p in started if alive(p)] == []
    finally:
        for p in started:
            if alive(p):
                os.kill(p, signal.SIGKILL)


def test_a_timeout_inside_an_iterated_path_times_out_that_point_only(tmp_path):
    # SVM's grid over C is one unit fitted C by C (iter_path): each point has its own fit timeout.
    marker = tmp_path / "marker.txt"
    text = f"""name: slowpath
datasets: [heart]
models:
  Path: {{estimator: 'tests.helpers:SleepyPath', marker: '{marker}', grid: {{delay: [0.0, 0.01, 3.0, 0.02]}}}}
protocol: {{folds: 2, repeats: 1, fit_timeout: 0.5, after_timeout: run}}
"""
    cfg = _config(tmp_path, text)
    assert len(enumerate_units(cfg)) == 2  # one path unit per fold
    summary = run_experiment(cfg, out=tmp_path / "out", jobs=1, progress=False)
    records = {(r["params"]["delay"], r["fold"]): r for r in ResultStore(tmp_path / "out").read()}
    for fold in (0, 1):
        assert [records[(d, fold)]["status"] for d in (0.0, 0.01, 3.0, 0.02)] == ["ok", "ok", "timed-out", "ok"]
        # Each point is timed alone (path_size 1), the slow one at the timeout.
        assert records[(0.01, fold)]["path_size"] == 1 and records[(0.01, fold)]["fit_seconds"] < 0.5
        assert records[(3.0, fold)]["fit_seconds"] == 0.5
    assert summary.status_counts == {"ok": 6, "timed-out": 2}
    assert "delay=3.0" not in marker.read_text()


def test_after_timeout_run_runs_the_other_folds(tmp_path):
    text = """name: slow2
datasets: [heart]
models:
  Sleepy: {estimator: 'tests.helpers:Sleepy', grid: {delay: [2.0]}}
protocol: {folds: 2, repeats: 1, fit_timeout: 0.3, after_timeout: run}
"""
    summary = run_experiment(_config(tmp_path, text), out=tmp_path / "o", jobs=1, progress=False)
    assert summary.status_counts == {"timed-out": 2}


def test_after_timeout_skip_model_abandons_the_model_on_that_data_set(tmp_path):
    # The paper's "> 600 (not finished)": once one fit of a model runs past the
    # budget, the rest of its grid on that data set is not attempted (the other
    # point of the same unit included); other models and data sets still run.
    text = """name: slow3
datasets: [heart, balance]
models:
  Sleepy: {estimator: 'tests.helpers:Sleepy', grid: {delay: [2.0, 0.0]}}
  Quick: {estimator: 'tests.helpers:Sleepy', grid: {delay: [0.0]}}
protocol: {folds: 3, repeats: 1, fit_timeout: 0.3, after_timeout: skip-model}
"""
    out = tmp_path / "o"
    summary = run_experiment(_config(tmp_path, text), out=out, jobs=1, progress=False)
    statuses = {(r["dataset"], r["model"], r["params"]["delay"], r["fold"]): r["status"]
                for r in ResultStore(out).read()}
    for dataset in ("heart", "balance"):
        assert statuses[(dataset, "Sleepy", 2.0, 0)] == "timed-out"
        assert statuses[(dataset, "Sleepy", 0.0, 0)] == "skipped-after-timeout"
        assert all(statuses[(dataset, "Sleepy", d, f)] == "skipped-after-timeout" for d in (2.0, 0.0) for f in (1, 2))
        assert all(statuses[(dataset, "Quick", 0.0, f)] == "ok" for f in range(3))
    assert summary.status_counts == {"timed-out": 2, "skipped-after-timeout": 10, "ok": 6}
    # Resuming does not retry the abandoned model (a stored timeout counts).
    again = run_experiment(_config(tmp_path, text), out=out, jobs=1, progress=False)
    assert again.pending_units == 0


def test_a_resumed_run_keeps_what_its_stored_timeouts_and_out_of_memory_fits_abandoned(tmp_path):
    # Under skip-model a fit past fit_timeout (Slow's 2 s point) or out of memory (Hungry's 6 GiB point, over
    # fit_memory_gb 3) abandons its model on the data set. A run stopped after its first repeat (a chunk of a
    # long run, or a kill between repeats) and resumed must not fit the abandoned models again: the resumed part
    # records them all as skipped, and the whole equals an uninterrupted run.
    from collections import Counter

    text = """name: abandoned
datasets: [heart]
models:
  Slow: {estimator: 'tests.helpers:Sleepy', grid: {delay: [2.0, 0.0]}}
  Hungry: {estimator: 'tests.helpers:Hungry', grid: {gib: [6.0, 0.01]}}
protocol: {folds: 2, repeats: 2, fit_timeout: 0.3, fit_memory_gb: 3, after_timeout: skip-model}
"""
    cfg = _config(tmp_path, text)
    first = run_experiment(cfg, out=tmp_path / "resumed", jobs=1, progress=False, repeats=1)
    # The first unit of each model: Slow's 2 s point timed out and its 0 s point skipped after it; Hungry's
    # 6 GiB point failed and its small one (fitted in the same child before the rule was known) ran; the other
    # fold's unit of each model skipped whole.
    assert first.status_counts == {"timed-out": 1, "failed": 1, "ok": 1, "skipped-after-timeout": 5}
    resumed = run_experiment(cfg, out=tmp_path / "resumed", jobs=1, progress=False)
    assert resumed.pending_units == 4  # repeat 1's two folds of each model
    assert resumed.status_counts == {"skipped-after-timeout": 8}, "an abandoned model was fitted again"
    run_experiment(cfg, out=tmp_path / "whole", jobs=1, progress=False)

    def outcome(out):
        return Counter((r["model"], r["status"]) for r in ResultStore(out).read())

    assert outcome(tmp_path / "resumed") == outcome(tmp_path / "whole") == Counter({
        ("Slow", "timed-out"): 1, ("Slow", "skipped-after-timeout"): 7, ("Hungry", "failed"): 1,
        ("Hungry", "ok"): 1, ("Hungry", "skipped-after-timeout"): 6})


def test_fit_memory_limit_fails_the_fit_with_memory_error(tmp_path):
    # protocol.fit_memory_gb caps the fitting child's address space: a fit
    # that needs more fails with MemoryError (recorded); smaller ones run.
    # (6 GiB of untouched address space is granted without the limit.)
    text = """name: hungry
datasets: [heart]
models:
  Hungry: {estimator: 'tests.helpers:Hungry', grid: {gib: [0.01, 6.0]}}
protocol: {folds: 2, repeats: 1, fit_memory_gb: 3}
"""
    out = tmp_path / "o"
    run_experiment(_config(tmp_path, text), out=out, jobs=1, progress=False)
    records = {(r["params"]["gib"], r["fold"]): r for r in ResultStore(out).read()}
    assert all(records[(0.01, f)]["status"] == "ok" for f in range(2))
    assert all(records[(6.0, f)]["status"] == "failed" for f in range(2))
    assert "MemoryError" in records[(6.0, 0)]["error"]


def test_skip_model_abandons_a_model_out_of_memory(tmp_path):
    # Under skip-model a fit that fails with MemoryError ends the model on that
    # data set like a timeout; the cell reads "failed", not "> 600".
    from eemrepro.experiments._selection import select_best_of_grid

    text = """name: hungry2
datasets: [heart]
models:
  Hungry: {estimator: 'tests.helpers:Hungry', grid: {gib: [6.0, 0.01]}}
protocol: {folds: 3, repeats: 1, fit_memory_gb: 3, after_timeout: skip-model}
"""
    out = tmp_path / "o"
    summary = run_experiment(_config(tmp_path, text), out=out, jobs=1, progress=False)
    # Fold 0's child had already fitted the small point (it ran): ok; folds 1-2 are skipped.
    assert summary.status_counts == {"failed": 1, "ok": 1, "skipped-after-timeout": 4}
    from eemrepro.experiments._selection import records_frame

    cell = select_best_of_grid(records_frame(ResultStore(out).read())).iloc[0]
    assert cell["status"] == "failed"


def test_skip_model_abandons_nothing_for_a_fit_that_fails_otherwise(tmp_path):
    # Only a fit past its time or out of memory ends a model under skip-model: a fit that raises anything else
    # (here ArithmeticError, on every fold) is that point's failure, and the other point runs on every fold.
    text = """name: failing
datasets: [heart]
models:
  Sleepy: {estimator: 'tests.helpers:Sleepy', grid: {fail: [true, false]}}
protocol: {folds: 3, repeats: 1, fit_memory_gb: 3, after_timeout: skip-model}
"""
    out = tmp_path / "o"
    summary = run_experiment(_config(tmp_path, text), out=out, jobs=1, progress=False)
    assert summary.status_counts == {"failed": 3, "ok": 3}
    records = ResultStore(out).read()
    assert {(r["params"]["fail"], r["status"]) for r in records} == {(True, "failed"), (False, "ok")}
    assert all(r["error"].startswith("ArithmeticError") for r in records if r["status"] == "failed")


def test_dry_run_counts_and_estimates(reference, tmp_path):
    cfg, _, _ = reference
    summary = run_experiment(cfg, out=tmp_path / "dry", dry_run=True)
    # Per (data set, repeat, fold): EEMrbf 1 and WELMsig 1 (h is the path), EEKM 2
    # (one per gamma), LSSVM 1 and SVM 1 (C is the path).
    assert summary.pending_units == summary.total_units == len(enumerate_units(cfg)) == 2 * 2 * 3 * 6
    assert summary.estimate_seconds > 0 and not (tmp_path / "dry").exists()


def test_dry_run_of_a_resumed_store_is_estimated_from_its_own_timings(reference, tmp_path):
    import shutil

    cfg, out, _ = reference
    resumed = tmp_path / "resumed"
    shutil.copytree(out, resumed)
    # The same records, as if each had taken 1000 times longer and 10 s more (a slow solver the cost model does
    # not know; the 10 s keep it far above the cost model's figure however fast the machine ran the reference).
    slow = [r | {"fit_seconds": 1000 * r["fit_seconds"] + 10.0, "predict_seconds": 1000 * r["predict_seconds"]}
            for r in ResultStore(out).read()]
    store = ResultStore(resumed)
    store.append(slow)
    store.close()
    summary = run_experiment(cfg, out=resumed, dry_run=True, repeats=3, jobs=2)
    # One more repeat of every cell: each unit's records take their cell's mean stored time per
    # record (a path's fit shared over its points), so the 2 stored repeats' total, halved, on 2 workers.
    seconds = sum(r["fit_seconds"] / (r.get("path_size") or 1) + r["predict_seconds"] for r in slow)
    assert summary.pending_units == summary.total_units / 3
    assert summary.estimate_seconds == pytest.approx(seconds / 2 / 2, rel=1e-9)
    # Without stored records of a cell, the kind's cost model: far below the slow store's times.
    fresh = run_experiment(cfg, out=tmp_path / "fresh", dry_run=True, repeats=1, jobs=2)
    assert fresh.estimate_seconds < summary.estimate_seconds / 100
    # Records without timings (a store whose segments hold no such column) fall back to it too.
    from eemrepro.experiments._plan import estimate

    units = [u for u in enumerate_units(cfg) if u.repeat == 0]
    untimed = ResultStore(resumed).frame(["identity_sha"])
    shas = {(r["dataset"], r["model"], False): r["identity_sha"] for r in slow}
    assert estimate(cfg, units, 2, untimed, shas).seconds == pytest.approx(fresh.estimate_seconds)


def test_fork_after_openmp_use_in_the_parent_does_not_hang(tmp_path):
    # Regression: the parent trains an SVM in-process first (libgomp starts its
    # thread pool), then the runner forks children that train SVMs.
    import numpy as np

    from eemrepro.models import SVM

    X = np.random.RandomState(0).rand(300, 3)
    SVM(C=10.0).fit(X, np.where(X[:, 0] > 0.5, 1, -1))
    text = """name: omp
datasets: [heart]
models:
  SVM: {estimator: SVM, grid: {C: [1.0], gamma: [0.5]}}
protocol: {folds: 2, repeats: 1, fit_timeout: 60}
"""
    summary = run_experiment(_config(tmp_path, text), out=tmp_path / "o", jobs=1, progress=False)
    assert summary.status_counts == {"ok": 2}


def test_more_repeats_extend_the_store(reference, tmp_path):
    cfg, out, _ = reference
    import shutil

    shutil.copytree(out, tmp_path / "ext")
    summary = run_experiment(cfg, out=tmp_path / "ext", jobs=1, progress=False, repeats=3)
    # Only repeat 2 is new: 1/3 of the units of a 3-repeat run.
    assert summary.pending_units == summary.total_units // 3


def test_unavailable_dataset_fails_clearly_or_is_skipped(tmp_path):
    from eemrepro.datasets import DatasetError

    text = SMALL.replace("[heart, sonar]", "[heart, ecoli]")
    cfg = _config(tmp_path, text)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="has no file ecoli/x1data.npz"):
        run_experiment(cfg, out=tmp_path / "o", mirror=tmp_path / "empty", data_home=tmp_path / "c", dry_run=True)
    summary = run_experiment(cfg, out=tmp_path / "o", mirror=tmp_path / "empty", data_home=tmp_path / "c",
                             dry_run=True, skip_unavailable=True)
    assert list(summary.unavailable) == ["ecoli"] and summary.total_units == 1 * 2 * 3 * 6
    # --only-datasets: the other data sets are neither fetched nor checked.
    part = run_experiment(cfg, out=tmp_path / "o", mirror=tmp_path / "empty", data_home=tmp_path / "c",
                          dry_run=True, only_datasets=["heart"])
    assert part.unavailable == {} and part.total_units == 1 * 2 * 3 * 6


def test_standalone_timing_on_the_first_fold(tmp_path):
    text = """name: timing
datasets: [heart]
models:
  EEM: {estimator: EEM, activation: rbf, grid: {n_hidden: [10, 30]}}
  SVM: {estimator: SVM, grid: {C: [1.0, 1.0e+3, 1.0e+4, 1.0e+5, 1.0e+6, 1.0e+7], gamma: [1.0]}}
protocol: {folds: 3, repeats: 1, standalone_timing: first-fold}
"""
    run_experiment(_config(tmp_path, text), out=tmp_path / "o", jobs=1, progress=False)
    reused = 0
    for r in ResultStore(tmp_path / "o").read():
        if r["model"] == "SVM" and "reused_from" not in r:  # a path fitted C by C: each fit is standalone
            assert r["standalone_fit_seconds"] == r["fit_seconds"] and r["path_size"] == 1
        elif r["model"] == "SVM":  # a smaller C's model, bit for bit: timed on its own on fold 0 only
            reused += 1
            assert r["reused_from"] < r["params"]["C"]
            assert (r["standalone_fit_seconds"] > 0) if r["fold"] == 0 else r["standalone_fit_seconds"] is None
        elif r["fold"] == 0:
            assert 0 < r["standalone_fit_seconds"] and r["path_size"] == 2
        else:
            assert r["standalone_fit_seconds"] is None
    assert reused >= 3  # heart at gamma = 1: LIBSVM stops clipping by C = 1e4 on every fold


@pytest.mark.slow
def test_svm_grid_records_are_those_of_separate_libsvm_fits(tmp_path):
    from eemrepro.datasets import load_dataset
    from eemrepro.experiments._splitters import make_splitter
    from eemrepro.models import SVM

    text = """name: svm
datasets: [heart]
models:
  SVM: {estimator: SVM, grid: {C: {log10: [-1, 8]}, gamma: [0.1, 10.0]}}
protocol: {folds: 3, repeats: 1}
"""
    cfg = _config(tmp_path, text)
    run_experiment(cfg, out=tmp_path / "o", jobs=1, progress=False)
    X, y, _ = load_dataset("heart", scaling="minmax")
    splitter = make_splitter(cfg.protocol, "heart")
    records = ResultStore(tmp_path / "o").read()
    assert len(records) == 10 * 2 * 3 and any("reused_from" in r for r in records)
    for r in records:
        train, test = splitter.split_at(y, r["repeat"], r["fold"])
        model = SVM(**r["params"]).fit(X[train], y[train])  # LIBSVM from scratch at this C
        # The record says what LIBSVM said of its run (a reused point: of the smaller C's, the same run).
        assert (r["n_iter"], r["converged"]) == (model.n_iter_, model.converged_)
        pred = model.predict(X[test])
        tpr = [np.mean(pred[y[test] == c] == c) for c in np.unique(y)]
        assert r["metrics"]["gmean"] == pytest.approx(np.sqrt(tpr[0] * tpr[1]), abs=1e-12)


def test_retry_failed_supersedes_failed_records(tmp_path):
    text = """name: retry
datasets: [heart]
models:
  Flaky: {estimator: 'tests.helpers:Sleepy', grid: {fail: [true]}}
protocol: {folds: 2, repeats: 1}
"""
    cfg = _config(tmp_path, text)
    run_experiment(cfg, out=tmp_path / "o", jobs=1, progress=False)
    assert {r["status"] for r in ResultStore(tmp_path / "o").read()} == {"failed"}
    assert run_experiment(cfg, out=tmp_path / "o", jobs=1, progress=False).pending_units == 0
    again = run_experiment(cfg, out=tmp_path / "o", jobs=1, progress=False, retry_failed=True)
    assert again.pending_units == 2 and len(ResultStore(tmp_path / "o").read()) == 2


def test_compacted_store_reads_and_resumes_the_same(reference, tmp_path):
    import shutil

    cfg, out, _ = reference
    shutil.copytree(out, tmp_path / "c")
    store = ResultStore(tmp_path / "c")
    # A run seals its records into Parquet when it ends: the reference store is sealed.
    assert store.segments() and all(p.suffix == ".parquet" for p in store.segments())
    # A killed run leaves its write-ahead JSON lines; compact seals them.
    for seg in store.segments():
        wal = seg.with_suffix(".jsonl")
        wal.write_text("".join(json.dumps(r) + "\n" for r in store.segment_records(seg)))
        seg.unlink()
    assert _facts(tmp_path / "c") == _facts(out)
    assert store.compact() and all(p.suffix == ".parquet" for p in store.segments())
    assert not list(store.records_dir.glob("*.jsonl"))
    assert _facts(tmp_path / "c") == _facts(out)
    assert run_experiment(cfg, out=tmp_path / "c", jobs=1, progress=False).pending_units == 0


def test_forget_moves_one_models_records_aside_and_resume_reruns_them(reference, tmp_path):
    import shutil

    from typer.testing import CliRunner

    from eemrepro.cli import app

    cfg, out, _ = reference
    shutil.copytree(out, tmp_path / "f")
    store = ResultStore(tmp_path / "f")
    store.compact()
    before = _facts(tmp_path / "f")
    lssvm_heart = {k for k in before if k[:2] == ("heart", "LSSVM")}
    assert len(lssvm_heart) == 2 * 2 * 3  # points x repeats x folds
    res = CliRunner().invoke(app, ["forget", str(tmp_path / "f"), "--models", "LSSVM", "--datasets", "heart"])
    assert res.exit_code == 0, res.output
    assert set(_facts(tmp_path / "f")) == set(before) - lssvm_heart
    moved = [r for seg in (tmp_path / "f").glob("superseded-*/*.parquet") for r in store.segment_records(seg)]
    assert len(moved) == len(lssvm_heart) and {(r["dataset"], r["model"]) for r in moved} == {("heart", "LSSVM")}
    again = run_experiment(cfg, out=tmp_path / "f", jobs=1, progress=False)
    assert again.pending_units == 2 * 3 and _facts(tmp_path / "f") == before
    res = CliRunner().invoke(app, ["forget", str(tmp_path / "f"), "--models", "LS-SVM"])
    assert res.exit_code == 1 and "no stored records of model(s) ['LS-SVM']" in res.output


def test_only_models_and_datasets_run_a_subset_and_resume_the_rest(reference, tmp_path):
    cfg, out, _ = reference
    part = run_experiment(cfg, out=tmp_path / "p", jobs=1, progress=False, only_models=["EEMrbf"],
                          only_datasets=["heart"])
    assert part.total_units == 2 * 3  # repeats x folds
    rest = run_experiment(cfg, out=tmp_path / "p", jobs=1, progress=False, dry_run=True)
    assert rest.pending_units == rest.total_units - 6
    with pytest.raises(ValueError, match=r"unknown model\(s\) \['EEM'\]"):
        run_experiment(cfg, out=tmp_path / "p", only_models=["EEM"], dry_run=True)


def test_per_fold_scaling_runs(tmp_path):
    text = """name: pf
datasets: [heart]
models:
  EEM: {estimator: EEM, activation: rbf, grid: {n_hidden: [20]}}
protocol: {folds: 3, repeats: 1, scaling: per-fold}
"""
    summary = run_experiment(_config(tmp_path, text), out=tmp_path / "o", jobs=1, progress=False)
    assert summary.status_counts == {"ok": 3}
    assert all(0.5 < r["metrics"]["gmean"] <= 1 for r in ResultStore(tmp_path / "o").read())


def test_a_grid_point_never_run_makes_the_cell_incomplete_in_the_reports(reference, tmp_path):
    # A run stopped between units can leave every stored point of a cell on the
    # same folds (here SVM at C = 1 on all folds, C = 10 never run): the records
    # alone look like a finished, smaller grid. The folder's config.yaml says
    # C = 10 is part of the grid, so the report must read "incomplete".
    import shutil

    from eemrepro.experiments import select
    from eemrepro.reports import Records

    _, ref_out, _ = reference
    out = tmp_path / "stopped"
    shutil.copytree(ref_out, out)
    kept = [r for r in ResultStore(out).read() if not (r["model"] == "SVM" and r["params"]["C"] == 10.0)]
    for seg in ResultStore(out).segments():
        seg.unlink()
    (out / "records" / "only.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))

    whole, whole_state = Records([ref_out]).read()
    part, part_state = Records([out]).read()
    by_cell = lambda records, state=(): {(r["dataset"], r["model"]): r["status"]
                                         for r in select(records, unfinished=state).to_dict("records")}
    assert whole_state["unfinished"] == []
    assert set(by_cell(whole).values()) == {"ok"}
    assert part_state["unfinished"] == [("heart", "SVM"), ("sonar", "SVM")]
    got = by_cell(part, part_state["unfinished"])
    assert got[("heart", "SVM")] == got[("sonar", "SVM")] == "incomplete"
    assert all(s == "ok" for (d, m), s in got.items() if m != "SVM")
    # Without the store's run state (records alone) the cut cannot be seen: that is why the reports read it.
    assert by_cell(kept)[("heart", "SVM")] == "ok"


def test_the_units_of_a_run_share_one_fit_process_forked_anew_after_a_crash_and_per_run(tmp_path):
    # One forked fit process serves the units of a run (a fork per unit cost more than small fits);
    # a fit that kills it fails that fit only, and the units after it run in a new one.
    text = """name: where
datasets: [heart]
models:
  A: {estimator: 'tests.helpers:WhereFitted', grid: {crash: [false]}}
  Crash: {estimator: 'tests.helpers:WhereFitted', grid: {crash: [true]}}
  B: {estimator: 'tests.helpers:WhereFitted', grid: {crash: [false]}}
protocol: {folds: 3, repeats: 1}
"""
    cfg = _config(tmp_path, text)
    summary = run_experiment(cfg, out=tmp_path / "o", jobs=1, progress=False)
    assert summary.status_counts == {"ok": 6, "failed": 3}
    # In the order the units ran (the scheduler's, not the config's): the ok fits between two crashes share one
    # process, and each crash is followed by another.
    records = sorted(ResultStore(tmp_path / "o").read(), key=lambda r: r["finished_at"])
    runs, current = [], []
    for r in records:
        if r["status"] == "ok":
            current.append(r["fitted"]["pid_"])
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    assert all(len(set(pids)) == 1 for pids in runs) and sum(map(len, runs)) == 6
    assert len({pids[0] for pids in runs}) == len(runs)  # a new process after each crash
    assert any(len(pids) > 1 for pids in runs)  # one process served several units
    ok = {r["fitted"]["pid_"] for r in records if r["status"] == "ok"}
    assert os.getpid() not in ok  # the fits ran in a child, not in the runner
    crashed = [r for r in records if r["model"] == "Crash"]
    assert all(r["status"] == "failed" and r["error"] == "the fit's process died (signal 9)" for r in crashed)
    # The run stopped its child at the end; another run forks its own (it sees the parent as it is now).
    assert not any(Path(f"/proc/{pid}").exists() for pid in ok)
    run_experiment(cfg, out=tmp_path / "o2", jobs=1, progress=False)
    again = {r["fitted"]["pid_"] for r in ResultStore(tmp_path / "o2").read() if r["model"] == "A"}
    assert not again & ok


def test_a_unit_s_data_and_records_cross_the_fit_process_pipe_whole():
    # Several MB each way, more than a pipe holds: the reader reassembles the messages exactly.
    import hashlib

    from eemrepro.experiments._watchdog import close_fit_child, run_points
    from tests.helpers import echo_steps

    data = np.random.RandomState(0).rand(1000, 500)  # 4 MB
    points = [{"i": i} for i in range(3)]
    task = {"points": points, "skip_points": [], "fit_timeout": 60, "after_timeout": "skip", "run_id": "test"}
    try:
        first = run_points(task, echo_steps, data)
        second = run_points(task, echo_steps, data[::-1])
    finally:
        close_fit_child()
    for results, sent in ((first, data), (second, data[::-1])):
        assert len(results) == 3
        for fields in results.values():
            assert fields["sha"] == hashlib.sha256(np.ascontiguousarray(sent).tobytes()).hexdigest()
            assert fields["shape"] == [1000, 500]
            np.testing.assert_array_equal(fields["back"], sent)


@pytest.mark.slow
def test_a_dask_run_survives_a_killed_worker_with_nothing_lost_or_duplicated(reference, tmp_path):
    """A local cluster of worker processes (nannies restart them); one worker is killed (SIGKILL) mid-run.
    Dask reruns the tasks it held on another worker; the client alone writes records, once per key."""
    distributed = pytest.importorskip("dask.distributed")
    import os
    import signal
    import threading

    cfg, out, _ = reference
    slow = _config(tmp_path, SMALL.replace("LSSVM: {estimator: LSSVM", "Slow: {estimator: 'tests.helpers:Sleepy', "
                                                                        "delay: 0.3, grid: {fail: [false]}}\n  "
                                                                        "LSSVM: {estimator: LSSVM"))
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None)
    try:
        killed = {}

        def kill_one():
            target = tmp_path / "dask"
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                segments = list((target / "records").glob("*.jsonl")) if (target / "records").is_dir() else []
                if sum(len(p.read_text().splitlines()) for p in segments) >= 20:
                    break
                time.sleep(0.05)
            with distributed.Client(cluster.scheduler_address) as client:
                pids = client.run(os.getpid)
            worker, pid = sorted(pids.items())[0]
            os.kill(pid, signal.SIGKILL)
            killed["worker"] = worker

        thread = threading.Thread(target=kill_one)
        thread.start()
        summary = run_experiment(slow, out=tmp_path / "dask", jobs=2, backend="dask",
                                 scheduler=cluster.scheduler_address, progress=False)
        thread.join()
    finally:
        cluster.close()
    assert killed, "no worker was killed"
    assert summary.done_units == summary.pending_units == summary.total_units
    keys = _raw_keys(tmp_path / "dask")
    assert len(keys) == len(set(keys)), "a unit was recorded twice"
    facts = _facts(tmp_path / "dask")
    # Every record of the reference's models as the sequential run made it, and each Sleepy fold once.
    assert {k: v for k, v in facts.items() if k[1] != "Slow"} == _facts(out)
    assert sum(1 for k in facts if k[1] == "Slow") == 2 * 2 * 3 and all(v[0] == "ok" for v in facts.values())


ONE_FOLD_EACH = """name: where
datasets: [heart]
models:
  S: {estimator: 'tests.helpers:Sleepy', grid: {delay: [0.0]}}
protocol: {folds: 3, repeats: 1, seed: 0}
"""


def _run_file(out):
    (path,) = (out / "runs").glob("*.json")
    return json.loads(path.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("scheduler", [False, True])
def test_a_dask_run_on_a_cluster_of_one_thread_runs_on_it_and_says_which(tmp_path, scheduler):
    """Issue 65: on a cluster of one worker thread (a scheduler's, or --jobs 1's local one) joblib ran every
    unit in the client process while the run file said "dask"; `--scheduler` without `--backend dask` was
    ignored (the units ran on loky). Every unit runs on the cluster (each record's worker is the cluster
    worker's pid), and the run file and the summary name the cluster: its address, workers and threads."""
    distributed = pytest.importorskip("dask.distributed")
    cfg = _config(tmp_path, ONE_FOLD_EACH)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None) if scheduler else None
    try:
        if scheduler:  # no backend named: the scheduler implies dask; --jobs says nothing to a cluster's size
            with distributed.Client(cluster.scheduler_address) as client:
                workers = set(client.run(os.getpid).values())
            summary = run_experiment(cfg, out=tmp_path / "o", jobs=4, scheduler=cluster.scheduler_address,
                                     progress=False)
            assert summary.ran_on == f"the Dask cluster at {cluster.scheduler_address}: 1 worker(s), 1 thread(s)"
        else:
            summary = run_experiment(cfg, out=tmp_path / "o", jobs=1, backend="dask", progress=False)
            assert re.fullmatch(r"the Dask cluster at tcp://127\.0\.0\.1:\d+ \(started here\): 1 worker\(s\), "
                                r"1 thread\(s\)", summary.ran_on), summary.ran_on
    finally:
        if cluster is not None:
            cluster.close()
    records = ResultStore(tmp_path / "o").read()
    assert len(records) == 3 and all(r["status"] == "ok" for r in records)
    ran = {r["worker"] for r in records}
    assert os.getpid() not in ran and len(ran) == 1  # one worker process, not this one
    if scheduler:
        assert ran == workers
    info = _run_file(tmp_path / "o")
    assert (info["backend"], info["ran_on"]) == ("dask", summary.ran_on)


def test_a_run_on_one_loky_job_says_it_runs_in_this_process(tmp_path):
    """The neighbour: joblib runs one job here, not in a worker; the run file says so (and the records' worker
    is this process)."""
    summary = run_experiment(_config(tmp_path, ONE_FOLD_EACH), out=tmp_path / "o", jobs=1, progress=False)
    assert summary.ran_on == "this process (one job)" == _run_file(tmp_path / "o")["ran_on"]
    assert {r["worker"] for r in ResultStore(tmp_path / "o").read()} == {os.getpid()}


@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_a_scheduler_goes_with_the_dask_backend_alone(tmp_path, backend):
    """`--scheduler` with `--backend loky` was silently ignored: refused in one line naming both, nothing
    written; with `--backend dask` (or no backend) it is used (a scheduler that does not answer says so)."""
    from typer.testing import CliRunner

    from eemrepro.cli import app

    import contextlib

    (tmp_path / "c.yaml").write_text(ONE_FOLD_EACH)
    waiting = contextlib.nullcontext()
    if backend == "dask":
        pytest.importorskip("dask.distributed")
        waiting = __import__("dask").config.set({"distributed.comm.timeouts.connect": "1s"})  # (30 s by default)
    with waiting:
        result = CliRunner().invoke(app, ["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o"),
                                          "--backend", backend, "--scheduler", "tcp://127.0.0.1:9", "--quiet"])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    if backend == "loky":
        assert line == ("error: --scheduler tcp://127.0.0.1:9 names a Dask scheduler, which --backend loky does "
                        "not use: drop --backend (--scheduler implies dask), or --scheduler")
        assert not (tmp_path / "o").exists()
    else:
        assert line.startswith("error: no Dask scheduler answers at tcp://127.0.0.1:9 (")
        assert line.endswith("start one (`dask scheduler`) or leave --scheduler out for a local cluster")
        # The folder the run made for it is gone again (it was left with a config and a run file, no record);
        # a folder that holds records is kept whole.
        assert not (tmp_path / "o").exists()
        ran = CliRunner().invoke(app, ["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o"), "--jobs", "1",
                                       "--quiet"])
        assert ran.exit_code == 0, ran.output
        before = sorted(p.name for p in (tmp_path / "o" / "records").iterdir())
        with waiting:  # (--fresh: the stored units run again, their records moved aside first)
            again = CliRunner().invoke(app, ["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o"),
                                             "--scheduler", "tcp://127.0.0.1:9", "--fresh", "--quiet"])
        assert again.exit_code == 1 and (tmp_path / "o" / "config.yaml").is_file(), again.output
        (aside,) = (tmp_path / "o").glob("superseded-*")
        assert before and sorted(p.name for p in aside.iterdir()) == before


#: A scheduler and one worker of two threads in a process of their own (a cluster the run's process does not
#: own), printing the scheduler's address.
CLUSTER = """
import time
from dask.distributed import LocalCluster

if __name__ == "__main__":
    cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=True, host="127.0.0.1",
                           dashboard_address=None)
    print(cluster.scheduler_address, flush=True)
    time.sleep(600)
"""


@pytest.mark.slow
def test_a_lost_scheduler_is_reported_like_an_interrupt_and_the_same_command_resumes(tmp_path):
    """Issue 65: a scheduler lost mid-run printed 40 lines of tracebacks and no "K of N units stored; the same
    command resumes" line (Ctrl-C gets that line). One line, the units stored counted, exit 1; the same
    command on a local cluster then runs exactly the rest."""
    pytest.importorskip("dask.distributed")
    (tmp_path / "cluster.py").write_text(CLUSTER)
    (tmp_path / "c.yaml").write_text(ONE_FOLD_EACH.replace("folds: 3", "folds: 10").replace(
        "delay: [0.0]", "delay: [0.2]"))
    cluster = subprocess.Popen([sys.executable, str(tmp_path / "cluster.py")], stdout=subprocess.PIPE, text=True,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        address = cluster.stdout.readline().strip()
        out = tmp_path / "o"
        run = subprocess.Popen([sys.executable, "-m", "eemrepro", "run", str(tmp_path / "c.yaml"), "--out", str(out),
                                "--backend", "dask", "--scheduler", address, "--quiet"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while sum(len(p.read_text().splitlines()) for p in out.glob("records/*.jsonl")) < 2:
            assert time.monotonic() < deadline and run.poll() is None, run.communicate()
            time.sleep(0.05)
    finally:
        os.killpg(cluster.pid, signal.SIGKILL)  # the scheduler and its worker, at once
        cluster.wait()
    _, err = run.communicate(timeout=120)
    stored = len(ResultStore(out).read())
    assert run.returncode == 1, err
    assert err.strip().splitlines() == [f"the Dask scheduler at {address} was lost mid-run "
                                        f"(its connection closed): {stored} of 10 units stored in {out}; the "
                                        "same command resumes"]
    assert 2 <= stored < 10 and _run_file(out)["interrupted"] is True
    resumed = run_experiment(_config(tmp_path, (tmp_path / "c.yaml").read_text()), out=out, jobs=1,
                             progress=False)
    assert resumed.pending_units == 10 - stored and len(_raw_keys(out)) == len(set(_raw_keys(out))) == 10


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_the_fits_warnings_are_kept_per_record_and_summarised_once_on_every_backend(tmp_path, backend):
    if backend == "dask":
        pytest.importorskip("dask.distributed")
    text = """name: warns
datasets: [heart]
models:
  W: {estimator: 'tests.helpers:Warns', grid: {delay: [0.0, 0.001]}}
protocol: {folds: 3, repeats: 2}
"""
    (tmp_path / "c.yaml").write_text(text)
    done = subprocess.run([sys.executable, "-m", "eemrepro", "run", str(tmp_path / "c.yaml"), "--out",
                           str(tmp_path / "o"), "--jobs", "2", "--backend", backend, "--quiet"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    # 2 points x 3 folds x 2 repeats = 12 fits, each warned once: one line per distinct warning, no raw ones.
    lines = [ln for ln in done.stderr.splitlines() if "this fit warns" in ln]
    assert sorted(lines) == ["warned in 6 fit(s): UserWarning: this fit warns (delay=0.0)",
                             "warned in 6 fit(s): UserWarning: this fit warns (delay=0.001)"]
    records = ResultStore(tmp_path / "o").read()
    assert all(r["warnings"] == [f"UserWarning: this fit warns (delay={r['params']['delay']})"] for r in records)
