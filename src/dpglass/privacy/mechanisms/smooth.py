"""Noise scaled to a smooth sensitivity (Nissim, Raskhodnikova & Smith 2007).

:class:`SmoothLaplaceMechanism` and :class:`SmoothCauchyMechanism`, with the
exact sampler of the NRS density ``h(z) ∝ 1 / (1 + |z|**gamma)``.  dpglass
uses them only inside paper 001's sm-Laplace / sm-Cauchy selections, whose
noisy values are never released and whose accounting is a ``paper-claim``
(docs/privacy.md).  Their noise is floating point.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.mechanisms._common import (
    _GAMMA, _POSITIVE, _PROBABILITY, _RNG, _SIZE, _Mechanism, _as_finite_array, _as_output, _check_rng,
    _check_values, _describe,
)
from dpglass._validation import validate_params

__all__ = ["SmoothLaplaceMechanism", "SmoothCauchyMechanism", "sample_cauchy_like", "cauchy_like_cdf"]


def _log_standard_gamma(shape, size, rng) -> np.ndarray:
    # log of a Gamma(shape, 1) draw for shape in (0, 1), without underflow:
    # G_shape = G_{shape+1} * U**(1/shape) (Marsaglia & Tsang 2000).
    return np.log(rng.standard_gamma(shape + 1.0, size=size)) + np.log1p(-rng.random(size=size)) / shape


def sample_cauchy_like(gamma, size, rng) -> np.ndarray:
    """Draw from the density ``h(z) ∝ 1 / (1 + |z|**gamma)`` of NRS 2007, exactly.

    ``|Z|**gamma`` follows the beta-prime law ``BetaPrime(1/gamma, 1 - 1/gamma)``:
    ``|Z| = (B / (1 - B))**(1/gamma)`` with ``B ~ Beta(1/gamma, 1 - 1/gamma)``,
    and the sign is an independent fair coin.  ``B / (1 - B)`` is drawn as the
    ratio ``G_a / G_b`` of independent ``Gamma(a, 1)``, ``Gamma(b, 1)`` variables
    (``a = 1/gamma``, ``b = 1 - 1/gamma``), which has the same law, in log space
    so that no draw underflows.  No root finding, no Python loop.

    Parameters
    ----------
    gamma : float
        Tail exponent, finite and > 1 (``gamma = 2`` is the standard Cauchy).
    size : int, tuple of ints or None
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray of float64

    Notes
    -----
    Proof (change of variables): ``|Z|`` has density ``∝ 1/(1+t**gamma)`` on
    ``t > 0``.  With ``w = t**gamma``, ``dt = w**(1/gamma - 1) dw / gamma``, so
    ``W = |Z|**gamma`` has density ``∝ w**(1/gamma - 1) / (1 + w)``, which is the
    beta-prime density ``w**(a-1) (1+w)**(-a-b)`` with ``a = 1/gamma``,
    ``a + b = 1``.  Finally ``B = W/(1+W) ~ Beta(a, b)`` and
    ``G_a/(G_a+G_b) ~ Beta(a, b)``.  For ``gamma`` close to 1 the law has so
    much mass beyond 1e308 that some draws are ``±inf``.

    Examples
    --------
    >>> z = sample_cauchy_like(4.0, 3, np.random.default_rng(0))
    >>> z.shape
    (3,)
    """
    validate_params({"gamma": gamma, "size": size, "rng": rng},
                    {"gamma": _GAMMA, "size": _SIZE, "rng": _RNG}, "sample_cauchy_like")
    g = float(gamma)
    a, b = 1.0 / g, 1.0 - 1.0 / g
    log_w = _log_standard_gamma(a, size, rng) - _log_standard_gamma(b, size, rng)
    with np.errstate(over="ignore"):
        modulus = np.exp(log_w / g)
    sign = np.where(rng.random(size=size) < 0.5, -1.0, 1.0)
    return np.asarray(sign * modulus, dtype=np.float64)


def cauchy_like_cdf(x, gamma) -> np.ndarray:
    """Exact CDF of the density ``h(z) ∝ 1 / (1 + |z|**gamma)``.

    ``P(Z <= -t) = I_{1/(1+t**gamma)}(1 - 1/gamma, 1/gamma) / 2`` for ``t >= 0``,
    with ``I`` the regularised incomplete beta function (from the beta-prime
    law of ``|Z|**gamma``, see :func:`sample_cauchy_like`); the law is
    symmetric.

    Examples
    --------
    >>> cauchy_like_cdf([0.0, 1.0], 2.0).round(6).tolist()  # standard Cauchy
    [0.5, 0.75]
    """
    validate_params({"gamma": gamma}, {"gamma": _GAMMA}, "cauchy_like_cdf")
    g = float(gamma)
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        tail = 0.5 * special.betainc(1.0 - 1.0 / g, 1.0 / g, 1.0 / (1.0 + np.abs(x) ** g))
    return np.where(x < 0, tail, 1.0 - tail)


def _laplace_dilation_delta(epsilon, beta) -> float:
    """Worst failure probability of the NRS dilation property for Lap(1), |lambda| <= beta.

    The hockey-stick divergence ``sup_S P[Z in S] - e**(eps/2) P[Z in e**lam S]``
    in closed form; it increases with ``|lambda|`` so ``lambda = ±beta`` is the
    worst case.  For ``lambda > 0`` the bad set is ``|z| > t`` with
    ``t = (eps/2 + lam) / (e**lam - 1)`` and the divergence simplifies to
    ``e**-t (1 - e**-lam)``; for ``lambda < 0`` it is ``|z| < s`` with
    ``s = (|lam| - eps/2) / (1 - e**-|lam|)`` (empty when ``|lam| <= eps/2``).
    """
    half, beta = np.float64(epsilon) / 2.0, np.float64(beta)
    with np.errstate(over="ignore", invalid="ignore"):  # huge epsilon overflows: see below
        grow = np.exp(-(half + beta) / np.expm1(beta)) * -np.expm1(-beta)
        shrink = 0.0
        if beta > half:
            s = (beta - half) / -np.expm1(-beta)
            shrink = -np.expm1(-s) + np.exp(half) * np.expm1(-s * np.exp(-beta))
    # inf * 0 (only for epsilon > 1400, refused anyway) counts as a failure
    shrink = 1.0 if np.isnan(shrink) else min(max(shrink, 0.0), 1.0)
    return float(max(grow, shrink))


@functools.lru_cache(maxsize=256)
def _smooth_laplace_max_epsilon(delta: float) -> float:
    """Bisection for the admissibility limit of smooth Laplace (valid below 2 always)."""
    if not 0 < delta < 1:
        raise InvalidParameterError(f"delta must be in (0, 1); got {delta!r}.")
    ok = lambda e: _laplace_dilation_delta(e, e / (2.0 * math.log(2.0 / delta))) <= delta / 2.0
    lo, hi = 2.0, 2.0
    while ok(hi) and hi < 1e3:
        lo, hi = hi, hi * 2
    if ok(hi):
        return hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


class _SmoothMechanism(_Mechanism):
    """Noise scaled to a smooth sensitivity: ``value + (factor * S / epsilon) * Z``.

    Subclasses set ``_factor`` (via the property) and draw standard noise in
    ``_noise(shape, rng)``.
    """

    @property
    def _factor(self) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def _noise(self, shape, rng):  # pragma: no cover - overridden
        raise NotImplementedError

    def scale(self, smooth_sensitivity):
        """The noise scale ``factor * smooth_sensitivity / epsilon`` (float or array)."""
        s = _check_smooth(smooth_sensitivity, f"{type(self).__name__}.scale")
        return _as_output(self._factor * s / self.epsilon)

    def randomise(self, value, smooth_sensitivity, rng):
        """Return ``value + scale(smooth_sensitivity) * Z``, one draw per element.

        ``smooth_sensitivity`` is a scalar or an array broadcastable to ``value``.
        """
        owner = f"{type(self).__name__}.randomise"
        _check_rng(rng, owner)
        arr = _check_values(value, owner)
        s = _check_smooth(smooth_sensitivity, owner)
        shape = np.broadcast_shapes(arr.shape, s.shape)
        scale = np.broadcast_to(self._factor * s / self.epsilon, shape)
        noise = self._noise(shape, rng)
        with np.errstate(invalid="ignore"):  # 0 * inf (heavy tails) means no noise, not nan
            return _as_output(arr + np.where(scale > 0, scale * noise, 0.0))


class SmoothLaplaceMechanism(_SmoothMechanism):
    """Smooth-sensitivity Laplace mechanism: ``value + (2 S / epsilon) * Lap(1)``.

    Parameters
    ----------
    epsilon : float
        Finite, > 0, and small enough for the admissibility check below
        (always passes for ``epsilon <= 2``).
    delta : float
        In (0, 1).

    Attributes
    ----------
    beta : float
        ``epsilon / (2 ln(2/delta))``: the smoothness the caller's bound must have.

    Notes
    -----
    **Releases** ``f(D) + 2 S(D)/epsilon * Z``, ``Z ~ Lap(1)`` per element.
    **Guarantee**: ``(epsilon, delta)``-DP.  **Assumption** (the caller's
    obligation, not checkable here): ``S`` is a ``beta``-smooth upper bound on
    the local sensitivity of ``f`` for this mechanism's ``beta`` (NRS 2007,
    Def. 2.1: ``S(D) >= LS_f(D)`` and ``S(D) <= e**beta S(D')`` for neighbours),
    with the local sensitivity in the l1 norm of the released vector.
    **Reference**: Nissim, Raskhodnikova & Smith, "Smooth sensitivity and
    sampling in private data analysis", STOC 2007, Lemma 2.6 with the Laplace
    admissibility constants ``(alpha, beta) = (epsilon/2, epsilon/(2 ln(2/delta)))``
    (as in paper 001, Sec. III-C).  Those constants make Laplace noise
    admissible (NRS Def. 2.5) only for moderate epsilon: the dilation property
    fails for ``epsilon > 2.72`` when ``delta`` is close to 1 and for
    ``epsilon > 9.12`` when ``delta = 1e-6``, and for large epsilon the
    mechanism is really not ``(epsilon, delta)``-DP (at ``epsilon = 20,
    delta = 1e-6`` a neighbouring pair reaches ``delta ≈ 5e-6``).  The
    constructor therefore checks admissibility in closed form and refuses
    parameters where it fails.  Arrays are a vectorised convenience: each
    element is a separate one-dimensional release with its own bound ``S``,
    costing ``(epsilon, delta)`` each (NRS's constants for d-dimensional
    noise are smaller and are not implemented).  See docs/privacy.md.

    Examples
    --------
    >>> mech = SmoothLaplaceMechanism(1.0, 1e-6)
    >>> round(mech.beta, 6), mech.scale(0.1)
    (0.034462, 0.2)
    """

    _parameter_constraints = {"epsilon": _POSITIVE, "delta": _PROBABILITY}

    def __init__(self, epsilon, delta):
        self._set_params(epsilon=epsilon, delta=delta)
        object.__setattr__(self, "beta", self.epsilon / (2.0 * math.log(2.0 / self.delta)))
        if _laplace_dilation_delta(self.epsilon, self.beta) > self.delta / 2.0:
            raise InvalidParameterError(
                f"The 'epsilon' parameter of SmoothLaplaceMechanism must be small enough for Laplace "
                f"noise to be (epsilon/2, beta)-admissible at delta={self.delta!r} (NRS 2007, Def. 2.5; "
                f"always true for epsilon <= 2). Got {epsilon!r} instead. Spend less epsilon per "
                "release or use SmoothCauchyMechanism (pure DP for every epsilon)."
            )

    @staticmethod
    def max_epsilon(delta) -> float:
        """The largest epsilon the admissibility check accepts at this ``delta``.

        Calibrating to a smaller epsilon than one may spend is always valid, so
        callers with a large per-release budget can use
        ``min(epsilon, SmoothLaplaceMechanism.max_epsilon(delta))``.

        Examples
        --------
        >>> 9.0 < SmoothLaplaceMechanism.max_epsilon(1e-6) < 9.2
        True
        """
        return _smooth_laplace_max_epsilon(float(delta))

    _factor = 2.0  # scale 2 S / epsilon

    def _noise(self, shape, rng):
        return rng.laplace(0.0, 1.0, size=shape)


def _check_smooth(s, owner) -> np.ndarray:
    arr = _as_finite_array(s)
    if arr is None or not (arr >= 0).all():
        raise InvalidParameterError(
            f"The 'smooth_sensitivity' parameter of {owner} must be a finite number >= 0 or an array "
            f"of them. Got {_describe(s)} instead."
        )
    return arr


class SmoothCauchyMechanism(_SmoothMechanism):
    """Smooth-sensitivity Cauchy mechanism: ``value + (2 (gamma+1) S / epsilon) * Z``.

    ``Z`` has density ``h(z) ∝ 1 / (1 + |z|**gamma)`` (:func:`sample_cauchy_like`).

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    gamma : float, default=4.0
        Tail exponent, finite and > 1.  Larger gamma: lighter tails (finite
        variance needs gamma > 3) but a smaller beta.

    Attributes
    ----------
    beta : float
        ``epsilon / (2 (gamma + 1))``.

    Notes
    -----
    **Releases** ``f(D) + 2 (gamma+1) S(D)/epsilon * Z`` per element.  Arrays
    are a vectorised convenience: each element is a separate one-dimensional
    release costing ``epsilon`` (the constants are the one-dimensional ones).
    **Guarantee**: pure ``(epsilon, 0)``-DP.
    **Assumption** (the caller's obligation): ``S`` is a ``beta``-smooth upper
    bound on the local sensitivity of ``f`` for this mechanism's ``beta``.
    **Reference**: NRS 2007, Lemma 2.6 with the admissibility of ``h`` at
    ``alpha = beta = epsilon/(2(gamma+1))`` (Lemma 2.7 as stated in paper 001,
    Sec. III-C).  We re-derived these constants: sliding by ``|Delta| <= alpha``
    costs at most ``gamma * alpha < epsilon/2`` and dilation by ``|lambda| <=
    beta`` at most ``max(1, gamma-1) * beta < epsilon/2``; see docs/privacy.md.

    Examples
    --------
    >>> mech = SmoothCauchyMechanism(1.0, gamma=4.0)
    >>> mech.beta, mech.scale(0.1)
    (0.1, 1.0)
    """

    _parameter_constraints = {"epsilon": _POSITIVE, "gamma": _GAMMA}

    def __init__(self, epsilon, gamma=4.0):
        self._set_params(epsilon=epsilon, gamma=gamma)
        object.__setattr__(self, "beta", self.epsilon / (2.0 * (self.gamma + 1.0)))

    @property
    def _factor(self) -> float:  # scale 2 (gamma + 1) S / epsilon
        return 2.0 * (self.gamma + 1.0)

    def _noise(self, shape, rng):
        return sample_cauchy_like(self.gamma, shape, rng)


