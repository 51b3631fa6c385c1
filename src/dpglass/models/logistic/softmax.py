"""The softmax (multinomial) objective: its one implementation is :class:`~dpglass.models.logistic.solver.SoftmaxRows`
(K >= 2; two classes are its K = 2 case), re-exported here for the callers of this module's former home."""

from dpglass.models.logistic.solver import EXP_ULPS, SoftmaxRows, softmax_scores

__all__ = ["EXP_ULPS", "SoftmaxRows", "softmax_scores"]
