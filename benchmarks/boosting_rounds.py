"""How many LazyBB rounds, as a function of n * epsilon? (issue 12; validation parts only, no test split)

Smooth boosting splits epsilon over its tau rounds; each round's exponential
mechanism separates the literals by about ``epsilon / tau * n * advantage``,
so the best tau grows with ``n * epsilon``.  With few records (German:
700 training rows) 15 rounds at epsilon = 1 vote noise and fall below the
majority class.  This script measures validation accuracy of stumps and
joint trees for tau in a grid on every small shipped dataset and Adult, at
several epsilon: ``split_indices(..., holdout="validation")`` fits on three
quarters of a 70% training part and scores on its last quarter; the test
part is never read.

Run::

    DPGLASS_DATA=../shared/data PYTHONPATH=src python benchmarks/boosting_rounds.py
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from dpglass.datasets import load_dataset
from dpglass_experiments.seeding import split_indices
from dpglass.models import SmoothBoostClassifier

DATASETS = ("german", "breast-cancer", "compas", "mushroom", "adult")
EPSILONS = (0.1, 0.4, 1.0, 5.0)
ROUNDS = (1, 2, 3, 5, 9, 15, 25)
LEARNERS = ("stump", "tree")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--datasets", nargs="*", default=DATASETS)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    print("| dataset | learner | n_fit | ε | n·ε | " + " | ".join(f"τ={t}" for t in ROUNDS) + " | majority |")
    print("|---|---|---|---|---|" + "---|" * (len(ROUNDS) + 1))
    for ds in args.datasets:
        X, y = (np.asarray(a) for a in load_dataset(ds))
        for learner in LEARNERS:
            for eps in EPSILONS:
                acc = np.zeros((args.seeds, len(ROUNDS)))
                maj = np.zeros(args.seeds)
                for s in range(args.seeds):
                    fit, val = split_indices(len(y), s, holdout="validation")
                    values, counts = np.unique(y[fit], return_counts=True)
                    maj[s] = np.mean(y[val] == values[np.argmax(counts)])
                    for i, tau in enumerate(ROUNDS):
                        m = SmoothBoostClassifier(epsilon=eps, weak_learner=learner, n_rounds=tau,
                                                  random_state=1000 * s + i).fit(X[fit], y[fit])
                        acc[s, i] = m.score(X[val], y[val])
                n_fit = len(fit)
                cells = " | ".join(f"{a:.3f}" for a in acc.mean(axis=0))
                print(f"| {ds} | {learner} | {n_fit} | {eps:g} | {n_fit * eps:.0f} | {cells} | {maj.mean():.3f} |",
                      flush=True)


if __name__ == "__main__":
    main()
