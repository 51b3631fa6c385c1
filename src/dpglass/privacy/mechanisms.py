"""Differentially private mechanisms: the only place dpglass draws privacy noise.

Every mechanism is a small immutable object built from its privacy parameters,
which are validated at construction.  Randomness comes only from the
:class:`numpy.random.Generator` passed as ``rng`` (see
:mod:`dpglass.privacy.rng`), and noise is drawn in one block per call.
``docs/privacy.md`` (section "Mechanisms") gives, for each mechanism, what it
releases, its guarantee, the proof or reference and the assumptions.

Noise adders
    :class:`LaplaceMechanism` (Dwork, McSherry, Nissim & Smith 2006),
    :class:`GaussianMechanism` (Dwork & Roth 2014, Thm A.1; Balle & Wang 2018),
    :class:`SmoothLaplaceMechanism` and :class:`SmoothCauchyMechanism`
    (Nissim, Raskhodnikova & Smith 2007, "NRS").
Selectors
    :class:`ExponentialMechanism` (McSherry & Talwar 2007),
    :class:`PermuteAndFlip` (McKenna & Sheldon 2020; Ding et al. 2021),
    :class:`ReportNoisyMax` (Dwork & Roth 2014, Claim 3.9).

Examples
--------
>>> import numpy as np
>>> mech = LaplaceMechanism(epsilon=0.5, sensitivity=1.0)
>>> mech
LaplaceMechanism(epsilon=0.5, sensitivity=1.0)
>>> mech.scale, mech.guarantee
(2.0, (0.5, 0.0))
>>> noisy = mech.randomise([10.0, 20.0], np.random.default_rng(0))
>>> noisy.shape
(2,)
>>> ExponentialMechanism(1.0, 1.0).probabilities([0.0, 0.0]).tolist()
[0.5, 0.5]
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np
from scipy import optimize, special

from dpglass._validation import InstanceOf, Interval, Options, validate_params
from dpglass.exceptions import InvalidParameterError

__all__ = [
    "sample_laplace",
    "sample_cauchy_like",
    "cauchy_like_cdf",
    "LaplaceMechanism",
    "GaussianMechanism",
    "ExponentialMechanism",
    "PermuteAndFlip",
    "ReportNoisyMax",
    "SmoothLaplaceMechanism",
    "SmoothCauchyMechanism",
]

_POSITIVE = [Interval(numbers.Real, 0, math.inf, "neither")]  # finite and > 0
_PROBABILITY = [Interval(numbers.Real, 0, 1, "neither")]
_GAMMA = [Interval(numbers.Real, 1, math.inf, "neither")]
_BOOL = [InstanceOf(bool, "a bool")]
_SIZE = [InstanceOf((numbers.Integral, tuple), "an int or a tuple of ints"), InstanceOf(type(None))]
_RNG = [InstanceOf(np.random.Generator, "a numpy.random.Generator (see dpglass.privacy.rng)")]

#: Largest candidate set for which :meth:`PermuteAndFlip.probabilities` runs
#: (its cost is quadratic in the number of candidates).
_MAX_EXACT_PF = 10_000


# ----------------------------------------------------------------- samplers
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


# ------------------------------------------------------------------ helpers
def _check_rng(rng, owner):
    if not isinstance(rng, np.random.Generator):
        validate_params({"rng": rng}, {"rng": _RNG}, owner)


def _describe(x) -> str:
    try:
        shape = np.shape(x) if not isinstance(x, str) else ()
    except ValueError:  # ragged nested sequence
        return f"a ragged sequence of length {len(x)}"
    return f"an array of shape {shape}" if math.prod(shape) > 10 else repr(x)


def _as_finite_array(x):
    if isinstance(x, (str, bytes)):
        return None
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return arr if np.isfinite(arr).all() else None


def _check_values(value, owner, name="value") -> np.ndarray:
    arr = _as_finite_array(value)
    if arr is None:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a finite number or an array of finite "
            f"numbers. Got {_describe(value)} instead."
        )
    return arr


def _check_scores(scores, owner, name) -> np.ndarray:
    arr = _as_finite_array(scores)
    if arr is None or arr.ndim != 1 or arr.size == 0:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a non-empty 1-d array of finite numbers. "
            f"Got {_describe(scores)} instead."
        )
    return arr


def _as_output(arr: np.ndarray):
    return float(arr) if arr.ndim == 0 else arr


class _Mechanism:
    """Shared plumbing: validation, immutability, ``repr`` and ``guarantee``."""

    _parameter_constraints: dict = {}
    delta = 0.0

    def _set_params(self, **params):
        validate_params(params, self._parameter_constraints, type(self).__name__)
        for name, value in params.items():
            if isinstance(value, numbers.Real) and not isinstance(value, bool):
                value = float(value)
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable; build a new mechanism instead.")

    def __repr__(self):
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._parameter_constraints)
        return f"{type(self).__name__}({args})"

    @property
    def guarantee(self) -> tuple[float, float]:
        """The ``(epsilon, delta)`` this mechanism satisfies (under its stated assumptions)."""
        return (self.epsilon, self.delta)


# ------------------------------------------------------------ noise adders
class LaplaceMechanism(_Mechanism):
    """Laplace mechanism: release ``value + Laplace(0, sensitivity/epsilon)`` per element.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : float, default=1.0
        The global **l1** sensitivity of the whole released vector (finite, > 0).

    Attributes
    ----------
    scale : float
        ``sensitivity / epsilon``.
    delta : float
        Always 0.

    Notes
    -----
    **Releases** the value(s) plus i.i.d. Laplace noise.  **Guarantee**: pure
    ``(epsilon, 0)``-DP when ``sensitivity`` bounds the l1 distance between the
    values on neighbouring datasets.  **Assumptions**: real-valued arithmetic;
    the floating-point sampler is not hardened against Mironov (2012).
    **Reference**: Dwork, McSherry, Nissim & Smith (2006); Dwork & Roth (2014),
    Thm 3.6.

    Examples
    --------
    >>> LaplaceMechanism(2.0, sensitivity=0.5).scale
    0.25
    """

    _parameter_constraints = {"epsilon": _POSITIVE, "sensitivity": _POSITIVE}

    def __init__(self, epsilon, sensitivity=1.0):
        self._set_params(epsilon=epsilon, sensitivity=sensitivity)

    @property
    def scale(self) -> float:
        """The Laplace scale ``b = sensitivity / epsilon``."""
        return self.sensitivity / self.epsilon

    def randomise(self, value, rng):
        """Return ``value`` plus one Laplace draw per element (one block draw).

        Parameters
        ----------
        value : float or array-like of finite floats
        rng : numpy.random.Generator

        Returns
        -------
        float or numpy.ndarray, same shape as ``value``
        """
        _check_rng(rng, f"{type(self).__name__}.randomise")
        arr = _check_values(value, f"{type(self).__name__}.randomise")
        return _as_output(arr + rng.laplace(0.0, self.scale, size=arr.shape))


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

    def randomise(self, value, rng):
        """Return ``value`` plus one N(0, sigma**2) draw per element (one block draw)."""
        _check_rng(rng, f"{type(self).__name__}.randomise")
        arr = _check_values(value, f"{type(self).__name__}.randomise")
        return _as_output(arr + rng.normal(0.0, self._sigma, size=arr.shape))


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


# ---------------------------------------------------------------- selectors
class _Selector(_Mechanism):
    _parameter_constraints = {"epsilon": _POSITIVE, "sensitivity": _POSITIVE, "monotonic": _BOOL}

    def __init__(self, epsilon, sensitivity, monotonic=False):
        self._set_params(epsilon=epsilon, sensitivity=sensitivity, monotonic=monotonic)

    @property
    def _rate(self) -> float:
        # epsilon / (2 sensitivity), or epsilon / sensitivity for monotone utilities
        return self.epsilon / ((1.0 if self.monotonic else 2.0) * self.sensitivity)


class ExponentialMechanism(_Selector):
    """Exponential mechanism: select index ``r`` with probability ∝ ``exp(eps u_r / (2 sens))``.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : float
        Bound on ``|u_r(D) - u_r(D')|`` for every candidate ``r`` and neighbours
        ``D, D'`` (finite, > 0).
    monotonic : bool, default=False
        If every utility moves in the same direction between any two
        neighbours, the factor 2 can be dropped: probability ∝ ``exp(eps u / sens)``.

    Notes
    -----
    **Releases** one index.  **Guarantee**: pure ``(epsilon, 0)``-DP under the
    sensitivity (and, if set, monotonicity) assumption; the candidate set must
    not depend on the data.  Sampling is exact via the Gumbel-max trick:
    ``argmax(eps u / (2 sens) + G)`` with i.i.d. standard Gumbel ``G``.
    **Reference**: McSherry & Talwar, "Mechanism design via differential
    privacy", FOCS 2007; Dwork & Roth (2014), Thm 3.10.

    Examples
    --------
    >>> em = ExponentialMechanism(epsilon=2 * np.log(3), sensitivity=1.0)
    >>> em.probabilities([0.0, 1.0]).round(6).tolist()
    [0.25, 0.75]
    """

    def probabilities(self, utilities) -> np.ndarray:
        """The exact selection probabilities (stable softmax)."""
        u = _check_scores(utilities, f"{type(self).__name__}.probabilities", "utilities")
        return special.softmax(self._rate * u)

    def select(self, utilities, rng) -> int:
        """Draw one index (one block of Gumbel noise)."""
        owner = f"{type(self).__name__}.select"
        _check_rng(rng, owner)
        u = _check_scores(utilities, owner, "utilities")
        return int(np.argmax(self._rate * u + rng.gumbel(size=u.size)))


class PermuteAndFlip(_Selector):
    """Permute-and-flip: pure-DP selection, never worse than the exponential mechanism.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : float
        Bound on ``|u_r(D) - u_r(D')|`` for every candidate (finite, > 0).
    monotonic : bool, default=False
        Monotone utilities allow ``eps / sens`` in place of ``eps / (2 sens)``.

    Attributes
    ----------
    scale : float
        Exponential noise scale ``2 sens / eps`` (``sens / eps`` if monotonic).

    Notes
    -----
    **Releases** one index.  **Guarantee**: pure ``(epsilon, 0)``-DP under the
    sensitivity (and monotonicity) assumption, for a data-independent
    candidate set.  McKenna & Sheldon ("Permute-and-flip: a new mechanism for
    differentially private selection", NeurIPS 2020) visit the candidates in a
    random order and accept ``r`` with probability
    ``exp(eps (u_r - max u) / (2 sens))``.  We draw from the identical output
    distribution as report-noisy-max with exponential noise of scale
    ``2 sens / eps`` (Ding, Kifer et al., "The permute-and-flip mechanism is
    identical to report-noisy-max with exponential noise", 2021), which is
    one vectorised block draw.

    Examples
    --------
    >>> pf = PermuteAndFlip(epsilon=1.0, sensitivity=1.0)
    >>> pf.scale
    2.0
    >>> pf.probabilities([0.0, 0.0]).round(12).tolist()
    [0.5, 0.5]
    """

    @property
    def scale(self) -> float:
        """The exponential noise scale ``1 / rate``."""
        return 1.0 / self._rate

    def select(self, utilities, rng) -> int:
        """Draw one index: ``argmax(u + Exponential(scale))`` (one block draw)."""
        owner = f"{type(self).__name__}.select"
        _check_rng(rng, owner)
        u = _check_scores(utilities, owner, "utilities")
        return int(np.argmax(u + rng.exponential(self.scale, size=u.size)))

    def probabilities(self, utilities) -> np.ndarray:
        """The exact selection probabilities (at most 10,000 candidates; cost O(n**2)).

        With ``c_i = exp(rate (u_i - max u))``,
        ``P(r) = c_r * integral_0^1 prod_{i != r} (1 - c_i t) dt``; the integrand is a
        polynomial of degree ``n - 1``, integrated exactly by Gauss-Legendre
        quadrature with ``ceil(n/2)`` nodes (positive terms only: no cancellation).
        """
        owner = f"{type(self).__name__}.probabilities"
        u = _check_scores(utilities, owner, "utilities")
        n = u.size
        if n > _MAX_EXACT_PF:
            raise InvalidParameterError(
                f"The 'utilities' parameter of {owner} must be an array of at most {_MAX_EXACT_PF} "
                f"candidates (the exact computation costs O(n**2)). Got {n} candidates instead."
            )
        c = np.exp(self._rate * (u - u.max()))
        nodes, weights = special.roots_legendre(max(1, (n + 1) // 2))
        t, w = (nodes + 1.0) / 2.0, weights / 2.0  # map [-1, 1] to [0, 1]
        probs = np.zeros(n)
        for start in range(0, t.size, 256):  # chunks of nodes keep memory O(256 n)
            log_factors = np.log1p(-np.outer(c, t[start:start + 256]))  # shape (n, chunk)
            log_all = log_factors.sum(axis=0)
            probs += np.exp(log_all - log_factors) @ w[start:start + 256]
        probs *= c
        return probs / probs.sum()  # removes rounding only: the exact sum is 1


class ReportNoisyMax(_Mechanism):
    """Report noisy max: ``argmax(scores + noise)``, with Laplace or exponential noise.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : float
        Bound on ``|s_r(D) - s_r(D')|`` for every candidate (finite, > 0).
    noise : {"laplace", "exponential"}, default="laplace"
    monotonic : bool, default=False
        Monotone scores (e.g. counts) allow scale ``sens / eps``; otherwise the
        scale is ``2 sens / eps``.

    Attributes
    ----------
    scale : float

    Notes
    -----
    **Releases** only the index of the noisy maximum (never the noisy values).
    **Guarantee**: pure ``(epsilon, 0)``-DP.  Laplace: Dwork & Roth (2014),
    Claim 3.9 (monotone counts, scale ``1/eps``); for general scores of
    sensitivity ``sens`` the same proof with the noise of the winner shifted by
    ``2 sens`` gives scale ``2 sens / eps``.  Exponential noise: identical to
    permute-and-flip (Ding, Kifer et al. 2021; McKenna & Sheldon 2020).  Ties
    have probability zero; ``argmax`` takes the first.

    Examples
    --------
    >>> ReportNoisyMax(1.0, 1.0).scale, ReportNoisyMax(1.0, 1.0, monotonic=True).scale
    (2.0, 1.0)
    """

    _parameter_constraints = {
        "epsilon": _POSITIVE,
        "sensitivity": _POSITIVE,
        "noise": [Options(("laplace", "exponential"))],
        "monotonic": _BOOL,
    }

    def __init__(self, epsilon, sensitivity, noise="laplace", monotonic=False):
        self._set_params(epsilon=epsilon, sensitivity=sensitivity, noise=noise, monotonic=monotonic)

    @property
    def scale(self) -> float:
        """``2 sens / eps``, or ``sens / eps`` for monotone scores."""
        return (1.0 if self.monotonic else 2.0) * self.sensitivity / self.epsilon

    def select(self, scores, rng) -> int:
        """Draw one index (one block of noise)."""
        owner = f"{type(self).__name__}.select"
        _check_rng(rng, owner)
        s = _check_scores(scores, owner, "scores")
        if self.noise == "laplace":
            noise = rng.laplace(0.0, self.scale, size=s.size)
        else:
            noise = rng.exponential(self.scale, size=s.size)
        return int(np.argmax(s + noise))
