"""Everything a config says that can be checked is checked before the first unit (issue 67, finding 5).

A grid value or a fixed parameter the estimator would refuse is refused when the config is read, in one line
naming the model, the key and the value, as a ``log10:`` range is: the run and its dry run stop before any
unit, with nothing written. The estimator is the judge (scikit-learn's ``_parameter_constraints``, our
estimators' ``_check_params``); a user's class that declares neither is built with the value and given a cheap
check, never fitted on data.
"""

import textwrap

import pytest
from typer.testing import CliRunner

from eemrepro.cli import app
from eemrepro.experiments import ConfigError, load_config
from tests.helpers import user_folder

HEART = "name: t\ndatasets: [heart]\nprotocol: {folds: 3, repeats: 1}\nmodels:\n"

#: A user's classifier with no ``_parameter_constraints``: its fit fails loudly, so a check that fitted it shows.
UNCONSTRAINED = textwrap.dedent('''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.linear_model import LogisticRegression


    class Scaled(ClassifierMixin, BaseEstimator):
        def __init__(self, C=1.0, max_iter=100, solver="lbfgs", weights=None):
            self.C = C
            self.max_iter = max_iter
            self.solver = solver
            self.weights = weights

        def fit(self, X, y):
            raise RuntimeError("checking a config must not fit")


    class Declared(Scaled):
        _parameter_constraints = {"C": [str]}  # (this one takes a word for C)


    class Wrapping(ClassifierMixin, BaseEstimator):
        def __init__(self, estimator=LogisticRegression()):
            self.estimator = estimator

        def fit(self, X, y):
            raise RuntimeError("checking a config must not fit")
''')


def _config(tmp_path, models, text=UNCONSTRAINED):
    folder, module = user_folder(tmp_path, text)
    path = folder / "c.yaml"
    path.write_text(HEART + textwrap.indent(textwrap.dedent(models.replace("MOD", module)), "  "))
    return path


@pytest.mark.parametrize(
    "models,key,said",
    [
        # the user's finding, reproduced: scikit-learn's own words for the value
        ("LR: {estimator: 'sklearn.linear_model:LogisticRegression', grid: {C: [0.1, one]}}",
         "models.LR.grid.C", r"The 'C' parameter of LogisticRegression must be a float .*Got 'one' instead"),
        # a fixed parameter of the wrong type, and a quoted number where an integer is due
        ("LR: {estimator: 'sklearn.linear_model:LogisticRegression', penalty: 3}",
         "models.LR.penalty", r"'penalty' parameter of LogisticRegression .*Got 3 instead"),
        ("LR: {estimator: 'sklearn.linear_model:LogisticRegression', max_iter: '100'}",
         "models.LR.max_iter", r"'max_iter' parameter of LogisticRegression must be an int .*Got '100' instead"),
        ("SVC: {estimator: 'sklearn.svm:SVC', grid: {C: [1, 10]}, per_dataset: {heart: {kernel: rbff}}}",
         "models.SVC.per_dataset.heart.kernel", r"'kernel' parameter of SVC must be .*Got 'rbff' instead"),
        # the papers' estimators that had no check of their own
        ("K: {estimator: KDEClassifier, grid: {bandwidth: [0.5, one]}}",
         "models.K.grid.bandwidth", r"KDEClassifier: parameter 'bandwidth' must be a real > 0, got 'one'"),
        ("K: {estimator: KDEClassifier, bandwidth: -1}",
         "models.K.bandwidth", r"KDEClassifier: parameter 'bandwidth' must be a real > 0, got -1"),
        # a user's class without constraints: a word where its default is a number
        ("S: {estimator: 'MOD:Scaled', grid: {C: [0.1, one]}}",
         "models.S.grid.C", r"Scaled\(C='one'\): a string where the default is a number \(C=1\.0\)"),
        ("S: {estimator: 'MOD:Scaled', max_iter: '100'}",
         "models.S.max_iter", r"Scaled\(max_iter='100'\): a string where the default is a number \(max_iter=100\)"),
        # a parameter of an estimator among the model's parameters (a meta-estimator's), by its own constraints
        ("W: {estimator: 'MOD:Wrapping', grid: {estimator__C: [0.1, one]}}",
         "models.W.grid.estimator__C", r"The 'C' parameter of LogisticRegression must be a float .*Got 'one'"),
        # an unknown name (refused already), with the model and the valid ones
        ("S: {estimator: 'MOD:Scaled', grid: {c: [1]}}", "models.S.grid.c", r"Scaled has no parameter 'c'"),
    ],
)
def test_a_value_the_estimator_refuses_is_refused_when_the_config_is_read(tmp_path, models, key, said):
    path = _config(tmp_path, models)
    with pytest.raises(ConfigError, match=said) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}, line 5: key '{key}': "), message
    assert "\n" not in message


@pytest.mark.parametrize(
    "models",
    [
        "S: {estimator: 'MOD:Scaled', grid: {C: [0.1, 1e2]}, solver: saga, weights: [1, 2]}",
        "S: {estimator: 'MOD:Scaled', grid: {solver: [lbfgs, newton-cg]}, weights: balanced}",
        "D: {estimator: 'MOD:Declared', grid: {C: [one, two]}}",  # what the class declares is its word
        "LR: {estimator: 'sklearn.linear_model:LogisticRegression', grid: {C: {log10: [-1, 1]}}, penalty: null}",
        "K: {estimator: KDEClassifier, grid: {bandwidth: [0.25, 0.5, 1, 2]}}",
    ],
)
def test_values_the_estimator_takes_pass_without_a_fit(tmp_path, models):
    config = load_config(_config(tmp_path, models))
    assert config.models[0].name == models.split(":")[0]


def test_run_and_its_dry_run_stop_before_the_first_unit_on_a_word_in_the_grid(tmp_path):
    """The user's finding: ``C: [0.1, one]`` ran every unit, exited 0 and printed ``82.4±1.8 †5``."""
    path = _config(tmp_path, "LR: {estimator: 'sklearn.linear_model:LogisticRegression', grid: {C: [0.1, one]}}")
    out = tmp_path / "out"
    for extra in (["--dry-run"], []):
        result = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--jobs", "1", "--quiet", *extra])
        assert result.exit_code == 1, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {path}, line 5: key 'models.LR.grid.C': "), lines
        assert "Got 'one' instead" in lines[0]
        assert not out.exists()


def test_the_papers_projections_check_their_parameters_without_data():
    """MELM, GEM and the PCA baselines refused a bad value only inside a fit; now ``_check_params`` says it."""
    from eemrepro.models import GEM, MELM, ClassPCA

    for estimator, said in [(MELM(n_starts=0), r"MELM: parameter 'n_starts' must be a integral >= 1, got 0"),
                            (MELM(covariance="lw"), r"MELM: parameter 'covariance' must be one of"),
                            (MELM(tol="small"), r"MELM: parameter 'tol' must be a real > 0"),
                            (GEM(gamma=0), r"GEM: parameter 'gamma' must be a real > 0, got 0"),
                            (ClassPCA(n_components=1.5), r"ClassPCA: parameter 'n_components' must be a integral")]:
        with pytest.raises(ValueError, match=said):
            estimator._check_params()
