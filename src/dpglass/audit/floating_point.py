"""The floating-point attack on textbook Laplace noise (Mironov 2012), as an audit tool.

Mironov ("On significance of the least significant bits for differential
privacy", CCS 2012) observed that ``c + scale * log(U)`` with a
floating-point uniform ``U`` cannot produce every double: which doubles are
reachable depends on the true value ``c``.  Given one published output, an
adversary who knows the sampler can therefore rule out candidate true values
*with certainty* -- an infinite privacy loss that no epsilon covers.

This module replays NumPy's own sampler bit for bit
(``numpy/random/src/distributions/distributions.c``, ``random_laplace``)::

    U = next_double()                     # k * 2**-53, k uniform on [0, 2**53)
    if U >= 0.5:  x = loc - scale * log(2.0 - U - U)
    elif U > 0.0: x = loc + scale * log(U + U)
    else:         redraw                  # U == 0 is rejected

with ``log`` the C library's (the same function as Python's :func:`math.log`;
``numpy.log`` is a different, vectorised implementation that disagrees in the
last bit on some inputs, so it is used only to *locate* candidates).  Calling
``rng.laplace(c, scale)`` and computing ``c + rng.laplace(0, scale)`` give the
same double (``c - t`` equals ``c + (0 - t)`` in IEEE arithmetic), so both
publication styles are covered.  Every NumPy bit generator makes ``U`` of the
form ``k * 2**-53``.

* :func:`numpy_laplace_from_draws` -- the sampler as a function of ``k``.
* :func:`numpy_laplace_preimages` -- for a published output, which candidate
  true values are still possible.
* :func:`float_attack_exclusion_rate` -- the fraction of (output, candidate)
  pairs ruled out: the attack's power.
* :func:`integer_or_grid_valued` -- the check that released numbers live on an
  integer (or a fixed) grid, as those of :mod:`dpglass.privacy.samplers` do, so
  that this attack has nothing to work with.

Assumptions: IEEE double arithmetic without fused multiply-add in NumPy's
compiled sampler (true of x86-64 builds; a build that fuses
``loc - scale * log(...)`` would need an FMA here), and a monotone ``log`` (the
search for the preimage uses monotonicity; glibc's ``log`` is monotone).  The
replay is checked against ``Generator.laplace`` in ``tests/test_samplers.py``.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> out = 0.0 + rng.laplace(0.0, 16.0)
>>> bool(numpy_laplace_preimages(out, [0.0], 16.0)[0])     # the truth is never ruled out
True
>>> integer_or_grid_valued([3, -2, 0]), integer_or_grid_valued([0.5])
(True, False)
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpglass.exceptions import InvalidParameterError

__all__ = [
    "numpy_laplace_from_draws",
    "numpy_laplace_preimages",
    "float_attack_exclusion_rate",
    "integer_or_grid_valued",
]

_TWO52 = 2**52
_TWO53 = 2**53
_K_MAX = _TWO53 - 1
_WINDOW = 8
_libm_log = np.frompyfunc(math.log, 1, 1)


def _check_scale(scale) -> float:
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not (0.0 < float(scale) < math.inf):
        raise InvalidParameterError(f"The 'scale' parameter must be a finite real > 0. Got {scale!r} instead.")
    return float(scale)


def _finite_array(name: str, values) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"The '{name}' must be real numbers: {exc}") from None
    if not np.isfinite(arr).all():
        raise InvalidParameterError(f"The '{name}' must all be finite.")
    return arr


def _log_argument(k: np.ndarray):
    """``(upper branch?, argument of log)`` exactly as NumPy forms them from ``k``."""
    U = k.astype(np.float64) * 2.0**-53  # exact: k < 2**53
    upper = k >= _TWO52  # U >= 0.5
    return upper, np.where(upper, (2.0 - U) - U, U + U)


def _apply(loc, scale: float, upper, L):
    return np.where(upper, loc - scale * L, loc + scale * L)


def _sample_exact(loc, scale: float, k: np.ndarray) -> np.ndarray:
    upper, arg = _log_argument(k)
    L = _libm_log(arg).astype(np.float64) if arg.size else arg
    return _apply(loc, scale, upper, L)


def _sample_fast(loc, scale: float, k: np.ndarray) -> np.ndarray:
    upper, arg = _log_argument(k)
    return _apply(loc, scale, upper, np.log(arg))


def numpy_laplace_from_draws(k, loc, scale: float) -> np.ndarray:
    """NumPy's ``random_laplace(loc, scale)`` output for ``U = k * 2**-53``, bit for bit.

    ``k`` is the 53-bit integer behind ``next_double`` (for PCG64,
    ``random_raw() >> 11``); ``1 <= k < 2**53`` (``k = 0`` is rejected by NumPy).

    Examples
    --------
    >>> import numpy as np
    >>> bg = np.random.PCG64(7)
    >>> state = bg.state
    >>> x = np.random.Generator(bg).laplace(5.0, 2.0, size=3)
    >>> replay = np.random.PCG64(); replay.state = state
    >>> k = (replay.random_raw(3) >> np.uint64(11)).astype(np.int64)
    >>> bool((numpy_laplace_from_draws(k, 5.0, 2.0) == x).all())
    True
    """
    s = _check_scale(scale)
    kk = np.asarray(k)
    if not np.issubdtype(kk.dtype, np.integer) or (kk.size and (kk.min() < 1 or kk.max() > _K_MAX)):
        raise InvalidParameterError("The draws 'k' must be integers in [1, 2**53).")
    loc_arr = _finite_array("loc", loc)
    return _sample_exact(loc_arr, s, kk.astype(np.int64))


def _lower_bound(o: np.ndarray, c: np.ndarray, scale: float, sample) -> np.ndarray:
    """Smallest ``k`` in ``[1, 2**53)`` with ``sample(c, k) >= o`` (``2**53`` if none)."""
    lo = np.ones(o.size, dtype=np.int64)
    hi = np.full(o.size, _TWO53, dtype=np.int64)
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        ge = sample(c, scale, np.minimum(mid, _K_MAX)) >= o
        hi = np.where(active & ge, mid, hi)
        lo = np.where(active & ~ge, mid + 1, lo)


def _preimage_pairs(o: np.ndarray, c: np.ndarray, scale: float) -> np.ndarray:
    """For 1-d ``o``, ``c`` of equal length: does some ``k`` give ``fl(c + noise(k)) == o``?

    The output is a non-decreasing function of ``k`` (every step -- ``2 - U - U``,
    ``log``, ``* scale``, ``+ c`` -- is monotone under rounding to nearest), so
    the candidates ``k`` form an interval.  A binary search with ``numpy.log``
    locates it; the C-library ``log`` then decides exactly on a window of
    ``2 * 8 + 1`` draws around it, and the window's end points certify that no
    ``k`` outside can hit ``o``.  Pairs the window cannot certify (NumPy's log
    having misled the search) are redone with an exact binary search.
    """
    found = np.zeros(o.size, dtype=bool)
    if o.size == 0:
        return found
    lo = _lower_bound(o, c, scale, _sample_fast)
    offsets = np.arange(-_WINDOW, _WINDOW + 1, dtype=np.int64)
    ks = np.clip(lo[:, None] + offsets, 1, _K_MAX)
    vals = _sample_exact(c[:, None], scale, ks)
    found = (vals == o[:, None]).any(axis=1)
    left_ok = (ks[:, 0] == 1) | (vals[:, 0] < o)
    right_ok = (ks[:, -1] == _K_MAX) | (vals[:, -1] > o)
    unsure = np.flatnonzero(~found & ~(left_ok & right_ok))
    if unsure.size:
        lo2 = _lower_bound(o[unsure], c[unsure], scale, _sample_exact)
        ok = lo2 <= _K_MAX
        hit = np.zeros(unsure.size, dtype=bool)
        hit[ok] = _sample_exact(c[unsure][ok], scale, lo2[ok]) == o[unsure][ok]
        found[unsure] = hit
    return found


def numpy_laplace_preimages(output, candidates, scale: float) -> np.ndarray:
    """Which candidate true values could have produced a published NumPy-Laplace output.

    Entry ``j`` is ``True`` iff some double ``U`` that NumPy's sampler can draw
    gives exactly ``output == candidates[j] + Laplace(0, scale)`` (equivalently
    ``Generator.laplace(candidates[j], scale)``).  ``False`` entries are ruled
    out with certainty (Mironov 2012).

    Parameters
    ----------
    output : float
        The published value.
    candidates : array-like of float
        Candidate true values (any shape).
    scale : float
        The Laplace scale used, finite and ``> 0``.

    Returns
    -------
    numpy.ndarray of bool
        Same shape as ``candidates``.

    Examples
    --------
    >>> import numpy as np
    >>> out = 0.0 + np.random.default_rng(3).laplace(0.0, 16.0)
    >>> possible = numpy_laplace_preimages(out, np.arange(41.0), 16.0)
    >>> bool(possible[0])
    True
    """
    s = _check_scale(scale)
    o = _finite_array("output", output)
    if o.ndim != 0:
        raise InvalidParameterError("The 'output' must be a single number; use float_attack_exclusion_rate for many.")
    c = _finite_array("candidates", candidates)
    flat = c.ravel()
    return _preimage_pairs(np.full(flat.size, float(o)), flat, s).reshape(c.shape)


def float_attack_exclusion_rate(outputs, candidates, scale: float) -> float:
    """Fraction of (output, candidate) pairs that the floating-point attack rules out.

    ``0`` means the attack learns nothing; a true value is never ruled out, so
    for outputs of ``c_true + Laplace`` the rate over the *wrong* candidates is
    the attack's power (Mironov 2012).

    Examples
    --------
    >>> float_attack_exclusion_rate([], [0.0, 1.0], 1.0)
    0.0
    """
    s = _check_scale(scale)
    o = _finite_array("outputs", outputs).ravel()
    c = _finite_array("candidates", candidates).ravel()
    if o.size == 0 or c.size == 0:
        return 0.0
    possible = _preimage_pairs(np.repeat(o, c.size), np.tile(c, o.size), s)
    return float(1.0 - possible.mean())


def integer_or_grid_valued(values, grid=None) -> bool:
    """``True`` iff every value is finite and an integer (or an integer multiple of ``grid``).

    The check used on a released model's numeric fields: numbers drawn with
    :mod:`dpglass.privacy.samplers` (integers, or integers times a fixed grid)
    pass; a float perturbed with textbook Laplace noise essentially never does.
    ``grid`` (a finite real ``> 0``) is tested with ``fmod``, which is exact.

    Examples
    --------
    >>> integer_or_grid_valued([1.0, 2.0, -7.0])
    True
    >>> integer_or_grid_valued([0.25, 0.75], grid=0.25), integer_or_grid_valued([0.3], grid=0.25)
    (True, False)
    >>> integer_or_grid_valued([float("nan")])
    False
    """
    if grid is not None:
        if isinstance(grid, bool) or not isinstance(grid, numbers.Real) or not (0.0 < float(grid) < math.inf):
            raise InvalidParameterError(f"The 'grid' must be a finite real > 0 or None. Got {grid!r} instead.")
    arr = np.asarray(values)
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.integer):
        if grid is None:
            return True
        if isinstance(grid, numbers.Integral):
            return bool((arr % int(grid) == 0).all())
        arr = arr.astype(np.float64)
    else:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            return False
    if not np.isfinite(arr).all():
        return False
    if grid is None:
        return bool((np.floor(arr) == arr).all())
    return bool((np.fmod(arr, float(grid)) == 0.0).all())
