"""D_CS closed forms against numerical integration (scipy.integrate.quad)."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

import eemrepro.experiments._dcs as dcs
from eemrepro.experiments import select


def _dcs_by_quadrature(f, g, lo=-40, hi=40, points=(0.0,)):
    # Relative tolerance only: int f g can be ~1e-10, below quad's default epsabs.
    integral = lambda h: quad(h, lo, hi, limit=1000, points=list(points), epsabs=0, epsrel=1e-12)[0]
    return -np.log(integral(lambda x: f(x) * g(x))) + 0.5 * np.log(integral(lambda x: f(x) ** 2)) \
        + 0.5 * np.log(integral(lambda x: g(x) ** 2))


@pytest.mark.parametrize("m1,v1,m2,v2", [(0.3, 0.5, 1.2, 0.2), (0.0, 1.0, 0.0, 4.0), (-2.0, 0.1, 1.0, 0.1)])
def test_gaussian_dcs_equals_quadrature(m1, v1, m2, v2):
    f = lambda x: norm.pdf(x, m1, np.sqrt(v1))
    g = lambda x: norm.pdf(x, m2, np.sqrt(v2))
    peaks = (m1, m2, (m1 * v2 + m2 * v1) / (v1 + v2))
    assert dcs.dcs_gaussian(m1, v1, m2, v2) == pytest.approx(_dcs_by_quadrature(f, g, points=peaks), rel=1e-8)


@pytest.mark.parametrize("binned", [False, True])
def test_kde_dcs_equals_quadrature(binned, monkeypatch):
    if binned:
        monkeypatch.setattr(dcs, "_EXACT_PAIRS", 0)
    rng = np.random.RandomState(0)
    a, b = rng.randn(40), rng.randn(25) * 0.5 + 1.0
    sa, sb = dcs.silverman_width(a), dcs.silverman_width(b)
    # Silverman's rule as the paper writes it: (4 / (3 n))^(1/5) std.
    assert sa == pytest.approx((4 / (3 * 40)) ** 0.2 * a.std())
    f = lambda x: norm.pdf(x, a, sa).mean()
    g = lambda x: norm.pdf(x, b, sb).mean()
    assert dcs.dcs_kde(a, b) == pytest.approx(_dcs_by_quadrature(f, g), rel=1e-7)


def test_binned_kde_matches_exact_on_a_large_sample(monkeypatch):
    rng = np.random.RandomState(1)
    a, b = rng.randn(3000), rng.randn(2000) * 2 + 0.5
    monkeypatch.setattr(dcs, "_EXACT_PAIRS", 10**12)
    exact = dcs.dcs_kde(a, b)
    monkeypatch.setattr(dcs, "_EXACT_PAIRS", 0)
    assert dcs.dcs_kde(a, b) == pytest.approx(exact, rel=1e-6)


def test_dcs_selection_on_hand_made_records():
    def rec(h, fold, gmean, d):
        return {"dataset": "D", "model": "M", "params": {"h": h}, "repeat": 0, "fold": fold, "inner": None,
                "status": "ok", "metrics": {"gmean": gmean, "bac": gmean, "auc": None}, "fit_seconds": 1.0,
                "path_size": 1, "criteria": {"dcs_gaussian": d, "dcs_kde": -d}}
    records = [rec(1, 0, 0.9, 0.1), rec(2, 0, 0.5, 0.4), rec(1, 1, 0.6, 0.3), rec(2, 1, 0.8, 0.2)]
    # Gaussian D_CS picks h=2 on fold 0 (0.5) and h=1 on fold 1 (0.6).
    row = select(records, "dcs-gaussian").iloc[0]
    assert row["points"] == ['{"h": 2}', '{"h": 1}'] and row["gmean_mean"] == pytest.approx(0.55)
    # The KDE column (here the negatives) picks the others: 0.9 and 0.8.
    assert select(records, "dcs-kde").iloc[0]["gmean_mean"] == pytest.approx(0.85)
    no_dcs = [dict(r, criteria={}) for r in records]
    with pytest.raises(ValueError, match=r"protocol.criteria: \[dcs_gaussian\]"):
        select(no_dcs, "dcs-gaussian")


@pytest.mark.parametrize("beta", ["uniform", "normal"])
def test_correlation_pairs_equal_an_independent_computation(beta):
    # Expected: rbf features written out, sklearn's ledoit_wolf per class, SPEC section 3's D_CS,
    # beta drawn after the layer from U[0, 1]^h (SPEC section 3's primary reading) or N(0, I).
    from sklearn.covariance import ledoit_wolf

    from eemrepro.experiments._correlation_kind import correlation_pairs

    from tests.helpers import make_imbalanced

    X, y = make_imbalanced(n=200, d=4, seed=30)
    dcs_v, ratio = correlation_pairs(X, y, 12, "rbf", "ledoit-wolf", 7, np.random.RandomState(5), beta)
    rng = np.random.RandomState(5)
    params = rng.uniform(size=(12, 5))
    W, b = params[:, :-1], params[:, -1]
    H = np.exp(-b * ((X[:, None, :] - W[None]) ** 2).sum(-1))
    B = rng.uniform(size=(7, 12)) if beta == "uniform" else rng.standard_normal((7, 12))
    assert (B.min() >= 0) == (beta == "uniform")
    cp, cn = ledoit_wolf(H[y > 0])[0], ledoit_wolf(H[y < 0])[0]
    mp, mn = B @ H[y > 0].mean(0), B @ H[y < 0].mean(0)
    sp, sn = np.array([v @ cp @ v for v in B]), np.array([v @ cn @ v for v in B])
    expected_ratio = (mp - mn) ** 2 / (sp + sn)
    np.testing.assert_allclose(ratio, expected_ratio, rtol=1e-8)
    np.testing.assert_allclose(dcs_v, np.log((sp + sn) / 2 / np.sqrt(sp * sn)) + expected_ratio, rtol=1e-8)


def test_point_mass_classes_give_infinite_divergence():
    # An interpolating model projects each training class onto one value.
    a, b = np.full(50, 1.0), np.full(30, -1.0)
    assert dcs.dcs_gaussian(1.0, 0.0, -1.0, 0.0) == np.inf
    assert dcs.dcs_kde(a, b) == np.inf
    # Far-apart classes: the cross sum underflows to 0, the limit is +inf.
    assert dcs.dcs_kde(np.random.RandomState(0).randn(20) * 1e-3, np.random.RandomState(1).randn(20) * 1e-3 + 5) == np.inf
