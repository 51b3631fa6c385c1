"""``model.plot()``: the readout of :mod:`dpglass.models.readout.explain` as one matplotlib Figure.

matplotlib is optional (the ``plot`` extra); the Figure is built without pyplot, so no display backend is touched.
A rule list is drawn as its rules' counts, an additive model as one panel per column (contribution against the
column's values), a deeper tree ensemble as its columns' importance and partial dependence, a logistic model as its
coefficients.
"""

from __future__ import annotations

import math

import numpy as np

from dpglass.models.readout.explain import explain_model

__all__ = ["plot_model", "require_matplotlib"]


def require_matplotlib():
    """matplotlib's Figure class, or an ImportError naming the extra."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError('model.plot() needs matplotlib, which dpglass keeps optional: pip install "dpglass[plot]" '
                          "(model.explain() and the model card need no extra).") from exc
    return Figure


def plot_model(model, max_columns: int = 12):
    """A matplotlib Figure of the fitted model (at most ``max_columns`` panels: the columns of largest effect)."""
    Figure = require_matplotlib()
    frame = explain_model(model)
    kind = frame.attrs.get("kind", "shapes")
    if kind == "rules":
        return _rules_figure(Figure, frame)
    if kind == "coefficients":
        return _coefficients_figure(Figure, frame)
    return _columns_figure(Figure, frame, kind, max_columns)


def _rules_figure(Figure, frame):
    counts = [c for c in frame.columns if c.startswith("count ")]
    fig = Figure(figsize=(8, 0.5 * len(frame) + 1.5), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(len(frame))[::-1]
    left = np.zeros(len(frame))
    for c in counts:
        values = np.clip(frame[c].to_numpy(dtype=float), 0, None)
        ax.barh(y, values, left=left, label=c.removeprefix("count "))
        left += values
    ax.set_yticks(y, [f"{p}. {cond} -> {pred}" for p, cond, pred in
                      zip(frame["position"], frame["condition"], frame["prediction"])])
    noisy = bool(frame["noisy"].any())
    ax.set_xlabel("noisy counts (negative ones drawn as 0)" if noisy else "counts")
    ax.legend(title="class", loc="lower right")
    ax.set_title("rule list: the first rule a record meets predicts")
    return fig


def _coefficients_figure(Figure, frame):
    body = frame[frame["feature"] != "(intercept)"]
    classes = list(dict.fromkeys(body["class"]))
    features = list(dict.fromkeys(body["feature"]))
    fig = Figure(figsize=(8, 0.3 * len(features) + 1.5), layout="constrained")
    ax = fig.add_subplot()
    height = 0.8 / len(classes)
    y = np.arange(len(features))[::-1]
    for k, c in enumerate(classes):
        values = body[body["class"] == c].set_index("feature").loc[features, "coefficient"].to_numpy(dtype=float)
        ax.barh(y - k * height, values, height=height, label=f"score of {c}")
    ax.set_yticks(y, features)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("coefficient")
    if len(classes) > 1:
        ax.legend()
    intercepts = frame[frame["feature"] == "(intercept)"]
    ax.set_title("coefficients; intercept " + ", ".join(f"{v:+.4g}" for v in intercepts["coefficient"]))
    return fig


def _columns_figure(Figure, frame, kind: str, max_columns: int):
    value = "partial_dependence" if kind == "trees" else "contribution"
    body = frame[frame["group"] != "(intercept)"]
    spread = body.groupby("group", sort=False)[value].agg(lambda s: s.max() - s.min())
    groups = list(spread.sort_values(ascending=False, kind="stable").index[:max_columns])
    ncols = min(3, max(1, len(groups)))
    nrows = max(1, math.ceil(len(groups) / ncols))
    fig = Figure(figsize=(4 * ncols, 2.8 * nrows + 0.6), layout="constrained")
    for i, g in enumerate(groups):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        part = body[body["group"] == g]
        classes = list(dict.fromkeys(part["class"]))
        first = part[part["class"] == classes[0]]
        labels = list(first["value"].astype(str) if "value" in part else first["bin"].astype(str))
        width = 0.8 / len(classes)
        x = np.arange(len(labels))
        for k, c in enumerate(classes):
            v = part[part["class"] == c][value].to_numpy(dtype=float)
            ax.bar(x + k * width - 0.4 + width / 2, v, width=width, label=str(c))
        ax.set_xticks(x, labels, rotation=30 if max(map(len, labels)) > 4 else 0, fontsize=8)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_title(str(g), fontsize=10)
        if i == 0 and len(classes) > 1:
            ax.legend(title="score of", fontsize=7)
    what = ("partial dependence (post-processing over the public domain)" if kind == "trees"
            else "contribution to the score")
    fig.suptitle(f"{what}, per column")
    return fig
