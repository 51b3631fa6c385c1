"""Paper 002's experiments that are not plain sweeps, and its tables beside the paper's numbers.

* :func:`choose`: the non-private tuning the paper did (best grid point per
  dataset and epsilon, per fold for cross-validated data) and
  :func:`winners_curse` (how much a tuned score overstates a fresh one);
* :func:`run_fig1` (Figure 1: the advantage of each round's weak learner,
  :func:`dpglass_experiments.advantage.advantage_trace`), :func:`table4` (one model);
* :func:`features_table`, :func:`hyper_table` (Tables 3, 5-10 beside the
  paper's), :func:`features_plot_frame`, :func:`fig23_plot_frame` (what the
  figures draw).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from dpglass_experiments.boosting.plan import (
    FIG1,
    FIG1_EPSILON,
    HEADLINE,
    PAPER_COLUMNS,
    PAPER_DATASETS,
    PAPER_FEATURES,
    PAPER_NAME,
    PAPER_SETTINGS,
    PRIVATE_SUFFIX,
    Plan,
    paper_stump_params,
)
from dpglass_experiments.cells import cell_estimator
from dpglass_experiments.report import at_epsilon
from dpglass_experiments.seeding import cell_key, cell_seed, dataset_split
from dpglass_experiments.specs import MethodSpec, SweepConfig

__all__ = ["choose", "features_plot_frame", "features_table", "fig23_plot_frame", "hyper_table", "run_fig1", "table4",
           "winners_curse"]


# -------------------------------------------------- non-private tuning
def choose(frame: pd.DataFrame, candidates: dict, datasets, value="validation_accuracy") -> tuple[dict, pd.DataFrame]:
    """Best candidate per (dataset, epsilon), per fold for cross-validated datasets.

    ``candidates`` maps method name -> parameters, in grid order (ties go to
    the first).  A canonical-split dataset pools its validation seeds (every
    one inside the training part); a K-fold one chooses per fold, inside that
    fold's training part, so no test fold is ever used.  Returns the
    ``cell_params`` and a table of the choices.
    """
    order = {m: i for i, m in enumerate(candidates)}
    part = frame[frame["method"].isin(order)].copy()
    part["order"] = part["method"].map(order)
    cell_params, rows = {}, []
    for spec in datasets:
        d = part[part["dataset"] == spec.name]
        pooled = spec.split != "random" and spec.n_folds is None
        keys = ["epsilon"] if pooled else ["epsilon", "seed"]
        scores = d.groupby([*keys, "order"], sort=True)[value].mean().reset_index()
        for key_vals, g in scores.groupby(keys, sort=True):
            key_vals = key_vals if isinstance(key_vals, tuple) else (key_vals,)
            best = g.loc[g[value].idxmax()]  # first maximum in grid order
            method = next(m for m, i in order.items() if i == int(best["order"]))
            eps = float(key_vals[0])
            seed = None if pooled else int(key_vals[1])
            cell_params[cell_key(spec.name, eps, seed)] = dict(candidates[method])
            rows.append({"dataset": spec.name, "epsilon": eps, "seed": "all" if pooled else seed,
                         "chosen": method, **candidates[method], "validation_accuracy": float(best[value])})
    return cell_params, pd.DataFrame(rows)


def winners_curse(sel: pd.DataFrame, names) -> pd.DataFrame:
    """Optimism of a tuned score: pick the best setting on one validation split, re-score it on another.

    For each epsilon and each ordered pair of validation seeds (a, b): the
    grid point with the best accuracy on split a, its accuracy on a (what a
    tuning run reports) minus its accuracy on b (an independent estimate).
    Both splits lie inside Adult's training part.
    """
    part = sel[sel["method"].isin(list(names))]
    seeds = sorted(part["seed"].unique())
    rows = []
    for eps, g in part.groupby("epsilon", sort=True):
        table = g.pivot_table(index="method", columns="seed", values="validation_accuracy")
        table = table.reindex([n for n in names if n in table.index])
        for a in seeds:
            for b in seeds:
                if a == b:
                    continue
                best = table[a].idxmax()
                rows.append({"epsilon": float(eps), "select_on": a, "score_on": b, "chosen": best,
                             "tuned_score": float(table.loc[best, a]), "fresh_score": float(table.loc[best, b]),
                             "optimism": float(table.loc[best, a] - table.loc[best, b])})
    return pd.DataFrame(rows)



# -------------------------------------------------------------- Figure 1
def _fig1_settings(plan: Plan) -> dict:
    f = FIG1
    k, lam, tau = PAPER_SETTINGS["Adult"][1.0]
    return {
        f"Theorem 5: κ=1/2, λ=γ/4=1/80, τ={plan.fig1_rounds}": dict(density=f["density"],
                                                                  learning_rate=f["gamma"] / 4,
                                                                  n_rounds=plan.fig1_rounds),
        f"Table 8 at ε=1: κ={k:g}, λ={lam:g}, τ={tau}": dict(density=k, learning_rate=lam, n_rounds=tau),
    }


def _fig1_run(label, params, run, base_seed, data_home):
    from threadpoolctl import threadpool_limits

    from dpglass_experiments.advantage import advantage_trace
    from dpglass.models import SmoothBoostClassifier

    spec = PAPER_DATASETS["Adult"]
    X, y, names = spec.load(data_home)
    n_tr = spec.n_train(data_home)
    with threadpool_limits(1):
        model = SmoothBoostClassifier(epsilon=FIG1_EPSILON, random_state=cell_seed(
            base_seed, spec.name, run, f"fig1 {label}", FIG1_EPSILON), **params)
        model.fit(X[:n_tr], y[:n_tr])
        adv, best, m_tr, m_te = advantage_trace(model, X[:n_tr], y[:n_tr], X[n_tr:], y[n_tr:])
        acc = float(np.mean(model.predict(X[n_tr:]) == y[n_tr:]))
    return label, run, adv, best, m_tr, m_te, acc


def run_fig1(plan: Plan, *, base_seed=0, n_jobs=2, data_home=None):
    """Figure 1: advantage per round (mean and se over runs) and margin histograms at epsilon = 1."""
    from joblib import Parallel, delayed

    settings = _fig1_settings(plan)
    jobs = (delayed(_fig1_run)(label, p, r, base_seed, data_home) for label, p in settings.items()
            for r in range(plan.fig1_runs))
    results = Parallel(n_jobs=n_jobs)(jobs)
    curves, hists, summary = [], [], []
    bins = np.linspace(-1, 1, 41)
    gamma = FIG1["gamma"]
    for label in settings:
        res = [r for r in results if r[0] == label]
        adv = np.vstack([r[2] for r in res])
        best = np.vstack([r[3] for r in res])
        k = adv.shape[0]
        se = adv.std(axis=0, ddof=1) / math.sqrt(k) if k > 1 else np.full(adv.shape[1], math.nan)
        curves.append(pd.DataFrame({"setting": label, "round": np.arange(1, adv.shape[1] + 1),
                                    "advantage": adv.mean(axis=0), "advantage_se": se,
                                    "best_1rule_advantage": best.mean(axis=0), "runs": k}))
        for part, idx in (("train", 4), ("test", 5)):
            m = np.concatenate([r[idx] for r in res])
            counts, _ = np.histogram(m, bins=bins)
            hists.append(pd.DataFrame({"setting": label, "part": part, "bin_left": bins[:-1], "bin_right": bins[1:],
                                       "fraction": counts / len(m)}))
        smooth = pd.Series(adv.mean(axis=0)).rolling(10, min_periods=1).mean().to_numpy()
        below_gamma = np.flatnonzero(smooth < gamma)
        below_zero = np.flatnonzero(smooth <= 0)
        summary.append({
            "setting": label, "runs": k, "rounds": adv.shape[1],
            "mean_advantage_first_10": float(adv[:, :10].mean()),
            "mean_advantage_last_10": float(adv[:, -10:].mean()),
            "first_round_below_gamma": int(below_gamma[0] + 1) if below_gamma.size else None,
            "first_round_at_or_below_0": int(below_zero[0] + 1) if below_zero.size else None,
            "mean_best_1rule_advantage_last_10": float(best[:, -10:].mean()),
            "train_margin_mean": float(np.mean(np.concatenate([r[4] for r in res]))),
            "train_margin_negative": float(np.mean(np.concatenate([r[4] for r in res]) < 0)),
            "test_accuracy": float(np.mean([r[6] for r in res])),
        })
    return pd.concat(curves, ignore_index=True), pd.concat(hists, ignore_index=True), pd.DataFrame(summary)


# ----------------------------------------------------- Cod-RNA, finer cuts
#: A finer, fixed encoding of Cod-RNA (9 cuts per feature, 72 columns), to measure how much of the gap to


# ------------------------------------------------------------------ tables
def features_table(main: pd.DataFrame, datasets, data_home=None) -> pd.DataFrame:
    """Tables 3, 5-7: features used by LazyBB-stumps (paper settings and private tuning) per epsilon."""
    rows = []
    for spec in datasets:
        paper = PAPER_NAME[spec.name]
        d = len(spec.load(data_home)[2])
        for method in ("LazyBB-stumps", "LazyBB-stumps" + PRIVATE_SUFFIX):
            part = main[(main["dataset"] == spec.name) & (main["method"] == method)]
            for eps, g in part.groupby("epsilon", sort=True):
                v = g["n_features_used"].dropna().to_numpy()
                pap = PAPER_FEATURES[paper].get(float(eps), (math.nan, math.nan, math.nan))
                rows.append({"dataset": paper, "method": method, "epsilon": float(eps), "runs": len(v),
                             "features_mean": v.mean() if len(v) else math.nan,
                             "features_std": v.std() if len(v) else math.nan,  # ddof=0, as the paper's
                             "pct_features": 100 * v.mean() / d if len(v) else math.nan, "n_columns": d,
                             "paper_mean": pap[0], "paper_std": pap[1], "paper_pct": pap[2],
                             "paper_n_columns": PAPER_COLUMNS[paper]})
    return pd.DataFrame(rows)


def features_plot_frame(features: pd.DataFrame) -> pd.DataFrame:
    ours = features.rename(columns={"pct_features": "mean"})[["dataset", "method", "epsilon", "mean"]].copy()
    ours["se"] = features["features_std"] / np.sqrt(features["runs"].clip(lower=1)) * 100 / features["n_columns"]
    paper = features[features["method"] == "LazyBB-stumps"][["dataset", "epsilon", "paper_pct"]]
    paper = paper.rename(columns={"paper_pct": "mean"}).assign(method="paper (its encoding)", se=0.0)
    return pd.concat([ours, paper], ignore_index=True)[["dataset", "method", "epsilon", "mean", "se"]]


def hyper_table(main: pd.DataFrame) -> pd.DataFrame:
    """Tables 8-10: the paper's chosen settings beside PrivateGridSearch's choices (median and most frequent)."""
    rows = []
    part = main[main["method"] == "LazyBB-stumps" + PRIVATE_SUFFIX]
    for paper, spec in PAPER_DATASETS.items():
        for eps, (k, lam, tau) in PAPER_SETTINGS[paper].items():
            g = at_epsilon(part[part["dataset"] == spec.name], eps)
            chosen = [json.loads(s) for s in g["best_params"] if isinstance(s, str) and s.startswith("{")]
            rec = {"dataset": paper, "epsilon": eps, "paper_density": k, "paper_learning_rate": lam,
                   "paper_n_rounds": tau, "private_choices": len(chosen)}
            for key in ("density", "learning_rate", "n_rounds"):
                vals = [c[key] for c in chosen]
                rec[f"private_{key}_median"] = float(np.median(vals)) if vals else math.nan
                rec[f"private_{key}_values"] = " ".join(f"{v:g}" for v in vals)
            rows.append(rec)
    return pd.DataFrame(rows)


def table4(datasets, base_seed, data_home) -> str:
    """Table 4: the LazyBB-stumps model of Adult at epsilon = 0.4 (paper settings, first repetition)."""
    spec = datasets[0]
    eps = HEADLINE.epsilon
    method = MethodSpec("LazyBB-stumps", "smooth-boost-stumps", {}, cell_params=paper_stump_params("Adult"))
    cfg = SweepConfig((spec,), (method,), (eps,), 1, base_seed=base_seed)
    X, y, names = spec.load(data_home)
    tr, te = dataset_split(cfg, spec, 0, data_home)
    model = cell_estimator(spec, method, eps, cell_seed(base_seed, spec.name, 0, method.name, eps), 0)
    frame = pd.DataFrame(X, columns=names)
    model.fit(frame.iloc[tr], y[tr])
    accuracy = float(model.score(frame.iloc[te], y[te]))
    return model.to_text() + f"\n(test accuracy {accuracy:.4f}; the paper's Table 4 model: {HEADLINE.value:.2f})"


def fig23_plot_frame(f23_acc: pd.DataFrame, adult_acc: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for fig in ("Fig. 2", "Fig. 3"):
        part = f23_acc[f23_acc["method"].str.startswith(fig)].copy()
        part["dataset"] = "Figure 2" if fig == "Fig. 2" else "Figure 3"
        part["method"] = part["method"].str.replace(fig + " ", "LazyBB-stumps ", regex=False)
        rows.append(part)
        refs = adult_acc[adult_acc["method"].isin(["1-Rule", "GBC"])].copy()
        refs["dataset"] = "Figure 2" if fig == "Fig. 2" else "Figure 3"
        rows.append(refs)
    paper = adult_acc[adult_acc["method"] == "LazyBB-stumps"].copy()
    paper["dataset"], paper["method"] = "Figure 3", "LazyBB-stumps δ=0, paper's Table 8"
    rows.append(paper)
    return pd.concat(rows, ignore_index=True)

