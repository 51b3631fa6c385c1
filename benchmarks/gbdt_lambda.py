"""DP-GBDT's default L2 weight: how many gradient-noise scales? (issue 12; validation parts only, no test split)

A newton leaf is ``-G~ / (H~ + lambda)``: the noisy gradient sum over the
noisy Hessian sum.  When a leaf holds few records, the noise of ``G~`` (scale
``b_g``, a public function of the parameters) dominates its value, and fifty
such trees walk the log-odds at random: on German (700 training rows) the
old default, about ``1.2 b_g``, fell below the majority class at epsilon = 1.
A Bayes step with a prior of sd ``tau`` on the leaf value would take
``lambda = 2 b_g**2 / (H tau**2)``; ``H`` is private, so the default is a
fixed multiple ``k b_g``, and this script measures validation accuracy for
``k`` in a grid on every small shipped dataset, COMPAS and Adult (numeric,
public bounds), at several epsilon: ``split_indices(..., holdout="validation")``
fits on three quarters of a 70% training part (Adult: of its canonical
training split) and scores on the last quarter; the test parts are never read.

Run::

    DPGLASS_DATA=../shared/data PYTHONPATH=src python benchmarks/gbdt_lambda.py
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from dpglass.datasets import load_dataset
from dpglass_experiments.gbdt.data import load_numeric
from dpglass_experiments.seeding import split_indices
from dpglass.models import DPGradientBoostingClassifier
from dpglass.models.gbdt.budget import leaf_gradient_scale

DATASETS = ("german", "breast-cancer", "compas", "mushroom", "adult")
EPSILONS = (0.1, 0.4, 1.0, 5.0)
MULTIPLES = (1.17, 2.0, 3.0, 4.0, 6.0, 8.0)  # 1.17: the old default (twice the Hessian-sum scale)


def _data(name):
    if name == "adult":
        X, y, bounds = load_numeric("adult", "train")
        return X.to_numpy(), np.asarray(y), bounds
    X, y = (np.asarray(a) for a in load_dataset(name))
    return X, y, None


def _lambda(k: float, epsilon: float, bounds, d: int) -> float:
    """``k`` times the gradient-sum noise scale of a default fit at ``epsilon`` (parameters only)."""
    from dpglass.models.gbdt.trees import check_feature_bounds

    model = DPGradientBoostingClassifier(epsilon=epsilon, bounds=bounds)
    model.bounds_ = check_feature_bounds(bounds, d, "DPGradientBoostingClassifier")
    x, _ = model._budget(model._resolve_delta(None))
    return k * leaf_gradient_scale(x, model.split, model.split_share, model.hessian_share)


def parse_args(description: str, argv=None):
    """``--seeds`` and ``--datasets``, the options of this script and of benchmarks/gbdt_variants.py."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--datasets", nargs="*", default=DATASETS)
    return ap.parse_args(argv)


def validation_rows(datasets, seeds: int, params_at, majority: bool = False):
    """Markdown rows: for each dataset and epsilon, DP-GBDT's mean validation accuracy at every parameter set
    ``params_at(epsilon, bounds, d)`` gives (and the majority class's, with ``majority``), over ``seeds``
    ``split_indices(..., holdout="validation")`` parts; the test parts are never read."""
    for ds in datasets:
        X, y, bounds = _data(ds)
        for eps in EPSILONS:
            grid = params_at(eps, bounds, X.shape[1])
            acc = np.zeros((seeds, len(grid)))
            maj = np.zeros(seeds)
            for s in range(seeds):
                fit, val = split_indices(len(y), s, holdout="validation")
                values, counts = np.unique(y[fit], return_counts=True)
                maj[s] = np.mean(y[val] == values[np.argmax(counts)])
                for i, params in enumerate(grid):
                    m = DPGradientBoostingClassifier(epsilon=eps, bounds=bounds, random_state=1000 * s, **params)
                    acc[s, i] = m.fit(X[fit], y[fit]).score(X[val], y[val])
            cells = [f"{a:.3f}" for a in acc.mean(axis=0)] + ([f"{maj.mean():.3f}"] if majority else [])
            yield f"| {ds} | {len(fit)} | {eps:g} | {' | '.join(cells)} |"


def main(argv=None) -> None:
    args = parse_args(__doc__.splitlines()[0], argv)
    warnings.simplefilter("ignore")
    print("| dataset | n_fit | ε | " + " | ".join(f"k={k:g}" for k in MULTIPLES) + " | majority |")
    print("|---|---|---|" + "---|" * (len(MULTIPLES) + 1))

    def lambdas(eps, bounds, d):
        return [{"reg_lambda": _lambda(k, eps, bounds, d)} for k in MULTIPLES]

    for row in validation_rows(args.datasets, args.seeds, lambdas, majority=True):
        print(row, flush=True)


if __name__ == "__main__":
    main()
