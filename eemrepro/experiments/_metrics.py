"""The metric registry: every score a record can hold, computed from ``sklearn.metrics``.

A record stores ``metrics = {name: value}`` for every registered metric that
applies to its data (a score-based metric needs ``decision_function`` or
``predict_proba``). Selection and tables name a metric; its direction says
which way is better.

>>> import numpy as np
>>> y = np.array([-1, -1, -1, 1, 1]); p = np.array([-1, -1, 1, 1, -1])
>>> round(get_metric("gmean")(y, p), 4)   # sqrt(TPR 1/2 * TNR 2/3)
0.5774
>>> get_metric("error")(y, p)
0.4
"""

from dataclasses import dataclass

import numpy as np

from ._registry import Registry


@dataclass(frozen=True)
class Metric:
    """A named score of predictions (``needs="predict"``) or of decision scores (``needs="score"``).

    ``func(y_true, y_pred_or_score, classes)``; ``greater_is_better`` gives
    the direction for selection; ``title`` heads a table column.
    ``from_confusion(cm, in_true)``, optional, for a metric of predictions: the
    same value read off the confusion matrix (labels sorted, rows true,
    ``in_true`` marking the labels present in ``y_true``), which
    :func:`score_all` computes once per fit for all such metrics (each
    ``sklearn.metrics`` call validates its input again: on small test folds
    that cost more than the fit). Tests hold it equal to ``func``, bit for bit.
    """

    name: str
    func: object
    needs: str = "predict"
    greater_is_better: bool = True
    title: str = ""
    from_confusion: object = None

    def __call__(self, y_true, values, classes=None):
        return float(self.func(np.asarray(y_true), np.asarray(values), classes))


def _gmean(y_true, y_pred, classes=None):
    # Geometric mean of the per-class recalls: sqrt(TPR * TNR) for two classes
    # (SPEC section 2), its k-th root analogue for k classes.
    from sklearn.metrics import recall_score  # (each scorer imports scikit-learn: a plan or a report does not)

    labels = np.unique(y_true)
    recalls = recall_score(y_true, y_pred, labels=labels, average=None, zero_division=0.0)
    return np.prod(recalls) ** (1.0 / len(labels))


def _bac(y_true, y_pred, classes=None):
    from sklearn.metrics import balanced_accuracy_score

    return balanced_accuracy_score(y_true, y_pred)


def _error(y_true, y_pred, classes=None):
    from sklearn.metrics import accuracy_score

    return 1.0 - accuracy_score(y_true, y_pred)


# The same three read off one confusion matrix, as sklearn computes them: each class's recall is its
# diagonal count over its row (true) count; balanced accuracy their mean over the classes of y_true;
# accuracy the diagonal's share of all.
def _recalls(cm, in_true):
    return np.diag(cm)[in_true] / cm.sum(axis=1)[in_true]


def _gmean_cm(cm, in_true):
    recalls = _recalls(cm, in_true)
    return np.prod(recalls) ** (1.0 / len(recalls))


def _bac_cm(cm, in_true):
    return np.mean(_recalls(cm, in_true))


def _error_cm(cm, in_true):
    return 1.0 - np.trace(cm) / cm.sum()


def _auc(y_true, score, classes=None):
    """Binary: ROC AUC of the positive class's score; multiclass: the macro mean of the
    one-vs-rest AUCs of the columns (rank-based, so decision values need not be probabilities)."""
    from sklearn.metrics import auc, roc_auc_score, roc_curve
    from sklearn.preprocessing import label_binarize

    if score.ndim == 1:
        # roc_auc_score's own binary path (the larger label positive, the trapezoid under roc_curve), called
        # directly: it checks the targets' type three times over, the cost of a small test fold's scoring.
        # The score is that of the larger of the sorted classes (decision_scores put it so).
        positive = np.unique(y_true)[-1] if classes is None else np.sort(np.asarray(classes))[-1]
        fpr, tpr, _ = roc_curve((y_true == positive).astype(np.int64), score)
        return auc(fpr, tpr)
    return roc_auc_score(label_binarize(y_true, classes=list(classes)), score, average="macro")


_REGISTRY = Registry("metric")
#: Add a :class:`Metric` (a plug-in may add its own); returns it.
register_metric = _REGISTRY.register
get_metric = _REGISTRY.get
metric_names = _REGISTRY.names


register_metric(Metric("gmean", _gmean, title="GMean", from_confusion=_gmean_cm))
register_metric(Metric("bac", _bac, title="BAC", from_confusion=_bac_cm))
register_metric(Metric("auc", _auc, needs="score", title="AUC"))
register_metric(Metric("error", _error, greater_is_better=False, title="error", from_confusion=_error_cm))


def decision_scores(model, X, labels):
    """Scores for the score-based metrics: ``decision_function``, else ``predict_proba``, read through the
    model's own ``classes_``.

    ``labels``: the training data's, sorted. Two classes give one column, the score of ``labels[1]`` (a
    decision value is positive for ``classes_[1]``, as scikit-learn's contract says: negated where that is
    ``labels[0]``); more give n x m, column j the score of ``labels[j]``. ``classes_`` must list each label
    once (``_guards.check_classes``), and the values must be finite and of the shape the method's contract
    says (``_guards.check_scores``), else the record fails naming what the model returned.
    """
    from ._guards import check_classes, check_scores

    for method in ("decision_function", "predict_proba"):
        if hasattr(model, method):
            order = check_classes(model, labels)
            values = check_scores(model, method, getattr(model, method)(X), len(X), len(labels))
            if values.ndim == 1:
                return values if order[1] == 1 else -values
            return values[:, order[1]] if len(labels) == 2 else values[:, order]
    return None


def score_all(y_true, y_pred, score, classes):
    """{name: value} of every registered metric that applies (None where it cannot be computed).

    ``classes``: the labels, sorted; ``score`` (None where the model gives none): two classes, the score of
    the larger label; more, one column per label in that order (what :func:`decision_scores` returns).
    """
    # The arguments below are ours and valid: scikit-learn's check of each call's parameters is skipped (a
    # third of the scoring time of a small test fold); its checks of the data stay.
    import sklearn

    with sklearn.config_context(skip_parameter_validation=True):
        return _score_all(y_true, y_pred, score, classes)


def _score_all(y_true, y_pred, score, classes):
    from sklearn.metrics import confusion_matrix

    values = {}
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    labels = np.unique(y_true)
    present = len(labels)
    cm = in_true = None
    for m in _REGISTRY.values():
        if m.needs != "score" and m.from_confusion is not None:
            if cm is None:
                union = np.union1d(labels, np.unique(y_pred))
                cm = confusion_matrix(y_true, y_pred, labels=union)
                in_true = np.isin(union, labels)
            values[m.name] = float(m.from_confusion(cm, in_true))
        elif m.needs == "score":
            # Every class must be in y_true for its one-vs-rest AUC to exist.
            usable = (score is not None and np.all(np.isfinite(score))
                      and (present == 2 if score.ndim == 1 else present == len(classes) == score.shape[1]))
            values[m.name] = m(y_true, score, classes) if usable else None
        else:
            values[m.name] = m(y_true, y_pred, classes)
    return values


SCORES = ("decision", "labels")


def label_scores(y_pred, classes):
    """The predicted labels as scores: 1 for ``classes[1]`` (two classes, sorted), else one column per class.

    The AUC of such a score has one threshold: (TPR + TNR) / 2 for two classes,
    the balanced accuracy (a reading of what some papers call AUC, SPEC section 8).
    """
    classes = np.asarray(classes)
    if len(classes) == 2:
        return (np.asarray(y_pred) == classes[1]).astype(np.float64)
    return (np.asarray(y_pred)[:, None] == classes[None, :]).astype(np.float64)


def evaluate(model, data, criteria, score="decision"):
    """Metrics on the test part, and the protocol's criteria on the training part (a record's fields).

    ``data``: (X_train, y_train, X_test, y_test). Shared by every kind that scores a fitted classifier.
    ``score``: the score-based metrics (AUC) read the model's ``decision`` values, or its
    predicted ``labels`` (:func:`label_scores`).
    """
    import time

    from ._criteria import get_criterion
    from ._guards import check_labels
    from ._watchdog import short_error

    X_train, y_train, X_test, y_test = data
    start = time.perf_counter()
    classes = np.unique(y_train)
    # What a plug-in returns is checked before it is scored: 0/1 predictions against -1/+1 labels would
    # score a GMean of 0 as if the model had made it (_guards). Scores are put in the order of the sorted
    # training labels through the model's own classes_: one order for every metric and every kind.
    y_pred = check_labels(model, model.predict(X_test), len(y_test), classes)
    scores = (decision_scores(model, X_test, classes) if score == "decision"
              else label_scores(y_pred, classes))
    predict_seconds = time.perf_counter() - start
    fields = {"metrics": score_all(y_test, y_pred, scores, classes), "predict_seconds": predict_seconds}
    # What a fit chose for itself (an estimator lists it in ``_recorded_attributes``:
    # the C and sigma^2 each GCV member picked), stored beside the metrics.
    recorded = [a for a in getattr(model, "_recorded_attributes", ()) if hasattr(model, a)]
    if recorded:
        fields["fitted"] = {a: np.asarray(getattr(model, a)).tolist() for a in recorded}
    values = {}
    for name in criteria:
        try:
            values[name] = float(get_criterion(name).func(model, X_train, y_train))
        except Exception as exc:  # a diagnostic must never fail the fit
            fields["error"] = f"criterion {name}: {short_error(exc)}"
    fields["criteria"] = values
    return fields
