"""``eemrepro datasets`` through typer's CliRunner."""

from typer.testing import CliRunner

from eemrepro.cli import app

from tests.helpers import require_mirror

runner = CliRunner()


def test_list_shows_sizes_and_state(tmp_path):
    result = runner.invoke(app, ["datasets", "list", "--group", "uci", "--data-home", str(tmp_path)])
    assert result.exit_code == 0
    assert "australian" in result.stdout and "383/307" in result.stdout and "bundled" in result.stdout


def test_info_flags_differences_from_the_paper(tmp_path):
    result = runner.invoke(app, ["datasets", "info", "breast-cancer", "--data-home", str(tmp_path)])
    assert result.exit_code == 0
    line = next(line for line in result.stdout.splitlines() if line.startswith("d "))
    assert line.split()[1:3] == ["10", "9"] and "DIFFERS" in line


def test_unknown_name_exits_nonzero_with_suggestion():
    result = runner.invoke(app, ["datasets", "info", "sonnar"])
    assert result.exit_code == 1
    assert "Did you mean 'sonar'" in result.output


def test_fetch_from_mirror_then_verify(tmp_path):
    mirror = require_mirror()
    result = runner.invoke(app, ["datasets", "fetch", "ecoli", "--mirror", str(mirror), "--data-home", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "ecoli: x1data.npz ok" in result.stdout
    (tmp_path / "ecoli" / "x1data.npz").write_bytes(b"corrupt")
    result = runner.invoke(app, ["datasets", "verify", "--data-home", str(tmp_path)])
    assert result.exit_code == 1 and "ecoli/x1data.npz: corrupt (removed)" in result.stdout
    assert not (tmp_path / "ecoli" / "x1data.npz").exists()


def test_fetch_missing_from_mirror_fails_clearly(tmp_path):
    (tmp_path / "m").mkdir()
    result = runner.invoke(app, ["datasets", "fetch", "ecoli", "--mirror", str(tmp_path / "m"), "--data-home", str(tmp_path)])
    assert result.exit_code == 1 and "has no file ecoli/x1data.npz" in result.output
