"""Tables from stored records (never by running a model) and a paper's ``TableSpec``: ``build_table`` of all
the records at once, or ``rows_by_datasets``, a group of data sets at a time.

Every table is a long-format DataFrame: one row per cell (a (data set,
method) or (data set, h)) with the reproduced value, the published one and
their difference, plus what a reader needs to judge it (selected grid point,
folds, status). ``layout="full"`` keeps every published cell (a cell not run
reads "missing"); ``layout="run"`` only the cells that have records. How a
table's cells are made is its shape's (``_shapes``); ``Table`` is one table as
every output reads it.
"""

from ..store._store import LARGE_FRAME, release_memory
from ._cells import (  # noqa: F401  (the cells' pieces, as the reports and their tests name them)
    FACET_SEP,
    _facet,
    _of_kind,
    cell_solvers,
    column_solvers,
    solvers_phrase,
    timeout_limit,
)
from .._kept import kept, stable_text
from ._records import Records, split_by_kind  # noqa: F401  (split_by_kind: as the reports name it)
from ._shapes import (  # noqa: F401  (re-exported through reports)
    Table,
    correlation_table,
    metric_rows,
    metric_table,
    time_table,
)
from ._spec import published  # noqa: F401  (re-exported through reports)


def table_title(spec, df, selection):
    """A spec's title with its placeholders filled: ``{selection}``, and ``{solvers}`` from the table's records."""
    return Table(spec, selection).title(df)


def build_table(spec, records, selection="best-of-grid", reference=None, unfinished=(), layout="full",
                per_fold=None):
    """``spec``'s table of all ``records`` at once, as its shape makes it (``Table.build``). ``per_fold``: a dict
    a metric table fills with each cell's points chosen per fold, where its rule chooses per fold."""
    return Table(spec, selection).build(records, reference=reference, unfinished=unfinished, layout=layout,
                                        per_fold=per_fold)


#: The stored records ``tables`` and ``check`` read at once: larger folders are read a group of data sets at a
#: time (``Records``), every table's cells made group by group.
TABLE_CHUNK_RECORDS = 3_000_000


def rows_by_datasets(dirs, specs, rules=("best-of-grid",), budget=None):
    """Every table of ``specs`` under each selection of ``rules``, its cells made a group of data sets at a
    time (``Records``, groups of at most ``budget`` stored records, default ``TABLE_CHUNK_RECORDS``).

    Returns (results, {(table id, rule): TableRows}, the ids of the tables that apply, the fit budget the
    timed-out records ran into): ``results.provenance`` and ``results.unfinished`` are the ``Records``'.
    A group's cells are made wherever its records hold cells of the table (``Table.applies``, whatever its values):
    a group whose cells all timed out still shows them where the table applies in another.
    """
    results = Records(dirs, TABLE_CHUNK_RECORDS if budget is None else budget)
    made, makers = {}, {}  # a table whose spec names its own selection is made once for every rule
    for spec in specs:
        for rule in rules:
            table = Table(spec, rule)
            made[(spec.id, rule)] = makers.setdefault((spec.id, table.selection),
                                                      TableRows(spec, rule, results.unfinished))
    applies, limits = set(), []
    for records, parts in results.by_kind():
        limit = timeout_limit(records, default=None)
        if limit is not None:
            limits.append(limit)
        for spec in specs:
            mine = parts.get(spec.kind)
            cells, values = Table(spec).applies(mine) if mine is not None else (False, False)
            if not cells:
                continue
            if values:
                applies.add(spec.id)
            for rule in dict.fromkeys(Table(spec, rule).selection for rule in rules):
                makers[(spec.id, rule)].add(mine, results.group_state)
            if len(records) >= LARGE_FRAME:
                # What a table's selection allocated over a large frame is handed back before the next table's:
                # else each table's arrays come on top of the heap the last left (TABLE_RESULTS: 45 MB a table).
                release_memory()
        records = parts = mine = None  # this group's frame, before the next is read
    return results, made, applies, max(limits) if limits else timeout_limit(())


class TableRows:
    """A table's cells made part by part (``add`` the records of some data sets at a time), then the table
    (``frame``): what ``build_table`` makes of all the records at once, as every cell is made from its own
    records alone (its data set's)."""

    def __init__(self, spec, selection="best-of-grid", unfinished=()):
        self.spec, self.selection, self.unfinished = spec, selection, unfinished
        self.table = Table(spec, selection)
        self.rows, self.extra = {}, {}
        self.named = stable_text(spec)  # the spec as a kept piece's name holds it: made once, not once a group

    def add(self, records, state=None):
        """The cells of ``records`` (a group of data sets' records of the table's kind); ``state``: what the group
        was read from (``Records.group_state``), under which its cells are kept for the next command (``_kept``)."""
        what = None if state is None else \
            f"cells {state} {self.named} {self.table.selection} {sorted(map(repr, self.unfinished))}"
        rows, extra = kept(what, lambda: self.table.shape.rows(records, self.table, self.unfinished))
        self.rows.update(rows)
        self.extra.update(extra)

    def frame(self, layout="full"):
        return self.table.shape.frame(self.rows, self.extra, self.table, layout)


def applying_records(spec, parts, built=None):
    """(whether ``spec``'s table applies, the records it is built from) of ``parts`` ({kind: frame},
    ``split_by_kind``); with ``parts`` None (the tables were built a group of data sets at a time, no frame of
    every record is kept), the table applies where ``built`` ({table id: table}) holds it."""
    if parts is None:
        return spec.id in (built or {}), None
    mine = parts.get(spec.kind)
    return mine is not None and table_applies(spec, mine), mine


def table_applies(spec, records):
    """Whether ``records`` hold data for ``spec``: its kind, one of its published data sets (where its shape
    shows those alone), its values (its metric, its criterion if it needs one)."""
    return Table(spec).applies(records)[1]
