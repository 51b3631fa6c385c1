"""What every dpglass classifier shares: parameter checks, input checks, delta.

Estimators follow scikit-learn's conventions: ``__init__`` only stores
keyword-only parameters; ``fit`` validates them once (constraints declared as
data in ``_parameter_constraints``), resolves ``random_state`` once, never
mutates a parameter, and stores learned state in attributes ending in ``_``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from dpglass._validation import Interval, check_binary_X, check_binary_y, validate_params

__all__ = ["BinaryClassifierBase", "EPSILON", "DELTA_OR_NONE", "RANDOM_STATE"]

#: Common constraint declarations.
EPSILON = [Interval(numbers.Real, 0, None, closed="neither")]
DELTA_OR_NONE = [Interval(numbers.Real, 0, 1, closed="left"), None]
RANDOM_STATE = ["random_state"]


class BinaryClassifierBase(ClassifierMixin, BaseEstimator):
    """Base for binary classifiers on 0/1 features.

    Subclasses declare ``_parameter_constraints`` and implement ``fit`` and
    ``predict_proba``; ``predict`` and ``decision_function`` helpers live here.
    """

    _parameter_constraints: dict = {}
    #: DP models trade accuracy for privacy: scikit-learn's fixed accuracy bar
    #: in check_classifiers_train does not apply to them (``poor_score`` tag).
    _private = False

    # ----------------------------------------------------------- validation
    def _validate_params(self) -> None:
        from dpglass._validation import InstanceOf, Options

        expanded = {}
        for name, accepted in self._parameter_constraints.items():
            cons = []
            for c in accepted:
                if c is None:
                    cons.append(InstanceOf(type(None)))
                elif c == "random_state":
                    cons.extend(
                        [
                            InstanceOf(type(None)),
                            Interval(numbers.Integral, 0, None, closed="left"),
                            InstanceOf((np.random.SeedSequence, np.random.Generator), "a numpy SeedSequence or Generator"),
                        ]
                    )
                elif isinstance(c, (list, tuple, set)):
                    cons.append(Options(tuple(c)))
                else:
                    cons.append(c)
            expanded[name] = cons
        validate_params(self.get_params(deep=False), expanded, type(self).__name__)

    def _check_fit_data(self, X, y):
        """Validate ``X`` (0/1) and ``y`` (two classes); set ``classes_``."""
        X01 = check_binary_X(self, X, reset=True)
        y01, classes = check_binary_y(y)
        if y01.shape[0] != X01.shape[0]:
            from dpglass.exceptions import DataValidationError

            raise DataValidationError(
                f"X has {X01.shape[0]} rows but y has {y01.shape[0]} labels; they must match."
            )
        self.classes_ = classes
        return X01, y01

    def _check_predict_data(self, X):
        check_is_fitted(self)
        return check_binary_X(self, X, reset=False)

    def _resolve_delta(self, n_samples: int, delta) -> float:
        """``delta=None`` means 1/n² (n public, see docs/privacy.md); warn if delta ≥ 1/n."""
        if delta is None:
            return 1.0 / float(n_samples) ** 2
        if delta > 0 and delta >= 1.0 / n_samples:
            warnings.warn(
                f"delta={delta:g} is at least 1/n = {1.0 / n_samples:g}: a mechanism could then "
                "publish one record in the clear and still meet the guarantee. Use delta well "
                "below 1/n (the default is 1/n^2).",
                UserWarning,
                stacklevel=3,
            )
        return float(delta)

    # ------------------------------------------------------------ utilities
    def feature_names(self) -> list[str]:
        """The feature names seen in ``fit`` (``x0, x1, ...`` for arrays)."""
        check_is_fitted(self)
        if hasattr(self, "feature_names_in_"):
            return [str(c) for c in self.feature_names_in_]
        return [f"x{i}" for i in range(self.n_features_in_)]

    def predict(self, X):
        """Predict class labels for ``X``."""
        proba = self.predict_proba(X)
        return self.classes_[(proba[:, 1] > proba[:, 0]).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = self._private
        tags.non_deterministic = False
        return tags
