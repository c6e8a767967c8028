"""``check``: compare reproduced cells with the published ones under a tolerance.

Default tolerance: |reproduced - published| <= max(2 points, published std) for
GMean (EEM Tables 4 and 6) and |delta rho| <= 0.1 for Spearman (Table 1). A
YAML file (or inline ``gmean=3,spearman=0.2``) changes it per table and per
cell, so a user's CI can pin known differences explicitly::

    missing: fail            # a published cell with no reproduced value: fail | skip
    tables:
      eem_table4: {abs: 2.0, use_std: true}
      eem_table1: {abs: 0.1}
    cells:
      - {table: eem_table4, dataset: sonar, method: WELMsig, abs: 12, reason: "..."}
      - {table: eem_table1, dataset: sonar, h: 1, skip: true, reason: "..."}

Cells the paper did not report are skipped and counted. Training times
(Table 5) depend on the machine and are not checked. ``pin_differences``
writes such a file from a check: every failing cell pinned at its current
delta plus a margin, every missing one skipped, reasons already written for a
cell kept, so the pins can be regenerated after a new run.
"""

import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ._tables import correlation_table, gmean_table

DEFAULTS = {
    "eem_table4": {"abs": 2.0, "use_std": True},
    "eem_table6_gaussian": {"abs": 2.0, "use_std": True},
    "eem_table6_kde": {"abs": 2.0, "use_std": True},
    "eem_table1": {"abs": 0.1, "use_std": False},
}
_TABLE_KEYS = {"abs", "use_std", "skip"}
_CELL_KEYS = {"table", "dataset", "method", "h", "abs", "use_std", "skip", "reason"}


class ToleranceError(ValueError):
    pass


@dataclass
class Tolerance:
    tables: dict = field(default_factory=lambda: {k: dict(v) for k, v in DEFAULTS.items()})
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


def load_tolerance(spec=None):
    """A tolerance from a YAML file path, an inline ``gmean=3,spearman=0.2`` or the defaults."""
    tol = Tolerance()
    if spec is None:
        return tol
    if Path(spec).is_file():
        raw = yaml.safe_load(Path(spec).read_text()) or {}
        source = str(spec)
    elif "=" in str(spec):
        raw = {"tables": {}}
        for part in str(spec).split(","):
            key, _, value = part.partition("=")
            try:
                number = float(value)
            except ValueError:
                raise ToleranceError(f"--tolerance {spec!r}: {part!r} is not key=number") from None
            names = {"gmean": ["eem_table4", "eem_table6_gaussian", "eem_table6_kde"],
                     "spearman": ["eem_table1"]}.get(key.strip())
            if names is None:
                raise ToleranceError(f"--tolerance {spec!r}: unknown key {key!r}; use gmean or spearman")
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
        if name not in DEFAULTS:
            raise ToleranceError(f"{source}: key 'tables.{name}': unknown table; valid: {sorted(DEFAULTS)}")
        bad = set(rule) - _TABLE_KEYS
        if bad:
            raise ToleranceError(f"{source}: key 'tables.{name}': unknown key(s) {sorted(bad)}")
        tol.tables[name].update(rule)
    for i, cell in enumerate(raw.get("cells") or []):
        bad = set(cell) - _CELL_KEYS
        if bad or "table" not in cell or "dataset" not in cell:
            raise ToleranceError(f"{source}: key 'cells.{i}': needs table and dataset; unknown {sorted(bad)}")
        if cell["table"] not in DEFAULTS:
            raise ToleranceError(f"{source}: key 'cells.{i}.table': unknown table {cell['table']!r}")
        tol.cells.append(cell)
    return tol


@dataclass
class CellResult:
    table: str
    dataset: str
    method: str  # "h=<h>" for Table 1
    reproduced: float
    published: float
    tolerance: float
    outcome: str  # pass | fail | missing | skipped
    reason: str = None

    def line(self):
        what = f"{self.table} {self.dataset} {self.method}"
        if self.outcome == "missing":
            return f"MISSING {what}: no reproduced value (published {self.published:g})"
        return (f"FAIL {what}: reproduced {self.reproduced:.3g}, published {self.published:.3g}, "
                f"delta {self.reproduced - self.published:+.3g} exceeds tolerance {self.tolerance:.3g}")


def _compare(table, dataset, method, value, pub, pub_std, tol, h=None):
    rule, reason = tol.for_cell(table, dataset, method if h is None else None, h)
    limit = max(rule["abs"], pub_std if rule.get("use_std") and pub_std == pub_std else 0.0)
    if pub is None or pub != pub or rule.get("skip"):
        return CellResult(table, dataset, method, value, pub, limit, "skipped", reason)
    if value is None or value != value or math.isinf(value):
        outcome = "skipped" if tol.missing == "skip" else "missing"
        return CellResult(table, dataset, method, value, pub, limit, outcome, reason)
    return CellResult(table, dataset, method, value, pub, limit,
                      "pass" if abs(value - pub) <= limit + 1e-9 else "fail", reason)


def check(records, tolerance=None, reference=None):
    """Compare every published cell of the tables the records cover.

    A table is checked when the records hold any data for it (grid-search
    records for Tables 4 and 6, correlation records for Table 1); within it,
    every published cell is compared, and one with no reproduced value is
    missing (a failure unless ``missing: skip``).

    With ``reference`` (records of a stored reproduction), the GMean cells of
    the reference replace the published ones: a regression check of a new run
    against committed results (the ``eem_table4`` tolerance applies).
    """
    tol = tolerance or Tolerance()
    results = []
    if reference is not None:
        t = gmean_table(records, reference=reference)
        for _, r in t.iterrows():
            value = r["gmean"] if r["status"] == "ok" else float("nan")
            results.append(_compare("eem_table4", r["dataset"], r["method"], value, r.get("published"),
                                    r.get("published_std"), tol))
        return results
    has_grid = any(r["model"] != "dcs-correlation" for r in records)
    has_corr = any(r["model"] == "dcs-correlation" for r in records)
    has_dcs = any(r.get("dcs_gaussian") is not None for r in records)
    if has_grid:
        t4 = gmean_table(records)
        for _, r in t4.iterrows():
            value = r["gmean"] if r["status"] == "ok" else float("nan")
            results.append(_compare("eem_table4", r["dataset"], r["method"], value, r.get("published"),
                                    r.get("published_std"), tol))
    if has_dcs:
        for crit, sel in (("gaussian", "dcs-gaussian"), ("kde", "dcs-kde")):
            t6 = gmean_table(records, selection=sel, published_name="eem_table6_dcs_selection_gmean",
                             criterion=crit)
            for _, r in t6.iterrows():
                value = r["gmean"] if r["status"] == "ok" else float("nan")
                results.append(_compare(f"eem_table6_{crit}", r["dataset"], r["method"], value,
                                        r.get("published"), r.get("published_std"), tol))
    if has_corr:
        t1 = correlation_table(records)
        for _, r in t1.iterrows():
            results.append(_compare("eem_table1", r["dataset"], f"h={r['h']}", r["spearman"], r.get("published"),
                                    None, tol, h=int(r["h"])))
    return results


def summary_line(results):
    counted = [r for r in results if r.outcome != "skipped"]
    passed = sum(r.outcome == "pass" for r in counted)
    skipped = len(results) - len(counted)
    return f"within tolerance: {passed} of {len(counted)} cells ({skipped} skipped)"


#: Margin added to a pinned delta: GMean points, or rho for Table 1.
PIN_MARGIN = {"eem_table1": 0.02}
_DEFAULT_PIN_MARGIN = 0.2


def _cell_key(cell):
    """The tolerance-file fields that identify ``cell`` (a CellResult or a YAML entry)."""
    if isinstance(cell, CellResult):
        if cell.table == "eem_table1":
            return {"table": cell.table, "dataset": cell.dataset, "h": int(cell.method.partition("=")[2])}
        return {"table": cell.table, "dataset": cell.dataset, "method": cell.method}
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
            margin = PIN_MARGIN.get(c.table, _DEFAULT_PIN_MARGIN)
            entry["abs"] = math.ceil((abs(c.reproduced - c.published) + margin) * 100) / 100
        entry["reason"] = reasons.get(tuple(sorted(key.items()))) or reason
        cells.append(entry)
    return {"missing": tol.missing, "tables": {k: dict(v) for k, v in tol.tables.items()}, "cells": cells}
