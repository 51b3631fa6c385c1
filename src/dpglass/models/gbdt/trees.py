"""Bins and complete binary trees for :mod:`dpglass.models.gbdt.estimator` (no privacy noise here).

Bins
    Every feature is cut at public edges: a 0/1 column (``bounds`` None) at
    0.5; a numeric column, clipped to its public ``(low, high)``, at the
    ``max_bins - 1`` inner points of the equal-width grid, or at edges
    released by DP quantiles (:mod:`dpglass.models.gbdt.estimator`).  A value's bin is
    the number of edges strictly below it, so "bin <= k" is "x <= edge k".

Trees
    A :class:`BinnedTree` of depth ``D`` is complete: internal nodes
    ``0 .. 2**D - 2`` (node ``i`` has children ``2i + 1`` (x <= threshold)
    and ``2i + 2``), leaves in level order.  All records descend one level at
    a time, all nodes of a level at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpglass.exceptions import DataValidationError, InvalidParameterError

__all__ = ["BinnedTree", "apply_bins", "check_feature_bounds", "check_no_nan", "check_tree_arrays", "leaf_index",
           "random_structure", "uniform_edges"]


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


def uniform_edges(low: float, high: float, max_bins: int) -> np.ndarray:
    """The ``max_bins - 1`` inner points of the equal-width grid on ``[low, high]`` (public)."""
    return low + (high - low) * (np.arange(1, max_bins) / max_bins)


def check_no_nan(X: np.ndarray, owner: str) -> None:
    """Refuse NaN (no missing-value policy), saying what to do."""
    if np.isnan(np.asarray(X, dtype=np.float64)).any():
        raise DataValidationError(
            f"{owner} got NaN in X. It has no missing-value policy: impute with a public value (for example "
            "the middle of the column's bounds) or drop the rows first."
        )


def apply_bins(X: np.ndarray, bounds: list, edges: list, owner: str) -> np.ndarray:
    """Bin index of every value (uint8), clipping numeric columns to their bounds.

    Raises a :class:`DataValidationError` for NaN (no missing-value policy:
    impute with a public value first) and for a column without bounds that is
    not 0/1 (it says what to pass).
    """
    X = np.asarray(X, dtype=np.float64)
    check_no_nan(X, owner)
    B = np.empty(X.shape, dtype=np.uint8)
    for j, b in enumerate(bounds):
        col = X[:, j]
        if b is None:
            if not np.all((col == 0) | (col == 1)):
                raise DataValidationError(
                    f"Column {j} of X has values other than 0 and 1 but no bounds. Pass bounds=[...] with a "
                    f"public (low, high) for column {j} (values outside are clipped), or None for 0/1 columns."
                )
            B[:, j] = col > 0.5
        else:
            B[:, j] = np.searchsorted(edges[j], np.clip(col, b[0], b[1]), side="left")
    return B


@dataclass(frozen=True)
class BinnedTree:
    """A complete tree: ``feature[i]``, ``cut[i]`` (edge index) for internal nodes, ``value`` per leaf.

    A record goes to the left child when its bin is ``<= cut`` (its value is
    ``<= threshold``).
    """

    feature: np.ndarray
    cut: np.ndarray
    value: np.ndarray

    @property
    def depth(self) -> int:
        return int(np.log2(self.value.size))


def leaf_index(B: np.ndarray, feature: np.ndarray, cut: np.ndarray, depth: int | None = None) -> np.ndarray:
    """The leaf (0 .. 2**D - 1) of every row of the bin matrix ``B``; one vector step per level."""
    D = int(np.log2(feature.size + 1)) if depth is None else depth
    node = np.zeros(B.shape[0], dtype=np.int64)
    rows = np.arange(B.shape[0])
    for _ in range(D):
        f = feature[node]
        right = B[rows, f] > cut[node]
        node = 2 * node + 1 + right
    return node - (2**D - 1)


def random_structure(n_cuts: np.ndarray, depth: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Data-independent splits: each internal node draws a feature and one of its cuts uniformly."""
    m = 2**depth - 1
    feature = rng.integers(0, n_cuts.size, size=m)
    cut = (rng.random(m) * n_cuts[feature]).astype(np.int64)
    return feature.astype(np.int64), cut


def check_tree_arrays(feature, cut, value, n_cuts, field: str) -> None:
    """Shape and range of a tree read from a file."""
    m = len(feature)
    if len(cut) != m or len(value) != m + 1 or (m + 1) & m:
        raise InvalidParameterError(f"{field}: a complete tree has 2**D - 1 splits and 2**D leaves.")
    f = np.asarray(feature)
    if f.size and (f.min() < 0 or f.max() >= n_cuts.size or np.any(np.asarray(cut) < 0)
                   or np.any(np.asarray(cut) >= n_cuts[f])):
        raise InvalidParameterError(f"{field}: a split names a feature or a cut that does not exist.")
