"""DPPipeline: a raw table's schema encoding composed with a model under one budget, and its file check (`verify`)."""

from dpglass.models.pipeline.estimator import DPPipeline

__all__ = ["DPPipeline"]
