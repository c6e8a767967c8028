"""`status`, `run --dry-run` and the runner agree, through one plan, after what a user changes between runs.

Each case is a store a run made, then a change: a data file that gains rows, failed fits (with and without
``--retry-failed``), a user's estimator edited, a grid shrunk. The expected counts come from the case itself
(units per cell = folds x repeats; the units the change touches), and the three commands must all say them:
status's "D of N units done, P to run", the dry run's "N units, D already stored, P to run" and the run's
"ran P of P pending units".
"""

import re
import textwrap

import numpy as np
import pytest
from typer.testing import CliRunner

from eemrepro.cli import app
from tests.helpers import lock_held

MODEL = '''
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class Mean(ClassifierMixin, BaseEstimator):
    """Nearest class mean; fails on purpose where ``fail`` is true."""

    def __init__(self, shrink=0.0, fail=False):
        self.shrink, self.fail = shrink, fail

    def fit(self, X, y):
        if self.fail:
            raise ArithmeticError("this point always fails")
        self.classes_ = np.unique(y)
        self.means_ = np.array([X[y == c].mean(0) * (1 - self.shrink) for c in self.classes_])
        return self

    def decision_function(self, X):
        d = ((X[:, None] - self.means_[None]) ** 2).sum(-1)
        return d[:, 0] - d[:, 1]

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
'''


def _csv(path, n, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 3 == 0, "yes", "no")
    X = rng.normal(size=(n, 3)) + (y == "yes")[:, None]
    lines = ["a,b,c,label"] + [f"{a:.6f},{b:.6f},{c:.6f},{t}" for (a, b, c), t in zip(X, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")


def _setup(tmp_path, grid="{shrink: [0.0, 0.5]}", fail="false"):
    (tmp_path / "my_model.py").write_text(MODEL)
    _csv(tmp_path / "mine.csv", 60)
    config = tmp_path / "c.yaml"
    config.write_text(textwrap.dedent(f"""\
        name: agree
        local_datasets:
          mine: {{file: mine.csv, target: label, positive: "yes"}}
        datasets: [mine, heart]
        models:
          M: {{estimator: "my_model:Mean", fail: {fail}, grid: {grid}}}
          N: {{estimator: "my_model:Mean", grid: {{shrink: [0.1]}}}}
        protocol: {{folds: 3, repeats: 2, seed: 1}}
        """))
    return config


def _invoke(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result


def _three(config, out, *flags, edited=False):
    """(status's (done, total, to run), the dry run's (total, done, to run), the run's units run). ``edited``:
    the config changed since the folder's last run, so status is told of it (``--config``)."""
    status = _invoke("status", out, *[f for f in flags if f == "--retry-failed"],
                     *(["--config", config] if edited else []))
    # (status plans a run without --rerun-changed: that run refuses, and status says so, exit 1)
    assert status.exit_code == (1 if "--rerun-changed" in flags else 0), status.output
    s = re.search(r"(\d+) of (\d+) units done, (\d+) to run", status.output)
    dry = _invoke("run", config, "--out", out, "--dry-run", *flags)
    assert dry.exit_code == 0, dry.output
    d = re.search(r"(\d+) units, (\d+) already stored, (\d+) to run", dry.output)
    run = _invoke("run", config, "--out", out, "--jobs", "1", "--quiet", *flags)
    assert run.exit_code == 0, run.output
    r = re.search(r"ran (\d+) of (\d+) pending units", run.output)
    return tuple(map(int, s.groups())), tuple(map(int, d.groups())), tuple(map(int, r.groups()))


def _first_run(config, out):
    result = _invoke("run", config, "--out", out, "--jobs", "1", "--quiet")
    assert result.exit_code == 0, result.output


# 2 data sets x 2 models x 3 folds x 2 repeats: 24 units (a unit is one fold of one model, its grid inside).
UNITS = 24


def test_a_data_file_changed(tmp_path):
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    _csv(tmp_path / "mine.csv", 62)  # two rows more: every unit on it (2 models x 6 folds) is stale
    status, dry, run = _three(config, out)
    assert status == (12, UNITS, 12)
    assert dry == (UNITS, 12, 12)
    assert run == (12, 12)
    assert _three(config, out)[0] == (UNITS, UNITS, 0)  # and then all is done, as all three say


@pytest.mark.parametrize("retry", [False, True])
def test_failed_fits_with_and_without_retry_failed(tmp_path, retry):
    config, out = _setup(tmp_path, grid="{shrink: [0.0]}", fail="true"), tmp_path / "out"
    _first_run(config, out)  # every fit of M fails: 12 units of failed records
    flags = ["--retry-failed"] if retry else []
    status, dry, run = _three(config, out, *flags)
    expected = 12 if retry else 0  # a failed fit is done, unless asked to run it again
    assert status == (UNITS - expected, UNITS, expected)
    assert dry == (UNITS, UNITS - expected, expected)
    assert run == (expected, expected)


def test_a_changed_identity(tmp_path):
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    # The user edits the model's module: every cell of both models (their code) is made under another identity.
    (tmp_path / "my_model.py").write_text(MODEL + "\n# tuned\n")
    status = _invoke("status", out)
    assert re.search(r"0 of 24 units done, 24 to run", status.output), status.output
    assert "another setting" in status.output
    refused = _invoke("run", config, "--out", out, "--jobs", "1", "--quiet")
    assert refused.exit_code != 0 and "--rerun-changed" in refused.output
    # The dry run and status refuse as the run does, in its words (the changed cells, the ways on), exit 1.
    reason = refused.output.removeprefix("error: ").strip().replace(str(config), "CONFIG")
    # The config it was run with, then each changed cell on a line of its own (4: under ten, every one).
    first, *cells = reason.splitlines()[:5]
    assert first == f"{out} holds records made under another setting than CONFIG now asks for:", first
    assert sorted(c.split(":")[0] for c in cells) == ["  M on heart", "  M on mine", "  N on heart", "  N on mine"]
    dry = _invoke("run", config, "--out", out, "--dry-run")
    assert dry.exit_code == 1 and dry.output.removeprefix("error: ").strip() == reason.replace("CONFIG", str(config))
    assert status.exit_code == 1 and "a run would refuse: " in status.output
    assert status.output.split("a run would refuse: ")[1].strip() == \
        reason.replace("CONFIG", str(out / "config.yaml")), status.output
    status, dry, run = _three(config, out, "--rerun-changed")
    assert status == (0, UNITS, UNITS) and dry == (UNITS, 0, UNITS) and run == (UNITS, UNITS)


def test_a_shrunk_grid(tmp_path):
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    # M's grid loses a point: its stored records of that point are kept but count for nothing; nothing to run.
    config.write_text(config.read_text().replace("{shrink: [0.0, 0.5]}", "{shrink: [0.0]}"))
    status, dry, run = _three(config, out, edited=True)
    assert status == (UNITS, UNITS, 0) and dry == (UNITS, UNITS, 0) and run == (0, 0)
    assert "not used" in _invoke("status", out).output
    # ...and a point added back later is to run on every fold of M: 12 units, by all three.
    config.write_text(config.read_text().replace("{shrink: [0.0]}", "{shrink: [0.0, 0.25]}"))
    assert re.search(r"24 of 24 units done", _invoke("status", out).output)  # the folder's config: all done
    status, dry, run = _three(config, out, edited=True)
    assert status == (12, UNITS, 12) and dry == (UNITS, 12, 12) and run == (12, 12)
    assert re.search(r"24 of 24 units done, 0 to run", _invoke("status", out).output)  # run: config.yaml grown


def test_a_run_records_each_unit_s_start_and_worker_its_stages_and_the_timeline_draws_it(tmp_path):
    import json
    import sys
    from pathlib import Path

    from eemrepro.store import ResultStore

    config, out = _setup(tmp_path), tmp_path / "out"
    before = __import__("time").time()
    _first_run(config, out)
    records = ResultStore(out).read()
    # Every record carries its unit's start (after the run began, before the record was finished) and worker.
    assert all(before <= r["started_at"] <= r["finished_at"] for r in records)
    assert {r["worker"] for r in records} and all(isinstance(r["worker"], int) for r in records)
    # One unit's records share one start: 2 points of M per unit, so M's records pair up on it.
    starts = [r["started_at"] for r in records if r["model"] == "M"]
    assert len(starts) == 2 * len(set(starts))
    (info,) = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    stages = info["stage_seconds"]
    assert set(stages) == {"planning", "worker_start", "dispatch", "seal", "table"}
    assert all(v >= 0 for v in stages.values())
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import timeline

    units, untimed = timeline.units_of(out)
    assert untimed == 0 and len(units) == UNITS  # the timeline's units are the run's units
    timeline.main([str(out), "--out", str(tmp_path / "t.png")])
    assert (tmp_path / "t.png").stat().st_size > 1000


@pytest.mark.parametrize("gone", ["module", "data file"])
def test_status_of_a_folder_a_run_could_not_read_says_so_instead_of_a_wrong_plan(tmp_path, gone):
    # A store whose model module or local data file is gone: a run stops on it, so status has no plan to
    # print. It must not call valid records stale (a user's estimator named only has no defaults: every cell
    # looked "stored under another setting", with --rerun-changed as the advice, which the run then refused).
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    (tmp_path / ("my_model.py" if gone == "module" else "mine.csv")).unlink()
    status = _invoke("status", out)
    # The run refuses (its dry run too, below): status says why and exits as for its other refusals, with 1.
    assert status.exit_code == 1, status.output
    assert "another setting" not in status.output and "--rerun-changed" not in status.output
    assert "units done: not known" in status.output and "a run of this folder stops there" in status.output
    assert "my_model" in status.output if gone == "module" else "mine.csv" in status.output
    # Where in the folder's config.yaml: the line of M's estimator, or of the data set's entry.
    lines = (out / "config.yaml").read_text().splitlines()
    line = 1 + (lines.index("    estimator: my_model:Mean") if gone == "module" else lines.index("  mine:"))
    key = "models.M.estimator" if gone == "module" else "local_datasets.mine"
    assert f"units done: not known ({out / 'config.yaml'}, line {line}: key '{key}': " in status.output
    # The table still shows what is stored: heart's M, 6 units of 2 points, all ok; nothing counted as done.
    row = next(line for line in status.output.splitlines() if line.startswith("heart") and " M " in line)
    assert row.split()[2:4] == ["?/6", "12"]
    run = _invoke("run", config, "--out", out, "--dry-run")
    assert run.exit_code == 1  # the run stops where status said it would
    # ...with the same reason (the run names its own config file, status the folder's)
    why = "estimator 'my_model:Mean' cannot be imported" if gone == "module" else "mine.csv"
    assert why in run.output and why in status.output


def test_a_folder_another_run_is_writing_is_refused_by_the_dry_run_and_status_in_the_run_s_words(tmp_path):
    """The user's report: while a run wrote the folder, `run` refused ("being written by process ..."), but
    `run --dry-run` said "3 to run" and `status` "5 of 6 done", both exit 0, with no word of the run in
    progress. A lock left by a killed run (its file stays, naming the dead process) is no run in progress."""
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    config.write_text(config.read_text().replace("shrink: [0.1]", "shrink: [0.1, 0.2]"))  # N: 12 units to run
    with lock_held(out) as holder:
        refused = _invoke("run", config, "--out", out, "--jobs", "1", "--quiet")
        reason = refused.output.removeprefix("error: ").strip()
        assert refused.exit_code == 1 and reason.startswith(f"{out} is being written by process {holder.pid} "), \
            refused.output
        dry = _invoke("run", config, "--out", out, "--dry-run")
        assert dry.exit_code == 1 and dry.output.removeprefix("error: ").strip() == reason, dry.output
        status = _invoke("status", out, "--config", config)
        assert status.exit_code == 1, status.output
        assert status.output.split("a run would refuse: ")[1].strip() == reason, status.output
        assert "12 of 24 units done, 12 to run" in status.output  # the progress still shown, table first
    assert f'"pid": {holder.pid}' in (out / ".lock").read_text()  # killed: its lock file stays, naming it
    status = _invoke("status", out, "--config", config)
    assert status.exit_code == 0 and "being written" not in status.output, status.output
    assert _three(config, out, edited=True) == ((12, UNITS, 12), (UNITS, 12, 12), (12, 12))


def test_status_with_another_config_s_file_is_refused_as_the_run_is(tmp_path):
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    other = tmp_path / "other.yaml"
    other.write_text(config.read_text().replace("name: agree", "name: other"))
    status = _invoke("status", out, "--config", other)
    assert status.exit_code != 0 and "holds the results of config 'agree'" in status.output


def _edit_stored(out, edit):
    """Edit ``out/config.yaml`` by hand (a mapping edited in place by ``edit``)."""
    import yaml

    raw = yaml.safe_load((out / "config.yaml").read_text())
    edit(raw)
    (out / "config.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))


@pytest.mark.parametrize("key, edit, stored, written", [
    ("seed", lambda raw: raw["protocol"].update(seed=2), 1, 2),
    ("params.fail", lambda raw: raw["models"]["M"].update(fail=True), False, True),
    ("data.positive", lambda raw: raw["local_datasets"]["mine"].update(positive="no"), ["yes"], ["no"]),
])
def test_a_folder_config_edited_by_hand_is_refused_by_the_reports_naming_the_key_and_both_values(
        tmp_path, key, edit, stored, written):
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    before = (out / "config.yaml").read_text()
    tables = _invoke("tables", out, "--out", tmp_path / "t0")
    assert tables.exit_code == 0, tables.output
    _edit_stored(out, edit)
    # status knew the records were not the edited config's; the reports printed them as its numbers.
    for command in (["tables", out, "--out", tmp_path / "t1"], ["check", out],
                    ["figures", out, "--out", tmp_path / "f"]):
        result = _invoke(*command)
        assert result.exit_code != 0, (command, result.output)
        (line,) = result.output.strip().splitlines()  # one line: where, which key, both values, the ways out
        assert f"{out / 'config.yaml'} does not say what" in line, line
        assert f"{key}: {stored!r} stored, {written!r} in config.yaml" in line, line
        assert "edited by hand" in line and f"--out {out} --rerun-changed" in line, line
        if key == "seed":  # every one of the 4 cells: the first three named, then how many more
            assert f"{out / 'config.yaml'} does not say what 4 of its cells' records were made under: " in line
            assert line.count(" on ") == 3 and " and 1 more). The reports" in line, line
            # ...and the config the folder's last run was made with, to run them again with
            assert line.endswith(f"--out {out} --rerun-changed (the last run's was {config})"), line
    assert not (tmp_path / "t1").exists()  # nothing written (the folder the command made is gone again)
    status = _invoke("status", out)
    assert status.exit_code == 1 and "a run would refuse" in status.output and key in status.output
    (out / "config.yaml").write_text(before)  # restored: read as before
    again = _invoke("tables", out, "--out", tmp_path / "t2")
    assert again.exit_code == 0, again.output
    assert (tmp_path / "t2" / "summary.md").read_text() == (tmp_path / "t0" / "summary.md").read_text()


def test_a_folder_config_with_two_edits_says_each_change_with_its_own_cells(tmp_path):
    # The seed edited for every cell and M's `fail` too: M's two cells changed two ways, N's two one way; each
    # change is said once with its cells, the changes apart.
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    _edit_stored(out, lambda raw: (raw["protocol"].update(seed=2), raw["models"]["M"].update(fail=True)))
    result = _invoke("check", out)
    assert result.exit_code != 0
    (line,) = result.output.strip().splitlines()
    what = line.split(" were made under: ")[1].split(". The reports")[0]
    changes = what.split("; ")
    assert len(changes) == 2, what
    both = next(c for c in changes if "params.fail" in c)
    seed = next(c for c in changes if "params.fail" not in c)
    cells = {c: set(c.split(" (")[1].rstrip(")").split(", ")) for c in changes}
    assert "seed: 1 stored, 2 in config.yaml" in both and cells[both] == {"M on mine", "M on heart"}, both
    assert seed.startswith("seed: 1 stored, 2 in config.yaml") and cells[seed] == {"N on mine", "N on heart"}, seed


def test_a_refusal_of_more_kinds_of_change_than_it_names_says_three_and_then_dots(tmp_path):
    """The refusal's wording at its edges, from ``changed`` as the plan hands it over: four kinds of change (three
    said, then "; ..."), a change of exactly three cells (all named, no "and 0 more"), and a folder whose run
    files name no config (no "the last run's was")."""
    from eemrepro.experiments._run_folder import _stale_message

    changed = [("a", "M", {"seed": (1, 2)}), ("b", "M", {"seed": (1, 2)}), ("c", "M", {"seed": (1, 2)}),
               ("a", "N", {"folds": (3, 5)}), ("a", "O", {"repeats": (1, 2)}), ("a", "P", {"C": (1, 9)})]
    line = _stale_message(tmp_path, changed)
    what = line.split(" were made under: ")[1].split(". The reports")[0]
    assert what == ("seed: 1 stored, 2 in config.yaml (M on a, M on b, M on c); folds: 3 stored, 5 in config.yaml "
                    "(N on a); repeats: 1 stored, 2 in config.yaml (O on a); ..."), what
    assert line.startswith(f"{tmp_path / 'config.yaml'} does not say what 6 of its cells' records were made under")
    assert line.endswith(f"eemrepro run CONFIG --out {tmp_path} --rerun-changed"), line
    # Three kinds exactly: all said, no dots.
    what = _stale_message(tmp_path, changed[:5]).split(" were made under: ")[1].split(". The reports")[0]
    assert what.endswith("(O on a)"), what


def _superseded(out):
    """(records, {(data set, model)}) moved aside under ``out`` (every ``superseded-*`` folder)."""
    import pyarrow.parquet as pq

    tables = [pq.read_table(p, columns=["dataset", "model"]) for p in out.glob("superseded-*/*.parquet")]
    return sum(t.num_rows for t in tables), {c for t in tables for c in zip(t.column("dataset").to_pylist(),
                                                                           t.column("model").to_pylist())}


def _rows(out):
    from eemrepro.store import ResultStore

    frame = ResultStore(out).frame(["status"])
    return frame.groupby(["dataset", "model"], observed=True).size().to_dict()


def test_rerun_changed_with_only_datasets_moves_aside_only_the_cells_it_reruns_and_leaves_the_rest_flagged(tmp_path):
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    config.write_text(config.read_text().replace("seed: 1", "seed: 2"))  # every cell is made under another seed
    # Records: M's 2 grid points and N's 1 on 3 folds x 2 repeats of each data set.
    assert _rows(out) == {("heart", "M"): 12, ("heart", "N"): 6, ("mine", "M"): 12, ("mine", "N"): 6}
    dry = _invoke("run", config, "--out", out, "--dry-run", "--rerun-changed", "--only-datasets", "heart")
    assert dry.exit_code == 0, dry.output
    assert f"would move 18 record(s) of 2 cell(s) aside to {out}/superseded-<stamp>/" in dry.output
    assert re.search(r"12 units, 0 already stored, 12 to run", dry.output), dry.output
    run = _invoke("run", config, "--out", out, "--jobs", "1", "--quiet", "--rerun-changed", "--only-datasets", "heart")
    assert run.exit_code == 0, run.output
    assert "ran 12 of 12 pending units" in run.output
    # What was moved aside is exactly what ran again, and the run says how much and where.
    moved, cells = _superseded(out)
    assert (moved, cells) == (18, {("heart", "M"), ("heart", "N")})
    (where,) = out.glob("superseded-*")
    assert f"moved 18 record(s) of 2 cell(s) aside to {where}" in run.output
    assert _rows(out) == {("heart", "M"): 12, ("heart", "N"): 6, ("mine", "M"): 12, ("mine", "N"): 6}
    # mine's cells, not run now, still hold records of seed 1: said by the run, by status, and the reports refuse
    # them instead of printing them as seed 2's (the run's own table included).
    assert "2 cell(s) not run now hold records made under another setting (M on mine, N on mine)" in run.output
    assert "no table: " in run.output and "seed: 1 stored, 2 in config.yaml (M on mine, N on mine)" in run.output
    status = _invoke("status", out)
    assert status.exit_code == 1 and re.search(r"12 of 24 units done, 12 to run", status.output), status.output
    assert "M on mine (seed), N on mine (seed)" in status.output
    tables = _invoke("tables", out, "--out", tmp_path / "t")
    assert tables.exit_code != 0 and "(M on mine, N on mine)" in tables.output
    # The rest, run now: every cell is the config's, nothing more is moved, and the reports read them all.
    rest = _invoke("run", config, "--out", out, "--jobs", "1", "--quiet", "--rerun-changed")
    assert rest.exit_code == 0 and "ran 12 of 12 pending units" in rest.output, rest.output
    assert _superseded(out)[0] == 18 + 18 and "not run now" not in rest.output and "no table" not in rest.output
    assert _invoke("tables", out, "--out", tmp_path / "t").exit_code == 0


def test_fresh_with_only_models_moves_aside_only_that_model_s_cells(tmp_path):
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    run = _invoke("run", config, "--out", out, "--jobs", "1", "--quiet", "--fresh", "--only-models", "N")
    assert run.exit_code == 0, run.output
    assert "ran 12 of 12 pending units" in run.output  # N's 6 units on each data set, run again
    assert _superseded(out) == (12, {("heart", "N"), ("mine", "N")})
    assert "moved 12 record(s) of 2 cell(s) aside" in run.output
    assert _rows(out) == {("heart", "M"): 12, ("heart", "N"): 6, ("mine", "M"): 12, ("mine", "N"): 6}
    status = _invoke("status", out)
    assert status.exit_code == 0 and "24 of 24 units done, 0 to run" in status.output


def test_a_config_of_fewer_repeats_than_its_folder_holds_is_refused_unless_a_flag_says_how(tmp_path):
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)  # 2 repeats
    fewer = tmp_path / "one.yaml"
    fewer.write_text(config.read_text().replace("repeats: 2", "repeats: 1"))
    reason = (f"{out} holds 2 repeats (its config.yaml) and {fewer} says repeats: 1: its tables would read 1 of "
              "them; nothing was run. Set repeats: 2 in the config, run with --repeats 1 (a part of the folder's 2: "
              "it keeps them), or start the folder over with --fresh")
    # The run, its dry run and status of that config all refuse, in one line, the same words.
    for args, prefix in ((["run", fewer, "--out", out, "--jobs", "1", "--quiet"], "error: "),
                         (["run", fewer, "--out", out, "--dry-run"], "error: "),
                         (["status", out, "--config", fewer], "error: a run would refuse: ")):
        result = _invoke(*args)
        assert result.exit_code == 1 and result.output.strip() == prefix + reason, result.output
    assert "repeats: 2" in (out / "config.yaml").read_text()
    # --repeats 1: a part of the folder's 2 (nothing to run: repeat 0 is stored), which it keeps.
    part = _invoke("run", fewer, "--out", out, "--jobs", "1", "--quiet", "--repeats", "1")
    assert part.exit_code == 0 and "ran 0 of 0 pending units" in part.output, part.output
    assert "repeats: 2" in (out / "config.yaml").read_text()
    assert re.search(r"24 of 24 units done", _invoke("status", out).output)
    # --fresh starts the folder over at 1 repeat: every record moved aside, 12 units run.
    fresh = _invoke("run", fewer, "--out", out, "--jobs", "1", "--quiet", "--fresh")
    assert fresh.exit_code == 0 and "ran 12 of 12 pending units" in fresh.output, fresh.output
    assert "moved 36 record(s) of 4 cell(s) aside" in fresh.output and "repeats: 1" in (out / "config.yaml").read_text()


def test_done_keys_are_the_stored_keys_made_with_today_s_data_and_with_retry_failed_not_the_failed_ones():
    # The per-key rule of resume: what `done_units` falls back to for a kind whose units are not groups of points
    # x positions, and what `finished_units` then reads. Keys as the store writes them (`record_key`).
    import json

    import pandas as pd

    from eemrepro.experiments import done_keys
    from eemrepro.experiments._plan import finished_units
    from eemrepro.store import record_key

    rows = [("heart", '{"c": 1}', 0, "ok", "sha-heart", "id1"), ("heart", '{"c": 1}', 1, "failed", "sha-heart", "id1"),
            ("heart", '{"c": 2}', 0, "timed-out", "sha-heart", "id1"),
            ("sonar", '{"c": 1}', 0, "ok", "sha-old", "id1"),  # made on the file sonar had before
            ("sonar", '{"c": 2}', 0, "ok", "sha-sonar", "id2")]
    stored = pd.DataFrame(rows, columns=["dataset", "point", "fold", "status", "data_sha256", "identity_sha"]).assign(
        model="M", repeat=0, inner=np.nan)
    now = {"heart": "sha-heart", "sonar": "sha-sonar"}
    key = [record_key(d, "M", json.loads(point), 0, fold, None) for d, point, fold, *_ in rows]
    # A timed-out fit counts as done either way; a failed one only without --retry-failed; sonar's first record
    # was made on other data.
    assert done_keys(stored, now) == {(key[0], "id1"), (key[1], "id1"), (key[2], "id1"), (key[4], "id2")}
    assert done_keys(stored, now, retry_failed=True) == {(key[0], "id1"), (key[2], "id1"), (key[4], "id2")}
    assert done_keys(stored.iloc[:0], now) == set()

    class Unit:  # a kind's units whose keys are given, not grouped: two share a point and a position, where
        # done_units gives up
        points, repeat, fold, inner = ((("c", 1),),), 0, 0, None

        def __init__(self, dataset, model, keys):
            self.dataset, self.model, self._keys = dataset, model, keys

        def keys(self):
            return self._keys

    units = [Unit("heart", "M", [key[0], key[1]]), Unit("heart", "M", [key[0], key[2]]),
             Unit("sonar", "M", [key[3]]), Unit("sonar", "M", [key[4]])]
    shas = {("heart", "M", False): "id1", ("sonar", "M", False): "id2"}
    assert finished_units(units, stored, now, shas).tolist() == [True, True, False, True]
    assert finished_units(units, stored, now, shas, retry_failed=True).tolist() == [False, True, False, True]


def test_unfinished_cells_in_a_folder_are_those_its_config_names_and_its_records_lack(tmp_path):
    # The public reading of a folder's run state: a cell whose stored repeat lacks one of its records is
    # unfinished (one record of M on heart dropped: that cell alone); a cell with no record at all is not run, not
    # unfinished; a folder without its config.yaml names none (nothing to compare with).
    from eemrepro.experiments import unfinished_cells_in
    from eemrepro.store import ResultStore

    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    assert unfinished_cells_in(out, ResultStore(out).frame()) == set()
    records = ResultStore(out).read()
    dropped = next(i for i, r in enumerate(records) if (r["dataset"], r["model"]) == ("heart", "M"))
    for name, kept in (("holed", records[:dropped] + records[dropped + 1:]),
                       ("no-heart", [r for r in records if r["dataset"] != "heart"])):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "config.yaml").write_bytes((out / "config.yaml").read_bytes())
        store = ResultStore(folder)
        store.append(kept)
        store.close()
    assert unfinished_cells_in(tmp_path / "holed", ResultStore(tmp_path / "holed").frame()) == {("heart", "M")}
    assert unfinished_cells_in(tmp_path / "no-heart", ResultStore(tmp_path / "no-heart").frame()) == set()
    (tmp_path / "holed" / "config.yaml").unlink()
    assert unfinished_cells_in(tmp_path / "holed", ResultStore(tmp_path / "holed").frame()) == set()


def test_a_run_resumed_with_other_blas_kernels_than_the_folder_s_records_says_so_before_it_runs(tmp_path):
    # M's records made on another CPU (its run file says OpenBLAS picked Prescott kernels), N's here: a run that
    # adds units beside M's records rounds an ill-conditioned number otherwise than they did, and says which
    # kernels and the setting that picks theirs. Nothing to say with nothing to run, or where every record made
    # with those kernels is moved aside (--fresh of M).
    import json

    config, out = _setup(tmp_path), tmp_path / "out"
    assert _invoke("run", config, "--out", out, "--jobs", "1", "--quiet", "--only-models", "M").exit_code == 0
    more = ("run", config, "--out", out, "--dry-run", "--repeats", "3")
    assert "BLAS kernels" not in _invoke(*more).output  # the records were made here
    (run,) = (out / "runs").glob("*.json")
    info = json.loads(run.read_text())
    here = info["host"]["blas"]
    prescott = [" ".join(k.split()[:2] + ["Prescott"]) for k in here]  # the same versions, other kernels
    info["host"]["blas"] = prescott
    run.write_text(json.dumps(info))
    assert _invoke("run", config, "--out", out, "--jobs", "1", "--quiet", "--only-models", "N").exit_code == 0
    said = (f"{out}'s records were made with BLAS kernels {', '.join(prescott)}, this machine's are "
            f"{', '.join(here)}: an ill-conditioned number rounds otherwise in the units run now (docs/running.md, "
            "\"Another CPU's round-off\"); OPENBLAS_CORETYPE=Prescott picks theirs")
    dry = _invoke(*more)
    assert dry.exit_code == 0 and said in " ".join(dry.output.split()), dry.output
    assert "BLAS kernels" not in _invoke("run", config, "--out", out, "--dry-run").output  # nothing to run
    fresh_m = _invoke(*more, "--fresh", "--only-models", "M")
    assert "to run" in fresh_m.output and "BLAS kernels" not in fresh_m.output, fresh_m.output


def test_openblas_coretype_is_offered_only_where_it_would_pick_the_stored_kernels_here():
    # The stored run's one OpenBLAS architecture, where this machine has OpenBLAS of the same versions picking
    # another; not for another version (no setting gives it), no OpenBLAS here, or two architectures stored.
    from eemrepro.experiments._watchdog import openblas_coretype

    here = ("openblas 0.3.30 SkylakeX", "openblas 0.3.31 SkylakeX")
    assert openblas_coretype([("openblas 0.3.30 Haswell", "openblas 0.3.31 Haswell")], here) == "Haswell"
    assert openblas_coretype([("openblas 0.3.21 Haswell", "openblas 0.3.31 Haswell")], here) is None
    assert openblas_coretype([("openblas 0.3.30 Haswell", "openblas 0.3.31 Haswell")], ("mkl 2024.0",)) is None
    assert openblas_coretype([("openblas 0.3.30 Haswell", "openblas 0.3.31 Haswell"),
                              ("openblas 0.3.30 Zen", "openblas 0.3.31 Zen")], here) is None
    assert openblas_coretype([("mkl 2024.0",)], here) is None and openblas_coretype([()], here) is None


@pytest.mark.parametrize("n_models", [5, 6])
def test_a_refusal_of_many_changed_cells_lists_ten_and_counts_the_rest(tmp_path, n_models):
    # Five or six models of one module on two data sets: an edit of the module changes 10 or 12 cells; the
    # refusal names ten, then (12) "... and 2 more cell(s)", then the ways on with every model named for `forget`.
    config = _setup(tmp_path)
    models = "".join(f'  K{i}: {{estimator: "my_model:Mean", grid: {{shrink: [0.0]}}}}\n' for i in range(n_models))
    text = config.read_text()
    head, tail = text.split("models:\n")
    config.write_text(head + "models:\n" + models + "protocol:" + tail.split("protocol:")[1])
    out = tmp_path / "out"
    _first_run(config, out)
    (tmp_path / "my_model.py").write_text(MODEL + "\n# tuned\n")
    refused = _invoke("run", config, "--out", out, "--jobs", "1", "--quiet")
    assert refused.exit_code != 0
    lines = refused.output.strip().splitlines()
    assert sum(line.startswith("  K") for line in lines) == 10, refused.output
    assert [line for line in lines if "more cell" in line] == (["  ... and 2 more cell(s)"] if n_models == 6 else [])
    names = ",".join(f"K{i}" for i in range(n_models))
    assert lines[-1].endswith(f"`eemrepro forget {out} --models {names}`."), lines[-1]
