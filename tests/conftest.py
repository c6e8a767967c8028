import numpy as np
import pytest


@pytest.fixture
def small_chunks(monkeypatch):
    """Force many tiny chunks so the chunked accumulation paths are exercised."""
    import eemrepro.models._base as base

    monkeypatch.setattr(base, "_CHUNK_VALUES", 64 * 7)
    return base


def make_imbalanced(n=300, d=5, ratio=0.2, seed=0, shift=0.8):
    """Two Gaussian blobs in [0, 1]-ish, the positive (minority) class shifted."""
    rng = np.random.RandomState(seed)
    n_pos = int(n * ratio)
    X = rng.normal(0.5, 0.15, size=(n, d))
    y = np.full(n, -1)
    y[:n_pos] = 1
    X[:n_pos] += shift * 0.15
    return X, y
