"""dpglass estimators (scikit-learn compatible, K >= 2 classes on 0/1 features)."""

from dpglass.models.teachers.estimator import DPBaggingClassifier, SubsampleAggregateClassifier
from dpglass.models.boosting.estimator import SmoothBoostClassifier
from dpglass.models.gam.estimator import DPGAMClassifier
from dpglass.models.gbdt.estimator import DPGradientBoostingClassifier
from dpglass.models.logistic.estimator import DPLogisticRegression
from dpglass.models.pipeline.estimator import DPPipeline
from dpglass.models.rule_list.estimator import DPRuleListClassifier, GreedyRuleListClassifier
from dpglass.models.selection.estimator import PrivateGridSearch

__all__ = [
    "DPBaggingClassifier",
    "DPGAMClassifier",
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
    from dpglass.models._files import open_model_file

    data, cls = open_model_file(path)  # a ModelFileError (a DataValidationError) naming the path
    return cls.from_dict(data)
