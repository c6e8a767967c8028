"""``check``: compare reproduced cells with the published ones under a tolerance.

Each registered table declares its default rule (``TableSpec.tolerance``:
``|reproduced - published| <= max(abs, published std if use_std)``). A YAML
file (or inline ``gmean=3,spearman=0.2``, keyed by a table's metric) changes
it per table and per cell, so a user's CI can pin known differences
explicitly::

    missing: fail            # a published cell with no reproduced value: fail | skip
    tables:
      a_metric_table: {abs: 2.0, use_std: true}
      a_correlation_table: {abs: 0.1}
    cells:
      - {table: a_metric_table, dataset: sonar, method: MyModel, abs: 12, reason: "..."}
      - {table: a_correlation_table, dataset: sonar, h: 1, skip: true, reason: "..."}

Cells the paper did not report are skipped and counted, and so are published
cells with no record at all (not run here: a user's own store is not a failed
reproduction); a cell that was run and has no value (an interrupted grid,
failed or timed-out fits) is missing. Tables without a
default rule (training times depend on the machine) are not checked.
``pin_differences`` writes such a file from a check: every failing cell
pinned at its current delta plus the table's margin, every missing one
skipped, reasons already written for a cell kept, so the pins can be
regenerated after a new run.
"""

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .._yaml import YAMLDocumentError, load_yaml_file
from ..papers import registered_papers
from .._kept import kept, stable_text, tree_state
from ._records import split_by_kind, with_baselines
from ._spec import registered_tables
from ._shapes import Table
from ._tables import applying_records, rows_by_datasets


def _checked_specs():
    return {s.id: s for s in registered_tables() if s.tolerance is not None}


def defaults():
    """{table id: default rule} of every registered table that is checked."""
    return {k: {"use_std": False, **s.tolerance} for k, s in _checked_specs().items()}


def describe_rule(spec):
    rule = {"use_std": False, **spec.tolerance}
    return f"|delta| <= max({rule['abs']:g}, published std)" if rule["use_std"] else f"|delta| <= {rule['abs']:g}"


_TABLE_KEYS = {"abs", "use_std", "skip"}
_CELL_KEYS = {"table", "dataset", "method", "h", "abs", "use_std", "skip", "reason"}


class ToleranceError(ValueError):
    pass


@dataclass
class Tolerance:
    tables: dict = field(default_factory=defaults)
    cells: list = field(default_factory=list)
    missing: str = "fail"

    def for_cell(self, table, dataset, method=None, h=None):
        rule = dict(self.tables[table])
        reason = None
        for c in self.cells:
            if c["table"] == table and c.get("dataset") == dataset and c.get("method", method) == method \
                    and c.get("h", h) == h:
                rule.update({k: v for k, v in c.items() if k in ("abs", "use_std", "skip")})
                reason = c.get("reason")
        return rule, reason


#: Where a checkout keeps the pins of its committed stores' known differences (``make report``, CI's check).
COMMITTED_PINS = Path(".ci") / "published-pins.yaml"


def baseline_pins(prov):
    """The pins committed beside the baselines the results name (``prov``: the ``Records``' provenance), or None.

    A baseline that is a committed store of a checkout (``<checkout>/results/<name>``, with the checkout's
    ``COMMITTED_PINS``) is judged as the checkout judges it: its known differences from the paper pinned, with
    their reasons, not counted as outside a tolerance the user's models have nothing to do with. The first
    such file of the baselines, in the order the configs name them.
    """
    import os

    for folder, baselines in prov.get("baselines", {}).items():
        for b in baselines:
            store = Path(os.path.realpath(Path(folder) / b))
            pins = store.parent.parent / COMMITTED_PINS
            if store.parent.name == "results" and pins.is_file():
                return pins
    return None


def load_tolerance(spec=None):
    """A tolerance from a YAML file path, an inline ``gmean=3,spearman=0.2`` or the defaults."""
    tol = Tolerance()
    if spec is None:
        return tol
    if Path(spec).is_file():
        try:
            raw = load_yaml_file(spec)[0] or {}
        except YAMLDocumentError as exc:
            raise ToleranceError(str(exc)) from None
        source = str(spec)
        if not isinstance(raw, dict):
            raise ToleranceError(f"{source}: a tolerance file is a mapping with keys missing, tables, cells")
    elif "=" in str(spec):
        raw = {"tables": {}}
        for part in str(spec).split(","):
            key, _, value = part.partition("=")
            try:
                number = float(value)
            except ValueError:
                raise ToleranceError(f"--tolerance {spec!r}: {part!r} is not key=number") from None
            by_metric = {}
            for t in _checked_specs().values():
                by_metric.setdefault(Table(t).value, []).append(t.id)
            names = by_metric.get(key.strip())
            if names is None:
                raise ToleranceError(f"--tolerance {spec!r}: unknown key {key!r}; use one of {sorted(by_metric)}")
            for n in names:
                raw["tables"][n] = {"abs": number}
        source = "--tolerance"
    else:
        raise ToleranceError(f"--tolerance {spec!r}: neither a file nor key=value pairs")
    unknown = set(raw) - {"missing", "tables", "cells"}
    if unknown:
        raise ToleranceError(f"{source}: unknown key(s) {sorted(unknown)}; valid: missing, tables, cells")
    if raw.get("missing", "fail") not in ("fail", "skip"):
        raise ToleranceError(f"{source}: key 'missing' must be fail or skip, got {raw['missing']!r}")
    tol.missing = raw.get("missing", "fail")
    for name, rule in (raw.get("tables") or {}).items():
        if name not in tol.tables:
            raise ToleranceError(f"{source}: key 'tables.{name}': unknown table; valid: {sorted(tol.tables)}")
        bad = set(rule) - _TABLE_KEYS
        if bad:
            raise ToleranceError(f"{source}: key 'tables.{name}': unknown key(s) {sorted(bad)}")
        tol.tables[name].update(rule)
    for i, cell in enumerate(raw.get("cells") or []):
        bad = set(cell) - _CELL_KEYS
        if bad or "table" not in cell or "dataset" not in cell:
            raise ToleranceError(f"{source}: key 'cells.{i}': needs table and dataset; unknown {sorted(bad)}")
        if cell["table"] not in tol.tables:
            raise ToleranceError(f"{source}: key 'cells.{i}.table': unknown table {cell['table']!r}")
        tol.cells.append(cell)
    return tol


@dataclass
class CellResult:
    table: str
    dataset: str
    method: str  # "h=<h>" for a correlation table
    reproduced: float
    published: float
    tolerance: float
    outcome: str  # pass | fail | missing | skipped
    reason: str = None
    key: dict = None  # its fields in a tolerance file besides table and data set (``TableShape.cell_key``)

    def line(self):
        what = f"{self.table} {self.dataset} {self.method}"
        if self.outcome == "missing":
            return f"MISSING {what}: no reproduced value (published {self.published:g})"
        return (f"FAIL {what}: reproduced {self.reproduced:.3g}, published {self.published:.3g}, "
                f"delta {self.reproduced - self.published:+.3g} exceeds tolerance {self.tolerance:.3g}")


def _compare(table, dataset, key, method, value, pub, pub_std, tol, run_here=True):
    """``key``: the cell's fields in a tolerance file ({"method": ...} or {"h": ...}); ``method``: its name."""
    rule, reason = tol.for_cell(table, dataset, **key)
    limit = max(rule["abs"], pub_std if rule.get("use_std") and pub_std is not None and pub_std == pub_std else 0.0)
    cell = lambda outcome, why=reason: CellResult(table, dataset, method, value, pub, limit, outcome, why, key)
    if pub is None or pub != pub or rule.get("skip"):
        return cell("skipped")
    if not run_here:
        return cell("skipped", reason or "not run here")
    if value is None or value != value or math.isinf(value):
        return cell("skipped" if tol.missing == "skip" else "missing")
    return cell("pass" if abs(value - pub) <= limit + 1e-9 else "fail")


def build_checked(dirs, budget=None):
    """(built, results): {table id: table} of every checked table the records of ``dirs`` cover, in the full
    layout with the default selection, and of every table only a claim judges, in the run layout (as
    ``evaluate_claims`` builds one): what ``check`` compares and the claims judge (``built`` of both), each
    table built once, a group of data sets at a time (``rows_by_datasets``); ``results.provenance`` and
    ``results.unfinished`` are its ``Records``'."""

    checked = _checked_specs()
    claimed = {c.table for paper in registered_papers() for c in paper.claims}
    specs = [s for s in registered_tables() if s.id in checked or s.id in claimed]

    def build():
        results, made, applies, _ = rows_by_datasets(dirs, specs, budget=budget)
        built = {s.id: made[(s.id, "best-of-grid")].frame("full" if s.id in checked else "run")
                 for s in specs if s.id in applies}
        return built, _Read(results.provenance, results.unfinished, results.groups)

    # Kept for the next command that reads these folders unchanged (``_kept``).
    state = tree_state(with_baselines(dirs)[0])
    return kept(None if state is None else f"checked {state} {[str(d) for d in dirs]} {stable_text(specs)} "
                f"{sorted(checked)} {budget}", build)


@dataclass
class _Read:
    """What ``check`` asks of a ``Records`` once its tables are built: its provenance, unfinished cells and the
    groups of data sets it was read in."""

    provenance: dict
    unfinished: set
    groups: list


def check(records, tolerance=None, reference=None, unfinished=(), tables=None, built=None):
    """Compare every published cell of the registered tables the records cover.

    ``records``: a store frame (``Records``'), a list of records, or a
    {kind: frame} mapping (``split_by_kind``); or None where ``built`` holds
    every table that applies (``tables`` builds the tables a group of data sets
    at a time, and keeps no frame of all the records).

    A table is checked when the records hold data for it (its experiment
    kind, and its criterion where it needs one); within it, every published
    cell is compared, and one with no reproduced value is missing (a failure
    unless ``missing: skip``). ``tables``: only these table ids. ``built``:
    {table id: table} already built from these records in the full layout with
    the default selection (``tables`` and ``report`` pass theirs: none is built twice).

    With ``reference`` (records of a stored reproduction), the cells of the
    reference replace the published ones in every metric table of the
    selection the run uses: a regression check of a new run against committed
    results (each table's own tolerance applies).
    """
    tol = tolerance or Tolerance()
    results = []
    parts = split_by_kind(records) if records is not None else None
    refs = split_by_kind(reference) if reference is not None else None
    for spec in _checked_specs().values():
        if tables is not None and spec.id not in tables:
            continue
        applies, mine = applying_records(spec, parts, built)
        if not applies:
            continue
        table = Table(spec)
        if reference is not None and (not table.shape.takes_reference or spec.selection is not None):
            continue
        ref = None if refs is None else refs.get(spec.kind, pd.DataFrame())
        t = (built or {}).get(spec.id) if reference is None else None
        if t is None:
            t = table.build(mine, reference=ref, unfinished=unfinished,
                            layout="run" if reference is not None else "full")
        # A published cell with no record at all was not run here (a user's own store, a partial
        # config): skipped, not a failure. A cell that was run and has no value (an interrupted
        # grid, failed or timed-out fits) is missing.
        label, cells = table.shape.cell_label, table.shape.checked_cells(table, t)
        results += [_compare(spec.id, dataset, key, label(key), value, pub, pub_std, tol, run_here=here)
                    for dataset, (key, value, pub, pub_std, here) in zip(t["dataset"], cells, strict=True)]
    return results


def summary_line(results):
    counted = [r for r in results if r.outcome != "skipped"]
    passed = sum(r.outcome == "pass" for r in counted)
    skipped = len(results) - len(counted)
    return f"within tolerance: {passed} of {len(counted)} cells ({skipped} skipped)"


def _cell_key(cell):
    """The tolerance-file fields that identify ``cell`` (a CellResult or a YAML entry)."""
    if isinstance(cell, CellResult):
        key = cell.key
        if key is None:  # a cell made elsewhere: its table's shape reads its name back
            spec = next((s for s in registered_tables() if s.id == cell.table), None)
            key = Table(spec).shape.cell_fields(cell.method) if spec is not None else {"method": cell.method}
        return {"table": cell.table, "dataset": cell.dataset, **key}
    return {k: cell[k] for k in ("table", "dataset", "method", "h") if k in cell}


def pin_differences(results, tolerance=None, reason="known difference, see REPRODUCTION.md", previous=None):
    """A tolerance mapping under which ``results`` pass, pinning each difference.

    A failing cell gets ``abs`` = |delta| + a small margin (rounded up), so a
    later drift beyond today's difference fails again; a missing cell gets
    ``skip: true``. ``previous`` (a mapping loaded from an earlier pin file)
    supplies the reasons of cells pinned before; its table rules are kept.
    """
    tol = tolerance or Tolerance()
    previous = previous or {}
    reasons = {tuple(sorted(_cell_key(c).items())): c.get("reason") for c in previous.get("cells") or []}
    cells = []
    for c in results:
        if c.outcome not in ("fail", "missing"):
            continue
        key = _cell_key(c)
        entry = dict(key)
        if c.outcome == "missing":
            entry["skip"] = True
        else:
            spec = _checked_specs().get(c.table)
            margin = spec.pin_margin if spec is not None else 0.2
            # Rounded up to the hundredth, after rounding off float noise (6.53 + 0.2 is 6.730000000000001).
            entry["abs"] = math.ceil(round((abs(c.reproduced - c.published) + margin) * 100, 6)) / 100
        entry["reason"] = reasons.get(tuple(sorted(key.items()))) or reason
        cells.append(entry)
    return {"missing": tol.missing, "tables": {k: dict(v) for k, v in tol.tables.items()}, "cells": cells}
