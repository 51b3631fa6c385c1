"""The boosting report's discussions: how our numbers compare with paper 002's, and why."""

from __future__ import annotations

import math

import numpy as np

from dpglass_experiments.boosting.plan import (
    APPENDIX_C,
    EPSILONS,
    FIG1,
    FIG2,
    HEADLINE,
    PAPER_COLUMNS,
    PAPER_DATASETS,
    PAPER_FEATURES,
    PAPER_GRIDS,
    PAPER_NAME,
    PAPER_SETTINGS,
    PRIVATE_SUFFIX,
    grid_points,
    grid_text,
)
from dpglass_experiments.report import at_epsilon

__all__ = ["features_discussion", "fig1_discussion", "fig23_discussion", "headline_discussion", "hyper_discussion",
           "int_or", "table2_discussion"]


def int_or(v) -> str:
    """An optional round number as text (``never`` when missing)."""
    return "never" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{int(v)}"


def _mean(frame, dataset, method, eps):
    """The mean of one (dataset, method, epsilon) of a summary (NaN if absent)."""
    part = frame[(frame["dataset"] == dataset) & (frame["method"] == method)]
    part = part[part["epsilon"].isna()] if eps is None else at_epsilon(part, eps)
    return float(part["mean"].iloc[0]) if len(part) else math.nan


def headline_discussion(acc, fine, curse=None, n_grid=0, mushroom=None) -> str:
    """The headline numbers against the paper's, and why they differ.

    ``mushroom``: the Table 10 experiment's sentence, which replaces the a-priori explanation of the Mushroom gap.
    """
    lines = []
    a = _mean(acc, "adult", "LazyBB-stumps", HEADLINE.epsilon)
    if not math.isnan(a):
        lines.append(f"* Adult at ε = {HEADLINE.epsilon:g}: {a:.3f} against the paper's {HEADLINE.value:.2f} "
                     f"({'met' if a >= round(HEADLINE.value - 0.005, 3) else 'not met'}; the paper's Table 4 is one "
                     "model, ours a mean).")
    for paper, spec in PAPER_DATASETS.items():
        v = _mean(acc, spec.name, "LazyBB-stumps", 1.0)
        if math.isnan(v):
            continue
        gap = v - APPENDIX_C[paper]
        lines.append(f"* {paper} at ε = 1: {v:.3f} vs {APPENDIX_C[paper]:.2f} ({gap:+.3f}).")
    gbc = {p: _mean(acc, s.name, "GBC", None) for p, s in PAPER_DATASETS.items()}
    one = {p: _mean(acc, s.name, "1-Rule", None) for p, s in PAPER_DATASETS.items()}
    text = (f"* **Cod-RNA**: the gap is the encoding. With dpglass's 24 columns even the non-private GBC reaches only "
            f"{gbc['Cod-RNA']:.3f} (a single 1-Rule {one['Cod-RNA']:.3f}), below the paper's *private* {APPENDIX_C['Cod-RNA']:.2f}")
    if fine is not None:
        text += (f"; with our finer 72-column encoding LazyBB-stumps at the same settings reaches "
                 f"{_mean(fine, 'cod-rna-fine', 'LazyBB-stumps', 1.0):.3f} and GBC "
                 f"{_mean(fine, 'cod-rna-fine', 'GBC', None):.3f}")
    lines.append(text + ".")
    mush = {e: _mean(acc, "mushroom", "LazyBB-stumps", e) for e in (1.0, 3.0, 5.0)}
    k, lam, tau = PAPER_SETTINGS["Mushroom"][1.0]
    if not math.isnan(mush[1.0]) and mushroom:
        lines.append(f"* **Mushroom**: {mush[1.0]:.3f} at ε = 1 with the paper's (κ = {k:g}, λ = {lam:g}, "
                     f"τ = {tau}). " + mushroom)
    elif not math.isnan(mush[1.0]):
        lines.append(
            f"* **Mushroom**: {mush[1.0]:.3f} at ε = 1 with the paper's (κ = {k:g}, λ = {lam:g}, τ = {tau}); "
            + (f"{mush[3.0]:.3f} and {mush[5.0]:.3f} at ε = 3 and 5. " if not math.isnan(mush[5.0]) else "")
            + "Mushroom has the fewest records (≈ 6500 per training fold): DP-1R's exponential mechanism has "
            "η = εκn/(4τ) ≈ 14 at these settings, so each round's choice is spread over many literals (a weighted-"
            "error gap of 0.1 is only a factor e^1.4 in probability); our encoding (126 columns, 10 constant) is "
            f"not the paper's ({PAPER_COLUMNS['Mushroom']}), and the paper's number is selection-biased (next point).")
    lines.append(_optimism_text(curse, n_grid))
    return "\n".join(line for line in lines if line)


def _optimism_text(curse, n_grid) -> str:
    """How much the paper's tuned numbers may overstate (the winner's curse), as measured here."""
    if curse is None or not len(curse):
        return ("* The paper chose its settings by CV on the same data whose CV accuracy it reports, so its "
                "numbers carry a selection (winner's-curse) bias; the full run measures it on Adult.")
    return ("* **The paper's numbers carry a selection bias**: its settings were chosen by CV on the data whose CV "
            "accuracy it reports (Tables 8-10, Appendix C), the best of "
            f"{len(grid_points(PAPER_GRIDS['stump']))} noisy scores. Measured on Adult with our {n_grid}-point "
            "grid (δ = 0): the best setting's score on one validation split of the training part exceeds the same "
            f"setting's score on another by {curse['optimism'].mean():+.3f} on average over the ε grid "
            f"(largest {curse['optimism'].max():+.3f}, at ε = {curse.loc[curse['optimism'].idxmax(), 'epsilon']:g}); "
            "`fig3_winners_curse.csv`.")


def table2_discussion(acc, datasets) -> str:
    """Table 2's curves in one number each, and the best learners against the paper's statement."""
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


def features_discussion(features) -> str:
    """The features used against the paper's counts."""
    part = features[features["method"] == "LazyBB-stumps"]
    ratio = (part["features_mean"] / part["paper_mean"]).median()
    std = [PAPER_FEATURES["Adult"][e][1] for e in (0.05, 0.1)]
    mean, _, pct = PAPER_FEATURES["Mushroom"][1.0]
    cols = PAPER_COLUMNS["Mushroom"]
    return ("Features used: the number of columns with non-zero net votes (`n_features_used_`); std with ddof = 0 "
            f"as the paper's (its values, e.g. {std[0]:.3f} and {std[1]:.3f} over 5 runs, are population standard "
            "deviations). "
            f"Median ratio of our count to the paper's over all cells: {ratio:.2f}. With the paper's τ per ε, a "
            "model cannot use more than τ columns, so both follow τ (Tables 8-10); the percentages differ also "
            f"because the column counts differ (Cod-RNA: 24 vs {PAPER_COLUMNS['Cod-RNA']} columns, and our 8 x 3 cuts leave few useful "
            "ones, so the Cod-RNA counts stay flat in ε). "
            f"The paper's Table 7 prints {pct:.2f}% for {mean:g} of {cols} columns at ε = 1 "
            f"({mean:g}/{cols} = {100 * mean / cols:.2f}%).")


def _tau_range(eps) -> str:
    taus = [PAPER_SETTINGS[p][eps][2] for p in PAPER_SETTINGS]
    return f"{min(taus)}-{max(taus)}"


def hyper_discussion(hyper, fig3_choice, plan) -> str:
    """The settings chosen privately and by our own re-selection against the paper's."""
    lines = []
    valid = hyper[hyper["private_choices"] > 0]
    if len(valid):
        corr = np.corrcoef(valid["epsilon"].rank(), valid["private_n_rounds_median"].rank())[0, 1]
        ratio = float(np.median(valid["private_n_rounds_median"] / valid["paper_n_rounds"]))
        lo, hi = (_tau_range(e) for e in (min(EPSILONS), max(EPSILONS)))
        lines.append(f"Rank correlation between ε and the median τ chosen privately: {corr:+.2f} (the paper's τ "
                     f"grows with ε: {lo} at ε = {min(EPSILONS):g}, {hi} at ε = {max(EPSILONS):g}); median ratio of "
                     "the private τ to the paper's: "
                     f"{ratio:.2f}. Each private candidate trains with ε/3, which favours short committees.")
    sel = fig3_choice[fig3_choice["delta"] == 0.0] if len(fig3_choice) else fig3_choice
    if len(sel):
        same = []
        for rec in sel.itertuples(index=False):
            k, lam, tau = PAPER_SETTINGS["Adult"].get(float(rec.epsilon), (math.nan,) * 3)
            same.append(f"ε={rec.epsilon:g}: {rec.density:g}, {rec.learning_rate:g}, {rec.n_rounds} "
                        f"(paper {k:g}, {lam:g}, {tau})")
        lines.append("Our own non-private re-selection on Adult (κ, λ, τ; Figure 3's δ = 0 selection on a "
                     f"validation part of the training set, grid {grid_text(plan.fig23_grid)}): "
                     + "; ".join(same) + ".")
    n_grid = len(grid_points(plan.private_grids["stump"]))
    lines.append(f"PrivateGridSearch tries 1/γ = {1 / plan.private_gamma['stump']:g} random points of the "
                 f"{n_grid}-point grid on average and scores each with a noisy count, so its choices scatter: read its "
                 "columns as a distribution, not as the best setting.")
    return "\n\n".join(lines)


def fig1_discussion(fig1) -> str:
    """Figure 1 against the paper's statement on the weak-learner assumption."""
    if not len(fig1):
        return ""
    r = fig1.iloc[0]
    below = r.first_round_below_gamma
    zero = r.first_round_at_or_below_0
    when = ("never falls below γ" if below is None or (isinstance(below, float) and math.isnan(below))
            else f"first falls below γ at round {int(below)}")
    when0 = ("never reaches 0" if zero is None or (isinstance(zero, float) and math.isnan(zero))
             else f"reaches 0 at round {int(zero)}")
    _, lam, tau = PAPER_SETTINGS["Adult"][1.0]
    return (f"The paper: with κ = 1/2 and λ = γ/4 (γ = 1/20), averaged over {FIG1['runs']} runs at ε = 1, \"the weak "
            f"learner assumption fails after only {FIG1['fails_after']} rounds\"; with a much faster λ (its chosen settings) accuracy is good "
            f"because the assumption holds for small τ. Ours, τ = {int(r.rounds)} rounds (each round ε/{int(r.rounds)}): "
            f"the 10-round mean advantage {when} and {when0}; the best 1-Rule's advantage under the same measures "
            f"is still {r.mean_best_1rule_advantage_last_10:.3f} over the last 10 rounds, so what fails is the "
            "private weak learner (its per-round budget), not the class of 1-Rules. The paper does not say its τ: "
            f"with ε split over τ rounds DP-1R's η = εκn/(4τ) is {32561 * 0.5 / (4 * int(r.rounds)):.1f} here "
            "(Adult's 32561 training records), so the round at which the advantage crosses γ depends on τ and is "
            f"not comparable with the paper's {FIG1['fails_after']}. "
            f"With the Table 8 setting (λ = {lam:g}, τ = {tau}) the measure moves fast, the advantage falls quickly, and "
            "the vote still generalises (test accuracy in the table).")


def fig23_discussion(f23, plan, fig3_choice) -> str:
    """Figures 2-3: the gain of approximate DP, and the settings chosen."""
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
            taus.append(f"{eps:g}: {t.get(0.0, '?')} / {t.get(FIG2['delta'], '?')}")
    return (f"Approximate minus pure DP, mean over ε: Figure 2 {g2:+.3f} (above one standard error at {n2} of {k2} "
            f"ε), Figure 3 {g3:+.3f} ({n3} of {k3}). The paper: with fixed settings (τ = {FIG2['n_rounds']}) "
            "approximate DP is significantly more accurate at every ε; tuned per ε the advantage is within one standard deviation. "
            "Advanced composition pays off only for large τ (per-round ε of order ε/√τ instead of ε/τ). τ chosen "
            "per ε for δ = 0 / δ = 1e-5: " + "; ".join(taus) + ".")
