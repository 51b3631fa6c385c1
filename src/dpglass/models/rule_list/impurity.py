"""The two scores a rule list selects on, for K >= 2 classes: the weighted Gini impurity and the training errors.

A candidate rule splits the remaining records into those it catches, with
counts ``c = (c_0, ..., c_{K-1})`` of each class, and those it leaves,
``l = (l_0, ..., l_{K-1})``.  Both scores are functions of ``(c, l)``; their
sensitivities are in docs/privacy.md (sections "Sensitivity of the Gini
impurity", "K classes", and "errors-pf"):

* the weighted Gini impurity (paper 001, eqs. (1)-(2), for K classes)
  ``G = (|c| gini(c) + |l| gini(l)) / n`` with ``gini(c) = 1 - sum_k (c_k/|c|)**2``,
  written as ``(2/n) (P(c)/|c| + P(l)/|l|)`` with ``P(c) = sum_{i<j} c_i c_j``.
  Its local sensitivity is the binary one, ``g(n - 1)`` (docs/privacy.md): the
  functions of :mod:`dpglass.privacy.sensitivity` apply unchanged.  For two
  classes ``P(c) = c_0 c_1`` and ``G`` is
  :func:`dpglass.privacy.sensitivity.weighted_gini`, bit for bit on integer
  counts.
* the training errors of the list ended by the rule, each side predicted by
  its majority: ``E = (|c| - max_k c_k) + (|l| - max_k l_k)``, monotone with
  sensitivity 1 (for two classes ``min(c_0, c_1) + min(l_0, l_1)``).

Arrays have the class on the first axis: ``c`` of shape (K,) or (K, m) for m
candidates.  Counts are non-negative; they are integers in every DP use,
which keeps the products and sums below exact in float64 (up to about 10**8
records).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pair_products", "split_errors", "split_gini"]


def pair_products(c: np.ndarray) -> np.ndarray:
    """``P(c) = sum_{i<j} c_i c_j`` over the first axis, as ``sum_j c_j (c_0 + ... + c_{j-1})`` (O(K)); for two
    classes ``c_1 c_0``, exact on integer counts."""
    c = np.asarray(c, dtype=np.float64)
    total = np.zeros(c.shape[1:])
    before = np.zeros(c.shape[1:])
    for k in range(c.shape[0]):
        total = total + c[k] * before
        before = before + c[k]
    return total


def split_gini(caught, left, empty: float = 0.0) -> np.ndarray:
    """The weighted Gini impurity of each split ``(caught, left)`` (class on the first axis): in ``[0, 1 - 1/K]``.

    An empty side's term is 0; a split of no records scores ``empty`` (0, as
    ``weighted_gini``; the noisy-counts selector passes ``1 - 1/K``, the
    largest impurity, for tables its noise emptied).
    """
    caught = np.asarray(caught, dtype=np.float64)
    left = np.asarray(left, dtype=np.float64)
    caught, left = np.broadcast_arrays(caught, left)
    n_caught, n_left = caught.sum(axis=0), left.sum(axis=0)
    n = n_caught + n_left
    with np.errstate(divide="ignore", invalid="ignore"):
        term_c = np.where(n_caught > 0, pair_products(caught) / n_caught, 0.0)
        term_l = np.where(n_left > 0, pair_products(left) / n_left, 0.0)
        return np.where(n > 0, 2.0 * (term_c + term_l) / n, empty)


def side_errors(counts) -> np.ndarray:
    """The records of a side its majority class misclassifies, ``|c| - max_k c_k``."""
    counts = np.asarray(counts, dtype=np.float64)
    return counts.sum(axis=0) - counts.max(axis=0)


def split_errors(caught, left) -> np.ndarray:
    """The training errors of each split, both sides predicted by their majority class."""
    return side_errors(caught) + side_errors(left)
