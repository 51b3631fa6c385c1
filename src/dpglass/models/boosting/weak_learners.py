"""Weak learners of smooth boosting: DP 1-Rules (stumps), joint trees and DP TopDown trees.

Each learner receives the records, the labels and the smooth measure ``mu``
of the records produced by :func:`dpglass.models.boosting.estimator.smooth_boost` (every
entry in [0, 1], unnormalised), computes the exact values of its round's
releases (utilities, leaf margins) and releases them through ``release(step,
exact)``: the steps are the round's in the family's release plan
(:mod:`dpglass.models.boosting.plan`, which holds each step's entry, its
mechanism and its public domain), and ``release`` is the fit's ledger's
(:meth:`~dpglass.privacy.ledger.PrivacyLedger.release`), which checks the
budget before it draws.  Working with the unnormalised measure keeps the
number of records out of every calibration: the sensitivities below are
constants, proven for add/remove neighbours with n private
(``docs/privacy.md``, section "Smooth boosting").

Hypotheses predict in ``{-1, +1}``: ``+1`` is the second class (``classes_[1]``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpglass.aggregates import CHUNK_ROWS, PackedRows
from dpglass.privacy.mechanisms import ExponentialMechanism
from dpglass.privacy.mechanisms._common import GRID_SLACK

__all__ = [
    "Stump",
    "Tree",
    "FeatureMatrix",
    "literal_errors",
    "dp_one_rule",
    "gini_bound",
    "dp_top_down",
    "dp_joint_tree",
    "sample_joint_tree",
    "joint_tree_rate",
    "STUMP_SENSITIVITY_FACTOR",
    "SPLIT_SENSITIVITY_FACTOR",
    "LEAF_SENSITIVITY_FACTOR",
    "TREE_ERROR_SENSITIVITY",
    "TREE_FLOOR",
    "JOINT_TREE_DEPTH",
    "PAPER_STUMP_SENSITIVITY_FACTOR",
    "PAPER_SPLIT_SENSITIVITY_FACTOR",
]

#: Sensitivity of a literal's mu-weighted error sum_i mu_i [h(x_i) != y_i] for
#: add/remove neighbours (Lemma S' in docs/privacy.md): 1.
STUMP_SENSITIVITY_FACTOR = 1.0
#: Paper 002's calibration (Observation 8, Theorem 7: eta = eps kappa n / (4 tau)),
#: which is sensitivity 2 in these units: ``variant="paper"``.
PAPER_STUMP_SENSITIVITY_FACTOR = 2.0
#: Sensitivity of a split's Gini-bound improvement: 4 ||mu - mu'||_1 <= 4 (2 - kappa) <= 8.
#: Paper 002 (Lemma 15) claims half of that; its proof is wrong (docs/privacy.md).
SPLIT_SENSITIVITY_FACTOR = 8.0
PAPER_SPLIT_SENSITIVITY_FACTOR = 4.0
#: l1 sensitivity of the vector of leaf margins (a_l - b_l)_l: ||mu - mu'||_1 <= 2 - kappa <= 2.
LEAF_SENSITIVITY_FACTOR = 2.0


# --------------------------------------------------------------------------- data
#: Up to this many cells (rows x features), sparse 0/1 data also get a CSR copy of X.T.
SPARSE_MAX_CELLS = 1 << 26


class FeatureMatrix(PackedRows):
    """A 0/1 matrix prepared for weighted column sums ``X.T @ W``: bit-packed rows.

    Built from a 0/1 array or taken from the aggregation seam
    (:class:`~dpglass.aggregates.PatternTable`, whose rows are the distinct
    (row, label) entries; the weights then carry the entries' record counts).
    ``tdot`` works a chunk of rows at a time (no float copy of the matrix),
    except for sparse data (at most a quarter ones) of up to
    :data:`SPARSE_MAX_CELLS` cells, which get a CSR copy of ``X.T`` (faster on
    one-hot data); the columns are read with :meth:`column`.
    """

    def __init__(self, X01):
        if isinstance(X01, PackedRows):
            super().__init__(X01.packed, X01.n_features)
        else:
            X01 = np.asarray(X01, dtype=np.uint8)
            packed = PackedRows.from_array(X01)
            super().__init__(packed.packed, X01.shape[1])
        self.n_samples = self.n_rows
        self._sparse = None
        if 0 < self.n_rows * self.n_features <= SPARSE_MAX_CELLS:
            # one-hot data: a CSR copy of X.T (12 bytes a one) is much faster than chunked dense products
            ones = sum(int(np.unpackbits(self.packed[s : s + CHUNK_ROWS]).sum()) for s in range(0, self.n_rows, CHUNK_ROWS))
            if ones <= 0.25 * self.n_rows * self.n_features:
                self._sparse = sp.hstack([sp.csr_matrix(rows.T, dtype=np.float64) for _, rows in self.chunks()],
                                         format="csr")

    def tdot(self, w: np.ndarray) -> np.ndarray:
        """``X.T @ w`` (float64) for a vector or an ``(n, k)`` matrix ``w``."""
        if self._sparse is not None:
            return np.asarray(self._sparse @ np.asarray(w, dtype=np.float64))
        return super().tdot(w)

    @property
    def X(self) -> np.ndarray:
        """The unpacked uint8 matrix (a full copy: prefer :meth:`chunks` or :meth:`column`)."""
        return self.unpack()


# --------------------------------------------------------------------- hypotheses
@dataclass(frozen=True)
class Stump:
    """A 1-Rule: a signed literal or a constant.

    ``feature = -1`` is the constant ``sign``; otherwise the stump predicts
    ``sign * (+1 if x[feature] == 1 else -1)`` (``sign = -1`` is the negated
    literal).
    """

    feature: int
    sign: int

    def predict(self, X: np.ndarray) -> np.ndarray:
        """``+1``/``-1`` predictions (int8) for the 0/1 matrix ``X``."""
        if self.feature < 0:
            return np.full(X.shape[0], self.sign, dtype=np.int8)
        col = X[:, self.feature].astype(np.int8)
        return (self.sign * (2 * col - 1)).astype(np.int8)

    def describe(self, names, classes) -> str:
        if self.feature < 0:
            return f"(constant) -> {classes[int(self.sign > 0)]!s}"
        lit = names[self.feature] if self.sign > 0 else f"not {names[self.feature]}"
        return f"{lit} -> {classes[1]!s}"


@dataclass(frozen=True)
class Tree:
    """A binary decision tree on 0/1 features, stored as arrays.

    ``feature[k] = -1`` marks a leaf whose prediction is ``value[k]`` (``+1`` or
    ``-1``); an internal node sends ``x[feature[k]] == 0`` to ``left[k]`` and
    ``x[feature[k]] == 1`` to ``right[k]``.  Node 0 is the root.
    """

    feature: tuple
    left: tuple
    right: tuple
    value: tuple

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The leaf each row of ``X`` reaches."""
        feature = np.asarray(self.feature)
        left = np.asarray(self.left)
        right = np.asarray(self.right)
        node = np.zeros(X.shape[0], dtype=np.intp)
        rows = np.arange(X.shape[0])
        for _ in range(len(self.feature)):
            f = feature[node]
            inner = f >= 0
            if not inner.any():
                break
            r = rows[inner]
            go_right = X[r, f[inner]] == 1
            node[r] = np.where(go_right, right[node[r]], left[node[r]])
        return node

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.value, dtype=np.int8)[self.apply(X)]

    @property
    def n_internal(self) -> int:
        return sum(1 for f in self.feature if f >= 0)

    def features_used(self) -> set:
        return {int(f) for f in self.feature if f >= 0}

    def describe(self, names, classes, node: int = 0, _path=None) -> str:
        """The tree as nested ``if feature then A else B``, simplified.

        A test already decided on the path is skipped; a test whose two
        branches print the same is replaced by that branch.
        """
        path = {} if _path is None else _path
        f = self.feature[node]
        if f < 0:
            return str(classes[int(self.value[node] > 0)])
        if f in path:
            nxt = self.right[node] if path[f] else self.left[node]
            return self.describe(names, classes, nxt, path)
        yes = self.describe(names, classes, self.right[node], {**path, f: 1})
        no = self.describe(names, classes, self.left[node], {**path, f: 0})
        if yes == no:
            return yes
        wrap = lambda s: s if " " not in s else f"({s})"  # noqa: E731
        return f"if {names[f]} then {wrap(yes)} else {wrap(no)}"


# ------------------------------------------------------------------------- DP-1R
def literal_errors(F: FeatureMatrix, y01: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Weighted errors of every 1-Rule, in one matrix-vector product.

    Candidates are ordered ``x_0 .. x_{d-1}``, ``not x_0 .. not x_{d-1}``,
    constant ``+1``, constant ``-1``.  With ``P1 = sum(p[y == 1])`` and
    ``W = sum(p)``: ``err(x_j) = P1 + (X.T @ (p * (1 - 2y)))_j``,
    ``err(not x_j) = W - err(x_j)``, ``err(+1) = W - P1``, ``err(-1) = P1``.

    Examples
    --------
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=np.uint8)
    >>> y = np.array([1, 1, 0, 0], dtype=np.uint8)
    >>> literal_errors(FeatureMatrix(X), y, np.full(4, 0.25)).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.5, 0.5]
    """
    p = np.asarray(p, dtype=np.float64)
    total = float(p.sum())
    signed = p.copy()  # +p on negatives, -p on positives (without float temporaries of y)
    np.negative(signed, out=signed, where=np.asarray(y01) == 1)
    p1 = 0.5 * (total - float(signed.sum()))
    err_pos = p1 + F.tdot(signed)
    return np.concatenate([err_pos, total - err_pos, [total - p1, p1]])


def _stump_of(index: int, d: int) -> Stump:
    if index < d:
        return Stump(int(index), 1)
    if index < 2 * d:
        return Stump(int(index - d), -1)
    return Stump(-1, 1 if index == 2 * d else -1)


def dp_one_rule(F: FeatureMatrix, y01: np.ndarray, mu: np.ndarray, *, steps: tuple, release):
    """DP-1R (paper 002, Algorithm 3): the exponential mechanism on -weighted error.

    Parameters
    ----------
    F : FeatureMatrix
    y01 : ndarray of 0/1
    mu : ndarray
        The smooth measure (entries in [0, 1]).
    steps : tuple of PlannedRelease
        The round's one step: the exponential mechanism over the ``2d + 2``
        stumps at the round's epsilon, sensitivity 1 (2 with paper 002's
        calibration, ``variant="paper"``: also proven, with half the utility).
    release : callable ``(step, exact) -> released``
        The fit's ledger's release (it draws the noise).

    Returns
    -------
    stump : Stump
    predictions : ndarray of int8
        The stump's +1/-1 predictions on the training records.

    Notes
    -----
    Utility ``-sum_i mu_i [h(x_i) != y_i]``; sensitivity 1 for add/remove
    neighbours (docs/privacy.md, Lemma S'), with n inside the measure only.
    Selection probabilities are proportional to ``exp(epsilon * u / 2)``:
    in the paper's normalised units (divide by ``kappa n``) that is
    ``eta = epsilon kappa n / 2``, twice Theorem 7's ``eps kappa n / (4 tau)``.
    """
    (step,) = steps
    ((feature, sign),) = release(step, -literal_errors(F, y01, mu))
    stump = Stump(int(feature), int(sign))
    return stump, F.map_rows(stump.predict)


# ------------------------------------------------------------------- DP-TopDown
def gini_bound(a, b):
    """``w * G(q)`` with ``G(q) = 4 q (1 - q)``: ``4 a b / (a + b)`` (0 when empty).

    ``a``, ``b`` are the weighted masses of the positive and negative records
    at a leaf.

    Examples
    --------
    >>> float(gini_bound(0.25, 0.25)), float(gini_bound(0.5, 0.0)), float(gini_bound(0.0, 0.0))
    (0.5, 0.0, 0.0)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    s = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(s > 0, 4.0 * a * b / np.where(s > 0, s, 1.0), 0.0)
    return out


def _leaf_masses(F: FeatureMatrix, y01, p, in_leaf: np.ndarray):
    """Weighted (positive, negative) masses of a leaf, in total and where each feature is 1."""
    w = p * in_leaf
    wy = w * y01
    total = F.tdot(w)
    a1 = F.tdot(wy)
    return float(wy.sum()), float(w.sum() - wy.sum()), a1, total - a1


def _improvements(masses):
    """Improvement of the Gini bound for splitting a leaf on every feature."""
    a, b, a1, b1 = masses
    a1, b1 = np.clip(a1, 0.0, a), np.clip(b1, 0.0, b)
    return gini_bound(a, b) - gini_bound(a - a1, b - b1) - gini_bound(a1, b1)


def dp_top_down(F: FeatureMatrix, y01: np.ndarray, p: np.ndarray, *, steps: tuple, release):
    """DP-TopDown (paper 002, Algorithm 2) on a smooth weighting.

    Grows a tree to ``n_nodes = len(steps) - 1`` internal nodes: each step
    selects a pair (leaf, feature) among all current leaves times all features
    with the exponential mechanism on the improvement of the Gini bound
    ``sum_l w_l G(q_l)``; then labels every leaf by the sign of its weighted
    margin ``a_l - b_l`` plus Laplace noise.

    Budget (the round's steps): half of the round's epsilon for the
    ``n_nodes`` selections (basic composition, ``epsilon / (2 n_nodes)``
    each), half for the leaf labels, as in the paper's Theorem 9.

    ``p`` is the smooth measure ``mu`` (entries in [0, 1], unnormalised).
    Sensitivities (proofs in docs/privacy.md, n private): a split's
    improvement changes by at most 8 (every partial derivative of the
    improvement in the masses lies in ``[-4, 4]`` and ``||mu - mu'||_1 <= 2``;
    the paper's halved constant does not hold, ``variant="paper"`` uses it and
    is a paper-claim); the vector of leaf margins has l1 sensitivity 2, so one
    grid Laplace draw of scale ``2 / (epsilon/2)`` per leaf labels all leaves
    at once (the leaves partition the records, but the measure couples them,
    so parallel composition alone would not do).

    Returns
    -------
    tree : Tree
    predictions : ndarray of int8
        The tree's +1/-1 predictions on the training records.
    """
    *splits, labels = steps
    feature, left, right, leaf_of, leaves = _grow(F, y01, p, splits, release)
    margins = np.bincount(leaf_of, weights=p * (2.0 * y01 - 1.0), minlength=len(feature))[leaves]
    value = [0] * len(feature)
    for leaf, v in zip(leaves, release(labels, margins)):
        value[leaf] = int(v)
    tree = Tree(tuple(feature), tuple(left), tuple(right), tuple(value))
    return tree, np.asarray(value, dtype=np.int8)[leaf_of]


def _grow(F: FeatureMatrix, y01, p, splits: tuple, release):
    """DP-TopDown's splits: one (leaf position, feature) pair released per step on the Gini-bound improvements.

    Returns the tree's arrays (feature, left, right), each record's leaf and
    the leaves, in the order the labels are released.  Split ``s`` creates
    nodes ``2s + 1`` (``x_j = 0``) and ``2s + 2``.
    """
    n_nodes, n = len(splits), F.n_samples
    feature = [-1]
    left = [-1]
    right = [-1]
    leaf_of = np.zeros(n, dtype=np.intp)
    leaves = [0]
    masses = {0: _leaf_masses(F, y01, p, np.ones(n))}
    improvements = {0: _improvements(masses[0])}
    for s, step in enumerate(splits):
        ((position, j),) = release(step, np.concatenate([improvements[leaf] for leaf in leaves]))
        leaf, j = leaves[position], int(j)
        lo, hi = len(feature), len(feature) + 1
        feature[leaf], left[leaf], right[leaf] = j, lo, hi
        feature += [-1, -1]
        left += [-1, -1]
        right += [-1, -1]
        rows = leaf_of == leaf
        xj = F.column(j)
        leaf_of[rows & (xj == 0)] = lo
        leaf_of[rows & (xj == 1)] = hi
        leaves.remove(leaf)
        del improvements[leaf]
        parent = masses.pop(leaf)
        leaves += [lo, hi]
        if s + 1 < n_nodes:  # improvements of the new leaves are needed only if another split follows
            # masses are additive: the x_j = 0 child is the parent minus the x_j = 1 child
            masses[hi] = _leaf_masses(F, y01, p, (leaf_of == hi).astype(np.float64))
            masses[lo] = tuple(u - v for u, v in zip(parent, masses[hi]))
            for new in (lo, hi):
                improvements[new] = _improvements(masses[new])
    return feature, left, right, leaf_of, leaves


# -------------------------------------------------------------- joint trees
#: Sensitivity of the mu-weighted error of any labelled tree (Lemma S', f = [h(x) != y]): 1, as for a 1-Rule.
TREE_ERROR_SENSITIVITY = 1.0
#: The whole-tree mechanism floors ``rate * (U(h) - max U)`` at ``-TREE_FLOOR``: no stage of its sampling
#: then has a gap at the samplers' cap (2**21), and the floored utility still has sensitivity 1.
TREE_FLOOR = 2.0**20
#: ``tree_nodes`` -> depth of the complete trees the joint learner selects among.
JOINT_TREE_DEPTH = {1: 1, 3: 2}
#: Labellings of a branch's two leaves (``x_f = 0``, ``x_f = 1``), in candidate order.
_LABELLINGS = ((-1, -1), (-1, 1), (1, -1), (1, 1))


def _weighted_grams(F: FeatureMatrix, W: np.ndarray) -> np.ndarray:
    """``X.T diag(W[:, c]) X`` for every column c of ``W``: shape ``(k, d, d)``, float64."""
    W = np.asarray(W, dtype=np.float64)
    if F._sparse is not None:
        S = F._sparse
        return np.stack([np.asarray((S.multiply(W[:, c][None, :]) @ S.T).todense()) for c in range(W.shape[1])])
    out = np.zeros((W.shape[1], F.n_features, F.n_features))
    for sel, rows in F.chunks():
        R = rows.astype(np.float64)
        for c in range(W.shape[1]):
            out[c] += R.T @ (R * W[sel, c][:, None])
    return out


def _branch_utilities(a0, b0, a1, b1) -> np.ndarray:
    """Minus the weighted error of each labelling of a branch's two leaves, in :data:`_LABELLINGS` order.

    ``(a0, b0)`` are the positive and negative masses of the leaf ``x_f = 0``,
    ``(a1, b1)`` of the leaf ``x_f = 1``; labelling a leaf ``-1`` errs on its
    positives, ``+1`` on its negatives.  Shape: the broadcast shape plus 4.
    """
    err = lambda a, b, s: np.asarray(a if s < 0 else b, dtype=np.float64)  # noqa: E731
    return np.stack([-(err(a0, b0, s0) + err(a1, b1, s1)) for s0, s1 in _LABELLINGS], axis=-1)


def _lse(x, axis=None):
    """``log sum exp`` of non-positive-maximum arrays (stable; float64)."""
    m = np.max(x, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(x - m), axis=axis))


class _TreeUtilities:
    """Stage utilities of the whole-tree exponential mechanism (docs/privacy.md, "Joint trees").

    The mechanism selects a complete tree of depth 1 or 2 with its leaf labels,
    ``h``, with probability proportional to ``exp(rate * U'(h))``, where
    ``U'(h) = max(U(h), max U - TREE_FLOOR / rate)`` and ``U(h)`` is minus the
    mu-weighted error of ``h``.  It is sampled as a chain of exponential
    mechanisms at the same rate: the root feature, then (depth 2) the pair of
    child features, then the leaf labels; each stage's utility of a candidate is
    ``log(sum exp(rate * next stage's utilities)) / rate`` over the trees below
    it, so the chain's law is the whole mechanism's.  Utilities are centred at
    ``max U`` and floored, so every stage's gaps stay below ``TREE_FLOOR`` plus
    the log of the stage's size.
    """

    def __init__(self, F: FeatureMatrix, y01, p, depth: int, rate: float):
        self.depth, self.rate, self.d = depth, float(rate), F.n_features
        self.floor = -TREE_FLOOR / self.rate
        p = np.asarray(p, dtype=np.float64)
        W = np.column_stack([np.where(y01 == 1, p, 0.0), np.where(y01 == 1, 0.0, p)])
        T = W.sum(axis=0)  # total positive and negative masses
        c = F.tdot(W)  # (d, 2): masses where each feature is 1
        if depth == 1:
            a0, b0 = T[0] - c[:, 0], T[1] - c[:, 1]
            self.UB = _branch_utilities(np.maximum(a0, 0), np.maximum(b0, 0), c[:, 0], c[:, 1])  # (d, 4)
            self.top = float(self.UB.max())
            return
        G = _weighted_grams(F, W)  # (2, d, d)
        cj, ck = c.T[:, :, None], c.T[:, None, :]  # (2, d, 1) and (2, 1, d)
        pos = lambda m: np.maximum(m, 0.0)  # noqa: E731  (inclusion-exclusion can round below 0)
        left0, left1 = pos(T[:, None, None] - cj - ck + G), pos(ck - G)  # x_j = 0, x_k = 0 / 1
        right0, right1 = pos(cj - G), G  # x_j = 1, x_l = 0 / 1
        self.UB0 = _branch_utilities(left0[0], left0[1], left1[0], left1[1])  # (d, d, 4): [j, k, labelling]
        self.UB1 = _branch_utilities(right0[0], right0[1], right1[0], right1[1])  # (d, d, 4): [j, l, labelling]
        m0, m1 = self.UB0.max(axis=(1, 2)), self.UB1.max(axis=(1, 2))
        self.top = float(np.max(m0 + m1))
        self.shift = m0 + m1 - self.top  # <= 0
        # the floor cannot bind if even the worst tree (every leaf mislabelled, under any root) is within
        # TREE_FLOOR / rate of the best; then the stage utilities factorise over the two branches
        lowest = float(np.min(self.UB0.min(axis=(1, 2)) + self.UB1.min(axis=(1, 2)))) - self.top
        self.unfloored = self.rate * lowest >= -TREE_FLOOR
        r = self.rate
        self.cL = _lse(r * (self.UB0 - m0[:, None, None]), axis=2) / r  # (d, d): [j, k]
        self.cR = _lse(r * (self.UB1 - m1[:, None, None]), axis=2) / r

    def _floored(self, U: np.ndarray) -> np.ndarray:
        return np.maximum(U - self.top, self.floor)

    def _explicit(self, j: int) -> np.ndarray:
        """Floored centred utilities of every tree under root j: shape (d, 4, d, 4) = [k, left labels, l, right]."""
        return self._floored(self.UB0[j][:, :, None, None] + self.UB1[j][None, None, :, :])

    def root(self) -> np.ndarray:
        """Stage 1: the root feature j (d candidates)."""
        r = self.rate
        if self.depth == 1:
            return _lse(r * self._floored(self.UB), axis=1) / r
        if self.unfloored:
            return _lse(r * self.cL, axis=1) / r + _lse(r * self.cR, axis=1) / r + self.shift
        return np.array([_lse(r * self._explicit(j)) / r for j in range(self.d)])

    def pairs(self, j: int) -> np.ndarray:
        """Stage 2 (depth 2): the children's features (k, l) under root j, flattened (d * d candidates)."""
        r = self.rate
        if self.unfloored:
            return (self.cL[j][:, None] + self.cR[j][None, :] + self.shift[j]).ravel()
        return (_lse(r * self._explicit(j), axis=(1, 3)) / r).ravel()

    def labels(self, j: int, k: int = 0, l: int = 0) -> np.ndarray:
        """Last stage: the leaf labels (4 labellings at depth 1, 16 at depth 2: left index * 4 + right index)."""
        if self.depth == 1:
            return self._floored(self.UB[j])
        return self._floored(self.UB0[j, k][:, None] + self.UB1[j, l][None, :]).ravel()


def _joint_tree(depth: int, features, labels) -> Tree:
    """The complete tree of the given depth: nodes in breadth-first order, leaves left to right."""
    if depth == 1:
        (j,), (v0, v1) = features, labels
        return Tree((j, -1, -1), (1, -1, -1), (2, -1, -1), (0, v0, v1))
    j, k, l = features
    return Tree((j, k, l, -1, -1, -1, -1), (1, 3, 5, -1, -1, -1, -1), (2, 4, 6, -1, -1, -1, -1),
                (0, 0, 0) + tuple(labels))


def joint_tree_rate(epsilon: float, depth: int) -> float:
    """The chain's common rate: ``(epsilon - 4 S 2**-40) / 2`` for S stages (the grid rounding of each stage)."""
    return ExponentialMechanism(_stage_epsilon(epsilon, depth), TREE_ERROR_SENSITIVITY)._rate


def _stage_epsilon(epsilon: float, depth: int) -> float:
    """The epsilon each stage's ExponentialMechanism is built with so that its rate is (epsilon - 4 S 2**-40) / 2."""
    stages = depth + 1
    return epsilon - 4 * stages * 2.0**-40 + GRID_SLACK


def sample_joint_tree(stage: ExponentialMechanism, util: _TreeUtilities, rng) -> tuple[tuple, tuple]:
    """``(split features, leaf labels)`` of one draw of the whole-tree mechanism: the chain of ``stage`` selections
    (the root, then the children's features at depth 2, then the labels) on ``util``, built at ``stage``'s rate."""
    j = int(stage.select(util.root(), rng))
    if util.depth == 1:
        return (j,), _LABELLINGS[int(stage.select(util.labels(j), rng))]
    k, l = divmod(int(stage.select(util.pairs(j), rng)), util.d)
    i = int(stage.select(util.labels(j, k, l), rng))
    return (j, k, l), _LABELLINGS[i // 4] + _LABELLINGS[i % 4]


def dp_joint_tree(F: FeatureMatrix, y01: np.ndarray, p: np.ndarray, *, steps: tuple, release):
    """A whole tree (split features and leaf labels) by one exponential mechanism on minus its weighted error.

    The candidates are all complete trees of depth 1 (``tree_nodes=1``) or 2
    (``tree_nodes=3``) on the d features with every labelling of their leaves
    (``4 d`` or ``16 d**3``, a set fixed by the schema).  Utility: minus the
    mu-weighted error, sensitivity 1 as for DP-1R (Lemma S'), floored at
    ``TREE_FLOOR / rate`` below the best tree (still sensitivity 1).  The whole
    of the round's epsilon goes to this one selection (the round's one step):
    no split of the budget between splits and leaves, and no 8 of the Gini
    bound.  Sampled exactly as a chain of exponential mechanisms
    (:func:`sample_joint_tree`; the proof, including the grid rounding of each
    stage, is in docs/privacy.md, "Joint trees").  The exact values handed to
    ``release`` are the utilities as a function of the depth and the chain's
    rate, which the step owns.

    Returns
    -------
    tree : Tree
    predictions : ndarray of int8
    """
    (step,) = steps
    (chosen,) = release(step, functools.partial(_TreeUtilities, F, y01, p))
    internal = (len(chosen) - 1) // 2  # 1 split feature and 2 labels, or 3 and 4
    tree = _joint_tree(JOINT_TREE_DEPTH[internal], tuple(int(f) for f in chosen[:internal]),
                       tuple(int(v) for v in chosen[internal:]))
    return tree, F.map_rows(tree.predict)
