"""dpglass estimators (scikit-learn compatible, binary labels on 0/1 features)."""

import json

from dpglass.exceptions import DataValidationError
from dpglass.models.bagging import DPBaggingClassifier, SubsampleAggregateClassifier
from dpglass.models.boosting import SmoothBoostClassifier
from dpglass.models.gbdt import DPGradientBoostingClassifier
from dpglass.models.logistic import DPLogisticRegression
from dpglass.models.pipeline import DPPipeline
from dpglass.models.rule_list import DPRuleListClassifier, GreedyRuleListClassifier
from dpglass.models.selection import PrivateGridSearch

__all__ = [
    "DPBaggingClassifier",
    "DPGradientBoostingClassifier",
    "DPLogisticRegression",
    "DPPipeline",
    "PrivateGridSearch",
    "DPRuleListClassifier",
    "GreedyRuleListClassifier",
    "SmoothBoostClassifier",
    "SubsampleAggregateClassifier",
    "load_model",
]


def load_model(path):
    """Load any dpglass model saved as JSON with its ``save`` method.

    The JSON names the model's class (:func:`dpglass.models._files.model_class`: the registry's, the table
    pipeline's or the local-DP classifier's).
    """
    from dpglass.models._files import model_class

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise DataValidationError(f"Could not read a dpglass model from {path}: {exc}") from exc
    name = data.get("model") if isinstance(data, dict) else None
    cls = model_class(name)
    if cls is None or not hasattr(cls, "from_dict"):
        raise DataValidationError(f"{path} does not hold a dpglass model (model={name!r}).")
    return cls.from_dict(data)
