"""What ``dpglass reproduce gbdt`` runs: datasets, methods, grids, and the published numbers it is compared to."""

from __future__ import annotations

from dataclasses import dataclass

EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
DELTA = 1e-8


@dataclass(frozen=True)
class Plan:
    """What one run fits: every method at every epsilon for every seed of each dataset.

    Seeds are the experiments engine's (:func:`dpglass_experiments.seeding.cell_seed`): Adult's
    ``adult_seeds`` vary the noise on the canonical split; cod-rna's seed ``s`` is fold ``s % 5`` of
    the stratified 5-fold partition ``s // 5`` (``dataset_split`` with ``split="kfold:5"``), so
    ``codrna_seeds = 5 r`` is ``r`` repetitions of 5-fold CV.  ``codrna_seeds = 0`` skips cod-rna.
    """

    epsilons: tuple
    adult_seeds: int
    codrna_seeds: int
    adult_subsample: int | None = None  # training records used (None: all)


#: The issue's 10 repetitions: Adult 10 noise seeds; cod-rna 10 repetitions of 5-fold CV (50 fits a cell).
FULL = Plan(EPSILONS, adult_seeds=10, codrna_seeds=50)
QUICK = Plan((0.1, 1.0), adult_seeds=2, codrna_seeds=2, adult_subsample=4000)

#: (label, estimator name or "nonprivate", parameters) -- numeric methods get bounds; binary ones the 0/1 encoding
METHODS = (
    ("DP-GBDT (default)", "dp-gbdt", {}),
    ("DPBoost, random subsets", "dp-gbdt", {"variant": "dpboost", "subset_selection": "random",
                                            "trees_per_ensemble": 50, "max_depth": 3}),
    ("DPBoost, gradient subsets", "dp-gbdt", {"variant": "dpboost", "subset_selection": "gradient",
                                              "trees_per_ensemble": 50, "max_depth": 3}),
    ("SmoothBoost (stumps, 0/1 encoding)", "smooth-boost-stumps", {}),
    ("DP-LR (0/1 encoding)", "dp-logistic-regression", {}),
)

#: Published Adult numbers (issue 13): (method, epsilon, accuracy, source)
PUBLISHED = (
    ("DP-XGBoost", 1.0, 0.76, "issue 13 (paper 002 Sec. 1.2/5 survey)"),
    ("DP-XGBoost", 10.0, 0.82, "issue 13"),
    ("S-BDT", 0.54, 0.829, "Kirsch et al. 2023"),
    ("S-BDT", 0.07, 0.813, "Kirsch et al. 2023"),
    ("PrivaTree (one depth-4 tree)", 1.0, 0.822, "issue 13"),
    ("DP-EBM (interpret 0.7.8 defaults)", 1.0, 0.80, "issue 13, measured"),
    ("DP-EBM (interpret 0.7.8 defaults)", 0.1, 0.77, "issue 13, measured"),
    ("non-private boosted trees", None, 0.87, "issue 13"),
)
TARGETS = {1.0: 0.845, 0.1: 0.82}
