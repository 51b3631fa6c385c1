"""Teacher ensembles (subsample-and-aggregate and DP-Bag): estimator, release plan (`plan`) and file check (`verify`)."""

from dpglass.models.teachers.estimator import DPBaggingClassifier, SubsampleAggregateClassifier

__all__ = ["DPBaggingClassifier", "SubsampleAggregateClassifier"]
