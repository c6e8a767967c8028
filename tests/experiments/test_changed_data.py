"""A changed data file is named (issue 67, finding 6): which file, what changed, how many units run again and
where the old records went, in the dry run, the run and ``status``, for a user's file and a registry data set.

The user's report: after 10 rows were dropped from one CSV, the dry run said "400 already stored, 200 to run"
and the run "ran 200 of 200 pending units"; nothing named the file or said what became of its old records.
"""

import hashlib
import re
import subprocess
import sys
import textwrap

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app
from tests.helpers import blobs_frame

runner = CliRunner()


def _cli(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result, " ".join(result.output.split())


def _user_case(tmp_path):
    """Two CSVs of the user's (60 rows each), a logistic regression at two C, 3 folds x 2 repeats: 6 units and
    12 records per data set, stored in ``out``."""
    blobs_frame(60, seed=0).to_csv(tmp_path / "first.csv", index=False)
    blobs_frame(60, seed=1).to_csv(tmp_path / "second.csv", index=False)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent("""\
        name: mine
        datasets: [first, second]
        local_datasets:
          first: {file: first.csv, target: status}
          second: {file: second.csv, target: status}
        models:
          LR: {estimator: 'sklearn.linear_model:LogisticRegression', grid: {C: [0.1, 1]}}
        protocol: {folds: 3, repeats: 2, scaling: none}
        """))
    out = tmp_path / "out"
    result, _ = _cli("run", cfg, "--out", out, "--jobs", 1, "--quiet")
    assert result.exit_code == 0, result.output
    return cfg, out


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_users_file_with_rows_dropped_is_named_with_its_units_and_its_old_records(tmp_path):
    cfg, out = _user_case(tmp_path)
    csv = tmp_path / "second.csv"
    before = _sha(csv)
    lines = csv.read_text().splitlines(keepends=True)
    csv.write_text("".join(lines[:-6]))  # 6 rows dropped: 54 left (the header stays)
    after = _sha(csv)
    said = (f"data set second: {csv} changed since its records were made (data_sha256 "
            f"{_sha_of_dataset(before)[:12]} -> {_sha_of_dataset(after)[:12]}, rows 60 -> 54): its 6 unit(s) run again")

    # In a process of its own, as a user runs it: the folder's config.yaml, read for its repeats, registers its
    # data sets as recorded (the old checksum), which the run then refused as "changed since it was checksummed".
    dry = subprocess.run([sys.executable, "-m", "eemrepro", "run", str(cfg), "--out", str(out), "--dry-run"],
                         capture_output=True, text=True, timeout=120)
    text = " ".join(dry.stdout.split())
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert said in text, text
    assert f"its 12 old record(s) would move to {out}/superseded-<stamp>/" in text
    assert "6 already stored, 6 to run" in text  # first is untouched

    result, text = _cli("status", out)
    assert result.exit_code == 0, result.output
    assert said.replace("run again", "not done") in text, text
    assert f"a run moves its 12 old record(s) to {out}/superseded-<stamp>/" in text

    result, text = _cli("run", cfg, "--out", out, "--jobs", 1, "--quiet")
    assert result.exit_code == 0, result.output
    (aside,) = sorted(out.glob("superseded-*"))
    assert said in text and f"its 12 old record(s) moved to {aside}" in text, text
    df = read_results(out)
    second = df[df["dataset"] == "second"]
    # the store holds the records of the file as it is now, every one over its 54 rows (k-fold: train + test)
    assert len(second) == 12 and set(second["data_sha256"]) == {_sha_of_dataset(after)}
    assert set(second["n_train"] + second["n_test"]) == {54}
    old = pq.read_table(next(aside.glob("*.parquet"))).to_pandas()
    assert len(old) == 12 and set(old["dataset"]) == {"second"} and set(old["n_train"] + old["n_test"]) == {60}

    result, text = _cli("run", cfg, "--out", out, "--jobs", 1, "--dry-run")  # nothing changed since: no word
    assert result.exit_code == 0, (result.output, result.exception)
    assert "changed since" not in text and "12 already stored, 0 to run" in text, text


def _sha_of_dataset(file_sha):
    """A data set's checksum: the sha256 of its files' digests joined (``datasets._load._combined_checksum``)."""
    return hashlib.sha256(file_sha.encode()).hexdigest()


def test_a_registry_data_set_whose_file_changed_is_named_the_same_way(tmp_path):
    """Records made on other versions of heart's file (their data_sha256 set to two others, as two registry
    updates would leave them) are named by data set and file, each old checksum said, their units run again,
    their records moved aside."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: reg\ndatasets: [heart]\nmodels:\n  LR: {estimator: 'sklearn.linear_model:"
                   "LogisticRegression'}\nprotocol: {folds: 3, repeats: 1}\n")
    out = tmp_path / "out"
    assert _cli("run", cfg, "--out", out, "--jobs", 1, "--quiet")[0].exit_code == 0
    now = read_results(out)["data_sha256"].iloc[0]
    _restamp(out, "1" * 64, "0" * 64)
    result, text = _cli("run", cfg, "--out", out, "--jobs", 1, "--dry-run")
    assert result.exit_code == 0, result.output
    assert re.search(rf"data set heart: [^ ]*heart[^ ]* changed since its records were made \(data_sha256 "
                     rf"000000000000, 111111111111 -> {now[:12]}\): its 3 unit\(s\) run again; its 3 old record\(s\) would move "
                     rf"to {re.escape(str(out))}/superseded-<stamp>/", text), text
    result, text = _cli("run", cfg, "--out", out, "--jobs", 1, "--quiet")
    assert result.exit_code == 0 and "its 3 old record(s) moved to" in text, text
    assert set(read_results(out)["data_sha256"]) == {now}


def _restamp(out, *shas):
    """Every sealed record of ``out`` given one of ``shas`` as its data checksum, in turn (the first record the
    first), sealed again through the store's own writer (its SHA256SUMS line too)."""
    from eemrepro.store._store import write_parquet

    done = 0
    for path in sorted((out / "records").glob("*.parquet")):
        table = pq.read_table(path)
        i = table.schema.get_field_index("data_sha256")
        field = table.schema.field(i)
        stamps = [shas[(done + k) % len(shas)] for k in range(table.num_rows)]
        table = table.set_column(i, field, pa.array(stamps).cast(field.type))
        write_parquet(table, path)
        done += table.num_rows


def test_rerun_changed_moves_aside_the_changed_data_sets_cells_with_the_changed_settings_ones(tmp_path):
    """One data file edited (second) and the model's parameter on the other data set changed (first), then
    ``--rerun-changed``: the edited data set's old records are moved aside with the changed cell's, and the store
    holds only today's (a version that set aside the changed cells alone left the edited file's old records)."""
    cfg, out = _user_case(tmp_path)
    csv = tmp_path / "second.csv"
    csv.write_text("".join(csv.read_text().splitlines(keepends=True)[:-6]))
    cfg.write_text(cfg.read_text().replace("grid: {C: [0.1, 1]}}",
                                           "grid: {C: [0.1, 1]}, per_dataset: {first: {max_iter: 500}}}"))
    result, _ = _cli("run", cfg, "--out", out, "--jobs", 1, "--quiet", "--rerun-changed")
    assert result.exit_code == 0, result.output
    df = read_results(out)
    assert len(df) == 24 and set(df.loc[df["dataset"] == "second", "data_sha256"]) == {_sha_of_dataset(_sha(csv))}
    (aside,) = sorted(out.glob("superseded-*"))
    old = pd.concat([pq.read_table(f).to_pandas() for f in aside.glob("*.parquet")])
    assert sorted(old.groupby("dataset").size().items()) == [("first", 12), ("second", 12)]
