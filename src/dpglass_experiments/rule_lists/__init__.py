"""Reproduce the experiments of paper 001 (Section V, Appendix C): ``dpglass reproduce rule-lists``.

:func:`reproduce` runs the sweeps and writes into one folder, each figure as
PNG and SVG with the numbers behind it as CSV:

* ``fig1_noise_amplitude``: noise scale vs number of records, smooth (Laplace,
  Cauchy) vs global sensitivity, epsilon = 1 (Fig. 1);
* ``fig2_3_noisy_counts_vs_gini``: training accuracy of noisy counts vs noisy
  Gini (global sensitivity) for epsilon in [0.1, 10^4], one panel per dataset
  (Figs. 2 and 3);
* ``fig4_test_accuracy``: test accuracy vs epsilon of the five DP mechanisms,
  GreedyRL and dpglass's default ``certified-pf``, with standard-error bands
  (Fig. 4);
* ``table1_standard_error.csv``, ``table2_vulnerability.csv``,
  ``table3_feature_intersection.csv`` (Tables I-III);
* ``sec5d_hyperparameters_eps<ε>``: validation accuracy vs K and vs lambda at ε = 1 and 10 (Section V-D);
* ``appC_mia_roc``: ROC of a shadow-model membership-inference attack with a
  random-forest attack model (Appendix C), and ``appC_mia_summary.csv``;
* ``report.md``: every number beside the paper's, with the differences
  explained; ``timings.json``: fits, seconds and fits per second of each sweep.

The per-fit tables are written under ``raw/`` (or ``raw_dir``); every sweep is
resumable, so an interrupted run restarted with the same arguments continues
where it stopped.

The pieces: :mod:`.plan` (datasets, methods, grids, the paper's numbers),
this module (the experiments in order, with their figures), :mod:`.analyses`
(the analyses that are not sweeps, the tables beside the paper's),
:mod:`.report` (``report.md``).

Nothing here tunes on the test split: hyper-parameters are the paper's, and
Section V-D is measured on a validation split carved out of the training part.
"""

from __future__ import annotations

import pandas as pd

from dpglass_experiments import figures
from dpglass_experiments.reproduction import Reproduction
from dpglass_experiments.rule_lists.analyses import (
    alternative_datasets,
    alternatives_table,
    hyper_methods,
    noise_amplitude_table,
    run_mia,
    run_table3,
    table1,
    table2,
    table3,
)
from dpglass_experiments.rule_lists.plan import (
    FULL,
    NUMBERS,
    PANELS,
    PAPER_DATASETS,
    QUICK,
    Plan,
    _paper_grid,  # noqa: F401  (benchmarks/bench_rule_lists.py reads the paper's grid here)
    method,
    paper_methods,
)
from dpglass_experiments.rule_lists.report import write_report
from dpglass_experiments.sweep import summarise

__all__ = ["PAPER_DATASETS", "NUMBERS", "Plan", "FULL", "QUICK", "paper_methods", "reproduce", "noise_amplitude_table",
           "REPRODUCTION"]

DATASETS = tuple(PAPER_DATASETS.values())


def _fig4(run) -> dict:
    plan = run.plan
    run.log(f"Fig. 4 / Tables I-II: {len(plan.epsilons)} epsilons x {plan.n_seeds} seeds x 3 datasets")
    main = run.sweep(run.config(DATASETS, paper_methods(), plan.epsilons, plan.n_seeds), "sweep_fig4.csv", "fig4",
                     "Fig. 4")
    acc = summarise(main, "test_accuracy")
    figures.plot_accuracy_vs_epsilon(
        acc, run.out, "fig4_test_accuracy", value_label="test accuracy", panels=PANELS,
        title="Test accuracy of DP rule lists (mean ± standard error over seeds)",
    )
    t1, t2 = table1(acc), table2(main)
    t1.to_csv(run.out / "table1_standard_error.csv", index=False, float_format="%.6g")
    t2.to_csv(run.out / "table2_vulnerability.csv", index=False, float_format="%.6g")
    return {"main": main, "acc": acc, "table1": t1, "table2": t2}


def _fig23(run) -> pd.DataFrame:
    plan = run.plan
    run.log(f"Figs. 2-3: noisy counts vs noisy Gini, {len(plan.fig23_epsilons)} epsilons x {plan.fig23_seeds} seeds")
    config = run.config(DATASETS, (method("GreedyRL"), method("gl-Laplace"), method("noisy-counts")),
                        plan.fig23_epsilons, plan.fig23_seeds)
    f23 = summarise(run.sweep(config, "sweep_fig2_3.csv", "fig2_3", "Figs. 2-3"), "train_accuracy")
    figures.plot_accuracy_vs_epsilon(
        f23, run.out, "fig2_3_noisy_counts_vs_gini", value_label="training accuracy", panels=PANELS,
        title="Noisy counts vs noisy Gini (global sensitivity)",
    )
    return f23


def _alternatives(run) -> pd.DataFrame:
    run.log("Alternative files for COMPAS and Adult (GreedyRL, sm-Laplace at epsilon = 10)")
    alts = alternative_datasets(run.data_home)
    config = run.config(tuple(a for _, a in alts), (method("GreedyRL"), method("sm-Laplace")), (10.0,), run.plan.n_seeds)
    table = alternatives_table(run.sweep(config, "sweep_alternatives.csv", "alternatives", "alternatives"), alts)
    table.to_csv(run.out / "alternative_datasets.csv", index=False)
    return table


def _sec5d(run) -> pd.DataFrame:
    plan = run.plan
    run.log("Section V-D: K and lambda (validation split)")
    methods, meaning = hyper_methods(plan)
    hyper = []
    for eps in plan.hyper_epsilons:
        config = run.config(DATASETS, methods, (eps,), plan.hyper_seeds, holdout="validation")
        hyp = run.sweep(config, f"sweep_sec5d_eps{eps:g}.csv", f"sec5d_eps{eps:g}", f"Section V-D, ε={eps:g}")
        hyp_sum = summarise(hyp, "validation_accuracy", by=("dataset", "method"))
        hyp_sum[["family", "knob", "value"]] = pd.DataFrame([meaning[m] for m in hyp_sum["method"]], index=hyp_sum.index)
        rules = hyp.groupby(["dataset", "method"], sort=False)["n_rules"].mean()
        hyp_sum["mean_rules"] = [rules[(d, m)] for d, m in zip(hyp_sum["dataset"], hyp_sum["method"])]
        hyp_sum["epsilon"] = eps
        figures.plot_hyperparameters(hyp_sum, run.out, f"sec5d_hyperparameters_eps{eps:g}", panels=PANELS,
                                     value_label=f"validation accuracy (ε = {eps:g})")
        hyper.append(hyp_sum)
    return pd.concat(hyper, ignore_index=True)


def _table3(run) -> pd.DataFrame:
    run.log(f"Table III: permutation importance on Adult, {run.plan.table3_seeds} seeds")
    with run.timed("table3") as timing:
        t3 = run_table3(run.plan, base_seed=run.base_seed, n_jobs=run.n_jobs, data_home=run.data_home)
        timing["rows"] = len(t3)
    t3.to_csv(run.raw / "table3_per_seed.csv", index=False)
    table = table3(t3)
    table.to_csv(run.out / "table3_feature_intersection.csv", index=False, float_format="%.6g")
    return table


def _appendix_c(run) -> pd.DataFrame:
    plan = run.plan
    run.log(f"Appendix C: membership inference, {plan.mia_repeats} repeats x {plan.mia_shadows} shadow models")
    with run.timed("mia"):
        roc, mia = run_mia(plan, base_seed=run.base_seed, n_jobs=run.n_jobs, data_home=run.data_home)
    figures.plot_mia_roc(roc, run.out, panels={PAPER_DATASETS[d].name: PANELS[PAPER_DATASETS[d].name]
                                               for d in ("German", "COMPAS")})
    mia.to_csv(run.out / "appC_mia_summary.csv", index=False, float_format="%.6g")
    return mia


def _experiments(run) -> dict:
    """Every experiment of paper 001, in order; returns what the report needs."""
    run.log("Fig. 1: noise amplitude")
    figures.plot_noise_amplitude(noise_amplitude_table(), run.out)
    results = _fig4(run)
    results["f23"] = _fig23(run)
    results["alternatives"] = _alternatives(run)
    results["hyper"] = _sec5d(run)
    results["table3"] = _table3(run)
    results["mia"] = _appendix_c(run)
    return results


#: Paper 001's reproduction: ``dpglass reproduce rule-lists``.
REPRODUCTION = Reproduction(full=FULL, quick=QUICK, experiments=_experiments, report=write_report)
reproduce = REPRODUCTION.reproduce
