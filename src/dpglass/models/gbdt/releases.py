"""The releases of :mod:`dpglass.models.gbdt.estimator`, one factory per kind: ledger entry, noise and public domain.

Each factory returns :class:`~dpglass.privacy.plan.PlannedRelease` steps for
the family's release plan (:mod:`dpglass.models.gbdt.budget`): the entry the
ledger records, the mechanism's own noise (drawn by
:meth:`~dpglass.privacy.ledger.PrivacyLedger.release`, never here) and the
public domain of the released values:

* :func:`quantile_step` (:mod:`dpglass.models._binning`, shared with dp-gam): a numeric column's
  ``max_bins - 1`` DP quantiles, points of the quantile's public grid on the column's bounds;
* :func:`split_step`: one exponential-mechanism choice per node of a tree
  level, among the public (feature, cut) candidates (:class:`Candidates`);
* :func:`leaf_sum_steps` (newton): noisy per-leaf gradient or Hessian sums,
  multiples of their public grid;
* :func:`leaf_value_step` (DPBoost): noisy clipped leaf values, multiples of
  the Laplace mechanism's grid.

K classes (:func:`scored_classes`, :func:`class_term_caps`, :func:`project_l1`):
a round fits one tree per class, ``C = K`` trees on the same records (two
classes: one tree, on the score of ``classes_[1]``, that of ``classes_[0]``
being 0: ``C = 1``); a record's C gradient terms ``p_k - 1[y = k]`` have l1
norm at most ``min(C, 2)`` and its C Hessian terms ``p_k (1 - p_k)`` at most
``C c (1 - c)``, ``c = min(1/2, 1/C)``: the joint sensitivities of a round's
releases (docs/privacy.md, "K classes").  Two classes give the binary bounds 1
and 1/4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from dpglass.models._binning import quantile_step  # shared with dp-gam (one binning)
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import (
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    LaplaceMechanism,
)
from dpglass.privacy.plan import GridMultiples, PlannedRelease, Points

__all__ = [
    "QUANTUM",
    "Candidates",
    "class_term_caps",
    "dpboost_gain_sensitivity",
    "dpboost_l1",
    "dpboost_leaf_clip",
    "dpboost_quantum",
    "dpboost_units",
    "gaussian_leaf_mechanism",
    "grid_for",
    "leaf_sum_entry",
    "leaf_sum_steps",
    "leaf_value_step",
    "project_l1",
    "quantile_step",
    "quantise",
    "scored_classes",
    "split_step",
]

#: Units of the grid below the noise scale: the grid is 2**-16 of it.
GRID_OFFSET = 16
#: Every per-record term (a gradient in [-1, 1], a Hessian in [0, 1/4]) is
#: rounded to a multiple of this fixed-point unit before it is summed (a
#: per-record map: the rounded term is still a function of the record and the
#: released model, and still bounded by 1 and 1/4).  In these units a term is
#: an integer of magnitude <= 2**20, so every sum over fewer than 2**33 records
#: (count times term per table entry, then over entries, in any order) is an
#: integer below 2**53 and float64 adds it exactly: the sums, hence the split
#: utilities and the leaf releases, carry no float error at all.
QUANTUM = 2.0**-20


def quantise(terms: np.ndarray, quantum: float = QUANTUM) -> np.ndarray:
    """Per-record terms in units of ``quantum`` (a power of two): integer-valued float64, ``rint(t / quantum)``."""
    return np.rint(np.asarray(terms, dtype=np.float64) / quantum)


def scored_classes(n_classes: int) -> np.ndarray:
    """The class codes that have a score and a tree in every round: all K, or for two classes code 1 alone.

    Scores ``F_k`` of these classes (any other's is 0) give ``p = softmax(F)``.
    With two classes the two trees of the softmax would mirror each other
    (``g_0 = -g_1``, ``h_0 = h_1``): one tree on ``F_1 - F_0`` is the binary
    log-loss, ``p_1 = expit(F_1)``.
    """
    K = int(n_classes)
    if K < 2:
        raise ValueError(f"n_classes must be at least 2; got {n_classes!r}.")
    return np.array([1]) if K == 2 else np.arange(K)


def class_term_caps(n_classes: int) -> tuple[int, int]:
    """``(gradient cap, Hessian cap)``: the l1 bound of one record's ``C`` terms (one per scored class), in
    :data:`QUANTUM` units.

    A record of class ``y`` has ``g_k = p_k - 1[y = k]`` and ``h_k = p_k (1 - p_k)``
    for the C scored classes (:func:`scored_classes`).  K >= 3 (C = K):
    ``sum_k |g_k| = (1 - p_y) + sum_{k != y} p_k = 2 (1 - p_y) <= 2``, and
    ``sum_k h_k`` is concave and symmetric on the simplex, largest at the
    uniform ``p``: ``1 - 1/K``.  Two classes (C = 1): ``|p_1 - y| <= 1``,
    ``p_1 (1 - p_1) <= 1/4``.  Both read ``min(C, 2)`` and ``C c (1 - c)``,
    ``c = min(1/2, 1/C)``; both are reached (in the limit), so no smaller
    bound holds.  The Hessian cap is its value rounded down to a unit (exact:
    fractions); two classes give the binary 2**20 and 2**18.
    """
    C = len(scored_classes(n_classes))
    c = Fraction(1, 2) if C <= 2 else Fraction(1, C)
    return min(C, 2) * 2**20, math.floor(C * c * (1 - c) * 2**20)


def project_l1(units: np.ndarray, cap: int) -> np.ndarray:
    """Rows of integer-valued ``units`` (one record's terms, shape (m, C)) with l1 norm at most ``cap``.

    A row whose norm ``S`` exceeds ``cap`` becomes ``sign(u) floor(|u| cap / S)``
    (int64 arithmetic, exact); other rows are returned unchanged.  A
    per-record map: it enforces the bound of :func:`class_term_caps` on the
    quantised terms, which the rounding of each term could otherwise exceed by
    up to ``C/2`` units (a row of one term within its cap is never changed).
    """
    u = np.asarray(units, dtype=np.float64)
    if u.shape[1] == 1:
        return u  # |u| is at most its cap already (clipped per term)
    S = np.abs(u).sum(axis=1)
    over = S > cap
    if not over.any():
        return u
    u = u.copy()
    a = np.abs(u[over]).astype(np.int64)
    u[over] = np.sign(u[over]) * ((a * int(cap)) // S[over].astype(np.int64)[:, None])
    return u


def dpboost_quantum(gradient_clip: float) -> float:
    """DPBoost's fixed-point unit: ``2**(floor(log2 g*) - 19)``, so a gradient in [-g*, g*] is below 2**20 units."""
    return 2.0 ** (math.floor(math.log2(gradient_clip)) - 19)


def dpboost_units(gradients: np.ndarray, gradient_clip: float, n_classes: int = 2) -> np.ndarray:
    """Gradients clipped to ``[-g*, g*]`` in :func:`dpboost_quantum` units, with ``|u| q <= g*``.

    ``rint`` alone could round past ``g*`` when ``g*`` is not a multiple of
    ``q``; the units are therefore clipped to ``floor(g*/q)`` too.  A 2-d
    ``gradients`` holds one record's class gradients (one per scored class) per row: its
    rows are then projected to the l1 cap ``floor(l1 / q)`` (:func:`dpboost_l1`,
    :func:`project_l1`).
    """
    q = dpboost_quantum(gradient_clip)
    top = math.floor(gradient_clip / q)
    units = np.clip(quantise(np.clip(gradients, -gradient_clip, gradient_clip), q), -top, top)
    if units.ndim == 2:
        units = project_l1(units, math.floor(dpboost_l1(gradient_clip, n_classes) / q))
    return units


def dpboost_l1(gradient_clip: float, n_classes: int = 2) -> float:
    """The l1 bound of one record's C clipped DPBoost gradients (C scored classes): ``min(C g*, max(2, g*))``.

    Each is clipped to ``[-g*, g*]``; for K >= 3 their l1 norm is also at most
    2 (:func:`class_term_caps`; clipping only shrinks them), for two classes
    the one gradient is at most ``g*``.  :func:`project_l1` enforces it on the
    units (``floor(l1 / q)``).
    """
    g = float(gradient_clip)
    return min(len(scored_classes(n_classes)) * g, max(2.0, g))


def dpboost_gain_sensitivity(gradient_clip: float, n_classes: int = 2) -> float:
    """The joint sensitivity of a round's C split gains as computed: ``(2 l1/g* + C (1 + 2**-10)) g*^2``.

    One record of gradient ``g_k`` changes tree k's gain by less than
    ``2 g* |g_k| + g*^2`` (docs/privacy.md), so the C trees' gains by less
    than ``2 g* l1 + C g*^2`` (``l1``: :func:`dpboost_l1`); for two classes
    that is ``3 g*^2``.  Each gain is computed in float64 from exact sums,
    within a relative ``2**-51`` of itself, and it is below ``n g*^2``, so for
    fewer than ``2**38`` records the two computed gains' errors add less than
    ``2**-10 g*^2`` per tree.
    """
    g = float(gradient_clip)
    return (2.0 * (dpboost_l1(g, n_classes) / g) + len(scored_classes(n_classes)) * (1.0 + 2.0**-10)) * g**2


def dpboost_leaf_clip(gradient_clip: float, reg_lambda: float, learning_rate: float, k: int) -> tuple[float, float]:
    """Tree ``k`` (0-based) of a DPBoost ensemble: ``(clip, sensitivity)`` of its leaf values.

    Geometric leaf clipping: the values are clipped to ``+-g*(1 - eta)**k``, so
    one record moves a leaf value by at most ``min(g*/(1 + lambda), 2 clip)``.
    The sensitivity fixes the grid of the Laplace release (public: the
    parameters and ``k`` only).
    """
    clip = float(gradient_clip) * (1.0 - float(learning_rate)) ** k
    return clip, min(float(gradient_clip) / (1.0 + float(reg_lambda)), 2.0 * clip)


def grid_for(sensitivity: float, epsilon: float) -> float:
    """The public power-of-two grid of a leaf-sum release: about 2**-16 of its noise scale."""
    return 2.0 ** (math.floor(math.log2(sensitivity / epsilon)) - GRID_OFFSET)


def _units_sensitivity(sensitivity: float, grid: float, moved: int = 1) -> int:
    # |rint(a/g) - rint(b/g)| <= |a - b|/g + 1 per moved coordinate; the sums are exact (QUANTUM), so the moved
    # coordinates' |a - b| add up to at most sensitivity, and sum_k floor(x_k) <= floor(sum_k x_k)
    return int(math.floor(sensitivity / grid)) + int(moved)


#: Gaussian leaf sums: the grid is 2**-5 of the sensitivity (the l2 sensitivity in grid units is then
#: 33: rounding costs 3% more noise, and the PLD of the curve stays small).
GAUSSIAN_GRID_OFFSET = 5


def gaussian_leaf_mechanism(epsilon: float, sensitivity: float, delta: float):
    """``(mechanism, grid)`` of a Gaussian leaf-sum release with the zCDP of a pure ``epsilon`` one.

    On the grid ``g = 2**(floor(log2 sensitivity) - 5)`` a record moves one
    coordinate by at most ``k = floor(sensitivity/g) + 1`` units (l1 =
    l2: one leaf); the discrete Gaussian of ``sigma = k / epsilon`` units is
    ``epsilon**2 / 2``-zCDP, as much as a pure ``epsilon``-DP release, and
    its ledger pair is stated at ``delta`` (the tight accountants read the curve).
    """
    g = 2.0 ** (math.floor(math.log2(sensitivity)) - GAUSSIAN_GRID_OFFSET)
    k = _units_sensitivity(sensitivity, g)
    return DiscreteGaussianMechanism(k / float(epsilon), float(delta), k), g


def leaf_sum_entry(release: str, epsilon: float, sensitivity: float, note: str, delta: float = 0.0,
                   moved: int = 1) -> dict:
    """The ledger entry of a leaf-sum release (:func:`leaf_sum_steps`); one record moves ``moved`` coordinates.

    ``delta > 0``: the Gaussian release of :func:`gaussian_leaf_mechanism`, its pair stated at ``delta``
    (one moved coordinate only).
    """
    if delta > 0:
        if moved != 1:
            raise ValueError("Gaussian leaf sums are for two classes (one moved coordinate).")
        mech, g = gaussian_leaf_mechanism(epsilon, sensitivity, delta)
        return dict(release=release, mechanism="discrete gaussian (grid)", epsilon=mech.epsilon, delta=mech.delta,
                    sensitivity=float(sensitivity), scale=mech.sigma * g, guarantee="proven", note=note,
                    curve=mech.curve)
    g = grid_for(sensitivity, epsilon)
    k = _units_sensitivity(sensitivity, g, moved)
    return dict(
        release=release, mechanism="discrete laplace (grid)", epsilon=float(epsilon), sensitivity=float(sensitivity),
        scale=k * g / epsilon, guarantee="proven", note=note,
        curve={"kind": "discrete-laplace", "parameter": float(epsilon) / k, "sensitivity": k},
    )


def leaf_sum_steps(epsilon: float, sensitivity: float, delta: float = 0.0, moved: int = 1):
    """A factory ``(release, note) -> PlannedRelease`` of per-leaf sums of bounded per-record terms.

    The steps share one mechanism.  Their exact values are sums of
    :func:`quantise`'d terms (in :data:`QUANTUM` units), the leaves of the
    ``moved`` trees of a round one after another.  One record lies in one leaf
    of each tree, so it moves ``moved`` coordinates of the sums by at most
    ``sensitivity`` in l1 (add/remove), exactly.  The noise rounds the sums to the
    grid ``g`` (:func:`grid_for`); in grid units the rounded vector moves by
    at most ``k = floor(sensitivity/g) + moved`` in l1, and discrete Laplace noise
    of parameter ``epsilon / k`` (:class:`DiscreteLaplaceMechanism`,
    sensitivity ``k``) makes the release ``epsilon``-DP.  With ``delta > 0``
    the noise is the discrete Gaussian of :func:`gaussian_leaf_mechanism` on
    its grid instead.  The released values are multiples of the grid; the
    file holds only the leaf values computed from them (no fields).
    """
    base = leaf_sum_entry("", epsilon, sensitivity, "", delta, moved)
    if delta > 0:
        mech, g = gaussian_leaf_mechanism(epsilon, sensitivity, delta)
    else:
        g = grid_for(sensitivity, epsilon)
        mech = DiscreteLaplaceMechanism(float(epsilon), base["curve"]["sensitivity"])

    def noise(unit_sums, rng):
        # QUANTUM / g is a power of two: the product is exact, and so is rint; clipping to +-2**52 (public,
        # 1-Lipschitz per coordinate) keeps the units in the sampler's range whatever n and epsilon are
        units = np.clip(np.rint(np.asarray(unit_sums, dtype=np.float64) * (QUANTUM / g)), -2.0**52, 2.0**52)
        return np.asarray(mech.randomise(units, rng), dtype=np.float64) * g

    domain = GridMultiples(g)

    def step(release: str, note: str) -> PlannedRelease:
        entry = LedgerEntry(**dict(base, release=release, note=note, curve=dict(base["curve"])))
        return PlannedRelease(entry, noise, domain)

    return step


def leaf_value_step(entry: LedgerEntry, epsilon: float, sensitivity: float, parts: tuple = ()) -> PlannedRelease:
    """DPBoost's leaf release: Laplace noise on the (clipped) leaf values, on the mechanism's grid.

    The released values are multiples of the grid of
    :class:`LaplaceMechanism` ``(epsilon, sensitivity)``; the file holds
    ``learning_rate`` times them (checked as derived values).
    """
    mech = LaplaceMechanism(float(epsilon), float(sensitivity))

    def noise(values, rng):
        return np.asarray(mech.randomise(np.asarray(values, dtype=np.float64), rng), dtype=np.float64)

    return PlannedRelease(entry, noise, GridMultiples(mech.granularity), (), parts)


@dataclass(frozen=True)
class Candidates(Points):
    """The public (feature, cut) candidates of a split: ``points`` holds every pair; a level's release is one
    pair per node (a pair is one point, not two)."""

    @cached_property
    def _allowed(self) -> frozenset:
        return frozenset(self.points)

    def problem(self, values) -> str | None:
        for v in values:
            try:
                ok = tuple(v) in self._allowed
            except TypeError:
                ok = False
            if not ok:
                return f"holds {v!r}, not one of the public (feature, cut) candidates"
        return None

    def __str__(self) -> str:
        return f"one of the {len(self.points)} public (feature, cut) candidates"


def split_step(entry: LedgerEntry, mech, candidates: Candidates, fields: tuple, parts: tuple = ()) -> PlannedRelease:
    """One tree level's splits: the exponential mechanism ``mech`` picks a candidate per node.

    The exact values are the level's utilities, one row per node (the nodes
    hold disjoint records: one entry for the level); the released values are
    the chosen (feature, cut) pairs.
    """
    pairs = candidates.points

    def noise(utilities, rng):
        return [pairs[mech.select(row, rng)] for row in utilities]

    return PlannedRelease(entry, noise, candidates, fields, parts)
