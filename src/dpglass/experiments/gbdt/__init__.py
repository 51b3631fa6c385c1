"""``dpglass reproduce gbdt``: DP gradient boosted trees (issue 13) against DPBoost, LazyBB, DP-LR and references.

Adult: canonical train/test split, raw numeric columns with public bounds
(:mod:`~dpglass.experiments.gbdt.data`) for the tree models, the built-in 0/1
encoding for SmoothBoost and DP-LR.  cod-rna: 5-fold CV (a fixed shuffle).
Writes ``results.csv`` (one row per fit), ``summary.csv``, ``accuracy.png``
and ``report.md`` into ``out``.  A self-contained loop (the sweep engine of
the other reproductions takes 0/1 datasets only).
"""

from __future__ import annotations

import csv
import os
import time
import warnings

import numpy as np

from dpglass.experiments.gbdt.plan import DELTA, FULL, METHODS, QUICK
from dpglass.experiments.reproduction import Reproduction

__all__ = ["REPRODUCTION", "reproduce"]


def _adult(plan, data_home):
    from dpglass.datasets import load_dataset
    from dpglass.experiments.gbdt.data import load_numeric

    Xtr, ytr, bounds = load_numeric("adult", "train")
    Xte, yte, _ = load_numeric("adult", "test")
    Btr, _ = load_dataset("adult", split="train")
    Bte, _ = load_dataset("adult", split="test")
    keep = slice(None) if plan.adult_subsample is None else slice(0, plan.adult_subsample)
    fold = (Xtr.to_numpy()[keep], ytr[keep], Xte.to_numpy(), yte, Btr.to_numpy()[keep], Bte.to_numpy())
    return bounds, [(f"rep{r}", fold) for r in range(plan.adult_reps)]


def _codrna(plan):
    from dpglass.experiments.gbdt.data import load_numeric
    from dpglass.datasets import load_dataset

    X, y, bounds = load_numeric("cod-rna")
    B, _ = load_dataset("cod-rna")
    order = np.random.default_rng(20240613).permutation(len(y))  # a fixed, public shuffle
    folds = np.array_split(order, 5)
    out = []
    X, B = X.to_numpy(), B.to_numpy()
    for f in range(plan.codrna_folds):
        te = folds[f]
        tr = np.concatenate([folds[k] for k in range(5) if k != f])
        for r in range(plan.codrna_reps):
            out.append((f"fold{f}-rep{r}", (X[tr], y[tr], X[te], y[te], B[tr], B[te])))
    return bounds, out


def _fit_one(name, params, bounds, fold, eps, seed):
    from dpglass.registry import make_estimator

    Xtr, ytr, Xte, yte, Btr, Bte = fold
    numeric = name == "dp-gbdt"
    extra = {"bounds": bounds, "delta": DELTA} if numeric else {}
    model = make_estimator(name, epsilon=eps, random_state=seed, **params, **extra)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Xtr if numeric else Btr, ytr)
    fit_time = time.perf_counter() - t0
    acc = float(model.score(Xte if numeric else Bte, yte))
    return acc, fit_time, model.privacy_ledger_.total()


def _references(fold, bounds):
    """Non-private: HistGradientBoosting with the default's trees and depth (50 stumps), a depth-4 tree."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.tree import DecisionTreeClassifier

    Xtr, ytr, Xte, yte, *_ = fold
    rows = []
    hgb = HistGradientBoostingClassifier(max_iter=50, max_depth=1, learning_rate=0.5, max_bins=32,
                                         early_stopping=False, random_state=0).fit(Xtr, ytr)
    rows.append(("HistGradientBoosting (50 stumps, non-private)", float(hgb.score(Xte, yte))))
    hgb4 = HistGradientBoostingClassifier(max_iter=100, max_depth=4, early_stopping=False,
                                          random_state=0).fit(Xtr, ytr)
    rows.append(("HistGradientBoosting (100 trees depth 4, non-private)", float(hgb4.score(Xte, yte))))
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(Xtr, ytr)
    rows.append(("decision tree depth 4 (non-private)", float(tree.score(Xte, yte))))
    return rows


def _experiments(run) -> dict:
    """Every fit of the plan: ``{"rows": per-fit rows, "refs": non-private references, "elapsed": seconds}``."""
    plan, base_seed = run.plan, run.base_seed
    rows, refs = [], []
    started = time.perf_counter()
    datasets = [("adult",) + _adult(plan, run.data_home)]
    if plan.codrna:
        datasets.append(("cod-rna",) + _codrna(plan))
    for dname, bounds, folds in datasets:
        for ref, acc in _references(folds[0][1], bounds):
            refs.append((dname, ref, acc))
        for fi, (fname, fold) in enumerate(folds):
            for eps in plan.epsilons:
                for mi, (label, name, params) in enumerate(METHODS):
                    seed = base_seed + 1000 * fi + 100 * mi + int(round(eps * 1000)) % 97
                    acc, t, (spent, delta) = _fit_one(name, params, bounds, fold, eps, seed)
                    rows.append(dict(dataset=dname, split=fname, method=label, epsilon=eps, accuracy=acc,
                                     fit_seconds=round(t, 3), epsilon_spent=spent, delta_spent=delta))
            if run.progress:
                run.log(f"{dname} {fname}: done ({time.perf_counter() - started:.0f}s)")
    with open(os.path.join(run.out, "results.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return {"rows": rows, "refs": refs, "elapsed": time.perf_counter() - started}


def _report(run, results) -> None:
    from dpglass.experiments.gbdt.report import write_report

    write_report(run.out, results["rows"], results["refs"], run.plan, results["elapsed"])


REPRODUCTION = Reproduction(full=FULL, quick=QUICK, experiments=_experiments, report=_report)
reproduce = REPRODUCTION.reproduce
