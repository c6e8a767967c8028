"""Your own data end to end (issue 59): data checks that tell the truth.

Each test is what a researcher with a CSV of their own meets. Expected values come from the file itself
(its rows and columns written here) or from pandas' own reading of it.
"""

import re
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from eemrepro.cli import app
from eemrepro.datasets import load_dataset
from eemrepro.experiments import ConfigError, load_config

runner = CliRunner()


def _noise_sorted_by_class(n=80, seed=0):
    """Pure noise features, rows sorted by class (as exported from a database query ordered by label)."""
    rng = np.random.default_rng(seed)
    y = np.sort(rng.choice([0, 1], size=n, p=[0.6, 0.4]))
    return pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n), "label": y})


def _config(folder, spec, protocol="{folds: 3, repeats: 1, seed: 0}"):
    path = folder / "mine.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: mine
        datasets: [noise]
        local_datasets:
          noise: {spec}
        models:
          L: {{estimator: "sklearn.linear_model:LogisticRegression", grid: {{C: [1.0]}}}}
        protocol: {protocol}
        """))
    return path


def test_a_local_set_of_the_registered_sizes_loads_without_a_size_warning(tmp_path):
    """The sizes are equal (class counts [negatives, positives] against the loaded n_neg / n_pos): no
    'a different version of the data?' warning."""
    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    load_config(_config(tmp_path, "{file: noise.csv, target: label, positive: 1}"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = load_dataset("noise", scaling=None)
    assert [str(w.message) for w in caught if "sizes" in str(w.message)] == []
    frame = pd.read_csv(tmp_path / "noise.csv")
    assert (data.meta["n_neg"], data.meta["n_pos"]) == (int((frame["label"] == 0).sum()), int(frame["label"].sum()))


def test_a_size_that_does_differ_still_warns(tmp_path):
    """The comparison still bites (the neighbour of the fix: never warning)."""
    from dataclasses import replace

    from eemrepro.datasets import get_entry, register_local

    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    load_config(_config(tmp_path, "{file: noise.csv, target: label, positive: 1}"))
    entry = get_entry("noise")
    register_local(replace(entry, expected=dict(entry.expected, class_counts=[1, 79])))
    with pytest.warns(UserWarning, match="differ from the registry's") as caught:
        load_dataset("noise", scaling=None)
    # said at the line that called load_dataset (its stacklevel), not inside the package
    assert [w.filename for w in caught if "differ from the registry" in str(w.message)] == [__file__]


@pytest.mark.parametrize("write, column, what", [
    (lambda f, p: f.to_csv(p), "Unnamed: 0", "is unnamed, as pandas names a saved index"),
    (lambda f, p: f.rename_axis("id").reset_index().to_csv(p, index=False), "id", "holds the row numbers 0..79"),
    (lambda f, p: f.assign(row=np.arange(1, 81))[["row", "x1", "x2", "label"]].to_csv(p, index=False), "row",
     "holds the row numbers 1..80"),
])
def test_a_saved_index_column_is_refused_with_the_fix(tmp_path, write, column, what):
    """pandas' default to_csv writes the index as an unnamed first column; on rows sorted by class it is a
    feature that separates the classes (GMean from chance to near 100 on pure noise). Refused in one line
    naming the file, the column and the fix."""
    write(_noise_sorted_by_class(), tmp_path / "noise.csv")
    result = runner.invoke(app, ["run", str(_config(tmp_path, "{file: noise.csv, target: label}")), "--dry-run"])
    assert result.exit_code == 1
    message = " ".join(result.output.split())
    assert f"noise.csv: the first column '{column}' {what}" in message
    assert "index=False" in message and "'columns'" in message
    assert len(result.output.strip().splitlines()) == 1


def test_an_index_column_listed_under_columns_is_kept_and_in_the_identity(tmp_path):
    """The config may keep it on purpose: listed under 'columns', it is a feature (and the data's identity
    names the columns), and a column list leaves out what it does not name."""
    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv")
    config = load_config(_config(tmp_path, "{file: noise.csv, target: label, columns: ['Unnamed: 0', x2]}"))
    assert config.local_datasets["noise"].local["columns"] == ["Unnamed: 0", "x2"]
    data = load_dataset("noise", scaling=None)
    frame = pd.read_csv(tmp_path / "noise.csv")
    np.testing.assert_array_equal(data.X, frame[["Unnamed: 0", "x2"]].to_numpy(dtype=float))


def test_a_column_list_naming_a_missing_column_is_refused(tmp_path):
    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    with pytest.raises(ConfigError, match=r"no column\(s\) \['x9'\] \(key 'columns'\)"):
        load_config(_config(tmp_path, "{file: noise.csv, target: label, columns: [x1, x9]}"))


@pytest.mark.parametrize("listed", ["[x1, x2, x1]", "[x1, x2, \"x\\u0031\"]"], ids=["same text", "escaped"])
def test_a_column_list_naming_a_column_twice_is_refused(tmp_path, listed):
    # A feature listed twice would enter X twice (a duplicated column weighs twice in a distance or a kernel).
    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    with pytest.raises(ConfigError, match=r"column 'x1' is listed twice in 'columns'$"):
        load_config(_config(tmp_path, f"{{file: noise.csv, target: label, columns: {listed}}}"))


# -- a store's boundaries ------------------------------------------------------------------------------------

SMALL = """name: {name}
kind: grid-search
datasets: [heart]
models:
  {model}: {{estimator: "tests.helpers:Sleepy", grid: {{delay: [0.0]}}}}
protocol: {{folds: 3, repeats: 1, seed: 5}}
{extra}"""


def _small(folder, name, model="C", extra=""):
    path = folder / f"{name}.yaml"
    path.write_text(SMALL.format(name=name, model=model, extra=extra))
    return path


@pytest.fixture(scope="module")
def store_a(tmp_path_factory):
    root = tmp_path_factory.mktemp("a")
    result = runner.invoke(app, ["run", str(_small(root, "a")), "--out", str(root / "store"), "--jobs", "1",
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    return root / "store"


def _records(store):
    from eemrepro import read_results

    return read_results(store, columns=["gmean"]).sort_values(["point", "fold"])["gmean"].tolist()


@pytest.mark.parametrize("dry", [False, True])
def test_a_run_into_another_configs_store_is_refused_naming_both(tmp_path, store_a, dry):
    """Issue 59: `run my.yaml --out` a store made by another config replaced its config.yaml without a word
    (on a copy of results/uci, every one of its records dropped out of the reports)."""
    before, records = (store_a / "config.yaml").read_bytes(), _records(store_a)
    result = runner.invoke(app, ["run", str(_small(tmp_path, "b")), "--out", str(store_a), "--jobs", "1",
                                 "--quiet", *(["--dry-run"] if dry else [])])
    assert result.exit_code == 1
    message = " ".join(result.output.split())
    assert f"{store_a} holds the results of config 'a' (kind grid-search), not of 'b' (kind grid-search" in message
    assert (store_a / "config.yaml").read_bytes() == before and _records(store_a) == records


def test_a_run_into_a_store_of_another_kind_is_refused(tmp_path, store_a):
    cfg = tmp_path / "a.yaml"
    cfg.write_text("name: a\nkind: dcs-correlation\ndatasets: [heart]\nanalysis: {n_hidden: [10], "
                   "layers: 2, betas: 2}\n")
    result = runner.invoke(app, ["run", str(cfg), "--out", str(store_a), "--dry-run"])
    assert result.exit_code == 1, result.output
    assert "(kind grid-search), not of 'a' (kind dcs-correlation" in " ".join(result.output.split())


@pytest.mark.parametrize("kind", ["same", "other"])
def test_a_store_whose_config_yaml_was_deleted_is_still_refused_to_another_config(tmp_path, store_a, kind):
    """Its config.yaml deleted by hand, a store was anyone's: a run of another config (or of another kind) wrote
    its own config.yaml and added its records, and the folder then held records of two configs (and kinds).
    Its run files say whose it is. The neighbour: the same config resumes it (and writes its config.yaml back)."""
    import shutil

    store = tmp_path / "store"
    shutil.copytree(store_a, store)
    (store / "config.yaml").unlink()
    if kind == "same":
        result = runner.invoke(app, ["run", str(_small(tmp_path, "a")), "--out", str(store), "--jobs", "1",
                                     "--quiet"])
        assert result.exit_code == 0, result.output
        assert (store / "config.yaml").is_file() and _records(store) == _records(store_a)
        return
    cfg = tmp_path / "b.yaml"
    cfg.write_text("name: b\nkind: dcs-correlation\ndatasets: [heart]\nanalysis: {n_hidden: [10], "
                   "layers: 2, betas: 2}\n")
    result = runner.invoke(app, ["run", str(cfg), "--out", str(store), "--jobs", "1", "--quiet"])
    assert result.exit_code == 1, result.output
    assert (f"{store} holds the results of config 'a' (kind grid-search; its config.yaml is missing, its run "
            "files say so), not of 'b' (kind dcs-correlation") in " ".join(result.output.split())
    assert not (store / "config.yaml").exists() and _records(store) == _records(store_a)


def test_a_run_of_the_same_config_into_its_store_resumes(tmp_path, store_a):
    """The neighbour: the store's own config (same name and kind) is its to resume."""
    result = runner.invoke(app, ["run", str(_small(tmp_path, "a")), "--out", str(store_a), "--dry-run"])
    assert result.exit_code == 0 and "3 already stored, 0 to run" in result.output


def _no_unit_ran(out):
    return not (out / "records").exists() or not any((out / "records").iterdir())


def test_a_baseline_models_name_clash_is_refused_before_any_unit_runs(tmp_path, store_a):
    """A model named like one of a baseline's was refused only after every unit ran, and from then on the
    store's tables failed."""
    cfg = _small(tmp_path, "mine", model="C", extra=f"baselines: [{store_a}]\n")
    result = runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "out"), "--jobs", "1", "--quiet"])
    assert result.exit_code == 1
    assert f"{store_a} also has a model named 'C' on heart" in " ".join(result.output.split())
    assert _no_unit_ran(tmp_path / "out")


def test_the_output_folder_named_as_a_baseline_is_refused(tmp_path, store_a):
    """`baselines: [.]` with the store beside its config: a comparison with no baseline models."""
    cfg = _small(tmp_path, "mine", model="D", extra="baselines: [out]\n")
    (tmp_path / "out").mkdir()
    result = runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "out"), "--jobs", "1", "--quiet"])
    assert result.exit_code == 1
    assert "is this run's own results folder (--out)" in " ".join(result.output.split())
    assert _no_unit_ran(tmp_path / "out")


def test_a_bad_baseline_path_shows_where_it_resolved_from_the_configs_folder(tmp_path):
    (tmp_path / "conf").mkdir()
    cfg = _small(tmp_path / "conf", "mine", model="D", extra="baselines: [../results/uic]\n")
    result = runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "out"), "--dry-run"])
    assert result.exit_code == 1
    message = " ".join(result.output.split())
    assert f"'../results/uic' ({(tmp_path / 'results' / 'uic').resolve()}), from the config's folder, is no such " \
           "folder" in message


# -- messages ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("typo, key, hint", [
    ("protocol: {folds: 3, repeats: 1, seed: 5}", "protocol: {folds: 3, repaets: 1, seed: 5}", "'repeats'"),
    ("datasets: [heart]", "datsets: [heart]\ndatasets: [heart]", "'datasets'"),
    ("protocol: {folds: 3, repeats: 1, seed: 5}", "protocol: {folds: 3, repeats: 1, sed: 5}", "'seed'"),
])
def test_a_misspelled_key_gets_a_did_you_mean(tmp_path, typo, key, hint):
    """Data set names had a "did you mean"; keys did not."""
    cfg = _small(tmp_path, "mine")
    cfg.write_text(cfg.read_text().replace(typo, key))
    with pytest.raises(ConfigError, match=rf"unknown key; valid keys are \[.*\]; did you mean {hint}( or '[a-z_]*')?\?$"):
        load_config(cfg)


def test_a_local_data_sets_misspelled_key_gets_a_did_you_mean(tmp_path):
    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    with pytest.raises(ConfigError, match=r"key 'local_datasets.noise.traget': unknown key; .*did you mean 'target'\?"):
        load_config(_config(tmp_path, "{file: noise.csv, traget: label}"))


def test_a_key_far_from_every_valid_one_gets_no_guess(tmp_path):
    cfg = _small(tmp_path, "mine")
    cfg.write_text(cfg.read_text() + "zzzz: 1\n")
    with pytest.raises(ConfigError, match=r"unknown key; valid keys are \[[^\]]*\]$"):
        load_config(cfg)


# -- a plug-in's modules are the user's, the tool's are the tool's -----------------------------------------

CLF = """
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class Const(ClassifierMixin, BaseEstimator):
    def __init__(self, which={which}):
        self.which = which

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[self.which])
"""


def test_two_configs_folders_with_a_module_of_the_same_name_each_get_their_own(tmp_path):
    """Two projects in one process (a notebook), each with its own clf.py: the second folder's class is its own,
    not the first's cached under the same module name."""
    from eemrepro.models._lookup import estimator_class

    for which in (0, 1):
        (tmp_path / f"p{which}").mkdir()
        (tmp_path / f"p{which}" / "clf.py").write_text(CLF.format(which=which))
    assert [estimator_class("clf:Const", str(tmp_path / f"p{w}"))().which for w in (0, 1, 0)] == [0, 1, 0]


@pytest.mark.parametrize("name", ["statsmodels", "yaml", "random"])
def test_a_users_module_named_like_the_tools_own_is_refused_and_the_tool_keeps_its_own(tmp_path, name):
    """A file beside the config named like a module the tool imports (or the standard library's) would either
    hide the user's class behind the tool's module or replace the tool's for the rest of the process."""
    import importlib

    from eemrepro.models._lookup import estimator_class

    (tmp_path / f"{name}.py").write_text(CLF.format(which=0))
    with pytest.raises(ValueError, match=rf"^{tmp_path / name}\.py is named like (the standard library's|the "
                                         rf"installed package) '{name}', which eemrepro uses: rename it"):
        estimator_class(f"{name}:Const", str(tmp_path))
    real = importlib.import_module(name)
    assert not str(getattr(real, "__file__", "") or "").startswith(str(tmp_path))


def test_a_standard_library_package_beside_the_config_that_the_users_module_imports_is_refused(tmp_path):
    """``clf.py`` does ``import wave``, and a folder ``wave/`` lies beside it: the user's package would stand in
    for the standard library's for the rest of the process. Refused naming the folder (not a ``wave.py`` that is
    not there), and the standard library's module is the one imported afterwards."""
    import importlib
    import sys

    from eemrepro.models._lookup import estimator_class

    sys.modules.pop("wave", None)  # the standard library's, where something imported it before
    (tmp_path / "wave").mkdir()
    (tmp_path / "wave" / "__init__.py").write_text("MINE = True\n")
    (tmp_path / "clf.py").write_text("import wave\n" + CLF.format(which=0))
    with pytest.raises(ValueError, match=rf"^{tmp_path / 'wave'} is named like the standard library's 'wave', "
                                         r"which eemrepro uses: rename it \(a module of yours must not stand in for "
                                         r"the tool's\)$"):
        estimator_class("clf:Const", str(tmp_path))
    assert not hasattr(importlib.import_module("wave"), "MINE")


LAZY = """
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class Clf(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        from pkg.sub import helpers  # imported at fit time only, after the class was looked up

        self.classes_, self.k_ = np.unique(y), helpers.K
        return self
"""


def test_a_module_the_users_package_imports_at_fit_time_is_imported_afresh_after_an_edit(tmp_path):
    """``pkg.sub.helpers`` is imported only inside ``fit``. After an edit of helpers.py the next run must fit
    with the new code: every module of the edited package is dropped, however deep, not only those the first
    import loaded."""
    import os

    from eemrepro.models._lookup import estimator_class

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text(LAZY)
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    helpers = tmp_path / "pkg" / "sub" / "helpers.py"
    helpers.write_text("K = 1\n")
    X, y = np.zeros((4, 1)), np.array([0, 1, 0, 1])
    assert estimator_class("pkg:Clf", str(tmp_path))().fit(X, y).k_ == 1
    helpers.write_text("K = 22\n")
    os.utime(helpers, (helpers.stat().st_atime, helpers.stat().st_mtime + 5))
    assert estimator_class("pkg:Clf", str(tmp_path))().fit(X, y).k_ == 22


@pytest.mark.parametrize("command", [
    ["forget", "{typo}", "--models", "C"],
    ["compact", "{typo}"],
    ["tables", "{typo}"],
    ["check", "{typo}"],
    ["report", "{typo}"],
    ["figures", "{typo}"],
])
def test_a_mistyped_store_path_is_named_and_never_created(tmp_path, store_a, command):
    """`forget results/typo` left a store marker and a lock there; `tables typo` made typo/tables/."""
    typo = store_a.parent / "stroe"
    result = runner.invoke(app, [c.format(typo=typo) for c in command])
    assert result.exit_code == 1
    assert f"{typo}: no such folder; did you mean {store_a}?" in " ".join(result.output.split())
    assert not typo.exists()


@pytest.mark.parametrize("command", [["status", "{path}"], ["compact", "{path}"], ["forget", "{path}", "--models", "C"]])
def test_a_folder_that_is_no_store_offers_only_other_results_folders(tmp_path, store_a, command):
    # `status f` on a folder holding only a config.yaml said "did you mean f?", itself; a folder beside it that is
    # no store either is no answer.
    import shutil

    shutil.copytree(store_a, tmp_path / "f1")  # a results folder with a close name
    for name in ("f", "f2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text("name: f\n")
    path = tmp_path / "f"
    result = runner.invoke(app, [c.format(path=path) for c in command])
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert f"{path}: not a results folder (what `eemrepro run` writes); did you mean {tmp_path / 'f1'}?" \
        in said, said


# -- outputs never inside a store, never through a link, never over a file the tool did not write ----------

@pytest.mark.parametrize("command, where", [
    (["export", "{s}", "--format", "parquet", "--out", "{s}/records/x.parquet"], "records/x.parquet"),
    (["export", "{s}", "--out", "{s}/tables/x.csv"], "tables/x.csv"),
    (["tables", "{s}", "--out", "{s}/runs"], "runs"),
    (["tables", "{s}", "--out", "{s}"], ""),
    (["figures", "{s}", "--out", "{s}/records"], "records"),
    (["report", "{s}", "--out", "{s}/superseded-x"], "superseded-x"),
])
def test_an_output_inside_a_stores_own_files_is_refused_and_the_store_still_works(tmp_path, store_a, command,
                                                                                   where):
    """`export S --out S/records/x.parquet` was accepted, after which tables, status, check and run on S failed;
    `tables S --out S/runs` left files that `store verify` refused."""
    store = tmp_path / "s"
    import shutil

    shutil.copytree(store_a, store)
    result = runner.invoke(app, [c.format(s=store) for c in command])
    assert result.exit_code == 1
    target = (store / where) if where else store
    assert f"{target.resolve() if where else store.resolve()} is inside the results folder {store.resolve()}" in \
        " ".join(result.output.split())
    assert runner.invoke(app, ["store", "verify", str(store)]).exit_code == 0
    assert runner.invoke(app, ["tables", str(store)]).exit_code == 0  # its default output folder is its own


def _png(path):
    path.write_bytes(b"\x89PNG\r\n\x1a\n my own figure")
    return path.read_bytes()


def test_figures_never_overwrite_a_users_file_of_the_same_name_without_force(tmp_path, store_a):
    """`figures --out DIR` overwrote a user's PNG of the same name, and wrote through a symlink."""
    out = tmp_path / "figs"
    first = runner.invoke(app, ["figures", str(store_a), "--out", str(out)])
    if first.exit_code != 0 or not list(out.glob("*.png")):
        pytest.skip(f"the store draws no figure here: {first.output}")
    name = sorted(out.glob("*.png"))[0].name
    # Drawn again from the same results: the tool's own file, replaced without a word.
    assert runner.invoke(app, ["figures", str(store_a), "--out", str(out)]).exit_code == 0
    other = tmp_path / "mine"
    other.mkdir()
    mine = _png(other / name)
    result = runner.invoke(app, ["figures", str(store_a), "--out", str(other)])
    assert result.exit_code == 1 and "--force" in result.output and (other / name).read_bytes() == mine
    # A link of that name: replaced with --force, the file it points to untouched.
    linked = tmp_path / "linked"
    linked.mkdir()
    target = tmp_path / "precious.png"
    kept = _png(target)
    (linked / name).symlink_to(target)
    assert runner.invoke(app, ["figures", str(store_a), "--out", str(linked)]).exit_code == 1
    assert runner.invoke(app, ["figures", str(store_a), "--out", str(linked), "--force"]).exit_code == 0
    assert target.read_bytes() == kept and not (linked / name).is_symlink()


def test_an_output_folder_that_is_a_symbolic_link_is_refused(tmp_path, store_a):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    result = runner.invoke(app, ["tables", str(store_a), "--out", str(tmp_path / "link")])
    assert result.exit_code == 1 and "is a symbolic link" in result.output
    assert not list((tmp_path / "real").iterdir())


OUTPUT_COMMANDS = [
    ["export", "{s}", "--out", "{p}", "--force"],
    ["export", "{s}", "--format", "parquet", "--out", "{p}", "--force"],
    ["tables", "{s}", "--out", "{p}", "--force"],
    ["report", "{s}", "--out", "{p}", "--no-figures", "--force"],
    ["figures", "{s}", "--out", "{p}", "--force"],
    ["check", "{s}", "--pin", "{p}"],
    ["check", "{s}", "--pin-claims", "{p}"],
]


def _in_the_way(path, what, outside):
    """Put ``what`` at ``path``: a FIFO, a folder holding a file, a regular file, or a link to ``outside``."""
    import os

    if what == "fifo":
        os.mkfifo(path)
    elif what == "folder":
        path.mkdir()
        (path / "mine.txt").write_text("mine\n")
    elif what == "file":
        path.write_text("mine\n")
    else:
        path.symlink_to(outside)
    return path.lstat()


def _one_line_naming(result, path):
    """The error is one line naming ``path`` (``check`` prints its verdicts before it writes the pins)."""
    lines = [line for line in result.output.strip().splitlines() if not line.startswith("NOT MEASURED")]
    assert len(lines) == 1, result.output
    assert str(path) in lines[0] and "choose another" in lines[0], lines[0]
    assert "Errno" not in lines[0] and ".tmp" not in lines[0] and "unexpected" not in lines[0], lines[0]


def _id(command):
    return " ".join(command[:1] + command[2:3])


@pytest.mark.parametrize("command, what", [
    pytest.param(c, w, id=f"{w}-{_id(c)}") for c in OUTPUT_COMMANDS for w in ("fifo", "folder", "file", "link")
    # each output's own kind (a file for a file output, a folder for a folder) is the manifest's and --force's
    if w != ("file" if c[0] in ("export", "check") else "folder")])
def test_an_output_path_that_is_not_what_the_command_writes_is_refused_even_with_force(tmp_path, store_a, command,
                                                                                       what):
    """Issue 65: `export --out /dev/null --force` renamed a regular file over the machine's /dev/null (a FIFO
    stands in for the device here); `tables --out FILE` said `FileExistsError: [Errno 17]` as an unexpected
    error. A file output goes only to a regular file, a folder output only to a folder, and neither through a
    link (to a file outside, here): one line naming the path, and what was there is still there."""
    import os
    import stat

    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    path = tmp_path / "out"
    before = _in_the_way(path, what, outside)
    result = runner.invoke(app, [c.format(s=store_a, p=path) for c in command])
    assert result.exit_code == (2 if command[0] == "check" else 1), result.output
    _one_line_naming(result, path)
    after = path.lstat()
    assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino)
    assert outside.read_text() == "outside\n"
    if what == "folder":
        assert os.listdir(path) == ["mine.txt"]


@pytest.mark.parametrize("command, name", [(["tables"], "check.md"), (["report"], "index.html"),
                                           (["figures"], None)])
def test_a_fifo_named_like_an_output_inside_the_output_folder_is_never_replaced(tmp_path, store_a, command, name):
    """The neighbour inside the folder: --force replaces the files a command did not write, but only regular
    files and links (never written through); a FIFO or a folder of an output's name is refused in one line."""
    import os
    import stat

    out = tmp_path / "o"
    args = [command[0], str(store_a), "--out", str(out)] + (["--no-figures"] if command[0] == "report" else [])
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    name = name or sorted(p.name for p in out.iterdir() if p.suffix == ".png")[0]
    (out / name).unlink()
    os.mkfifo(out / name)
    result = runner.invoke(app, [*args, "--force"])
    assert result.exit_code == 1
    _one_line_naming(result, out / name)
    assert stat.S_ISFIFO((out / name).lstat().st_mode)


@pytest.mark.parametrize("command", OUTPUT_COMMANDS, ids=_id)
@pytest.mark.parametrize("where", ["read-only", "under a file"])
def test_an_output_in_a_place_that_cannot_be_written_is_one_line_naming_it(tmp_path, store_a, command, where):
    """Issue 65: `tables --out` a read-only place said `PermissionError` as an unexpected error, and `export`
    named its temporary file (`x.csv.1234.tmp`), not the user's path."""
    from tests.helpers import read_only_folder

    blocker = tmp_path / "place"
    if where == "under a file":
        blocker.write_text("a file\n")
        path = blocker / "out"
        _check_one_line(command, store_a, path)
        return
    with read_only_folder(blocker):
        _check_one_line(command, store_a, blocker / "out")
    assert list(blocker.iterdir()) == []


def _check_one_line(command, store, path):
    result = runner.invoke(app, [c.format(s=store, p=path) for c in command])
    assert result.exit_code == (2 if command[0] == "check" else 1), result.output
    _one_line_naming(result, path)


def test_only_an_error_about_the_output_is_said_as_the_outputs(tmp_path):
    """The neighbour the one line must not swallow: `tables S` writes into S/tables, and an error reading S
    itself (or a file of it) is the store's, not "cannot write the tables there"."""
    from eemrepro.reports._outputs import OutputPlaceError, writing

    store = tmp_path / "s"
    (store / "records").mkdir(parents=True)
    for about in (store, store / "records" / "x.parquet"):
        with pytest.raises(PermissionError), writing(store / "tables", "tables"):
            raise PermissionError(13, "Permission denied", str(about))
    for about in (tmp_path / "new", tmp_path / "new" / "tables" / "x.md", tmp_path / "e.csv.123.tmp"):
        with pytest.raises(OutputPlaceError, match=r"cannot write the tables there \(permission denied\); choose "
                                                   r"another --out, or make it writable"):
            with writing(tmp_path / ("e.csv" if about.suffix == ".tmp" else "new/tables"), "tables"):
                raise PermissionError(13, "Permission denied", str(about))


def test_a_store_holding_a_zero_row_segment_works_with_every_command(tmp_path, store_a):
    """A run killed while its only line was half written, then `compact`: a sealed segment of no records.
    `forget` failed on it (KeyError: Field "model" does not exist in schema)."""
    import shutil

    from eemrepro import read_results

    store = tmp_path / "s"
    shutil.copytree(store_a, store)
    (store / "records" / "s900-20260101T000000.000000-1.jsonl").write_text('{"dataset": "heart", "mod')
    assert runner.invoke(app, ["compact", str(store)]).exit_code == 0
    empty = [p for p in (store / "records").glob("*.parquet") if p.name.startswith("s900-")]
    assert empty and __import__("pyarrow.parquet").parquet.read_metadata(empty[0]).num_rows == 0
    records = len(read_results(store))
    for command in (["tables", str(store)], ["status", str(store)], ["check", str(store), "--report-only"],
                    ["store", "verify", str(store)]):
        assert runner.invoke(app, command).exit_code == 0, command
    result = runner.invoke(app, ["forget", str(store), "--models", "C"])
    assert result.exit_code == 0, result.output
    assert f"moved {records} record(s)" in result.output and len(read_results(store)) == 0


def test_figures_of_an_embedding_store_of_your_own_data_draw_it(tmp_path):
    """`figures` on an embedding-kind store of a local set wrote nothing and exited 0."""
    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    cfg = tmp_path / "emb.yaml"
    cfg.write_text("name: emb\nkind: embedding\ndatasets: [noise]\nlocal_datasets:\n  noise: {file: noise.csv, "
                   "target: label}\nmodels:\n  PCA: {estimator: 'sklearn.decomposition:PCA', n_components: 2}\n"
                   "analysis: {max_points: 100}\nprotocol: {seed: 0}\n")
    assert runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "s"), "--jobs", "1", "--quiet"]).exit_code == 0
    result = runner.invoke(app, ["figures", str(tmp_path / "s"), "--out", str(tmp_path / "f")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "f").glob("embedding_noise.*")) == ["embedding_noise.png",
                                                                                   "embedding_noise.svg"]


def test_figures_with_nothing_to_draw_fail_saying_so(tmp_path):
    """The neighbour: a store no figure can draw from is an error naming it, not a silent exit 0."""
    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    cfg = _config(tmp_path, "{file: noise.csv, target: label}")
    assert runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "s"), "--jobs", "1", "--quiet"]).exit_code == 0
    result = runner.invoke(app, ["figures", str(tmp_path / "s"), "--out", str(tmp_path / "f")])
    assert result.exit_code == 1
    assert f"no figure can be drawn from {tmp_path / 's'}" in " ".join(result.output.split())


@pytest.mark.parametrize("value, message", [
    ("inf", "an infinite value in column 'x2'"),
    ("1e200", "column 'x2' holds values as large as 1e+200, past what scaling and squared distances hold"),
])
def test_a_value_the_scaling_cannot_take_is_refused_naming_the_column(tmp_path, value, message):
    """Every value a fit will see is checked at load: min-max scaling of a column reaching 1e200 gives a range
    of inf (every scaled value 0 or NaN), a kernel's squared distance overflows."""
    frame = _noise_sorted_by_class().astype({"x2": object})
    frame.loc[3, "x2"] = value
    frame.to_csv(tmp_path / "noise.csv", index=False)
    with pytest.raises(ConfigError, match=rf"noise\.csv: {re.escape(message)}"):
        load_config(_config(tmp_path, "{file: noise.csv, target: label}"))


def _arff(frame, missing_rows):
    """``frame`` (x1, x2, label 0/1) as an ARFF file whose class is ``?`` (ARFF's missing value) in the rows
    ``missing_rows``, the class a nominal attribute {no, yes}."""
    lines = ["@relation noise", "@attribute x1 numeric", "@attribute x2 numeric", "@attribute class {no,yes}",
             "@data"]
    for i, r in enumerate(frame.itertuples()):
        label = "?" if i in missing_rows else ("yes" if r.label else "no")
        lines.append(f"{r.x1!r},{r.x2!r},{label}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("positive", ["", ", positive: 'yes'"])
def test_an_arff_files_missing_class_is_refused_not_made_a_label(tmp_path, positive):
    """The user's report: ARFF's ``?`` in the class column became a third class (no ``positive``), or joined the
    negatives (``positive: yes``). Refused in one line naming the file, the column, how many rows and the first
    (rows 5 and 12 of the data, counted from 1), before anything runs."""
    (tmp_path / "noise.arff").write_text(_arff(_noise_sorted_by_class(), missing_rows={4, 11}))
    cfg = _config(tmp_path, "{file: noise.arff, target: class" + positive + "}")
    result = runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "out"), "--dry-run"])
    assert result.exit_code == 1
    assert result.output.strip() == (f"error: {tmp_path / 'mine.yaml'}, line 4: key 'local_datasets.noise': "
                                     f"{tmp_path / 'noise.arff'}: 2 row(s) without a class (column 'class' empty, "
                                     "NA or '?'; the first is row 5); drop them first: a missing class is not a label")


def test_an_arff_files_quoted_question_mark_class_is_refused_saying_it_is_no_missing_mark(tmp_path):
    """A class written ``'?'`` (quoted) is a nominal value, not ARFF's missing mark: scipy's reader refuses it as a
    value its attribute does not declare. The refusal said that alone; it now says why and what to do."""
    text = _arff(_noise_sorted_by_class(), missing_rows={4}).replace(",?\n", ",'?'\n")
    (tmp_path / "noise.arff").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(_config(tmp_path, "{file: noise.arff, target: class}"))
    assert str(err.value).endswith(
        f"{tmp_path / 'noise.arff'}: not a readable arff file ('?' value not in ('no', 'yes')); a quoted '?' is a "
        "value of its own in ARFF, not the missing-value mark: drop those rows (or write ? unquoted where a value is "
        "missing)")


@pytest.mark.parametrize("cell", ["", "NA", "?"])
def test_a_csv_label_cell_empty_na_or_question_mark_is_a_missing_class(tmp_path, cell):
    frame = _noise_sorted_by_class().astype({"label": object})
    frame.loc[6, "label"] = cell
    frame.to_csv(tmp_path / "noise.csv", index=False)
    with pytest.raises(ConfigError, match=re.escape("noise.csv: 1 row(s) without a class (column 'label' empty, "
                                                    "NA or '?'; the first is row 7)")):
        load_config(_config(tmp_path, "{file: noise.csv, target: label, positive: 1}"))


@pytest.mark.parametrize("fmt", ["csv", "arff"])
def test_a_question_mark_in_a_feature_column_is_a_missing_value(tmp_path, fmt):
    """Before, a CSV's ``?`` made the column text: 'not numeric (such as '0.12...')', a number as the example."""
    frame = _noise_sorted_by_class()
    if fmt == "csv":
        frame.astype({"x2": object}).assign(x2=lambda f: f["x2"].where(f.index != 9, "?")).to_csv(
            tmp_path / "noise.csv", index=False)
    else:
        text = _arff(frame, missing_rows=set()).splitlines()
        x1, _, label = text[5 + 9].split(",")
        text[5 + 9] = f"{x1},?,{label}"
        (tmp_path / "noise.arff").write_text("\n".join(text) + "\n")
    with pytest.raises(ConfigError, match=re.escape(f"noise.{fmt}: a missing value in row 10 (column 'x2') and "
                                                    "0 more row(s); drop or impute them first")):
        load_config(_config(tmp_path, f"{{file: noise.{fmt}, target: {'label' if fmt == 'csv' else 'class'}}}"))


def _wide(path, d, n=12, seed=0):
    """A CSV of ``n`` rows of ``d`` noise features named like a microarray's probes (``probe_000001_at_signal``,
    23 characters: 40,000 of them are 0.9 MB of names, 1.1 MB as a YAML list) and a label column; written
    with numpy (pandas' writer takes seconds at this width)."""
    rng = np.random.default_rng(seed)
    names = [f"probe_{j:06d}_at_signal" for j in range(d)]
    X = rng.integers(0, 10, size=(n, d))
    with open(path, "w") as fh:
        fh.write(",".join(names) + ",label\n")
        for row, label in zip(X, ["a", "b"] * (n // 2), strict=True):
            fh.write(",".join(map(str, row)) + f",{label}\n")
    return names


WIDE = """name: wide
datasets: [wide]
local_datasets:
  wide: {{file: wide.csv, target: label{extra}}}
models:
  C: {{estimator: "tests.helpers:Sleepy", grid: {{delay: [0.0]}}}}
protocol: {{folds: 3, repeats: 1, seed: 0, scaling: none}}
"""


@pytest.mark.slow
@pytest.mark.parametrize("d", [40_000, 100_000])
def test_a_csv_of_tens_of_thousands_of_columns_runs_and_its_folder_stays_readable(tmp_path, d):
    """The user's report: 40,000 feature columns wrote a config.yaml over the 1 MB a YAML document may be, and
    every command on the folder then failed; each record's identity carried the whole list (1.3 MB). Now the
    folder's config and each identity hold a digest of the list (the file's columns, which the user did not
    write): status, tables and a second run (nothing to do) read the folder; a renamed column is a changed
    identity, as the list was."""
    from eemrepro import read_results

    names = _wide(tmp_path / "wide.csv", d, n=6)
    cfg = tmp_path / "wide.yaml"
    cfg.write_text(WIDE.format(extra=""))
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    assert (out / "config.yaml").stat().st_size < 10_000  # (the names alone are 23 * d bytes)
    assert names[-1] not in (out / "config.yaml").read_text()
    for command in (["status", str(out)], ["tables", str(out), "--out", str(tmp_path / "tables")]):
        result = runner.invoke(app, command)
        assert result.exit_code == 0, (command, result.output)
    assert "3 of 3 units done, 0 to run" in runner.invoke(app, ["status", str(out)]).output
    df = read_results(out)
    assert list(df["status"]) == ["ok"] * 3
    assert max(len(str(i)) for i in df["identity"]) < 5_000
    if d > 40_000:
        return  # (the rest reads the file thrice more: the 40,000 columns say it)
    again = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1"])
    assert again.exit_code == 0 and "ran 0 of 0 pending units (3 were stored)" in again.output, again.output
    text = (tmp_path / "wide.csv").read_text().replace(names[d // 2], names[d // 2].replace("signal", "signa1"), 1)
    (tmp_path / "wide.csv").write_text(text)
    changed = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"])
    assert changed.exit_code == 1
    assert f"data.columns: '{d} columns sha256:" in " ".join(changed.output.split()), changed.output


@pytest.mark.slow
def test_a_long_columns_list_the_user_wrote_is_kept_once_and_each_identity_holds_its_digest(tmp_path):
    """``columns:`` listing 30,000 of a file's 45,000 columns (a 0.8 MB config): the folder's config keeps the list
    (it is how the file is read) once, in flow style as the user wrote it, under the 1 MB a config may be; each
    identity holds its digest. A list whose folder copy would pass 1 MB (given through the Python API, which no
    YAML limit bounds) is refused before anything is written."""
    import json

    from eemrepro import read_results
    from eemrepro.experiments import parse_config, run_experiment

    names = _wide(tmp_path / "wide.csv", 45_000, n=6)
    chosen = names[::-1][:30_000]
    cfg = tmp_path / "wide.yaml"
    cfg.write_text(WIDE.format(extra=f", columns: {json.dumps(chosen)}"))
    assert 700_000 < cfg.stat().st_size < 1_000_000
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    stored = load_config(out / "config.yaml", import_estimators=False).local_datasets["wide"]
    assert stored.local["columns"] == chosen
    assert (out / "config.yaml").stat().st_size < cfg.stat().st_size + 2_000
    assert max(len(str(i)) for i in read_results(out)["identity"]) < 5_000
    assert runner.invoke(app, ["status", str(out)]).exit_code == 0
    raw = yaml.safe_load(WIDE.format(extra=""))
    raw["local_datasets"]["wide"]["columns"] = names
    config = parse_config(raw, home=str(tmp_path))
    with pytest.raises(ValueError, match=r"config\.yaml would be 1,[0-9,]+ bytes, over the 1,000,000 a config may be"):
        run_experiment(config, out=tmp_path / "api", jobs=1, progress=False)
    assert not (tmp_path / "api").exists()


def _train_test(folder, size):
    return _config(folder, "{file: noise.csv, target: label}",
                   f"{{splitter: train-test, train_size: {size}, repeats: 2, seed: 0}}")


@pytest.mark.parametrize("size, n_train", [(0.01, 0), (0.024, 1), (79, 79), ("{noise: 0.99}", 79)])
@pytest.mark.parametrize("dry", [True, False])
def test_a_train_size_too_small_or_large_for_a_local_set_is_refused_naming_the_valid_range(tmp_path, size, n_train,
                                                                                          dry):
    """The user's report: train_size too small gave scikit-learn's raw "the resulting train set will be empty",
    no key, no data set, while --dry-run said fine, and left a folder behind. The bounds are scikit-learn's
    ``StratifiedShuffleSplit``'s (checked here against it): floor(train_size * 80) or the count from 2 to 78."""
    from sklearn.model_selection import StratifiedShuffleSplit

    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    y = pd.read_csv(tmp_path / "noise.csv")["label"].to_numpy()
    for valid, ok in ((0.025, True), (0.024, False), (0.987, True), (0.988, False), (2, True), (78, True),
                      (79, False)):  # (the range the message gives, as scikit-learn has it)
        try:
            next(StratifiedShuffleSplit(1, train_size=valid, random_state=0).split(y, y))
            assert ok, valid
        except ValueError:
            assert not ok, valid
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(_train_test(tmp_path, size)), "--out", str(out), "--quiet"]
                           + (["--dry-run"] if dry else []))
    assert result.exit_code == 1
    key = "protocol.train_size.noise" if str(size).startswith("{") else "protocol.train_size"
    value = 0.99 if str(size).startswith("{") else size
    assert result.output.strip() == (
        f"error: {tmp_path / 'mine.yaml'}, line 7: key '{key}': {value!r} leaves {n_train} of the 80 points of data "
        f"set noise ({tmp_path / 'noise.csv'}) for training and {80 - n_train} for testing; a stratified split needs "
        "at least one of each of its 2 classes on each side: use a count from 2 to 78 or a fraction from 0.025 "
        "to 0.987")
    assert not out.exists()
    ok = runner.invoke(app, ["run", str(_train_test(tmp_path, 0.025)), "--out", str(out), "--quiet"])
    assert ok.exit_code == 0, ok.output


# noise.csv holds 45 and 35 points of its classes (80). Under nested selection the inner stratified k-fold runs
# on each training part, so a training part should hold inner_folds points of every class. What one holds at
# least of each class: 3-fold (a test fold takes ceil(45 / 3) = 15 and ceil(35 / 3) = 12): 30 and 23, and with
# folds: 4, 26 of the smaller (35 - 9), with 9, 31 (35 - 4), with 35, 34; a train-test split of 6 rows
# (scikit-learn: floor(6 x 45 / 80) = 3, floor(6 x 35 / 80) = 2, the row left to the larger remainder, 0.625):
# 3 and 3; of 5 rows: 3 and 2; of 8 rows 4.5 and 3.5 tie, either may get 4 (checked below against
# StratifiedShuffleSplit), so 9 rows (5 and 4) is the least that surely holds 4; the whole set: 45 and 35.
# Fewer than inner_folds of one class: said before the run (some inner test parts hold none of it); of every
# class: refused (scikit-learn cannot make the folds).
INNER_SHORT = [
    ("folds: 3", 24, 23, "a", "some inner test parts hold none of it; use inner_folds <= 23 or folds >= 4"),
    ("folds: 3", 31, 23, "every", "use inner_folds <= 23 or folds >= 9"),
    ("folds: 3", 34, 23, "every", "use inner_folds <= 23 or folds >= 35"),
    ("folds: 3", 35, 23, "every", "use inner_folds <= 23"),
    ("splitter: train-test, train_size: 5", 3, 2, "a",
     "some inner test parts hold none of it; use inner_folds <= 2 or train_size: 6 (rows)"),
    ("splitter: train-test, train_size: {noise: 5}", 3, 2, "a",
     "some inner test parts hold none of it; use inner_folds <= 2 or train_size: 6 (rows)"),
    ("splitter: train-test, train_size: 6", 4, 3, "every", "use inner_folds <= 3 or train_size: 9 (rows)"),
    ("splitter: whole", 36, 35, "a", "some inner test parts hold none of it; use inner_folds <= 35"),
    ("splitter: whole", 46, 35, "every", "use inner_folds <= 35"),
]


@pytest.mark.parametrize("protocol, inner, low, which, fix", INNER_SHORT)
@pytest.mark.parametrize("dry", [True, False])
def test_inner_folds_above_what_a_training_part_holds_of_a_class_are_said_for_every_splitter(
        tmp_path, protocol, inner, low, which, fix, dry):
    """The user's report: ``splitter: train-test, train_size: 6`` with ``selection: nested`` passed the dry run
    in silence, and the run printed scikit-learn's raw "The least populated class in y has only 2 members, which
    is less than n_splits=3" seven times and picked grid points on inner test parts of two points (and with 4
    inner folds failed on "n_splits=4 cannot be greater than the number of members in each class"); the k-fold
    equivalent was refused, but with no fix. One rule for every splitter, in one line before the first unit."""
    from eemrepro.experiments import ProtocolWarning

    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    config = _config(tmp_path, "{file: noise.csv, target: label}",
                     f"{{{protocol}, repeats: 2, seed: 0, selection: nested, inner_folds: {inner}}}")
    out = tmp_path / "out"
    if which == "every":
        fix = f"a training part may hold fewer than that of every class, and scikit-learn could not make its inner " \
              f"folds; {fix}"
    said = (f"{inner} inner folds, but the training parts of data set noise ({tmp_path / 'noise.csv'}) hold as "
            f"few as {low} point(s) of a class (class sizes [45, 35]): {fix}")
    command = ["run", str(config), "--out", str(out), "--quiet", "--jobs", "1"] + (["--dry-run"] if dry else [])
    if which == "every":
        result = runner.invoke(app, command)
        assert result.exit_code == 1
        assert result.output.strip() == f"error: {config}, line 7: key 'protocol.inner_folds': {said}", result.output
        assert not out.exists()
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    notes = [str(w.message) for w in caught if issubclass(w.category, ProtocolWarning)]
    assert notes == [f"{config}: key 'protocol.inner_folds': {said}"]
    # ...said once instead of scikit-learn's warning at every inner split
    assert not any("least populated" in str(w.message) for w in caught) and "least populated" not in result.output


def test_the_inner_folds_note_is_one_line_of_the_command_as_a_user_runs_it(tmp_path):
    """In a process of its own (the command's warning display, not CliRunner's): one "warning: ..." line on
    stderr, no source listing, and the dry run's count after it."""
    import subprocess
    import sys

    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    config = _config(tmp_path, "{file: noise.csv, target: label}",
                     "{splitter: train-test, train_size: 5, repeats: 2, seed: 0, selection: nested}")
    dry = subprocess.run([sys.executable, "-m", "eemrepro", "run", str(config), "--out", str(tmp_path / "out"),
                          "--dry-run"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stderr.splitlines() == [
        f"warning: {config}: key 'protocol.inner_folds': 3 inner folds, but the training parts of data set noise "
        f"({tmp_path / 'noise.csv'}) hold as few as 2 point(s) of a class (class sizes [45, 35]): some inner test "
        "parts hold none of it; use inner_folds <= 2 or train_size: 6 (rows)"], dry.stderr
    assert "mine: 8 units, 0 already stored, 8 to run" in dry.stdout  # 2 repeats x (1 + 3 inner folds)


def test_the_counts_the_inner_folds_note_says_are_scikit_learn_s_and_a_run_within_them_is_clean(tmp_path):
    """The counts said above are scikit-learn's: 5 training rows of noise.csv hold 2 of a class on every draw,
    6 hold 3 of each, 8 hold 3 of one class on some draws, 9 at least 4 of each; and a run at the inner_folds
    the note offers says nothing (no note, no scikit-learn warning)."""
    from sklearn.model_selection import StratifiedShuffleSplit

    from eemrepro.experiments import ProtocolWarning

    frame = _noise_sorted_by_class()
    frame.to_csv(tmp_path / "noise.csv", index=False)
    y = frame["label"].to_numpy()
    fewest = {m: {np.bincount(y[next(StratifiedShuffleSplit(1, train_size=m, random_state=s).split(y, y))[0]]).min()
                  for s in range(40)} for m in (5, 6, 8, 9)}
    assert fewest == {5: {2}, 6: {3}, 8: {3, 4}, 9: {4}}
    for size, inner in ((5, 2), (6, 3), (9, 4)):
        config = _config(tmp_path, "{file: noise.csv, target: label}",
                         f"{{splitter: train-test, train_size: {size}, repeats: 2, seed: 0, selection: nested, "
                         f"inner_folds: {inner}}}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / f"out{size}"), "--jobs", "1",
                                         "--quiet"])
        assert result.exit_code == 0, result.output
        assert not [w for w in caught if issubclass(w.category, ProtocolWarning) or "least populated" in
                    str(w.message)], [str(w.message) for w in caught]


@pytest.mark.parametrize("sep, said, read", [
    (";", "';', not by commas (a spreadsheet's export where the decimal mark is a comma, say)",
     "sep=';', decimal=','"),
    ("\t", "a tab, not by commas", "sep='\\t'")])
def test_a_csv_separated_otherwise_than_by_commas_is_refused_saying_so(tmp_path, sep, said, read):
    """The user's report: a semicolon-separated file read as '1 column(s)' with no hint at the separator."""
    frame = _noise_sorted_by_class()
    frame.to_csv(tmp_path / "noise.csv", index=False, sep=sep, decimal="," if sep == ";" else ".")
    result = runner.invoke(app, ["run", str(_config(tmp_path, "{file: noise.csv, target: label}")), "--dry-run"])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1
    assert result.output.strip().endswith(
        f"noise.csv: 1 column(s); a data set needs features and a label: its header is separated by {said}; no "
        f"local_datasets key sets a separator: save it comma-separated with '.' decimals (pandas.read_csv(path, "
        f"{read}).to_csv(new_path, index=False))"), result.output
    # The fix the message gives reads the file as written.
    fixed = pd.read_csv(tmp_path / "noise.csv", sep=sep, decimal=",")
    fixed.to_csv(tmp_path / "noise.csv", index=False)
    load_config(_config(tmp_path, "{file: noise.csv, target: label}"))
    np.testing.assert_allclose(load_dataset("noise", scaling=None).X, frame[["x1", "x2"]].to_numpy())


def test_a_target_and_labels_differing_only_in_unicode_normalisation_are_matched(tmp_path):
    """The user's report: "no column 'diagnóstico'" beside a column that looks the same: the file (saved on
    macOS) writes it decomposed (NFD: o + combining accent), the config composed (NFC). Matched as NFC, as the
    positive label 'sí' and a 'columns' name are; the counts are the file's own (pandas on the NFD text)."""
    import unicodedata

    nfd = lambda text: unicodedata.normalize("NFD", text)  # noqa: E731
    frame = _noise_sorted_by_class().rename(columns={"label": nfd("diagnóstico"), "x2": nfd("presión")})
    frame[nfd("diagnóstico")] = np.where(frame[nfd("diagnóstico")] == 1, nfd("sí"), "no")
    frame.to_csv(tmp_path / "noise.csv", index=False)
    assert "diagnóstico" not in pd.read_csv(tmp_path / "noise.csv").columns  # (the config's spelling is NFC)
    config = load_config(_config(tmp_path, "{file: noise.csv, target: diagnóstico, positive: sí, "
                                           "columns: [presión, x1]}"))
    entry = config.local_datasets["noise"]
    assert entry.expected["class_counts"] == [int((frame[nfd("diagnóstico")] == "no").sum()),
                                              int((frame[nfd("diagnóstico")] == nfd("sí")).sum())]
    data = load_dataset("noise", scaling=None)
    np.testing.assert_array_equal(data.X, frame[[nfd("presión"), "x1"]].to_numpy())
    np.testing.assert_array_equal(data.y, np.where(frame[nfd("diagnóstico")] == nfd("sí"), 1, -1))


# -- the papers' models on your data, in one line -----------------------------------------------------------

def test_paper_models_names_a_papers_models_with_their_published_grids(tmp_path):
    """`paper_models: eem` gives EEM Table 4's nine models as configs/uci.yaml has them (the same parsed specs),
    beside the config's own."""
    from pathlib import Path

    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    cfg = _config(tmp_path, "{file: noise.csv, target: label}")
    cfg.write_text(cfg.read_text().replace("models:\n", "paper_models: eem\nmodels:\n"))
    mine = load_config(cfg)
    uci = load_config(Path(__file__).resolve().parents[2] / "configs" / "uci.yaml")
    assert [m.name for m in mine.models] == [m.name for m in uci.models] + ["L"]
    for a, b in zip(mine.models, uci.models, strict=False):
        assert (a.estimator, a.params, a.grid) == (b.estimator, b.params, b.grid)
    assert mine.model("SVMrbf").grid["C"] == [10.0 ** k for k in range(-1, 11)]  # EEM section 7's C grid


def test_paper_models_keep_a_papers_per_data_set_parameters_for_its_data_sets_only(tmp_path):
    """Hwang's ensembles set n_subsets for sensor-readings-4 alone: on the user's data the model's own value."""
    _noise_sorted_by_class().to_csv(tmp_path / "noise.csv", index=False)
    cfg = tmp_path / "h.yaml"
    cfg.write_text("name: h\ndatasets: [noise]\nlocal_datasets:\n  noise: {file: noise.csv, target: label}\n"
                   "paper_models: lssvm-ensemble\nprotocol: {folds: 3, repeats: 1, seed: 0}\n")
    config = load_config(cfg)
    assert all(not m.per_dataset for m in config.models)
    assert config.model("LS-SVM ensemble").params_for("noise")["n_subsets"] == 3


@pytest.mark.parametrize("value, message", [
    ("eme", "no model set 'eme'; the model sets are ['eem', 'esmm', 'lssvm-ensemble']; did you mean 'eem'?"),
    ("[eem, eem]", "model 'WELMsig' is also in model set 'eem': rename it"),
    ("5", "a model set's name, or a list of them"),
])
def test_a_bad_paper_models_value_is_refused_in_one_line(tmp_path, value, message):
    cfg = _small(tmp_path, "mine")
    cfg.write_text(cfg.read_text() + f"paper_models: {value}\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(cfg)


def test_a_model_named_like_a_paper_model_is_refused(tmp_path):
    cfg = _small(tmp_path, "mine", model="EEMsig", extra="paper_models: eem\n")
    with pytest.raises(ConfigError, match=r"key 'models.EEMsig': model 'EEMsig' is also in model set 'eem'"):
        load_config(cfg)


# -- the guide's own-data section, end to end, as a new user follows it -------------------------------------

def _guide_section():
    """The config and the commands of docs/benchmarking.md's "The papers' models on your data", as written."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "benchmarking.md").read_text()
    section = text[text.index("### The papers' models on your data"):text.index("## 3. What you get")]
    config = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    commands = [line.split("#")[0].split() for line in re.search(r"```bash\n(.*?)```", section, re.S).group(1)
                .splitlines() if line.strip()]
    return config, commands


@pytest.mark.slow
def test_the_guides_own_data_section_runs_end_to_end(tmp_path, monkeypatch, capfd):
    """A new user with CSVs of their own, following only the guide: the paper's models and theirs, a table of
    data sets x models and a critical-difference diagram, in three commands, from a folder of their own.
    Expected numbers: each cell recomputed with numpy from the stored records (the mean over the test folds at
    the grid point whose mean is best), the average ranks with scipy's rankdata."""
    import shutil
    from pathlib import Path

    import yaml
    from scipy.stats import rankdata

    from eemrepro import read_results

    config_text, commands = _guide_section()
    config = yaml.safe_load(config_text)
    for k, spec in enumerate(config["local_datasets"].values()):  # the user's CSVs, as the config reads them
        rng = np.random.default_rng(k)
        y = np.where(rng.random(90) < 0.3, spec["positive"], "benign")
        frame = pd.DataFrame(rng.normal(size=(90, 3)) + (y == spec["positive"])[:, None] * (0.6 + 0.3 * k),
                             columns=["radius", "texture", "area"])
        frame[spec["target"]] = y
        frame.to_csv(tmp_path / spec["file"], index=False)
    shutil.copy(Path(__file__).resolve().parents[2] / "examples" / "benchmark-a-classifier" / "my_classifier.py",
                tmp_path)
    (tmp_path / "my-data.yaml").write_text(config_text)
    monkeypatch.chdir(tmp_path)
    assert [c[:2] for c in commands] == [["eemrepro", "run"], ["eemrepro", "tables"], ["eemrepro", "report"]]
    for command in commands:
        result = runner.invoke(app, command[1:] + (["--jobs", "2", "--quiet"] if command[1] == "run" else []))
        assert result.exit_code == 0, (command, result.output)
    store = tmp_path / "results" / config["name"]
    table = pd.read_csv(store / "tables" / "benchmark_gmean.csv", comment="#")
    models = {"WELMsig", "EEMsig", "WELMnsig", "EEMnsig", "WELMrbf", "EEMrbf", "LS-SVMrbf", "EEKMrbf", "SVMrbf",
              "KNM"}
    assert set(table["method"]) == models and set(table["dataset"]) == set(config["datasets"])
    df = read_results(store)
    assert (df["status"] == "ok").all(), df.loc[df["status"] != "ok", ["model", "error_message"]].drop_duplicates()
    df = df[df["inner"].isna()]
    best = {}
    for (dataset, model), g in df.groupby(["dataset", "model"]):
        means = g.groupby("point")["gmean"].mean()
        best[(dataset, model)] = 100 * float(means.max())
    got = {(r.dataset, r.method): r.gmean for r in table.itertuples()}
    assert len(got) == len(table) == len(best), table.to_string()
    assert got == pytest.approx(best, abs=5.01e-5)  # the csv holds four decimals
    # The average ranks of the comparison: scipy's rankdata of each data set's means (1 = best), averaged.
    comparison = (store / "tables" / "benchmark_gmean_comparison.md").read_text()
    names = sorted(models)
    ranks = np.mean([rankdata([-best[(d, m)] for m in names]) for d in config["datasets"]], axis=0)
    knm = dict(zip(names, ranks, strict=True))["KNM"]
    assert re.search(rf"\| KNM\s*\|\s*{knm:.2f} \|", comparison), comparison
    page = (store / "report" / "benchmark.html").read_text()
    assert "<svg" in page and 'id="benchmark_gmean-cd-bar"' in page
    _journey_to_a_paper(store, config, best, tmp_path, capfd.readouterr())


def _journey_to_a_paper(store, config, best, folder, printed):
    """Issue 67's last step of the journey above: the files a paper takes, and a first run that tells the truth.
    ``best``: each cell's mean recomputed from the records; ``printed``: what the commands wrote to the
    terminal's own file descriptors (LIBSVM writes there, not through Python)."""
    from tests.helpers import bayes_against_baycomp, latex_rows

    # No bare solver line on the terminal (the records count the fits that stopped short: the tables' ‡k).
    assert "WARNING: reaching max number of iterations" not in printed.out + printed.err
    tables = store / "tables"
    # The critical-difference diagram as files a paper takes: SVG (its text kept as text) and PDF.
    svg = (tables / "benchmark_gmean_cd.svg").read_text()
    assert "KNM" in svg and (tables / "benchmark_gmean_cd.pdf").read_bytes().startswith(b"%PDF")
    # The LaTeX matrix: data sets x models, the best of each data set bold at the printed decimal (GMean %: one),
    # ties too; its last row the average ranks. Expected: the means recomputed from the records.
    rows = latex_rows((tables / "benchmark_gmean.tex").read_text())
    header, body = rows[0], {r[0].replace("\\_", "_"): r[1:] for r in rows[1:]}
    for dataset in config["datasets"]:
        top = max(round(best[(dataset, m)], 1) for m in header[1:])
        bold = {m for m, cell in zip(header[1:], body[dataset], strict=True) if cell.startswith("\\textbf{")}
        assert bold == {m for m in header[1:] if round(best[(dataset, m)], 1) == top}, (dataset, body[dataset])
    assert "average rank" in body
    # The Bayesian probabilities, as baycomp (Benavoli et al.'s package) gives them from the same folds and means.
    signed_rank, correlated = bayes_against_baycomp(store, tables)
    assert signed_rank >= 9 and correlated >= 9 * len(config["datasets"])  # KNM against each of the paper's nine
    # Words that fit a store no paper's table holds: no check file, no reproduction title.
    assert not (tables / "check.md").exists()
    assert "Reproduction report" not in (store / "report" / "index.html").read_text()
    # A mistake in a grid is refused before the first unit, in one line naming the model, the key and the value.
    typo = folder / "typo.yaml"
    typo.write_text((folder / "my-data.yaml").read_text().replace("{log10: [-2, 2]}", "[0.1, one]")
                    .replace("name: my-data-benchmark", "name: typo"))
    result = runner.invoke(app, ["run", str(typo), "--dry-run"])
    assert result.exit_code != 0 and not (folder / "results" / "typo").exists()
    (line,) = [ln for ln in result.output.splitlines() if ln.strip()]
    assert "KNM" in line and "gamma" in line and "'one'" in line, line
    # A changed data file is named, with what happens to its old records.
    first = config["local_datasets"][config["datasets"][0]]["file"]
    data = (folder / first).read_text().splitlines(keepends=True)
    (folder / first).write_text("".join(data[:-10]))
    result = runner.invoke(app, ["run", str(folder / "my-data.yaml"), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert first in result.output and "rows 90 -> 80" in result.output.replace("→", "->"), result.output


def test_a_config_named_by_a_relative_path_looks_up_its_module_by_an_absolute_folder(tmp_path, monkeypatch):
    """Run from the config's folder (`eemrepro run my-data.yaml`): the folder its module is found in must be
    absolute, or a worker started in another folder (a reused loky worker, a Dask worker) looks elsewhere and
    every fit of the user's model fails ("the fit's process exited with status 1")."""
    from pathlib import Path

    (tmp_path / "clf.py").write_text(CLF.format(which=0))
    cfg = _small(tmp_path, "mine")
    cfg.write_text(cfg.read_text().replace("tests.helpers:Sleepy", "clf:Const").replace("{delay: [0.0]}",
                                                                                       "{which: [0]}"))
    monkeypatch.chdir(tmp_path)
    config = load_config("mine.yaml")
    assert Path(config.home).is_absolute() and Path(config.model("C").home) == tmp_path.resolve()


@pytest.mark.parametrize("target", ["label", None])
def test_a_csv_whose_header_repeats_a_name_is_refused_naming_it(tmp_path, target):
    """The user's report: a header ``label,x1,x2,label`` (the label copied to the end by a spreadsheet) read as
    ``label`` and ``label.1``, pandas' name for the second, which became a feature: an SVM on noise scored 100.0.
    Which column a repeated name means is the file's ambiguity, not the tool's to settle."""
    frame = _noise_sorted_by_class()
    frame.insert(0, "label", frame.pop("label"))
    frame["label.copy"] = frame["label"]
    text = frame.to_csv(index=False).replace("label.copy", "label", 1)
    (tmp_path / "noise.csv").write_text(text)
    spec = "{file: noise.csv, target: label}" if target else "{file: noise.csv}"
    result = runner.invoke(app, ["run", str(_config(tmp_path, spec)), "--dry-run"])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.strip().endswith(
        f"{tmp_path / 'noise.csv'}: its header names column 'label' twice (columns 1 and 4): rename or drop one "
        "so that each column has a name of its own"), result.output
