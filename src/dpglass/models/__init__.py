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

    The JSON names the model's class; the class comes from the registry.
    """
    from dpglass.registry import list_estimators

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise DataValidationError(f"Could not read a dpglass model from {path}: {exc}") from exc
    if data.get("model") == "DPPipeline":
        return DPPipeline.from_dict(data)
    if data.get("model") == "LDPHistogramClassifier":  # fitted from LDP reports: not in the registry
        from dpglass.local import LDPHistogramClassifier

        return LDPHistogramClassifier.from_dict(data)
    for spec in list_estimators():
        cls = spec.cls
        if cls.__name__ == data.get("model") and hasattr(cls, "from_dict"):
            return cls.from_dict(data)
    raise DataValidationError(f"{path} does not hold a dpglass model (model={data.get('model')!r}).")
