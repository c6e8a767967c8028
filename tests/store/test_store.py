"""The result store: Parquet segments, the write-ahead log, damaged input, the write lock, old layouts."""

import gzip
import json
import math
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app
from eemrepro.experiments import load_config, run_experiment
from eemrepro.store import (
    ResultStore,
    StoreError,
    StoreLockedError,
    StoreWarning,
    export_results,
    same_values,
    upgrade_store,
)
from eemrepro.store._segments import disagreements
from tests.helpers import lock_held

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / ".ci" / "quick-baseline"


def _record(i, **extra):
    r = {"kind": "grid-search", "dataset": "heart", "model": "M", "params": {"C": [0.1, 1.0, 10][i % 3]},
         "repeat": 0, "fold": i // 3, "inner": None, "status": "ok", "metrics": {"gmean": 0.5 + i / 100},
         "criteria": {}, "fit_seconds": 0.01 * i, "identity": {"kind": "grid-search"}, "identity_sha": "abc",
         "versions": {"numpy": "2"}, "host": "h", "finished_at": 1.7e9 + i}
    r.update(extra)
    return r


def _same_records(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert same_values(x, y), (x, y)


def test_a_legacy_store_upgrades_losslessly_every_field_of_every_record(tmp_path):
    # .ci/quick-baseline: written before record identities (gmean fields, a protocol fingerprint).
    legacy = tmp_path / "legacy"
    shutil.copytree(BASELINE, legacy)
    before = ResultStore(legacy).read()
    assert len(before) == 400
    written, size_before, size_after = upgrade_store(legacy)
    assert [p.suffix for p in written] == [".parquet"] and not list((legacy / "records").glob("*.gz"))
    after = ResultStore(legacy).read()
    _same_records(before, after)


@pytest.mark.parametrize("chunk", [50_000, 1, 2])
def test_every_kind_of_field_round_trips(tmp_path, monkeypatch, chunk):
    # Absent vs None, NaN and inf, ints vs floats, lists, nested mappings, mixed types, a second run's versions;
    # sealed at once or a chunk of lines at a time (a field typed in one chunk and JSON in another).
    monkeypatch.setattr("eemrepro.store._store._SEAL_CHUNK", chunk)
    records = [
        _record(0, dcs=[0.5, float("nan"), None], fitted={"C_": [1.0, 2.0]}, note="x"),
        _record(1, error="ValueError: bad", metrics={"gmean": float("nan"), "auc": None}, standalone_fit_seconds=None),
        _record(2, metrics={}, weird=[1, "a"], fitted=None, versions={"numpy": "3"}),
        _record(3, labels=[1, -1, 1], embedding=[[0.0, 1.5], [2.0, -1.0]], fit_seconds=float("inf")),
    ]
    del records[3]["criteria"]
    store = ResultStore(tmp_path / "s")
    store.append(records)
    store.close()  # seals the write-ahead segment
    (segment,) = store.segments()
    assert segment.suffix == ".parquet" and not list(store.records_dir.glob("*.jsonl"))
    _same_records(records, store.read())
    assert len(store.run_facts()) == 2  # two distinct package versions: two runs' facts
    # What the store writes agrees with its key lists (absent, None, NaN and empty mappings alike): nothing for
    # ``store verify`` or the audit to call edited by hand.
    assert disagreements(store._table(segment, raw=True)) == {}


def test_frame_reads_columns_params_and_metrics(tmp_path):
    store = ResultStore(tmp_path / "s")
    store.append([_record(i) for i in range(9)])
    store.close()
    df = store.frame(["status", "metrics"])
    assert {"dataset", "model", "point", "repeat", "fold", "inner", "status", "gmean"} == set(df.columns)
    full = read_results(tmp_path / "s")
    assert {"param_C", "gmean", "host", "versions", "run_id", "store"} <= set(full.columns)
    # The grid point's mean GMean, from the frame and from the records themselves.
    means = full.groupby("param_C")["gmean"].mean()
    expected = {c: np.mean([0.5 + i / 100 for i in range(9) if [0.1, 1.0, 10][i % 3] == c]) for c in (0.1, 1.0, 10)}
    assert means.to_dict() == pytest.approx(expected)
    assert full["host"].unique().tolist() == ["h"] and json.loads(full["versions"].iloc[0]) == {"numpy": "2"}


@pytest.mark.parametrize("each_alone", [False, True])
def test_a_frame_read_segment_by_segment_is_the_union_of_its_segments(tmp_path, monkeypatch, each_alone):
    # Large segments become frames one at a time (to bound memory; ``each_alone`` makes these two large), small
    # ones are converted together; either way the frame must read as the union of the segments: a field one
    # segment lacks is None in an object column (never NaN), NaN in a float one; categories united; a later
    # segment's record wins its key.
    from eemrepro.store import _store

    if each_alone:
        monkeypatch.setattr(_store, "LARGE_SEGMENT", 1)
    store = ResultStore(tmp_path / "s")
    store.append([_record(i) for i in range(3)])  # no ``converged``, no ``note``
    store.close()
    store = ResultStore(tmp_path / "s")
    store.append([_record(3, converged=True, note="x", dataset="sonar"), _record(4, converged=False, note="y"),
                  _record(0, status="failed", metrics={})])
    store.close()
    df = store.frame(None)
    by_fold = df.set_index(["dataset", "fold", "point"])
    assert len(df) == 5
    assert by_fold.loc[("heart", 0, '{"C": 0.1}'), "status"] == "failed"
    assert df["converged"].dtype == object
    assert [v for v in df.sort_values(["dataset", "fold", "point"])["converged"]] == [None, None, None, False, True]
    assert sorted(df["dataset"].cat.categories) == ["heart", "sonar"]
    assert df["note"].isna().sum() == 3 and set(df["note"].dropna()) == {"x", "y"}
    assert df["gmean"].dtype == float and df["gmean"].isna().sum() == 1  # the failed record has none


def test_the_latest_record_of_a_key_wins(tmp_path):
    store = ResultStore(tmp_path / "s")
    store.append([_record(0), _record(1)])
    store.close()
    store = ResultStore(tmp_path / "s")  # a later run: its segment comes later in the store's own order
    store.append([_record(0, status="failed", metrics={})])
    store.close()
    df = store.frame(["status"])
    assert len(df) == 2 and df.set_index("point")["status"].to_dict() == {'{"C": 0.1}': "failed", '{"C": 1.0}': "ok"}
    assert [r["status"] for r in store.read()] == ["failed", "ok"]


@pytest.mark.parametrize("line, why", [
    ("42\n", "a JSON int"), ("null\n", "a JSON NoneType"), ("{}\n", "field 'dataset' is missing"),
    ('{"dataset": "heart"}\n', "field 'model' is missing"), ("{not json\n", "not JSON"),
    ('{"dataset": "heart", "model": "M", "params": {}, "repeat": "0", "fold": 0, "status": "ok"}\n',
     "field 'repeat'"),
])
def test_a_damaged_line_is_skipped_and_reported_with_file_and_line(tmp_path, line, why):
    good = [json.dumps(_record(i)) + "\n" for i in range(3)]
    wal = tmp_path / "s" / "records" / "20260101T000000-1.jsonl"
    wal.parent.mkdir(parents=True)
    wal.write_text(good[0] + line + good[1] + good[2] + '{"torn": ')
    with pytest.warns(StoreWarning) as caught:
        records = ResultStore(tmp_path / "s").read()
    assert len(records) == 3
    message = str(caught[0].message)
    assert str(wal) in message and "2 damaged line(s) (line 2, 5" in message and why in message
    with pytest.warns(StoreWarning):
        assert len(ResultStore(tmp_path / "s").frame(["status"])) == 3
    # Sealing keeps the damaged lines beside the store, never silently drops them.
    with pytest.warns(StoreWarning):
        ResultStore(tmp_path / "s").compact()
    assert (tmp_path / "s" / "damaged-20260101T000000-1.jsonl").read_text().startswith(line)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(ResultStore(tmp_path / "s").read()) == 3  # the sealed store has no damage left


def test_cli_reports_damage_in_one_line_and_a_broken_segment_without_a_traceback(tmp_path):
    store = ResultStore(tmp_path / "s")
    store.append([_record(i) for i in range(3)])
    store.close()
    (store.records_dir / "20990101T000000-2.jsonl").write_text("garbage\n")
    res = CliRunner().invoke(app, ["status", str(tmp_path / "s")])  # no config.yaml: one clear error
    assert res.exit_code == 1 and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["export", str(tmp_path / "s"), "--out", str(tmp_path / "x.csv")])
    assert res.exit_code == 0, res.output
    assert "wrote 3 records" in res.output
    (segment,) = [p for p in store.segments() if p.suffix == ".parquet"]
    segment.write_bytes(segment.read_bytes()[:100])  # a truncated sealed segment
    res = CliRunner().invoke(app, ["export", str(tmp_path / "s"), "--out", str(tmp_path / "y.csv")])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert f"{segment}: damaged" in res.output and "move it out" in res.output


def test_a_crash_between_sealing_and_removing_the_log_reads_each_record_once(tmp_path):
    store = ResultStore(tmp_path / "s")
    store.append([_record(i) for i in range(3)])
    wal = store._wal
    store.close(seal=False)
    shutil.copy(wal, tmp_path / "copy.jsonl")
    store.seal(wal)
    shutil.copy(tmp_path / "copy.jsonl", wal)  # as if the crash came before the unlink
    assert len(store.segments()) == 1 and len(store.read()) == 3
    store.compact()
    assert not wal.exists()


def test_export_writes_csv_and_parquet(tmp_path):
    store = ResultStore(tmp_path / "s")
    store.append([_record(i, dcs=[0.1 * i, 0.2]) for i in range(4)])
    store.close()
    assert export_results(tmp_path / "s", tmp_path / "r.parquet", "parquet") == 4
    back = pd.read_parquet(tmp_path / "r.parquet")
    assert back["gmean"].tolist() == pytest.approx([0.5, 0.51, 0.52, 0.53])
    assert export_results(tmp_path / "s", tmp_path / "r.csv", "csv") == 4
    csv = pd.read_csv(tmp_path / "r.csv")
    assert json.loads(csv["dcs"].iloc[3]) == pytest.approx([0.3, 0.2]) and csv["param_C"].tolist()[:3] == [0.1, 1, 10]


def test_a_second_writer_is_refused_naming_the_live_one_and_a_killed_one_leaves_no_lock(tmp_path):
    text = """name: small
datasets: [heart]
models:
  EEM: {estimator: EEM, activation: rbf, grid: {n_hidden: [10]}}
protocol: {folds: 2, repeats: 1, seed: 0}
"""
    (tmp_path / "c.yaml").write_text(text)
    cfg = load_config(tmp_path / "c.yaml")
    out = tmp_path / "o"
    run_experiment(cfg, out=out, jobs=1, progress=False, only_models=["EEM"], repeats=1)
    (stored,) = ResultStore(out).segments()
    stored.rename(stored.with_suffix(".moved"))  # its records moved away: the run has work to do
    with lock_held(out) as holder:
        with pytest.raises(StoreLockedError, match=rf"{out} is being written by process {holder.pid} .*holder"):
            run_experiment(cfg, out=out, jobs=1, progress=False)
        res = CliRunner().invoke(app, ["compact", str(out)])
        assert res.exit_code == 1 and f"process {holder.pid}" in res.output
        # A dry run writes nothing, but refuses as the run would (tests/experiments/test_plan.py: its words).
        with pytest.raises(StoreLockedError, match=rf"being written by process {holder.pid} "):
            run_experiment(cfg, out=out, dry_run=True)
    assert json.loads((out / ".lock").read_text())["pid"] == holder.pid  # the dead holder's file stays
    assert run_experiment(cfg, out=out, dry_run=True).pending_units == 2  # ...and is no live holder
    summary = run_experiment(cfg, out=out, jobs=1, progress=False)  # the kernel dropped the dead holder's lock
    assert summary.done_units == 2 and len(ResultStore(out).read()) == 2


@pytest.mark.slow
def test_two_runs_at_once_on_one_folder_lose_and_duplicate_nothing(tmp_path):
    # The first run's fits wait for a file the test writes once the second run is done: the two overlap
    # whatever the machine's load (a fixed sleep let the first finish before a slow second start).
    flag = tmp_path / "go"
    text = f"""name: two
datasets: [heart]
models:
  Slow: {{estimator: 'tests.helpers:WaitsFor', flag: '{flag}', grid: {{fail: [false]}}}}
protocol: {{folds: 4, repeats: 1, seed: 0}}
"""
    (tmp_path / "c.yaml").write_text(text)
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "eemrepro", "run", str(tmp_path / "c.yaml"), "--out", str(out), "--jobs", "1",
           "--quiet"]
    first = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (out / ".lock").exists() or not (out / "runs").exists():
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.05)
        second = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    finally:
        flag.write_text("")
    first.communicate(timeout=120)
    assert first.returncode == 0
    assert second.returncode == 1 and "is being written by process" in second.stderr
    assert "Traceback" not in second.stderr
    store = ResultStore(out)
    keys = [(r["fold"], json.dumps(r["params"])) for s in store.segments() for r in store.segment_records(s)]
    assert len(keys) == len(set(keys)) == 4


def test_gzip_segments_of_an_older_store_load_and_a_truncated_one_is_named(tmp_path):
    store = tmp_path / "s"
    (store / "records").mkdir(parents=True)
    seg = store / "records" / "20250101T000000-1.jsonl.gz"
    with gzip.open(seg, "wt") as fh:
        fh.write("".join(json.dumps(_record(i)) + "\n" for i in range(50)))
    with pytest.warns(StoreWarning, match="written before line checksums and not listed in SHA256SUMS"):
        assert len(ResultStore(store).read()) == 50  # read, but said to be unchecked (test_store_integrity.py)
    seg.write_bytes(seg.read_bytes()[:-20])
    with pytest.raises(StoreError, match=rf"{seg}: cannot be read"):
        ResultStore(store).read()


def test_same_values_tells_nan_and_types_apart():
    assert same_values({"a": [1.0, math.nan]}, {"a": [1.0, math.nan]})
    assert not same_values({"a": None}, {"a": 0})
    assert not same_values({"a": 1}, {"b": 1})
    assert not same_values(True, 1)


def test_status_counts_units_of_a_nested_run_and_names_failures(tmp_path):
    text = """name: st
datasets: [heart]
models:
  EEM: {estimator: EEM, activation: rbf, grid: {n_hidden: [5, 10]}}
  Bad: {estimator: 'tests.helpers:Sleepy', grid: {fail: [true]}}
protocol: {folds: 2, repeats: 1, seed: 0, selection: nested, inner_folds: 2}
"""
    (tmp_path / "c.yaml").write_text(text)
    out = tmp_path / "o"
    run_experiment(load_config(tmp_path / "c.yaml"), out=out, jobs=1, progress=False)
    res = CliRunner().invoke(app, ["status", str(out)])
    assert res.exit_code == 0, res.output
    # 2 outer folds x (1 outer + 2 inner units) per model, all stored; Bad's 6 fits failed.
    rows = {line.split()[1]: line.split() for line in res.output.splitlines() if line.startswith("heart")}
    assert rows["EEM"][2] == "6/6" and rows["Bad"][2] == "6/6" and rows["Bad"][5] == "6"
    assert "6 failed fits:" in res.output


def test_the_command_line_prints_a_damaged_store_as_one_warning_line(tmp_path):
    store = ResultStore(tmp_path / "s")
    store.append([_record(i) for i in range(3)])
    store.close()
    (store.records_dir / "20990101T000000-2.jsonl").write_text("garbage\n")
    res = subprocess.run([sys.executable, "-m", "eemrepro", "export", str(tmp_path / "s"), "--out",
                          str(tmp_path / "x.csv")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "wrote 3 records" in res.stdout
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("warning: ") and "20990101T000000-2.jsonl: skipped 1 damaged line(s) (line 1" in line


def test_a_batch_of_units_is_stored_in_one_write_and_one_fsync(tmp_path, monkeypatch):
    # The main process stores the units a worker hands back together with one fsync (issue 60: one a unit
    # bounded 64 workers on short units); each unit still counts, for an interrupt's "K of N units stored".
    import os

    from eemrepro.store import ResultStore
    from eemrepro.store import _store as store_module

    synced, real = [], os.fsync
    monkeypatch.setattr(store_module.os, "fsync", lambda fd: synced.append(fd) or real(fd))
    store = ResultStore(tmp_path / "s")
    units = [[_record(3 * f + h) for h in (0, 1)] for f in range(1, 4)]
    with store.writing():
        store.append([_record(0)])  # the segment opened (its folder synced too): the appends counted from here
        before = len(synced)
        store.append_units(units)
        assert store.appended == 4 and len(synced) == before + 1
        store.append([_record(13)])
        assert store.appended == 5 and len(synced) == before + 2
        store.close()
    assert len(store.read()) == 8
