"""How people read a fitted :class:`~dpglass.models.gam.estimator.DPGAMClassifier`: its feature groups, the
printout (a table of shape functions per group) and ``explain()``'s tidy table.  Post-processing of released
values only."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpglass.exceptions import InvalidParameterError

__all__ = ["explain_frame", "resolve_groups", "shape_lines"]


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


def _by_group(groups: list) -> dict:
    """Group name -> its features' indices, groups in order of first appearance."""
    out: dict = {}
    for j, g in enumerate(groups):
        out.setdefault(g, []).append(j)
    return out


def shape_lines(intercept, shapes, names: list, groups: list, labels: list) -> list:
    """The printout's table: the intercept(s), then per group each feature's contribution at 0 and at 1, one
    column per scored class (``labels[1:]``)."""
    heads = ["value"] + [f"score({label})" for label in labels[1:]]
    rows = [("intercept", "", list(intercept))]
    for g, members in _by_group(groups).items():
        rows.append((f"group {g}", None, None))
        for j in members:
            rows += [(f"  {names[j]}", "0", list(shapes[j][0])), ("", "1", list(shapes[j][1]))]
    width = max(len(r[0]) for r in rows)
    cells = [len(heads[0])] + [max(len(h), 8) for h in heads[1:]]
    lines = [" " * width + "  " + "  ".join(h.rjust(w) for h, w in zip(heads, cells))]
    for name, value, scores in rows:
        if scores is None:
            lines.append(name)
            continue
        texts = [value] + [f"{v:+.4f}" for v in scores]
        lines.append(name.ljust(width) + "  " + "  ".join(t.rjust(w) for t, w in zip(texts, cells)))
    return lines


def explain_frame(intercept, shapes, names: list, groups: list, labels: list) -> pd.DataFrame:
    """One row per (feature, bin, scored class): its contribution to that class's score, plus the intercept rows
    (group and feature ``"(intercept)"``, bin missing).  For a record, the intercept plus the contributions at
    its features' values is its score (``decision_function``)."""
    scored = list(labels[1:])
    recs = [("(intercept)", "(intercept)", pd.NA, c, float(v)) for c, v in zip(scored, intercept)]
    for j, name in enumerate(names):
        for b in (0, 1):
            recs += [(groups[j], name, b, c, float(v)) for c, v in zip(scored, np.asarray(shapes[j][b]))]
    frame = pd.DataFrame(recs, columns=["group", "feature", "bin", "class", "contribution"])
    frame["bin"] = frame["bin"].astype("Int64")
    return frame
