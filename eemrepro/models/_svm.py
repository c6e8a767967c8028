"""C-SVC with the Gaussian kernel, trained by LIBSVM.

Without per-sample weights the solver is ``libsvm-official``'s ``svm_train``; with
them it is scikit-learn's ``SVC``, the same LIBSVM solver patched for instance
weights (``libsvm-official`` has class weights only).

A grid over C (``iter_path`` / ``fit_path``) gives, at every C, the model a
separate LIBSVM fit gives, bit for bit, and fits fewer of them. LIBSVM's SMO
sees C only where it clips an alpha to its bound C_i (and through the bound
status that clipping sets). A run that never clips follows the same iterates,
and stops at the same point (converged, or at LIBSVM's iteration limit of
max(10^7, 100 n) iterations), for every larger C. Conversely a run that clips
an alpha at C leaves it at C, where the run at a larger C moves it past C, so
the two diverge from that step on. So when the fits at two consecutive C
values of an increasing path are bit-identical, the smaller one never clipped,
and its model is the one LIBSVM returns at every larger C: it is reused there.
(With class weights the bounds are C w_+ and C w_-; the argument is the same.)
At large C (C >= 10^7 on several of the EEM data sets) LIBSVM often stops at
its iteration limit, about 10 s a fit on 700 points. Where such a run never
clips, its unconverged model is LIBSVM's answer at every larger C and the path
fits two of them, not all; where it clips (diabetes at gamma = 0.1), every C
is fitted. On the committed EEM stores the reuse skips 26 % of the SVM fit
time of the UCI part and 17 % of the unbalanced part.
"""

import contextlib
import copy
import numbers
import os
import re
import sys
import tempfile
import threading
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from ._base import _balance_weights, _BinaryClassifierMixin, _check_number, _check_sample_weight
from ._features import _kernel_expansion

__all__ = ["SVM"]


def _libsvm_options(C, gamma, w_pos, w_neg, cache_size):
    """LIBSVM command-line options: C-SVC, RBF kernel, class weights, kernel cache, defaults otherwise."""
    return f"-s 0 -t 2 -g {gamma!r} -c {C!r} -w1 {w_pos!r} -w-1 {w_neg!r} -m {cache_size!r}"


def _libsvm_max_iter(n):
    """LIBSVM's iteration limit (svm.cpp, Solver::Solve): max(10^7, 100 n)."""
    return max(10_000_000, 100 * n)


#: What LIBSVM writes to the process's standard error, from C (``fprintf(stderr, ...)``, past its print function),
#: where it stops at its iteration limit. The fit's ``converged_`` and a ``ConvergenceWarning`` say it instead.
_LIMIT_LINE = "\nWARNING: reaching max number of iterations\n"

#: LIBSVM's print function and the process's standard error are global: one training at a time swaps them.
_LIBSVM_LOCK = threading.Lock()


@contextlib.contextmanager
def _c_stderr(into):
    """What C code writes to the process's standard error (file descriptor 2) meanwhile, appended to ``into`` as
    bytes at the end; where there is no descriptor 2 to redirect, nothing is captured."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            into.append(sink.read())


def _said_past_the_limit(stderr):
    """What LIBSVM wrote to standard error (``stderr``: bytes), its iteration-limit line taken out, passed on to
    Python's ``sys.stderr`` as it was (nothing else it may say is hidden)."""
    text = b"".join(stderr).decode(errors="replace").replace(_LIMIT_LINE, "")
    if text.strip():
        sys.stderr.write(text)


def _onedal_svc():
    """oneDAL's SVC (scikit-learn-intelex), or a one-line error saying what to install."""
    try:
        from sklearnex.svm import SVC
    except ImportError:
        raise ValueError("SVM(solver='onedal') needs scikit-learn-intelex: pip install 'eemrepro[fast]'") from None
    return SVC


class SVM(_BinaryClassifierMixin, ClassifierMixin, BaseEstimator):
    """LIBSVM C-SVC with the Gaussian kernel and balance class weights.

    Training is LIBSVM's own (``svm_train`` of ``libsvm-official``) with
    ``-wi`` set to the balance weights |larger class| / |class i| and LIBSVM's
    defaults otherwise (the kernel cache ``-m`` is ``cache_size``). With a
    ``sample_weight`` (each point's C is C times its weight) the solver is
    scikit-learn's ``SVC``, LIBSVM with instance weights. The fitted support
    vectors and coefficients are copied into numpy arrays, so the estimator
    pickles and predicts without LIBSVM.

    Parameters
    ----------
    C : float, default=1.0
    gamma : float, default=1.0
        The kernel is exp(-gamma ||x - y||^2).
    balanced : bool, default=True
        True: class weights |larger class| / |class i| (the EEM paper's SVM);
        False: none (the ESMM paper's).
    cache_size : float, default=100
        LIBSVM's kernel cache in MB (``-m``; 100 is LIBSVM's default). It
        changes the speed only, not the solution: on tens of thousands of
        points with most of them support vectors, a cache that holds the
        kernel (4 n^2 bytes) saves recomputing its columns.
    solver : {"libsvm", "onedal"}, default="libsvm"
        ``"libsvm"``: LIBSVM itself (the paper's solver). ``"onedal"``: Intel
        oneDAL's SMO (``scikit-learn-intelex``, ``pip install 'eemrepro[fast]'``),
        the same problem to the same tolerance, often faster on large training
        sets; its solutions agree with LIBSVM's up to the solvers' tolerance,
        not bit for bit, so it is part of a record's identity.

    Notes
    -----
    ``fit_path`` / ``iter_path`` fit a grid of C values in order and skip the
    fits whose LIBSVM run is known to repeat a smaller C's bit for bit (module
    docstring), or, with oneDAL, whose answer a smaller C's solution already is
    (every alpha inside its box); ``solution_C_`` says which C a model was
    fitted at.

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
    n_iter_ : int
        The solver's iteration count.
    converged_ : bool or None
        False where LIBSVM stopped at its iteration limit, max(10^7, 100 n)
        (its "reaching max number of iterations", which LIBSVM writes to
        standard error: the fit takes it from there and warns a
        ``ConvergenceWarning`` instead): the model is then the unconverged
        iterate LIBSVM returns, not the optimum. None where the solver does
        not say (oneDAL).
    solution_C_ : float
        The C the solution was computed at: ``C`` itself, or the smaller C of
        a path whose LIBSVM run is the same at this C (``iter_path``).

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

    def __init__(self, C=1.0, gamma=1.0, balanced=True, cache_size=100, solver="libsvm"):
        self.C = C
        self.gamma = gamma
        self.balanced = balanced
        self.cache_size = cache_size
        self.solver = solver

    def _check_params(self):
        _check_number(self, "C", numbers.Real, low=0, low_open=True)
        _check_number(self, "gamma", numbers.Real, low=0, low_open=True)
        _check_number(self, "cache_size", numbers.Real, low=0, low_open=True)
        if not isinstance(self.balanced, bool | np.bool_):
            raise ValueError(f"SVM: parameter 'balanced' must be True or False, got {self.balanced!r}.")
        if self._solver() not in ("libsvm", "onedal"):
            raise ValueError(f"SVM: parameter 'solver' must be 'libsvm' or 'onedal', got {self._solver()!r}.")
        if self._solver() == "onedal":
            _onedal_svc()

    def _solver(self):
        # The fuzzy SVMs (subclasses with their own parameters) train with LIBSVM.
        return getattr(self, "solver", "libsvm")

    # LIBSVM's kernel cache changes the speed, never the solution: a record
    # made with another cache_size holds the same values (experiments' identity).
    _speed_only_params = ("cache_size",)

    # The grid kind fits a grid over C as one path (iter_path), one C at a time.
    _path_param = "C"

    @staticmethod
    def _fit_flops(n, d, params):
        """Rough operation count of one fit (the runner's time estimate)."""
        return 20 * n * n * d

    def fit(self, X, y, sample_weight=None):
        """Train with LIBSVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample multipliers of C.

        Returns
        -------
        self : object
        """
        self._check_params()
        self._train(self._problem(X, y, sample_weight))
        return self

    def _problem(self, X, y, sample_weight):
        """(X, t, s, w_pos, w_neg, weighted): the C-SVC LIBSVM solves; point i's C is C s_i w_{t_i}."""
        X, t = self._validate_training_data(X, y)
        w = _balance_weights(t) if self.balanced else np.ones_like(t)
        w_pos, w_neg = float(w[t > 0][0]), float(w[t < 0][0])
        weighted = self._weighted_training_set(X, t, sample_weight)
        if weighted is None:
            return X, t, np.ones_like(t), w_pos, w_neg, False
        Xw, tw, s = weighted
        return Xw, tw, (np.ones_like(tw) if s is None else s), w_pos, w_neg, True

    def _train(self, problem):
        X, t, s, w_pos, w_neg, weighted = problem
        if not weighted and self._solver() == "libsvm":
            self._train_libsvm(X, t, np.where(t > 0, w_pos, w_neg))
        else:
            self._train_weighted(X, t, s if weighted else None, w_pos=w_pos, w_neg=w_neg)
        self.solution_C_ = float(self.C)

    def _same_solution(self, other):
        """Whether two fitted models hold bit-identical solutions."""
        return (np.array_equal(self.support_, other.support_) and np.array_equal(self.dual_coef_, other.dual_coef_)
                and self.intercept_ == other.intercept_)

    def iter_path(self, X, y, C, sample_weight=None):
        """Yield one fitted model per value of ``C``, in the order given.

        With LIBSVM (``solver="libsvm"``) each model is the one ``fit`` would
        return with that C, bit for bit: once the fits at two consecutive
        values of C are identical (neither clipped an alpha, module docstring),
        every larger C gets that model without a fit (``solution_C_`` then
        names the smaller C). With oneDAL, once a solution has every alpha
        strictly below its bound, it is the answer at every larger C: the
        solver's stopping rule (no pair violating the optimality conditions by
        more than its tolerance) reads only the gradient and which alphas are
        at 0 or at their bound, and neither changes with a larger C. It is
        then an answer oneDAL could return there, to its tolerance, not the
        bits of a separate oneDAL fit. A consumer can time, or stop after,
        each model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        C : sequence of float
            The grid; increasing values are what makes reuse possible.
        sample_weight : array-like of shape (n_samples,), default=None

        Yields
        ------
        model : SVM
            A fitted copy of this estimator with ``C`` set.
        """
        C = [float(c) for c in C]
        if not C:
            raise ValueError("C must be a non-empty list of values")
        base = copy.deepcopy(self)
        base._check_params()
        problem = base._problem(X, y, sample_weight)
        # previous: the last fitted model; settled: a model known to be the solver's answer at every larger C.
        previous, settled = None, None
        libsvm = base._solver() == "libsvm"
        for c in C:
            if not c > 0:
                raise ValueError(f"SVM: every C of a path must be > 0, got {c!r}.")
            if settled is not None and c >= settled.C:
                model = copy.deepcopy(settled)
                model.C = c
                model._warn_unconverged()
                yield model
                continue
            model = copy.deepcopy(base)
            model.C = c
            model._train(problem)
            if libsvm and previous is not None and previous.C < c and model._same_solution(previous):
                settled = previous
            elif not libsvm and model._strictly_inside_its_box(problem):
                settled = model
            previous = model
            yield model

    def _strictly_inside_its_box(self, problem):
        """Whether every alpha of this (oneDAL) solution is below its bound C_i = C s_i w_{t_i}.

        Such a solution met the solver's stopping rule (the maximal violating
        pair, within ``tol``) over index sets that do not change for any larger
        C, with the same gradient: it meets the rule at every larger C too, so
        it is a valid answer there (notes of ``iter_path``).
        """
        X, t, s, w_pos, w_neg, _ = problem
        bound = float(self.C) * s[self.support_] * np.where(t[self.support_] > 0, w_pos, w_neg)
        return bool(np.all(np.abs(self.dual_coef_) < bound))

    def fit_path(self, X, y, C, sample_weight=None):
        """One fitted model per value of ``C``, in order (``iter_path`` as a list).

        Returns
        -------
        models : list of SVM
        """
        return list(self.iter_path(X, y, C, sample_weight=sample_weight))

    def _weighted_training_set(self, X, t, sample_weight):
        """(X, t, weights) to train on with instance weights, or None for plain LIBSVM."""
        if sample_weight is None:
            return None
        return X, t, _check_sample_weight(sample_weight, t.shape[0])

    def _train_libsvm(self, X, t, w):
        from libsvm.svm import PRINT_STRING_FUN, svm_parameter, svm_problem
        from libsvm.svmutil import svm_train

        param = svm_parameter(_libsvm_options(float(self.C), float(self.gamma), float(w[t > 0][0]),
                                              float(w[t < 0][0]), float(self.cache_size)))
        # LIBSVM reports its iteration count only through its print function ("optimization
        # finished, #iter = N"): collect what it prints instead of silencing it (-q).
        printed, stderr = [], []
        param.print_func = PRINT_STRING_FUN(printed.append)
        problem = svm_problem(t, np.ascontiguousarray(X))
        with _LIBSVM_LOCK, _c_stderr(stderr):
            model = svm_train(problem, param)
        _said_past_the_limit(stderr)
        found = re.search(rb"#iter = (\d+)", b"".join(printed))
        self.n_iter_ = int(found.group(1)) if found else None
        self.converged_ = None if found is None else self.n_iter_ < _libsvm_max_iter(len(t))
        self._warn_unconverged()
        support = np.asarray(model.get_sv_indices(), dtype=np.intp) - 1
        coef = np.array([c[0] for c in model.get_sv_coef()])
        # LIBSVM's decision value sum_i coef_i K(x_i, x) - rho is positive for
        # its first label, which is the first label seen in the training data.
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        self.support_ = support
        self.support_vectors_ = X[support]
        self.dual_coef_ = sign * coef
        self.intercept_ = -sign * float(model.rho[0])

    def _warn_unconverged(self):
        """The ``ConvergenceWarning`` of a fit LIBSVM stopped at its iteration limit: said by the fit, and by a
        path for each larger C it reuses that model at (the model, and so the warning, a fit there gives)."""
        if self.converged_ is False:
            warnings.warn(ConvergenceWarning(
                "SVM: LIBSVM stopped at its iteration limit, max(10^7, 100 n) iterations: the model is its last "
                "iterate, not the optimum (converged_ is False)"), stacklevel=5)

    def _train_weighted(self, X, t, s, w_pos, w_neg):
        """Scikit-learn's SVC interface: LIBSVM with instance weights, or oneDAL's solver (``solver``)."""
        if self._solver() == "onedal":
            SVC = _onedal_svc()
        else:
            from sklearn.svm import SVC

        # LIBSVM's defaults as in _libsvm_options (tol 1e-3, shrinking on).
        svc = SVC(C=float(self.C), kernel="rbf", gamma=float(self.gamma), class_weight={1.0: w_pos, -1.0: w_neg},
                  cache_size=float(self.cache_size))
        svc.fit(X, t, sample_weight=s)
        self.n_iter_ = int(np.max(svc.n_iter_))
        # scikit-learn's LIBSVM runs without an iteration limit (max_iter=-1); oneDAL's says nothing of its own.
        self.converged_ = True if self._solver() == "libsvm" else None
        # scikit-learn orients a binary SVC's dual_coef_ and intercept_ for classes_[1] = +1.
        self.support_ = svc.support_
        self.support_vectors_ = X[svc.support_]
        self.dual_coef_ = svc.dual_coef_[0].copy()
        self.intercept_ = float(svc.intercept_[0])

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
