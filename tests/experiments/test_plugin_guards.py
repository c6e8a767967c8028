"""A user's classifier cannot spoil other records (issue 58): read-only arrays in, labels and scores checked out.

Each test is what a user hits: a plug-in module in a folder of their own beside a config, ``eemrepro run``
through the CLI, the records read back with ``eemrepro.read_results``. The data are a CSV of the user's own
(two Gaussian blobs), run with ``splitter: whole`` and ``scaling: none``, so that the expected numbers come
from an independent computation: pandas reads the same file, a fresh instance of the plug-in class is fitted
on it, and scikit-learn's ``recall_score`` / ``roc_auc_score`` score its predictions.
"""

import importlib
import sys
import textwrap
import uuid

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import recall_score, roc_auc_score

from eemrepro import read_results
from tests.helpers import blobs_frame
from tests.helpers import run_config as _run

#: The user's module: a nearest class mean after centring, whose habits the parameters switch on.
MODULE = textwrap.dedent('''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin


    def _centre(A, m):
        A -= m


    class Centred(ClassifierMixin, BaseEstimator):
        """Nearest class mean of centred features; ``c`` weighs the distance to the positive class's mean.

        ``write``: where it centres its input in place (the habit): "fit" (X), "fit-y" (codes y as 0/1 in
        place), "predict" (X in decision_function), "fit-alias" (X through the attribute it keeps it in),
        "fit-shuffle" (shuffles X in place, seeded by c), or "none" (copies).
        """

        def __init__(self, c=1.0, write="none"):
            self.c = c
            self.write = write

        def fit(self, X, y):
            self.train_X_ = X  # (kept as given)
            self.mean_ = X.mean(axis=0)
            if self.write == "fit":
                X -= self.mean_
            elif self.write == "fit-alias":
                self.X_ = X
                self.X_ -= self.mean_
            elif self.write == "fit-shuffle":
                np.random.default_rng(int(self.c)).shuffle(X)
            elif self.write == "fit-helper":
                _centre(X, self.mean_)
            elif self.write == "fit-numpy":
                np.fill_diagonal(X, 0.0)
            elif self.write == "refuse":
                raise ValueError(f"c={self.c} is out of range for this data")
            else:
                X = X - self.mean_
            if self.write == "fit-y":
                y[y == -1] = 0
            self.classes_ = np.unique(y)
            self.means_ = np.array([X[y == k].mean(axis=0) for k in self.classes_])
            return self

        def decision_function(self, X):
            if self.write == "predict":
                X -= self.mean_
            elif self.write == "predict-kept":
                self.train_X_ *= 1.0
            else:
                X = X - self.mean_
            d = ((X[:, None, :] - self.means_[None]) ** 2).sum(-1)
            return d[:, 0] - self.c * d[:, 1]

        def predict(self, X):
            return self.classes_[(self.decision_function(X) > 0).astype(int)]


    class ZeroOne(Centred):
        """Predicts 0/1 (its own coding), while y holds -1/+1."""

        def predict(self, X):
            return (self.decision_function(X) > 0).astype(int)


    class Column(Centred):
        """Predicts a column (n, 1) of labels."""

        def predict(self, X):
            return super().predict(X)[:, None]


    class LogScore(Centred):
        """Its decision value is a log of the first feature: NaN where that feature is negative."""

        def decision_function(self, X):
            with np.errstate(invalid="ignore"):
                return np.log(X[:, 0])


    class TwoColumns(Centred):
        """Decision values as two columns (one per class) on a two-class problem."""

        def decision_function(self, X):
            d = super().decision_function(X)
            return np.column_stack([-d, d])

        def predict(self, X):
            return self.classes_[(super().decision_function(X) > 0).astype(int)]


    class InfScore(Centred):
        """Its decision value is +inf where the first feature is positive (a log-odds of a probability of 1)."""

        def decision_function(self, X):
            return np.where(X[:, 0] > 0, np.inf, super().decision_function(X))


    class Reversed(Centred):
        """Nearest class mean with ``classes_ = np.unique(y)[::-1]`` ([1, -1]): its decision value is positive
        for ``classes_[1]``, as scikit-learn's contract says, which is -1 here."""

        def fit(self, X, y):
            super().fit(X, y)
            self.classes_, self.means_ = self.classes_[::-1], self.means_[::-1]
            return self


    class FirstSeen(ClassifierMixin, BaseEstimator):
        """A Gaussian naive Bayes whose ``classes_`` are the labels in order of appearance (``pd.unique(y)``);
        ``predict_proba``'s columns follow them. ``rotate`` > 0: ``classes_`` is the sorted labels rotated so."""

        def __init__(self, var_smoothing=1e-9, rotate=0):
            self.var_smoothing = var_smoothing
            self.rotate = rotate

        def fit(self, X, y):
            import pandas as pd
            from sklearn.naive_bayes import GaussianNB

            self.nb_ = GaussianNB(var_smoothing=self.var_smoothing).fit(X, y)
            self.classes_ = np.roll(self.nb_.classes_, self.rotate) if self.rotate else pd.unique(y)
            self.order_ = np.searchsorted(self.nb_.classes_, self.classes_)
            return self

        def predict_proba(self, X):
            return self.nb_.predict_proba(X)[:, self.order_]

        def predict(self, X):
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


    class ZeroOneClasses(Centred):
        """Predicts -1/+1 as it should, but says ``classes_ = [0, 1]`` (its own coding)."""

        def fit(self, X, y):
            super().fit(X, y)
            self.labels_, self.classes_ = self.classes_, np.array([0, 1])
            return self

        def predict(self, X):
            return self.labels_[(self.decision_function(X) > 0).astype(int)]


    class Proba(ClassifierMixin, BaseEstimator):
        """Probabilities of the positive class alone, shape (n,) (scikit-learn's are (n, 2)); no decision_function."""

        def __init__(self, c=1.0):
            self.c = c

        def fit(self, X, y):
            self.centred_ = Centred(c=self.c).fit(X, y)
            self.classes_ = self.centred_.classes_
            return self

        def predict_proba(self, X):
            return 1.0 / (1.0 + np.exp(-self.centred_.decision_function(X)))

        def predict(self, X):
            return self.centred_.predict(X)


    class CentredPath(Centred):
        """A path over c in one fit (``fit_path``): centres X in place first where ``write`` says so."""

        _path_param = "c"

        def fit_path(self, X, y, c):
            from sklearn.base import clone

            if self.write == "fit_path":
                X -= X.mean(axis=0)
            return [clone(self).set_params(c=value, write="none").fit(X, y) for value in c]


    class CentredIterPath(Centred):
        """A path over c one model at a time (``iter_path``): centres X in place first where ``write`` says so."""

        _path_param = "c"

        def iter_path(self, X, y, c):
            from sklearn.base import clone

            if self.write == "iter_path":
                X -= X.mean(axis=0)
            for value in c:
                yield clone(self).set_params(c=value, write="none").fit(X, y)


    class Shift(TransformerMixin, BaseEstimator):
        """A projection onto the first two features, centred; in place where ``write`` says ("transform")."""

        def __init__(self, write="none"):
            self.write = write

        def fit(self, X, y=None):
            self.mean_ = X.mean(axis=0)
            return self

        def transform(self, X):
            if self.write == "transform":
                X -= self.mean_
                return X[:, :2]
            return (X - self.mean_)[:, :2]


    class ManyLabels(Centred):
        """Predicts ``k`` labels, 0 to k - 1, in turn: most of them not training labels."""

        def __init__(self, c=1.0, write="none", k=10):
            super().__init__(c=c, write=write)
            self.k = k

        def predict(self, X):
            return np.arange(len(X)) % self.k


    class Odd(Shift):
        """A projection whose output is odd where ``write`` says: "words" (text), "nan" (a NaN), "object"
        (its numbers in an array of Python objects, as a frame of mixed columns gives them)."""

        def transform(self, X):
            Z = super().transform(X)
            if self.write == "words":
                return np.full(Z.shape, "far")
            if self.write == "nan":
                Z[0, 1] = np.nan
            return Z.astype(object) if self.write == "object" else Z


    class Drops(Shift):
        """A projection that drops the last point."""

        def transform(self, X):
            return super().transform(X)[:-1]
''')

CONFIG = """name: guards
kind: {kind}
datasets: [blobs]
local_datasets:
  blobs: {{file: blobs.csv, target: status}}
models:
{models}
{extra}
protocol: {{splitter: whole, repeats: 1, seed: 5, scaling: none}}
"""


@pytest.fixture
def user(tmp_path):
    """The user's folder: the module (uniquely named: each test imports its own) and the data set's CSV."""
    folder = tmp_path / "mine"
    folder.mkdir()
    module = f"user_guards_{uuid.uuid4().hex[:8]}"
    (folder / f"{module}.py").write_text(MODULE)
    frame = blobs_frame(n=60, seed=3)
    frame.to_csv(folder / "blobs.csv", index=False)
    yield folder, module
    sys.modules.pop(module, None)


def _records(folder, module, models, kind="grid-search", extra=""):
    cfg = folder / "guards.yaml"
    cfg.write_text(CONFIG.format(kind=kind, models=models.format(m=module), extra=extra))
    out = folder / f"out-{uuid.uuid4().hex[:6]}"
    _run(cfg, out)
    return read_results(out)


def _fresh(folder, module, name, **params):
    """The independent computation: the file as pandas reads it (the minority "sick" is +1), a fresh fit of
    the user's class on writable copies, its labels and decision values on the same rows."""
    frame = pd.read_csv(folder / "blobs.csv")
    X = frame[["a", "b", "c"]].to_numpy(dtype=float)
    y = np.where(frame["status"] == "sick", 1, -1)
    sys.path.insert(0, str(folder))
    try:
        cls = getattr(importlib.import_module(module), name)
    finally:
        sys.path.remove(str(folder))
    model = cls(**params).fit(X.copy(), y.copy())
    return y, model.predict(X.copy()), model.decision_function(X.copy())


def _gmean(y, pred):
    return float(np.sqrt(np.prod(recall_score(y, pred, labels=[-1, 1], average=None))))


def _by_point(df, key):
    return {row[f"param_{key}"]: row for _, row in df.iterrows()}


# -- read-only arrays in ----------------------------------------------------------------------------------------
def test_a_plugin_centring_its_input_in_place_fails_every_fit_naming_the_array_the_method_and_the_fix(user):
    """The user's report: ``X -= self.mean_`` in fit, grid c: [1, 2, 3]. Before, c=2 scored after c=1 on
    centred data and every record was ok; now each fit fails, and c=2 after c=1 is c=2 alone."""
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:Centred", write: fit, grid: {{c: [1, 2, 3]}}}}')
    assert list(df["status"]) == ["failed"] * 3
    for error in df["error_message"]:
        assert error.startswith("Centred.fit wrote into its input X ("), error
        assert f"{module}.py" in error and "X -= self.mean_" in error  # where, in the user's own file
        assert "copy" in error
    alone = _records(folder, module, '  Mine: {{estimator: "{m}:Centred", write: fit, grid: {{c: [2]}}}}')
    assert alone.loc[0, "error_message"] == _by_point(df, "c")[2]["error_message"]


@pytest.mark.parametrize(("write", "method", "array"), [
    ("fit", "fit", "X"), ("fit-y", "fit", "y"), ("predict", "predict", "X")])
def test_a_point_that_writes_into_its_input_fails_and_the_next_point_scores_as_a_fresh_fit(user, write, method,
                                                                                          array):
    """Grid write: [<writer>, none] in one unit: the writer fails; the point after it, which copies, gets the
    data untouched: its GMean and AUC are those of a fresh fit on the file."""
    folder, module = user
    models = '  Mine: {{estimator: "{m}:Centred", c: 2, grid: {{write: [WRITE, none]}}}}'.replace("WRITE", write)
    points = _by_point(_records(folder, module, models), "write")
    assert points[write]["status"] == "failed"
    error = points[write]["error_message"]
    assert error.startswith(f"Centred.{method} wrote into its input {array} ("), error
    clean = points["none"]
    assert clean["status"] == "ok", clean["error_message"]
    y, pred, score = _fresh(folder, module, "Centred", c=2, write="none")
    assert clean["gmean"] == pytest.approx(_gmean(y, pred), abs=1e-12)
    assert clean["auc"] == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    assert _gmean(y, pred) < 0.999  # (a fit that gets every point right could not tell spoiled data)


@pytest.mark.parametrize(("write", "code"), [("fit-alias", "self.X_ -= self.mean_"),
                                             ("fit-numpy", "np.fill_diagonal(X, 0.0)"),
                                             ("fit-shuffle", "np.random.default_rng(int(self.c)).shuffle(X)")])
def test_a_write_through_an_attribute_or_a_call_names_the_input_it_wrote_into(user, write, code):
    """The array written is found in the line however it is spelt: through the attribute the fit keeps its
    input in, or as the argument of a call that shuffles it in place (the line's names before it, a module and
    a number, are not arrays). A write numpy's own Python code makes (``np.fill_diagonal``) is the user's line
    that called it. The message names the input, where, and the fix."""
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:Centred", write: WRITE, grid: {{c: [2]}}}}'.replace(
        "WRITE", write))
    assert df.loc[0, "status"] == "failed"
    error = df.loc[0, "error_message"]
    assert error.startswith("Centred.fit wrote into its input X ("), error
    assert error.endswith(f": `{code}`); the arrays a fit or prediction gets are read-only, shared by the unit's "
                          "grid points: copy it before changing it in place (X = X.copy())"), error


@pytest.mark.parametrize(("write", "method", "what", "inside", "code", "copy"), [
    ("fit-helper", "fit", "its input X", " in _centre", "A -= m", "X"),
    ("predict-kept", "predict", "self.train_X_, an array it was given read-only", " in decision_function",
     "self.train_X_ *= 1.0", "self.train_X_")])
def test_a_write_in_a_helper_or_into_a_kept_array_says_the_file_line_function_and_what_to_copy(user, write, method,
                                                                                            what, inside, code,
                                                                                            copy):
    """A write a helper function makes names the input it was given and the helper; a write into the input a
    fit kept (``self.train_X_``), made while predicting, names that attribute, as what to copy. The file is
    named by its name alone, with the line."""
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:Centred", write: WRITE, grid: {{c: [2]}}}}'.replace(
        "WRITE", write))
    line = [s.strip() for s in (folder / f"{module}.py").read_text().splitlines()].index(code) + 1
    assert df.loc[0, "error_message"] == (
        f"Centred.{method} wrote into {what} ({module}.py:{line}{inside}: `{code}`); the arrays a fit or prediction "
        f"gets are read-only, shared by the unit's grid points: copy it before changing it in place "
        f"({copy} = {copy}.copy())")


def test_a_plugin_s_own_value_error_is_its_record_s_error_not_a_write_into_its_input(user):
    """A fit that raises ValueError of its own (a parameter it refuses) fails its record with its own message;
    only numpy's "read-only" ValueError is read as a write into the input."""
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:Centred", write: refuse, grid: {{c: [2]}}}}')
    assert df.loc[0, "status"] == "failed"
    assert "c=2 is out of range for this data" in df.loc[0, "error_message"]
    assert "wrote into" not in df.loc[0, "error_message"], df.loc[0, "error_message"]


@pytest.mark.parametrize(("k", "said"), [(10, "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"),
                                         (11, "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... (11 distinct)]")])
def test_predicted_labels_that_are_not_training_labels_are_listed_the_first_ten(user, k, said):
    """Labels are listed as Python values, ten at most, and how many there are where there are more."""
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:ManyLabels", k: K, grid: {{c: [1]}}}}'.replace(
        "K", str(k)))
    assert df.loc[0, "status"] == "failed"
    assert df.loc[0, "error_message"] == f"ManyLabels.predict returned labels {said}, not among the training " \
                                         "labels [-1, 1]"


def test_a_projection_giving_text_or_nan_fails_and_one_giving_numbers_as_objects_is_read_as_floats(user):
    """``transform``'s output is read as float64: text fails naming the method, a NaN fails counting it, and
    numbers held as Python objects score as the same numbers held as floats."""
    folder, module = user
    models = '  Proj: {{estimator: "{m}:Odd", grid: {{write: [words, nan, object, none]}}}}'
    points = _by_point(_records(folder, module, models, kind="projection", extra=PROJECTION.format(m=module)),
                       "projection__write")
    assert points["words"]["error_message"] == "projection: Odd.transform returned values that are not numbers"
    assert points["nan"]["error_message"] == "projection: Odd.transform returned 1 NaN values"
    assert points["object"]["status"] == points["none"]["status"] == "ok", points["object"]["error_message"]
    assert points["object"]["bac"] == points["none"]["bac"]


@pytest.mark.parametrize(("name", "write"), [("CentredPath", "fit_path"), ("CentredIterPath", "iter_path")])
def test_a_path_that_writes_into_its_input_fails_its_points(user, name, write):
    folder, module = user
    models = '  Mine: {{estimator: "{m}:NAME", write: WRITE, grid: {{c: [1, 2]}}}}'
    df = _records(folder, module, models.replace("NAME", name).replace("WRITE", write))
    assert list(df["status"]) == ["failed"] * 2
    for error in df["error_message"]:
        assert error.startswith(f"{name}.{write} wrote into its input X ("), error


# -- the projection kinds, where a user's transformer runs -------------------------------------------------------
PROJECTION = """analysis:
  classifiers:
    Mine: {{estimator: "{m}:Centred", grid: {{c: [1]}}}}"""


def test_a_projection_writing_into_its_input_fails_its_records_in_both_projection_kinds(user):
    folder, module = user
    models = '  Proj: {{estimator: "{m}:Shift", grid: {{write: [transform, none]}}}}'
    df = _records(folder, module, models, kind="projection", extra=PROJECTION.format(m=module))
    points = _by_point(df, "projection__write")
    assert points["transform"]["status"] == "failed"
    assert points["transform"]["error_message"].startswith("projection: Shift.transform wrote into its input X (")
    assert points["none"]["status"] == "ok"
    emb = _records(folder, module, '  Proj: {{estimator: "{m}:Shift", write: transform}}', kind="embedding")
    assert emb.loc[0, "status"] == "failed"
    assert emb.loc[0, "error_message"].startswith("Shift.transform wrote into its input X (")


# -- the built-in models on the read-only arrays they now get ---------------------------------------------------
def test_the_built_in_paths_score_on_read_only_arrays_as_fresh_fits_on_writable_copies(user):
    """EEM's and LS-SVM's ``fit_path`` and SVM's ``iter_path`` (LIBSVM through libsvm-official) get read-only
    arrays in a run; each record equals a fresh fit of that point alone on writable copies of the file
    (the record's seed given to EEM's random hidden layer)."""
    from eemrepro.models import EEM, LSSVM, SVM

    folder, _ = user
    models = """  EEM: {estimator: EEM, grid: {n_hidden: [5, 20]}}
  LSSVM: {estimator: LSSVM, grid: {C: [0.1, 10.0]}}
  SVM: {estimator: SVM, gamma: 1.0, grid: {C: [0.1, 10.0]}}"""
    df = _records(folder, "", models.replace("{", "{{").replace("}", "}}"))  # (no {m} to fill in)
    assert len(df) == 6 and set(df["status"]) == {"ok"}, df["error_message"].tolist()
    frame = pd.read_csv(folder / "blobs.csv")
    X = frame[["a", "b", "c"]].to_numpy(dtype=float)
    y = np.where(frame["status"] == "sick", 1, -1)
    for _, r in df.iterrows():
        if r["model"] == "EEM":
            fresh = EEM(n_hidden=int(r["param_n_hidden"]), random_state=int(r["seed"]))
        else:
            fresh = LSSVM(C=r["param_C"]) if r["model"] == "LSSVM" else SVM(C=r["param_C"], gamma=1.0)
        fresh.fit(X.copy(), y.copy())
        assert r["gmean"] == pytest.approx(_gmean(y, fresh.predict(X.copy())), abs=1e-9), r["model"]
        assert r["auc"] == pytest.approx(roc_auc_score(y, fresh.decision_function(X.copy())), abs=1e-9), r["model"]


def test_without_fork_the_fits_get_read_only_arrays_too(user, monkeypatch):
    """Where there is no fork (Windows), a unit's fits run in the run's process: the same guard holds."""
    import os

    monkeypatch.delattr(os, "fork")
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:Centred", c: 2, grid: {{write: [fit, none]}}}}')
    points = _by_point(df, "write")
    assert points["fit"]["status"] == "failed"
    assert points["fit"]["error_message"].startswith("Centred.fit wrote into its input X (")
    y, pred, _ = _fresh(folder, module, "Centred", c=2, write="none")
    assert points["none"]["gmean"] == pytest.approx(_gmean(y, pred), abs=1e-12)


# -- labels and scores checked out -----------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "message"), [
    ("ZeroOne", r"^ZeroOne\.predict returned labels \[0, 1\], not among the training labels \[-1, 1\]$"),
    ("Column", r"^Column\.predict returned shape \(60, 1\), expected \(60,\) \(one label per test point\)$"),
    ("TwoColumns", r"^TwoColumns\.decision_function returned shape \(60, 2\), expected \(60,\)$"),
    ("Proba", r"^Proba\.predict_proba returned shape \(60,\), expected \(60, 2\)$"),
])
def test_predictions_that_are_not_labels_or_scores_of_the_wrong_shape_fail_the_record(user, name, message):
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:NAME", grid: {{c: [1]}}}}'.replace("NAME", name))
    assert df.loc[0, "status"] == "failed"
    assert pd.Series([df.loc[0, "error_message"]]).str.match(message).all(), df.loc[0, "error_message"]
    assert not {"gmean", "auc"} & set(df.columns)  # (no record of the store holds a metric)


def test_nan_decision_values_fail_the_record_saying_how_many(user):
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:LogScore", grid: {{c: [1]}}}}')
    frame = pd.read_csv(folder / "blobs.csv")
    n_nan = int((frame["a"] < 0).sum())  # log of a negative first feature
    assert 0 < n_nan < len(frame)
    assert df.loc[0, "status"] == "failed"
    assert df.loc[0, "error_message"] == f"LogScore.decision_function returned {n_nan} NaN values"


def test_a_projection_whose_image_drops_a_point_fails_its_records_naming_it(user):
    folder, module = user
    df = _records(folder, module, '  Proj: {{estimator: "{m}:Drops"}}', kind="projection",
                  extra=PROJECTION.format(m=module))
    assert df.loc[0, "status"] == "failed"
    assert df.loc[0, "error_message"] == ("projection: Drops.transform returned shape (59, 2), expected (60, k) "
                                          "(one row per point)")


def test_infinite_decision_values_fail_the_record_saying_how_many(user):
    """+inf is not a score a ROC curve can rank against another +inf: before, the record was ok with AUC NaN."""
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:InfScore", grid: {{c: [1]}}}}')
    frame = pd.read_csv(folder / "blobs.csv")
    n_inf = int((frame["a"] > 0).sum())
    assert 0 < n_inf < len(frame)
    assert df.loc[0, "status"] == "failed"
    assert df.loc[0, "error_message"] == f"InfScore.decision_function returned {n_inf} infinite values"


# -- scores read through the estimator's own classes_ ------------------------------------------------------------
def _fresh_model(folder, module, name, target="status", **params):
    """A fresh fit of the user's class on the file as pandas reads it (two classes: "sick" +1, else -1)."""
    frame = pd.read_csv(folder / "blobs.csv")
    X = frame.drop(columns=[target]).to_numpy(dtype=float)
    y = frame[target].to_numpy(dtype=object)
    if set(y) == {"sick", "well"}:
        y = np.where(y == "sick", 1, -1)
    sys.path.insert(0, str(folder))
    try:
        cls = getattr(importlib.import_module(module), name)
    finally:
        sys.path.remove(str(folder))
    return X, y, cls(**params).fit(X.copy(), y.copy())


@pytest.mark.parametrize(("name", "classes"), [("Reversed", [1, -1]), ("FirstSeen", [1, -1])])
def test_the_auc_of_a_plugin_whose_classes_are_not_sorted_is_that_of_its_own_scores(user, name, classes):
    """The user's report: a nearest mean with ``classes_ = np.unique(y)[::-1]`` read AUC 10.2 where its
    predictions give 89.8, a naive Bayes with ``classes_ = pd.unique(y)`` (the file starts with a "sick" row)
    26.0 for 89.5. The expected AUC is scikit-learn's ``roc_auc_score`` of the positive class's score as the
    estimator's own ``classes_`` says which one it is; GMean reads the labels and was right all along."""
    folder, module = user
    grid = "grid: {{c: [1]}}" if name == "Reversed" else "grid: {{var_smoothing: [1.0e-9]}}"
    df = _records(folder, module, f'  Mine: {{{{estimator: "{{m}}:{name}", {grid}}}}}')
    assert df.loc[0, "status"] == "ok", df.loc[0, "error_message"]
    X, y, model = _fresh_model(folder, module, name)
    assert model.classes_.tolist() == classes  # (the case the user met: not sorted)
    if hasattr(model, "predict_proba"):
        score = model.predict_proba(X)[:, model.classes_.tolist().index(1)]
    else:  # (positive for classes_[1], which is -1: the +1 class's score is its negative)
        score = -model.decision_function(X)
    expected = roc_auc_score(y, score)
    assert expected > 0.85  # (the inverted reading was 1 - this)
    assert df.loc[0, "auc"] == pytest.approx(expected, abs=1e-12)
    assert df.loc[0, "gmean"] == pytest.approx(_gmean(y, model.predict(X)), abs=1e-12)


def test_the_auc_of_predicted_labels_follows_the_labels_not_the_order_of_classes(user):
    """``score: labels`` reads the predicted labels as the score: its AUC is the balanced accuracy (scikit-learn's
    ``balanced_accuracy_score``) whatever order ``classes_`` lists them in."""
    from sklearn.metrics import balanced_accuracy_score

    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:Reversed", score: labels, grid: {{c: [1]}}}}')
    X, y, model = _fresh_model(folder, module, "Reversed")
    expected = balanced_accuracy_score(y, model.predict(X))
    assert 0.6 < expected < 0.999
    assert df.loc[0, "auc"] == pytest.approx(expected, abs=1e-12)


def _three_blobs(n=90, seed=4):
    """Three Gaussian blobs labelled "ant", "bee", "cat" (30 each, in that order in the file)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(["ant", "bee", "cat"], n // 3)
    X = rng.normal(size=(n, 3)) + (y == "bee")[:, None] * 1.2 - (y == "cat")[:, None] * np.array([1.2, 0, 1.2])
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["status"] = y
    return frame


@pytest.mark.parametrize("rotate", [1, 2])
def test_the_multiclass_auc_of_permuted_classes_is_that_of_each_class_own_column(user, rotate):
    """Three classes, ``classes_`` the sorted labels rotated: each one-vs-rest AUC reads the column
    ``classes_`` names for that class (scikit-learn's macro ``roc_auc_score`` on the columns put in sorted
    order by hand)."""
    folder, module = user
    _three_blobs().to_csv(folder / "blobs.csv", index=False)
    models = '  Mine: {{estimator: "{m}:FirstSeen", rotate: ROT, grid: {{var_smoothing: [1.0e-9]}}}}'
    df = _records(folder, module, models.replace("ROT", str(rotate)))
    assert df.loc[0, "status"] == "ok", df.loc[0, "error_message"]
    X, y, model = _fresh_model(folder, module, "FirstSeen", rotate=rotate)
    assert model.classes_.tolist() != sorted(model.classes_.tolist())
    proba = model.predict_proba(X)
    columns = [model.classes_.tolist().index(c) for c in ["ant", "bee", "cat"]]
    expected = roc_auc_score(y, proba[:, columns], multi_class="ovr", average="macro")
    assert 0.7 < expected < 0.999
    assert df.loc[0, "auc"] == pytest.approx(expected, abs=1e-12)


def test_classes_that_are_not_the_training_labels_fail_the_record_naming_them(user):
    """``classes_ = [0, 1]`` while y is -1/+1: no column can be matched to a class, so no AUC can be read."""
    folder, module = user
    df = _records(folder, module, '  Mine: {{estimator: "{m}:ZeroOneClasses", grid: {{c: [1]}}}}')
    assert df.loc[0, "status"] == "failed"
    assert df.loc[0, "error_message"] == (
        "ZeroOneClasses.classes_ is [0, 1], not the training labels [-1, 1] in some order: its scores cannot be "
        "matched to the classes; set classes_ = np.unique(y) in fit (or list every training label once)")


def test_the_projection_kind_reads_its_classifiers_scores_through_their_classes_too(user):
    """The projection kind scores its classifiers as the grid search does: ``Reversed`` on ``Shift``'s image
    (the first two features, centred) has the AUC scikit-learn gives its +1 class's score on that image."""
    folder, module = user
    extra = PROJECTION.format(m=module).replace("Centred", "Reversed")
    df = _records(folder, module, '  Proj: {{estimator: "{m}:Shift"}}', kind="projection", extra=extra)
    assert df.loc[0, "status"] == "ok", df.loc[0, "error_message"]
    X, y, model = _fresh_model(folder, module, "Reversed")
    Z = X[:, :2] - X[:, :2].mean(axis=0)
    model.fit(Z, y)
    expected = roc_auc_score(y, -model.decision_function(Z))  # (positive for classes_[1] = -1)
    assert expected > 0.8
    assert df.loc[0, "auc"] == pytest.approx(expected, abs=1e-12)
