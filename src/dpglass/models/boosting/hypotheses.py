"""Smooth boosting's hypotheses and the data they read: stumps, trees, the bit-packed feature matrix.

A hypothesis votes for one class of K >= 2 at each record.  Its votes are
*labels*: for two classes ``-1`` and ``+1`` (``+1`` is ``classes_[1]``, as
binary model files have always stored them), for K > 2 the class codes
``0 .. K-1`` (code k is ``classes_[k]``).  :func:`vote_labels` lists them in
class order and :func:`class_codes` turns labels back into codes; these two
are the only place where the two encodings differ.

The stump candidates of DP-1R (:func:`stump_candidates`) are, for K classes,
every (feature, label where the feature is 1, another label where it is 0)
and the K constants; for two classes they are the 2d signed literals and the
two constants of paper 002, in the order binary fits have always used.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from dpglass.aggregates import CHUNK_ROWS, PackedRows

__all__ = ["ClassStump", "EntryMeasure", "FeatureMatrix", "Stump", "Tree", "as_measure", "class_codes", "class_grams",
           "by_level", "class_of", "class_sums", "entry_predictions", "leaf_sums", "leaf_totals", "n_stumps", "stump_candidates", "stump_from",
           "vote_labels"]


# --------------------------------------------------------------------------- labels
def vote_labels(n_classes: int) -> tuple:
    """The labels hypotheses vote with, in class order: ``(-1, 1)`` for two classes, ``(0, .., K-1)`` for K > 2.

    Examples
    --------
    >>> vote_labels(2), vote_labels(3)
    ((-1, 1), (0, 1, 2))
    """
    return (-1, 1) if int(n_classes) == 2 else tuple(range(int(n_classes)))


def class_codes(labels, n_classes: int) -> np.ndarray:
    """The class codes ``0 .. K-1`` of an array of labels (:func:`vote_labels`).

    Examples
    --------
    >>> class_codes(np.array([-1, 1, 1]), 2).tolist(), class_codes(np.array([2, 0]), 3).tolist()
    ([0, 1, 1], [2, 0])
    """
    labels = np.asarray(labels)
    return (labels + 1) // 2 if int(n_classes) == 2 else labels


def class_of(label, classes):
    """The class (one of ``classes``) a label votes for."""
    return classes[int(class_codes(np.asarray(label), len(classes)))]


# ------------------------------------------------------------------------------ data
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


# ------------------------------------------------------------------- the statistics
# What the weak learners ask of the data: sums of weights over the entries by *group*.  A statistic is
# ``stat(F, codes, w, G, *args)``: ``codes`` (int, one per entry, in 0..G-1) and ``w`` (float64) the entries'
# groups and weights; every array it returns has the G groups on axis 0.  Two callers (one implementation):
# :class:`EntryMeasure` (groups = classes, weights = the measure itself) and the fit's parts
# (:class:`~dpglass.models.boosting.smooth_measure.PartsMeasure`: groups = (margin level, class), weights = the
# entries' integer record counts, so every sum is an exact integer and the parts add up exactly).


#: Row b of BITS: the 8 bits of the byte b, most significant first (``np.packbits``' order): a packed byte's columns.
_BITS = ((np.arange(256)[:, None] >> (7 - np.arange(8))[None, :]) & 1).astype(np.float64)
#: Entries per block of :func:`class_sums` (its temporaries: two int64 arrays of a block).
_BLOCK = 1 << 20


def class_sums(F: FeatureMatrix, codes, w, G: int) -> tuple[np.ndarray, np.ndarray]:
    """``(T, M1)``: the weight of each group (G,) and its weight where each feature is 1 (G, d).

    Read from the packed bytes: for each byte column, the weight of every (group, byte value) pair (one
    ``bincount`` over the entries), times the bytes' bits; no row is unpacked.  With integer weights (a
    fit's counts) every sum is an exact integer below 2**53."""
    codes = np.asarray(codes, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    T = np.bincount(codes, weights=w, minlength=G).astype(np.float64)
    n_bytes, d = F.packed.shape[1], F.n_features
    tables = np.zeros((n_bytes, G * 256))
    for s in range(0, codes.shape[0], _BLOCK):
        base = codes[s : s + _BLOCK] * 256
        for b in range(n_bytes):
            tables[b] += np.bincount(base + F.packed[s : s + _BLOCK, b], weights=w[s : s + _BLOCK],
                                     minlength=G * 256)
    M1 = np.zeros((G, 8 * n_bytes))
    for b in range(n_bytes):
        M1[:, 8 * b : 8 * b + 8] = tables[b].reshape(G, 256) @ _BITS
    return T, M1[:, :d]


def class_grams(F: FeatureMatrix, codes, w, G: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(T, M1, Gram)``: :func:`class_sums` and each group's weighted Gram matrix ``X_g' diag(w_g) X_g`` (G, d, d):
    its weight where two features are both 1.  Each entry's row enters its own group's product only."""
    codes = np.asarray(codes, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    T, M1 = class_sums(F, codes, w, G)
    d = F.n_features
    out = np.zeros((G, d, d))
    if F._sparse is not None:
        S = F._sparse
        order = np.argsort(codes, kind="stable")
        edges = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=G))])
        for g in np.flatnonzero(np.diff(edges)):
            cols = order[edges[g] : edges[g + 1]]
            Sg = S[:, cols]
            out[g] = np.asarray((Sg.multiply(w[cols][None, :]) @ Sg.T).todense())
        return T, M1, out
    for sel, rows in F.chunks():
        c = codes[sel]
        order = np.argsort(c, kind="stable")
        edges = np.concatenate([[0], np.cumsum(np.bincount(c, minlength=G))])
        R, wc = rows[order].astype(np.float64), w[sel][order]
        for g in np.flatnonzero(np.diff(edges)):
            Rg = R[edges[g] : edges[g + 1]]
            out[g] += Rg.T @ (Rg * wc[edges[g] : edges[g + 1], None])
    return T, M1, out


def _nodes(F: FeatureMatrix, feature, left, right) -> np.ndarray:
    """The node of the (partial) tree ``(feature, left, right)`` each entry reaches."""
    local, sub = _on_its_columns(F, Tree(tuple(feature), tuple(left), tuple(right), (0,) * len(feature)))
    return local.apply(sub)


def leaf_sums(F: FeatureMatrix, codes, w, G: int, feature, left, right, leaf: int):
    """:func:`class_sums` of the entries reaching node ``leaf`` of the tree ``(feature, left, right)``."""
    inside = _nodes(F, feature, left, right) == leaf
    return class_sums(F, codes, np.where(inside, np.asarray(w, dtype=np.float64), 0.0), G)


def leaf_totals(F: FeatureMatrix, codes, w, G: int, feature, left, right) -> np.ndarray:
    """The weight of each group at each node of the tree ``(feature, left, right)``: shape (G, nodes)."""
    n_nodes = len(feature)
    node = _nodes(F, feature, left, right)
    key = np.asarray(codes, dtype=np.int64) * n_nodes + node
    return np.bincount(key, weights=w, minlength=G * n_nodes).astype(np.float64).reshape(G, n_nodes)


def by_level(sums, n_levels: int, n_classes: int):
    """A statistic summed by (level, class) (an array, or a tuple of arrays, whose first axis is level * K +
    class), shaped ``(levels, K, ...)``: what an exact contraction of the margin levels reads."""
    shape = lambda a: np.asarray(a, dtype=np.float64).reshape((n_levels, n_classes) + np.shape(a)[1:])  # noqa: E731
    return tuple(shape(a) for a in sums) if isinstance(sums, tuple) else shape(sums)


class EntryMeasure:
    """A measure given entry by entry: the statistics of ``F`` with groups the classes ``y`` and weights ``p``.

    What the weak learners read when called on arrays (the reproductions, the tests); a fit reads its
    parts instead (:class:`~dpglass.models.boosting.smooth_measure.PartsMeasure`), through the same
    statistics.  :meth:`predictions` are the hypothesis' labels on the entries.
    """

    def __init__(self, F: FeatureMatrix, y01, p, n_classes: int = 2):
        self.F, self.n_classes, self.n_features = F, int(n_classes), F.n_features
        self.codes = np.asarray(y01, dtype=np.int64)
        self.p = np.asarray(p, dtype=np.float64)

    def ask(self, stat, *args):
        return stat(self.F, self.codes, self.p, self.n_classes, *args)

    def levels(self, stat, *args) -> tuple:
        """``(mu, sums)``: each distinct weight (its exact value, a Fraction) and ``stat`` of the entries of each
        (distinct weight, class), counted with weight 1 (exact integers), shaped ``(levels, K, ...)``."""
        values, inverse = np.unique(self.p, return_inverse=True)
        K, L = self.n_classes, values.size
        sums = stat(self.F, inverse.ravel() * K + self.codes, np.ones(self.p.size), L * K, *args)
        return [Fraction(float(v)) for v in values], by_level(sums, L, K)

    def predictions(self, h) -> np.ndarray:
        return entry_predictions(self.F, h)


def _on_its_columns(F: FeatureMatrix, h):
    """``(h', X')``: the columns of ``F`` that ``h`` tests (a stump one, a tree a few), and ``h`` on them."""
    used = sorted(h.features_used()) if isinstance(h, Tree) else ([h.feature] if h.feature >= 0 else [])
    sub = (np.column_stack([F.column(j) for j in used]) if used
           else np.zeros((F.n_rows, 0), dtype=np.uint8))
    at = {j: i for i, j in enumerate(used)}
    if isinstance(h, Tree):
        return Tree(tuple(at.get(f, -1) for f in h.feature), h.left, h.right, h.value), sub
    return dataclasses.replace(h, feature=at.get(h.feature, -1)), sub


def entry_predictions(F: FeatureMatrix, h) -> np.ndarray:
    """``h.predict`` on every row of ``F``, reading only the columns ``h`` tests."""
    local, sub = _on_its_columns(F, h)
    return local.predict(sub)


def as_measure(data, y01=None, p=None, n_classes: int = 2):
    """``data`` if it is already a measure (it has ``ask``), else the :class:`EntryMeasure` of ``(data, y01, p)``."""
    if hasattr(data, "ask"):
        return data
    return EntryMeasure(data if isinstance(data, FeatureMatrix) else FeatureMatrix(data), y01, p, n_classes)


# --------------------------------------------------------------------------- stumps
@dataclass(frozen=True)
class Stump:
    """A 1-Rule of two classes: a signed literal or a constant.

    ``feature = -1`` is the constant ``sign``; otherwise the stump predicts
    ``sign * (+1 if x[feature] == 1 else -1)`` (``sign = -1`` is the negated
    literal).  The K = 2 case of :class:`ClassStump` (labels ``sign`` where
    the feature is 1, ``-sign`` where it is 0).
    """

    feature: int
    sign: int

    @property
    def released(self) -> tuple:
        """The value its release plan's step releases (and its model file holds): ``(feature, sign)``."""
        return (int(self.feature), int(self.sign))

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
class ClassStump:
    """A 1-Rule of K > 2 classes: class ``hi`` where ``x[feature] == 1``, class ``lo`` (another) where it is 0.

    ``feature = -1`` is the constant class ``hi`` (then ``lo == hi``).  The
    classes are codes ``0 .. K-1``.
    """

    feature: int
    hi: int
    lo: int

    @property
    def released(self) -> tuple:
        """The value its release plan's step releases (and its model file holds): ``(feature, hi, lo)``."""
        return (int(self.feature), int(self.hi), int(self.lo))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class codes (int16) for the 0/1 matrix ``X``."""
        if self.feature < 0:
            return np.full(X.shape[0], self.hi, dtype=np.int16)
        return np.where(X[:, self.feature] == 1, self.hi, self.lo).astype(np.int16)

    def describe(self, names, classes) -> str:
        if self.feature < 0:
            return f"(constant) {classes[self.hi]!s}"
        return f"if {names[self.feature]} then {classes[self.hi]!s} else {classes[self.lo]!s}"


def stump_candidates(n_classes: int) -> tuple[tuple, tuple]:
    """``(pairs, constants)`` in DP-1R's candidate order: pairs of labels (where the feature is 1, where it is 0)
    and the constants' labels, the last class first.  Each pair is d candidates (one per feature).

    Examples
    --------
    >>> stump_candidates(2)  # x_j votes +1, then not x_j (votes -1 where x_j = 1), then the constants +1, -1
    (((1, -1), (-1, 1)), (1, -1))
    >>> stump_candidates(3)[0][:3], stump_candidates(3)[1]
    (((2, 1), (2, 0), (1, 2)), (2, 1, 0))
    """
    order = vote_labels(n_classes)[::-1]
    return tuple((hi, lo) for hi in order for lo in order if lo != hi), order


def n_stumps(n_features: int, n_classes: int = 2) -> int:
    """How many stumps DP-1R selects among: ``d K (K - 1) + K`` (``2d + 2`` for two classes)."""
    return int(n_features) * n_classes * (n_classes - 1) + n_classes


def stump_from(values) -> Stump | ClassStump:
    """The stump a released value stands for: ``(feature, sign)`` (two classes) or ``(feature, hi, lo)``."""
    values = tuple(int(v) for v in values)
    return Stump(*values) if len(values) == 2 else ClassStump(*values)


def _stump_of(index: int, d: int, n_classes: int = 2) -> Stump | ClassStump:
    """Candidate ``index`` of :func:`stump_candidates` on ``d`` features."""
    pairs, constants = stump_candidates(n_classes)
    if index < d * len(pairs):
        block, feature = divmod(int(index), d)
        hi, lo = pairs[block]
    else:
        feature, hi = -1, constants[int(index) - d * len(pairs)]
        lo = hi
    return Stump(int(feature), int(hi)) if n_classes == 2 else ClassStump(int(feature), int(hi), int(lo))


# ---------------------------------------------------------------------------- trees
@dataclass(frozen=True)
class Tree:
    """A binary decision tree on 0/1 features, stored as arrays.

    ``feature[k] = -1`` marks a leaf whose prediction is the label
    ``value[k]`` (:func:`vote_labels`: ``+1`` or ``-1`` for two classes, a
    class code for more); an internal node sends ``x[feature[k]] == 0`` to
    ``left[k]`` and ``x[feature[k]] == 1`` to ``right[k]`` (its value is 0).
    Node 0 is the root.
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
        """The labels (int16) of the leaves the rows of ``X`` reach."""
        return np.asarray(self.value, dtype=np.int16)[self.apply(X)]

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
            return str(class_of(self.value[node], classes))
        if f in path:
            nxt = self.right[node] if path[f] else self.left[node]
            return self.describe(names, classes, nxt, path)
        yes = self.describe(names, classes, self.right[node], {**path, f: 1})
        no = self.describe(names, classes, self.left[node], {**path, f: 0})
        if yes == no:
            return yes
        wrap = lambda s: s if " " not in s else f"({s})"  # noqa: E731
        return f"if {names[f]} then {wrap(yes)} else {wrap(no)}"
