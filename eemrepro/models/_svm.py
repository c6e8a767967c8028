"""C-SVC with the Gaussian kernel, trained by LIBSVM (``libsvm-official``)."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ._base import _balance_weights, _BinaryClassifierMixin, _check_number
from ._features import _kernel_expansion

__all__ = ["SVM"]


def _libsvm_options(C, gamma, w_pos, w_neg, cache_size):
    """LIBSVM command-line options: C-SVC, RBF kernel, class weights, kernel cache, defaults otherwise."""
    return f"-s 0 -t 2 -g {gamma!r} -c {C!r} -w1 {w_pos!r} -w-1 {w_neg!r} -m {cache_size!r} -q"


class SVM(_BinaryClassifierMixin, ClassifierMixin, BaseEstimator):
    """LIBSVM C-SVC with the Gaussian kernel and balance class weights.

    Training is LIBSVM's own (``svm_train`` of ``libsvm-official``) with
    ``-wi`` set to the balance weights |larger class| / |class i| and LIBSVM's
    defaults otherwise (the kernel cache ``-m`` is ``cache_size``). The fitted
    support vectors and coefficients are copied into numpy arrays, so the
    estimator pickles and predicts without LIBSVM.

    Parameters
    ----------
    C : float, default=1.0
    gamma : float, default=1.0
    cache_size : float, default=100
        LIBSVM's kernel cache in MB (``-m``; 100 is LIBSVM's default). It
        changes the speed only, not the solution: on tens of thousands of
        points with most of them support vectors, a cache that holds the
        kernel (4 n^2 bytes) saves recomputing its columns.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    pos_label_ : object
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training data.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (n_SV,)
        y_i alpha_i, signed so that the score is positive for ``pos_label_``.
    intercept_ : float

    References
    ----------
    C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines",
    ACM TIST 2 (2011) 27.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from eemrepro.models import SVM
    >>> X, y = make_moons(n_samples=100, noise=0.1, random_state=0)
    >>> float(SVM(C=10.0, gamma=2.0).fit(X, y).score(X, y)) > 0.9
    True
    """

    def __init__(self, C=1.0, gamma=1.0, cache_size=100):
        self.C = C
        self.gamma = gamma
        self.cache_size = cache_size

    def _check_params(self):
        _check_number(self, "C", numbers.Real, low=0, low_open=True)
        _check_number(self, "gamma", numbers.Real, low=0, low_open=True)
        _check_number(self, "cache_size", numbers.Real, low=0, low_open=True)

    # LIBSVM's kernel cache changes the speed, never the solution: a record
    # made with another cache_size holds the same values (experiments' identity).
    _speed_only_params = ("cache_size",)

    @staticmethod
    def _fit_flops(n, d, params):
        """Rough operation count of one fit (the runner's time estimate)."""
        return 20 * n * n * d

    def fit(self, X, y):
        """Train with LIBSVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        from libsvm.svmutil import svm_train

        self._check_params()
        X, t = self._validate_training_data(X, y)
        w = _balance_weights(t)
        options = _libsvm_options(float(self.C), float(self.gamma), float(w[t > 0][0]), float(w[t < 0][0]),
                                  float(self.cache_size))
        model = svm_train(t, np.ascontiguousarray(X), options)
        support = np.asarray(model.get_sv_indices(), dtype=np.intp) - 1
        coef = np.array([c[0] for c in model.get_sv_coef()])
        # LIBSVM's decision value sum_i coef_i K(x_i, x) - rho is positive for
        # its first label, which is the first label seen in the training data.
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        self.support_ = support
        self.support_vectors_ = X[support]
        self.dual_coef_ = sign * coef
        self.intercept_ = -sign * float(model.rho[0])
        return self

    def decision_function(self, X):
        """sum_i coef_i K(x_i, x) + b, positive for ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        X = self._validate_prediction_data(X)
        return self._orient(_kernel_expansion(X, self.support_vectors_, self.dual_coef_, self.intercept_, self.gamma))
