"""Weak learners of smooth boosting: DP 1-Rules (stumps), joint trees and DP TopDown trees, for K >= 2 classes.

Each learner receives the smooth measure ``mu`` of the round (every entry in
[0, 1], unnormalised) as a *measure*: an object it asks for mu-weighted sums
by class (:mod:`dpglass.models.boosting.hypotheses`: ``class_sums``,
``class_grams``, ``leaf_sums``, ``leaf_totals``).  In a fit it is the parts'
:class:`~dpglass.models.boosting.smooth_measure.PartsMeasure` (integer counts
by margin level and class, summed over the parts, contracted with the
level's mu); called on arrays ``(F, y01, mu)`` it is their
:class:`~dpglass.models.boosting.hypotheses.EntryMeasure`.  A learner computes the exact values of its round's releases
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

from dpglass.models.boosting.exact_utilities import ExactUtilities
from dpglass.models.boosting.hypotheses import (  # noqa: F401  (re-exported: the learners' public names)
    ClassStump, FeatureMatrix, Stump, Tree, _stump_of, as_measure, class_codes, class_sums, leaf_sums, leaf_totals,
    n_stumps, stump_candidates, stump_from, vote_labels,
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
    "stump_errors",
    "stump_utilities",
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
def stump_errors(T: np.ndarray, M1: np.ndarray) -> np.ndarray:
    """Weighted errors of every 1-Rule (stump), in :func:`stump_candidates` order, from the class masses.

    ``T`` (K,) is each class's mass and ``M1`` (K, d) its mass where each
    feature is 1 (:func:`~dpglass.models.boosting.hypotheses.class_sums`).
    The stump voting ``a`` where ``x_j = 1`` and ``b`` where it is 0 errs on
    everything but class a's mass where x_j = 1 and class b's where it is 0:
    ``W - M1[a, j] - (T[b] - M1[b, j])``; the constant ``k`` on ``W - T[k]``
    (``W`` the total mass).  For two classes the candidates are ``x_j``,
    ``not x_j``, then the constants ``+1``, ``-1``.
    """
    T, M1 = np.asarray(T, dtype=np.float64), np.asarray(M1, dtype=np.float64)
    K = T.shape[0]
    total = float(T.sum())
    pairs, constants = stump_candidates(K)
    codes = lambda label: int(class_codes(label, K))  # noqa: E731
    blocks = [(total - M1[codes(hi)]) - (T[codes(lo)] - M1[codes(lo)]) for hi, lo in pairs]
    return np.concatenate(blocks + [[total - T[codes(c)] for c in constants]])


def literal_errors(F, y01=None, p=None, n_classes: int = 2) -> np.ndarray:
    """Weighted errors of every 1-Rule (stump), in :func:`stump_candidates` order (:func:`stump_errors`).

    ``F`` is a measure (a fit's :class:`~dpglass.models.boosting.smooth_measure.PartsMeasure`), or a
    :class:`FeatureMatrix` (or 0/1 array) with the class codes ``y01`` and the weights ``p`` of its rows.

    Examples
    --------
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=np.uint8)
    >>> y = np.array([1, 1, 0, 0], dtype=np.uint8)
    >>> literal_errors(FeatureMatrix(X), y, np.full(4, 0.25)).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.5, 0.5]
    """
    return stump_errors(*as_measure(F, y01, p, n_classes).ask(class_sums))


def stump_utilities(F, y01=None, p=None, n_classes: int = 2) -> ExactUtilities:
    """Minus the weighted error of every stump (:func:`literal_errors`' order), exactly: the integer errors of each
    margin level (:func:`stump_errors` of the level's integer counts) contracted with the levels' exact measure
    (:class:`~dpglass.models.boosting.exact_utilities.ExactUtilities`: nothing rounded yet).

    Examples
    --------
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=np.uint8)
    >>> y = np.array([1, 1, 0, 0], dtype=np.uint8)
    >>> u = stump_utilities(FeatureMatrix(X), y, np.full(4, 0.25))
    >>> [v / u.denominator for v in u.numerators]
    [0.0, -0.5, -1.0, -0.5, -0.5, -0.5]
    """
    mu, (T, M1) = as_measure(F, y01, p, n_classes).levels(class_sums)
    if not mu:  # no entries: every stump errs on nothing
        return ExactUtilities([0] * n_stumps(M1.shape[-1], n_classes), 1)
    return ExactUtilities.of_levels(mu, -np.stack([stump_errors(T[level], M1[level]) for level in range(len(mu))]))


def dp_one_rule(F, y01=None, mu=None, *, steps: tuple, release, n_classes: int = 2):
    """DP-1R (paper 002, Algorithm 3): the exponential mechanism on -weighted error.

    Parameters
    ----------
    F : a measure (:func:`~dpglass.models.boosting.hypotheses.as_measure`), or a FeatureMatrix with
        ``y01`` (class codes) and ``mu`` (the smooth measure of its rows, entries in [0, 1])
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
    predictions : ndarray or None
        The stump's labels (+1/-1 for two classes) on the entries (None for a fit's parts, which update their
        margins themselves from the released committee).

    Notes
    -----
    Utility ``-sum_i mu_i [h(x_i) != y_i]``; sensitivity 1 for add/remove
    neighbours (docs/privacy.md, Lemma S'), with n inside the measure only,
    whatever K.  Computed exactly (:func:`stump_utilities`) and rounded once
    by the step, which pays for that rounding (docs/privacy.md, "Exact
    utilities").  Selection probabilities are proportional to
    ``exp(epsilon * u / 2)``: in the paper's normalised units (divide by
    ``kappa n``) that is ``eta = epsilon kappa n / 2``, twice Theorem 7's
    ``eps kappa n / (4 tau)``.
    """
    measure = as_measure(F, y01, mu, n_classes)
    (step,) = steps
    (value,) = release(step, stump_utilities(measure, n_classes=n_classes))
    stump = stump_from(value)
    return stump, measure.predictions(stump)


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


def _last_first(sums) -> tuple[np.ndarray, np.ndarray]:
    """``(m, m1)`` of shapes (K,) and (K, d), the last class first, from :func:`class_sums`' ``(T, M1)``."""
    T, M1 = sums
    return np.asarray(T, dtype=np.float64)[::-1].copy(), np.asarray(M1, dtype=np.float64)[::-1].copy()


def _leaf_masses(F: FeatureMatrix, y01, p, in_leaf: np.ndarray, n_classes: int = 2):
    """Weighted masses of a leaf's classes (the last class first), in total and where each feature is 1.

    Returns ``(m, m1)`` of shapes (K,) and (K, d): :func:`class_sums` of the
    entries with weights ``p * in_leaf``.
    """
    w = np.asarray(p, dtype=np.float64) * in_leaf
    return _last_first(as_measure(F, y01, w, n_classes).ask(class_sums))


def _improvements(masses):
    """Improvement of the Gini bound for splitting a leaf on every feature."""
    m, m1 = masses
    m1 = np.clip(m1, 0.0, m[:, None])
    return _gini(m) - _gini(m[:, None] - m1) - _gini(m1)


def dp_top_down(F, y01=None, p=None, *, steps: tuple, release, n_classes: int = 2):
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

    ``F`` is a measure, or a FeatureMatrix with the class codes ``y01`` and
    the smooth measure ``p`` of its rows (entries in [0, 1], unnormalised);
    the leaves' masses are statistics of it (:func:`leaf_sums`,
    :func:`leaf_totals`), asked of the measure as the tree grows.
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
    predictions : ndarray or None
        The tree's labels (+1/-1 for two classes) on the entries (None for a fit's parts).
    """
    measure = as_measure(F, y01, p, n_classes)
    *splits, labels = steps
    feature, left, right, leaves = _grow(measure, splits, release, n_classes)
    totals = measure.ask(leaf_totals, tuple(feature), tuple(left), tuple(right))  # (K, nodes): each leaf's masses
    # a_lk - a_l0 for k = 1 .. K-1 (two classes: a_l - b_l), leaf by leaf
    margins = np.stack([totals[k][leaves] - totals[0][leaves] for k in range(1, n_classes)], axis=1).ravel()
    value = [0] * len(feature)
    for leaf, v in zip(leaves, release(labels, margins)):
        value[leaf] = int(v)
    tree = Tree(tuple(feature), tuple(left), tuple(right), tuple(value))
    return tree, measure.predictions(tree)


def _grow(measure, splits: tuple, release, n_classes: int = 2):
    """DP-TopDown's splits: one (leaf position, feature) pair released per step on the Gini-bound improvements.

    Returns the tree's arrays (feature, left, right) and the leaves, in the
    order the labels are released.  Split ``s`` creates nodes ``2s + 1``
    (``x_j = 0``) and ``2s + 2``.
    """
    n_nodes = len(splits)
    feature = [-1]
    left = [-1]
    right = [-1]
    leaves = [0]
    masses = {0: _last_first(measure.ask(class_sums))}
    improvements = {0: _improvements(masses[0])}
    for s, step in enumerate(splits):
        ((position, j),) = release(step, np.concatenate([improvements[leaf] for leaf in leaves]))
        leaf, j = leaves[position], int(j)
        lo, hi = len(feature), len(feature) + 1
        feature[leaf], left[leaf], right[leaf] = j, lo, hi
        feature += [-1, -1]
        left += [-1, -1]
        right += [-1, -1]
        leaves.remove(leaf)
        del improvements[leaf]
        parent = masses.pop(leaf)
        leaves += [lo, hi]
        if s + 1 < n_nodes:  # improvements of the new leaves are needed only if another split follows
            # masses are additive: the x_j = 0 child is the parent minus the x_j = 1 child
            masses[hi] = _last_first(measure.ask(leaf_sums, tuple(feature), tuple(left), tuple(right), hi))
            masses[lo] = tuple(u - v for u, v in zip(parent, masses[hi]))
            for new in (lo, hi):
                improvements[new] = _improvements(masses[new])
    return feature, left, right, leaves
