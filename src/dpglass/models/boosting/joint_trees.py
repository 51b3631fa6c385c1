"""Joint trees: one exponential mechanism over every complete tree of depth 1 or 2 with its leaf labels.

The candidates are every complete tree of the depth on the d features with
every labelling of its leaves by the K classes' labels
(:func:`~dpglass.models.boosting.hypotheses.vote_labels`): ``d K**2`` trees
of depth 1, ``d**3 K**4`` of depth 2 (``4d`` and ``16 d**3`` for two
classes).  The utility is minus the tree's mu-weighted error (sensitivity 1,
Lemma S' of docs/privacy.md, whatever K), sampled exactly as a chain of
exponential mechanisms at one rate (:func:`sample_joint_tree`; docs/privacy.md,
"Joint trees").
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from dpglass.models.boosting.hypotheses import Tree, as_measure, class_grams, class_sums, vote_labels
from dpglass.privacy.mechanisms import ExponentialMechanism
from dpglass.privacy.mechanisms._common import GRID_SLACK

__all__ = ["JOINT_MAX_LABELLINGS", "JOINT_TREE_DEPTH", "TREE_ERROR_SENSITIVITY", "TREE_FLOOR", "dp_joint_tree",
           "joint_tree_rate", "leaf_labellings", "sample_joint_tree"]

#: Sensitivity of the mu-weighted error of any labelled tree (Lemma S', f = [h(x) != y]): 1, as for a 1-Rule.
TREE_ERROR_SENSITIVITY = 1.0
#: The whole-tree mechanism floors ``rate * (U(h) - max U)`` at ``-TREE_FLOOR``: no stage of its sampling
#: then has a gap at the samplers' cap (2**21), and the floored utility still has sensitivity 1.
TREE_FLOOR = 2.0**20
#: ``tree_nodes`` -> depth of the complete trees the joint learner selects among.
JOINT_TREE_DEPTH = {1: 1, 3: 2}
#: The most labellings of a tree's leaves (K**2 at depth 1, K**4 at depth 2) the joint learner takes: its last
#: stage draws among them, and its utilities hold d**2 K**2 numbers (depth 2: K <= 32).  Public: K and the depth.
JOINT_MAX_LABELLINGS = 2**20
#: Floored stage utilities (the floor binds only when rate * n > 2**20) are computed at once up to this many
#: numbers per root, else one child feature at a time (the same values up to float rounding; d <= 1024 for two
#: classes is computed at once, as before).
EXPLICIT_MAX_FLOATS = 2**24


def leaf_labellings(n_classes: int = 2) -> tuple:
    """Labellings of a branch's two leaves (``x_f = 0``, ``x_f = 1``), in candidate order (lexicographic in class
    order).

    Examples
    --------
    >>> leaf_labellings(2)
    ((-1, -1), (-1, 1), (1, -1), (1, 1))
    """
    return tuple(itertools.product(vote_labels(n_classes), repeat=2))


#: Labellings of a branch's two leaves for two classes.
_LABELLINGS = leaf_labellings(2)


def _leaf_errors(masses: np.ndarray) -> np.ndarray:
    """The weighted error of labelling a leaf with each class: the mass of the *other* classes.

    ``masses``: the leaf's masses by class on axis 0, the last class first
    (K-1 .. 0).  Returns the errors on axis 0 in class order (0 .. K-1), each
    the sum of the other classes' masses (prefix plus suffix sums; for two
    classes, the other class's mass itself).
    """
    m = np.asarray(masses, dtype=np.float64)[::-1]  # class order
    before = np.cumsum(m, axis=0)
    after = np.cumsum(m[::-1], axis=0)[::-1]
    zero = np.zeros_like(m[:1])
    return np.concatenate([zero, before[:-1]]) + np.concatenate([after[1:], zero])


def _branch_utilities(m0: np.ndarray, m1: np.ndarray) -> np.ndarray:
    """Minus the weighted error of each labelling of a branch's two leaves, in :func:`leaf_labellings` order.

    ``m0`` are the class masses (axis 0, the last class first) of the leaf
    ``x_f = 0``, ``m1`` of the leaf ``x_f = 1``.  Shape: their shape without
    axis 0, plus K**2.
    """
    e0, e1 = _leaf_errors(m0), _leaf_errors(m1)
    K = e0.shape[0]
    return np.stack([-(e0[a] + e1[b]) for a in range(K) for b in range(K)], axis=-1)


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
    the log of the stage's size.  ``n_classes`` K: each leaf takes one of K
    labels (K**2 labellings of a branch).
    """

    def __init__(self, F, y01, p, depth: int, rate: float, n_classes: int = 2):
        measure = as_measure(F, y01, p, n_classes)  # a fit's parts, or (FeatureMatrix, class codes, weights)
        self.depth, self.rate, self.d, self.n_classes = depth, float(rate), measure.n_features, int(n_classes)
        self.floor = -TREE_FLOOR / self.rate
        # the classes' masses, the last class first (two classes: positives, then negatives): in total (T), where
        # each feature is 1 (c, (d, K)), where two features are (G, (K, d, d)): statistics of the measure
        sums = measure.ask(class_sums if depth == 1 else class_grams)
        T, c = sums[0][::-1], sums[1][::-1].T
        if depth == 1:
            self.UB = _branch_utilities(np.maximum(T[:, None] - c.T, 0), c.T)  # (d, K**2)
            self.top = float(self.UB.max())
            return
        G = sums[2][::-1]  # (K, d, d)
        cj, ck = c.T[:, :, None], c.T[:, None, :]  # (K, d, 1) and (K, 1, d)
        pos = lambda m: np.maximum(m, 0.0)  # noqa: E731  (inclusion-exclusion can round below 0)
        left0, left1 = pos(T[:, None, None] - cj - ck + G), pos(ck - G)  # x_j = 0, x_k = 0 / 1
        right0, right1 = pos(cj - G), G  # x_j = 1, x_l = 0 / 1
        self.UB0 = _branch_utilities(left0, left1)  # (d, d, K**2): [j, k, labelling]
        self.UB1 = _branch_utilities(right0, right1)  # (d, d, K**2): [j, l, labelling]
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
        """Floored centred utilities of every tree under root j: shape (d, K**2, d, K**2) = [k, left, l, right]."""
        return self._floored(self.UB0[j][:, :, None, None] + self.UB1[j][None, None, :, :])

    def _by_child(self, j: int, k: int) -> np.ndarray:
        """Floored centred utilities of the trees under root j whose left child is k: (K**2, d, K**2) = [left, l,
        right]."""
        return self._floored(self.UB0[j, k][:, None, None] + self.UB1[j][None, :, :])

    def _at_once(self) -> bool:
        return self.d * self.d * self.UB0.shape[2] ** 2 <= EXPLICIT_MAX_FLOATS

    def root(self) -> np.ndarray:
        """Stage 1: the root feature j (d candidates)."""
        r = self.rate
        if self.depth == 1:
            return _lse(r * self._floored(self.UB), axis=1) / r
        if self.unfloored:
            return _lse(r * self.cL, axis=1) / r + _lse(r * self.cR, axis=1) / r + self.shift
        if self._at_once():
            return np.array([_lse(r * self._explicit(j)) / r for j in range(self.d)])
        return np.array([_lse(np.array([_lse(r * self._by_child(j, k)) for k in range(self.d)])) / r
                         for j in range(self.d)])

    def pairs(self, j: int) -> np.ndarray:
        """Stage 2 (depth 2): the children's features (k, l) under root j, flattened (d * d candidates)."""
        r = self.rate
        if self.unfloored:
            return (self.cL[j][:, None] + self.cR[j][None, :] + self.shift[j]).ravel()
        if self._at_once():
            return (_lse(r * self._explicit(j), axis=(1, 3)) / r).ravel()
        return (np.array([_lse(r * self._by_child(j, k), axis=(0, 2)) for k in range(self.d)]) / r).ravel()

    def labels(self, j: int, k: int = 0, l: int = 0) -> np.ndarray:
        """Last stage: the leaf labels (K**2 labellings at depth 1, K**4 at depth 2: left index * K**2 + right)."""
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
    labellings = leaf_labellings(util.n_classes)
    j = int(stage.select(util.root(), rng))
    if util.depth == 1:
        return (j,), labellings[int(stage.select(util.labels(j), rng))]
    k, l = divmod(int(stage.select(util.pairs(j), rng)), util.d)
    left, right = divmod(int(stage.select(util.labels(j, k, l), rng)), len(labellings))
    return (j, k, l), labellings[left] + labellings[right]


def dp_joint_tree(F, y01=None, p=None, *, steps: tuple, release, n_classes: int = 2):
    """A whole tree (split features and leaf labels) by one exponential mechanism on minus its weighted error.

    The candidates are all complete trees of depth 1 (``tree_nodes=1``) or 2
    (``tree_nodes=3``) on the d features with every labelling of their leaves
    by the ``n_classes`` labels (``d K**2`` or ``d**3 K**4``, a set fixed by
    the schema).  Utility: minus the mu-weighted error, sensitivity 1 as for
    DP-1R (Lemma S'), floored at ``TREE_FLOOR / rate`` below the best tree
    (still sensitivity 1).  The whole of the round's epsilon goes to this one
    selection (the round's one step): no split of the budget between splits
    and leaves, and no 8 of the Gini bound.  Sampled exactly as a chain of
    exponential mechanisms (:func:`sample_joint_tree`; the proof, including
    the grid rounding of each stage, is in docs/privacy.md, "Joint trees").
    The exact values handed to ``release`` are the utilities as a function of
    the depth and the chain's rate, which the step owns.  ``F`` is a measure,
    or a FeatureMatrix with the class codes ``y01`` and the weights ``p``.

    Returns
    -------
    tree : Tree
    predictions : ndarray or None
        The tree's labels on the entries (None for a fit's parts).
    """
    measure = as_measure(F, y01, p, n_classes)
    (step,) = steps
    (chosen,) = release(step, functools.partial(_TreeUtilities, measure, None, None, n_classes=n_classes))
    internal = (len(chosen) - 1) // 2  # 1 split feature and 2 labels, or 3 and 4
    tree = _joint_tree(JOINT_TREE_DEPTH[internal], tuple(int(f) for f in chosen[:internal]),
                       tuple(int(v) for v in chosen[internal:]))
    return tree, measure.predictions(tree)
