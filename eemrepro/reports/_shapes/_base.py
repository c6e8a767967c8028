"""The table shape protocol, its registry, and ``Table``: one table as every output reads it.

A shape is an object with a small protocol; ``tables``, ``report``, ``check``,
the claims, the readings and the run's printed table know nothing else about a
table's shape (they never ask for its name):

* ``rows(records, table, unfinished, per_fold)``: (its cells' rows, extra
  facts such as a time table's solvers) from some records, each cell from its
  own records alone, so that rows of groups of data sets are the union;
  ``frame(rows, extra, table, layout)``: the table (``layout="full"`` with every
  published cell, ``"run"`` those with records); ``build``: both at once;
* ``applies(spec, records)``: (whether the records hold its cells, whether they
  hold its values);
* ``keys``, ``value_column``, ``greater_is_better``, ``digits``, ``ran_here``:
  a cell's key columns, its value, which way is better, the printed decimals,
  which cells ran here;
* ``columns(table, limit)``: the long view's columns and the wide view
  (Markdown, LaTeX, the run's table: ``run_view``), ``notes``, ``shows``;
* ``checked_cells(table, df)``: the cells ``check`` compares with the paper's;
  ``cell_key``/``cell_label``: a cell's tolerance-file fields and its name;
* ``claim_view(df, table, claim)``: what a claim on it reads; ``size``: a
  reading's size;
* ``site_section(...)``: the report's section; ``per_fold_points``: the
  points chosen per fold, for the report's drill-down.

A paper names its table's shape by name (``TableSpec(builder="metric")``);
``register_shape`` adds one (the built-in ones register themselves).
"""

import numpy as np
import pandas as pd

from ..._stats import DrawRule
from ...experiments import get_metric
from ...experiments._registry import Registry
from ...store._segments import as_frame
from .._cells import _of_kind, solvers_phrase
from .._render import _text, fits_legends, fits_note

_REGISTRY = Registry("table shape")

#: A report cell's verdict and its class on the page.
VERDICTS = {"within": "v-within", "pinned": "v-pinned", "outside": "v-outside", "missing": "v-missing",
            "not compared": "v-notrun"}
#: What a benchmark's cell (``_benchmark``) is, where a paper's cell has its verdict.
UNJUDGED = ("not compared", "a benchmark cell: no published value to compare with")


def register_shape(shape):
    """Register a :class:`TableShape` instance under its ``name``; returns it."""
    return _REGISTRY.register(shape)


def unregister_shape(name):
    """Remove the shape registered under ``name`` (a test's), if any."""
    _REGISTRY._items.pop(name, None)


def shape_names():
    return _REGISTRY.names()


def shape_of(spec):
    """The registered shape a ``TableSpec`` names (``builder``); a ValueError of one line naming the table and
    the registered shapes where it names none."""
    if spec.builder not in _REGISTRY.names():
        raise ValueError(f"table {spec.id}: builder {spec.builder!r} is not a registered table shape; "
                         f"registered: {sorted(_REGISTRY.names())}")
    return _REGISTRY.get(spec.builder)


class TableShape:
    name = None
    #: The columns that name a cell: (data set, the column of the wide view's columns).
    keys = ("dataset", "method")
    #: Its cells are the published table's data sets only (a record of another data set is not its row).
    own_datasets = True
    #: Its columns are models the paper ranks: summaries, comparisons with new models, CD diagrams.
    compares_methods = False
    #: ``check --reference`` compares it with another store's cells.
    takes_reference = False
    #: A cell shows the mark of its fits that did not finish (``FITS_LEGEND`` under the table).
    marks_fits = False
    def run_legend(self, df):
        """What the run's printed table says under ``df``, a table of this shape ("": nothing)."""
        return ""

    def value_column(self, spec):
        return spec.metric

    def greater_is_better(self, spec):
        return get_metric(spec.metric).greater_is_better

    def digits(self, spec):
        return spec.printed_digits

    def required_column(self, spec):
        """The column whose values the records must hold for the table (None: its cells are enough)."""
        return spec.requires_criterion or spec.metric

    def rows(self, records, table, unfinished=(), per_fold=None):
        raise NotImplementedError

    def frame(self, rows, extra, table, layout="full"):
        raise NotImplementedError

    def build(self, records, table, reference=None, unfinished=(), layout="full", per_fold=None):
        rows, extra = self.rows(records, table, unfinished, per_fold)
        return self.frame(rows, extra, table, layout)

    def applies(self, spec, records):
        """(whether ``records`` hold cells the table shows: its kind, one of its published data sets where it
        shows those alone; whether they also hold its values: ``required_column``)."""
        mine = _of_kind(as_frame(records), spec.kind)
        pub = spec.published_frame()
        rows = np.ones(len(mine), dtype=bool)  # a mask, not a copy of the rows
        if len(mine) and pub is not None and self.own_datasets:
            rows = mine["dataset"].isin(set(pub["dataset"])).to_numpy()
        if not rows.any():
            return False, False
        column = self.required_column(spec)
        if column is None:
            return True, True
        return True, column in mine and bool((mine[column].notna().to_numpy() & rows).any())

    def published_methods(self, spec):
        """The models the paper's table names (its published cells' methods)."""
        pub = spec.published_frame()
        return set() if pub is None else set(pub["method"])

    def ran_here(self, df):
        """A mask of the cells of a built table that were run here (a published cell with no record was not)."""
        return df["status"] != "missing"

    def columns(self, table, limit):
        """(long-view columns [(column, header, formatter)], wide view (index, columns, cell formatter))."""
        raise NotImplementedError

    def run_view(self, table, limit):
        """The wide view of the run's printed table."""
        return self.columns(table, limit)[1]

    def in_run_table(self, spec, select_metric):
        """Whether the run's printed table shows this table (a run selecting by ``select_metric``)."""
        return False

    def shows(self, df):
        """Whether a built table is written at all."""
        return not df.empty

    def notes(self, table, df):
        """The lines under the table: its spec's, the computed ones, the mark's legend where a cell shows it."""
        spec = table.spec
        notes = list(spec.notes) + (list(spec.note_fn(df)) if spec.note_fn else [])
        if self.marks_fits:
            notes.extend(fits_legends(df))
        return notes

    def cell_key(self, row):
        """A cell's fields in a tolerance file besides its table and data set: {"method": ...} or {"h": ...}."""
        return {k: row[k] for k in self.keys[1:]}

    def cell_label(self, key):
        """A cell's name in ``check``'s lines and the report's verdicts: its method, else ``h=<h>``."""
        return key["method"] if set(key) == {"method"} else ", ".join(f"{k}={v}" for k, v in key.items())

    def cell_fields(self, label):
        """The cell key a ``cell_label`` names (a check's cell read back: ``pin_differences``)."""
        if tuple(self.keys[1:]) == ("method",):
            return {"method": label}
        fields = dict(part.split("=", 1) for part in label.split(", "))
        return {k: int(v) if v.lstrip("-").isdigit() else v for k, v in fields.items()}

    def checked_cells(self, table, df):
        """(cell key, reproduced value, published, published spread, run here) of every cell of ``df``."""
        value, here = table.value, self.ran_here(df)
        for (_, r), ran in zip(df.iterrows(), here, strict=True):
            ok = "status" not in r or r["status"] == "ok"
            yield (self.cell_key(r), r[value] if ok else float("nan"), r.get("published"), r.get("published_std"),
                   bool(ran))

    def claim_view(self, df, table, claim):
        """What a claim on the table reads: the values of its cells, data sets x columns (``claim.datasets`` only
        where it names some)."""
        ok = df[df["status"] == "ok"] if "status" in df else df
        wide = ok.pivot_table(index="dataset", columns=self.keys[1], values=table.value)
        return wide[wide.index.isin(claim.datasets)] if claim.datasets else wide

    def size(self, df):
        """A reading's size, as its row says it: its cells' repeats."""
        repeats = pd.to_numeric(df["repeats"], errors="coerce") if "repeats" in df else pd.Series(dtype=float)
        repeats = repeats[repeats > 0].astype(int)  # 0: a published cell with no records
        if len(repeats):
            # A reading screened on some data sets at fewer repeats than on others says so.
            low, high = repeats.min(), repeats.max()
            return f"{high} repeats" if low == high else f"{low} to {high} repeats"
        return ""

    def site_section(self, table, df, verdicts, records, per_fold, limit, judged=True, matrix=None):
        """The report's section of the table: {display, classes, tips, details, wide} (display: the long list,
        classes and tips: frames like it, details: what a click on each row shows, wide: HTML or None). By
        default the long view's columns, with each cell's verdict. ``matrix``: the table's ``_matrix.Matrix``
        where its section has one (a benchmark's): the wide view's cells and best marks."""
        rows, details, classes = [], [], []
        columns = self.columns(table, limit)[0]
        for _, r in df.iterrows():
            key = self.cell_key(r)
            verdict, reason = verdicts.get((table.id, r["dataset"], self.cell_label(key)),
                                           ("not compared", "not checked"))
            rows.append({**{header: _text(r, column, fn) for column, header, fn in columns}, "verdict": verdict})
            classes.append([""] * len(columns) + [VERDICTS[verdict]])
            details.append({"cell": f"{r['dataset']} / {self.cell_label(key)}", "verdict": verdict, "reason": reason,
                            "fits": fits_note(r)})
        display = pd.DataFrame(rows)
        return {"display": display, "classes": pd.DataFrame(classes, columns=display.columns), "tips": None,
                "details": details, "wide": None}

    def per_fold_points(self, table, records, unfinished=()):
        """{(data set, method): {(repeat, fold): point}} where the table's rule chooses per fold; {} else."""
        return {}


class Table:
    """One table as every output reads it: its spec (``TableSpec``), its shape, and the rules it is read under.

    It owns, once each: the selection rule (the spec's own, else the one asked
    for), the printed decimals, the value column, the metric's direction and the
    draw rule, which cells ran here, the title; callers ask it, never re-derive.
    """

    def __init__(self, spec, selection="best-of-grid"):
        self.spec = spec
        self.shape = shape_of(spec)
        self.selection = spec.selection or selection

    @property
    def id(self):
        return self.spec.id

    @property
    def digits(self):
        return self.shape.digits(self.spec)

    @property
    def value(self):
        return self.shape.value_column(self.spec)

    @property
    def greater_is_better(self):
        return self.shape.greater_is_better(self.spec)

    @property
    def draw_rule(self):
        """A draw is equal as the table prints it, a win the better printed value in its direction."""
        return DrawRule(self.digits, self.greater_is_better)

    def ran_here(self, df):
        return self.shape.ran_here(df)

    def title(self, df):
        """The spec's title with its placeholders filled: ``{selection}``, and ``{solvers}`` from the table."""
        solvers = df.attrs.get("solvers", {}) if df is not None else {}
        return self.spec.title.format(selection=self.selection, solvers=solvers_phrase(solvers))

    def build(self, records, reference=None, unfinished=(), layout="full", per_fold=None):
        return self.shape.build(records, self, reference=reference, unfinished=unfinished, layout=layout,
                                per_fold=per_fold)

    def applies(self, records):
        """(whether ``records`` hold the table's cells, whether they also hold its values)."""
        return self.shape.applies(self.spec, records)

    def columns(self, limit):
        return self.shape.columns(self, limit)

    def notes(self, df):
        return self.shape.notes(self, df)

    def chosen_points(self, records, unfinished=()):
        """Each cell's points chosen per fold, where the table's rule chooses per fold."""
        return self.shape.per_fold_points(self, records, unfinished)
