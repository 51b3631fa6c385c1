"""The model card's "model" section: the model as people read it, from its readout
(:func:`~dpglass.models.readout.explain.explain_model`): a rule list as a table, an additive model as one shape
plot per column, a logistic model as its coefficients, a deeper tree ensemble as its columns' importance and
partial dependence.  Inline SVG and HTML tables only."""

from __future__ import annotations

from html import escape

from dpglass.models.readout.explain import explain_model
from dpglass.models.readout.svg import CLASS_COLOURS, bar_panel, hbar_chart, stacked_hbar_chart

__all__ = ["model_section", "MAX_PANELS"]

#: At most this many shape or partial-dependence panels (the columns of largest effect); the rest are in the table.
MAX_PANELS = 24


def _num(v) -> str:
    return "0" if v == 0 else f"{v:.4g}"


def model_section(model) -> str:
    """The section's HTML: the readout drawn, its table, and the printout."""
    frame = explain_model(model)
    kind = frame.attrs.get("kind")
    body = {"rules": _rules, "coefficients": _coefficients}.get(kind, _columns)(frame, kind)
    note = escape(frame.attrs.get("note", ""))
    printout = escape(str(model))
    return (f'<h2>The model</h2><p class="note">{note}.</p><div class="model">{body}</div>'
            f"<details><summary>The model's printout</summary><pre>{printout}</pre></details>")


def _rules(frame, kind) -> str:
    counts = [c for c in frame.columns if c.startswith("count ")]
    classes = [c.removeprefix("count ") for c in counts]
    noisy = bool(frame["noisy"].any())
    head = "".join(f"<th class=num>{'noisy ' if noisy else ''}count {escape(c)}</th>" for c in classes)
    rows = []
    for _, r in frame.iterrows():
        cells = "".join(f"<td class=num>{_num(r[c])}</td>" for c in counts)
        word = "if" if r["position"] == 1 else "else if"
        cond = escape(r["condition"]) if not r["condition"].startswith("otherwise") else "<i>else</i> (every other record)"
        lead = f"{word} {cond}" if not r["condition"].startswith("otherwise") else cond
        rows.append(f"<tr><td class=num>{r['position']}</td><td>{lead}</td><td><b>{escape(str(r['prediction']))}"
                    f"</b></td>{cells}</tr>")
    table = ("<div class=scroll><table><tr><th class=num>#</th><th>condition</th><th>predicts</th>" + head + "</tr>"
             + "".join(rows) + "</table></div>")
    chart = stacked_hbar_chart([(f"{r['position']}. {r['condition']} \u2192 {r['prediction']}", [float(r[c]) for c in counts])
                                for _, r in frame.iterrows()], classes, "each rule's counts per class")
    what = ("The counts are the released noisy counts (noise added for privacy; a negative count is possible)."
            if noisy else "The counts are exact (a non-private model).")
    return (f"<p>A rule list: the first rule a record meets gives the prediction. {what}</p>" + table
            + f'<div class="shapes">{chart}</div>')


def _coefficients(frame, kind) -> str:
    body = frame[frame["feature"] != "(intercept)"]
    classes = list(dict.fromkeys(body["class"]))
    order = body.assign(size=body["coefficient"].abs()).groupby("feature", sort=False)["size"].max()
    features = list(order.sort_values(ascending=False, kind="stable").index)
    charts = []
    for k, c in enumerate(classes):
        part = body[body["class"] == c].set_index("feature")["coefficient"]
        rows = [(f, float(part[f]), CLASS_COLOURS[k % len(CLASS_COLOURS)], f"{f}: {part[f]:+.6g}") for f in features]
        charts.append(f"<p><b>Score of {escape(str(c))}</b></p>" + hbar_chart(rows, f"coefficients of {c}"))
    inter = frame[frame["feature"] == "(intercept)"]
    table = ("<div class=scroll><table><tr><th>feature</th>" + "".join(f"<th class=num>{escape(str(c))}</th>"
             for c in classes) + "</tr>" + "".join(
        f"<tr><td>{escape(f)}</td>" + "".join(
            f"<td class=num>{float(frame[(frame['feature'] == f) & (frame['class'] == c)]['coefficient'].iloc[0]):+.6g}"
            "</td>" for c in classes) + "</tr>" for f in features + ["(intercept)"]) + "</table></div>")
    return ("<p>A logistic model: a record's score for a class is the intercept plus the coefficients of its "
            "features that are 1 (largest first). Intercept: "
            + ", ".join(f"{escape(str(c))} {v:+.4g}" for c, v in zip(inter["class"], inter["coefficient"])) + ".</p>"
            + f'<div class="shapes">{"".join(charts)}</div>'
            + f"<details><summary>The coefficients</summary>{table}</details>")


def _columns(frame, kind) -> str:
    value = "partial_dependence" if kind == "trees" else "contribution"
    body = frame[frame["group"] != "(intercept)"]
    spread = body.groupby("group", sort=False)[value].agg(lambda s: s.max() - s.min())
    groups = list(spread.sort_values(ascending=False, kind="stable").index)
    panels = []
    for g in groups[:MAX_PANELS]:
        part = body[body["group"] == g]
        classes = list(dict.fromkeys(part["class"]))
        values = list(part[part["class"] == classes[0]]["value"])  # in bin order (two labels may print alike)
        series = {c: [float(v) for v in part[part["class"] == c][value]] for c in classes}
        panels.append(f'<div class="panel">{bar_panel(str(g), values, series, f"{value} of {g}")}</div>')
    classes = list(dict.fromkeys(body["class"]))
    legend = ("" if len(classes) == 1 else "<p>Bars: the score of " + ", ".join(
        f'<span style="color:{CLASS_COLOURS[k % len(CLASS_COLOURS)]}">&#9632; {escape(str(c))}</span>'
        for k, c in enumerate(classes)) + ".</p>")
    more = ("" if len(groups) <= MAX_PANELS else
            f"<p>{len(groups) - MAX_PANELS} more columns of smaller effect are in the table below.</p>")
    if kind == "trees":
        imp = body.groupby("group", sort=False)["importance"].first().loc[groups]
        rows = [(g, float(v), CLASS_COLOURS[0], f"{g}: {v:.4g}") for g, v in imp.items()]
        intro = ("<p>A tree ensemble, read through its columns: each column's <b>importance</b> (how far its value "
                 "moves the mean score) and its <b>partial dependence</b> (the mean score with the column set to each "
                 "value, the other columns uniform over their public values). Computed from the model alone, over the "
                 "public domain: post-processing, no data.</p>"
                 + f'<div class="importance">{hbar_chart(rows, "importance of each column")}</div>')
    else:
        inter = frame[frame["group"] == "(intercept)"]
        intro = ("<p>An additive model: a record's score is the intercept ("
                 + ", ".join(f"{escape(str(c))}: {v:+.4g}" for c, v in zip(inter["class"], inter[value]))
                 + ") plus each column's contribution at the record's value, drawn below per column (largest effect "
                 "first).</p>")
    table = body[["group", "value", "class", value]].to_html(index=False, float_format=lambda v: f"{v:+.4g}",
                                                             border=0)
    return (intro + legend + f'<div class="panels shapes">{"".join(panels)}</div>' + more
            + f"<details><summary>Every value</summary><div class=scroll>{table}</div></details>")
