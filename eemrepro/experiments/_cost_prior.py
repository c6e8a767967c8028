"""What a fit costs before a store has timed any: a prior learned from the committed stores' timed fits.

A fresh store's dry run has no timings of its own. The operation counts the
estimators once gave (``20 n^2 d`` for LIBSVM) knew nothing of the grid: on
621 training rows at gamma = 0.01, LIBSVM takes 0.04 s a fit at C = 1 and
17 s at C = 1e7 (a committed store's timings), and such grids are common.
So the committed stores, every record of which holds its seconds, its
training rows and its grid point, are the data.

Per estimator (a family: ``SVM``, ``LSSVM``, ``EEM``...), the seconds of one
record (``_schedule.record_seconds``: a path's fit shared over its points) are
modelled as::

    log s = a[point's cell] + b log n + c log d

the cell being the grid point's numeric parameters as log10, rounded to a
tenth (a grid point not seen is given the nearest cell's), ``n`` the training
rows and ``d`` the features of the data set. ``b`` and ``c`` are fitted by
least squares on the logs within the cells; each cell's ``a`` is then the log
of its mean, not the mean of its logs: a run's time is a sum of seconds, and
at C = 1e10 the data sets of one size differ thirty-fold. That spread is what
makes an estimate wrong: how far the estimate of each data set's whole grid
was from its records, as a ratio, has its 10th and 90th percentiles kept as
the family's ``low`` and ``high`` factors, said with every estimate made from
the prior. A unit's own cost besides its fits (a worker's loading,
splitting, scoring and returning) is ``unit_seconds``, the median over the
stores' runs of (wall x workers - summed record seconds) / units.

``benchmarks/derive_cost_prior.py`` (``make cost-prior``) learns it from
``results/`` into ``cost_prior.json`` beside this module; the same stores give
the same bytes.
"""

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ._schedule import record_seconds

#: The learned prior, committed with the package.
PRIOR_FILE = Path(__file__).with_name("cost_prior.json")
#: Columns a store is read with to learn the prior.
COLUMNS = ("run_id", "dataset", "estimator", "point", "fit_seconds", "path_size", "predict_seconds",
           "standalone_fit_seconds", "n_train", "status", "kind")
#: A family is learned from at least this many timed records over at least this many data sets.
MIN_RECORDS, MIN_DATASETS = 50, 3
#: Significant digits the file keeps: enough for an estimate, and stable across platforms' last bits.
DIGITS = 4


def point_cell(point):
    """The cell of a grid point ({name: value}): its positive numeric values as log10 rounded to a tenth."""
    cell = {}
    for name, value in point.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
            continue
        cell[name] = round(math.log10(value), 1)
    return cell


def learn_prior(frames, runs, features):
    """The prior (a dict, as ``cost_prior.json`` holds it) of the stores' record ``frames`` (``COLUMNS``) and
    ``runs`` ([{started_at, finished_at, jobs, units_done, run_id}], their run files); ``features``:
    {data set: features}, a data set without one left out."""
    frame = pd.concat(frames, ignore_index=True)
    frame = frame[(frame["kind"] == "grid-search") & (frame["status"] == "ok")]
    seconds = record_seconds(frame).to_numpy(float)
    d = frame["dataset"].map(features).to_numpy(float)
    n = pd.to_numeric(frame["n_train"], errors="coerce").to_numpy(float)
    ok = np.isfinite(seconds) & (seconds > 0) & np.isfinite(d) & (d > 0) & np.isfinite(n) & (n > 0)
    data = pd.DataFrame({"estimator": frame["estimator"].astype(str).to_numpy()[ok],
                         "dataset": frame["dataset"].astype(str).to_numpy()[ok],
                         "point": frame["point"].astype(str).to_numpy()[ok],
                         "log_s": np.log(seconds[ok]), "log_n": np.log(n[ok]), "log_d": np.log(d[ok])})
    families = {}
    for estimator, rows in data.groupby("estimator", sort=True):
        if len(rows) >= MIN_RECORDS and rows["dataset"].nunique() >= MIN_DATASETS:
            families[estimator] = _fit_family(rows)
    per_unit = _unit_seconds(frame, seconds, runs)
    return {"about": "eemrepro/experiments/_cost_prior.py; re-derive with `make cost-prior`",
            "unit_seconds": _round(per_unit), "families": families}


def _fit_family(rows):
    """One family's coefficients: its cells' intercepts, the exponents of n and d, and its (low, high) spread."""
    points = rows["point"].astype("category")  # a few hundred points among a million records: each read once
    named = {p: json.dumps(point_cell(json.loads(p)), sort_keys=True) for p in points.cat.categories}
    cells = points.map(named).astype(str).to_numpy()
    y, x = rows["log_s"].to_numpy(), rows[["log_n", "log_d"]].to_numpy()
    # A cell's intercept absorbs its mean: the exponents are those of the within-cell variation (Frisch-Waugh),
    # the least-norm pair where few data sets leave n and d confounded.
    means = pd.DataFrame({"y": y, "n": x[:, 0], "d": x[:, 1]}).groupby(cells).transform("mean").to_numpy()
    slopes = np.linalg.lstsq(x - means[:, 1:], y - means[:, 0], rcond=1e-9)[0]
    # Each cell's intercept is the log of its mean, not the mean of its logs: at C = 1e10 the data sets differ
    # thirty-fold, and a run's time is the sum of their seconds, not of their logs.
    scaled = pd.Series(np.exp(y - x @ slopes))
    by_cell = np.log(scaled.groupby(cells).mean())
    estimate = np.exp(x @ slopes + by_cell.reindex(cells).to_numpy())
    # How far the estimate of a data set's whole grid was off: the factors an estimate is said with.
    sums = pd.DataFrame({"s": np.exp(y), "e": estimate}).groupby(rows["dataset"].to_numpy()).sum()
    low, high = np.quantile((sums["s"] / sums["e"]).to_numpy(), [0.1, 0.9])
    return {"cells": [[json.loads(c), _round(a)] for c, a in by_cell.sort_index().items()],
            "log_n": _round(slopes[0]), "log_d": _round(slopes[1]),
            "low": _round(min(float(low), 1.0)), "high": _round(max(float(high), 1.0)),
            "records": int(len(rows)), "datasets": int(rows["dataset"].nunique())}


def _unit_seconds(frame, seconds, runs):
    """The median over runs (of 20 units or more) of what a unit cost besides its records' seconds."""
    by_run = pd.Series(seconds).groupby(frame["run_id"].astype(str).to_numpy()).sum()
    extra = []
    for run in runs:
        spent, units = by_run.get(run.get("run_id")), run.get("units_done") or 0
        if spent is None or units < 20 or not run.get("finished_at") or not run.get("jobs"):
            continue
        wall = (run["finished_at"] - run["started_at"]) * run["jobs"]
        extra.append(max(0.0, (wall - spent) / units))
    return float(np.median(extra)) if extra else 0.05


def _round(x):
    return float(f"{x:.{DIGITS}g}")


def prior_text(prior):
    """The file's text of ``prior``: sorted keys, one family a line (diffs read per family)."""
    families = prior["families"]
    lines = [f"    {json.dumps(name)}: {json.dumps(families[name], sort_keys=True)}" for name in sorted(families)]
    head = {k: v for k, v in prior.items() if k != "families"}
    top = json.dumps(head, sort_keys=True, indent=2)[:-2]
    return top + ',\n  "families": {\n' + ",\n".join(lines) + "\n  }\n}\n"


@lru_cache(maxsize=1)
def load_prior(path=PRIOR_FILE):
    """The committed prior (an empty one when the file is missing: every family then falls back)."""
    try:
        return CostPrior(json.loads(Path(path).read_text(encoding="utf-8")))
    except FileNotFoundError:
        return CostPrior({"families": {}, "unit_seconds": 0.05})


class CostPrior:
    """Seconds of a fit from ``learn_prior``'s coefficients: ``record_seconds`` for one grid point, ``spread``
    the (low, high) factors of its family; ``family`` None for an estimator it has not learned."""

    def __init__(self, prior):
        self.unit_seconds = float(prior.get("unit_seconds", 0.05))
        self._families = prior["families"]

    def knows(self, estimator):
        return estimator in self._families

    def record_seconds(self, estimator, n, d, point):
        """Mean seconds of one record of ``estimator`` at grid ``point`` on ``n`` training rows of ``d``
        features (a path's fit shared over its points); None for a family it has not learned."""
        family = self._families.get(estimator)
        if family is None:
            return None
        intercept = _nearest(family["cells"], point_cell(point))
        log_s = intercept + family["log_n"] * math.log(max(n, 1.0)) + family["log_d"] * math.log(max(d, 1.0))
        return math.exp(log_s)

    def spread(self, estimator):
        """(low, high): the factors an estimate of ``estimator`` may be off by (a data set's own speed)."""
        family = self._families.get(estimator)
        return (family["low"], family["high"]) if family else (None, None)


def _nearest(cells, cell):
    """The intercept of the cell nearest ``cell`` (log10 distance over the parameters both name; a parameter
    only one names counts as one decade apart)."""
    def distance(known):
        names = set(known) | set(cell)
        return sum((known[k] - cell[k]) ** 2 if k in known and k in cell else 1.0 for k in names)

    return min(cells, key=lambda c: (distance(c[0]), json.dumps(c[0], sort_keys=True)))[1]


def prior_from_stores(paths):
    """``learn_prior`` of the results folders ``paths`` (their records and run files; each data set's
    features from the registry, else from its records' folder's local files)."""
    from ..datasets import get_entry
    from ..store import ResultStore, read_runs

    frames, runs = [], []
    for path in paths:
        frames.append(ResultStore(path).frame(list(COLUMNS)))
        runs += read_runs(path)
    features = {}
    for name in sorted(set().union(*(set(f["dataset"].astype(str)) for f in frames))):
        try:
            features[name] = get_entry(name).expected.get("d")
        except (KeyError, ValueError):
            continue
    return learn_prior(frames, runs, {k: v for k, v in features.items() if v})
