"""Experiments: a resumable sweep engine and the reproductions of papers 001, 002 and 004.

A package of its own beside :mod:`dpglass`, not part of the library: ``import
dpglass`` never imports it.  Its dependencies (matplotlib, tqdm, joblib) come
with ``pip install "dpglass[experiments]"``.

The engine (knows no model family):

* :mod:`~dpglass_experiments.specs` -- what a sweep runs (:class:`DatasetSpec`,
  :class:`MethodSpec`, :class:`SweepConfig`);
* :mod:`~dpglass_experiments.seeding` -- every split and noise stream addressed
  by its cell (:func:`cell_seed`, :func:`split_indices`);
* :mod:`~dpglass_experiments.cells` -- fitting one unit of cells; a model
  family may share work across the epsilon grid through the hook
  :func:`dpglass_experiments.shared_fit.shared_fitter` (rule lists share counts);
* :mod:`~dpglass_experiments.sweep` -- :func:`run_sweep`: the tidy table,
  resume, parallel workers, progress, :func:`summarise`.

What every reproduction shares: :mod:`~dpglass_experiments.reproduction`
(:class:`~dpglass_experiments.reproduction.Reproduction`: folders, plans,
timed sweeps, ``timings.json``), :mod:`~dpglass_experiments.report` (the
report's tables beside the paper's numbers, figures, speed),
:mod:`~dpglass_experiments.figures`, and :mod:`~dpglass_experiments.papers`
(each paper's published numbers as a CSV table).

The reproductions: :mod:`dpglass_experiments.rule_lists` (paper 001,
``dpglass reproduce rule-lists``), :mod:`dpglass_experiments.boosting`
(paper 002, ``dpglass reproduce boosting``), :mod:`dpglass_experiments.ldp`
(paper 004), :mod:`dpglass_experiments.accounting` and
:mod:`dpglass_experiments.gbdt`.

What only the experiments use: :mod:`~dpglass_experiments.shared_fit` (the
rule lists' shared fits), :mod:`~dpglass_experiments.one_rule` (paper 002's
non-private 1-Rule), :mod:`~dpglass_experiments.importance` (permutation
importance, paper 001's Table III) and :mod:`~dpglass_experiments.advantage`
(LazyBB's per-round advantage, paper 002's Figure 1).

Adding a reproduction
---------------------
1. ``papers/<paper>.csv``: the paper's published numbers, one row each
   (source, dataset, method, epsilon, quantity, value, error, note).
2. ``<name>/plan.py``: the datasets standing for the paper's, the methods,
   the FULL and QUICK plans (grids, seeds), ``NUMBERS = load_paper(...)``,
   the title, the mapping notes and the list of differences.
3. ``<name>/__init__.py``: the experiments in order -- each a
   ``run.sweep(run.config(...), table, key, label)`` or a ``run.timed`` part,
   then its figure (:mod:`~dpglass_experiments.figures`) -- and
   ``REPRODUCTION = Reproduction(full=FULL, quick=QUICK, experiments=...,
   report=...)``, ``reproduce = REPRODUCTION.reproduce``.
4. ``<name>/report.py``: the report's sections with
   :class:`~dpglass_experiments.report.Report` (intro, tables beside
   ``NUMBERS``, figures, speed); analyses that are not sweeps go to
   ``<name>/analyses.py`` or, when they are about a model, to a module of
   their own here (as :mod:`~dpglass_experiments.advantage`).
5. One :class:`~dpglass_experiments.cli.Command` in ``cli.py``: ``dpglass
   reproduce <name>`` exists; a quick-mode smoke test in
   ``tests/test_experiments*.py`` keeps it in CI.
"""

from dpglass_experiments.seeding import cell_seed, split_indices
from dpglass_experiments.specs import DatasetSpec, MethodSpec, SweepConfig
from dpglass_experiments.sweep import load_results, run_sweep, summarise

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
