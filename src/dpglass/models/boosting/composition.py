"""Composition of LazyBB's rounds under basic or advanced composition (public parameters only)."""

from __future__ import annotations

import math

__all__ = ["advanced_composition_epsilon", "per_round_epsilon"]


def advanced_composition_epsilon(epsilon_0: float, k: int, delta: float) -> float:
    """Advanced composition (Dwork, Rothblum, Vadhan 2010; Dwork & Roth 2014, Thm 3.20).

    ``k`` adaptively chosen ``epsilon_0``-DP mechanisms are together
    ``(eps, delta)``-DP with ``eps = sqrt(2 k ln(1/delta)) epsilon_0 + k epsilon_0 (e^epsilon_0 - 1)``.

    Examples
    --------
    >>> round(advanced_composition_epsilon(0.01, 100, 1e-5), 4)
    0.4899
    """
    return math.sqrt(2.0 * k * math.log(1.0 / delta)) * epsilon_0 + k * epsilon_0 * math.expm1(epsilon_0)


def per_round_epsilon(epsilon: float, delta: float, k: int) -> tuple[float, str]:
    """The largest per-round pure epsilon whose ``k``-fold composition fits ``(epsilon, delta)``.

    Returns ``(epsilon_0, composition)`` with ``composition`` ``"basic"``
    (``epsilon / k``, no delta spent) or ``"advanced"`` (bisection on
    :func:`advanced_composition_epsilon`, never above ``epsilon``).

    Examples
    --------
    >>> per_round_epsilon(1.0, 0.0, 10)
    (0.1, 'basic')
    >>> eps0, how = per_round_epsilon(1.0, 1e-5, 1000)
    >>> how, round(eps0, 5), advanced_composition_epsilon(eps0, 1000, 1e-5) <= 1.0
    ('advanced', 0.00633, True)
    """
    basic = epsilon / k
    if delta <= 0:
        return basic, "basic"
    lo, hi = 0.0, epsilon  # advanced(eps0) >= k*eps0^2 + ... is increasing; advanced(epsilon) > epsilon
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if advanced_composition_epsilon(mid, k, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    if lo > basic:
        return lo, "advanced"
    return basic, "basic"
