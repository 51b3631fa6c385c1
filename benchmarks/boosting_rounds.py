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

``--rates`` instead measures the default committee (``n_rounds="auto"``) at a
grid of learning rates and densities (issue 28's rule 2: a short counted
committee of stumps reweights at half the rate), as the paired mean
difference to the majority class over the validation parts.  The grid sets
the *parameter*: since rule 2, a committee it covers reweights at half of it
(run on the commit before rule 2 to see the old rule's rates).

Run::

    DPGLASS_DATA=../shared/data PYTHONPATH=src python benchmarks/boosting_rounds.py
    DPGLASS_DATA=../shared/data PYTHONPATH=src python benchmarks/boosting_rounds.py --rates --seeds 40 \
        --datasets german german-rules breast-cancer --epsilons 1 5
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
#: ``--rates``: (learning_rate, density) pairs, the defaults first.
RATES = ((0.5, 0.35), (0.5, 0.5), (0.5, 0.7), (0.25, 0.35), (0.25, 0.5))


def rates(datasets, epsilons, seeds: int) -> None:
    """The default committee at each of :data:`RATES`: mean validation accuracy minus the majority class's (paired,
    +- its standard error), every split fitted with its own seed."""
    print("| dataset | learner | ε | " + " | ".join(f"λ={lr:g}, κ={k:g}" for lr, k in RATES) + " |")
    print("|---|---|---|" + "---|" * len(RATES))
    for ds in datasets:
        X, y = (np.asarray(a) for a in load_dataset(ds))
        splits = [split_indices(len(y), s, holdout="validation") for s in range(seeds)]
        maj = np.array([_majority(y[fit], y[val]) for fit, val in splits])
        for learner in LEARNERS:
            for eps in epsilons:
                cells = []
                for lr, kappa in RATES:
                    acc = np.array([SmoothBoostClassifier(epsilon=eps, weak_learner=learner, learning_rate=lr,
                                                          density=kappa, random_state=s).fit(X[fit], y[fit])
                                    .score(X[val], y[val]) for s, (fit, val) in enumerate(splits)])
                    d = acc - maj
                    cells.append(f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(d.size):.4f}")
                print(f"| {ds} | {learner} | {eps:g} | " + " | ".join(cells) + " |", flush=True)


def _majority(y_fit, y_val) -> float:
    values, counts = np.unique(y_fit, return_counts=True)
    return float(np.mean(y_val == values[np.argmax(counts)]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--datasets", nargs="*", default=DATASETS)
    ap.add_argument("--rates", action="store_true", help="the default committee at a grid of learning rates")
    ap.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.rates:
        rates(args.datasets, args.epsilons, args.seeds)
        return
    print("| dataset | learner | n_fit | ε | n·ε | " + " | ".join(f"τ={t}" for t in ROUNDS) + " | majority |")
    print("|---|---|---|---|---|" + "---|" * (len(ROUNDS) + 1))
    for ds in args.datasets:
        X, y = (np.asarray(a) for a in load_dataset(ds))
        for learner in LEARNERS:
            for eps in args.epsilons:
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
