"""Support matrix machine and ESMM (SPEC section 6).

Expected values come from independent solvers: cvxpy with SCS (a first-order conic
solver, run to 1e-10; our solver is Clarabel, an interior-point one) for SMM's optimum,
scikit-learn's ``SVC(kernel="linear")`` for tau = 0, a brute-force scan for the
intercept; the shapes are closed forms.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.svm import SVC

from eemrepro.models import ESMM, SMM, _smm, entropy_fuzzy_membership
from eemrepro.models._smm import _best_intercept, _matrix_shape, _smm_objective, _smm_solve


def _problem(n, r, c, seed):
    rng = np.random.RandomState(seed)
    A = rng.normal(size=(n, r, c))
    t = np.where(rng.rand(n) < 0.35, 1.0, -1.0)
    A[t > 0, 0, :] += 0.8  # the classes differ in the first row of the matrix
    return A.reshape(n, r * c), t, rng.uniform(0.5, 1.0, n)


def _cvxpy_optimum(F, t, weights, tau, shape):
    """min 1/2 ||W||_F^2 + tau ||W||_* + sum_i weights_i [1 - t_i (<W, A_i> + b)]_+ by SCS."""
    r, c = shape
    W, b = cp.Variable((r, c)), cp.Variable()
    margins = cp.multiply(t, F @ cp.reshape(W, (r * c,), order="C") + b)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W) + tau * cp.normNuc(W)
                                      + weights @ cp.pos(1 - margins)))
    problem.solve(solver="SCS", eps_abs=1e-10, eps_rel=1e-10, max_iters=500000)
    return problem.value


@pytest.mark.parametrize("shape", [(3, 3), (2, 3), (1, 5)])
@pytest.mark.parametrize("C, tau", [(1.0, 0.5), (10.0, 0.1), (0.1, 1.0), (1.0, 5.0)])
@pytest.mark.parametrize("weighted", [False, True])
def test_objective_matches_cvxpy(shape, C, tau, weighted):
    F, t, s = _problem(80, *shape, seed=hash((shape, C, tau)) % 1000)
    weights = C * (s if weighted else np.ones_like(s))
    W, b, _, gap, converged, reported = _smm_solve(F, t, weights, tau, shape, tol=1e-6)
    optimum = _cvxpy_optimum(F, t, weights, tau, shape)
    value = _smm_objective(W, b, F, t, weights, tau)
    assert converged and reported == pytest.approx(value, rel=1e-12)
    # The certificate: the primal value is within the reported gap of the optimum.
    assert (value - optimum) / optimum <= gap + 1e-7
    assert abs(value - optimum) / optimum < 1e-5


def test_estimator_objective_and_orientation_match_cvxpy():
    F, t, s = _problem(90, 2, 4, seed=3)
    y = np.where(t > 0, "minority", "majority")  # classes_ = [majority, minority]
    clf = SMM(C=3.0, tau=0.3, tol=1e-6).fit(F, y, sample_weight=s)
    assert clf.shape_ == (2, 4) and clf.coef_.shape == (2, 4)
    optimum = _cvxpy_optimum(F, t, 3.0 * s, 0.3, (2, 4))
    np.testing.assert_allclose(clf.objective_, optimum, rtol=1e-5)
    # classes_[1] is the minority class here, so the score is the solver's own.
    np.testing.assert_allclose(clf.decision_function(F), F @ clf.coef_.ravel() + clf.intercept_)
    # Swapping the label names flips the orientation, not the model.
    flipped = SMM(C=3.0, tau=0.3, tol=1e-6).fit(F, np.where(t > 0, "a", "b"), sample_weight=s)
    np.testing.assert_allclose(flipped.decision_function(F), -clf.decision_function(F), atol=1e-3)


def test_tau_zero_is_a_linear_svm():
    # tau = 0: 1/2 ||w||^2 + C sum s_i hinge is exactly SVC(kernel="linear") with sample weights.
    F, t, s = _problem(120, 2, 3, seed=7)
    smm = SMM(C=2.0, tau=0.0, tol=1e-7).fit(F, t, sample_weight=s)
    svc = SVC(kernel="linear", C=2.0, tol=1e-8).fit(F, t, sample_weight=s)
    np.testing.assert_allclose(smm.coef_.ravel(), svc.coef_.ravel(), rtol=2e-3, atol=2e-3)
    svc_value = _smm_objective(svc.coef_.reshape(2, 3), svc.intercept_[0], F, t, 2.0 * s, 0.0)
    np.testing.assert_allclose(smm.objective_, svc_value, rtol=1e-5)


def test_fit_path_warm_starts_match_separate_fits():
    F, t, s = _problem(100, 3, 3, seed=11)
    Cs = [10.0, 0.1, 1.0]
    path = SMM(tau=0.2, tol=1e-6).fit_path(F, t, Cs, sample_weight=s)
    for C, model in zip(Cs, path, strict=True):
        assert model.C == C
        alone = SMM(C=C, tau=0.2, tol=1e-6).fit(F, t, sample_weight=s)
        np.testing.assert_allclose(model.objective_, alone.objective_, rtol=1e-5)
        np.testing.assert_allclose(model.objective_, _cvxpy_optimum(F, t, C * s, 0.2, (3, 3)), rtol=1e-5)


@pytest.mark.parametrize("epochs", [1, 10_000])
def test_cold_solve_from_the_liblinear_start_or_from_every_point(monkeypatch, epochs):
    # One epoch never converges (the solve starts from every point); 10,000 do at C = 0.1,
    # and then the start is liblinear's tau = 0 solution with its exact best intercept.
    F, t, s = _problem(80, 3, 3, seed=5)
    weights = 0.1 * s
    monkeypatch.setattr(_smm, "_SEED_EPOCHS", epochs)
    start = _smm._linear_svm_start(F, t, weights)
    if epochs == 1:
        assert start is None
    else:
        w, b = start
        assert b == _best_intercept(F @ w, t, weights)
        # A start, not a solution (liblinear penalises its intercept, stops at tol 0.1): its
        # tau = 0 objective lies above SVC's optimum and within 10 % of it (1-5 % on 5 seeds).
        svc = SVC(kernel="linear", C=1.0, tol=1e-8).fit(F, t, sample_weight=weights)
        optimum = _smm_objective(svc.coef_.reshape(3, 3), svc.intercept_[0], F, t, weights, 0.0)
        assert optimum - 1e-9 <= _smm_objective(w.reshape(3, 3), b, F, t, weights, 0.0) <= 1.1 * optimum
    W, b, _, gap, converged, _ = _smm_solve(F, t, weights, 0.5, (3, 3), tol=1e-6)
    assert converged
    np.testing.assert_allclose(_smm_objective(W, b, F, t, weights, 0.5),
                               _cvxpy_optimum(F, t, weights, 0.5, (3, 3)), rtol=1e-5)


@pytest.mark.parametrize("failure", ["inexact multipliers", "numerical error"])
def test_an_uncertified_solve_is_repeated_with_iterative_refinement(monkeypatch, failure):
    # Clarabel runs without iterative refinement. A solve the gap does not certify while
    # no point is on the wrong side of the margin (simulated: the multipliers halved, or a
    # failed solve without a usable point) is repeated on the same points with refinement on; without
    # that retry the solver would grow the working set to every point.
    F, t, s = _problem(120, 3, 3, seed=8)
    weights = 1.0 * s
    calls = []
    real = _smm._smm_conic

    def flaky(X1, c, tau, shape, work, lower, settings):
        refined = settings.iterative_refinement_enable
        calls.append((refined, work.size))
        w, b, alpha, used, status = real(X1, c, tau, shape, work, lower, settings)
        if refined:
            return w, b, alpha, used, status
        if failure == "inexact multipliers":
            return w, b, 0.5 * alpha, used, status
        return np.full_like(w, np.nan), b, alpha, used, "NumericalError"

    W, b, *_ = _smm_solve(F, t, 0.5 * weights, 0.5, (3, 3))  # the previous C of a path: the start
    start = W.ravel(), b
    monkeypatch.setattr(_smm, "_smm_conic", flaky)
    W, b, _, gap, converged, _ = _smm_solve(F, t, weights, 0.5, (3, 3), tol=1e-6, start=start)
    assert converged and gap <= 1e-6
    assert [refined for refined, _ in calls] == [False, True]
    assert calls[0][1] == calls[1][1] < F.shape[0]  # the same working set, not every point
    np.testing.assert_allclose(_smm_objective(W, b, F, t, weights, 0.5),
                               _cvxpy_optimum(F, t, weights, 0.5, (3, 3)), rtol=1e-5)


@pytest.mark.parametrize("C, tau", [(0.1, 0.01), (10.0, 0.1), (1000.0, 1.0)])
def test_an_exact_zero_optimum_is_returned_as_zero(C, tau):
    # Closed form: every positive point is also a negative point (15 twins) and 45 more
    # negatives exist. alpha = C on the twins, 0 elsewhere, satisfies sum alpha t = 0 with
    # sum alpha_i t_i A_i = 0, so W = 0, b = -1 is optimal for every C and tau, with
    # objective C * 2 * 15 (each positive's hinge is 2). The interior point alone ends at
    # W ~ 1e-8, whose scores rank the points by the solver's path (an AUC away from 0.5).
    rng = np.random.RandomState(4)
    negatives = rng.normal(size=(60, 9))
    X = np.r_[negatives, negatives[:15]]
    y = np.r_[np.zeros(60), np.ones(15)]
    clf = SMM(C=C, tau=tau).fit(X, y)
    assert not clf.coef_.any()
    assert clf.intercept_ == -1.0
    assert clf.objective_ == pytest.approx(C * 2 * 15, rel=1e-12)
    assert clf.duality_gap_ <= 1e-5
    assert roc_auc_score(y, clf.decision_function(X)) == 0.5
    np.testing.assert_allclose(_cvxpy_optimum(X, np.where(y > 0, 1.0, -1.0), C * np.ones(75), tau, (3, 3)),
                               C * 2 * 15, rtol=1e-6)


@pytest.mark.parametrize("shape, C, tau", [((3, 3), 1.0, 0.5), ((2, 3), 10.0, 0.1), ((1, 5), 0.1, 1.0)])
def test_admm_reaches_cvxpys_optimum(shape, C, tau):
    # SPEC section 6: the ADMM must reach the optimum of the same problem written in cvxpy
    # (SCS, independent of the Clarabel QPs inside the ADMM) to 1e-4 relative.
    F, t, s = _problem(80, *shape, seed=7)
    clf = SMM(C=C, tau=tau, solver="admm", admm_iter=2000, tol=1e-7).fit(F, t, sample_weight=s)
    optimum = _cvxpy_optimum(F, t, C * s, tau, shape)
    assert clf.converged_ and np.isnan(clf.duality_gap_) and 1 <= clf.n_iter_ < 2000
    assert abs(clf.objective_ - optimum) / optimum < 1e-4
    assert clf.objective_ == pytest.approx(_smm_objective(clf.coef_ * (1 if clf._pos_is_second else -1),
                                                          clf.intercept_ * (1 if clf._pos_is_second else -1),
                                                          F, t, C * s, tau), rel=1e-12)


def test_admm_stopped_at_its_cap_is_the_paper_s_unconverged_iterate():
    # The ESMM paper's maxIter: a cap of 2 rounds stops before the residual rule holds; the
    # model is that round's W (not the optimum: with a large penalty rho, W is still near
    # S = 0 and its objective well above cvxpy's).
    F, t, _ = _problem(60, 3, 3, seed=2)
    with pytest.warns(ConvergenceWarning, match="admm_iter=2"):
        capped = SMM(C=10.0, tau=1.0, solver="admm", admm_iter=2, tol=1e-9, rho=100.0).fit(F, t)
    assert capped.n_iter_ == 2 and not capped.converged_
    assert capped.objective_ > _cvxpy_optimum(F, t, 10.0 * np.ones(60), 1.0, (3, 3)) * (1 + 1e-2)
    esmm = ESMM(C=10.0, tau=1.0, solver="admm", admm_iter=2, tol=1e-9, n_neighbors=3)
    with pytest.warns(ConvergenceWarning):
        assert esmm.fit(F, t).n_iter_ == 2
    with pytest.raises(ValueError, match="'solver' must be 'exact' or 'admm'"):
        SMM(solver="newton").fit(F, t)


def test_best_intercept_against_a_scan():
    rng = np.random.RandomState(0)
    f, t, c = rng.normal(size=40), np.where(rng.rand(40) < 0.4, 1.0, -1.0), rng.uniform(0.1, 2, 40)
    loss = lambda b: c @ np.maximum(0.0, 1.0 - t * (f + b))  # noqa: E731
    grid = np.linspace(-4, 4, 80001)
    best_on_grid = min(loss(b) for b in grid)
    assert loss(_best_intercept(f, t, c)) <= best_on_grid + 1e-12


@pytest.mark.parametrize("d, expected", [(9, (3, 3)), (12, (3, 4)), (8, (2, 4)), (7, (1, 7)), (13, (1, 13)),
                                         (1, (1, 1))])
def test_most_square_shape(d, expected):
    assert _matrix_shape(d) == expected


def test_prime_dimension_gives_a_row_and_the_l2_norm():
    # 1 x d: ||W||_* = ||w||_2, so the objective is 1/2 ||w||^2 + tau ||w|| + hinge.
    F, t, _ = _problem(60, 1, 7, seed=5)
    clf = SMM(C=1.0, tau=0.5, tol=1e-6).fit(F, t)
    assert clf.shape_ == (1, 7)
    w = clf.coef_.ravel() * (1 if clf._pos_is_second else -1)
    b = clf.intercept_ * (1 if clf._pos_is_second else -1)
    by_hand = 0.5 * w @ w + 0.5 * np.linalg.norm(w) + np.maximum(0, 1 - t * (F @ w + b)).sum()
    np.testing.assert_allclose(clf.objective_, by_hand, rtol=1e-12)


def test_esmm_is_smm_weighted_by_the_memberships():
    F, t, _ = _problem(90, 2, 3, seed=2)
    esmm = ESMM(C=5.0, tau=0.1, n_neighbors=7, tol=1e-6).fit(F, t)
    s = entropy_fuzzy_membership(F, t, 7)
    np.testing.assert_array_equal(esmm.memberships_, s)
    assert s.min() < 1.0  # the test means something only if some weight is below 1
    smm = SMM(C=5.0, tau=0.1, tol=1e-6).fit(F, t, sample_weight=s)
    np.testing.assert_allclose(esmm.objective_, smm.objective_, rtol=1e-5)
    np.testing.assert_allclose(esmm.objective_, _cvxpy_optimum(F, t, 5.0 * s, 0.1, (2, 3)), rtol=1e-5)
    # Each model of a path carries the memberships it was fitted with, as fit's does.
    for model in ESMM(tau=0.1, n_neighbors=7, tol=1e-6).fit_path(F, t, C=[1.0, 5.0]):
        np.testing.assert_array_equal(model.memberships_, s)


def test_convergence_warning_when_iterations_run_out():
    F, t, _ = _problem(60, 2, 2, seed=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        clf = SMM(C=100.0, max_iter=3, tol=1e-9).fit(F, t)
    assert clf.n_iter_ == 3 and clf.duality_gap_ > 1e-9


def test_bad_input():
    F, t, _ = _problem(30, 2, 3, seed=0)
    with pytest.raises(ValueError, match="r \\* c must equal"):
        SMM(shape=(4, 2)).fit(F, t)
    with pytest.raises(ValueError, match="shape must be two positive integers"):
        SMM(shape=(0, 6)).fit(F, t)
    with pytest.raises(ValueError, match="only one class"):
        SMM().fit(F, np.ones(30))
    with pytest.raises(ValueError, match="non-negative"):
        SMM().fit(F, t, sample_weight=-np.ones(30))
    with pytest.raises(ValueError, match="'C'"):
        SMM(C=0.0).fit(F, t)
    with pytest.raises(ValueError, match="n_neighbors"):
        ESMM(n_neighbors=30).fit(F, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SMM(shape=[2, 3]).fit(F, t)  # a list is a valid shape too
