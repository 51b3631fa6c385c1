"""The noisy leaf releases of :mod:`dpglass.models.gbdt`: sums and values on a public grid.

Every function draws its noise through :mod:`dpglass.privacy.mechanisms` and
returns the released values with the ledger entry (a dict for
:meth:`~dpglass.privacy.ledger.PrivacyLedger.spend`) that describes it.
"""

from __future__ import annotations

import math

import numpy as np

from dpglass.privacy.mechanisms import DiscreteGaussianMechanism, DiscreteLaplaceMechanism, LaplaceMechanism

__all__ = ["gaussian_leaf_mechanism", "grid_for", "leaf_sum_entry", "release_leaf_sums", "release_leaf_values"]

#: Units of the grid below the noise scale: the grid is 2**-16 of it.
GRID_OFFSET = 16
#: Float slack on a sensitivity: a float sum of n terms of size <= 1 is within
#: n**2 * 2**-53 of the exact sum (Higham 2002, Sec. 3.1), and so is a sum over
#: the binned pattern table's m <= n entries of count * term (each product
#: rounded once); for n <= 2**20 that is below 2**-13, far less than this margin.
FLOAT_SLACK = 2.0**-12


def grid_for(sensitivity: float, epsilon: float) -> float:
    """The public power-of-two grid of a leaf-sum release: about 2**-16 of its noise scale."""
    return 2.0 ** (math.floor(math.log2(sensitivity / epsilon)) - GRID_OFFSET)


def _units_sensitivity(sensitivity: float, grid: float) -> int:
    # |rint(a/g) - rint(b/g)| <= |a - b|/g + 1, with a float slack on |a - b|
    return int(math.floor((sensitivity + FLOAT_SLACK) / grid)) + 1


#: Gaussian leaf sums: the grid is 2**-5 of the sensitivity (the l2 sensitivity in grid units is then
#: 33: rounding costs 3% more noise, and the PLD of the curve stays small).
GAUSSIAN_GRID_OFFSET = 5


def gaussian_leaf_mechanism(epsilon: float, sensitivity: float, delta: float):
    """``(mechanism, grid)`` of a Gaussian leaf-sum release with the zCDP of a pure ``epsilon`` one.

    On the grid ``g = 2**(floor(log2 sensitivity) - 5)`` a record moves one
    coordinate by at most ``k = floor((sensitivity + slack)/g) + 1`` units (l1 =
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


def release_leaf_sums(sums: np.ndarray, *, epsilon: float, sensitivity: float, rng, release: str, note: str,
                      delta: float = 0.0):
    """Per-leaf sums of bounded per-record terms, noisy, on a public grid.

    One record lies in one leaf, so it moves one coordinate of ``sums`` by at
    most ``sensitivity`` (add/remove).  The sums are rounded to the grid ``g``
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
    units = np.rint(np.asarray(sums, dtype=np.float64) / g)
    noisy = np.asarray(mech.randomise(units, rng), dtype=np.float64)
    return noisy * g, entry


def release_leaf_values(values: np.ndarray, *, epsilon: float, sensitivity: float, rng, release: str, note: str):
    """DPBoost's leaf release: Laplace noise on the (clipped) leaf values, on the mechanism's grid."""
    mech = LaplaceMechanism(float(epsilon), float(sensitivity))
    noisy = np.asarray(mech.randomise(np.asarray(values, dtype=np.float64), rng), dtype=np.float64)
    entry = dict(release=release, mechanism="laplace", epsilon=float(epsilon), sensitivity=float(sensitivity),
                 scale=mech.scale_for(max(np.size(values), 1)), guarantee="proven", note=note)
    return noisy, entry

