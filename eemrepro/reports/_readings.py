"""Readings of a paper's open choices (SPEC section 8), reported beside the primary one.

A config's ``readings:`` section names other readings of choices a paper leaves
open; ``eemrepro run CONFIG --reading NAME`` stores one under
``<results>/readings/<NAME>``. For every checked table, ``tables`` writes
``<stem>_readings.md`` (and ``.csv``): the primary reading and each stored
one, what it changes, its size, its cells within the table's default tolerance, the
cells that moved most against the primary reading, and the paper's claims whose verdict
changes when the reading's cells replace those it is compared with (SPEC section 8 runs such
a reading at the paper's size). A reading that only sets
``tables.selection`` or ``tables.metric`` has no store: it is the folder's own
records read that way, or those of the stored reading it names under
``records``. A reading that names another under ``against`` is compared with
that one instead of the primary reading (its comparison cells say so).
``check`` judges the primary reading only (the readings are never read by it).
"""

import dataclasses
import math
from pathlib import Path

import pandas as pd

from ..papers import registered_papers
from .._kept import say_again, with_warnings
from ._shapes import Table

READINGS_DIR = "readings"


def reading_stores(dirs):
    """[(results folder, reading name, reading folder)] of the readings stored under each folder."""
    out = []
    for d in dirs:
        root = Path(d) / READINGS_DIR
        if root.is_dir():
            out += [(Path(d), p.name, p) for p in sorted(root.iterdir()) if (p / "records").is_dir()]
    return out


def _stored_config(folder):
    """The mapping a results folder's config.yaml holds (``ResultsFolder``: one that is not a config is an error
    naming it), or {} where the folder has none."""
    from ..experiments._run_folder import ResultsFolder

    return ResultsFolder(folder).raw() or {}


def _as_reading(name, entry):
    """A stored {about, set} entry as a ``Reading``, or None when it is not one."""
    from ..experiments import Reading

    if not isinstance(entry, dict) or not isinstance(entry.get("set") or {}, dict):
        return None
    return Reading(name=str(name), set=dict(entry.get("set") or {}), about=entry.get("about") or "",
                   records=str(entry.get("records") or ""), against=str(entry.get("against") or ""))


def _named_readings(results):
    """{name: Reading} of the readings a results folder's config names."""
    entries = _stored_config(results).get("readings")
    readings = {name: _as_reading(name, e) for name, e in entries.items()} if isinstance(entries, dict) else {}
    return {name: r for name, r in readings.items() if r is not None}


def _reading_of(results, name, folder):
    """Reading ``name``: its own store's config (``reading``), else the results folder's ``readings``."""
    own = _as_reading(name, _stored_config(folder).get("reading")) if folder else None
    return own or _named_readings(results).get(name)


def _about(reading):
    if reading is None:
        return "(not described: no config names this reading)"
    text = ", ".join(f"{k}: {v}" for k, v in reading.set.items())
    if reading.records:
        text += f"; on the records of reading {reading.records}"
    if reading.against:
        text += f"; compared with reading {reading.against}"
    return f"{reading.about} ({text})" if reading.about and text else reading.about or text


def derived_readings(dirs):
    """[(results folder, reading name)] of the readings a folder's config names that set only ``tables.`` keys."""
    return [(Path(d), name) for d in dirs for name, r in _named_readings(d).items() if r.set and r.derived]


def _read_as(spec, settings, selection):
    """(spec, selection) under a reading's table settings; the published columns stay the table's own."""
    if "metric" in settings and settings["metric"] != spec.metric:
        spec = dataclasses.replace(spec, metric=settings["metric"], published_value=spec.value_column,
                                   published_std=spec.std_column)
    if "selection" in settings:
        spec = dataclasses.replace(spec, selection=settings["selection"])
    return spec, settings.get("selection", selection)


def _counts(cells):
    counted = [c for c in cells if c.outcome != "skipped"]
    return sum(c.outcome == "pass" for c in counted), len(counted)


def _judged(cells):
    """{(data set, column): within tolerance} of the cells a check judged."""
    return {(c.dataset, c.method): c.outcome == "pass" for c in cells if c.outcome != "skipped"}


def _delta(mine, base, keys):
    """Cells within tolerance in ``mine`` less in ``base``, over ``keys``."""
    return sum(mine[k] for k in keys) - sum(base[k] for k in keys)


def _change(cells, primary):
    """Cells within tolerance under the reading less the primary reading's, on the cells both judged."""
    mine, base = _judged(cells), _judged(primary)
    common = mine.keys() & base.keys()
    delta = _delta(mine, base, common)
    return f"{delta:+d}" if len(common) == len(base) else f"{delta:+d} on {len(common)}"


def _by_column(cells, primary):
    """Per column (method, or h): cells within tolerance, and the change against the primary
    reading on the cells both judged (counted only where the reading judged a cell)."""
    mine, base = _judged(cells), _judged(primary) if primary is not None else {}
    out = []
    for column in dict.fromkeys(k[1] for k in mine):
        keys = [k for k in mine if k[1] == column]
        common = [k for k in keys if k in base]
        delta = _delta(mine, base, common)
        out.append(f"{column} {sum(mine[k] for k in keys)}" + (f" ({delta:+d})" if common and delta else ""))
    return "; ".join(out)


def _values(cells):
    return {(c.dataset, c.method): c.reproduced for c in cells
            if c.outcome in ("pass", "fail") and c.reproduced is not None and math.isfinite(c.reproduced)}


def _moved(cells, primary, top):
    base = _values(primary)
    diffs = [(v - base[k], k) for k, v in _values(cells).items() if k in base]
    diffs.sort(key=lambda t: -abs(t[0]))
    return "; ".join(f"{d} {m} {v:+.3g}" for v, (d, m) in diffs[:top] if v != 0) or "none"


def _overlay(base, table, value, keys):
    """``base`` with every cell that ``table`` has a ``value`` for replaced by ``table``'s row (a cell: its
    ``keys``' values).

    What the paper's table reads under a reading that ran only some cells (a reading store
    holds only what it changes): the rest stay those of the reading it is compared with.
    """
    keys = list(keys)
    mine = table[table[value].notna()]
    rest = base.merge(mine[keys], on=keys, how="left", indicator=True)["_merge"].eq("left_only").to_numpy()
    return pd.concat([base[rest], mine[[c for c in base if c in mine]]], ignore_index=True)


def _verdicts(spec, table, base, judged=None):
    """The claims on ``spec``'s table whose verdict the reading's cells change: 'id: before -> after'.
    ``judged``: {(claim id, id of a base table): its verdict}, kept across the readings compared with one base
    (each claim is judged on it once, not once per reading)."""
    from ._claims import judge

    claims = [c for paper in registered_papers() for c in paper.claims if c.table == spec.id]
    if not claims or base is None or not len(base):
        return ""
    judged = {} if judged is None else judged
    read = Table(spec)
    merged = _overlay(base, table, read.value, read.shape.keys)
    changed = []
    for claim in claims:
        key = (claim.id, id(base))
        if key not in judged:
            judged[key] = judge(claim, base, spec)[0]
        before, after = judged[key], judge(claim, merged, spec)[0]
        if before != after:
            changed.append(f"{claim.id}: {before} -> {after}")
    return "; ".join(changed) or "none"


def _size(spec, table):
    if table is None or not len(table):
        return ""
    return Table(spec).shape.size(table)


def start_readings(dirs, specs, selection="best-of-grid"):
    """Start judging the readings of ``dirs`` in worker processes; ``readings_frames(..., started=...)``
    collects them. The caller builds its own tables meanwhile (``tables`` and ``report`` do)."""
    checked = [s for s in specs if s.tolerance is not None]
    readings = [(results, name, folder) for results, name, folder in reading_stores(dirs)]
    readings += [(results, name, None) for results, name in derived_readings(dirs)]
    # Each store read once, with the readings that read it; the stores judged side by side on every core (each
    # is a whole results folder of its own), then put back in the readings' order.
    by_source = {}
    for position, (results, name, folder) in enumerate(readings):
        reading = _reading_of(results, name, folder)
        source = folder if folder is not None else results
        if folder is None and reading is not None and reading.records:
            source = Path(results) / READINGS_DIR / reading.records
            if not (source / "records").is_dir():
                continue
        by_source.setdefault(source, []).append((position, results, name, reading))
    ids = [s.id for s in checked]
    return checked, _submit(_judged_saying, [(source, group, ids, selection) for source, group in by_source.items()])


def _judged_saying(source, group, spec_ids, selection):
    """``_judge_source`` in a worker process, with the warnings it raised (said by the command's own process)."""
    return with_warnings(lambda: _judge_source(source, group, spec_ids, selection))


def readings_frames(dirs, specs, primary_cells, selection="best-of-grid", top=3, primary_tables=None,
                    started=None):
    """{table id: frame} of every checked table that a stored reading covers.

    ``primary_cells``: the ``check`` results of the primary reading (default
    tolerance). A reading counts the cells of its own records the same way.
    ``started``: what ``start_readings`` returned (else they are judged now).
    """
    checked, pending = started if started is not None else start_readings(dirs, specs, selection)
    rows = {}
    judged_by_position = {}
    for part in pending():
        judged_by_position.update(say_again(*part))  # a worker's warnings (a damaged line) said here
    specs_by_id = {s.id: s for s in checked}
    judged = [(specs_by_id[spec_id], results, name, reading, table, cells)
              for position in sorted(judged_by_position)
              for spec_id, results, name, reading, table, cells in judged_by_position[position]]
    # A reading is compared with the primary one, or with the reading it names under ``against``
    # (of the same results folder and table), once every reading's cells are known.
    cells_of = {(results, name, spec.id): cells for spec, results, name, _, _, cells in judged}
    tables_of = {(results, name, spec.id): table for spec, results, name, _, table, _ in judged}
    base_verdicts = {}  # the claims judged on each base table, once (``_verdicts``)
    for spec, results, name, reading, table, cells in judged:
        primary = [c for c in primary_cells if c.table == spec.id]
        primary_table = (primary_tables or {}).get(spec.id)
        if not rows.setdefault(spec.id, []):
            p_pass, p_count = _counts(primary)
            rows[spec.id].append({"reading": "primary", "changes": "(the config's own settings)",
                                  "size": _size(spec, primary_table),
                                  "within_tolerance": p_pass, "cells": p_count,
                                  "by_column": _by_column(primary, None), "change": "", "moved_most": "",
                                  "verdicts": ""})
        against = reading.against if reading is not None else ""
        base = cells_of.get((results, against, spec.id)) if against else primary
        base_table = tables_of.get((results, against, spec.id)) if against else primary_table
        prefix = f"vs {against}: " if against else ""
        passed, counted = _counts(cells)
        row = {"reading": name, "changes": _about(reading), "size": _size(spec, table),
               "within_tolerance": passed, "cells": counted}
        if base is None:  # the reading it is compared with is not stored
            row.update(by_column=_by_column(cells, None), change=f"vs {against}: not stored", moved_most="",
                       verdicts="")
        else:
            verdicts = _verdicts(spec, table, base_table, base_verdicts)
            row.update(by_column=prefix + _by_column(cells, base),
                       change=prefix + _change(cells, base) if base else "",
                       moved_most=prefix + _moved(cells, base, top) if base else "",
                       verdicts=prefix + verdicts if verdicts else "")
        rows[spec.id].append(row)
    return {k: pd.DataFrame(v) for k, v in rows.items()}


def _judge_source(source, group, spec_ids, selection):
    """{position: [(table id, results, name, reading, table, cells)]} of the readings in ``group`` (each
    (position, results folder, name, Reading)) that read the records of ``source``."""
    from ._check import check
    from ._records import Records
    from ._spec import registered_tables
    from ._tables import table_applies

    checked = [s for s in registered_tables() if s.id in set(spec_ids)]
    parts, prov = Records([source], require=False).read_by_kind()
    out = {}
    if not parts:
        return out
    unfinished = {tuple(c) for c in prov["unfinished"]}
    for position, results, name, reading in group:
        for spec in checked:
            mine = parts.get(spec.kind)
            read_spec, read_selection = _read_as(spec, reading.table_set if reading else {}, selection)
            if mine is None or not table_applies(read_spec, mine):
                continue
            table = Table(read_spec, read_selection).build(mine, unfinished=unfinished, layout="full")
            if read_spec.metric != spec.metric:  # judged as the table's own column
                table = table.rename(columns={read_spec.metric: spec.metric,
                                              read_spec.metric + "_std": spec.metric + "_std"})
            cells = check(parts, unfinished=unfinished, tables=[spec.id], built={spec.id: table})
            out.setdefault(position, []).append((spec.id, results, name, reading, table, cells))
    return out


def _submit(function, calls):
    """Start ``function(*call)`` of each call on up to every core (loky worker processes) when there are
    several; returns a callable that waits for their results, in order (one call: run when collected)."""
    import os

    jobs = min(len(calls), os.cpu_count() or 1)
    if jobs <= 1:
        return lambda: [function(*call) for call in calls]
    from joblib.externals.loky import ProcessPoolExecutor

    # An executor of its own, shut down once collected: loky's process-wide reusable one is joblib's too, and a
    # later joblib run (``run`` in the same process) found it without the state joblib gives its own.
    executor = ProcessPoolExecutor(max_workers=jobs)
    futures = [executor.submit(function, *call) for call in calls]

    def collect():
        try:
            results = [f.result() for f in futures]
        except BaseException:
            executor.shutdown(wait=False, kill_workers=True)  # an error or Ctrl-C: no worker left behind
            raise
        executor.shutdown(wait=True)  # every result in: the idle workers end with the command, not after it
        return results

    return collect


COLUMNS = [("reading", "reading", None), ("changes", "what it changes", None), ("size", "size", None),
           ("within_tolerance", "within tolerance", None), ("cells", "of cells", None),
           ("by_column", "within tolerance by column (vs primary)", None),
           ("change", "vs primary (same cells)", None), ("moved_most", "cells that moved most (vs primary)", None),
           ("verdicts", "claims whose verdict it changes (vs primary)", None)]
