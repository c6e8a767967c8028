"""The command line, through typer's CliRunner."""

import pytest
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


@pytest.mark.parametrize("command", [["run"], ["tables"], ["check"], ["datasets", "fetch"]])
def test_help_shows_flags_as_flags(command):
    # A flag takes no value (--fresh=true is refused), so its help must not suggest one.
    res = runner.invoke(app, [*command, "--help"], terminal_width=120)
    ours = [line for line in res.output.splitlines() if "--" in line and "--help" not in line]  # Typer's own --help
    assert res.exit_code == 0 and ours and not any("<bool>" in line or "BOOLEAN" in line for line in ours)
