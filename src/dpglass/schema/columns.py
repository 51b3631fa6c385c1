"""A public schema: what each column of a table is, declared without looking at the data.

A :class:`Schema` lists the columns a model reads, each with its kind:

* ``numeric``: public bounds ``(lo, hi)`` (values outside are clipped) and how
  its thresholds are made: ``"grid"`` (``n_thresholds`` equally spaced cut
  points strictly inside the bounds), a list of user-given cut points, or
  ``"dp-quantiles"`` (``n_thresholds`` quantiles released with differential
  privacy, paid from the model's budget); ``integer=True`` declares that its
  values are whole numbers, so its cut points fall half-way between them
  (``year>2008.5``) and a grid asking for more cut points than the bounds
  hold whole numbers to separate is refused;
* ``categorical``: the public list of its categories;
* ``binary``: a 0/1 (or boolean) column used as is;
* ``ignore``: a column the model never reads (an id, free text).

A missing value (or, in a categorical column, a value outside its list) is
refused with an error naming the column, at fit and at predict, unless the
column declares ``missing="none"``: the value then sets none of the column's
indicators (a missing age is "not above any cut point"), a per-record rule
fixed in advance.  Nothing is guessed silently: a key the schema does not
know (``"n_threshold"``) is refused with the closest valid key, and so is a
grid whose cut points would not be distinct values strictly inside the bounds.

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

import difflib
import functools
import json
import math
import numbers
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dpglass.exceptions import DataValidationError, InvalidParameterError, PrivacyLeakWarning

__all__ = ["Column", "Schema", "binary", "categorical", "category_key", "grid_cut_points", "ignore", "load_schema",
           "numeric", "quantile_cut_point", "quantile_cut_points", "schema_template"]

KINDS = ("numeric", "categorical", "binary", "ignore")
THRESHOLD_RULES = ("grid", "dp-quantiles")
#: What a missing value (a categorical column: also a value outside its list) means: an error, or no indicator.
MISSING_RULES = ("error", "none")
#: The keys a schema file may hold: at the top, and in a column of each kind (an "ignore" column is never read,
#: so it tolerates the keys of the other kinds, e.g. a template's numeric column turned to "ignore").
SCHEMA_KEYS = ("target", "columns")
COLUMN_KEYS = {
    "numeric": ("name", "kind", "bounds", "thresholds", "n_thresholds", "integer", "missing"),
    "categorical": ("name", "kind", "categories", "missing"),
    "binary": ("name", "kind", "missing"),
    "ignore": ("name", "kind"),
}
_ALL_COLUMN_KEYS = tuple(dict.fromkeys(k for keys in COLUMN_KEYS.values() for k in keys))
#: Whole-number bounds beyond this would not keep half-integer cut points exact in float64.
_INTEGER_LIMIT = 2 ** 52


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
    integer: bool = False  # numeric only: the values are whole numbers (cut points half-way between them)

    def __post_init__(self):
        _check_column(self)

    def to_dict(self) -> dict:
        out = {"name": self.name, "kind": self.kind}
        if self.kind == "numeric":
            out["bounds"] = None if self.bounds is None else list(self.bounds)
            out["thresholds"] = self.thresholds if isinstance(self.thresholds, str) else list(self.thresholds)
            if isinstance(self.thresholds, str):
                out["n_thresholds"] = self.n_thresholds
            if self.integer:
                out["integer"] = True
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
        if kind not in KINDS:
            raise InvalidParameterError(
                f"Column {data['name']!r} has kind {kind!r}{_did_you_mean(kind, KINDS)}; the kinds are "
                f"{', '.join(KINDS)}."
            )
        _refuse_unknown_keys(data, kind)
        if kind == "numeric":
            b = data.get("bounds")
            thresholds = data.get("thresholds", "grid")
            n = data.get("n_thresholds", 4)
            if isinstance(thresholds, list) and "n_thresholds" in data and n != len(thresholds):
                raise InvalidParameterError(
                    f"Column {data['name']!r} of the schema lists {len(thresholds)} cut points and also says "
                    f'"n_thresholds": {n!r}, which a list of cut points does not read: remove n_thresholds (it '
                    'belongs to "grid" and "dp-quantiles").'
                )
            return numeric(data["name"], *(b if b is not None else (None, None)), thresholds=thresholds,
                           n_thresholds=n, integer=data.get("integer", False), missing=missing)
        if kind == "categorical":
            return categorical(data["name"], data.get("categories"), missing=missing)
        return Column(str(data["name"]), kind, missing=missing)


def _did_you_mean(word, valid) -> str:
    close = difflib.get_close_matches(str(word), list(valid), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _refuse_unknown_keys(data: dict, kind: str) -> None:
    """A key a column of this kind does not read is refused, with the closest valid key (a typo such as
    ``"n_threshold"`` would otherwise silently leave the default in place)."""
    valid = _ALL_COLUMN_KEYS if kind == "ignore" else COLUMN_KEYS[kind]
    for key in data:
        if key in valid:
            continue
        where = f"Column {data['name']!r} of the schema ({kind})"
        if key in _ALL_COLUMN_KEYS:
            owners = [k for k, keys in COLUMN_KEYS.items() if key in keys and k != "ignore"]
            raise InvalidParameterError(
                f"{where} has the key {key!r}, which only {' and '.join(owners)} columns read: remove it, or "
                f"change the column's kind. A {kind} column's keys are: {', '.join(valid)}."
            )
        close = difflib.get_close_matches(str(key), list(valid), n=1) or difflib.get_close_matches(
            str(key), list(_ALL_COLUMN_KEYS), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InvalidParameterError(
            f"{where} has the key {key!r}, which dpglass does not know: {hint}A {kind} column's keys are: "
            f"{', '.join(valid)}. (An unknown key is refused, not ignored: a misspelt option would silently "
            "leave its default in place.)"
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


def numeric(name, lo, hi, *, thresholds="grid", n_thresholds=4, integer=False, missing="error") -> Column:
    """A numeric column with public bounds ``(lo, hi)`` and a threshold rule.

    ``integer=True``: the column holds whole numbers (a year, a count); its
    bounds must be whole numbers and its cut points fall half-way between
    two of them.
    """
    if isinstance(thresholds, (list, tuple)):
        thresholds = tuple(float(t) if isinstance(t, numbers.Real) and not isinstance(t, bool) else t
                           for t in thresholds)
        n_thresholds = None
    bounds = None if lo is None and hi is None else (lo, hi)
    return Column(str(name), "numeric", bounds=bounds, thresholds=thresholds, n_thresholds=n_thresholds,
                  missing=missing, integer=integer)


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
    if not isinstance(c.integer, bool) or (c.integer and c.kind != "numeric"):
        raise InvalidParameterError(
            f'{where} has integer={c.integer!r}; "integer" is true or false, and only a numeric column has it.'
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
    if c.integer and not all(float(v).is_integer() and abs(v) < _INTEGER_LIMIT for v in b):
        raise InvalidParameterError(
            f"{where} holds whole numbers (integer: true) and needs whole-number bounds (below 2**52 in size); "
            f"got {list(b)!r}."
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
        _check_enough_cut_points(c, where)
    elif isinstance(t, tuple):
        if not t or any(not isinstance(v, float) or not b[0] < v < b[1] for v in t):
            raise InvalidParameterError(
                f"{where} has cut points {list(t)!r}; give numbers strictly inside its bounds {list(b)!r}."
            )
        same = _same_split(t, c.integer)
        if same:
            raise InvalidParameterError(
                f"{where} has cut points {same[0]!r} and {same[1]!r}, which "
                + ("are the same number" if same[0] == same[1] else "split its whole numbers the same way")
                + ": list each cut point once."
            )
    else:
        raise InvalidParameterError(
            f"{where} has thresholds={t!r}; use 'grid', 'dp-quantiles' or a list of cut points."
        )


def _same_split(cuts, integer: bool):
    """Two given cut points that make the same indicator (equal; on whole numbers, the same floor), or None."""
    seen = {}
    for v in cuts:
        key = math.floor(v) if integer else v
        if key in seen:
            return seen[key], v
        seen[key] = v
    return None


def _check_enough_cut_points(c: Column, where: str) -> None:
    """Refuse a ``grid`` or ``dp-quantiles`` column whose cut points could not be ``n_thresholds`` distinct
    values strictly inside the bounds (public: a function of the schema only)."""
    lo, hi = c.bounds
    k = c.n_thresholds
    if c.integer:
        possible = int(hi) - int(lo)  # x > lo + 0.5, ..., x > hi - 0.5
        if k > possible:
            shown = [f"{c.name}>{_cut_name(int(lo) + i + 0.5)}" for i in range(min(possible, 4))]
            more = ", ..." if possible > 4 else ""
            raise InvalidParameterError(
                f"{where} holds whole numbers (integer: true) between {int(lo)} and {int(hi)}: only {possible} "
                f"distinct cut point(s) lie between them ({', '.join(shown)}{more}), and it asks for "
                f"n_thresholds={k}. Set n_thresholds to at most {possible}, or list the cut points you want."
            )
        return
    if c.thresholds == "grid":
        if _grid_points(c) is None:
            inside = len({t for t in _raw_grid(lo, hi, k) if lo < t < hi})
            raise InvalidParameterError(
                f"{where} asks for n_thresholds={k} equally spaced cut points between its bounds {[lo, hi]!r}, "
                f"but in floating point they give only {inside} distinct value(s) strictly inside them. Use "
                "fewer thresholds, wider bounds, or a list of cut points."
            )
    elif len(quantile_cut_points(c)) < k:
        raise InvalidParameterError(
            f"{where} asks for n_thresholds={k} DP quantiles, but its bounds {[lo, hi]!r} are so close in "
            f"floating point that their grid holds only {len(quantile_cut_points(c))} distinct cut point(s) "
            "strictly inside them. Use fewer thresholds or wider bounds."
        )


def _cut_name(t: float) -> str:
    """A cut point as printed in a feature's name: exactly (the shortest text that reads back as that float)."""
    t = float(t)
    return str(int(t)) if t.is_integer() and abs(t) < 1e15 else repr(t)


def _round(t: float, digits: int) -> float:
    return float(f"{t:.{digits}g}")


def _increasing_inside(cuts, lo, hi) -> bool:
    return all(lo < t < hi for t in cuts) and all(a < b for a, b in zip(cuts, cuts[1:]))


def _raw_grid(lo, hi, k) -> list:
    return [lo + (hi - lo) * j / (k + 1) for j in range(1, k + 1)]


def _grid_points(c: Column):
    """The grid's cut points, or None when they cannot be distinct values strictly inside the bounds."""
    lo, hi = c.bounds
    k = c.n_thresholds
    if c.integer:
        lo_i, m = int(lo), int(hi) - int(lo)
        return tuple(float(lo_i + (m * j) // (k + 1)) + 0.5 for j in range(1, k + 1)) if k <= m else None
    raw = _raw_grid(lo, hi, k)
    for digits in range(4, 18):  # the fewest significant digits (at least 4, to stay readable) that keep them apart
        cuts = [_round(t, digits) for t in raw]
        if _increasing_inside(cuts, lo, hi):
            return tuple(cuts)
    return None


def grid_cut_points(col: Column) -> tuple:
    """A ``"grid"`` column's cut points: ``n_thresholds`` equally spaced strictly inside the bounds.

    Each is the float of a short decimal: the equally spaced point rounded to
    the fewest significant digits (at least 4) that keep every cut point
    distinct and strictly inside the bounds, so its printed name
    (``age>31.6``) is its exact value.  On a column of whole numbers
    (``integer=True``) each point ``t`` becomes ``floor(t) + 0.5``: the same
    indicator on whole numbers, printed as what it is (``year>2008.5``).  A
    schema whose grid cannot give distinct interior cut points is refused when
    it is built.
    """
    cuts = _grid_points(col)
    if cuts is None:  # unreachable for a checked Column
        raise InvalidParameterError(f"Column {col.name!r}: its grid cut points are not distinct inside its bounds.")
    return cuts


@functools.lru_cache(maxsize=256)
def _quantile_digits(lo: float, hi: float) -> int:
    """The fewest significant digits (at least 6) that keep the DP quantile grid's interior points apart."""
    from dpglass.privacy.quantile import GRID_CELLS, quantile_grid

    inner = [float(t) for t in quantile_grid(lo, hi, GRID_CELLS) if lo < t < hi]
    return next((d for d in range(6, 17) if _increasing_inside([_round(t, d) for t in inner], lo, hi)), 17)


def quantile_cut_point(col: Column, t: float):
    """The cut point a released DP quantile ``t`` (a point of the public grid) becomes, or None (no split).

    A real column: ``t`` to the fewest significant digits (at least 6) that
    keep the grid's interior points apart, so distinct grid points stay
    distinct cut points and none falls onto a bound; end points carry no split.
    A column of whole numbers: ``floor(t) + 0.5`` for ``lo <= t < hi`` (the
    same indicator on whole numbers).  Post-processing of the release.
    """
    return _quantile_cut(float(col.bounds[0]), float(col.bounds[1]), col.integer, float(t))


def _quantile_cut(lo: float, hi: float, integer: bool, t: float):
    if integer:
        return math.floor(t) + 0.5 if lo <= t < hi else None
    cut = _round(t, _quantile_digits(lo, hi))
    return cut if lo < cut < hi else None


def quantile_cut_points(col: Column) -> tuple:
    """Every cut point the ``dp-quantiles`` route can give this column, in order (a function of the schema)."""
    return _quantile_cut_points(float(col.bounds[0]), float(col.bounds[1]), col.integer)


@functools.lru_cache(maxsize=256)
def _quantile_cut_points(lo: float, hi: float, integer: bool) -> tuple:
    from dpglass.privacy.quantile import GRID_CELLS, quantile_grid

    cuts = {_quantile_cut(lo, hi, integer, float(t)) for t in quantile_grid(lo, hi, GRID_CELLS)}
    return tuple(sorted(c for c in cuts if c is not None))


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
        unknown = [k for k in data if k not in SCHEMA_KEYS] if isinstance(data, dict) else []
        if unknown:
            key = unknown[0]
            close = difflib.get_close_matches(str(key), SCHEMA_KEYS, n=1)
            hint = ("the label set is not part of the schema: declare it with the model's classes= (or --classes "
                    "NEG,POS). " if key == "classes" else f"did you mean {close[0]!r}? " if close else "")
            raise InvalidParameterError(
                f"The schema has the key {key!r}, which dpglass does not know: {hint}A schema's keys are: "
                f"{', '.join(SCHEMA_KEYS)} (an unknown key is refused, not ignored: a misspelt key would silently "
                "leave its default in place)."
            )
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
