"""The private computations of :class:`~dpglass.models.gbdt.DPGradientBoostingClassifier`.

Two learners on the same binned data (``_gbdt_trees``) and releases
(``_gbdt_releases``):

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

Both learn from the **binned pattern table** (:mod:`dpglass.aggregates.binned`):
the distinct (bin-code row, label) pairs with their record counts.  Records
of one entry share their prediction, gradient, Hessian, node and leaf, so
every sum is taken over the entries with the counts as integer weights (a
different order of summation of the same per-record terms); DPBoost's
per-record subset draws become per-entry binomial draws of the counts, equal
in distribution (:func:`_select_counts`).

The proofs are in docs/privacy.md, section "DP gradient boosted trees".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit

from dpglass.models._gbdt_budget import leaf_epsilons
from dpglass.models._gbdt_hist import Cells
from dpglass.models._gbdt_releases import (
    QUANTUM, dpboost_gain_sensitivity, dpboost_leaf_clip, dpboost_quantum, dpboost_units, quantise,
    release_leaf_sums, release_leaf_values,
)
from dpglass.models._gbdt_trees import BinnedTree, leaf_index, random_structure
from dpglass.privacy.mechanisms import ExponentialMechanism
from dpglass.privacy.splits import coin_counts

__all__ = ["Binned", "FitResult", "fit_dpboost", "fit_newton"]


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
        """The non-zero bins of ``B`` as global codes, for the level histograms (``_gbdt_hist``)."""
        return Cells.from_bins(self.B, self.offsets)

    def candidates(self) -> tuple[np.ndarray, np.ndarray]:
        f = np.concatenate([np.full(c, j) for j, c in enumerate(self.n_cuts)]).astype(np.int64)
        c = np.concatenate([np.arange(c) for c in self.n_cuts]).astype(np.int64)
        return f, c


@dataclass
class FitResult:
    trees: list
    entries: list
    init_score: float = 0.0


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


def _grow(binned: Binned, rows, depth, utility, mech, rng, weights):
    """Split levels of one tree: random (``mech`` None), or by ``mech`` per node (parallel within a level)."""
    if mech is None:
        return random_structure(binned.n_cuts, depth, rng)
    cand_f, cand_c = binned.candidates()
    feature = np.zeros(2**depth - 1, dtype=np.int64)
    cut = np.zeros(2**depth - 1, dtype=np.int64)
    node = np.zeros(rows.size, dtype=np.int64)
    everyone = rows.size == binned.B.shape[0]
    cells = binned.cells if everyone else binned.cells.take(rows)
    ws = weights if everyone else [w[rows] for w in weights]
    for level in range(depth):
        first, width = 2**level - 1, 2**level
        hists = cells.histograms(node - first, width, ws)
        sums = [_left_sums(h, binned, cand_f, cand_c) for h in hists]
        u = utility(*sums)
        for i in range(width):
            k = mech.select(u[i], rng)
            feature[first + i], cut[first + i] = cand_f[k], cand_c[k]
        right = binned.B[rows, feature[node]] > cut[node]
        node = 2 * node + 1 + right
    return feature, cut


def _abs_gradient_utility(gsums):
    """``|G_L| + |G_R|`` from exact sums in :data:`QUANTUM` units, in gradient units (exact: a power of two)."""
    left, total = gsums
    return (np.abs(left) + np.abs(total - left)) * QUANTUM


# ---------------------------------------------------------------- newton
def _newton_leaves(leaf, n_leaves, g, h, eps_g, eps_h, rng, name, how, leaf_delta):
    """Noisy per-leaf gradient and Hessian sums, with their two ledger entries (``leaf_delta > 0``: Gaussian).

    ``g``, ``h``: per entry of the table, the sums over its records (count times the record's
    :func:`quantise`'d term, so every sum below is exact).
    """
    G, e1 = release_leaf_sums(np.bincount(leaf, g, minlength=n_leaves), epsilon=eps_g, sensitivity=1.0,
                              rng=rng, release=f"{name}: leaf gradient sums", delta=leaf_delta,
                              note=f"gradients p - y in [-1, 1]; one record in one leaf; {how}")
    H, e2 = release_leaf_sums(np.bincount(leaf, h, minlength=n_leaves), epsilon=eps_h, sensitivity=0.25,
                              rng=rng, release=f"{name}: leaf Hessian sums", delta=leaf_delta,
                              note=f"Hessians p(1 - p) in [0, 1/4]; one record in one leaf; {how}")
    return G, H, [e1, e2]


def fit_newton(binned: Binned, *, tree_eps, n_trees, depth, split, split_share, hessian_share,
               learning_rate, reg_lambda, max_leaf, rng, how, leaf_delta=0.0) -> FitResult:
    """Newton boosting on all records: see the module docstring; ``tree_eps`` is each tree's budget.

    ``leaf_delta > 0``: the leaf sums get discrete Gaussian noise of the same zCDP, their pairs stated at it.
    """
    n = binned.B.shape[0]  # entries of the table
    rows = np.arange(n)
    F = np.zeros(n)
    y = np.asarray(binned.labels, dtype=np.float64)
    c = np.asarray(binned.counts, dtype=np.float64)  # exact: counts are below 2**53
    sel = split_share if split == "exponential" else 0.0
    eps_g, eps_h = leaf_epsilons(tree_eps, split, split_share, hessian_share)
    mech = ExponentialMechanism(tree_eps * sel / depth, 1.0) if sel else None
    p = np.full(n, 0.5)
    G, H, entries = _newton_leaves(np.zeros(n, dtype=np.int64), 1, c * quantise(p - y), c * quantise(p * (1 - p)),
                                   tree_eps * (1 - hessian_share), tree_eps * hessian_share, rng, "intercept", how,
                                   leaf_delta)
    init = float(np.clip(-G[0] / (max(H[0], 0.0) + reg_lambda), -max_leaf, max_leaf))
    F += init
    trees = []
    for t in range(1, n_trees + 1):
        p = expit(F)
        # an entry's sums: its count times its records' quantised term (exact integers in QUANTUM units)
        g = c * quantise(np.clip(p - y, -1.0, 1.0))
        h = c * quantise(np.clip(p * (1.0 - p), 0.0, 0.25))
        feature, cut = _grow(binned, rows, depth, _abs_gradient_utility, mech, rng, [g])
        if mech is not None:
            entries += [dict(release=f"tree {t}: level {lev + 1} splits", mechanism="exponential",
                             epsilon=mech.epsilon, sensitivity=1.0, guarantee="proven", curve=mech.curve,
                             note=f"one (feature, cut) per node, utility |G_left|+|G_right|; the level's nodes "
                                  f"hold disjoint records (parallel); {how}") for lev in range(depth)]
        leaf = leaf_index(binned.B, feature, cut, depth)
        G, H, pair = _newton_leaves(leaf, 2**depth, g, h, eps_g, eps_h, rng, f"tree {t}", how, leaf_delta)
        entries += pair
        value = learning_rate * np.clip(-G / (np.maximum(H, 0.0) + reg_lambda), -max_leaf, max_leaf)
        trees.append(BinnedTree(feature, cut, value))
        F += value[leaf]
    return FitResult(trees, entries, init)


# --------------------------------------------------------------- dpboost
def _dpboost_gain(gsums, csums, lam, quantum=1.0):
    """``G_L^2/(m_L + lambda) + G_R^2/(m_R + lambda)``; the gradient sums in units of ``quantum``."""
    (gl, gt), (cl, ct) = gsums, csums
    gl, gr = gl * quantum, (gt - gl) * quantum  # exact: integers times a power of two
    return gl**2 / (cl + lam) + gr**2 / (ct - cl + lam)


def _select_counts(unused: np.ndarray, g: np.ndarray, k: int, K: int, mode: str, rng) -> np.ndarray:
    """Tree ``k`` (0-based) of ``K`` in an ensemble: how many of each entry's unused records it takes.

    Per record, the rule is: ``random``, a uniform part in 0..K-1 drawn
    before the ensemble; ``gradient``, an unused record is taken with
    probability ``min(1, 2|g_i| / (K - k))`` from its own coin (the last tree
    takes all unused records).  The records of one entry are alike (same
    bins, label, gradient), so the learner sees only how many of them each
    tree takes.  Given the past, the per-record rule takes each of an entry's
    ``u`` unused records independently with one probability ``p`` (random:
    ``p = 1/(K - k)``, the chance that a record not in parts 0..k-1 is in
    part k): the number taken is Binomial(u, p), independently across
    entries, and it is drawn so here.  The trees' inputs, hence the model,
    have the distribution the per-record draws give them (docs/privacy.md).
    """
    if k == K - 1:
        return unused.copy()
    p = np.full(unused.shape, 1.0 / (K - k)) if mode == "random" else np.minimum(1.0, 2.0 * np.abs(g) / (K - k))
    return coin_counts(unused, p, rng)


def fit_dpboost(binned: Binned, *, ensemble_eps, n_trees, trees_per_ensemble, depth, learning_rate,
                reg_lambda, gradient_clip, subset_selection, rng, how) -> FitResult:
    """DPBoost (module docstring): each ensemble spends ``ensemble_eps``, half on splits, half on leaves."""
    n = binned.B.shape[0]  # entries of the table
    y = np.asarray(binned.labels, dtype=np.float64)
    F = np.zeros(n)
    K = trees_per_ensemble
    gstar = float(gradient_clip)
    q = dpboost_quantum(gstar)  # gradients in units of q: every sum below is exact (docs/privacy.md)
    split_eps, leaf_eps = ensemble_eps / (2 * depth), ensemble_eps / 2
    mech = ExponentialMechanism(split_eps, dpboost_gain_sensitivity(gstar))
    trees, entries = [], []
    n_ens = math.ceil(n_trees / K)
    for e in range(n_ens):
        unused = np.asarray(binned.counts, dtype=np.int64).copy()
        for k in range(min(K, n_trees - e * K)):
            u = dpboost_units(expit(F) - y, gstar)
            taken = _select_counts(unused, u * q, k, K, subset_selection, rng)
            unused -= taken
            rows = np.flatnonzero(taken)
            m_e = taken.astype(np.float64)
            feature, cut = _grow(binned, rows, depth, lambda gs, cs: _dpboost_gain(gs, cs, reg_lambda, q), mech,
                                 rng, [m_e * u, m_e])
            leaf = leaf_index(binned.B[rows], feature, cut, depth)
            G = np.bincount(leaf, (m_e * u)[rows], minlength=2**depth) * q
            m = np.bincount(leaf, m_e[rows], minlength=2**depth)
            clip, sens = dpboost_leaf_clip(gstar, reg_lambda, learning_rate, k)  # geometric (tree k of the ensemble)
            V = np.clip(-G / (m + reg_lambda), -clip, clip)
            Vn, _ = release_leaf_values(V, epsilon=leaf_eps, sensitivity=sens, rng=rng, release="", note="")
            value = learning_rate * Vn
            trees.append(BinnedTree(feature, cut, value))
            F += value[leaf_index(binned.B, feature, cut, depth)]
        entries += _ensemble_entries(e + 1, depth, mech, leaf_eps, gstar, reg_lambda, learning_rate,
                                     subset_selection, how)
    return FitResult(trees, entries)


def _ensemble_entries(e, depth, mech, leaf_eps, gstar, lam, lr, mode, how) -> list:
    """One ensemble's entries: its trees hold disjoint records, so each release step is charged once."""
    why = ("a public random partition (parallel composition)" if mode == "random" else
           "per-record gradient pre-selection of unused records (docs/privacy.md: a record reaches one tree)")
    splits = [dict(release=f"ensemble {e}: level {lev + 1} splits of every tree", mechanism="exponential",
                   epsilon=mech.epsilon, sensitivity=mech.sensitivity, guarantee="proven", curve=mech.curve,
                   note=f"XGBoost gain with unit Hessians, sensitivity 3 g*^2 plus float margin (g*={gstar:g}); trees on {why}; {how}")
              for lev in range(depth)]
    leaves = dict(release=f"ensemble {e}: leaf values of every tree", mechanism="laplace", epsilon=leaf_eps,
                  sensitivity=gstar / (1.0 + lam), guarantee="proven",
                  note=f"V = -sum g/(m + lambda), tree k of the ensemble clipped to +-g*(1-eta)^k, sensitivity "
                       f"min(g*/(1+lambda), 2 g*(1-eta)^k) (eta={lr:g}, lambda={lam:g}); trees on {why}; {how}")
    return splits + [leaves]
