"""The command line, through typer's CliRunner."""

from typer.testing import CliRunner

from eemrepro import __version__
from eemrepro.cli import app

runner = CliRunner()


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"eemrepro {__version__}"


def test_help_lists_commands():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "models" in result.stdout


def test_models_lists_the_five_estimators():
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0
    for name in ("WELM(", "EEM(", "EEKM(", "LSSVM(", "SVM("):
        assert name in result.stdout
