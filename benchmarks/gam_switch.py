"""dp-gam's ``"auto"`` branch, forced both ways, on VALIDATION parts of training parts only (issue 28).

Run from the repository root::

    DPGLASS_DATA=../shared/data PYTHONPATH=src python benchmarks/gam_switch.py \\
        [--datasets compas german ...] [--epsilons 0.1 0.4 1 5] [--reps 10] [--out rows.json]

For every dataset, ε and repetition r, dp-gam (its defaults, ``delta=1e-6``) is fitted on the **inner training
part** and scored on the **validation part** of a stratified 70/30 split (seed ``100 + r``) of the outer
training part that ``benchmarks/peers.py`` uses in repetition r (Adult: UCI's ``train`` file; the others: the
stratified 70/30 split of seed r).  The outer test parts are never read.  The route is the one the README
recommends: ``DPPipeline`` with the public schema of ``benchmarks/_peers_tables.py`` where the dataset has one
(Adult, COMPAS, German, breast-cancer, Mushroom), the numeric columns with their documented ranges for wine and
digits (``dpglass_experiments.multiclass.data``), else the built-in 0/1 columns.

Each fit is run once per **branch** of the rule (:mod:`dpglass.models.gam.sizes`), forced by replacing every version
of the rule for that fit (the plan, the counts' share and the accounting are the ``"auto"`` plan's, only the branch differs):
``counts2`` and ``counts4`` (the naive Bayes, 2 or 4 bins per numeric column) and ``gradients`` (2 cycles, 16
bins), and ``auto`` (the rule as it is).  Each row records the public signals the rule reads (from the fit's
released class counts: ``t = n_hat eps / (B K)``, ``s = n_hat eps / (d K)``, ``d``, ``K``, ``B``, the numeric
columns' share of ``B``).  The script prints a summary (mean validation accuracy · AUC per branch) and asserts
nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peers_tables import raw_table

BRANCHES = ("counts2", "counts4", "gradients", "auto")
#: Further branches that can be forced (not in the rule): the count-based start then 2 (or 1) gradient cycles.
EXTRA_BRANCHES = ("hybrid", "hybrid1")
SCHEMA_DATASETS = ("adult", "compas", "german", "breast-cancer", "mushroom")
NUMERIC_DATASETS = ("wine", "digits")


def _forced(branch):
    """A rule that always picks ``branch`` (None: the rule itself)."""
    from dpglass.models.gam import sizes

    if branch == "auto":
        return None
    if branch == "gradients":
        return lambda s, t, *a, **k: dict(sizes.LARGE)
    if branch.startswith("hybrid"):  # the count-based start, then gradient cycles (hybrid1: one cycle)
        cycles = int(branch[6:] or 2)
        return lambda s, t, *a, **k: {**sizes.LARGE, "first_cycle": "counts", "n_cycles": cycles}
    bins = 2 if branch == "counts2" else 4
    return lambda s, t, *a, **k: {"first_cycle": "counts", "n_cycles": 0, "max_bins": bins}


@contextlib.contextmanager
def forcing(branch):
    from dpglass.models.gam import sizes

    rules, new = (sizes.rule, sizes.rule_v2), _forced(branch)
    if new is not None:  # every version of the rule picks the forced branch
        sizes.rule = sizes.rule_v2 = new
    try:
        yield
    finally:
        sizes.rule, sizes.rule_v2 = rules


def outer_train(name: str, r: int, zero_one: bool = False):
    """``(X, y, how)``: the outer training part of repetition r, in the recommended route's view (``zero_one``:
    the built-in 0/1 columns)."""
    from sklearn.model_selection import train_test_split

    from dpglass.datasets import load_dataset

    if name in NUMERIC_DATASETS:
        from dpglass_experiments.multiclass.data import load

        ds = load(name, 4)
        tr, _ = train_test_split(np.arange(len(ds.y)), test_size=0.3, stratify=ds.y, random_state=r)
        return ds.X[tr], ds.y[tr], ("numeric", list(ds.ranges))
    if name in SCHEMA_DATASETS and not zero_one:
        frame, y, schema = raw_table(name, "train") if name == "adult" else raw_table(name)
        if name == "adult":
            return frame, y, ("schema", schema)
        tr, _ = train_test_split(np.arange(len(y)), test_size=0.3, stratify=y, random_state=r)
        return frame.iloc[tr].reset_index(drop=True), y[tr], ("schema", schema)
    X01, y = load_dataset(name, split="train") if name == "adult" else load_dataset(name)
    y = np.asarray(y)
    if name == "adult":
        return X01, y, ("0/1", None)
    tr, _ = train_test_split(np.arange(len(y)), test_size=0.3, stratify=y, random_state=r)
    return X01.iloc[tr].reset_index(drop=True), y[tr], ("0/1", None)


def _take(X, idx):
    return X.iloc[idx].reset_index(drop=True) if hasattr(X, "iloc") else X[idx]


def _make(how, eps, r, delta):
    from dpglass.models import DPGAMClassifier, DPPipeline

    kind, extra = how
    if kind == "schema":
        return DPPipeline(schema=extra, model=DPGAMClassifier(delta=delta), epsilon=eps, delta=delta, random_state=r)
    bounds = {"bounds": extra} if kind == "numeric" else {}
    return DPGAMClassifier(epsilon=eps, delta=delta, random_state=r, **bounds)


def signals(model) -> dict:
    """The public inputs of the rule, from a fitted dp-gam (or a pipeline's): d, K, B, numeric share, n_hat, s, t."""
    gam = getattr(model, "model_", model)
    params = gam.get_params()
    d, K = gam.n_features_in_, len(gam.classes_)
    bounds = params.get("bounds") or [None] * d
    cats = params.get("categories") or [None] * d
    miss = params.get("missing") or [False] * d
    nb = [(m if m is not None else 2 if b is None else 16) + int(f) for b, m, f in zip(bounds, cats, miss)]
    B = sum(nb)
    numeric = sum(n for n, b, m in zip(nb, bounds, cats) if b is not None and m is None)
    n_hat = sum(max(int(c), 0) for c in gam.class_counts_)
    eps = float(params["epsilon"]) if "epsilon" in params else float(model.epsilon)
    return {"d": d, "K": K, "B": B, "numeric_bins": numeric, "n_hat": n_hat,
            "s": n_hat * eps / (d * K), "t": n_hat * eps / (B * K),
            "chosen": _branch(gam, bounds, cats)}


def _branch(gam, bounds, cats) -> str:
    """The branch a fitted dp-gam took: ``gradients``, or ``counts`` and its numeric columns' bins."""
    if gam.visit_sums_:
        return "gradients"
    nums = [len(e) + 1 for e, b, m in zip(gam.edges_, bounds, cats) if b is not None and m is None]
    return f"counts{nums[0] if nums else ''}"


def _auc(model, X, y) -> float:
    from sklearn.metrics import roc_auc_score

    proba = model.predict_proba(X)
    if proba.shape[1] == 2:
        return float(roc_auc_score(y, proba[:, 1]))
    return float(roc_auc_score(y, proba, multi_class="ovr", labels=list(model.classes_)))


def run(datasets, epsilons, reps, delta, branches=BRANCHES, zero_one=False) -> list:
    from sklearn.model_selection import train_test_split

    rows = []
    for name in datasets:
        start = time.perf_counter()
        for r in range(reps):
            X, y, how = outer_train(name, r, zero_one)
            tr, va = train_test_split(np.arange(len(y)), test_size=0.3, stratify=y, random_state=100 + r)
            Xtr, Xva, ytr, yva = _take(X, tr), _take(X, va), y[tr], y[va]
            for eps in epsilons:
                for branch in branches:
                    with forcing(branch):
                        model = _make(how, eps, r, delta).fit(Xtr, ytr)
                    rows.append({"dataset": name, "route": how[0], "rep": r, "epsilon": eps, "branch": branch,
                                 "accuracy": float(model.score(Xva, yva)), "auc": _auc(model, Xva, yva),
                                 **signals(model)})
        print(f"  {name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return rows


def summary(rows) -> str:
    """Mean validation accuracy · AUC per (dataset, ε) and branch (those in ``rows``), with the mean signals t and s
    and the best forced branch by each metric."""
    names = [b for b in (*BRANCHES, *EXTRA_BRANCHES) if any(r["branch"] == b for r in rows)]
    lines = ["| dataset | route | ε | t (mean) | s (mean) | d | B | " + " | ".join(names) + " | best acc | best AUC |",
             "|" + "---|" * (len(names) + 9)]
    for name, route, eps in dict.fromkeys((r["dataset"], r["route"], r["epsilon"]) for r in rows):
        mine = [r for r in rows if (r["dataset"], r["route"], r["epsilon"]) == (name, route, eps)]
        cells, acc, auc = [], {}, {}
        for b in names:
            got = [r for r in mine if r["branch"] == b]
            if got:
                acc[b], auc[b] = np.mean([r["accuracy"] for r in got]), np.mean([r["auc"] for r in got])
            cells.append(f"{acc[b]:.3f} · {auc[b]:.3f}" if got else "–")
        t, s = np.mean([r["t"] for r in mine]), np.mean([r["s"] for r in mine])
        forced = [b for b in acc if b != "auto"] or list(acc)
        lines.append(f"| {name} | {route} | {eps:g} | {t:.1f} | {s:.1f} | {mine[0]['d']} | {mine[0]['B']} | "
                     + " | ".join(cells) + f" | {max(forced, key=acc.get)} | {max(forced, key=auc.get)} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["adult", "compas", "german", "breast-cancer", "mushroom",
                                                           "wine", "digits"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 0.4, 1.0, 5.0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--adult-reps", type=int, default=3)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--branches", nargs="+", default=list(BRANCHES))
    parser.add_argument("--zero-one", action="store_true", help="the built-in 0/1 columns on every dataset")
    parser.add_argument("--out", default=None, help="also write every row (JSON)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from dpglass.exceptions import UndeclaredClassesWarning

    rows = []
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", UndeclaredClassesWarning)
        for name in args.datasets:
            reps = args.adult_reps if name == "adult" else args.reps
            rows += run([name], args.epsilons, reps, args.delta, args.branches, args.zero_one)
            if args.out:
                Path(args.out).write_text(json.dumps(rows))
    print(summary(rows))
    return rows


if __name__ == "__main__":
    main()
