"""Linear projections that use the labels: the MELM paper's baselines (SPEC section 5).

cPCA, 2ePCA and pPCA are eigenvectors of class covariances; GEM (Karampatziakis
& Mineiro 2014) takes generalized eigenvectors of the classes' uncentred
second moments. PCA, FastICA, FactorAnalysis and NMF are scikit-learn's and are
not rewritten. Every projection here maps ``X`` to ``(X - mean_) @ components_.T``
with ``components_`` of shape (n_components, n_features), as scikit-learn's PCA.
"""

import numbers

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.extmath import svd_flip
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import _check_number

__all__ = ["ClassPCA", "TwoEllipsoidPCA", "PerClassPCA", "GEM"]


def _top_eigenvectors(a, k, b=None):
    """The k leading (generalized) eigenvectors of symmetric ``a`` (and SPD ``b``) as columns."""
    d = a.shape[0]
    _, vectors = scipy.linalg.eigh(a, b, subset_by_index=(d - k, d - 1))
    return vectors[:, ::-1]


def _orient(components):
    """Unit-norm rows with a deterministic sign (largest absolute entry positive)."""
    components = components / np.linalg.norm(components, axis=1, keepdims=True)
    _, components = svd_flip(np.zeros((1, components.shape[0])), components, u_based_decision=False)
    return components


class _LinearProjection(TransformerMixin, BaseEstimator):
    """Validation, ``mean_`` and ``transform`` shared by the supervised projections.

    A subclass implements ``_components(X, y_codes)`` returning the projection
    as a (n_features, n_components) matrix of columns.
    """

    _min_class_size = 1

    def fit(self, X, y):
        """Fit the projection.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (the projection uses them).

        Returns
        -------
        self : object
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        name = type(self).__name__
        self._check_params()
        self.classes_, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
        if self.classes_.shape[0] < 2:
            raise ValueError(f"{name} needs samples of 2 classes to find a discriminative projection, but "
                             f"the data contains only one class: {self.classes_[0]!r}.")
        d = X.shape[1]
        if self.n_components > d:
            raise ValueError(f"{name}: n_components={self.n_components} must be at most the number of features "
                             f"(n_features = {d}): a {self.n_components}-D projection of {d}-D data does not "
                             "exist.")
        small = counts < self._min_class_size
        if small.any():
            c = int(np.flatnonzero(small)[0])
            raise ValueError(f"{name}: class {self.classes_[c]!r} has {counts[c]} sample(s); each class needs "
                             f"at least {self._min_class_size} (its covariance is estimated).")
        self.mean_ = X.mean(axis=0)
        self.components_ = _orient(self._components(X, codes.ravel()).T)
        self.n_features_out_ = self.components_.shape[0]
        return self

    def _check_params(self):
        """Each parameter's type and range, checked without data (by ``fit``, and by a config as it is read)."""
        _check_number(self, "n_components", numbers.Integral, low=1)

    def transform(self, X):
        """Project ``X`` onto the learned directions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.mean_) @ self.components_.T

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(self.components_.shape[0])], dtype=object)


class _NComponentsProjection(_LinearProjection):
    """A projection whose only parameter is its number of components."""

    def __init__(self, n_components=2):
        self.n_components = n_components


def _class_covariances(X, codes):
    """Each class's (biased, maximum-likelihood) covariance and its size."""
    covs, sizes = [], []
    for c in range(codes.max() + 1):
        Xc = X[codes == c]
        covs.append(np.cov(Xc, rowvar=False, bias=True).reshape(X.shape[1], X.shape[1]))
        sizes.append(Xc.shape[0])
    return covs, np.asarray(sizes, dtype=float)


class ClassPCA(_NComponentsProjection):
    """cPCA: the leading eigenvectors of the class-size-weighted sum of class covariances.

    PCA of the pooled within-class scatter, ``sum_c (n_c / n) cov_c`` (the MELM
    paper's baseline "cPCA").

    Parameters
    ----------
    n_components : int, default=2

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    mean_ : ndarray of shape (n_features,)
    classes_ : ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from eemrepro.models import ClassPCA
    >>> X = np.array([[0., 0, 0], [2, 0, 0], [0, 1, 0], [2, 1, 0]])
    >>> ClassPCA(n_components=1).fit(X, [0, 0, 1, 1]).components_.round(3)
    array([[1., 0., 0.]])
    """

    def _components(self, X, codes):
        covs, sizes = _class_covariances(X, codes)
        pooled = sum(w * c for w, c in zip(sizes / sizes.sum(), covs, strict=True))
        return _top_eigenvectors(pooled, self.n_components)


class TwoEllipsoidPCA(_NComponentsProjection):
    """2ePCA: the leading eigenvectors of the unweighted sum of class covariances.

    cPCA without the class-size weights (the balanced counterpart), as in the
    MELM paper.

    Parameters
    ----------
    n_components : int, default=2

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    mean_ : ndarray of shape (n_features,)
    classes_ : ndarray
    """

    def _components(self, X, codes):
        covs, _ = _class_covariances(X, codes)
        return _top_eigenvectors(sum(covs), self.n_components)


class PerClassPCA(_NComponentsProjection):
    """pPCA: each class's own principal components, one column per class in turn.

    For two classes and two components: the first principal component of each
    class (the MELM paper's "pPCA"). More components take each class's next
    component round-robin.

    Parameters
    ----------
    n_components : int, default=2

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    mean_ : ndarray of shape (n_features,)
    classes_ : ndarray
    """

    def _components(self, X, codes):
        covs, _ = _class_covariances(X, codes)
        m = len(covs)
        per_class = -(-self.n_components // m)
        tops = [_top_eigenvectors(c, per_class) for c in covs]
        columns = [tops[i % m][:, i // m] for i in range(self.n_components)]
        return np.column_stack(columns)


class GEM(_LinearProjection):
    """Generalized eigenvectors for discriminative features (Karampatziakis & Mineiro 2014).

    For each ordered pair of classes (i, j), the leading eigenvectors of
    ``(S_j + gamma I)^-1 S_i`` with ``S_c`` the uncentred second moment of class
    c, i.e. the directions where class i's signal is largest against class j's.
    Two classes and two components give one vector per ordered pair. A linear
    projection, as the MELM paper uses it (no nonlinearity).

    Parameters
    ----------
    n_components : int, default=2
        Spread evenly over the m (m - 1) ordered class pairs (rounded up, the
        last pairs' extra vectors dropped).
    gamma : float, default=1.0
        Ridge added to the denominator's second moment.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Unit-norm directions.
    mean_ : ndarray of shape (n_features,)
    classes_ : ndarray

    References
    ----------
    N. Karampatziakis and P. Mineiro, "Discriminative features via generalized
    eigenvectors", ICML 2014.
    """

    def __init__(self, n_components=2, gamma=1.0):
        self.n_components = n_components
        self.gamma = gamma

    def _check_params(self):
        super()._check_params()
        _check_number(self, "gamma", numbers.Real, low=0, low_open=True)

    def _components(self, X, codes):
        m = codes.max() + 1
        moments = [X[codes == c].T @ X[codes == c] / np.count_nonzero(codes == c) for c in range(m)]
        pairs = [(i, j) for i in range(m) for j in range(m) if i != j]
        per_pair = -(-self.n_components // len(pairs))
        ridge = self.gamma * np.eye(X.shape[1])
        columns = [_top_eigenvectors(moments[i], per_pair, moments[j] + ridge) for i, j in pairs]
        return np.column_stack(columns)[:, : self.n_components]
