"""The papers' claims as predicates over tables: each test against numbers worked out by hand."""

import pandas as pd
from typer.testing import CliRunner

from eemrepro.reports import Claim, TableSpec
from eemrepro.reports._claims import _evaluate

# A metric table of AUC in percent: printed at one decimal, higher is better.
SPEC = TableSpec(id="t", stem="t", title="t", metric="auc")
# Four data sets, three methods (AUC %); A vs B: d1 A, d2 B, d3 draw at one decimal (80.04 ~ 80.0), d4 A.
TABLE = pd.DataFrame(
    [(d, m, v) for d, row in {"d1": (90.0, 85.0, 70.0), "d2": (60.0, 65.0, 50.0), "d3": (80.04, 80.0, 80.0),
                              "d4": (75.0, 70.0, 75.0)}.items()
     for m, v in zip(("A", "B", "C"), row, strict=True)],
    columns=["dataset", "method", "auc"]).assign(status="ok")


def verdict(test, **kw):
    return _evaluate(Claim(id="x", table="t", wording="w", source="s", test=test, **kw), TABLE, SPEC)


def test_wins_counts_draws_at_one_decimal():
    # A - B: +5, -5, +0.04 (a draw at one decimal), +5 -> 2 wins, 1 draw, 1 loss.
    assert verdict("wins", method="A", other="B") == ("confirmed", "2 wins, 1 draws, 1 losses on 4 data sets")
    assert verdict("wins", method="B", other="A")[0] == "not confirmed"


def test_best_and_above_counts_and_mean_difference():
    # Best (ties at one decimal included): A on d1, d3 (80.0 = 80.0 = 80.0), d4 (75 = 75) -> 3 of 4.
    assert verdict("best-count", method="A", value=3) == ("confirmed", "best (ties included) on 3 of 4 data sets "
                                                                       "(claim: >= 3)")
    assert verdict("above-count", method="A", other="C", value=3)[1] == "above on 2 of 4 data sets (claim: >= 3)"
    # mean(A - C) = (20 + 10 + 0.04 + 0) / 4 = 7.51.
    assert verdict("mean-difference", method="A", other="C", value=5) == (
        "confirmed", "mean difference +7.5 over 4 data sets (claim: >= +5)")


def test_never_worst_and_best_rank():
    # C is worst on d1 and d2; on d3 every method is 80.0 at one decimal (no worst); on d4 B is.
    assert verdict("never-worst", method="A")[0] == "confirmed"
    assert verdict("never-worst", method="C")[1] == "worst (ties included) on 2 of 4: d1, d2 (1 with every method " \
                                                    "tied left out)"
    # Ranks (1 = best, ties averaged): A 1, 2, 1, 1.5 -> 1.375; B 2, 1, 2.5, 3 -> 2.125; C 3, 3, 2.5, 1.5 -> 2.5.
    ok, numbers = verdict("best-rank", method="A")
    assert ok == "confirmed" and numbers.startswith("average rank 1.38, position 1 of 3")


def test_close_holds_on_every_data_set_or_not_at_all():
    # |A - B| = 5, 5, 0.04, 5: within 5 everywhere, not within 4.
    assert verdict("close", method="A", other="B", value=5)[0] == "confirmed"
    ok, numbers = verdict("close", method="A", other="B", value=4)
    assert ok == "not confirmed" and numbers.startswith("d1: 90 vs 85, d2: 60 vs 65") and "(claim: within 4)" in numbers


def test_a_missing_method_is_not_measured():
    assert verdict("wins", method="A", other="Z")[0] == "not measured"


def test_each_table_is_judged_on_its_own_values_not_a_pivot_kept_from_another():
    # The pivot of a table is kept while the table lives: a new table (often at the address of one just freed)
    # is pivoted afresh. B moved 10 points up on every data set wins on all four against A; 10 down, loses all
    # four (a pivot kept from the table before would give the other verdict).
    assert verdict("wins", method="A", other="B")[1] == "2 wins, 1 draws, 1 losses on 4 data sets"
    claim = Claim(id="x", table="t", wording="w", source="s", test="wins", method="B", other="A")
    expected = {10.0: ("confirmed", "4 wins, 0 draws, 0 losses on 4 data sets"),
                -10.0: ("not confirmed", "0 wins, 0 draws, 4 losses on 4 data sets")}
    for shift in (10.0, -10.0) * 3:
        moved = TABLE.assign(auc=TABLE["auc"] + shift * (TABLE["method"] == "B"))
        assert _evaluate(claim, moved, SPEC) == expected[shift]
        del moved


def test_check_fails_when_a_pinned_claim_verdict_changes(tmp_path):
    from pathlib import Path

    from eemrepro.cli import app

    baseline = Path(__file__).resolve().parents[2] / ".ci" / "quick-baseline"
    runner = CliRunner()
    pins = tmp_path / "claims.yaml"
    res = runner.invoke(app, ["check", str(baseline), "--pin-claims", str(pins)])
    assert res.exit_code == 0, res.output
    # The baseline's heart (its one UCI set): EEMrbf 83.3 against WELMrbf 75.9, one win; one data set is too
    # few to confirm a claim over the 9 UCI sets.
    assert "eem_rbf_beats_welm: too few data sets" in pins.read_text()
    assert ("TOO FEW DATA SETS eem_rbf_beats_welm: EEM beats WELM with rbf units (UCI sets) -- 1 wins, 0 draws, "
            "0 losses on 1 data sets; judged on 1 data set(s), at least 3 needed") in res.output
    assert runner.invoke(app, ["check", str(baseline), "--claims", str(pins)]).exit_code == 0
    pins.write_text(pins.read_text().replace("eem_rbf_beats_welm: too few data sets", "eem_rbf_beats_welm: confirmed"))
    res = runner.invoke(app, ["check", str(baseline), "--claims", str(pins)])
    assert res.exit_code == 1 and "CHANGED claim eem_rbf_beats_welm: confirmed in" in res.output


def test_a_claim_over_too_few_data_sets_is_not_confirmed_but_says_so():
    from eemrepro.reports._claims import judge

    def on(present, test, **kw):  # the claim judged on a table holding only the data sets ``present``
        claim = Claim(id="x", table="t", wording="w", source="s", test=test, **kw)
        return judge(claim, TABLE[TABLE["dataset"].isin(present)], SPEC)[0]

    # A wins on d1 and d4: "confirmed" on those two alone, but two data sets do not carry a claim over a table.
    assert on(["d1", "d4"], "wins", method="A", other="B") == "too few data sets"
    assert on(["d1", "d2", "d4"], "wins", method="A", other="B") == "confirmed"  # 3 sets: judged (2 wins, 1 loss)
    assert on(["d1", "d2"], "never-worst", method="A") == "too few data sets"
    # No difference by Wilcoxon on 4 pairs says nothing (its smallest p is 2 / 2^4 = 0.125): too few below 6.
    assert on(["d1", "d2", "d3", "d4"], "comparable", method="A", other="B", value=0.05) == "too few data sets"
    # A claim about fewer named data sets than that is judged on each of them: one named set is enough.
    assert on(["d1"], "close", method="A", other="B", value=6, datasets=("d1",)) == "confirmed"
    assert on(["d1"], "close", method="A", other="B", value=6, datasets=("d1", "d2")) == "too few data sets"
    assert on(["d1", "d2", "d4"], "wins", method="A", other="B", datasets=("d1", "d2", "d3", "d4")) == "confirmed"
