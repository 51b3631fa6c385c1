"""DP-GAM (dp-gam): a private additive model, one shape per 0/1 feature: estimator, release plan (`plan`), fit,
readout (printout, explain) and file check (`verify`)."""

from dpglass.models.gam.estimator import DPGAMClassifier

__all__ = ["DPGAMClassifier"]
