"""``report.md``, ``summary.csv`` and ``accuracy.png`` of ``dpglass reproduce multiclass``."""

from __future__ import annotations

import csv
import math
import os
from collections import defaultdict

import numpy as np

from dpglass_experiments.multiclass.data import DIGITS_RANGE, SYNTHETIC, SYNTHETIC_RANGE
from dpglass_experiments.multiclass.plan import (
    BINS, COUNTERPARTS, ISSUE_NUMBERS, NB_LABEL, NUMERIC_VIEW, PUBLIC_FRACTION, SYNTHETIC_GAP, TARGETS,
)

__all__ = ["summarise", "write_report"]


def _eps(value):
    e = float(value)
    return None if math.isnan(e) else e


def summarise(rows) -> dict:
    """``{(dataset, method, epsilon or None): (mean, sd, runs, errors)}`` over the splits."""
    acc, errors = defaultdict(list), defaultdict(int)
    for r in rows:
        key = (r["dataset"], r["method"], _eps(r["epsilon"]))
        if r.get("error"):
            errors[key] += 1
        elif not math.isnan(float(r["accuracy"])):
            acc[key].append(float(r["accuracy"]))
    keys = set(acc) | set(errors)
    return {k: (float(np.mean(acc[k])) if acc[k] else math.nan, float(np.std(acc[k])) if acc[k] else math.nan,
                len(acc[k]), errors[k]) for k in keys}


def _cell(v) -> str:
    if v is None:
        return "-"
    mean, sd, runs, errors = v
    text = "failed" if runs == 0 else f"{mean:.3f} ± {sd:.3f}"
    return text + (f" ({errors} failed)" if errors and runs else "")


def _at(summary, d, m, e):
    """A method's value at epsilon ``e`` (a non-private method's, whatever ``e``)."""
    return summary.get((d, m, e)) or summary.get((d, m, None))


def _targets(summary, models, epsilons, datasets) -> list:
    lines = ["## Targets (issue 31: mean test accuracy at ε = 1)", ""]
    if 1.0 not in epsilons:
        return lines + ["ε = 1 is not in this run's grid.", ""]
    private = [m for m in models if any(k[1] == m and k[2] is not None for k in summary)]
    lines += ["| dataset | target | best dpglass model at ε = 1 | met |", "|---|---|---|---|"]
    for d, t in ((d, t) for d, t in TARGETS.items() if d in datasets):
        vals = [(summary[(d, m, 1.0)][0], m) for m in private if (d, m, 1.0) in summary
                and not math.isnan(summary[(d, m, 1.0)][0])]
        best = max(vals) if vals else None
        lines.append(f"| {d} | ≥ {t} | " + ("no multiclass dpglass model" if best is None else
                     f"{best[1]}: {best[0]:.3f}") + f" | {'yes' if best and best[0] >= t else 'no'} |")
    if "synthetic" in datasets:
        lines += ["", f"Synthetic task: every model within {SYNTHETIC_GAP} of its non-private counterpart at ε = 1:",
                  "", "| model | ε = 1 | counterpart | counterpart's | gap | within |", "|---|---|---|---|---|---|"]
    for m in ([*private, NB_LABEL] if "synthetic" in datasets else []):
        mine, theirs = summary.get(("synthetic", m, 1.0)), _at(summary, "synthetic", COUNTERPARTS.get(m, ""), 1.0)
        if mine is None or theirs is None or math.isnan(mine[0]) or math.isnan(theirs[0]):
            continue
        gap = theirs[0] - mine[0]
        lines.append(f"| {m} | {mine[0]:.3f} | {COUNTERPARTS[m]} | {theirs[0]:.3f} | {gap:+.3f} | "
                     f"{'yes' if gap <= SYNTHETIC_GAP else 'no'} |")
    lines += ["", "No model below the majority class at ε ≥ 1 (cells below it):", ""]
    below = []
    for (d, m, e), v in sorted(summary.items(), key=str):
        floor = summary.get((d, "majority class", None))
        if e is not None and e >= 1 and floor and not math.isnan(v[0]) and v[0] < floor[0]:
            below.append(f"- {d}, {m}, ε = {e:g}: {v[0]:.3f} < {floor[0]:.3f}")
    return lines + (below or ["- none"]) + [""]


def _figure(out, summary, datasets, methods, epsilons):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.5), squeeze=False)
    for ax, d in zip(axes[0], datasets):
        for m in methods:
            xs = [e for e in epsilons if (d, m, e) in summary and summary[(d, m, e)][2]]
            if xs:
                ax.errorbar(xs, [summary[(d, m, e)][0] for e in xs], yerr=[summary[(d, m, e)][1] for e in xs],
                            label=m, marker="o", capsize=2)
            elif (d, m, None) in summary and summary[(d, m, None)][2]:
                ax.axhline(summary[(d, m, None)][0], linestyle=":", linewidth=1, label=m, color="grey"
                           if m == "majority class" else None)
        ax.set_xscale("log")
        ax.set(xlabel="epsilon", ylabel="test accuracy", title=d)
        ax.legend(fontsize=5)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "accuracy.png"), dpi=120)
    plt.close(fig)


def _intro(plan, elapsed, models, rows) -> list:
    deltas = sorted({f"{float(r['delta_spent']):.0e}" for r in rows if r["method"] in models
                     and not math.isnan(float(r["delta_spent"]))})
    return [
        "# Multiclass (issue 31): `dpglass reproduce multiclass`", "",
        f"Plan: ε ∈ {list(plan.epsilons)}; {plan.n_splits} stratified 70/30 splits per dataset; every split and "
        "every model's noise seeded by its cell (dataset, split, method, ε). "
        f"Wall time {elapsed:.0f} s." + (" **Quick plan** (a smoke test: registry test_params, "
                                        f"{plan.synthetic_records} synthetic records)." if plan.small else ""), "",
        "**Models.** Every registered model that learns K classes when the run started: "
        + (", ".join(f"`{m}`" for m in models) or "**none yet**")
        + (" (registry defaults" if not plan.small else " (registry test_params")
        + ", ε, the public label set `classes`, the cell's seed). The teacher ensembles (fit's `X_public`) get "
        f"{PUBLIC_FRACTION:.0%} of each training part as their public unlabelled part and learn from the rest. "
        f"δ read from the ledgers: {', '.join(deltas) or 'none'} (pure ε elsewhere).", "",
        "**Features.** 0/1 indicators `x > c` for the cut points of dpglass's public grid "
        "(`dpglass.schema.columns.grid_cut_points`) over each feature's public range, never read from the data: "
        f"wine {BINS['wine']} bins over the ranges of the dataset's documentation (its Summary Statistics table: "
        "published extremes of the data, taken as public as the issue does); digits "
        f"{BINS['digits']} bins over the documented pixel range {DIGITS_RANGE[0]:g}..{DIGITS_RANGE[1]:g}; synthetic "
        f"(`make_classification` with {SYNTHETIC}) {BINS['synthetic']} bins over the assumed range "
        f"[{SYNTHETIC_RANGE[0]:g}, {SYNTHETIC_RANGE[1]:g}] per feature (from the generator's construction: "
        "centroids at ±1, unit normal draws mixed by entries in [-1, 1]). The numeric references get the features "
        "mapped to [0, 1] by the same ranges; the models that bin raw columns "
        f"({', '.join(f'`{m}`' for m in NUMERIC_VIEW)}) get the numeric features with the same public ranges as "
        "their `bounds` (their own bins; dp-gam with its sizes picked from its released class counts: "
        "`first_cycle`, `n_cycles`, `max_bins` and `count_share` set to \"auto\").", "",
        f"**Reference floor.** `{NB_LABEL}`: one table of class counts and class × feature × bin counts with "
        "dpglass's exact discrete Gaussian, l2 sensitivity √(d+1), (ε, 10⁻⁶)-DP by its zCDP curve "
        "(`dpglass_experiments/multiclass/naive_bayes.py`); built inside the experiment, not a library model.", "",
        "**Peers.** diffprivlib's multiclass models are not rerun: the peers environment of `benchmarks/peers.py` "
        "(its own scikit-learn) is not installed on this machine and is not installable offline. The issue's "
        "measurements are quoted below.", "",
    ]


def write_report(out, rows, plan, elapsed, models) -> None:
    summary = summarise(rows)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    epsilons = sorted({e for (_, _, e) in summary if e is not None})
    with open(os.path.join(out, "summary.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "method", "epsilon", "mean", "sd", "runs", "failed"])
        for (d, m, e), (mean, sd, k, bad) in sorted(summary.items(), key=str):
            w.writerow([d, m, "" if e is None else e, f"{mean:.4f}", f"{sd:.4f}", k, bad])
    _figure(out, summary, datasets, methods, epsilons)
    lines = _intro(plan, elapsed, models, rows) + _targets(summary, models, epsilons, datasets)
    for d in datasets:
        lines += [f"## {d}: test accuracy (mean ± sd over the splits)", "",
                  "| method | " + " | ".join(f"ε={e:g}" for e in epsilons) + " |", "|---|" + "---|" * len(epsilons)]
        for m in methods:
            if any((d, m, e) in summary for e in epsilons):
                lines.append(f"| {m} | " + " | ".join(_cell(summary.get((d, m, e))) for e in epsilons) + " |")
            elif (d, m, None) in summary:
                shown = m if "non-private" in m else f"{m} (non-private)"
                lines.append(f"| {shown} | {_cell(summary[(d, m, None)])} (any ε) |"
                             + " |" * (len(epsilons) - 1))
        lines.append("")
    quoted = [(d, name, acc) for d, name, acc in ISSUE_NUMBERS if d in datasets]
    if quoted:
        lines += ["## The issue's measurements at ε = 1 (quoted, not rerun)", "", "| dataset | model | accuracy |",
                  "|---|---|---|"] + [f"| {d} | {name} | {acc} |" for d, name, acc in quoted] + [""]
    failed = [r for r in rows if r.get("error")]
    lines += ["## Failed fits", ""] + (sorted({f"- {r['dataset']}, {r['method']}: {r['error']}" for r in failed})
                                       or ["- none"]) + [""]
    times = defaultdict(list)
    for r in rows:
        if not r.get("error") and not math.isnan(float(r["fit_seconds"])):
            times[(r["dataset"], r["method"])].append(float(r["fit_seconds"]))
    lines += ["## Fit time (mean seconds per fit)", "", "| dataset | method | seconds |", "|---|---|---|"]
    lines += [f"| {d} | {m} | {np.mean(v):.3f} |" for (d, m), v in sorted(times.items())]
    lines += ["", "![accuracy](accuracy.png)", ""]
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
