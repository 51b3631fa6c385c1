"""Fit time of LazyBB (99 DP stumps) against sklearn's GradientBoostingClassifier(99 stumps).

Run::

    DPGLASS_DATA=../shared/data python benchmarks/bench_boosting.py [--repeats 5]

Both models are fit on the same binarized Adult data (all 48842 records, 117
0/1 features; ``dpglass.datasets.load_dataset("adult")``).  Without the data
files, a synthetic one-hot-like matrix of the same shape is used (said so in the
output).  Prints the median fit times and their ratio; asserts nothing.
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier

from dpglass.models.boosting.estimator import SmoothBoostClassifier
from dpglass.models.logistic.estimator import DPLogisticRegression
from _timing import median_fit_time  # noqa: E402  (benchmarks/ is on sys.path when run as a script)


def load_data():
    try:
        from dpglass.datasets import load_dataset

        X, y = load_dataset("adult")
        return np.asarray(X, dtype=np.uint8), np.asarray(y, dtype=np.uint8), "adult (binarized, 48842 x 117)"
    except Exception as exc:  # noqa: BLE001 - any failure falls back to synthetic data
        rng = np.random.default_rng(0)
        X = (rng.random((48842, 117)) < 0.11).astype(np.uint8)
        y = (X[:, :5].sum(axis=1) + rng.random(48842) > 1.2).astype(np.uint8)
        return X, y, f"synthetic 48842 x 117 (adult unavailable: {type(exc).__name__})"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    X, y, name = load_data()
    print(f"data: {name}; repeats: {args.repeats} (median fit time)")

    t_gbc, gbc = median_fit_time(
        lambda r: GradientBoostingClassifier(n_estimators=99, max_depth=1, random_state=r), X, y, args.repeats
    )
    t_stump, stump = median_fit_time(
        lambda r: SmoothBoostClassifier(epsilon=1.0, n_rounds=99, weak_learner="stump", random_state=r),
        X, y, args.repeats,
    )
    t_tree, tree = median_fit_time(
        lambda r: SmoothBoostClassifier(epsilon=1.0, n_rounds=99, weak_learner="tree", tree_nodes=3,
                                        tree_learner="top-down", random_state=r),  # the README row: paper 002's trees
        X, y, max(1, args.repeats // 2),
    )
    t_lr, lr = median_fit_time(lambda r: DPLogisticRegression(epsilon=1.0, random_state=r), X, y, args.repeats)

    rows = [
        ("sklearn GradientBoostingClassifier(99, depth 1)", t_gbc, gbc.score(X, y)),
        ("SmoothBoostClassifier stumps (99 rounds, eps=1)", t_stump, stump.score(X, y)),
        ("SmoothBoostClassifier top-down trees (99 rounds, 3 nodes, eps=1)", t_tree, tree.score(X, y)),
        ("DPLogisticRegression (eps=1)", t_lr, lr.score(X, y)),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'model'.ljust(width)}  fit s    train acc")
    for label, t, acc in rows:
        print(f"{label.ljust(width)}  {t:7.3f}  {acc:.4f}")
    print(f"ratio GBC / LazyBB-stumps fit time: {t_gbc / t_stump:.1f}x (LazyBB-stumps is {t_stump / t_gbc:.3f} of GBC)")
    print(f"ratio GBC / LazyBB-trees fit time:  {t_gbc / t_tree:.2f}x")


if __name__ == "__main__":
    main()
