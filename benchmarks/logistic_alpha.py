"""Choosing DPLogisticRegression's default regularisation on simulated data only (issue 12).

The default ``alpha`` must not be tuned on the shipped datasets (neither their
training nor their test parts).  This script simulates one-hot data --
``k`` categorical attributes with ``m`` levels each, one level per attribute
set, logit ``b0 + sum of the levels' random effects`` with effects
``N(0, s^2)`` -- and measures test accuracy of the DP fit for every
``alpha`` in a grid, against the majority class of the training part:

* n (training records) from 300 to 30,000, because n is private and the
  default has to hold at any n; small n with a weak signal (``s = 0.3``) is
  where a fixed ``alpha`` falls below the constant predictor;
* epsilon in {0.1, 0.4, 1, 5}; the solve does not depend on epsilon, so each
  (data, alpha) is solved once and the noise is drawn per epsilon
  (``NOISE_DRAWS`` draws).

Run::

    PYTHONPATH=src python benchmarks/logistic_alpha.py            # ~10 min on 2 cores
    PYTHONPATH=src python benchmarks/logistic_alpha.py --quick

Output: per (signal, n, epsilon) the mean accuracy of every alpha and of the
majority class; then, per rule ``alpha = c / epsilon``, the worst shortfall
against the best alpha and against the majority class.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from dpglass.models.logistic.solver import RowBlocks, minimise, scaled_rows
from dpglass.models.logistic.estimator import default_data_norm
from dpglass.privacy.objective_perturbation import (
    output_perturbation_calibration, release_on_grid, snap_to_grid,
)

ALPHAS = (3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
EPSILONS = (0.1, 0.4, 1.0, 5.0)
SIZES = (300, 700, 2000, 10000, 30000)
DESIGNS = ((6, 4), (12, 8))  # (attributes, levels): d = 24 or 96
SIGNALS = (1.0, 0.3)
NOISE_DRAWS = 5
N_TEST = 20000


def simulate(rng, k, m, s, n):
    effects = rng.normal(0.0, s, size=(k, m))
    b0 = rng.normal(-0.5, 0.5)
    levels = rng.integers(0, m, size=(n, k))
    X = np.zeros((n, k * m), dtype=np.uint8)
    X[np.arange(n)[:, None], np.arange(k) * m + levels] = 1
    logit = b0 + effects[np.arange(k), levels].sum(axis=1)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.uint8)
    return X, y


OFFSET_SHARE = 0.1  # as logistic.CLASS_COUNT_SHARE; the offset below approximates class_offset (Laplace counts, clip 5)


def fits(X, y, Xt, yt, rng, offset=False):
    """Accuracy per (alpha, epsilon), averaged over noise draws."""
    p = X.shape[1] + 1
    c = default_data_norm(p)
    A = scaled_rows(X, True, c)
    At = np.column_stack([Xt, np.ones(Xt.shape[0])]).astype(np.float64)
    ys = 2.0 * y - 1.0
    out = {}
    for alpha in ALPHAS:
        mu = alpha * c * c
        if not offset:
            beta = minimise(RowBlocks.dense(A, ys, np.ones(len(ys))), mu, c * 1e-4)
        for eps in EPSILONS:
            e_coef = eps * (1 - OFFSET_SHARE) if offset else eps
            cal = output_perturbation_calibration(epsilon=e_coef, regularization=mu, row_norm=c, n_coef=p,
                                                  tol=c * 1e-4)
            accs = []
            for _ in range(NOISE_DRAWS):
                b = 0.0
                if offset:
                    e_b = eps * OFFSET_SHARE
                    n1 = max(y.sum() + rng.laplace(0, 1 / e_b), 1.0)
                    n0 = max((1 - y).sum() + rng.laplace(0, 1 / e_b), 1.0)
                    b = float(np.clip(np.log(n1 / n0), -5, 5))
                    beta = minimise(RowBlocks.dense(A, ys, np.ones(len(ys))), mu, c * 1e-4, offset=b)
                k = snap_to_grid(beta, cal.grid_step)
                accs.append(np.mean(((At @ release_on_grid(k, cal, rng) + b) > 0) == yt))
            out[alpha, eps] = float(np.mean(accs))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 repetitions, n up to 2000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--offset", action="store_true", help="the intercept offset from two noisy counts (what DPLogisticRegression does)")
    args = ap.parse_args(argv)
    reps = 2 if args.quick else args.reps
    sizes = SIZES[:3] if args.quick else SIZES
    rng = np.random.default_rng(20261123)
    table = {}  # (s, n, eps) -> {alpha: [acc], "majority": [acc]}
    for (k, m), s, rep in itertools.product(DESIGNS, SIGNALS, range(reps)):
        Xall, yall = simulate(rng, k, m, s, max(sizes) + N_TEST)
        Xt, yt = Xall[-N_TEST:], yall[-N_TEST:]
        for n in sizes:
            X, y = Xall[:n], yall[:n]
            maj = float(np.mean(yt == int(y.mean() > 0.5)))
            for (alpha, eps), acc in fits(X, y, Xt, yt, rng, args.offset).items():
                cell = table.setdefault((s, n, eps), {})
                cell.setdefault(alpha, []).append(acc)
                if alpha == ALPHAS[0]:
                    cell.setdefault("majority", []).append(maj)
        print(f"done design {k}x{m} s={s} rep {rep}", flush=True)
    head = " | ".join(f"α={a:g}" for a in ALPHAS)
    print(f"\n| signal | n | ε | {head} | majority |\n|" + "---|" * (len(ALPHAS) + 4))
    for key in sorted(table):
        cell = table[key]
        vals = " | ".join(f"{np.mean(cell[a]):.3f}" for a in ALPHAS)
        print(f"| {key[0]:g} | {key[1]} | {key[2]:g} | {vals} | {np.mean(cell['majority']):.3f} |")
    print("\nrule alpha = min(grid, c/eps): worst (best alpha - rule) and worst (majority - rule) at eps >= 1 / any eps")
    for c in (10.0, 30.0, 100.0, 300.0):
        gap_best, gap_maj, gap_maj1 = [], [], []
        for (s, n, eps), cell in table.items():
            a = min(ALPHAS, key=lambda x: abs(np.log(x) - np.log(c / eps)))
            rule = np.mean(cell[a])
            gap_best.append(max(np.mean(cell[b]) for b in ALPHAS) - rule)
            gap_maj.append(np.mean(cell["majority"]) - rule)
            if eps >= 1:
                gap_maj1.append(np.mean(cell["majority"]) - rule)
        print(f"c={c:g}: below best by <= {max(gap_best):.3f} (mean {np.mean(gap_best):.3f}); "
              f"below majority by <= {max(gap_maj1):.3f} at eps >= 1, {max(gap_maj):.3f} at any eps")


if __name__ == "__main__":
    main()
