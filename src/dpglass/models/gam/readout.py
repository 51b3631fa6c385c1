"""How people read a fitted :class:`~dpglass.models.gam.estimator.DPGAMClassifier`: its feature groups, the
printout (a table of shape functions per group) and ``explain()``'s tidy table.  Post-processing of released
values only."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpglass.exceptions import InvalidParameterError

__all__ = ["bin_labels", "explain_frame", "resolve_groups", "shape_lines"]


def resolve_groups(feature_groups, names: list, owner: str = "DPGAMClassifier") -> list:
    """Each feature's group name: ``feature_groups`` (one public name per feature, e.g. the raw column a 0/1
    column encodes), or with None the feature's own name."""
    if feature_groups is None:
        return [str(n) for n in names]
    groups = list(feature_groups)
    if len(groups) != len(names):
        raise InvalidParameterError(
            f"{owner}'s feature_groups has {len(groups)} entries but X has {len(names)} features: give one group "
            "name per feature (the raw column each 0/1 column encodes), or None for one group per feature.")
    bad = [g for g in groups if not (isinstance(g, str) and g)]
    if bad:
        raise InvalidParameterError(f"{owner}'s feature_groups holds {bad[0]!r}: every group name is a non-empty "
                                    "string.")
    return groups


def _interval_labels(bounds, edges) -> list:
    """A numeric column's bins in its own terms: ``[low, e0]``, ``(e0, e1]``, .., ``(e_last, high]`` (a value's
    bin is the number of edges strictly below it, after clipping to the bounds)."""
    points = [bounds[0], *[float(v) for v in edges], bounds[1]]
    first = f"[{points[0]:.4g}, {points[1]:.4g}]"
    return [first] + [f"({a:.4g}, {b:.4g}]" for a, b in zip(points[1:-1], points[2:])]


def bin_labels(est) -> list:
    """Per feature, its bins' readable values: ``"0"``/``"1"`` (0/1), the codes (categorical), intervals
    (numeric), then ``"missing"`` for a declared missing bin."""
    out = []
    for b, m, miss, e in zip(est.bounds_, est.categories_, est.missing_, est.edges_):
        labels = [str(c) for c in range(m)] if m is not None else ["0", "1"] if b is None else _interval_labels(b, e)
        out.append(labels + (["missing"] if miss else []))
    return out


def _by_group(groups: list) -> dict:
    """Group name -> its features' indices, groups in order of first appearance."""
    out: dict = {}
    for j, g in enumerate(groups):
        out.setdefault(g, []).append(j)
    return out


def shape_lines(intercept, shapes, names: list, groups: list, labels: list, bins=None) -> list:
    """The printout's table: the intercept(s), then per group each feature's contribution at 0 and at 1 (or, with
    ``bins``, the features' readable bin values: in each of its bins), one column per scored class
    (``labels[1:]``)."""
    heads = ["value"] + [f"score({label})" for label in labels[1:]]
    rows = [("intercept", "", list(intercept))]
    for g, members in _by_group(groups).items():
        rows.append((f"group {g}", None, None))
        for j in members:
            if bins is None:
                rows += [(f"  {names[j]}", "0", list(shapes[j][0])), ("", "1", list(shapes[j][1]))]
                continue
            rows += [(f"  {names[j]}" if b == 0 else "", _value_text(text), list(shapes[j][b]))
                     for b, text in enumerate(bins[j])]
    width = max(len(r[0]) for r in rows)
    cells = [max([len(heads[0])] + [len(r[1]) for r in rows if r[1] is not None])] + [max(len(h), 8) for h in heads[1:]]
    lines = [" " * width + "  " + "  ".join(h.rjust(w) for h, w in zip(heads, cells))]
    for name, value, scores in rows:
        if scores is None:
            lines.append(name)
            continue
        texts = [value] + [f"{v:+.4f}" for v in scores]
        lines.append(name.ljust(width) + "  " + "  ".join(t.rjust(w) for t, w in zip(texts, cells)))
    return lines


def _value_text(label: str) -> str:
    """A bin's value as the printout reads it after the column's name: ``= 3``, ``in (37.5, 42]``, ``missing``."""
    if label == "missing":
        return label
    return f"in {label}" if label[0] in "[(" else f"= {label}"


def explain_frame(intercept, shapes, names: list, groups: list, labels: list, bins: list) -> pd.DataFrame:
    """One row per (feature, bin, scored class): its contribution to that class's score, plus the intercept rows
    (group and feature ``"(intercept)"``, bin and value missing).  ``bins``: per feature its bins' readable
    values (:func:`bin_labels`).  For a record, the intercept plus the contributions in its features' bins is
    its score (``decision_function``)."""
    scored = list(labels[1:])
    recs = [("(intercept)", "(intercept)", pd.NA, pd.NA, c, float(v)) for c, v in zip(scored, intercept)]
    for j, name in enumerate(names):
        for b, text in enumerate(bins[j]):
            recs += [(groups[j], name, b, text, c, float(v)) for c, v in zip(scored, np.asarray(shapes[j][b]))]
    frame = pd.DataFrame(recs, columns=["group", "feature", "bin", "value", "class", "contribution"])
    frame["bin"] = frame["bin"].astype("Int64")
    return frame
