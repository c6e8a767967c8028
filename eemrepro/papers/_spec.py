"""What a paper plug-in declares: its tables, figures, claims, configs and published values.

A paper module (``eemrepro/papers/<id>.py``) defines ``PAPER = Paper(...)``;
``eemrepro.papers.registered_papers()`` finds it. Nothing in the engine names
a paper, a table or a model of one. These declarations import no report
builder: the reports (``eemrepro.reports``) read them, and lie above them.
"""

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

#: The tests a ``Claim`` can ask; ``eemrepro.reports._claims`` judges each.
CLAIM_TESTS = ("wins", "close", "wilcoxon", "comparable", "best-count", "above-count", "mean-difference",
               "never-worst", "best-rank", "rho-at-least")


@dataclass(frozen=True)
class TableSpec:
    """One published table and how to rebuild it from stored records.

    Parameters
    ----------
    id : str
        Name in tolerance files and ``check`` output (``paper_table2``).
    stem : str
        Output file name without suffix (``paper_table2_bac``).
    title : str
        Heading; ``{selection}`` is replaced by the selection rule used.
    kind : str
        The experiment kind whose records fill it.
    builder : str
        The table's shape, by name: a shape registered with the reports
        (``eemrepro.reports.register_shape``): built in, ``metric`` (a metric
        per (data set, method) at the selected grid point), ``time`` (the fit
        time there) or ``correlation`` (the D_CS correlation kind's Spearman
        table). The reports say which names are registered where they look
        the shape up.
    published : str or Path, optional
        The published CSV: a name in ``eemrepro/papers/published`` or a path.
    published_filter : dict
        Only the CSV rows with these column values (say ``{"criterion": "kde"}``).
    published_value, published_std : str, optional
        CSV columns of the value and its spread (default ``<metric>_mean``, ``<metric>_std``).
    metric : str
        The registered metric a metric table shows; ``scale`` multiplies it (100: percent).
    digits : int, optional
        Decimals of a metric table's values (default 1 for percent, 3 otherwise): ``printed_digits``.
    spread : {"std", "se"}
        The spread shown next to a metric: the std over the test folds, or the
        standard error of the mean (std / sqrt(number of test folds)).
    selection : str, optional
        A fixed selection rule (a criterion such as ``dcs-gaussian``); None: the
        rule the reports are asked for (``tables --selection``, default best of grid).
    requires_criterion : str, optional
        Build the table only when records hold this criterion.
    tolerance : dict, optional
        Default ``check`` rule ``{abs, use_std}``; None: the table is not checked.
    pin_margin : float
        Added to a pinned delta by ``check --pin``.
    notes : tuple of str
        Lines printed under the provenance; ``note_fn(table) -> [str]`` adds computed ones.
    pairs : tuple of (str, str)
        Method pairs the paper compares (wins/draws/losses, Wilcoxon) in ``summary``.
    summary : str, optional
        Stem of the comparison summary written from this table.
    facet : str, optional
        A grid-point key whose values split each model into its own cells
        before selection: model "MELM" with points of ``classifier`` SVM and
        KNN becomes "MELM + SVM" and "MELM + KNN", each with its own selected
        point (the projection kinds' classifiers).
    combine : {"max", "mean"}, optional
        Recombine the facets of one model into one cell after selection: the
        best facet's value (its spread and point shown) or the facets' mean
        (the mean of their spreads shown).
    """

    id: str
    stem: str
    title: str
    kind: str = "grid-search"
    builder: str = "metric"
    published: str | Path | None = None
    published_filter: dict = field(default_factory=dict)
    published_value: str | None = None
    published_std: str | None = None
    metric: str = "gmean"
    scale: float = 100.0
    digits: int | None = None
    spread: str = "std"
    selection: str | None = None
    requires_criterion: str | None = None
    tolerance: dict | None = None
    pin_margin: float = 0.2
    notes: tuple = ()
    note_fn: object = None
    pairs: tuple = ()
    summary: str | None = None
    facet: str | None = None
    combine: str | None = None

    def __post_init__(self):
        if self.combine not in (None, "max", "mean") or (self.combine and not self.facet):
            raise ValueError(f"table {self.id}: combine must be 'max' or 'mean' (with a facet), got {self.combine!r}")
        if self.spread not in ("std", "se"):
            raise ValueError(f"table {self.id}: spread must be 'std' or 'se', got {self.spread!r}")

    @property
    def printed_digits(self):
        """The decimals the table prints its metric's values at (``digits``; else 1 for a percent, 3 for a
        fraction). Every rendering asks here, and a draw is equal at these (``_stats.DrawRule``)."""
        if self.digits is not None:
            return self.digits
        return 1 if self.scale == 100 else 3

    @property
    def value_column(self):
        return self.published_value or f"{self.metric}_mean"

    @property
    def std_column(self):
        return self.published_std or f"{self.metric}_std"

    def published_frame(self):
        """The published CSV (rows filtered), or None when the table has none."""
        if self.published is None:
            return None
        path = Path(self.published)
        if path.suffix == ".csv" and path.is_file():
            pub = pd.read_csv(path, keep_default_na=False, na_values=[""])
        else:
            pub = published(str(self.published))
        for column, value in self.published_filter.items():
            pub = pub[pub[column] == value]
        return pub


@dataclass(frozen=True)
class FigureSpec:
    """A figure a paper draws from its records.

    ``drawer``: ``scatter`` (reproduced against published values of ``table``);
    ``sweep`` (``model``'s metric against grid parameter ``param`` with std
    error bars, drawn when at least ``min_points`` values were run);
    ``histogram`` / ``expected-max`` (the ``restarts`` kind's per-start values
    of ``model``: their histogram per data set, and the expected best after s
    starts with its ratio to the best found); ``embedding`` (the ``embedding``
    kind's 2-D images of ``dataset``, one panel per model, with per-class KDE
    contours).
    """

    name: str
    stem: str
    drawer: str
    table: str | None = None
    model: str | None = None
    param: str | None = None
    metric: str = "gmean"
    min_points: int = 2
    title: str = ""
    dataset: str | None = None


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    tables: tuple = ()
    figures: tuple = ()
    configs: tuple = ()  # the configs that reproduce it, relative to the checkout
    claims: tuple = ()  # its qualitative claims as ``Claim`` predicates over its tables (``_claims``)
    # Its models with their published grids, which a user's config names in one line (``paper_models:``): each
    # an ``experiments.ModelSet`` (a name and the config whose ``models:`` it is).
    model_sets: tuple = ()


@dataclass(frozen=True)
class Claim:
    """A paper's qualitative claim as a predicate over one of its tables.

    The claim in the paper's words (``wording``), the sentence it comes from
    (``source``), the table it is about and a ``test`` (one of ``CLAIM_TESTS``,
    on ``method`` against ``other``, a ``value``, the named ``datasets`` and
    ``min_h``); the reports judge it (``eemrepro.reports.evaluate_claims``, whose
    module says what each test means).
    """

    id: str
    table: str
    wording: str
    source: str
    test: str
    method: str = None
    other: str = None
    value: float = None
    datasets: tuple = ()
    min_h: int = 0

    def __post_init__(self):
        if self.test not in CLAIM_TESTS:
            raise ValueError(f"claim {self.id}: test must be one of {CLAIM_TESTS}, got {self.test!r}")


def published(name):
    """A published table (``<paper>_table<n>_<metric>``) as shipped with the package."""
    path = resources.files("eemrepro.papers") / "published" / f"{name}.csv"
    with resources.as_file(path) as p:
        return pd.read_csv(p, keep_default_na=False, na_values=[""])
