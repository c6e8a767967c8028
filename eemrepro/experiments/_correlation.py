"""EEM Table 1 units: D_CS against (m+ - m-)^2 / (S+ + S-) over random layers and betas.

For one random hidden layer with h neurons (the model's U[0, 1] draw), the class
means and covariances of phi(X) are accumulated in chunks (the same machinery
as EEM; Ledoit–Wolf or empirical), then for ``betas`` random beta ~ N(0, I):
m+- = beta^T mean+-, S+- = beta^T Sigma+- beta and

    D_CS = ln(((S+ + S-) / 2) / sqrt(S+ S-)) + (m+ - m-)^2 / (S+ + S-)   (SPEC section 3)

Reports pool every layer's pairs for one Spearman coefficient per (data set, h).
"""

import time

import numpy as np

from ..models._base import _chunk_rows
from ..models._features import _draw_hidden_layer, _hidden_activations
from ..models._moments import _accumulate_class_moments, _ledoit_wolf_from_moments
from ._execute import _load, environment
from ._units import derive_seed


def correlation_pairs(X, y, h, activation, covariance, n_betas, rng):
    """(dcs, ratio) arrays for one random layer and ``n_betas`` random betas."""
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
    B = rng.standard_normal((n_betas, h))
    mp, mn = B @ m_pos, B @ m_neg
    sp = np.einsum("ij,jk,ik->i", B, c_pos, B)
    sn = np.einsum("ij,jk,ik->i", B, c_neg, B)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (mp - mn) ** 2 / (sp + sn)
        dcs = np.log(((sp + sn) / 2) / np.sqrt(sp * sn)) + ratio
    return dcs, ratio


def run_correlation_unit(task):
    X, y, meta = _load(task["dataset"], False, task["data_home"], task["mirror"])
    h, layer = task["n_hidden"], task["layer"]
    seed = derive_seed(task["base_seed"], task["dataset"], "dcs-correlation", h, layer)
    start = time.perf_counter()
    dcs, ratio = correlation_pairs(X, y, h, task["activation"], task["covariance"], task["betas"],
                                   np.random.RandomState(seed))
    versions, host = environment()
    finite = np.isfinite(dcs) & np.isfinite(ratio)
    return [{
        "dataset": task["dataset"], "model": task["model"], "estimator": None, "params": {"n_hidden": h},
        "fixed_params": {"activation": task["activation"], "covariance": task["covariance"]},
        "repeat": 0, "fold": layer, "inner": None, "status": "ok" if finite.any() else "failed",
        "dcs": [float(v) for v in dcs], "ratio": [float(v) for v in ratio],
        "gmean": None, "bac": None, "auc": None, "fit_seconds": time.perf_counter() - start,
        "predict_seconds": None, "path_size": None, "error": None if finite.any() else "no finite pair",
        "n_train": int(X.shape[0]), "n_test": 0, "seed": seed, "protocol": task["protocol_fingerprint"],
        "data_sha256": meta["sha256"], "versions": versions, "host": host["name"], "finished_at": time.time(),
    }]
