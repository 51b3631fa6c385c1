"""Bins and complete binary trees for :mod:`dpglass.models.gbdt.estimator` (no privacy noise here).

Bins
    Every feature is cut at public edges: a 0/1 column (``bounds`` None) at
    0.5; a numeric column, clipped to its public ``(low, high)``, at the
    ``max_bins - 1`` inner points of the equal-width grid, or at edges
    released by DP quantiles.  A value's bin is the number of edges strictly
    below it, so "bin <= k" is "x <= edge k".  The binning is dpglass's one
    implementation, shared with dp-gam: :mod:`dpglass.models._binning`
    (re-exported here).

Trees
    A :class:`BinnedTree` of depth ``D`` is complete: internal nodes
    ``0 .. 2**D - 2`` (node ``i`` has children ``2i + 1`` (x <= threshold)
    and ``2i + 2``), leaves in level order.  All records descend one level at
    a time, all nodes of a level at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.models._binning import (  # the one binning
    apply_bins,
    check_feature_bounds,
    check_no_nan,
    uniform_edges,
)

__all__ = ["BinnedTree", "apply_bins", "check_feature_bounds", "check_no_nan", "check_tree_arrays", "leaf_index",
           "random_structure", "uniform_edges"]


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
