"""Paper 001's experiments that are not plain sweeps, and its tables beside the paper's numbers.

* :func:`noise_amplitude_table` (Fig. 1), :func:`run_table3` (Table III:
  permutation importance, :mod:`dpglass_experiments.importance`), :func:`run_mia`
  (Appendix C: shadow-model attack, :mod:`dpglass.audit.membership`);
* :func:`hyper_methods` (Section V-D's K and lambda grids as sweep methods),
  :func:`alternative_datasets` (other files for COMPAS and Adult);
* :func:`table1`, :func:`table2`, :func:`table3`, :func:`alternatives_table`:
  our numbers beside :data:`~dpglass_experiments.rule_lists.plan.NUMBERS`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from dpglass_experiments.cells import cell_estimator
from dpglass_experiments.report import at_epsilon
from dpglass_experiments.rule_lists.plan import ALTERNATIVES, NUMBERS, PAPER_DATASETS, Plan, method
from dpglass_experiments.seeding import cell_seed, split_indices
from dpglass_experiments.specs import DatasetSpec

__all__ = [
    "alternative_datasets",
    "alternatives_table",
    "hyper_methods",
    "noise_amplitude_table",
    "run_mia",
    "run_table3",
    "table1",
    "table2",
    "table3",
]


# ------------------------------------------------------------------ Fig. 1
def noise_amplitude_table(epsilon: float = 1.0, delta: float = 1e-8, gamma: float = 4.0, n_max: int = 100_000):
    """Noise scale on one Gini impurity vs the number of records n (Fig. 1).

    Smooth sensitivity S* (dpglass's corrected closed form, minimum support 1):
    Laplace scale 2 S*/epsilon with beta = epsilon / (2 ln(2/delta)); Cauchy-like
    (gamma) scale 2 (gamma+1) S*/epsilon with beta = epsilon / (2 (gamma+1)).
    Global sensitivity 0.5: Laplace 0.5/epsilon (the paper's noisy Gini) and
    2 x 0.5/epsilon (dpglass's report-noisy-min for non-monotone scores).
    Also the exponential-noise scale 2 g(n-1)/epsilon of ``certified-pf`` at a
    certified count n.
    """
    from dpglass.privacy.mechanisms import SmoothCauchyMechanism, SmoothLaplaceMechanism
    from dpglass.privacy.sensitivity import GINI_GLOBAL_SENSITIVITY, gini_local_sensitivity, gini_smooth_sensitivity

    n = np.unique(np.round(np.logspace(1, math.log10(n_max), 120)).astype(np.int64))
    lap, cau = SmoothLaplaceMechanism(epsilon, delta), SmoothCauchyMechanism(epsilon, gamma)
    curves = [
        ("global sensitivity, Laplace (paper: 0.5/ε)", "gl-Laplace", np.full(n.shape, GINI_GLOBAL_SENSITIVITY / epsilon)),
        ("global sensitivity, report-noisy-min (1/ε)", "gl-Laplace (dpglass)", np.full(n.shape, 2 * GINI_GLOBAL_SENSITIVITY / epsilon)),
        ("smooth sensitivity, Laplace", "sm-Laplace", np.asarray(lap.scale(gini_smooth_sensitivity(n, lap.beta)))),
        (f"smooth sensitivity, Cauchy (γ={gamma:g})", "sm-Cauchy", np.asarray(cau.scale(gini_smooth_sensitivity(n, cau.beta)))),
        ("certified-pf, exponential 2g(n-1)/ε", "certified-pf", 2 * np.asarray(gini_local_sensitivity(n)) / epsilon),
    ]
    return pd.concat(
        [pd.DataFrame({"curve": c, "method": m, "n": n, "scale": s, "epsilon": epsilon, "delta": delta}) for c, m, s in curves],
        ignore_index=True,
    )


# ------------------------------------------------------------- Table III
def _table3_seed(dataset, seed, base_seed, epsilons, k, n_repeats, data_home):
    from threadpoolctl import threadpool_limits

    from dpglass_experiments.importance import permutation_importance, top_features

    X, y, _ = dataset.load(data_home)
    tr, te = split_indices(len(y), cell_seed(base_seed, dataset.name, seed))

    def importance(model, label, eps=None):
        rng = np.random.default_rng(cell_seed(base_seed, dataset.name, seed, f"importance {label}", eps))
        return permutation_importance(model, X[te], y[te], rng, n_repeats)

    rows = []
    with threadpool_limits(1):
        ref = cell_estimator(dataset, method("GreedyRL"), None, None).fit(X[tr], y[tr])
        imp_ref = importance(ref, "GreedyRL")
        for name in ("sm-Laplace", "gl-Laplace"):
            for eps in epsilons:
                model = cell_estimator(dataset, method(name), eps, cell_seed(base_seed, dataset.name, seed, name, eps))
                model.fit(X[tr], y[tr])
                imp = importance(model, name, eps)
                ties = np.random.default_rng(cell_seed(base_seed, dataset.name, seed, f"importance ties {name}", eps))
                rows.append({
                    "dataset": dataset.name, "method": name, "epsilon": eps, "seed": seed,
                    "I_k": len(top_features(imp_ref, k) & top_features(imp, k)) / k,
                    "I_k_ties_random": len(top_features(imp_ref, k, "random", ties)
                                           & top_features(imp, k, "random", ties)) / k,
                    "I_k_ties_by_column": len(top_features(imp_ref, k, "column") & top_features(imp, k, "column")) / k,
                    "n_important_ref": int((imp_ref > 0).sum()), "n_important_dp": int((imp > 0).sum()),
                })
    return rows


def run_table3(plan: Plan, *, base_seed=0, n_jobs=2, data_home=None, k=7, n_repeats=5):
    """Table III: feature-intersection ratio I_k of GreedyRL vs DP models on Adult."""
    from joblib import Parallel, delayed

    dataset = PAPER_DATASETS["Adult"]
    eps = (1.0, 10.0)
    jobs = (delayed(_table3_seed)(dataset, s, base_seed, eps, k, n_repeats, data_home) for s in range(plan.table3_seeds))
    rows = [r for part in Parallel(n_jobs=n_jobs)(jobs) for r in part]
    return pd.DataFrame(rows)


# ----------------------------------------------------------- Appendix C
def _mia_repeat(dataset, rep, base_seed, targets, n_shadows, data_home):
    from threadpoolctl import threadpool_limits

    from dpglass.audit.membership import attack_split, shadow_model_attack

    X, y, _ = dataset.load(data_home)
    rng = np.random.default_rng(cell_seed(base_seed, dataset.name, rep, "mia split"))
    members, non_members, shadow_pool = attack_split(len(y), rng)
    out = []
    with threadpool_limits(1):
        for label, name, eps in targets:
            def make(role, name=name, eps=eps):
                return cell_estimator(dataset, method(name), eps,
                                      cell_seed(base_seed, dataset.name, rep, f"mia {role} {name}", eps))

            s_in, s_out = shadow_model_attack(make, X, y, members, non_members, shadow_pool, n_shadows=n_shadows,
                                              rng=rng)
            out.append((dataset.name, label, rep, s_in, s_out))
    return out


def run_mia(plan: Plan, *, base_seed=0, n_jobs=2, data_home=None):
    """Appendix C: shadow-model attack on GreedyRL, sm-Laplace and certified-pf (epsilon = 10).

    Returns the ROC points (pooled over repetitions) and a summary with the
    AUC and the TPR at FPR = 0.1% and 1%.
    """
    from joblib import Parallel, delayed
    from sklearn.metrics import roc_auc_score, roc_curve

    targets = [("GreedyRL", "GreedyRL", None), ("sm-Laplace (ε=10)", "sm-Laplace", 10.0), ("certified-pf (ε=10)", "certified-pf", 10.0)]
    datasets = [PAPER_DATASETS["German"], PAPER_DATASETS["COMPAS"]]
    jobs = (delayed(_mia_repeat)(d, r, base_seed, targets, plan.mia_shadows, data_home)
            for d in datasets for r in range(plan.mia_repeats))
    results = [x for part in Parallel(n_jobs=n_jobs)(jobs) for x in part]
    roc_rows, summary = [], []
    for d in datasets:
        for label, _, _ in targets:
            parts = [(a, b) for (dn, lb, _, a, b) in results if dn == d.name and lb == label]
            s_in = np.concatenate([a for a, _ in parts])
            s_out = np.concatenate([b for _, b in parts])
            truth = np.concatenate([np.ones(len(s_in)), np.zeros(len(s_out))])
            scores = np.concatenate([s_in, s_out])
            fpr, tpr, _ = roc_curve(truth, scores)
            auc = float(roc_auc_score(truth, scores))
            roc_rows.append(pd.DataFrame({"dataset": d.name, "method": label, "fpr": fpr, "tpr": tpr, "auc": auc}))
            summary.append({
                "dataset": d.name, "method": label, "members": len(s_in), "non_members": len(s_out), "auc": auc,
                "tpr_at_fpr_0_1pct": float(tpr[fpr <= 0.001].max()), "tpr_at_fpr_1pct": float(tpr[fpr <= 0.01].max()),
                "repeats": plan.mia_repeats, "shadow_models": plan.mia_shadows,
            })
    return pd.concat(roc_rows, ignore_index=True), pd.DataFrame(summary)


# --------------------------------------------------------- Section V-D
def hyper_methods(plan: Plan):
    """Methods of the K and lambda sweeps, and what each stands for."""
    families = ("GreedyRL", "sm-Laplace", "sm-Cauchy", "gl-Laplace", "certified-pf")
    methods, meaning = [], {}
    for fam in families:
        base = method(fam)
        for k in plan.hyper_K:
            name = f"{fam} K={k}"
            methods.append(replace(base, name=name, params=dict(base.params, max_length=k)))
            meaning[name] = (fam, "K", float(k))
        for lam in plan.hyper_lambdas:
            name = f"{fam} lambda={lam:g}"
            methods.append(replace(base, name=name, params=dict(base.params, min_support=lam)))
            meaning[name] = (fam, "lambda", float(lam))
    return methods, meaning


# ------------------------------------------------------------ alternatives
def alternative_datasets(data_home=None):
    """Files that could stand for COMPAS and Adult, measured for the report (not used elsewhere)."""
    from dpglass.datasets import get_data_home

    alts = list(ALTERNATIVES)
    path = Path(get_data_home(data_home)) / "binarized" / "adult" / "adult_rules_full_single.csv"
    if path.exists():
        alts.append(("Adult", DatasetSpec("adult_rules_full_single.csv", source=str(path), target="income",
                                          params={"max_card": 1, "allow_negations": True, "min_support": 0.05})))
    return alts


def alternatives_table(frame: pd.DataFrame, alts) -> pd.DataFrame:
    rows = []
    for paper, spec in alts:
        rec = {"paper dataset": paper, "file": f"`{spec.name}`", "max_card": spec.params["max_card"]}
        for name in ("GreedyRL", "sm-Laplace"):
            part = frame[(frame["dataset"] == spec.name) & (frame["method"] == name)]["test_accuracy"].dropna()
            rec[f"{name} test acc."] = f"{part.mean():.3f} ± {part.std() / math.sqrt(len(part)):.1g}" if len(part) > 1 else "n/a"
            rec[f"paper {name}"] = f"{NUMBERS.get('accuracy', source='Table II', dataset=paper, method=name):.3f}"
        rows.append(rec)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ tables
def table1(acc: pd.DataFrame) -> pd.DataFrame:
    """Table I: our standard error of the mean test accuracy beside the paper's."""
    rows = []
    for n in NUMBERS.rows("accuracy_se", source="Table I"):
        part = at_epsilon(acc[acc["method"] == n.method], n.epsilon)
        r = part[part["dataset"] == PAPER_DATASETS[n.dataset].name]
        rows.append({"method": n.method, "epsilon": n.epsilon, "dataset": n.dataset,
                     "se_ours": float(r["se"].iloc[0]) if len(r) else math.nan,
                     "se_paper": n.value, "n_seeds": int(r["n"].iloc[0]) if len(r) else 0})
    return pd.DataFrame(rows)


def table2(main: pd.DataFrame) -> pd.DataFrame:
    """Table II: vulnerability and test accuracy at epsilon = 10 beside the paper's (and their ``±``)."""
    rows = []
    for name in ("COMPAS", "German", "Adult"):
        ds = PAPER_DATASETS[name].name
        for m in ("GreedyRL", "sm-Laplace", "certified-pf"):
            part = main[(main["dataset"] == ds) & (main["method"] == m)]
            if m != "GreedyRL":
                part = at_epsilon(part, 10.0)
            part = part.dropna(subset=["test_accuracy"])
            n = len(part)
            vul = NUMBERS.rows("vulnerability", source="Table II", dataset=name, method=m)
            acc = NUMBERS.rows("accuracy", source="Table II", dataset=name, method=m)
            rows.append({
                "dataset": name, "method": m, "epsilon": 10.0 if m != "GreedyRL" else math.nan, "n_seeds": n,
                "vulnerability": part["vulnerability"].mean(), "vulnerability_se": part["vulnerability"].std() / math.sqrt(n),
                "vulnerability_var": part["vulnerability"].var(),
                "accuracy": part["test_accuracy"].mean(), "accuracy_se": part["test_accuracy"].std() / math.sqrt(n),
                "accuracy_var": part["test_accuracy"].var(),
                "paper_vulnerability": vul[0].text if vul else "", "paper_vulnerability_pm": vul[0].error if vul else math.nan,
                "paper_accuracy": acc[0].value if acc else math.nan, "paper_accuracy_pm": acc[0].error if acc else math.nan,
            })
    return pd.DataFrame(rows)


def table3(t3: pd.DataFrame) -> pd.DataFrame:
    """Table III: mean feature-intersection ratios (three tie rules) beside the paper's I_7."""
    rows = []
    for (eps, m), part in t3.groupby(["epsilon", "method"], sort=True):
        n = len(part)
        paper = NUMBERS.rows("I_7", source="Table III", method=m, epsilon=eps)
        rows.append({
            "epsilon": eps, "method": m, "n_seeds": n,
            "I_k": part["I_k"].mean(), "I_k_se": part["I_k"].std() / math.sqrt(n) if n > 1 else math.nan,
            "I_k_ties_random": part["I_k_ties_random"].mean(),
            "I_k_ties_random_se": part["I_k_ties_random"].std() / math.sqrt(n) if n > 1 else math.nan,
            "I_k_ties_by_column": part["I_k_ties_by_column"].mean(),
            "I_k_ties_by_column_se": part["I_k_ties_by_column"].std() / math.sqrt(n) if n > 1 else math.nan,
            "paper_I_k": paper[0].value if paper else math.nan, "paper_pm": paper[0].error if paper else math.nan,
        })
    return pd.DataFrame(rows)
