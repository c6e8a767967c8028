"""The density classifier the MELM paper puts on a projection (SPEC section 5).

One Gaussian KDE per class (the full class covariance times Silverman's factor
squared, scaled by ``bandwidth``, as ``scipy.stats.gaussian_kde``), equal
priors, predict the class with the largest density. The density is evaluated
here rather than by ``gaussian_kde`` for one reason: a class whose points lie
on a lower-dimensional subspace (a constant feature of the raw data, a
collinear projection) has a singular covariance, which ``gaussian_kde``
refuses; here its kernel covariance gets a ridge of 1e-6 of its mean variance
(``regularized_``), so the classifier still predicts. Otherwise the two agree
(tests/models/test_melm.py).
"""

import numbers

import numpy as np
import scipy.linalg
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import _check_number, _chunk_rows, _iter_slices

__all__ = ["KDEClassifier"]

#: Ridge added to a singular kernel covariance, relative to its mean variance.
_RIDGE = 1e-6


def _kernel_cholesky(points, bandwidth):
    """Lower Cholesky factor of the kernel covariance (Silverman x bandwidth)^2 cov; and whether a ridge was added."""
    n, d = points.shape
    factor = (n * (d + 2) / 4.0) ** (-1.0 / (d + 4)) * bandwidth
    cov = np.atleast_2d(np.cov(points, rowvar=False)) * factor**2
    try:
        low = scipy.linalg.cholesky(cov, lower=True)
        if np.min(np.diag(low)) > 1e-7 * np.sqrt(np.max(np.diag(cov))):
            return low, False
    except np.linalg.LinAlgError:
        pass
    scale = np.trace(cov) / d if np.trace(cov) > 0 else 1.0
    return scipy.linalg.cholesky(cov + _RIDGE * scale * np.eye(d), lower=True), True


def _kde_log_density(X, points, low):
    """log of (1/n) sum_i N(x; p_i, L L^T) for each row x of X, in row chunks."""
    n, d = points.shape
    Z_p = scipy.linalg.solve_triangular(low, points.T, lower=True).T
    norm = -np.log(n) - 0.5 * d * np.log(2 * np.pi) - np.log(np.diag(low)).sum()
    sq_p = np.einsum("ij,ij->i", Z_p, Z_p)
    out = np.empty(X.shape[0])
    for sl in _iter_slices(X.shape[0], max(1, _chunk_rows(n))):
        Z = scipy.linalg.solve_triangular(low, X[sl].T, lower=True).T
        d2 = np.einsum("ij,ij->i", Z, Z)[:, None] + sq_p[None, :] - 2.0 * Z @ Z_p.T
        out[sl] = logsumexp(-0.5 * np.maximum(d2, 0.0), axis=1) + norm
    return out


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
    regularized_ : ndarray of bool, shape (n_classes,)
        Whether a class's kernel covariance was singular and got the ridge.

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

    def _check_params(self):
        """``bandwidth``'s type and range, checked without data (by ``fit``, and by a config as it is read)."""
        _check_number(self, "bandwidth", numbers.Real, low=0, low_open=True)

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
        self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.shape[0] < 2:
            raise ValueError(f"KDEClassifier needs samples of 2 classes, but the data contains only one class: "
                             f"{self.classes_[0]!r}.")
        self._class_points, self._cholesky, regularized = [], [], []
        for c, label in enumerate(self.classes_):
            Xc = X[codes.ravel() == c]
            if Xc.shape[0] < 2:
                raise ValueError(f"KDEClassifier: class {label!r} has {Xc.shape[0]} sample; a density needs at "
                                 "least 2.")
            low, ridge = _kernel_cholesky(Xc, self.bandwidth)
            self._class_points.append(Xc)
            self._cholesky.append(low)
            regularized.append(ridge)
        self.regularized_ = np.asarray(regularized)
        return self

    def _log_densities(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.column_stack([_kde_log_density(X, points, low)
                                for points, low in zip(self._class_points, self._cholesky, strict=True)])

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
