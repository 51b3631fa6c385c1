"""Rule-list speed, measured in one run on the same data (ratios; no assertions).

1. Fit time (issue 3): median wall time of ``DPRuleListClassifier(max_card=2)``
   (certified-pf, epsilon = 1) over scikit-learn's
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
from dpglass_experiments import SweepConfig, run_sweep, split_indices, cell_seed  # noqa: E402
from dpglass.models import DPRuleListClassifier  # noqa: E402


def bench_fit(repeats: int) -> None:
    """Interleaved fits (rule list, tree, rule list, ...): both see the same machine load.

    The first rule-list fit in a process also builds and caches the candidate
    set (cold); later fits reuse it (warm).  Both are reported, with the spread
    of the per-pair ratios, since a single median ratio moved between runs.
    """
    import statistics

    # certified-pf: the default mechanism when the README's figures were measured (now errors-pf)
    print(f"fit time, {repeats} interleaved pairs (70% training split, epsilon=1, certified-pf)")
    print(f"{'dataset':14s} {'n x d':>12s} {'cold RL':>9s} {'warm RL':>9s} {'tree':>9s} "
          f"{'ratio (median, IQR of pairs)':>30s}")
    for name in ("adult-corels", "adult"):
        X, y = load_dataset(name)
        X = X.to_numpy()
        tr, _ = split_indices(len(y), cell_seed(0, name, 0))
        Xtr, ytr = X[tr], y[tr]
        rl_times, dt_times = [], []
        for i in range(repeats + 1):
            start = time.perf_counter()
            DPRuleListClassifier(epsilon=1.0, max_card=2, mechanism="certified-pf", random_state=i).fit(Xtr, ytr)
            rl_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            DecisionTreeClassifier(max_depth=5, random_state=i).fit(Xtr, ytr)
            dt_times.append(time.perf_counter() - start)
        cold, warm, dt = rl_times[0], rl_times[1:], dt_times[1:]
        ratios = sorted(r / d for r, d in zip(warm, dt))
        q1, q3 = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
        print(f"{name:14s} {f'{Xtr.shape[0]} x {Xtr.shape[1]}':>12s} {cold * 1e3:7.0f}ms "
              f"{statistics.median(warm) * 1e3:7.0f}ms {statistics.median(dt) * 1e3:7.0f}ms "
              f"{statistics.median(ratios):14.2f} ({q1:.2f}-{q3:.2f}); cold/tree {cold / statistics.median(dt):.2f}")


def bench_sweep(seeds: int, jobs: int) -> None:
    from dpglass_experiments.rule_lists import PAPER_DATASETS, _paper_grid, paper_methods

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
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--sweep", action="store_true", help="also measure the sweep engine's throughput")
    parser.add_argument("--seeds", type=int, default=4, help="seeds per dataset for --sweep")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    bench_fit(args.repeats)
    if args.sweep:
        bench_sweep(args.seeds, args.jobs)


if __name__ == "__main__":
    main()
