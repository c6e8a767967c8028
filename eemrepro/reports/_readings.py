"""Readings of a paper's open choices (SPEC section 8), reported beside the primary one.

A config's ``readings:`` section names other readings of choices a paper leaves
open; ``eemrepro run CONFIG --reading NAME`` stores one under
``<results>/readings/<NAME>``. For every checked table, ``tables`` writes
``<stem>_readings.md`` (and ``.csv``): the primary reading and each stored
one, what it changes, its cells within the table's default tolerance, and the
cells that moved most against the primary reading. ``check`` judges the primary
reading only (the readings are never read by it).
"""

import math
from pathlib import Path

import pandas as pd

READINGS_DIR = "readings"


def reading_stores(dirs):
    """[(results folder, reading name, reading folder)] of the readings stored under each folder."""
    out = []
    for d in dirs:
        root = Path(d) / READINGS_DIR
        if root.is_dir():
            out += [(Path(d), p.name, p) for p in sorted(root.iterdir()) if (p / "records").is_dir()]
    return out


def _about(results, name, folder):
    """What reading ``name`` changes: its own config's ``reading`` entry, else the results folder's ``readings``."""
    from .._yaml import YAMLDocumentError, load_yaml_file

    for path, key in ((folder / "config.yaml", "reading"), (results / "config.yaml", "readings")):
        try:
            raw = load_yaml_file(path)[0] if path.is_file() else None
        except YAMLDocumentError:
            raw = None
        entry = raw.get(key) if isinstance(raw, dict) else None
        if key == "readings" and isinstance(entry, dict):
            entry = entry.get(name)
        if isinstance(entry, dict):
            changes = entry.get("set") or {}
            text = ", ".join(f"{k}: {v}" for k, v in changes.items()) if isinstance(changes, dict) else ""
            about = entry.get("about") or ""
            return f"{about} ({text})" if about and text else about or text
    return "(not described: no config names this reading)"


def _counts(cells):
    counted = [c for c in cells if c.outcome != "skipped"]
    return sum(c.outcome == "pass" for c in counted), len(counted)


def _values(cells):
    return {(c.dataset, c.method): c.reproduced for c in cells
            if c.outcome in ("pass", "fail") and c.reproduced is not None and math.isfinite(c.reproduced)}


def _moved(cells, primary, top):
    base = _values(primary)
    diffs = [(v - base[k], k) for k, v in _values(cells).items() if k in base]
    diffs.sort(key=lambda t: -abs(t[0]))
    return "; ".join(f"{d} {m} {v:+.3g}" for v, (d, m) in diffs[:top] if v != 0) or "none"


def _size(spec, table):
    if table is None or not len(table):
        return ""
    if spec.builder == "correlation":
        return f"{int(table['layers'].max())} layers per cell"
    if "repeats" in table and table["repeats"].notna().any():
        return f"{int(pd.to_numeric(table['repeats'], errors='coerce').max())} repeats"
    return ""


def readings_frames(dirs, specs, primary_cells, selection="best-of-grid", top=3, primary_tables=None):
    """{table id: frame} of every checked table that a stored reading covers.

    ``primary_cells``: the ``check`` results of the primary reading (default
    tolerance). A reading counts the cells of its own records the same way.
    """
    from ._check import check
    from ._render import load_results
    from ._tables import build_table, split_by_kind, table_applies

    checked = [s for s in specs if s.tolerance is not None]
    rows = {}
    for results, name, folder in reading_stores(dirs):
        records, prov = load_results([folder])
        if not len(records):
            continue
        unfinished = {tuple(c) for c in prov["unfinished"]}
        parts = split_by_kind(records)
        for spec in checked:
            mine = parts.get(spec.kind)
            if mine is None or not table_applies(spec, mine):
                continue
            table = build_table(spec, mine, selection, unfinished=unfinished, layout="full")
            cells = check(parts, unfinished=unfinished, tables=[spec.id], built={spec.id: table})
            base = [c for c in primary_cells if c.table == spec.id]
            passed, counted = _counts(cells)
            rows.setdefault(spec.id, [])
            if not rows[spec.id]:
                p_pass, p_count = _counts(base)
                rows[spec.id].append({"reading": "primary", "changes": "(the config's own settings)",
                                      "size": _size(spec, (primary_tables or {}).get(spec.id)),
                                      "within_tolerance": p_pass, "cells": p_count,
                                      "change": "", "moved_most": ""})
            rows[spec.id].append({"reading": name, "changes": _about(results, name, folder),
                                  "size": _size(spec, table),
                                  "within_tolerance": passed, "cells": counted,
                                  "change": f"{passed - rows[spec.id][0]['within_tolerance']:+d}" if base else "",
                                  "moved_most": _moved(cells, base, top) if base else ""})
    return {k: pd.DataFrame(v) for k, v in rows.items()}


COLUMNS = [("reading", "reading", None), ("changes", "what it changes", None), ("size", "size", None),
           ("within_tolerance", "within tolerance", None), ("cells", "of cells", None),
           ("change", "vs primary", None), ("moved_most", "cells that moved most (vs primary)", None)]
