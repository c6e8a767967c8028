"""``export`` overwrites a file it wrote itself (issue 67, finding 10): the same command run twice refused the
second time ("exists: ... --force"). A file it did not write, or one edited since it wrote it, is still refused
without ``--force``."""

import pandas as pd
import pytest
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    cfg = root / "c.yaml"
    cfg.write_text("name: mine\ndatasets: [heart]\nmodels:\n  M: {estimator: EEM, grid: {n_hidden: [10, 20]}}\n"
                   "protocol: {folds: 2, repeats: 1}\n")
    result = runner.invoke(app, ["run", str(cfg), "--out", str(root / "mine"), "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    return root / "mine"


def _read(path, fmt):
    return pd.read_parquet(path) if fmt == "parquet" else pd.read_csv(path)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_the_same_export_run_twice_overwrites_its_own_file(tmp_path, store, monkeypatch, fmt):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # the second: the user's finding, refused as "exists"
        result = runner.invoke(app, ["export", str(store), "--format", fmt])
        assert result.exit_code == 0, result.output
        assert result.output == f"wrote 4 records to mine-records.{fmt}\n"
    exported = _read(tmp_path / f"mine-records.{fmt}", fmt)
    # (the records as read_results gives them: 2 grid points x 2 folds)
    assert len(exported) == 4 and sorted(exported["fold"]) == sorted(read_results(store)["fold"])
    # into another folder by --out, and again
    out = tmp_path / "sub" / f"all.{fmt}"
    for _ in range(2):
        assert runner.invoke(app, ["export", str(store), "--format", fmt, "--out", str(out)]).exit_code == 0


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_an_export_edited_since_or_another_file_is_still_refused(tmp_path, store, fmt):
    out = tmp_path / f"e.{fmt}"
    assert runner.invoke(app, ["export", str(store), "--format", fmt, "--out", str(out)]).exit_code == 0
    with open(out, "ab") as fh:  # the user's own edit: no longer what export wrote
        fh.write(b"1,2,3\n")
    edited = out.read_bytes()
    result = runner.invoke(app, ["export", str(store), "--format", fmt, "--out", str(out)])
    assert result.exit_code == 1 and f"{out} exists" in result.output and out.read_bytes() == edited
    assert "changed since eemrepro export wrote it" in " ".join(result.output.split())
    assert runner.invoke(app, ["export", str(store), "--format", fmt, "--out", str(out), "--force"]).exit_code == 0
    # and after --force it is export's own again
    assert runner.invoke(app, ["export", str(store), "--format", fmt, "--out", str(out)]).exit_code == 0
    # a file of the same name export never wrote
    mine = tmp_path / f"mine.{fmt}"
    mine.write_bytes(b"mine\n")
    result = runner.invoke(app, ["export", str(store), "--format", fmt, "--out", str(mine)])
    assert result.exit_code == 1 and "not written by eemrepro export" in " ".join(result.output.split())
    assert mine.read_bytes() == b"mine\n"
