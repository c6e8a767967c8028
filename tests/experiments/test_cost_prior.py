"""The fresh-store cost prior (issue 67, finding 4): learned from the committed stores' timed fits, it knows
what a grid costs, says how far off it may be, and is re-derived from the stores byte for byte."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from eemrepro.experiments import load_config
from eemrepro.experiments._cost_prior import PRIOR_FILE, CostPrior, learn_prior, load_prior, prior_text
from eemrepro.experiments._kinds import get_kind
from eemrepro.experiments._plan import estimate
from eemrepro.experiments._units import Unit, make_points
from eemrepro.store import ResultStore
from tests.helpers import run_config

ROOT = Path(__file__).resolve().parents[2]

SVM_GRID = """name: tiny-svm
datasets: [heart]
models:
  SVM: {estimator: SVM, grid: {C: [1.0, 1.0e+4, 1.0e+8], gamma: [0.01]}}
protocol: {folds: 3, repeats: 1, seed: 0}
"""


def _config(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return load_config(path)


def _unit(point, dataset="heart", model="SVM"):
    return Unit(dataset=dataset, model=model, points=make_points([point]), repeat=0, fold=0, inner=None,
                fit_path="C")


def test_a_fresh_svm_estimate_grows_with_C_as_the_stores_fits_did(tmp_path):
    """On a fresh store, one SVM fit at gamma = 0.01 is estimated dearer at C = 1e4 than at C = 1, and dearer
    again at C = 1e8, by about the ratio results/uci's own fits at those points had (the prior's data: LIBSVM's
    iterations grow with C until the margin is hard). The operation count it replaced (20 n^2 d) did not
    depend on C at all."""
    cfg = _config(tmp_path, SVM_GRID)
    kind = get_kind(cfg.kind)
    cost = [kind.seconds(cfg, _unit({"C": c, "gamma": 0.01})) - load_prior().unit_seconds for c in (1.0, 1e4, 1e8)]
    assert cost[0] < cost[1] < cost[2]
    uci = ResultStore(ROOT / "results" / "uci").frame(["estimator", "param_C", "param_gamma", "fit_seconds"])
    svm = uci[(uci["estimator"] == "SVM") & np.isclose(uci["param_gamma"].astype(float), 0.01)]
    mean = svm.groupby(svm["param_C"].astype(float))["fit_seconds"].mean()
    stored = mean.loc[1e8] / mean.loc[1.0]
    assert stored > 100  # the fact itself: hundreds of times dearer in the stores
    # results/uci is one of the stores the prior pools (with unbalanced, esmm...): the same order of magnitude.
    assert cost[2] / cost[0] == pytest.approx(stored, rel=0.9)


def test_the_estimate_says_its_range_only_on_a_fresh_store(tmp_path):
    """A fresh store's dry run says how far off it may be and why; once the store holds the cells' timings,
    the estimate is the store's own and says no range (the wording a user reads, through the CLI)."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("""name: tiny
datasets: [heart]
models:
  WELM: {estimator: WELM, activation: sig, grid: {n_hidden: [10, 20]}}
protocol: {folds: 2, repeats: 1, seed: 0}
""")
    out = tmp_path / "out"
    fresh = run_config(cfg, out, "--dry-run").output
    assert "likely" in fresh and "no timings of its own yet" in fresh and "committed stores" in fresh, fresh
    run_config(cfg, out)
    resumed = run_config(cfg, out, "--dry-run", "--repeats", "2").output
    assert "2 to run; rough estimate" in resumed and "likely" not in resumed and "prior" not in resumed, resumed


def test_the_range_is_the_families_spread_and_names_a_model_without_a_prior(tmp_path):
    """``estimate``'s range is each prior-made unit's cost times its family's low and high factors (the
    committed file's), and a model the prior has not learned is named as guessed from operation counts."""
    cfg = _config(tmp_path, SVM_GRID.replace(
        "protocol:", "  Mine: {estimator: \"sklearn.linear_model:LogisticRegression\", grid: {C: [1.0]}}\nprotocol:"))
    kind = get_kind(cfg.kind)
    units = kind.units(cfg)
    got = estimate(cfg, units, 2)
    costs = np.array([kind.seconds(cfg, u) for u in units])
    svm = np.array([u.model == "SVM" for u in units])
    low, high = load_prior().spread("SVM")
    assert got.seconds == pytest.approx(costs.sum() / 2)
    assert got.low == pytest.approx((costs[svm].sum() * low + costs[~svm].sum()) / 2)
    assert got.high == pytest.approx((costs[svm].sum() * high + costs[~svm].sum()) / 2)
    assert got.unknown == ("Mine",) and "none for Mine, guessed from operation counts" in got.words()


#: (data set, training rows, features, its own factor): three at the law, one six times slower and one six
#: times faster than it at the same size (what n and d cannot explain: ionosphere against australian).
SETS = (("a", 100, 4, 1.0), ("b", 400, 4, 1.0), ("c", 1600, 16, 1.0), ("slow", 400, 16, 6.0),
        ("fast", 400, 16, 1 / 6))


def _synthetic_frame(seed=0):
    """Timed records of a made-up family whose seconds are 1e-6 n^1.5 d^0.5 C^0.25 times its data set's own
    factor (``SETS``), with 1% noise, as the stores hold them."""
    rng = np.random.default_rng(seed)
    rows = []
    for dataset, n, d, factor in SETS:
        for c in (0.1, 1.0, 10.0, 100.0):
            for _ in range(5):
                seconds = 1e-6 * n ** 1.5 * d ** 0.5 * c ** 0.25 * factor * np.exp(rng.normal(0, 0.01))
                rows.append({"run_id": "r1", "dataset": dataset, "estimator": "Made", "point": json.dumps({"C": c}),
                             "fit_seconds": seconds, "path_size": 1.0, "predict_seconds": 0.0,
                             "standalone_fit_seconds": np.nan, "n_train": n, "status": "ok",
                             "kind": "grid-search"})
    return pd.DataFrame(rows), {name: d for name, _, d, _ in SETS}


def test_learning_recovers_a_known_cost_law_and_gives_the_same_bytes_twice():
    """From records made by a known law, the prior learns its exponents, prices a fit at the data sets' mean
    factor (not their logs' mean), brackets the data sets' own factors with its range, and learning twice
    writes the same file text."""
    frame, features = _synthetic_frame()
    runs = [{"run_id": "r1", "started_at": 0.0, "finished_at": float(frame["fit_seconds"].sum()) + 10.0,
             "jobs": 1, "units_done": 100}]
    prior = learn_prior([frame], runs, features)
    assert prior_text(prior) == prior_text(learn_prior([frame.copy()], runs, features))
    family = prior["families"]["Made"]
    assert (family["log_n"], family["log_d"]) == pytest.approx((1.5, 0.5), abs=0.01)
    assert [c for c, _ in family["cells"]] == [{"C": -1.0}, {"C": 0.0}, {"C": 1.0}, {"C": 2.0}]
    # Cells one decade of C apart differ by 10^0.25 (the law's C exponent).
    steps = np.diff([a for _, a in family["cells"]])
    assert steps == pytest.approx(np.full(3, 0.25 * np.log(10)), abs=0.01)
    # The unit's own cost: (wall - summed record seconds) / units = 10 s / 100.
    assert prior["unit_seconds"] == pytest.approx(0.1, rel=1e-3)
    # A fit is priced at the mean factor (1 + 1 + 1 + 6 + 1/6) / 5 = 1.83 times the law; the mean of the
    # logs would give 1 (the slow and the fast set cancel).
    law = 1e-6 * 400 ** 1.5 * 16 ** 0.5 * 10 ** 0.25
    assert CostPrior(prior).record_seconds("Made", 400, 16, {"C": 10.0}) / law == pytest.approx(
        (3 + 6 + 1 / 6) / 5, rel=0.02)
    # Against that, the sets at the law are 0.55 of it, the slow one 3.3 and the fast one 0.09: the 10th and
    # 90th percentiles (numpy's linear) lie between those.
    assert 0.09 < family["low"] < 0.55 < 3.3 > family["high"] > 1.5


def test_a_grid_point_the_stores_never_timed_takes_the_nearest_cell():
    prior = CostPrior({"unit_seconds": 0.1, "families": {"F": {
        "cells": [[{"C": 0.0}, np.log(1.0)], [{"C": 4.0}, np.log(100.0)]], "log_n": 0.0, "log_d": 0.0,
        "low": 0.5, "high": 2.0}}})
    assert prior.record_seconds("F", 100, 5, {"C": 10.0}) == pytest.approx(1.0)
    assert prior.record_seconds("F", 100, 5, {"C": 1e9}) == pytest.approx(100.0)
    assert prior.record_seconds("Other", 100, 5, {"C": 1.0}) is None


@pytest.mark.slow
def test_the_committed_prior_is_what_the_script_derives_from_the_committed_stores(tmp_path):
    """benchmarks/derive_cost_prior.py, run on results/, writes the committed cost_prior.json byte for
    byte (reads about 2.3 million records)."""
    import runpy

    out = tmp_path / "prior.json"
    script = runpy.run_path(str(ROOT / "benchmarks" / "derive_cost_prior.py"))
    script["main"]([str(ROOT / "results" / s) for s in script["STORES"]] + ["--out", str(out)])
    assert out.read_text(encoding="utf-8") == PRIOR_FILE.read_text(encoding="utf-8")


def test_a_fresh_estimate_with_no_learned_prior_says_so_without_a_range(tmp_path):
    """A config of models the prior has not learned (a user's estimator) gives no made-up range: the
    estimate says it is guessed from operation counts."""
    cfg = _config(tmp_path, SVM_GRID.replace("SVM: {estimator: SVM, grid: {C: [1.0, 1.0e+4, 1.0e+8], gamma: [0.01]}}",
                                             "Mine: {estimator: \"sklearn.linear_model:LogisticRegression\", "
                                             "grid: {C: [1.0]}}"))
    kind = get_kind(cfg.kind)
    units = kind.units(cfg)
    got = estimate(cfg, units, 1)
    assert (got.low, got.high, got.guessed, got.unknown) == (None, None, True, ("Mine",))
    # On one worker the estimate is the units' summed cost (not halved as on two).
    assert got.seconds == pytest.approx(sum(kind.seconds(cfg, u) for u in units))
    assert got.words().endswith("(this store has no timings of its own yet: guessed from operation counts, it may "
                                "be several times off)")


def test_the_estimate_s_words_say_its_range_its_share_without_timings_and_the_models_it_guessed():
    # The dry run's sentence from the estimate's own fields (minutes: one decimal from 0.95 min, two significant
    # digits below it).
    from eemrepro.experiments._plan import Estimate

    assert Estimate(seconds=90.0).words() == "rough estimate 1.5 min"  # the store's own timings: no range
    # 1 min and up: one decimal ("1.0", not "1"); 0.095 to 0.95 min: two significant digits ("0.25", not "0.2");
    # below: one decimal again (3 s = 0.05 min reads "0.1", not "0.05").
    assert [Estimate(seconds=s).words().removeprefix("rough estimate ") for s in (60.0, 15.0, 3.0)] == \
        ["1.0 min", "0.25 min", "0.1 min"]
    prior = "so it is a prior learned from the committed stores' fits"
    assert Estimate(seconds=90.0, low=30.0, high=300.0, share=1.0, guessed=True).words() == \
        f"rough estimate 1.5 min (likely 0.5 to 5.0 min: this store has no timings of its own yet, {prior})"
    # Part of it from the store's timings: the share from the prior is said, to the percent (99.9 % rounds up).
    for share, said in ((0.4, "40%"), (0.999, "100%")):
        assert Estimate(seconds=90.0, low=30.0, high=300.0, share=share, guessed=True).words() == \
            f"rough estimate 1.5 min (likely 0.5 to 5.0 min: {said} of it has no timings of its own yet, {prior})"
    assert Estimate(seconds=90.0, low=30.0, high=300.0, share=1.0, unknown=("Mine", "Yours"), guessed=True).words() \
        == f"rough estimate 1.5 min (likely 0.5 to 5.0 min: this store has no timings of its own yet, {prior}; " \
           "none for Mine, Yours, guessed from operation counts)"
    assert Estimate(seconds=600.0, share=1.0, guessed=True).words() == "rough estimate 10.0 min (this store has no " \
        "timings of its own yet: guessed from operation counts, it may be several times off)"
