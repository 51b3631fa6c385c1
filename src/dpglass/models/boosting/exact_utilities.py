"""DP-1R's utilities known exactly, and their one rounding to float64 (docs/privacy.md, "Exact utilities").

A stump's utility is minus its mu-weighted error, ``u(h) = -sum_l mu_l E_l(h)``: ``E_l(h)`` the integer count of
records of margin level ``l`` it errs on, ``mu_l`` the level's projected measure, an exact rational
(:func:`~dpglass.models.boosting.smooth_measure.level_weights_exact`).  :class:`ExactUtilities` holds every
``u(h)`` as an integer over one common denominator, so nothing is rounded until the exponential mechanism needs
floats: :meth:`ExactUtilities.centred` gives ``max(u(h) - max u, -STUMP_FLOOR / rate)``, each rounded once to the
nearest float64.  That rounding moves a utility by at most half an ulp of a number of magnitude at most
``STUMP_FLOOR / rate``, i.e. by less than ``2**-52 * STUMP_FLOOR / rate``; the mechanism pays it with
:data:`ROUNDING_EPSILON` of its epsilon (two utilities, each moved once, on either side of a neighbouring pair:
``2 rate * 2 * 2**-52 * 2**9 / rate = 2**-41``), whatever n.  The floor is a maximum of sensitivity-1 functions
(sensitivity 1) and changes a selection probability by at most ``exp(-512)`` relative.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["ExactUtilities", "ROUNDING_EPSILON", "STUMP_FLOOR", "as_exact"]

#: The stumps' selection floors ``rate * (max u - u)`` at this many nats (public): the rounded utilities then
#: have magnitude at most ``STUMP_FLOOR / rate``, and their rounding error a bound independent of n.
STUMP_FLOOR = 2.0**9
#: The share of a stump round's epsilon that pays for rounding the centred utilities once each:
#: ``2 * 2 * 2**-52 * STUMP_FLOOR = 2**-41`` (public; beside the samplers' 2**-39 for their exponent grid).
ROUNDING_EPSILON = 2.0**-41

_INT_LIMIT = 2.0**53


class ExactUtilities:
    """Utilities ``numerators[h] / denominator``, exactly (Python integers)."""

    def __init__(self, numerators, denominator: int):
        self.numerators = [int(v) for v in numerators]
        self.denominator = int(denominator)
        if self.denominator <= 0:
            raise ValueError("the denominator of exact utilities must be positive")

    def __len__(self) -> int:
        return len(self.numerators)

    @classmethod
    def of_levels(cls, mu, counts) -> ExactUtilities:
        """``u(h) = sum_l mu[l] * counts[l, h]``: ``mu`` exact rationals (one per level), ``counts`` integers
        (float64 holding exact integers below 2**53, shape (levels, candidates))."""
        counts = np.asarray(counts, dtype=np.float64)
        if counts.ndim != 2 or counts.shape[0] != len(mu):
            raise ValueError(f"counts of shape {counts.shape} for {len(mu)} levels")
        if not (np.all(np.abs(counts) < _INT_LIMIT) and np.all(counts == np.trunc(counts))):
            raise ValueError("the counts of an exact contraction must be integers below 2**53")
        fractions = [Fraction(m) for m in mu]
        den = math.lcm(1, *(f.denominator for f in fractions))
        weights = np.array([f.numerator * (den // f.denominator) for f in fractions], dtype=object)
        numerators = weights @ counts.astype(np.int64).astype(object) if len(fractions) else ()
        return cls(numerators if len(fractions) else [0] * counts.shape[1], den)

    @classmethod
    def of_floats(cls, values) -> ExactUtilities:
        """The floats' exact values (a float is a dyadic rational)."""
        fractions = [Fraction(float(v)) for v in np.asarray(values, dtype=np.float64).ravel()]
        den = math.lcm(1, *(f.denominator for f in fractions))
        return cls([f.numerator * (den // f.denominator) for f in fractions], den)

    def plus(self, offsets) -> ExactUtilities:
        """``u(h) + offsets[h]`` exactly (public float offsets, e.g. a base measure's ``log(N pi_h) / rate``)."""
        other = ExactUtilities.of_floats(offsets)
        if len(other) != len(self):
            raise ValueError(f"{len(other)} offsets for {len(self)} utilities")
        den = math.lcm(self.denominator, other.denominator)
        a, b = den // self.denominator, den // other.denominator
        return ExactUtilities([u * a + v * b for u, v in zip(self.numerators, other.numerators)], den)

    def centred(self, rate: float) -> np.ndarray:
        """``max(u(h) - max u, -STUMP_FLOOR / rate)`` for every h, each rounded once to the nearest float64.

        Exact until then: the gaps are integers, the comparison with the floor is exact, and the division of
        Python integers is correctly rounded.  The maximisers get exactly 0.0."""
        top = max(self.numerators)
        rn, rd = Fraction(float(rate)).as_integer_ratio()
        fn, fd = Fraction(STUMP_FLOOR).as_integer_ratio()
        limit = fn * rd * self.denominator  # gap / den > floor / rate  <=>  gap * rn * fd > fn * rd * den
        floor = -((fn * rd) / (fd * rn))  # -STUMP_FLOOR / rate, correctly rounded
        out = [0.0 if g == 0 else (floor if g * rn * fd > limit else -(g / self.denominator))
               for g in (top - v for v in self.numerators)]
        return np.array(out, dtype=np.float64)


def as_exact(utilities) -> ExactUtilities:
    """``utilities`` if already exact, else the exact values of its floats (a weak learner run on arrays)."""
    return utilities if isinstance(utilities, ExactUtilities) else ExactUtilities.of_floats(utilities)
