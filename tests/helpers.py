"""A controllable classifier for runner tests (importable as tests.helpers:Sleepy)."""

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class Sleepy(ClassifierMixin, BaseEstimator):
    """Nearest-centroid classifier whose fit first sleeps ``delay`` seconds.

    After sleeping it appends to ``marker`` (if given), so a test can tell
    whether a killed fit really stopped.
    """

    def __init__(self, delay=0.0, marker=None, fail=False):
        self.delay = delay
        self.marker = marker
        self.fail = fail

    def fit(self, X, y):
        time.sleep(self.delay)
        if self.marker:
            with open(self.marker, "a") as fh:
                fh.write(f"finished delay={self.delay}\n")
        if self.fail:
            raise ArithmeticError("this fit always fails")
        self.classes_ = np.unique(y)
        self.centroids_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        return self

    def decision_function(self, X):
        d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(-1)
        return d[:, 0] - d[:, 1]

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
