"""Experiments: a resumable sweep engine and the reproductions of papers 001 and 002.

* :func:`run_sweep` fits every (dataset, method, epsilon, seed) cell of a
  :class:`SweepConfig` and writes one tidy CSV row per cell, incrementally, so
  that an interrupted sweep resumes where it stopped and ends with the same
  table as an uninterrupted one.  Rule lists take a fast path that shares the
  training set's counts across the epsilon grid; other registered estimators
  are fitted as they are.
* :mod:`dpglass.experiments.rule_lists` reproduces the experiments of paper 001
  (``dpglass reproduce rule-lists``): Figures 1-4, Tables I-III, Section V-D and
  the membership-inference attack of Appendix C, with a report beside the
  paper's numbers.
* :mod:`dpglass.experiments.boosting` reproduces the experiments of paper 002
  (``dpglass reproduce boosting``): Table 2's accuracy curves, the features
  used (Tables 3, 5-7), the chosen hyper-parameters with the paper's
  non-private tuning and with :class:`~dpglass.models.selection.PrivateGridSearch`
  (Tables 8-10), Figure 1 and the pure-vs-approximate DP comparison of
  Figures 2-3.
"""

from dpglass.experiments.seeding import cell_seed, split_indices
from dpglass.experiments.specs import DatasetSpec, MethodSpec, SweepConfig
from dpglass.experiments.sweep import load_results, run_sweep, summarise

__all__ = [
    "DatasetSpec",
    "MethodSpec",
    "SweepConfig",
    "cell_seed",
    "load_results",
    "run_sweep",
    "split_indices",
    "summarise",
]
