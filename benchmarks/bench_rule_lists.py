"""Rule-list speed, measured in one run on the same data (ratios; no assertions).

1. Fit time (issue 3): median wall time of ``DPRuleListClassifier(max_card=2)``
   (default mechanism, epsilon = 1) over scikit-learn's
   ``DecisionTreeClassifier(max_depth=5)`` on the same 70% training split of
   ``adult-corels`` and of ``adult``.
2. Sweep throughput (issue 5, ``--sweep``): fits per second of the paper-001
   grid (the five DP mechanisms of the paper and GreedyRL, 200 epsilons) for a
   few seeds per dataset, fitting the estimators one by one ("naive": fit, then
   score train and test) and with the sweep engine's shared-count fast path,
   on one core and on ``--jobs`` cores, then the projected time of the paper's
   360,000-fit grid.

Run::

    DPGLASS_DATA=../shared/data python benchmarks/bench_rule_lists.py            # 1
    DPGLASS_DATA=../shared/data python benchmarks/bench_rule_lists.py --sweep    # 1 and 2
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from dpglass.datasets import load_dataset  # noqa: E402
from dpglass.experiments import SweepConfig, run_sweep, split_indices, cell_seed  # noqa: E402
from dpglass.models import DPRuleListClassifier  # noqa: E402
from _timing import median_fit_time  # noqa: E402  (benchmarks/ is on sys.path when run as a script)


def bench_fit(repeats: int) -> None:
    print(f"fit time, median of {repeats} (70% training split, epsilon=1, default mechanism)")
    print(f"{'dataset':14s} {'n x d':>12s} {'DP rule list':>13s} {'tree depth 5':>13s} {'ratio':>7s}")
    for name in ("adult-corels", "adult"):
        X, y = load_dataset(name)
        X = X.to_numpy()
        tr, _ = split_indices(len(y), cell_seed(0, name, 0))
        Xtr, ytr = X[tr], y[tr]
        rl = median_fit_time(lambda i: DPRuleListClassifier(epsilon=1.0, max_card=2, random_state=i), Xtr, ytr, repeats)[0]
        dt = median_fit_time(lambda i: DecisionTreeClassifier(max_depth=5, random_state=i), Xtr, ytr, repeats)[0]
        print(f"{name:14s} {f'{Xtr.shape[0]} x {Xtr.shape[1]}':>12s} {rl * 1e3:10.1f} ms {dt * 1e3:10.1f} ms "
              f"{rl / dt:6.2f}x")


def bench_sweep(seeds: int, jobs: int) -> None:
    from dpglass.experiments.rule_lists import PAPER_DATASETS, _paper_grid, paper_methods

    methods = tuple(m for m in paper_methods() if m.name != "certified-pf")  # the paper's six
    eps = _paper_grid()
    cfg = SweepConfig(tuple(PAPER_DATASETS.values()), methods, eps, seeds)
    sub = SweepConfig(cfg.datasets, methods, eps[::20], 1)  # naive is slow: every 20th epsilon, 1 seed
    print(f"\nsweep throughput: paper grid, {len(eps)} epsilons x {len(methods)} methods x 3 datasets")
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for label, config, kw in (
            ("naive estimator.fit + score, 1 core", sub, dict(fast=False, n_jobs=1)),
            ("shared-count fast path, 1 core", cfg, dict(n_jobs=1)),
            (f"shared-count fast path, {jobs} cores", cfg, dict(n_jobs=jobs)),
        ):
            run_sweep(SweepConfig(cfg.datasets, methods, eps[:2], 1), f"{tmp}/warm.csv", progress=False, resume=False, **kw)
            start = time.perf_counter()
            table = run_sweep(config, f"{tmp}/{len(rows)}.csv", progress=False, resume=False, **kw)
            seconds = time.perf_counter() - start
            rows.append((label, len(table), seconds))
            print(f"  {label:42s} {len(table):7d} fits {seconds:8.1f} s {len(table) / seconds:8.0f} fits/s")
    naive, fast1, fastn = (r[1] / r[2] for r in rows)
    print(f"  speed-up of the fast path: {fast1 / naive:.1f}x on 1 core, {fastn / naive:.1f}x with {jobs} cores")
    print(f"  projected 360,000-fit grid: naive {360_000 / naive / 60:.0f} min on 1 core; "
          f"fast path {360_000 / fastn / 60:.1f} min on {jobs} cores")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sweep", action="store_true", help="also measure the sweep engine's throughput")
    parser.add_argument("--seeds", type=int, default=4, help="seeds per dataset for --sweep")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    bench_fit(args.repeats)
    if args.sweep:
        bench_sweep(args.seeds, args.jobs)


if __name__ == "__main__":
    main()
