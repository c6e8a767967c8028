"""A cell's identity is everything that makes its number (issue 58): a user's code, every parameter of the
estimator it builds, and how a user's own data file is read.

Each test is what a researcher does between two runs into the same folder: edit the model, change a default,
change the positive label or the label column. The stale record must never be printed as the new cell's.
Expected numbers come from a fresh folder run of the changed setting (the independent reference: nothing
stored to resume from) and from scikit-learn's own metric over the same predictions.
"""

import functools
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

from tests.helpers import NEAREST_MEAN, SPLIT_NEAREST_MEAN
from tests.helpers import run_config as _run

runner = CliRunner()


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
    _write(folder / f"{module}.py", NEAREST_MEAN.format(sign=sign, helper=helper))
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
    _write(folder / f"{module}.py", NEAREST_MEAN.format(sign=-1, helper=helper))
    result = _run(cfg, out, code=1)
    assert f"code.{module}:NearestMean: '{module}.py + {helper}.py sha256:" in result.output
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
    _write(folder / f"{module}.py", NEAREST_MEAN.format(sign=-1, helper=helper))
    second = estimator_class(name, str(folder))().fit(X, y).decision_function(X)
    np.testing.assert_array_equal(second, -first)


def test_a_setting_taken_out_of_the_config_is_said_as_the_config_s_not_as_a_default(tmp_path):
    """A built-in's setting deleted from the config (EEM's ``activation: rbf``): its value now is missing, not a
    default the identity recorded (a built-in's are not): said "None in the config", never "(the estimator's
    default)" (which a review found said so of EEM, whose default is 'sig')."""
    from typer.testing import CliRunner

    from eemrepro.cli import app

    cfg, out = tmp_path / "d.yaml", tmp_path / "o"
    text = "name: d\ndatasets: [heart]\nmodels:\n  EEM: {estimator: EEM, activation: rbf, grid: {n_hidden: [3]}}\n" \
           "protocol: {folds: 2, repeats: 1}\n"
    cfg.write_text(text)
    assert CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"]).exit_code == 0
    cfg.write_text(text.replace(", activation: rbf", ""))
    result = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"])
    assert result.exit_code == 1 and "EEM on heart: params.activation: 'rbf' stored, None in the config\n" in \
        result.output, result.output


def test_a_worker_refuses_a_module_changed_after_the_run_was_planned(tmp_path):
    """The code a record names is the code that made it: a module edited mid-run fails its fits, naming why."""
    folder, module, helper = _folder(tmp_path)
    name = f"{module}:NearestMean"
    planned = estimator_code(name, str(folder))
    _write(folder / f"{module}.py", NEAREST_MEAN.format(sign=-1, helper=helper))
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
    # (the value now is the estimator's default: the config does not say it)
    assert "params.scale: 1.0 stored, 2.0 now (the estimator's default)" in result.output
    _run(cfg, out, "--rerun-changed")
    _run(cfg, tmp_path / "fresh")
    assert np.array_equal(_gmeans(out), _gmeans(tmp_path / "fresh"))



def test_a_per_dataset_parameter_changed_is_said_as_the_config_s_on_that_data_set(tmp_path):
    """``per_dataset: {heart: {scale: ...}}`` changed: the value is the config's on heart (the model's own
    parameters leave ``scale`` at its default, so judging by them, or by no data set, would call it the
    estimator's default)."""
    folder, module, _ = _folder(tmp_path)
    cfg, out = _config(folder, module), tmp_path / "out"
    text = cfg.read_text().replace("grid: {shrink: [0.0, 0.5]}}", "grid: {shrink: [0.0, 0.5]}, "
                                   "per_dataset: {heart: {scale: 3.0}}}")
    cfg.write_text(text)
    _run(cfg, out)
    cfg.write_text(text.replace("scale: 3.0", "scale: 4.0"))
    result = _run(cfg, out, code=1)
    assert "  NM on heart: params.scale: 3.0 stored, 4.0 in the config\n" in result.output


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
    _write(folder / f"{module}.py", NEAREST_MEAN.format(sign=-1, helper=helper))
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
    # protocol.fit_threads changes rounding only (tests/experiments/test_jobs_determinism.py: the same records at 1
    # and 2).
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

    config = load_config(Path(__file__).resolve().parents[2] / "results" / "uci" / "config.yaml")
    kind = get_kind(config.kind)
    unit = kind.units(replace(config, datasets=config.datasets[:1]))[0]
    assert cell_identity(kind, config, unit) == kind.identity(config, unit)


# -- the code is what the import loaded (issue 65) ----------------------------------------------------------

HELPER = "import numpy as np\n\n\ndef distance(X, m):\n    return {sign}np.abs(X - m).sum(axis=1)\n"


def _split_plugin(tmp_path):
    """A plug-in split into two modules beside its config: ``clf_*.py`` and ``helper_*.py``."""
    folder = tmp_path / "mine"
    folder.mkdir()
    module, helper = f"clf_{uuid.uuid4().hex[:8]}", f"helper_{uuid.uuid4().hex[:8]}"
    _write(folder / f"{helper}.py", HELPER.format(sign=""))
    _write(folder / f"{module}.py", SPLIT_NEAREST_MEAN.format(source=helper))
    return folder, module, helper


def test_a_helper_module_edited_alone_is_a_changed_identity(tmp_path):
    """The issue's finding 2, first case: ``from helper import distance`` beside the plug-in, the helper's sign
    flipped and nothing else: refused naming both files, counted not done by ``status``; --rerun-changed
    gives a fresh folder's numbers (the independent reference), which differ from the old ones."""
    folder, module, helper = _split_plugin(tmp_path)
    cfg, out = _config(folder, module), tmp_path / "out"
    _run(cfg, out)
    before = _gmeans(out)
    _write(folder / f"{helper}.py", HELPER.format(sign="-"))
    result = _run(cfg, out, code=1)
    assert f"code.{module}:NearestMean: '{module}.py + {helper}.py sha256:" in result.output
    assert "heart      NM       0/3" in runner.invoke(app, ["status", str(out)]).output
    _run(cfg, out, "--rerun-changed")
    _run(cfg, tmp_path / "fresh")
    assert np.array_equal(_gmeans(out), _gmeans(tmp_path / "fresh"))
    assert np.abs(_gmeans(out) - before).max() > 0.2


def test_a_helper_imported_earlier_by_another_plugin_is_still_covered(tmp_path):
    """A helper already in ``sys.modules`` (a second plug-in of the folder imported it first) is found through
    what the plug-in's module refers to, not only through what its own import loaded."""
    folder, module, helper = _split_plugin(tmp_path)
    other = f"other_{uuid.uuid4().hex[:8]}"
    _write(folder / f"{other}.py", SPLIT_NEAREST_MEAN.format(source=helper).replace("NearestMean", "Other"))
    estimator_class(f"{other}:Other", str(folder))
    code = estimator_code(f"{module}:NearestMean", str(folder))
    assert code.startswith(f"{module}.py + {helper}.py sha256:")
    assert estimator_code(f"{other}:Other", str(folder)).startswith(f"{other}.py + {helper}.py sha256:")


def test_a_package_beside_a_module_of_the_same_name_is_what_is_hashed(tmp_path):
    """``plug.py`` beside ``plug/``: Python imports the package, so the package's files are the code; an edit
    of the unused ``plug.py`` changes nothing, an edit of the package does."""
    folder = tmp_path / "mine"
    (folder / "plugpkg").mkdir(parents=True)
    name = f"plug_{uuid.uuid4().hex[:8]}"
    (folder / name).mkdir()
    _write(folder / name / "__init__.py", NEAREST_MEAN.format(sign=1, helper=f"{name}.defaults"))
    _write(folder / name / "defaults.py", "DEFAULT_SCALE = 1.0\n")
    _write(folder / f"{name}.py", "raise ImportError('the module file is not what Python imports')\n")
    est = f"{name}:NearestMean"
    first = estimator_code(est, str(folder))
    assert first.startswith(f"package {name} (2 files) sha256:")
    _write(folder / f"{name}.py", "# edited\n")
    assert estimator_code(est, str(folder)) == first
    _write(folder / name / "defaults.py", "DEFAULT_SCALE = 3.0\n")
    assert estimator_code(est, str(folder)) != first


def test_a_sourceless_module_of_a_plugin_package_is_part_of_its_code(tmp_path):
    """A module shipped as ``defaults.pyc`` alone (no ``defaults.py``) inside the plug-in's package is imported
    by Python's sourceless loader: recompiled with another value, the code is another (before, every ``.pyc`` was
    left out, and the old numbers came back). ``__pycache__`` stays out: it is Python's cache of the sources."""
    import py_compile

    folder = tmp_path / "mine"
    name = f"plug_{uuid.uuid4().hex[:8]}"
    (folder / name).mkdir(parents=True)
    _write(folder / name / "__init__.py", NEAREST_MEAN.format(sign=1, helper=f"{name}.defaults"))

    def compiled(scale):
        source = tmp_path / "defaults.py"
        source.write_text(f"DEFAULT_SCALE = {scale}\n")
        py_compile.compile(str(source), cfile=str(folder / name / "defaults.pyc"), doraise=True)

    compiled(1.0)
    est = f"{name}:NearestMean"
    first = estimator_code(est, str(folder))
    assert first.startswith(f"package {name} (2 files) sha256:")
    compiled(3.0)
    assert estimator_code(est, str(folder)) not in (None, first)


def test_a_namespace_package_is_covered_module_by_module(tmp_path):
    """A folder without ``__init__.py`` (a namespace package) beside the config: its modules are imported and
    hashed (before, no code at all was in the identity)."""
    folder = tmp_path / "mine"
    ns = f"ns_{uuid.uuid4().hex[:8]}"
    (folder / ns).mkdir(parents=True)
    _write(folder / ns / "defaults.py", "DEFAULT_SCALE = 1.0\n")
    _write(folder / ns / "clf.py", NEAREST_MEAN.format(sign=1, helper=f"{ns}.defaults"))
    est = f"{ns}.clf:NearestMean"
    first = estimator_code(est, str(folder))
    assert first.startswith("clf.py + defaults.py sha256:")
    _write(folder / ns / "defaults.py", "DEFAULT_SCALE = 2.0\n")
    assert estimator_code(est, str(folder)) not in (None, first)


def test_a_symlinked_subpackage_inside_a_plugin_package_is_followed(tmp_path):
    """A package whose subpackage is a symbolic link to a folder elsewhere: the linked files are the package's
    files (an edit there is a change)."""
    folder, elsewhere = tmp_path / "mine", tmp_path / "shared-code"
    name = f"linked_{uuid.uuid4().hex[:8]}"
    (folder / name).mkdir(parents=True)
    elsewhere.mkdir()
    _write(elsewhere / "__init__.py", "DEFAULT_SCALE = 1.0\n")
    (folder / name / "sub").symlink_to(elsewhere, target_is_directory=True)
    _write(folder / name / "__init__.py", NEAREST_MEAN.format(sign=1, helper=f"{name}.sub"))
    est = f"{name}:NearestMean"
    first = estimator_code(est, str(folder))
    assert first.startswith(f"package {name} (2 files) sha256:")
    _write(elsewhere / "__init__.py", "DEFAULT_SCALE = 5.0\n")
    assert estimator_code(est, str(folder)) != first


def test_a_link_back_into_a_plugin_package_is_walked_once_and_the_folders_after_it_still_are(tmp_path):
    """A package holding a symbolic link to itself (``again -> .``, as a build tool's workspace can): each real
    folder is listed once, the walk ends, and a subpackage walked after the link is still the package's code."""
    folder = tmp_path / "mine"
    name = f"cycle_{uuid.uuid4().hex[:8]}"
    (folder / name / "zsub").mkdir(parents=True)
    (folder / name / "again").symlink_to(folder / name, target_is_directory=True)
    _write(folder / name / "zsub" / "__init__.py", "DEFAULT_SCALE = 1.0\n")
    _write(folder / name / "__init__.py", NEAREST_MEAN.format(sign=1, helper=f"{name}.zsub"))
    est = f"{name}:NearestMean"
    first = estimator_code(est, str(folder))
    assert first.startswith(f"package {name} (2 files) sha256:")
    _write(folder / name / "zsub" / "__init__.py", "DEFAULT_SCALE = 5.0\n")
    assert estimator_code(est, str(folder)) not in (None, first)


def _editable(tmp_path, monkeypatch, prefix, packages, modules=(), missing=()):
    """An editable distribution ``<prefix>dist-<tag>`` on the import path: its source folder holds the
    ``packages`` (the first one the ``NearestMean`` plug-in's, the others ``VALUE = 1``) and ``modules``; its
    ``top_level.txt`` declares the ``missing`` names too, which are not there. Returns (source folder, the
    names with their tag, the tag)."""
    import importlib

    source, site = tmp_path / "project", tmp_path / "site"
    tag = uuid.uuid4().hex[:8]
    names = {n: f"{prefix}_{n}_{tag}" for n in (*packages, *modules, *missing)}
    for i, pkg in enumerate(packages):
        (source / names[pkg]).mkdir(parents=True)
        _write(source / names[pkg] / "__init__.py", "VALUE = 1\n" if i else NEAREST_MEAN.format(
            sign=1, helper="math").replace("from math import DEFAULT_SCALE", "DEFAULT_SCALE = 1.0"))
    for module in modules:
        _write(source / f"{names[module]}.py", "VALUE = 1\n")
    info = site / f"{prefix}dist_{tag}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {prefix}dist-{tag}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text("".join(f"{names[n]}\n" for n in (*missing, *packages, *modules)))
    (info / "RECORD").write_text("")
    (info / "direct_url.json").write_text(json.dumps({"url": source.as_uri(), "dir_info": {"editable": True}}))
    monkeypatch.syspath_prepend(str(source))
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    return source, names, tag


def test_an_editable_install_is_hashed_over_every_top_level_package_it_declares(tmp_path, monkeypatch):
    """An editable distribution declaring two top-level packages and a module (``top_level.txt``; two more
    names it declares are not there, one a dotted name whose parent is missing, which ``find_spec`` raises on,
    both sorted first): the plug-in lives in the first package, and an edit of the second package alone, or of
    the module alone, is a change (before, one package only was hashed)."""
    source, n, tag = _editable(tmp_path, monkeypatch, "edit", ["a", "b"], ["c"], missing=["0", "0.sub"])
    est = f"{n['a']}:NearestMean"
    first = estimator_code(est)
    assert first.startswith(f"editdist-{tag} 1.0 (editable) package {n['a']} + package {n['b']} + module "
                            f"{n['c']} (3 files) sha256:")
    _write(source / n["b"] / "__init__.py", "VALUE = 2\n")
    second = estimator_code(est)
    _write(source / f"{n['c']}.py", "VALUE = 2\n")
    assert len({first, second, estimator_code(est)}) == 3


def test_a_file_added_to_the_first_package_of_an_editable_install_is_a_change(tmp_path, monkeypatch):
    """An editable distribution of two packages: a module added to the first one (the plug-in's; no file of it
    edited) is new code the identity covers, as the second package's folder would tell."""
    source, n, _ = _editable(tmp_path, monkeypatch, "add", ["a", "b"])
    est = f"{n['a']}:NearestMean"
    assert "(2 files)" in estimator_code(est)
    _write(source / n["a"] / "extra.py", "VALUE = 3\n")
    assert "(3 files)" in estimator_code(est)


def test_a_distribution_installed_outside_site_packages_is_hashed_as_files(tmp_path, monkeypatch):
    """A distribution installed into a folder of its own (``pip install --target DIR``, on the import path): no
    editable record, not under site-packages; its files are hashed as a user's (an edit there is a change)."""
    import importlib

    target = tmp_path / "target"
    tag = uuid.uuid4().hex[:8]
    pkg = f"target_{tag}"
    (target / pkg).mkdir(parents=True)
    _write(target / pkg / "__init__.py", NEAREST_MEAN.format(sign=1, helper="math").replace(
        "from math import DEFAULT_SCALE", "DEFAULT_SCALE = 1.0"))
    info = target / f"targetdist_{tag}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: targetdist-{tag}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(f"{pkg}\n")
    (info / "RECORD").write_text("")
    monkeypatch.syspath_prepend(str(target))
    importlib.invalidate_caches()
    first = estimator_code(f"{pkg}:NearestMean")
    assert first.startswith(f"package {pkg} (1 file) sha256:")
    _write(target / pkg / "__init__.py", (target / pkg / "__init__.py").read_text() + "# edited\n")
    assert estimator_code(f"{pkg}:NearestMean") != first


def test_a_project_folder_installed_once_not_editable_and_run_from_is_its_own_files(tmp_path, monkeypatch):
    """A researcher installed their project once with ``pip install ./project`` (not ``-e``: ``direct_url.json``
    holds the folder's ``file://`` URL, no ``editable`` flag) and runs from the folder itself, which comes first
    on the import path: the module imported is the folder's, hashed as the user's files (``package X (1 file)``),
    an edit there a change, and the installed copy not named. (Taken for an editable install, it was named
    ``... (editable)`` over the distribution's declared packages: mutmut's ``_editable_source`` 9, ``or`` ->
    ``and``, survived the suite before this test.)"""
    import importlib

    target, source = tmp_path / "site", tmp_path / "project"
    tag = uuid.uuid4().hex[:8]
    pkg = f"local_{tag}"
    code = NEAREST_MEAN.format(sign=1, helper="math").replace("from math import DEFAULT_SCALE", "DEFAULT_SCALE = 1.0")
    for root in (target, source):
        (root / pkg).mkdir(parents=True)
        _write(root / pkg / "__init__.py", code)
    info = target / f"localdist_{tag}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: localdist-{tag}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(f"{pkg}\n")
    (info / "RECORD").write_text("")
    (info / "direct_url.json").write_text(json.dumps({"url": source.as_uri(), "dir_info": {}}))
    monkeypatch.syspath_prepend(str(target))
    monkeypatch.syspath_prepend(str(source))
    importlib.invalidate_caches()
    first = estimator_code(f"{pkg}:NearestMean")
    assert first.startswith(f"package {pkg} (1 file) sha256:")
    _write(source / pkg / "__init__.py", code + "# edited in the project\n")
    assert estimator_code(f"{pkg}:NearestMean") != first


@pytest.mark.slow
def test_the_code_of_a_module_identifies_itself_in_a_worker_as_in_the_plan(tmp_path):
    """The code a fresh process finds (a worker imports the plug-in anew) is the code the planning process
    found, whatever that process had imported before: the text is compared for equality."""
    import subprocess
    import sys

    folder, module, helper = _split_plugin(tmp_path)
    name = f"{module}:NearestMean"
    here = estimator_code(name, str(folder))
    probe = (f"from eemrepro.models._lookup import estimator_code; import {helper}; "  # the helper loaded first
             f"print(estimator_code({name!r}, {str(folder)!r}))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(Path(__file__).resolve().parents[2])]))
    there = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert there.stdout.strip() == here


@pytest.mark.slow
def test_a_packages_code_does_not_depend_on_which_of_its_modules_this_process_imported(tmp_path):
    """The import system binds every imported submodule on its package: a submodule this process imported
    for another reason (one that imports an installed distribution) must not enter the plug-in's code, or
    the planning process and a fresh worker would disagree (a worker refuses every unit then)."""
    import importlib
    import subprocess
    import sys

    folder = tmp_path / "mine"
    pkg = f"pk_{uuid.uuid4().hex[:8]}"
    (folder / pkg).mkdir(parents=True)
    _write(folder / pkg / "__init__.py", "")
    _write(folder / pkg / "defaults.py", "DEFAULT_SCALE = 1.0\n")
    _write(folder / pkg / "clf.py", NEAREST_MEAN.format(sign=1, helper=f"{pkg}.defaults"))
    _write(folder / pkg / "extra.py", "import hypothesis\n")
    name = f"{pkg}.clf:NearestMean"
    estimator_class(name, str(folder))
    sys.path.insert(0, str(folder))
    try:
        importlib.import_module(f"{pkg}.extra")  # imported here, never by the plug-in
    finally:
        sys.path.remove(str(folder))
    here = estimator_code(name, str(folder))
    assert here.startswith(f"package {pkg} (4 files) sha256:") and "hypothesis" not in here
    probe = f"from eemrepro.models._lookup import estimator_code; print(estimator_code({name!r}, {str(folder)!r}))"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    there = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert there.stdout.strip() == here


# -- parameters by value ----------------------------------------------------------------------------------

#: A plug-in whose defaults are values a ``repr`` describes badly: a 2,000-element array read from a file
#: beside it (cut at 1,000 elements and 8 digits by numpy's repr), a function, a random state and a
#: frozenset (whose reprs change from one process to the next).
VALUED = textwrap.dedent('''
    from pathlib import Path

    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin

    WEIGHTS = np.loadtxt(Path(__file__).with_name("weights.txt"))


    def absolute(x):
        return np.abs(x)


    class Weighted(ClassifierMixin, BaseEstimator):
        def __init__(self, shrink=0.0, weights=WEIGHTS, link=absolute, random_state=np.random.RandomState(0),
                     tags=frozenset({"alpha", "beta", "gamma", "delta"})):
            self.shrink, self.weights, self.link = shrink, weights, link
            self.random_state, self.tags = random_state, tags

        def fit(self, X, y):
            self.classes_ = np.unique(y)
            w = self.weights[: X.shape[1]]
            self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_]) * w * (1 - self.shrink)
            return self

        def decision_function(self, X):
            w = self.weights[: X.shape[1]]
            d = [self.link(X * w - m).sum(axis=1) for m in self.means_]
            return d[0] - d[1]

        def predict(self, X):
            return self.classes_[(self.decision_function(X) > 0).astype(int)]
''')


def _valued_folder(tmp_path, weights):
    folder = tmp_path / "mine"
    folder.mkdir(exist_ok=True)
    module = "valued_clf"
    np.savetxt(folder / "weights.txt", weights)
    _write(folder / f"{module}.py", VALUED)
    path = folder / "bench.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: bench
        datasets: [heart]
        models:
          W: {{estimator: "{module}:Weighted", grid: {{shrink: [0.0, 0.5]}}}}
        protocol: {{folds: 3, repeats: 1, seed: 5}}
        """))
    return path


def _cli(*args, seed):
    """``python -m eemrepro ...`` in a fresh process (string hashing seeded ``seed``), as a user runs it."""
    import subprocess
    import sys

    env = dict(os.environ, PYTHONHASHSEED=str(seed),
               PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "eemrepro", *map(str, args)], capture_output=True, text=True,
                          env=env)


@pytest.mark.slow
def test_defaults_a_repr_describes_badly_resume_in_a_new_process_and_change_by_value(tmp_path):
    """The issue's finding 3 both ways. A function, a random state and a frozenset default: the same command
    in a new process (another string-hashing seed) resumes, ``status`` says done. A 2,000-element array
    default changed at element 1,000 by 1e-9 (below numpy's printed digits, past its 1,000-element cut):
    refused naming the parameter."""
    weights = np.ones(2000)
    cfg, out = _valued_folder(tmp_path, weights), tmp_path / "out"
    first = _cli("run", cfg, "--out", out, "--jobs", "1", "--quiet", seed=1)
    assert first.returncode == 0, first.stderr + first.stdout
    identity = json.loads(read_results(out, columns=["identity"])["identity"].iloc[0])
    assert identity["params.weights"].startswith("array(float64, shape (2000,)) joblib:")
    assert identity["params.link"].startswith("function valued_clf.absolute joblib:")
    again = _cli("run", cfg, "--out", out, "--jobs", "1", seed=2)
    assert again.returncode == 0 and "(3 were stored)" in again.stdout and "nothing to do" in again.stdout
    assert "heart      W        3/3" in _cli("status", out, seed=3).stdout
    weights[1000] += 1e-9
    np.savetxt(tmp_path / "mine" / "weights.txt", weights, fmt="%.17g")
    changed = _cli("run", cfg, "--out", out, "--jobs", "1", seed=4)
    assert changed.returncode == 1
    assert "params.weights: 'array(float64, shape (2000,)) joblib:" in changed.stdout + changed.stderr


def test_a_parameter_value_is_identified_by_value_the_same_in_every_process():
    """``value_digest``: equal values give equal digests (a set in any order, a copy of an array), another
    value another digest (the last bit of one element, another dtype, another function)."""
    from eemrepro.experiments._identity import _plain, value_digest

    a = np.linspace(0, 1, 2000)
    b = a.copy()
    b[1500] = np.nextafter(b[1500], 2)
    assert value_digest(a) == value_digest(a.copy()) != value_digest(b) != value_digest(a.astype(np.float32))
    assert value_digest(frozenset("abcdef")) == value_digest(frozenset("fedcba")) != value_digest(frozenset("abc"))
    assert value_digest(np.abs) != value_digest(np.sum)
    assert value_digest(lambda x: x) == value_digest(lambda x: x)  # two lambdas of one place: module + name
    assert value_digest({2: "two", 1: "one"}) == value_digest({1: "one", 2: "two"}) != value_digest({1: "two"})
    assert value_digest(frozenset({1, "a", None})) == value_digest(frozenset({None, "a", 1}))  # unorderable mixed
    # An object that cannot be pickled (it holds a lambda): by its type and its attributes' values.
    holder = type("Holder", (), {})
    one, other = holder(), holder()
    one.f, one.k, other.f, other.k = (lambda x: x), 1, (lambda x: x), 2
    assert value_digest(one) != value_digest(other)
    other.k = 1
    assert value_digest(one) == value_digest(other)
    assert _plain([1, 2.5, "a", None]) == [1, 2.5, "a", None]  # JSON values as they were
    assert _plain(list(range(40))).startswith("list of 40 joblib:")
    # numpy's scalars as the Python values they equal (a default of np.int64(3) or np.True_ read as 3 or True):
    # switching between the two is no change; np.float32(0.1) is another value than 0.1.
    assert [_plain(v) for v in (np.int64(3), np.True_, np.False_, np.float64(0.5))] == [3, True, False, 0.5]
    assert all(type(_plain(v)) is type(w) for v, w in ((np.int64(3), 3), (np.True_, True), (np.float64(0.5), 0.5)))
    assert _plain(np.float32(0.1)) != _plain(0.1)


def test_a_speed_only_parameter_changed_in_the_config_resumes(tmp_path):
    """A parameter the estimator says changes speed only (``_speed_only_params``: LIBSVM's cache size) is not
    in the identity: a config that raises it resumes from the stored records instead of refusing them."""
    folder = tmp_path / "mine"
    folder.mkdir()
    module = f"cached_{uuid.uuid4().hex[:8]}"
    _write(folder / f"{module}.py", NEAREST_MEAN.format(sign=1, helper="math").replace(
        "from math import DEFAULT_SCALE", "DEFAULT_SCALE = 1.0").replace(
        "def __init__(self, shrink=0.0, scale=DEFAULT_SCALE):",
        "_speed_only_params = ('cache_size',)\n\n    def __init__(self, shrink=0.0, scale=DEFAULT_SCALE, "
        "cache_size=100):\n        self.cache_size = cache_size"))
    cfg, out = _config(folder, module), tmp_path / "out"
    _run(cfg, out)
    cfg.write_text(cfg.read_text().replace("grid: {shrink: [0.0, 0.5]}", "grid: {shrink: [0.0, 0.5]}, "
                                           "cache_size: 400"))
    result = _run(cfg, out)
    assert "(3 were stored)" in result.output and "nothing to do" in result.output, result.output
    identity = json.loads(read_results(out, columns=["identity"])["identity"].iloc[0])
    assert not any("cache_size" in k for k in identity)


def test_code_of_reads_every_estimators_code_from_an_identity():
    """What a worker checks its imported module against: every ``code.<estimator>`` key, by its full name."""
    from eemrepro.experiments._identity import code_of

    identity = {"code.my_clf:KNM": "my_clf.py sha256:1", "code.x": "x 1.0 sha256:2", "params.code": 1}
    assert code_of(identity) == {"my_clf:KNM": "my_clf.py sha256:1", "x": "x 1.0 sha256:2"}
    assert code_of(None) == {}


#: What ``_plain`` stored for these values when parameter identities were first taken by value (issue 65). A
#: store keeps these texts in its records: a change of the canonical form (a tag renamed, an order changed, the
#: readable part reworded) makes every stored record of a user's estimator with such a parameter a changed
#: identity, so it must be a deliberate break, not a side effect. Only values whose digest depends on Python's
#: own pickling and numpy's float64 layout are pinned (a random state's pickle is numpy's to change).
PINNED = {
    "array": (np.arange(2000, dtype=np.float64) / 7,
              "array(float64, shape (2000,)) joblib:82069d60c5b4b92962f296be46a24d1d"),
    "frozenset": (frozenset({"alpha", "beta", "gamma"}), "frozenset of 3 joblib:31910552265312d8458bf87f64123d35"),
    "set": ({3, 1, 2}, "set of 3 joblib:67253e4eed610964b8eac35e6371370f"),
    "dict": ({2: "two", 1: "one"}, "dict of 2 joblib:008b3b5fc399a57c1dc214a04e725f8d"),
    # Keys whose digest order (1, 3, 2) is not their natural order: the canonical form sorts by digest.
    "dict of three": ({3: "three", 1: "one", 2: "two"}, "dict of 3 joblib:6dc6b8edf39f66e5f6bf694b441b7a3f"),
    "long list": (list(range(40)), "list of 40 joblib:b82ebe59de3c3a879f602429a0ae0424"),
    "class": (np.ndarray, "type numpy.ndarray joblib:3d2b0d0ff47b3b77d1042903cb2ee812"),
    "partial": (functools.partial(round, ndigits=2), "partial joblib:e0d6e356cf6641b8b3a7116c59aa2955"),
    # An object array (scikit-learn's encoders take such ``categories``): its elements in place, with its shape.
    "object array": (np.array([["b", "a"], ["c", 1]], dtype=object),
                     "array(object, shape (2, 2)) joblib:29d5b777df5689b50852e3b3d64b67bc"),
}


def _unpicklable(slots):
    """An object a lock makes unpicklable, of a class of a user's module: told by its type and attributes (a
    ``__slots__`` class has none to tell)."""
    import threading

    body = {"__slots__": ("lock",)} if slots else {}
    cls = type("Slotted" if slots else "Holder", (), {**body, "__module__": "my_estimators"})
    value = cls()
    value.lock = threading.Lock()
    if not slots:
        value.scale = 2.5
    return value


PINNED["object"] = (_unpicklable(False), "Holder joblib:773ae0b8da45a83db7e75709ba6541ae")
PINNED["object with slots"] = (_unpicklable(True), "Slotted joblib:e465fd4a72e4d521cb353e9417b29c1a")


class _Scaler:
    def __init__(self, factor):
        self.factor = factor

    def apply(self, x):
        return x * self.factor


def test_a_bound_method_parameter_is_told_by_its_objects_state():
    # A user's estimator given ``transform=Scaler(2).apply``: rerun with ``Scaler(3).apply`` it computes
    # something else, so its identity must differ; a new object in the same state is the same setting.
    from eemrepro.experiments._identity import _plain

    assert _plain(_Scaler(2).apply) != _plain(_Scaler(3).apply)
    assert _plain(_Scaler(2).apply) == _plain(_Scaler(2).apply)
    assert _plain(_Scaler(2).apply).startswith(f"method {__name__}._Scaler.apply joblib:")


@pytest.mark.parametrize("kind", sorted(PINNED))
def test_a_parameters_stored_identity_is_the_same_from_one_release_to_the_next(kind):
    from eemrepro.experiments._identity import _plain

    value, stored = PINNED[kind]
    assert _plain(value) == stored


def test_a_parameter_is_judged_by_its_stored_text_a_nan_resumes_and_1_to_1_0_is_said(tmp_path):
    """A NaN default (``fill=math.nan``, a "not set" mark) is equal to itself as stored: the same command
    resumes (it refused every time, "nan stored, nan in the config"). A fixed ``scale: 1`` edited to ``1.0``
    is another identity text (another record digest): the run refuses naming it, as ``status`` counts it,
    where it reran the cell silently beside its old records while ``status`` said done."""
    folder, module, helper = _folder(tmp_path)
    _write(folder / f"{module}.py", NEAREST_MEAN.format(sign=1, helper=helper).replace(
        "def __init__(self, shrink=0.0, scale=DEFAULT_SCALE):",
        "def __init__(self, shrink=0.0, scale=DEFAULT_SCALE, fill=float('nan')):\n        self.fill = fill"))
    cfg, out = _config(folder, module), tmp_path / "out"
    _run(cfg, out)
    assert json.loads(read_results(out, columns=["identity"])["identity"].iloc[0])["params.fill"] != 0  # NaN
    again = _run(cfg, out)
    assert "(3 were stored)" in again.output and "nothing to do" in again.output, again.output
    cfg.write_text(cfg.read_text().replace("grid: {shrink: [0.0, 0.5]}", "grid: {shrink: [0.0, 0.5]}, scale: 1"))
    _run(cfg, out, "--rerun-changed")
    cfg.write_text(cfg.read_text().replace("scale: 1", "scale: 1.0"))
    result = _run(cfg, out, code=1)
    assert "params.scale: 1 stored, 1.0 in the config" in result.output
    assert len(read_results(out, columns=["status"])) == 3 * 2  # nothing run beside the stored records


#: ``SPLIT_NEAREST_MEAN`` whose helper is loaded by its path (``importlib.util.spec_from_file_location``, as
#: research code loads a file of its own by path): a module the import system ran that ``sys.modules`` never
#: names.
BY_PATH = SPLIT_NEAREST_MEAN.replace("from {source} import distance", textwrap.dedent("""\
    import importlib.util
    import pathlib

    _spec = importlib.util.spec_from_file_location(
        "distances", pathlib.Path(__file__).parent / "lib" / "distances.py")
    _lib = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_lib)
    distance = _lib.distance"""))


def test_a_module_loaded_by_its_path_is_covered(tmp_path):
    """A helper the plug-in loads by its path, never put in ``sys.modules``, flipped alone: refused naming it
    (the old records came back, "nothing to do", where a fresh folder scores otherwise)."""
    folder = tmp_path / "mine"
    (folder / "lib").mkdir(parents=True)
    module = f"bypath_{uuid.uuid4().hex[:8]}"
    _write(folder / "lib" / "distances.py", HELPER.format(sign=""))
    _write(folder / f"{module}.py", BY_PATH)
    cfg, out = _config(folder, module), tmp_path / "out"
    _run(cfg, out)
    before = _gmeans(out)
    _write(folder / "lib" / "distances.py", HELPER.format(sign="-"))
    result = _run(cfg, out, code=1)
    assert f"code.{module}:NearestMean: '{module}.py + distances.py sha256:" in result.output
    _run(cfg, out, "--rerun-changed")
    _run(cfg, tmp_path / "fresh")
    assert np.array_equal(_gmeans(out), _gmeans(tmp_path / "fresh"))
    assert np.abs(_gmeans(out) - before).max() > 0.2


def test_a_frozenset_inside_an_object_parameter_has_one_digest_in_every_process():
    """A dataclass default holding a frozenset of names (``Options(skip=frozenset({...}))``): ``joblib.hash``
    pickles a frozenset in its iteration order, which string hashing changes per process, so every later run
    refused the stored records ('Options joblib:7f68... stored, Options joblib:db42... in the config'). Four
    processes, four string-hashing seeds: one digest, and another set another digest."""
    import subprocess
    import sys

    code = textwrap.dedent("""\
        import dataclasses, sys
        from eemrepro.experiments._identity import _plain

        @dataclasses.dataclass(frozen=True)
        class Options:
            skip: frozenset
            nested: tuple

        names = frozenset(sys.argv[1].split(","))
        print(_plain(Options(names, ({"k": names},))))
        """)
    root = str(Path(__file__).resolve().parents[2])

    def digest(names, seed):
        env = dict(os.environ, PYTHONHASHSEED=str(seed), PYTHONPATH=root)
        done = subprocess.run([sys.executable, "-c", code, names], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    seen = {digest("alpha,beta,gamma,delta,epsilon", seed) for seed in (1, 2, 3, 4)}
    assert len(seen) == 1 and next(iter(seen)).startswith("Options joblib:")
    assert digest("alpha,beta,gamma,delta", 1) not in seen


def test_a_function_of_a_module_loaded_by_its_path_is_covered_without_its_module(tmp_path):
    """The plug-in keeps only the function (``distance = _load()``; the module object is local to ``_load``):
    found through the function's own globals, not its module's name, which ``sys.modules`` does not hold."""
    folder = tmp_path / "mine"
    (folder / "lib").mkdir(parents=True)
    module = f"bypath_{uuid.uuid4().hex[:8]}"
    _write(folder / "lib" / "distances.py", HELPER.format(sign=""))
    _write(folder / f"{module}.py", BY_PATH.replace("_spec = ", "def _load():\n    _spec = ").replace(
        "\n_lib = ", "\n    _lib = ").replace("\n_spec.loader", "\n    _spec.loader").replace(
        "distance = _lib.distance", "    return _lib.distance\n\n\ndistance = _load()"))
    first = estimator_code(f"{module}:NearestMean", str(folder))
    assert first.startswith(f"{module}.py + distances.py sha256:")
    _write(folder / "lib" / "distances.py", HELPER.format(sign="-"))
    assert estimator_code(f"{module}:NearestMean", str(folder)) not in (None, first)


#: ``NEAREST_MEAN`` with a default ``blob``: the text of ``blob.txt`` beside it, read at import (a base64 key, a
#: serialized vocabulary: a long text a researcher keeps as a default). Only the text file changes between
#: runs, so the module's code stays the same and ``params.blob`` alone can differ.
LONG_DEFAULT = NEAREST_MEAN.format(sign=1, helper="math").replace(
    "from math import DEFAULT_SCALE", "from pathlib import Path\n\nDEFAULT_SCALE = 1.0\n"
    "BLOB = Path(__file__).with_name('blob.txt').read_text()").replace(
    "def __init__(self, shrink=0.0, scale=DEFAULT_SCALE):",
    "def __init__(self, shrink=0.0, scale=DEFAULT_SCALE, blob=BLOB):\n        self.blob = blob")


def _blob(n=2_000_000, seed=0):
    """``n`` characters of base64 text (of ``3 n / 4`` random bytes), as ``base64.b64encode`` writes a key."""
    import base64

    return base64.b64encode(np.random.default_rng(seed).bytes(n * 3 // 4)).decode()


def _changed_in_the_middle(text):
    middle = len(text) // 2
    return text[:middle] + ("A" if text[middle] != "A" else "B") + text[middle + 1:]


@pytest.mark.slow
def test_a_long_string_default_is_held_bounded_and_a_change_in_its_middle_is_refused(tmp_path):
    """The re-probe's N1: a default of 2,000,000 base64 characters was stored as it is in every record's
    identity (2,000,210 characters each, 1.5 MB of Parquet for 3 records), and after one character of it
    changed, ``status`` printed one refusal line of 4,000,879 bytes. Now a record's identity stays under
    2,000 characters (the parameter is its readable form and digest), the change of the one middle character is
    still refused naming ``params.blob`` in a message as short, and a fresh process (another string-hashing
    seed) resumes from the stored records."""
    folder = tmp_path / "mine"
    folder.mkdir()
    module = f"long_{uuid.uuid4().hex[:8]}"
    blob = _blob()
    _write(folder / "blob.txt", blob)
    _write(folder / f"{module}.py", LONG_DEFAULT)
    cfg, out = _config(folder, module), tmp_path / "out"
    first = _cli("run", cfg, "--out", out, "--jobs", "1", "--quiet", seed=1)
    assert first.returncode == 0, first.stderr + first.stdout
    texts = read_results(out, columns=["identity"])["identity"]
    assert len(texts) == 6 and texts.str.len().max() < 2_000
    stored = json.loads(texts.iloc[0])["params.blob"]
    assert stored.startswith(f"str of 2000000 characters {blob[:24]!r}... joblib:")
    again = _cli("run", cfg, "--out", out, "--jobs", "1", seed=2)
    assert again.returncode == 0 and "nothing to do" in again.stdout, again.stdout + again.stderr
    _write(folder / "blob.txt", _changed_in_the_middle(blob))
    status = _cli("status", out, seed=3)
    assert "heart      NM       0/3" in status.stdout and len(status.stdout + status.stderr) < 4_000
    refused = _cli("run", cfg, "--out", out, "--jobs", "1", seed=4)
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1 and len(said) < 4_000, said[:2_000]
    assert f"params.blob: {stored!r} stored, {f'str of 2000000 characters {blob[:24]!r}... joblib:'!r}"[:-1] in said
    assert "code." not in said  # the module's code is the same: the parameter alone is named


def test_a_long_text_anywhere_in_a_parameter_is_held_by_its_digest_and_a_short_one_as_it_is():
    """The neighbours of N1, each bounded by the one rule (a value whose JSON text in the identity is over
    2,000 characters is its readable form and digest, as a
    long feature-column list is) and each told apart by one character in its middle:
    bytes, a long string in a tuple, as a dict's value and as a dict's key, 32 long strings (the lists'
    bound), lists of 32 nested three deep. A string whose JSON text is exactly 2,000 characters stays as it is."""
    from eemrepro.experiments._identity import _plain

    text = _blob(5_000)
    other = _changed_in_the_middle(text)
    deep, deep_other = [text[:20]] * 32, [text[:20]] * 31 + [text[:19] + "!"]  # a change deep inside
    for _ in range(2):
        deep, deep_other = [deep] * 32, [deep] * 31 + [deep_other]
    pairs = {"str": (text, other), "bytes": (text.encode(), other.encode()), "tuple": (("a", text), ("a", other)),
             "dict value": ({"k": text}, {"k": other}), "dict key": ({text: 1}, {other: 1}),
             "32 strings": ([text] * 32, [text] * 31 + [other]), "nested": (deep, deep_other)}
    for kind, (value, changed) in pairs.items():
        held = _plain(value)
        assert len(json.dumps(held)) < 2_000 + 100, kind
        assert held != _plain(changed), kind
        assert held == _plain(value), kind
    assert _plain(("a", text))[0] == "a" and _plain(("a", text))[1] == _plain(text)  # the short part readable
    assert _plain({"k": text}) == {"k": _plain(text)}
    assert _plain(text) == f"str of 5000 characters {text[:24]!r}... joblib:{_plain(text).rsplit(':', 1)[1]}"
    assert _plain("x" * 1998) == "x" * 1998 and _plain("x" * 1999).startswith("str of 1999 characters")
    # Measured as a record stores it (JSON with ASCII escapes: "\\u00e9", six characters an accented letter), so
    # that the stored identity is bounded whatever the alphabet: 333 of them are 2,000 characters, 334 are held.
    assert _plain("é" * 333) == "é" * 333 and _plain("é" * 334).startswith("str of 334 characters")
    assert _plain(["x" * 400, "y" * 400]) == ["x" * 400, "y" * 400]


def test_a_long_text_the_config_sets_is_held_bounded_and_what_it_writes_short_stays_readable(tmp_path):
    """The same rule for a value the user wrote in the config (``blob: <4,000 characters>``): each record's
    identity holds its readable form and digest, and one character changed in its middle is refused naming
    ``params.blob`` in a short message. A short text and a list of 40 numbers stay as written (the config's
    own words; the lists' 32-item bound is for a default's values, and was never a config's)."""
    folder = tmp_path / "mine"
    folder.mkdir()
    module = f"long_{uuid.uuid4().hex[:8]}"
    _write(folder / "blob.txt", "short")
    _write(folder / f"{module}.py", LONG_DEFAULT.replace("shrink=0.0,", "shrink=0.0, weights=None,").replace(
        "self.blob = blob", "self.blob, self.weights = blob, weights"))
    blob = _blob(4_000)
    cfg, out = folder / "bench.yaml", tmp_path / "out"
    cfg.write_text(textwrap.dedent(f"""\
        name: bench
        datasets: [heart]
        models:
          NM: {{estimator: "{module}:NearestMean", blob: "{blob}", weights: {list(range(40))}}}
          Short: {{estimator: "{module}:NearestMean", blob: "{"x" * 1998}"}}
        protocol: {{folds: 3, repeats: 1, seed: 5}}
        """))
    _run(cfg, out)
    frame = read_results(out, columns=["model", "identity"]).drop_duplicates("model").set_index("model")
    held = json.loads(frame.loc["NM", "identity"])
    assert held["params.blob"].startswith(f"str of 4000 characters {blob[:24]!r}... joblib:")
    assert held["params.weights"] == list(range(40)) and len(frame.loc["NM", "identity"]) < 1_000
    assert json.loads(frame.loc["Short", "identity"])["params.blob"] == "x" * 1998
    cfg.write_text(cfg.read_text().replace(blob, _changed_in_the_middle(blob)))
    result = _run(cfg, out, code=1)
    assert f"params.blob: {held['params.blob']!r} stored, " in result.output and len(result.output) < 1_500


def _models_config(folder, models, name="bench"):
    """A config in ``folder`` running each of ``models`` ({model: estimator}) on heart over shrink 0.0 and 0.5,
    3 folds: three units a model."""
    lines = "".join(f'  {m}: {{estimator: "{e}", grid: {{shrink: [0.0, 0.5]}}}}\n' for m, e in models.items())
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\ndatasets: [heart]\nmodels:\n{lines}protocol: {{folds: 3, repeats: 1, seed: 5}}\n")
    return path


def _statuses(out):
    """{model: the statuses its records hold, sorted}."""
    df = read_results(out, columns=["model", "status"])
    return df.groupby("model", observed=True)["status"].agg(lambda s: sorted(set(s))).to_dict()


#: ``SPLIT_NEAREST_MEAN`` whose helper is imported inside ``decision_function``, not when the module is: the import
#: of the plug-in never loads it, so no identity made from that import can hold its code.
LAZY = SPLIT_NEAREST_MEAN.replace("from {source} import distance\n", "").replace(
    "    def decision_function(self, X):\n",
    "    def decision_function(self, X):\n        from {source} import distance\n")


def test_a_helper_imported_inside_a_method_fails_the_fits_saying_where_to_import_it(tmp_path, monkeypatch):
    """A helper on the import path that the plug-in imports only inside ``decision_function``: before, every
    record was ``ok`` under an identity without the helper, and the helper's edit came back as "nothing to do"
    with the old numbers. Now every fit fails saying which module and where to import it (the three units of
    one fit process alike: the first imports it, the later ones find it imported). Moved to the top, it is in
    the identity: the run refuses the changed code, and --rerun-changed gives a fresh folder's numbers."""
    folder, module, helper = _split_plugin(tmp_path)
    _write(folder / f"{module}.py", LAZY.format(source=helper))
    monkeypatch.syspath_prepend(str(folder))
    cfg, out = _config(folder, module), tmp_path / "out"
    _run(cfg, out)
    df = read_results(out, columns=["status", "error_message"])
    assert len(df) == 3 * 2 and (df["status"] == "failed").all()
    assert set(df["error_message"]) == {
        f"the fit imported {helper} ({helper}.py), code of yours that importing {module} does not load, so no "
        f"record could say when it changes; import it at the top of {module} (or of a module it imports)"}
    _write(folder / f"{module}.py", SPLIT_NEAREST_MEAN.format(source=helper))
    result = _run(cfg, out, code=1)
    assert f"'{module}.py + {helper}.py sha256:" in result.output
    _run(cfg, out, "--rerun-changed")
    _run(cfg, tmp_path / "fresh")
    assert np.array_equal(_gmeans(out), _gmeans(tmp_path / "fresh"))


def test_a_module_of_the_plugins_package_or_of_a_distribution_imported_inside_a_method_is_held(tmp_path):
    """The neighbours that stay ``ok``: a module of the plug-in's own package imported inside a method (every
    file of the package is in its identity), one of the tool's environment (scikit-learn: its version is in
    every record) and one of another installed distribution (cycler; its version is not in the identity, which
    the docs say)."""
    pytest.importorskip("cycler")
    folder = tmp_path / "mine"
    package = f"pkg_{uuid.uuid4().hex[:8]}"
    (folder / package).mkdir(parents=True)
    _write(folder / package / "__init__.py", "")
    _write(folder / package / "distances.py", HELPER.format(sign=""))
    lazy = LAZY.format(source=f"{package}.distances").replace(
        "        from",
        "        import cycler  # noqa: F401\n        import sklearn.neighbors  # noqa: F401\n        from")
    _write(folder / package / "model.py", lazy)
    cfg, out = _config(folder, f"{package}.model"), tmp_path / "out"
    _run(cfg, out)
    assert (read_results(out, columns=["status"])["status"] == "ok").all()


def test_a_lazy_import_fails_the_fits_of_the_estimator_that_made_it_and_no_other(tmp_path, monkeypatch):
    """Two user models in one config, one fit process: A imports its helper inside a method, B never does. Only
    A's fits fail; B's, which run after A's in the same process and find the helper imported, stay ``ok`` (a
    first version remembered the module for every later fit of the process and failed B's too)."""
    folder, module, helper = _split_plugin(tmp_path)
    _write(folder / f"{module}.py", LAZY.format(source=helper))
    clean, defaults = f"clean_{uuid.uuid4().hex[:8]}", f"defaults_{uuid.uuid4().hex[:8]}"
    _write(folder / f"{defaults}.py", "DEFAULT_SCALE = 1.0\n")
    _write(folder / f"{clean}.py", NEAREST_MEAN.format(sign=1, helper=defaults))
    monkeypatch.syspath_prepend(str(folder))
    _run(_models_config(folder, {"A": f"{module}:NearestMean", "B": f"{clean}:NearestMean"}), tmp_path / "out")
    assert _statuses(tmp_path / "out") == {"A": ["failed"], "B": ["ok"]}


def test_a_helper_imported_when_the_estimator_is_built_with_a_configs_value_fails_its_fits(tmp_path, monkeypatch):
    """An import inside ``__init__`` that only a value the config sets takes: the config's checks and the plan
    build the estimator with that value before any fit, so the helper was imported when the fit process
    started, and (judged by what was new in ``sys.modules``) every record was ``ok`` without it in the identity
    and an edit of it came back as "nothing to do". The fit's own building asks for it again: failed."""
    folder, module, helper = _split_plugin(tmp_path)
    built = SPLIT_NEAREST_MEAN.replace("from {source} import distance\n", "").replace(
        "    def __init__(self, shrink=0.0):\n        self.shrink = shrink\n",
        "    def __init__(self, shrink=0.0, metric='l2'):\n        self.shrink = shrink\n        self.metric = metric\n"
        "        if metric == 'l1':\n            import {source}  # noqa: F401\n").replace(
        "        return distance(", "        from {source} import distance\n\n        return distance(")
    _write(folder / f"{module}.py", built.format(source=helper))
    monkeypatch.syspath_prepend(str(folder))
    cfg = _config(folder, module)
    cfg.write_text(cfg.read_text().replace("grid: {shrink: [0.0, 0.5]}}", "grid: {shrink: [0.0, 0.5]}, metric: l1}"))
    _run(cfg, tmp_path / "out")
    df = read_results(tmp_path / "out", columns=["status", "error_message"])
    assert (df["status"] == "failed").all()
    assert set(df["error_message"]) == {
        f"the fit imported {helper} ({helper}.py), code of yours that importing {module} does not load, so no "
        f"record could say when it changes; import it at the top of {module} (or of a module it imports)"}


#: Ways a method asks for a module (``{source}``: the helper), each of which a fit's check must see in every unit.
ASKED = {
    "statement": "        from {source} import distance\n",
    "import_module": "        import importlib\n\n        distance = importlib.import_module('{source}').distance\n",
    "bound early": "        distance = import_module('{source}').distance\n",
    "__import__": "        distance = __import__('{source}').distance\n",
}


@pytest.mark.parametrize("way", list(ASKED))
def test_every_way_a_method_imports_a_helper_fails_every_unit_of_one_fit_process(tmp_path, monkeypatch, way):
    """An import statement, ``importlib.import_module`` (also bound before the fit began: ``from importlib import
    import_module`` at the top), ``__import__``: all three units of the one fit process fail, the later ones
    too, which find the helper imported by the first."""
    folder, module, helper = _split_plugin(tmp_path)
    text = SPLIT_NEAREST_MEAN.replace("from {source} import distance\n", "from importlib import import_module\n")
    text = text.replace("    def decision_function(self, X):\n", "    def decision_function(self, X):\n" + ASKED[way])
    _write(folder / f"{module}.py", text.format(source=helper))
    monkeypatch.syspath_prepend(str(folder))
    _run(_config(folder, module), tmp_path / "out")
    df = read_results(tmp_path / "out", columns=["status", "error_message"])
    assert len(df) == 3 * 2 and (df["status"] == "failed").all()
    assert df["error_message"].str.startswith(f"the fit imported {helper} ({helper}.py), code of yours").all()


def test_two_classes_of_one_module_are_judged_each_by_what_its_own_fits_asked_for(tmp_path, monkeypatch):
    """``Fancy`` imports a helper inside a method, ``Plain`` (same module, same code text) never does: only
    Fancy's fits fail, before and after Plain's in the one fit process (a version that remembered modules by the
    code text failed Plain's too). A helper another plug-in of the run imports at its top (so imported before
    any fit) is still seen when Fancy asks for it."""
    folder, module, helper = _split_plugin(tmp_path)
    fancy = LAZY.replace("class NearestMean", "class Fancy")
    plain = SPLIT_NEAREST_MEAN.replace("from {source} import distance\n", "").replace(
        "class NearestMean", "class Plain").replace(
        "distance(X, self.means_[0]) - distance(X, self.means_[1])",
        "np.abs(X - self.means_[0]).sum(1) - np.abs(X - self.means_[1]).sum(1)")
    _write(folder / f"{module}.py", fancy.format(source=helper) + plain.split("class Plain", 1)[0].split(
        "from sklearn.base import BaseEstimator, ClassifierMixin", 1)[1].replace("import numpy as np", "") +
        "class Plain" + plain.split("class Plain", 1)[1])
    other = f"other_{uuid.uuid4().hex[:8]}"
    _write(folder / f"{other}.py", SPLIT_NEAREST_MEAN.format(source=helper))
    monkeypatch.syspath_prepend(str(folder))
    models = {"P1": f"{module}:Plain", "F": f"{module}:Fancy", "P2": f"{module}:Plain", "O": f"{other}:NearestMean"}
    _run(_models_config(folder, models), tmp_path / "out")
    assert _statuses(tmp_path / "out") == {"F": ["failed"], "O": ["ok"], "P1": ["ok"], "P2": ["ok"]}


def test_a_module_a_library_generates_under_its_own_package_is_the_library_s(tmp_path):
    """A library that writes generated code to a temporary folder and registers it under its own package's name
    (torch.compile does): the module is the installed distribution's, not a user's file, so a fit that makes
    one is not refused, and the library's whole package is not walked as the user's code."""
    import sys
    import types

    from eemrepro.models._code import origin_kind

    pytest.importorskip("cycler")  # (installed with matplotlib; not one of the tool's declared dependencies)
    source = tmp_path / "gen_1.py"
    source.write_text("def k(x):\n    return x\n")
    generated = types.ModuleType("cycler.gen_1")
    generated.__file__ = str(source)
    user = types.ModuleType(f"mine_{uuid.uuid4().hex[:8]}")
    user.__file__ = str(source)
    sys.modules[generated.__name__], sys.modules[user.__name__] = generated, user
    # a module registered under a top-level module that is no package (``six.moves`` under ``six.py``)
    single = types.ModuleType(f"single_{uuid.uuid4().hex[:8]}")
    single.__file__ = str(tmp_path / f"{single.__name__}.py")
    moves = types.ModuleType(f"{single.__name__}.moves")
    moves.__file__ = str(source)
    sys.modules[single.__name__], sys.modules[moves.__name__] = single, moves
    try:
        assert (origin_kind(generated), origin_kind(user), origin_kind(moves)) == ("distribution", "file", "file")
    finally:
        for module in (generated, user, single, moves):
            del sys.modules[module.__name__]


def test_the_lazy_import_message_names_one_module_a_file_or_package_and_stays_bounded():
    """Fifteen submodules of one package and four other files: one entry per package or file, three at most,
    "them" for several; the module to import them in is each estimator's."""
    from eemrepro.models._lookup import outside_imports_error

    outside = {"lib": "package lib", **{f"lib.m{i}": "package lib" for i in range(15)},
               **{f"h{i}": f"h{i}.py" for i in range(4)}}
    assert outside_imports_error({"clf:A": "x", "pkg.model:B": "y"}, outside) == (
        "the fit imported lib and 15 more (package lib), h0 (h0.py), h1 (h1.py) and 2 more, code of yours that "
        "importing clf or pkg.model does not load, so no record could say when it changes; import them at the top "
        "of clf or pkg.model (or of a module it imports)")
    # at the bounds: two modules of one package, exactly three entries, exactly four
    said = lambda outside: outside_imports_error({"clf:A": "x"}, outside).split(", code of yours")[0]  # noqa: E731
    assert said({"lib": "package lib", "lib.m": "package lib"}) == "the fit imported lib and 1 more (package lib)"
    three = {f"h{i}": f"h{i}.py" for i in range(3)}
    assert said(three) == "the fit imported h0 (h0.py), h1 (h1.py), h2 (h2.py)"
    assert said({**three, "h3": "h3.py"}) == "the fit imported h0 (h0.py), h1 (h1.py), h2 (h2.py) and 1 more"


def test_an_object_a_fit_puts_in_sys_modules_that_is_no_module_is_passed_over():
    """Some libraries register objects that are not modules in ``sys.modules`` (lazy loaders): the check of a
    fit's imports passes over them (it crashed the fit process on their missing ``__name__``)."""
    import sys

    from eemrepro.models._lookup import imported_outside, recording_imports

    name = f"lazy_loader_{uuid.uuid4().hex[:8]}"
    with recording_imports() as asked:
        sys.modules[name] = object()
        try:
            assert name in asked.names() and imported_outside({"clf.py sha256:0"}, asked) == {}
        finally:
            del sys.modules[name]


def test_a_helper_asked_for_under_two_sets_of_codes_is_outside_both(tmp_path, monkeypatch):
    """A projection unit's identity holds the projection's code and the classifier's: a classifier that imports a
    helper inside a method is judged in each unit, whatever the other codes are (a version that remembered the
    module under the first set of codes passed the units of a second set, which found it imported)."""
    import sys

    from eemrepro.models._lookup import imported_outside, recording_imports

    helper = f"lazyh_{uuid.uuid4().hex[:8]}"
    _write(tmp_path / f"{helper}.py", "X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        for codes in ({"p1.py sha256:1", "c.py sha256:3"}, {"p2.py sha256:2", "c.py sha256:3"}):
            with recording_imports() as asked:
                __import__(helper)
            assert imported_outside(codes, asked) == {helper: f"{helper}.py"}
        with recording_imports() as asked:  # a unit that asks for nothing
            pass
        assert imported_outside({"c.py sha256:3"}, asked) == {}
    finally:
        sys.modules.pop(helper, None)


def test_a_plugin_whose_import_registers_an_object_that_is_no_module_runs(tmp_path):
    """A plug-in (or a library it imports) that puts an object which is no module in ``sys.modules`` when it is
    imported: the code identity passes over it (the config was refused: "cannot be imported: ... has no
    attribute '__name__'"), and the run stores ``ok`` records."""
    folder, module, helper = _split_plugin(tmp_path)
    name = f"lazy_loader_{uuid.uuid4().hex[:8]}"
    text = SPLIT_NEAREST_MEAN.format(source=helper)
    _write(folder / f"{module}.py", f"import sys\n\nsys.modules[{name!r}] = object()\n" + text)
    cfg = _config(folder, module)
    _run(cfg, tmp_path / "out")
    assert (read_results(tmp_path / "out", columns=["status"])["status"] == "ok").all()
    assert estimator_code(f"{module}:NearestMean", str(folder)).startswith(f"{module}.py + {helper}.py sha256:")


def test_eleven_changed_cells_are_said_ten_by_name_and_one_more(tmp_path):
    """The refusal names ten changed cells and counts the rest: at eleven (one past the ten named), "... and 1
    more cell(s)", so that no changed cell goes unsaid."""
    folder, module, helper = _folder(tmp_path)
    models = "".join(f'  NM{i:02d}: {{estimator: "{module}:NearestMean", grid: {{shrink: [0.0]}}}}\n'
                     for i in range(11))
    cfg = folder / "eleven.yaml"
    cfg.write_text(f"name: eleven\ndatasets: [heart]\nmodels:\n{models}protocol: {{folds: 2, repeats: 1, seed: 5}}\n")
    _run(cfg, tmp_path / "out")
    _write(folder / f"{helper}.py", "DEFAULT_SCALE = 2.0\n")
    lines = _run(cfg, tmp_path / "out", code=1).output.splitlines()
    assert [line.split(":")[0] for line in lines[1:12]] == [f"  NM{i:02d} on heart" for i in range(10)] + [
        "  ... and 1 more cell(s)"]


def test_a_distribution_installed_into_a_folder_of_its_own_imported_inside_a_method_is_a_library(tmp_path,
                                                                                              monkeypatch):
    """``pip install --target DIR`` (a cluster's module system puts libraries so): its metadata lies beside its
    package on the import path. A method that imports it imports a library, as from site-packages: the fits stay
    ``ok`` (they failed as "code of yours"). A module of the same folder without such metadata is the user's."""
    import importlib

    from eemrepro.models import _code

    target = tmp_path / "target"
    tag = uuid.uuid4().hex[:8]
    lib, loose = f"lib_{tag}", f"loose_{tag}"
    (target / lib).mkdir(parents=True)
    _write(target / lib / "__init__.py", HELPER.format(sign=""))
    _write(target / f"{loose}.py", HELPER.format(sign=""))
    info = target / f"libdist_{tag}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: libdist-{tag}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(f"{lib}\n")
    (info / "RECORD").write_text("")
    monkeypatch.syspath_prepend(str(target))
    importlib.invalidate_caches()
    folder, module, _ = _split_plugin(tmp_path)
    _write(folder / f"{module}.py", LAZY.format(source=lib))
    _run(_config(folder, module), tmp_path / "out")
    assert (read_results(tmp_path / "out", columns=["status"])["status"] == "ok").all()
    _write(folder / f"{module}.py", LAZY.format(source=loose))
    _run(_config(folder, module), tmp_path / "loose")
    assert (read_results(tmp_path / "loose", columns=["status"])["status"] == "failed").all()
    # An .egg-info a development install left beside a project's code (no RECORD: nothing was installed) does not
    # make the project's modules a library.
    egg = target / f"loose_{tag}.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: loose-{tag}\nVersion: 0.1\n")
    (egg / "top_level.txt").write_text(f"{loose}\n")
    importlib.invalidate_caches()
    _code._packages_distributions.cache_clear()
    _run(_config(folder, module), tmp_path / "egg")
    assert (read_results(tmp_path / "egg", columns=["status"])["status"] == "failed").all()


def test_a_users_module_in_a_pkgutil_package_an_installed_distribution_shares_is_the_users(tmp_path, monkeypatch):
    """``acme/__init__.py`` installed in site-packages by ``acme-core`` extends its ``__path__`` (pkgutil style),
    and the user's ``acme/ml.py`` lies in their checkout, one of those folders: a user's file, not code the
    installed package registered from outside its folders (which a library's generated module is)."""
    import importlib
    import sys

    from eemrepro.models import _code

    tag = uuid.uuid4().hex[:8]
    top = f"acme_{tag}"
    site, checkout = tmp_path / "site", tmp_path / "checkout"
    for root in (site, checkout):
        (root / top).mkdir(parents=True)
        _write(root / top / "__init__.py", "__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n")
    _write(checkout / top / "ml.py", "X = 1\n")
    info = site / f"acme_core_{tag}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: acme-core-{tag}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(f"{top}\n")
    (info / "RECORD").write_text("")
    monkeypatch.setattr(_code, "_site_folders", lambda: (site.resolve(),))
    monkeypatch.syspath_prepend(str(checkout))
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    try:
        ml = importlib.import_module(f"{top}.ml")
        assert _code.origin_kind(sys.modules[top]) == "distribution"
        assert _code.origin_kind(ml) == "file"
    finally:
        for name in [m for m in sys.modules if m.partition(".")[0] == top]:
            del sys.modules[name]


@pytest.mark.parametrize("asked", ["from .distances import distance",
                                   "from {ns} import distances\n        distance = distances.distance"])
def test_a_namespace_packages_module_another_plugin_imported_first_is_seen_when_a_method_asks_for_it(
        tmp_path, monkeypatch, asked):
    """A namespace package (no ``__init__.py``) holds its modules one by one: ``O``, a module of another name,
    imports ``ns.distances`` at its top (in O's identity, and imported before any fit); ``L`` (``ns.lazy``) asks
    for it inside a method, by a relative import or as a name of the package (``from ns import distances``).
    Only the statement tells that L's fit asked for it: L's fits fail, O's stay ``ok``."""
    folder = tmp_path / "mine"
    ns = f"ns_{uuid.uuid4().hex[:8]}"
    (folder / ns).mkdir(parents=True)
    _write(folder / ns / "distances.py", HELPER.format(sign=""))
    other = f"other_{uuid.uuid4().hex[:8]}"
    _write(folder / f"{other}.py", SPLIT_NEAREST_MEAN.format(source=f"{ns}.distances"))
    lazy = SPLIT_NEAREST_MEAN.replace("from {source} import distance\n", "").replace(
        "    def decision_function(self, X):\n", "    def decision_function(self, X):\n        " + asked + "\n")
    _write(folder / ns / "lazy.py", lazy.format(ns=ns))
    monkeypatch.syspath_prepend(str(folder))
    _run(_models_config(folder, {"O": f"{other}:NearestMean", "L": f"{ns}.lazy:NearestMean"}), tmp_path / "out")
    assert _statuses(tmp_path / "out") == {"L": ["failed"], "O": ["ok"]}
    df = read_results(tmp_path / "out", columns=["model", "error_message"])
    assert df.loc[df["model"] == "L", "error_message"].str.startswith(
        f"the fit imported {ns}.distances (distances.py), code of yours").all()


def test_a_failed_import_inside_a_fit_names_the_plugins_line_not_the_check(tmp_path):
    """A missing optional dependency imported inside ``fit``: the fit fails naming the plug-in's file and line, as
    before the check wrapped the import functions (it named the wrapper's line in ``_lookup.py``)."""
    folder, module, helper = _split_plugin(tmp_path)
    text = SPLIT_NEAREST_MEAN.replace("    def fit(self, X, y):\n", "    def fit(self, X, y):\n"
                                      "        import no_such_module_anywhere  # noqa: F401\n")
    _write(folder / f"{module}.py", text.format(source=helper))
    _run(_config(folder, module), tmp_path / "out")
    line = text.splitlines().index("        import no_such_module_anywhere  # noqa: F401") + 1
    assert set(read_results(tmp_path / "out", columns=["error_message"])["error_message"]) == {
        f"ModuleNotFoundError: No module named 'no_such_module_anywhere' ({module}.py:{line})"}


def test_a_plugins_own_import_hook_is_called_through_during_fits_and_left_in_place(tmp_path, monkeypatch):
    """A plug-in that wraps ``builtins.__import__`` itself when it is imported (a profiler, a lazy loader): its
    hook still sees the imports of the fits, and is in place again once a recording ends (the check called the
    import function in place when eemrepro was imported and put that back, so the plug-in's was skipped, then
    gone)."""
    folder, module, helper = _split_plugin(tmp_path)
    hook = textwrap.dedent("""\
        import builtins

        _seen = []
        _inner = builtins.__import__


        def _counting(name, *args, **kwargs):
            _seen.append(name)
            return _inner(name, *args, **kwargs)


        builtins.__import__ = _counting
        """)
    text = SPLIT_NEAREST_MEAN.replace("    def fit(self, X, y):\n", textwrap.indent(textwrap.dedent("""\
        def fit(self, X, y):
            n = len(_seen)
            import json  # noqa: F401
            if len(_seen) == n:
                raise RuntimeError("the plug-in's import hook was passed over")
        """), "    "))
    _write(folder / f"{module}.py", hook + text.format(source=helper))
    import builtins

    monkeypatch.setattr(builtins, "__import__", builtins.__import__)  # (the config's check imports the plug-in here)
    _run(_config(folder, module), tmp_path / "out")
    assert (read_results(tmp_path / "out", columns=["status"])["status"] == "ok").all()

    from eemrepro.models._lookup import recording_imports

    mine = builtins.__import__
    own = lambda *args, **kwargs: mine(*args, **kwargs)  # noqa: E731
    builtins.__import__ = own
    try:
        with recording_imports() as asked:
            import json  # noqa: F401
        assert "json" in asked and builtins.__import__ is own
    finally:
        builtins.__import__ = mine


def test_import_module_bound_before_the_fit_is_seen_asking_for_a_module_another_plugin_imported(tmp_path,
                                                                                              monkeypatch):
    """``from importlib import import_module`` at the plug-in's top, and ``import_module("helper")`` in a method,
    where another model of the run imports the helper at its top (so it is imported before any fit and never
    new): the fits fail (they were ``ok``: the reference was taken before the check wrapped the function)."""
    folder, module, helper = _split_plugin(tmp_path)
    text = SPLIT_NEAREST_MEAN.replace("from {source} import distance\n", "from importlib import import_module\n")
    text = text.replace("    def decision_function(self, X):\n", "    def decision_function(self, X):\n"
                        "        distance = import_module('{source}').distance\n")
    _write(folder / f"{module}.py", text.format(source=helper))
    other = f"other_{uuid.uuid4().hex[:8]}"
    _write(folder / f"{other}.py", SPLIT_NEAREST_MEAN.format(source=helper))
    monkeypatch.syspath_prepend(str(folder))
    _run(_models_config(folder, {"O": f"{other}:NearestMean", "B": f"{module}:NearestMean"}), tmp_path / "out")
    assert _statuses(tmp_path / "out") == {"B": ["failed"], "O": ["ok"]}


def test_an_editable_install_a_method_imports_is_outside_another_plugins_code_and_inside_its_own(tmp_path,
                                                                                               monkeypatch):
    """An editable install declaring two packages: a plug-in of the user's own file that imports the second one
    inside a method fails, naming the distribution (its code is no part of the plug-in's); the install's own
    plug-in (in its first package) doing the same stays ``ok`` (every package it declares is its code)."""
    source, n, tag = _editable(tmp_path, monkeypatch, "lazy", ["a", "b"])
    _write(source / n["b"] / "__init__.py", HELPER.format(sign=""))
    _write(source / n["a"] / "__init__.py", LAZY.format(source=n["b"]))
    folder, module, _ = _split_plugin(tmp_path)
    _write(folder / f"{module}.py", LAZY.format(source=n["b"]))
    _run(_models_config(folder, {"U": f"{module}:NearestMean", "E": f"{n['a']}:NearestMean"}), tmp_path / "out")
    assert _statuses(tmp_path / "out") == {"E": ["ok"], "U": ["failed"]}
    df = read_results(tmp_path / "out", columns=["model", "error_message"])
    assert df.loc[df["model"] == "U", "error_message"].str.startswith(
        f"the fit imported {n['b']} (lazydist-{tag}), code of yours").all()


def test_a_hook_installed_over_the_recording_during_a_unit_does_not_recurse_in_the_next(monkeypatch):
    """A plug-in that wraps ``builtins.__import__`` while a unit is recorded (imported in the fit process's first
    unit, as under --jobs 2): at the unit's end its hook stays, wrapping the recording's function; the next unit
    wraps the hook in turn. Each import then reached the recording's function again through the hook, forever
    (RecursionError: the unit's fits died with "exited with status 1"). Now the hook is called once and the
    import made; the names are still recorded. An object in ``sys.modules`` that is no module, asked for by
    ``importlib.import_module``, is returned as it is (its missing ``__name__`` raised)."""
    import builtins
    import importlib
    import sys

    from eemrepro.models._lookup import recording_imports

    monkeypatch.setattr(builtins, "__import__", builtins.__import__)
    calls = []
    with recording_imports():
        inner = builtins.__import__

        def hook(*args, **kwargs):
            calls.append(args[0])
            return inner(*args, **kwargs)

        builtins.__import__ = hook
    for _ in range(2):
        with recording_imports() as asked:
            import json  # noqa: F401
        assert "json" in asked
    assert calls.count("json") == 2
    name = f"lazy_object_{uuid.uuid4().hex[:8]}"
    thing = object()
    sys.modules[name] = thing
    try:
        with recording_imports() as asked:
            assert importlib.import_module(name) is thing
        assert name in asked
    finally:
        del sys.modules[name]


def test_a_namespace_package_installed_into_a_folder_of_its_own_is_a_library(tmp_path, monkeypatch):
    """``pip install --target DIR`` of a distribution whose top-level package is a namespace package (``google``,
    ``jaraco``): its module is the library's (the check looked for the top-level package's file, which a namespace
    package has not, and called it code of yours)."""
    import importlib
    import sys

    from eemrepro.models import _code

    target = tmp_path / "target"
    tag = uuid.uuid4().hex[:8]
    top = f"nsx_{tag}"
    (target / top / "lib").mkdir(parents=True)
    _write(target / top / "lib" / "__init__.py", "X = 1\n")
    info = target / f"nsxdist_{tag}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: nsxdist-{tag}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(f"{top}\n")
    (info / "RECORD").write_text("")
    monkeypatch.syspath_prepend(str(target))
    importlib.invalidate_caches()
    try:
        module = importlib.import_module(f"{top}.lib")
        assert _code.installed_beside(module)
    finally:
        for name in [m for m in sys.modules if m.partition(".")[0] == top]:
            del sys.modules[name]
