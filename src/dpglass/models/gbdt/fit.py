"""The private computations of :class:`~dpglass.models.gbdt.estimator.DPGradientBoostingClassifier`.

Two learners on the same binned data (``gbdt.trees``) and releases
(``gbdt.releases``):

* :func:`fit_newton` (``variant="newton"``, the default): trees one after
  another on all records; each level's split by the exponential mechanism
  over (feature, cut) with the utility ``|G_left| + |G_right|`` (sensitivity
  1), or data-independent random splits; leaf values by a Newton step from
  noisy per-leaf gradient and Hessian sums.
* :func:`fit_dpboost` (``variant="dpboost"``): DPBoost (Li et al., AAAI 2020):
  ensembles one after another; inside an ensemble each tree learns on its own
  disjoint subset of the records (a random public partition, or a per-record
  gradient-based pre-selection from the records not yet used); split by the
  exponential mechanism on the XGBoost gain with unit Hessians (sensitivity
  ``3 g*^2``), leaves ``-sum g / (m + lambda)`` geometrically clipped, plus
  Laplace noise.

Both learn from the **binned pattern table** (:mod:`dpglass.models.gbdt.binned`):
the distinct (bin-code row, label) pairs with their record counts.  Records
of one entry share their prediction, gradient, Hessian, node and leaf, so
every sum is taken over the entries with the counts as integer weights (a
different order of summation of the same per-record terms); DPBoost's
per-record subset draws become per-entry binomial draws of the counts, equal
in distribution (:func:`_select_counts`).

Every release goes through the fit's plan (:mod:`dpglass.models.gbdt.budget`):
the learners compute each step's exact values and call
:meth:`~dpglass.privacy.ledger.PrivacyLedger.release`, which draws the step's
noise.  The proofs are in docs/privacy.md, section "DP gradient boosted trees".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit

from dpglass.models.gbdt.hist import Cells
from dpglass.models.gbdt.releases import (
    QUANTUM, class_term_caps, dpboost_leaf_clip, dpboost_quantum, dpboost_units, project_l1, quantise,
    scored_classes,
)
from dpglass.models.gbdt.trees import BinnedTree, leaf_index, random_structure
from dpglass.privacy.splits import coin_counts

__all__ = ["Binned", "FitResult", "class_probabilities", "fit_dpboost", "fit_newton", "newton_terms"]


@dataclass(frozen=True)
class Binned:
    """The binned pattern table the learners read, with the number of cuts of every feature.

    ``B`` (m, d) holds the distinct bin rows (one per entry), ``labels`` (m,)
    their 0/1 labels and ``counts`` (m,) how many records share the entry.
    """

    B: np.ndarray
    n_cuts: np.ndarray
    labels: np.ndarray
    counts: np.ndarray

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.n_cuts + 1)])

    @cached_property
    def cells(self) -> Cells:
        """The non-zero bins of ``B`` as global codes, for the level histograms (``gbdt.hist``)."""
        return Cells.from_bins(self.B, self.offsets)

    def candidates(self) -> tuple[np.ndarray, np.ndarray]:
        f = np.concatenate([np.full(c, j) for j, c in enumerate(self.n_cuts)]).astype(np.int64)
        c = np.concatenate([np.arange(c) for c in self.n_cuts]).astype(np.int64)
        return f, c


@dataclass
class FitResult:
    """The trees (round by round; in a round, one per scored class in order) and the intercepts, one per scored
    class (:func:`~dpglass.models.gbdt.releases.scored_classes`)."""

    trees: list
    init_score: np.ndarray


def class_probabilities(F: np.ndarray) -> np.ndarray:
    """``(m, K)`` probabilities from the scores ``F`` of the scored classes: the softmax of the K scores, or for
    two classes (one score, ``F_1``; ``F_0 = 0``) its closed form, the logistic ``p_1 = expit(F_1)`` and
    ``p_0 = 1 - p_1`` (as the binary model always computed it)."""
    if F.shape[1] == 1:
        p1 = expit(F[:, 0])
        return np.column_stack([1.0 - p1, p1])
    Z = F - F.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def _scored(P: np.ndarray, labels: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The probabilities and ``1[y = k]`` of the scored classes, one row per entry (float64)."""
    k = scored_classes(n_classes)
    return P[:, k], (np.asarray(labels)[:, None] == k).astype(np.float64)


def newton_terms(F: np.ndarray, labels: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """One record's quantised gradient and Hessian terms of every entry, one column per scored class, in QUANTUM
    units.

    ``g_k = p_k - 1[y = k]`` clipped to [-1, 1] and ``h_k = p_k (1 - p_k)``
    clipped to [0, 1/4], rounded to units, each row projected to its l1 cap
    (:func:`~dpglass.models.gbdt.releases.class_term_caps`): per-record maps of
    the record and the released model.
    """
    P, Y = _scored(class_probabilities(F), labels, n_classes)
    g_cap, h_cap = class_term_caps(n_classes)
    g = project_l1(quantise(np.clip(P - Y, -1.0, 1.0)), g_cap)
    h = project_l1(quantise(np.clip(P * (1.0 - P), 0.0, 0.25)), h_cap)
    return g, h


def _left_sums(hist: np.ndarray, binned: Binned, cand_f, cand_c) -> tuple[np.ndarray, np.ndarray]:
    """``(left, total)`` per node and candidate: sums over bins ``<= cut`` of the feature, and over all.

    ``hist`` holds integer-valued sums (quantised units, counts).  The prefix
    sums run across the bins of *every* feature, so they reach d times a node's
    total: they are taken in int64 (exact below 2**63), and only the
    differences, one feature's sums (below 2**53), go back to float.
    """
    offs = binned.offsets
    h = hist.astype(np.int64)
    cs = np.concatenate([np.zeros((h.shape[0], 1), dtype=np.int64), np.cumsum(h, axis=1)], axis=1)
    left = (cs[:, offs[cand_f] + cand_c + 1] - cs[:, offs[cand_f]]).astype(np.float64)
    total = (cs[:, offs[1]] - cs[:, 0]).astype(np.float64)
    return left, np.broadcast_to(total[:, None], left.shape)


def _grow(binned: Binned, rows, depth, utility, choose, rng, weights) -> list:
    """Split levels of a round's trees, ``[(feature, cut)]``, one tree per entry of ``weights`` (each a list of
    weight vectors): random (``choose`` None), or ``choose(level, utilities)``: the level's released (feature,
    cut) per node of every tree (one row of utilities per node, tree after tree; a tree's nodes hold disjoint
    records)."""
    if choose is None:
        return [random_structure(binned.n_cuts, depth, rng) for _ in weights]
    cand_f, cand_c = binned.candidates()
    C = len(weights)
    feature = np.zeros((C, 2**depth - 1), dtype=np.int64)
    cut = np.zeros((C, 2**depth - 1), dtype=np.int64)
    node = np.zeros((C, rows.size), dtype=np.int64)
    everyone = rows.size == binned.B.shape[0]
    cells = binned.cells if everyone else binned.cells.take(rows)
    ws = weights if everyone else [[w[rows] for w in tree] for tree in weights]
    for level in range(depth):
        first, width = 2**level - 1, 2**level
        utilities = []
        for k in range(C):
            hists = cells.histograms(node[k] - first, width, ws[k])
            utilities.append(utility(*[_left_sums(h, binned, cand_f, cand_c) for h in hists]))
        chosen = choose(level, utilities[0] if C == 1 else np.concatenate(utilities))
        for k in range(C):
            for i, (f, c) in enumerate(chosen[k * width : (k + 1) * width]):
                feature[k, first + i], cut[k, first + i] = f, c
            right = binned.B[rows, feature[k, node[k]]] > cut[k, node[k]]
            node[k] = 2 * node[k] + 1 + right
    return [(feature[k], cut[k]) for k in range(C)]


def _levels(ledger, steps, rng):
    """``choose`` for :func:`_grow`: level ``l`` is released by the plan's step ``steps[l]`` (None: random)."""
    if not steps:
        return None
    return lambda level, utilities: ledger.release(steps[level], utilities, rng)


def _abs_gradient_utility(gsums):
    """``|G_L| + |G_R|`` from exact sums in :data:`QUANTUM` units, in gradient units (exact: a power of two)."""
    left, total = gsums
    return (np.abs(left) + np.abs(total - left)) * QUANTUM


def _leaf_sums(leaves: list, weights: np.ndarray, size: int) -> np.ndarray:
    """Per-leaf sums of each tree's weights (column k of ``weights`` for tree k), the trees one after another."""
    return np.concatenate([np.bincount(leaf, weights[:, k], minlength=size) for k, leaf in enumerate(leaves)])


# ---------------------------------------------------------------- newton
def fit_newton(binned: Binned, plan, ledger, rng, *, max_leaf) -> FitResult:
    """Newton boosting on all records (module docstring), releasing through ``plan`` (a
    :class:`~dpglass.models.gbdt.budget.GbdtPlan`) on ``ledger``, which follows it.  A round fits one tree per
    class (one tree for two classes)."""
    n = binned.B.shape[0]  # entries of the table
    K = plan.public.n_classes
    depth, lr, lam, C = plan.public.depth, plan.public.learning_rate, plan.reg_lambda, plan.public.per_round
    rows = np.arange(n)
    F = np.zeros((n, C))
    c = np.asarray(binned.counts, dtype=np.float64)[:, None]  # exact: counts are below 2**53
    # g, h per entry of the table: the sums over its records (count times the record's quantised terms, so
    # every sum below is exact); the intercept is a round of one leaf holding every record, at scores 0
    g, h = newton_terms(F, binned.labels, K)
    everyone = [np.zeros(n, dtype=np.int64)] * C
    G = ledger.release(plan.intercept[0], _leaf_sums(everyone, c * g, 1), rng)
    H = ledger.release(plan.intercept[1], _leaf_sums(everyone, c * h, 1), rng)
    init = np.clip(-G / (np.maximum(H, 0.0) + lam), -max_leaf, max_leaf)
    F += init
    trees = []
    for steps in plan.trees:
        g, h = newton_terms(F, binned.labels, K)
        g, h = c * g, c * h  # an entry's sums: exact integers in QUANTUM units
        structure = _grow(binned, rows, depth, _abs_gradient_utility, _levels(ledger, steps.splits, rng), rng,
                          [[g[:, k]] for k in range(C)])
        leaves = [leaf_index(binned.B, feature, cut, depth) for feature, cut in structure]
        G = ledger.release(steps.leaves[0], _leaf_sums(leaves, g, 2**depth), rng)
        H = ledger.release(steps.leaves[1], _leaf_sums(leaves, h, 2**depth), rng)
        values = (lr * np.clip(-G / (np.maximum(H, 0.0) + lam), -max_leaf, max_leaf)).reshape(C, 2**depth)
        for k, ((feature, cut), leaf) in enumerate(zip(structure, leaves)):
            trees.append(BinnedTree(feature, cut, values[k]))
            F[:, k] += values[k][leaf]
    return FitResult(trees, init)


# --------------------------------------------------------------- dpboost
def _dpboost_gain(gsums, csums, lam, quantum=1.0):
    """``G_L^2/(m_L + lambda) + G_R^2/(m_R + lambda)``; the gradient sums in units of ``quantum``."""
    (gl, gt), (cl, ct) = gsums, csums
    gl, gr = gl * quantum, (gt - gl) * quantum  # exact: integers times a power of two
    return gl**2 / (cl + lam) + gr**2 / (ct - cl + lam)


def _select_counts(unused: np.ndarray, g: np.ndarray, k: int, K: int, mode: str, rng) -> np.ndarray:
    """Round ``k`` (0-based) of ``K`` in an ensemble: how many of each entry's unused records it takes.

    Per record, the rule is: ``random``, a uniform part in 0..K-1 drawn
    before the ensemble; ``gradient``, an unused record is taken with
    probability ``min(1, 2|g_i| / (K - k))`` from its own coin (the last round
    takes all unused records), ``|g_i|`` its largest class gradient.  The
    records of one entry are alike (same
    bins, label, gradient), so the learner sees only how many of them each
    round takes.  Given the past, the per-record rule takes each of an entry's
    ``u`` unused records independently with one probability ``p`` (random:
    ``p = 1/(K - k)``, the chance that a record not in parts 0..k-1 is in
    part k): the number taken is Binomial(u, p), independently across
    entries, and it is drawn so here.  The rounds' inputs, hence the model,
    have the distribution the per-record draws give them (docs/privacy.md).
    """
    if k == K - 1:
        return unused.copy()
    p = np.full(unused.shape, 1.0 / (K - k)) if mode == "random" else np.minimum(1.0, 2.0 * np.abs(g) / (K - k))
    return coin_counts(unused, p, rng)


def fit_dpboost(binned: Binned, plan, ledger, rng) -> FitResult:
    """DPBoost (module docstring), releasing through ``plan`` on ``ledger``: each ensemble spends ``plan.x``,
    half on splits, half on leaves; its rounds after the first release their steps' parts.  A round fits one
    tree per class (one for two classes), on the same records."""
    pub = plan.public
    n = binned.B.shape[0]  # entries of the table
    C = pub.per_round
    F = np.zeros((n, C))
    K, depth, lr, lam = pub.trees_per_ensemble, pub.depth, pub.learning_rate, plan.reg_lambda
    gstar = float(pub.gradient_clip)
    q = dpboost_quantum(gstar)  # gradients in units of q: every sum below is exact (docs/privacy.md)
    trees = []
    for e in range(pub.n_ensembles):
        unused = np.asarray(binned.counts, dtype=np.int64).copy()
        for k in range(min(K, pub.n_trees - e * K)):
            steps = plan.trees[e * K + k]
            P, Y = _scored(class_probabilities(F), binned.labels, pub.n_classes)
            u = dpboost_units(P - Y, gstar, pub.n_classes)
            taken = _select_counts(unused, np.abs(u).max(axis=1) * q, k, K, pub.subset_selection, rng)
            unused -= taken
            rows = np.flatnonzero(taken)
            m_e = taken.astype(np.float64)
            structure = _grow(binned, rows, depth, lambda gs, cs: _dpboost_gain(gs, cs, lam, q),
                              _levels(ledger, steps.splits, rng), rng, [[m_e * u[:, c], m_e] for c in range(C)])
            clip = dpboost_leaf_clip(gstar, lam, lr, k)[0]  # geometric (round k of the ensemble)
            values = []
            for c, (feature, cut) in enumerate(structure):
                leaf = leaf_index(binned.B[rows], feature, cut, depth)
                G = np.bincount(leaf, (m_e * u[:, c])[rows], minlength=2**depth) * q
                m = np.bincount(leaf, m_e[rows], minlength=2**depth)
                values.append(np.clip(-G / (m + lam), -clip, clip))
            released = lr * ledger.release(steps.leaves[0], values[0] if C == 1 else np.concatenate(values), rng)
            for c, (feature, cut) in enumerate(structure):
                value = released[c * 2**depth : (c + 1) * 2**depth]
                trees.append(BinnedTree(feature, cut, value))
                F[:, c] += value[leaf_index(binned.B, feature, cut, depth)]
    return FitResult(trees, np.zeros(C))
