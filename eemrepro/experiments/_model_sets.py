"""Model sets: a paper's models with their published grids, named in one line of a config.

A paper plug-in declares the config whose ``models:`` section is its model set
(``Paper.model_sets``; ``register_model_set`` adds one at run time); a user's
config names it under
``paper_models:`` and gets those models, as they are there, beside its own
(``models:``), on whatever data sets it runs: a paper's fixed parameters for
its own data sets (``per_dataset``) are kept for those alone. The engine
knows no paper: it reads the set's config file as any config.
"""

from dataclasses import dataclass
from pathlib import Path

from ._registry import Registry

#: Where a model set's config file is found: the checkout that holds this package.
CHECKOUT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class ModelSet:
    name: str
    config: str  # the config whose ``models:`` this set is, a path from the checkout
    description: str = ""


_REGISTRY = Registry("model set")
register_model_set = _REGISTRY.register


def _model_sets():
    """{name: ModelSet}: the registered papers' and those registered at run time."""
    from ..papers import registered_papers

    found = {s.name: s for p in registered_papers() for s in p.model_sets}
    found.update({s.name: s for s in _REGISTRY.values()})
    return found


def model_set_names():
    """The model sets' names: every registered paper's, and those registered at run time."""
    return sorted(_model_sets())


def model_set(name):
    """(the ``models:`` mapping, the kind) of model set ``name``; ValueError naming the known ones."""
    from .._yaml import load_yaml_file

    sets = _model_sets()
    if name not in sets:
        raise ValueError(f"unknown model set {name!r}; known: {sorted(sets)}")
    spec = sets[name]
    path = CHECKOUT / spec.config
    if not path.is_file():
        raise ValueError(f"model set {name!r} is the models of {spec.config}, which is not here ({path}): it is "
                         "part of the eemrepro checkout (git clone)")
    raw = load_yaml_file(path)[0]
    return dict(raw["models"]), raw.get("kind", "grid-search")
