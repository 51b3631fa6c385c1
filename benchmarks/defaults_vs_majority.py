"""Registry defaults at epsilon = 1 against the majority class on the small shipped datasets (one run; no assertions).

Issue 12 asks for data-independent defaults never worse than the constant
predictor at epsilon >= 1 on the shipped datasets.  This prints mean test
accuracy over 5 seeded 70/30 splits (``split_indices``) beside the majority
class of each training part.

Run::

    DPGLASS_DATA=../shared/data python benchmarks/defaults_vs_majority.py
"""

from __future__ import annotations

import warnings

import numpy as np

from dpglass.datasets import load_dataset
from dpglass_experiments.seeding import split_indices
from dpglass.registry import get_spec

DATASETS = ("german", "breast-cancer", "mushroom")
MODELS = ("dp-rule-list", "smooth-boost-stumps", "smooth-boost-trees", "dp-logistic-regression", "dp-gbdt")


def main() -> None:
    warnings.simplefilter("ignore")
    print("| dataset | model | accuracy (ε = 1) | majority class |\n|---|---|---|---|")
    for ds in DATASETS:
        X, y = (np.asarray(a) for a in load_dataset(ds))
        for name in MODELS:
            accs, maj = [], []
            for seed in range(5):
                tr, te = split_indices(len(y), seed)
                model = get_spec(name).make(epsilon=1.0, random_state=seed).fit(X[tr], y[tr])
                accs.append(model.score(X[te], y[te]))
                values, counts = np.unique(y[tr], return_counts=True)
                maj.append(np.mean(y[te] == values[np.argmax(counts)]))
            print(f"| {ds} | {name} | {np.mean(accs):.3f} | {np.mean(maj):.3f} |", flush=True)


if __name__ == "__main__":
    main()
