"""The user's own classifier of issue 67: a logistic regression on standardised features."""

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted


class ScaledLogisticRegression(ClassifierMixin, BaseEstimator):
    """Standardise, then fit a logistic regression of inverse regularisation ``C``."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        self.model_ = make_pipeline(StandardScaler(), LogisticRegression(C=self.C, max_iter=1000)).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        return self.model_.decision_function(X)

    def predict(self, X):
        check_is_fitted(self)
        return self.model_.predict(X)
