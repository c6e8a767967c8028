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
