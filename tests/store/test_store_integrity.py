"""Every record the store holds is checked, sealed or not: a write-ahead line carries its own sha256, an older
store's JSON-lines segment its sha256 in SHA256SUMS; what fails is skipped and named, never read as other
numbers."""

import csv
import gzip
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app
from eemrepro.store import DamagedSegmentError, ResultStore, StoreWarning, same_values, upgrade_store
from eemrepro.store._segments import not_a_record
from tests.helpers import killed_run as make_killed_run
from tests.helpers import store_record

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
@pytest.fixture(scope="module")
def killed_run(tmp_path_factory):
    """A results folder whose run finished every unit and died before sealing (``helpers.killed_run``)."""
    return make_killed_run(tmp_path_factory.mktemp("killed"))


def _copy(killed_run, tmp_path):
    out = tmp_path / "o"
    shutil.copytree(killed_run, out)
    (wal,) = (out / "records").glob("*.jsonl")
    return out, wal


def _edit_gmean(wal, number=2, value=0.999):
    """Change one number of line ``number`` by hand (as an editor would: the line stays a valid record)."""
    lines = wal.read_text().splitlines(keepends=True)
    line = lines[number - 1]
    old = re.search(r'"gmean": ([0-9.e-]+)', line)
    edited = line[:old.start(1)] + repr(value) + line[old.end(1):]
    record = json.loads(edited)
    assert not_a_record(record) is None and record["metrics"]["gmean"] == value  # still a record: only its sum fails
    lines[number - 1] = edited
    wal.write_text("".join(lines))
    return record


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an intact store reads without a warning
        return fn(*args)


@pytest.mark.slow
def test_a_number_edited_in_a_killed_runs_segment_is_not_read_and_is_named_by_file_and_line(killed_run, tmp_path):
    out, wal = _copy(killed_run, tmp_path)
    before = _quiet(read_results, out)
    assert len(before) == 3
    edited = _edit_gmean(wal, number=2)
    with pytest.warns(StoreWarning) as caught:
        after = read_results(out)
    # One store warning, naming the line. (Only the store's are counted: a ResourceWarning that garbage collection
    # raises meanwhile for a socket an earlier test left, as in a full run after a failed Dask test, is not this
    # read's.)
    (message,) = [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]
    assert f"{wal}: skipped 1 damaged line(s) (line 2;" in message and "line_sha256 does not match" in message
    # The other two records as written; the edited one is not read at all (its fold is missing, not changed).
    assert len(after) == 2 and edited["fold"] not in set(after["fold"])
    kept = before[before["fold"] != edited["fold"]].reset_index(drop=True)
    assert after.sort_values("fold")["gmean"].tolist() == kept.sort_values("fold")["gmean"].tolist()
    assert edited["metrics"]["gmean"] not in set(after["gmean"])

    # The tables, as a user builds them: one warning line naming the file and line; the cell lost a fold, so it
    # is incomplete, never a mean taken over the edited number.
    proc = subprocess.run([sys.executable, "-m", "eemrepro", "tables", str(out), "--format", "csv", "--out",
                           str(tmp_path / "t")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert line.startswith(f"warning: {wal}: skipped 1 damaged line(s) (line 2;"), line
    table = tmp_path / "t" / "eem_table4_gmean.csv"  # (beside it, benchmark_gmean.csv: the same cell)
    rows = list(csv.DictReader(io.StringIO("".join(ln for ln in table.read_text().splitlines(keepends=True)
                                                   if not ln.startswith("#")))))
    (row,) = [r for r in rows if r["method"] == "Centroid"]
    assert row["status"] == "incomplete" and row["gmean"] == ""
    # The reference: the same table over the unedited store is the mean of its three folds' GMean (numpy).
    shutil.copy(killed_run / "records" / wal.name, wal)
    proc = subprocess.run([sys.executable, "-m", "eemrepro", "tables", str(out), "--format", "csv", "--out",
                           str(tmp_path / "t")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr
    rows = list(csv.DictReader(io.StringIO("".join(ln for ln in table.read_text().splitlines(keepends=True)
                                                   if not ln.startswith("#")))))
    (row,) = [r for r in rows if r["method"] == "Centroid"]
    assert row["status"] == "ok" and float(row["gmean"]) == pytest.approx(100 * np.mean(before["gmean"]), abs=1e-3)


def test_store_verify_fails_naming_the_edited_line(killed_run, tmp_path):
    out, wal = _copy(killed_run, tmp_path)
    result = runner.invoke(app, ["store", "verify", str(out)])
    assert result.exit_code == 0, result.output  # intact: its lines' checksums match
    _edit_gmean(wal, number=3)
    result = runner.invoke(app, ["store", "verify", str(out)])
    assert result.exit_code == 1
    assert f"FAIL {wal}: 1 damaged line(s) (line 3: its line_sha256 does not match its content" in result.output


def test_compact_moves_the_edited_line_to_the_damaged_file_and_seals_the_rest(killed_run, tmp_path):
    out, wal = _copy(killed_run, tmp_path)
    before = _quiet(read_results, out)
    _edit_gmean(wal, number=1)
    edited_line = wal.read_text().splitlines(keepends=True)[0]
    with pytest.warns(StoreWarning, match=re.escape(f"{wal}: skipped 1 damaged line(s) (line 1;")):
        result = runner.invoke(app, ["compact", str(out)])
    assert result.exit_code == 0, result.output
    assert not wal.exists() and [p.suffix for p in ResultStore(out).segments()] == [".parquet"]
    assert (out / f"damaged-{wal.stem}.jsonl").read_text() == edited_line  # kept aside, byte for byte
    after = _quiet(read_results, out)  # sealed: nothing damaged is left to warn of
    edited = json.loads(edited_line)
    kept = before[before["fold"] != edited["fold"]]
    assert sorted(after["gmean"]) == sorted(kept["gmean"]) and len(after) == 2
    assert runner.invoke(app, ["store", "verify", str(out)]).exit_code == 0


@pytest.mark.parametrize("damage, why", [
    (lambda line: re.sub(r', "line_sha256": "[0-9a-f]{64}"\}\n$', "}\n", line), "no line_sha256 at its end"),
    (lambda line: line.replace('"line_sha256": "', '"line_sha256": "0', 1), "no line_sha256 at its end"),
    (lambda line: line[:-10] + "\n", "no line_sha256 at its end"),  # cut short, a line end written after
    (lambda line: line.replace("heart", "HEART", 1), "does not match its content"),
])
def test_a_line_whose_checksum_was_removed_or_broken_is_damaged_not_read_unchecked(killed_run, tmp_path, damage, why):
    # Taking the checksum off a line (or damaging it) must not turn the line into an older store's unchecked one.
    out, wal = _copy(killed_run, tmp_path)
    lines = wal.read_text().splitlines(keepends=True)
    lines[1] = damage(lines[1])
    wal.write_text("".join(lines))
    with pytest.warns(StoreWarning) as caught:
        records = ResultStore(out).read()
    assert len(records) == 2
    (message,) = [str(w.message) for w in caught]
    assert "1 damaged line(s) (line 2;" in message and why in message, message


def test_a_write_ahead_line_is_one_json_object_whose_sha256_is_of_the_record_as_written(tmp_path):
    # The format, from the bytes on disk: the record as canonical JSON (sort_keys), then its sha256 (hashlib) as
    # the last field; a user can check a line with any JSON tool and sha256sum.
    record = {"dataset": "heart", "model": "M", "params": {"C": 1.0}, "repeat": 0, "fold": 0, "inner": None,
              "status": "ok", "metrics": {"gmean": 0.75}, "note": "é", "identity": {"kind": "grid-search"}}
    store = ResultStore(tmp_path / "s")
    store.append([record])
    store.close(seal=False)
    (line,) = store._wal.read_text().splitlines()
    parsed = json.loads(line)
    digest = parsed.pop("line_sha256")
    assert parsed == record
    assert digest == hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()
    assert _quiet(store.read) == [record]


def _frame_rows(df):
    """A frame's rows as plain values (categorical or not), for comparing frames read differently."""
    return [tuple(None if (v is None or (isinstance(v, float) and np.isnan(v))) else v for v in row)
            for row in df.astype(object).itertuples(index=False, name=None)]


def test_every_single_changed_byte_of_a_line_makes_it_damaged():
    # Exhaustive over one real line: any one character changed (record, key, checksum, braces, line end) and the
    # line is not read; a sha256 over the record's JSON leaves no position unchecked.
    from eemrepro.store._segments import checked_line, parse_lines

    line = checked_line(store_record(3, "heart", note="a \\ \"quoted\" note", dcs=[0.25, None]))
    (record,), damaged = parse_lines("seg.jsonl", [line], checked=True)
    assert damaged == [] and same_values(record, store_record(3, "heart", note='a \\ "quoted" note', dcs=[0.25, None]))
    for i, c in enumerate(line):
        changed = line[:i] + ("x" if c != "x" else "y") + line[i + 1:]
        records, damaged = parse_lines("seg.jsonl", [changed], checked=True)
        assert records == [] and len(damaged) == 1, (i, changed)


# -- older segments (no line checksums) ---------------------------------------------------------------------------
def _old_store(tmp_path, n=4):
    """A store of an older version: a JSON-lines segment (gzip) of records without line checksums."""
    root = tmp_path / "old"
    (root / "records").mkdir(parents=True)
    seg = root / "records" / "20250101T000000-1.jsonl.gz"
    records = [store_record(i, "heart") for i in range(n)]
    with gzip.open(seg, "wt") as fh:
        fh.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    return root, seg, records


def test_an_older_segment_without_line_checksums_is_read_with_a_warning_until_it_is_listed_or_sealed(tmp_path):
    root, seg, records = _old_store(tmp_path)
    # Unlisted: read (an older store still loads), with a warning that nothing checks it; verify fails on it.
    with pytest.warns(StoreWarning, match=re.escape(f"{seg}: written before line checksums and not listed in "
                                                    "SHA256SUMS: its 4 record(s) cannot be verified")):
        assert len(ResultStore(root).read()) == 4
    result = runner.invoke(app, ["store", "verify", str(root)])
    assert result.exit_code == 1 and f"FAIL {seg}: written before line checksums" in result.output
    # Listed in SHA256SUMS (as .ci/quick-baseline's is): verified whole, read without a warning.
    (root / "records" / "SHA256SUMS").write_text(f"{hashlib.sha256(seg.read_bytes()).hexdigest()}  {seg.name}\n")
    assert all(same_values(a, b) for a, b in zip(_quiet(ResultStore(root).read), records, strict=True))
    assert runner.invoke(app, ["store", "verify", str(root)]).exit_code == 0
    # ... and a listed one whose bytes changed is refused whole, by readers and by verify.
    good = seg.read_bytes()
    with gzip.open(seg, "wt") as fh:
        fh.write("".join(json.dumps(r, sort_keys=True).replace("0.5", "0.6") + "\n" for r in records))
    with pytest.raises(DamagedSegmentError, match=re.escape(f"{seg}: damaged (its sha256 is not the one recorded")):
        read_results(root)
    result = runner.invoke(app, ["store", "verify", str(root)])
    assert result.exit_code == 1 and f"FAIL {seg}: damaged: its sha256 is not the one recorded" in result.output
    with pytest.raises(DamagedSegmentError):
        upgrade_store(root)  # never sealed as it is now
    seg.write_bytes(good)
    # Sealed by upgrade: a checksummed Parquet, the old entry dropped, the same records.
    upgrade_store(root)
    assert (root / "records" / "SHA256SUMS").read_text().count("\n") == 1 and seg.name not in \
        (root / "records" / "SHA256SUMS").read_text()
    assert all(same_values(a, b) for a, b in zip(_quiet(ResultStore(root).read), records, strict=True))
    assert runner.invoke(app, ["store", "verify", str(root)]).exit_code == 0


def test_the_committed_older_store_is_listed_verified_and_reads_without_a_warning():
    baseline = ROOT / ".ci" / "quick-baseline"
    result = runner.invoke(app, ["store", "verify", str(baseline)])
    assert result.exit_code == 0, result.output
    assert len(_quiet(read_results, baseline)) == 400


# -- a frame read a group of data sets at a time -----------------------------------------------------------------
def test_groups_of_data_sets_read_from_sealed_and_unsealed_segments_count_each_record_once(tmp_path):
    # A sealed segment and a live (unsealed) one, each with records of three data sets, one unit retried in the
    # live one: each group's frame is the whole frame cut to its data sets, and the grouped provenance counts
    # every record once (8 written, one retried: 7).
    from eemrepro.reports import Records

    root = tmp_path / "s"
    store = ResultStore(root)
    store.append([store_record(i, d) for i, d in enumerate(["heart", "sonar", "wine", "heart"])])
    store.close()
    store = ResultStore(root)
    store.append([store_record(i, d) for i, d in ((4, "wine"), (5, "sonar"), (6, "heart"))])
    store.append([store_record(0, "heart", status="failed")])  # fold 0 of heart again: the latest wins
    store.close(seal=False)
    assert sorted(p.suffix for p in ResultStore(root).segments()) == [".jsonl", ".parquet"]
    whole, prov = Records([root]).read()
    assert len(whole) == 7 and prov["records"] == 7
    results = Records([root], budget=3)
    assert results.groups == [["heart"], ["sonar"], ["wine"]]
    for group, frame in zip(results.groups, results, strict=True):
        expected = whole[whole["dataset"].isin(group)].reset_index(drop=True)
        shared = [c for c in whole.columns if c in frame]
        assert _frame_rows(frame[shared]) == _frame_rows(expected[shared]), group
        assert len(frame) == {"heart": 3, "sonar": 2, "wine": 2}[group[0]]
    assert results.provenance == prov
    for group in results.groups:  # and the store's own frame of a group, as a reader asks for it
        some = ResultStore(root).frame(["status", "metrics"], datasets=set(group))
        cut = ResultStore(root).frame(["status", "metrics"])
        cut = cut[cut["dataset"].isin(group)].reset_index(drop=True)
        assert _frame_rows(some) == _frame_rows(cut)
        pd.testing.assert_series_equal(some["status"].astype(str), cut["status"].astype(str))


@pytest.mark.parametrize("column, hide, what", [
    ("metrics.gmean", "keys", "metrics.keys"),
    ("metrics.gmean", "fields", "fields"),
    ("n_train", "fields", "fields"),
])
def test_store_verify_names_a_record_whose_key_lists_leave_out_a_column_it_holds(killed_run, tmp_path, column, hide,
                                                                                 what):
    """A value edited by hand with its name taken out of the record's key lists, the segment sealed again by the
    store's own sealing (every checksum matches): the reports read the value, the record as written has it not.
    ``store verify`` names the segment, the row and the column."""
    from tests.helpers import hand_edit_sealed

    out, _ = _copy(killed_run, tmp_path)
    assert runner.invoke(app, ["compact", str(out)]).exit_code == 0
    (segment,) = ResultStore(out).segments()
    assert runner.invoke(app, ["store", "verify", str(out)]).exit_code == 0
    hand_edit_sealed(out, "Centroid", 1, json.dumps({"fail": False}), column, 0.97 if "." in column else 7, hide=hide)
    result = runner.invoke(app, ["store", "verify", str(out)])
    assert result.exit_code == 1, result.output
    (fail,) = [ln for ln in result.output.splitlines() if ln.startswith("FAIL")]
    assert fail.startswith(f"FAIL {segment}: 1 record(s) whose key lists and columns disagree (row ")
    held = "metrics.auc, metrics.bac, metrics.error and metrics.gmean, which its columns hold" \
        if (column, hide) == ("metrics.gmean", "fields") else f"{column}, which its column holds"
    assert f"its {what} leave out {held}" in fail, fail


def test_store_verify_names_a_field_whose_column_was_dropped_and_readers_do_not_crash(killed_run, tmp_path):
    """A column dropped by hand (``df.drop(columns=...)``) while the records' ``fields`` still name it: ``store
    verify`` names it; the records read it as None, as the frame does (no KeyError)."""
    import pyarrow.parquet as pq

    from eemrepro.store._store import write_parquet

    out, _ = _copy(killed_run, tmp_path)
    assert runner.invoke(app, ["compact", str(out)]).exit_code == 0
    (segment,) = ResultStore(out).segments()
    write_parquet(pq.read_table(segment).drop_columns(["n_train"]), segment)
    result = runner.invoke(app, ["store", "verify", str(out)])
    assert result.exit_code == 1
    assert f"FAIL {segment}: 3 record(s) whose key lists and columns disagree (row 1: its fields name 'n_train', " \
           "which has no column;" in result.output, result.output
    assert [r["n_train"] for r in ResultStore(out).segment_records(segment)] == [None] * 3


def _flip_a_byte(path, at=200):
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("command", [["compact"], ["store", "upgrade"]])
@pytest.mark.parametrize("where", ["records", "superseded"])
def test_compact_and_upgrade_refuse_a_store_with_a_damaged_sealed_segment_naming_it_and_change_nothing(
        killed_run, tmp_path, command, where):
    """A sealed segment whose bytes are not those sealed (bit rot, a bad copy), in the records or in what a run
    moved aside, beside a killed run's write-ahead segment: ``compact`` and ``store upgrade`` said "0 segment(s)"
    and exit 0. They refuse as the readers do, naming the damaged segment, exit 1, and change no file."""
    out, _ = _copy(killed_run, tmp_path)
    assert runner.invoke(app, ["compact", str(out)]).exit_code == 0
    (sealed,) = ResultStore(out).segments()
    if where == "superseded":
        aside = out / "superseded-20260101T000000"
        aside.mkdir()
        shutil.move(sealed, aside / sealed.name)
        shutil.move(out / "records" / "SHA256SUMS", aside / "SHA256SUMS")
        sealed = aside / sealed.name
    _flip_a_byte(sealed)
    store = ResultStore(out)  # a later run, killed too: its records only in its write-ahead segment
    with store.writing("a killed run"):
        store.run_id = store.new_run_id()
        store.append([store_record(0, "heart")])
        store.close(seal=False)
    def files():  # (the lock file says who held the folder last: it is not the store's)
        return {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".lock"}

    before = files()
    result = runner.invoke(app, [*command, str(out)])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"error: {sealed}: damaged (its sha256 is not the one recorded in ") \
        and result.output.count("\n") == 1, result.output
    assert files() == before


def test_upgrade_refuses_an_older_segment_whose_listed_sha256_does_not_match_and_changes_nothing(tmp_path):
    """.ci/quick-baseline's JSON-lines segment is listed in its SHA256SUMS: damaged, ``store upgrade`` names it and
    seals nothing (the neighbour of a damaged sealed segment)."""
    out = shutil.copytree(ROOT / ".ci" / "quick-baseline", tmp_path / "q")
    (segment,) = [p for p in (out / "records").iterdir() if p.name.endswith(".jsonl.gz")]
    _flip_a_byte(segment, at=-20)
    before = sorted(p.name for p in (out / "records").iterdir())
    result = runner.invoke(app, ["store", "upgrade", str(out)])
    assert result.exit_code == 1 and result.output.startswith(f"error: {segment}: damaged (its sha256 is not the one "
                                                              "recorded in"), result.output
    assert sorted(p.name for p in (out / "records").iterdir()) == before
