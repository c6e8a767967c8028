"""``eemrepro audit``: a stored unit re-run with today's code and data, compared with its stored records.

The stores here are run from tiny configs on the bundled heart data set (no
network). A difference is made without touching code or data: the
``tests.helpers:Breakable`` classifier predicts the positive class for every
sample when ``$EEMREPRO_TEST_BREAK`` names its variant, so its gmean is 0 and
its balanced accuracy 0.5 (closed form: one class entirely wrong), under the
same record identity.
"""

import json
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app
from eemrepro.experiments._audit import FLOAT_NOISE, compare_records, sample_order

CONFIG = """\
name: audited
datasets: [heart]
models:
  NC: {estimator: 'tests.helpers:Breakable', grid: {variant: [0, 1]}}
  EEM: {estimator: EEM, grid: {n_hidden: [10, 20]}}
protocol: {folds: 3, repeats: 1, seed: 0}
"""


def _run(config_text, folder, name="c.yaml"):
    cfg = folder.parent / name
    cfg.write_text(config_text)
    result = CliRunner().invoke(app, ["run", str(cfg), "--out", str(folder), "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A store of the tiny config: heart, 3 folds; NC's units hold both variants (2 records), EEM's a path."""
    return _run(CONFIG, tmp_path_factory.mktemp("audit") / "store")


@pytest.fixture
def store(made, tmp_path):
    """A copy of the module's store, free to edit."""
    return shutil.copytree(made, tmp_path / "store")


def audit(*args):
    return CliRunner().invoke(app, ["audit", *map(str, args)])


def unit_lines(output):
    return [line for line in output.splitlines() if line.startswith("  ") and not line.startswith("    ")]


def snapshot(folder):
    return {p.relative_to(folder): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))
            if p.is_file()}


# -- the command as a user runs it --------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_store_audited_with_todays_code_is_equal_unit_by_unit_and_untouched(made):
    before = snapshot(made)
    result = audit(made, "--sample", "6", "--seed", "5", "--jobs", "2")  # every unit, on loky's two workers
    assert result.exit_code == 0, result.output
    lines = unit_lines(result.output)
    assert len(lines) == 6 and all(line.endswith("equal") for line in lines), result.output
    assert sorted(line.split()[1] for line in lines) == ["EEM"] * 3 + ["NC"] * 3
    assert f"{made}: 6 units audited (of 6 stored), 6 equal, 0 float noise, 0 differ, 0 other identity" \
        in result.output
    assert snapshot(made) == before  # read only: no lock file, no segment, no config rewritten


def test_the_scratch_folder_is_removed_unless_kept_and_holds_the_rederived_records(made, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert audit(made, "--sample", "2", "--seed", "4", "--jobs", "1").exit_code == 0
    assert not list(tmp_path.glob("eemrepro-audit-*"))
    result = audit(made, "--sample", "2", "--seed", "4", "--jobs", "1", "--keep")
    (kept,) = tmp_path.glob("eemrepro-audit-*")
    assert result.exit_code == 0 and f"  re-derived records kept in {kept}\n" in result.output
    again, stored = read_results(kept), read_results(made)
    keys = ["dataset", "model", "point", "repeat", "fold"]
    joined = again.merge(stored, on=keys, suffixes=("", "_stored"))
    assert len(joined) == len(again) == 4  # two units of two records each, every one a stored key
    assert (joined["gmean"] == joined["gmean_stored"]).all() and (joined["seed"] == joined["seed_stored"]).all()


def test_a_prediction_that_changed_differs_with_both_values_and_the_cell_it_changes(store, monkeypatch):
    stored = read_results(store).query("model == 'NC'")
    monkeypatch.setenv("EEMREPRO_TEST_BREAK", "all")
    result = audit(store, "--only-models", "NC", "--sample", "1", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    (line,) = unit_lines(result.output)
    fold = int(re.search(r"fold (\d)", line).group(1))
    # The gmean from g to 0: |a - b| / max(1, |a|, |b|) = g, the largest change of the fields (bac to 0.5, auc to 0.5).
    gmean = float(stored[(stored["fold"] == fold)]["gmean"].iloc[0])
    assert line == f'  heart NC repeat 0 fold {fold} (2 records): differs (largest relative difference ' \
                   f'{gmean:.1e}, in gmean)'
    mine = stored[stored["fold"] == fold]
    rows = [mine[mine["point"] == json.dumps({"variant": v})].iloc[0] for v in (0, 1)]
    assert rows[0]["gmean"] == rows[1]["gmean"]  # the two variants are one classifier unless broken
    # Broken, the classifier predicts one class only: gmean 0 and balanced accuracy 0.5 (closed form); the same
    # change in both records is one line.
    assert f'{{"variant": 0}} fold {fold}: gmean {float(rows[0]["gmean"])!r} stored, 0.0 now (and 1 more record)' \
        in result.output
    assert f'{{"variant": 0}} fold {fold}: bac {float(rows[0]["bac"])!r} stored, 0.5 now (and 1 more record)' \
        in result.output
    # The cell as the run table prints it: mean±std (ddof 1) x 100 of the test folds' gmean, at variant 0 (the
    # two variants tie, before and after: the smaller parameter wins); after, the audited fold's gmean is 0.
    values = stored[stored["point"] == '{"variant": 0}'].sort_values("fold")["gmean"].to_numpy()
    now = np.where(np.arange(3) == fold, 0.0, values)
    old_text = f"{100 * values.mean():.1f}±{100 * values.std(ddof=1):.1f}"
    new_text = f"{100 * now.mean():.1f}±{100 * now.std(ddof=1):.1f}"
    assert f'cell heart / NC: printed {old_text} -> {new_text}; selected point {{"variant": 0}} (unchanged)' \
        in result.output
    assert f"{store}: 1 units audited (of 3 stored), 0 equal, 0 float noise, 1 differ, 0 other identity" \
        in result.output


def test_a_fit_that_fails_now_shows_its_cell_as_the_tables_would_read_it(tmp_path):
    """A store made while a plug-in's fits succeeded, audited while they fail (``FailWhile``: its flag file
    exists): the unit differs in every field its record held, and the printed cell goes from the folds' mean±std
    to "–" with one failed fold (the re-derived failed record has no metric: none is kept from the stored one)."""
    flag = tmp_path / "flag"
    folder = _run(textwrap.dedent(f"""\
        name: flaky
        datasets: [heart]
        models:
          Flaky: {{estimator: 'tests.helpers:FailWhile', grid: {{flag: ['{flag}']}}}}
        protocol: {{folds: 3, repeats: 1, seed: 0}}
        """), tmp_path / "store")
    flag.write_text("")
    result = audit(folder, "--sample", "1", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    fold = int(re.search(r"fold (\d) \(1 record\): differs", result.output).group(1))
    stored = read_results(folder).sort_values("fold")
    gmean = stored["gmean"].to_numpy()
    point = json.dumps({"flag": str(flag)})
    assert f"{point} fold {fold}: gmean {float(gmean[fold])!r} stored, None now" in result.output, result.output
    assert f"{point} fold {fold}: status 'ok' stored, 'failed' now" in result.output
    printed = f"{100 * gmean.mean():.1f}±{100 * gmean.std(ddof=1):.1f}"
    assert f"cell heart / Flaky: printed {printed} -> – †1; selected point {point} -> None" in result.output, \
        result.output


def test_a_unit_made_with_other_blas_kernels_says_both_and_how_to_pick_the_stored_ones(store, monkeypatch):
    """A run records the BLAS kernels OpenBLAS picked for its CPU; a unit that differs where the kernels are others
    says both and the OPENBLAS_CORETYPE that picks the stored run's (results/esmm_table4's B-FSVM: made with
    Haswell kernels, it re-derives exactly with OPENBLAS_CORETYPE=Haswell on CI's SkylakeX; docs/reproduction)."""
    import scipy.linalg  # noqa: F401  (scipy's OpenBLAS loaded, as a run's fits load it)
    from threadpoolctl import threadpool_info

    (run,) = (store / "runs").glob("*.json")
    info = json.loads(run.read_text())
    # What threadpoolctl says of the loaded BLAS libraries: kind, version and the kernels picked.
    loaded = sorted({f"{i['internal_api']} {i['version']} {i['architecture']}" for i in threadpool_info()
                     if i["user_api"] == "blas"})
    assert info["host"]["blas"] == loaded and loaded
    monkeypatch.setenv("EEMREPRO_TEST_BREAK", "all")
    args = (store, "--only-models", "NC", "--sample", "1", "--seed", "0", "--jobs", "1")
    result = audit(*args)
    assert result.exit_code == 1 and " differs " in result.output
    assert "BLAS kernels" not in result.output  # made with this machine's kernels: a difference of code or data
    # The same OpenBLAS versions, another CPU's kernels (Prescott): OPENBLAS_CORETYPE picks them here.
    prescott = [" ".join(k.split()[:2] + ["Prescott"]) for k in loaded]
    info["host"]["blas"] = prescott
    run.write_text(json.dumps(info))
    result = audit(*args)
    assert result.exit_code == 1
    assert f"    made with BLAS kernels {', '.join(prescott)}, re-derived with {', '.join(loaded)}; " \
           "OPENBLAS_CORETYPE=Prescott re-derives with the stored run's\n" in result.output
    # Another OpenBLAS version (the same kernels or not): no setting picks it here; the kernels are still said.
    info["host"]["blas"] = ["openblas 0.2.20 Prescott"]
    run.write_text(json.dumps(info))
    result = audit(*args)
    assert f"    made with BLAS kernels openblas 0.2.20 Prescott, re-derived with {', '.join(loaded)}\n" \
        in result.output


def test_a_change_that_moves_the_selected_point_is_said_with_the_printed_value_unchanged(store, monkeypatch):
    stored = read_results(store).query("model == 'NC'")
    monkeypatch.setenv("EEMREPRO_TEST_BREAK", "0")  # variant 0 (selected on the tie) broken, variant 1 as stored
    result = audit(store, "--only-models", "NC", "--sample", "1", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    values = stored[stored["point"] == '{"variant": 1}'].sort_values("fold")["gmean"].to_numpy()
    text = f"{100 * values.mean():.1f}±{100 * values.std(ddof=1):.1f}"
    assert f'cell heart / NC: printed {text} (unchanged); selected point {{"variant": 0}} -> {{"variant": 1}}' \
        in result.output, result.output
    assert '{"variant": 1} fold' not in result.output  # the unbroken variant is re-derived equal


def test_every_unit_s_printed_cell_is_read_with_its_own_records_replaced_the_first_stored_ones_too(tmp_path,
                                                                                                  monkeypatch):
    """Each differing unit's line says what the run table prints with that unit's re-derived records in place of
    its stored ones, whichever rows of the store they are (the first ones too). A difference that moves no
    printed cell and no selected point says so."""
    only = _run(CONFIG.replace("  EEM: {estimator: EEM, grid: {n_hidden: [10, 20]}}\n", ""), tmp_path / "nc")
    stored = read_results(only)
    values = stored[stored["point"] == '{"variant": 0}'].sort_values("fold")["gmean"].to_numpy()
    monkeypatch.setenv("EEMREPRO_TEST_BREAK", "all")
    result = audit(only, "--fraction", "1", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    old_text = f"{100 * values.mean():.1f}±{100 * values.std(ddof=1):.1f}"
    for fold in range(3):  # the fold broken alone reads 0 (closed form: one class predicted)
        now = np.where(np.arange(3) == fold, 0.0, values)
        new_text = f"{100 * now.mean():.1f}±{100 * now.std(ddof=1):.1f}"
        assert f'cell heart / NC: printed {old_text} -> {new_text}; selected point {{"variant": 0}} (unchanged)' \
            in result.output, (fold, result.output)
    monkeypatch.setenv("EEMREPRO_TEST_BREAK", "1")  # the point not selected: variant 0 stays the better one
    result = audit(only, "--sample", "1", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    assert "    the printed cells and selected points of the run table do not change\n" in result.output


def test_a_unit_of_a_later_data_set_is_read_with_its_records_in_their_own_rows(tmp_path, monkeypatch):
    """In a store of two data sets, the second one's rows do not start the frame: its re-derived records go to
    its own rows (a frame of one data set's rows keeps the store's row labels), and its printed cell says so."""
    two = _run(CONFIG.replace("datasets: [heart]", "datasets: [heart, balance]").replace(
        "  EEM: {estimator: EEM, grid: {n_hidden: [10, 20]}}\n", ""), tmp_path / "two")
    stored = read_results(two).query("dataset == 'balance'")
    values = stored[stored["point"] == '{"variant": 0}'].sort_values("fold")["gmean"].to_numpy()
    monkeypatch.setenv("EEMREPRO_TEST_BREAK", "all")
    result = audit(two, "--only-datasets", "balance", "--sample", "1", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    fold = int(re.search(r"balance NC repeat 0 fold (\d)", result.output).group(1))
    now = np.where(np.arange(3) == fold, 0.0, values)
    old_text = f"{100 * values.mean():.1f}±{100 * values.std(ddof=1):.1f}"
    new_text = f"{100 * now.mean():.1f}±{100 * now.std(ddof=1):.1f}"
    assert f'cell balance / NC: printed {old_text} -> {new_text}; selected point {{"variant": 0}} (unchanged)' \
        in result.output, result.output


def test_the_same_seed_draws_the_same_units_and_a_fresh_seed_is_printed_to_replay(made):
    first = audit(made, "--sample", "3", "--jobs", "1")
    assert first.exit_code == 0, first.output
    m = re.match(rf"audit seed (\d+) \(replay: eemrepro audit {re.escape(str(made))} --sample 3 --seed (\d+)\)\n",
                 first.output)
    assert m and m.group(1) == m.group(2), first.output
    again = audit(made, "--sample", "3", "--seed", m.group(1), "--jobs", "1")
    assert again.exit_code == 0 and unit_lines(again.output) == unit_lines(first.output)
    # Three draws of two cells: both cells are covered (a round takes one unit of every cell).
    assert {line.split()[1] for line in unit_lines(first.output)} == {"NC", "EEM"}


def test_sample_order_is_the_seeds_and_spreads_over_cells():
    from eemrepro.experiments import Unit

    units = [Unit(dataset=d, model=m, points=((("p", 1),),), repeat=0, fold=f)
             for d in "abcde" for m in "xy" for f in range(7)]
    a = sample_order(units, np.random.default_rng(3))
    assert a == sample_order(units, np.random.default_rng(3))
    assert a != sample_order(units, np.random.default_rng(4))
    assert sorted(a) == list(range(len(units)))
    # Every round covers the ten cells once: the first ten draws are ten distinct cells.
    assert len({(units[i].dataset, units[i].model) for i in a[:10]}) == 10


def test_records_made_under_another_identity_are_named_not_rerun(store):
    cfg = store / "config.yaml"
    cfg.write_text(cfg.read_text().replace("    estimator: EEM\n", "    estimator: EEM\n    activation: sig\n"))
    result = audit(store, "--only-models", "EEM", "--sample", "2", "--seed", "1", "--jobs", "1")
    assert result.exit_code == 1, result.output
    lines = unit_lines(result.output)
    assert len(lines) == 2 and all("made under another identity: params.activation (" in line
                                   and "'sig' now)" in line for line in lines), result.output
    assert "0 equal, 0 float noise, 0 differ, 2 other identity" in result.output


def test_records_made_on_other_data_are_named(store, monkeypatch):
    import eemrepro.datasets

    stored_sha = read_results(store)["data_sha256"].iloc[0]
    monkeypatch.setattr(eemrepro.datasets, "dataset_checksum", lambda *a, **k: "f" * 64)  # heart as revised
    result = audit(store, "--sample", "1", "--seed", "1", "--jobs", "1")
    assert result.exit_code == 1, result.output
    (line,) = unit_lines(result.output)
    assert line.endswith(f"made on other data: data_sha256 {stored_sha[:12]} stored, ffffffffffff now")


def _budget_between(folder, cheap, dear):
    """A --max-seconds that takes every unit of model ``cheap`` and no unit of model ``dear``, by their stored
    timings (the scheduler's rule: a record's fit over its path size plus its prediction, and 0.05 s a unit for
    its process): midway between the cheap units' sum and the cheapest dear unit. Read from the
    store, so that a loaded machine's slower fits move the budget, not the verdicts."""
    df = read_results(folder)
    cost = df["fit_seconds"] / df["path_size"] + df["predict_seconds"].fillna(0.0)
    units = (cost.groupby([df["model"], df["fold"]]).sum() + 0.05).astype(float)
    low, high = units[cheap].sum(), units[dear].min()
    assert low < high, (low, high)  # the premise: the dear model's fits sleep
    return float((low + high) / 2)


@pytest.mark.parametrize("cheap, spec", [
    ("EEM", "{estimator: EEM, grid: {n_hidden: [10]}}"),
    # A failed fit's record has no prediction time (NaN in the frame): it counts as nothing, and the budget still
    # passes over the slow units drawn after it (a NaN cost left every later comparison false).
    ("Fails", "{estimator: 'tests.helpers:Sleepy', grid: {fail: [true]}}")])
def test_max_seconds_passes_over_units_whose_stored_timings_exceed_it(tmp_path, cheap, spec):
    folder = _run(textwrap.dedent(f"""\
        name: timed
        datasets: [heart]
        models:
          {cheap}: {spec}
          Slow: {{estimator: 'tests.helpers:Sleepy', grid: {{delay: [0.4]}}}}
        protocol: {{folds: 3, repeats: 1, seed: 0}}
        """), tmp_path / "store")
    stored = read_results(folder)
    assert stored.loc[stored["model"] == cheap, "predict_seconds"].isna().all() == (cheap == "Fails")  # premise
    budget = _budget_between(folder, cheap, "Slow")
    result = audit(folder, "--sample", "6", "--seed", "2", "--jobs", "1", "--max-seconds", repr(budget))
    assert result.exit_code == 0, result.output
    audited = [line.split()[1] for line in unit_lines(result.output) if not line.startswith("  (")]
    assert f"(3 drawn unit(s) passed over: their stored timings would take the audit past --max-seconds {budget:g})" \
        in result.output, result.output
    # The three cheap units fit the budget by their stored timings; on a loaded machine the re-runs may still take
    # past it, after which no further unit starts (the first always does).
    not_run = re.search(r"\((\d) drawn unit\(s\) not run", result.output)
    assert set(audited) == {cheap} and len(audited) + (int(not_run.group(1)) if not_run else 0) == 3, result.output


def test_max_seconds_counts_a_process_start_for_each_unit_beside_its_stored_timings(made, monkeypatch):
    # Stored timings of nothing at all: each unit still costs a process's start (0.05 s, _audit._unit_seconds),
    # so a budget of 0.12 s takes two of three units (0.10 s) and passes over the third (0.15 s).
    import eemrepro.experiments._schedule as schedule

    monkeypatch.setattr(schedule, "records_seconds", lambda records: 0.0 * len(records))
    result = audit(made, "--only-models", "NC", "--sample", "3", "--seed", "0", "--jobs", "1", "--max-seconds",
                   "0.12")
    assert result.exit_code == 0, result.output
    assert "(1 drawn unit(s) passed over: their stored timings would take the audit past --max-seconds 0.12)" \
        in result.output, result.output
    # The two units the budget takes by their stored timings; the first re-run itself takes past 0.12 s, after
    # which no further unit starts (the first always does).
    not_run = re.search(r"\((\d) drawn unit\(s\) not run", result.output)
    audited = re.search(r"(\d) units audited \(of 3 stored\)", result.output)
    assert int(audited.group(1)) + (int(not_run.group(1)) if not_run else 0) == 2, result.output


def test_max_seconds_stops_starting_units_once_the_audit_has_taken_that_long(made, monkeypatch):
    # Stored fits took milliseconds; re-run, each of NC's two fits sleeps 1.5 s: the first unit (3 s) ends past
    # the 2 s budget, and no further unit is started.
    monkeypatch.setenv("EEMREPRO_TEST_SLOW", "1.5")
    result = audit(made, "--only-models", "NC", "--sample", "3", "--seed", "0", "--jobs", "1", "--max-seconds", "2")
    assert result.exit_code == 0, result.output
    assert len(unit_lines(result.output)) == 2, result.output  # one unit, and the line saying why the rest did not run
    assert "  (2 drawn unit(s) not run: the re-runs had taken --max-seconds 2 already)" in result.output
    assert "1 units audited (of 3 stored), 1 equal" in result.output


def test_nothing_audited_is_not_a_pass(made):
    result = audit(made, "--sample", "3", "--seed", "2", "--jobs", "1", "--max-seconds", "0")
    assert result.exit_code == 1 and "0 units audited (of 6 stored)" in result.output, result.output


def test_a_correlation_kind_store_is_audited_too(tmp_path):
    folder = _run(textwrap.dedent("""\
        name: corr
        kind: dcs-correlation
        datasets: [heart]
        analysis: {n_hidden: [3], layers: 2, betas: 5}
        """), tmp_path / "store")
    result = audit(folder, "--sample", "2", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert len(unit_lines(result.output)) == 2
    assert "2 units audited (of 2 stored), 2 equal, 0 float noise, 0 differ, 0 other identity" in result.output


def test_an_audit_reads_a_store_whose_lock_a_live_run_holds(made):
    script = ("import sys\nfrom eemrepro.store import ResultStore\n"
              f"with ResultStore({str(made)!r}).writing('a live run'):\n"
              "    print('held', flush=True)\n    sys.stdin.read()\n")
    holder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        result = audit(made, "--sample", "1", "--seed", "0", "--jobs", "1")
        assert result.exit_code == 0 and "1 equal" in result.output, result.output
    finally:
        holder.communicate("", timeout=30)


# -- bad input: one line naming the path, exit status 2 -----------------------------------------------------------


def test_bad_input_is_one_line_naming_the_path(made, tmp_path):
    cases = []
    missing = tmp_path / "nope"
    cases.append(([missing], f"error: {missing} is not a results folder (no such folder)\n"))
    empty = tmp_path / "empty"
    empty.mkdir()
    cases.append(([empty], f"error: {empty} is not a results folder (no records/ or runs/ in it)\n"))
    bare = shutil.copytree(made, tmp_path / "bare")
    (bare / "config.yaml").unlink()
    cases.append(([bare], f"error: {bare / 'config.yaml'}: missing, yet the run files in {bare / 'runs'} say `eemrepro "
                          f"run` wrote the folder (the config of the results folder {bare}: restore it as `eemrepro run` "
                          "wrote it, or run the config again into the folder, which writes it afresh)\n"))
    fresh = tmp_path / "fresh"
    (fresh / "records").mkdir(parents=True)
    shutil.copy(made / "config.yaml", fresh / "config.yaml")
    cases.append(([fresh], f"error: {fresh} holds no records: nothing to audit\n"))
    cases.append(([made, "--sample", "2", "--fraction", "0.5"],
                  "error: --sample and --fraction exclude each other: give one\n"))
    cases.append(([made, "--only-models", "NX"], f"error: {made}: unknown model(s) ['NX']; its config has "
                                                 "['EEM', 'NC']\n"))
    for args, message in cases:
        result = audit(*args)
        assert (result.exit_code, result.output) == (2, message), (args, result.output)


def test_a_plug_in_that_no_longer_imports_is_one_line(store):
    cfg = store / "config.yaml"
    cfg.write_text(cfg.read_text().replace("tests.helpers:Breakable", "tests.gone_helpers:Breakable"))
    result = audit(store, "--sample", "1")
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert result.output.startswith(f"error: {cfg}") and "'tests.gone_helpers:Breakable' cannot be imported" \
        in result.output


# -- the comparison rule ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("stored", "now", "verdict"), [
    # |a - b| <= 1e-9 * max(1, |a|, |b|): relative above 1, absolute below it.
    (0.5, 0.5 + 1e-12, "float noise"),
    (0.5, 0.5 + 2e-9, "differs"),
    (1000.0, 1000.0 + 5e-7, "float noise"),  # 5e-10 relative; an absolute 1e-9 would call it a difference
    (1000.0, 1000.0 + 2e-6, "differs"),
    (1e-3, 1e-3 + 5e-10, "float noise"),  # a purely relative rule (1e-12 here) would call it a difference
    (1e-3, 1e-3 + 2e-9, "differs"),
    (0.25, 0.25, "equal"),
    (float("nan"), None, "equal"),  # a metric with no value, however the store writes it
    (float("nan"), 0.3, "differs"),
    (0.3, None, "differs"),
    (1, 1.0 - 1e-13, "float noise"),  # a value JSON wrote as an integer
])
def test_float_noise_is_relative_above_one_and_absolute_below(stored, now, verdict):
    assert compare_records({"gmean": stored}, {"gmean": now})[0] == verdict
    assert FLOAT_NOISE == 1e-9


def test_the_largest_float_difference_is_reported_relative():
    verdict, (largest, name), differing, added = compare_records(
        {"gmean": 0.5, "auc": 2000.0, "dcs": [1.0, 3.0]}, {"gmean": 0.5 + 1e-12, "auc": 2000.0 + 1e-7,
                                                         "dcs": [1.0, 3.0 + 6e-10]})
    # auc: 1e-7 / 2000 = 5e-11; gmean 1e-12; dcs 6e-10 / 3 = 2e-10, the largest.
    assert (verdict, name, differing, added) == ("float noise", "dcs", [], [])
    assert largest == pytest.approx(2e-10, rel=1e-5)


@pytest.mark.parametrize(("field", "stored", "now", "verdict"), [
    ("seed", 2147483646, 2147483647, "differs"),
    ("seed", 2147483646.0, 2147483647.0, "differs"),  # (as floats) 1e-9 x 2e9 = 2: a seed one off is no noise
    ("n_iter", 3e9, 3e9 + 1, "differs"),
    ("n_train", 180, 180.0, "equal"),  # an integer read back from a column with gaps
    ("status", "ok", "failed", "differs"),
    ("error_message", "singular matrix", "singular matrix!", "differs"),
    ("fitted", '{"C_": [1.0, 10.0]}', '{"C_": [1.0, 10.000000000001]}', "float noise"),
    ("fitted", '{"C_": [1.0, 10.0]}', '{"C_": [1.0, 11.0]}', "differs"),
    ("dcs", [1.0, 2.0], [1.0, 2.0, 3.0], "differs"),
    ("labels", ["1", "-1"], ["1", "1"], "differs"),
])
def test_counts_seeds_texts_and_structures(field, stored, now, verdict):
    assert compare_records({field: stored}, {field: now})[0] == verdict


def test_a_record_is_compared_by_its_fields_the_error_text_by_the_frame_s_name_its_key_and_timings_not():
    # A failed fit's stored record against today's: its error text is compared (under `error_message`, the name a
    # known entry and the store frame give it), its metrics each under its own name; its key, identity, run facts
    # and timings are not.
    from eemrepro.experiments._audit import compared_fields

    stored = {"dataset": "heart", "model": "NC", "params": {"C": 1.0}, "repeat": 0, "fold": 2, "status": "failed",
              "error": "ValueError: C must be positive", "metrics": {"gmean": None, "auc": 0.5},
              "fit_seconds": 0.1, "host": "a", "run_id": "r1", "identity": {"kind": "grid-search"}}
    now = {**stored, "error": "ValueError: C must be > 0", "metrics": {"gmean": None, "auc": 0.75},
           "fit_seconds": 9.0, "host": "b", "run_id": "r2"}
    assert compared_fields(stored) == {"status": "failed", "error_message": "ValueError: C must be positive",
                                       "gmean": None, "auc": 0.5}
    verdict, _, differing, _ = compare_records(compared_fields(stored), compared_fields(now))
    assert verdict == "differs"
    assert sorted(differing) == [("auc", 0.5, 0.75),
                                 ("error_message", "ValueError: C must be positive", "ValueError: C must be > 0")]


def test_a_field_only_todays_record_has_is_no_difference_but_one_it_lost_is():
    assert compare_records({"gmean": 0.5}, {"gmean": 0.5, "fitted": "{}"}) == \
        ("equal", (0.0, None), [], ["fitted"])
    assert compare_records({"gmean": 0.5, "fitted": "{}"}, {"gmean": 0.5})[2] == [("fitted", "{}", None)]



def test_a_stored_record_the_re_run_does_not_make_differs_in_every_field_it_held():
    """A unit's stored record whose key the re-run makes no record of (out of reach of today's runner, whose units
    make the same points again; a store's scope leaves a hand-added point out of the unit) is no pass: each field
    it held differs from nothing, and the re-derived record of another key is not compared with it."""
    from eemrepro.experiments._audit import _judge

    old = {"dataset": "heart", "model": "NC", "params": {"variant": 2}, "repeat": 0, "fold": 0, "inner": None,
           "status": "ok", "metrics": {"gmean": 0.75}}
    other = {**old, "params": {"variant": 0}}
    got = _judge("unit", [old], [other])
    assert got.verdict == "differs"
    assert got.differing == [('{"variant": 2}', 0, 0, "gmean", 0.75, None), ('{"variant": 2}', 0, 0, "status",
                                                                              "ok", None)]


def test_a_known_difference_is_reported_with_its_reason_and_does_not_fail(store, tmp_path, monkeypatch):
    """A committed number explained as fragile (a known-differences file, as CI's .ci/audit-known.yaml) is said
    with its reason; a difference in a field the entry does not name still fails."""
    monkeypatch.setenv("EEMREPRO_TEST_BREAK", "all")
    fields = ["auc", "bac", "error", "gmean"]  # what a one-class prediction changes of the stored metrics
    known = tmp_path / "known.yaml"
    known.write_text(f"- store: {store}\n  models: [N*]\n  fields: {fields}\n  reason: the test's broken classifier\n")
    args = (store, "--only-models", "NC", "--sample", "1", "--seed", "0", "--jobs", "1")
    result = audit(*args, "--known", known)
    assert result.exit_code == 0, result.output
    (line,) = unit_lines(result.output)
    assert line.endswith(f"differs in {', '.join(fields)} (largest relative difference "
                         f"{line.split('difference ')[1].split(')')[0]}), a known difference: the test's broken "
                         "classifier")
    assert "0 differ, 0 other identity, 1 known" in result.output and f"--known {known}" in result.output
    # The entry naming one field fewer explains nothing: the unit differs.
    known.write_text(f"- store: {store}\n  fields: {fields[1:]}\n  reason: not all of it\n")
    assert audit(*args, "--known", known).exit_code == 1
    # Another store's entry explains nothing either.
    (tmp_path / "other").mkdir()
    known.write_text(f"- store: {tmp_path / 'other'}\n  fields: {fields}\n  reason: elsewhere\n")
    assert audit(*args, "--known", known).exit_code == 1
    known.write_text("- store: x\n  fields: []\n  reason: r\n")
    bad = audit(*args, "--known", known)
    assert bad.exit_code == 2 and f"{known}: entry 1: key 'fields': a record field, or a non-empty list" in bad.output


def test_units_of_unavailable_data_stop_the_audit_unless_skipped_and_named(store, monkeypatch):
    """A mirror without a data set's files (CI's has no isolet): the audit stops (exit 2), or with
    --skip-unavailable names the data set and audits nothing of it; nothing audited is still no pass."""
    import eemrepro.datasets
    from eemrepro.datasets import DatasetError

    def unavailable(name, **kwargs):
        raise DatasetError(f"{name}: not in the mirror")

    monkeypatch.setattr(eemrepro.datasets, "dataset_checksum", unavailable)
    stopped = audit(store, "--sample", "1", "--seed", "1", "--jobs", "1")
    assert stopped.exit_code == 2 and "data set heart: heart: not in the mirror" in stopped.output
    skipped = audit(store, "--sample", "1", "--seed", "1", "--jobs", "1", "--skip-unavailable")
    assert "(the drawn units of heart not audited: heart: not in the mirror)" in skipped.output
    assert "0 units audited" in skipped.output and skipped.exit_code == 1
    assert "--skip-unavailable" in skipped.output.splitlines()[0]


# -- one truth for audit and reports: the values the reports read are the ones audited ----------------------------


def _left_out(hide):
    """What the audit says of a record whose GMean's name was taken out of its ``metrics.keys`` (``hide="keys"``)
    or whose ``metrics`` was taken out of its ``fields`` (every metric column then holds a value it leaves out)."""
    if hide == "keys":
        return "metrics.keys leave out metrics.gmean, which its column holds"
    return "fields leave out metrics.auc, metrics.bac, metrics.error and metrics.gmean, which its columns hold"


@pytest.mark.parametrize("hide", ["keys", "fields"])
def test_a_hand_edited_number_its_key_lists_leave_out_is_audited_as_the_tables_read_it(store, hide):
    """A user edits a stored GMean with pandas and takes its name out of the record's key lists (``metrics.keys``,
    or ``metrics`` out of ``fields``), and seals the segment again with the store's own sealing: every checksum
    matches. The tables read the edited number; the audit compares that number (and names the record whose key
    lists and columns disagree), and ``store verify`` names the segment."""
    from tests.helpers import hand_edit_sealed

    point = json.dumps({"variant": 0})
    true = hand_edit_sealed(store, "NC", 0, point, "metrics.gmean", 0.97, hide=hide)
    read = read_results(store)
    edited = read[(read["model"] == "NC") & (read["fold"] == 0) & (read["point"] == point)]
    assert edited["gmean"].tolist() == [0.97]  # what the tables print from (the premise)
    assert 0.5 < true < 0.95  # the nearest centroid's GMean on heart's fold, as the run stored it
    result = audit(store, "--only-models", "NC", "--sample", "3", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    (line,) = [ln for ln in unit_lines(result.output) if "fold 0 " in ln]
    assert "differs" in line, result.output
    # |0.97 - g| / max(1, ...) = 0.97 - g, the re-derived value being the true one (the run's own, seed for seed).
    assert f"{point} fold 0: gmean 0.97 stored, {true!r} now" in result.output
    assert f"(largest relative difference {0.97 - true:.1e}, in gmean)" in line
    assert f"    {point} fold 0: the stored record's {_left_out(hide)} (edited by hand: `eemrepro store verify` " \
           "names its segment)" in result.output, result.output
    assert "0 equal" not in result.output and "1 differ" in result.output


def test_a_criterion_that_differs_is_named_by_its_own_name_as_a_known_entry_names_it(tmp_path):
    """A stored D_CS criterion edited by hand differs under its own name (``dcs_gaussian``, a store frame's
    column, as CI's known entries name it), not as the record's ``criteria`` group: a known entry for that field
    excuses it, and one for another field does not."""
    from tests.helpers import hand_edit_sealed

    folder = _run(textwrap.dedent("""\
        name: crit
        datasets: [heart]
        models:
          EEM: {estimator: EEM, grid: {n_hidden: [10]}}
        protocol: {folds: 3, repeats: 1, seed: 0, criteria: [dcs_gaussian]}
        """), tmp_path / "crit")
    point = json.dumps({"n_hidden": 10})
    true = hand_edit_sealed(folder, "EEM", 0, point, "criteria.dcs_gaussian", 123.0)
    known = tmp_path / "known.yaml"
    args = (folder, "--sample", "3", "--seed", "0", "--jobs", "1", "--known", known)
    for field, code in (("dcs_gaussian", 0), ("dcs_kde", 1)):
        known.write_text(f"- store: {folder}\n  fields: [{field}]\n  reason: edited by the test\n")
        result = audit(*args)
        assert result.exit_code == code, (field, result.output)
        said = "differs in dcs_gaussian (largest relative difference " if code == 0 else \
            f"{point} fold 0: dcs_gaussian 123.0 stored, {true!r} now"
        assert said in result.output, result.output


@pytest.mark.parametrize("hide", ["keys", "fields"])
def test_a_record_whose_key_lists_leave_out_its_unchanged_value_is_no_pass(store, hide):
    """The key lists edited alone (the number as the run stored it): the audit's numbers agree, but the record
    is not the one written; the unit differs, saying why, and fails the audit."""
    from tests.helpers import hand_edit_sealed

    point = json.dumps({"variant": 1})
    true = read_results(store).query("model == 'NC' and fold == 2 and point == @point")["gmean"].item()
    hand_edit_sealed(store, "NC", 2, point, "metrics.gmean", true, hide=hide)
    result = audit(store, "--only-models", "NC", "--sample", "3", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    (line,) = [ln for ln in unit_lines(result.output) if "fold 2 " in ln]
    assert line.endswith("differs"), result.output
    assert f"    {point} fold 2: the stored record's {_left_out(hide)} (edited by hand" in result.output


# -- the known-differences file: read whole and checked before anything runs --------------------------------------

_FIELDS = ["auc", "bac", "error", "gmean"]  # what a one-class prediction changes of the stored metrics


def test_a_known_entry_s_store_is_a_path_from_the_known_file_s_folder(store, tmp_path, monkeypatch):
    """CI keeps its known-differences file in .ci/ and names stores from there: ``store: ../store`` is the store
    beside that folder, wherever the audit is run from."""
    monkeypatch.setenv("EEMREPRO_TEST_BREAK", "all")
    (tmp_path / "ci").mkdir()
    known = tmp_path / "ci" / "known.yaml"
    known.write_text(f"- store: ../store\n  fields: {_FIELDS}\n  reason: the test's broken classifier\n")
    elsewhere = tmp_path / "a" / "b"  # from here, ../store is another folder
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    result = audit(store, "--only-models", "NC", "--sample", "1", "--seed", "0", "--jobs", "1", "--known", known)
    assert result.exit_code == 0 and "0 differ, 0 other identity, 1 known" in result.output, result.output


def test_a_known_entry_s_models_and_datasets_given_as_one_text_are_one_pattern(store, tmp_path, monkeypatch):
    """``models: "EEM*"`` (a text, not a list) is the one pattern EEM*: it explains nothing of NC (a text read
    letter by letter would give the pattern '*', which matches every model); ``models: "N*"`` explains NC."""
    monkeypatch.setenv("EEMREPRO_TEST_BREAK", "all")
    known = tmp_path / "known.yaml"
    args = (store, "--only-models", "NC", "--sample", "1", "--seed", "0", "--jobs", "1", "--known", known)
    for models, datasets, code in (("EEM*", "heart", 1), ("N*", "heart", 0), ("N*", "he*t", 0), ("N*", "sonar", 1),
                                   ("NC", "*t*", 0)):
        known.write_text(f"- store: {store}\n  models: {models!r}\n  datasets: {datasets!r}\n  fields: {_FIELDS}\n"
                         "  reason: the test's broken classifier\n")
        result = audit(*args)
        assert result.exit_code == code, (models, datasets, result.output)


@pytest.mark.parametrize("entry, message", [
    ("models: []", "key 'models': an empty list would match no model; leave the key out to match every model"),
    ("datasets: []", "key 'datasets': an empty list would match no data set; leave the key out to match every "
                     "data set"),
    ("models: 3", "key 'models': a model name or shell pattern, or a list of them, got 3"),
    ("models: [NC, {a: 1}]", "key 'models': a model name or shell pattern, or a list of them, got ['NC', {'a': 1}]"),
    ("datasets: [heart, '']", "key 'datasets': a data set name or shell pattern, or a list of them, got ['heart', '']"),
    ("reason: [x]", "key 'reason': a text saying why the committed numbers differ, got ['x']"),
    ("reason: ''", "key 'reason': a text saying why the committed numbers differ, got ''"),
    ("fields: gmean", None),  # one field as a text: taken as [gmean]
    ("fields: [gmean, 2]", "key 'fields': a record field, or a non-empty list of them, got ['gmean', 2]"),
    ("fields: []", "key 'fields': a record field, or a non-empty list of them, got []"),
    ("store: 7", "key 'store': a results folder (a path from the known-differences file's folder), got 7"),
    ("store: [a, b]", "key 'store': a results folder (a path from the known-differences file's folder), got "
                      "['a', 'b']"),
    ("owner: me", "unknown key(s) ['owner']; the keys are ['datasets', 'fields', 'models', 'reason', 'store']"),
    # A typo'd store would excuse nothing, silently (a re-probe of issue 65's finding 15).
    ("store: nowhere", "key 'store': 'nowhere' is no folder ({tmp}/nowhere: a path from the file's folder)"),
])
def test_a_bad_known_entry_is_one_line_naming_the_file_entry_and_key_before_anything_runs(made, tmp_path, entry,
                                                                                          message):
    known = tmp_path / "known.yaml"
    lines = {"store": f"store: {made}", "fields": "fields: [gmean]", "reason": "reason: r"}
    lines[entry.split(":")[0]] = entry
    (tmp_path / "elsewhere").mkdir()
    known.write_text("- store: elsewhere\n  fields: [gmean]\n  reason: fine\n- " + "\n  ".join(lines.values()) + "\n")
    result = audit(made, "--sample", "1", "--seed", "0", "--jobs", "1", "--known", known)
    if message is None:
        assert result.exit_code == 0, result.output
        return
    assert (result.exit_code, result.output) == (2, f"error: {known}: entry 2: {message.replace('{tmp}', str(tmp_path))}\n")


@pytest.mark.parametrize("text, message", [
    ("store: x\nfields: [gmean]\nreason: r\n", "a list of {store, fields, reason} entries"),
    ("- store: x\n  fields: [gmean]\n", "entry 1: needs 'store', 'fields' and 'reason'"),
    ("- just a text\n", "entry 1: needs 'store', 'fields' and 'reason'"),
    ("- store: x\n  fields: [gmean\n", None),  # not YAML: the reader's one line, naming the file and line
])
def test_a_known_differences_file_of_the_wrong_shape_is_one_line_naming_it(made, tmp_path, text, message):
    known = tmp_path / "known.yaml"
    known.write_text(text)
    result = audit(made, "--sample", "1", "--seed", "0", "--jobs", "1", "--known", known)
    assert result.exit_code == 2 and len(result.output.splitlines()) == 1, result.output
    if message is None:
        assert result.output.startswith(f"error: {known}, line ") and "not valid YAML" in result.output, \
            result.output
    else:
        assert result.output == f"error: {known}: {message}\n"


def test_the_ci_known_differences_file_names_committed_stores():
    """CI's .ci/audit-known.yaml loads, and each entry's ``store`` (a path from .ci/) is a committed results
    folder: an entry naming no store would explain nothing, silently."""
    from pathlib import Path

    from eemrepro.experiments._audit import load_known

    root = Path(__file__).resolve().parents[2]
    entries = load_known(root / ".ci" / "audit-known.yaml")
    assert entries and all((e["store"] / "config.yaml").is_file() and e["store"].parent == root / "results"
                           for e in entries), [e["store"] for e in entries]


def test_a_model_whose_name_holds_a_comma_is_selected_audited_and_forgotten_by_its_name(tmp_path):
    """configs/esmm_fuzzy_weights.yaml names a model 'SVM (balanced, entropy weights)': --only-models, audit
    --only-models and forget --models keep such a name whole (it was split at its ',' into two unknown names)."""
    name = "NC (a, b)"
    folder = _run(CONFIG.replace("  NC:", f"  '{name}':").replace("grid: {variant: [0, 1]}", "grid: {variant: [0]}"),
                  tmp_path / "store")
    cfg = tmp_path / "c.yaml"
    stored = read_results(folder)
    assert sorted(stored["model"].unique()) == ["EEM", name]
    again = CliRunner().invoke(app, ["run", str(cfg), "--out", str(folder), "--only-models", f"EEM,{name}",
                                     "--dry-run"])
    assert again.exit_code == 0 and "0 to run" in again.output, again.output
    result = audit(folder, "--only-models", name, "--sample", "3", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert [line.split(" {")[0] for line in unit_lines(result.output)] == [f"  heart {name}"] * 3
    forgot = CliRunner().invoke(app, ["forget", str(folder), "--models", name])
    assert forgot.exit_code == 0 and "moved 3 record(s)" in forgot.output, forgot.output
    assert read_results(folder)["model"].unique().tolist() == ["EEM"]
    rerun = CliRunner().invoke(app, ["run", str(cfg), "--out", str(folder), "--only-models", name, "--quiet"])
    assert rerun.exit_code == 0 and "ran 3 of 3 pending units" in rerun.output, rerun.output


# -- what a user meets that the mutation run found untested -------------------------------------------------------


def test_a_difference_in_any_folder_of_several_fails_the_audit(made, tmp_path):
    """CI audits twelve folders in one command: a folder that differs fails the command wherever it comes in the
    list, not only when it is the last one."""
    from tests.helpers import hand_edit_sealed

    edited, intact = (shutil.copytree(made, tmp_path / name) for name in ("edited", "intact"))
    hand_edit_sealed(edited, "NC", 1, json.dumps({"variant": 0}), "metrics.gmean", 0.5)  # its key lists untouched
    for folders in ((edited, intact), (intact, edited)):
        result = audit(*folders, "--only-models", "NC", "--sample", "3", "--seed", "0", "--jobs", "1")
        assert result.exit_code == 1, result.output
        assert f"{edited}: 3 units audited (of 3 stored), 2 equal, 0 float noise, 1 differ" in result.output
        assert f"{intact}: 3 units audited (of 3 stored), 3 equal" in result.output
    assert audit(intact, made, "--only-models", "NC", "--sample", "3", "--seed", "0", "--jobs", "1").exit_code == 0


@pytest.mark.parametrize("fraction, n", [(0.1, 1), (0.34, 3), (0.5, 3), (1.0, 6)])
def test_fraction_draws_that_share_of_the_stored_units_rounded_up(made, fraction, n):
    """--fraction 0.1 of a folder's 6 stored units is one unit (0.6 rounded up), never none."""
    result = audit(made, "--fraction", str(fraction), "--seed", "3", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert f"{made}: {n} units audited (of 6 stored), {n} equal" in result.output
    assert f"--fraction {fraction:g} --seed 3" in result.output.splitlines()[0]


def test_an_audit_compares_with_the_latest_record_of_a_key_the_retried_one(tmp_path):
    """A fit that failed (its plug-in's resource was missing), then retried with --retry-failed: the store holds
    both records of each key, and the tables read the retried one. The audit compares with that one: equal."""
    flag = tmp_path / "missing"
    flag.write_text("")
    cfg_text = textwrap.dedent(f"""\
        name: retried
        datasets: [heart]
        models:
          F: {{estimator: 'tests.helpers:FailWhile', grid: {{flag: ['{flag}']}}}}
        protocol: {{folds: 3, repeats: 1, seed: 0}}
        """)
    folder = _run(cfg_text, tmp_path / "store")
    assert set(read_results(folder)["status"]) == {"failed"}
    flag.unlink()
    again = CliRunner().invoke(app, ["run", str(tmp_path / "c.yaml"), "--out", str(folder), "--jobs", "1", "--quiet",
                                     "--retry-failed"])
    assert again.exit_code == 0, again.output
    assert set(read_results(folder)["status"]) == {"ok"}
    result = audit(folder, "--sample", "3", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert "3 units audited (of 3 stored), 3 equal" in result.output


def test_a_store_with_a_timed_out_fit_audits_equal(tmp_path):
    """A grid point that ran past fit_timeout (recorded timed out) and, under after_timeout: skip, its other folds
    (recorded skipped after a timeout): re-derived, the first times out again and the others are skipped again,
    so every unit is equal (neither is re-run as the other)."""
    folder = _run(textwrap.dedent("""\
        name: timing
        datasets: [heart]
        models:
          S: {estimator: 'tests.helpers:Sleepy', grid: {delay: [0.0, 30.0]}}
        protocol: {folds: 3, repeats: 1, seed: 0, fit_timeout: 1.0, after_timeout: skip}
        """), tmp_path / "store")
    statuses = read_results(folder).groupby("param_delay")["status"].agg(sorted).to_dict()
    assert statuses == {0.0: ["ok"] * 3, 30.0: ["skipped-after-timeout"] * 2 + ["timed-out"]}
    result = audit(folder, "--sample", "3", "--seed", "0", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert "3 units audited (of 3 stored), 3 equal" in result.output


def test_a_differing_value_is_shown_at_most_80_characters_long():
    """A differing field's values are printed as their repr, cut to 80 characters with "..." (a list of a
    correlation unit's values, or an error text, would otherwise fill the terminal); 80 fit whole."""
    from eemrepro.cli.audit import _show

    assert _show("a" * 78) == "'" + "a" * 78 + "'"  # 80 characters: whole
    assert _show("a" * 79) == "'" + "a" * 76 + "..."  # 81: cut to 77, then "..."
    assert len(_show(list(range(100)))) == 80 and _show([0.5]) == "[0.5]"
