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
in distribution (:func:`_select_counts`).  Newton's sums are exact integers
(QUANTUM units times counts), so its table may also be the records
themselves, each with count 1 (:func:`~dpglass.models.gbdt.binned.binned_rows`):
the same sums, the same model.  The bin codes are compact
(:class:`~dpglass.models.gbdt.hist.Codes`) and read a chunk at a time.

Every release goes through the fit's plan (:mod:`dpglass.models.gbdt.budget`):
the learners compute each step's exact values and call
:meth:`~dpglass.privacy.ledger.PrivacyLedger.release`, which draws the step's
noise.  The proofs are in docs/privacy.md, section "DP gradient boosted trees".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from dpglass.aggregates.parts import TableParts
from dpglass.models.gbdt.hist import Codes
from dpglass.models.gbdt.releases import (
    QUANTUM, class_term_caps, dpboost_leaf_clip, dpboost_quantum, dpboost_units, project_l1, quantise,
    scored_classes,
)
from dpglass.models.gbdt.trees import BinnedTree, random_structure
from dpglass.privacy.splits import coin_counts

__all__ = ["Binned", "FitResult", "NewtonPart", "class_probabilities", "fit_dpboost", "fit_newton", "newton_terms"]


class Binned:
    """The binned pattern table the learners read, with the number of cuts of every feature.

    ``codes`` (a :class:`~dpglass.models.gbdt.hist.Codes`, built from a bin
    matrix (m, d) when one is passed) holds the bin rows (one per entry),
    ``labels`` (m,) their class codes and ``counts`` (m,) how many records share
    the entry.  Entries need not be distinct: every statistic is an exact sum
    over entries, so a table of the records themselves (counts 1) gives the same
    sums as their distinct pairs.
    """

    def __init__(self, B, n_cuts, labels, counts):
        self.n_cuts = np.asarray(n_cuts, dtype=np.int64)
        self.codes = B if isinstance(B, Codes) else Codes.from_bins(np.asarray(B, dtype=np.uint8), self.n_cuts)
        self.labels, self.counts = labels, counts

    @property
    def n_entries(self) -> int:
        return self.codes.n_rows

    @property
    def records(self) -> bool:
        """Whether the entries are the records themselves, each counted once (:func:`binned_rows`' table: its
        counts are one broadcast 1), so that a weight needs no product with its count."""
        counts = self.counts
        return getattr(counts, "strides", None) == (0,) and counts.size > 0 and counts[0] == 1

    @property
    def B(self) -> np.ndarray:
        """The whole bin matrix (m, d) uint8, decoded (small tables and tests; the learners read chunks)."""
        return self.codes.matrix()

    @property
    def offsets(self) -> np.ndarray:
        return self.codes.offsets

    def candidates(self) -> tuple[np.ndarray, np.ndarray]:
        f = np.repeat(np.arange(self.n_cuts.size, dtype=np.int64), self.n_cuts)
        return f, np.arange(f.size, dtype=np.int64) - np.repeat(np.cumsum(self.n_cuts) - self.n_cuts, self.n_cuts)


@dataclass
class FitResult:
    """The trees (round by round; in a round, one per scored class in order) and the intercepts, one per scored
    class (:func:`~dpglass.models.gbdt.releases.scored_classes`)."""

    trees: list
    init_score: np.ndarray
    intercept_hessian: np.ndarray | None = None  # newton: the intercept's released Hessian sums
    tree_lambda: float | None = None  # newton: the trees' lambda (GbdtPlan.tree_lambda)


def class_probabilities(F: np.ndarray) -> np.ndarray:
    """``(m, K)`` probabilities from the scores ``F`` of the scored classes: the softmax of the K scores, or for
    two classes (one score, ``F_1``; ``F_0 = 0``) its closed form, the logistic ``p_1 = expit(F_1)`` and
    ``p_0 = 1 - p_1`` (as the binary model always computed it)."""
    if F.shape[1] == 1:
        p1 = _scored_probabilities(F)[:, 0]
        return np.column_stack([1.0 - p1, p1])
    return _scored_probabilities(F)


def _scored_probabilities(F: np.ndarray) -> np.ndarray:
    """The probabilities of the scored classes (:func:`class_probabilities`' columns ``scored_classes(K)``): the
    softmax of the K scores, or for two classes ``p_1 = expit(F_1)`` alone."""
    if F.shape[1] == 1:
        return expit(F)
    Z = F - F.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def _scored(F: np.ndarray, labels: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The probabilities and ``1[y = k]`` of the scored classes at scores ``F``, one row per entry (float64)."""
    k = scored_classes(n_classes)
    return _scored_probabilities(F), (np.asarray(labels)[:, None] == k).astype(np.float64)


def newton_terms(F: np.ndarray, labels: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """One record's quantised gradient and Hessian terms of every entry, one column per scored class, in QUANTUM
    units.

    ``g_k = p_k - 1[y = k]`` clipped to [-1, 1] and ``h_k = p_k (1 - p_k)``
    clipped to [0, 1/4], rounded to units, each row projected to its l1 cap
    (:func:`~dpglass.models.gbdt.releases.class_term_caps`): per-record maps of
    the record and the released model.
    """
    P, Y = _scored(F, labels, n_classes)
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
    everyone = rows.size == binned.n_entries
    codes = binned.codes if everyone else binned.codes.take(rows)
    ws = weights if everyone else [[w[rows] for w in tree] for tree in weights]
    for level in range(depth):
        first, width = 2**level - 1, 2**level
        utilities = []
        for k in range(C):
            hists = codes.histograms(node[k] - first, width, ws[k])
            utilities.append(utility(*[_left_sums(h, binned, cand_f, cand_c) for h in hists]))
        chosen = choose(level, utilities[0] if C == 1 else np.concatenate(utilities))
        for k in range(C):
            for i, (f, c) in enumerate(chosen[k * width : (k + 1) * width]):
                feature[k, first + i], cut[k, first + i] = f, c
            # the rows' nodes one level down: the descent through the levels chosen so far
            node[k] = codes.leaf_index(feature[k], cut[k], level + 1) + 2 ** (level + 1) - 1
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
def _same_trees(a: list, b: list) -> bool:
    return all(x is y or (np.array_equal(x.feature, y.feature) and np.array_equal(x.cut, y.cut)
                          and np.array_equal(x.value, y.value)) for x, y in zip(a, b))


class NewtonPart:
    """One part of the binned table (a :class:`Binned`) and what a Newton fit asks of it.

    Every answer is a function of the part's entries and of the public model
    so far (the released intercept and trees): the gradient and Hessian sums
    over all records (the intercept), the per-(node, bin) gradient
    sums of a level, the per-leaf gradient and Hessian sums of a round's
    trees.  The sums are exact integers (QUANTUM units times counts), so the
    parts' sums add up to the whole table's whatever the cut into parts or the
    grouping of records into entries (:mod:`dpglass.aggregates.parts`).  In
    memory there is one part; on Dask the parts stay on the workers.

    The part keeps each entry's scores (float64, one per scored class) and one
    record's quantised gradient and Hessian terms (int32: at most 2**20 units),
    a cache brought to the model asked about before each answer: extended by
    the trees released since, or rebuilt when the model is not an extension (a
    part recomputed after its worker died, another fit), by the same float
    operations in the same order.  Every pass reads the codes a chunk at a
    time, so nothing else the size of the part is made.  It also keeps the
    round's trees' node of every entry at the last level asked about (one
    byte a tree: depth <= 8), so that each level of a round, its leaves and
    the scores after it are found one level down from the last
    (:meth:`advance`) instead of from the root.
    """

    def __init__(self, binned: Binned, n_classes: int, per_round: int):
        self.binned, self.K, self.C = binned, int(n_classes), int(per_round)
        self._init, self._trees, self._F, self._g, self._h = None, [], None, None, None
        self._at_zero = False  # whether the terms are those of scores 0 (the intercept's round)
        self._nodes, self._nodes_of = None, None  # (n, C) nodes at a level; (level, the splits above it per tree)

    def sync(self, init, trees: list) -> None:
        """Bring the terms to the model ``(init, trees)`` (``init`` None: scores 0, the intercept's round)."""
        n, C = self.binned.n_entries, self.C
        if self._g is None:
            self._g, self._h = np.empty((n, C), dtype=np.int32), np.empty((n, C), dtype=np.int32)
        if init is None:
            if not self._at_zero:
                for chunk in self.binned.codes.chunks():
                    self._put_terms(chunk.sel, np.zeros((chunk.n_rows, C)))
                self._at_zero = True
            return
        init = np.asarray(init)
        fresh = self._init is None or not np.array_equal(self._init, init) or len(trees) < len(self._trees) \
            or not _same_trees(self._trees, trees)
        done = 0 if fresh else len(self._trees)
        if not fresh and done == len(trees) and not self._at_zero:
            return
        if self._F is None:
            self._F = np.empty((n, C))
        cached = [i >= len(trees) - C and self._holds(i % C, trees[i].feature, trees[i].cut, trees[i].depth)
                  for i in range(done, len(trees))]  # the last round's leaves, when advance has found them
        for chunk in self.binned.codes.chunks():
            F = self._F[chunk.sel]
            if fresh:
                F[:] = 0.0
                F += init
            for i in range(done, len(trees)):  # a round's trees, one per scored class, in order
                tree = trees[i]
                leaves = self.nodes(chunk.sel, i % C) if cached[i - done] else \
                    chunk.leaf_index(tree.feature, tree.cut, tree.depth)
                F[:, i % C] += tree.value[leaves]
            self._put_terms(chunk.sel, F)
        self._init, self._trees, self._at_zero = init.copy(), list(trees), False

    def _holds(self, k: int, feature, cut, level: int) -> bool:
        """Whether the kept nodes are tree ``k``'s at ``level`` of splits ``feature``, ``cut``."""
        if self._nodes_of is None or self._nodes_of[0] != level:
            return False
        f, c = self._nodes_of[1][k]
        top = 2**level - 1
        return np.array_equal(f, feature[:top]) and np.array_equal(c, cut[:top])

    def advance(self, structure: list, level: int) -> None:
        """Keep each entry's node at ``level`` (>= 1) of the round's trees (``structure``: their split arrays, filled
        above ``level``): one level down from the kept nodes when they are those of the level above, else from
        the root."""
        if all(self._holds(k, f, c, level) for k, (f, c) in enumerate(structure)):
            return
        step = level >= 2 and all(self._holds(k, f, c, level - 1) for k, (f, c) in enumerate(structure))
        if self._nodes is None:
            self._nodes = np.zeros((self.binned.n_entries, self.C), dtype=np.uint8)  # nodes < 2**8
        for chunk in self.binned.codes.chunks():
            for k, (f, c) in enumerate(structure):
                self._nodes[chunk.sel, k] = chunk.descend(self.nodes(chunk.sel, k), f, c, level - 1) if step \
                    else chunk.leaf_index(f, c, level)
        top = 2**level - 1
        self._nodes_of = (level, [(f[:top].copy(), c[:top].copy()) for f, c in structure])

    def nodes(self, sel, k: int) -> np.ndarray:
        """Tree ``k``'s kept nodes of the rows ``sel`` (int64)."""
        return self._nodes[sel, k].astype(np.int64)

    def _put_terms(self, sel, F) -> None:
        g, h = newton_terms(F, self.binned.labels[sel], self.K)
        self._g[sel], self._h[sel] = g, h  # integers of at most 2**20 units: exact in int32

    def weights(self, sel, which: str = "gh"):
        """Counts times the terms of the rows ``sel`` as float64 (r, C): the gradients (and Hessians)."""
        if self.binned.records:  # every count 1: the terms themselves
            g = self._g[sel].astype(np.float64)
            return g if which == "g" else (g, self._h[sel].astype(np.float64))
        c = np.asarray(self.binned.counts[sel], dtype=np.float64)[:, None]  # exact: counts are below 2**53
        g = c * self._g[sel]
        return g if which == "g" else (g, c * self._h[sel])


def _part(binned: Binned, n_classes: int, per_round: int) -> NewtonPart:
    return NewtonPart(binned, n_classes, per_round)


def _intercept_sums(part: NewtonPart):
    part.sync(None, [])
    G, H = np.zeros(part.C), np.zeros(part.C)
    for chunk in part.binned.codes.chunks():
        g, h = part.weights(chunk.sel)
        G += g.sum(axis=0)
        H += h.sum(axis=0)
    return G, H


def _level_hists(part: NewtonPart, init, trees: list, structure: list, level: int) -> np.ndarray:
    """The gradient histograms of level ``level`` of the round's trees (``structure``: each tree's feature and cut
    arrays, filled above the level), one (nodes, bins) block a tree, stacked; below the root, of the left children
    only (nodes 0, 2, 4, ...: block ``i`` is node ``2 i``'s), whose siblings :func:`_children` finds by subtraction
    from the level above."""
    part.sync(init, trees)
    codes, C = part.binned.codes, len(structure)
    if level:
        part.advance(structure, level)
    accs = [codes.zeros(1, 2 ** max(level - 1, 0)) for _ in range(C)]
    for chunk in codes.chunks():
        g = part.weights(chunk.sel, "g")
        for k in range(C):
            if not level:
                codes.add_histograms(accs[k], chunk, np.zeros(chunk.n_rows, dtype=np.int64), g[:, k : k + 1])
                continue
            node = part.nodes(chunk.sel, k)
            left = (node & 1) == 0
            codes.add_histograms(accs[k], chunk, node[left] >> 1, g[left, k : k + 1], left)
    return np.stack([codes.finish(acc)[0] for acc in accs])


def _children(left: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """A level's histograms (C, 2 p, bins) from its left children's (C, p, bins) and the level above (C, p, bins):
    each right child is its parent minus its sibling, exactly (integer-valued sums below 2**53)."""
    out = np.empty((left.shape[0], 2 * left.shape[1], left.shape[2]))
    out[:, 0::2], out[:, 1::2] = left, parents - left
    return out


def _round_leaf_sums(part: NewtonPart, init, trees: list, structure: list, depth: int):
    part.sync(init, trees)
    part.advance(structure, depth)
    size = 2**depth
    G, H = np.zeros(len(structure) * size), np.zeros(len(structure) * size)
    for chunk in part.binned.codes.chunks():
        g, h = part.weights(chunk.sel)
        leaves = [part.nodes(chunk.sel, k) for k in range(len(structure))]
        G += _leaf_sums(leaves, g, size)
        H += _leaf_sums(leaves, h, size)
    return G, H


def _grow_on_parts(parts, init, trees: list, binned: Binned, depth: int, choose, rng) -> list:
    """:func:`_grow` for Newton rounds, asking the parts for each level's histograms (summed exactly)."""
    C = len(init)
    if choose is None:
        return [random_structure(binned.n_cuts, depth, rng) for _ in range(C)]
    cand_f, cand_c = binned.candidates()
    structure = [(np.zeros(2**depth - 1, dtype=np.int64), np.zeros(2**depth - 1, dtype=np.int64)) for _ in range(C)]
    hists = None  # the level above's, whose left children the parts send (_level_hists)
    for level in range(depth):
        first, width = 2**level - 1, 2**level
        got = parts.sum(_level_hists, init, trees, structure, level)
        hists = _children(got, hists) if level else got
        utilities = [_abs_gradient_utility(_left_sums(hists[k], binned, cand_f, cand_c)) for k in range(C)]
        chosen = choose(level, utilities[0] if C == 1 else np.concatenate(utilities))
        structure = [(f.copy(), c.copy()) for f, c in structure]  # the parts may keep the arrays they were sent
        for k in range(C):
            for i, (f, c) in enumerate(chosen[k * width : (k + 1) * width]):
                structure[k][0][first + i], structure[k][1][first + i] = f, c
    return structure


def fit_newton(parts, plan, ledger, rng, *, max_leaf, n_cuts=None) -> FitResult:
    """Newton boosting on all records (module docstring), releasing through ``plan`` (a
    :class:`~dpglass.models.gbdt.budget.GbdtPlan`) on ``ledger``, which follows it.  A round fits one tree per
    class (one tree for two classes).

    ``parts`` is the binned table: a :class:`Binned`, or a :class:`~dpglass.aggregates.parts.TableParts` of
    them (the workers' on Dask) with ``n_cuts`` its public layout; each part keeps a :class:`NewtonPart`
    where it is, and the learner asks them for exact sums, holding only the model and one level's
    histograms."""
    K = plan.public.n_classes
    depth, lr, lam, C = plan.public.depth, plan.public.learning_rate, plan.reg_lambda, plan.public.per_round
    if isinstance(parts, Binned):
        parts, n_cuts = TableParts.local(parts), parts.n_cuts
    parts = parts.map(_part, int(K), int(C))
    shape = Binned(np.zeros((0, len(n_cuts)), dtype=np.uint8), np.asarray(n_cuts), np.zeros(0, np.uint8),
                   np.zeros(0, np.int64))  # the public layout: candidates and offsets
    # the intercept is a round of one leaf holding every record, at scores 0
    G0, H0 = parts.sum(_intercept_sums)
    G = ledger.release(plan.intercept[0], G0, rng)
    H = ledger.release(plan.intercept[1], H0, rng)
    init = np.clip(-G / (np.maximum(H, 0.0) + lam), -max_leaf, max_leaf)
    intercept_hessian, lam = H, plan.tree_lambda(H)  # the trees' lambda: post-processing of H (gbdt.budget)
    trees = []
    for steps in plan.trees:
        structure = _grow_on_parts(parts, init, trees, shape, depth, _levels(ledger, steps.splits, rng), rng)
        Gs, Hs = parts.sum(_round_leaf_sums, init, trees, structure, depth)
        G = ledger.release(steps.leaves[0], Gs, rng)
        H = ledger.release(steps.leaves[1], Hs, rng)
        values = (lr * np.clip(-G / (np.maximum(H, 0.0) + lam), -max_leaf, max_leaf)).reshape(C, 2**depth)
        trees = trees + [BinnedTree(feature, cut, values[k]) for k, (feature, cut) in enumerate(structure)]
    return FitResult(trees, init, intercept_hessian, lam)


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
    n = binned.n_entries
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
            P, Y = _scored(F, binned.labels, pub.n_classes)
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
                leaf = binned.codes.take(rows).leaf_index(feature, cut, depth)
                G = np.bincount(leaf, (m_e * u[:, c])[rows], minlength=2**depth) * q
                m = np.bincount(leaf, m_e[rows], minlength=2**depth)
                values.append(np.clip(-G / (m + lam), -clip, clip))
            released = lr * ledger.release(steps.leaves[0], values[0] if C == 1 else np.concatenate(values), rng)
            for c, (feature, cut) in enumerate(structure):
                value = released[c * 2**depth : (c + 1) * 2**depth]
                trees.append(BinnedTree(feature, cut, value))
                F[:, c] += value[binned.codes.leaf_index(feature, cut, depth)]
    return FitResult(trees, np.zeros(C))
