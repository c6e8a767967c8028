"""A results folder's config has one owner (``store.FolderFiles``, ``experiments.ResultsFolder``) that every
command asks: a broken one is the same one line naming the file, whichever command meets it."""

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eemrepro.cli import app

ROOT = Path(__file__).resolve().parents[2]
#: A small committed store that `eemrepro run` wrote (a config, run files, sealed records).
STORE = ROOT / "results" / "melm_restarts"

#: How a user breaks a folder's config by hand, and what the one line says of it (after the file's name).
BROKEN = {
    "deleted": (None, ": missing, yet the run files in {runs} say `eemrepro run` wrote the folder"),
    "not YAML": ("name: [oops\n", ", line 2: not valid YAML (did not find expected ',' or ']')"),
    "not a mapping": ("- 1\n", ": not a config (a YAML mapping of name, kind, datasets, models, ...), but list"),
    "empty": ("", ": not a config (a YAML mapping of name, kind, datasets, models, ...), but empty"),
    "a folder": ("folder", ": cannot be read (Is a directory)"),
    "unknown key": ("name: melm_restarts\nbogus: 1\n", ", line 2: key 'bogus': unknown key; valid keys are "),
    # A valid config, linked in from elsewhere: the tool never makes a link among a folder's files.
    "a link": ("link", ": a symbolic link (to {target}), which `eemrepro run` never writes"),
}

#: Every command that reads a results folder, with the exit status it gives for bad input.
COMMANDS = {
    "tables": (["tables", "{d}", "--out", "{tmp}/tables"], 1),
    "report": (["report", "{d}", "--out", "{tmp}/report"], 1),
    "check": (["check", "{d}"], 2),
    "figures": (["figures", "{d}", "--out", "{tmp}/figures"], 1),
    "status": (["status", "{d}"], 1),
    "audit": (["audit", "{d}", "--sample", "1"], 2),
    "compact": (["compact", "{d}"], 1),
    "store upgrade": (["store", "upgrade", "{d}"], 1),
    "forget": (["forget", "{d}", "--models", "MELM"], 1),
}


def _broken(tmp_path, how):
    folder = shutil.copytree(STORE, tmp_path / "store")
    config = folder / "config.yaml"
    text = BROKEN[how][0]
    config.unlink()
    if text == "folder":
        config.mkdir()
    elif text == "link":
        shutil.copy(STORE / "config.yaml", folder.parent / "elsewhere.yaml")
        config.symlink_to(folder.parent / "elsewhere.yaml")
    elif text is not None:
        config.write_text(text)
    return folder


@pytest.mark.parametrize("how", list(BROKEN))
def test_a_broken_config_is_the_same_one_line_from_every_command(tmp_path, how):
    folder = _broken(tmp_path, how)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    said = {}
    for name, (args, code) in COMMANDS.items():
        result = CliRunner().invoke(app, [a.format(d=folder, tmp=tmp_path) for a in args])
        assert result.exit_code == code, (name, result.output)
        assert result.output.count("\n") == 1, (name, result.output)  # one line, no traceback
        said[name] = result.output
    assert len(set(said.values())) == 1, said
    line = said["tables"]
    config = folder / "config.yaml"
    assert line.startswith(f"error: {config}{BROKEN[how][1].format(runs=folder / 'runs', target=tmp_path / 'elsewhere.yaml')}".replace(
        "valid keys are ", "")), line
    again = "run" if how == "deleted" else "delete it and run"  # (a file gone, or one to take away first)
    assert line.endswith(f"(the config of the results folder {folder}: restore it as `eemrepro run` wrote it, or "
                         f"{again} the config again into the folder, which writes it afresh)\n"), line
    # Nothing was written into the folder (forget moved nothing aside, compact sealed nothing).
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    # `store verify` lists it among the folder's problems, in the same words.
    result = CliRunner().invoke(app, ["store", "verify", str(folder)])
    assert result.exit_code == 1 and result.output.splitlines()[0] == "FAIL " + line[len("error: "):-1], \
        result.output
    # A run of the folder's own config into it says the same line, except where the file is gone: that run is
    # the second way out the line names (it writes the config afresh; a dry run here, which writes nothing).
    config_file = shutil.copy(STORE / "config.yaml", tmp_path / "melm_restarts.yaml")
    result = CliRunner().invoke(app, ["run", str(config_file), "--out", str(folder), "--dry-run"])
    if how == "deleted":
        assert result.exit_code == 0 and "100 units, 100 already stored, 0 to run" in result.output, result.output
    else:
        assert (result.exit_code, result.output) == (1, line), result.output


def test_a_store_a_script_wrote_has_no_config_to_read_and_reads_its_records(tmp_path):
    # No config and no run file (records written with ResultStore): the records are read as they are, and
    # the commands that need a config (status, audit) name the missing file in the same line.
    from eemrepro.reports import Records
    from eemrepro.store import ResultStore
    from tests.helpers import store_record

    store = ResultStore(tmp_path / "s")
    store.append([store_record(i, "heart") for i in range(3)])
    store.close()
    records, prov = Records([tmp_path / "s"]).read()
    assert len(records) == 3 and prov["records"] == 3 and prov["unfinished"] == []
    config = tmp_path / "s" / "config.yaml"
    for args in (["status", str(tmp_path / "s")], ["audit", str(tmp_path / "s"), "--sample", "1"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code in (1, 2) and result.output == (
            f"error: {config}: missing: not a results folder written by `eemrepro run` (the config of the results "
            f"folder {tmp_path / 's'}: restore it as `eemrepro run` wrote it, or run the config again into the "
            "folder, which writes it afresh)\n"), result.output


def test_a_baseline_with_a_broken_config_is_refused_by_the_reports_in_the_same_line(tmp_path):
    # A folder read as another's baseline (its config names it) is read through the same owner.
    import yaml

    mine = shutil.copytree(STORE, tmp_path / "mine")
    theirs = _broken(tmp_path, "not YAML")
    raw = yaml.safe_load((mine / "config.yaml").read_text())
    raw["baselines"] = ["../store"]
    (mine / "config.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    direct = CliRunner().invoke(app, ["tables", str(theirs), "--out", str(tmp_path / "t1")]).output
    through = CliRunner().invoke(app, ["tables", str(mine), "--out", str(tmp_path / "t2")]).output
    assert direct == through and direct.startswith(f"error: {theirs / 'config.yaml'}, line 2: not valid YAML"), \
        (direct, through)


def test_a_folder_that_is_not_the_tools_is_refused_as_such_not_for_its_config(tmp_path):
    # A user's own folder (no store marker, no run file of the tool's) with a config.yaml of their notes: the
    # commands that would write there refuse the folder itself; its file is never judged as the tool's config.
    mine = tmp_path / "mine"
    (mine / "records").mkdir(parents=True)
    (mine / "config.yaml").write_text("my own notes\n")
    for args in (["compact", str(mine)], ["forget", str(mine), "--models", "M"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1 and "is not an eemrepro results folder" in result.output, (args, result.output)
        assert "config.yaml" not in result.output
    assert (mine / "config.yaml").read_text() == "my own notes\n"
