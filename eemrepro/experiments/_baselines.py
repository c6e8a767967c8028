"""Baselines: the stores a config's models are compared with, made under the same protocol.

A config names them (``baselines: [../results/uci]``, paths from the config's
folder). A run checks, before it fits anything, that each was made under the
config's kind and protocol (every key that changes a cell's value, its spread
or whether it ran: splitter, folds, repeats, seed, train size, scaling,
selection, the fit budget) and on the same data (the records' checksums, and
the definition of a user's own data set), and refuses with the first
difference named. The
readers set the baselines beside the config's own records, and flag any two
stores of different protocols whose records meet in a table.
"""

import os
from dataclasses import fields

from ._config import ConfigError, Protocol
from ..store import FolderConfigError
from ._run_folder import ResultsFolder, baseline_dirs

#: Protocol keys that change no cell's value, so two stores may differ in them: the criteria recorded beside
#: the metrics, the standalone timing of a path's points (a time table's seconds, not its metrics), and the BLAS
#: threads of a fit (rounding only, as another BLAS build; also left out of the cells' identity).
NOT_COMPARED = ("criteria", "standalone_timing", "fit_threads")
#: The protocol keys two stores must share for their cells to be compared, in the order a difference is named:
#: every field of ``Protocol`` but ``NOT_COMPARED`` (a field added later is compared unless listed there).
PROTOCOL_KEYS = tuple(f.name for f in fields(Protocol) if f.name not in NOT_COMPARED)


class BaselineError(ConfigError):
    """A baseline store missing, or made under another protocol or on other data than the config's."""


def protocol_of(config):
    """{key: value} of ``PROTOCOL_KEYS`` (``inner_folds`` only under nested selection), and the kind."""
    proto = config.protocol
    out = {"kind": config.kind}
    for key in PROTOCOL_KEYS:
        if key == "inner_folds" and proto.selection != "nested":
            continue
        out[key] = getattr(proto, key)
    return out


def first_difference(mine, theirs, datasets=None):
    """The first key of ``protocol_of`` that differs as ``(key, mine, theirs)``, or None.

    A per-data-set ``train_size`` is compared on ``datasets`` alone (those both
    stores hold): a config of a few of a paper's data sets names only theirs.
    """
    mine, theirs = dict(mine), dict(theirs)
    if datasets is not None:
        for p in (mine, theirs):
            if isinstance(p.get("train_size"), dict):
                p["train_size"] = {d: v for d, v in p["train_size"].items() if d in set(datasets)}
    for key in ("kind", *PROTOCOL_KEYS):
        if mine.get(key) != theirs.get(key):
            return key, mine.get(key), theirs.get(key)
    return None


def check_baselines(config, data_sha256, out=None):
    """Refuse (:class:`BaselineError`) a baseline that is not a results folder, is the run's own folder
    (``out``), holds a model of the config's name on one of its data sets, was made under another protocol
    than ``config`` (its first difference named), or on other data (``data_sha256``: {data set: checksum} of
    the data the run uses). Returns the baseline folders. Called before anything runs."""
    from ..store import ResultStore
    from ..store._files import is_store
    from ._identity import data_identity

    where = f"{config.source or config.name}: key 'baselines'"
    dirs = baseline_dirs(config)
    mine = protocol_of(config)
    for named, d in zip(config.baselines, dirs, strict=True):
        shown = f"{named!r} ({d.resolve()})" if str(named) != str(d) else f"{d}"
        if out is not None and os.path.realpath(d) == os.path.realpath(out):
            raise BaselineError(f"{where}: {shown} is this run's own results folder (--out); a store cannot be "
                                "its own baseline: name the papers' stores, or run into another folder")
        if not d.is_dir() or not is_store(d):
            what = "no such folder" if not d.exists() else "not a results folder (what `eemrepro run` writes)"
            raise BaselineError(f"{where}: {shown}, from the config's folder, is {what}")
        try:
            theirs = ResultsFolder(d).config()
        except FolderConfigError as exc:
            raise BaselineError(f"{where}: {exc}") from None
        if theirs is None:
            raise BaselineError(f"{where}: {d} has no config.yaml, so its protocol cannot be checked")
        shared = set(config.datasets) & set(theirs.datasets)
        clash = sorted({m.name for m in config.models} & {m.name for m in theirs.models}) if shared else []
        if clash:
            raise BaselineError(f"{where}: {d} also has a model named {clash[0]!r} on {sorted(shared)[0]}; the "
                                f"tables would merge the two into one cell: rename this config's {clash[0]!r}")
        diff = first_difference(mine, protocol_of(theirs), shared)
        if diff is not None:
            key, a, b = diff
            name = "kind" if key == "kind" else f"protocol.{key}"
            raise BaselineError(f"{where}: {d} was made with {name} {b!r}, this config has {a!r}; its cells "
                                f"cannot be compared with this run's (set {name}: {b!r} to compare with it)")
        for dataset in sorted(set(config.datasets) & set(theirs.datasets)):
            a, b = data_identity(config, dataset), data_identity(theirs, dataset)
            if a != b:
                key = next(k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))
                raise BaselineError(f"{where}: {d} holds {dataset} read another way ({key} {b.get(key)!r} there, "
                                    f"{a.get(key)!r} here); its cells cannot be compared with this run's")
        frame = ResultStore(d).frame(["data_sha256"])
        if len(frame):
            stored = frame[["dataset", "data_sha256"]].astype(object).drop_duplicates()
            for dataset, sha in stored.itertuples(index=False, name=None):
                if dataset in data_sha256 and sha != data_sha256[dataset]:
                    raise BaselineError(f"{where}: {d} holds records of {dataset} made on other data (sha256 "
                                        f"{str(sha)[:12]}..., the data here is {data_sha256[dataset][:12]}...)")
    return dirs
