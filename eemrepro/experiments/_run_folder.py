"""The run folder: ``config.yaml``, the run files (``runs/<run id>.json``), the commit, and what the reports
read of them (``config_scope_in``, ``unfinished_cells_in``).

A results folder belongs to the config that made it (``refuse_another_configs_store``). A run writes the
config and its run file before its first task, and the run file again when it ends, with the seconds of
each stage (``RunFile.stage``): planning and checksums, worker start, dispatch until the last unit, the
seal, and the table (noted afterwards by the command that prints it, ``note_stage``). The stages overlap:
``dispatch`` runs from the first task sent to the last unit's records, and holds ``worker_start``, from the
first task sent to the first unit's start.
"""

import json
import os
from pathlib import Path

import yaml

from ..store import FolderConfigError, FolderFiles
from ..store._files import atomic_write
from ._kinds import get_kind


class ResultsFolder(FolderFiles):
    """A results folder's config and run files (``store.FolderFiles``), its config parsed as the reports and
    ``status`` read it: every command asks it, so that a config missing from a folder a run wrote, unreadable
    or not a config is the same one line (:class:`~eemrepro.store.FolderConfigError`) from every command."""

    def config(self, import_estimators=False):
        """The folder's config (its estimators named, not imported, unless ``import_estimators``), or None where
        the folder has no config to read (``has_config``). A config that is not one is a
        :class:`~eemrepro.store.FolderConfigError`; with ``import_estimators``, a valid config whose user's
        module cannot be imported here is the config's own ``ConfigError``."""
        from ._config import ConfigError, load_config

        if not self.has_config():
            return None
        try:
            config = load_config(self.config_file, import_estimators=False)
        except ConfigError as exc:
            self.mapping()  # a file that is not a mapping said the store's way; else the config's own line
            raise FolderConfigError(self.path, str(exc)) from None
        return load_config(self.config_file, import_estimators=True) if import_estimators else config

    def required_config(self, import_estimators=False):
        """``config``, a folder with no config to read being a :class:`~eemrepro.store.FolderConfigError` too:
        for the commands that plan or re-run its units (``status``, ``audit``)."""
        config = self.config(import_estimators)
        if config is None and os.path.lexists(self.config_file):  # (``has_config``: not the tool's folder)
            raise FolderConfigError(self.path, "not read: the folder is not one `eemrepro run` wrote (no store "
                                               "marker, run file or record of its own)", missing=True)
        if config is None:
            raise FolderConfigError(self.path, "missing: not a results folder written by `eemrepro run`",
                                    missing=True)
        return config

    def names(self):
        """The data sets and models the folder's config names (empty without one)."""
        config = self.config()
        return set() if config is None else {*config.datasets, *(m.name for m in config.models)}

    def repeats(self):
        """The ``protocol.repeats`` the folder's config holds (what its tables read), or None without one (what
        a run asks before it writes the config, afresh where it is gone)."""
        config = self.config() if os.path.lexists(self.config_file) else None
        return None if config is None else config.protocol.repeats

    def baselines(self):
        """[(the baseline as the config names it, its folder)] of the folder's config (paths from the folder)."""
        config = self.config()
        return [] if config is None else [(str(b), Path(os.path.normpath(self.path / str(b))))
                                          for b in config.baselines]


def default_out(config):
    """The results folder of a config run without ``--out``: ``results/<its name>``."""
    return Path("results") / config.name


class AnotherConfigsStoreError(ValueError):
    """``--out`` names a results folder that another config (another name or kind) made."""


#: What a run writes in a folder before its first record (``ResultStore.writing`` and ``execute_plan``).
_BEFORE_RECORDS = {".eemrepro-store", ".lock", "config.yaml", "runs", "records", "SHA256SUMS"}


def remove_unused_folder(out):
    """Remove ``out``, a folder a run made and then failed in before it stored a record (a Dask scheduler that
    does not answer, a plan refused): nothing but what the run wrote before its first record, and no record.
    Anything else in it (a user's file, a record, a folder moved aside) keeps it whole."""
    import shutil

    out = Path(out)
    try:
        names = {p.name for p in out.iterdir()}
        records = list((out / "records").iterdir()) if (out / "records").is_dir() else []
    except OSError:
        return
    if names <= _BEFORE_RECORDS and not any(p.is_file() and p.stat().st_size for p in records) \
            and not any(p.is_dir() for p in records):
        shutil.rmtree(out, ignore_errors=True)


def refuse_another_configs_store(out, config):
    """A results folder belongs to the config that made it: a run of another name or kind into it would
    replace its config.yaml, and every report would then read its records as this config's (or drop them)."""
    folder = ResultsFolder(out)
    where = ""
    if os.path.lexists(folder.config_file):
        raw = folder.raw()
    else:
        # Its config.yaml gone (deleted by hand), the folder's run files still say whose records it holds.
        raw = next((r.get("config") for r in reversed(folder.runs()) if isinstance(r.get("config"), dict)), None)
        where = "; its config.yaml is missing, its run files say so"
    if not isinstance(raw, dict):
        return
    name, kind = raw.get("name"), raw.get("kind", "grid-search")
    if name != config.name or kind != config.kind:
        raise AnotherConfigsStoreError(
            f"{out} holds the results of config {name!r} (kind {kind}{where}), not of {config.name!r} (kind "
            f"{config.kind}, {config.source or 'this config'}): nothing was run; use another --out")


def git_commit():
    """The eemrepro checkout's commit (with '+dirty' for uncommitted changes), if any.

    Changes under ``results/`` do not count: a run rewrites its folder's
    ``config.yaml`` itself, and a committed store's config would otherwise make
    every later run of the same checkout look dirty.
    """
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)results"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def baseline_dirs(config):
    """The baseline folders a config names, as paths (relative ones from the config's folder)."""
    home = Path(config.home) if config.home else Path()
    return [Path(os.path.normpath(home / b)) for b in config.baselines]


def stored_baselines(config, out):
    """``config.baselines`` as a stored config names them: relative to the results folder ``out``."""
    return [os.path.relpath(d.resolve(), Path(out).resolve()) for d in baseline_dirs(config)]


class _Dumper(yaml.SafeDumper):
    """A list of more than 1,000 plain values (the feature columns a user listed) in flow style, as a config
    writes it: in block style each name costs a line and an indent, and the folder's config would outgrow the
    user's. (Shorter lists as ``yaml.safe_dump`` writes them: the committed stores' configs stay as they are.)"""


def _represent_list(dumper, data):
    flow = len(data) > 1000 and all(v is None or isinstance(v, str | int | float | bool) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True if flow else None)


_Dumper.add_representer(list, _represent_list)


def config_text(raw, path):
    """A results folder's config as YAML text, refused (``ValueError``, one line) where a later command could
    not read it back: over the :data:`~eemrepro._yaml.MAX_BYTES` a YAML document may be."""
    from .._yaml import MAX_BYTES

    text = yaml.dump(raw, Dumper=_Dumper, sort_keys=False)
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise ValueError(f"{path} would be {size:,} bytes, over the {MAX_BYTES:,} a config may be, and no command "
                         "could read the folder: nothing was run; a long 'columns' list is the usual cause: write "
                         "a file of only the columns to use (and the target) and leave 'columns' out")
    return text


def check_config_size(out, config):
    """Refuse (before anything is written, a dry run too) a config whose folder copy could not be read back."""
    config_text(stored_dict(config, out), ResultsFolder(out).config_file)


def write_config(out, config):
    """Write ``out/config.yaml``: the config as the folder keeps it (``stored_dict``)."""
    path = ResultsFolder(out).config_file
    return atomic_write(path, config_text(stored_dict(config, out), path))


def stored_dict(config, out):
    """The config as ``out/config.yaml`` holds it: its baselines' paths made relative to ``out``."""
    raw = config.to_dict()
    if config.baselines:
        raw["baselines"] = stored_baselines(config, out)
    from ..models._lookup import lies_in

    for spec in config.models:  # where a user's module lies, like the baselines, named from the results folder
        if spec.home is not None and lies_in(spec.estimator, spec.home):
            raw["models"][spec.name]["home"] = os.path.relpath(Path(spec.home).resolve(), Path(out).resolve())
    if config.local_datasets:  # the files, like the baselines, named from the results folder
        from ..datasets._local import stored_spec

        raw["local_datasets"] = {k: stored_spec(e, out) for k, e in config.local_datasets.items()}
    return raw


class RunFile:
    """``runs/<run id>.json`` of one run: what is the same for the whole run, written before its first task
    (a killed run's records still name it) and again when it ends; ``stage`` times its stages."""

    def __init__(self, store, info):
        self.store, self.info = store, dict(info, stage_seconds={})

    def stage(self, name, seconds):
        """Note that stage ``name`` took ``seconds``."""
        self.info["stage_seconds"][name] = round(seconds, 6)

    def write(self, **more):
        self.info.update(more)
        return self.store.write_run(self.info)


def note_stage(out, run_id, name, seconds):
    """Add a stage's seconds (the table, printed after the run returned) to a run file already written."""
    path = Path(out) / "runs" / f"{run_id}.json"
    info = json.loads(path.read_text())
    info.setdefault("stage_seconds", {})[name] = round(seconds, 6)
    return atomic_write(path, json.dumps(info, indent=2, sort_keys=True))


def record_derived_reading(out, config, readings=()):
    """Note in ``out/config.yaml`` a reading that changes only how tables read the records.

    Such a reading (``tables.`` keys only) has nothing to run: its tables are
    the folder's own records (or those of the reading it names under
    ``records``) read its way, and ``eemrepro tables`` finds it in the
    folder's config, with the reading whose records it reads (found among
    ``readings``, the primary config's) so that the stored config names
    both. Returns the config path.
    """
    folder = ResultsFolder(out)
    path = folder.config_file
    if not folder.has_config():
        raise ValueError(f"{path}: no stored run of {config.name}; run the primary reading first "
                         f"(reading {config.reading.name} is reported beside it)")
    other = config.reading.records
    if other and not (Path(out) / "readings" / other / "records").is_dir():
        raise ValueError(f"{Path(out) / 'readings' / other}: no stored run of reading {other}, whose records "
                         f"reading {config.reading.name} reads; run it first (eemrepro run CONFIG --reading {other})")
    raw = folder.raw()
    if raw.get("name") != config.name:
        raise ValueError(f"{path} is not a stored config of {config.name}")
    base = next((r for r in readings if other and r.name == other), None)
    stored = raw.setdefault("readings", {})
    for reading in (base, config.reading):
        if reading is not None:
            entry = reading.to_dict()
            stored[entry.pop("name")] = entry
    return atomic_write(path, config_text(raw, path))


#: What a run records of a local data set's file in the folder's config (for the reports when the file is gone).
_RECORDED = ("sha256", "n", "d", "class_counts", "feature_columns")


def planned_config(folder):
    """(the folder's config as a run of it would read it now, None) for ``status``: a user's estimator
    imported, a local data set's file read as it is now -- its recorded checksum and sizes dropped, so that a
    changed file makes its units stale instead of the config unreadable. Where a run could not read it (a
    module that cannot be imported here, a local file gone): (the config as the reports read it, the
    one-line reason), and no plan can be made of it."""
    from ._config import ConfigError, parse_config

    folder = ResultsFolder(folder)
    folder.required_config()  # one that is no config said as every command says it
    raw, lines = folder.mapping()
    path = folder.config_file
    if isinstance(raw, dict) and isinstance(raw.get("local_datasets"), dict):
        raw["local_datasets"] = {k: {f: v for f, v in spec.items() if f not in _RECORDED}
                                 if isinstance(spec, dict) else spec for k, spec in raw["local_datasets"].items()}
    home = str(path.resolve().parent)
    try:
        return parse_config(raw, source=str(path), lines=lines, home=home), None
    except ConfigError as exc:  # named only: its cells' identities (a module's code, a file's data) unknown
        return folder.config(), str(exc)


def unfinished_cells_in(folder, df):
    """(data set, model) cells of a results folder's config whose units lack a record in ``df`` (its frame).

    The run state the reports need to tell an interrupted grid from a
    finished one; empty without a config.yaml.
    """
    scope = config_scope_in(folder, df)
    return set() if scope is None else scope.unfinished


def config_scope_in(folder, df):
    """What of ``df`` (a results folder's frame) the folder's config.yaml names now (``_units.Scope``).

    None without a config.yaml (every record is read then). Where ``df`` has the records' ``identity``, a record
    the config names that was made under another setting than the config says (a seed edited by hand in it, a
    cell not run again since the config changed) is refused (``StaleRecordsError``): the reports would print it
    as that setting's.
    """
    from ._units import cell_key, scope_rows

    config = ResultsFolder(folder).config()  # reports never import a user's module
    if config is None:
        return None
    kind = get_kind(config.kind)
    # A kind whose scope is made of its units makes them once: the scope and the cells' identities read them
    # (a cell's first unit names its identity, the same at every repeat: the others let go before the frame's work).
    units = kind.units(config) if kind.scope_from_units else None
    wanted = kind.scope_with(config, units)
    if units is not None:
        firsts = {}
        for unit in units:
            firsts.setdefault(cell_key(unit), unit)
        units = list(firsts.values())
    scope = scope_rows(wanted, df)
    if "identity" in df and len(df):
        cells = df[["dataset", "model", "inner", "identity"]]  # what the identities are read from, not a copy
        changed = stale_cells(config, cells[scope.keep] if not scope.keep.all() else cells, units)
        if changed:
            raise StaleRecordsError(_stale_message(folder, changed))
    return scope


class StaleRecordsError(ValueError):
    """A results folder's config.yaml says another setting than records of the cells it names were made under."""


def stale_cells(config, df, units=None):
    """``_units.changed_identities`` of ``df``'s records (a store frame with ``identity``) against what ``config``
    (read for the reports: a user's estimator not imported) says of each cell (``_identity.config_identity``).
    ``units``: the config's units where they are made already (else those of one repeat are made here)."""
    from dataclasses import replace

    from ..models._lookup import is_users
    from ._identity import config_identity
    from ._units import cell_key, changed_identities

    kind = get_kind(config.kind)
    present = set(df["dataset"].astype(object).unique())
    if units is None:
        # A cell's identity is the same at every repeat: the units of one repeat, of the data sets read, name them all.
        units = kind.units(replace(config, datasets=tuple(d for d in config.datasets if d in present),
                                   protocol=replace(config.protocol, repeats=1)))
    identities, estimators = {}, {}
    for unit in units:
        cell = cell_key(unit)
        if cell not in identities and unit.dataset in present:
            identities[cell] = config_identity(kind, config, unit)
            estimators[cell] = [name for name, _ in kind.estimators(config, unit)]
    # Whether a cell's estimator is a user's (``is_users`` reads every installed distribution's files once) is
    # asked only of a cell whose records' identity differs from what its config says.
    return changed_identities(df, identities, _Asked(lambda cell: any(map(is_users, estimators[cell]))))


class _Asked:
    """A set told by a test of each element, run when asked (``x in _Asked(test)``)."""

    def __init__(self, test):
        self.test = test

    def __contains__(self, item):
        return self.test(item)


def _stale_message(folder, changed):
    """One line: which cells' records ``folder``'s config.yaml misdescribes, how, and the two ways out."""
    from ._units import describe_changes

    by_change = {}  # most often one edit changes every cell alike: said once, with its cells
    for d, m, diff in changed:
        by_change.setdefault(describe_changes(diff, "in config.yaml"), []).append(f"{m} on {d}")
    what = "; ".join(f"{change} ({', '.join(cells[:3])}{f' and {len(cells) - 3} more' if len(cells) > 3 else ''})"
                     for change, cells in list(by_change.items())[:3])
    source = next((r.get("config_file") for r in reversed(ResultsFolder(folder).runs()) if r.get("config_file")), None)
    return (f"{Path(folder) / 'config.yaml'} does not say what {len(changed)} of its cells' records were made under: "
            f"{what}{'; ...' if len(by_change) > 3 else ''}. The reports would print them as its setting's: nothing "
            f"was reported. Restore config.yaml if it was edited by hand, or run those cells again with the config "
            f"that says it: eemrepro run CONFIG --out {folder} --rerun-changed"
            + (f" (the last run's was {source})" if source else ""))
