"""Gaussian noise: the analytic Gaussian mechanism and the exact discrete Gaussian.

:class:`GaussianMechanism` (Balle & Wang 2018's analytic calibration) uses
NumPy's floating-point normal sampler.  dpglass uses it only inside a
selection whose noisy values are never released (the ``global-gaussian``
rule-list baseline, which releases the argmin); the floating-point caveat
for that use is in docs/privacy.md.

:class:`DiscreteGaussianMechanism` adds exact discrete Gaussian noise to
integer values (Canonne, Kamath & Steinke 2020), sampled by rational
arithmetic (:mod:`dpglass.privacy.discrete_gaussian`): integers out, so
nothing rides in floating-point bits.  It is what dpglass releases counts
with when a model is asked for Gaussian noise (``count_noise="gaussian"``).

Examples
--------
>>> round(GaussianMechanism(0.5, 1e-5, calibration="classic").scale, 4)
9.6896
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import optimize, special

from dpglass._validation import Options
from dpglass.exceptions import InvalidParameterError
from dpglass._validation import Interval
from dpglass.privacy.discrete_gaussian import MAX_SIGMA, discrete_gaussian
from dpglass.privacy.mechanisms._common import (
    _POSITIVE, _PROBABILITY, _Mechanism, _as_output, _check_integers, _check_rng, _check_values,
)

__all__ = ["DiscreteGaussianMechanism", "GaussianMechanism"]


def _gauss_term(eps, x):
    # e**eps * Phi(x), computed in log space so large eps does not overflow
    return np.exp(eps + special.log_ndtr(x))


def _analytic_gaussian_sigma(epsilon, delta, sensitivity) -> float:
    """Balle & Wang (2018), Algorithm 1, with Brent's method instead of bisection."""
    eps = epsilon

    def b_minus(v):  # increasing in v, from delta0 (v = 0) to 1
        return special.ndtr(math.sqrt(eps * v)) - _gauss_term(eps, -math.sqrt(eps * (v + 2.0)))

    def b_plus(u):  # decreasing in u, from delta0 (u = 0) to 0
        return special.ndtr(-math.sqrt(eps * u)) - _gauss_term(eps, -math.sqrt(eps * (u + 2.0)))

    delta0 = b_plus(0.0)
    if delta == delta0:
        alpha = 1.0
    else:
        if delta > delta0:
            func, sign = b_minus, 1.0
        else:
            func, sign = b_plus, -1.0
        hi = 1.0
        while sign * (func(hi) - delta) < 0:  # doubling trick of Algorithm 1
            hi *= 2.0
        s = optimize.brentq(lambda s: func(s) - delta, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps,
                            maxiter=500)
        alpha = math.sqrt(1.0 + s / 2.0) - sign * math.sqrt(s / 2.0)
    return alpha * sensitivity / math.sqrt(2.0 * eps)


class GaussianMechanism(_Mechanism):
    """Gaussian mechanism: release ``value + N(0, sigma**2)`` per element.

    Parameters
    ----------
    epsilon : float
        Finite, > 0 (and < 1 for ``calibration="classic"``).
    delta : float
        In (0, 1).
    sensitivity : float, default=1.0
        The global **l2** sensitivity of the whole released vector (finite, > 0).
    calibration : {"analytic", "classic"}, default="analytic"
        ``"analytic"``: the smallest sigma for which the mechanism is
        ``(epsilon, delta)``-DP, from the exact condition of Balle & Wang (2018),
        Thm 8, solved as in their Algorithm 1 (relative accuracy ~1e-12).
        ``"classic"``: ``sigma = sqrt(2 ln(1.25/delta)) * sensitivity / epsilon``,
        proven only for ``epsilon < 1`` (Dwork & Roth 2014, Thm A.1).

    Attributes
    ----------
    scale : float
        The noise standard deviation sigma.

    Notes
    -----
    **Releases** the value(s) plus i.i.d. Gaussian noise.  **Guarantee**:
    ``(epsilon, delta)``-DP when ``sensitivity`` bounds the l2 distance between
    the values on neighbouring datasets.  **Assumptions**: real arithmetic;
    NumPy's floating-point normal sampler.  **References**: Dwork & Roth (2014),
    Thm A.1; Balle & Wang, "Improving the Gaussian mechanism for differential
    privacy: analytical calibration and optimal denoising", ICML 2018.

    Examples
    --------
    >>> round(GaussianMechanism(0.5, 1e-5, calibration="classic").scale, 4)
    9.6896
    >>> GaussianMechanism(0.5, 1e-5).scale < 9.6896
    True
    """

    _parameter_constraints = {
        "epsilon": _POSITIVE,
        "delta": _PROBABILITY,
        "sensitivity": _POSITIVE,
        "calibration": [Options(("analytic", "classic"))],
    }

    def __init__(self, epsilon, delta, sensitivity=1.0, calibration="analytic"):
        self._set_params(epsilon=epsilon, delta=delta, sensitivity=sensitivity, calibration=calibration)
        if self.calibration == "classic":
            if not self.epsilon < 1.0:
                raise InvalidParameterError(
                    f"The 'epsilon' parameter of GaussianMechanism must be a float in the range (0, 1) "
                    f"when calibration='classic' (Dwork & Roth 2014, Thm A.1). Got {epsilon!r} instead. "
                    "Use calibration='analytic', which is exact for every epsilon."
                )
            sigma = math.sqrt(2.0 * math.log(1.25 / self.delta)) * self.sensitivity / self.epsilon
        else:
            sigma = _analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        object.__setattr__(self, "_sigma", float(sigma))

    @property
    def scale(self) -> float:
        """The noise standard deviation sigma."""
        return self._sigma

    @property
    def curve(self) -> dict:
        """The Gaussian privacy curve (Balle & Wang 2018, Thm 8) at this sigma and l2 sensitivity."""
        return {"kind": "gaussian", "sigma": self._sigma, "sensitivity": self.sensitivity}

    def randomise(self, value, rng):
        """Return ``value`` plus one N(0, sigma**2) draw per element (one block draw)."""
        _check_rng(rng, f"{type(self).__name__}.randomise")
        arr = _check_values(value, f"{type(self).__name__}.randomise")
        return _as_output(arr + rng.normal(0.0, self._sigma, size=arr.shape))




def zcdp_epsilon(sigma: float, sensitivity: float, delta: float) -> float:
    """The epsilon at ``delta`` of a ``sensitivity**2 / (2 sigma**2)``-zCDP release (CKS 2020, Prop. 12)."""
    from dpglass.privacy import rdp

    return rdp.to_epsilon(rdp.gaussian(rdp.ORDERS, sigma, sensitivity), delta)


class DiscreteGaussianMechanism(_Mechanism):
    """Release ``value + Z`` for integer values, ``P[Z = z] ∝ exp(-z**2 / (2 sigma**2))`` per element.

    Parameters
    ----------
    sigma : float
        The noise scale, in ``(0, 2**30]``.
    delta : float
        In (0, 1): the delta at which :attr:`epsilon` is stated.
    sensitivity : int, default=1
        The **l2** sensitivity of the whole released integer vector (an
        integer >= 1; a class-count pair where one record moves one cell has 1).

    Attributes
    ----------
    epsilon : float
        The epsilon of the release at ``delta``, from its zCDP curve.

    Notes
    -----
    **Releases** integers.  **Guarantee**: ``rho``-zCDP with ``rho =
    sensitivity**2 / (2 sigma**2)`` (Canonne, Kamath & Steinke 2020, "The
    discrete Gaussian for differential privacy", Thm 14), hence ``(epsilon,
    delta)``-DP with ``epsilon`` from the conversion of their Prop. 12 (the
    ledger's :attr:`curve` lets an accountant compose it tightly instead).
    **Assumptions**: the sampler is exact (rational arithmetic, uniform
    integers from ``rng``), with ``sigma**2`` rounded up to a multiple of
    2**-24, i.e. never less noise than stated.

    Examples
    --------
    >>> import numpy as np
    >>> mech = DiscreteGaussianMechanism(4.0, 1e-6)
    >>> round(mech.epsilon, 3)
    1.143
    >>> mech.randomise([10, 20], np.random.default_rng(0)).dtype
    dtype('int64')
    """

    _parameter_constraints = {
        "sigma": [Interval(numbers.Real, 0, MAX_SIGMA, "right")],
        "delta": _PROBABILITY,
        "sensitivity": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, sigma, delta, sensitivity=1):
        self._set_params(sigma=sigma, delta=delta, sensitivity=sensitivity)
        object.__setattr__(self, "sensitivity", int(self.sensitivity))
        object.__setattr__(self, "epsilon", zcdp_epsilon(self.sigma, self.sensitivity, self.delta))

    @property
    def scale(self) -> float:
        """The noise scale sigma."""
        return self.sigma

    @property
    def curve(self) -> dict:
        """The discrete Gaussian curve at this sigma and l2 sensitivity."""
        return {"kind": "discrete-gaussian", "sigma": self.sigma, "sensitivity": self.sensitivity}

    def randomise(self, value, rng):
        """``value + Z`` (int64, same shape); ``value`` must be integer-valued."""
        owner = f"{type(self).__name__}.randomise"
        _check_rng(rng, owner)
        arr = _check_integers(value, owner)
        out = arr.astype(np.int64) + discrete_gaussian(self.sigma, arr.shape or (), rng)
        return out if out.ndim else int(out)
