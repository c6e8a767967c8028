"""The density classifier the MELM paper puts on a projection (SPEC section 5).

One Gaussian KDE per class (``scipy.stats.gaussian_kde``: full data covariance
times Silverman's factor, scaled by ``bandwidth``), equal priors, predict the
class with the largest density.
"""

import numbers

import numpy as np
import scipy.stats
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import _check_number

__all__ = ["KDEClassifier"]


class KDEClassifier(ClassifierMixin, BaseEstimator):
    """Equal-prior Bayes classifier on per-class Gaussian kernel density estimates.

    Parameters
    ----------
    bandwidth : float, default=1.0
        Multiplies Silverman's rule-of-thumb factor (the paper's gamma_kde;
        SPEC section 5 tunes it over {0.25, 0.5, 1, 2}).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    bandwidth_factors_ : ndarray of shape (n_classes,)
        Each class's kernel scale: Silverman's factor times ``bandwidth``.

    Examples
    --------
    >>> import numpy as np
    >>> from eemrepro.models import KDEClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.normal(0, 1, (50, 2)), rng.normal(4, 1, (50, 2))]
    >>> y = np.r_[np.zeros(50), np.ones(50)]
    >>> KDEClassifier().fit(X, y).predict([[0, 0], [4, 4]])
    array([0., 1.])
    """

    def __init__(self, bandwidth=1.0):
        self.bandwidth = bandwidth

    def fit(self, X, y):
        """Fit one KDE per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        _check_number(self, "bandwidth", numbers.Real, low=0, low_open=True)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.shape[0] < 2:
            raise ValueError(f"KDEClassifier needs samples of 2 classes, but the data contains only one class: "
                             f"{self.classes_[0]!r}.")
        # The class points and a scalar factor are kept rather than the gaussian_kde
        # objects, which hold a lambda and cannot be pickled.
        self._class_points, factors = [], []
        for c, label in enumerate(self.classes_):
            Xc = X[codes.ravel() == c]
            if Xc.shape[0] < 2:
                raise ValueError(f"KDEClassifier: class {label!r} has {Xc.shape[0]} sample; a density needs at "
                                 "least 2.")
            try:
                factors.append(scipy.stats.gaussian_kde(Xc.T).silverman_factor() * self.bandwidth)
            except np.linalg.LinAlgError:
                raise ValueError(
                    f"KDEClassifier: the points of class {label!r} lie on a lower-dimensional subspace (their "
                    "covariance is singular), so a Gaussian KDE with that covariance has no density; drop the "
                    "degenerate features or project first.") from None
            self._class_points.append(Xc.T.copy())
        self.bandwidth_factors_ = np.asarray(factors)
        return self

    def _log_densities(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.column_stack([scipy.stats.gaussian_kde(points, bw_method=factor).logpdf(X.T)
                                for points, factor in zip(self._class_points, self.bandwidth_factors_,
                                                          strict=True)])

    def predict_log_proba(self, X):
        """Log posterior under equal priors, columns in ``classes_`` order."""
        log_d = self._log_densities(X)
        return log_d - logsumexp(log_d, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Posterior under equal priors (the normalised class densities)."""
        return np.exp(self.predict_log_proba(X))

    def decision_function(self, X):
        """log density ratio ``classes_[1]`` against ``classes_[0]`` (binary), else the log densities."""
        log_d = self._log_densities(X)
        return log_d[:, 1] - log_d[:, 0] if log_d.shape[1] == 2 else log_d

    def predict(self, X):
        """The class of largest density.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        log_d = self._log_densities(X)
        return self.classes_[np.argmax(log_d, axis=1)]
