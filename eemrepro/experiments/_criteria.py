"""Selection criteria an estimator's fit yields without validation data (D_CS, GCV: SPEC section 7).

A criterion is ``func(model, X_train, y_train) -> float``, computed on the
training part of every fold when the protocol lists it (``protocol.criteria``)
and stored in the record's ``criteria`` mapping; ``selection: criterion`` then
picks per fold the grid point with the best value. A plug-in adds its own with
:func:`register_criterion`.
"""

from dataclasses import dataclass

import numpy as np

from ._registry import Registry


@dataclass(frozen=True)
class Criterion:
    name: str
    func: object
    greater_is_better: bool = True


_REGISTRY = Registry("criterion")
register_criterion = _REGISTRY.register
get_criterion = _REGISTRY.get
criterion_names = _REGISTRY.names


def _projection(model, X):
    """The 1-D training projection: beta^T phi(x) where the model has one, else its decision value."""
    z = model.project(X) if hasattr(model, "project") else model.decision_function(X)
    return np.asarray(z, dtype=np.float64)


def _dcs_gaussian(model, X, y):
    from ._dcs import dcs_gaussian

    z = _projection(model, X)
    zp, zn = z[y > 0], z[y < 0]
    return dcs_gaussian(zp.mean(), zp.var(), zn.mean(), zn.var())


def _dcs_kde(model, X, y):
    from ._dcs import dcs_kde

    z = _projection(model, X)
    return dcs_kde(z[y > 0], z[y < 0])


# Cauchy-Schwarz divergence of the two classes' projected training data: a
# normal fit or a Silverman KDE (``_dcs``; SPEC section 3).
register_criterion(Criterion("dcs_gaussian", _dcs_gaussian))
register_criterion(Criterion("dcs_kde", _dcs_kde))
