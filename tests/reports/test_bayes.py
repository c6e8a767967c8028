"""The Bayesian comparisons beside the frequentist ones (``eemrepro/_stats.py``): the correlated t-test on one data
set's folds and the signed-rank test across data sets, cross-checked with baycomp (Benavoli et al.'s own
package), in closed-form cases, in the metric's direction, seeded, and shown with their rope in every output
(the comparison's Markdown, CSV and page)."""

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from eemrepro.experiments._config import split_test_share
from tests.helpers import bayes_against_baycomp

from eemrepro._stats import (
    SIGNED_RANK_SAMPLES,
    correlated_pairs,
    correlated_ttest,
    pair_seed,
    signed_rank,
)

baycomp = pytest.importorskip("baycomp")


def _folds(seed, n=50, shift=0.01, spread=0.02):
    """Two models' scores on n test folds (10-fold CV, 5 repeats): b is a plus ``shift`` plus noise."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0.8, 0.05, n)
    return a, a + rng.normal(shift, spread, n)


# -- the correlated t-test: baycomp's CorrelatedTTest, exactly (both are a Student t's cdf) --------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("rope", [0.0, 0.01, 0.05])
def test_correlated_ttest_is_baycomps(seed, rope):
    a, b = _folds(seed)
    mine = correlated_ttest(a, b, rope, test_share=1 / 10)
    # baycomp's (x, y): left is x better; runs=5 repeats of 10 folds gives its rho = 1/10 (1/(k-1) correction).
    theirs = baycomp.CorrelatedTTest.probs(a, b, rope=rope, runs=5)
    if rope == 0:
        theirs = (theirs[0], 0.0, theirs[1])
    np.testing.assert_allclose(mine.probabilities(), theirs, rtol=1e-12, atol=1e-14)


def test_correlated_ttest_closed_form():
    """The posterior by hand: t with n - 1 dof at the mean difference, scale sqrt((1/n + rho/(1-rho)) var)."""
    a, b = _folds(7, n=30)
    d = a - b
    scale = np.sqrt((1 / 30 + (1 / 3) / (2 / 3)) * d.var(ddof=1))  # 3-fold CV: rho = 1/3
    post = correlated_ttest(a, b, 0.01, test_share=1 / 3)
    assert post.better == pytest.approx(stats.t.sf(0.01, 29, d.mean(), scale), rel=1e-12)
    assert post.worse == pytest.approx(stats.t.cdf(-0.01, 29, d.mean(), scale), rel=1e-12)


def test_correlated_ttest_edges():
    """Every difference inside the rope: P(rope) near 1; a shift of many stds: P(better) near 1; one fold: none;
    every fold the same difference: the posterior is a point."""
    rng = np.random.default_rng(0)
    a = rng.normal(0.8, 0.05, 50)
    inside = correlated_ttest(a, a + rng.uniform(-0.001, 0.001, 50), rope=0.01, test_share=0.1)
    assert inside.rope > 0.999
    far = correlated_ttest(a + 0.2 + rng.normal(0, 0.01, 50), a, rope=0.01, test_share=0.1)  # 20 stds of the noise
    assert far.better > 0.999 and far.worse < 1e-6
    assert correlated_ttest([0.5], [0.4], 0.01, 0.1) is None
    assert correlated_ttest([0.5, 0.6], [0.4, 0.5], 0.01, 0.1).probabilities() == (1.0, 0.0, 0.0)
    assert correlated_ttest([0.5, 0.6], [0.495, 0.595], 0.01, 0.1).probabilities() == (0.0, 1.0, 0.0)


# -- the signed-rank test: baycomp's SignedRankTest, within its Monte Carlo error -------------------------------


def _datasets(seed, n=15, shift=0.01):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.6, 0.95, n)
    return a, a + rng.normal(shift, 0.02, n)


#: Both sides are shares of ``SIGNED_RANK_SAMPLES`` independent draws: each has a standard error of at most
#: sqrt(0.25 / N) (0.0022 at 50,000 draws), their difference sqrt(2) times that; 5 of those is the tolerance.
MC_TOLERANCE = 5 * np.sqrt(2 * 0.25 / SIGNED_RANK_SAMPLES)


@pytest.mark.parametrize("seed, rope, shift", [(0, 0.01, 0.01), (1, 0.01, 0.0), (2, 0.005, 0.02), (3, 0.0, 0.01),
                                               (4, 0.02, -0.01)])
def test_signed_rank_is_baycomps(seed, rope, shift):
    a, b = _datasets(seed, shift=shift)
    mine = signed_rank(a, b, rope, seed=seed).probabilities()
    theirs = baycomp.SignedRankTest.probs(a, b, rope=rope, random_state=seed)
    if rope == 0:
        theirs = (theirs[0], 0.0, theirs[1])
    # baycomp's left is x better: ours is a better (a's difference over b above the rope).
    np.testing.assert_allclose(mine, theirs, atol=MC_TOLERANCE)
    assert MC_TOLERANCE < 0.02  # the check tells 0.02 apart: not a tolerance that passes anything


def test_signed_rank_edges():
    """Every data set's difference inside the rope: P(rope) 1; far apart on every data set: P(better) near 1."""
    a, _ = _datasets(5, n=10)
    assert signed_rank(a, a + np.linspace(-0.004, 0.004, 10), rope=0.01).rope == 1.0
    far = signed_rank(a + 0.1, a, rope=0.01)
    assert far.better > 0.99 and far.worse == 0.0
    assert signed_rank([], [], 0.01) is None


def test_signed_rank_rebuilds_byte_for_byte():
    """Seeded: the same inputs give the same draws, bit for bit; another seed other draws."""
    a, b = _datasets(6)
    first, again = signed_rank(a, b, 0.01, seed=3), signed_rank(a, b, 0.01, seed=3)
    assert first.samples.tobytes() == again.samples.tobytes()
    assert first.probabilities() == again.probabilities()
    assert signed_rank(a, b, 0.01, seed=4).samples.tobytes() != first.samples.tobytes()


# -- the metric's direction: for a lower-is-better metric the sides swap ----------------------------------------


def test_lower_is_better_swaps_the_sides():
    """On an error (lower is better), a's lower values make a the better one: both tests give P(a better) where
    the same numbers read as a score give P(b better)."""
    a, b = _folds(8, shift=0.03, spread=0.01)  # b higher by 3 points on every fold
    as_score = correlated_ttest(a, b, 0.01, 0.1)
    as_error = correlated_ttest(a, b, 0.01, 0.1, greater_is_better=False)
    assert as_score.worse > 0.99 and as_error.better > 0.99
    assert as_error.probabilities() == pytest.approx(as_score.probabilities()[::-1], abs=1e-15)
    x, y = _datasets(9, shift=0.03)
    score, error = signed_rank(x, y, 0.01), signed_rank(x, y, 0.01, greater_is_better=False)
    assert score.worse > 0.9 and error.better > 0.9
    # baycomp knows no direction: an error is read by negating both (higher -error is better).
    np.testing.assert_allclose(error.probabilities(), baycomp.SignedRankTest.probs(-x, -y, rope=0.01),
                               atol=MC_TOLERANCE)


def test_pairs_by_dataset_pair_the_same_folds():
    """The correlated t-test of a pair pairs the folds both have (by repeat and fold), its correlation 1/k for k
    folds a repeat; a train-test split (one test part a repeat) is left out."""
    a, b = _folds(10, n=20)
    keys = [(r, f) for r in range(2) for f in range(10)]
    folds = {("d", "A"): tuple((r, f, v) for (r, f), v in zip(keys, a, strict=True)),
             # B's folds in another order, with a repeat A has not: paired by key, the extra one left out.
             ("d", "B"): tuple((r, f, v) for (r, f), v in reversed(list(zip(keys, b, strict=True))))
             + ((2, 0, 0.5),),
             ("split", "A"): tuple((r, 0, v) for r, v in enumerate(a)),
             ("split", "B"): tuple((r, 0, v) for r, v in enumerate(b))}
    out = correlated_pairs(folds, [("A", "B")], 0.01)
    assert list(out["dataset"]) == ["d"] and out["folds"].iloc[0] == 20
    expected = correlated_ttest(a, b, 0.01, test_share=1 / 10).probabilities()
    assert tuple(out[["P(model better)", "P(rope)", "P(baseline better)"]].iloc[0]) == pytest.approx(expected)
    # A train-test split's share comes from its config: wine (178 points) with 144 training points tests 34/178.
    share = split_test_share("wine", {"wine": 144})
    assert share == pytest.approx(34 / 178)
    out = correlated_pairs(folds, [("A", "B")], 0.01, shares={"split": share}).set_index("dataset")
    expected = correlated_ttest(a, b, 0.01, test_share=34 / 178).probabilities()
    assert tuple(out.loc["split", ["P(model better)", "P(rope)", "P(baseline better)"]]) == pytest.approx(expected)
    assert out.loc["split", "folds"] == 20


# -- the outputs: the folds they read, the rope they state, the same bytes on a rebuild ------------------------

BASELINE = Path(__file__).resolve().parents[2] / ".ci" / "quick-baseline"


def test_a_cells_folds_are_its_records_at_the_selected_point():
    """What the correlated t-test pairs: each benchmark cell's test folds at its selected point, read here from the
    records through ``read_results`` and pandas (not the tables' code)."""
    from eemrepro import read_results
    from eemrepro.reports._benchmark import benchmark_tables, benchmarks
    from eemrepro.reports._tables import rows_by_datasets

    (bench,) = benchmarks([BASELINE])
    _, made, _, _ = rows_by_datasets([BASELINE], [bench.spec], ("best-of-grid",))
    ((_, df, _),) = benchmark_tables([bench], made, {}, "best-of-grid")
    records = read_results([BASELINE])
    records = records[records["inner"].isna() & (records["status"] == "ok")]
    checked = 0
    for r in df.to_dict("records"):
        at = records[(records["dataset"] == r["dataset"]) & (records["model"] == r["method"])
                     & (records["point"] == r["point"])].sort_values(["repeat", "fold"])
        expected = [(int(a), int(b), 100 * v) for a, b, v in zip(at["repeat"], at["fold"], at["gmean"], strict=True)]
        assert [(a, b) for a, b, _ in r["fold_values"]] == [(a, b) for a, b, _ in expected]
        np.testing.assert_allclose([v for *_, v in r["fold_values"]], [v for *_, v in expected], rtol=1e-12)
        assert np.mean([v for *_, v in r["fold_values"]]) == pytest.approx(r["gmean"], rel=1e-12)
        checked += 1
    assert checked == len(df) >= 10


def _tables(store, out):
    from eemrepro.reports import build_tables

    build_tables([store], out, formats=("md", "csv"))
    return (out / "benchmark_gmean_comparison.md").read_text(), pd.read_csv(out / "benchmark_gmean_comparison.csv")


def test_the_tables_state_the_rope_and_rebuild_byte_for_byte(tmp_path):
    """Every output that shows the probabilities states the rope (the Markdown's two tables and its note, the
    CSV's column); a second build writes the same bytes; the benchmark's own CSV has no fold column."""
    md, csv = _tables(BASELINE, tmp_path / "a")
    rope = "rope ±1 GMean point (of 100)"
    assert md.count(rope) == 2 and "within the rope, ±1 GMean point (of 100)" in md
    assert list(csv["rope"].unique()) == [1.0]
    assert {"P(model better)", "P(rope)", "P(baseline better)"} <= set(csv.columns)
    np.testing.assert_allclose(csv[["P(model better)", "P(rope)", "P(baseline better)"]].sum(axis=1), 1.0)
    _tables(BASELINE, tmp_path / "b")
    for name in ("benchmark_gmean_comparison.md", "benchmark_gmean_comparison.csv", "benchmark_gmean.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert "fold_values" not in (tmp_path / "a" / "benchmark_gmean.csv").read_text()


def test_the_configs_rope_is_the_one_used_and_stated(tmp_path):
    """``tables: {rope: 0.05}`` in the store's config: the outputs state ±5 points, and the probabilities are the
    signed-rank test's under a rope of 5 on the table's means (computed here from the CSV's cells)."""
    import yaml

    store = tmp_path / "quick"
    shutil.copytree(BASELINE, store)
    config = yaml.safe_load((store / "config.yaml").read_text())
    (store / "config.yaml").write_text(yaml.safe_dump({**config, "tables": {"rope": 0.05}}, sort_keys=False))
    md, csv = _tables(store, tmp_path / "out")
    assert md.count("rope ±5 GMean points (of 100)") == 2 and list(csv["rope"].unique()) == [5.0]
    cells = pd.read_csv(tmp_path / "out" / "benchmark_gmean.csv", comment="#")
    wide = cells.pivot_table(index="dataset", columns="method", values="gmean")
    row = csv.iloc[0]
    both = wide[[row["model"], row["baseline"]]].dropna()
    # The CSV's means are printed at 6 significant digits: the same side of the rope's edges for these cells.
    expected = signed_rank(both[row["model"]], both[row["baseline"]], 5.0, seed=pair_seed(row["model"],
                                                                                          row["baseline"]))
    assert tuple(row[["P(model better)", "P(rope)", "P(baseline better)"]]) == pytest.approx(
        expected.probabilities(), abs=1e-12)
    assert _tables(BASELINE, tmp_path / "default")[1]["P(rope)"].tolist() != csv["P(rope)"].tolist()


def test_the_page_shows_the_probabilities_the_rope_and_the_posterior(tmp_path):
    """benchmark.html: the pairs with their three probabilities and the rope, each data set's correlated t-tests,
    and the posterior simplexes as an inline SVG; a second report writes the same page."""
    from eemrepro.reports import build_report

    build_report([BASELINE], tmp_path / "a", figures=False)
    page = (tmp_path / "a" / "benchmark.html").read_text()
    assert "P(model better)" in page and "P(baseline better)" in page
    assert page.count("rope ±1 GMean point (of 100)") >= 3  # the pairs, the data sets, the figure's caption
    figure = page.split('<figure class="posterior">', 1)[1].split("</figure>", 1)[0]
    assert "signed-rank test&#39;s posterior" in figure or "signed-rank test's posterior" in figure
    assert figure.count("<svg") == 1 and "WELMrbf" in figure
    build_report([BASELINE], tmp_path / "b", figures=False)
    assert (tmp_path / "b" / "benchmark.html").read_bytes() == (tmp_path / "a" / "benchmark.html").read_bytes()


def _spec_and_frame(models, n=8, seed=0):
    from eemrepro.reports import TableSpec

    rng = np.random.default_rng(seed)
    spec = TableSpec(id="toy", stem="toy", title="toy", published=None, metric="gmean", scale=100.0)
    rows = [{"dataset": f"d{i}", "method": m, "status": "ok", "gmean": 80 + rng.normal(0, 3) + 2 * (m == "Mine")}
            for i in range(n) for m in models]
    return spec, pd.DataFrame(rows)


def test_the_posterior_plot_draws_your_model_against_each_other():
    """With others to compare with: each of your models against each of them; a benchmark of your models alone:
    the first against each; one model: no plot. Its labels are the pairs' probabilities, and a rebuild draws the
    same bytes."""
    from eemrepro.reports._compare import compare_methods, plotted_pairs, posterior_diagram

    spec, df = _spec_and_frame(["A", "B", "Mine"])
    result = compare_methods(spec, df, new=["Mine"])
    assert plotted_pairs(result) == [("Mine", "A"), ("Mine", "B")]
    svg = posterior_diagram(result)
    for p in result["pairs"][["P(model better)", "P(rope)", "P(baseline better)"]].to_numpy().ravel():
        assert f"{p:.3f}" in svg
    assert posterior_diagram(compare_methods(spec, df, new=["Mine"])) == svg
    alone = compare_methods(spec, df, new=["A", "B", "Mine"])
    assert plotted_pairs(alone) == [("A", "B"), ("A", "Mine")]
    single = compare_methods(spec, df[df["method"] == "Mine"], new=["Mine"])
    assert single is None or posterior_diagram(single) is None


def test_a_stores_probabilities_are_baycomps(tmp_path):
    """The user's view: ``eemrepro tables`` on a store, its comparison's probabilities against baycomp's own tests
    on the same numbers (``tests.helpers.bayes_against_baycomp``: the journey test asks the same)."""
    _tables(BASELINE, tmp_path)
    pairs, by_dataset = bayes_against_baycomp(BASELINE, tmp_path)
    assert pairs == 10 and by_dataset == 20  # 5 models, each pair, on heart and balance


@pytest.mark.parametrize("tables, says", [
    ({"rope": 1}, "key 'tables.rope': a number at least 0 and below 1 in the metric's own units (0.01 is one point "
                  "of a percent metric), got 1"),
    ({"rope": "one"}, "key 'tables.rope': a number at least 0 and below 1"),
    ({"rope": -0.01}, "got -0.01"),
    ({"ropes": 0.01}, "key 'tables.ropes': unknown key; valid keys are ['rope']"),
    ([0.01], "key 'tables': a mapping with the key rope"),
])
def test_a_wrong_rope_is_refused_in_one_line(tmp_path, tables, says):
    """The rope a user writes on the 0-100 scale (1 for one point) is refused naming the key, the value and the
    units; the default is 0.01 and a valid one is kept."""
    import yaml

    from eemrepro.experiments import ConfigError, load_config

    path = tmp_path / "c.yaml"
    base = {"name": "x", "datasets": ["heart"], "models": {"L": {"estimator": "WELM"}}}
    path.write_text(yaml.safe_dump({**base, "tables": tables}))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert says in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)
    path.write_text(yaml.safe_dump(base))
    assert load_config(path).rope == 0.01
    path.write_text(yaml.safe_dump({**base, "tables": {"rope": 0.02}}))
    assert load_config(path).rope == 0.02
