"""One row of the tables is one data set's data: folders read together whose records of a data set were made on
other data are refused (found by probing the process-wide registry of local data sets: two users' folders each
with a local ``mine.csv`` of its own were tabled as one row ``mine``, and their models compared by a paired
t-test across different data)."""

import pytest
from typer.testing import CliRunner

from eemrepro.cli import app
from tests.helpers import blobs_frame, run_config

CONFIG = """name: {name}
datasets: [mine]
local_datasets:
  mine: {{file: {file}, target: status, positive: sick}}
models:
  LR{name}: {{estimator: 'sklearn.linear_model:LogisticRegression', grid: {{C: [1.0]}}}}
protocol: {{splitter: train-test, train_size: 0.5, repeats: 2}}
"""


def _folder(tmp_path, name, csv):
    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(CONFIG.format(name=name, file=csv.name))
    run_config(cfg, tmp_path / name)
    return tmp_path / name


@pytest.mark.parametrize("command,code", [("tables", 1), ("check", 2), ("report", 1)])  # (check: 1 is drift)
def test_two_folders_whose_data_set_of_one_name_is_two_files_are_refused_naming_both(tmp_path, command, code):
    blobs_frame(n=90, seed=0).to_csv(tmp_path / "a.csv", index=False)
    blobs_frame(n=60, seed=1, shift=3.0).to_csv(tmp_path / "b.csv", index=False)
    a, b = _folder(tmp_path, "a", tmp_path / "a.csv"), _folder(tmp_path, "b", tmp_path / "b.csv")
    extra = ["--out", str(tmp_path / "out")] if command != "check" else []
    result = CliRunner().invoke(app, [command, str(a), str(b), *extra])
    assert result.exit_code == code
    said = [line for line in result.output.splitlines() if line.strip()]
    assert len(said) == 1 and said[0].startswith(f"error: {a} and {b} both hold data set mine, made on other data")
    assert f"{tmp_path / 'a.csv'}, sha256 " in said[0] and f"{tmp_path / 'b.csv'}, sha256 " in said[0]
    assert not (tmp_path / "out").exists()


def test_two_folders_of_one_file_are_one_row(tmp_path):
    # The neighbour that must stay: two users' folders over the same file (one checksum) share a row.
    blobs_frame(n=90, seed=0).to_csv(tmp_path / "a.csv", index=False)
    a, b = _folder(tmp_path, "a", tmp_path / "a.csv"), _folder(tmp_path, "b", tmp_path / "a.csv")
    result = CliRunner().invoke(app, ["tables", str(a), str(b), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    rows = [r for r in (tmp_path / "out" / "benchmark_gmean.md").read_text().splitlines() if r.startswith("| mine")]
    assert rows[0].count("±") == 2  # the matrix: LRa and LRb side by side on one row
