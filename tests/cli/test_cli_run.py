"""``eemrepro run`` and ``eemrepro status`` through typer's CliRunner."""

from typer.testing import CliRunner

from eemrepro.cli import app

runner = CliRunner()

CONFIG = """name: cli
datasets: [heart]
models:
  EEMrbf: {estimator: EEM, activation: rbf, grid: {n_hidden: [10, 20]}}
  Broken: {estimator: 'tests.helpers:Sleepy', fail: true, grid: {delay: [0.0]}}
protocol: {folds: 2, repeats: 1}
"""


def test_run_dry_run_then_run_then_status(tmp_path):
    cfg = tmp_path / "cli.yaml"
    cfg.write_text(CONFIG)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--dry-run"])
    assert result.exit_code == 0 and "cli: 4 units, 0 already stored, 4 to run" in result.stdout
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "ran 4 of 4 pending units" in result.stdout and "4 ok" in result.stdout and "2 failed" in result.stdout
    result = runner.invoke(app, ["status", str(out)])
    assert result.exit_code == 0
    row = next(line for line in result.stdout.splitlines() if line.startswith("heart") and "EEMrbf" in line)
    assert row.split()[2:4] == ["2/2", "4"]
    assert "2 failed fits:" in result.stdout and "ArithmeticError" in result.stdout


def test_run_bad_config_exits_nonzero(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(CONFIG.replace("folds: 2", "fold: 2"))
    result = runner.invoke(app, ["run", str(cfg)])
    assert result.exit_code == 1 and "key 'protocol.fold': unknown key" in result.output


def test_status_of_a_folder_without_results(tmp_path):
    result = runner.invoke(app, ["status", str(tmp_path)])
    assert result.exit_code == 1 and "not a results folder" in result.output
