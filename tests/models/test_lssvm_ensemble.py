"""The multiclass LS-SVM ensemble and its GCV / leave-one-out selection (Hwang 2016, SPEC section 4).

Every expected number comes from an independent computation: the bordered
system solved densely by ``scipy.linalg.solve``, the hat matrix written out
from the paper's formula with ``numpy.linalg.inv``, and leave-one-out by
refitting without each point.
"""

import numpy as np
import pytest
from numpy.linalg import inv
from sklearn.datasets import load_iris, make_classification
from sklearn.metrics.pairwise import rbf_kernel

from eemrepro.models import LSSVMEnsemble, LSSVMEnsembleGCV
from eemrepro.models._lssvm import _lssvm_direct, _lssvm_hat_path, _selection_criterion
from eemrepro.models._lssvm_ensemble import _subset_indices


def _problem(n=40, d=3, m=3, seed=0):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=d, n_redundant=0, n_classes=m,
                               n_clusters_per_class=1, random_state=seed)
    Y = np.where(y[:, None] == np.arange(m)[None, :], 1.0, -1.0)
    return X, y, Y


def _explicit_hat(K, C, w=None):
    """H(x, x) of Hwang's eq. 3.6 written out: (K, 1) [G^-1 - G^-1 1 (1'G^-1 1)^-1 1'G^-1; (1'G^-1 1)^-1 1'G^-1]."""
    n = K.shape[0]
    w = np.ones(n) if w is None else w
    G = inv(K + np.diag(1.0 / (C * w)))
    one = np.ones((n, 1))
    s = (one.T @ G @ one).item()
    top = G - G @ one @ one.T @ G / s
    bottom = one.T @ G / s
    return np.hstack([K, one]) @ np.vstack([top, bottom])


@pytest.mark.parametrize("weighted", [False, True])
def test_hat_path_matches_dense_solve_and_explicit_hat_matrix(weighted):
    X, y, Y = _problem()
    K = rbf_kernel(X, gamma=0.5)
    w = np.where(y == 0, 2.0, 1.0) if weighted else None
    Cs = [0.01, 1.0, 100.0, 1e6]
    for C, (alpha, b, fitted, hat) in zip(Cs, _lssvm_hat_path(K.copy(), Y, Cs, w), strict=True):
        alpha_ref, b_ref = _lssvm_direct(K, Y, w, C)
        np.testing.assert_allclose(alpha, alpha_ref, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(b, b_ref, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(fitted, K @ alpha_ref + b_ref, rtol=1e-6, atol=1e-7)
        H = _explicit_hat(K, C, w)
        np.testing.assert_allclose(fitted, H @ Y, rtol=1e-6, atol=1e-7)  # Y_hat = H Y for every column
        np.testing.assert_allclose(hat, np.diag(H), rtol=1e-7, atol=1e-8)
        np.testing.assert_allclose(hat.sum(), np.trace(H), rtol=1e-8)


def test_gcv_and_loo_against_their_definitions_and_refits():
    X, y, Y = _problem(n=30, seed=1)
    K = rbf_kernel(X, gamma=0.3)
    rows = np.arange(len(y))
    n = len(y)
    for C, (_, _, fitted, hat) in zip([0.1, 10.0], _lssvm_hat_path(K.copy(), Y, [0.1, 10.0]), strict=True):
        H = _explicit_hat(K, C)
        residual = 1.0 - (H @ Y)[rows, y]  # 1 - Y_hat_{i, k_i}
        gcv = n * np.sum(residual**2) / (n - np.trace(H)) ** 2  # eq. 3.5
        loo_formula = np.mean((residual / (1 - np.diag(H))) ** 2)  # eq. 3.4
        r = Y[rows, y] - fitted[rows, y]
        assert _selection_criterion(r, hat, "gcv") == pytest.approx(gcv, rel=1e-8)
        assert _selection_criterion(r, hat, "loo") == pytest.approx(loo_formula, rel=1e-8)
        # Exact leave-one-out by refitting without each point (eq. 3.3).
        loo = []
        for i in range(n):
            keep = rows != i
            alpha, b = _lssvm_direct(K[np.ix_(keep, keep)], Y[keep], None, C)
            loo.append(Y[i, y[i]] - (K[i, keep] @ alpha + b)[y[i]])
        assert _selection_criterion(r, hat, "loo") == pytest.approx(np.mean(np.square(loo)), rel=1e-7)


def test_weighted_loo_equals_refits_with_the_weights_held_fixed():
    X, y, Y = _problem(n=24, m=2, seed=2)
    K = rbf_kernel(X, gamma=0.7)
    w = np.where(y == 1, 3.0, 1.0)
    rows = np.arange(len(y))
    (_, _, fitted, hat), = _lssvm_hat_path(K.copy(), Y, [5.0], w)
    loo = []
    for i in rows:
        keep = rows != i
        alpha, b = _lssvm_direct(K[np.ix_(keep, keep)], Y[keep], w[keep], 5.0)
        loo.append(Y[i, y[i]] - (K[i, keep] @ alpha + b)[y[i]])
    expected = np.mean(w * np.square(loo))
    r = Y[rows, y] - fitted[rows, y]
    assert _selection_criterion(r, hat, "loo", w) == pytest.approx(expected, rel=1e-7)


def test_interpolating_fit_has_infinite_gcv():
    hat = np.ones(5)
    assert _selection_criterion(np.zeros(5), hat, "gcv") == np.inf
    assert _selection_criterion(np.zeros(5), hat, "loo") == np.inf


def test_single_member_equals_the_plain_lssvm():
    X, y, Y = _problem(n=50, seed=3)
    model = LSSVMEnsemble(n_subsets=1, C=10.0, sigma2=2.0).fit(X, y)
    alpha, b = _lssvm_direct(rbf_kernel(X, gamma=0.5), Y, None, 10.0)
    X_new = X[:7] + 0.1
    np.testing.assert_allclose(model.decision_function(X_new), rbf_kernel(X_new, X, gamma=0.5) @ alpha + b,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(model.predict(X_new), np.argmax(rbf_kernel(X_new, X, gamma=0.5) @ alpha + b, 1))


def test_gcv_picks_the_grid_minimum_of_the_dense_computation():
    X, y, Y = _problem(n=45, seed=4)
    Cs, sigma2s = (0.1, 1.0, 10.0, 100.0), (0.3, 1.0, 3.0)
    model = LSSVMEnsembleGCV(Cs=Cs, sigma2s=sigma2s).fit(X, y)
    n, rows = len(y), np.arange(len(y))
    expected = np.empty((len(sigma2s), len(Cs)))
    for i, s2 in enumerate(sigma2s):
        K = rbf_kernel(X, gamma=1 / s2)
        for j, C in enumerate(Cs):
            H = _explicit_hat(K, C)
            expected[i, j] = n * np.sum((1 - (H @ Y)[rows, y]) ** 2) / (n - np.trace(H)) ** 2
    np.testing.assert_allclose(model.cv_values_[0], expected, rtol=1e-6)
    i, j = np.unravel_index(np.argmin(expected), expected.shape)
    assert (model.C_[0], model.sigma2_[0]) == (Cs[j], sigma2s[i])
    plain = LSSVMEnsemble(C=Cs[j], sigma2=sigma2s[i]).fit(X, y)
    np.testing.assert_allclose(model.decision_function(X), plain.decision_function(X), rtol=1e-6, atol=1e-8)


def test_ensemble_average_equals_the_members_averaged_by_hand():
    X, y = load_iris(return_X_y=True)
    model = LSSVMEnsemble(n_subsets=3, C=5.0, sigma2=0.5, random_state=0).fit(X, y)
    by_hand = np.mean([LSSVMEnsemble(C=5.0, sigma2=0.5).fit(sv, y[_rows_of(X, sv)]).decision_function(X)
                       for sv in model.support_vectors_], axis=0)
    np.testing.assert_allclose(model.decision_function(X), by_hand, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X), np.argmax(by_hand, axis=1))


def _rows_of(X, subset):
    lookup = {row.tobytes(): i for i, row in enumerate(X)}
    return np.array([lookup[row.tobytes()] for row in subset])


def test_members_and_shared_gcv():
    X, y = load_iris(return_X_y=True)
    own = LSSVMEnsembleGCV(n_subsets=3, random_state=1).fit(X, y)
    assert own.cv_values_.shape == (3, 11, 9) and own.C_.shape == own.sigma2_.shape == (3,)
    for k in range(3):  # each member: the minimum of its own criterion
        i, j = np.unravel_index(np.argmin(own.cv_values_[k]), own.cv_values_.shape[1:])
        assert (own.sigma2_[k], own.C_[k]) == (own.sigma2s[i], own.Cs[j])
    shared = LSSVMEnsembleGCV(n_subsets=3, shared=True, random_state=1).fit(X, y)
    i, j = np.unravel_index(np.argmin(shared.cv_values_.mean(axis=0)), shared.cv_values_.shape[1:])
    assert set(shared.sigma2_) == {shared.sigma2s[i]} and set(shared.C_) == {shared.Cs[j]}
    np.testing.assert_allclose(shared.cv_values_, own.cv_values_)  # same subsets, same criterion


def test_two_classes_decide_as_a_one_column_fit():
    X, y = make_classification(n_samples=60, n_features=4, random_state=5)
    model = LSSVMEnsemble(C=3.0, sigma2=2.0).fit(X, y)
    t = np.where(y == 1, 1.0, -1.0)
    alpha, b = _lssvm_direct(rbf_kernel(X, gamma=0.5), t, None, 3.0)
    X_new = X + 0.05
    one_column = rbf_kernel(X_new, X, gamma=0.5) @ alpha + b
    np.testing.assert_allclose(model.decision_function(X_new), one_column, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(model.predict(X_new), np.where(one_column > 0, 1, 0))


def test_balanced_weights_reproduce_the_weighted_binary_lssvm():
    """class_weight='balanced' on two classes is the EEM paper's weighted LS-SVM (SPEC section 1)."""
    from eemrepro.models import LSSVM

    X, y = make_classification(n_samples=80, n_features=3, n_redundant=0, weights=[0.8], random_state=6)
    ours = LSSVMEnsemble(C=10.0, sigma2=1.0, class_weight="balanced").fit(X, y)
    eem = LSSVM(C=10.0, gamma=1.0).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), eem.decision_function(X), rtol=1e-6, atol=1e-8)


def test_stratified_subsets_are_disjoint_near_equal_and_hold_every_class():
    codes = np.repeat([0, 1, 2], [17, 9, 5])
    subsets = _subset_indices(codes, 3, 4, True, np.random.RandomState(0), "T")
    joined = np.concatenate(subsets)
    np.testing.assert_array_equal(np.sort(joined), np.arange(len(codes)))
    sizes = [len(s) for s in subsets]
    assert max(sizes) - min(sizes) <= 1
    for s in subsets:
        counts = np.bincount(codes[s], minlength=3)
        assert counts.min() >= 1 and np.all(np.abs(counts - np.bincount(codes) / 4) < 1)


def test_max_subset_size_sets_the_number_of_members():
    X, y = load_iris(return_X_y=True)
    model = LSSVMEnsemble(max_subset_size=40, random_state=0).fit(X, y)
    assert model.n_subsets_ == 4 and max(len(s) for s in model.support_vectors_) <= 40


@pytest.mark.parametrize("params, X_change, message", [
    ({"n_subsets": 6}, None, "larger than the smallest class"),
    ({"sigma2": 0.0}, None, "'sigma2' must be a real > 0"),
    ({"sigma2": -1.0}, None, "'sigma2' must be a real > 0"),
    ({"C": 0.0}, None, "'C' must be a real > 0"),
    ({}, "nan", "NaN"),
])
def test_bad_input_is_a_clear_error(params, X_change, message):
    X = load_iris().data[:100]
    y = np.repeat([0, 1, 2], [50, 5, 45])  # the smallest class has 5 samples
    if X_change == "nan":
        X = X.copy()
        X[3, 1] = np.nan
    with pytest.raises(ValueError, match=message):
        LSSVMEnsemble(**params).fit(X, y)


def test_an_unstratified_subset_missing_a_class_is_an_error():
    X, y = load_iris(return_X_y=True)
    X, y = X[:102], y[:102]  # class 2 has 2 samples: 10 random subsets cannot all hold it
    with pytest.raises(ValueError, match="random subset .* misses class"):
        LSSVMEnsemble(n_subsets=10, stratify=False, random_state=0).fit(X, y)


def test_bad_grids_are_clear_errors():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="'Cs' must be a non-empty sequence"):
        LSSVMEnsembleGCV(Cs=()).fit(X, y)
    with pytest.raises(ValueError, match="'sigma2s' must be a non-empty sequence"):
        LSSVMEnsembleGCV(sigma2s=(1.0, -1.0)).fit(X, y)
    with pytest.raises(ValueError, match="'criterion' must be one of"):
        LSSVMEnsembleGCV(criterion="cv").fit(X, y)


def test_a_run_records_each_members_selection_and_matches_a_refit(tmp_path):
    """The engine runs the ensemble on multiclass wine with Hwang's split size; errors equal a refit."""
    from eemrepro.datasets import load_dataset
    from eemrepro.experiments import ResultStore, StratifiedTrainTestSplitter, derive_seed, load_config, run_experiment

    path = tmp_path / "h.yaml"
    path.write_text("""name: h
datasets: [wine]
models:
  ens: {estimator: LSSVMEnsembleGCV, n_subsets: 2, per_dataset: {wine: {n_subsets: 3}},
        Cs: [1.0, 100.0], sigma2s: [0.3, 3.0]}
protocol: {splitter: train-test, train_size: {wine: 144}, repeats: 2, seed: 0, select_metric: error}
""")
    run_experiment(load_config(path), out=tmp_path / "o", jobs=1, progress=False)
    records = ResultStore(tmp_path / "o").read()
    X, y, _ = load_dataset("wine")
    for r in records:
        assert len(r["fitted"]["C_"]) == len(r["fitted"]["sigma2_"]) == 3
        assert set(r["fitted"]["C_"]) <= {1.0, 100.0} and set(r["fitted"]["sigma2_"]) <= {0.3, 3.0}
        train, test = StratifiedTrainTestSplitter(144, 2, 0, "wine").split_at(y, r["repeat"], 0)
        model = LSSVMEnsembleGCV(n_subsets=3, Cs=[1.0, 100.0], sigma2s=[0.3, 3.0],
                                 random_state=derive_seed(0, "wine", "ens", r["repeat"], 0)).fit(X[train], y[train])
        assert r["metrics"]["error"] == pytest.approx(1 - model.score(X[test], y[test]))
        assert r["fitted"]["C_"] == model.C_.tolist()


def _with_duplicates(seed=7):
    X, y, _ = _problem(n=60, seed=seed)
    copies = np.arange(0, 12, 2)  # six rows twice more
    return np.vstack([X, X[copies], X[copies]]), np.concatenate([y, y[copies], y[copies]])


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_merging_duplicates_leaves_the_fit_unchanged(class_weight):
    X, y = _with_duplicates()
    kw = dict(n_subsets=2, C=30.0, sigma2=2.0, class_weight=class_weight, random_state=0)
    keep = LSSVMEnsemble(**kw).fit(X, y)
    merge = LSSVMEnsemble(duplicates="merge", **kw).fit(X, y)
    assert sum(len(s) for s in merge.support_vectors_) < sum(len(s) for s in keep.support_vectors_)
    np.testing.assert_allclose(merge.decision_function(X), keep.decision_function(X), rtol=1e-7, atol=1e-9)


def test_duplicates_draw_gcv_to_the_interpolating_corner_and_merging_removes_it():
    X, y = _with_duplicates()
    Cs, sigma2s = (0.1, 1.0, 10.0, 1e3, 1e6), (0.01, 0.1, 1.0, 10.0)
    keep = LSSVMEnsembleGCV(Cs=Cs, sigma2s=sigma2s).fit(X, y)
    assert (keep.sigma2_[0], keep.C_[0]) == (0.01, 1e6)  # the corner: K ~ I plus the copies' zero directions
    merge = LSSVMEnsembleGCV(Cs=Cs, sigma2s=sigma2s, duplicates="merge").fit(X, y)
    assert (merge.sigma2_[0], merge.C_[0]) != (0.01, 1e6)
    # The merged criterion is the weighted GCV of the distinct points (weights = copies),
    # from the explicit hat matrix of the weighted system.
    Xu, index, counts = np.unique(X, axis=0, return_index=True, return_counts=True)
    yu = y[index]
    Yu = np.where(yu[:, None] == np.arange(3)[None, :], 1.0, -1.0)
    n, rows = len(yu), np.arange(len(yu))
    for i, s2 in enumerate(sigma2s):
        for j, C in enumerate(Cs):
            H = _explicit_hat(rbf_kernel(Xu, gamma=1 / s2), C, counts.astype(float))
            r = 1 - (H @ Yu)[rows, yu]
            expected = n * np.sum(counts * r**2) / (n - np.trace(H)) ** 2
            assert merge.cv_values_[0, i, j] == pytest.approx(expected, rel=1e-5)
