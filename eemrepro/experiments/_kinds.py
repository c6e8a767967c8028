"""Experiment kinds: what a config's units are and how one is run.

A kind is an object with a small protocol; the runner, the store and the
reports know nothing else about it:

* ``units(config)``: every unit of the config, in a fixed order;
* ``identity(config, unit)``: everything of the config besides the record key
  that changes a unit's values (a flat mapping; stored in each record, with
  what ``_identity.cell_identity`` adds for every kind: a user's code, its
  parameters' defaults and the definition of a user's data set);
* ``estimators(config, unit)``: the (estimator, home) pairs the unit builds
  (whose code is part of its identity); by default the unit's model's;
* ``task(config, unit)``: a picklable mapping a worker runs with ``run``;
* ``run(task)``: the unit's records (a static method: it runs in a worker);
* ``seconds(config, unit)``: a rough cost, for ``--dry-run`` and the ETA, and
  ``spread(config, unit)``: the (low, high) factors that cost may be off by
  (None: not known);
* ``scope(config)``: {(data set, model): (point ids, positions)}, the records
  the units make as a product per cell (what the readers match the store's
  records against); by default derived from ``units``.

A kind that has settings of its own reads them from the config's ``analysis:``
section (``analysis_cls``, a frozen dataclass, and ``parse_analysis``); one
that runs estimators reads ``models:``. ``register_kind`` adds a kind; the
built-in ones register themselves when the package imports them.
"""

from ._registry import Registry

_REGISTRY = Registry("experiment kind")


class ExperimentKind:
    name = None
    needs_models = True  # the config has a ``models:`` section
    # What its models must be: scikit-learn classifiers (``is_classifier``) for a kind that scores their
    # predictions; a kind whose models project (MELM's embeddings) sets None.
    models_are = "classifier"
    analysis_cls = None  # dataclass of the ``analysis:`` section, if the kind has one
    analysis_optional = False  # the section may be left out (every setting has a default)

    def parse_analysis(self, ctx, raw):
        """Validate the ``analysis:`` mapping into ``analysis_cls`` (errors through ``ctx.error``)."""
        raise NotImplementedError

    def units(self, config):
        raise NotImplementedError

    def scope(self, config):
        from ._units import scope_of_units

        return scope_of_units(self.units(config))

    @property
    def scope_from_units(self):
        """Whether this kind's ``scope`` is made of its units (the default), not said from the config alone."""
        return type(self).scope is ExperimentKind.scope

    def scope_with(self, config, units=None):
        """``scope(config)``, from ``units`` (the config's own, already made) where this kind derives its scope
        from its units (the default); a kind that says it from the config alone (grid search) is asked."""
        if units is None or not self.scope_from_units:
            return self.scope(config)
        from ._units import scope_of_units

        return scope_of_units(units)

    def identity(self, config, unit):
        raise NotImplementedError

    def estimators(self, config, unit):
        if not self.needs_models:
            return []
        spec = config.model(unit.model)
        return [(spec.estimator, spec.home)]

    def task(self, config, unit):
        raise NotImplementedError

    @staticmethod
    def run(task):
        raise NotImplementedError

    def seconds(self, config, unit):
        return 0.05

    def spread(self, config, unit):
        return None


def register_kind(kind):
    """Register an :class:`ExperimentKind` instance under its ``name``; returns it."""
    return _REGISTRY.register(kind)


def get_kind(name):
    return _REGISTRY.get(name)


def kind_names():
    return _REGISTRY.names()
