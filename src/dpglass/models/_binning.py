"""Binning of raw columns, shared by the families that learn from bins (dp-gbdt, dp-gam): one implementation.

Every feature is cut at public (or released) edges and a value's bin is the number of edges strictly below it
(so "bin <= k" is "x <= edge k"):

* a 0/1 column (``bounds`` entry None) at 0.5: bins 0 and 1;
* a numeric column, clipped to its public ``(low, high)``, at the ``max_bins - 1`` inner points of the
  equal-width grid (:func:`uniform_edges`), or at edges released by DP quantiles (:func:`quantile_step`, spent
  through the family's plan and ledger by :func:`fit_edges`);
* a categorical column of ``m`` integer codes ``0..m-1`` (``categories`` entry ``m``; dp-gam) at
  ``0.5, 1.5, .., m - 1.5`` (:func:`category_edges`): one bin per code, a value that is not a code refused;
* a column declared possibly missing (``missing`` entry True; dp-gam): NaN gets its own last bin,
  ``len(edges)+1``.

Binning is a per-record map of public (or already released) values: it spends nothing.
"""

from __future__ import annotations

import numpy as np

from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.plan import PlannedRelease, Points
from dpglass.privacy.quantile import (
    GRID_CELLS,
    dp_quantile_from_counts,
    grid_counts,
    quantile_grid,
)

__all__ = ["BinnedColumns", "apply_bins", "category_edges", "check_categories", "check_feature_bounds", "check_missing",
           "check_no_nan", "fit_edges", "memory_grid_counts", "quantile_step", "uniform_edges"]


class BinnedColumns:
    """What a family's public facts say about its binned columns (a mixin of dp-gbdt's and dp-gam's ``Public``,
    which hold ``bounds``, one per feature, and ``binning``)."""

    @property
    def numeric(self) -> tuple:
        """The numeric columns (public bounds)."""
        return tuple(j for j, b in enumerate(self.bounds) if b is not None)

    @property
    def quantiles(self) -> bool:
        """Whether the plan releases DP quantile edges (some numeric column, ``binning="quantile"``)."""
        return self.binning == "quantile" and bool(self.numeric)


def check_feature_bounds(bounds, d: int, owner: str) -> list:
    """``bounds`` as a list of ``(low, high)`` floats or None (0/1 columns), one per feature."""
    if bounds is None:
        return [None] * d
    if not isinstance(bounds, (list, tuple)) or len(bounds) != d:
        size = len(bounds) if isinstance(bounds, (list, tuple)) else type(bounds).__name__
        raise InvalidParameterError(
            f"The 'bounds' parameter of {owner} must hold one entry per feature ({d}): a pair "
            f"(low, high) for a numeric column or None for a 0/1 column. Got {size} entries."
        )
    out = []
    for j, b in enumerate(bounds):
        if b is None:
            out.append(None)
            continue
        ok = isinstance(b, (list, tuple)) and len(b) == 2 and all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and np.isfinite(v)
            for v in b) and float(b[0]) < float(b[1])
        if not ok:
            raise InvalidParameterError(
                f"bounds[{j}] of {owner} must be a pair (low, high) of finite numbers with low < high, or None "
                f"for a 0/1 column. Got {b!r}."
            )
        out.append((float(b[0]), float(b[1])))
    return out


def check_categories(categories, bounds: list, owner: str, max_codes: int = 255) -> list:
    """``categories`` as a list of None or ``m`` (2 <= m <= ``max_codes``: the column holds codes 0..m-1), one
    per feature; a categorical feature has no bounds."""
    d = len(bounds)
    if categories is None:
        return [None] * d
    if not isinstance(categories, (list, tuple)) or len(categories) != d:
        size = len(categories) if isinstance(categories, (list, tuple)) else type(categories).__name__
        raise InvalidParameterError(
            f"The 'categories' parameter of {owner} must hold one entry per feature ({d}): an int m >= 2 for a "
            f"column of integer codes 0..m-1, or None. Got {size} entries.")
    out = []
    for j, m in enumerate(categories):
        if m is None:
            out.append(None)
            continue
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 2 <= int(m) <= max_codes:
            raise InvalidParameterError(
                f"categories[{j}] of {owner} must be an int m with 2 <= m <= {max_codes} (the column holds the codes "
                f"0..m-1), or None. Got {m!r}.")
        if bounds[j] is not None:
            raise InvalidParameterError(
                f"Feature {j} of {owner} has both bounds {list(bounds[j])} and categories={int(m)}: a categorical "
                "column has no bounds (set its bounds entry to None).")
        out.append(int(m))
    return out


def check_missing(missing, d: int, owner: str) -> list:
    """``missing`` as a list of d bools (True: the column may hold NaN, which gets its own bin)."""
    if missing is None:
        return [False] * d
    if not isinstance(missing, (list, tuple)) or len(missing) != d or not all(
            isinstance(v, (bool, np.bool_)) for v in missing):
        raise InvalidParameterError(
            f"The 'missing' parameter of {owner} must be None or a list of {d} booleans, one per feature (True: "
            f"the column may hold missing values, NaN, which get their own bin). Got {missing!r}.")
    return [bool(v) for v in missing]


def uniform_edges(low: float, high: float, max_bins: int) -> np.ndarray:
    """The ``max_bins - 1`` inner points of the equal-width grid on ``[low, high]`` (public)."""
    return low + (high - low) * (np.arange(1, max_bins) / max_bins)


def category_edges(m: int) -> np.ndarray:
    """The edges of a column of codes ``0..m-1``: ``0.5, .., m - 1.5`` (a code's bin is the code)."""
    return np.arange(int(m) - 1) + 0.5


def check_no_nan(X: np.ndarray, owner: str) -> None:
    """Refuse NaN (no missing-value policy), saying what to do."""
    if np.isnan(np.asarray(X, dtype=np.float64)).any():
        raise DataValidationError(
            f"{owner} got NaN in X. It has no missing-value policy: impute with a public value (for example "
            "the middle of the column's bounds) or drop the rows first."
        )


def _bin_column(col, j, b, edges, m, owner):
    if m is not None:
        ok = np.isnan(col) | ((col >= 0) & (col <= m - 1) & (col == np.floor(col)))
        if not ok.all():
            raise DataValidationError(  # no value quoted: an error may be pasted where the data may not
                f"Column {j} of X is declared categorical with {m} codes (0..{m - 1}) but holds a value that is "
                f"not one of the integers 0..{m - 1}: encode its categories as those codes (categories[{j}] = {m}).")
        return np.searchsorted(edges, col, side="left")
    if b is None:
        ok = np.isnan(col) | (col == 0) | (col == 1)
        if not ok.all():
            raise DataValidationError(
                f"Column {j} of X has values other than 0 and 1 but no bounds. Pass bounds=[...] with a "
                f"public (low, high) for column {j} (values outside are clipped), or None for 0/1 columns."
            )
        return col > 0.5
    return np.searchsorted(edges, np.clip(col, b[0], b[1]), side="left")


def apply_bins(X: np.ndarray, bounds: list, edges: list, owner: str, categories=None, missing=None) -> np.ndarray:
    """Bin index of every value (uint8), clipping numeric columns to their bounds.

    Raises a :class:`DataValidationError` for NaN in a column not declared missing (no missing-value policy:
    impute with a public value first, or declare it), for a column without bounds that is not 0/1 (it says
    what to pass) and for a categorical column holding a value that is not one of its codes.
    """
    X = np.asarray(X, dtype=np.float64)
    if missing is None:
        check_no_nan(X, owner)
    else:
        nan = np.isnan(X).any(axis=0)
        bad = [j for j in range(X.shape[1]) if nan[j] and not missing[j]]
        if bad:
            raise DataValidationError(
                f"Column {bad[0]} of X has missing values (NaN) but is not declared possibly missing: pass "
                f"missing=[...] with True for column {bad[0]} (NaN then gets its own bin), or impute with a "
                "public value first.")
    cats = [None] * X.shape[1] if categories is None else categories
    B = np.empty(X.shape, dtype=np.uint8)
    for j, b in enumerate(bounds):
        col = X[:, j]
        B[:, j] = _bin_column(col, j, b, edges[j], cats[j], owner)
        if missing is not None and missing[j]:
            B[np.isnan(col), j] = len(edges[j]) + 1
    return B


def quantile_step(column: int, bounds: tuple, max_bins: int, each: float) -> PlannedRelease:
    """The ``max_bins - 1`` DP quantiles of a numeric column, each ``each``-DP, sorted: its cut points.

    The exact values are the column's grid counts and its number of records
    (:func:`~dpglass.privacy.quantile.grid_counts`); the noise is the
    exponential-mechanism quantile (:func:`~dpglass.privacy.quantile.dp_quantile_from_counts`),
    whose outputs are points of its public grid on ``bounds``.
    """
    nb = int(max_bins)
    entry = LedgerEntry(release=f"bins: {nb - 1} quantiles of column {column}", mechanism="exponential-quantile",
                        epsilon=each * (nb - 1), guarantee="proven",
                        note="Smith (2011) exponential-mechanism quantiles on a public grid, basic composition")

    def noise(stat, rng):
        below, n = stat
        return np.sort(np.array([dp_quantile_from_counts(below, n, k / nb, each, bounds, rng) for k in range(1, nb)]))

    grid = Points(tuple(quantile_grid(bounds[0], bounds[1], GRID_CELLS).tolist()))
    return PlannedRelease(entry, noise, grid, (f"edges[{column}]",))


def memory_grid_counts(Xf, bounds: list, numeric: list, owner: str, missing=None) -> tuple[list, int]:
    """``(below, n)`` of an in-memory ``Xf``: per numeric column its counts below every quantile grid point
    (:func:`~dpglass.privacy.quantile.grid_counts`), and the number of records.  NaN is refused unless the
    column is declared missing; a missing value then counts below no grid point (as a value above the bounds
    would: a per-record map, the quantiles' sensitivity is unchanged)."""
    below = []
    for j in numeric:
        col = np.asarray(Xf[:, j], dtype=np.float64)
        if not (missing is not None and missing[j]):
            check_no_nan(col, owner)
        below.append(grid_counts(col, bounds[j], GRID_CELLS))
    return below, Xf.shape[0]


def fit_edges(bounds: list, max_bins: int, bin_steps, numeric: list, grid_source, ledger, rng,
              categories=None) -> list:
    """Cut points of every feature: 0.5 for a 0/1 column, the codes' edges for a categorical one, the public
    equal-width grid of a numeric one, or (``bin_steps``: the plan's quantile steps of the ``numeric`` columns)
    the released DP quantiles.  ``grid_source()`` gives ``(below, n)``, the quantiles' statistic (in memory:
    :func:`memory_grid_counts`; Dask: summed on the cluster); it is called only when there are bin steps."""
    nb = int(max_bins)
    cats = [None] * len(bounds) if categories is None else categories
    edges = [category_edges(m) if m is not None else np.array([0.5]) if b is None else uniform_edges(b[0], b[1], nb)
             for b, m in zip(bounds, cats)]
    if bin_steps:
        below, n = grid_source()
        for i, (j, step) in enumerate(zip(numeric, bin_steps)):
            edges[j] = ledger.release(step, (below[i], n), rng)  # the quantiles' statistic: counts and n
    return edges
