"""``report.md`` of ``dpglass reproduce ldp``: the figures, their numbers and what they show."""

from __future__ import annotations

import pandas as pd

from dpglass_experiments.ldp.analyses import MINIMAX_EXPONENT, SIM_BETA, SIM_GAMMA
from dpglass_experiments.ldp.plan import CITATION, TITLE
from dpglass_experiments.report import md_table
from dpglass.local import AUTO_BANDWIDTH_CONSTANT

__all__ = ["write_report"]


def _pm(frame: pd.DataFrame, by, value: str) -> pd.DataFrame:
    g = frame.groupby(by, dropna=False)[value].agg(["mean", "sem", "count"]).reset_index()
    g[value] = [f"{m:.3f} ± {s:.3f}" if c > 1 else f"{m:.3f}" for m, s, c in zip(g["mean"], g["sem"].fillna(0),
                                                                                g["count"])]
    return g.drop(columns=["mean", "sem", "count"])


def _target_lines(target: pd.DataFrame) -> list[str]:
    m = target.groupby(["method", "n"])["accuracy"].mean().unstack(0)
    lines = []
    for method in ("laplace", "oue"):
        if method not in m:
            continue
        at = m[method]
        reached = at[at >= 0.85]
        first = f"first reaches 0.85 (mean over seeds) at n = {int(reached.index[0]):,}" if len(reached) else \
            "never reaches 0.85 (mean over seeds) on this grid"
        biggest = int(at.index.max())
        lines.append(f"- `{method}`: mean accuracy {at.iloc[-1]:.3f} at n = {biggest:,}; {first}.")
    return lines


def _findings(res) -> list[str]:
    """What the figures show, with the measured numbers."""
    acc, target, slopes = res["acc"], res["target"], res["slopes"]
    out = ["## What the figures show", ""]
    a1 = acc[(acc["dataset"] == "make_moons") & (acc["alpha"] == 1.0)]
    t_big = target[target["n"] == target["n"].max()]
    t_200 = target[target["n"] == 200_000] if (target["n"] == 200_000).any() else t_big
    lap = sorted(a1[a1["method"] == "laplace"]["accuracy"].round(3).tolist()
                 + t_200[t_200["method"] == "laplace"]["accuracy"].round(3).tolist())
    oue = sorted(a1[a1["method"] == "oue"]["accuracy"].round(3).tolist()
                 + t_200[t_200["method"] == "oue"]["accuracy"].round(3).tolist())
    out += [
        "- **The slides' mechanism is a lottery at alpha = 1 on make_moons.** With the auto bandwidth the grid has "
        "only a few cells per axis, and a cell whose cube is balanced (T close to 0 without noise) is decided by the "
        f"noise; its sign moves the accuracy by about 0.14. Every laplace run at n = {int(t_200['n'].iloc[0]):,}, "
        f"alpha = 1 in this report (both experiments, different samples and noise): {lap}. The non-private rule "
        "with the same h is on the low side (about 0.74): the noise sometimes helps because the cube of radius h "
        "around a centre is larger than the region it labels. The target (0.85) is therefore met on average only "
        "from about 4·10^5 reports with the slides' mechanism.",
        f"- **The unary-encoding randomizer meets it with fewer reports, reliably**: at the same n its runs give "
        f"{oue}; it also reaches 0.85 from 5·10^4 reports (table above), several times fewer. Its finer auto "
        "bandwidth (c = 1.4 instead of 2.8) is what its lower variance buys.",
        "- **Accuracy vs alpha**: `oue` rises with alpha and tracks the non-private rule with its own h at every "
        "alpha. `laplace` is not monotone: it follows the non-private rule at its own, coarse h (from alpha = 4 "
        "closely), and that rule's accuracy jumps with where the grid's cells fall (on make_moons 0.79 at "
        "h = 0.46, 0.74 at h = 0.37, 0.90 at h = 0.29); below alpha = 4 the noise adds its own lottery.",
    ]
    lap_s = slopes[slopes["method"] == "laplace"]["fitted_slope"].round(2).tolist()
    oue_s = slopes[slopes["method"] == "oue"]["fitted_slope"].round(2).tolist()
    out += [
        f"- **Rates.** Fitted log-log slopes of the excess risk on S: laplace {lap_s}, oue {oue_s} (alpha = "
        "1 and 4), against Theorem 3's -1/3 for beta = gamma = 1, d = 2. `oue` is close to the minimax exponent "
        "(it is a rate-optimal estimator of the same histograms); `laplace` is steeper because the smallest n "
        "are still in the noise-dominated regime (excess risk near that of a random labelling), a pre-asymptotic "
        "effect, not a faster rate.",
        "- **Adult (age, hours-per-week)** carries little signal: the majority class (0.764) is as good as "
        "anything, private or not (the non-private histogram reaches 0.769). Central DP at the same epsilon "
        "costs nothing here (its models stay at or near the majority vote); LDP costs 0.001 to 0.01 of accuracy "
        "with `oue` and 0.004 to 0.045 with the slides' mechanism, which stays below the majority class at every "
        "alpha. With so little signal this shows the price of LDP, not what it can learn.",
        "",
    ]
    return out


def write_report(run, res) -> None:
    plan = run.plan
    calib = res["calib"].groupby(["randomizer", "n", "c"])["excess_risk"].mean().unstack(["randomizer", "n"])
    calib = calib.reset_index().round(4)
    calib.columns = [" ".join(str(x) for x in c if str(x)) if isinstance(c, tuple) else str(c)
                     for c in calib.columns]
    acc = _pm(res["acc"], ["dataset", "alpha", "method"], "accuracy")
    ref = res["acc"].groupby(["dataset", "alpha", "method"])[["h", "non_private_same_h"]].mean().round(4)
    acc = acc.merge(ref.reset_index(), on=["dataset", "alpha", "method"])
    target = _pm(res["target"], ["n", "method"], "accuracy")
    rate = _pm(res["rate"], ["method", "alpha", "n"], "excess_risk")
    slopes = res["slopes"].round(3)
    parts = [
        f"# {TITLE}", "",
        CITATION, "",
        f"Plan: **{'quick' if run.quick else 'full'}** (`dpglass reproduce ldp{' --quick' if run.quick else ''}`), "
        f"seed {run.base_seed}; {run.timings.get('total_seconds', 0):.0f} s in all. Every classifier is fitted "
        "from alpha-LDP reports only (both randomizers are exact: integer or bit reports). `laplace` is the "
        "slides' mechanism (discrete Laplace of scale 2^(d+1)/alpha on the cube indicators), `oue` the "
        "lower-variance randomizer (optimized unary encoding of the record's (cell, label)). Bandwidth: "
        f"`auto`, h = c (n alpha^2)^(-1/(2d+2)) with c = {AUTO_BANDWIDTH_CONSTANT['laplace']} (laplace) and "
        f"{AUTO_BANDWIDTH_CONSTANT['oue']} (oue).", "",
        "## Choosing c (simulated distribution S, never an evaluation set)", "",
        "S: X uniform on [0,1]^2, eta(x) = 1/2 + 1/2 clip(4 (x2 - 1/2 - 0.2 sin(2 pi x1)), -1, 1). Excess risk "
        "(exact, on a 400 x 400 grid) at alpha = 1, mean over seeds:", "",
        md_table(calib), "",
        "![calibration](calibration.png)", "",
        "The constants of `dpglass.local.AUTO_BANDWIDTH_CONSTANT` are the minimisers of the mean over the two "
        "sample sizes in the full run (laplace 2.8, oue 1.4). Their ratio, about 2, is what the noise levels "
        "predict: the optimal h scales as (noise variance)^(1/(2d+2)), and the variance of T per report is "
        "about 320/alpha^2 (laplace, d = 2) against 7.4 (oue, alpha = 1): (320/7.4)^(1/6) = 1.9. The curves "
        "are not smooth in c: the grid is coarse (a few cells per axis), so where the cell edges fall "
        "relative to the decision boundary matters as much as h itself.", "",
        "## Accuracy vs alpha (the slides' numerical experiments)", "",
        f"n = {plan.n_alpha:,} reports, {plan.n_test:,} test points, {plan.seeds} seed(s); "
        "`non_private_same_h`: the same plug-in rule with exact indicators and the same h. The slides show this "
        "figure without numbers; the Bayes accuracy of these two laws has no closed form (make_moons with noise "
        "0.2: the non-private histogram at h = 0.05 on 2·10^5 points reaches about 0.96).", "",
        md_table(acc), "",
        "![accuracy vs alpha](accuracy_vs_alpha.png)", "",
        "## Target: make_moons, alpha = 1, auto bandwidth", "",
        md_table(target), "",
        *_target_lines(res["target"]), "",
        "![target](target_moons.png)", "",
        "## Excess risk vs n (Theorem 3)", "",
        f"On S: beta = {SIM_BETA:g} (eta is Lipschitz), gamma = {SIM_GAMMA:g} (uniform X, smooth boundary), "
        f"d = 2, so the minimax rate is (n alpha^2)^(-{MINIMAX_EXPONENT:.3f}).", "",
        md_table(slopes), "",
        md_table(rate), "",
        "![excess risk vs n](excess_risk_vs_n.png)", "",
    ]
    if res.get("adult") is not None:
        adult = _pm(res["adult"], ["method", "alpha"], "accuracy")
        parts += [
            "## Adult (age, hours-per-week): what LDP costs", "",
            "70/30 split of adult.data + adult.test (48,842 rows), bounds age [17, 90], hours [1, 99] (public, "
            "UCI's documented ranges). Central DP models (epsilon = alpha, the same number, a weaker trust "
            "model: a curator sees the raw data) through `DPPipeline` with 8 grid thresholds per column.", "",
            md_table(adult), "",
        ]
    if not run.quick:  # the findings quote the full plan's numbers
        parts += _findings(res)
    parts += [
        "## What differs from the slides", "",
        "1. Discrete Laplace noise (exact sampler) instead of continuous Laplace: same alpha-LDP guarantee, and "
        "no float noise is released (Mironov 2012).",
        "2. The halves are a public fair coin per record, so n_1 and n_2 are random; T uses 1/n_2 and "
        "1/(2 n_1) (the slides have n_1 = n_2 = n). E[T] is unchanged.",
        "3. The feature box is public and each coordinate is mapped to [0, 1] with it (clipped); h is in those "
        "units; only cubes that meet [0, 1]^d are reported (ceil(1/h) + 1 per axis).",
        "4. `oue` is beyond the slides: lower variance at the same alpha (docs/privacy.md proves its alpha-LDP).",
        "",
    ]
    (run.out / "report.md").write_text("\n".join(parts))
