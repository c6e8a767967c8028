"""The output folders the tool owns (``tables``, ``figures``, ``report``) keep one manifest format
(``_outputs.publish``), and folders written by the older formats are still recognised."""

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from eemrepro.cli import app

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "results" / "melm_restarts"  # small: its report is an index and a benchmark page


def _report(store, out, *more):
    return CliRunner().invoke(app, ["report", str(store), "--out", str(out), "--no-figures", *more])


def test_tables_and_report_write_one_manifest_format(tmp_path):
    store = shutil.copytree(STORE, tmp_path / "melm_restarts")
    assert CliRunner().invoke(app, ["tables", str(store), "--out", str(tmp_path / "t")]).exit_code == 0
    assert _report(store, tmp_path / "r").exit_code == 0
    for manifest, command in ((tmp_path / "t" / "tables-manifest.json", "eemrepro tables"),
                              (tmp_path / "r" / "report-manifest.json", "eemrepro report")):
        recorded = json.loads(manifest.read_text())
        assert recorded["written_by"] == command
        files = sorted(p.name for p in manifest.parent.iterdir() if p.is_file() and p != manifest)
        assert recorded["files"] == {name: [str(store)] for name in files}, manifest


def test_a_report_folder_of_the_older_format_is_written_again_without_losing_a_file(tmp_path):
    # ``report`` once kept a list of the pages it wrote ({"written_by": ..., "files": [names]}), without the
    # results they came from. Re-running it over such a folder is not refused; a page of the older report that
    # this one does not write (a paper's page no longer made) stays, recorded as before; a user's own file
    # beside them is neither replaced nor recorded.
    store = shutil.copytree(STORE, tmp_path / "melm_restarts")
    site = tmp_path / "site"
    assert _report(store, site).exit_code == 0
    pages = sorted(p.name for p in site.glob("*.html"))
    (site / "old-paper.html").write_text("an older report's page\n")
    (site / "notes.txt").write_text("mine\n")
    (site / "report-manifest.json").write_text(json.dumps(
        {"written_by": "eemrepro report", "files": [*pages, "old-paper.html"]}, indent=1) + "\n")
    result = _report(store, site)
    assert result.exit_code == 0, result.output
    assert (site / "old-paper.html").read_text() == "an older report's page\n"
    assert (site / "notes.txt").read_text() == "mine\n"
    recorded = json.loads((site / "report-manifest.json").read_text())
    assert recorded["files"] == {**{p: [str(store)] for p in pages}, "old-paper.html": None}
    # The folder now in the one format: written again from these results, from other results refused.
    assert _report(store, site).exit_code == 0
    other = shutil.copytree(STORE, tmp_path / "other")
    result = _report(other, site)
    assert result.exit_code == 1 and "eemrepro report did not write from these results" in result.output
    assert f"written from {store}" in result.output


def test_a_report_page_a_user_wrote_is_not_taken_over_by_an_older_manifest(tmp_path):
    # An older manifest lists only what report wrote: a page of the site's name it does not list is a user's.
    store = shutil.copytree(STORE, tmp_path / "melm_restarts")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("my page\n")
    (site / "report-manifest.json").write_text(json.dumps({"written_by": "eemrepro report", "files": []}))
    result = _report(store, site)
    assert result.exit_code == 1 and "results it does not know, or not by eemrepro" in result.output
    assert (site / "index.html").read_text() == "my page\n"


def test_a_folder_of_files_is_published_whole_or_not_at_all(tmp_path):
    """Every command that writes a folder of files builds them in a staging folder and moves them in at the end
    (``publish_built``): a build that fails half-way leaves the output folder as it was and no staging folder;
    one that finishes moves every file in and records them, from these results, in the manifest."""
    import pytest

    from eemrepro.reports._outputs import publish_built

    out = tmp_path / "out"
    (out).mkdir()
    (out / "kept.md").write_text("mine\n")

    def broken(staging):
        (staging / "a.md").write_text("half\n")
        raise RuntimeError("the build failed")

    with pytest.raises(RuntimeError, match="the build failed"):
        publish_built(broken, out, "m.json", ["res"], False, "eemrepro tables")
    assert sorted(p.name for p in out.iterdir()) == ["kept.md"]

    def whole(staging):
        for name in ("a.md", "b.csv"):
            (staging / name).write_text(name)
        return [staging / "a.md", staging / "b.csv"]

    written = publish_built(whole, out, "m.json", ["res"], False, "eemrepro tables")
    assert written == [out / "a.md", out / "b.csv"]
    assert sorted(p.name for p in out.iterdir()) == ["a.md", "b.csv", "kept.md", "m.json"]
    assert json.loads((out / "m.json").read_text()) == {"written_by": "eemrepro tables",
                                                       "files": {"a.md": ["res"], "b.csv": ["res"]}}
