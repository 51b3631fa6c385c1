"""Sensitivity of the weighted Gini impurity: global, local and smooth.

A rule splits the ``n`` records that remain to be classified into those it
catches and those it leaves; the split has counts ``(a, b, c, d)`` = (caught
positives, caught negatives, left positives, left negatives).  Its weighted Gini
impurity (paper 001, eqs. (1)-(2)) is

.. math::

    G = \\frac{a+b}{n}\\,\\mathrm{gini}(a, b) + \\frac{c+d}{n}\\,\\mathrm{gini}(c, d)
      = \\frac{2}{n}\\Big(\\frac{ab}{a+b} + \\frac{cd}{c+d}\\Big),

with ``gini(p, q) = 1 - (p/(p+q))**2 - (q/(p+q))**2`` (0 for an empty side) and
``G = 0`` for ``n = 0``.  Neighbouring datasets differ by adding or removing one
record.

Write ``g(x) = 1 - (x/(x+1))**2 - (1/(x+1))**2 = 2x/(x+1)**2``.

* :data:`GINI_GLOBAL_SENSITIVITY` is 0.5.
* :func:`gini_local_sensitivity` is the largest change of ``G`` between a
  dataset of ``n`` records and a neighbour, over all datasets of ``n`` records:
  ``g(n-1) = 2(n-1)/n**2`` for ``n >= 2`` (removing a record is the worst case),
  0.5 for ``n = 1``.  Paper 001 (Theorem IV.1) uses ``g(n)``, which covers
  additions only and is too small; it is kept as ``variant="paper"`` for
  reproductions.
* :func:`gini_smooth_sensitivity` is the beta-smooth sensitivity of that bound on
  datasets of at least ``min_support`` records, computed in closed form.

The proofs, the counterexample to the paper and the derivation of the closed
form are in ``docs/privacy.md`` (section "Sensitivity of the Gini impurity").
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from dpglass._validation import Interval, Options, validate_params

__all__ = [
    "GINI_GLOBAL_SENSITIVITY",
    "weighted_gini",
    "gini_local_sensitivity",
    "gini_smooth_sensitivity",
]

#: Global sensitivity of the weighted Gini impurity under adding or removing one
#: record: its largest possible change, reached between 1 and 2 records
#: (``(1, 0, 0, 0)`` has ``G = 0``, ``(1, 1, 0, 0)`` has ``G = 0.5``).
GINI_GLOBAL_SENSITIVITY = 0.5

_VARIANTS = ("corrected", "paper")


@dataclass(frozen=True)
class _ArrayOf:
    """A non-empty-or-empty array-like whose entries all satisfy a condition.

    ``kind`` is ``"nonneg-int"`` (integer dtype, entries >= 0),
    ``"pos-finite"`` (real dtype, finite entries > 0) or ``"nonneg-finite"``
    (real dtype, finite entries >= 0).  Scalars are left to :class:`Interval`.
    """

    kind: str

    def accepts(self, value) -> bool:
        if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
            return False
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):  # ragged nested lists
            return False
        if self.kind == "nonneg-int":
            return arr.dtype.kind in "iu" and not (arr.size and arr.min() < 0)
        if arr.dtype.kind not in "iuf":
            return False
        if arr.size == 0:
            return True
        if not np.isfinite(arr).all():
            return False
        return bool(arr.min() > 0) if self.kind == "pos-finite" else bool(arr.min() >= 0)

    def __str__(self) -> str:
        return {
            "nonneg-int": "an array of ints in the range [0, inf)",
            "pos-finite": "an array of floats in the range (0, inf)",
            "nonneg-finite": "an array of floats in the range [0, inf)",
        }[self.kind]


_N_CONSTRAINT = [Interval(numbers.Integral, 0, None, "left"), _ArrayOf("nonneg-int")]
_BETA_CONSTRAINT = [Interval(numbers.Real, 0, math.inf, "neither"), _ArrayOf("pos-finite")]
_COUNT_CONSTRAINT = [Interval(numbers.Real, 0, math.inf, "left"), _ArrayOf("nonneg-finite")]
_MIN_SUPPORT_CONSTRAINT = [Interval(numbers.Integral, 1, None, "left")]
_VARIANT_CONSTRAINT = [Options(_VARIANTS)]


def _as_float(value) -> np.ndarray:
    """float64 array of a validated number or array (exact for ints < 2**53)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, np.generic):
        return np.asarray(float(value))  # Python ints beyond int64
    return np.asarray(value, dtype=np.float64)


def _out(result: np.ndarray, *inputs):
    """A Python float when every input is a scalar, else the array."""
    if all(np.ndim(x) == 0 and not isinstance(x, np.ndarray) for x in inputs):
        return float(result)
    return result


def _g(x: np.ndarray) -> np.ndarray:
    """``g(x) = 1 - (x/(x+1))**2 - (1/(x+1))**2``, written without cancellation."""
    return 2.0 * x / ((x + 1.0) * (x + 1.0))


def weighted_gini(caught_pos, caught_neg, left_pos, left_neg):
    """Weighted Gini impurity of a split, ``(2/n) (ab/(a+b) + cd/(c+d))``.

    Vectorised: the four arguments broadcast against each other.

    Parameters
    ----------
    caught_pos, caught_neg, left_pos, left_neg : int, float or array-like
        Counts ``a, b, c, d`` of the split (non-negative; integers in every DP
        use, non-negative real weights are accepted too).

    Returns
    -------
    float or numpy.ndarray of float64
        The impurity in ``[0, 0.5]``; 0 for an empty side's term and 0 when
        ``n = a + b + c + d = 0``.  A Python float when all four inputs are
        scalars.

    Raises
    ------
    InvalidParameterError
        If a count is negative, not finite or not numeric.

    Examples
    --------
    >>> weighted_gini(0, 0, 1, 9)
    0.18
    >>> weighted_gini([1, 0], [1, 0], 0, 0)
    array([0.5, 0. ])
    """
    params = {
        "caught_pos": caught_pos,
        "caught_neg": caught_neg,
        "left_pos": left_pos,
        "left_neg": left_neg,
    }
    validate_params(params, {k: _COUNT_CONSTRAINT for k in params}, "weighted_gini")
    a, b, c, d = (_as_float(v) for v in params.values())
    caught = a + b
    left = c + d
    n = caught + left
    with np.errstate(divide="ignore", invalid="ignore"):
        term_c = np.where(caught > 0, a * b / caught, 0.0)
        term_l = np.where(left > 0, c * d / left, 0.0)
        result = np.where(n > 0, 2.0 * (term_c + term_l) / n, 0.0)
    return _out(np.asarray(result, dtype=np.float64), *params.values())


def _local(n: np.ndarray, variant: str) -> np.ndarray:
    """Local sensitivity bound at size ``n`` (float array, no validation)."""
    if variant == "corrected":
        return _g(np.maximum(n - 1.0, 1.0))  # g(n-1) for n >= 2; g(1) = 0.5 for n <= 1
    return _g(n)


def gini_local_sensitivity(n, variant="corrected"):
    """Local sensitivity of the weighted Gini impurity at ``n`` records.

    The largest ``|G(D) - G(D')|`` over all datasets ``D`` of ``n`` records, all
    splits, and all neighbours ``D'`` (one record added or removed).

    Parameters
    ----------
    n : int or array-like of int
        Number of records that remain to be classified (``>= 0``).
    variant : {"corrected", "paper"}, default="corrected"
        ``"corrected"``: ``g(n-1) = 2(n-1)/n**2`` for ``n >= 2`` and 0.5 for
        ``n <= 1``.  This is exact for ``n >= 1`` (brute-force checked); at
        ``n = 0`` the exact value is 0 (one record has ``G = 0``) and 0.5 is
        returned as a conservative bound, so that the function is
        non-increasing in ``n``.
        ``"paper"``: ``g(n) = 2n/(n+1)**2`` as printed in paper 001 (Section
        IV-A).  It only covers *adding* a record and is strictly smaller than
        the true local sensitivity for ``n >= 2``.  Use it for reproductions of
        the paper only.

    Returns
    -------
    float or numpy.ndarray of float64
        A Python float for a scalar ``n``.

    Raises
    ------
    InvalidParameterError
        If ``n`` is not a non-negative integer (or array of them) or
        ``variant`` is unknown.

    Examples
    --------
    >>> gini_local_sensitivity(10)
    0.18
    >>> round(gini_local_sensitivity(10, variant="paper"), 6)
    0.165289
    >>> gini_local_sensitivity([0, 1, 2, 3])
    array([0.5       , 0.5       , 0.5       , 0.44444444])
    """
    validate_params(
        {"n": n, "variant": variant},
        {"n": _N_CONSTRAINT, "variant": _VARIANT_CONSTRAINT},
        "gini_local_sensitivity",
    )
    return _out(_local(_as_float(n), variant), n)


def _smooth(x: np.ndarray, beta: np.ndarray, lam: float) -> np.ndarray:
    """``max over integers y in [lam, max(x, lam)] of exp(-(x' - y) beta) g(y)``.

    ``x' = max(x, lam)``; ``lam >= 1``.  This is
    ``max_{k >= 0} exp(-k beta) g(max(lam, x - k))`` (for ``x < lam`` it is
    ``g(lam)``).  Closed form: ``k = x' - y``; the derivative of
    ``exp(-k beta) g(x' - k)`` in real ``k`` has the sign of
    ``Q(y) = -beta y**2 + (1 - beta) y - 1``, so as ``k`` grows the function
    decreases, increases while ``y`` is between the roots ``y2 < y1`` of ``Q``,
    then decreases.  The integer maximum is among ``y = x'`` (``k = 0``),
    ``y = floor(y2), ceil(y2)`` (the local maximum) and ``y = lam`` (the end
    point); ``floor/ceil(y1)`` (the local minimum) are evaluated as well.  Every
    candidate is clamped to ``[lam, x']``, so a candidate is always a value of
    the function: extra candidates can never raise the maximum.
    ``floor(y2) + 1`` stands for ``ceil(y2)``: it differs only when ``y2`` is
    an integer, where ``floor(y2)`` is the maximiser itself.
    """
    x, beta = np.broadcast_arrays(x, beta)
    xc = np.maximum(x, lam)
    # Roots of Q.  Delta = (1-beta)^2 - 4 beta >= 0 iff beta <= 3 - 2 sqrt 2
    # (or beta >= 3 + 2 sqrt 2, where both roots are negative).  Clamping Delta
    # at 0 gives the double root (1-beta)/(2 beta) when rounding makes it
    # slightly negative near beta = 3 - 2 sqrt 2: extra candidates are harmless.
    # For beta >= 1 no root is >= 1 (Q < 0 on y >= 1): use y = x' instead.
    small = beta < 1.0
    bs = np.where(small, beta, 0.5)
    sq = np.sqrt(np.maximum((1.0 - bs) ** 2 - 4.0 * bs, 0.0))
    s = 1.0 - bs + sq  # > 0 for beta < 1; no cancellation
    f2 = np.floor(np.where(small, 2.0 / s, xc))  # y2 = (1-beta-sq)/(2 beta) = 2/s, stable
    with np.errstate(over="ignore"):
        f1 = np.floor(np.where(small, s / (2.0 * bs), xc))  # y1 ~ 1/beta; inf for tiny beta
    best = _g(xc)  # k = 0
    for y in (lam, f2, f2 + 1.0, f1, f1 + 1.0):
        y = np.minimum(np.maximum(y, lam), xc)
        best = np.maximum(best, np.exp(-(xc - y) * beta) * _g(y))
    return best


def gini_smooth_sensitivity(n, beta, min_support=1, variant="corrected"):
    """Beta-smooth sensitivity of the weighted Gini impurity, in closed form.

    ``S*(n) = max_{k >= 0} exp(-k beta) T_k(n)`` with
    ``T_k(n) = L(max(min_support, n - k))``, where ``L`` is
    :func:`gini_local_sensitivity` of the same ``variant``: the largest local
    sensitivity among datasets of at least ``min_support`` records within
    distance ``k``.  Equivalently ``S*(n) = max_{m >= min_support}
    L(m) exp(-beta |n - m|)``: the smallest beta-smooth upper bound on the local
    sensitivity that depends on the data only through ``n``.

    Parameters
    ----------
    n : int or array-like of int
        Number of records that remain to be classified (``>= 0``).
    beta : float or array-like of float
        Smoothness parameter, finite and ``> 0`` (broadcasts against ``n``).
    min_support : int, default=1
        ``Lambda >= 1``: the smooth bound is taken over datasets of at least
        ``Lambda`` records only.  This is sound only if the algorithm never
        evaluates the Gini impurity on fewer than ``Lambda + 1`` records except
        with a probability charged to delta (see ``docs/privacy.md``).  For
        ``n < Lambda`` the formula gives the value at ``n = Lambda``, which is
        ``L(Lambda)``.
    variant : {"corrected", "paper"}, default="corrected"
        ``"corrected"``: ``L(m) = g(m-1)`` (0.5 for ``m <= 1``), so
        ``T_k(n) = g(max(Lambda, n-k, 2) - 1)``.  ``"paper"``: Theorem IV.1 of
        paper 001 as stated, ``T_k(n) = g(max(Lambda, n-k))``; it is *not* an
        upper bound on the local sensitivity (for ``n >> 1/beta`` it equals
        ``g(n) < g(n-1)``) and is kept for reproductions only.

    Returns
    -------
    float or numpy.ndarray of float64
        A Python float when ``n`` and ``beta`` are scalars.

    Raises
    ------
    InvalidParameterError
        If a parameter is outside its constraints.

    Notes
    -----
    Computed in O(1) per element from the roots of
    ``Q(y) = -beta y**2 + (1 - beta) y - 1`` (derivation in
    ``docs/privacy.md``); float64 throughout, exact in ``n`` for
    ``n < 2**53``.  For ``n`` large compared with ``1/beta`` (precisely:
    ``x = n - 1`` with ``beta x >= 2`` and
    ``beta x >= 2 log((x+1)**2 / (4x))``) the result is the local
    sensitivity ``g(n-1)`` itself.

    Examples
    --------
    >>> round(gini_smooth_sensitivity(100, beta=0.01), 6)
    0.187656
    >>> gini_smooth_sensitivity(10_000, beta=0.01) == gini_local_sensitivity(10_000)
    True
    >>> gini_smooth_sensitivity([1, 2, 3], beta=1.0)
    array([0.5       , 0.5       , 0.44444444])
    """
    validate_params(
        {"n": n, "beta": beta, "min_support": min_support, "variant": variant},
        {
            "n": _N_CONSTRAINT,
            "beta": _BETA_CONSTRAINT,
            "min_support": _MIN_SUPPORT_CONSTRAINT,
            "variant": _VARIANT_CONSTRAINT,
        },
        "gini_smooth_sensitivity",
    )
    nf = _as_float(n)
    bf = _as_float(beta)
    lam = float(min_support)
    # L(max(lam, n - k)) = g(max(lam_s, x - k)) with x, lam_s shifted by one for
    # the corrected variant: g(max(m - 1, 1)) at m = max(lam, n - k).
    if variant == "corrected":
        x, lam_s = nf - 1.0, max(lam - 1.0, 1.0)
    else:
        x, lam_s = nf, lam
    return _out(_smooth(x, bf, lam_s), n, beta)
