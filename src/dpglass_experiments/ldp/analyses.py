"""The analyses of the LDP reproduction: a simulated distribution with known eta, the data sets, the fits.

The simulated distribution ``S`` (used to choose the auto bandwidth's constant
and for the rate experiment, never to evaluate on make_moons):
``X ~ U[0, 1]^2``, ``eta(x) = 1/2 + 1/2 clip(4 (x_2 - 1/2 - 0.2 sin(2 pi x_1)), -1, 1)``.
``eta`` is Lipschitz (beta = 1) and, X being uniform and the boundary a smooth
curve, ``P(0 < |eta - 1/2| <= t) <= C t`` (margin gamma = 1).  Its excess risk
``E[|2 eta(X) - 1| 1{C(X) != C*(X)}]`` is computed on a fine grid of the
square (no test sampling).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification, make_moons

from dpglass.local import HistogramClassifier, LDPHistogramClassifier

__all__ = ["SIM_BOUNDS", "MOONS_BOUNDS", "sim_eta", "sim_sample", "excess_risk", "fit_ldp", "calibrate",
           "accuracy_vs_alpha", "rate_vs_n", "adult_comparison"]

SIM_BOUNDS = ([0.0, 0.0], [1.0, 1.0])
MOONS_BOUNDS = ([-1.5, -1.0], [2.5, 1.5])
#: beta (Hölder) and gamma (margin) of S, and Theorem 3's exponent beta (1 + gamma) / (2 beta + 2 d).
SIM_BETA, SIM_GAMMA, SIM_D = 1.0, 1.0, 2
MINIMAX_EXPONENT = SIM_BETA * (1 + SIM_GAMMA) / (2 * SIM_BETA + 2 * SIM_D)
_EVAL = 400  # excess risk on a 400 x 400 grid of cell midpoints


def sim_eta(X: np.ndarray) -> np.ndarray:
    return 0.5 + 0.5 * np.clip(4.0 * (X[:, 1] - 0.5 - 0.2 * np.sin(2 * math.pi * X[:, 0])), -1.0, 1.0)


def sim_sample(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.random((n, 2))
    return X, (rng.random(n) < sim_eta(X)).astype(np.int8)


def _eval_grid() -> np.ndarray:
    t = (np.arange(_EVAL) + 0.5) / _EVAL
    return np.array(np.meshgrid(t, t)).reshape(2, -1).T


def excess_risk(clf) -> float:
    G = _eval_grid()
    eta = sim_eta(G)
    wrong = clf.predict(G) != (eta >= 0.5)
    return float(np.mean(np.abs(2 * eta - 1) * wrong))


def fit_ldp(X, y, alpha, bounds, randomizer, seed, bandwidth="auto"):
    return LDPHistogramClassifier(alpha=alpha, bandwidth=bandwidth, bounds=bounds, randomizer=randomizer,
                                  random_state=np.random.SeedSequence(seed)).fit(X, y)


def calibrate(plan, base_seed: int = 0) -> pd.DataFrame:
    """Excess risk on S of ``h = c (n alpha^2)^(-1/6)`` for each c, randomizer and n (alpha = 1)."""
    rows = []
    for randomizer, cs in plan.calib_constants.items():
        for n in plan.calib_n:
            for s in range(plan.calib_seeds):
                rng = np.random.default_rng([base_seed, 11, n, s])
                X, y = sim_sample(n, rng)
                for c in cs:
                    h = min(1.0, c * n ** (-1 / 6))
                    clf = fit_ldp(X, y, 1.0, SIM_BOUNDS, randomizer, [base_seed, 12, n, s], bandwidth=h)
                    rows.append({"randomizer": randomizer, "n": n, "seed": s, "c": c, "h": h,
                                 "excess_risk": excess_risk(clf)})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ data sets
CLASSIF_BOUNDS = ([-4.0, -4.0], [4.0, 4.0])


def dataset(name: str, n_train: int, n_test: int, seed):
    """Train and test samples of a simulated distribution (fixed law; the seed only draws the sample)."""
    rng = np.random.default_rng(seed)
    if name == "make_moons":
        X, y = make_moons(n_train + n_test, noise=0.2, random_state=int(rng.integers(2**31)))
        bounds = MOONS_BOUNDS
    elif name == "make_classification":
        # the law depends on random_state (cluster centres): fixed at 0, the sample drawn by shuffling a large pool
        X, y = make_classification(max(n_train + n_test, 400_000), n_features=2, n_informative=2, n_redundant=0,
                                   n_clusters_per_class=1, class_sep=1.0, random_state=0)
        idx = rng.permutation(len(y))[: n_train + n_test]
        X, y = X[idx], y[idx]
        bounds = CLASSIF_BOUNDS
    else:
        X, y = sim_sample(n_train + n_test, rng)
        bounds = SIM_BOUNDS
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], bounds


def accuracy_vs_alpha(plan, base_seed: int = 0) -> pd.DataFrame:
    rows = []
    for name in ("make_moons", "make_classification"):
        for s in range(plan.seeds):
            Xtr, ytr, Xte, yte, bounds = dataset(name, plan.n_alpha, plan.n_test, [base_seed, 21, s])
            for alpha in plan.alphas:
                for randomizer in ("laplace", "oue"):
                    clf = fit_ldp(Xtr, ytr, alpha, bounds, randomizer, [base_seed, 22, s, int(alpha * 1000)])
                    ref = HistogramClassifier(bandwidth=clf.bandwidth_, bounds=bounds).fit(Xtr, ytr)
                    rows.append({"dataset": name, "seed": s, "alpha": alpha, "method": randomizer,
                                 "h": clf.bandwidth_, "accuracy": clf.score(Xte, yte),
                                 "non_private_same_h": ref.score(Xte, yte)})
    return pd.DataFrame(rows)


def rate_vs_n(plan, base_seed: int = 0) -> pd.DataFrame:
    rows = []
    for s in range(plan.seeds):
        for n in plan.rate_n:
            X, y = sim_sample(n, np.random.default_rng([base_seed, 31, n, s]))
            for alpha in plan.rate_alphas:
                for randomizer in ("laplace", "oue"):
                    clf = fit_ldp(X, y, alpha, SIM_BOUNDS, randomizer, [base_seed, 32, n, s, int(alpha * 1000)])
                    rows.append({"n": n, "seed": s, "alpha": alpha, "method": randomizer, "h": clf.bandwidth_,
                                 "excess_risk": excess_risk(clf)})
    return pd.DataFrame(rows)


def fitted_slopes(rate: pd.DataFrame) -> pd.DataFrame:
    """Least-squares slope of log(mean excess risk) on log(n), per (method, alpha)."""
    out = []
    mean = rate.groupby(["method", "alpha", "n"], as_index=False)["excess_risk"].mean()
    for (m, a), g in mean.groupby(["method", "alpha"]):
        g = g[g["excess_risk"] > 0]
        slope = float(np.polyfit(np.log(g["n"]), np.log(g["excess_risk"]), 1)[0]) if len(g) >= 2 else float("nan")
        out.append({"method": m, "alpha": a, "fitted_slope": slope, "minimax_slope": -MINIMAX_EXPONENT})
    return pd.DataFrame(out)


# ----------------------------------------------------------------------- Adult
ADULT_BOUNDS = ([17.0, 1.0], [90.0, 99.0])


def load_adult_two(data_home=None) -> tuple[pd.DataFrame, np.ndarray]:
    """UCI Adult (adult.data + adult.test): age, hours-per-week, and y = income >50K."""
    from dpglass.datasets._home import get_data_home

    home = Path(get_data_home(data_home))
    frames = []
    for f, skip in (("adult.data", 0), ("adult.test", 1)):
        frames.append(pd.read_csv(home / "raw" / "adult" / f, header=None, skiprows=skip, skipinitialspace=True,
                                  usecols=[0, 12, 14], names=["age", "hours_per_week", "income"]))
    frame = pd.concat(frames, ignore_index=True).dropna()
    y = frame["income"].astype(str).str.rstrip(".").eq(">50K").to_numpy(np.int8)
    return frame[["age", "hours_per_week"]].astype(float), y


def adult_comparison(plan, base_seed: int = 0, data_home=None) -> pd.DataFrame:
    """LDP (both randomizers) vs central DP (DP logistic regression, DP rule list on the schema) at epsilon = alpha."""
    from dpglass.models import DPLogisticRegression, DPPipeline, DPRuleListClassifier
    from dpglass.schema import Schema, numeric

    import warnings

    X, y = load_adult_two(data_home)
    schema = Schema([numeric("age", 17, 90, n_thresholds=8), numeric("hours_per_week", 1, 99, n_thresholds=8)])
    rows = []
    for s in range(plan.seeds):
        perm = np.random.default_rng([base_seed, 41, s]).permutation(len(y))
        cut = int(0.7 * len(y))
        tr, te = perm[:cut], perm[cut:]
        Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], y[tr], y[te]
        rows.append({"seed": s, "alpha": float("nan"), "method": "majority class",
                     "accuracy": float(np.mean(yte == int(ytr.mean() >= 0.5)))})
        for alpha in plan.adult_alphas:
            for randomizer in ("laplace", "oue"):
                clf = fit_ldp(Xtr.to_numpy(), ytr, alpha, ADULT_BOUNDS, randomizer, [base_seed, 42, s, int(alpha * 1000)])
                rows.append({"seed": s, "alpha": alpha, "method": f"LDP {randomizer}", "h": clf.bandwidth_,
                             "accuracy": clf.score(Xte.to_numpy(), yte)})
            for label, model in (("central DP-LR", DPLogisticRegression()),
                                 # certified-pf: the default when these results were committed
                                 ("central DP rule list", DPRuleListClassifier(max_length=5, mechanism="certified-pf"))):
                pipe = DPPipeline(schema=schema, model=model, epsilon=alpha,
                                  random_state=np.random.SeedSequence([base_seed, 43, s, int(alpha * 1000)]))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pipe.fit(Xtr, ytr)
                rows.append({"seed": s, "alpha": alpha, "method": label, "accuracy": float(pipe.score(Xte, yte))})
        ref = HistogramClassifier(bandwidth=0.05, bounds=ADULT_BOUNDS).fit(Xtr.to_numpy(), ytr)
        rows.append({"seed": s, "alpha": float("nan"), "method": "non-private histogram (h=0.05)",
                     "accuracy": ref.score(Xte.to_numpy(), yte)})
    return pd.DataFrame(rows)


def target_check(plan, base_seed: int = 0) -> pd.DataFrame:
    """make_moons (noise 0.2) at alpha = 1, auto bandwidth: test accuracy vs number of reports."""
    rows = []
    for s in range(plan.seeds):
        for n in plan.target_n:
            Xtr, ytr, Xte, yte, bounds = dataset("make_moons", n, plan.n_test, [base_seed, 51, n, s])
            for randomizer in ("laplace", "oue"):
                clf = fit_ldp(Xtr, ytr, 1.0, bounds, randomizer, [base_seed, 52, n, s])
                rows.append({"n": n, "seed": s, "method": randomizer, "h": clf.bandwidth_,
                             "accuracy": clf.score(Xte, yte)})
    return pd.DataFrame(rows)
