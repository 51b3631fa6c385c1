"""How an exported model reads a row: its features, and the checks its ``predict`` makes on the values.

A model fitted on its own columns reads one column per feature, by the feature's name (``x0, x1, ...`` for a
model fitted on an array): ``"bit"`` (0 or 1), ``"number"`` (DP-GBDT's and dp-gam's bounded numeric columns) or
``"code"`` (dp-gam's categorical columns of integer codes ``0..m-1``), missing (NaN) only where the model
declares it (dp-gam's ``missing``).  A :class:`~dpglass.models.DPPipeline` reads the schema's raw columns through
its :class:`~dpglass.schema.Encoding`: on the 0/1 route its model's features are the indicators ``column > cut``
(``"above"``), ``column = category`` (``"is"``, compared by :func:`~dpglass.schema.columns.category_key`'s text)
and ``column`` (``"true"``, a binary column); on the numbers route a numeric column is one feature, its value
clipped to the schema's bounds, a missing value read as the lower bound, or kept missing for the model's own
missing bin when the encoding says ``missing_bins`` (``"clipped"``); on the codes route a
categorical column is its category's index, a missing or unlisted value the extra last code (``"index"``), and a
numeric column listing its cut points, on the cut-codes route, the number of them it is above, a missing value the
extra last code (``"interval"``).  A
value the model's ``predict`` refuses (missing where not declared, a category outside the list, a fraction in an
integer column, anything but 0/1 in a 0/1 column) makes the exported SQL return NULL for that row and the
exported Python function raise ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpglass.models.pipeline.route import cut_coded
from dpglass.schema.columns import category_key

__all__ = ["ColumnRule", "Feature", "Inputs", "plain_inputs", "schema_inputs"]


@dataclass(frozen=True)
class Feature:
    """One model feature read from ``column``: ``kind`` (see the module), ``value`` (the cut point of
    ``"above"``, the key of ``"is"``, the bounds of ``"clipped"``, the keys of ``"index"``, the number of codes of
    ``"code"``, ``(cut points, has a missing code)`` of ``"interval"``) and ``missing_ok`` (the feature may be missing: a NULL / None value)."""

    kind: str
    column: str
    value: object = None
    missing_ok: bool = False


@dataclass(frozen=True)
class ColumnRule:
    """What ``predict`` accepts in one column: ``kind`` ``"bit"``, ``"number"``, ``"code"`` (a model's own
    columns) or the schema's ``"numeric"``, ``"categorical"``, ``"binary"``, with ``missing_ok``, ``integer``,
    ``categories`` (the keys) and ``size`` (a code column's number of codes)."""

    column: str
    kind: str
    missing_ok: bool = False
    integer: bool = False
    categories: tuple = ()
    size: int = 0


@dataclass(frozen=True)
class Inputs:
    features: tuple
    columns: tuple
    schema: bool = False  # a DPPipeline's raw columns


def plain_inputs(names, bounds=None, categories=None, missing=None) -> Inputs:
    """A model read from its own feature columns: per feature its ``bounds`` entry (a number column), its
    ``categories`` entry (a code column of that many codes) or neither (0/1), and whether it may be missing."""
    d = len(names)
    bounds, categories, missing = bounds or [None] * d, categories or [None] * d, missing or [False] * d
    features, rules = [], []
    for name, b, m, ok in zip(names, bounds, categories, missing):
        kind = "code" if m is not None else ("number" if b is not None else "bit")
        features.append(Feature(kind, str(name), None if m is None else int(m), bool(ok)))
        rules.append(ColumnRule(str(name), kind, bool(ok), size=0 if m is None else int(m)))
    return Inputs(tuple(features), tuple(rules))


def schema_inputs(encoding) -> Inputs:
    """A DPPipeline's model read through its encoding of the schema's raw columns (``Encoding.transform``'s
    features, in its order, on its route)."""
    numbers, codes = bool(getattr(encoding, "numbers", False)), bool(getattr(encoding, "codes", False))
    keep_missing = bool(getattr(encoding, "missing_bins", False))  # a missing number stays missing (its own bin)
    features, rules = [], []
    for col, cuts in zip(encoding.schema.features, encoding.cuts):
        ok = col.missing == "none"
        if col.kind == "numeric":
            if cut_coded(encoding, col):
                features.append(Feature("interval", col.name, (tuple(float(t) for t in col.thresholds), ok)))
            elif numbers:
                features.append(Feature("clipped", col.name, (float(col.bounds[0]), float(col.bounds[1])),
                                        missing_ok=ok and keep_missing))
            else:
                features += [Feature("above", col.name, float(t), ok) for t in cuts]
            rules.append(ColumnRule(col.name, "numeric", ok, bool(col.integer)))
        elif col.kind == "categorical":
            keys = tuple(category_key(c) for c in col.categories)
            if codes:
                features.append(Feature("index", col.name, keys))
            else:
                features += [Feature("is", col.name, k, ok) for k in keys]
            rules.append(ColumnRule(col.name, "categorical", ok, categories=keys))
        else:
            features.append(Feature("true", col.name, missing_ok=ok))
            rules.append(ColumnRule(col.name, "binary", ok))
    return Inputs(tuple(features), tuple(rules), schema=True)
