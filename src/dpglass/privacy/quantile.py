"""The exponential-mechanism quantile (Smith 2011): a DP threshold on public bounds.

Used by :class:`dpglass.datasets.Binarizer` to cut numeric columns; it lives
here because it draws privacy noise, which only ``dpglass.privacy`` does.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpglass._validation import Interval, validate_params
from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass.privacy.rng import check_random_state

__all__ = ["check_bounds", "dp_quantile", "dp_quantile_from_counts", "grid_counts"]


def check_bounds(bounds, owner: str, name: str = "bounds") -> tuple[float, float]:
    ok = (
        isinstance(bounds, (tuple, list, np.ndarray))
        and len(bounds) == 2
        and all(isinstance(b, numbers.Real) and not isinstance(b, bool) and math.isfinite(b) for b in bounds)
        and bounds[0] < bounds[1]
    )
    if not ok:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a pair (lo, hi) of finite numbers with lo < hi. "
            f"Got {bounds!r} instead."
        )
    return float(bounds[0]), float(bounds[1])


#: Number of cells of the public grid on [lo, hi] that dp_quantile chooses from.
GRID_CELLS = 4096


def dp_quantile(values, q, epsilon, bounds, rng, grid_cells: int = GRID_CELLS) -> float:
    """Release the ``q``-quantile of ``values`` with epsilon-differential privacy.

    The exponential mechanism of Smith (2011), "Privacy-preserving statistical
    estimation with optimal convergence rates" (STOC), over a public grid of
    ``grid_cells + 1`` points ``t_k = lo + k (hi - lo) / grid_cells`` (a
    finite output set, so the released float is one of a data-independent
    list: no floating-point leak).  A candidate ``t`` has utility
    ``u(t) = -|#{i : x_i < t} - q n|``; adding or removing one record changes
    it by at most ``max(q, 1 - q) <= 1`` for every ``t`` (sensitivity 1, n
    private), so the release is ``epsilon``-DP (McSherry & Talwar 2007).
    Sampling is exact (:class:`~dpglass.privacy.mechanisms.ExponentialMechanism`).
    The values are **clipped to** ``bounds`` first (a per-record map).

    Parameters
    ----------
    values : array-like of shape (n,)
        The data (finite or infinite reals; no NaN).  Values outside
        ``bounds`` are clipped to them.  ``n`` may be 0.
    q : float in [0, 1]
        The quantile.
    epsilon : float > 0
        The privacy budget of this one release.
    bounds : (lo, hi)
        Public bounds, ``lo < hi``, chosen without looking at the data.  The
        output always lies in ``[lo, hi]``.
    rng : numpy.random.Generator, int, SeedSequence or None
        Randomness (see :func:`dpglass.privacy.rng.check_random_state`).

    Returns
    -------
    float

    Raises
    ------
    DataValidationError
        If ``values`` contains NaN.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(1000) / 10          # median 49.95
    >>> t = dp_quantile(x, 0.5, epsilon=5.0, bounds=(0, 100), rng=0)
    >>> 45 < t < 55
    True
    """
    owner = "dp_quantile"
    validate_params(
        {"q": q, "epsilon": epsilon},
        {"q": [Interval(numbers.Real, 0, 1)], "epsilon": [Interval(numbers.Real, 0, None, "neither")]},
        owner,
    )
    if not math.isfinite(epsilon):
        raise InvalidParameterError(
            f"The 'epsilon' parameter of {owner} must be a finite float in the range (0, inf). Got {epsilon!r} instead."
        )
    lo, hi = check_bounds(bounds, owner)
    rng = check_random_state(rng)
    x = np.asarray(values, dtype=float).ravel()
    if np.isnan(x).any():
        raise DataValidationError(
            "dp_quantile got NaN values; impute first (with a public fill value) or drop them."
        )
    return _select(grid_counts(x, (lo, hi), grid_cells), x.size, q, epsilon, lo, hi, rng, grid_cells)


def quantile_grid(lo: float, hi: float, grid_cells: int = GRID_CELLS) -> np.ndarray:
    """The public grid of the bounds: every value a DP quantile can release (``grid_cells + 1`` points)."""
    return lo + (hi - lo) * (np.arange(grid_cells + 1) / grid_cells)


def grid_counts(values, bounds, grid_cells: int = GRID_CELLS) -> np.ndarray:
    """``#{i : clip(x_i) < t_k}`` for every point ``t_k`` of :func:`dp_quantile`'s public grid (int64).

    The quantile's only statistic of the data: counts of disjoint parts of
    the data add up to the counts of the whole (the Dask path of
    :class:`~dpglass.models.gbdt.estimator.DPGradientBoostingClassifier` sums them over
    partitions and calls :func:`dp_quantile_from_counts`).  Nothing is
    released here.
    """
    lo, hi = float(bounds[0]), float(bounds[1])
    z = np.sort(np.clip(np.asarray(values, dtype=float).ravel(), lo, hi))
    return np.searchsorted(z, quantile_grid(lo, hi, grid_cells), side="left").astype(np.int64)


def _select(below, n, q, epsilon, lo, hi, rng, grid_cells) -> float:
    from dpglass.privacy.mechanisms import ExponentialMechanism

    utility = -np.abs(below - q * n)
    k = ExponentialMechanism(float(epsilon), 1.0).select(utility, rng)
    return float(quantile_grid(lo, hi, grid_cells)[k])


def dp_quantile_from_counts(below, n: int, q, epsilon, bounds, rng, grid_cells: int = GRID_CELLS) -> float:
    """:func:`dp_quantile` from its statistic: ``below`` (:func:`grid_counts`) and the number of records ``n``.

    Draws exactly what :func:`dp_quantile` draws on the values those counts
    come from (same utilities, same generator calls); the privacy argument is
    :func:`dp_quantile`'s.
    """
    owner = "dp_quantile_from_counts"
    validate_params(
        {"q": q, "epsilon": epsilon},
        {"q": [Interval(numbers.Real, 0, 1)], "epsilon": [Interval(numbers.Real, 0, None, "neither")]},
        owner,
    )
    lo, hi = check_bounds(bounds, owner)
    below = np.asarray(below, dtype=np.int64)
    if below.shape != (grid_cells + 1,):
        raise InvalidParameterError(f"{owner}: below must hold one count per grid point ({grid_cells + 1}).")
    return _select(below, int(n), q, epsilon, lo, hi, check_random_state(rng), grid_cells)
