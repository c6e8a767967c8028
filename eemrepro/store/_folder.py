"""A results folder's own files, as every reader asks for them: its ``config.yaml`` and its run files.

Each command reads a results folder's config through :class:`FolderFiles` (the store's reading of the raw
file) or ``experiments.ResultsFolder`` (the same, parsed into a config), never by a route of its own, so that
one folder is judged alike by every command: a config that is missing from a folder ``eemrepro run`` wrote (its
run files say so), that cannot be read, is not valid YAML, is not a mapping or is not a valid config is one line
naming the file (:class:`FolderConfigError`), whichever command meets it. A folder with neither a config nor a
run file (records a script wrote with ``ResultStore``) has no config to read: its records are read as they are.
"""

import json
import os
import re
from pathlib import Path

from ._files import is_store
from ._segments import StoreError, StoreWarning

#: A results folder's config: the resolved config of its latest run, what the reports read.
CONFIG_FILE = "config.yaml"
#: A results folder's run files (``runs/<run id>.json``).
RUNS_DIR = "runs"


class FolderConfigError(StoreError):
    """A results folder's config.yaml that is missing from a folder a run wrote, cannot be read, or is not a
    config: one line naming the file and the two ways out, the same from every command."""

    def __init__(self, folder, why, missing=False):
        path = Path(folder) / CONFIG_FILE
        text = why if str(path) in why else f"{path}: {why}"
        again = "run" if missing else "delete it and run"
        super().__init__(f"{text} (the config of the results folder {folder}: restore it as `eemrepro run` wrote "
                         f"it, or {again} the config again into the folder, which writes it afresh)")


class FolderFiles:
    """The files of the results folder ``path`` that are not its records: its config and its run files."""

    def __init__(self, path):
        self.path = Path(path)
        self.config_file = self.path / CONFIG_FILE

    def __repr__(self):
        return f"{type(self).__name__}({str(self.path)!r})"

    def has_config(self):
        """Whether the folder has a config to read: False where it has none and no run file (a store a script
        wrote), or is not the tool's at all (``_files.is_store``: its ``config.yaml`` is someone else's, and the
        command that would write there refuses the folder itself). A config missing from a folder a run wrote,
        or a symbolic link in its place (the tool makes none), is a :class:`FolderConfigError`."""
        if self.config_file.is_symlink():
            raise FolderConfigError(self.path, f"a symbolic link (to {os.readlink(self.config_file)}), which "
                                               "`eemrepro run` never writes")
        if not is_store(self.path):
            return False
        if os.path.lexists(self.config_file):
            return True
        if any((self.path / RUNS_DIR).glob("*.json")):
            raise FolderConfigError(self.path, f"missing, yet the run files in {self.path / RUNS_DIR} say "
                                               "`eemrepro run` wrote the folder", missing=True)
        return False

    def mapping(self):
        """(the mapping the config holds, its keys' lines), or None where the folder has no config to read
        (``has_config``); a config that cannot be read or is not a mapping is a :class:`FolderConfigError`."""
        from .._yaml import YAMLDocumentError, load_yaml_file

        if not self.has_config():
            return None
        try:
            raw, lines = load_yaml_file(self.config_file)
        except YAMLDocumentError as exc:
            raise FolderConfigError(self.path, str(exc)) from None
        if not isinstance(raw, dict):
            raise FolderConfigError(self.path, f"not a config (a YAML mapping of name, kind, datasets, models, "
                                               f"...), but {type(raw).__name__ if raw is not None else 'empty'}")
        return raw, lines

    def raw(self):
        """The mapping the config holds, or None where the folder has none to read (``mapping``)."""
        got = self.mapping()
        return None if got is None else got[0]

    def runs(self):
        """The folder's run files as mappings, in run order (``read_runs``: a damaged one skipped, named)."""
        return read_runs(self.path)


def read_runs(root):
    """The run files of a results folder (``runs/*.json``) as mappings, in run order.

    A damaged one (empty, not JSON, not a run's facts: what a power loss can
    leave) is skipped with a :class:`StoreWarning` naming it; the records
    carry their run's facts too, so nothing but its provenance is lost.
    """
    import warnings

    infos = []
    for path in sorted(Path(root, "runs").glob("*.json"), key=lambda p: run_order(p.stem)):
        why = _damaged_run(path)
        if why is not None:
            warnings.warn(StoreWarning(f"{path}: {why}; skipped (its records are read; only its provenance is "
                                       "lost)"), stacklevel=2)
            continue
        info = json.loads(path.read_text(encoding="utf-8"))
        info.setdefault("run_id", path.stem)  # a run file written before it held its id: its file's name
        infos.append(info)
    return infos


def _damaged_run(path):
    """Why a run file is not one (None when it is)."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"not a run file ({'empty' if path.exists() and not path.stat().st_size else exc})"
    if not isinstance(info, dict) or not isinstance(info.get("config"), dict) or "name" not in info["config"]:
        return "not a run file (no config in it)"
    return None


_SEQUENCED = re.compile(r"^s(\d+)-")


def run_order(stem):
    """Sort key of a run id (a segment's stem): the store's own sequence, never a clock.

    Run ids are ``s<sequence>-<local time>-<pid>``, the sequence one more than
    any id the folder holds (taken under its write lock), so a run started after
    another sorts after it whatever the clock, time zone or DST says. Ids of
    stores written before sequences (a local time stamp first) keep their
    order, all before the sequenced ones, which can only be newer.
    """
    m = _SEQUENCED.match(stem)
    return (1, int(m.group(1)), stem) if m else (0, 0, stem)
