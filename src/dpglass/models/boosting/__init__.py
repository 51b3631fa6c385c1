"""Smooth boosting (LazyBB) of DP weak learners: estimator, release plan (`plan`), weak learners and file check (`verify`)."""

from dpglass.models.boosting.estimator import SmoothBoostClassifier

__all__ = ["SmoothBoostClassifier"]
