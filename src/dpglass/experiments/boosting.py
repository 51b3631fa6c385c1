"""Reproduce the experiments of paper 002 (Section 5, Appendices A-C): ``dpglass reproduce boosting``.

Paper 002: Asadi, Carmosino, Jahanara, Rafiey, Salamatian, *Private Boosted
Decision Trees via Smooth Re-Weighting* -- smooth boosting (LazyBB) of DP
1-Rules and DP TopDown trees.  :func:`reproduce` runs the sweeps and writes into one folder, each
figure as PNG and SVG with the numbers behind it as CSV:

* ``table2_accuracy``: accuracy vs epsilon (Table 2's learning curves) of
  LazyBB-stumps, LazyBB-trees and DP-LR, each with the paper's non-private
  tuning and with our private tuning (PrivateGridSearch, its budget inside
  epsilon), and the two non-private references (a single 1-Rule, sklearn's
  GradientBoostingClassifier), one panel per dataset;
* ``table3_5_7_features``: features used by LazyBB-stumps vs epsilon (Tables 3,
  5-7) and ``table3_5_7_features.csv``;
* ``table8_10_hyperparameters.csv``: the paper's chosen (kappa, lambda, tau)
  beside the ones PrivateGridSearch chose (Tables 8-10), and
  ``tuned_trees_lr.csv`` for the settings our non-private tuning chose for the
  trees and DP-LR (the paper does not report them);
* ``fig1_advantage``: advantage of each round's 1-Rule and the margin
  histogram at epsilon = 1 on Adult (Figure 1);
* ``fig2_3_pure_vs_approx``: pure vs approximate DP (delta = 1e-5) on Adult,
  fixed hyper-parameters (Figure 2) and per-epsilon ones (Figure 3);
* ``fig3_selected.csv``, ``fig3_winners_curse.csv``: Figure 3's per-epsilon
  choices, and how much a tuned score overstates a fresh one (the paper's
  settings and accuracies come from the same CV);
* ``codrna_fine_encoding.csv``: Cod-RNA with a finer (72-column) encoding,
  measured to explain the gap to the paper's Cod-RNA numbers;
* ``report.md``: every number beside the paper's, with the differences
  explained; ``timings.json``.

The per-fit tables go to ``raw_dir`` (resumable sweeps: an interrupted run
restarted with the same arguments continues where it stopped).

**Dataset mapping** (one place: :data:`PAPER_DATASETS`).  Adult is ``adult``
(UCI's canonical train/test split; holdout accuracy on the test part); Cod-RNA
is ``cod-rna`` and Mushroom ``mushroom`` (stratified 5-fold cross-validation).
dpglass's encodings have 117, 24 and 126 columns where the paper's had 162, 80
and 117.

**Nothing is tuned on a test split or fold.**  LazyBB-stumps uses the settings
the paper chose (Tables 8-10; chosen by the paper on its own data, they are
constants here); LazyBB-trees and DP-LR, whose chosen settings the paper does
not report, are tuned the paper's way (non-private grid search) on a
validation part carved out of each training part only; the private variants
tune inside the training part with PrivateGridSearch, whose budget is counted
inside epsilon.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from dpglass.experiments.cells import cell_estimator as _make_estimator
from dpglass.experiments.seeding import cell_key, cell_seed, dataset_split, split_indices
from dpglass.experiments.specs import DatasetSpec, MethodSpec, SweepConfig
from dpglass.experiments.sweep import summarise, timed_sweep
from dpglass.models._base import BinaryClassifierBase

__all__ = [
    "PAPER_DATASETS",
    "PAPER",
    "EPSILONS",
    "Plan",
    "FULL",
    "QUICK",
    "OneRuleClassifier",
    "schema_norm_bound",
    "advantage_trace",
    "reproduce",
]

# ----------------------------------------------------------------- mapping
#: Paper dataset -> the dpglass dataset that stands for it (and how it is split).
PAPER_DATASETS = {
    "Adult": DatasetSpec("adult", split="canonical"),
    "Cod-RNA": DatasetSpec("cod-rna", split="kfold:5"),
    "Mushroom": DatasetSpec("mushroom", split="kfold:5"),
}
PAPER_NAME = {spec.name: paper for paper, spec in PAPER_DATASETS.items()}
PANELS = {spec.name: f"{paper} ({spec.name})" for paper, spec in PAPER_DATASETS.items()}

#: Shape of each dataset in the paper (Section 5): records and columns after its one-hot coding.
PAPER_SHAPE = {"Adult": (32561 + 16282, 162), "Cod-RNA": (59535, 80), "Mushroom": (8124, 117)}

MAPPING_NOTES = {
    "Adult": "UCI adult.data / adult.test, the paper's canonical split (32561 / 16281 records; the paper says "
             "16,282 test examples, i.e. it counts the file's first line). 117 columns: 8 categoricals one-hot, "
             "5 numerics cut at fixed round numbers (docs/datasets.md); the paper's encoding has 162",
    "Cod-RNA": "LIBSVM cod-rna training file (59535 records), 5-fold CV. dpglass cuts each of the 8 real features "
               "at 3 fixed values: 24 columns, where the paper's one-hot coding has 80 (we also measure a 72-column "
               "encoding, below)",
    "Mushroom": "UCI agaricus-lepiota (8124 records), 5-fold CV. Every documented value one-hot: 126 columns "
                "(10 constant); the paper's has 117",
}

#: The paper's epsilon grid (Section 5 and the issue): 0.05, 0.1, ..., 0.5, 1, 3, 5.
EPSILONS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 1.0, 3.0, 5.0)

# ----------------------------------------------------------- paper numbers
_T8 = [(0.50, 0.50, 5), (0.45, 0.50, 5), (0.50, 0.40, 5), (0.50, 0.30, 5), (0.35, 0.50, 9), (0.40, 0.40, 19),
       (0.30, 0.45, 9), (0.35, 0.50, 9), (0.40, 0.45, 25), (0.35, 0.50, 15), (0.35, 0.45, 39), (0.35, 0.45, 99),
       (0.35, 0.45, 75)]
_T9 = [(0.50, 0.50, 9), (0.50, 0.35, 19), (0.50, 0.50, 29), (0.40, 0.50, 25), (0.50, 0.45, 25), (0.50, 0.45, 25),
       (0.45, 0.35, 49), (0.45, 0.45, 39), (0.50, 0.40, 65), (0.45, 0.50, 49), (0.40, 0.50, 99), (0.30, 0.40, 99),
       (0.35, 0.40, 99)]
_T10 = [(0.45, 0.50, 5), (0.50, 0.40, 9), (0.50, 0.45, 9), (0.50, 0.40, 15), (0.30, 0.40, 9), (0.35, 0.50, 9),
        (0.40, 0.35, 15), (0.45, 0.40, 19), (0.35, 0.20, 19), (0.45, 0.25, 25), (0.25, 0.30, 29), (0.20, 0.20, 75),
        (0.20, 0.50, 29)]
_T5 = [(4.6, 0.489, 2.83), (4.8, 0.400, 2.96), (3.8, 0.400, 2.34), (3.6, 1.019, 2.22), (7.0, 0.632, 4.32),
       (13.8, 1.166, 8.51), (7.6, 0.489, 4.69), (6.4, 0.800, 3.95), (19.2, 2.785, 11.85), (12.8, 0.400, 7.90),
       (30.6, 1.200, 18.88), (72.8, 2.481, 44.93), (49.8, 2.785, 30.74)]
_T6 = [(6.0, 0.632, 7.50), (12.4, 1.744, 15.50), (19.6, 1.625, 24.50), (16.8, 1.327, 21.00), (11.2, 0.748, 14.00),
       (10.2, 0.748, 12.75), (26.4, 1.356, 33.00), (19.8, 2.482, 24.75), (34.4, 1.497, 43.00), (25.4, 2.653, 31.75),
       (54.2, 3.187, 67.75), (44.2, 2.227, 55.25), (32.0, 2.098, 40.00)]
_T7 = [(4.6, 0.490, 3.93), (7.2, 1.166, 6.15), (5.8, 0.748, 4.95), (8.6, 1.497, 7.35), (6.2, 0.748, 5.29),
       (5.6, 0.490, 4.78), (9.0, 0.894, 7.69), (9.8, 1.166, 8.37), (9.4, 1.356, 8.03), (11.8, 1.720, 10.08),
       (14.4, 1.625, 12.03), (28.8, 2.926, 24.61), (11.8, 0.748, 10.08)]

#: Paper 002's numbers (Section 5, Appendices A-C).  Table 2 and Figures 1-3 are plots without numbers.
PAPER = {
    # Tables 8-10: (density kappa, learning rate lambda, rounds tau) chosen by CV for boosted 1-Rules
    "hyper": {"Adult": dict(zip(EPSILONS, _T8)), "Cod-RNA": dict(zip(EPSILONS, _T9)),
              "Mushroom": dict(zip(EPSILONS, _T10))},
    # Tables 3 and 5-7: features used by LazyBB with DP-1R (mean, std over 5 runs, % of the paper's columns)
    "features": {"Adult": dict(zip(EPSILONS, _T5)), "Cod-RNA": dict(zip(EPSILONS, _T6)),
                 "Mushroom": dict(zip(EPSILONS, _T7))},
    # Table 1: the grid searched
    "table1": {
        "stump": {"n_rounds": [5, 9, 15, 19, 25, 29, 39, 49, 65, 75, 99],
                  "learning_rate": [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5],
                  "density": [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]},
        "tree": {"n_rounds": [5, 9, 15, 19, 25, 29, 35, 39, 45, 51], "learning_rate": [0.35, 0.4],
                 "density": [0.25, 0.3]},
    },
    # Table 4 / Section 5: a 0.4-DP LazyBB-1R model on Adult with 0.82 (test) accuracy
    "headline": {"dataset": "Adult", "epsilon": 0.4, "accuracy": 0.82},
    # Appendix C (Table 11, boosted 1-Rules at epsilon = 1): test accuracy (Adult) and CV accuracy
    "appC": {"Adult": 0.83, "Cod-RNA": 0.86, "Mushroom": 0.98},
    "appC_rademacher": {"Adult": 0.37, "Cod-RNA": 0.09, "Mushroom": 0.49},
    # Figure 1: kappa = 1/2, a 1/20-advantage weak learner, lambda = gamma/4, epsilon = 1, 10 runs;
    # "the weak learner assumption fails after only 250 rounds"
    "fig1": {"density": 0.5, "gamma": 1 / 20, "epsilon": 1.0, "runs": 10, "fails_after": 250},
    # Figure 2: kappa = 1/4, lambda = 1/4, tau = 99, delta in {0, 1e-5}
    "fig2": {"density": 0.25, "learning_rate": 0.25, "n_rounds": 99, "delta": 1e-5},
}

#: The paper's Table 1 writes the 1-Rule tau grid as "5,9,15,19,25,29, 39,49,65,75,99" (11 values).


# -------------------------------------------------------------- 1-Rule
class OneRuleClassifier(BinaryClassifierBase):
    """A single 1-Rule (Holte 1993) on 0/1 features: the paper's weak non-private reference.

    The literal, negated literal or constant with the fewest training errors
    (ties: the first in DP-1R's candidate order).  Not private.

    Attributes
    ----------
    stump_ : dpglass.models._weak_learners.Stump
    n_features_used_ : int
        1, or 0 for a constant.
    """

    def __init__(self):
        pass

    def fit(self, X, y):
        from dpglass.models._weak_learners import FeatureMatrix, _stump_of, literal_errors

        X01, y01 = self._check_fit_data(X, y)
        n, d = X01.shape
        errors = literal_errors(FeatureMatrix(X01), y01, np.full(n, 1.0 / n))
        self.stump_ = _stump_of(int(np.argmin(errors)), d)
        self.n_features_used_ = int(self.stump_.feature >= 0)
        return self

    def predict_proba(self, X):
        X01 = self._check_predict_data(X)
        p1 = (self.stump_.predict(X01) > 0).astype(np.float64)
        return np.column_stack([1.0 - p1, p1])

    def to_text(self) -> str:
        return f"1-Rule: {self.stump_.describe(self.feature_names(), self.classes_)}"


# ------------------------------------------------------------- DP-LR norm
def schema_norm_bound(names) -> float:
    """A public bound on the Euclidean norm of a 0/1 row plus the intercept, from the column names alone.

    A one-hot group (``"attr=value"`` columns) has exactly one 1; every other
    column (a cut ``"attr>c"``) may be 1.  So ``||x||^2 <= groups + cuts`` and
    the bound is ``sqrt(groups + cuts + 1)``: data-independent, hence free.

    Examples
    --------
    >>> round(schema_norm_bound(["sex=F", "sex=M", "age>30", "age>50"]), 6)
    2.0
    """
    groups, others = set(), 0
    for name in names:
        if "=" in name:
            groups.add(name.split("=", 1)[0])
        else:
            others += 1
    return math.sqrt(len(groups) + others + 1)


# ----------------------------------------------------------- the plans
@dataclass(frozen=True)
class Plan:
    """Sizes of every experiment."""

    epsilons: tuple
    n_seeds: int  # Adult: noise repetitions on the canonical split; Cod-RNA, Mushroom: folds of 5-fold CV
    tree_grid: dict  # non-private tuning of LazyBB-trees (validation part of each training part)
    lr_alphas: tuple  # non-private tuning of DP-LR's L2 weight on the unnormalised sum (public)
    private_grids: dict  # PrivateGridSearch grid per family
    private_gamma: dict  # its stopping probability per family
    gbc_params: dict
    fig1_runs: int
    fig1_rounds: int
    fig23_grid: dict  # per-epsilon selection for Figure 3 (validation part of Adult's training part)
    fig23_val_seeds: int
    codrna_fine: bool


#: The full plan: the paper's 13 epsilons x 5 repetitions (5 noise seeds on Adult, the 5 folds elsewhere).
FULL = Plan(
    epsilons=EPSILONS, n_seeds=5,
    tree_grid={"n_rounds": [5, 15, 25, 35, 51], "learning_rate": [0.35, 0.4], "density": [0.25, 0.3]},
    lr_alphas=(1.0, 3.0, 10.0, 30.0, 100.0),
    private_grids={"stump": PAPER["table1"]["stump"], "tree": PAPER["table1"]["tree"],
                   "lr": {"alpha": [1.0, 3.0, 10.0, 30.0, 100.0]}},
    private_gamma={"stump": 0.05, "tree": 0.1, "lr": 0.2},
    gbc_params={},
    fig1_runs=10, fig1_rounds=500,
    fig23_grid={"n_rounds": [5, 9, 15, 25, 39, 49, 75, 99], "learning_rate": [0.25, 0.35, 0.45],
                "density": [0.25, 0.35, 0.5]},
    fig23_val_seeds=2, codrna_fine=True,
)

#: A smoke test (CI): 3 epsilons x 2 repetitions, tiny grids (about a minute on 2 cores).
QUICK = Plan(
    epsilons=(0.1, 0.4, 1.0), n_seeds=2,
    tree_grid={"n_rounds": [5, 15], "learning_rate": [0.4], "density": [0.3]},
    lr_alphas=(3.0, 30.0),
    private_grids={"stump": {"n_rounds": [5, 15], "learning_rate": [0.5], "density": [0.35]},
                   "tree": {"n_rounds": [5], "learning_rate": [0.4], "density": [0.3]},
                   "lr": {"alpha": [3.0, 30.0]}},
    private_gamma={"stump": 0.5, "tree": 1.0, "lr": 0.5},
    gbc_params={"n_estimators": 10},
    fig1_runs=2, fig1_rounds=60,
    fig23_grid={"n_rounds": [5, 25], "learning_rate": [0.45], "density": [0.35]},
    fig23_val_seeds=1, codrna_fine=False,
)

FAMILIES = {"stump": ("LazyBB-stumps", "smooth-boost-stumps"), "tree": ("LazyBB-trees", "smooth-boost-trees"),
            "lr": ("DP-LR", "dp-logistic-regression")}
PRIVATE_SUFFIX = " (private tuning)"
EXTRA = ("n_features_used_", "best_params_", "n_runs_")


def _ticks(plan: Plan) -> list[float]:
    lo, hi = min(plan.epsilons), max(plan.epsilons)
    return [t for t in (0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 3.0, 5.0) if lo <= t <= hi]


def _grid_points(grid: dict) -> list[dict]:
    from sklearn.model_selection import ParameterGrid

    return [dict(p) for p in ParameterGrid(grid)]


def _label(params: dict) -> str:
    short = {"n_rounds": "tau", "learning_rate": "lambda", "density": "kappa", "alpha": "alpha", "delta": "delta"}
    return " ".join(f"{short.get(k, k)}={v:g}" for k, v in sorted(params.items()))


def _paper_stump_params(paper: str) -> dict:
    """cell_params of the paper's Tables 8-10 for one dataset."""
    name = PAPER_DATASETS[paper].name
    return {cell_key(name, eps): {"density": k, "learning_rate": lam, "n_rounds": tau}
            for eps, (k, lam, tau) in PAPER["hyper"][paper].items()}


def _datasets(data_home=None) -> tuple:
    """The three datasets, with DP-LR's public norm bound from each schema."""
    out = []
    for spec in PAPER_DATASETS.values():
        _, _, names = spec.load(data_home)
        out.append(replace(spec, params={"data_norm": round(schema_norm_bound(names), 12)}))
    return tuple(out)


# -------------------------------------------------- non-private tuning
def _choose(frame: pd.DataFrame, candidates: dict, datasets, value="validation_accuracy") -> tuple[dict, pd.DataFrame]:
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


# -------------------------------------------------------------- Figure 1
def advantage_trace(model, X01, y01, X_test=None, y_test=None):
    """Per round, the advantage of LazyBB's hypothesis on the measure it was chosen on.

    Replays the smooth weighting of :func:`dpglass.models.boosting.smooth_weighting`
    from the fitted committee and the training data: for round t, ``p_t`` is
    the normalised kappa-dense measure, ``advantage[t] = 1/2 - err_{p_t}(h_t)``
    and ``best[t] = 1/2 - min_h err_{p_t}(h)`` over every 1-Rule (what a
    non-private weak learner would have reached).  This reads the private
    training data: it is the curator's analysis for Figure 1, not a release
    (the model exposes no per-round information).

    Returns
    -------
    advantage, best : ndarray of shape (tau,)
    train_margin : ndarray of shape (n,)
        Normalised margins ``y_i sum_t h_t(x_i) / tau`` in [-1, 1].
    test_margin : ndarray or None
    """
    from dpglass.models.boosting import smooth_weighting
    from dpglass.models._weak_learners import FeatureMatrix, literal_errors

    X01 = np.asarray(X01, dtype=np.uint8)
    y01 = np.asarray(y01, dtype=np.uint8)
    F = FeatureMatrix(X01)
    n = len(y01)
    target = float(model.density) * n
    y_sign = 2 * y01.astype(np.int64) - 1
    margin = np.zeros(n, dtype=np.int64)
    tau = len(model.estimators_)
    adv, best = np.empty(tau), np.empty(tau)
    for t, h in enumerate(model.estimators_):
        p = smooth_weighting(margin, t, density=float(model.density), learning_rate=float(model.learning_rate),
                             target=target)
        p = p / p.sum()
        pred = h.predict(X01).astype(np.int64)
        adv[t] = 0.5 - float(p[pred != y_sign].sum())
        if model.weak_learner == "stump":
            best[t] = 0.5 - float(literal_errors(F, y01, p).min())
        else:
            best[t] = math.nan
        margin += y_sign * pred
    test_margin = None
    if X_test is not None:
        Xt = np.asarray(X_test, dtype=np.uint8)
        votes = sum(h.predict(Xt).astype(np.int64) for h in model.estimators_)
        test_margin = (2 * np.asarray(y_test, dtype=np.int64) - 1) * votes / tau
    return adv, best, margin / tau, test_margin


def _fig1_settings(plan: Plan) -> dict:
    f = PAPER["fig1"]
    k, lam, tau = PAPER["hyper"]["Adult"][1.0]
    return {
        f"Theorem 5: κ=1/2, λ=γ/4=1/80, τ={plan.fig1_rounds}": dict(density=f["density"],
                                                                  learning_rate=f["gamma"] / 4,
                                                                  n_rounds=plan.fig1_rounds),
        f"Table 8 at ε=1: κ={k:g}, λ={lam:g}, τ={tau}": dict(density=k, learning_rate=lam, n_rounds=tau),
    }


def _fig1_run(label, params, run, base_seed, data_home):
    from threadpoolctl import threadpool_limits

    from dpglass.models import SmoothBoostClassifier

    spec = PAPER_DATASETS["Adult"]
    X, y, names = spec.load(data_home)
    n_tr = spec.n_train(data_home)
    with threadpool_limits(1):
        model = SmoothBoostClassifier(epsilon=PAPER["fig1"]["epsilon"], random_state=cell_seed(
            base_seed, spec.name, run, f"fig1 {label}", PAPER["fig1"]["epsilon"]), **params)
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
    gamma = PAPER["fig1"]["gamma"]
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
#: the paper's 80-column encoding is the encoding.  Round numbers spaced evenly over the ranges of the
#: built-in loader's notes (f1 in [-1868, 0], f2 in [67, 133]) and, for the base frequencies, over
#: [0.08, 0.48]; chosen by us after seeing the file's ranges (as the built-in cuts were), never the labels.
CODRNA_FINE_CUTS = {
    "f1": [-1700, -1500, -1300, -1100, -900, -700, -500, -300, -100],
    "f2": [74, 80, 87, 93, 100, 107, 113, 120, 126],
    **{f"f{k}": [0.12, 0.16, 0.20, 0.24, 0.28, 0.32, 0.36, 0.40, 0.44] for k in range(3, 9)},
}


def _codrna_fine_csv(raw: Path, data_home=None) -> Path:
    """Write the finer Cod-RNA encoding as a 0/1 CSV (``label`` column) and return its path."""
    from sklearn.datasets import load_svmlight_file

    from dpglass.datasets import get_data_home

    path = raw / "cod-rna-fine.csv"
    if path.exists():
        return path
    X, labels = load_svmlight_file(str(Path(get_data_home(data_home)) / "raw" / "cod-rna" / "cod-rna"), n_features=8)
    X = X.toarray()
    cols = {}
    for j in range(8):
        for c in CODRNA_FINE_CUTS[f"f{j + 1}"]:
            cols[f"f{j + 1}>{c:g}"] = (X[:, j] > c).astype(np.uint8)
    frame = pd.DataFrame(cols)
    frame["label"] = (labels > 0).astype(np.uint8)
    tmp = path.with_suffix(".tmp")
    frame.to_csv(tmp, index=False)
    tmp.replace(path)
    return path


# ------------------------------------------------------------------- main
def _methods(plan: Plan, tuned: dict) -> tuple:
    """Table 2's methods: paper-tuned, privately tuned, and the two non-private references."""
    stump_cells = {}
    for paper in PAPER_DATASETS:
        stump_cells.update(_paper_stump_params(paper))
    out = [
        MethodSpec("LazyBB-stumps", "smooth-boost-stumps", {}, cell_params=stump_cells),
        MethodSpec("LazyBB-trees", "smooth-boost-trees", {}, cell_params=tuned["tree"]),
        MethodSpec("DP-LR", "dp-logistic-regression", {}, cell_params=tuned["lr"]),
    ]
    for fam, (name, est) in FAMILIES.items():
        out.append(MethodSpec(name + PRIVATE_SUFFIX, est, {}, tuning={
            "param_grid": plan.private_grids[fam], "stopping_probability": plan.private_gamma[fam]}))
    out += [
        MethodSpec("1-Rule", "dpglass.experiments.boosting:OneRuleClassifier", {}, private=False),
        MethodSpec("GBC", "sklearn.ensemble:GradientBoostingClassifier", dict(plan.gbc_params), private=False),
    ]
    return tuple(out)


def _tuning_methods(plan: Plan):
    """Grid points of the non-private tuning of LazyBB-trees and DP-LR."""
    trees = {f"trees {_label(p)}": p for p in _grid_points(plan.tree_grid)}
    lrs = {f"DP-LR {_label({'alpha': a})}": {"alpha": a} for a in plan.lr_alphas}
    methods = [MethodSpec(n, "smooth-boost-trees", p) for n, p in trees.items()]
    methods += [MethodSpec(n, "dp-logistic-regression", p) for n, p in lrs.items()]
    return tuple(methods), trees, lrs


def reproduce(out, *, quick=False, n_jobs=2, progress=True, fresh=False, raw_dir=None, data_home=None, base_seed=0,
              plan: Plan | None = None, log=print):
    """Run every experiment of paper 002 and write figures, tables and ``report.md`` into ``out``.

    Parameters
    ----------
    out : path
        Output folder (created).
    quick : bool
        Use :data:`QUICK` instead of :data:`FULL`.
    n_jobs : int
        Worker processes.
    fresh : bool
        Recompute the per-fit tables instead of resuming.
    raw_dir : path or None
        Where the per-fit tables go (default ``out/raw``).

    Returns
    -------
    dict
        The timings of each part.
    """
    from dpglass.experiments import figures

    plan = plan or (QUICK if quick else FULL)
    out = Path(out)
    raw = Path(raw_dir) if raw_dir is not None else out / "raw"
    out.mkdir(parents=True, exist_ok=True)
    raw.mkdir(parents=True, exist_ok=True)
    datasets = _datasets(data_home)
    timings: dict = {"plan": "quick" if quick else "full", "n_jobs": n_jobs}
    kw = dict(n_jobs=n_jobs, progress=progress, resume=not fresh, data_home=data_home)
    t_all = time.perf_counter()

    # ---------------------------------------------------- non-private tuning
    log(f"Tuning LazyBB-trees and DP-LR (validation parts of the training parts): {len(plan.epsilons)} epsilons")
    t_methods, trees, lrs = _tuning_methods(plan)
    tune_cfg = SweepConfig(datasets, t_methods, plan.epsilons, plan.n_seeds, holdout="validation",
                           base_seed=base_seed)
    tune = timed_sweep(tune_cfg, raw / "sweep_tuning.csv", timings, "tuning", description="tuning", **kw)
    tree_cells, tree_choice = _choose(tune, trees, datasets)
    lr_cells, lr_choice = _choose(tune, lrs, datasets)
    choices = pd.concat([tree_choice.assign(family="LazyBB-trees"), lr_choice.assign(family="DP-LR")],
                        ignore_index=True)
    choices.to_csv(out / "tuned_trees_lr.csv", index=False, float_format="%.6g")

    # --------------------------------------------------------- Table 2 sweep
    methods = _methods(plan, {"tree": tree_cells, "lr": lr_cells})
    log(f"Table 2: {len(methods)} methods x {len(plan.epsilons)} epsilons x {plan.n_seeds} repetitions x 3 datasets")
    main_cfg = SweepConfig(datasets, methods, plan.epsilons, plan.n_seeds, base_seed=base_seed, extra_columns=EXTRA)
    main = timed_sweep(main_cfg, raw / "sweep_table2.csv", timings, "table2", description="Table 2", **kw)
    acc = summarise(main, "test_accuracy")
    figures.plot_accuracy_vs_epsilon(
        acc, out, "table2_accuracy", value_label="test accuracy (Adult) / CV accuracy", panels=PANELS,
        title="Table 2: accuracy vs ε (mean ± standard error over repetitions / folds)",
        flat_methods=("1-Rule", "GBC"), xticks=_ticks(plan),
    )
    features = _features_table(main, datasets, data_home)
    features.to_csv(out / "table3_5_7_features.csv", index=False, float_format="%.6g")
    figures.plot_accuracy_vs_epsilon(
        _features_plot_frame(features), out, "table3_5_7_features", value_label="% of the columns used",
        panels={f"{p}": f"{p}" for p in PAPER_DATASETS}, title="Tables 3, 5-7: sparsity of LazyBB-stumps",
        flat_methods=(), xticks=_ticks(plan),
    )
    hyper = _hyper_table(main)

    # ---------------------------------------------------------- Table 4
    table4 = _table4(datasets, base_seed, data_home)

    # ------------------------------------------------------------ Figure 1
    log(f"Figure 1: advantage per round, {plan.fig1_runs} runs at ε = 1 on Adult")
    start = time.perf_counter()
    curves, hists, fig1 = run_fig1(plan, base_seed=base_seed, n_jobs=n_jobs, data_home=data_home)
    timings["fig1"] = {"seconds": round(time.perf_counter() - start, 2)}
    figures.plot_advantage(curves, hists, out, gamma=PAPER["fig1"]["gamma"])
    fig1.to_csv(out / "fig1_summary.csv", index=False, float_format="%.6g")

    # --------------------------------------------------------- Figures 2-3
    log("Figures 2-3: pure vs approximate DP on Adult")
    adult = datasets[0]
    f2 = {k: v for k, v in PAPER["fig2"].items() if k != "delta"}
    deltas = (0.0, PAPER["fig2"]["delta"])
    cand = {}
    for delta in deltas:
        for p in _grid_points(plan.fig23_grid):
            cand[f"δ={delta:g} {_label(p)}"] = dict(p, delta=delta)
    sel_cfg = SweepConfig((adult,), tuple(MethodSpec(n, "smooth-boost-stumps", p) for n, p in cand.items()),
                          plan.epsilons, plan.fig23_val_seeds, holdout="validation", base_seed=base_seed)
    sel = timed_sweep(sel_cfg, raw / "sweep_fig3_selection.csv", timings, "fig3_selection",
                       description="Fig. 3 selection", **kw)
    sel_cells, sel_rows = {}, []
    for delta in deltas:
        subset = {n: p for n, p in cand.items() if p["delta"] == delta}
        cells, rows = _choose(sel, subset, (adult,))
        sel_cells[delta] = cells
        sel_rows.append(rows.assign(delta=delta))
    fig3_choice = pd.concat(sel_rows, ignore_index=True)
    fig3_choice.to_csv(out / "fig3_selected.csv", index=False, float_format="%.6g")
    curse = None
    if plan.fig23_val_seeds > 1:
        curse = _winners_curse(sel, [n for n, p in cand.items() if p["delta"] == 0.0])
        curse.to_csv(out / "fig3_winners_curse.csv", index=False, float_format="%.6g")
    f23_methods = (
        MethodSpec("Fig. 2 δ=0", "smooth-boost-stumps", dict(f2, delta=0.0)),
        MethodSpec("Fig. 2 δ=1e-05", "smooth-boost-stumps", dict(f2, delta=PAPER["fig2"]["delta"])),
        MethodSpec("Fig. 3 δ=0", "smooth-boost-stumps", {}, cell_params=sel_cells[0.0]),
        MethodSpec("Fig. 3 δ=1e-05", "smooth-boost-stumps", {}, cell_params=sel_cells[PAPER["fig2"]["delta"]]),
    )
    f23_cfg = SweepConfig((adult,), f23_methods, plan.epsilons, plan.n_seeds, base_seed=base_seed,
                          extra_columns=("n_features_used_",))
    f23 = timed_sweep(f23_cfg, raw / "sweep_fig2_3.csv", timings, "fig2_3", description="Figs. 2-3", **kw)
    f23_acc = summarise(f23, "test_accuracy")
    f23_plot = _fig23_plot_frame(f23_acc, acc[acc["dataset"] == adult.name])
    figures.plot_accuracy_vs_epsilon(
        f23_plot, out, "fig2_3_pure_vs_approx", value_label="test accuracy (Adult)",
        panels={"Figure 2": "Fig. 2: κ=1/4, λ=1/4, τ=99 for every ε", "Figure 3": "Fig. 3: per-ε settings"},
        title="Pure (δ=0) vs approximate (δ=1e-5) DP, LazyBB-stumps on Adult", flat_methods=("1-Rule", "GBC"),
        xticks=_ticks(plan),
    )

    # ------------------------------------------------------ Cod-RNA encoding
    fine = None
    if plan.codrna_fine:
        log("Cod-RNA with a finer encoding (72 columns): LazyBB-stumps at the paper's settings, 1-Rule, GBC")
        fine_spec = DatasetSpec("cod-rna-fine", source=str(_codrna_fine_csv(raw, data_home)), target="label",
                                split="kfold:5")
        cells = {k.replace("cod-rna|", "cod-rna-fine|"): v for k, v in _paper_stump_params("Cod-RNA").items()}
        fine_methods = (MethodSpec("LazyBB-stumps", "smooth-boost-stumps", {}, cell_params=cells),
                        MethodSpec("1-Rule", "dpglass.experiments.boosting:OneRuleClassifier", {}, private=False),
                        MethodSpec("GBC", "sklearn.ensemble:GradientBoostingClassifier", dict(plan.gbc_params),
                                   private=False))
        fine_cfg = SweepConfig((fine_spec,), fine_methods, plan.epsilons, plan.n_seeds, base_seed=base_seed,
                               extra_columns=("n_features_used_",))
        fine_raw = timed_sweep(fine_cfg, raw / "sweep_codrna_fine.csv", timings, "codrna_fine",
                                description="Cod-RNA fine", **kw)
        fine = summarise(fine_raw, "test_accuracy")
        fine.to_csv(out / "codrna_fine_encoding.csv", index=False, float_format="%.6g")

    timings["total_seconds"] = round(time.perf_counter() - t_all, 2)
    (out / "timings.json").write_text(json.dumps(timings, indent=1))
    hyper.to_csv(out / "table8_10_hyperparameters.csv", index=False, float_format="%.6g")
    _write_report(out, plan=plan, quick=quick, datasets=datasets, main=main, acc=acc, features=features,
                  hyper=hyper, choices=choices, table4=table4, fig1=fig1, f23=f23_acc, fig3_choice=fig3_choice,
                  fine=fine, timings=timings, data_home=data_home, curse=curse)
    log(f"done in {timings['total_seconds']:.0f} s; report: {out / 'report.md'}")
    return timings


# ------------------------------------------------------------------ tables
def _at(frame, eps):
    return frame[np.isclose(frame["epsilon"], eps, rtol=1e-9, atol=0)]


def _features_table(main: pd.DataFrame, datasets, data_home=None) -> pd.DataFrame:
    """Tables 3, 5-7: features used by LazyBB-stumps (paper settings and private tuning) per epsilon."""
    rows = []
    for spec in datasets:
        paper = PAPER_NAME[spec.name]
        d = len(spec.load(data_home)[2])
        for method in ("LazyBB-stumps", "LazyBB-stumps" + PRIVATE_SUFFIX):
            part = main[(main["dataset"] == spec.name) & (main["method"] == method)]
            for eps, g in part.groupby("epsilon", sort=True):
                v = g["n_features_used"].dropna().to_numpy()
                pap = PAPER["features"][paper].get(float(eps), (math.nan, math.nan, math.nan))
                rows.append({"dataset": paper, "method": method, "epsilon": float(eps), "runs": len(v),
                             "features_mean": v.mean() if len(v) else math.nan,
                             "features_std": v.std() if len(v) else math.nan,  # ddof=0, as the paper's
                             "pct_features": 100 * v.mean() / d if len(v) else math.nan, "n_columns": d,
                             "paper_mean": pap[0], "paper_std": pap[1], "paper_pct": pap[2],
                             "paper_n_columns": PAPER_SHAPE[paper][1]})
    return pd.DataFrame(rows)


def _features_plot_frame(features: pd.DataFrame) -> pd.DataFrame:
    ours = features.rename(columns={"pct_features": "mean"})[["dataset", "method", "epsilon", "mean"]].copy()
    ours["se"] = features["features_std"] / np.sqrt(features["runs"].clip(lower=1)) * 100 / features["n_columns"]
    paper = features[features["method"] == "LazyBB-stumps"][["dataset", "epsilon", "paper_pct"]]
    paper = paper.rename(columns={"paper_pct": "mean"}).assign(method="paper (its encoding)", se=0.0)
    return pd.concat([ours, paper], ignore_index=True)[["dataset", "method", "epsilon", "mean", "se"]]


def _hyper_table(main: pd.DataFrame) -> pd.DataFrame:
    """Tables 8-10: the paper's chosen settings beside PrivateGridSearch's choices (median and most frequent)."""
    rows = []
    part = main[main["method"] == "LazyBB-stumps" + PRIVATE_SUFFIX]
    for paper, spec in PAPER_DATASETS.items():
        for eps, (k, lam, tau) in PAPER["hyper"][paper].items():
            g = _at(part[part["dataset"] == spec.name], eps)
            chosen = [json.loads(s) for s in g["best_params"] if isinstance(s, str) and s.startswith("{")]
            rec = {"dataset": paper, "epsilon": eps, "paper_density": k, "paper_learning_rate": lam,
                   "paper_n_rounds": tau, "private_choices": len(chosen)}
            for key in ("density", "learning_rate", "n_rounds"):
                vals = [c[key] for c in chosen]
                rec[f"private_{key}_median"] = float(np.median(vals)) if vals else math.nan
                rec[f"private_{key}_values"] = " ".join(f"{v:g}" for v in vals)
            rows.append(rec)
    return pd.DataFrame(rows)


def _table4(datasets, base_seed, data_home) -> str:
    """Table 4: the LazyBB-stumps model of Adult at epsilon = 0.4 (paper settings, first repetition)."""
    spec = datasets[0]
    eps = PAPER["headline"]["epsilon"]
    method = MethodSpec("LazyBB-stumps", "smooth-boost-stumps", {}, cell_params=_paper_stump_params("Adult"))
    cfg = SweepConfig((spec,), (method,), (eps,), 1, base_seed=base_seed)
    X, y, names = spec.load(data_home)
    tr, te = dataset_split(cfg, spec, 0, data_home)
    model = _make_estimator(spec, method, eps, cell_seed(base_seed, spec.name, 0, method.name, eps), 0)
    frame = pd.DataFrame(X, columns=names)
    model.fit(frame.iloc[tr], y[tr])
    accuracy = float(model.score(frame.iloc[te], y[te]))
    return model.to_text() + f"\n(test accuracy {accuracy:.4f}; the paper's Table 4 model: 0.82)"


def _fig23_plot_frame(f23_acc: pd.DataFrame, adult_acc: pd.DataFrame) -> pd.DataFrame:
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


# ------------------------------------------------------------------ report
def _write_report(out, *, plan, quick, datasets, main, acc, features, hyper, choices, table4, fig1, f23,
                  fig3_choice, fine, timings, data_home=None, curse=None):
    from dpglass.experiments.report import _md, _pm

    L = []
    w = L.append
    reps = plan.n_seeds

    def cell(frame, dataset, method, eps):
        part = frame[(frame["dataset"] == dataset) & (frame["method"] == method)]
        part = part[part["epsilon"].isna()] if eps is None else _at(part, eps)
        if not len(part):
            return math.nan, math.nan
        return float(part["mean"].iloc[0]), float(part["se"].iloc[0])

    def pm(dataset, method, eps, frame=acc):
        return _pm(*cell(frame, dataset, method, eps))

    w("# Paper 002 reproduced: smooth boosting (LazyBB) of DP 1-Rules and DP trees (Section 5, Appendices A-C)")
    w("")
    w("Asadi, Carmosino, Jahanara, Rafiey, Salamatian, *Private Boosted Decision Trees via Smooth Re-Weighting*. "
      "Generated by `dpglass reproduce boosting"
      + (" --quick" if quick else "") + "`; every number below is computed by that command "
      f"({'QUICK: a smoke test with tiny grids, not a reproduction' if quick else 'full plan'}). "
      "Paper values are quoted from its text and tables; Table 2 and Figures 1-3 of the paper are plots without "
      "numbers, so only their shapes can be compared.")
    w("")

    # ------------------------------------------------------------ headline
    w("## Headline")
    w("")
    adult = PAPER_DATASETS["Adult"].name
    h_eps = PAPER["headline"]["epsilon"]
    rows = [{"claim": f"LazyBB with DP-1R on Adult at ε = {h_eps:g} (Table 4, paper's settings κ=0.35, λ=0.5, τ=9)",
             "paper": f"{PAPER['headline']['accuracy']:.2f}", "ours": pm(adult, "LazyBB-stumps", h_eps),
             "ours, private tuning": pm(adult, "LazyBB-stumps" + PRIVATE_SUFFIX, h_eps)}]
    for paper, spec in PAPER_DATASETS.items():
        k, lam, tau = PAPER["hyper"][paper][1.0]
        what = "test" if spec.split == "canonical" else "CV"
        rows.append({"claim": f"{paper} {what} accuracy at ε = 1, paper's settings κ={k:g}, λ={lam:g}, τ={tau} "
                              "(Appendix C, Table 11)",
                     "paper": f"{PAPER['appC'][paper]:.2f}", "ours": pm(spec.name, "LazyBB-stumps", 1.0),
                     "ours, private tuning": pm(spec.name, "LazyBB-stumps" + PRIVATE_SUFFIX, 1.0)})
    if fine is not None:
        rows.append({"claim": "Cod-RNA CV accuracy at ε = 1, paper's settings, our finer 72-column encoding",
                     "paper": f"{PAPER['appC']['Cod-RNA']:.2f}", "ours": pm("cod-rna-fine", "LazyBB-stumps", 1.0, fine),
                     "ours, private tuning": "not run"})
    w(_md(pd.DataFrame(rows)))
    w("")
    w(f"Mean ± standard error over {reps} repetitions (Adult: noise seeds on the canonical split; Cod-RNA and "
      f"Mushroom: the folds of one stratified 5-fold cross-validation{' (only the first ' + str(reps) + ')' if reps < 5 else ''}). "
      "\"Private tuning\": PrivateGridSearch (Liu-Talwar random stopping) chooses κ, λ, τ inside the same ε; "
      "the paper's settings were chosen by a non-private cross-validation that the paper ran on its data.")
    w("")
    w(_headline_discussion(acc, fine, curse, len(_grid_points(plan.fig23_grid))))
    w("")

    # ------------------------------------------------------------ setup
    w("## Setup")
    w("")
    rows = []
    for paper, spec in PAPER_DATASETS.items():
        X, y, names = spec.load(data_home)
        rows.append({"paper dataset": paper, "dpglass dataset": f"`{spec.name}`",
                     "records": f"{len(y)}", "columns (ours / paper)": f"{len(names)} / {PAPER_SHAPE[paper][1]}",
                     "evaluation": "canonical train/test split, test accuracy" if spec.split == "canonical"
                     else "stratified shuffled 5-fold CV", "note": MAPPING_NOTES[paper]})
    w(_md(pd.DataFrame(rows)))
    w("")
    w(f"* ε grid: {', '.join(f'{e:g}' for e in plan.epsilons)}; {reps} repetitions per cell "
      "(the paper: 5, Appendix A). Every split and noise stream comes from a SeedSequence addressed by "
      "(dataset, repetition, method, ε), so any cell can be recomputed alone (`dpglass.experiments.sweep`).")
    w("* **Nothing is tuned on a test split or fold.** LazyBB-stumps uses the paper's chosen settings "
      "(Tables 8-10) as constants. LazyBB-trees and DP-LR: the paper tuned them by grid search and CV but does "
      "not report the choices, so we tune them its way (non-private grid search) on a validation part (25%) "
      "carved out of each training part: per ε for Adult (pooling "
      f"{reps} validation splits of the training part), per ε and per fold for Cod-RNA and Mushroom. "
      "These choices are non-private, like the paper's (see `tuned_trees_lr.csv`).")
    g = plan.private_grids
    w("* **Private tuning** (the \"(private tuning)\" curves): `PrivateGridSearch` (Liu and Talwar 2019 random "
      "stopping: geometric number of runs, each run a candidate drawn uniformly from the grid, trained with "
      "ε/3 on 80% of the training part and scored by a Laplace-noised validation count on the other 20%; "
      "the best run is released, not refit; the whole selection is ε-DP). Grids: stumps "
      f"{_grid_text(g['stump'])} ({len(_grid_points(g['stump']))} points, the paper's Table 1 1-Rule grid"
      f"{'' if not quick else ', quick: reduced'}; stopping probability γ = {plan.private_gamma['stump']:g}, "
      f"E[runs] = {1 / plan.private_gamma['stump']:g}); trees {_grid_text(g['tree'])} "
      f"({len(_grid_points(g['tree']))} points, Table 1's TopDown grid; γ = {plan.private_gamma['tree']:g}); "
      f"DP-LR α ∈ {{{', '.join(f'{a:g}' for a in g['lr']['alpha'])}}} (γ = {plan.private_gamma['lr']:g}).")
    w("* DP-LR (`DPLogisticRegression`, output perturbation) scales rows by a public norm bound read off the "
      "column names (one 1 per one-hot group, every cut may be 1: √(groups + cuts + 1) = "
      + ", ".join(f"{PAPER_NAME[d.name]} {d.params['data_norm']:.3g}" for d in datasets)
      + "), free of privacy cost; α (L2) is tuned as said.")
    w("* LazyBB-trees: `tree_nodes` = 3 internal nodes (the paper does not state its t); splits calibrated to "
      "sensitivity 8ζ (docs/privacy.md: the paper's 4ζ does not hold), so our trees are noisier than the paper's.")
    w("* Non-private references: a single 1-Rule (the literal or constant of fewest training errors) and sklearn's "
      "`GradientBoostingClassifier` with " + (f"{plan.gbc_params}" if plan.gbc_params else "its defaults (100 trees of depth 3)")
      + ".")
    w("")

    # ------------------------------------------------------------ Table 2
    w("## Table 2: accuracy vs ε")
    w("")
    w("![Table 2](table2_accuracy.png)")
    w("")
    w("The paper's Table 2 is six plots (low and high privacy regime per dataset) without numbers, so we give "
      "ours at chosen ε (every ε: `table2_accuracy.csv`). Adult: test accuracy; Cod-RNA, Mushroom: CV accuracy.")
    w("")
    method_order = [m for m in acc["method"].unique()]
    pick = [e for e in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 1.0, 3.0, 5.0) if len(_at(acc, e))]
    for paper, spec in PAPER_DATASETS.items():
        rows = []
        for m in method_order:
            rec = {"method": m}
            part = acc[(acc["dataset"] == spec.name) & (acc["method"] == m)]
            if part["epsilon"].isna().all():
                v = pm(spec.name, m, None)
                for e in pick:
                    rec[f"ε={e:g}"] = v if e == pick[0] else "〃"
            else:
                for e in pick:
                    rec[f"ε={e:g}"] = pm(spec.name, m, e)
            rows.append(rec)
        w(f"**{paper}**")
        w("")
        w(_md(pd.DataFrame(rows)))
        w("")
    w(_table2_discussion(acc, datasets))
    w("")

    # ------------------------------------------------------------ sparsity
    w("## Tables 3 and 5-7: features used by LazyBB-stumps")
    w("")
    w("![Tables 3, 5-7](table3_5_7_features.png)")
    w("")
    for paper in PAPER_DATASETS:
        part = features[features["dataset"] == paper]
        rows = []
        for eps in sorted(part["epsilon"].unique()):
            a = part[(part["epsilon"] == eps) & (part["method"] == "LazyBB-stumps")]
            b = part[(part["epsilon"] == eps) & (part["method"] == "LazyBB-stumps" + PRIVATE_SUFFIX)]
            if not len(a):
                continue
            a = a.iloc[0]
            rows.append({
                "ε": f"{eps:g}", "ours: mean": f"{a.features_mean:.1f}", "std": f"{a.features_std:.3f}",
                "% of columns": f"{a.pct_features:.2f}%",
                "paper: mean": f"{a.paper_mean:g}" if not math.isnan(a.paper_mean) else "n/a",
                "paper std": f"{a.paper_std:.3f}" if not math.isnan(a.paper_std) else "n/a",
                "paper %": f"{a.paper_pct:.2f}%" if not math.isnan(a.paper_pct) else "n/a",
                "private tuning: mean": f"{b.iloc[0].features_mean:.1f}" if len(b) else "n/a",
            })
        n_cols = int(part["n_columns"].iloc[0])
        table_no = {"Adult": "Tables 3 and 5", "Cod-RNA": "Table 6", "Mushroom": "Table 7"}[paper]
        w(f"**{paper}** ({table_no}; our {n_cols} columns, the paper's {PAPER_SHAPE[paper][1]})")
        w("")
        w(_md(pd.DataFrame(rows)))
        w("")
    w(_features_discussion(features))
    w("")

    # ------------------------------------------------------------ Table 4
    w("## Table 4: a 0.4-DP LazyBB-stumps model of Adult")
    w("")
    w("The first repetition's model of the Table 2 sweep at ε = 0.4 (paper's settings κ=0.35, λ=0.5, τ=9), "
      "printed by `SmoothBoostClassifier.to_text()`:")
    w("")
    w("```")
    w(table4)
    w("```")
    w("")
    w("The paper's Table 4 model votes for `marital-status: Married-civ-spouse` (3), against `capital-gain = 0` "
      "(−2), for `Exec-managerial`, `Prof-specialty` and 13 ≤ education-num ≤ 14.5 (1 each), against age ≤ 17 "
      "(−1). Its columns are different cuts of the same attributes (our encoding has no `age ≤ 17` or "
      "`13 ≤ education-num ≤ 14.5`).")
    w("")

    # ------------------------------------------------------------ Tables 8-10
    w("## Tables 8-10: hyper-parameters")
    w("")
    w("The paper chose (κ, λ, τ) per ε by a non-private grid search with CV over Table 1's grid; LazyBB-stumps "
      "uses those values here. PrivateGridSearch chooses inside the budget from the same grid; below, the median "
      f"of its {reps} choices (one per repetition or fold) and all of them (`table8_10_hyperparameters.csv`). "
      "The number of candidates each search tried (K) is recorded in the per-fit table for the curator only: "
      "the selection theorem needs K to stay secret, so it is not published here.")
    w("")
    for paper in PAPER_DATASETS:
        part = hyper[hyper["dataset"] == paper]
        rows = []
        for rec in part.itertuples(index=False):
            if not rec.private_choices:
                continue
            rows.append({"ε": f"{rec.epsilon:g}",
                         "paper κ, λ, τ": f"{rec.paper_density:g}, {rec.paper_learning_rate:g}, {rec.paper_n_rounds}",
                         "private: median κ, λ, τ": f"{rec.private_density_median:g}, "
                                                    f"{rec.private_learning_rate_median:g}, "
                                                    f"{rec.private_n_rounds_median:g}",
                         "private τ chosen": rec.private_n_rounds_values})
        table_no = {"Adult": "Table 8", "Cod-RNA": "Table 9", "Mushroom": "Table 10"}[paper]
        w(f"**{paper}** ({table_no})")
        w("")
        w(_md(pd.DataFrame(rows)))
        w("")
    w(_hyper_discussion(hyper, fig3_choice, plan))
    w("")
    w("**Our non-private tuning of LazyBB-trees and DP-LR** (the paper reports no chosen values for them); "
      "most frequent choice per ε over datasets and folds (all: `tuned_trees_lr.csv`):")
    w("")
    rows = []
    for fam in ("LazyBB-trees", "DP-LR"):
        part = choices[choices["family"] == fam]
        for paper, spec in PAPER_DATASETS.items():
            d = part[part["dataset"] == spec.name]
            rec = {"method": fam, "dataset": paper}
            for eps in pick:
                c = _at(d, eps)["chosen"]
                rec[f"ε={eps:g}"] = c.mode().iloc[0].replace("trees ", "").replace("DP-LR ", "") if len(c) else ""
            rows.append(rec)
    w(_md(pd.DataFrame(rows)))
    w("")

    # ------------------------------------------------------------ Figure 1
    w("## Figure 1: advantage per round and margins at ε = 1 (Adult)")
    w("")
    w("![Figure 1](fig1_advantage.png)")
    w("")
    rows = []
    for rec in fig1.itertuples(index=False):
        rows.append({"setting": rec.setting, "runs": rec.runs,
                     "advantage, first 10 rounds": f"{rec.mean_advantage_first_10:.4f}",
                     "advantage, last 10 rounds": f"{rec.mean_advantage_last_10:.4f}",
                     "best 1-Rule's, last 10": f"{rec.mean_best_1rule_advantage_last_10:.4f}",
                     "first round < γ = 0.05": _int_or(rec.first_round_below_gamma),
                     "first round ≤ 0": _int_or(rec.first_round_at_or_below_0),
                     "train margin < 0": f"{rec.train_margin_negative:.3f}",
                     "test accuracy": f"{rec.test_accuracy:.4f}"})
    w(_md(pd.DataFrame(rows)))
    w("")
    w("Advantage of round t: 1/2 − err_{p_t}(h_t), the released 1-Rule's weighted error under the normalised "
      "κ-dense measure p_t it was chosen on (10-round moving average for the \"first round\" columns). "
      "**The model exposes no per-round information**, so the figure replays the measure from the fitted "
      "committee and the training data (`advantage_trace`): this reads the private data and is the curator's "
      "analysis for the figure, not a release. \"Best 1-Rule\" is the largest advantage any 1-Rule has under "
      "the same p_t (what a non-private weak learner would reach). Margins: y·Σ_t h_t(x)/τ, pooled over runs.")
    w("")
    w(_fig1_discussion(fig1))
    w("")

    # ------------------------------------------------------------ Figures 2-3
    w("## Figures 2-3: pure vs approximate DP (δ = 1e-5) on Adult")
    w("")
    w("![Figures 2-3](fig2_3_pure_vs_approx.png)")
    w("")
    rows = []
    for m in ("Fig. 2 δ=0", "Fig. 2 δ=1e-05", "Fig. 3 δ=0", "Fig. 3 δ=1e-05"):
        rec = {"curve": m}
        for e in pick:
            rec[f"ε={e:g}"] = pm(adult, m, e, f23)
        rows.append(rec)
    w(_md(pd.DataFrame(rows)))
    w("")
    w("Figure 2: κ = 1/4, λ = 1/4, τ = 99 at every ε. Figure 3: per-ε settings chosen (non-privately, as the "
      f"paper did) on a validation part of Adult's training part ({plan.fig23_val_seeds} validation split"
      f"{'s' if plan.fig23_val_seeds > 1 else ''}) from the grid {_grid_text(plan.fig23_grid)} "
      f"({len(_grid_points(plan.fig23_grid))} points, a subset of Table 1's), separately for δ = 0 and δ = 1e-5; "
      "their choices are in `fig3_selected.csv`. With δ > 0, `SmoothBoostClassifier` uses advanced composition "
      "(Dwork-Rothblum-Vadhan) when it gives each round more budget than ε/τ.")
    w("")
    w(_fig23_discussion(f23, plan, fig3_choice))
    w("")

    # ------------------------------------------------------------ differences
    w("## Where and why we differ from the paper")
    w("")
    w("1. **Encodings.** dpglass's data-independent encodings have 117 (Adult), 24 (Cod-RNA) and 126 (Mushroom) "
      "columns, the paper's 162, 80 and 117; its encodings are not published. Cod-RNA is the one that matters: "
      "3 cuts per real feature lose much of the signal (see the finer encoding above).")
    w("2. **Adult is evaluated on the canonical test set everywhere**, including Figures 2-3, where the paper "
      "reports CV accuracy: holding the test set out lets the per-ε selection of Figure 3 use a validation part "
      "of the training set without touching test data.")
    w("3. **Tuning.** The paper's settings came from a non-private CV on the same data it reports accuracy on. We "
      "use its published settings for LazyBB-stumps; for the trees and DP-LR we tune on validation parts of the "
      "training parts only; and we add private tuning, which the paper did not do.")
    w("4. **DP-TopDown** splits are calibrated to 8ζ (the paper's Lemma 15 claims 4ζ; docs/privacy.md shows "
      "neighbours at ≈ 7.7ζ), and the leaves use a Laplace release of the margin vector instead of the paper's "
      "parallel composition. Trees here are noisier than the paper's; the paper does not give their t or chosen "
      "settings either.")
    w("5. **DP-1R** is calibrated as the paper's Theorem 7 (η = εκn/(4τ)); the same η is in fact ε/2-DP "
      "(docs/privacy.md), so the stumps are as noisy as the paper's.")
    w("6. **DP-Bag and DPBoost** are not run (DP-Bag is not implemented in dpglass; DPBoost belongs to the "
      "DP-GBDT issue); the paper compared them only where their papers report hyper-parameters.")
    w(f"7. **Repetitions**: {reps} per cell (the paper: 5); the repetitions on Cod-RNA and Mushroom are the "
      "folds of one 5-fold CV (the paper does not say whether it repeated the CV).")
    w("8. **GradientBoostingClassifier** runs with sklearn's defaults; the paper does not give its settings.")
    w("")

    # ------------------------------------------------------------ speed
    w("## Speed")
    w("")
    rows = []
    for key, label in (("tuning", "tuning of trees and DP-LR (validation)"), ("table2", "Table 2 sweep"),
                       ("fig3_selection", "Figure 3 selection (validation)"), ("fig2_3", "Figures 2-3 sweep"),
                       ("codrna_fine", "Cod-RNA finer encoding")):
        t = timings.get(key)
        if t:
            rows.append({"part": label, "fits": t["computed_fits"], "seconds": f"{t['seconds']:.0f}",
                         "fits/s": f"{t['fits_per_second']:.1f}" if t["fits_per_second"] else "",
                         "runs": t.get("runs", 1), "workers": ",".join(map(str, t.get("n_jobs", [])))})
    if "fig1" in timings:
        rows.append({"part": "Figure 1", "fits": plan.fig1_runs * 2, "seconds": f"{timings['fig1']['seconds']:.0f}",
                     "fits/s": "", "runs": 1, "workers": timings.get("n_jobs")})
    total = sum(float(r["seconds"]) for r in rows)
    w(f"All parts, as run (seconds summed over resumed runs): {total / 60:.1f} min on {timings.get('n_jobs')} "
      f"worker processes; wall time of the last run of the command: {timings.get('total_seconds', 0) / 60:.1f} min. "
      "A \"fit\" of a private-tuning cell is a whole PrivateGridSearch (a geometric number of candidates).")
    w("")
    w(_md(pd.DataFrame(rows)))
    w("")
    errors = int(main["stop_reason"].astype(str).str.startswith("error").sum())
    w(f"Cells that raised an error (recorded with NaN metrics): {errors}.")
    w("")
    (Path(out) / "report.md").write_text("\n".join(L) + "\n", encoding="utf-8")


def _int_or(v):
    return "never" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{int(v)}"


def _grid_text(grid: dict) -> str:
    short = {"n_rounds": "τ", "learning_rate": "λ", "density": "κ", "alpha": "α"}
    return "; ".join(f"{short.get(k, k)} ∈ {{{', '.join(f'{v:g}' for v in vals)}}}" for k, vals in grid.items())


def _mean(frame, dataset, method, eps):
    part = frame[(frame["dataset"] == dataset) & (frame["method"] == method)]
    part = part[part["epsilon"].isna()] if eps is None else _at(part, eps)
    return float(part["mean"].iloc[0]) if len(part) else math.nan


def _headline_discussion(acc, fine, curse=None, n_grid=0) -> str:
    lines = []
    a = _mean(acc, "adult", "LazyBB-stumps", PAPER["headline"]["epsilon"])
    if not math.isnan(a):
        lines.append(f"* Adult at ε = 0.4: {a:.3f} against the paper's 0.82 "
                     f"({'met' if a >= 0.815 else 'not met'}; the paper's Table 4 is one model, ours a mean).")
    for paper, spec in PAPER_DATASETS.items():
        v = _mean(acc, spec.name, "LazyBB-stumps", 1.0)
        if math.isnan(v):
            continue
        gap = v - PAPER["appC"][paper]
        lines.append(f"* {paper} at ε = 1: {v:.3f} vs {PAPER['appC'][paper]:.2f} ({gap:+.3f}).")
    gbc = {p: _mean(acc, s.name, "GBC", None) for p, s in PAPER_DATASETS.items()}
    one = {p: _mean(acc, s.name, "1-Rule", None) for p, s in PAPER_DATASETS.items()}
    text = (f"* **Cod-RNA**: the gap is the encoding. With dpglass's 24 columns even the non-private GBC reaches only "
            f"{gbc['Cod-RNA']:.3f} (a single 1-Rule {one['Cod-RNA']:.3f}), below the paper's *private* 0.86")
    if fine is not None:
        text += (f"; with our finer 72-column encoding LazyBB-stumps at the same settings reaches "
                 f"{_mean(fine, 'cod-rna-fine', 'LazyBB-stumps', 1.0):.3f} and GBC "
                 f"{_mean(fine, 'cod-rna-fine', 'GBC', None):.3f}")
    lines.append(text + ".")
    mush = {e: _mean(acc, "mushroom", "LazyBB-stumps", e) for e in (1.0, 3.0, 5.0)}
    if not math.isnan(mush[1.0]):
        lines.append(
            f"* **Mushroom**: {mush[1.0]:.3f} at ε = 1 with the paper's (κ = 0.25, λ = 0.3, τ = 29); "
            + (f"{mush[3.0]:.3f} and {mush[5.0]:.3f} at ε = 3 and 5. " if not math.isnan(mush[5.0]) else "")
            + "Mushroom has the fewest records (≈ 6500 per training fold): DP-1R's exponential mechanism has "
            "η = εκn/(4τ) ≈ 14 at these settings, so each round's choice is spread over many literals (a weighted-"
            "error gap of 0.1 is only a factor e^1.4 in probability); our encoding (126 columns, 10 constant) is "
            "not the paper's (117), and the paper's number is selection-biased (next point).")
    lines.append(_optimism_text(curse, n_grid))
    return "\n".join(line for line in lines if line)


def _winners_curse(sel: pd.DataFrame, names) -> pd.DataFrame:
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


def _optimism_text(curse, n_grid) -> str:
    if curse is None or not len(curse):
        return ("* The paper chose its settings by CV on the same data whose CV accuracy it reports, so its "
                "numbers carry a selection (winner's-curse) bias; the full run measures it on Adult.")
    return ("* **The paper's numbers carry a selection bias**: its settings were chosen by CV on the data whose CV "
            "accuracy it reports (Tables 8-10, Appendix C), the best of "
            f"{len(_grid_points(PAPER['table1']['stump']))} noisy scores. Measured on Adult with our {n_grid}-point "
            "grid (δ = 0): the best setting's score on one validation split of the training part exceeds the same "
            f"setting's score on another by {curse['optimism'].mean():+.3f} on average over the ε grid "
            f"(largest {curse['optimism'].max():+.3f}, at ε = {curse.loc[curse['optimism'].idxmax(), 'epsilon']:g}); "
            "`fig3_winners_curse.csv`.")


def _table2_discussion(acc, datasets) -> str:
    lines = ["Mean over the ε grid of each method's accuracy (a one-number summary of each curve):", ""]
    for spec in datasets:
        part = acc[(acc["dataset"] == spec.name) & acc["epsilon"].notna()]
        means = part.groupby("method", sort=False)["mean"].mean().sort_values(ascending=False)
        lines.append(f"* {PAPER_NAME[spec.name]}: " + ", ".join(f"{m} {v:.3f}" for m, v in means.items()) + ".")
    lines.append("")
    best = []
    for spec in datasets:
        part = acc[(acc["dataset"] == spec.name) & acc["method"].isin(["LazyBB-stumps", "LazyBB-trees", "DP-LR"])]
        means = part.groupby("method")["mean"].mean()
        if len(means):
            best.append(f"{PAPER_NAME[spec.name]}: {means.idxmax()}")
    gaps = []
    for fam in ("LazyBB-stumps", "LazyBB-trees", "DP-LR"):
        for lo, hi, label in ((0, 0.5, "ε ≤ 0.5"), (1.0, 10, "ε ≥ 1")):
            a = acc[(acc["method"] == fam) & acc["epsilon"].between(lo, hi)]
            b = acc[(acc["method"] == fam + PRIVATE_SUFFIX) & acc["epsilon"].between(lo, hi)]
            if len(a) and len(b):
                gaps.append(f"{fam} {label}: {float(b['mean'].mean() - a['mean'].mean()):+.3f}")
    lines.append(
        "The paper: \"LazyBB over 1-Rules and differentially private logistic regression were the best performing "
        "models\", with the private learners between the weak (1-Rule) and the strong (GBC) non-private baselines. "
        "Best private learner (non-private tuning, mean over ε) here: " + "; ".join(best) + ". "
        "Private tuning minus the paper-style (non-private) tuning, mean over datasets and ε: " + "; ".join(gaps)
        + ". PrivateGridSearch gives each candidate ε/3, tries a geometric number of them (sometimes one or two: "
        "then a poor setting is released) and scores them with a noisy count on a fifth of the training part; "
        "the non-private tuning sees exact scores and every grid point, which is what the paper's curves assume.")
    return "\n".join(lines)


def _features_discussion(features) -> str:
    part = features[features["method"] == "LazyBB-stumps"]
    ratio = (part["features_mean"] / part["paper_mean"]).median()
    return ("Features used: the number of columns with non-zero net votes (`n_features_used_`); std with ddof = 0 "
            "as the paper's (its values, e.g. 0.489 and 0.400 over 5 runs, are population standard deviations). "
            f"Median ratio of our count to the paper's over all cells: {ratio:.2f}. With the paper's τ per ε, a "
            "model cannot use more than τ columns, so both follow τ (Tables 8-10); the percentages differ also "
            "because the column counts differ (Cod-RNA: 24 vs 80 columns, and our 8 x 3 cuts leave few useful "
            "ones, so the Cod-RNA counts stay flat in ε). "
            "The paper's Table 7 prints 12.03% for 14.4 of 117 columns at ε = 1 (14.4/117 = 12.31%).")


def _hyper_discussion(hyper, fig3_choice, plan) -> str:
    lines = []
    valid = hyper[hyper["private_choices"] > 0]
    if len(valid):
        corr = np.corrcoef(valid["epsilon"].rank(), valid["private_n_rounds_median"].rank())[0, 1]
        ratio = float(np.median(valid["private_n_rounds_median"] / valid["paper_n_rounds"]))
        lines.append(f"Rank correlation between ε and the median τ chosen privately: {corr:+.2f} (the paper's τ "
                     "grows with ε: 5-9 at ε = 0.05, 29-99 at ε = 5); median ratio of the private τ to the paper's: "
                     f"{ratio:.2f}. Each private candidate trains with ε/3, which favours short committees.")
    sel = fig3_choice[fig3_choice["delta"] == 0.0] if len(fig3_choice) else fig3_choice
    if len(sel):
        same = []
        for rec in sel.itertuples(index=False):
            k, lam, tau = PAPER["hyper"]["Adult"].get(float(rec.epsilon), (math.nan,) * 3)
            same.append(f"ε={rec.epsilon:g}: {rec.density:g}, {rec.learning_rate:g}, {rec.n_rounds} "
                        f"(paper {k:g}, {lam:g}, {tau})")
        lines.append("Our own non-private re-selection on Adult (κ, λ, τ; Figure 3's δ = 0 selection on a "
                     f"validation part of the training set, grid {_grid_text(plan.fig23_grid)}): "
                     + "; ".join(same) + ".")
    n_grid = len(_grid_points(plan.private_grids["stump"]))
    lines.append(f"PrivateGridSearch tries 1/γ = {1 / plan.private_gamma['stump']:g} random points of the "
                 f"{n_grid}-point grid on average and scores each with a noisy count, so its choices scatter: read its "
                 "columns as a distribution, not as the best setting.")
    return "\n\n".join(lines)


def _fig1_discussion(fig1) -> str:
    if not len(fig1):
        return ""
    r = fig1.iloc[0]
    below = r.first_round_below_gamma
    zero = r.first_round_at_or_below_0
    when = ("never falls below γ" if below is None or (isinstance(below, float) and math.isnan(below))
            else f"first falls below γ at round {int(below)}")
    when0 = ("never reaches 0" if zero is None or (isinstance(zero, float) and math.isnan(zero))
             else f"reaches 0 at round {int(zero)}")
    return (f"The paper: with κ = 1/2 and λ = γ/4 (γ = 1/20), averaged over 10 runs at ε = 1, \"the weak learner "
            "assumption fails after only 250 rounds\"; with a much faster λ (its chosen settings) accuracy is good "
            f"because the assumption holds for small τ. Ours, τ = {int(r.rounds)} rounds (each round ε/{int(r.rounds)}): "
            f"the 10-round mean advantage {when} and {when0}; the best 1-Rule's advantage under the same measures "
            f"is still {r.mean_best_1rule_advantage_last_10:.3f} over the last 10 rounds, so what fails is the "
            "private weak learner (its per-round budget), not the class of 1-Rules. The paper does not say its τ: "
            f"with ε split over τ rounds DP-1R's η = εκn/(4τ) is {32561 * 0.5 / (4 * int(r.rounds)):.1f} here "
            "(Adult's 32561 training records), so the round at which the advantage crosses γ depends on τ and is "
            "not comparable with the paper's 250. "
            "With the Table 8 setting (λ = 0.45, τ = 39) the measure moves fast, the advantage falls quickly, and "
            "the vote still generalises (test accuracy in the table).")


def _fig23_discussion(f23, plan, fig3_choice) -> str:
    def gap(prefix):
        a = f23[f23["method"] == f"{prefix} δ=0"].set_index("epsilon")["mean"]
        b = f23[f23["method"] == f"{prefix} δ=1e-05"].set_index("epsilon")["mean"]
        se = f23[f23["method"] == f"{prefix} δ=0"].set_index("epsilon")["se"]
        common = a.index.intersection(b.index)
        d = (b[common] - a[common])
        return float(d.mean()), int((d > se[common]).sum()), len(common)

    g2, n2, k2 = gap("Fig. 2")
    g3, n3, k3 = gap("Fig. 3")
    taus = []
    if len(fig3_choice):
        for eps, part in fig3_choice.groupby("epsilon", sort=True):
            t = {float(r.delta): int(r.n_rounds) for r in part.itertuples(index=False)}
            taus.append(f"{eps:g}: {t.get(0.0, '?')} / {t.get(PAPER['fig2']['delta'], '?')}")
    return (f"Approximate minus pure DP, mean over ε: Figure 2 {g2:+.3f} (above one standard error at {n2} of {k2} "
            f"ε), Figure 3 {g3:+.3f} ({n3} of {k3}). The paper: with fixed settings (τ = 99) approximate DP is "
            "significantly more accurate at every ε; tuned per ε the advantage is within one standard deviation. "
            "Advanced composition pays off only for large τ (per-round ε of order ε/√τ instead of ε/τ). τ chosen "
            "per ε for δ = 0 / δ = 1e-5: " + "; ".join(taus) + ".")
