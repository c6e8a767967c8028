"""The papers eemrepro reproduces, one plug-in module each.

A module here defines ``PAPER = Paper(...)``: its tables (``TableSpec``:
published CSV, metric and scale, selection, default tolerance, layout, method
pairs), figures (``FigureSpec``), claims (``Claim``) and configs, declared with
the classes of ``_spec`` (re-exported here and by ``eemrepro.reports``). The
papers lie below the reports: they import no report builder. ``registered_papers()`` finds every such
module in this package, plus any registered at run time with
``register_paper`` (a user's own paper, or a test's). The engine loops over
this registry and imports no paper by name.
"""

import importlib
import pkgutil

from ._spec import Claim, FigureSpec, Paper, TableSpec, published

_EXTRA = {}


def register_paper(paper):
    """Add a paper (a ``Paper``) to the registry; returns it. Replaces one with the same id."""
    _EXTRA[paper.id] = paper
    return paper


def unregister_paper(paper_id):
    _EXTRA.pop(paper_id, None)


def registered_papers():
    papers = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        paper = getattr(module, "PAPER", None)
        if paper is not None:
            papers[paper.id] = paper
    papers.update(_EXTRA)
    return list(papers.values())


def model_sets():
    """Every registered paper's model sets (the entry point ``eemrepro.model_sets`` of ``pyproject.toml``)."""
    return [s for p in registered_papers() for s in p.model_sets]


__all__ = ["register_paper", "unregister_paper", "registered_papers", "model_sets",
           "Paper", "TableSpec", "FigureSpec", "Claim", "published"]
