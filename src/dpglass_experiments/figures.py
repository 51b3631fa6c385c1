"""Figures of the reproductions (rule lists, boosting): each written as PNG and SVG with its numbers as CSV.

Every function takes the summarised numbers (a DataFrame), draws one figure
with matplotlib (Agg backend, no display needed) and writes
``<out>/<stem>.png``, ``<out>/<stem>.svg`` and ``<out>/<stem>.csv``.  Styles
are shared so that a method has the same colour in every figure.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "STYLE",
    "plot_noise_amplitude",
    "plot_accuracy_vs_epsilon",
    "plot_hyperparameters",
    "plot_mia_roc",
    "plot_advantage",
]

#: Colour and line style of each method, shared by every figure.
STYLE = {
    "GreedyRL": dict(color="black", linestyle="--", linewidth=1.4),
    "sm-Laplace": dict(color="#d62728", linestyle="-", linewidth=1.6),
    "sm-Cauchy": dict(color="#ff7f0e", linestyle="-", linewidth=1.4),
    "gl-Laplace": dict(color="#1f77b4", linestyle="-", linewidth=1.4),
    "gl-Gaussian": dict(color="#17becf", linestyle="-", linewidth=1.4),
    "gl-Exponential": dict(color="#9467bd", linestyle="-", linewidth=1.4),
    "noisy-counts": dict(color="#8c564b", linestyle="-", linewidth=1.4),
    "certified-pf": dict(color="#2ca02c", linestyle="-.", linewidth=1.8),
    "gl-Laplace (dpglass)": dict(color="#1f77b4", linestyle=":", linewidth=1.6),
    # boosting (paper 002): solid = the paper's (non-private) tuning, dashed = private tuning
    "LazyBB-stumps": dict(color="#d62728", linestyle="-", linewidth=1.8),
    "LazyBB-stumps (private tuning)": dict(color="#d62728", linestyle="--", linewidth=1.4),
    "LazyBB-trees": dict(color="#2ca02c", linestyle="-", linewidth=1.6),
    "LazyBB-trees (private tuning)": dict(color="#2ca02c", linestyle="--", linewidth=1.4),
    "DP-LR": dict(color="#1f77b4", linestyle="-", linewidth=1.6),
    "DP-LR (private tuning)": dict(color="#1f77b4", linestyle="--", linewidth=1.4),
    "1-Rule": dict(color="grey", linestyle=":", linewidth=1.4),
    "GBC": dict(color="black", linestyle="--", linewidth=1.4),
    # teacher ensembles on a public part (paper 002's DP-Bag baseline, Adult only)
    "DP-Bag": dict(color="#8c564b", linestyle="-", linewidth=1.6, marker="s", markersize=3),
    "Subsample-aggregate": dict(color="#e377c2", linestyle="-", linewidth=1.6, marker="^", markersize=3),
    "paper (its encoding)": dict(color="black", linestyle=":", linewidth=1.4, marker="o", markersize=3),
    "LazyBB-stumps δ=0": dict(color="#d62728", linestyle="-", linewidth=1.6),
    "LazyBB-stumps δ=1e-05": dict(color="#9467bd", linestyle="-", linewidth=1.6),
    "LazyBB-stumps δ=0, paper's Table 8": dict(color="#d62728", linestyle=":", linewidth=1.4),
}


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 8.5,
        "xtick.labelsize": 9, "ytick.labelsize": 9, "svg.fonttype": "none", "axes.grid": True,
        "grid.alpha": 0.3, "figure.dpi": 100,
    })
    return plt


def _save(fig, out: Path, stem: str, data: pd.DataFrame) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.png", out / f"{stem}.svg", out / f"{stem}.csv"]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight", metadata={"Date": None})
    data.to_csv(paths[2], index=False, float_format="%.6g")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths


def _style(method: str) -> dict:
    """The method's style; ``"sm-Laplace (ε=10)"`` takes sm-Laplace's."""
    return STYLE.get(method) or STYLE.get(method.split(" (")[0], dict(linewidth=1.3))


def plot_noise_amplitude(data: pd.DataFrame, out, stem="fig1_noise_amplitude", title=None):
    """Fig. 1: noise scale vs number of records (log-log), one line per ``curve`` column."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for curve, part in data.groupby("curve", sort=False):
        ax.plot(part["n"], part["scale"], label=curve, **_style(part["method"].iloc[0]))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of records n")
    ax.set_ylabel("noise scale on the Gini impurity")
    ax.set_title(title or "Noise amplitude, ε = 1 per selection")
    ax.legend(loc="lower left", frameon=False)
    return _save(fig, Path(out), stem, data)


def plot_accuracy_vs_epsilon(summary: pd.DataFrame, out, stem, *, value_label, panels, title=None,
                             flat_methods=("GreedyRL",), xticks=None):
    """Accuracy (mean, standard-error band) vs epsilon (log scale), one panel per dataset.

    ``summary`` has columns dataset, method, epsilon, mean, se (see
    :func:`dpglass_experiments.summarise`); ``panels`` maps dataset -> panel title.
    Methods in ``flat_methods`` (no epsilon) are drawn as horizontal lines.
    ``xticks``: epsilon values to label (plain numbers, no minor labels);
    None keeps matplotlib's log ticks.  The legend lists every method of
    every panel once.
    """
    plt = _plt()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels), 3.4), squeeze=False)
    eps_all = summary["epsilon"].dropna()
    lo, hi = (eps_all.min(), eps_all.max()) if len(eps_all) else (0.01, 100)
    for ax, (dataset, label) in zip(axes[0], panels.items()):
        part = summary[summary["dataset"] == dataset]
        for method, rows in part.groupby("method", sort=False):
            st = _style(method)
            if method in flat_methods or rows["epsilon"].isna().all():
                m, s = float(rows["mean"].iloc[0]), float(rows["se"].iloc[0])
                ax.axhline(m, label=method, **st)
                ax.axhspan(m - s, m + s, color=st.get("color", "grey"), alpha=0.12, linewidth=0)
                continue
            rows = rows.sort_values("epsilon")
            ax.plot(rows["epsilon"], rows["mean"], label=method, **st)
            ax.fill_between(rows["epsilon"], rows["mean"] - rows["se"], rows["mean"] + rows["se"],
                            color=st.get("color"), alpha=0.18, linewidth=0)
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        if xticks is not None:
            from matplotlib.ticker import NullFormatter

            ax.set_xticks(list(xticks))
            ax.set_xticklabels([f"{t:g}" for t in xticks])
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("privacy budget ε")
        ax.set_title(label)
    axes[0][0].set_ylabel(value_label)
    handles, labels = [], []
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    ncol = len(labels) if len(labels) <= 7 else 4
    rows = math.ceil(len(labels) / ncol)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.07 * rows, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False, bbox_to_anchor=(0.5, 0.0),
               handlelength=2.2, columnspacing=1.2)
    return _save(fig, Path(out), stem, summary)


def plot_hyperparameters(summary: pd.DataFrame, out, stem="sec5d_hyperparameters", *, panels, value_label):
    """Section V-D: accuracy vs K (top row) and vs lambda (bottom row), one column per dataset.

    ``summary`` has columns dataset, family, method, knob ("K" or "lambda"),
    value, mean, se.
    """
    plt = _plt()
    fig, axes = plt.subplots(2, len(panels), figsize=(4.0 * len(panels), 6.2), squeeze=False)
    for col, (dataset, label) in enumerate(panels.items()):
        for row, knob in enumerate(("K", "lambda")):
            ax = axes[row][col]
            part = summary[(summary["dataset"] == dataset) & (summary["knob"] == knob)]
            for family, rows in part.groupby("family", sort=False):
                rows = rows.sort_values("value")
                st = _style(family)
                ax.errorbar(rows["value"], rows["mean"], yerr=rows["se"], label=family, marker="o",
                            markersize=3.5, capsize=2, **st)
            ax.set_xlabel("maximum number of rules K" if knob == "K" else "minimum support λ")
            if row == 0:
                ax.set_title(label)
            if col == 0:
                ax.set_ylabel(value_label)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 5), frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return _save(fig, Path(out), stem, summary)


def plot_mia_roc(roc: pd.DataFrame, out, stem="appC_mia_roc", *, panels):
    """Appendix C: ROC curves of the membership-inference attack, log FPR axis."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels), 3.6), squeeze=False)
    for ax, (dataset, label) in zip(axes[0], panels.items()):
        part = roc[roc["dataset"] == dataset]
        for method, rows in part.groupby("method", sort=False):
            auc = rows["auc"].iloc[0]
            ax.plot(rows["fpr"].clip(lower=1e-4), rows["tpr"], label=f"{method} (AUC {auc:.3f})",
                    drawstyle="steps-post", **_style(method))
        grid = np.logspace(-4, 0, 50)
        ax.plot(grid, grid, color="grey", linestyle=":", linewidth=1, label="random guess")
        ax.set_xscale("log")
        ax.set_xlim(1e-3, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("false positive rate")
        ax.set_title(label)
        ax.legend(loc="upper left", frameon=False)
    axes[0][0].set_ylabel("true positive rate")
    fig.tight_layout()
    return _save(fig, Path(out), stem, roc)


def plot_advantage(curves: pd.DataFrame, hists: pd.DataFrame, out, stem="fig1_advantage", *, gamma=None):
    """Paper 002, Figure 1: advantage per round (left) and margin histograms (right).

    ``curves`` has columns setting, round, advantage, advantage_se,
    best_1rule_advantage; ``hists`` has setting, part ("train"/"test"),
    bin_left, bin_right, fraction.  Both are written to ``<stem>.csv`` (stacked).
    """
    plt = _plt()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.5, 3.8))
    colours = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"]
    for colour, (setting, part) in zip(colours, curves.groupby("setting", sort=False)):
        r = part["round"].to_numpy()
        m = part["advantage"].to_numpy()
        ax.plot(r, m, color=colour, linewidth=1.2, label=f"{setting}: released 1-Rule")
        se = part["advantage_se"].to_numpy()
        if np.isfinite(se).any():
            ax.fill_between(r, m - se, m + se, color=colour, alpha=0.18, linewidth=0)
        ax.plot(r, part["best_1rule_advantage"], color=colour, linewidth=1.0, linestyle="--",
                label=f"{setting}: best 1-Rule")
    if gamma is not None:
        ax.axhline(gamma, color="grey", linestyle=":", linewidth=1, label=f"γ = {gamma:g}")
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xscale("log")
    ax.set_xlabel("boosting round t")
    ax.set_ylabel("advantage 1/2 − err under the round's measure")
    ax.set_title("Advantage per round (mean ± se over runs)")
    ax.legend(loc="upper right", frameon=False, fontsize=7)
    for colour, (setting, part) in zip(colours, hists.groupby("setting", sort=False)):
        for kind, style in (("train", "-"), ("test", ":")):
            p = part[part["part"] == kind]
            if not len(p):
                continue
            edges = np.append(p["bin_left"].to_numpy(), p["bin_right"].iloc[-1])
            bx.stairs(p["fraction"].to_numpy(), edges, color=colour, linestyle=style, linewidth=1.3,
                      label=f"{setting} ({kind})")
    bx.axvline(0, color="black", linewidth=0.6)
    bx.set_xlabel("normalised margin y·Σ h_t(x) / τ")
    bx.set_ylabel("fraction of records")
    bx.set_title("Margin histogram of the final vote")
    bx.legend(loc="upper left", frameon=False, fontsize=7)
    fig.tight_layout()
    data = pd.concat([curves.assign(kind="advantage"), hists.assign(kind="margin histogram")], ignore_index=True)
    return _save(fig, Path(out), stem, data)
