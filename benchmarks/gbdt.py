"""Fit time of DPGradientBoostingClassifier against HistGradientBoostingClassifier, same trees and depth.

Run from the repository root::

    DPGLASS_DATA=../shared/data python benchmarks/gbdt.py [--trees 100] [--depth 4] [--repeats 3] [--threads 1]

Both fit Adult's training split (32561 records) with its numeric columns kept
(public bounds, ``dpglass_experiments.gbdt.data``), 32 bins, the same number of
trees and depth (HistGradientBoosting: no early stopping), HistGradientBoosting
on ``--threads`` OpenMP threads (default 1: dpglass's fit is single-threaded
NumPy, and on a shared machine OpenMP threads spin against the other jobs).
Every dpglass fit is cold: the cached budget calibration is cleared first.
Prints the median fit times and their ratio, measured in one run; asserts nothing.

``--tables compas,adult`` instead times DPGradientBoostingClassifier alone, with
its defaults at epsilon = 1, on the binarised tables (``load_dataset``): the
median wall and CPU time of ``--repeats`` warm fits.  To compare two versions
back to back, run it under each (e.g. ``PYTHONPATH=<worktree>/src``) in turn.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(__file__))

from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from _timing import median_fit_time  # noqa: E402
from dpglass_experiments.gbdt.data import load_numeric  # noqa: E402
from dpglass.models.gbdt.estimator import DPGradientBoostingClassifier  # noqa: E402


def _cold(i, trees, depth, bounds):
    try:  # the calibration is cached per parameter set; a benchmark times the whole first fit
        from dpglass.models.gbdt.budget import budget

        budget.cache_clear()
    except ImportError:  # an older dpglass without the cache
        pass
    return DPGradientBoostingClassifier(epsilon=1.0, bounds=bounds, n_estimators=trees, max_depth=depth,
                                        random_state=i)


def _tables(names, repeats):
    """Median wall and CPU ms of dp-gbdt's default fit (epsilon 1) on binarised tables, after one warm-up fit."""
    from dpglass.datasets import load_dataset

    for name in names:
        X, y = load_dataset(name)
        X = X.to_numpy()
        DPGradientBoostingClassifier(epsilon=1.0, random_state=0).fit(X, y)  # imports and the cached calibration
        wall, cpu = [], []
        for i in range(repeats):
            model = DPGradientBoostingClassifier(epsilon=1.0, random_state=i)
            t, c = time.perf_counter(), time.process_time()
            model.fit(X, y)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        print(f"  {name} {X.shape}: dp-gbdt fit {1000 * statistics.median(wall):.0f} ms wall, "
              f"{1000 * statistics.median(cpu):.0f} ms CPU (median of {repeats})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="OpenMP threads of HistGradientBoosting")
    parser.add_argument("--tables", default=None, help="e.g. compas,adult: time dp-gbdt alone on binarised tables")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the undeclared label set's warning, once per fit
    if args.tables:
        return _tables(args.tables.split(","), args.repeats)
    X, y, bounds = load_numeric("adult", "train")
    X = X.to_numpy()
    dp, _ = median_fit_time(lambda i: _cold(i, args.trees, args.depth, bounds), X, y, args.repeats)
    with threadpool_limits(args.threads):
        hgb, _ = median_fit_time(lambda i: HistGradientBoostingClassifier(
            max_iter=args.trees, max_depth=args.depth, max_bins=32, early_stopping=False, random_state=i),
            X, y, args.repeats)
    print(f"Adult numeric (32561 x {X.shape[1]}), {args.trees} trees of depth {args.depth}:")
    print(f"  DPGradientBoostingClassifier: {dp:.2f} s")
    print(f"  HistGradientBoostingClassifier ({args.threads} thread{'s' if args.threads > 1 else ''}): {hgb:.2f} s")
    print(f"  ratio: {dp / hgb:.1f}x")


if __name__ == "__main__":
    main()
