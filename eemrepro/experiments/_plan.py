"""The plan of a run, read-only: what ``run`` executes and ``run --dry-run``, ``status`` and ``audit`` print.

``RunOptions`` holds a run's options as one frozen object; ``check_data``
checksums the data sets run now and checks the baselines (before any lock:
a failed checksum moves nothing); ``plan_run`` reads the store and says, for
every unit, whether it is done -- every record stored, made with the data as
it is now, under the cell's identity now (``cell_identity``: the config's
settings, a user's code, a local data set's definition), a failed fit not
counting under ``retry_failed`` -- and so which units are pending, which
stored cells were made under another identity, which stored records the
config no longer names, and a rough time estimate.
"""

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from ._identity import cell_identity
from ._kinds import get_kind
from ..store import StoreError
from ._run_folder import ResultsFolder, default_out
from ._units import (
    as_category,
    cell_key,
    changed_identities,
    describe_changes,
    done_units,
    frame_keys,
    identity_sha,
    scope_rows,
)

#: The stored columns a plan reads: what a unit's resume and a cell's identity need, and the timings an
#: estimate and the longest-first order are made of.
PLAN_COLUMNS = ["status", "identity_sha", "data_sha256", "identity", "error_message", "fit_seconds",
                "predict_seconds", "path_size", "standalone_fit_seconds"]


@dataclass(frozen=True)
class RunOptions:
    """A run's options (``run_experiment``'s keywords), resolved against its config by ``resolve``."""

    out: Path | None = None
    jobs: int | None = None
    backend: str | None = None  # loky, or dask where a scheduler is named
    scheduler: str | None = None
    fresh: bool = False
    dry_run: bool = False
    mirror: str | None = None
    data_home: str | None = None
    progress: bool = True
    repeats: int | None = None
    skip_unavailable: bool = False
    retry_failed: bool = False
    only_models: tuple | None = None
    only_datasets: tuple | None = None
    rerun_changed: bool = False

    def resolve(self, config):
        """(the config as run now, the config as its folder keeps it, these options with every default
        filled in: ``out``, ``jobs``, ``mirror``, ``data_home`` from the config where not given).

        ``repeats`` overrides the config's ``protocol.repeats`` for this run;
        the folder's config.yaml keeps the config's own unless the flag asks
        for more: a run at fewer repeats (a screen, a chunk of a long run) is
        a partial run of the config, whose reports read every repeat stored.
        """
        stored = config
        if self.repeats is not None:
            if self.repeats < 1:
                raise ValueError(f"repeats must be >= 1, got {self.repeats}")
            config = replace(config, protocol=replace(config.protocol, repeats=int(self.repeats)))
            if self.repeats > stored.protocol.repeats:
                stored = config
        out = Path(self.out) if self.out is not None else default_out(config)
        stored = self._keeping_repeats(out, stored)
        jobs = self.jobs if self.jobs is not None else config.jobs
        options = replace(
            self, backend=self._backend(), out=out,
            jobs=n_jobs(jobs), mirror=self.mirror if self.mirror is not None else config.mirror,
            data_home=self.data_home if self.data_home is not None else config.data_home,
            only_models=None if self.only_models is None else tuple(self.only_models),
            only_datasets=None if self.only_datasets is None else tuple(self.only_datasets))
        return config, stored, options

    def _backend(self):
        """``backend`` as given, else dask where a scheduler is named (``--scheduler`` implies ``--backend
        dask``), else loky; a scheduler with loky is refused (it would be ignored)."""
        if self.scheduler and self.backend not in (None, "dask"):
            raise ValueError(f"--scheduler {self.scheduler} names a Dask scheduler, which --backend "
                             f"{self.backend} does not use: drop --backend (--scheduler implies dask), or "
                             "--scheduler")
        return self.backend or ("dask" if self.scheduler else "loky")

    def _keeping_repeats(self, out, stored):
        """``stored`` with the repeats the folder ``out`` holds (its config.yaml's), where they are more: a run never
        lowers what a folder's tables read. An explicit ``repeats`` is a partial run of the folder's (it keeps them);
        a ``fresh`` run of the whole config starts the folder over; else a config of fewer repeats is refused
        (``FewerRepeatsError``)."""
        held = ResultsFolder(out).repeats()
        if held is None or held <= stored.protocol.repeats or (self.fresh and not self.selects):
            return stored
        if self.repeats is None:
            raise FewerRepeatsError(
                f"{out} holds {held} repeats (its config.yaml) and {stored.source or stored.name} says repeats: "
                f"{stored.protocol.repeats}: its tables would read {stored.protocol.repeats} of them; nothing was run. "
                f"Set repeats: {held} in the config, run with --repeats {stored.protocol.repeats} (a part of the "
                f"folder's {held}: it keeps them), or start the folder over with --fresh")
        return replace(stored, protocol=replace(stored.protocol, repeats=held))

    @property
    def selects(self):
        """Whether ``--only-models`` / ``--only-datasets`` narrow the run."""
        return bool(self.only_models or self.only_datasets)


class FewerRepeatsError(ValueError):
    """A run whose config would lower the repeats a results folder's tables read (``RunOptions.resolve``)."""


def n_jobs(jobs):
    """Workers for ``--jobs`` (None or -1: every core)."""
    import os

    if jobs is None or jobs == -1:
        return os.cpu_count() or 1
    return max(1, int(jobs))


@dataclass(frozen=True)
class DataCheck:
    """The data sets run now with their checksums, and those skipped as unavailable (with why)."""

    sha256: dict
    unavailable: dict


def check_data(config, options):
    """Refuse unknown ``--only-*`` names, checksum the data sets run now, and check the baselines against
    them (``options`` resolved). Reads no store and writes nothing."""
    kind = get_kind(config.kind)
    model_names = sorted({u.model for u in kind.units(replace(config, datasets=config.datasets[:1]))})
    for label, chosen, known in (("model", options.only_models, model_names),
                                 ("data set", options.only_datasets, list(config.datasets))):
        unknown = sorted(set(chosen or ()) - set(known))
        if unknown:
            raise ValueError(f"unknown {label}(s) {unknown}; the config has {known}")
    data = data_checksums(config, options)
    if config.baselines:  # refused before anything runs: a comparison made under two protocols means nothing
        from ._baselines import check_baselines

        check_baselines(config, data.sha256, options.out)
    return data


def data_checksums(config, options):
    """The checksums of the config's data sets run now (``only_datasets``), those that cannot be fetched
    named with why (with ``skip_unavailable``; else the first one's error is raised)."""
    from ..datasets import DatasetError, dataset_checksum, register_local

    # The entries of the config run now: a stored config read since (the folder's, for its repeats) registered
    # the entry it recorded under the same name, whose checksum is the file's as it was.
    for entry in config.local_datasets.values():
        register_local(entry)
    sha, unavailable = {}, {}
    for d in config.datasets:
        if options.only_datasets and d not in options.only_datasets:
            continue
        try:
            sha[d] = dataset_checksum(d, data_home=options.data_home, mirror=options.mirror)
        except DatasetError as exc:
            if not options.skip_unavailable:
                raise
            unavailable[d] = str(exc)
    return DataCheck(sha256=sha, unavailable=unavailable)


@dataclass(frozen=True)
class DataChange:
    """A data set run now whose stored records (of the cells run now) were made on other data than it holds now:
    its file(s), the checksums (``data_sha256``) they were made on and the one now, its rows then and now where
    known (a user's file: the folder's config.yaml recorded them), its old records and the cells they are of, and
    how many of its units are not done."""

    dataset: str
    file: str
    stored: tuple
    now: str
    rows: tuple | None
    records: int
    cells: frozenset
    units: int

    def said(self):
        """What changed, in words: ``data set D: FILE changed since its records were made (data_sha256 ... -> ...,
        rows n -> m)``; ``run``, ``run --dry-run`` and ``status`` each say what follows."""
        rows = f", rows {self.rows[0]} -> {self.rows[1]}" if self.rows else ""
        return (f"data set {self.dataset}: {self.file} changed since its records were made (data_sha256 "
                f"{', '.join(s[:12] for s in self.stored)} -> {self.now[:12]}{rows})")


@dataclass(frozen=True)
class Plan:
    """What a run would do now. ``units`` are those run now (``--only-*``, available data) in the kind's
    order, ``finished`` whether each is done, ``pending`` those that are not; ``identities`` and ``shas``
    cover every cell of the whole config; ``stored`` is the store's frame (``PLAN_COLUMNS``)."""

    config: object
    stored_config: object
    options: RunOptions
    data: DataCheck
    units: list
    finished: np.ndarray
    identities: dict
    shas: dict
    stored: pd.DataFrame = field(repr=False)
    changed: list
    left_out: dict

    @cached_property  # asked by the summary, the estimate and the run: a list of up to a million units, made once
    def pending(self):
        return [u for u, f in zip(self.units, self.finished, strict=True) if not f]

    def identity(self, unit):
        return self.identities[cell_key(unit)]

    def sha(self, unit):
        return self.shas[cell_key(unit)]

    def estimate(self):
        """The wall-time :class:`Estimate` of the pending units on the run's workers (``_schedule.unit_costs``:
        stored timings of the same point under the cell's identity where there are any, else the kind's
        prior, with its range)."""
        return estimate(self.config, self.pending, self.options.jobs, self.stored, self.shas)

    def aside(self):
        """The (data set, model) cells whose stored records the run moves aside before it runs them again: with
        ``fresh`` every stored cell it runs now, with ``rerun_changed`` those of them stored under another
        identity, and always those with records made on other data than now (``data_changes``); never a cell it
        does not run (``--only-*``, a data set unavailable)."""
        options = self.options
        if self.stored.empty:
            return set()
        now = {(u.dataset, u.model) for u in self.units}
        if options.fresh:
            return now & self.stored_cells()
        moved = {cell for change in self.data_changes for cell in change.cells}
        if options.rerun_changed:
            moved |= {(d, m) for d, m, _ in self.changed}
        return now & moved

    @cached_property
    def data_changes(self):
        """[``DataChange``] of the data sets run now, in the config's order: their cells run now whose stored
        records were made on other data (a user's file edited, a registry file revised)."""
        if self.stored.empty:
            return []
        now = {(u.dataset, u.model) for u in self.units}
        other = self.stored[~data_ok(self.stored, self.data.sha256)][["dataset", "model", "data_sha256"]]
        other = other.astype(object)
        other = other[np.array([(d, m) in now for d, m in zip(other["dataset"], other["model"], strict=True)],
                               dtype=bool)]
        changes = []
        for dataset in (d for d in self.config.datasets if d in set(other["dataset"])):
            rows = other[other["dataset"] == dataset]
            cells = frozenset(zip(rows["dataset"], rows["model"], strict=True))
            changes.append(DataChange(
                dataset=dataset, file=_files_of(self.config, dataset),
                stored=tuple(sorted({str(s) for s in rows["data_sha256"]})), now=self.data.sha256[dataset],
                rows=_rows_then_and_now(self.config, self.options.out, dataset), records=len(rows), cells=cells,
                units=sum((u.dataset, u.model) in cells for u in self.pending)))
        return changes

    def stored_cells(self):
        """The (data set, model) cells the store frame has records of."""
        cells = self.stored[["dataset", "model"]].drop_duplicates().astype(object)
        return set(cells.itertuples(index=False, name=None))

    def without(self, cells):
        """This plan's store frame without the records of ``cells`` (what the store holds once they are moved
        aside: the run and its dry run plan the same)."""
        pairs = pd.MultiIndex.from_arrays([self.stored["dataset"].astype(object), self.stored["model"].astype(object)])
        return self.stored[~pairs.isin(list(cells))].reset_index(drop=True)

    def refusal(self):
        """Why the run refuses to go on, in words, or None: stored cells made under another identity than the
        config's that neither ``rerun_changed`` nor ``fresh`` moves aside. ``run``, ``run --dry-run`` and
        ``status`` all say it so."""
        if not self.changed or self.options.rerun_changed or self.options.fresh:
            return None
        return changed_message(self.options.out, self.config, self.changed)

    def by_cell(self):
        """{(data set, model): (units done, units)} of the units run now, in the kind's order."""
        out = {}
        for u, f in zip(self.units, self.finished, strict=True):
            done, total = out.get((u.dataset, u.model), (0, 0))
            out[(u.dataset, u.model)] = (done + bool(f), total + 1)
        return out


def _files_of(config, dataset):
    """The file a user's data set is read from (its path), else the registry's file name(s) of ``dataset``."""
    from ..datasets import get_entry

    entry = config.local_datasets.get(dataset) or get_entry(dataset)
    return ", ".join(f.local or f.name for f in entry.files)


def _rows_then_and_now(config, out, dataset):
    """(rows when ``out``'s records were made, rows now) of a user's data set, where the folder's config.yaml
    recorded them for a file of another checksum than now; else None (a registry data set's rows are its
    registry entry's: a revised file says so in its checksum)."""
    entry = config.local_datasets.get(dataset)
    if entry is None:
        return None
    try:
        raw = ResultsFolder(out).raw()
    except StoreError:  # a folder's config that cannot be read: the rows are not known
        return None
    recorded = (raw.get("local_datasets") or {}).get(dataset) if isinstance(raw, dict) else None
    if not isinstance(recorded, dict) or recorded.get("sha256") == entry.files[0].sha256 or "n" not in recorded:
        return None
    return recorded["n"], entry.expected.get("n")


def plan_run(config, store, options, data, stored=None, stored_config=None):
    """The plan of running ``config`` (as run now) into ``store`` with ``options`` (resolved) on ``data``
    (``check_data``'s); ``stored``: the store's frame, if read already; ``stored_config``: the config as the
    folder keeps it (``RunOptions.resolve``), if not ``config``. Reads only."""
    kind = get_kind(config.kind)
    stored_config = config if stored_config is None else stored_config
    now = replace(config, datasets=tuple(d for d in config.datasets if d in data.sha256))
    units = [u for u in kind.units(now) if not options.only_models or u.model in options.only_models]
    # Identities of every cell of the config, not only of those run now: the folder's config.yaml is
    # rewritten by a run and must not claim a setting that stored records of another cell were not made with.
    whole = now.datasets == config.datasets and not options.only_models
    every_unit = units if whole else kind.units(config)
    identities = cell_identities(kind, config, every_unit)
    shas = {cell: identity_sha(i) for cell, i in identities.items()}
    if stored is None:
        stored = store.frame(PLAN_COLUMNS)
    # Stored records the config no longer names (a grid shrunk since) stay, but count for nothing.
    scope = kind.scope_with(stored_config, every_unit if stored_config is config else None)
    return Plan(config=config, stored_config=stored_config, options=options, data=data, units=units,
                finished=finished_units(units, stored, data.sha256, shas, options.retry_failed),
                identities=identities, shas=shas, stored=stored, changed=changed_identities(stored, identities),
                left_out=scope_rows(scope, stored).left_out)


def cell_identities(kind, config, units):
    """{cell: identity} of the cells of ``units`` (``cell_identity``; a user's code digested once)."""
    identities, codes = {}, {}
    for u in units:
        cell = cell_key(u)
        if cell not in identities:
            identities[cell] = cell_identity(kind, config, u, codes)
    return identities


def finished_units(units, stored, data_sha256, shas, retry_failed=False):
    """Per unit: every one of its records is stored, made with the data as it is now (``data_sha256``) under
    its cell's identity (``shas``), and (with ``retry_failed``) none of them a failed fit."""
    ok = data_ok(stored, data_sha256, retry_failed)
    finished = done_units(units, stored, ok, shas)  # matched as integer codes
    if finished is None:  # a kind whose units are not groups of points x positions: key by key
        done = done_keys(stored, data_sha256, retry_failed=retry_failed)
        finished = [all((k, shas[cell_key(u)]) in done for k in u.keys()) for u in units]
    return np.asarray(finished, dtype=bool).reshape(len(units))


def done_keys(stored, data_sha256, retry_failed=False, keys=None):
    """(key, identity sha) of the stored records made with this data (what resume skips).

    With ``retry_failed``, failed fits do not count as done (timed-out ones do). ``keys``: the
    ``frame_keys`` of ``stored`` as a list, if the caller has them already.
    """
    if stored.empty:
        return set()
    ok = data_ok(stored, data_sha256, retry_failed)
    keys = np.asarray(frame_keys(stored).tolist() if keys is None else keys, dtype=object)
    return set(zip(keys[ok].tolist(), stored["identity_sha"].astype(object).to_numpy()[ok].tolist(), strict=True))


def data_ok(stored, data_sha256, retry_failed=False):
    """Per stored row: made with the data as it is now (``data_sha256``: {data set: checksum}), and (with
    ``retry_failed``) not a failed fit. Compared as category codes, never as ten million strings."""
    if stored.empty:
        return np.zeros(0, dtype=bool)
    datasets, shas = as_category(stored["dataset"]), as_category(stored["data_sha256"])
    expected = shas.cat.categories.get_indexer(pd.Index([data_sha256.get(d) for d in datasets.cat.categories],
                                                        dtype=object))
    codes = datasets.cat.codes.to_numpy()
    ok = (codes >= 0) & (shas.cat.codes.to_numpy() == np.where(codes >= 0, expected[codes], -2)) & \
        (shas.cat.codes.to_numpy() >= 0)
    if retry_failed:
        ok &= (stored["status"] != "failed").to_numpy()
    return ok


def estimate(config, units, n_jobs, timed=None, shas=None):
    """The wall-time :class:`Estimate` of ``units`` on ``n_jobs`` workers (for --dry-run).

    Each unit's cost is ``_schedule.unit_costs``: from the stored timings of
    the same data set, model and point made under the config's identity
    (``timed``: a store frame; ``shas``: {cell: identity sha}) where there are
    any, a resumed run so estimated from its own first part whatever its
    solver costs; any other unit from the kind's prior (``seconds``), which
    may be off by the kind's ``spread`` factors.
    """
    from ._schedule import unit_costs

    kind = get_kind(config.kind)
    costs, measured = unit_costs(config, units, timed, shas, known=True)
    jobs = max(1, n_jobs)
    guessed = np.flatnonzero(~measured)
    if not len(guessed):
        return Estimate(float(costs.sum()) / jobs)
    low = high = float(costs[measured].sum())
    unknown, learned = set(), False
    for i in guessed:
        spread = kind.spread(config, units[i])
        if spread is None:
            unknown.add(str(units[i].model))
            spread = (1.0, 1.0)
        learned = learned or spread != (1.0, 1.0)
        low += costs[i] * spread[0]
        high += costs[i] * spread[1]
    share = float(costs[guessed].sum() / max(costs.sum(), 1e-12))
    if not learned:  # no range to give: the kind's prior is an operation count for every guessed unit
        low = high = None
    return Estimate(float(costs.sum()) / jobs, None if low is None else low / jobs,
                    None if high is None else high / jobs, share=share, unknown=tuple(sorted(unknown)),
                    guessed=True)


@dataclass(frozen=True)
class Estimate:
    """A run's estimated wall seconds; where some units have no timings of their own (``guessed``: a fresh
    store), the ``share`` of the estimate the kind's prior made, the range ``low``..``high`` its spread gives
    (None where it has none) and the models it has no learned prior of (``unknown``: operation counts)."""

    seconds: float
    low: float = None
    high: float = None
    share: float = 0.0
    unknown: tuple = ()
    guessed: bool = False

    def words(self):
        """'rough estimate 12.3 min' and, from a prior, how far off it may be and why."""
        text = f"rough estimate {_minutes(self.seconds)}"
        if not self.guessed:
            return text
        why = ("this store has no timings of its own yet" if self.share > 0.999
               else f"{self.share:.0%} of it has no timings of its own yet")
        if self.low is None:
            return text + f" ({why}: guessed from operation counts, it may be several times off)"
        text += (f" (likely {_minutes(self.low, unit=False)} to {_minutes(self.high)}: {why}, so it is a prior "
                 "learned from the committed stores' fits")
        if self.unknown:
            text += f"; none for {', '.join(self.unknown)}, guessed from operation counts"
        return text + ")"


def _minutes(seconds, unit=True):
    value = seconds / 60
    text = f"{value:.1f}" if value >= 0.95 or value < 0.095 else f"{value:.2g}"
    return f"{text} min" if unit else text


def _defaults_in(config, dataset, model, diff):
    """The keys of ``diff`` that are defaults of ``model``'s estimator now (a user's estimator's parameters its
    config sets nowhere, ``_identity._default_params``): a change there is the estimator's, not the config's. A
    setting taken out of the config (its value now missing, a built-in's default not recorded) is not one."""
    from ._identity import _default_params

    spec = next((m for m in config.models if m.name == model), None)
    if spec is None:
        return set()
    written = {f"params.{k}" for k in spec.params_for(dataset)}
    return (set(diff) & set(_default_params(spec, dataset))) - written


class ChangedConfigError(ValueError):
    """A results folder holds records made under another identity than the config now asks for."""


def changed_message(out, config, changed):
    """Why a run refuses the ``changed`` cells ([(data set, model, {key: (stored, now)})]) of ``out``, and the ways
    on."""
    lines = [f"{out} holds records made under another setting than {config.source or config.name} now asks for:"]
    for dataset, model, diff in changed[:10]:
        said = describe_changes(diff, defaults=_defaults_in(config, dataset, model, diff))
        lines.append(f"  {model} on {dataset}: {said}")
    if len(changed) > 10:
        lines.append(f"  ... and {len(changed) - 10} more cell(s)")
    models = ",".join(sorted({m for _, m, _ in changed}))
    lines.append(f"Nothing was run. Run those cells afresh with --rerun-changed (their records are moved aside), "
                 f"start over with --fresh, use another --out, or `eemrepro forget {out} --models {models}`.")
    return "\n".join(lines)
