"""The runner's scheduler (issue 53): longest first, learning from finished units, small measured ones batched.

Expected orders and makespans are worked out by hand in each test (list
scheduling of a few durations on two workers).
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from eemrepro.experiments._schedule import Scheduler, record_seconds, records_seconds

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from simulate_schedule import makespan, online_makespan  # noqa: E402


def _drain(scheduler):
    out = []
    while (batch := scheduler.next_batch()) is not None:
        out.append(batch)
    return out


def test_units_go_longest_first_and_ties_keep_their_order():
    costs = [1.0, 5.0, 3.0, 5.0]
    batches = _drain(Scheduler(costs, [True] * 4, [("d", "m")] * 4, batch_seconds=0.5))
    assert batches == [[1], [3], [2], [0]]


def test_only_small_measured_units_are_batched():
    # Six measured units of 0.2 s fill batches of 0.6 s (three each, past 0.5 s); the four of a prior
    # (a user's classifier never timed: 0.2 s is a guess) go alone.
    costs = [0.2] * 10
    known = [True] * 6 + [False] * 4
    batches = _drain(Scheduler(costs, known, [("d", "m")] * 10, batch_seconds=0.5))
    assert sorted(len(b) for b in batches) == [1, 1, 1, 1, 3, 3]
    assert all(len(b) == 1 for b in batches if b[0] >= 6)
    assert sorted(i for b in batches for i in b) == list(range(10))


def test_a_prior_is_corrected_by_what_the_cells_units_took():
    # A's prior says 6 s for its first unit and 1 s for the others, B's 5 s each: A's first unit goes first,
    # then B's would. It takes 60 s: A's others are now estimated at 10 s (a ratio of what A took over what it
    # was estimated at), ahead of B's.
    cells = [("d", "A")] * 3 + [("d", "B")] * 3
    s = Scheduler([6, 1, 1, 5, 5, 5], [False] * 6, cells)
    assert s.next_batch() == [0]
    s.observe(0, 60.0)
    assert s.next_batch() == [1] and s.next_batch() == [2] and s.next_batch() == [3]
    unlearned = Scheduler([6, 1, 1, 5, 5, 5], [False] * 6, cells)
    assert _drain(unlearned) == [[0], [3], [4], [5], [1], [2]]  # without it: the prior's order
    # The model's ratio stands in for a cell that has seen nothing yet.
    t = Scheduler([1, 1, 5], [False] * 3, [("d1", "A"), ("d2", "A"), ("d1", "B")])
    t.observe(0, 10.0)
    assert list(t.estimates(np.array([1, 2]))) == [10.0, 5.0]


def test_the_simulator_tells_a_long_last_unit_from_a_long_first_one():
    # Two workers, units of 1, 1, 1, 1 and 4 s. In that order: 1+1 | 1+1, then the 4 s unit alone: 6 s.
    # Longest first: 4 | 1+1+1+1: 4 s, the optimum (8 s of work on 2 workers).
    durations = np.array([1.0, 1.0, 1.0, 1.0, 4.0])
    assert makespan(durations, [[i] for i in range(5)], 2, 0.0, 0.0) == pytest.approx(6.0)
    span, tasks = online_makespan(durations, Scheduler(durations, [True] * 5, [("d", "m")] * 5, batch_seconds=0),
                                  2, 0.0, 0.0)
    assert (span, tasks) == (pytest.approx(4.0), 5)
    # Overheads count per unit and per task: one batch of the four 1 s units saves three task overheads.
    batched = Scheduler(durations, [True] * 5, [("d", "m")] * 5, batch_seconds=4.0)
    span, tasks = online_makespan(durations, batched, 2, 0.1, 0.5)
    assert tasks == 2 and span == pytest.approx(0.5 + 4 * 1.1)


def test_the_simulator_waits_for_the_main_process_to_take_in_every_unit():
    # Four workers, eight 1 s units: the workers are done at 2 s. The main process takes 0.5 s per unit, one at
    # a time in the order they finish: the four ending at 1 s are in at 3 s, the four ending at 2 s start then
    # and are in at 5 s. (Its summed work alone, 4 s, or its work beside the workers', would say less.)
    durations = np.ones(8)
    assert makespan(durations, [[i] for i in range(8)], 4, 0.0, 0.0) == pytest.approx(2.0)
    assert makespan(durations, [[i] for i in range(8)], 4, 0.0, 0.0, collector=0.5) == pytest.approx(5.0)
    span, _ = online_makespan(durations, Scheduler(durations, [True] * 8, [("d", "m")] * 8, batch_seconds=0),
                              4, 0.0, 0.0, collector=0.5)
    assert span == pytest.approx(5.0)
    # A main process fast enough keeps up: only the last units' own 4 x 0.01 s come after the workers'.
    assert makespan(durations, [[i] for i in range(8)], 4, 0.0, 0.0, collector=0.01) == pytest.approx(2.04)


def test_a_units_seconds_by_the_same_rule_from_records_and_from_a_frame():
    records = [  # a path of two points (fit shared, a standalone timing fit each) and a point fitted alone
        {"fit_seconds": 2.0, "path_size": 2, "predict_seconds": 0.1, "standalone_fit_seconds": 0.7},
        {"fit_seconds": 2.0, "path_size": 2, "predict_seconds": 0.1, "standalone_fit_seconds": 0.5},
        {"fit_seconds": 0.3, "path_size": 1, "predict_seconds": 0.05, "standalone_fit_seconds": 0.3},
    ]
    expected = 2.0 + 0.2 + 0.7 + 0.5 + 0.3 + 0.05  # the alone point's standalone time is its own fit
    assert records_seconds(records) == pytest.approx(expected)
    assert record_seconds(pd.DataFrame(records)).sum() == pytest.approx(expected)
