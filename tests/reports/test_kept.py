"""What the reports keep of unchanged results folders (``eemrepro._kept``): a kept piece gives the same files as a
new one, and any change to what it was made of (a record, the config, a run file, the code) makes it again.

The expected outputs are those of the same command with the cache off (``EEMREPRO_CACHE=0``, as the rest of the
suite runs): byte for byte, or the same error.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eemrepro import _kept
from eemrepro.reports import _records, _shapes, build_tables
from eemrepro.reports._check import build_checked
from eemrepro.reports._spec import registered_tables
from tests.helpers import killed_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    return killed_run(tmp_path_factory.mktemp("kept"))


@pytest.fixture
def store(killed, tmp_path):
    out = tmp_path / "o"
    shutil.copytree(killed, out)
    return out


@pytest.fixture
def cache(tmp_path, monkeypatch):
    where = tmp_path / "cache"
    monkeypatch.setenv("EEMREPRO_CACHE", "1")
    monkeypatch.setenv("EEMREPRO_CACHE_DIR", str(where))
    return where / "kept-reports"


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir()) if p.is_file()}


def _tables(store, out):
    """The files ``tables`` writes of ``store`` (or the error it raises, as one line)."""
    try:
        build_tables([store], out, formats=("md", "csv", "latex"))
    except Exception as exc:  # noqa: BLE001  (the cold and the kept command must fail alike)
        return f"{type(exc).__name__}: {exc}".replace(str(out), "OUT")
    return {k: v for k, v in _files(out).items() if k != "tables-manifest.json"}


def _cold(store, out, monkeypatch):
    with monkeypatch.context() as mp:
        mp.setenv("EEMREPRO_CACHE", "0")
        return _tables(store, out)


def test_kept_tables_are_the_tables_and_nothing_is_read_again(store, cache, tmp_path, monkeypatch):
    cold = _cold(store, tmp_path / "cold", monkeypatch)
    assert isinstance(cold, dict) and any(name.endswith(".tex") for name in cold)
    assert _tables(store, tmp_path / "first") == cold
    assert len(list(cache.glob("*.pickle"))) >= 3  # the folder's reading, its cells, the tables' document

    # A second command reads nothing: the store's reader and the tables' cell maker are planted to fail.
    def boom(*args, **kwargs):
        raise AssertionError("read again")

    with monkeypatch.context() as mp:
        mp.setattr(_records.ResultStore, "frame", boom)
        mp.setattr(_shapes.Table, "build", boom)
        assert _tables(store, tmp_path / "second") == cold
        # ``check``'s tables (another command: its own document) come from the kept reading and cells alone.
        built, read = build_checked([store])
    with monkeypatch.context() as mp:
        mp.setenv("EEMREPRO_CACHE", "0")
        cold_built, cold_read = build_checked([store])
    assert built.keys() == cold_built.keys()
    for k in built:
        assert built[k].equals(cold_built[k])
    assert read.provenance == cold_read.provenance and read.unfinished == cold_read.unfinished


def _edit_number_in_place(store):
    """One gmean of the write-ahead segment changed by hand in place, its modification time set back."""
    (wal,) = (store / "records").glob("*.jsonl")
    before = wal.stat()
    text = wal.read_text()
    old = re.search(r'"gmean": ([0-9.]+)', text)
    new = f"{float(old.group(1)) / 2:.{len(old.group(1)) - 2}f}"[: len(old.group(1))]
    with open(wal, "r+") as f:  # the same inode, the same size
        f.write(text[:old.start(1)] + new.ljust(len(old.group(1)), "0") + text[old.end(1):])
    os.utime(wal, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert wal.stat().st_size == before.st_size and wal.stat().st_mtime_ns == before.st_mtime_ns


def _edit_seed(store):
    path = store / "config.yaml"
    path.write_text(path.read_text().replace("seed: 0", "seed: 1"))


def _edit_run_file(store):
    (run,) = (store / "runs").glob("*.json")
    facts = json.loads(run.read_text())
    facts["commit"] = "0123456789ab"  # the provenance's code commit
    run.write_text(json.dumps(facts))


@pytest.mark.parametrize("edit", [_edit_number_in_place, _edit_seed, _edit_run_file],
                         ids=["a number edited in place", "config seed", "a run file"])
def test_a_change_to_the_folder_makes_the_tables_again(store, cache, tmp_path, monkeypatch, edit):
    before = _tables(store, tmp_path / "before")  # kept
    edit(store)
    after = _tables(store, tmp_path / "after")
    cold = _cold(store, tmp_path / "cold", monkeypatch)
    assert after == cold
    # Each edit shows: the damaged line is skipped (a fold lost), the seed is refused, the run file is in the
    # provenance.
    assert after != before


@pytest.mark.parametrize("where", ["folder", "reading"])
def test_warnings_are_said_by_every_command_kept_or_not(store, tmp_path, where):
    # A damaged line of the folder's own records, or of a reading stored under it (judged in a worker process:
    # its warning is said by the command, in its words, as the folder's own).
    damaged = store
    if where == "reading":
        damaged = store / "readings" / "again"
        shutil.copytree(store, damaged)
    (wal,) = (damaged / "records").glob("*.jsonl")
    lines = wal.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"gmean": ', '"gmean": 1', 1)  # a damaged line: its checksum no longer matches
    wal.write_text("".join(lines))
    env = {**os.environ, "EEMREPRO_CACHE": "1", "EEMREPRO_CACHE_DIR": str(tmp_path / "cache")}
    said = []
    for n in range(2):
        proc = subprocess.run([sys.executable, "-m", "eemrepro", "tables", str(store), "--format", "csv", "--out",
                               str(tmp_path / f"t{n}")], capture_output=True, text=True, cwd=ROOT, env=env,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        said.append([ln for ln in proc.stderr.splitlines() if ln.strip()])
    assert said[0] == said[1] and len(said[0]) == 1
    assert said[0][0].startswith(f"warning: {wal}: skipped 1 damaged line(s) (line 2;"), said[0]
    assert list((tmp_path / "cache" / "kept-reports").glob("*.pickle"))  # kept, with its warning


def test_damaged_entries_and_an_unwritable_cache_change_nothing(store, cache, tmp_path, monkeypatch):
    cold = _cold(store, tmp_path / "cold", monkeypatch)
    assert _tables(store, tmp_path / "a") == cold
    for entry in cache.glob("*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert _tables(store, tmp_path / "b") == cold
    for entry in cache.glob("*.pickle"):
        entry.write_bytes(entry.read_bytes()[:-1] if entry.stat().st_size > 20 else b"")  # a truncated entry
    assert _tables(store, tmp_path / "c") == cold
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would go")
    monkeypatch.setenv("EEMREPRO_CACHE_DIR", str(blocked))
    assert _tables(store, tmp_path / "d") == cold


def test_the_code_is_part_of_every_name(store, cache, tmp_path, monkeypatch):
    _tables(store, tmp_path / "a")
    kept = set(cache.glob("*.pickle"))
    monkeypatch.setattr(_kept, "_code_digest", lambda: "another version of the code")
    _tables(store, tmp_path / "b")
    assert len(set(cache.glob("*.pickle")) - kept) == len(kept)  # every piece made again under new names


def test_off_keeps_nothing_and_the_oldest_go_past_the_limit(store, tmp_path, monkeypatch, cache):
    monkeypatch.setenv("EEMREPRO_CACHE", "0")
    _tables(store, tmp_path / "a")
    assert not cache.exists()
    monkeypatch.setenv("EEMREPRO_CACHE", "1")
    monkeypatch.setenv("EEMREPRO_CACHE_MB", "0.000001")  # a byte: every entry is past it
    _tables(store, tmp_path / "b")
    assert cache.is_dir() and not list(cache.glob("*.pickle"))


def test_a_specification_is_named_the_same_in_every_process():
    # A function in a table's specification is named by its module, name and file, not by its address; sets by
    # their sorted elements (string hashing differs from one process to the next).
    code = ("from eemrepro._kept import stable_text; from eemrepro.reports._spec import registered_tables; "
            "import hashlib; print(hashlib.sha256(stable_text((registered_tables(), {'a', 'b', 'c'})).encode())"
            ".hexdigest())")
    names = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                            env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2)}
    assert len(names) == 1
    text = _kept.stable_text(registered_tables())
    assert " at 0x" not in text and "eemrepro.papers.eem.welm_eem_time_ratios" in text
