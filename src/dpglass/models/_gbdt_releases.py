"""The noisy leaf releases of :mod:`dpglass.models.gbdt`: sums and values on a public grid.

Every function draws its noise through :mod:`dpglass.privacy.mechanisms` and
returns the released values with the ledger entry (a dict for
:meth:`~dpglass.privacy.ledger.PrivacyLedger.spend`) that describes it.
"""

from __future__ import annotations

import math

import numpy as np

from dpglass.privacy.mechanisms import DiscreteGaussianMechanism, DiscreteLaplaceMechanism, LaplaceMechanism

__all__ = [
    "QUANTUM", "dpboost_gain_sensitivity", "dpboost_leaf_clip", "dpboost_quantum", "dpboost_units",
    "gaussian_leaf_mechanism", "grid_for", "leaf_sum_entry", "quantise", "release_leaf_sums", "release_leaf_values",
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


def dpboost_quantum(gradient_clip: float) -> float:
    """DPBoost's fixed-point unit: ``2**(floor(log2 g*) - 19)``, so a gradient in [-g*, g*] is below 2**20 units."""
    return 2.0 ** (math.floor(math.log2(gradient_clip)) - 19)


def dpboost_units(gradients: np.ndarray, gradient_clip: float) -> np.ndarray:
    """Gradients clipped to ``[-g*, g*]`` in :func:`dpboost_quantum` units, with ``|u| q <= g*``.

    ``rint`` alone could round past ``g*`` when ``g*`` is not a multiple of
    ``q``; the units are therefore clipped to ``floor(g*/q)`` too.
    """
    q = dpboost_quantum(gradient_clip)
    top = math.floor(gradient_clip / q)
    return np.clip(quantise(np.clip(gradients, -gradient_clip, gradient_clip), q), -top, top)


def dpboost_gain_sensitivity(gradient_clip: float) -> float:
    """The split gain's sensitivity as computed: ``(3 + 2**-10) g*^2``.

    ``3 g*^2`` bounds the exact gain's change (docs/privacy.md); the gain is
    computed in float64 from exact sums, within a relative ``2**-51`` of
    itself, and it is below ``n g*^2``, so for fewer than ``2**38`` records
    the two computed gains' errors add less than ``2**-10 g*^2``.
    """
    return (3.0 + 2.0**-10) * float(gradient_clip) ** 2


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


def _units_sensitivity(sensitivity: float, grid: float) -> int:
    # |rint(a/g) - rint(b/g)| <= |a - b|/g + 1; the sums are exact (QUANTUM), so |a - b| <= sensitivity
    return int(math.floor(sensitivity / grid)) + 1


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


def leaf_sum_entry(release: str, epsilon: float, sensitivity: float, note: str, delta: float = 0.0) -> dict:
    """The ledger entry of :func:`release_leaf_sums` (also the calibration plan's entry).

    ``delta > 0``: the Gaussian release of :func:`gaussian_leaf_mechanism`, its pair stated at ``delta``.
    """
    if delta > 0:
        mech, g = gaussian_leaf_mechanism(epsilon, sensitivity, delta)
        return dict(release=release, mechanism="discrete gaussian (grid)", epsilon=mech.epsilon, delta=mech.delta,
                    sensitivity=float(sensitivity), scale=mech.sigma * g, guarantee="proven", note=note,
                    curve=mech.curve)
    g = grid_for(sensitivity, epsilon)
    k = _units_sensitivity(sensitivity, g)
    return dict(
        release=release, mechanism="discrete laplace (grid)", epsilon=float(epsilon), sensitivity=float(sensitivity),
        scale=k * g / epsilon, guarantee="proven", note=note,
        curve={"kind": "discrete-laplace", "parameter": float(epsilon) / k, "sensitivity": k},
    )


def release_leaf_sums(unit_sums: np.ndarray, *, epsilon: float, sensitivity: float, rng, release: str, note: str,
                      delta: float = 0.0):
    """Per-leaf sums of bounded per-record terms, noisy, on a public grid.

    ``unit_sums`` are exact sums of :func:`quantise`'d terms (in
    :data:`QUANTUM` units).  One record lies in one leaf, so it moves one
    coordinate of the sums by at most ``sensitivity`` (add/remove), exactly.  The sums are rounded to the grid ``g``
    (:func:`grid_for`); in grid units the rounded vector moves by at most
    ``k = floor(sensitivity/g) + 1`` in l1, and discrete Laplace noise of
    parameter ``epsilon / k`` (:class:`DiscreteLaplaceMechanism`, sensitivity
    ``k``) makes the release ``epsilon``-DP.  With ``delta > 0`` the noise is
    the discrete Gaussian of :func:`gaussian_leaf_mechanism` on its grid
    instead.  Returns ``(values, entry)``; the values are multiples of the grid.
    """
    entry = leaf_sum_entry(release, epsilon, sensitivity, note, delta)
    if delta > 0:
        mech, g = gaussian_leaf_mechanism(epsilon, sensitivity, delta)
    else:
        g = grid_for(sensitivity, epsilon)
        mech = DiscreteLaplaceMechanism(float(epsilon), entry["curve"]["sensitivity"])
    # QUANTUM / g is a power of two: the product is exact, and so is rint; clipping to +-2**52 (public,
    # 1-Lipschitz per coordinate) keeps the units in the sampler's range whatever n and epsilon are
    units = np.clip(np.rint(np.asarray(unit_sums, dtype=np.float64) * (QUANTUM / g)), -2.0**52, 2.0**52)
    noisy = np.asarray(mech.randomise(units, rng), dtype=np.float64)
    return noisy * g, entry


def release_leaf_values(values: np.ndarray, *, epsilon: float, sensitivity: float, rng, release: str, note: str):
    """DPBoost's leaf release: Laplace noise on the (clipped) leaf values, on the mechanism's grid."""
    mech = LaplaceMechanism(float(epsilon), float(sensitivity))
    noisy = np.asarray(mech.randomise(np.asarray(values, dtype=np.float64), rng), dtype=np.float64)
    entry = dict(release=release, mechanism="laplace", epsilon=float(epsilon), sensitivity=float(sensitivity),
                 scale=mech.scale_for(max(np.size(values), 1)), guarantee="proven", note=note)
    return noisy, entry

