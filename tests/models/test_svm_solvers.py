"""SVM(solver="onedal"): Intel oneDAL's SMO against LIBSVM on held-out data, and the one-line error without it."""

import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from eemrepro.experiments import ConfigError, load_config
from eemrepro.experiments._metrics import score_all
from eemrepro.models import SVM


def _data():
    X, y = make_classification(n_samples=900, n_features=8, n_informative=5, weights=[0.8], flip_y=0.03,
                               random_state=0)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    return train_test_split(X, np.where(y == 1, 1, -1), test_size=0.4, stratify=y, random_state=0)


@pytest.mark.parametrize("C, gamma", [(1.0, 1.0), (100.0, 0.1), (1e4, 0.01), (0.1, 10.0)])
def test_onedal_decides_as_libsvm_on_held_out_data(C, gamma):
    pytest.importorskip("sklearnex")
    X_train, X_test, y_train, y_test = _data()
    libsvm = SVM(C=C, gamma=gamma).fit(X_train, y_train)
    onedal = SVM(C=C, gamma=gamma, solver="onedal").fit(X_train, y_train)
    a, b = libsvm.decision_function(X_test), onedal.decision_function(X_test)
    # Both solve the same balanced C-SVC to a 1e-3 KKT tolerance: their decisions agree in sign on >= 99.5 % of
    # held-out points (the bar) and the GMean they reach differs by under half a point.
    assert np.mean(np.sign(a) == np.sign(b)) >= 0.995
    gm = [score_all(y_test, m.predict(X_test), None, m.classes_)["gmean"] for m in (libsvm, onedal)]
    assert abs(gm[0] - gm[1]) <= 0.005
    assert abs(len(libsvm.support_) - len(onedal.support_)) <= max(2, 0.01 * len(libsvm.support_))


def test_without_scikit_learn_intelex_onedal_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearnex", None)
    monkeypatch.setitem(sys.modules, "sklearnex.svm", None)
    X_train, _, y_train, _ = _data()
    with pytest.raises(ValueError, match=r"^SVM\(solver='onedal'\) needs scikit-learn-intelex: "
                                         r"pip install 'eemrepro\[fast\]'$"):
        SVM(solver="onedal").fit(X_train, y_train)
    path = tmp_path / "c.yaml"
    path.write_text("name: c\ndatasets: [heart]\nmodels:\n  S: {estimator: SVM, solver: onedal, grid: {C: [1]}}\n")
    with pytest.raises(ConfigError, match=r"c.yaml, line 4: key 'models.S.solver': .*pip install 'eemrepro\[fast\]'"):
        load_config(path)


def test_the_solver_is_part_of_a_records_identity(tmp_path):
    pytest.importorskip("sklearnex")
    from eemrepro.experiments import enumerate_units, get_kind

    path = tmp_path / "c.yaml"
    path.write_text("name: c\ndatasets: [heart]\nmodels:\n  S: {estimator: SVM, solver: onedal, grid: {C: [1]}}\n")
    cfg = load_config(path)
    unit = enumerate_units(cfg)[0]
    assert get_kind(cfg.kind).identity(cfg, unit)["params.solver"] == "onedal"
    with pytest.raises(ValueError, match="'solver' must be 'libsvm' or 'onedal'"):
        SVM(solver="thundersvm")._check_params()
