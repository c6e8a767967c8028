"""The one reader of records: a set of results folders read whole or a group of data sets at a time, each
kind's records apart, with their provenance (checksums, left-out records, protocol differences, unfinished
cells).

Every command that reports records (``tables``, ``report``, ``check``, ``figures``, the run's printed table,
the readings, the claims, ``audit``) reads them through :class:`Records`; a folder's config and run files
through its owner (``experiments.ResultsFolder``), never by a route of its own.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..experiments._run_folder import ResultsFolder, config_scope_in
from ..experiments._selection import budget_groups
from ..store import ResultStore
from ..store._files import stores_inside
from ..store._segments import as_frame
from ..store._store import LARGE_FRAME, concat_frames, distinct, release_memory, repeats_per_cell
from .._kept import folder_state, kept_read

#: The columns the tables, the checks and the figures read (``ResultStore.frame`` reads nothing else).
REPORT_COLUMNS = ("kind", "status", "converged", "metrics", "criteria", "fit_seconds", "path_size",
                  "standalone_fit_seconds", "finished_at", "run_id", "estimator", "fixed_params", "dcs", "ratio",
                  "values", "embedding", "labels")
#: What the HTML report shows besides: each fold's prediction time (a drill-down the tables do not have).
SITE_COLUMNS = (*REPORT_COLUMNS, "predict_seconds")


#: Of ``REPORT_COLUMNS``, those read for the provenance alone (the records frame does not carry them).
_PROVENANCE_ONLY = ("finished_at", "run_id")


class NoRecordsError(ValueError):
    """The results folders hold no record: a report or a gate over them would say nothing (fails closed)."""


def no_records_message(dirs):
    """Why ``dirs`` give nothing to report, naming the results folders inside them if any (``results/``)."""
    inside = [s for d in dirs for s in stores_inside(d)]
    hint = f"; the results folders inside are: {', '.join(inside[:8])}{' ...' if len(inside) > 8 else ''}" \
        if inside else " (a results folder is what `eemrepro run` writes: results/<config name>)"
    return f"no records in {', '.join(str(d) for d in dirs)}: nothing to report{hint}"


class Records:
    """The records of the results folders ``dirs`` (and of the baselines their configs name), with their
    provenance.

    ``read()`` gives the whole records frame at once: what ``eemrepro.read_results`` gives, limited to
    ``columns`` (and the key columns), each experiment kind's rows in one block (the folders' order within
    it). Iterating gives it a group of data sets at a time, each group of at most ``budget`` stored records
    where a data set alone is not larger (``budget`` None: one group, the whole frame): each group's frame is
    the whole frame restricted to its data sets (the same rows, in the same order), the groups consecutive in
    sorted data set order, each one consistent state of the folders (records a writer adds meanwhile show in
    the groups read after them, as in a later read). Each cell is one data set's, so whatever is made cell by
    cell (the tables' rows, the checks) is made group by group in a fraction of the memory. ``by_kind()``
    gives each group's records by experiment kind (:func:`split_by_kind`).

    ``provenance``, once every group is read, is the same whatever the budget: the folders, configs and
    commits, the records' count, repeats and dates, ``data_sha256`` ({folder: {data set: the checksum its runs
    recorded}}) and ``run_configs`` ({folder: its last run's config}), ``unfinished`` (the (data set, model)
    cells whose folder's config has units the records lack), ``left_out`` (a folder's records its config.yaml no
    longer names -- a grid point, model or data set taken out of it since they were run -- kept in the store, not read:
    {folder: {reason: records}}), and ``protocol_differences`` where folders of different protocols are
    combined. ``unfinished`` is the unfinished cells of the groups read so far (all once every group is).

    A read of folders that hold no record at all raises :class:`NoRecordsError` (unless ``require`` is
    false): a report of nothing is never a pass.

    ``read_once``: a dict that the ``Records`` of one command share (the report's pages and its benchmark's
    groups of folders): a folder read and scoped by its config with these columns is kept there, and the next
    ``Records`` to read it takes that frame (and lets it go) instead of reading it again.
    """

    def __init__(self, dirs, budget=None, columns=REPORT_COLUMNS, require=True, read_once=None):
        self.dirs, self.named = with_baselines(dirs)
        self.columns, self.require, self.read_once = columns, require, read_once
        for d in self.dirs:
            if not Path(d).is_dir():
                raise FileNotFoundError(f"{d} is not a results folder")
        self.groups = [None] if budget is None else self._groups(budget)
        self.provenance = self.group_state = None
        self._facts, self._started = _Facts(self.dirs, self.named), False
        self.unfinished = self._facts.unfinished

    def _groups(self, budget):
        # Most reads fit the budget whole: one group of every data set (None), told from the segments' record
        # counts (no column read).
        totals = [ResultStore(d).record_count() for d in self.dirs]
        if None not in totals and sum(totals) <= budget:
            return [None]
        counts = {}
        for d in self.dirs:
            for dataset, n in ResultStore(d).dataset_counts().items():
                counts[dataset] = counts.get(dataset, 0) + n
        names = sorted(counts)
        return [[names[i] for i in g] for g in budget_groups([counts[n] for n in names], budget)] or [[]]

    def __len__(self):
        return len(self.groups)

    def __iter__(self):
        if self._started:
            raise RuntimeError("the records of a Records are read once (its provenance sums them)")
        self._started = True
        facts = self._facts
        records = 0
        for group in self.groups:
            # What this group is read from, named before it is read (``_kept``): what is made of the group alone
            # (a table's cells) is kept under this name.
            states = [folder_state(d) for d in self.dirs]
            self.group_state = None if None in states else \
                f"{states} {list(self.columns)} {group if len(self.groups) > 1 else None}"
            frame = _read_folders(self.dirs, self.columns, facts, datasets=None if len(self.groups) == 1 else group,
                                  read_once=self.read_once)
            records += len(frame)
            yield frame
            del frame
        if self.require and not records:
            raise NoRecordsError(no_records_message(self.dirs))
        self.provenance = facts.provenance()

    def by_kind(self):
        """Each group's (records frame, {kind: its rows}) (``split_by_kind``), as iterating reads them."""
        for frame in self:
            parts = split_by_kind(frame)
            yield frame, parts
            del frame, parts  # this group's, before the next is read

    def read(self):
        """(the whole records frame, provenance): every group read and put together (one read where the
        budget is None)."""
        frames = list(self)
        return (frames[0] if len(frames) == 1 else concat_frames(frames)), self.provenance

    def read_by_kind(self):
        """({kind: its rows} of the whole records frame, provenance)."""
        records, provenance = self.read()
        return split_by_kind(records), provenance


def split_by_kind(records):
    """{kind: its rows} of a store frame (or such a mapping, returned as it is).

    :class:`Records` puts each kind's rows in one block, which is sliced
    (no copy); otherwise the rows are grouped.
    """
    if isinstance(records, dict):
        return records
    df = as_frame(records)
    if not len(df) or "kind" not in df:
        return {}
    kinds = df["kind"]
    # A store frame's kinds are categorical: their codes as they are (one byte a row), not factorized afresh.
    codes = kinds.cat.codes.to_numpy() if isinstance(kinds.dtype, pd.CategoricalDtype) else \
        pd.factorize(kinds, use_na_sentinel=True)[0]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    if len(starts) == len(np.unique(codes)):
        ends = np.r_[starts[1:], len(df)]
        return {df["kind"].iloc[a]: df.iloc[a:b] for a, b in zip(starts, ends, strict=True) if codes[a] >= 0}
    return {kind: g for kind, g in df.groupby("kind", sort=False, observed=True)}


def _machine(host):
    """A run file's ``host`` in words: ``name: CPU model, BLAS kernels``."""
    blas = host.get("blas")
    said = "not recorded" if not isinstance(blas, list) else ", ".join(blas) or "none found"
    return f"{host.get('name') or 'host not named'}: {host.get('cpu') or 'CPU not recorded'}, BLAS {said}"


class _Facts:
    """What the provenance says of results folders, gathered folder by folder (and group by group of data
    sets: every fact here is a union or a sum over records), made into ``Records``' provenance once."""

    def __init__(self, dirs, named):
        self.dirs, self.named = dirs, named
        self.owner, self.unfinished, self.left_out = {}, set(), {}
        self.finished, self.versions, self.hosts, self.run_ids = [], set(), set(), set()
        self.per_cell = {}  # folder -> each of its cells' count of repeats
        self.cells = {}  # folder -> its (kind, data set) pairs
        self.records = 0

    def add(self, d, these, run_facts, scope):
        """A folder's frame (already cut to its config's scope), its run facts ({run id: facts}) and scope."""
        if scope is not None:
            self.unfinished |= scope.unfinished
            for why, n in scope.left_out.items():
                counts = self.left_out.setdefault(str(d), {})
                counts[why] = counts.get(why, 0) + n
        self.records += len(these)
        if not len(these):
            return
        # Two folders with the same model on the same data set (say results/uci
        # and the h sweep of results/stability) would silently merge their grids
        # into one best-of-grid cell. Records of different kinds never share a table.
        cells = {tuple("" if v is None else v for v in c) for c in distinct(these, ["dataset", "model", "kind"])}
        for key in sorted(cells):
            if key in self.owner and self.owner[key] != d:
                raise ValueError(f"{self.owner[key]} and {d} both hold {key[1]} on {key[0]}; their grids would be "
                                 "merged into one cell: pass them to separate commands")
            self.owner[key] = d
        for run_id in these["run_id"].dropna().unique() if "run_id" in these else ():
            self.run_ids.add(run_id)
            fact = run_facts.get(run_id) or {}
            if fact.get("versions"):
                self.versions.add(json.dumps(fact["versions"], sort_keys=True))
            if fact.get("host"):
                self.hosts.add(fact["host"])
        if "finished_at" in these:
            stamps = pd.to_numeric(these["finished_at"], errors="coerce")
            stamps = stamps[stamps.notna() & (stamps != 0)]
            self.finished += stamps.agg(["min", "max"]).tolist() if len(stamps) else []
        self.per_cell.setdefault(str(d), []).extend(repeats_per_cell(these).values())
        self.cells.setdefault(str(d), set()).update(
            ("" if k is None else k, ds) for k, ds in distinct(these, ["kind", "dataset"]))

    def provenance(self):
        runs, configs, per_dir_repeats, protocols = [], {}, {}, {}
        checksums, run_configs = {}, {}  # per folder: its data's checksums, its last run's config
        for d in self.dirs:
            infos = ResultsFolder(d).runs()
            for info in infos:
                runs.append(info)
                configs[info["config"]["name"]] = info.get("config_file")
                checksums.setdefault(str(d), {}).update(info.get("data_sha256") or {})
            if infos:
                run_configs[str(d)] = infos[-1].get("config")
            # A folder whose cells ran different numbers of repeats (say 5 for the ELM family, 1 for
            # SVM) reads "1 to 5", not its largest count.
            per_cell = self.per_cell.get(str(d), [])
            label = "0" if not per_cell else (
                str(min(per_cell)) if min(per_cell) == max(per_cell) else f"{min(per_cell)} to {max(per_cell)}")
            per_dir_repeats.setdefault(label, []).append(Path(d).name)
            if per_cell:
                protocols[str(d)] = (_protocol_of(d, label), self.cells[str(d)])
        _refuse_other_data(checksums, run_configs, self.cells)
        commits = sorted({r.get("commit") for r in runs if r.get("commit")})
        # One count when every folder has the same; else each count with its folders.
        repeats = next(iter(per_dir_repeats)) if len(per_dir_repeats) == 1 else ", ".join(
            f"{n} ({', '.join(names)})" for n, names in sorted(per_dir_repeats.items(), key=_repeats_order))
        provenance = {
            "results": [str(Path(d)) for d in self.dirs],
            "configs": {k: v for k, v in sorted(configs.items())},
            "commits": commits,
            "package_versions": [json.loads(v) for v in sorted(self.versions)],
            "records": self.records,
            "repeats": repeats,
            "records_finished": _date_range(self.finished),
            "hosts": sorted(self.hosts),
            "unfinished": sorted(self.unfinished),
            "left_out": self.left_out,
            "data_sha256": checksums,
            "run_configs": run_configs,
        }
        # The machines that made the records read, where their runs said (CPU, BLAS kernels): a time table's
        # seconds and an ill-conditioned number's last digits are theirs. Left out where no run said (older runs).
        machines = sorted({_machine(r["host"]) for r in runs if r.get("run_id") in self.run_ids
                           and isinstance(r.get("host"), dict)
                           and (r["host"].get("cpu") or isinstance(r["host"].get("blas"), list))})
        if machines:
            provenance["machines"] = machines
        if self.named:
            provenance["baselines"] = self.named
        differences = protocol_differences(protocols)
        if differences:
            provenance["protocol_differences"] = differences
        return provenance


def _refuse_other_data(checksums, run_configs, cells):
    """Folders read together whose records of one data set were made on other data (their last runs' checksums
    differ: two local files of one name, a data file changed between their runs) are refused, naming both: a row
    of the tables, and every comparison across it, would pair values of different data."""
    held = {}  # data set -> (folder, checksum) of the first folder with records of it
    for folder, sums in checksums.items():
        for dataset in sorted({ds for _, ds in cells.get(folder, ())}):
            sha = sums.get(dataset)
            if sha is None:
                continue
            first, first_sha = held.setdefault(dataset, (folder, sha))
            if first_sha != sha:
                raise ValueError(f"{first} and {folder} both hold data set {dataset}, made on other data "
                                 f"({_data_named(run_configs, first, dataset)}sha256 {first_sha[:12]} against "
                                 f"{_data_named(run_configs, folder, dataset)}sha256 {sha[:12]}): one row would "
                                 "compare values of different data; pass them to separate commands, or name one "
                                 "of the data sets otherwise")


def _data_named(run_configs, folder, dataset):
    """"FILE, " where ``dataset`` is a local file in ``folder``'s last run's config, else ""."""
    spec = ((run_configs.get(folder) or {}).get("local_datasets") or {}).get(dataset) or {}
    return f"{spec['file']}, " if spec.get("file") else ""


def _folder_frame(d, columns, datasets=None, read_once=None):
    """(records frame, run facts, ``config_scope_in``'s scope) of the results folder ``d`` (of ``datasets`` only,
    unless None); ``read_once``: as ``Records``' (a folder read already gives its frame again, not a copy)."""
    key = (str(d.resolve()), tuple(columns), None if datasets is None else tuple(sorted(datasets)))
    if read_once is not None and key in read_once:
        return read_once.pop(key)
    these, run_facts, scope = kept_read(d, columns, datasets, lambda: _read_folder(d, columns, datasets))
    if read_once is not None:
        read_once[key] = (these, run_facts, scope)
        these = these.copy(deep=False)
    return these, run_facts, scope


def _read_folder(d, columns, datasets):
    """``_folder_frame``'s reading, made from the folder's files (``kept_read`` keeps it for the next command)."""
    # The records' identities, checked against what the folder's config.yaml says (``config_scope_in``)
    these = ResultStore(d).frame([*columns, *(["identity"] if "identity" not in columns else [])], datasets=datasets)
    run_facts = these.attrs.get("run_facts") or {}
    these.attrs = {}  # pandas deep-copies ``attrs`` into every frame derived from this one: read once, dropped
    scope = config_scope_in(d, these) if len(these) else None
    return these, run_facts, scope


def _read_folders(dirs, columns, facts, datasets=None, read_once=None):
    """The records frame of ``dirs`` (of ``datasets`` only, unless None), each kind's rows in one block;
    ``facts`` (``_Facts``) gathers what the provenance says of them. ``read_once``: as ``Records``'."""
    pieces = {}
    for d in dirs:
        d = Path(d)
        if not d.is_dir():
            raise FileNotFoundError(f"{d} is not a results folder")
        these, run_facts, scope = _folder_frame(d, columns, datasets, read_once)
        if "identity" not in columns and "identity" in these:
            del these["identity"]  # in place: the frame is this function's own
        if scope is not None and scope.left_out:
            these = these[scope.keep].reset_index(drop=True)
        facts.add(d, these, run_facts, scope)
        # The run ids and finish times give the provenance and nothing else: not carried in the frame
        # every table reads (a column of floats per record).
        for c in [c for c in _PROVENANCE_ONLY if c in these]:
            del these[c]  # in place: the frame is this function's own
        _narrow_counters(these)
        # Rows of one kind end up in one block: each table reads its kind as a slice, not a copy.
        kinds = these["kind"] if "kind" in these else pd.Series(np.nan, index=these.index)
        if len(these) and kinds.nunique(dropna=False) == 1:  # one kind (most folders): the frame itself, no copy
            pieces.setdefault(kinds.iloc[0], []).append(these)
        else:
            for kind, rows in these.groupby(kinds, sort=False, dropna=False, observed=True):
                pieces.setdefault(kind, []).append(rows)
        large = len(these) >= LARGE_FRAME
        del these, kinds
        if large:
            release_memory()  # what reading this folder took, before the next
    records = concat_frames([rows for group in pieces.values() for rows in group])
    pieces.clear()
    if len(records) >= LARGE_FRAME:
        release_memory()  # the folders' frames, before the tables
    return records


def with_baselines(dirs):
    """(``dirs`` and the baseline folders their config.yaml name, {folder: the baselines it names}).

    A results folder whose config names baselines (``baselines:``, paths
    from the folder) is read with them: its models beside the ones it was
    run to be compared with. A baseline that is not there is an error naming it.
    """
    import os

    out, named, seen = [], {}, set()
    for d in dirs:
        key = os.path.realpath(d)
        if key not in seen:
            seen.add(key)
            out.append(Path(d))
    for d in list(out):
        folder = ResultsFolder(d)
        baselines = folder.baselines()
        if not baselines:
            continue
        named[str(d)] = [b for b, _ in baselines]
        for b, there in baselines:
            if not there.is_dir():
                raise FileNotFoundError(f"{folder.config_file} names the baseline {b} ({there}), which is not there: "
                                        "restore it, or take it out of the config's 'baselines'")
            if os.path.realpath(there) not in seen:
                seen.add(os.path.realpath(there))
                out.append(there)
    return out, named


def _protocol_of(folder, repeats):
    """What two stores must share for their cells to meet in a table: their config's protocol
    (``_baselines.protocol_of``) and the repeats their records hold (with the (kind, data set) pairs they
    cover, ``protocol_differences`` compares them)."""
    from ..experiments._baselines import protocol_of

    config = ResultsFolder(folder).config()
    protocol = protocol_of(config) if config is not None else {}
    protocol.pop("kind", None)
    protocol["repeats run"] = repeats
    return protocol


def protocol_differences(protocols):
    """One line for each two stores made under different protocols whose records share a (kind, data set)."""
    lines = []
    folders = list(protocols)
    for i, a in enumerate(folders):
        for b in folders[i + 1:]:
            (pa, ca), (pb, cb) = protocols[a], protocols[b]
            shared = sorted({d for _, d in ca & cb})
            pa, pb = ({k: ({d: v for d, v in x[k].items() if d in shared} if isinstance(x[k], dict) else x[k])
                       for k in x} for x in (pa, pb))  # a per-data-set train_size: on the shared data sets
            keys = [k for k in dict.fromkeys([*pa, *pb]) if pa.get(k) != pb.get(k)]
            if shared and keys:
                what = "; ".join(f"{k} {pa.get(k)!r} in {a}, {pb.get(k)!r} in {b}" for k in keys)
                lines.append(f"{a} and {b} were made under different protocols ({what}), yet are combined on "
                             f"{', '.join(shared[:5])}{' ...' if len(shared) > 5 else ''}")
    return lines


def _repeats_order(item):
    """Sort key of a (repeats label, folders) pair: by the label's numbers ("1 to 5" after "1")."""
    return [int(n) for n in item[0].split(" to ")]


def _narrow_counters(frame):
    """The repeat and fold numbers as 32-bit integers where they are 64-bit ones (half the memory per record;
    every value a store can hold fits: they count splits)."""
    for c in ("repeat", "fold"):
        if c in frame and frame[c].dtype == np.int64 and len(frame) and \
                frame[c].min() >= np.iinfo(np.int32).min and frame[c].max() <= np.iinfo(np.int32).max:
            frame[c] = frame[c].astype(np.int32)


def _date_range(stamps):
    if not stamps:
        return None
    import datetime as dt

    fmt = lambda s: dt.datetime.fromtimestamp(s, dt.timezone.utc).strftime("%Y-%m-%d")
    lo, hi = fmt(min(stamps)), fmt(max(stamps))
    return lo if lo == hi else f"{lo} to {hi}"


