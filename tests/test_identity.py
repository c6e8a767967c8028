"""A cell's identity is everything that makes its number (issue 58): a user's code, every parameter of the
estimator it builds, and how a user's own data file is read.

Each test is what a researcher does between two runs into the same folder: edit the model, change a default,
change the positive label or the label column. The stale record must never be printed as the new cell's.
Expected numbers come from a fresh folder run of the changed setting (the independent reference: nothing
stored to resume from) and from scikit-learn's own metric over the same predictions.
"""

import json
import os
import textwrap
import uuid
from dataclasses import fields, replace
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app
from eemrepro.experiments import load_config
from eemrepro.experiments._baselines import (
    NOT_COMPARED,
    PROTOCOL_KEYS,
    BaselineError,
    check_baselines,
    first_difference,
)
from eemrepro.experiments._config import Protocol
from eemrepro.models._lookup import estimator_class, estimator_code

from .test_benchmarking import _run

runner = CliRunner()

#: A nearest-mean classifier; ``SIGN`` flips its decision (the edit a researcher makes), ``scale`` is a
#: parameter whose default comes from a helper module beside it (not the module's own text).
MODULE = textwrap.dedent('''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin

    from {helper} import DEFAULT_SCALE

    SIGN = {sign}


    class NearestMean(ClassifierMixin, BaseEstimator):
        def __init__(self, shrink=0.0, scale=DEFAULT_SCALE):
            self.shrink = shrink
            self.scale = scale

        def fit(self, X, y):
            self.classes_ = np.unique(y)
            self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_]) * (1 - self.shrink)
            return self

        def decision_function(self, X):
            d = ((X[:, None, :] * self.scale - self.means_[None] * self.scale) ** 2).sum(-1)
            return SIGN * (d[:, 0] - d[:, 1])

        def predict(self, X):
            return self.classes_[(self.decision_function(X) > 0).astype(int)]
''')


def _write(path, text):
    """Write ``text`` and move the file's modification time on (two writes within one clock tick must still
    read as a change to anything that looks at times)."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def _folder(tmp_path, sign=1, scale=1.0):
    folder = tmp_path / "mine"
    folder.mkdir()
    module, helper = f"clf_{uuid.uuid4().hex[:8]}", f"defaults_{uuid.uuid4().hex[:8]}"
    _write(folder / f"{helper}.py", f"DEFAULT_SCALE = {scale}\n")
    _write(folder / f"{module}.py", MODULE.format(sign=sign, helper=helper))
    return folder, module, helper


def _config(folder, module, extra="", datasets="heart"):
    path = folder / "bench.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: bench
        datasets: [{datasets}]
        models:
          NM: {{estimator: "{module}:NearestMean", grid: {{shrink: [0.0, 0.5]}}}}
        protocol: {{folds: 3, repeats: 1, seed: 5}}
        """) + extra)
    return path


def _gmeans(out):
    df = read_results(out, columns=["gmean", "status"])
    assert (df["status"] == "ok").all()
    return df.sort_values(["dataset", "point", "repeat", "fold"])["gmean"].to_numpy()


def test_an_edited_plugin_is_never_resumed_from_its_old_records(tmp_path):
    """The issue's first finding: predict's sign flipped, same command, same folder: refused naming the code;
    --rerun-changed gives what a fresh folder gives."""
    folder, module, helper = _folder(tmp_path)
    cfg, out = _config(folder, module), tmp_path / "out"
    _run(cfg, out)
    before = _gmeans(out)
    _write(folder / f"{module}.py", MODULE.format(sign=-1, helper=helper))
    result = _run(cfg, out, code=1)
    assert f"code.{module}:NearestMean: '{module}.py sha256:" in result.output
    assert "stored" in result.output and "now" in result.output and "Nothing was run" in result.output
    assert np.array_equal(_gmeans(out), before)  # nothing moved
    _run(cfg, out, "--rerun-changed")
    _run(cfg, tmp_path / "fresh")
    after, fresh = _gmeans(out), _gmeans(tmp_path / "fresh")
    assert np.array_equal(after, fresh)
    # The flipped classifier is another classifier: heart's folds score otherwise (the test would pass
    # vacuously if the edit changed nothing).
    assert np.abs(after - before).max() > 0.2


def test_the_module_is_imported_again_when_its_file_changes_within_one_process(tmp_path):
    """A notebook (or a test) runs, edits, runs again in one process: the second run's records are the new
    code's, not a copy imported before the edit (what the record's identity names)."""
    folder, module, helper = _folder(tmp_path)
    name = f"{module}:NearestMean"
    X, y = np.array([[0.0], [1.0], [0.1], [0.9]]), np.array([-1, 1, -1, 1])
    first = estimator_class(name, str(folder))().fit(X, y).decision_function(X)
    _write(folder / f"{module}.py", MODULE.format(sign=-1, helper=helper))
    second = estimator_class(name, str(folder))().fit(X, y).decision_function(X)
    np.testing.assert_array_equal(second, -first)


def test_a_worker_refuses_a_module_changed_after_the_run_was_planned(tmp_path):
    """The code a record names is the code that made it: a module edited mid-run fails its fits, naming why."""
    folder, module, helper = _folder(tmp_path)
    name = f"{module}:NearestMean"
    planned = estimator_code(name, str(folder))
    _write(folder / f"{module}.py", MODULE.format(sign=-1, helper=helper))
    with pytest.raises(ValueError, match="its code changed since the run started"):
        estimator_class(name, str(folder), planned)
    assert estimator_class(name, str(folder), estimator_code(name, str(folder))).__name__ == "NearestMean"


def test_a_changed_default_parameter_is_a_changed_identity(tmp_path):
    """The default comes from a helper module the plug-in's file imports: its own text is unchanged, but the
    estimator it builds is not. Refused naming the parameter; rerun gives the fresh folder's numbers."""
    folder, module, helper = _folder(tmp_path, scale=1.0)
    cfg, out = _config(folder, module), tmp_path / "out"
    _run(cfg, out)
    identity = json.loads(read_results(out, columns=["identity"])["identity"].iloc[0])
    assert identity["params.scale"] == 1.0 and "params.shrink" not in identity  # a grid parameter is in the key
    _write(folder / f"{helper}.py", "DEFAULT_SCALE = 2.0\n")
    result = _run(cfg, out, code=1)
    assert "params.scale: 1.0 stored, 2.0 in the config" in result.output
    _run(cfg, out, "--rerun-changed")
    _run(cfg, tmp_path / "fresh")
    assert np.array_equal(_gmeans(out), _gmeans(tmp_path / "fresh"))


def _blobs(path, n=90, seed=0):
    """A CSV of three classes' blobs with two label columns (numbers, so either is a feature when the other is
    the target): ``kind`` (1, 2, 3) and ``big`` (0, 1)."""
    rng = np.random.default_rng(seed)
    kind = rng.choice([1, 2, 3], size=n, p=[0.3, 0.3, 0.4])
    X = rng.normal(size=(n, 2)) + np.where(kind == 1, 2.0, 0.0)[:, None]
    big = (X[:, 1] > 0.3).astype(int)
    pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "big": big, "kind": kind}).to_csv(path, index=False)
    return X, kind, big


@pytest.mark.parametrize("change, key", [
    (("positive: 1", "positive: 2"), "data.positive: ['1'] stored, ['2'] in the config"),
    (("target: kind, positive: 1", "target: big, positive: 1"), "data.target: 'kind' stored, 'big'"),
])
def test_a_local_data_sets_changed_definition_is_refused_then_rerun(tmp_path, change, key):
    """The issue's second finding: the same file read as another problem (another positive label, another
    label column) never resumes from the old problem's records."""
    folder, module, _ = _folder(tmp_path)
    _blobs(folder / "blobs.csv")
    extra = "local_datasets:\n  blobs: {file: blobs.csv, target: kind, positive: 1}\n"
    cfg, out = _config(folder, module, extra, datasets="blobs"), tmp_path / "out"
    _run(cfg, out)
    before = _gmeans(out)
    cfg.write_text(cfg.read_text().replace(*change))
    result = _run(cfg, out, code=1)
    assert key in result.output and "Nothing was run" in result.output
    _run(cfg, out, "--rerun-changed")
    _run(cfg, tmp_path / "fresh")
    after = _gmeans(out)
    assert np.array_equal(after, _gmeans(tmp_path / "fresh")) and not np.array_equal(after, before)


def test_a_local_data_sets_identity_names_its_columns_and_labels(tmp_path):
    """What the identity holds of a local file: its label column, positive label, feature columns, format."""
    folder, module, _ = _folder(tmp_path)
    _blobs(folder / "blobs.csv")
    extra = "local_datasets:\n  blobs: {file: blobs.csv, positive: 1, target: big}\n"
    out = tmp_path / "out"
    _run(_config(folder, module, extra, datasets="blobs"), out)
    identity = json.loads(read_results(out, columns=["identity"])["identity"].iloc[0])
    assert {k: v for k, v in identity.items() if k.startswith("data.")} == {
        "data.format": "csv", "data.target": "big", "data.positive": ["1"], "data.columns": ["x1", "x2", "kind"]}
    # The stored config names them too, so that a store read without its file still knows its problem.
    stored = load_config(out / "config.yaml", import_estimators=False)
    assert stored.local_datasets["blobs"].local["feature_columns"] == ["x1", "x2", "kind"]


def test_status_counts_an_edited_plugins_cells_as_not_done(tmp_path):
    """`status` judges a cell by the identity `run` would give it: after an edit, nothing of it is done."""
    folder, module, helper = _folder(tmp_path)
    cfg, out = _config(folder, module), tmp_path / "out"
    _run(cfg, out)
    assert "heart      NM       3/3" in runner.invoke(app, ["status", str(out)]).output
    _write(folder / f"{module}.py", MODULE.format(sign=-1, helper=helper))
    assert "heart      NM       0/3" in runner.invoke(app, ["status", str(out)]).output


def test_the_code_of_an_installed_distribution_is_its_version_and_files():
    """A module of an installed distribution that is not one of the tool's own dependencies: its name, version
    and the digest of its file list (RECORD), so an upgrade is a change; the tool's dependencies are its
    environment (their versions are in every record) and add nothing."""
    code = estimator_code("hypothesis:given")
    assert code.startswith(f"hypothesis {version('hypothesis')} ")
    assert estimator_code("sklearn.svm:SVC") is None and estimator_code("EEM") is None


# -- baselines: compared on the whole identity --------------------------------------------------------------

@pytest.fixture(scope="module")
def small_baseline(tmp_path_factory):
    root = tmp_path_factory.mktemp("baseline")
    cfg = root / "base.yaml"
    cfg.write_text("name: base\ndatasets: [heart]\nmodels:\n  C: {estimator: 'tests.helpers:Sleepy', "
                   "grid: {delay: [0.0]}}\nprotocol: {folds: 3, repeats: 1, seed: 5}\n")
    _run(cfg, root / "store")
    return root / "store"


def _another_config(baseline):
    """The baseline's own config as another config's: its model renamed (a clash is refused first), the
    baseline named."""
    config = load_config(baseline / "config.yaml")
    return replace(config, models=tuple(replace(m, name=f"my-{m.name}") for m in config.models),
                   baselines=(str(baseline),), home=None)


def _changed(proto, key):
    """A protocol with ``key`` set to another valid value."""
    other = {"folds": 4, "repeats": 2, "seed": 6, "splitter": "train-test", "train_size": 0.5,
             "scaling": "per-fold", "selection": "nested", "select_metric": "bac", "inner_folds": 2,
             "fit_timeout": 60.0, "after_timeout": "skip-model", "fit_memory_gb": 4.0}
    assert key in other, f"{key}: a protocol field the test does not know: say whether baselines compare it"
    return replace(proto, **{key: other[key]})


@pytest.mark.parametrize("key", [k for k in PROTOCOL_KEYS if k != "inner_folds"])
def test_a_baseline_differing_in_any_compared_protocol_key_is_refused_naming_it(small_baseline, key):
    """Every field of the protocol that changes a cell's value, spread or whether it ran is compared."""
    config = _another_config(small_baseline)
    config = replace(config, protocol=_changed(config.protocol, key))
    with pytest.raises(BaselineError, match=rf"made with protocol\.{key} "):
        check_baselines(config, {})


def test_inner_folds_are_compared_under_nested_selection():
    """Only nested selection has inner folds: two nested protocols differing in them differ there."""
    nested = Protocol(selection="nested")
    mine = {"kind": "grid-search", **{k: getattr(nested, k) for k in PROTOCOL_KEYS}}
    theirs = dict(mine, inner_folds=nested.inner_folds + 1)
    assert first_difference(mine, theirs) == ("inner_folds", nested.inner_folds, nested.inner_folds + 1)


def test_a_baseline_of_another_kind_is_refused(small_baseline):
    config = replace(_another_config(small_baseline), kind="projection")
    with pytest.raises(BaselineError, match=r"made with kind 'grid-search', this config has 'projection'"):
        check_baselines(config, {})


def test_every_protocol_field_is_compared_or_said_not_to_change_a_cell():
    """A field added to Protocol later is compared unless NOT_COMPARED says why not."""
    assert set(PROTOCOL_KEYS) | set(NOT_COMPARED) == {f.name for f in fields(Protocol)}
    assert set(NOT_COMPARED) == {"criteria", "standalone_timing", "fit_threads"}


def test_a_baseline_made_with_other_blas_threads_per_fit_is_compared(small_baseline):
    # protocol.fit_threads changes rounding only (tests/test_jobs_determinism.py: the same records at 1 and 2).
    config = _another_config(small_baseline)
    check_baselines(replace(config, protocol=replace(config.protocol, fit_threads=4)), {})


def test_a_baseline_whose_local_data_set_is_read_another_way_is_refused(tmp_path):
    folder, module, _ = _folder(tmp_path)
    _blobs(folder / "blobs.csv")
    base = _config(folder, module, "local_datasets:\n  blobs: {file: blobs.csv, target: kind, positive: 1}\n",
                   datasets="blobs")
    _run(base, tmp_path / "base")
    mine = folder / "mine.yaml"
    mine.write_text(base.read_text().replace("name: bench", "name: mine").replace("positive: 1", "positive: 3")
                    .replace("NM:", "Mine:")
                    + f"baselines: [{tmp_path / 'base'}]\n")
    result = _run(mine, tmp_path / "out", code=1)
    assert "holds blobs read another way (data.positive ['1'] there, ['3'] here)" in " ".join(result.output.split())
    assert not (tmp_path / "out" / "records").exists()


def test_built_in_and_registry_identities_are_unchanged(tmp_path):
    """The committed stores' records stay resumable: a built-in model on a registry set gains no key."""
    from eemrepro.experiments import get_kind
    from eemrepro.experiments._identity import cell_identity

    config = load_config(Path(__file__).resolve().parents[1] / "results" / "uci" / "config.yaml")
    kind = get_kind(config.kind)
    unit = kind.units(replace(config, datasets=config.datasets[:1]))[0]
    assert cell_identity(kind, config, unit) == kind.identity(config, unit)
