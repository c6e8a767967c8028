"""``audit_store``: re-derive a random sample of a results folder's units with today's code and data.

A researcher's numbers must be re-derivable. The audit reads a results folder
(never writing to it, never taking its lock: a live run may be audited),
loads its ``config.yaml`` as a run does (importing the user's estimators),
enumerates the config's units, keeps those whose every record is stored, and
draws a sample of them with a seeded generator. Each sampled unit is first
checked for its provenance: records made under another identity than the
config's now (``identity_sha``) or on other data (``data_sha256``) are named
and not re-run (their values would be compared with another experiment's).
The others are re-run exactly as the runner runs them (``unit_task``,
``_dispatch.dispatch`` on loky) into a scratch results folder, and each new record is
compared with the stored one, field by field, timings and run facts aside.

Sampling: the (data set, model) cells are visited in a random order, round
after round, each round taking from every cell one of its stored units not
yet drawn (uniformly at random): a sample of N units covers min(N, cells)
cells, spread over data sets and models rather than crowding the largest grid.

Comparison (``compare_records``): strings, integers and booleans (status,
error text, ``seed``, ``n_train``, ``n_test``, ``n_iter``, ``path_size``,
``converged``) must be equal; a floating-point value (a metric, a criterion,
a fitted attribute, a D_CS pair, an embedding coordinate) is *float noise*
when ``|a - b| <= FLOAT_NOISE * max(1, |a|, |b|)`` (round-off of a BLAS or a
summation order, far below any printed digit), and differs past that. A
value with none (None, NaN) equals only a value with none. A field the stored
record does not have at all (written before the code recorded it, as
``fitted`` in older stores) holds no stored number: it is listed, not compared.
"""

import json
import math
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ._units import cell_key

#: The relative tolerance of float noise: |a - b| <= FLOAT_NOISE * max(1, |a|, |b|).
FLOAT_NOISE = 1e-9

#: Record fields that say when, where and how fast a record was made, not what it is: never compared (with
#: every field named ``*_seconds``).
IGNORED = frozenset({"run_id", "host", "versions", "finished_at", "started_at", "worker", "warnings"})
#: Fields that find a record (its key) or say what made it (its identity, checked on its own): not compared.
KEYS = frozenset({"dataset", "model", "params", "repeat", "fold", "inner", "kind", "estimator", "fixed_params",
                  "identity", "identity_sha", "data_sha256"})
#: Fields compared exactly, never as float noise: counts, seeds, flags, labels and texts.
EXACT = frozenset({"seed", "n_train", "n_test", "n_iter", "path_size", "converged", "reused_from", "labels",
                   "status", "error_message"})

#: Verdicts of a unit, in the order a summary counts them. ``known``: it differs only where a known-differences
#: file (``load_known``) says the committed numbers are fragile, and why.
EQUAL, NOISE, DIFFERS, OTHER, KNOWN = "equal", "float noise", "differs", "other identity", "known"


class AuditError(ValueError):
    """A folder that cannot be audited (not a results folder, no config.yaml, no records, a plug-in that does
    not import): one line naming it."""


def compared_fields(record):
    """A record (as written) as the flat mapping an audit compares: every field but its key, identity and
    timings; each metric and criterion under its bare name, the error text as ``error_message`` (the names
    of a store frame's columns). A field the record does not have is absent (not None)."""
    out = {}
    for name, value in record.items():
        if name in IGNORED or name in KEYS or name.endswith("_seconds"):
            continue
        if name in ("metrics", "criteria") and isinstance(value, dict):
            out.update(value)
        elif name == "error":
            out["error_message"] = value
        else:
            out[name] = value
    return out


def _frame_fields(columns):
    """Of a store frame's ``columns``, those ``compared_fields`` names (what ``substitute`` replaces)."""
    return [c for c in columns if c not in IGNORED and c not in KEYS and c != "point" and not c.startswith("param_")
            and not c.endswith("_seconds")]


def _plain(value):
    """A frame's value as plain Python: arrays as lists, numpy scalars as numbers, NaN as None."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()] if value.dtype != object else [_plain(v) for v in value]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _json(text):
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def _differences(a, b, exact):
    """(largest relative float difference, whether anything differs past float noise) between two plain values."""
    if isinstance(a, str) and isinstance(b, str) and a != b and not exact:
        # A mapping stored as JSON text (``fitted``): its numbers compared as numbers.
        ja, jb = _json(a), _json(b)
        if isinstance(ja, (dict, list)) and isinstance(jb, (dict, list)):
            return _differences(_plain(ja), _plain(jb), exact)
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return 0.0, True
        parts = [_differences(a[k], b[k], exact) for k in a]
        return max((p[0] for p in parts), default=0.0), any(p[1] for p in parts)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return 0.0, True
        parts = [_differences(x, y, exact) for x, y in zip(a, b, strict=True)]
        return max((p[0] for p in parts), default=0.0), any(p[1] for p in parts)
    if not exact and isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            not isinstance(a, bool) and not isinstance(b, bool) and (isinstance(a, float) or isinstance(b, float)):
        a, b = float(a), float(b)
    if isinstance(a, float) and isinstance(b, float) and not exact:
        if a == b:
            return 0.0, False
        if math.isinf(a) or math.isinf(b):
            return math.inf, True
        relative = abs(a - b) / max(1.0, abs(a), abs(b))
        return relative, relative > FLOAT_NOISE
    # Counts, strings, booleans, a missing value against a present one: equal or not. (An integral float read
    # back from a frame column with gaps equals its integer.)
    same = a == b and isinstance(a, bool) == isinstance(b, bool)
    return 0.0, not same


def compare_records(stored, now):
    """Compare the fields of a stored record with a re-derived one (``compared_fields`` mappings).

    A field the stored record does not have (written before the code
    recorded it) is not a difference: it is listed in ``added``. A field the
    stored record has and today's lacks, or holds otherwise, is.

    Returns
    -------
    verdict : {"equal", "float noise", "differs"}
    largest : (float, str)
        The largest relative difference ``|a - b| / max(1, |a|, |b|)`` of a floating-point value (within float
        noise unless the verdict is "differs") and its field; 0.0 and None when every such value is equal.
    differing : list of (field, stored value, value now)
        The fields past float noise.
    added : list of str
        Fields only today's record has.

    Examples
    --------
    >>> compare_records({"gmean": 0.5, "seed": 3}, {"gmean": 0.5 + 1e-13, "seed": 3})[0]
    'float noise'
    >>> compare_records({"gmean": 0.5}, {"gmean": 0.51})[2]
    [('gmean', 0.5, 0.51)]
    """
    largest, differing, noisy = (0.0, None), [], False
    for name in sorted(set(stored) | set(now)):
        if name not in stored:
            continue
        a, b = _plain(stored[name]), _plain(now.get(name))
        relative, differs = _differences(a, b, name in EXACT)
        if differs:
            differing.append((name, a, b))
        elif relative > 0:
            noisy = True
        if relative > largest[0]:
            largest = (relative, name)
    added = sorted(set(now) - set(stored))
    verdict = DIFFERS if differing else NOISE if noisy else EQUAL
    return verdict, largest, differing, added


@dataclass
class UnitAudit:
    """What the audit found for one unit."""

    unit: object
    verdict: str
    largest: float = 0.0  # the largest relative float difference (past float noise where the unit differs)
    largest_field: str = None
    differing: list = field(default_factory=list)  # [(point id, repeat, fold, field, stored, now)]
    added: list = field(default_factory=list)  # fields only the re-derived records have
    why: str = None  # another identity or other data, in words
    edited: list = field(default_factory=list)  # [(point id, repeat, fold, why)]: a stored record whose key lists
    # and columns disagree (``stored_records``)
    new_records: list = field(default_factory=list)
    kernels: tuple = None  # (the BLAS kernels of the stored records' runs, this machine's) where they differ

    @property
    def label(self):
        u = self.unit
        folds = getattr(u, "n_folds", None)
        where = f"folds 0-{folds - 1}" if folds and folds > 1 else f"fold {u.fold}"
        inner = "" if u.inner is None else f" inner {u.inner}"
        # What its points share (a unit of SVM's C path at one gamma; a projection's point): the unit's own.
        points = u.point_dicts()
        common = {k: v for k, v in points[0].items() if all(k in p and p[k] == v for p in points)}
        shared = f" {json.dumps(common, sort_keys=True)}" if common else ""
        n = len(u.keys())
        return f"{u.dataset} {u.model}{shared} repeat {u.repeat} {where}{inner} ({n} record{'s' * (n != 1)})"


@dataclass
class StoreAudit:
    """An audit of one results folder."""

    folder: Path
    config: object
    seed: int
    population: int  # the config's units whose every record is stored
    units: list = field(default_factory=list)  # UnitAudit, in the order they were judged
    over_budget: int = 0  # units passed over: their stored timings would exceed ``max_seconds``
    not_run: int = 0  # drawn units not started: the re-runs had taken ``max_seconds`` already
    unavailable: dict = field(default_factory=dict)  # data set -> why its drawn units were not audited
    seconds: float = 0.0
    scratch: Path = None  # where the re-derived records were written (kept with ``keep``)

    def count(self, verdict):
        return sum(u.verdict == verdict for u in self.units)

    @property
    def ok(self):
        """Every unit equal or float noise (and at least one audited)."""
        return bool(self.units) and not any(u.verdict in (DIFFERS, OTHER) for u in self.units)


def sample_order(units, rng):
    """The positions of ``units`` in the order an audit draws them: cells (data set, model) in a random order,
    round after round, each round taking one not yet drawn unit (uniformly at random) of every cell."""
    cells = {}
    for i, u in enumerate(units):
        cells.setdefault((u.dataset, u.model), []).append(i)
    groups = [cells[c] for c in sorted(cells)]
    groups = [[g[j] for j in rng.permutation(len(g))] for g in groups]
    order = [groups[j] for j in rng.permutation(len(groups))]
    out = []
    for r in range(max((len(g) for g in order), default=0)):
        out += [g[r] for g in order if r < len(g)]
    return out


def _stored_units(units, stored):
    """Per unit: whether every one of its record keys is stored (under any identity, on any data)."""
    from ._units import done_units, frame_keys

    if stored.empty or not units:
        return np.zeros(len(units), dtype=bool)
    # ``done_units`` matches identities and data too: with every row made to match, it counts keys alone.
    anything = stored.assign(identity_sha=pd.Categorical.from_codes(np.zeros(len(stored), dtype=np.int8), ["*"]))
    cells = dict.fromkeys(map(cell_key, units), "*")
    found = done_units(units, anything, np.ones(len(stored), dtype=bool), cells)
    if found is None:  # a kind whose units are not groups of points x positions: key by key
        keys = set(frame_keys(stored).tolist())
        found = np.array([all(k in keys for k in u.keys()) for u in units], dtype=bool)
    return found


def stored_records(store, units):
    """({key: the latest stored record of that key, as the reports read it}, {key: why the record as written
    differs from that}) for the record keys of ``units``.

    A sealed record whose key lists leave out a value its columns hold (an
    edit by hand: ``disagreements``) is read with that value, as the frame the
    reports read has it, and said why. Only the rows of the units' data sets and models are decoded (each
    segment filtered in Arrow first). The folder is read as a reader reads it,
    without its lock: a segment a live run seals meanwhile makes the pass
    start again.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..store import StoreError, stored_key
    from ..store._files import read_sums
    from ..store._segments import decode, disagreements, said

    keys = {k for u in units for k in u.keys()}
    datasets = pa.array(sorted({u.dataset for u in units}), pa.string())
    models = pa.array(sorted({u.model for u in units}), pa.string())
    for attempt in range(5):
        listing, sums, latest, why = store.segments(), read_sums(store.records_dir), {}, {}
        try:
            for path in listing:
                found = {}
                if path.suffix == ".parquet":
                    table = store._table(path, raw=True, sums=sums)
                    if "dataset" not in table.column_names:
                        continue
                    table = table.filter(pc.and_(pc.is_in(table.column("dataset"), value_set=datasets),
                                                 pc.is_in(table.column("model"), value_set=models)))
                    found = disagreements(table)
                    records = decode(table, found)
                    for r, run_id in zip(records, table.column("run_id").to_pylist(), strict=True):
                        r.setdefault("run_id", run_id)  # whose run file says where it was made (_explained)
                else:
                    records = store.segment_records(path)
                for i, r in enumerate(records):
                    key = stored_key(r)
                    if key in keys:
                        latest[key] = r
                        why.pop(key, None)
                        if i in found:
                            why[key] = said(found[i])
        except (FileNotFoundError, StoreError):
            if attempt == 4 or store.segments() == listing:
                raise
            time.sleep(0.05)
            continue
        return latest, why
    return latest, why


def _unit_seconds(rows):
    """A unit's cost from its stored records' timings (the scheduler's rule) plus a process's start."""
    from ._schedule import records_seconds

    # (A timing the record has not is NaN in the frame, None in a record as written.)
    return records_seconds(rows.astype(object).where(rows.notna(), None).to_dict("records")) + 0.05


def load_audited(folder, only_datasets=None, only_models=None):
    """The config of a results folder, loaded as a run loads it (its estimators imported), and its kind, checked
    to be auditable and to have ``only_datasets`` and ``only_models``; AuditError (one line) if not."""
    from ..store import FolderConfigError, ResultStore
    from ..store._files import stores_inside
    from ._config import ConfigError
    from ._kinds import ExperimentKind, get_kind
    from ._run_folder import ResultsFolder

    folder = Path(folder)
    if not folder.is_dir():
        raise AuditError(f"{folder} is not a results folder ({'a file' if folder.exists() else 'no such folder'})")
    if not (folder / "records").is_dir() and not (folder / "runs").is_dir():
        inside = stores_inside(folder)
        raise AuditError(f"{folder} is not a results folder (no records/ or runs/ in it)"
                         + (f"; the results folders inside are: {', '.join(inside[:8])}" if inside else ""))
    if not ResultStore(folder).segments():
        raise AuditError(f"{folder} holds no records: nothing to audit")
    owner = ResultsFolder(folder)
    try:
        owner.required_config()  # a config that is none said as every command says it, before any import
        config = owner.config(import_estimators=True)
    except (ConfigError, FolderConfigError) as exc:
        raise AuditError(str(exc)) from None
    kind = get_kind(config.kind)
    if type(kind).run is ExperimentKind.run or type(kind).task is ExperimentKind.task:
        raise AuditError(f"{folder}: kind {config.kind} is not auditable yet (it does not say how one of its "
                         "units is run: task and run)")
    try:  # the models as units name them (a kind without models: its own name), from one data set's units
        models = sorted({u.model for u in kind.units(replace(config, datasets=config.datasets[:1]))})
    except ValueError as exc:
        raise AuditError(f"{folder}: {exc}") from None
    for label, chosen, known in (("data set", only_datasets, list(config.datasets)), ("model", only_models, models)):
        unknown = sorted(set(chosen or ()) - set(known))
        if unknown:
            raise AuditError(f"{folder}: unknown {label}(s) {unknown}; its config has {known}")
    return config, kind


#: The store frame's columns the draw reads (each unit's keys, identity, data and timings).
_DRAW_COLUMNS = ["status", "identity_sha", "data_sha256", "fit_seconds", "predict_seconds", "path_size",
                 "standalone_fit_seconds"]


def audit_store(folder, sample=20, fraction=None, seed=0, jobs=None, mirror=None, data_home=None,
                only_datasets=None, only_models=None, max_seconds=None, keep=False, echo=None, known=(),
                skip_unavailable=False):
    """Re-run a seeded sample of a results folder's stored units and compare their records with the stored ones.

    ``known``: entries of a known-differences file (``load_known``): a unit that differs only in the fields an
    entry names for its folder, model and data set is ``known``, with the entry's reason, not ``differs``.
    ``skip_unavailable``: the drawn units of a data set whose files cannot be had (a mirror without them) are
    left out, said in ``StoreAudit.unavailable``, instead of stopping the audit.

    Parameters
    ----------
    folder : path
        The results folder (only read; its lock is not taken).
    sample : int, default 20
        How many units to draw (fewer where fewer are stored).
    fraction : float, optional
        Draw this fraction of the stored units instead (rounded up).
    seed : int
        Seeds the draw: the same seed draws the same units from the same store.
    jobs : int, optional
        Workers (loky), as ``eemrepro run --jobs``; default the config's, else all cores.
    mirror, data_home : optional
        Where the data come from, as for ``eemrepro run`` (default the config's, then the environment).
    only_datasets, only_models : sequence of str, optional
        Draw only units of these data sets / models of the config.
    max_seconds : float, optional
        Pass over a drawn unit whose stored timings would take the re-runs (on ``jobs`` workers) past this
        many seconds; and once the re-runs have taken that long, start no further unit.
    keep : bool
        Keep the scratch results folder of the re-derived records (``StoreAudit.scratch``).
    echo : callable, optional
        Called with each ``UnitAudit`` as it is judged.

    Returns
    -------
    StoreAudit
    """
    from ..store import ResultStore, StoreError, read_runs
    from ._dispatch import dispatch
    from ._plan import RunOptions
    from ._runner import unit_task
    from ._watchdog import close_fit_child

    start = time.monotonic()
    folder = Path(folder)
    config, kind = load_audited(folder, only_datasets, only_models)
    # The run's own options, resolved as a run resolves them (the folder's config fills what is not given).
    _, _, options = RunOptions(out=folder, jobs=jobs, mirror=mirror, data_home=data_home,
                               skip_unavailable=skip_unavailable).resolve(config)
    store = ResultStore(folder)
    population, chosen, over = _draw(store, config, kind, options.jobs, sample, fraction, seed, only_datasets,
                                     only_models, max_seconds)
    audit = StoreAudit(folder=folder, config=config, seed=seed, population=population, over_budget=over)
    try:
        records, edited = stored_records(store, chosen)
    except StoreError as exc:
        raise AuditError(str(exc)) from None
    identities, to_run = _check_provenance(audit, kind, chosen, records, options, echo)
    scratch = Path(tempfile.mkdtemp(prefix="eemrepro-audit-"))
    audit.scratch = scratch if keep else None
    try:
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        hosts = {r.get("run_id"): r.get("host") for r in read_runs(folder)}  # where each stored run was made
        for u, new in _rerun(config, to_run, records, identities, scratch, options.jobs, options.data_home,
                             options.mirror, unit_task, dispatch, folder, deadline):
            result = _explained(_judge(u, [records[k] for k in u.keys()], new, edited), folder, known, records,
                                hosts)
            audit.units.append(result)
            if echo:
                echo(result)
        audit.not_run = len(to_run) - sum(r.verdict != OTHER for r in audit.units)
    finally:
        close_fit_child()
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    audit.seconds = time.monotonic() - start
    return audit


def _explained(result, folder, known, records, hosts):
    """``result`` (a unit's ``UnitAudit``) with what explains a difference: a known entry's reason (then it is
    ``known``; never for a record edited by hand) and the stored run's other BLAS kernels (``hosts``: {run id: its
    run file's host})."""
    from ._watchdog import other_kernels

    if result.verdict == DIFFERS and not result.edited:
        reason = known_reason(known, folder, result)
        if reason is not None:
            result.verdict, result.why = KNOWN, reason
    if result.verdict in (DIFFERS, KNOWN):
        # OpenBLAS picks its kernels by CPU: an ill-conditioned number made on another machine rounds otherwise
        # here, and OPENBLAS_CORETYPE makes this machine pick the stored run's (docs/running.md).
        result.kernels = other_kernels(hosts.get(records[k].get("run_id")) for k in result.unit.keys())
    return result


def _draw(store, config, kind, n_jobs, sample, fraction, seed, only_datasets, only_models, max_seconds):
    """(how many units are stored, the units drawn, how many drawn were passed over for the time budget)."""
    from ..store import StoreError
    from ._units import frame_keys

    folder = store.root
    try:
        stored = store.frame(_DRAW_COLUMNS, datasets=only_datasets)
    except StoreError as exc:
        raise AuditError(str(exc)) from None
    if stored.empty:
        raise AuditError(f"{folder} holds no records: nothing to audit")
    units = [u for u in kind.units(config)
             if (not only_datasets or u.dataset in only_datasets) and (not only_models or u.model in only_models)]
    population = [u for u, h in zip(units, _stored_units(units, stored), strict=True) if h]
    if not population:
        raise AuditError(f"{folder} holds no complete unit of its config.yaml"
                         + (" among the data sets and models chosen" if only_datasets or only_models else ""))
    n = min(len(population), math.ceil(fraction * len(population)) if fraction is not None else sample)
    index = pd.Index(frame_keys(stored))
    chosen, budget, over = [], 0.0, 0
    for i in sample_order(population, np.random.default_rng(seed)):
        if len(chosen) == n:
            break
        u = population[i]
        if max_seconds is not None:
            cost = _unit_seconds(stored.iloc[index.get_indexer(u.keys())]) / n_jobs
            if budget + cost > max_seconds:
                over += 1
                continue
            budget += cost
        chosen.append(u)
    return len(population), chosen, over


def _check_provenance(audit, kind, chosen, records, options, echo):
    """Provenance first, as the run's plan sees it (the data's checksums now, each cell's identity now): a
    drawn unit made under another identity or on other data is named, not re-run. ({cell: identity}, the
    units to re-run); the unavailable data sets' units are left out (``audit.unavailable``)."""
    from dataclasses import replace

    from ..datasets import DatasetError
    from ._plan import cell_identities, data_checksums

    checksums = {}
    for d in sorted({u.dataset for u in chosen}):  # one by one: a missing one is named with its folder
        try:
            data = data_checksums(audit.config, replace(options, only_datasets=(d,)))
        except DatasetError as exc:
            raise AuditError(f"{audit.folder}: data set {d}: {exc}") from None
        checksums.update(data.sha256)
        audit.unavailable.update(data.unavailable)
    chosen = [u for u in chosen if u.dataset not in audit.unavailable]
    identities, to_run = cell_identities(kind, audit.config, chosen), []
    for u in chosen:
        why = _provenance(identities[cell_key(u)], checksums[u.dataset], [records[k] for k in u.keys()])
        if why:
            result = UnitAudit(unit=u, verdict=OTHER, why=why)
            audit.units.append(result)
            if echo:
                echo(result)
        else:
            to_run.append(u)
    return identities, to_run


def _provenance(identity, checksum, stored):
    """Why ``stored`` (a unit's records) were made under another identity than ``identity`` or on other data
    than ``checksum``, in words; None when they were not."""
    from ._units import identity_sha

    why = []
    sha = identity_sha(identity)
    others = [r for r in stored if r.get("identity_sha") != sha]
    if others:
        have = others[0].get("identity") or {}
        keys = sorted(set(have) | set(identity))
        diff = [f"{k} ({have.get(k)!r} stored, {identity.get(k)!r} now)" for k in keys
                if have.get(k) != identity.get(k)]
        why.append("made under another identity: " + (", ".join(diff) or "identity_sha"))
    data = sorted({str(r.get("data_sha256"))[:12] for r in stored if r.get("data_sha256") != checksum})
    if data:
        why.append(f"made on other data: data_sha256 {', '.join(data)} stored, {checksum[:12]} now")
    return "; ".join(why) or None


#: The keys of a known-differences entry: (what its value is, in words; whether it may be left out).
_KNOWN_KEYS = {"store": ("a results folder (a path from the known-differences file's folder)", False),
               "fields": ("a record field, or a non-empty list of them", False),
               "reason": ("a text saying why the committed numbers differ", False),
               "models": ("a model name or shell pattern, or a list of them", True),
               "datasets": ("a data set name or shell pattern, or a list of them", True)}


def load_known(path):
    """The entries of a known-differences file: a YAML list of ``{store, fields, reason}`` with optional ``models``
    and ``datasets`` (shell patterns), each a committed number explained as fragile where it is (REPRODUCTION.md).

    Checked whole before anything runs: ``store`` is a path from the file's
    folder; ``fields``, ``models`` and ``datasets`` are a text (one field or
    pattern) or a non-empty list of texts (an empty list would match nothing:
    leaving ``models`` or ``datasets`` out matches every one); ``reason`` a
    text. Raises AuditError (one line naming the file, the entry and the key).
    """
    from .._yaml import YAMLDocumentError, load_yaml_file

    try:
        raw = load_yaml_file(path)[0]
    except YAMLDocumentError as exc:
        raise AuditError(str(exc)) from None
    if not isinstance(raw, list):
        raise AuditError(f"{path}: a list of {{store, fields, reason}} entries")
    home = Path(path).resolve().parent
    entries = []
    for i, entry in enumerate(raw):
        where = f"{path}: entry {i + 1}"
        if not isinstance(entry, dict) or not {"store", "fields", "reason"} <= set(entry):
            raise AuditError(f"{where}: needs 'store', 'fields' and 'reason'")
        unknown = set(entry) - set(_KNOWN_KEYS)
        if unknown:
            raise AuditError(f"{where}: unknown key(s) {sorted(unknown)}; the keys are {sorted(_KNOWN_KEYS)}")
        checked = {}
        for key, (what, optional) in _KNOWN_KEYS.items():
            value = entry.get(key)
            if key in ("store", "reason"):
                if not isinstance(value, str) or not value.strip():
                    raise AuditError(f"{where}: key '{key}': {what}, got {value!r}")
                checked[key] = value
                continue
            if optional and value == []:
                noun = "model" if key == "models" else "data set"
                raise AuditError(f"{where}: key '{key}': an empty list would match no {noun}; leave the key out to "
                                 f"match every {noun}")
            texts = ["*"] if optional and value is None else [value] if isinstance(value, str) else value
            if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
                raise AuditError(f"{where}: key '{key}': {what}, got {value!r}")
            checked[key] = texts
        store = (home / Path(entry["store"]).expanduser()).resolve()
        if not store.is_dir():  # a typo'd path would excuse nothing, silently
            raise AuditError(f"{where}: key 'store': {entry['store']!r} is no folder ({store}: a path from the "
                             "file's folder)")
        entries.append({**checked, "store": store})
    return entries


def known_reason(entries, folder, result):
    """The reason of the first entry that explains every difference of ``result`` (a unit that differs), or None."""
    from fnmatch import fnmatchcase

    unit, fields = result.unit, {d[3] for d in result.differing}
    for e in entries:
        if e["store"] == Path(folder).resolve() and fields and fields <= set(e["fields"]) \
                and any(fnmatchcase(unit.model, m) for m in e["models"]) \
                and any(fnmatchcase(unit.dataset, d) for d in e["datasets"]):
            return e["reason"]
    return None


def _judge(u, stored, new, edited=None):
    """The ``UnitAudit`` of unit ``u``: its stored records (as the reports read them) against its re-derived ones,
    key by key. ``edited``: {key: why a stored record as written is not what the reports read}; such a unit
    differs, whatever its numbers."""
    from ..store import stored_key

    now = {stored_key(r): r for r in new}
    result = UnitAudit(unit=u, verdict=EQUAL, new_records=new)
    added = set()
    for old in stored:
        key = stored_key(old)
        fresh = now.get(key, {})
        verdict, (largest, name), differing, more = compare_records(compared_fields(old), compared_fields(fresh))
        added |= set(more)
        point = json.dumps(old["params"], sort_keys=True)
        if (edited or {}).get(key):
            result.edited.append((point, old["repeat"], old["fold"], edited[key]))
            verdict = DIFFERS
        result.differing += [(point, old["repeat"], old["fold"], *d) for d in differing]
        if largest > result.largest:
            result.largest, result.largest_field = largest, name
        if verdict == DIFFERS:
            result.verdict = DIFFERS
        elif verdict == NOISE and result.verdict == EQUAL:
            result.verdict = NOISE
    result.added = sorted(added)
    return result


def _as_frame(records):
    """Records (as a worker returns them) as the frame ``ResultStore.frame`` would read them."""
    from ..store._segments import records_frame

    return records_frame(records)


def _rerun(config, units, records, identities, scratch, n_jobs, data_home, mirror, unit_task, execute, folder,
           deadline=None):
    """Yield (unit, its records now) as each of ``units`` is re-run as the runner runs it (``unit_task``,
    ``execute`` on loky), the records appended to a scratch results folder.

    Past ``deadline`` (a ``time.monotonic()``), no further unit is started: the stored timings a draw is
    budgeted by leave out the data's loading and scoring, and another machine's load.

    A point the stored unit records as skipped after a timeout (the run's
    ``after_timeout`` rule, set off by a fit elsewhere in the run, in an order
    that depended on the schedule) is skipped again: it was never computed,
    so there is nothing to re-derive.
    """
    from ..store import ResultStore
    from ..store._files import atomic_write
    from ._run_folder import ResultsFolder
    from ._units import identity_sha, point_id

    if not units:
        return
    store = ResultStore(scratch)
    with store.writing("eemrepro audit"):
        atomic_write(ResultsFolder(scratch).config_file, ResultsFolder(folder).config_file.read_bytes())
        store.run_id = store.new_run_id()

        def tasks():  # consumed as workers free up: the deadline is checked as each unit is dispatched
            for i, u in enumerate(units):
                if deadline is not None and time.monotonic() > deadline:
                    return
                skipped = {point_id(records[k]["params"]) for k in u.keys()
                           if records[k]["status"] == "skipped-after-timeout"}
                cell = cell_key(u)
                task = unit_task(config, u, identities[cell], identity_sha(identities[cell]), store.run_id,
                                 data_home, mirror, skip=lambda p, skipped=skipped: point_id(p) in skipped)
                yield [dict(task, unit_index=i)]

        try:
            for index, new in (done for batch in execute(tasks(), n_jobs, "loky", None) for done in batch):
                store.append(new)
                yield units[index], new
        finally:
            store.close()


def substitute(frame, records):
    """``frame`` (a store frame) with the rows of ``records``' keys holding those records' compared fields.

    What a cell would read were ``records`` the stored ones: the audit's
    "does the printed cell change". A copy; the columns changed hold plain
    objects (a categorical has no category for a new status).
    """
    from ._units import frame_keys

    now = _as_frame(records)
    if frame.empty or now.empty:
        return frame
    out = frame.copy()
    at = pd.Index(frame_keys(out)).get_indexer(frame_keys(now))
    hit = at >= 0
    for c in _frame_fields(out.columns):
        values = now[c].to_numpy(dtype=object) if c in now else np.full(len(now), None, dtype=object)
        column = out[c].astype(object).to_numpy(copy=True)
        for row, value in zip(at[hit], values[hit], strict=True):
            column[row] = value
        converted = pd.Series(column, index=out.index)
        if pd.api.types.is_numeric_dtype(frame[c].dtype):
            converted = pd.to_numeric(converted, errors="coerce")
        out[c] = converted
    return out
