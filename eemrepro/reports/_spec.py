"""The registered papers' tables and figures, as the reports loop over them.

What a paper declares (``TableSpec``, ``FigureSpec``, ``Claim``, ``Paper``,
``published``) lives below the reports, in ``eemrepro.papers``: the papers
import no report builder, and the reports import the papers.
"""

from ..papers import FigureSpec, Paper, TableSpec, published, registered_papers
from ._shapes import shape_of

__all__ = ["FigureSpec", "Paper", "TableSpec", "published", "registered_tables", "registered_figures"]


def registered_tables(kind=None):
    """Every table of every registered paper (optionally of one experiment kind); a table whose ``builder`` names
    no registered shape is a ValueError of one line (``shape_of``)."""
    tables = [t for p in registered_papers() for t in p.tables if kind is None or t.kind == kind]
    for t in tables:
        shape_of(t)
    return tables


def registered_figures():
    """Every figure of every registered paper."""
    return [f for p in registered_papers() for f in p.figures]
