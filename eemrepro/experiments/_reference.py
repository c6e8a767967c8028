"""The config reference (``docs/config-reference.md``), generated from the validator itself.

Every key, default and allowed value printed here is read from what
``parse_config`` enforces (``_TOP_KEYS``, the ``Protocol`` dataclass,
``protocol_rules``, the kinds' ``analysis`` dataclasses, the registered
estimators, metrics and selection rules); only the one-line descriptions are
written by hand, and a test fails when a key has none or the committed page
differs from what this module makes (``make docs`` writes it).
"""

import dataclasses

#: What each top-level key is (a key of ``_config._TOP_KEYS`` without a line here fails the reference's test).
TOP_KEYS = {
    "paper_models": "A paper's models with their published grids, by the name of its model set (`eemrepro papers` "
                    "lists them), or a list of names: they run beside the config's "
                    "own `models:` (which may then be left out) on its data sets, your own included. An installed "
                    "package adds its own sets through the entry-point group `eemrepro.model_sets` (a callable "
                    "returning `ModelSet`s), as eemrepro's papers do.",
    "name": "The run's name: its results go to `results/<name>` unless `--out` says otherwise. Required.",
    "kind": "What a unit of work is and what it records (below). Default `grid-search`.",
    "datasets": "Data set ids of the registry (`eemrepro datasets` lists them), or of `local_datasets`. Required. "
                "An id (as a model's name) may not hold `|` (a record's key joins them with it) or a control "
                "character. (One holding `,` is kept whole by `--only-datasets`, `--only-models` and `forget`.)",
    "models": "Model name -> `{estimator, grid, fixed parameters, per_dataset, score}` (below). Required for the "
              "kinds that fit models. A name may not hold `|` or a control character.",
    "analysis": "The kind's own settings (below), for the kinds that have them.",
    "protocol": "How the data is split, scaled and the grid point selected (below).",
    "jobs": "Worker processes: a positive integer, or -1 for every core. Default: every core. `--jobs` wins.",
    "data": "`{mirror, data_home}`: a mirror folder or URL standing in for the data hosts, and the cache folder "
            "(else `$EEMREPRO_MIRROR`, `$EEMREPRO_DATA`).",
    "baselines": "Results folders this config's models are compared with, as paths from the config's folder "
                 "(`[../results/uci]`). The run refuses a baseline made under another protocol or on other data, "
                 "naming the first difference; the reports set its models beside the config's own and rank them "
                 "(docs/benchmarking.md).",
    "local_datasets": "Id -> `{file, target, positive, format, columns}`: your own CSV (with a header row), ARFF or "
                      "LIBSVM file, a path from the config's folder; `target` the label column (default the last), "
                      "`columns` the feature columns in order (default every other column; a first column that is "
                      "a saved row index is refused unless listed here), "
                      "`positive` the positive label(s) (default: the smaller of two classes), `format` by extension "
                      "unless given. List the id in `datasets`. Read and checked when the config is: a non-numeric "
                      "column, a missing value, one row or one class, a class smaller than `folds` is refused; its "
                      "checksum goes into every record, as a registry set's.",
    "readings": "Name -> `{set: {dotted.key: value}, about}`: the paper's open choices read another way "
                "(SPEC section 8), each run with `--reading NAME` into `<results>/readings/<name>`.",
    "tables": "`{rope}`: how the reports compare the models. `rope`, the region of practical equivalence of the "
              "Bayesian tests (two models whose difference lies within it are practically equivalent), in the "
              "metric's own units from 0 to 1: default `0.01`, one point of a percent metric (shown as 1.0 on a "
              "table at 0-100, 0.01 on the error table). Every output that shows the probabilities states it "
              "(docs/benchmarking.md).",
    "reading": "Written by the run into a reading's stored config: which reading it is. Not for a user's config.",
}

#: What each ``protocol:`` key is (a field of ``Protocol`` without a line here fails the reference's test).
PROTOCOL_KEYS = {
    "folds": "Folds of the stratified k-fold per repeat.",
    "repeats": "Repeats of the cross-validation, each on its own shuffle (`--repeats` overrides for one run).",
    "seed": "The seed every split and every seeded fit derives from.",
    "splitter": "`stratified-kfold` (`folds` per repeat), `train-test` (one stratified split of `train_size` per "
                "repeat) or `whole` (fit and score on all the data).",
    "train_size": "For `splitter: train-test`: a count >= 2, a fraction in (0, 1), or a mapping data set -> one. "
                  "A value that leaves a data set's training or test part without a point of every class is "
                  "refused when the config is read, naming the data set and the valid range.",
    "scaling": "`global`: min-max on the whole data set (SPEC section 2); `per-fold`: min-max from each training "
               "part; `standard` / `standard-per-fold`: zero mean and unit variance, the same two ways; `none`.",
    "selection": "How the grid point is chosen: best of grid by `select_metric` on the test folds, `nested` on "
                 "`inner_folds`, `best-per-fold` (optimistic), or by a criterion the fit computes.",
    "select_metric": "The metric `selection` maximises (minimises for `error`).",
    "criteria": "Criteria recorded on the training part of every fold (a list).",
    "inner_folds": "Inner folds of `selection: nested`, under every splitter. Where a training part may hold "
                   "fewer points of a class, a run says so before its first unit (some inner test parts hold "
                   "none of it) with the fix; fewer of every class is refused.",
    "fit_timeout": "Seconds one fit may take before it is killed and recorded as timed out.",
    "after_timeout": "After a timed-out fit: `skip` that grid point on the other folds, `skip-model` the model on "
                     "that data set, or `run` everything anyway.",
    "fit_memory_gb": "Address-space limit of the process that fits: past it the fit fails with MemoryError "
                     "(recorded) instead of taking the machine down.",
    "standalone_timing": "`first-fold` also times a standalone fit of each point of a path fit on fold 0 of each "
                         "repeat (what a time table's standalone column reads); `none`.",
    "fit_threads": "BLAS threads of each fit (OpenMP: one), whatever `--jobs` and backend: the same config gives "
                   "the same records however many workers run beside it. Raise it for a few big fits on an "
                   "otherwise idle machine; each record stores it (`fit_threads`), its identity does not (it "
                   "changes the rounding only), so a store resumes under another value.",
}

#: What each key of a ``models:`` entry is.
MODEL_KEYS = {
    "estimator": "A built-in estimator, `module:Class` (a module beside the config is found first, then the import "
                 "path), or a short name an installed package registers under the entry-point group "
                 "`eemrepro.estimators`.",
    "grid": "Parameter -> a list of values, or `{log10: [low, high]}` for 10^low .. 10^high.",
    "per_dataset": "Data set -> `{parameter: value}`: fixed parameters that differ on that data set.",
    "score": "What AUC reads: `decision` (the decision values) or `labels` (the predicted labels).",
    "home": "The folder (from the config's folder) where a `module:Class`'s module is looked up first; default the "
            "config's folder. A run writes it into the results folder's config.yaml, so that `status` and `audit` "
            "find the module.",
    "(any other key)": "A fixed parameter of the estimator, checked by building it.",
}

#: What each experiment kind is (a registered kind without a line here fails the reference's test).
KINDS = {
    "grid-search": "Each model's grid on every split: one record per (data set, model, grid point, repeat, fold), "
                   "its metrics, timings and criteria. The papers' classifier tables.",
    "dcs-correlation": "Random hidden layers x projection directions: D_CS against the Fisher-like ratio per "
                       "(data set, h); no models.",
    "embedding": "A projection's 2-D image of each data set, stored for the figures.",
    "restarts": "A projection's random restarts: the objective of each start, for the restart figures.",
    "projection": "A projection fitted per fold, then the `analysis.classifiers` on its image.",
    "projection-visual": "A projection fitted on subsamples, the classifiers cross-validated on its image.",
}


def _value(v):
    if dataclasses.is_dataclass(v) or isinstance(v, dict):
        return "{}" if not v else repr(v)
    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, tuple):
        return repr(list(v))
    return str(v)


def _default(f):
    if f.default is not dataclasses.MISSING:
        return _value(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return _value(f.default_factory())
    return "(required)"


def config_reference():
    """The config reference as Markdown text."""
    from ..models._lookup import ENTRY_POINT_GROUP, builtin_estimators
    from ._config import _TOP_KEYS, MAX_GRID_POINTS, Protocol, protocol_rules
    from ._kinds import get_kind, kind_names
    from ._metrics import SCORES, metric_names

    rules = protocol_rules()
    lines = ["# Config reference", "",
             "<!-- Generated by `make docs` from eemrepro's config validator (eemrepro/experiments/_reference.py); "
             "do not edit by hand. -->", "",
             "An experiment config is a YAML mapping. `eemrepro run CONFIG --dry-run` validates one and counts its "
             "units without running anything; an error names the file, the key and its line.", "",
             "## Top-level keys", "", "| key | what it is |", "|---|---|"]
    lines += [f"| `{k}` | {TOP_KEYS[k]} |" for k in sorted(_TOP_KEYS)]
    lines += ["", "## `protocol:`", "", "| key | default | allowed | what it is |", "|---|---|---|---|"]
    for f in dataclasses.fields(Protocol):
        allowed = rules[f.name][1] if f.name in rules else "see the description"
        lines.append(f"| `{f.name}` | `{_default(f)}` | {allowed} | {PROTOCOL_KEYS[f.name]} |")
    lines += ["", "## `models:`", "", f"At most {MAX_GRID_POINTS:,} grid points per model.", "",
              "| key | what it is |", "|---|---|"]
    lines += [f"| `{k}` | {v} |" for k, v in MODEL_KEYS.items()]
    lines += ["", f"Built-in estimators: {', '.join(f'`{n}`' for n in builtin_estimators())}.",
              f"Entry-point group for plug-ins: `{ENTRY_POINT_GROUP}`. `score` values: "
              f"{', '.join(f'`{s}`' for s in SCORES)}. Metrics (`select_metric`, the tables): "
              f"{', '.join(f'`{m}`' for m in metric_names())}.", "",
              "## Kinds and their `analysis:` keys", ""]
    for name in kind_names():
        kind = get_kind(name)
        lines += [f"### `{name}`", "", KINDS[name], ""]
        if kind.analysis_cls is not None:
            lines += ["| key | default |", "|---|---|"]
            lines += [f"| `{f.name}` | `{_default(f)}` |" for f in dataclasses.fields(kind.analysis_cls)]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
