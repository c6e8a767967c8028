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
    assert status.exit_code == 0, status.output
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
    dry = _invoke("run", config, "--out", out, "--dry-run")
    assert re.search(r"24 units, 0 already stored, 24 to run", dry.output), dry.output
    refused = _invoke("run", config, "--out", out, "--jobs", "1", "--quiet")
    assert refused.exit_code != 0 and "--rerun-changed" in refused.output
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
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
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
    assert status.exit_code == 0, status.output
    assert "another setting" not in status.output and "--rerun-changed" not in status.output
    assert "units done: not known" in status.output and "a run of this folder stops there" in status.output
    assert "my_model" in status.output if gone == "module" else "mine.csv" in status.output
    # The table still shows what is stored: heart's M, 6 units of 2 points, all ok; nothing counted as done.
    row = next(line for line in status.output.splitlines() if line.startswith("heart") and " M " in line)
    assert row.split()[2:4] == ["?/6", "12"]
    run = _invoke("run", config, "--out", out, "--dry-run")
    assert run.exit_code != 0  # the run stops where status said it would


def test_status_with_another_config_s_file_is_refused_as_the_run_is(tmp_path):
    config, out = _setup(tmp_path), tmp_path / "out"
    _first_run(config, out)
    other = tmp_path / "other.yaml"
    other.write_text(config.read_text().replace("name: agree", "name: other"))
    status = _invoke("status", out, "--config", other)
    assert status.exit_code != 0 and "holds the results of config 'agree'" in status.output
