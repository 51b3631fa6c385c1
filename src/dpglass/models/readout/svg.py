"""Inline SVG charts for the model card: plain strings, no script, no external resource, readable at any width
(each chart scales to its container through its viewBox)."""

from __future__ import annotations

import re
from html import escape

__all__ = ["BUDGET_COLOURS", "CLASS_COLOURS", "bar_panel", "hbar_chart", "stacked_hbar_chart"]

#: The model's charts: one colour per scored class (no red: red marks a weak guarantee).
CLASS_COLOURS = ("#1f5fa8", "#2a9d8f", "#7b4fa0", "#8c6d1f", "#4d6b2f", "#5a5a5a")
#: The budget chart: a proven release, and a paper-claim or non-private one.
BUDGET_COLOURS = {"proven": "#d95f02", "weak": "#c0001a"}
FONT = 'font-family="system-ui, sans-serif"'


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def _svg(width: float, height: float, body: list, label: str) -> str:
    return (f'<svg class="chart" role="img" aria-label="{escape(label)}" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'width="100%" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">'
            + "".join(body) + "</svg>")


def _tick(text: str) -> str:
    """An interval's tick label by its upper end (``(2.875, 3.812]`` -> ``<= 3.812``): bins are read left to
    right, and each bar's tooltip keeps the whole interval."""
    m = re.fullmatch(r"[\(\[]\s*[^,]+,\s*([^\]\)]+?)\s*([\]\)])", text)
    return text if m is None else ("<= " if m.group(2) == "]" else "< ") + m.group(1)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def hbar_chart(rows: list, label: str, width: int = 460, label_chars: int = 70) -> str:
    """Horizontal bars, one row each: ``(label, value, colour, tooltip)``, the label above its bar (so that the
    chart stays legible when a phone scales it down); negative values go left of a zero line."""
    pad, step = 6, 40
    lo = min([0.0] + [r[1] for r in rows])
    hi = max([0.0] + [r[1] for r in rows])
    span = (hi - lo) or 1.0
    plot_w = width - 2 * pad - 56
    zero = pad + plot_w * (-lo / span)
    body = []
    for i, (name, value, colour, tip) in enumerate(rows):
        y = 4 + i * step
        x0, x1 = sorted((zero, zero + plot_w * value / span))
        body.append(f'<text x="{pad}" y="{y + 13}" font-size="14" {FONT}>{escape(_short(str(name), label_chars))}'
                    "</text>")
        body.append(f'<rect x="{x0:.1f}" y="{y + 18}" width="{max(x1 - x0, 0.0):.1f}" height="14" fill="{colour}">'
                    f"<title>{escape(tip)}</title></rect>")
        body.append(f'<text x="{max(x1, zero) + 4:.1f}" y="{y + 30}" font-size="13" {FONT}>{escape(_fmt(value))}'
                    "</text>")
    height = 8 + len(rows) * step
    body.append(f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="16" y2="{height - 4}" stroke="#333" stroke-width="1"/>')
    return _svg(width, height, body, label)


def stacked_hbar_chart(rows: list, classes: list, label: str, width: int = 460, label_chars: int = 70) -> str:
    """One stacked bar per row: ``(label, [value per class])``, the label above its bar; negative values are
    drawn as 0."""
    pad, step = 6, 40
    totals = [sum(max(v, 0.0) for v in vals) for _, vals in rows]
    top = max(totals + [1.0])
    plot_w = width - 2 * pad - 10
    body = []
    for i, (name, vals) in enumerate(rows):
        y = 22 + i * step
        x = pad
        body.append(f'<text x="{pad}" y="{y + 13}" font-size="14" {FONT}>{escape(_short(str(name), label_chars))}'
                    "</text>")
        for k, v in enumerate(vals):
            w = plot_w * max(v, 0.0) / top
            body.append(f'<rect x="{x:.1f}" y="{y + 18}" width="{w:.1f}" height="14" '
                        f'fill="{CLASS_COLOURS[k % len(CLASS_COLOURS)]}"><title>{escape(str(classes[k]))}: '
                        f"{escape(_fmt(v))}</title></rect>")
            x += w
    for k, c in enumerate(classes):  # the legend
        body.append(f'<rect x="{pad + 90 * k}" y="2" width="12" height="12" '
                    f'fill="{CLASS_COLOURS[k % len(CLASS_COLOURS)]}"/><text x="{pad + 90 * k + 16}" y="12" '
                    f'font-size="11" {FONT}>{escape(_short(str(c), 10))}</text>')
    return _svg(width, 26 + len(rows) * step, body, label)


def bar_panel(title: str, values: list, series: dict, label: str, width: int = 300, height: int = 190) -> str:
    """One column's panel: a group of bars per value (one bar per scored class) around a zero line."""
    top_pad, bottom_pad, left = 22, 58, 56
    everything = [v for vals in series.values() for v in vals]
    lo, hi = min(everything + [0.0]), max(everything + [0.0])
    span = (hi - lo) or 1.0
    plot_h, plot_w = height - top_pad - bottom_pad, width - left - 6
    y_of = lambda v: top_pad + plot_h * (hi - v) / span  # noqa: E731
    slot = plot_w / max(len(values), 1)
    bw = 0.8 * slot / max(len(series), 1)
    body = [f'<text x="{width / 2}" y="14" text-anchor="middle" font-size="13" font-weight="600" {FONT}>'
            f"{escape(_short(title, 40))}</text>",
            f'<text x="{left - 4}" y="{top_pad + 9}" text-anchor="end" font-size="10" {FONT}>{_fmt(hi)}</text>',
            f'<text x="{left - 4}" y="{top_pad + plot_h}" text-anchor="end" font-size="10" {FONT}>{_fmt(lo)}</text>']
    for k, (cls, vals) in enumerate(series.items()):
        colour = CLASS_COLOURS[k % len(CLASS_COLOURS)]
        for i, v in enumerate(vals):
            x = left + i * slot + 0.1 * slot + k * bw
            y0, y1 = sorted((y_of(0.0), y_of(v)))
            body.append(f'<rect x="{x:.1f}" y="{y0:.1f}" width="{bw:.1f}" height="{y1 - y0:.1f}" fill="{colour}">'
                        f"<title>{escape(str(values[i]))}, {escape(str(cls))}: {escape(_fmt(v))}</title></rect>")
    body.append(f'<line x1="{left}" x2="{width - 4}" y1="{y_of(0.0):.1f}" y2="{y_of(0.0):.1f}" stroke="#333"/>')
    rotate = any(len(str(v)) > 6 for v in values) or len(values) > 6
    every = max(1, -(-len(values) // 8))  # at most 8 labels; each bar's tooltip names its value
    for i, v in enumerate(values):
        if i % every and i != len(values) - 1:
            continue
        x = left + (i + 0.5) * slot
        y = top_pad + plot_h + 12
        turn = f' transform="rotate(-30 {x:.1f} {y})"' if rotate else ""
        body.append(f'<text x="{x:.1f}" y="{y}" text-anchor="{"end" if rotate else "middle"}" font-size="10" '
                    f'{FONT}{turn}>{escape(_short(_tick(str(v)), 12))}</text>')
    return _svg(width, height, body, label)
