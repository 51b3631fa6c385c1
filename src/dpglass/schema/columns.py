"""A public schema: what each column of a table is, declared without looking at the data.

A :class:`Schema` lists the columns a model reads, each with its kind:

* ``numeric``: public bounds ``(lo, hi)`` (values outside are clipped) and how
  its thresholds are made: ``"grid"`` (``n_thresholds`` equally spaced cut
  points strictly inside the bounds), a list of user-given cut points, or
  ``"dp-quantiles"`` (``n_thresholds`` quantiles released with differential
  privacy, paid from the model's budget);
* ``categorical``: the public list of its categories;
* ``binary``: a 0/1 (or boolean) column used as is;
* ``ignore``: a column the model never reads (an id, free text).

A missing value (or, in a categorical column, a value outside its list) is
refused with an error naming the column, at fit and at predict, unless the
column declares ``missing="none"``: the value then sets none of the column's
indicators (a missing age is "not above any cut point"), a per-record rule
fixed in advance.  Nothing is guessed silently.

The target column is named in the schema too.  A schema is written as a small
JSON (or TOML) file; :func:`schema_template` writes one from a CSV's header
with the kinds guessed and the bounds left empty for the user to fill, since
bounds read off the data would leak.

Examples
--------
>>> s = Schema([numeric("age", 17, 90, thresholds="grid", n_thresholds=3),
...             categorical("sex", ["F", "M"]), ignore("id")], target="income")
>>> [c.name for c in s.features]
['age', 'sex']
>>> Schema.from_dict(s.to_dict()) == s
True
"""

from __future__ import annotations

import json
import math
import numbers
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dpglass.exceptions import DataValidationError, InvalidParameterError, PrivacyLeakWarning

__all__ = ["Column", "Schema", "binary", "categorical", "category_key", "ignore", "load_schema", "numeric",
           "schema_template"]

KINDS = ("numeric", "categorical", "binary", "ignore")
THRESHOLD_RULES = ("grid", "dp-quantiles")
#: What a missing value (a categorical column: also a value outside its list) means: an error, or no indicator.
MISSING_RULES = ("error", "none")


@dataclass(frozen=True)
class Column:
    """One column of the schema (use :func:`numeric`, :func:`categorical`, :func:`binary`, :func:`ignore`)."""

    name: str
    kind: str
    bounds: tuple | None = None
    thresholds: object = None  # "grid", "dp-quantiles" or a tuple of cut points (numeric only)
    n_thresholds: int | None = None
    categories: tuple | None = None
    missing: str = "error"

    def __post_init__(self):
        _check_column(self)

    def to_dict(self) -> dict:
        out = {"name": self.name, "kind": self.kind}
        if self.kind == "numeric":
            out["bounds"] = None if self.bounds is None else list(self.bounds)
            out["thresholds"] = self.thresholds if isinstance(self.thresholds, str) else list(self.thresholds)
            if isinstance(self.thresholds, str):
                out["n_thresholds"] = self.n_thresholds
        elif self.kind == "categorical":
            out["categories"] = list(self.categories)
        if self.missing != "error":
            out["missing"] = self.missing
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Column":
        if not isinstance(data, dict) or "name" not in data or "kind" not in data:
            raise InvalidParameterError(
                f"A schema column must be an object with 'name' and 'kind'; got {data!r}."
            )
        kind, missing = data["kind"], data.get("missing", "error")
        if kind == "numeric":
            b = data.get("bounds")
            return numeric(data["name"], *(b if b is not None else (None, None)),
                           thresholds=data.get("thresholds", "grid"), n_thresholds=data.get("n_thresholds", 4),
                           missing=missing)
        if kind == "categorical":
            return categorical(data["name"], data.get("categories"), missing=missing)
        if kind in ("binary", "ignore"):
            return Column(str(data["name"]), kind, missing=missing)
        raise InvalidParameterError(
            f"Column {data['name']!r} has kind {kind!r}; the kinds are {', '.join(KINDS)}."
        )


def category_key(v):
    """The text a categorical value is compared by, value by value: 1, 1.0, numpy's 1 and "1" are one category.

    A function of the value alone, never of its column's dtype: how pandas
    types a column depends on every record in it (one "?" turns a column of
    numbers into text), and an encoding that followed the dtype would let one
    record change how every other record is encoded.
    """
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        return str(int(f)) if f.is_integer() else repr(f)
    return str(v)


def numeric(name, lo, hi, *, thresholds="grid", n_thresholds=4, missing="error") -> Column:
    """A numeric column with public bounds ``(lo, hi)`` and a threshold rule."""
    if isinstance(thresholds, (list, tuple)):
        thresholds = tuple(float(t) if isinstance(t, numbers.Real) and not isinstance(t, bool) else t
                           for t in thresholds)
        n_thresholds = None
    bounds = None if lo is None and hi is None else (lo, hi)
    return Column(str(name), "numeric", bounds=bounds, thresholds=thresholds, n_thresholds=n_thresholds,
                  missing=missing)


def categorical(name, categories, *, missing="error") -> Column:
    """A categorical column with its public list of categories."""
    cats = tuple(categories) if isinstance(categories, (list, tuple)) else categories
    return Column(str(name), "categorical", categories=cats, missing=missing)


def binary(name, *, missing="error") -> Column:
    """A 0/1 column used as is."""
    return Column(str(name), "binary", missing=missing)


def ignore(name) -> Column:
    """A column the model never reads (an id, free text)."""
    return Column(str(name), "ignore")


def _check_column(c: Column) -> None:
    where = f"Column {c.name!r} of the schema"
    if c.kind not in KINDS:
        raise InvalidParameterError(f"{where} has kind {c.kind!r}; the kinds are {', '.join(KINDS)}.")
    if c.missing not in MISSING_RULES:
        raise InvalidParameterError(
            f'{where} has missing={c.missing!r}; use "error" (a missing value is refused, the default) or '
            '"none" (a missing value sets none of the column\'s indicators).'
        )
    if c.kind == "numeric":
        _check_numeric(c, where)
    if c.kind == "categorical":
        cats = c.categories
        if not isinstance(cats, tuple) or not cats or any(not isinstance(v, (str, numbers.Real)) for v in cats):
            raise InvalidParameterError(
                f"{where} is categorical and needs its public list of categories, e.g. "
                f'"categories": ["Private", "Self-emp"]; got {cats!r}.'
            )
        if len({category_key(v) for v in cats}) != len(cats):  # 1 and "1" are one category
            raise InvalidParameterError(f"{where} lists a category twice: {list(cats)!r}.")


def _check_numeric(c: Column, where: str) -> None:
    b = c.bounds
    ok = (isinstance(b, tuple) and len(b) == 2
          and all(isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) for v in b)
          and b[0] < b[1])
    if not ok:
        raise InvalidParameterError(
            f"{where} is numeric and needs public bounds lo < hi, chosen without looking at the data "
            f'(e.g. the documented range: "bounds": [17, 90]); got {None if b is None else list(b)!r}. '
            "Fill them in the schema file (dpglass schema writes a template)."
        )
    t = c.thresholds
    if isinstance(t, str):
        if t not in THRESHOLD_RULES:
            raise InvalidParameterError(
                f"{where} has thresholds={t!r}; use 'grid', 'dp-quantiles' or a list of cut points."
            )
        n = c.n_thresholds
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or not 1 <= n <= 64:
            raise InvalidParameterError(f"{where} needs n_thresholds, an integer in [1, 64]; got {n!r}.")
    elif isinstance(t, tuple):
        if not t or any(not isinstance(v, float) or not b[0] < v < b[1] for v in t):
            raise InvalidParameterError(
                f"{where} has cut points {list(t)!r}; give numbers strictly inside its bounds {list(b)!r}."
            )
    else:
        raise InvalidParameterError(
            f"{where} has thresholds={t!r}; use 'grid', 'dp-quantiles' or a list of cut points."
        )


@dataclass(frozen=True)
class Schema:
    """The public description of a table: its columns and its target.

    Parameters
    ----------
    columns : list of Column
    target : str or None
        The label column (read by ``fit``, ignored by ``predict``).
    """

    columns: tuple = field(default_factory=tuple)
    target: str | None = None

    def __init__(self, columns, target=None):
        cols = tuple(columns)
        if not all(isinstance(c, Column) for c in cols):
            raise InvalidParameterError("A Schema takes Column objects (numeric(...), categorical(...), ...).")
        names = [c.name for c in cols]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InvalidParameterError(f"The schema names column(s) {dup!r} twice.")
        if target is not None and target in names:
            raise InvalidParameterError(f"The target {target!r} is also listed as a feature column.")
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "target", target)
        if not self.features:
            raise InvalidParameterError("The schema has no feature column (every column is 'ignore').")

    @property
    def features(self) -> tuple:
        """The columns the model reads (all but ``ignore``)."""
        return tuple(c for c in self.columns if c.kind != "ignore")

    def to_dict(self) -> dict:
        return {"target": self.target, "columns": [c.to_dict() for c in self.columns]}

    @classmethod
    def from_dict(cls, data: dict) -> "Schema":
        if not isinstance(data, dict) or not isinstance(data.get("columns"), list):
            raise InvalidParameterError("A schema is an object with a 'columns' list (and a 'target').")
        return cls([Column.from_dict(c) for c in data["columns"]], target=data.get("target"))

    def save(self, path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")


def load_schema(path) -> Schema:
    """Read a schema from a JSON or TOML file (``.toml``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataValidationError(f"Could not read the schema file {path}: {exc}") from exc
    try:
        if path.suffix.lower() == ".toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except ValueError as exc:
        raise DataValidationError(f"The schema file {path} is not valid {path.suffix[1:] or 'JSON'}: {exc}") from exc
    return Schema.from_dict(data)


def schema_template(frame, target=None, *, fill_bounds_from_data: bool = False) -> dict:
    """A schema template for a table: column names and guessed kinds, bounds left empty.

    Every read column states ``"missing": "error"`` (a missing value is
    refused; ``"none"`` sets no indicator instead).  Numeric columns get
    ``"bounds": null`` for the user to fill with public values; ``fill_bounds_from_data=True`` fills them with the data's min and
    max instead, which is **not private** (:class:`PrivacyLeakWarning`).
    Text columns get their categories left empty likewise (listing the values
    found would reveal them); columns whose name looks like an id are
    ``ignore``.
    """
    cols = []
    for name in frame.columns:
        if name == target:
            continue
        s = frame[name]
        values = set(pd.unique(s.dropna()))
        if "id" in str(name).lower().replace("-", "_").split("_") or str(name).lower() == "id":
            cols.append({"name": str(name), "kind": "ignore"})
        elif values <= {0, 1, True, False}:
            cols.append({"name": str(name), "kind": "binary", "missing": "error"})
        elif pd.api.types.is_numeric_dtype(s):
            bounds = [float(s.min()), float(s.max())] if fill_bounds_from_data else None
            cols.append({"name": str(name), "kind": "numeric", "bounds": bounds, "thresholds": "grid",
                         "n_thresholds": 4, "missing": "error"})
        else:
            cats = sorted(map(str, values)) if fill_bounds_from_data else []
            cols.append({"name": str(name), "kind": "categorical", "categories": cats, "missing": "error"})
    if fill_bounds_from_data:
        warnings.warn(
            "The schema's bounds and categories were read off the data: they are NOT private (a bound is "
            "some record's value; a rare category singles a person out). Replace them with public values "
            "before training a model you will publish.",
            PrivacyLeakWarning,
            stacklevel=2,
        )
    return {"target": target, "columns": cols}
