"""Weak learners of smooth boosting: DP 1-Rules (stumps), joint trees and DP TopDown trees, for K >= 2 classes.

Each learner receives the records, the labels (class codes 0..K-1) and the
smooth measure ``mu`` of the records produced by
:func:`dpglass.models.boosting.estimator.smooth_boost` (every entry in [0, 1],
unnormalised), computes the exact values of its round's releases
(utilities, leaf margins) and releases them through ``release(step,
exact)``: the steps are the round's in the family's release plan
(:mod:`dpglass.models.boosting.plan`, which holds each step's entry, its
mechanism and its public domain), and ``release`` is the fit's ledger's
(:meth:`~dpglass.privacy.ledger.PrivacyLedger.release`), which checks the
budget before it draws.  Working with the unnormalised measure keeps the
number of records out of every calibration: the sensitivities below are
constants, proven for add/remove neighbours with n private
(``docs/privacy.md``, section "Smooth boosting").

A hypothesis votes for one class at each record (K-valued votes; the model is
the plurality vote of its committee).  Labels: ``-1``/``+1`` for two classes
(``+1`` is ``classes_[1]``), the class codes for more
(:mod:`dpglass.models.boosting.hypotheses`).  Two classes are the K = 2 case
of every learner here: the same candidates, in the same order, with the same
float arithmetic as the binary learners had.
"""

from __future__ import annotations

import numpy as np

from dpglass.models.boosting.hypotheses import (  # noqa: F401  (re-exported: the learners' public names)
    ClassStump, FeatureMatrix, Stump, Tree, _stump_of, class_codes, n_stumps, stump_candidates, stump_from, vote_labels,
)
from dpglass.models.boosting.joint_trees import (  # noqa: F401  (re-exported)
    _LABELLINGS, JOINT_MAX_LABELLINGS, JOINT_TREE_DEPTH, TREE_ERROR_SENSITIVITY, TREE_FLOOR, _joint_tree, _stage_epsilon, _TreeUtilities,
    dp_joint_tree, joint_tree_rate, leaf_labellings, sample_joint_tree,
)

__all__ = [
    "Stump",
    "ClassStump",
    "Tree",
    "FeatureMatrix",
    "literal_errors",
    "dp_one_rule",
    "gini_bound",
    "dp_top_down",
    "dp_joint_tree",
    "sample_joint_tree",
    "joint_tree_rate",
    "leaf_margin_sensitivity",
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
#: l1 sensitivity of the vector of leaf margins (a_l - b_l)_l of two classes: ||mu - mu'||_1 <= 2 - kappa <= 2
#: (K classes: :func:`leaf_margin_sensitivity`).
LEAF_SENSITIVITY_FACTOR = 2.0


def leaf_margin_sensitivity(n_classes: int = 2) -> float:
    """l1 sensitivity of DP-TopDown's leaf margins ``(a_lk - a_l0)`` for ``k = 1 .. K-1``: ``2 (K - 1)``.

    A record of class 0 is in ``K - 1`` of them and any other record in one,
    so the vector moves by at most ``(K - 1) ||mu - mu'||_1 <= (K - 1)(2 - kappa)``
    (Lemma S'); for two classes the margins ``a_l - b_l``, sensitivity 2.
    """
    return LEAF_SENSITIVITY_FACTOR * (int(n_classes) - 1)


# ------------------------------------------------------------------------- DP-1R
def literal_errors(F: FeatureMatrix, y01: np.ndarray, p: np.ndarray, n_classes: int = 2) -> np.ndarray:
    """Weighted errors of every 1-Rule (stump), in :func:`stump_candidates` order: K - 1 matrix-vector products.

    Two classes: ``x_0 .. x_{d-1}``, ``not x_0 .. not x_{d-1}``, constant
    ``+1``, constant ``-1``.  With ``P1 = sum(p[y == 1])`` and ``W = sum(p)``:
    ``err(x_j) = P1 + (X.T @ (p * (1 - 2y)))_j``, ``err(not x_j) = W - err(x_j)``,
    ``err(+1) = W - P1``, ``err(-1) = P1``.  K classes (the stump votes ``hi``
    where ``x_j = 1`` and ``lo`` where it is 0; masses ``T_k`` of class k,
    ``R_k = W - T_0 - T_k``, ``D_k = X.T @ (p [y = 0] - p [y = k])``):
    ``err(j, k, 0) = (W - T_0) + D_k``, ``err(j, 0, k) = (W + R_k) - err(j, k, 0)``,
    ``err(j, a, b) = (W - T_b) + D_a - D_b``, ``err(constant k) = W - T_k``.
    For two classes these are the binary formulas, float for float.

    Examples
    --------
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=np.uint8)
    >>> y = np.array([1, 1, 0, 0], dtype=np.uint8)
    >>> literal_errors(FeatureMatrix(X), y, np.full(4, 0.25)).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.5, 0.5]
    """
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y01)
    K = int(n_classes)
    total = float(p.sum())
    mass, rest, diff = {}, {}, {}
    for k in range(1, K):
        signed = p.copy()  # +p on class 0, -p on class k, 0 elsewhere (without float temporaries of y)
        others = ((y != 0) & (y != k)) if K > 2 else None
        if others is not None:
            signed[others] = 0.0
        np.negative(signed, out=signed, where=y == k)
        rest[k] = float(p[others].sum()) if others is not None else 0.0  # R_k
        mass[k] = 0.5 * ((total - rest[k]) - float(signed.sum()))  # T_k
        diff[k] = F.tdot(signed)  # D_k
    not_zero = mass[1]  # W - T_0, the mass of every class but 0
    for k in range(2, K):
        not_zero = not_zero + mass[k]
    errors = {}
    for k in range(1, K):
        errors[(k, 0)] = not_zero + diff[k]
        errors[(0, k)] = (total + rest[k]) - errors[(k, 0)]
    for a in range(1, K):
        for b in range(1, K):
            if a != b:
                errors[(a, b)] = (total - mass[b]) + (diff[a] - diff[b])
    pairs, constants = stump_candidates(K)
    codes = lambda label: int(class_codes(label, K))  # noqa: E731
    blocks = [errors[(codes(hi), codes(lo))] for hi, lo in pairs]
    return np.concatenate(blocks + [[not_zero if codes(c) == 0 else total - mass[codes(c)] for c in constants]])


def dp_one_rule(F: FeatureMatrix, y01: np.ndarray, mu: np.ndarray, *, steps: tuple, release, n_classes: int = 2):
    """DP-1R (paper 002, Algorithm 3): the exponential mechanism on -weighted error.

    Parameters
    ----------
    F : FeatureMatrix
    y01 : ndarray of class codes (0/1 for two classes)
    mu : ndarray
        The smooth measure (entries in [0, 1]).
    steps : tuple of PlannedRelease
        The round's one step: the exponential mechanism over the
        ``d K (K - 1) + K`` stumps (``2d + 2`` for two classes) at the round's
        epsilon, sensitivity 1 (2 with paper 002's calibration,
        ``variant="paper"``: also proven, with half the utility).
    release : callable ``(step, exact) -> released``
        The fit's ledger's release (it draws the noise).
    n_classes : int, default=2

    Returns
    -------
    stump : Stump or ClassStump
    predictions : ndarray
        The stump's labels (+1/-1 for two classes) on the training records.

    Notes
    -----
    Utility ``-sum_i mu_i [h(x_i) != y_i]``; sensitivity 1 for add/remove
    neighbours (docs/privacy.md, Lemma S'), with n inside the measure only,
    whatever K.  Selection probabilities are proportional to
    ``exp(epsilon * u / 2)``: in the paper's normalised units (divide by
    ``kappa n``) that is ``eta = epsilon kappa n / 2``, twice Theorem 7's
    ``eps kappa n / (4 tau)``.
    """
    (step,) = steps
    (value,) = release(step, -literal_errors(F, y01, mu, n_classes))
    stump = stump_from(value)
    return stump, F.map_rows(stump.predict)


# ------------------------------------------------------------------- DP-TopDown
def _gini(masses) -> np.ndarray:
    """``w * G`` with ``G = 2 (1 - sum_k q_k**2)``, i.e. ``4 sum_{i<j} m_i m_j / w`` (0 when empty), over axis 0.

    ``masses``: the weighted masses of a leaf's classes on axis 0, the last
    class first.  Each pair's product is taken as ``(4 m_i) m_j`` after the
    sum of the classes before it, so two classes give ``4 a b / (a + b)``
    float for float.
    """
    m = np.asarray(masses, dtype=np.float64)
    s = m.sum(axis=0)
    before = np.concatenate([np.zeros_like(m[:1]), np.cumsum(m[:-1], axis=0)])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s > 0, np.sum(4.0 * before * m, axis=0) / np.where(s > 0, s, 1.0), 0.0)


def gini_bound(a, b):
    """``w * G(q)`` with ``G(q) = 4 q (1 - q)``: ``4 a b / (a + b)`` (0 when empty): the two-class case of the
    K-class bound ``w * 2 (1 - sum_k q_k**2)``.

    ``a``, ``b`` are the weighted masses of the positive and negative records
    at a leaf.

    Examples
    --------
    >>> float(gini_bound(0.25, 0.25)), float(gini_bound(0.5, 0.0)), float(gini_bound(0.0, 0.0))
    (0.5, 0.0, 0.0)
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return _gini(np.stack([a, b]))


def _leaf_masses(F: FeatureMatrix, y01, p, in_leaf: np.ndarray, n_classes: int = 2):
    """Weighted masses of a leaf's classes (the last class first), in total and where each feature is 1.

    Returns ``(m, m1)`` of shapes (K,) and (K, d).  Class 0's masses are the
    leaf's total minus the others' (for two classes: the negatives' masses
    are the total minus the positives', as the binary learner computed them).
    """
    w = p * in_leaf
    total = F.tdot(w)
    parts = [w * (y01 == k) for k in range(n_classes - 1, 0, -1)]
    sums = [part.sum() for part in parts]
    ones = [F.tdot(part) for part in parts]
    known, known1 = sums[0], ones[0]
    for v, v1 in zip(sums[1:], ones[1:]):
        known, known1 = known + v, known1 + v1
    m = np.array([float(v) for v in sums] + [float(w.sum() - known)])
    return m, np.stack(ones + [total - known1])


def _improvements(masses):
    """Improvement of the Gini bound for splitting a leaf on every feature."""
    m, m1 = masses
    m1 = np.clip(m1, 0.0, m[:, None])
    return _gini(m) - _gini(m[:, None] - m1) - _gini(m1)


def dp_top_down(F: FeatureMatrix, y01: np.ndarray, p: np.ndarray, *, steps: tuple, release, n_classes: int = 2):
    """DP-TopDown (paper 002, Algorithm 2) on a smooth weighting, for K >= 2 classes.

    Grows a tree to ``n_nodes = len(steps) - 1`` internal nodes: each step
    selects a pair (leaf, feature) among all current leaves times all features
    with the exponential mechanism on the improvement of the Gini bound
    ``sum_l w_l G(q_l)`` (``G = 2 (1 - sum_k q_k**2)``, ``4 q (1 - q)`` for two
    classes); then labels every leaf from its weighted margins
    ``a_lk - a_l0`` (``k = 1 .. K-1``) plus Laplace noise: the class with the
    largest noisy margin, class 0 when none is positive (for two classes, the
    sign of ``a_l - b_l`` plus noise).

    Budget (the round's steps): half of the round's epsilon for the
    ``n_nodes`` selections (basic composition, ``epsilon / (2 n_nodes)``
    each), half for the leaf labels, as in the paper's Theorem 9.

    ``p`` is the smooth measure ``mu`` (entries in [0, 1], unnormalised).
    Sensitivities (proofs in docs/privacy.md, n private): a split's
    improvement changes by at most 8 whatever K (every partial derivative of
    the improvement in the masses lies in ``[-4, 4]`` and
    ``||mu - mu'||_1 <= 2``; the paper's halved constant does not hold,
    ``variant="paper"`` uses it and is a paper-claim); the vector of leaf
    margins has l1 sensitivity ``2 (K - 1)`` (:func:`leaf_margin_sensitivity`),
    so one grid Laplace draw per margin labels all leaves at once (the leaves
    partition the records, but the measure couples them, so parallel
    composition alone would not do).

    Returns
    -------
    tree : Tree
    predictions : ndarray
        The tree's labels (+1/-1 for two classes) on the training records.
    """
    *splits, labels = steps
    feature, left, right, leaf_of, leaves = _grow(F, y01, p, splits, release, n_classes)
    # +1 on class k, -1 on class 0 (two classes: 2y - 1, the weights of the binary margins a_l - b_l)
    signs = [(y01 == k).astype(np.float64) - (y01 == 0).astype(np.float64) for k in range(1, n_classes)]
    margins = np.stack([np.bincount(leaf_of, weights=p * sign, minlength=len(feature))[leaves] for sign in signs],
                       axis=1).ravel()  # leaf by leaf, classes 1 .. K-1
    value = [0] * len(feature)
    for leaf, v in zip(leaves, release(labels, margins)):
        value[leaf] = int(v)
    tree = Tree(tuple(feature), tuple(left), tuple(right), tuple(value))
    return tree, np.asarray(value, dtype=np.int16)[leaf_of]


def _grow(F: FeatureMatrix, y01, p, splits: tuple, release, n_classes: int = 2):
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
    masses = {0: _leaf_masses(F, y01, p, np.ones(n), n_classes)}
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
            masses[hi] = _leaf_masses(F, y01, p, (leaf_of == hi).astype(np.float64), n_classes)
            masses[lo] = tuple(u - v for u, v in zip(parent, masses[hi]))
            for new in (lo, hi):
                improvements[new] = _improvements(masses[new])
    return feature, left, right, leaf_of, leaves


