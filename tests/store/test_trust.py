"""Results you can trust: each probe is what a user would do, and each failed before its fix (issue 51).

Expected numbers come from a clean run of the same config into a fresh folder
(the independent reference), never from a stored value.
"""

import json
import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app
from eemrepro.store import StoreWarning

runner = CliRunner()

GRID_CONFIG = """name: shrink
datasets: [heart]
models:
  EEMrbf: {{estimator: EEM, activation: rbf, grid: {{n_hidden: {grid}}}}}
protocol: {{folds: 3, repeats: 1, seed: 5}}
"""


def _run(cfg, out, *extra):
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet", *extra])
    assert result.exit_code == 0, result.output
    return result


def _selected(out, tmp_path, name):
    """(selected point, GMean) of heart/EEMrbf in ``eemrepro tables OUT`` (the CSV it writes)."""
    tables = tmp_path / name
    result = runner.invoke(app, ["tables", str(out), "--out", str(tables), "--format", "csv"])
    assert result.exit_code == 0, result.output
    df = pd.read_csv(tables / "eem_table4_gmean.csv", comment="#")
    row = df[(df["dataset"] == "heart") & (df["method"] == "EEMrbf")].iloc[0]
    return json.loads(row["point"]), float(row["gmean"]), result.output


# -- 1. a shrunk grid never selects a removed point ----------------------------------------------------------
def test_a_shrunk_grid_selects_only_the_points_the_config_has_now(tmp_path):
    cfg, out = tmp_path / "shrink.yaml", tmp_path / "out"
    cfg.write_text(GRID_CONFIG.format(grid="[10, 40]"))
    _run(cfg, out)
    chosen, _, _ = _selected(out, tmp_path, "t1")
    # Take the selected point out of the grid: what is left must be selected, as a clean run of the new config.
    kept = 10 if chosen["n_hidden"] == 40 else 40
    cfg.write_text(GRID_CONFIG.format(grid=f"[{kept}]"))
    result = _run(cfg, out)
    assert "ran 0 of 0 pending units" in result.stdout
    assert "kept in" in result.stdout and "3 record(s) of grid points the config no longer has" in result.stdout
    point, gmean, output = _selected(out, tmp_path, "t2")
    clean = tmp_path / "clean"
    _run(cfg, clean)
    clean_point, clean_gmean, _ = _selected(clean, tmp_path, "t3")
    assert point == clean_point == {"n_hidden": kept}
    assert gmean == pytest.approx(clean_gmean, abs=1e-9)
    # Nothing was deleted: the removed point's records are still in the store, and the table says it left them out.
    assert len(read_results(out)) == 6
    table = (tmp_path / "t2" / "eem_table4_gmean.csv").read_text()
    assert "3 record(s) of grid points the config no longer has" in table


# -- 2. a gate cannot pass on nothing --------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["check"], ["tables", "--out", "{tmp}/t"], ["figures", "--out", "{tmp}/f"],
                                     ["report", "--out", "{tmp}/r"], ["export", "--out", "{tmp}/e.csv"]])
def test_reports_and_gates_over_a_folder_without_records_fail(tmp_path, command):
    (tmp_path / "results" / "uci" / "records").mkdir(parents=True)
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "results", tmp_path / "empty"):
        args = [command[0], str(folder), *(a.format(tmp=tmp_path) for a in command[1:])]
        result = runner.invoke(app, args)
        assert result.exit_code != 0, result.output
        assert result.exit_code != 1 or command[0] != "check"  # 1 means "a cell drifted"
        assert "no records in" in result.output or "not a results folder" in result.output
        if folder.name == "results":
            assert str(tmp_path / "results" / "uci") in result.output  # names the stores inside
        assert len(result.output.strip().splitlines()) == 1


# -- 12. the Python API validates its arguments -----------------------------------------------------------------
def test_read_results_validates_its_arguments(tmp_path):
    cfg, out = tmp_path / "shrink.yaml", tmp_path / "out"
    cfg.write_text(GRID_CONFIG.format(grid="[10]"))
    _run(cfg, out)
    with pytest.raises(ValueError, match="at least one results folder"):
        read_results([])
    with pytest.raises(TypeError, match=re.escape("columns=['gmean']")):
        read_results(out, columns="gmean")
    with pytest.raises(ValueError, match="no column.*'gmaen'.*the columns are: .*gmean"):
        read_results(out, columns=["gmaen"])
    assert read_results(out, columns=["gmean"])["gmean"].notna().all()


# -- 3. the latest record wins whatever the clock says ---------------------------------------------------------
RETRY_CONFIG = """name: retry
datasets: [heart]
models:
  Flaky: {{estimator: 'tests.helpers:FailWhile', flag: '{flag}', grid: {{delay: [0.0]}}}}
protocol: {{folds: 5, repeats: 2, seed: 1}}
"""


def _cli(args, tz):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-m", "eemrepro", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "TZ": tz, "PYTHONPATH": str(root)}, timeout=300)


@pytest.mark.slow
def test_a_retry_under_a_clock_that_went_back_wins(tmp_path):
    flag = tmp_path / "broken"
    flag.touch()
    cfg, out = tmp_path / "retry.yaml", tmp_path / "out"
    cfg.write_text(RETRY_CONFIG.format(flag=flag))
    # The first run 12 hours ahead of UTC, the retry 12 hours behind it: its local time stamp is a day earlier.
    first = _cli(["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"], "Etc/GMT-12")
    assert first.returncode == 0 and "10 failed" in first.stdout, first.stdout + first.stderr
    flag.unlink()
    retry = _cli(["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet", "--retry-failed"], "Etc/GMT+12")
    assert retry.returncode == 0 and "10 ok" in retry.stdout, retry.stdout + retry.stderr
    df = read_results(out, columns=["status"])
    assert len(df) == 10 and (df["status"] == "ok").all()
    status = _cli(["status", str(out)], "UTC")
    assert "failed fits" not in status.stdout
    again = _cli(["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet", "--retry-failed"], "UTC")
    assert "ran 0 of 0 pending units" in again.stdout, again.stdout + again.stderr


def test_segments_of_a_store_written_before_sequences_keep_their_order_and_come_first(tmp_path):
    from eemrepro.store import ResultStore

    def rec(status):
        return {"dataset": "d", "model": "m", "params": {"C": 1}, "repeat": 0, "fold": 0, "inner": None,
                "status": status, "metrics": {"gmean": 0.5}, "identity": {}}

    store = ResultStore(tmp_path / "s")
    for run_id, status in (("20990101T000000-1", "failed"), ("20990102T000000-1", "timed-out")):
        store.run_id = run_id  # an older store's ids: local time stamps
        store.append([rec(status)])
        store.close()
        store = ResultStore(tmp_path / "s")
    assert read_results(tmp_path / "s")["status"].tolist() == ["timed-out"]  # by stamp, as before
    store.append([rec("ok")])  # a new run: sequenced, after every stamped one whatever their dates
    store.close()
    assert store.run_id.startswith("s000001-")
    assert read_results(tmp_path / "s")["status"].tolist() == ["ok"]


# -- 4. a damaged segment is named and refused, never read as other data ------------------------------------------
def _one_run(tmp_path, grid="[10, 40]"):
    cfg, out = tmp_path / "shrink.yaml", tmp_path / "out"
    cfg.write_text(GRID_CONFIG.format(grid=grid))
    _run(cfg, out)
    return cfg, out


def test_a_flipped_bit_in_a_sealed_segment_is_refused_by_every_reader_and_named_by_verify(tmp_path):
    _, out = _one_run(tmp_path)
    (segment,) = (out / "records").glob("*.parquet")
    assert runner.invoke(app, ["store", "verify", str(out)]).exit_code == 0
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0x10  # one bit in the middle of the column data
    segment.write_bytes(bytes(data))
    for args in (["tables", str(out), "--out", str(tmp_path / "t")], ["check", str(out)],
                 ["export", str(out), "--out", str(tmp_path / "e.csv")], ["status", str(out)]):
        result = runner.invoke(app, args)
        assert result.exit_code not in (0, 1) or args[0] != "check"
        assert result.exit_code != 0, (args, result.output)
        assert f"{segment}: damaged" in result.output, (args, result.output)
    result = runner.invoke(app, ["store", "verify", str(out)])
    assert result.exit_code == 1 and f"FAIL {segment}: damaged" in result.output
    # A segment removed by hand is a lost segment to verify.
    segment.unlink()
    result = runner.invoke(app, ["store", "verify", str(out)])
    assert result.exit_code == 1 and "listed in SHA256SUMS but missing: a lost segment" in result.output


def test_upgrade_records_checksums_of_an_older_store_without_rewriting_it(tmp_path):
    from eemrepro.store._files import SUMS

    _, out = _one_run(tmp_path)
    (segment,) = (out / "records").glob("*.parquet")
    before = segment.read_bytes()
    (out / "records" / SUMS).unlink()  # as a store sealed before checksums
    result = runner.invoke(app, ["store", "verify", str(out)])
    assert result.exit_code == 1 and "no sha256 recorded" in result.output
    frame = read_results(out)
    assert runner.invoke(app, ["store", "upgrade", str(out)]).exit_code == 0
    assert segment.read_bytes() == before
    assert runner.invoke(app, ["store", "verify", str(out)]).exit_code == 0
    pd.testing.assert_frame_equal(read_results(out), frame)


# -- 6. a damaged run file is named and skipped ---------------------------------------------------------------
@pytest.mark.parametrize("content", ["", "{}", '{"config": '])
def test_a_damaged_run_file_is_named_and_the_rest_still_reports(tmp_path, content):
    cfg, out = _one_run(tmp_path)
    (run_file,) = (out / "runs").glob("*.json")
    run_file.write_text(content)
    with pytest.warns(StoreWarning, match=re.escape(f"{run_file}: not a run file")):
        result = runner.invoke(app, ["tables", str(out), "--out", str(tmp_path / "t")])
        assert result.exit_code == 0, result.output
        result = runner.invoke(app, ["check", str(out)])
        assert result.exit_code in (0, 1) and "within tolerance" in result.output, result.output
        assert "EEMrbf" in _run(cfg, out).stdout  # nothing pending, and its table still prints
    result = runner.invoke(app, ["store", "verify", str(out)])
    assert result.exit_code == 1 and f"FAIL {run_file}: not a run file" in result.output


def test_a_damaged_run_file_is_a_one_line_warning_in_the_terminal(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    _, out = _one_run(tmp_path)
    (run_file,) = (out / "runs").glob("*.json")
    run_file.write_text("{}")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "eemrepro", "tables", str(out), "--out", str(tmp_path / "t")],
                          capture_output=True, text=True, cwd=root)
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if str(run_file) in ln]
    assert line.startswith("warning: ") and "not a run file (no config in it); skipped" in line


# -- 9. readers see one consistent state while a writer seals -------------------------------------------------
@pytest.mark.slow
def test_readers_racing_seals_and_compaction_see_every_record_once(tmp_path):
    # A reader reads in a loop while the writer appends, seals and compacts (the race). The two are synchronised
    # by counting reads, never by sleeping: after each write the writer waits for a read that started after the
    # write to finish, so every state is read at least once whatever the machine's load (a read under way while
    # the next write seals or compacts is the race under test).
    import threading

    from eemrepro.store import ResultStore

    def rec(i):
        return {"dataset": "d", "model": "m", "params": {"C": i}, "repeat": 0, "fold": 0, "inner": None,
                "status": "ok", "metrics": {"gmean": i / 100}, "identity": {}}

    root = tmp_path / "s"
    root.mkdir()
    seen, errors, stop = [], [], threading.Event()
    reads = threading.Condition()
    count = {"started": 0, "finished": 0}

    def read():
        while not stop.is_set():
            with reads:
                count["started"] += 1
                mine = count["started"]
            try:
                df = ResultStore(root).frame(["gmean"])
            except Exception as exc:  # noqa: BLE001  (any failure is the test's finding)
                errors.append(exc)
            else:
                # A write-ahead file just opened holds no record yet: no gmean column.
                seen.append(sorted(df["gmean"].round(2).tolist()) if "gmean" in df else [])
            with reads:
                count["finished"] = mine
                reads.notify_all()
            if errors:
                return

    def a_read_after_this_write():
        with reads:
            after = count["started"] + 1
            # Not a timing: a reader stuck for a minute is a hang, reported as such.
            if not reads.wait_for(lambda: count["finished"] >= after or errors, timeout=60):
                raise AssertionError("the reader made no progress in 60 s")

    n = 40
    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(n):
            store = ResultStore(root)
            store.append([rec(i)])
            if i % 2:
                store.close()  # sealed at once
            else:
                store.close(seal=False)
                ResultStore(root).compact()  # sealed by compact
            a_read_after_this_write()
            if errors:
                break
    finally:
        stop.set()
        reader.join()
    assert not errors, errors[0]
    # Every state was read (each write's, one to n records), and every state read is a prefix of the writes:
    # never a record twice, never one skipped.
    assert set(range(1, n + 1)) <= {len(s) for s in seen}
    assert all(s == [i / 100 for i in range(len(s))] for s in seen)


# -- 11. moving aside never replaces a file ----------------------------------------------------------------------
def test_two_forgets_within_one_second_keep_both_sets_of_records(tmp_path, monkeypatch):
    import time

    from eemrepro.store import ResultStore

    def rec(model, fold):
        return {"dataset": "d", "model": model, "params": {}, "repeat": 0, "fold": fold, "inner": None,
                "status": "ok", "metrics": {"gmean": 0.5}, "identity": {}}

    store = ResultStore(tmp_path / "s")
    store.append([rec(m, f) for m in ("a", "b") for f in range(3)])
    store.close()
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: "20300101T000000")  # the same second, twice
    first = ResultStore(tmp_path / "s").forget(models=["a"])
    second = ResultStore(tmp_path / "s").forget(models=["b"])
    assert first[0] == second[0] == 3 and first[1] != second[1]
    aside = sum(len(ResultStore(p.parent).segment_records(s)) for p in (first[1], second[1])
                for s in p.glob("*.parquet"))
    assert aside == 6


# -- 5. touch only what the tool made -------------------------------------------------------------------------
def test_run_refuses_a_folder_it_did_not_make_and_the_root(tmp_path):
    cfg = tmp_path / "shrink.yaml"
    cfg.write_text(GRID_CONFIG.format(grid="[10]"))
    mine = tmp_path / "mine"
    (mine / "records").mkdir(parents=True)
    (mine / "config.yaml").write_text("my own notes\n")
    (mine / "records" / "log.jsonl").write_text('{"not": "a record"}\n')
    for out in (mine, "/"):
        result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"])
        assert result.exit_code == 1 and "Traceback" not in result.output
    assert (mine / "config.yaml").read_text() == "my own notes\n"
    result = runner.invoke(app, ["compact", str(mine)])
    assert result.exit_code == 1 and "not an eemrepro results folder" in result.output
    assert (mine / "records" / "log.jsonl").exists() and not list((mine / "records").glob("*.parquet"))


@pytest.mark.parametrize("name", ["config.yaml", ".lock", "records", "runs"])
def test_a_link_inside_a_results_folder_is_never_written_through(tmp_path, name):
    import shutil

    cfg, out = _one_run(tmp_path, grid="[10]")
    target = tmp_path / "elsewhere"
    if (out / name).is_dir():  # a folder of the store moved elsewhere and linked back
        shutil.move(str(out / name), str(target))
    else:
        target.write_text("precious\n")
        (out / name).unlink(missing_ok=True)
    (out / name).symlink_to(target)
    before = sorted(p.name for p in target.iterdir()) if target.is_dir() else target.read_text()
    cfg.write_text(GRID_CONFIG.format(grid="[10, 40]"))  # something to run, and so to write
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"])
    assert result.exit_code == 1 and "symbolic link" in result.output and name in result.output, result.output
    assert (sorted(p.name for p in target.iterdir()) if target.is_dir() else target.read_text()) == before


def test_an_out_path_with_a_colon_is_a_local_folder_not_a_uri(tmp_path, monkeypatch):
    cfg = tmp_path / "shrink.yaml"
    cfg.write_text(GRID_CONFIG.format(grid="[10]"))
    monkeypatch.chdir(tmp_path)
    for out in ("a:b", f"file:{tmp_path}/uri"):
        result = runner.invoke(app, ["run", str(cfg), "--out", out, "--jobs", "1", "--quiet"])
        assert result.exit_code == 0, result.output
        assert len(list((tmp_path / out / "records").glob("*.parquet"))) == 1
        assert len(read_results(tmp_path / out)) == 3
    assert not (tmp_path / "uri").exists()


def test_report_and_export_never_overwrite_a_file_they_did_not_write(tmp_path):
    _, out = _one_run(tmp_path, grid="[10]")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("my page\n")
    result = runner.invoke(app, ["report", str(out), "--out", str(site), "--no-figures"])
    assert result.exit_code == 1 and "eemrepro report did not write" in result.output
    assert (site / "index.html").read_text() == "my page\n"
    assert runner.invoke(app, ["report", str(out), "--out", str(site), "--no-figures", "--force"]).exit_code == 0
    assert runner.invoke(app, ["report", str(out), "--out", str(site), "--no-figures"]).exit_code == 0  # its own
    mine = tmp_path / "data.csv"
    mine.write_text("mine\n")
    result = runner.invoke(app, ["export", str(out), "--out", str(mine)])
    assert result.exit_code == 1 and "exists" in result.output and mine.read_text() == "mine\n"


# -- 7, 8, 10. nonsense refused before any unit runs, naming file, line and key -------------------------------
BAD_BASE = """name: bad
datasets: [{datasets}]
models:
  M: {{estimator: {estimator}, grid: {grid}}}
protocol: {{folds: {folds}, repeats: 1}}
"""


@pytest.mark.parametrize("fields, message", [
    # 7: not a classifier (KMeans would store every fit as ok with GMean 0)
    ({"estimator": "'sklearn.cluster:KMeans'", "grid": "{n_clusters: [2]}"},
     r"line 4: key 'models\.M\.estimator': 'sklearn\.cluster:KMeans' is not a scikit-learn classifier"),
    # 7: folds above the minority class (balance: 49 positives, the registry's class sizes)
    ({"datasets": "heart, balance", "folds": 50},
     r"line 5: key 'protocol\.folds': 50 folds, but data set balance has a class of 49 \(class sizes \[576, 49\]\)"),
    # 10: above every class of heart (120 and 150)
    ({"folds": 200}, r"key 'protocol\.folds': 200 folds, but data set heart has a class of 120"),
    # 8: a grid of 8.1 million points, counted before it is enumerated
    ({"estimator": "'sklearn.svm:SVC'",
      "grid": "{C: {log10: [-100, 100]}, gamma: {log10: [-100, 100]}, tol: {log10: [-100, 100]}}"},
     r"line 4: key 'models\.M\.grid': 8,120,601 grid points \(201 C x 201 gamma x 201 tol\); at most 100,000"),
    # 10: past the float range
    ({"grid": "{C: {log10: [0, 400]}}"}, r"key 'models\.M\.grid\.C': log10 exponents must lie in \[-307, 307\]"),
    # 10: a relative module
    ({"estimator": "'..:Foo'"}, r"key 'models\.M\.estimator': estimator '\.\.:Foo' is not 'package\.module:Class'"),
])
def test_nonsense_is_refused_before_anything_is_written(tmp_path, fields, message):
    values = {"datasets": "heart", "estimator": "SVM", "grid": "{C: [1.0]}", "folds": 3, **fields}
    cfg, out = tmp_path / "bad.yaml", tmp_path / "out"
    cfg.write_text(BAD_BASE.format(**values))
    for extra in (["--dry-run"], []):
        result = runner.invoke(app, ["run", str(cfg), "--out", str(out), *extra])
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert re.search(message, result.output) and str(cfg) in result.output, result.output
        assert result.output.count("\n") == 1
    assert not out.exists()


# -- 13. resume never takes records made from other data as done ---------------------------------------------------
def test_resume_reruns_the_units_whose_data_changed_and_only_those(tmp_path, monkeypatch):
    import eemrepro.datasets as datasets
    from eemrepro.experiments import load_config, run_experiment

    cfg = tmp_path / "two.yaml"
    cfg.write_text(GRID_CONFIG.format(grid="[10]").replace("[heart]", "[heart, sonar]"))
    config = load_config(cfg)
    out = tmp_path / "out"
    first = run_experiment(config, out=out, jobs=1, progress=False)
    assert first.total_units == 6 and run_experiment(config, out=out, dry_run=True, progress=False).pending_units == 0
    real = datasets.dataset_checksum

    def changed(name, **kw):  # heart's file changed (a new release of the data set, a fixed parser)
        return "0" * 64 if name == "heart" else real(name, **kw)

    monkeypatch.setattr(datasets, "dataset_checksum", changed)
    assert run_experiment(config, out=out, dry_run=True, progress=False).pending_units == 3
    again = run_experiment(config, out=out, jobs=1, progress=False)
    assert again.done_units == 3
    # heart's records are the second run's (the workers record the data they read), sonar's the first's.
    df = read_results(out, columns=["run_id"])
    runs = df.groupby("dataset", observed=True)["run_id"].agg(lambda r: set(r.astype(str)))
    assert len(runs["heart"]) == len(runs["sonar"]) == 1 and runs["heart"] != runs["sonar"]
    assert min(runs["sonar"]) < min(runs["heart"])


def test_the_three_spellings_of_a_record_key_agree():
    # What resume matches: a unit's keys (Unit.keys), a stored frame's (frame_keys) and a record's
    # (stored_key / record_key, the public spelling) must be the same strings, inner folds and all.
    from eemrepro.experiments import enumerate_units, load_config, run_experiment
    from eemrepro.experiments._units import frame_keys
    from eemrepro.store import ResultStore, record_key, stored_key

    text = GRID_CONFIG.format(grid="[10, 40]").replace("seed: 5}", "seed: 5, selection: nested, inner_folds: 2}")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        from pathlib import Path

        cfg = Path(tmp) / "keys.yaml"
        cfg.write_text(text)
        config = load_config(cfg)
        run_experiment(config, out=Path(tmp) / "o", jobs=1, progress=False)
        records = ResultStore(Path(tmp) / "o").read()
        frame = ResultStore(Path(tmp) / "o").frame(["status"])
        units = enumerate_units(config)
    unit_keys = sorted(k for u in units for k in u.keys())
    assert sorted(stored_key(r) for r in records) == unit_keys
    assert sorted(frame_keys(frame).tolist()) == unit_keys
    assert sorted(record_key(r["dataset"], r["model"], r["params"], r["repeat"], r["fold"], r["inner"])
                  for r in records) == unit_keys
    # 3 outer folds x 2 points x (1 outer + 2 inner records); inner keys end in the inner fold, outer ones in "-".
    assert len(unit_keys) == 18 and sum(k.endswith("|-") for k in unit_keys) == 6
    assert 'heart|EEMrbf|{"n_hidden": 40}|0|2|1' in unit_keys


def test_point_ids_and_identity_hashes_do_not_depend_on_key_order():
    # Closed forms: canonical JSON with sorted keys; the identity hash is the first 16 hex digits of its sha256
    # (what every committed store's records hold: changing either would make resume redo them all).
    import hashlib

    from eemrepro.store import identity_sha, point_id

    assert point_id({"gamma": 0.5, "C": 10.0}) == point_id({"C": 10.0, "gamma": 0.5}) == '{"C": 10.0, "gamma": 0.5}'
    identity = {"kind": "grid-search", "estimator": "EEM", "folds": 10}
    expected = hashlib.sha256(b'{"estimator": "EEM", "folds": 10, "kind": "grid-search"}').hexdigest()[:16]
    assert identity_sha(identity) == identity_sha(dict(reversed(identity.items()))) == expected
    assert len(expected) == 16
