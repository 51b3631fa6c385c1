"""``dpglass reproduce multiclass``: every dpglass model that learns K classes (issue 31) beside references.

scikit-learn's bundled wine (3 classes) and digits (10), and a synthetic K = 5
``make_classification`` of 10^5 records (:mod:`~dpglass_experiments.multiclass.data`:
0/1 features from public cut points of documented ranges, never from the
data), at epsilon in {0.1, 0.4, 1, 4}, on 10 stratified 70/30 splits per
dataset.  The models are read from the registry when the run starts: every
registered model whose class learns more than two classes
(``spec.cls._max_classes > 2``), so families that become multiclass later are
included by the next run; each is built by its registered name with its
defaults, its ``epsilon``, the public label set (``classes``) and its cell's
seed.  Beside them: non-private references (:data:`~dpglass_experiments.multiclass.plan.REFERENCES`)
and, as a floor, a private naive Bayes built here from dpglass's discrete
Gaussian (:mod:`~dpglass_experiments.multiclass.naive_bayes`; not a library
model).  diffprivlib's multiclass models are not rerun: the peers
environment of ``benchmarks/peers.py`` is not installed here (the report
quotes the issue's numbers instead).

Every split and every model's noise is addressed by its cell
(:func:`~dpglass_experiments.seeding.cell_seed`: dataset, split, method,
epsilon).  Writes ``results.csv`` (one row per fit), ``summary.csv``,
``accuracy.png`` and ``report.md`` into ``out``; each (dataset, split)'s rows go
to ``raw/fits.csv`` as they finish, and a rerun without ``fresh`` resumes from
them.  A fit that raises is a row with its error (the report lists them).
"""

from __future__ import annotations

import csv
import inspect
import math
import os
import time
import warnings

import numpy as np

from dpglass_experiments.multiclass.plan import (
    BINS,
    FULL,
    NB_LABEL,
    NUMERIC_VIEW,
    NUMERIC_VIEW_PARAMS,
    PUBLIC_FRACTION,
    QUICK,
    REFERENCES,
)
from dpglass_experiments.reproduction import Reproduction

__all__ = ["REPRODUCTION", "multiclass_models", "reproduce"]

FIELDS = ["dataset", "split", "method", "epsilon", "accuracy", "fit_seconds", "epsilon_spent", "delta_spent",
          "guarantee", "error"]


def multiclass_models() -> list:
    """The registry's models that learn K classes, read now (a family that lands later joins the next run)."""
    from dpglass.registry import list_estimators

    return [s for s in list_estimators() if s.cls._max_classes > 2]


def _seed(base_seed, dname, split, method=None, eps=None):
    from dpglass_experiments.seeding import cell_seed

    return cell_seed(base_seed, dname, split, method, eps)


def _split(data, base_seed, split):
    """``(train, test, public)`` row indices: a stratified 70/30 split, and the public part of the training rows."""
    from sklearn.model_selection import train_test_split

    seq = _seed(base_seed, data.name, split)
    rows = np.arange(len(data.y))
    train, test = train_test_split(rows, test_size=0.3, stratify=data.y, random_state=int(seq.generate_state(1)[0]))
    perm = np.random.default_rng(seq.spawn(1)[0]).permutation(len(train))
    public = np.sort(train[perm[: math.ceil(PUBLIC_FRACTION * len(train))]])
    return np.sort(train), np.sort(test), public


def _registry_fit(spec, views, parts, eps, seed_seq, small):
    """Fit a registered model as a user would, on the 0/1 view (or, for :data:`NUMERIC_VIEW`'s models, the numeric
    features with their public ranges as bounds); ``(accuracy, seconds, ledger or None)``."""
    B, y, classes = views["binary"], views["y"], views["classes"]
    train, test, public = parts
    params = {k: v for k, v in (spec.test_params.items() if small else ()) if k != "epsilon"}
    if spec.name in NUMERIC_VIEW:
        B, params["bounds"] = views["raw"], [tuple(r) for r in views["ranges"]]
        params = {**NUMERIC_VIEW_PARAMS.get(spec.name, {}), **params}
    accepted = spec.cls().get_params()
    if "classes" in accepted:
        params["classes"] = classes  # the public label set
    if spec.private:
        params["epsilon"] = float(eps)
    if "random_state" in accepted:
        params["random_state"] = seed_seq
    model = spec.make(**params)
    extra = {}
    if "X_public" in inspect.signature(spec.cls.fit).parameters:
        extra["X_public"] = B[public]
        train = np.setdiff1d(train, public)
    start = time.perf_counter()
    model.fit(B[train], y[train], **extra)
    seconds = time.perf_counter() - start
    return float(np.mean(model.predict(B[test]) == y[test])), seconds, getattr(model, "privacy_ledger_", None)


def _reference_fit(maker, view, views, parts, seed_seq, n_bins):
    """A non-private reference (or the naive Bayes floor with its epsilon); ``(accuracy, seconds, None)``."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    from dpglass_experiments.multiclass.naive_bayes import fit_predict

    X, y = views[view], views["y"]
    train, test, _ = parts
    seed = int(seed_seq.generate_state(1)[0])
    start = time.perf_counter()
    if maker == "majority":
        pred = np.full(len(test), np.bincount(y[train]).argmax())
    elif maker in ("naive-bayes", "private-naive-bayes"):
        eps = views["epsilon"] if maker == "private-naive-bayes" else None
        pred = fit_predict(X[train], y[train], X[test], n_bins, len(views["classes"]), eps,
                           np.random.default_rng(seed_seq))
    else:
        model = {"logistic": lambda: LogisticRegression(max_iter=2000),
                 "tree": lambda: DecisionTreeClassifier(max_depth=4, random_state=seed),
                 "hgb": lambda: HistGradientBoostingClassifier(random_state=seed),
                 "additive": lambda: HistGradientBoostingClassifier(max_depth=1, random_state=seed)}[maker]()
        pred = model.fit(X[train], y[train]).predict(X[test])
    return float(np.mean(pred == y[test])), time.perf_counter() - start, None


def _cells(plan):
    """Every (method label, epsilon or None, how to fit) of one split, in report order."""
    out = []
    for spec in multiclass_models():
        for eps in (plan.epsilons if spec.private else (None,)):
            out.append((spec.name, eps, ("registry", spec)))
    for eps in plan.epsilons:
        out.append((NB_LABEL, eps, ("reference", "private-naive-bayes", "bins")))
    for label, view, maker in REFERENCES:
        out.append((label, None, ("reference", maker, view)))
    return out


def _eps_key(eps) -> str:
    return "none" if eps is None or (isinstance(eps, float) and math.isnan(eps)) else repr(float(eps))


def _unit(data, split, plan, base_seed, done):
    """Every missing cell of one (dataset, split): its rows."""
    from threadpoolctl import threadpool_limits

    parts = _split(data, base_seed, split)
    views = {"binary": data.binary(), "numeric": data.scaled(), "bins": data.bins(), "y": data.y,
             "classes": data.classes, "raw": data.X, "ranges": data.ranges}
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, eps, how in _cells(plan):
            key = (data.name, split, label, _eps_key(eps))
            if key in done:
                rows.append(done[key])
                continue
            seq = _seed(base_seed, data.name, split, label, eps)
            row = dict(dataset=data.name, split=split, method=label, epsilon=math.nan if eps is None else eps,
                       accuracy=math.nan, fit_seconds=math.nan, epsilon_spent=math.nan, delta_spent=math.nan,
                       guarantee="none", error="")
            try:
                if how[0] == "registry":
                    acc, secs, ledger = _registry_fit(how[1], views, parts, eps, seq, plan.small)
                else:
                    acc, secs, ledger = _reference_fit(how[1], how[2], {**views, "epsilon": eps}, parts, seq,
                                                       BINS[data.name])
                row.update(accuracy=acc, fit_seconds=round(secs, 3))
                if ledger is not None:
                    row["epsilon_spent"], row["delta_spent"] = ledger.total()
                    row["guarantee"] = ledger.guarantee
                elif how[1] == "private-naive-bayes":
                    from dpglass_experiments.multiclass.naive_bayes import DELTA

                    row.update(epsilon_spent=eps, delta_spent=DELTA, guarantee="proven (reference)")
            except Exception as exc:  # noqa: BLE001 - a family still being written: recorded, the run goes on
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            rows.append(row)
    return data.name, split, rows


def _done(path, fresh) -> dict:
    if fresh or not os.path.exists(path):
        return {}
    with open(path, newline="") as fh:
        return {(r["dataset"], int(r["split"]), r["method"], _eps_key(float(r["epsilon"]))): r
                for r in csv.DictReader(fh)}


def _experiments(run) -> dict:
    """Every fit of the plan: ``{"rows": per-fit rows, "elapsed": seconds, "models": registry names}``."""
    from joblib import Parallel, delayed

    from dpglass_experiments.multiclass.data import load

    plan = run.plan
    raw = os.path.join(run.raw, "fits.csv")
    done = _done(raw, run.fresh)
    started = time.perf_counter()
    rows = []
    with open(raw, "a" if done else "w", newline="") as fh:  # resumed: earlier rows stay, new ones are added
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if not done:
            w.writeheader()
        for dname in plan.datasets:
            with run.timed(dname) as extra:
                data = load(dname, BINS[dname], plan.synthetic_records if dname == "synthetic" else None)
                units = Parallel(n_jobs=run.n_jobs, return_as="generator")(
                    delayed(_unit)(data, s, plan, run.base_seed, done) for s in range(plan.n_splits))
                for name, split, new in units:
                    w.writerows([r for r in new if (name, split, r["method"], _eps_key(float(r["epsilon"])))
                                 not in done])
                    fh.flush()
                    rows += new
                    if run.progress:
                        run.log(f"{name} split {split}: done ({time.perf_counter() - started:.0f}s)")
                extra["fits"] = sum(1 for r in rows if r["dataset"] == dname)
    with open(os.path.join(run.out, "results.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    return {"rows": rows, "elapsed": time.perf_counter() - started, "models": [s.name for s in multiclass_models()]}


def _report(run, results) -> None:
    from dpglass_experiments.multiclass.report import write_report

    write_report(run.out, results["rows"], run.plan, results["elapsed"], results["models"])


REPRODUCTION = Reproduction(full=FULL, quick=QUICK, experiments=_experiments, report=_report)
reproduce = REPRODUCTION.reproduce
