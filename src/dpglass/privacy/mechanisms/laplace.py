"""Laplace noise for counts and real values, released on a public grid.

:class:`DiscreteLaplaceMechanism` adds discrete Laplace (two-sided geometric)
noise to integer values (Ghosh, Roughgarden & Sundararajan 2009; sampled
exactly as in Canonne, Kamath & Steinke 2020).  :class:`LaplaceMechanism`
rounds real values to a public power-of-two grid and adds discrete Laplace
noise in grid units, so its outputs are exact multiples of the grid: their
floating-point bits carry nothing about the data (Mironov 2012's attack on
``value + rng.laplace(...)`` does not apply).  ``sample_laplace`` is NumPy's
floating-point sampler, kept for the audit's reference cases only: dpglass
never releases its draws.

Examples
--------
>>> import numpy as np
>>> mech = DiscreteLaplaceMechanism(epsilon=0.5)
>>> mech.scale, mech.guarantee
(2.0, (0.5, 0.0))
>>> mech.randomise([10, 20], np.random.default_rng(0)).dtype
dtype('int64')
>>> lap = LaplaceMechanism(epsilon=1.0, sensitivity=0.5)
>>> out = lap.randomise([0.3, 0.7], np.random.default_rng(0))
>>> bool(np.all(out / lap.granularity == np.round(out / lap.granularity)))
True
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpglass._validation import Interval, validate_params
from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.mechanisms._common import (
    _POSITIVE, _RNG, _SIZE, _Mechanism, _as_output, _check_integers, _check_rng, _check_values,
)
from dpglass.privacy.samplers import GRID, discrete_laplace, discrete_laplace_decay

__all__ = ["DiscreteLaplaceMechanism", "LaplaceMechanism", "sample_laplace"]

#: Grid of LaplaceMechanism: 2**(floor(log2(sensitivity / epsilon)) - GRID_OFFSET),
#: so that the noise scale is 2**16 to 2**17 grid units.
GRID_OFFSET = 16


def sample_laplace(scale, size, rng) -> np.ndarray:
    """Draw ``Laplace(0, scale)`` noise, density ``exp(-|z|/scale) / (2 scale)``.

    Parameters
    ----------
    scale : float
        Finite, > 0.
    size : int, tuple of ints or None
        Output shape (``None``: a 0-d array).
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray of float64

    Notes
    -----
    Uses :meth:`numpy.random.Generator.laplace` (inverse CDF on a
    floating-point uniform); see docs/privacy.md on Mironov (2012).
    """
    validate_params({"scale": scale, "size": size, "rng": rng},
                    {"scale": _POSITIVE, "size": _SIZE, "rng": _RNG}, "sample_laplace")
    return np.asarray(rng.laplace(0.0, float(scale), size=size), dtype=np.float64)



class DiscreteLaplaceMechanism(_Mechanism):
    """Release ``value + Z`` for integer values, ``P[Z = z] ∝ exp(-|z| epsilon / sensitivity)``.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : int, default=1
        The l1 sensitivity of the whole released integer vector (>= 1).

    Notes
    -----
    **Releases** integers.  **Guarantee**: pure ``(epsilon, 0)``-DP when
    ``sensitivity`` bounds the l1 distance between the integer vectors of
    neighbouring datasets: the pmf ratio at any point is at most
    ``exp(epsilon |shift| / sensitivity)`` coordinate-wise (Ghosh,
    Roughgarden & Sundararajan 2009, the geometric mechanism).  The sampler is
    exact (only uniform integers, :func:`dpglass.privacy.samplers.discrete_laplace`),
    with ``1/scale`` rounded down to a multiple of 2**-40, i.e. never less
    noise than stated.  Outputs are integers, so floating point reveals
    nothing.
    """

    _parameter_constraints = {"epsilon": _POSITIVE,
                              "sensitivity": [Interval(numbers.Integral, 1, None, closed="left")]}

    def __init__(self, epsilon, sensitivity=1):
        self._set_params(epsilon=epsilon, sensitivity=sensitivity)
        object.__setattr__(self, "sensitivity", int(self.sensitivity))

    @property
    def scale(self) -> float:
        """``sensitivity / epsilon``."""
        return self.sensitivity / self.epsilon

    @property
    def curve(self) -> dict:
        """Integer noise with pmf ∝ exp(-(epsilon/k)|z|) on a query of l1 sensitivity k.

        Exact for a query whose neighbours differ in one coordinate (a count,
        or a class-count pair where one record moves one cell).
        """
        return {"kind": "discrete-laplace", "parameter": self.epsilon / self.sensitivity,
                "sensitivity": self.sensitivity}

    @property
    def decay(self) -> float:
        """The sampler's decay ``g <= 1/scale``: ``P[Z = z] ∝ e^{-g|z|}`` for the noise as drawn
        (:func:`~dpglass.privacy.samplers.discrete_laplace`)."""
        return discrete_laplace_decay(self.scale) / GRID

    @property
    def std(self) -> float:
        """The noise's standard deviation as drawn: ``sqrt(2 q) / (1 - q)``, ``q = e^{-g}``."""
        q = math.exp(-self.decay)
        return math.sqrt(2 * q) / (1 - q)

    def log_upper_tail(self, t: int) -> float:
        """``log P[Z >= t]`` for an integer ``t >= 1``: ``-g t - log(1 + e^-g)``."""
        g = self.decay
        return -g * int(t) - math.log1p(math.exp(-g))

    def upper_threshold(self, alpha: float) -> int:
        """The least integer ``t >= 1`` with ``P[Z >= t] <= alpha``: a noisy count at ``t`` or above is
        "clearly above its noise" (the noise alone reaches it with probability at most ``alpha``).

        >>> DiscreteLaplaceMechanism(1.0).upper_threshold(1e-3), DiscreteLaplaceMechanism(1e6).upper_threshold(1e-3)
        (7, 1)
        """
        return self._least(lambda t: self.log_upper_tail(t) <= math.log(alpha), alpha, start=1)

    def tail_bound(self, alpha: float) -> int:
        """The least integer ``k >= 0`` with ``P[|Z| > k] <= alpha`` (``= 2 P[Z >= k + 1]``), for the noise as
        drawn: a public function of the parameters, for intervals (docs/privacy.md, CLI).

        >>> DiscreteLaplaceMechanism(1.0).tail_bound(0.05), DiscreteLaplaceMechanism(1e6).tail_bound(0.05)
        (3, 0)
        """
        return self._least(lambda k: math.log(2.0) + self.log_upper_tail(k + 1) <= math.log(alpha), alpha, start=0)

    def _least(self, ok, alpha: float, start: int) -> int:
        if not 0 < alpha < 1:
            raise InvalidParameterError(f"alpha must be in (0, 1); got {alpha!r}.")
        t = max(start, math.floor(-math.log(alpha) / self.decay) - 1)  # at or below the answer
        while t > start and ok(t - 1):  # float rounding, either way
            t -= 1
        while not ok(t):
            t += 1
        return t

    def randomise(self, value, rng):
        """``value + Z`` (int64, same shape); ``value`` must be integer-valued."""
        owner = f"{type(self).__name__}.randomise"
        _check_rng(rng, owner)
        arr = _check_integers(value, owner)
        out = arr.astype(np.int64) + discrete_laplace(self.scale, arr.shape, rng)
        return out if out.ndim else int(out)


class LaplaceMechanism(_Mechanism):
    """Laplace mechanism on a public grid: round to multiples of ``g``, add discrete Laplace.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : float, default=1.0
        The global **l1** sensitivity of the whole released vector (finite, > 0).

    Attributes
    ----------
    granularity : float
        The grid ``g = 2**(floor(log2(sensitivity / epsilon)) - 16)``: public
        (a function of the parameters only), a power of two, about 2**-16 of
        the noise scale.
    scale : float
        The nominal scale ``sensitivity / epsilon``; the noise actually used is
        slightly larger (:meth:`scale_for`).

    Notes
    -----
    **Releases** ``g * (round(value / g) + Z)``: multiples of ``g``, exact in
    float64.  Rounding each of ``k`` coordinates moves it by less than one
    grid unit, so the l1 sensitivity of the rounded vector in grid units is at
    most ``sensitivity / g + k``; ``Z`` is discrete Laplace with that scale
    over ``epsilon`` (:class:`DiscreteLaplaceMechanism`).  **Guarantee**: pure
    ``(epsilon, 0)``-DP, with exact sampling and outputs on a data-independent
    grid (the discretised-noise remedy for Mironov 2012).  The extra noise is
    a factor ``1 + k g / sensitivity <= 1 + k 2**-16 / epsilon``.  **Reference**: Dwork,
    McSherry, Nissim & Smith (2006); Canonne, Kamath & Steinke (2020).

    Examples
    --------
    >>> LaplaceMechanism(2.0, sensitivity=0.5).scale
    0.25
    """

    _parameter_constraints = {"epsilon": _POSITIVE, "sensitivity": _POSITIVE}

    def __init__(self, epsilon, sensitivity=1.0):
        self._set_params(epsilon=epsilon, sensitivity=sensitivity)
        object.__setattr__(self, "granularity",
                           2.0 ** (math.floor(math.log2(self.sensitivity / self.epsilon)) - GRID_OFFSET))

    @property
    def scale(self) -> float:
        """The nominal Laplace scale ``b = sensitivity / epsilon``."""
        return self.sensitivity / self.epsilon

    def scale_for(self, size: int) -> float:
        """The scale actually used for a vector of ``size`` values (in value units)."""
        return (self.sensitivity + size * self.granularity) / self.epsilon

    def randomise(self, value, rng):
        """Return ``value`` rounded to the grid plus discrete Laplace noise (one block draw).

        Parameters
        ----------
        value : float or array-like of finite floats
        rng : numpy.random.Generator

        Returns
        -------
        float or numpy.ndarray, same shape as ``value``; multiples of ``granularity``
        """
        return self._release(value, rng, "randomise", per_element=False)

    def randomise_each(self, value, rng):
        """Treat every element of ``value`` as a separate scalar release (one grid unit of rounding each).

        For simulations and audits that draw many independent releases of one
        value at once; each element costs ``epsilon`` on its own.
        """
        return self._release(value, rng, "randomise_each", per_element=True)

    def _release(self, value, rng, method: str, per_element: bool):
        """Round to the grid, add discrete Laplace at the scale of the whole vector or of one element."""
        owner = f"{type(self).__name__}.{method}"
        _check_rng(rng, owner)
        arr = _check_values(value, owner)
        g = self.granularity
        units = np.rint(arr / g)
        if np.any(np.abs(units) > 2.0 ** 52):
            raise InvalidParameterError(
                f"The 'value' parameter of {owner} is too large for the grid {g:g} of sensitivity "
                f"{self.sensitivity:g}: |value| must stay below {g * 2.0 ** 52:g}."
            )
        size = 1 if per_element else max(arr.size, 1)
        noise = discrete_laplace(self.scale_for(size) / g, arr.shape, rng)
        return _as_output((units.astype(np.int64) + noise) * g)
