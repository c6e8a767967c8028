"""The command line, through typer's CliRunner."""

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from eemrepro import __version__
from eemrepro.cli import app

runner = CliRunner()


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"eemrepro {__version__}"


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["run", "--help"], ["report", "--help"]])
def test_help_and_version_load_no_data_library(argv):
    # `--help` and `--version` answer before any data library is imported (issue 67: within 0.3 s; pandas and
    # Arrow alone take about 0.5 s to import). Seen failing while the entry point imported the store for its
    # warning class.
    code = ("import sys; from eemrepro.cli import main; sys.argv = ['eemrepro', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pandas', 'pyarrow', 'sklearn', 'scipy', 'matplotlib') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_help_lists_commands():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "models" in result.stdout


def test_models_lists_the_five_estimators():
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0
    for name in ("WELM(", "EEM(", "EEKM(", "LSSVM(", "SVM("):
        assert name in result.stdout


@pytest.mark.parametrize("command", [["run"], ["tables"], ["check"], ["datasets", "fetch"]])
def test_help_shows_flags_as_flags(command):
    # A flag takes no value (--fresh=true is refused), so its help must not suggest one.
    res = runner.invoke(app, [*command, "--help"], terminal_width=120)
    ours = [line for line in res.output.splitlines() if "--" in line and "--help" not in line]  # Typer's own --help
    assert res.exit_code == 0 and ours and not any("<bool>" in line or "BOOLEAN" in line for line in ours)


@pytest.mark.parametrize("command", ["tables", "check", "report", "figures"])
def test_a_config_given_for_a_results_folder_is_one_line_naming_the_folder_its_run_writes(tmp_path, command):
    # Issue 52: `eemrepro tables configs/quick.yaml` showed a raw NotADirectoryError. The folder is named by the
    # config's name:, not its file's (the hint said results/my-quick; issue 60: one default results folder).
    cfg = tmp_path / "my-quick.yaml"
    cfg.write_text("name: quick\n")
    result = CliRunner().invoke(app, [command, str(cfg)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output == f"error: {cfg} is a file, not a results folder (`eemrepro run {cfg}` writes its " \
                            "results to results/quick)\n"


def test_export_writes_into_the_current_folder_by_default_never_into_the_store(tmp_path, monkeypatch):
    # Issue 52: the default export went into the (committed) results folder itself.
    store, work = tmp_path / "results" / "mine", tmp_path / "work"
    work.mkdir()
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: mine\ndatasets: [heart]\nmodels:\n  M: {estimator: EEM, grid: {n_hidden: [10]}}\n"
                   "protocol: {folds: 2, repeats: 1}\n")
    assert CliRunner().invoke(app, ["run", str(cfg), "--out", str(store), "--jobs", "1", "--quiet"]).exit_code == 0
    monkeypatch.chdir(work)
    result = CliRunner().invoke(app, ["export", str(store)])
    assert result.exit_code == 0 and result.output == "wrote 2 records to mine-records.csv\n", result.output
    assert (work / "mine-records.csv").is_file() and not list(store.glob("records.*"))
