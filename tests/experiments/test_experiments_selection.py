"""Selection on a hand-made record set; expected values computed by hand below."""

import math

import pandas as pd
import pytest

from eemrepro.experiments import select


def rec(point, fold, gmean, status="ok", inner=None, repeat=0, model="M", fit=1.0):
    return {"dataset": "D", "model": model, "params": point, "repeat": repeat, "fold": fold, "inner": inner,
            "status": status, "metrics": {"gmean": gmean if status == "ok" else None,
                                          "bac": gmean if status == "ok" else None, "auc": None},
            "fit_seconds": fit, "path_size": 1}


def test_best_of_grid_mean_std_and_exclusions():
    records = (
        [rec({"h": 1}, f, g) for f, g in enumerate([0.8, 0.6, 0.7])]          # mean 0.7
        + [rec({"h": 2}, f, g, fit=2.0) for f, g in enumerate([0.9, 0.5, 0.8])]  # mean 0.7333
        # Better on the folds it finished, but one fold timed out: not a candidate.
        + [rec({"h": 3}, 0, 0.99), rec({"h": 3}, 1, None, "timed-out"), rec({"h": 3}, 2, 0.99)]
    )
    row = select(records).iloc[0]
    assert row["point"] == '{"h": 2}'
    assert row["gmean_mean"] == pytest.approx((0.9 + 0.5 + 0.8) / 3)
    # Sample std (ddof=1): sqrt(((1/6)^2 + (7/30)^2 + (1/15)^2) / 2) = 0.2081666
    assert row["gmean_std"] == pytest.approx(math.sqrt(((0.9 - 0.22 / 0.3) ** 2 + (0.5 - 2.2 / 3) ** 2 + (0.8 - 2.2 / 3) ** 2) / 2))
    assert row["gmean_std"] == pytest.approx(0.2081666, abs=1e-7)
    assert row["fit_seconds_mean"] == 2.0 and row["n_folds"] == 3


def test_ties_go_to_the_smallest_parameters_whatever_the_record_order():
    a = [rec({"h": 5}, f, 0.7) for f in range(2)] + [rec({"h": 50}, f, 0.7) for f in range(2)]
    for records in (a, a[::-1]):
        assert select(records).iloc[0]["point"] == '{"h": 5}'


def test_a_cell_with_every_point_timed_out_says_so():
    records = [rec({"h": 1}, 0, None, "timed-out"), rec({"h": 1}, 1, None, "skipped-after-timeout")]
    row = select(records).iloc[0]
    assert row["status"] == "timed-out" and row["point"] is None


def test_a_cell_interrupted_mid_grid_reads_incomplete_not_a_smaller_grid():
    # h=2 has the better mean on fold 0, but its fold 1 was never run: reporting
    # h=1 (or h=2 on one fold) would present a partial grid as the result.
    records = [rec({"h": 1}, f, 0.7) for f in range(2)] + [rec({"h": 2}, 0, 0.9)]
    row = select(records).iloc[0]
    assert row["status"] == "incomplete" and row["point"] is None
    # Once the missing fold is stored the cell has a value again: mean(0.9, 0.8).
    row = select(records + [rec({"h": 2}, 1, 0.8)]).iloc[0]
    assert row["status"] == "ok" and row["gmean_mean"] == pytest.approx(0.85)


def test_nested_selection_uses_inner_folds_only():
    records = []
    # Outer fold 0: inner CV prefers h=1 (0.9 vs 0.5), though h=2 is better on the outer test fold.
    records += [rec({"h": 1}, 0, 0.9, inner=i) for i in range(2)] + [rec({"h": 2}, 0, 0.5, inner=i) for i in range(2)]
    records += [rec({"h": 1}, 0, 0.6), rec({"h": 2}, 0, 0.95)]
    # Outer fold 1: inner CV prefers h=2.
    records += [rec({"h": 1}, 1, 0.4, inner=i) for i in range(2)] + [rec({"h": 2}, 1, 0.8, inner=i) for i in range(2)]
    records += [rec({"h": 1}, 1, 0.9), rec({"h": 2}, 1, 0.7)]
    nested = select(records, "nested").iloc[0]
    assert nested["points"] == ['{"h": 1}', '{"h": 2}']
    assert nested["gmean_mean"] == pytest.approx((0.6 + 0.7) / 2)
    # best-of-grid on the same outer records: h=2 with (0.95 + 0.7) / 2 = 0.825 > 0.75.
    best = select(records).iloc[0]
    assert best["point"] == '{"h": 2}' and best["gmean_mean"] == pytest.approx(0.825)


def test_nested_ties_in_round_off_go_to_the_smallest_parameters():
    # Both points score 0.3 and 0.6 on the inner folds, but h=50's 0.3 was
    # computed as 0.1 + 0.2 = 0.30000000000000004 (two metric values computed
    # along different paths can differ by an ulp), so its mean is an ulp above
    # h=5's. Still a tie: the smaller h wins, as in best-of-grid.
    records = ([rec({"h": 5}, 0, g, inner=i) for i, g in enumerate([0.3, 0.6])]
               + [rec({"h": 50}, 0, g, inner=i) for i, g in enumerate([0.1 + 0.2, 0.6])]
               + [rec({"h": 5}, 0, 0.6), rec({"h": 50}, 0, 0.9)])
    assert (0.1 + 0.2 + 0.6) / 2 > (0.3 + 0.6) / 2
    nested = select(records, "nested").iloc[0]
    assert nested["points"] == ['{"h": 5}'] and nested["gmean_mean"] == pytest.approx(0.6)
    # A real difference (1e-9) still decides.
    records[2]["metrics"]["gmean"] += 1e-9
    assert select(records, "nested").iloc[0]["points"] == ['{"h": 50}']


def test_nested_selection_of_an_unfinished_cell_reads_incomplete():
    # Outer fold 0 has both points' inner records, but the store's config says
    # the cell still lacks units (say h=2's inner folds on another outer fold):
    # choosing among what is stored would report a smaller grid.
    records = ([rec({"h": 1}, 0, 0.9, inner=i) for i in range(2)] + [rec({"h": 2}, 0, 0.5, inner=i) for i in range(2)]
               + [rec({"h": 1}, 0, 0.6), rec({"h": 2}, 0, 0.95)])
    done = select(records, "nested").iloc[0]
    assert done["status"] == "ok" and done["gmean_mean"] == pytest.approx(0.6)
    row = select(records, "nested", unfinished={("D", "M")}).iloc[0]
    assert row["status"] == "incomplete" and pd.isna(row["point"]) and pd.isna(row["gmean_mean"])
    # Another cell's state does not matter.
    assert select(records, "nested", unfinished={("D", "other")}).iloc[0]["status"] == "ok"


def test_gmean_closed_form():
    import numpy as np

    from eemrepro.experiments import get_metric

    y = np.array([1, 1, 1, 1, -1, -1, -1, -1, -1, -1])
    pred = np.array([1, 1, 1, -1, -1, -1, -1, -1, 1, 1])
    g, bac = get_metric("gmean")(y, pred), get_metric("bac")(y, pred)
    # TPR = 3/4, TNR = 4/6: GMean = sqrt(0.75 * 2/3), BAC = (0.75 + 2/3) / 2.
    assert g == pytest.approx(math.sqrt(0.5)) and bac == pytest.approx((0.75 + 2 / 3) / 2)


def test_nested_averages_the_inner_folds_and_the_outer_folds_by_their_mean():
    # Three inner folds whose mean, median and min each pick another point (values by hand):
    #   h=1: 0.95, 0.95, 0.40 -> mean 0.7667, median 0.95, min 0.40
    #   h=2: 0.80, 0.80, 0.80 -> mean 0.80,   median 0.80, min 0.80
    #   h=3: 0.99, 0.70, 0.75 -> mean 0.8133, median 0.75, min 0.70
    # The mean picks h=3 on every outer fold (the median would pick h=1, the min h=2). Three outer
    # folds with asymmetric test values for h=3 (0.9, 0.6, 0.6: mean 0.7, median 0.6) tell the outer
    # mean from the median too; each point's test values differ, so the number names the rule.
    inner = {1: [0.95, 0.95, 0.40], 2: [0.80, 0.80, 0.80], 3: [0.99, 0.70, 0.75]}
    outer = {1: [0.1, 0.2, 0.3], 2: [0.4, 0.45, 0.5], 3: [0.9, 0.6, 0.6]}
    records = [rec({"h": h}, fold, g, inner=i) for h, values in inner.items() for fold in range(3)
               for i, g in enumerate(values)]
    records += [rec({"h": h}, fold, g) for h, values in outer.items() for fold, g in enumerate(values)]
    row = select(records, "nested").iloc[0]
    assert row["points"] == ['{"h": 3}'] * 3
    assert row["gmean_mean"] == pytest.approx(0.7, abs=1e-12)
    # Sample std of 0.9, 0.6, 0.6 (ddof=1): sqrt((0.2^2 + 0.1^2 + 0.1^2) / 2) = sqrt(0.03)
    assert row["gmean_std"] == pytest.approx(math.sqrt(0.03), abs=1e-12)


def test_best_per_fold_takes_each_folds_best_test_value_ties_to_the_smallest_point():
    # Per fold, the point with the best test GMean (an optimistic reading, SPEC section 8), by hand:
    #   fold 0: h=1 0.9, h=2 0.5 -> h=1 0.9;  fold 1: h=1 0.4, h=2 0.7 -> h=2 0.7;  fold 2: both 0.6 -> h=1 (tie)
    records = [rec({"h": 1}, f, g) for f, g in enumerate([0.9, 0.4, 0.6])]
    records += [rec({"h": 2}, f, g, fit=3.0) for f, g in enumerate([0.5, 0.7, 0.6])]
    row = select(records, "best-per-fold").iloc[0]
    assert row["points"] == ['{"h": 1}', '{"h": 2}', '{"h": 1}'] and row["point"] == '{"h": 1}'  # the mode
    assert row["folds"] == [(0, 0), (0, 1), (0, 2)] and row["n_folds"] == 3
    assert row["gmean_mean"] == pytest.approx((0.9 + 0.7 + 0.6) / 3, abs=1e-12)
    # Sample std (ddof=1) of 0.9, 0.7, 0.6: sqrt((0.2333^2 + 0.0333^2 + 0.1333^2) / 2) = 0.152753
    assert row["gmean_std"] == pytest.approx(0.15275252316519466, abs=1e-12)
    assert row["fit_seconds_mean"] == pytest.approx((1.0 + 3.0 + 1.0) / 3)
    # A point whose test value is lower everywhere is never picked; reversed record order changes nothing.
    assert select(records[::-1], "best-per-fold").iloc[0]["points"] == row["points"]
    # by BAC, where the best is the largest too, and by error, where it is the smallest.
    err = [dict(r, metrics={**r["metrics"], "error": 1 - r["metrics"]["gmean"]}) for r in records]
    assert select(err, "best-per-fold", metric="error").iloc[0]["points"] == row["points"]


# -- what mutation testing found unpinned (benchmarks/MUTATION.md) -------------------------------------------
def _three_folds():
    # h=1 folds 0.8, 0.6, 0.7 (mean 0.7); h=2 folds 0.9, 0.5, 0.85 (mean 0.75): best of grid h=2.
    return ([rec({"h": 1}, f, g) for f, g in enumerate([0.8, 0.6, 0.7])]
            + [rec({"h": 2}, f, g) for f, g in enumerate([0.9, 0.5, 0.85])])


@pytest.mark.parametrize("ddof", [0, 1])
def test_every_rule_spreads_by_the_ddof_it_is_given(ddof):
    import numpy as np

    records = _three_folds()
    # nested: inner folds prefer h=2 on every outer fold (0.9 vs 0.1), so the outer values are h=2's.
    records += [rec({"h": h}, f, 0.9 if h == 2 else 0.1, inner=i) for h in (1, 2) for f in range(3) for i in range(2)]
    # best of grid and nested report h=2 (0.9, 0.5, 0.85); best per fold takes h=1's 0.6 on fold 1.
    for mode, values in (("best-of-grid", [0.9, 0.5, 0.85]), ("nested", [0.9, 0.5, 0.85]),
                         ("best-per-fold", [0.9, 0.6, 0.85])):
        row = select(records, mode, ddof=ddof).iloc[0]
        assert row["gmean_std"] == pytest.approx(np.std(values, ddof=ddof), abs=1e-12), mode


def test_a_cell_says_what_stopped_it_one_failed_or_timed_out_fit_is_enough():
    # Expected: any failure (one of three folds) makes the cell "failed"; any timeout makes it "timed-out".
    failed = [rec({"h": 1}, 0, 0.7), rec({"h": 1}, 1, None, "failed"), rec({"h": 1}, 2, 0.7)]
    assert select(failed).iloc[0]["status"] == "failed"
    timed = [rec({"h": 1}, 0, 0.7), rec({"h": 1}, 1, None, "timed-out"), rec({"h": 1}, 2, 0.7)]
    assert select(timed).iloc[0]["status"] == "timed-out"
    # Nested, with the only point failed on an outer fold's inner fold: no point can be chosen there.
    nested = [rec({"h": 1}, 0, None, "failed", inner=0), rec({"h": 1}, 0, 0.5, inner=1), rec({"h": 1}, 0, 0.6)]
    assert select(nested, "nested").iloc[0]["status"] == "failed"
    # A cell the store calls unfinished but that a timeout stopped is judged by its records, not "incomplete".
    assert select(timed, unfinished={("D", "M")}).iloc[0]["status"] == "timed-out"
    # Best per fold too: fold 1, its only point timed out, is lost, and the cell is not the mean of the other two
    # (issue 58: a failure is never averaged away).
    assert select(timed, "best-per-fold", unfinished={("D", "M")}).iloc[0]["status"] == "timed-out"


def test_an_unfinished_cell_is_blanked_and_its_neighbour_is_not():
    records = _three_folds() + [dict(r, model="N") for r in _three_folds()]
    rows = select(records, "best-per-fold", unfinished={("D", "M")}).set_index("model")
    assert rows.loc["M", "status"] == "incomplete" and rows.loc["M", "points"] is None
    assert pd.isna(rows.loc["M", "gmean_mean"]) and pd.isna(rows.loc["M", "gmean_std"])
    assert rows.loc["N", "status"] == "ok" and rows.loc["N", "points"] == ['{"h": 2}', '{"h": 1}', '{"h": 2}']
    assert rows.loc["N", "gmean_mean"] == pytest.approx((0.9 + 0.6 + 0.85) / 3)


def test_a_single_fold_has_a_mean_and_no_spread():
    row = select([rec({"h": 1}, 0, 0.7), rec({"h": 2}, 0, 0.8)]).iloc[0]
    assert row["point"] == '{"h": 2}' and row["gmean_mean"] == pytest.approx(0.8) and pd.isna(row["gmean_std"])
    row = select([rec({"h": 1}, 0, 0.7), rec({"h": 2}, 0, 0.8)], "best-per-fold").iloc[0]
    assert row["gmean_mean"] == pytest.approx(0.8) and pd.isna(row["gmean_std"])


@pytest.mark.parametrize("values, first", [
    ((10, 9), {"k": 9}),              # numbers in numeric order, not as text ("10" < "9")
    (("scale", 0.5), {"k": 0.5}),     # a number before a word
    (("rbf", "nsig"), {"k": "nsig"}),  # words in text order
])
def test_ties_go_to_the_first_point_in_canonical_order(values, first):
    import json

    records = [rec({"k": v}, f, 0.7) for v in values for f in range(2)]
    assert json.loads(select(records).iloc[0]["point"]) == first
    assert json.loads(select(records[::-1], "best-per-fold").iloc[0]["points"][0]) == first


def test_without_values_of_the_metric_the_first_complete_point_is_reported():
    # AUC was not computed (None on every record): no point is better; the canonical first one is shown.
    records = [dict(r, metrics={**r["metrics"], "auc": None}) for r in _three_folds()]
    assert select(records, metric="auc").iloc[0]["point"] == '{"h": 1}'


def test_grid_summary_counts_and_path_sizes():
    from eemrepro.experiments import grid_summary, records_frame

    records = _three_folds() + [dict(rec({"h": 3}, 0, None, "timed-out"), path_size=4)]
    g = grid_summary(records_frame(records)).set_index("point")
    assert g.loc['{"h": 2}', "n_folds"] == 3 and g.loc['{"h": 3}', "n_timed_out"] == 1
    assert g.loc['{"h": 2}', "path_size"] == 1 and list(g["order"]) == [0, 1, 2]


def test_what_stopped_a_cell_timeouts_before_failures_and_skips_alone_mean_a_timeout():
    both = [rec({"h": 1}, 0, None, "timed-out"), rec({"h": 1}, 1, None, "failed"), rec({"h": 1}, 2, 0.7)]
    assert select(both).iloc[0]["status"] == "timed-out"
    skipped = [rec({"h": 1}, f, None, "skipped-after-timeout") for f in range(2)]
    assert select(skipped).iloc[0]["status"] == "timed-out"
    # Per-fold rules, where no fold could choose a point: the same words, inner fits counted.
    for inner_status, expected in (("timed-out", "timed-out"), ("skipped-after-timeout", "timed-out"),
                                   ("failed", "failed")):
        records = [rec({"h": 1}, 0, None, inner_status, inner=0), rec({"h": 1}, 0, 0.6)]
        # A second cell (model N) that is fine comes after the stopped one: both are reported.
        records += [dict(r, model="N") for r in [rec({"h": 1}, 0, 0.5, inner=0), rec({"h": 1}, 0, 0.6)]]
        rows = select(records, "nested").set_index("model")
        assert rows.loc["M", "status"] == expected and rows.loc["M", "dataset"] == "D"
        assert pd.isna(rows.loc["M", "point"]) and rows.loc["N", "status"] == "ok"


def test_an_unfinished_cell_stopped_by_a_failure_or_a_skip_is_judged_by_its_records():
    for status in ("failed", "skipped-after-timeout"):
        records = [rec({"h": 1}, 0, 0.7), rec({"h": 1}, 1, None, status), rec({"h": 2}, 0, 0.6), rec({"h": 2}, 1, 0.6)]
        row = select(records, "best-per-fold", unfinished={("D", "M")}).iloc[0]
        assert row["status"] == "ok" and row["points"] == ['{"h": 1}', '{"h": 2}'], status


def test_an_interrupted_cell_is_reported_beside_a_finished_one():
    # Best of grid: M lacks h=2 on fold 1 (interrupted), N is whole; both rows, each with its own name.
    records = [rec({"h": 1}, f, 0.7) for f in range(2)] + [rec({"h": 2}, 0, 0.9)]
    records += [dict(r, model="N") for r in _three_folds()]
    rows = select(records).set_index("model")
    assert rows.loc["M", "status"] == "incomplete" and rows.loc["M", "dataset"] == "D"
    assert rows.loc["N", "status"] == "ok" and rows.loc["N", "point"] == '{"h": 2}'


def test_best_per_fold_ranks_by_the_metric_it_is_given():
    # By GMean h=2, h=1, h=2 (0.9 > 0.8, 0.6 > 0.5, 0.85 > 0.7); BAC favours h=1 on every fold (0.8 > 0.3).
    records = [dict(r, metrics={**r["metrics"], "bac": 0.8 if r["params"]["h"] == 1 else 0.3})
               for r in _three_folds()]
    assert select(records, "best-per-fold").iloc[0]["points"] == ['{"h": 2}', '{"h": 1}', '{"h": 2}']
    assert select(records, "best-per-fold", metric="bac").iloc[0]["points"] == ['{"h": 1}'] * 3


def test_selection_by_a_criterion_ignores_inner_records_spreads_by_ddof_and_marks_unfinished():
    import numpy as np

    def crit(r, value):
        return dict(r, criteria={"dcs_gaussian": value})

    # Per fold the largest training-part D_CS (greater is better): h=2 on every fold; an inner record of h=1
    # with a larger D_CS is not a candidate (the criterion needs no validation data).
    records = [crit(r, 1.0 if r["params"]["h"] == 1 else 2.0) for r in _three_folds()]
    records += [crit(rec({"h": 1}, 0, 0.99, inner=0), 9.0)]
    row = select(records, "dcs-gaussian", ddof=0).iloc[0]
    assert row["points"] == ['{"h": 2}'] * 3
    assert row["gmean_std"] == pytest.approx(np.std([0.9, 0.5, 0.85]), abs=1e-12)
    assert select(records, "dcs_gaussian", unfinished={("D", "M")}).iloc[0]["status"] == "incomplete"
    with pytest.raises(ValueError, match="selection must be best-of-grid, nested, best-per-fold or a criterion, "
                                         "got 'best'"):
        select(records, "best")


def test_records_without_an_inner_field_are_outer_records():
    records = [{k: v for k, v in r.items() if k != "inner"} for r in _three_folds()]
    row = select(records).iloc[0]
    assert row["point"] == '{"h": 2}' and row["gmean_mean"] == pytest.approx(0.75)


def test_a_stopped_cell_with_failures_and_timeouts_reads_timed_out_and_has_no_point():
    records = [rec({"h": 1}, 0, None, "failed", inner=0), rec({"h": 1}, 0, None, "timed-out", inner=1),
               rec({"h": 1}, 0, 0.6)]
    row = select(records, "nested").iloc[0]
    assert row["status"] == "timed-out" and "point" in row and row["point"] is None


def test_records_without_timings_still_select():
    records = [{k: v for k, v in r.items() if k not in ("fit_seconds", "path_size")} for r in _three_folds()]
    row = select(records).iloc[0]
    assert row["point"] == '{"h": 2}' and pd.isna(row["fit_seconds_mean"])
    assert pd.isna(select(records, "best-per-fold").iloc[0]["fit_seconds_mean"])
