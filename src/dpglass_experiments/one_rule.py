"""A single 1-Rule (Holte 1993): a weak, non-private reference for boosting experiments."""

from __future__ import annotations

import numpy as np

from dpglass.models._base import ClassifierBase

__all__ = ["OneRuleClassifier"]


class OneRuleClassifier(ClassifierBase):
    """A single 1-Rule (Holte 1993) on 0/1 features: paper 002's weak non-private reference.

    The literal, negated literal or constant with the fewest training errors
    (ties: the first in DP-1R's candidate order).  Not private.

    Attributes
    ----------
    stump_ : dpglass.models.boosting.weak_learners.Stump
    n_features_used_ : int
        1, or 0 for a constant.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> OneRuleClassifier().fit(X, [1, 1, 0, 0]).predict(X).tolist()
    [1, 1, 0, 0]
    """

    def __init__(self):
        pass

    def fit(self, X, y):
        from dpglass.models.boosting.weak_learners import FeatureMatrix, _stump_of, literal_errors

        X01, y01 = self._check_fit_data(X, y)
        n, d = X01.shape
        errors = literal_errors(FeatureMatrix(X01), y01, np.full(n, 1.0 / n))
        self.stump_ = _stump_of(int(np.argmin(errors)), d)
        self.n_features_used_ = int(self.stump_.feature >= 0)
        return self

    def predict_proba(self, X):
        X01 = self._check_predict_data(X)
        p1 = (self.stump_.predict(X01) > 0).astype(np.float64)
        return np.column_stack([1.0 - p1, p1])

    def to_text(self) -> str:
        return f"1-Rule: {self.stump_.describe(self.feature_names(), self.classes_)}"
