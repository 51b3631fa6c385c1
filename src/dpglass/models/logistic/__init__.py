"""DP logistic regression by output perturbation: estimator, release plan (`plan`), solver and file check (`verify`)."""

from dpglass.models.logistic.estimator import DPLogisticRegression

__all__ = ["DPLogisticRegression"]
