"""Accuracy of LazyBB trees (``smooth-boost-trees``) on Adult: the choice of defaults and the final figures.

Run from the repository root::

    DPGLASS_DATA=../shared/data python benchmarks/trees_accuracy.py validation [--seeds 8]
    DPGLASS_DATA=../shared/data python benchmarks/trees_accuracy.py test [--seeds 10]

``validation``
    Fits on a fixed 75% of Adult's canonical training part (a public
    permutation, seed 12345) and scores on the other 25%: the comparison the
    defaults (``tree_learner="joint"``, ``n_rounds="auto"`` = 5 for joint
    trees) were chosen from.  The test part is not read.
``test``
    Fits the registry model ``smooth-boost-trees`` at its defaults (delta = 0:
    pure epsilon-DP, basic composition) on the whole training part and scores
    on the canonical test part (adult.test), next to paper 002's design
    (``tree_learner="top-down"``) at the same settings.  Run once, after the
    choice.

Prints a markdown table of mean and standard deviation over seeds (seeds
0, 1, ...).  Every fit declares the classes ``[0, 1]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpglass.datasets import load_dataset
from dpglass.registry import make_estimator

EPSILONS = (0.1, 0.4, 1.0, 5.0)
#: (label, parameters on top of smooth-boost-trees' defaults) compared on the validation part.
VALIDATION = [
    ("top-down, 15 rounds (paper 002's DP-TopDown, former default)", dict(tree_learner="top-down", n_rounds=15)),
    ("top-down, 5 rounds", dict(tree_learner="top-down", n_rounds=5)),
    ("joint depth 1, 5 rounds", dict(tree_nodes=1, n_rounds=5)),
    ("joint depth 1, 15 rounds", dict(tree_nodes=1, n_rounds=15)),
] + [(f"joint depth 2, {t} rounds", dict(n_rounds=t)) for t in (3, 5, 7, 9, 15)]
#: Compared on the test part: the defaults and the paper's design.
TEST = [
    ("smooth-boost-trees (defaults: joint depth 2, 5 rounds)", {}),
    ("smooth-boost-trees, tree_learner='top-down' (15 rounds)", dict(tree_learner="top-down")),
]


def adult(part: str):
    """``(X_fit, y_fit, X_score, y_score)``: validation split of the training part, or train / test."""
    X, y = load_dataset("adult", split="train")
    X, y = np.asarray(X, dtype=np.uint8), np.asarray(y, dtype=np.uint8)
    if part == "validation":
        perm = np.random.default_rng(12345).permutation(len(y))
        fit, score = perm[: int(0.75 * len(y))], perm[int(0.75 * len(y)):]
        return X[fit], y[fit], X[score], y[score]
    Xt, yt = load_dataset("adult", split="test")
    return X, y, np.asarray(Xt, dtype=np.uint8), np.asarray(yt, dtype=np.uint8)


def measure(configs, part: str, seeds: int, epsilons=EPSILONS) -> list[tuple[str, float, float, float]]:
    """``(label, epsilon, mean accuracy, sd)`` for every configuration and epsilon."""
    Xa, ya, Xb, yb = adult(part)
    rows = []
    for label, params in configs:
        for eps in epsilons:
            acc = [make_estimator("smooth-boost-trees", epsilon=eps, classes=[0, 1], random_state=s, **params)
                   .fit(Xa, ya).score(Xb, yb) for s in range(seeds)]
            rows.append((label, eps, float(np.mean(acc)), float(np.std(acc, ddof=1)) if seeds > 1 else 0.0))
    return rows


def table(rows, epsilons=EPSILONS) -> str:
    head = "| configuration | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |"
    lines = [head, "|---" * (len(epsilons) + 1) + "|"]
    for label in dict.fromkeys(r[0] for r in rows):
        cells = {e: f"{m:.3f} ± {s:.3f}" for lab, e, m, s in rows if lab == label}
        lines.append(f"| {label} | " + " | ".join(cells[e] for e in epsilons) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("validation", "test"))
    parser.add_argument("--seeds", type=int, default=None, help="default: 8 (validation), 10 (test)")
    args = parser.parse_args(argv)
    seeds = args.seeds or (8 if args.part == "validation" else 10)
    start = time.perf_counter()
    rows = measure(VALIDATION if args.part == "validation" else TEST, args.part, seeds)
    print(f"Adult, {args.part} part, {seeds} seeds, mean ± sd of accuracy ({time.perf_counter() - start:.0f} s)\n")
    print(table(rows))


if __name__ == "__main__":
    main()
