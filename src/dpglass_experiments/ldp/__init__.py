"""Reproduce paper 004's experiments (local DP classification): ``dpglass reproduce ldp``.

Writes into one folder, each figure as PNG and SVG with its numbers as CSV:

* ``calibration``: excess risk on the simulated distribution S of
  ``h = c (n alpha^2)^(-1/6)`` for a grid of c (how the auto bandwidth's
  constants were chosen; never on an evaluation set);
* ``accuracy_vs_alpha``: test accuracy vs alpha on make_moons and
  make_classification (2 informative features), both randomizers, beside the
  non-private histogram classifier with the same h (the slides' numerical
  experiments);
* ``target_moons``: make_moons at alpha = 1, accuracy vs number of reports
  (the issue's target);
* ``excess_risk_vs_n``: excess risk vs n on S (log-log), fitted slopes beside
  Theorem 3's exponent;
* ``adult``: Adult's age and hours-per-week, LDP vs dpglass's central-DP
  models at epsilon = alpha;
* ``report.md`` and ``timings.json``.

The pieces: :mod:`.plan` (grids), :mod:`.analyses` (data and fits), :mod:`.report`.
"""

from __future__ import annotations

from dpglass_experiments import figures
from dpglass_experiments.ldp.analyses import (
    accuracy_vs_alpha,
    adult_comparison,
    calibrate,
    fitted_slopes,
    rate_vs_n,
    target_check,
)
from dpglass_experiments.ldp.plan import FULL, QUICK, Plan
from dpglass_experiments.ldp.report import write_report
from dpglass_experiments.reproduction import Reproduction

__all__ = ["FULL", "QUICK", "Plan", "REPRODUCTION", "reproduce"]

_COLOURS = {"laplace": "#1f77b4", "oue": "#d62728"}


def _plot_lines(frame, x, y, group, out, stem, *, title, xlabel, ylabel, logx=False, logy=False, panels=None,
                extra=None):
    plt = figures._plt()
    keys = [None] if panels is None else list(dict.fromkeys(frame[panels]))
    fig, axes = plt.subplots(1, len(keys), figsize=(5.2 * len(keys), 3.8), squeeze=False)
    for ax, key in zip(axes[0], keys):
        sub = frame if key is None else frame[frame[panels] == key]
        for g, part in sub.groupby(group, sort=False):
            m = part.groupby(x)[y].agg(["mean", "sem"]).reset_index()
            label = " ".join(str(v) for v in (g if isinstance(g, tuple) else (g,)))
            ax.errorbar(m[x], m["mean"], yerr=m["sem"].fillna(0), marker="o", markersize=3, capsize=2, label=label)
        if extra is not None:
            extra(ax, sub)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title if key is None else f"{title}: {key}")
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.legend()
    figures._save(fig, out, stem, frame)


def _experiments(run) -> dict:
    plan = run.plan
    res = {}
    run.log("calibration of the auto bandwidth on the simulated distribution S")
    with run.timed("calibration"):
        res["calib"] = calibrate(plan, run.base_seed)
    _plot_lines(res["calib"], "c", "excess_risk", ["randomizer", "n"], run.out, "calibration", logx=True,
                title="Excess risk on S vs c (alpha = 1)", xlabel="c in h = c (n alpha^2)^(-1/6)",
                ylabel="excess risk")
    run.log("accuracy vs alpha (make_moons, make_classification)")
    with run.timed("accuracy_vs_alpha"):
        acc = res["acc"] = accuracy_vs_alpha(plan, run.base_seed)

    def reference(ax, sub):
        m = sub[sub["method"] == "laplace"].groupby("alpha")["non_private_same_h"].mean()
        ax.plot(m.index, m.values, "k--", label="non-private, h of laplace")
        m = sub[sub["method"] == "oue"].groupby("alpha")["non_private_same_h"].mean()
        ax.plot(m.index, m.values, "k:", label="non-private, h of oue")

    _plot_lines(acc, "alpha", "accuracy", "method", run.out, "accuracy_vs_alpha", logx=True, panels="dataset",
                title=f"Test accuracy, n = {plan.n_alpha:,} reports", xlabel="alpha", ylabel="test accuracy",
                extra=reference)
    run.log("target: make_moons at alpha = 1 vs number of reports")
    with run.timed("target"):
        res["target"] = target_check(plan, run.base_seed)
    _plot_lines(res["target"], "n", "accuracy", "method", run.out, "target_moons", logx=True,
                title="make_moons, alpha = 1, auto bandwidth", xlabel="reports n", ylabel="test accuracy",
                extra=lambda ax, sub: ax.axhline(0.85, color="grey", linestyle="--", label="target 0.85"))
    run.log("excess risk vs n on S")
    with run.timed("rate"):
        rate = res["rate"] = rate_vs_n(plan, run.base_seed)
    res["slopes"] = fitted_slopes(rate)
    res["slopes"].to_csv(run.out / "excess_risk_slopes.csv", index=False, float_format="%.4g")
    _plot_lines(rate, "n", "excess_risk", ["method", "alpha"], run.out, "excess_risk_vs_n", logx=True, logy=True,
                title="Excess risk on S (beta = 1, gamma = 1, d = 2)", xlabel="n", ylabel="excess risk")
    run.log("Adult (age, hours-per-week): LDP vs central DP")
    try:
        with run.timed("adult"):
            res["adult"] = adult_comparison(plan, run.base_seed, run.data_home)
        summary = res["adult"].groupby(["method", "alpha"], dropna=False)["accuracy"].agg(["mean", "sem"])
        summary.reset_index().to_csv(run.out / "adult.csv", index=False, float_format="%.4f")
    except FileNotFoundError as exc:  # DatasetNotFoundError: Adult is not here
        run.log(f"Adult skipped: {exc}")
        res["adult"] = None
    return res


#: Paper 004's reproduction: ``dpglass reproduce ldp``.
REPRODUCTION = Reproduction(full=FULL, quick=QUICK, experiments=_experiments, report=write_report)
reproduce = REPRODUCTION.reproduce
