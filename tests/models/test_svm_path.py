"""SVM.fit_path / iter_path: a grid over C that returns, at every C, the model a separate LIBSVM fit returns.

The expected models come from an independent computation: one ``SVM(C=c).fit``
per C (LIBSVM from scratch). The path must equal them bit for bit (support
vectors, coefficients, intercept), reusing models only where LIBSVM's run is
provably the same (two consecutive identical fits, module docstring of
``eemrepro.models._svm``).
"""

import numpy as np
import pytest
from sklearn.datasets import make_moons

from eemrepro.models import FSVM, SVM

C_GRID = [10.0**k for k in range(-1, 11)]  # the EEM paper's grid


def _moons():
    # 300 noisy moons, 250 + 50 minority relabelled: at gamma = 10 LIBSVM's runs stop clipping from C = 1e6 on.
    X, y = make_moons(n_samples=300, noise=0.2, random_state=0)
    return X, np.where(np.arange(300) < 250, y, 1)


def _same(a, b):
    return (np.array_equal(a.support_, b.support_) and np.array_equal(a.dual_coef_, b.dual_coef_)
            and a.intercept_ == b.intercept_)


@pytest.mark.parametrize("estimator, weights, reuses", [
    (SVM(gamma=10.0), False, True),
    # LIBSVM with instance weights (scikit-learn's build): C_i = C s_i.
    (SVM(gamma=10.0), True, True),
    # Lin & Wang's memberships go down to ~1e-6, so some alpha clips at every C of the grid: nothing is reused.
    (FSVM(gamma=10.0), False, False),
], ids=["SVM", "SVM with sample weights", "FSVM"])
def test_the_path_is_the_separate_fits_bit_for_bit_and_skips_fits(estimator, weights, reuses):
    X, y = _moons()
    s = np.random.default_rng(0).uniform(0.5, 1.5, len(y)) if weights else None
    models = estimator.fit_path(X, y, C_GRID, sample_weight=s)
    assert [m.C for m in models] == C_GRID
    for c, model in zip(C_GRID, models, strict=True):
        separate = estimator.set_params(C=c).fit(X, y, sample_weight=s)
        assert _same(model, separate), c
        np.testing.assert_array_equal(model.decision_function(X), separate.decision_function(X))
    # Where reuse happens, the last C values are an earlier C's model (not refitted).
    reused = [m for m in models if m.solution_C_ != m.C]
    assert all(m.solution_C_ < m.C for m in reused)
    assert len(reused) >= 3 if reuses else not reused
    assert all(m.solution_C_ == m.C for m in models[:2])


@pytest.mark.slow
def test_a_decreasing_path_refits_every_c():
    X, y = _moons()
    grid = C_GRID[::-1]
    models = SVM(gamma=10.0).fit_path(X, y, grid)
    assert [m.solution_C_ for m in models] == grid
    assert _same(models[0], SVM(C=grid[0], gamma=10.0).fit(X, y))


def _gmean(y, pred):
    return np.sqrt(np.prod([np.mean(pred[y == c] == c) for c in np.unique(y)]))


def _violation(model, X, y, C):
    """LIBSVM's stopping quantity max_{I_up} u - min_{I_low} u, u_i = y_i - sum_j coef_j K_ij (Fan, Chen & Lin
    2005, eq. 9), computed here in double precision from the model's support vectors, for the bound C w_{y_i}."""
    t = np.where(y == model.pos_label_, 1.0, -1.0)
    w = np.where(t > 0, np.sum(t < 0) / np.sum(t > 0), 1.0)  # SPEC 1's balance weights (minority +1)
    alpha = np.zeros(len(t))
    alpha[model.support_] = np.abs(model.dual_coef_)
    K = np.exp(-model.gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    u = t - K[:, model.support_] @ model.dual_coef_
    below, above = alpha < C * w, alpha > 0
    up, low = (below & (t > 0)) | (above & (t < 0)), (below & (t < 0)) | (above & (t > 0))
    return u[up].max() - u[low].min()


def test_onedal_path_reuses_a_solution_inside_its_box_which_is_optimal_at_every_larger_c():
    pytest.importorskip("sklearnex")
    X, y = _moons()
    X_test, y_test = make_moons(n_samples=2000, noise=0.2, random_state=1)
    models = SVM(gamma=10.0, solver="onedal").fit_path(X, y, C_GRID)
    reused = [m for m in models if m.solution_C_ != m.C]
    assert reused and all(m.solution_C_ < m.C for m in reused)
    gmeans = []
    for model in models:
        # Optimal to oneDAL's tolerance (1e-3) at its own C, reused or not (1e-6: double vs oneDAL's arithmetic).
        assert _violation(model, X, y, model.C) <= 1e-3 + 1e-6, model.C
        # The same decisions as LIBSVM's separate fit at that C (converged there) on held-out points.
        libsvm = SVM(C=model.C, gamma=10.0).fit(X, y)
        assert libsvm.converged_
        agree = np.mean(np.sign(model.decision_function(X_test)) == np.sign(libsvm.decision_function(X_test)))
        assert agree >= 0.995, (model.C, agree)
        gmeans.append([_gmean(y_test, m.predict(X_test)) for m in (model, libsvm)])
    # The grid's selected cell (best GMean on the held-out points): within 0.5 points of LIBSVM's.
    best = np.max(gmeans, axis=0)
    assert abs(best[0] - best[1]) <= 0.005


def test_iter_path_yields_one_model_at_a_time_and_checks_its_grid():
    X, y = _moons()
    it = SVM(gamma=10.0).iter_path(X, y, [1.0, 10.0])
    first = next(it)
    assert first.C == 1.0 and _same(first, SVM(C=1.0, gamma=10.0).fit(X, y))
    with pytest.raises(ValueError, match="non-empty"):
        SVM().fit_path(X, y, [])
    with pytest.raises(ValueError, match=r"every C of a path must be > 0, got -1.0"):
        SVM().fit_path(X, y, [1.0, -1.0])


@pytest.mark.slow
def test_n_iter_and_converged_come_from_libsvm_and_leave_the_model_unchanged():
    from libsvm.svmutil import svm_train

    from eemrepro.datasets import load_dataset
    from eemrepro.models._svm import _libsvm_options

    X, y, _ = load_dataset("heart", scaling="minmax")
    t = np.where(y == 1, 1.0, -1.0)
    w = {1.0: 150 / 120, -1.0: 1.0}  # heart: 150 absent, 120 present (the minority, +1)
    # C = 1e10, gamma = 1e-3: LIBSVM stops at its limit, max(10^7, 100 n) = 10^7 iterations.
    for C, converged in ((1e3, True), (1e10, False)):
        model = SVM(C=C, gamma=1e-3).fit(X, y)
        assert model.converged_ is converged
        assert (model.n_iter_ == 10**7) if not converged else (0 < model.n_iter_ < 10**7)
        # The same model as libsvm-official's own quiet svm_train call (reading its output changes nothing).
        quiet = svm_train(t, np.ascontiguousarray(X), _libsvm_options(C, 1e-3, w[1.0], w[-1.0], 100.0) + " -q")
        assert np.array_equal(np.abs(model.dual_coef_), np.abs([c[0] for c in quiet.get_sv_coef()]))
        assert abs(model.intercept_) == abs(quiet.rho[0])
    weighted = SVM(C=1.0, gamma=1.0).fit(X, y, sample_weight=np.ones(len(y)))
    assert weighted.converged_ is True and weighted.n_iter_ > 0  # scikit-learn's LIBSVM: no iteration limit


def test_a_reused_unconverged_model_warns_as_its_own_fit_would(monkeypatch):
    # A model the path reuses at a larger C is the one ``fit`` gives there, bit for bit (module docstring): an
    # unconverged one must then warn as that fit would, or the run's record of that point says converged False
    # without the warning that says why. LIBSVM's limit of 10^7 iterations takes seconds a fit to reach: its
    # bound, which ``converged_`` is read against, is lowered to one iteration so that every fit is "unconverged".
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from eemrepro.models import _svm

    monkeypatch.setattr(_svm, "_libsvm_max_iter", lambda n: 1)
    X, y = _moons()
    models = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for model in SVM(gamma=10.0).iter_path(X, y, C_GRID):
            models.append((model, [w for w in caught if issubclass(w.category, ConvergenceWarning)]))
            caught.clear()
    reused = [m for m, _ in models if m.solution_C_ != m.C]
    assert reused and all(m.converged_ is False for m, _ in models)  # moons reuse from C = 1e6 on (_moons)
    assert [len(said) for _, said in models] == [1] * len(C_GRID)
    assert all("iteration limit" in str(said[0].message) for _, said in models)
