"""Rényi DP of each privacy curve, and its conversion to (epsilon, delta).

The ``"rdp"`` accountant of :mod:`dpglass.privacy.accounting` composes
releases by adding their Rényi divergences at a fixed set of orders
(Mironov 2017, Prop. 1, adaptive composition) and converts the sum to
``(epsilon, delta)`` by the conversion of Canonne, Kamath & Steinke (2020,
Prop. 12; also Asoodeh et al. 2021)::

    epsilon(delta) = min_a  R(a) + log((a - 1) / a) - (log(delta) + log(a)) / (a - 1).

It exists for the one family the PLD accountant cannot express tightly: the
exponential mechanism, which is ``epsilon``-*bounded range* (Durfee & Rogers
2019) and hence ``epsilon**2 / 8``-zCDP (Cesar & Rogers 2021, Lemma 3.2),
four times less than the ``epsilon**2 / 2`` of a worst-case pure
``epsilon``-DP mechanism (Bun & Steinke 2016, Prop. 3.3).

Each function returns ``R(a)`` for an array of orders ``a > 1``; every value
is an upper bound on the order-``a`` Rényi divergence between the outputs
on neighbouring datasets, in both directions (docs/privacy.md, section
"Accounting").

Examples
--------
>>> import numpy as np
>>> a = np.array([2.0])
>>> float(gaussian(a, sigma=1.0, sensitivity=1.0)[0])
1.0
>>> round(to_epsilon(gaussian(ORDERS, sigma=4.0, sensitivity=1.0), 1e-6), 3)
1.143
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

__all__ = ["ORDERS", "bounded_range", "discrete_laplace", "gaussian", "laplace", "pure",
           "randomized_response", "to_epsilon"]

#: Orders at which divergences are added: dense near 1 (large epsilon) and
#: up to 4096 (small epsilon, many releases).
ORDERS = np.concatenate([1.0 + np.geomspace(1e-3, 1.0, 40, endpoint=False),
                         np.geomspace(2.0, 4096.0, 160)])


def pure(a: np.ndarray, epsilon: float) -> np.ndarray:
    """A pure epsilon-DP mechanism: the Rényi divergence of randomized response.

    Every epsilon-DP pair of output distributions is a post-processing of
    binary randomized response with parameter epsilon (Kairouz, Oh &
    Viswanath 2015, Thm 2.4), so by data processing its divergence at every
    order is at most RR's:
    ``log((e^(a eps) + e^((1 - a) eps)) / (1 + e^eps)) / (a - 1)``.
    """
    a = np.asarray(a, dtype=float)
    num = np.logaddexp(a * epsilon, (1.0 - a) * epsilon)
    return np.minimum((num - np.logaddexp(0.0, epsilon)) / (a - 1.0), epsilon)


def bounded_range(a: np.ndarray, epsilon: float) -> np.ndarray:
    """An epsilon-bounded-range mechanism (the exponential mechanism): ``a eps**2 / 8``, and never above pure."""
    a = np.asarray(a, dtype=float)
    return np.minimum(a * epsilon ** 2 / 8.0, pure(a, epsilon))


def gaussian(a: np.ndarray, sigma: float, sensitivity: float) -> np.ndarray:
    """Gaussian (continuous or discrete) noise of std ``sigma`` on l2 sensitivity ``sensitivity``: ``a s**2 / (2 sigma**2)``.

    Mironov 2017, Prop. 7; the discrete Gaussian satisfies the same bound
    (Canonne, Kamath & Steinke 2020, Prop. 5).
    """
    return np.asarray(a, dtype=float) * sensitivity ** 2 / (2.0 * sigma ** 2)


def laplace(a: np.ndarray, scale: float, sensitivity: float) -> np.ndarray:
    """Scalar Laplace noise of scale ``b`` on sensitivity ``s`` (Mironov 2017, Prop. 6), with ``l = b / s``.

    ``log(a/(2a-1) e^((a-1)/l) + (a-1)/(2a-1) e^(-a/l)) / (a - 1)``.
    """
    a = np.asarray(a, dtype=float)
    inv = sensitivity / scale
    t1 = np.log(a / (2 * a - 1)) + (a - 1) * inv
    t2 = np.log((a - 1) / (2 * a - 1)) - a * inv
    return np.minimum(np.logaddexp(t1, t2) / (a - 1), inv)


def discrete_laplace(a: np.ndarray, parameter: float, sensitivity: int) -> np.ndarray:
    """Discrete Laplace (pmf ∝ e^(-t|z|)) on an integer count of sensitivity ``k``: exact sum over the integers.

    With ``P`` centred at 0 and ``Q`` at ``k`` (symmetric, so both
    directions agree), ``sum_z p^a q^(1-a)`` splits into the two geometric
    tails ``z <= 0`` and ``z >= k`` and the ``k - 1`` points between.
    """
    a = np.asarray(a, dtype=float)
    t, k = float(parameter), int(sensitivity)
    log_c = math.log1p(-math.exp(-t)) - math.log1p(math.exp(-t))  # normaliser
    log_tail = -math.log1p(-math.exp(-t))  # sum_{j >= 0} e^(-t j)
    terms = [log_c + log_tail - t * (1 - a) * k,  # z <= 0
             log_c + log_tail - t * a * k]  # z >= k
    if k > 1:  # z = 1 .. k-1: log_c - t(1-a)k + t z (1-2a), a geometric sum with ratio r = e^(t(1-2a)) < 1
        log_r = t * (1 - 2 * a)
        log_mid = log_r + np.log(-np.expm1((k - 1) * log_r)) - np.log(-np.expm1(log_r))
        terms.append(log_c - t * (1 - a) * k + log_mid)
    return np.minimum(logsumexp(np.vstack(terms), axis=0) / (a - 1), t * k)


def randomized_response(a: np.ndarray, noise: float, buckets: int) -> np.ndarray:
    """k-ary randomized response: the true bucket with prob. ``1 - p``, else a uniform bucket (dp-accounting's convention)."""
    a = np.asarray(a, dtype=float)
    hi, lo = 1.0 - noise + noise / buckets, noise / buckets
    terms = [a * math.log(hi) + (1 - a) * math.log(lo), a * math.log(lo) + (1 - a) * math.log(hi)]
    if buckets > 2:
        terms.append(np.full_like(a, math.log((buckets - 2) * lo)))
    return logsumexp(np.vstack(terms), axis=0) / (a - 1)


def to_epsilon(rdp: np.ndarray, delta: float, orders: np.ndarray = ORDERS) -> float:
    """The smallest epsilon the conversion gives at ``delta`` over ``orders`` (CKS 2020, Prop. 12)."""
    a = np.asarray(orders, dtype=float)
    eps = rdp + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
    return float(max(np.min(eps), 0.0))
