"""Exact discrete Gaussian noise, by rational arithmetic (Canonne, Kamath & Steinke 2020).

The discrete Gaussian with scale ``sigma`` is the law on the integers with
``P[Z = z] ∝ exp(-z**2 / (2 sigma**2))``.  Adding it to an integer query of
l2 sensitivity ``k`` is ``k**2 / (2 sigma**2)``-zCDP (CKS 2020, Theorem 14),
the same Rényi curve as the continuous Gaussian, and its privacy loss
distribution is what dp-accounting's ``from_discrete_gaussian_mechanism``
composes.

How it is sampled (CKS 2020, Algorithms 1-3; this is our own code)
    * ``Bernoulli(exp(-g))`` for a rational ``g = p / q``: for ``g <= 1`` draw
      ``A_K ~ Bernoulli(g / K)``, ``K = 1, 2, ...``, until the first failure at
      ``K*``, and return whether ``K*`` is odd (Algorithm 1); for ``g > 1`` the
      AND of ``floor(g)`` draws of ``Bernoulli(exp(-1))`` and one of
      ``Bernoulli(exp(-(g - floor g)))``.  ``Bernoulli(p / q)`` is ``U < p``
      with ``U`` uniform on ``{0, ..., q - 1}``.
    * discrete Laplace with integer scale ``t`` (Algorithm 2): ``U`` uniform
      on ``{0..t-1}`` kept with probability ``exp(-U/t)``, ``V`` the number
      of successes of ``Bernoulli(exp(-1))`` before the first failure, magnitude
      ``U + t V``, a fair sign, and the pair (negative, 0) rejected.
    * discrete Gaussian (Algorithm 3): ``t = floor(sigma) + 1``; draw ``Y`` by
      the discrete Laplace of scale ``t``; keep it with probability
      ``exp(-(|Y| - sigma**2 / t)**2 / (2 sigma**2))``.

Every random decision compares uniform integers, drawn from the estimator's
:class:`numpy.random.Generator` only (``rng.integers`` for the bounds that fit
in 62 bits; larger bounds are concatenated 62-bit words with rejection).
``sigma**2`` is taken as an exact rational, rounded **up** to a multiple of
``2**-24`` (never less noise than asked), so the output law is exactly the
discrete Gaussian of that variance parameter: there is no floating-point
approximation anywhere.  Pure Python: about 20-60 microseconds a draw, meant
for the tens to thousands of draws a model makes.

Examples
--------
>>> import numpy as np
>>> z = discrete_gaussian(3.0, 20_000, np.random.default_rng(0))
>>> z.dtype, abs(float(z.mean())) < 0.1, 8.5 < float(z.var()) < 9.5
(dtype('int64'), True, True)
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from dpglass.exceptions import InvalidParameterError

__all__ = ["discrete_gaussian", "variance_parameter"]

#: sigma**2 is rounded up to a multiple of 2**-VARIANCE_BITS.
VARIANCE_BITS = 24
_WORD = 62
#: The largest sigma this sampler takes (the magnitudes stay far inside int64).
MAX_SIGMA = 2.0**30


def _uniform_below(m: int, rng: np.random.Generator) -> int:
    """A uniform integer on ``{0, ..., m - 1}`` (``m >= 1``), exactly."""
    if m <= 1 << _WORD:
        return int(rng.integers(0, m, dtype=np.int64))
    bits = (m - 1).bit_length()
    words = -(-bits // _WORD)
    while True:
        v = 0
        for _ in range(words):
            v = (v << _WORD) | int(rng.integers(0, 1 << _WORD, dtype=np.int64))
        v >>= words * _WORD - bits  # uniform on [0, 2**bits)
        if v < m:
            return v


def _bernoulli_exp_fraction(p: int, q: int, rng) -> bool:
    """``True`` with probability ``exp(-p/q)`` for ``0 <= p <= q`` (CKS Algorithm 1)."""
    k = 1
    while _uniform_below(k * q, rng) < p:
        k += 1
    return k % 2 == 1


def bernoulli_exp_rational(g: Fraction, rng) -> bool:
    """``True`` with probability exactly ``exp(-g)`` for a rational ``g >= 0``."""
    whole = g.numerator // g.denominator
    for _ in range(whole):
        if not _bernoulli_exp_fraction(1, 1, rng):
            return False
    rest = g - whole
    return _bernoulli_exp_fraction(rest.numerator, rest.denominator, rng)


def _discrete_laplace_int(t: int, rng) -> int:
    """``P[Z = z] ∝ exp(-|z| / t)`` for an integer ``t >= 1`` (CKS Algorithm 2)."""
    while True:
        u = _uniform_below(t, rng)
        if not _bernoulli_exp_fraction(u, t, rng):
            continue
        v = 0
        while _bernoulli_exp_fraction(1, 1, rng):
            v += 1
        mag = u + t * v
        negative = _uniform_below(2, rng) == 1
        if negative and mag == 0:
            continue
        return -mag if negative else mag


def variance_parameter(sigma: float) -> Fraction:
    """``sigma**2`` as an exact rational, rounded up to a multiple of ``2**-24``."""
    if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and 0 < sigma <= MAX_SIGMA):
        raise InvalidParameterError(
            f"The 'sigma' parameter of discrete_gaussian must be a finite number in (0, {MAX_SIGMA:g}]. "
            f"Got {sigma!r} instead.")
    exact = Fraction(sigma) ** 2
    scaled = exact * (1 << VARIANCE_BITS)
    return Fraction(-(-scaled.numerator // scaled.denominator), 1 << VARIANCE_BITS)


def _one(s: Fraction, t: int, rng) -> int:
    while True:
        y = _discrete_laplace_int(t, rng)
        if bernoulli_exp_rational((abs(y) - s / t) ** 2 / (2 * s), rng):
            return y


def discrete_gaussian(sigma: float, size, rng: np.random.Generator) -> np.ndarray:
    """Exact discrete Gaussian noise of scale ``sigma`` (variance parameter rounded up), int64.

    Parameters
    ----------
    sigma : float
        In ``(0, 2**30]``.
    size : int or tuple of int
    rng : numpy.random.Generator
    """
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError("The 'rng' parameter of discrete_gaussian must be a numpy.random.Generator.")
    s = variance_parameter(sigma)
    t = math.isqrt(s.numerator // s.denominator) + 1  # floor(sigma) + 1
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = math.prod(shape)
    return np.array([_one(s, t, rng) for _ in range(n)], dtype=np.int64).reshape(shape)
