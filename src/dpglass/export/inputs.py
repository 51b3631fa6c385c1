"""How an exported model reads a row: its features, and the checks its ``predict`` makes on the values.

A model on 0/1 features reads one column per feature, by the feature's name (``x0, x1, ...`` for a model
fitted on an array), and its ``predict`` refuses anything but 0 and 1; DP-GBDT's bounded numeric columns are
numbers (a missing value is refused).  A :class:`~dpglass.models.DPPipeline` reads the schema's raw columns and
its model's features are the encoding's indicators (:class:`~dpglass.schema.Encoding`): ``column > cut``
(numeric), ``column = category`` (categorical, compared by :func:`~dpglass.schema.columns.category_key`'s text)
and ``column`` (binary).  A value the schema refuses (missing where the column does not declare
``missing="none"``, a category outside the list, a fraction in an integer column) is refused by ``predict``:
the exported SQL returns NULL for that row and the exported Python function raises ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpglass.schema.columns import category_key

__all__ = ["ColumnRule", "Feature", "Inputs", "plain_inputs", "schema_inputs"]


@dataclass(frozen=True)
class Feature:
    """Model feature: ``kind`` ``"bit"`` (column is 0/1; the feature is its value), ``"number"`` (the column's
    number), or a schema indicator: ``"above"`` (column > ``value``), ``"is"`` (column's category key ==
    ``value``), ``"true"`` (binary column is 1; missing reads as 0)."""

    kind: str
    column: str
    value: object = None


@dataclass(frozen=True)
class ColumnRule:
    """What ``predict`` accepts in one column: ``kind`` ``"bit"`` (0 or 1), ``"number"`` (a number, not
    missing), ``"numeric"``, ``"categorical"`` or ``"binary"`` (the schema's kinds, with its missing-value rule
    ``missing_ok``, ``integer`` and the category keys)."""

    column: str
    kind: str
    missing_ok: bool = False
    integer: bool = False
    categories: tuple = ()


@dataclass(frozen=True)
class Inputs:
    features: tuple
    columns: tuple
    schema: bool = False  # a DPPipeline's raw columns


def plain_inputs(names, numeric=()) -> Inputs:
    """A model read from its own feature columns: 0/1, except the indices in ``numeric`` (numbers)."""
    numeric = set(numeric)
    kinds = ["number" if j in numeric else "bit" for j in range(len(names))]
    return Inputs(tuple(Feature(k, str(n)) for k, n in zip(kinds, names)),
                  tuple(ColumnRule(str(n), k) for k, n in zip(kinds, names)))


def schema_inputs(encoding) -> Inputs:
    """A DPPipeline's model read through its encoding of the schema's raw columns (``Encoding.transform``'s
    features, in its order)."""
    features, rules = [], []
    for col, cuts in zip(encoding.schema.features, encoding.cuts):
        ok = col.missing == "none"
        if col.kind == "numeric":
            features += [Feature("above", col.name, float(t)) for t in cuts]
            rules.append(ColumnRule(col.name, "numeric", ok, bool(col.integer)))
        elif col.kind == "categorical":
            keys = tuple(category_key(c) for c in col.categories)
            features += [Feature("is", col.name, k) for k in keys]
            rules.append(ColumnRule(col.name, "categorical", ok, categories=keys))
        else:
            features.append(Feature("true", col.name))
            rules.append(ColumnRule(col.name, "binary", ok))
    return Inputs(tuple(features), tuple(rules), schema=True)
