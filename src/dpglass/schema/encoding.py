"""The encoding of a table by its schema: public cut points and categories, and their cost.

:func:`fit_encoding` turns a :class:`~dpglass.schema.Schema` into an
:class:`Encoding` — the cut points of every numeric column and the categories
of every categorical one — spending budget only where the schema asks for DP
quantiles, plus (optionally) one noisy count of the records whose values fall
outside the declared bounds, so that the warning about clipping reveals
nothing beyond a DP release.  :meth:`Encoding.transform` maps raw records to
named 0/1 columns (``"age>37"``, ``"occupation=Exec-managerial"``), record by
record, so it is the same function at fit and at predict time; for a model
that bins numbers or reads categories itself, numeric columns go as their
clipped values and categorical ones as codes (``Encoding.numbers``,
``Encoding.codes``: the route, chosen by the model's class).

Missing values (and values outside a categorical column's list) are refused
with an error naming the column, at fit and at predict: the schema says what
every value means, and a missing age read as "below every cut point" would
score a person as the youngest.  A column that declares ``missing="none"``
takes the per-record rule fixed in advance instead: a missing numeric value
sets none of its ``>`` indicators, a missing or unknown category none of its
``=`` indicators, a missing binary value reads as 0.  Like every check of the
data against the schema, the error reaches the curator before any release
(docs/privacy.md, "Errors and warnings").
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpglass.exceptions import DataValidationError
from dpglass.privacy.ledger import LedgerEntry, PrivacyLedger
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
from dpglass.privacy.plan import Integers, PlannedRelease, Points
from dpglass.privacy.quantile import GRID_CELLS, dp_quantile_from_counts, grid_counts, quantile_grid
from dpglass.schema.columns import (
    Schema, _cut_name, category_key, grid_cut_points, quantile_cut_point, quantile_cut_points,
)

__all__ = ["CLIP_FALSE_ALARM", "CLIP_OFF_RELEASE", "CLIP_RELEASE", "ClippingWarning", "Encoding", "category_count",
           "check_columns",
           "clip_warning_threshold", "encoding_from_statistics", "encoding_statistics", "category_key",
           "category_keys", "fit_encoding", "grid_cut_points", "merge_statistics", "needs_statistics",
           "quantile_cut_points", "validate_table"]


class ClippingWarning(UserWarning):
    """Many values fell outside the schema's bounds (reported by a DP count only, when it is clearly above its
    noise: :func:`clip_warning_threshold`)."""


@dataclass(frozen=True)
class Encoding:
    """Public cut points (numeric) and categories (categorical) of a schema's feature columns, and how the columns
    reach the model.

    ``numbers=False, codes=False`` (every 0/1 model): named 0/1 columns, one per
    cut point and per category.  ``numbers=True`` (a model that bins numbers
    itself, ``_takes_numeric``: dp-gbdt, dp-gam): every numeric column is one
    column of its values clipped to the schema's public bounds (no cut points:
    the model bins it within its own plan).  ``codes=True`` (a model that
    reads category codes, ``_takes_categories``: dp-gam): every categorical
    column is one column of integer codes ``0..m-1`` in the schema's order.
    ``missing_bins=True`` (with ``numbers``; a model that bins missing values
    itself, dp-gam): a missing value of a numeric column declaring
    ``missing="none"`` stays NaN, for the model's own missing bin, instead of
    reading as the lower bound.  Binary columns are 0/1 in every route.  The route is a function of the
    model's class, never of the data.
    """

    schema: Schema
    cuts: tuple  # one tuple of cut points per feature column (empty for non-numeric, and for numbers=True)
    numbers: bool = False  # numeric columns as their clipped values (the model bins them)
    codes: bool = False  # categorical columns as integer codes (the model reads categories)
    missing_bins: bool = False  # numbers route: a missing number stays NaN (the model's own missing bin)

    def feature_names(self) -> list:
        names = []
        for col, cuts in zip(self.schema.features, self.cuts):
            if col.kind == "numeric" and not self.numbers:
                names += [f"{col.name}>{_cut_name(t)}" for t in cuts]  # exact: distinct cuts, distinct names
            elif col.kind == "categorical" and not self.codes:
                names += [f"{col.name}={v}" for v in col.categories]
            else:
                names.append(col.name)
        return names

    def column_bounds(self) -> list:
        """One entry per encoded column: the schema's public ``(lo, hi)`` for a numeric column given as numbers,
        else None (a 0/1 or code column): dp-gbdt's and dp-gam's ``bounds``."""
        out = []
        for col in self.schema.features:
            if col.kind == "numeric" and self.numbers:
                out.append((float(col.bounds[0]), float(col.bounds[1])))
            else:
                out += [None] * self._width(col)
        return out

    def column_categories(self) -> list:
        """One entry per encoded column: for a code column its number of codes (the schema's categories, plus
        one for "missing or unlisted" when the column declares ``missing="none"``), else None: dp-gam's
        ``categories``."""
        out = []
        for col in self.schema.features:
            if col.kind == "categorical" and self.codes:
                out.append(category_count(col))
            else:
                out += [None] * self._width(col)
        return out

    def column_missing(self) -> list:
        """One flag per encoded column: True for a numeric column that may hold NaN (``missing_bins`` and the
        column declares ``missing="none"``): dp-gam's ``missing``."""
        out = []
        for col in self.schema.features:
            flag = col.kind == "numeric" and self.numbers and self.missing_bins and col.missing == "none"
            out += [flag] * self._width(col)
        return out

    def source_columns(self) -> list:
        """The raw column each encoded column comes from, in the encoding's column order (public: the schema)."""
        return [col.name for col in self.schema.features for _ in range(self._width(col))]

    def _width(self, col) -> int:
        """How many encoded columns a feature column becomes."""
        if col.kind == "numeric" and not self.numbers:
            return len(self.cuts[self.schema.features.index(col)])
        if col.kind == "categorical" and not self.codes:
            return len(col.categories)
        return 1

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """The encoded matrix of a table with the schema's columns, in any order: uint8 0/1 on the 0/1 route,
        float64 when numbers or codes are handed on."""
        check_columns(frame, self.schema, fitting=False)
        blocks = []
        for col, cuts in zip(self.schema.features, self.cuts):
            v = _checked_values(frame[col.name], col)
            if col.kind == "numeric" and self.numbers:
                blocks.append(_clipped(v, col, self.missing_bins)[:, None])
            elif col.kind == "numeric":
                blocks.append(np.stack([v > t for t in cuts], axis=1) if cuts else np.zeros((len(v), 0), bool))
            elif col.kind == "categorical" and self.codes:
                blocks.append(_codes(v, col)[:, None])
            elif col.kind == "categorical":
                blocks.append(np.stack([v == category_key(c) for c in col.categories], axis=1))
            else:
                blocks.append(v[:, None])
        if self.numbers or self.codes:
            return np.concatenate([b.astype(np.float64) for b in blocks], axis=1)
        return np.concatenate(blocks, axis=1).astype(np.uint8)

    def to_dict(self) -> dict:
        out = {"schema": self.schema.to_dict(), "cuts": [list(c) for c in self.cuts]}
        if self.numbers:  # only when set: the 0/1 route's files are unchanged
            out["numbers"] = True
        if self.codes:
            out["codes"] = True
        if self.missing_bins:
            out["missing_bins"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Encoding":
        unknown = sorted(set(data) - {"schema", "cuts", "numbers", "codes", "missing_bins"})
        if unknown:
            raise DataValidationError(f"The encoding has the key {unknown[0]!r}; its keys are schema, cuts, "
                                      "numbers, codes and missing_bins.")
        schema = Schema.from_dict(data["schema"])
        cuts = tuple(tuple(float(t) for t in c) for c in data["cuts"])
        if len(cuts) != len(schema.features):
            raise DataValidationError("The encoding's cut points do not match its schema's feature columns.")
        flags = {k: data.get(k, False) for k in ("numbers", "codes", "missing_bins")}
        for key, value in flags.items():
            if not isinstance(value, bool):
                raise DataValidationError(f"The encoding's {key!r} is {value!r}; it is true or false.")
        return cls(schema, cuts, **flags)


def category_count(col) -> int:
    """The number of codes of a categorical column read as codes: its categories, plus one (the last code) for a
    missing or unlisted value when it declares ``missing="none"`` (a public function of the schema)."""
    return len(col.categories) + (1 if col.missing == "none" else 0)


def _clipped(values: np.ndarray, col, keep_missing: bool = False) -> np.ndarray:
    """A numeric column as numbers: clipped to its public bounds; a missing value (``missing="none"``) is the
    lower bound, the number read as "above no cut point" as on the 0/1 route, or with ``keep_missing`` stays NaN
    for the model's own missing bin (per-record rules)."""
    lo, hi = (float(b) for b in col.bounds)
    return np.clip(values if keep_missing else np.where(np.isnan(values), lo, values), lo, hi)


def _codes(keys: np.ndarray, col) -> np.ndarray:
    """A categorical column as codes: the index of its category in the schema's list; a missing or unlisted
    value (``missing="none"``) is the extra last code (a per-record rule)."""
    index = {category_key(c): i for i, c in enumerate(col.categories)}
    other = len(col.categories)
    return np.fromiter((index.get(k, other) for k in keys), dtype=np.int64, count=len(keys))


def check_columns(frame, schema: Schema, *, fitting: bool) -> None:
    """The table has every schema column; at fit time, no column the schema does not know."""
    if not isinstance(frame, pd.DataFrame):
        raise DataValidationError(
            "A model with a schema reads a table with named columns: pass a pandas DataFrame (or a CSV)."
        )
    names = [c.name for c in schema.columns]
    missing = [n for n in (c.name for c in schema.features) if n not in frame.columns]
    if missing:
        raise DataValidationError(
            f"The table lacks the column(s) {missing!r} that the schema declares; its columns are "
            f"{[str(c) for c in frame.columns]!r}."
        )
    if fitting:
        unknown = [str(c) for c in frame.columns if c not in names and c != schema.target]
        if unknown:
            raise DataValidationError(
                f"The table has column(s) {unknown!r} that the schema does not declare. Add them to the "
                'schema (as "ignore" if the model must not read them, e.g. an id) so nothing is dropped silently.'
            )


def _numeric(s: pd.Series, name: str) -> np.ndarray:
    try:
        return pd.to_numeric(s, errors="raise").to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(
            f"Column {name!r} is numeric in the schema but holds non-numeric values (e.g. "
            f"{_first_bad(s)!r}). Fix the data or declare the column categorical."
        ) from exc


_DECLARE_NONE = ('declare "missing": "none" for the column in the schema (a missing value, or a value outside a '
                 "categorical column's list, then sets none of the column's indicators, at fit and at predict).")
_MISSING_ADVICE = "Fill or drop those records, or " + _DECLARE_NONE


def _checked_values(s: pd.Series, col) -> np.ndarray:
    """A feature column's values as its encoding reads them, checked against the schema (the one check of fit,
    predict and :func:`validate_table`): numbers (numeric), category keys (categorical), booleans (binary)."""
    if col.kind == "numeric":
        values = _numeric(s, col.name)
        _check_missing(s, col)
        if col.integer:
            _check_whole(s, values, col.name)
        return values
    if col.kind == "categorical":
        keys = category_keys(s)
        _check_categories(s, col, keys)
        return keys
    _check_missing(s, col)
    return _binary(s, col.name)


def _check_whole(s: pd.Series, values: np.ndarray, name: str) -> None:
    """A column declared ``integer`` holds whole numbers (its cut points lie half-way between them)."""
    with np.errstate(invalid="ignore"):
        bad = np.isfinite(values) & (values != np.floor(values))
    if bad.any():
        raise DataValidationError(  # no value, no count
            f"Column {name!r} is declared integer in the schema but holds a value that is not a whole number "
            "(no value is quoted: an error may be pasted where the data may not). Fix the data or remove "
            "\"integer\": true from the column."
        )


def _check_missing(s: pd.Series, col) -> None:
    """A missing value is refused unless the column declares ``missing="none"``."""
    if col.missing == "none":
        return
    missing = pd.isna(s).to_numpy()
    if missing.any():
        raise DataValidationError(  # no count: an error may be pasted where the data may not
            f"Column {col.name!r} has missing values, and its schema does not say what a missing value means. "
            + _MISSING_ADVICE
        )


def _check_categories(s: pd.Series, col, keys: np.ndarray) -> None:
    """A value outside a categorical column's list (or a missing one) is refused unless ``missing="none"``;
    ``keys`` are the column's :func:`category_keys`."""
    _check_missing(s, col)
    if col.missing == "none":
        return
    listed = np.array([category_key(c) for c in col.categories], dtype=object)
    unknown = ~pd.isna(s).to_numpy() & ~np.isin(keys, listed)
    if unknown.any():
        seen = list(dict.fromkeys(s.to_numpy(dtype=object)[unknown].tolist()))[:3]
        raise DataValidationError(
            f"Column {col.name!r} holds value(s) outside its schema categories {list(col.categories)!r}: "
            f"e.g. {seen!r}. Add the value(s) to the public list if they are categories, fix the data, or "
            + _DECLARE_NONE
        )


def category_keys(s: pd.Series) -> np.ndarray:
    """:func:`category_key` of every value of a column (an object array; None where missing).

    Text and integer columns take vectorised paths with the same result; any
    other column goes value by value.
    """
    kind = pd.api.types.infer_dtype(s, skipna=True)
    if kind == "string":  # text (what the CLI reads categorical columns as): the values are their keys
        keys = s.to_numpy(dtype=object).copy()
        keys[pd.isna(s).to_numpy()] = None
        return keys
    if kind == "integer" and pd.api.types.is_integer_dtype(s.dtype):
        return s.astype(str).to_numpy(dtype=object)
    out = np.empty(len(s), dtype=object)
    out[:] = [category_key(v) for v in s.to_numpy(dtype=object)]
    return out


def _first_bad(s: pd.Series):
    for v in s:
        try:
            float(v)
        except (TypeError, ValueError):
            return v
    return None


def _binary(s: pd.Series, name: str) -> np.ndarray:
    v = s.to_numpy()
    if v.dtype == bool:
        return v
    filled = pd.Series(v).fillna(0).to_numpy()
    ok = np.isin(filled, [0, 1, True, False])
    if not ok.all():
        raise DataValidationError(
            f"Column {name!r} is binary in the schema but holds values other than 0 and 1 (e.g. "
            f"{filled[~ok][0]!r}). Declare it numeric or categorical instead."
        )
    return filled.astype(bool)


def _clipped_records(frame, schema) -> int:
    out = np.zeros(len(frame), dtype=bool)
    for col in schema.features:
        if col.kind == "numeric":
            v = _numeric(frame[col.name], col.name)
            lo, hi = col.bounds
            with np.errstate(invalid="ignore"):
                out |= (v < lo) | (v > hi)
    return int(out.sum())


def fit_encoding(frame, schema: Schema, *, quantile_epsilon: float, clip_epsilon: float, rng, numbers: bool = False,
                 codes: bool = False, missing_bins: bool = False):
    """Fix the encoding; return ``(encoding, the encoder's ledger, noisy clipped count or None)``.

    ``numbers``, ``codes``: the route of numeric and categorical columns (:class:`Encoding`); with ``numbers``
    no cut point is made, so no DP quantile is released (the model bins the numbers within its own plan).

    ``quantile_epsilon`` is split evenly over every DP quantile the schema asks
    for (each is pure DP, sensitivity 1 with n private: docs/privacy.md);
    ``clip_epsilon`` (if > 0) buys one discrete-Laplace count of the records
    with a value outside the bounds (sensitivity 1), and a
    :class:`ClippingWarning` when that noisy count reaches
    :func:`clip_warning_threshold` (noise alone, with no value out of bounds,
    reaches it with probability at most :data:`CLIP_FALSE_ALARM`).
    ``clip_epsilon=0``: nothing is counted, released or warned.
    """
    check_columns(frame, schema, fitting=True)
    stats = encoding_statistics(frame, schema, clip=clip_epsilon > 0, numbers=numbers)
    return encoding_from_statistics(schema, stats, quantile_epsilon=quantile_epsilon, clip_epsilon=clip_epsilon,
                                    rng=rng, numbers=numbers, codes=codes, missing_bins=missing_bins)


def needs_statistics(schema: Schema, clip: bool, numbers: bool = False) -> bool:
    """Whether the encoding reads the data: DP quantiles to draw, or records outside the bounds to count."""
    numeric = [c for c in schema.features if c.kind == "numeric"]
    return bool(_quantile_columns(schema, numbers)) or (clip and bool(numeric))


def _quantile_columns(schema: Schema, numbers: bool) -> list:
    """The columns whose cut points are DP quantiles the encoder releases (none when numbers go to the model)."""
    return [] if numbers else [c for c in schema.features if c.kind == "numeric" and c.thresholds == "dp-quantiles"]


def encoding_statistics(frame, schema: Schema, *, clip: bool, numbers: bool = False) -> dict:
    """Check the values of every feature column and count what the encoding reads from the data.

    Returns ``{"quantiles": {column: (below, n)}, "clipped": int or None}``:
    :func:`~dpglass.privacy.quantile.grid_counts` and the number of values of
    every column with DP quantiles, and the number of records with a value
    outside the bounds
    (when ``clip``).  Every statistic is a sum over records, so those of the
    parts of a table (the partitions of a dask DataFrame) add up to those of
    the whole (:func:`merge_statistics`).
    """
    quantiles = {}
    asked = {c.name for c in _quantile_columns(schema, numbers)}
    for col in schema.features:
        values = _checked_values(frame[col.name], col)
        if col.name in asked:
            values = values[~np.isnan(values)]  # a missing value is a per-record rule: not counted
            quantiles[col.name] = (grid_counts(values, col.bounds), int(values.size))
    clipped = _clipped_records(frame, schema) if clip and any(c.kind == "numeric" for c in schema.features) else None
    return {"quantiles": quantiles, "clipped": clipped}


def merge_statistics(parts) -> dict:
    """The statistics of a table from those of its parts (exact integer sums)."""
    parts = list(parts)
    quantiles = {}
    for name in parts[0]["quantiles"]:
        below = sum((p["quantiles"][name][0] for p in parts[1:]), parts[0]["quantiles"][name][0].copy())
        quantiles[name] = (below, sum(int(p["quantiles"][name][1]) for p in parts))
    clipped = None if parts[0]["clipped"] is None else sum(int(p["clipped"]) for p in parts)
    return {"quantiles": quantiles, "clipped": clipped}


def encoder_epsilons(schema: Schema, epsilon: float, quantile_share: float, clip_share: float,
                     numbers: bool = False) -> tuple:
    """``(quantile epsilon, clipped-count epsilon)`` the encoder spends: each share of ``epsilon`` only when the
    schema has something to spend it on (a dp-quantiles column on the 0/1 route; a numeric column).  Parameters
    only: the pipeline's fit and its file verifier both use it."""
    numeric = [c for c in schema.features if c.kind == "numeric"]
    eps_q = epsilon * quantile_share if _quantile_columns(schema, numbers) else 0.0
    eps_clip = epsilon * clip_share if numeric else 0.0
    return eps_q, eps_clip


def encoder_plan(schema: Schema, quantile_epsilon: float, clip_epsilon: float,
                 numbers: bool = False) -> list[PlannedRelease]:
    """The encoder's releases, in order (docs/privacy.md, "Release plans"): every DP quantile of every
    ``dp-quantiles`` column (a point of the public quantile grid), then, when the schema has numeric columns,
    the noisy count of records with a value outside the bounds (an integer), or with ``clip_epsilon=0`` the
    zero-cost entry saying that nothing was counted.  Public parameters only: the pipeline's fit spends through
    it and its file verifier replays it."""
    feats = schema.features
    q_cols = _quantile_columns(schema, numbers)
    n_releases = sum(c.n_thresholds for c in q_cols)
    eps_each = quantile_epsilon / n_releases if n_releases else 0.0
    steps = []
    for col in q_cols:
        lo, hi = (float(b) for b in col.bounds)
        grid = Points(tuple(float(t) for t in quantile_grid(lo, hi, GRID_CELLS)))
        k = col.n_thresholds
        for j in range(1, k + 1):
            entry = LedgerEntry(quantile_release(col.name, j, k), "exponential-quantile", epsilon=eps_each,
                                sensitivity=1.0, note="exponential mechanism over a public grid of the bounds (Smith 2011)")
            steps.append(PlannedRelease(entry, functools.partial(_quantile_noise, q=j / (k + 1), epsilon=eps_each,
                                                                 bounds=(lo, hi)), grid))
    if not any(c.kind == "numeric" for c in feats):
        return steps
    if clip_epsilon <= 0:
        return steps + [PlannedRelease(LedgerEntry(**CLIP_OFF_ENTRY), _nothing, Points((None,)))]
    mech = DiscreteLaplaceMechanism(clip_epsilon)
    entry = LedgerEntry(CLIP_RELEASE, "discrete laplace", epsilon=clip_epsilon, sensitivity=1.0, scale=mech.scale,
                        note="one record changes the count by at most 1; released only as this noisy count")
    return steps + [PlannedRelease(entry, lambda v, rng: int(mech.randomise(int(v), rng)), Integers(),
                                   ("clipped_records_noisy",))]


def _quantile_noise(counts, rng, *, q, epsilon, bounds) -> float:
    below, n = counts
    return dp_quantile_from_counts(below, n, q, epsilon, bounds, rng)


def _nothing(value, rng):
    return None


def encoding_from_statistics(schema: Schema, stats: dict, *, quantile_epsilon: float, clip_epsilon: float, rng,
                             numbers: bool = False, codes: bool = False, missing_bins: bool = False):
    """:func:`fit_encoding` from the statistics of the data (:func:`encoding_statistics`): the releases, in order,
    through the encoder's ledger following :func:`encoder_plan`."""
    feats = schema.features
    plan = encoder_plan(schema, quantile_epsilon, clip_epsilon, numbers)
    ledger = PrivacyLedger(epsilon=quantile_epsilon + clip_epsilon).follow(plan)
    steps, cuts = iter(plan), []
    for col in feats:
        if col.kind != "numeric" or numbers:
            cuts.append(())
        elif isinstance(col.thresholds, tuple):
            cuts.append(tuple(sorted(col.thresholds)))
        elif col.thresholds == "grid":
            cuts.append(grid_cut_points(col))
        else:
            released = [ledger.release(next(steps), stats["quantiles"][col.name], rng)
                        for _ in range(col.n_thresholds)]
            # cut points strictly inside the bounds (columns.quantile_cut_point); ties and end points carry no split
            cuts.append(tuple(sorted({c for c in (quantile_cut_point(col, t) for t in released) if c is not None})))
    noisy = None
    step = next(steps, None)
    if step is not None:  # a numeric column: the clipped count, or the entry saying there is none
        noisy = ledger.release(step, stats["clipped"], rng)
    if noisy is not None:
        threshold = clip_warning_threshold(clip_epsilon)
        if noisy >= threshold:  # a post-processing of the release: never of the data
            warnings.warn(
                f"About {noisy} records had values outside the schema's bounds and were clipped to them (a "
                f"differentially private count at epsilon={clip_epsilon:.3g}, give or take about "
                f"{_approx(DiscreteLaplaceMechanism(clip_epsilon).std)}). Warned because the noisy count is at least "
                f"{threshold}, which its noise alone reaches with probability at most {CLIP_FALSE_ALARM:g} when no "
                "value is out of bounds; smaller counts are not reported. Check the bounds, or turn the count off "
                "with clip_share=0.",
                ClippingWarning, stacklevel=4)
    return Encoding(schema, tuple(cuts), numbers, codes, numbers and missing_bins), ledger, noisy


#: The probability that the clipping warning fires when no value is out of bounds (noise alone), at most.
CLIP_FALSE_ALARM = 1e-3


def clip_warning_threshold(epsilon: float, false_alarm: float = CLIP_FALSE_ALARM) -> int:
    """The smallest noisy count ``t >= 1`` that discrete Laplace noise at ``epsilon`` alone reaches with
    probability at most ``false_alarm``: ``P(Z >= t) = q^t / (1 + q)``, ``q = e^-epsilon`` (sensitivity 1).

    A function of public parameters only: the mechanism's own tail
    (:meth:`~dpglass.privacy.mechanisms.DiscreteLaplaceMechanism.upper_threshold`),
    exact for the noise drawn.  With no value
    out of bounds the noisy count is ``Z``, so the warning fires with
    probability at most ``false_alarm``; with ``c`` records clipped it fires
    with probability ``P(Z >= t - c)`` (at least 1/2 at ``c = t``, at least
    1 - ``false_alarm`` at ``c = 2t - 1``).

    >>> [clip_warning_threshold(e) for e in (0.01, 0.02, 0.1, 1.0, 5.0)]
    [622, 312, 63, 7, 2]
    >>> clip_warning_threshold(1e6)
    1
    """
    return DiscreteLaplaceMechanism(epsilon).upper_threshold(false_alarm)


def _approx(x: float) -> str:
    return f"{x:.2g}" if x < 10 else f"{x:,.0f}"


def validate_table(frame, schema: Schema) -> None:
    """Check a whole table against its schema (columns, values, missing values) without encoding it.

    ``dpglass fit`` runs it on every record before the split, so that a bad
    value in the held-out part is refused before anything is fitted or printed.
    """
    check_columns(frame, schema, fitting=True)
    for col in schema.features:
        _checked_values(frame[col.name], col)


#: The ledger's name for the encoder's noisy count of records with values outside the bounds.
CLIP_RELEASE = "encoder: noisy count of records with values outside the bounds"
#: The ledger's name for its zero-cost entry when that count is turned off (``clip_share=0``).
CLIP_OFF_RELEASE = "encoder: no count of clipped records (clip_share=0)"
#: The ledger's entry when ``clip_share=0`` and the schema has numeric columns: no count, no cost.
CLIP_OFF_ENTRY = dict(release=CLIP_OFF_RELEASE, mechanism="none", epsilon=0.0,
                      note="clip_share=0: values outside the bounds are clipped to them, and no count of those "
                           "records is made, released or warned about; the encoder's share goes to the model")


def quantile_release(name: str, j: int, k: int) -> str:
    """The ledger's name for the ``j``-th of a column's ``k`` DP quantiles."""
    return f"encoder: {name} quantile {j}/{k + 1}"


