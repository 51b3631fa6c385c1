"""DP gradient boosted trees: estimator, binned tables, budget plan (`budget`), fit, and file check (`verify`)."""

from dpglass.models.gbdt.estimator import DPGradientBoostingClassifier

__all__ = ["DPGradientBoostingClassifier"]
