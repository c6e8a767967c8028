"""The D_CS correlation kind (SPEC section 7): D_CS against (m+ - m-)^2 / (S+ + S-).

For one random hidden layer with h neurons (the model's U[0, 1] draw), the class
means and covariances of phi(X) are accumulated in chunks (the same machinery
as the models' class statistics; Ledoit–Wolf or empirical), then for ``betas`` random beta (``beta``:
``uniform``, U[0, 1]^h, the reading SPEC section 3 calls primary, or ``normal``,
N(0, I)): m+- = beta^T mean+-, S+- = beta^T Sigma+- beta and

    D_CS = ln(((S+ + S-) / 2) / sqrt(S+ S-)) + (m+ - m-)^2 / (S+ + S-)   (SPEC section 3)

A unit is one (data set, h, layer): its point is ``{"n_hidden": h, "layer":
l}`` on the whole data set (``scaling``: ``minmax``, ``none`` or ``standard``; SPEC
section 8). Reports pool every layer's pairs for one Spearman
coefficient per (data set, h).
"""

import time
from dataclasses import asdict, dataclass

import numpy as np

from ..models._features import ACTIVATIONS, _draw_hidden_layer, _hidden_activations
from ..models._moments import _accumulate_class_moments, _ledoit_wolf_from_moments
from ._kinds import ExperimentKind, register_kind
from ._splitters import derive_seed
from ._units import Unit, make_points
from ._watchdog import load_data, make_record

MODEL = "dcs-correlation"


@dataclass(frozen=True)
class CorrelationAnalysis:
    """Spearman correlation of D_CS and (m+ - m-)^2 / (S+ + S-) (SPEC section 3)."""

    n_hidden: tuple = (1, 10, 100, 200, 500)
    layers: int = 100
    betas: int = 100
    activation: str = "rbf"  # the hidden layer's activation,
    covariance: str = "ledoit-wolf"  # the class covariances' estimator,
    beta: str = "uniform"  # beta's distribution and the data's scaling: each a config key, a paper's
    scaling: str = "minmax"  # reading of them in its config (SPEC sections 3 and 8)


BETAS = ("uniform", "normal")
ANALYSIS_SCALINGS = ("minmax", "standard", "none")
# analysis.scaling in protocol.scaling's words (load_data loads and caches the data that way).
_AS_PROTOCOL_SCALING = {"minmax": "global", "standard": "standard", "none": "none"}
# Settings added after stores existed enter the identity only at other values
# than the one those records were made with, so that they keep matching.
_LEGACY = {"beta": "normal", "scaling": "minmax"}


def draw_betas(n_betas, h, distribution, rng):
    """``n_betas`` random directions: U[0, 1]^h or N(0, I_h)."""
    if distribution == "uniform":
        return rng.uniform(0.0, 1.0, (n_betas, h))
    if distribution == "normal":
        return rng.standard_normal((n_betas, h))
    raise ValueError(f"beta must be one of {list(BETAS)}, got {distribution!r}")


def correlation_pairs(X, y, h, activation, covariance, n_betas, rng, beta="uniform"):
    """(dcs, ratio) arrays for one random layer and ``n_betas`` random betas drawn from ``beta``."""
    from ..models._base import _chunk_rows  # scikit-learn, imported by the units that compute, not by a plan

    weights, biases = _draw_hidden_layer(h, X.shape[1], rng)

    def transform(chunk):
        return {0: _hidden_activations(chunk, weights, biases, activation)}

    moments = _accumulate_class_moments([X[y > 0], X[y < 0]], transform, {0: (h, [h])},
                                        np.float64, _chunk_rows(h))
    stats = []
    for acc in moments[0]:
        mean, cov, norm4, n = acc.leading_block(h)
        if covariance == "ledoit-wolf":
            cov, _ = _ledoit_wolf_from_moments(cov, norm4, n)
        stats.append((mean, cov))
    (m_pos, c_pos), (m_neg, c_neg) = stats
    B = draw_betas(n_betas, h, beta, rng)
    mp, mn = B @ m_pos, B @ m_neg
    sp = np.einsum("ij,jk,ik->i", B, c_pos, B)
    sn = np.einsum("ij,jk,ik->i", B, c_neg, B)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (mp - mn) ** 2 / (sp + sn)
        dcs = np.log(((sp + sn) / 2) / np.sqrt(sp * sn)) + ratio
    return dcs, ratio


class DcsCorrelation(ExperimentKind):
    name = "dcs-correlation"
    needs_models = False
    analysis_cls = CorrelationAnalysis

    def parse_analysis(self, ctx, raw):
        ctx.check_section("analysis", raw, CorrelationAnalysis, "a mapping")
        values = dict(raw)
        if "n_hidden" in values:
            hs = values["n_hidden"]
            if not isinstance(hs, list) or not hs or not all(isinstance(h, int) and h >= 1 for h in hs):
                raise ctx.error(("analysis", "n_hidden"), f"a list of integers >= 1, got {hs!r}")
            values["n_hidden"] = tuple(hs)
        for key in ("layers", "betas"):
            if key in values and not (isinstance(values[key], int) and values[key] >= 1):
                raise ctx.error(("analysis", key), f"an integer >= 1, got {values[key]!r}")
        if values.get("activation", "rbf") not in ACTIVATIONS:
            raise ctx.error(("analysis", "activation"), f"must be one of {list(ACTIVATIONS)}")
        if values.get("covariance", "ledoit-wolf") not in ("ledoit-wolf", "empirical"):
            raise ctx.error(("analysis", "covariance"), "must be 'ledoit-wolf' or 'empirical'")
        for key, allowed in (("beta", BETAS), ("scaling", ANALYSIS_SCALINGS)):
            if key in values and values[key] not in allowed:
                raise ctx.error(("analysis", key), f"must be one of {list(allowed)}, got {values[key]!r}")
        return CorrelationAnalysis(**values)

    def units(self, config):
        a = config.analysis
        return [Unit(dataset=d, model=MODEL, points=make_points([{"layer": layer, "n_hidden": h}]), repeat=0, fold=0)
                for d in config.datasets for h in a.n_hidden for layer in range(a.layers)]

    def identity(self, config, unit):
        a = config.analysis
        return {"kind": self.name, "activation": a.activation, "covariance": a.covariance, "betas": a.betas,
                "seed": config.protocol.seed,
                **{k: getattr(a, k) for k, old in _LEGACY.items() if getattr(a, k) != old}}

    def task(self, config, unit):
        (point,) = unit.point_dicts()
        a = asdict(config.analysis)
        return {"analysis": a, "params": {k: a[k] for k in ("activation", "covariance", "beta", "scaling")},
                "seed": derive_seed(config.protocol.seed, unit.dataset, "dcs-correlation", point["n_hidden"],
                                    point["layer"])}

    @staticmethod
    def run(task):
        a = task["analysis"]
        X, y, meta = load_data(task["dataset"], _AS_PROTOCOL_SCALING[a["scaling"]], task["data_home"],
                               task["mirror"])
        (point,) = task["points"]
        start = time.perf_counter()
        dcs, ratio = correlation_pairs(X, y, point["n_hidden"], a["activation"], a["covariance"], a["betas"],
                                       np.random.RandomState(task["seed"]), a["beta"])
        finite = np.isfinite(dcs) & np.isfinite(ratio)
        fields = {"status": "ok" if finite.any() else "failed", "fit_seconds": time.perf_counter() - start,
                  "error": None if finite.any() else "no finite pair",
                  "extra": {"dcs": [float(v) for v in dcs], "ratio": [float(v) for v in ratio]}}
        return [make_record(task, point, fields, meta["sha256"], X.shape[0], 0)]

    def seconds(self, config, unit, flops_per_second=2e10):
        from ..datasets import get_entry

        e = get_entry(unit.dataset)
        (point,) = unit.point_dicts()
        h = point["n_hidden"]
        return (e.expected.get("n") or 1000) * (h * h + h * (e.expected.get("d") or 10)) / flops_per_second + 0.02


register_kind(DcsCorrelation())
