"""Bad input gets a clear error naming the problem."""

import numpy as np
import pytest

from eemrepro.models import EEKM, EEM, LSSVM, SVM, WELM

from tests.helpers import make_imbalanced

ESTIMATORS = [WELM(n_hidden=5), EEM(n_hidden=5), EEKM(n_hidden=5), LSSVM(), SVM()]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_bad_inputs(est):
    X, y = make_imbalanced(n=30, d=3)
    with pytest.raises(ValueError, match="only one class"):
        est.fit(X, np.ones(30))
    with pytest.raises(ValueError, match="Only binary classification"):
        est.fit(X, np.arange(30) % 3)
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X_nan, y)
    X_inf = X.copy()
    X_inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.fit(X_inf, y)
    with pytest.raises(ValueError, match="could not convert|numeric"):
        est.fit(np.array([["a", "b"], ["c", "d"]]), [0, 1])
    with pytest.raises(ValueError, match="0 sample"):
        est.fit(np.empty((0, 3)), np.empty(0))
    est.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


@pytest.mark.parametrize(
    "est,match",
    [
        (EEM(n_hidden=0), "'n_hidden' must be"),
        (EEM(activation="tanh"), "'activation' must be one of"),
        (EEM(dtype="float16"), "'dtype' must be one of"),
        (EEKM(gamma=-1.0), "'gamma' must be"),
        (LSSVM(C=0), "'C' must be"),
        (SVM(gamma="scale"), "'gamma' must be"),
        (SVM(cache_size=0), "'cache_size' must be"),
        (EEM(priors=[1.0, -1.0]), "priors must be"),
    ],
)
def test_bad_parameters_name_the_parameter(est, match):
    X, y = make_imbalanced(n=30, d=3)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


def test_any_two_labels_and_minority_is_positive():
    X, y = make_imbalanced(n=60, d=3)
    labels = np.where(y == 1, "rare", "common")
    est = EEM(n_hidden=10, activation="rbf", random_state=0).fit(X, labels)
    assert est.pos_label_ == "rare"
    assert list(est.classes_) == ["common", "rare"]
    proba = est.predict_proba(X)
    assert proba.shape == (60, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # decision_function > 0 means classes_[1] ("rare").
    np.testing.assert_array_equal(est.predict(X) == "rare", est.decision_function(X) > 0)
