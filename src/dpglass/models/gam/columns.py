"""dp-gam's raw columns: numeric columns with public bounds, categorical columns of integer codes, 0/1 columns,
and missing values in their own bin, binned by dpglass's one binning (:mod:`dpglass.models._binning`, and
dp-gbdt's binned pattern table in memory and through Dask, :mod:`dpglass.models.gbdt.binned`).

A fit whose parameters declare no bounds, categories or missing columns (every feature 0/1: *plain*) keeps the
original route, the 0/1 :class:`~dpglass.aggregates.PatternTable`; any other fit bins its columns at edges that are
public (equal-width grids, category codes) or released first through the plan (DP quantiles), and learns from the
binned table.  Binning is a per-record map of public or released values: it spends nothing.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from dpglass._validation import check_labels
from dpglass.exceptions import DataValidationError
from dpglass.models._binning import (
    apply_bins,
    category_edges,
    check_categories,
    check_feature_bounds,
    check_missing,
    fit_edges,
    memory_grid_counts,
    uniform_edges,
)
from dpglass.models.gam.fit import exact_counts
from dpglass.models.gbdt.binned import BitLayout, DaskData, binned_table
from dpglass.privacy.quantile import GRID_CELLS

__all__ = ["bin_X", "binned_fit_table", "check_fit_data", "exact_class_counts", "is_plain", "resolve_columns"]


def is_plain(params: dict) -> bool:
    """Whether the parameters declare every feature 0/1 (no bounds, categories or missing columns)."""
    return (all(b is None for b in (params.get("bounds") or ()))
            and all(m is None for m in (params.get("categories") or ()))
            and not any(params.get("missing") or ()))


def resolve_columns(est, d: int) -> None:
    """Set ``bounds_``, ``categories_`` and ``missing_`` (one entry per feature) from the parameters."""
    owner = type(est).__name__
    est.bounds_ = check_feature_bounds(est.bounds, d, owner)
    est.categories_ = check_categories(est.categories, est.bounds_, owner)
    est.missing_ = check_missing(est.missing, d, owner)


def _check_X(est, X, reset: bool, allow_empty: bool = False) -> np.ndarray:
    import scipy.sparse

    if scipy.sparse.issparse(X):
        raise DataValidationError(f"{type(est).__name__} takes a dense array or DataFrame, not a sparse matrix.")
    try:
        return validate_data(est, X, reset=reset, dtype="numeric", ensure_all_finite="allow-nan",
                             ensure_min_samples=0 if allow_empty else 1)
    except DataValidationError:
        raise
    except ValueError as exc:
        raise DataValidationError(str(exc)) from exc


def _n_cuts(est) -> np.ndarray:
    return np.array([e.size + int(m) for e, m in zip(est.edges_, est.missing_)], dtype=np.int64)


def bin_X(est, X) -> np.ndarray:
    """The bin codes (uint8, (n, d)) of records to predict (checked as the fit's were)."""
    Xf = _check_X(est, X, reset=False)
    return apply_bins(Xf, est.bounds_, est.edges_, type(est).__name__, est.categories_, est.missing_)


def check_fit_data(est, X, y):
    """Check ``X`` (numeric, NaN allowed here: binning refuses it where no missing bin is declared) and ``y``;
    set ``classes_``, ``n_features_in_`` and the columns' resolved ``bounds_``, ``categories_``, ``missing_``.
    Returns what :func:`binned_fit_table` reads: a :class:`~dpglass.models.gbdt.binned.DaskData`, or
    ``(X, codes)`` in memory.  With a declared label set zero records are valid (fit must not depend on n)."""
    from dpglass.aggregates import is_distributed

    if is_distributed(X) or is_distributed(y):
        data = DaskData.check(est, X, y)
    else:
        declared = est.__dict__.get("_schema_classes")
        if declared is None:
            declared = est.classes
        Xf = _check_X(est, X, reset=True, allow_empty=declared is not None)
        y01, est.classes_ = check_labels(y, classes=declared, max_classes=est._max_classes, model=type(est).__name__)
        if y01.shape[0] != Xf.shape[0]:
            raise DataValidationError(f"X has {Xf.shape[0]} rows but y has {y01.shape[0]} labels; they must match.")
        data = (Xf, y01)
    resolve_columns(est, int(est.n_features_in_))
    return data


def binned_fit_table(est, data, plan, ledger, rng):
    """The binned table of the training data (in memory; through Dask its parts, left on the workers), after the
    plan's quantile edges (if any) are released on ``ledger`` (sets ``edges_``)."""
    owner = type(est).__name__
    numeric = list(plan.public.numeric)
    dask = isinstance(data, DaskData)

    def grid_source():
        if dask:
            return data.grid_counts(est, numeric, GRID_CELLS)
        return memory_grid_counts(data[0], est.bounds_, numeric, owner, est.missing_)

    est.edges_ = fit_edges(est.bounds_, plan.public.max_bins, plan.bins, numeric, grid_source, ledger, rng,
                           est.categories_)
    return _table(est, data, dask)


def _table(est, data, dask: bool):
    if dask:  # the binned table's parts, left on the workers (the learner asks them for its sums: gam.fit)
        return data.parts(est, _n_cuts(est))

    def to_bins(rows):
        return apply_bins(rows, est.bounds_, est.edges_, type(est).__name__, est.categories_, est.missing_)

    return binned_table(data[0], data[1], to_bins, BitLayout(_n_cuts(est)))


def exact_class_counts(est, data, table, plan) -> list:
    """The K exact class counts, before the table is binned when it is not yet (in memory: the labels; through
    Dask: a table binned at the public 2-bin grid, whose class counts are the same)."""
    K = plan.public.n_classes
    if table is None and not isinstance(data, DaskData):
        return [int(c) for c in np.bincount(np.asarray(data[1], dtype=np.intp), minlength=K)[:K]]
    if table is None:
        est.edges_ = [category_edges(m) if m is not None else np.array([0.5]) if b is None
                      else uniform_edges(b[0], b[1], 2) for b, m in zip(est.bounds_, est.categories_)]
        table = _table(est, data, True)
    return exact_counts(table, K)  # a statistic of the table's parts (on the workers through Dask)
