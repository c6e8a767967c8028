"""A user's classifier, benchmarked against the EEM paper's models (see README.md beside it).

What eemrepro asks of a classifier: the scikit-learn API (``fit(X, y)``,
``predict(X)``, parameters set in ``__init__`` and returned by
``get_params``, which ``BaseEstimator`` gives) and, for the score-based
metrics (AUC), ``decision_function(X)`` or ``predict_proba(X)``. On a binary
data set ``fit`` receives ``y`` in {-1, +1}, +1 the paper's positive
(minority) class; ``X`` is min-max scaled as the config's ``protocol.scaling``
says. A ``random_state`` parameter, if it has one, gets the run's seed.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.validation import check_is_fitted, validate_data


class KernelNearestMean(ClassifierMixin, BaseEstimator):
    """Nearest class mean in an RBF feature space: each class weighs the same, whatever its size.

    The score of x is its squared feature-space distance to the negative
    class's mean minus that to the positive class's (both in closed form from
    the kernel), so class imbalance does not move the decision boundary.

    Parameters
    ----------
    gamma : float
        RBF kernel width, k(x, z) = exp(-gamma ||x - z||^2).
    """

    def __init__(self, gamma=1.0):
        self.gamma = gamma

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(f"KernelNearestMean is binary; got {len(self.classes_)} classes")
        self.X_ = X
        self.y_ = y
        # ||mean_c||^2 in the feature space: the mean of the class's kernel block.
        self.norms_ = np.array([rbf_kernel(X[y == c], gamma=self.gamma).mean() for c in self.classes_])
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        K = rbf_kernel(X, self.X_, gamma=self.gamma)
        # ||phi(x) - mean_c||^2 = k(x, x) - 2 mean_z k(x, z) + ||mean_c||^2; k(x, x) cancels.
        dist = [self.norms_[i] - 2 * K[:, self.y_ == c].mean(axis=1) for i, c in enumerate(self.classes_)]
        return dist[0] - dist[1]

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
