"""Which unit runs when: longest first by a cost model, small units batched.

A run's wall time on N workers is the makespan of its units. In the config's
order the costly ones (SVM at large C on the largest data set) come last and
run alone while the other workers idle: on 16 cores a third of them did. Here
the units are dispatched longest first (Graham's LPT rule, within 4/3 of the
optimum), each unit's cost estimated from

* the stored timings of the same data set, model and grid point (and inner
  or outer split), when a store holds any made under the config's identity:
  their seconds per record (a path's fit shared out over its points) times
  the unit's points; else
* the same cell's mean seconds per record; else
* the kind's size-based prior (``ExperimentKind.seconds``).

Units estimated under ``batch_seconds`` are packed into batches of about that
much work (still longest first), so a task's dispatch and result round trip
is paid once per batch, not once per tiny unit. ``benchmarks/simulate_schedule.py``
replays stored timings under both orders.
"""

import threading

import numpy as np
import pandas as pd

from ._kinds import get_kind
from ._units import as_category, cell_key, point_ids

#: Units estimated under this many seconds are packed into batches of about this much work.
BATCH_SECONDS = 0.5
#: A batch holds at most this many units (a Ctrl-C loses at most one batch per worker).
BATCH_UNITS = 16


def record_seconds(timed):
    """Seconds each stored record cost: its fit (a path's shared out over its points), its prediction and any
    standalone timing fit (a store frame with ``fit_seconds``, ``path_size``, ``predict_seconds``)."""
    def numbers(column):  # a column no segment holds reads as missing
        return pd.to_numeric(timed[column], errors="coerce") if column in timed else pd.Series(
            np.nan, index=timed.index)

    size = numbers("path_size").fillna(1.0)
    # A standalone fit is extra work only beside a path's shared fit (a point fitted alone records its own
    # fit as its standalone time).
    extra = numbers("standalone_fit_seconds").where(size > 1).fillna(0.0)
    return numbers("fit_seconds") / size + numbers("predict_seconds").fillna(0.0) + extra


def records_seconds(records):
    """What a unit's records (dicts, as a worker returns them) took, by ``record_seconds``'s rule."""
    total = 0.0
    for r in records:
        size = r.get("path_size") or 1
        total += (r.get("fit_seconds") or 0.0) / size + (r.get("predict_seconds") or 0.0)
        if size > 1:
            total += r.get("standalone_fit_seconds") or 0.0
    return total


def unit_costs(config, units, timed=None, shas=None, known=False):
    """Estimated seconds of each of ``units`` (an array), from stored timings where there are any.

    ``timed``: a store frame with ``identity_sha`` and the timing columns;
    ``shas``: {(data set, model, is inner): identity sha} of the config (only
    records made under it count). ``known``: also return, per unit, whether
    its estimate is measured (stored timings of its cell), the only ones
    worth batching on.
    """
    kind = get_kind(config.kind)
    by_point, by_cell = {}, {}
    if len(units) and timed is not None and not timed.empty and shas:
        by_cell, by_point = _measured(timed, shas, {(u.dataset, u.model) for u in units})
    out, trusted = np.empty(len(units)), np.ones(len(units), dtype=bool)
    for i, u in enumerate(units):
        cell = cell_key(u)
        if by_point:
            each = [by_point.get((*cell, p)) for p in point_ids(u.points)]
            if all(e is not None for e in each):
                out[i] = float(sum(each))
                continue
        per_record = by_cell.get(cell)
        out[i] = kind.seconds(config, u) if per_record is None else per_record * len(u.points)
        # A prior orders units, but a batch of units it calls small can hold hours (SVM at large C): only
        # measured units are batched.
        trusted[i] = per_record is not None
    return (out, trusted) if known else out



def _measured(timed, shas, cells):
    """({(data set, model, is inner): mean seconds per record}, {(..., point): mean seconds per record}) of
    the stored records of ``cells`` made under their cell's identity (``shas``); grouped on category codes."""
    dataset, model, point, sha = (as_category(timed[c]) for c in ("dataset", "model", "point", "identity_sha"))
    inner = timed["inner"].notna().to_numpy()
    d_cat, m_cat, p_cat = dataset.cat.categories, model.cat.categories, point.cat.categories
    n_m = len(m_cat) + 1
    cell_code = dataset.cat.codes.to_numpy(np.int64) * n_m + model.cat.codes.to_numpy(np.int64)
    # The identity sha each (cell, inner) asks for, as a code of the column's categories.
    want = {}
    for (d, m, is_inner), value in shas.items():
        if (d, m) in cells:
            di, mi = d_cat.get_indexer([d])[0], m_cat.get_indexer([m])[0]
            if di >= 0 and mi >= 0:
                want[(di * n_m + mi) * 2 + int(is_inner)] = sha.cat.categories.get_indexer([value])[0]
    if not want:
        return {}, {}
    key = cell_code * 2 + inner
    expected = pd.Series(want).reindex(key).to_numpy()
    seconds = record_seconds(timed).to_numpy()
    ok = (sha.cat.codes.to_numpy() == expected) & ~np.isnan(seconds)
    if not ok.any():
        return {}, {}
    frame = pd.DataFrame({"cell": key[ok], "point": point.cat.codes.to_numpy(np.int64)[ok], "s": seconds[ok]})
    by_cell = frame.groupby("cell")["s"].mean()
    by_point = frame.groupby(["cell", "point"])["s"].mean()

    def name(k):
        c, is_inner = divmod(int(k), 2)
        return str(d_cat[c // n_m]), str(m_cat[c % n_m]), bool(is_inner)

    return ({name(k): v for k, v in by_cell.items()},
            {(*name(k), str(p_cat[p])): v for (k, p), v in by_point.items()})


class Scheduler:
    """Longest first, learning as it goes: the next batch is taken from the units left by their estimates,
    each prior-based estimate scaled by what the finished units of its cell (else of its model) really took
    against their own estimates.

    ``costs`` and ``known`` are ``unit_costs``'s; ``cells`` each unit's
    (data set, model). ``observe`` a finished unit's seconds; ``next_batch``
    the next batch of unit indices (None when none is left). Measured
    estimates are used as they are and may be batched; prior ones are
    corrected by the learned ratios and dispatched alone. The units left are
    re-sorted when what was learned since covers a two-hundredth of them.
    """

    def __init__(self, costs, known, cells, batch_seconds=BATCH_SECONDS, batch_units=BATCH_UNITS):
        self.costs = np.asarray(costs, dtype=float)
        self.known = np.asarray(known, dtype=bool)
        self.batch_seconds, self.batch_units = batch_seconds, batch_units
        cell_codes, self._cells = pd.factorize(pd.Series([f"{d}\x00{m}" for d, m in cells], dtype=object))
        model_codes, _ = pd.factorize(pd.Series([m for _, m in cells], dtype=object))
        self.cell, self.model = np.asarray(cell_codes), np.asarray(model_codes)
        self._sums = {k: np.zeros((2, n + 1)) for k, n in (("cell", self.cell.max(initial=0)),
                                                            ("model", self.model.max(initial=0)))}
        self.done = np.zeros(len(self.costs), dtype=bool)
        self._learned, self._stack = 0, None
        self._lock = threading.Lock()

    def estimates(self, idx):
        """The current estimate of units ``idx``: measured as it is, a prior scaled by its cell's (else its
        model's) seconds over estimates of the units finished so far."""
        out = self.costs[idx].copy()
        ratio = np.ones(len(idx))
        for key, codes in (("model", self.model), ("cell", self.cell)):  # the cell's, where it has one, wins
            seconds, estimated = self._sums[key][:, codes[idx]]
            seen = estimated > 0
            ratio[seen] = seconds[seen] / estimated[seen]
        prior = ~self.known[idx]
        out[prior] *= ratio[prior]
        return out

    def observe(self, i, seconds):
        """A unit finished in ``seconds``: its cell's and its model's ratios learn from it (prior ones only)."""
        if i is None or self.known[i] or not np.isfinite(seconds):
            return
        with self._lock:  # joblib takes batches from its own thread while the run's thread observes
            for key, codes in (("cell", self.cell), ("model", self.model)):
                self._sums[key][0, codes[i]] += seconds
                self._sums[key][1, codes[i]] += self.costs[i]
            self._learned += 1

    def _sort(self):
        left = np.flatnonzero(~self.done)
        estimates = self.estimates(left)
        self._stack = left[np.lexsort((left, -estimates))][::-1].tolist()  # the longest on top
        self._learned = 0

    def next_batch(self):
        with self._lock:
            return self._next_batch()

    def _next_batch(self):
        if self._stack is None or self._learned * 200 >= max(1, len(self._stack)):
            self._sort()
        while self._stack and self.done[self._stack[-1]]:
            self._stack.pop()
        if not self._stack:
            return None
        first = self._stack.pop()
        self.done[first] = True
        batch, filled = [first], float(self.estimates(np.array([first]))[0])
        if not self.known[first] or filled >= self.batch_seconds:
            return batch
        while self._stack and len(batch) < self.batch_units and filled < self.batch_seconds:
            i = self._stack[-1]
            if not self.known[i]:
                break
            self._stack.pop()
            self.done[i] = True
            batch.append(i)
            filled += float(self.costs[i])
        return batch
