"""``dpglass reproduce gbdt``: DP gradient boosted trees (issue 13) against DPBoost, LazyBB, DP-LR and references.

Adult: canonical train/test split, raw numeric columns with public bounds
(:mod:`~dpglass_experiments.gbdt.data`) for the tree models, the built-in 0/1
encoding for SmoothBoost and DP-LR.  cod-rna: repeated stratified 5-fold CV,
the engine's ``"kfold:5"`` folds.  Every model's randomness is its cell's
:func:`~dpglass_experiments.seeding.cell_seed` (dataset, seed, method,
epsilon), so a cell gives the same row whatever else the plan holds.  Writes
``results.csv`` (one row per fit), ``summary.csv``, ``accuracy.png`` and
``report.md`` into ``out``; each (dataset, seed)'s rows go to
``raw/fits.csv`` as they finish, and a rerun without ``fresh`` resumes from
them.  A self-contained loop (the sweep engine of the other reproductions
takes 0/1 datasets only).
"""

from __future__ import annotations

import csv
import os
import time
import warnings

import numpy as np

from dpglass_experiments.gbdt.plan import DELTA, FULL, METHODS, QUICK
from dpglass_experiments.reproduction import Reproduction

__all__ = ["REPRODUCTION", "reproduce"]


class _Folds:
    """The config :func:`~dpglass_experiments.seeding.dataset_split` reads (test rows held out)."""

    holdout, test_size, validation_size = "test", 0.3, 0.25

    def __init__(self, base_seed):
        self.base_seed = base_seed


def _adult(plan, data_home):
    """``(bounds, {seed: fold})``: the canonical split for every seed (seeds vary the noise only)."""
    from dpglass.datasets import load_dataset
    from dpglass_experiments.gbdt.data import load_numeric

    Xtr, ytr, bounds = load_numeric("adult", "train", data_home)
    Xte, yte, _ = load_numeric("adult", "test", data_home)
    Btr, _ = load_dataset("adult", data_home, split="train")
    Bte, _ = load_dataset("adult", data_home, split="test")
    keep = slice(None) if plan.adult_subsample is None else slice(0, plan.adult_subsample)
    fold = (Xtr.to_numpy()[keep], ytr[keep], Xte.to_numpy(), yte, Btr.to_numpy()[keep], Bte.to_numpy())
    return bounds, {s: ("canonical", fold) for s in range(plan.adult_seeds)}


def _codrna(plan, base_seed, data_home):
    """``(bounds, {seed: fold})``: seed ``s`` is fold ``s % 5`` of the engine's 5-fold partition ``s // 5``."""
    from dpglass_experiments.gbdt.data import load_numeric
    from dpglass_experiments.seeding import dataset_split
    from dpglass_experiments.specs import DatasetSpec

    X, y, bounds = load_numeric("cod-rna", data_home=data_home)
    spec = DatasetSpec("cod-rna", split="kfold:5")
    B, yb, _ = spec.load(data_home)
    if not np.array_equal(np.asarray(yb), y):  # the two encodings must hold the same records in the same order
        raise RuntimeError("cod-rna: the numeric and the 0/1 encodings disagree on the labels.")
    X, B = X.to_numpy(), np.asarray(B)
    out = {}
    for s in range(plan.codrna_seeds):
        tr, te = dataset_split(_Folds(base_seed), spec, s, data_home)
        out[s] = (f"partition {s // 5} fold {s % 5}", (X[tr], y[tr], X[te], y[te], B[tr], B[te]))
    return bounds, out


def _fit_one(name, params, bounds, fold, eps, seed_seq):
    from dpglass.registry import make_estimator

    Xtr, ytr, Xte, yte, Btr, Bte = fold
    numeric = name == "dp-gbdt"
    extra = {"bounds": bounds, "delta": DELTA} if numeric else {}
    model = make_estimator(name, epsilon=eps, random_state=seed_seq, **params, **extra)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Xtr if numeric else Btr, ytr)
    fit_time = time.perf_counter() - t0
    acc = float(model.score(Xte if numeric else Bte, yte))
    spent, delta = model.privacy_ledger_.total()
    return dict(accuracy=acc, fit_seconds=round(fit_time, 3), epsilon_spent=spent, delta_spent=delta,
                accountant=model.privacy_ledger_.accountant)


def _references(folds):
    """Non-private: HistGradientBoosting with the default's trees and depth (50 stumps) and with 100 depth-4
    trees, and a depth-4 tree; mean test accuracy over ``folds``.

    One OpenMP thread: on a shared machine HistGradientBoosting's threads spin against the other jobs (a
    1500-record fit took 15 s with two).
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.tree import DecisionTreeClassifier
    from threadpoolctl import threadpool_limits

    makers = (
        ("HistGradientBoosting (50 stumps, non-private)", lambda: HistGradientBoostingClassifier(
            max_iter=50, max_depth=1, learning_rate=0.5, max_bins=32, early_stopping=False, random_state=0)),
        ("HistGradientBoosting (100 trees depth 4, non-private)", lambda: HistGradientBoostingClassifier(
            max_iter=100, max_depth=4, early_stopping=False, random_state=0)),
        ("decision tree depth 4 (non-private)", lambda: DecisionTreeClassifier(max_depth=4, random_state=0)),
    )
    rows = []
    with threadpool_limits(1):
        for label, make in makers:
            accs = [float(make().fit(Xtr, ytr).score(Xte, yte)) for Xtr, ytr, Xte, yte, *_ in folds]
            rows.append((label, float(np.mean(accs)), len(accs)))
    return rows


FIELDS = ["dataset", "seed", "split", "method", "epsilon", "accuracy", "fit_seconds", "epsilon_spent", "delta_spent",
          "accountant"]


def _done(path, fresh) -> dict:
    """Rows of an earlier run, by (dataset, seed, method, epsilon) (none when ``fresh``)."""
    if fresh or not os.path.exists(path):
        return {}
    with open(path, newline="") as fh:
        return {(r["dataset"], int(r["seed"]), r["method"], float(r["epsilon"])): r for r in csv.DictReader(fh)}


def _seed_rows(run, dname, seed, split, fold, bounds, done) -> list:
    """Every (method, epsilon) of one (dataset, seed), each fit from its own cell seed."""
    from dpglass_experiments.seeding import cell_seed

    rows = []
    for eps in run.plan.epsilons:
        for label, name, params in METHODS:
            key = (dname, seed, label, float(eps))
            if key in done:
                rows.append(done[key])
                continue
            fit = _fit_one(name, params, bounds, fold, eps, cell_seed(run.base_seed, dname, seed, label, eps))
            rows.append(dict(dataset=dname, seed=seed, split=split, method=label, epsilon=eps, **fit))
    return rows


def _experiments(run) -> dict:
    """Every fit of the plan: ``{"rows": per-fit rows, "refs": non-private references, "elapsed": seconds}``."""
    plan = run.plan
    raw = os.path.join(run.raw, "fits.csv")
    done = _done(raw, run.fresh)
    rows, refs = [], []
    started = time.perf_counter()
    datasets = [("adult", lambda: _adult(plan, run.data_home))]
    if plan.codrna_seeds:
        datasets.append(("cod-rna", lambda: _codrna(plan, run.base_seed, run.data_home)))
    with open(raw, "a" if done else "w", newline="") as fh:  # resumed: earlier rows stay, new ones are added
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if not done:
            w.writeheader()
        for dname, load in datasets:
            with run.timed(dname) as extra:
                bounds, folds = load()
                distinct = {split: fold for split, fold in folds.values()}  # Adult: the one canonical split
                refs += [(dname, *r) for r in _references(list(distinct.values())[:5])]
                for seed, (split, fold) in folds.items():
                    new = _seed_rows(run, dname, seed, split, fold, bounds, done)
                    w.writerows([r for r in new if (dname, seed, r["method"], float(r["epsilon"])) not in done])
                    fh.flush()
                    rows += new
                    if run.progress:
                        run.log(f"{dname} seed {seed} ({split}): done ({time.perf_counter() - started:.0f}s)")
                extra["fits"] = len(folds) * len(plan.epsilons) * len(METHODS)
    with open(os.path.join(run.out, "results.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    return {"rows": rows, "refs": refs, "elapsed": time.perf_counter() - started}


def _report(run, results) -> None:
    from dpglass_experiments.gbdt.report import write_report

    write_report(run.out, results["rows"], results["refs"], run.plan, results["elapsed"])


REPRODUCTION = Reproduction(full=FULL, quick=QUICK, experiments=_experiments, report=_report)
reproduce = REPRODUCTION.reproduce
