"""Experiments: a resumable sweep engine and the reproduction of paper 001.

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
"""

from dpglass.experiments.sweep import (
    DatasetSpec,
    MethodSpec,
    SweepConfig,
    cell_seed,
    load_results,
    run_sweep,
    split_indices,
    summarise,
)

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
