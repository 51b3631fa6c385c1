"""Exact, floating-point-safe samplers for DP noise and DP selection.

Why this module exists
    Mironov (2012, "On significance of the least significant bits for
    differential privacy", CCS) showed that Laplace noise drawn as
    ``loc + scale * log(U)`` with a floating-point uniform ``U`` is *not*
    differentially private: the set of doubles such a sampler can output
    depends on ``loc``, so a published value can rule out true values with
    certainty (see :mod:`dpglass.audit.floating_point` for the attack).  The
    samplers here never compute with random floats.  Their **only** source of
    randomness is ``rng.integers(0, high, size=..., dtype=np.int64)`` of a
    :class:`numpy.random.Generator` (exact uniform integers, by rejection), and
    every random decision is an integer comparison.  Floats are used only to turn
    a *parameter* (a scale, a rate, utilities) into an integer numerator on the
    grid ``2**-40``, deterministically and with a stated rounding direction.  The
    output laws below are therefore exact, not approximations.

What each function samples
    :func:`to_grid`
        ``floor`` or ``ceil`` of ``x * 2**40``, exactly (no randomness).
    :func:`bernoulli_exp`
        ``True`` with probability exactly ``exp(-k / 2**40)``.  Canonne, Kamath
        & Steinke 2020 ("The discrete Gaussian for differential privacy",
        NeurIPS; "CKS"), Algorithm 1: for ``x in [0, 1]`` draw
        ``A_K ~ Bernoulli(x / K)`` for ``K = 1, 2, ...`` until the first failure
        at ``K*``; return ``K*`` odd.  ``Bernoulli(x / K)`` is the integer test
        ``U < k`` with ``U`` uniform on ``{0, ..., K * 2**40 - 1}``.  For
        ``x > 1`` the result is the AND of ``floor(x)`` independent
        ``Bernoulli(exp(-1))`` and one ``Bernoulli(exp(-(x - floor x)))``.
    :func:`discrete_laplace`
        integers with ``P[Z = z] = (1 - e^-g) / (1 + e^-g) * exp(-|z| g)``, where
        ``g = floor(2**40 / scale) / 2**40`` (:func:`discrete_laplace_decay`):
        ``1/g >= scale``, i.e. never less noise than asked.  CKS Algorithm 2
        structure: magnitude ``G = m Q + R`` with ``R`` truncated-geometric on
        ``{0..m-1}`` by rejection and ``Q`` geometric, then a fair sign with the
        pair (negative, 0) rejected so that zero is not counted twice.  For an
        integer query of sensitivity ``Delta`` this is ``(g * Delta)``-DP, and
        ``g * Delta <= Delta / scale``.
    :func:`permute_and_flip`
        McKenna & Sheldon 2020 ("Permute-and-Flip: a new mechanism for
        differentially private selection", NeurIPS): candidate ``r`` is
        accepted with probability ``exp(-gamma_r)``; the output is the first
        accepted candidate in a uniformly random order.
    :func:`exponential_mechanism`
        ``P(r)`` proportional to ``exp(-gamma_r)`` (McSherry & Talwar 2007), by
        rejection from uniform proposals.

    For both selectors ``gamma_r = rate * (max(u) - u_r)`` is rounded **up** to
    the grid, ``gamma~_r = ceil(2**40 * min(gamma_r, 2**21)) / 2**40``
    (:func:`selection_gaps_to_grid`), and this ceiling is computed *exactly*
    from the doubles ``u`` and ``rate``, not from a rounded float product:
    with Python integers for few candidates, otherwise with error-free
    transformations (Knuth's TwoSum, Dekker's TwoProduct, Shewchuk's
    expansions).

Rounding and what it means for privacy
    * ``1/scale`` rounded **down** (discrete Laplace): the effective scale
      ``1/g`` is ``>= scale`` (larger by a relative ``< scale * 2**-40``); this
      only adds noise, so any guarantee computed from ``scale`` still holds.
    * ``gamma`` rounded **up** (selectors): the law is exactly that of the ideal
      mechanism run on utilities ``u~_r = u_r - d_r / rate`` with
      ``0 <= d_r < 2**-40`` (and ``d_r = 0`` for the maximisers, so
      ``max u~ = max u``).  If ``u`` has sensitivity ``Delta``, ``u~`` has
      sensitivity ``< Delta + 2**-40 / rate``: calibrate with that (the usual
      bound ``epsilon = 2 * rate * Delta`` grows by less than ``2**-39``).  The
      jitter ``d_r`` need not move all candidates in the same direction, so a
      "monotone utilities" analysis does not transfer verbatim; the general
      bound above always holds.
    * ``gamma`` is clipped at ``2**21`` (acceptance probability
      ``exp(-2**21)``, zero in any float).  This is harmless for privacy:
      ``min(gamma_r, C) = rate * (max u - max(u_r, max u - C / rate))`` and
      ``max(u_r, max u - C / rate)`` has the same sensitivity ``Delta`` as
      ``u_r`` (a maximum of ``Delta``-sensitive functions), so the clipped
      mechanism is the ideal one on other ``Delta``-sensitive utilities.

Exactness caveats
    The loops ``K = 1, 2, ...`` of CKS stop with probability one; a lane would
    need ``K > 2**23`` (probability ``< 1 / (2**23)!``) before the integer
    bound ``K * 2**40`` stops fitting in int64, at which point numpy raises
    rather than returning a wrong answer.  Draws are made in blocks (several
    CKS rounds, proposals or geometric trials at once).  A block draw that the
    sequential algorithm would not have made is discarded unused, and an
    attempt is only ever thrown away on an event independent of the parts
    thrown away with it (e.g. a discrete-Laplace attempt whose magnitude
    remainder found no accepted proposal), so every law is unchanged.
    Workloads of at most 32 lanes run the same algorithms in pure Python over
    such blocks (numpy bookkeeping would dominate); larger ones are vectorised.
    Randomness quality is that of the generator (PCG64 by default, not a
    CSPRNG; see :mod:`dpglass.privacy.rng`).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> z = discrete_laplace(16.0, 5, rng)
>>> z.dtype, z.shape
(dtype('int64'), (5,))
>>> bool(bernoulli_exp(np.array([0]), rng)[0])      # exp(-0) = 1
True
>>> permute_and_flip([0.0, 5.0, 1.0], 1e9, rng)     # the maximiser, surely
1
>>> int(selection_gaps_to_grid([1.0, 0.0], 0.5)[1]) == GRID // 2
True
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpglass.exceptions import InvalidParameterError

__all__ = [
    "GRID_BITS",
    "GRID",
    "GAMMA_CAP",
    "to_grid",
    "bernoulli_exp",
    "discrete_laplace_decay",
    "discrete_laplace",
    "selection_gaps_to_grid",
    "permute_and_flip",
    "exponential_mechanism",
]

GRID_BITS = 40
GRID = 2**GRID_BITS
#: Selection gaps ``rate * (max u - u_r)`` above this are clipped to it.
GAMMA_CAP = 2**21

_MASK = GRID - 1
_X_LIMIT = 2.0**22
_CAP_GRID = GAMMA_CAP * GRID  # 2**61
_INT64_MAX = np.iinfo(np.int64).max

# CKS in blocks: column K (1-based) of a block is ``u % (K * GRID)`` with ``u``
# uniform on ``[0, lcm(1..T) * GRID)``; it is uniform on ``[0, K * GRID)`` because
# ``K * GRID`` divides ``lcm(1..T) * GRID``, and the columns are independent.
_BLOCK_COLS = 8
_BLOCK_HIGH = 840 * GRID  # lcm(1..8) * 2**40 < 2**50
_BLOCK_MODULI = np.arange(1, _BLOCK_COLS + 1, dtype=np.int64) * GRID
_BLOCK_MAX_LANES = 256

_FACT = [math.factorial(j) for j in range(21)]

_SPLITTER = 134217729.0  # 2**27 + 1 (Dekker)
_TINY = 2.0**-900
_GAP_TINY = 2.0**-42
_GAP_HUGE = float(GAMMA_CAP) * (1.0 + 2.0**-40)


# ----------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(
            f"The 'rng' parameter must be a numpy.random.Generator (see "
            f"dpglass.privacy.rng.check_random_state). Got {type(rng).__name__} instead."
        )


def _check_real(name: str, value, *, upper: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"The '{name}' parameter must be a real number. Got {value!r} instead.")
    v = float(value)
    if not math.isfinite(v) or v <= 0.0 or (upper is not None and v >= upper):
        bound = "" if upper is None else f" and < {upper:g}"
        raise InvalidParameterError(f"The '{name}' parameter must be finite, > 0{bound}. Got {value!r} instead.")
    return v


def _check_utilities(utilities) -> np.ndarray:
    try:
        u = np.asarray(utilities, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"The 'utilities' must be a 1-d array of real numbers: {exc}") from None
    if u.ndim != 1 or u.size == 0:
        raise InvalidParameterError(
            f"The 'utilities' must be a non-empty 1-d array. Got an array of shape {u.shape} instead."
        )
    if not np.isfinite(u).all():
        raise InvalidParameterError("The 'utilities' must all be finite (no NaN or infinity).")
    return u


def _check_size(size) -> tuple[int, ...]:
    shape = (size,) if isinstance(size, numbers.Integral) and not isinstance(size, bool) else size
    try:
        shape = tuple(shape)
        ok = all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0 for s in shape)
    except TypeError:
        ok = False
    if not ok:
        raise InvalidParameterError(
            f"The 'size' parameter must be a non-negative int or a tuple of them. Got {size!r} instead."
        )
    return tuple(int(s) for s in shape)


# ----------------------------------------------------------------------------
# grid
# ----------------------------------------------------------------------------


def to_grid(x, rounding: str):
    """Exact grid numerators of ``x``: ``floor`` or ``ceil`` of ``x * 2**40``.

    Doubles are dyadic rationals, so ``ldexp(x, 40)`` is exact and so is its
    ``floor``/``ceil``; the result satisfies ``k / 2**40 <= x`` (``"down"``) or
    ``k / 2**40 >= x`` (``"up"``), with ``|x - k / 2**40| < 2**-40``.

    Parameters
    ----------
    x : float or array-like of float
        Finite, ``>= 0`` and ``< 2**22`` (so that ``k < 2**62`` fits in int64).
    rounding : {"down", "up"}

    Returns
    -------
    numpy.int64 or numpy.ndarray of int64
        Same shape as ``x``.

    Raises
    ------
    InvalidParameterError
        For a bad ``rounding`` or a value outside ``[0, 2**22)``.

    Examples
    --------
    >>> int(to_grid(0.5, "down")) == GRID // 2
    True
    >>> to_grid([1.0, 2.0**-41], "up").tolist() == [GRID, 1]
    True
    >>> to_grid([1.0, 2.0**-41], "down").tolist() == [GRID, 0]
    True
    """
    if rounding not in ("down", "up"):
        raise InvalidParameterError(f"The 'rounding' parameter must be 'down' or 'up'. Got {rounding!r} instead.")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"to_grid needs real numbers: {exc}") from None
    if not (np.isfinite(arr).all() and (arr >= 0.0).all() and (arr < _X_LIMIT).all()):
        raise InvalidParameterError("to_grid needs finite values in [0, 2**22); got a value outside that range.")
    scaled = np.ldexp(arr, GRID_BITS)
    k = (np.floor(scaled) if rounding == "down" else np.ceil(scaled)).astype(np.int64)
    return k if k.ndim else k[()]


# ----------------------------------------------------------------------------
# Bernoulli(exp(-x))
# ----------------------------------------------------------------------------


def _cks(k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """CKS Algorithm 1 for 1-d int64 ``k`` in ``[0, GRID]``: Bernoulli(exp(-k/GRID))."""
    n = k.size
    if n <= _BLOCK_MAX_LANES:
        u = rng.integers(0, _BLOCK_HIGH, size=(n, _BLOCK_COLS), dtype=np.int64)
        fail = (u % _BLOCK_MODULI) >= k[:, None]  # A_K false
        first = fail.argmax(axis=1)  # 0-based index of the first failure
        out = (first & 1) == 0  # K* = first + 1 odd
        undecided = ~fail[np.arange(n), first]
        if not undecided.any():
            return out
        idx = np.flatnonzero(undecided)
        K = _BLOCK_COLS + 1
    else:  # column by column, drawing only for lanes still undecided
        out = np.empty(n, dtype=bool)
        idx = np.arange(n)
        K = 1
    kk = k[idx]
    while idx.size:
        a = rng.integers(0, K * GRID, size=idx.size, dtype=np.int64) < kk
        out[idx[~a]] = bool(K & 1)
        idx = idx[a]
        kk = kk[a]
        K += 1
    return out


def _exp_minus_one_table() -> np.ndarray:
    """Outcome of CKS with x = 1 for each ``w`` in ``[0, 8!)``: 0 False, 1 True, 2 undecided.

    ``w = d_2 + 2 (d_3 + 3 (d_4 + ... ))`` has independent digits ``d_K`` uniform
    on ``{0..K-1}``; ``A_K = [d_K == 0]`` is Bernoulli(1/K) (``A_1`` is always
    true); the first failing ``K`` decides (``K`` odd -> True).  ``w = 0``
    (``A_2 .. A_8`` all true) is undecided.
    """
    w = np.arange(_FACT[_BLOCK_COLS], dtype=np.int64)
    out = np.full(w.size, 2, dtype=np.int8)
    for K in range(_BLOCK_COLS, 1, -1):  # the smallest failing K wins
        digit = (w // _FACT[K - 1]) % K
        out[digit != 0] = K & 1
    return out


_EXP_MINUS_ONE = _exp_minus_one_table()


def _bern_exp_minus_one(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` independent Bernoulli(exp(-1)): CKS Algorithm 1 with x = 1, by table lookup."""
    code = _EXP_MINUS_ONE[rng.integers(0, _FACT[_BLOCK_COLS], size=n, dtype=np.int64)]
    out = code == 1
    idx = np.flatnonzero(code == 2)  # probability 1/8!: continue with K = 9, 10, ...
    K = _BLOCK_COLS + 1
    while idx.size:
        a = rng.integers(0, K, size=idx.size, dtype=np.int64) == 0
        out[idx[~a]] = bool(K & 1)
        idx = idx[a]
        K += 1
    return out


def _bexp_bulk(k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = k.size
    out = np.ones(n, dtype=bool)
    ipart = k >> GRID_BITS
    idx = np.flatnonzero(ipart)
    if idx.size:  # AND of floor(x) Bernoulli(e^-1); a lane stops at its first failure
        rem = ipart[idx]
        while idx.size:
            t = int(min(int(rem.max()), 4 if idx.size <= 1024 else 1))
            ok = _bern_exp_minus_one(idx.size * t, rng).reshape(idx.size, t)
            if t > 1:
                ok = (ok | (np.arange(t) >= rem[:, None])).all(axis=1)
            else:
                ok = ok[:, 0]
            out[idx[~ok]] = False
            rem = rem - t
            keep = ok & (rem > 0)
            idx = idx[keep]
            rem = rem[keep]
    frac = k & _MASK
    idx = np.flatnonzero(out & (frac > 0))
    if idx.size:
        out[idx] = _cks(frac[idx], rng)
    return out


class _CoinStream:
    """Pure-Python CKS for small workloads, fed by blocks of uniform draws.

    Each coin consumes one row of a block drawn with one ``rng.integers`` call
    (column ``K`` of a row, reduced modulo ``K * 2**40``, is uniform on
    ``[0, K * 2**40)``), which is much cheaper than numpy bookkeeping for a
    handful of lanes.  Same algorithm and law as :func:`_bexp_bulk`.
    """

    __slots__ = ("_rng", "_rows", "_pos", "_hint")

    def __init__(self, rng: np.random.Generator, rows_hint: int) -> None:
        self._rng = rng
        self._rows: list = []
        self._pos = 0
        self._hint = max(4, int(rows_hint))

    def _row(self) -> list:
        if self._pos == len(self._rows):
            self._rows = self._rng.integers(0, _BLOCK_HIGH, size=(self._hint, _BLOCK_COLS), dtype=np.int64).tolist()
            self._pos = 0
        row = self._rows[self._pos]
        self._pos += 1
        return row

    def cks(self, k: int) -> bool:
        """Bernoulli(exp(-k / 2**40)) for ``0 < k <= 2**40``."""
        K = 1
        for v in self._row():
            if v % (K << GRID_BITS) >= k:  # A_K false: K* = K
                return bool(K & 1)
            K += 1
        while True:
            if int(self._rng.integers(0, K * GRID, dtype=np.int64)) >= k:
                return bool(K & 1)
            K += 1

    def bexp(self, k: int) -> bool:
        """Bernoulli(exp(-k / 2**40)) for ``k >= 0``."""
        c = k >> GRID_BITS
        while c:
            if not self.cks(GRID):
                return False
            c -= 1
        f = k & _MASK
        return f == 0 or self.cks(f)


class _UniformStream:
    """Uniform integers on ``[0, high)`` drawn in blocks (pure Python consumer)."""

    __slots__ = ("_rng", "_high", "_vals", "_pos", "_hint")

    def __init__(self, rng: np.random.Generator, high: int, hint: int) -> None:
        self._rng = rng
        self._high = int(high)
        self._vals: list = []
        self._pos = 0
        self._hint = max(2, int(hint))

    def next(self) -> int:
        if self._pos == len(self._vals):
            self._vals = self._rng.integers(0, self._high, size=self._hint, dtype=np.int64).tolist()
            self._pos = 0
        v = self._vals[self._pos]
        self._pos += 1
        return v


_SMALL_LANES = 32
_CHUNK = 8192  # lanes per chunk of the exact-gap arithmetic
_BEXP_CHUNK = 1 << 16


def _bexp(k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-k/GRID)) for 1-d int64 ``k >= 0`` (no validation)."""
    n = k.size
    if n <= _SMALL_LANES:
        cs = _CoinStream(rng, n)
        return np.array([kk == 0 or cs.bexp(kk) for kk in k.tolist()], dtype=bool)
    if n <= _BEXP_CHUNK:
        return _bexp_bulk(k, rng)
    out = np.empty(n, dtype=bool)
    for start in range(0, n, _BEXP_CHUNK):
        out[start : start + _BEXP_CHUNK] = _bexp_bulk(k[start : start + _BEXP_CHUNK], rng)
    return out


def bernoulli_exp(k, rng: np.random.Generator) -> np.ndarray:
    """Independent coins with ``P[True] = exp(-k / 2**40)`` exactly.

    CKS 2020, Algorithm 1 (see the module docstring), vectorised over lanes.  A
    lane with a large ``x = k / 2**40`` is resolved after its first failed
    ``Bernoulli(exp(-1))`` round, so the work is about ``log(size)`` rounds,
    never ``floor(x)`` rounds per lane.

    Parameters
    ----------
    k : array-like of int
        Grid numerators, ``0 <= k <= 2**63 - 1`` (see :func:`to_grid`).
    rng : numpy.random.Generator
        The only source of randomness (``rng.integers``).

    Returns
    -------
    numpy.ndarray of bool
        Same shape as ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> coins = bernoulli_exp(np.full(100_000, GRID), rng)   # exp(-1) = 0.3679
    >>> 0.36 < float(coins.mean()) < 0.376
    True
    """
    _check_rng(rng)
    arr = np.asarray(k)
    if not (np.issubdtype(arr.dtype, np.integer) or (arr.dtype == object and arr.size == 0)):
        raise InvalidParameterError(
            f"bernoulli_exp needs integer grid numerators (see to_grid). Got dtype {arr.dtype} instead."
        )
    if arr.size and (arr.min() < 0 or arr.max() > _INT64_MAX):
        raise InvalidParameterError("bernoulli_exp needs grid numerators in [0, 2**63 - 1].")
    flat = arr.astype(np.int64).ravel()
    return _bexp(flat, rng).reshape(arr.shape)


# ----------------------------------------------------------------------------
# discrete Laplace
# ----------------------------------------------------------------------------


def discrete_laplace_decay(scale: float) -> int:
    """The grid numerator ``k_g = floor(2**40 / scale)`` of the decay ``g``.

    Computed exactly in integer arithmetic from the double ``scale`` (no
    rounding of ``1 / scale`` in float), and capped at ``2**61`` (``g = 2**21``):
    scales below ``2**-21`` are treated as ``2**-21``, which only adds noise.
    :func:`discrete_laplace` samples ``P[Z = z] ~ exp(-|z| k_g / 2**40)``; its
    effective scale ``2**40 / k_g`` is ``>= scale``.

    Examples
    --------
    >>> discrete_laplace_decay(16.0) == GRID // 16
    True
    >>> discrete_laplace_decay(3.0) == GRID // 3
    True
    """
    s = _check_real("scale", scale, upper=_X_LIMIT)
    p, q = s.as_integer_ratio()
    return min((q << GRID_BITS) // p, _CAP_GRID)


def _geometric(step: int, n: int, rng: np.random.Generator, batch: int = 4) -> np.ndarray:
    """``P[Q = q] ~ exp(-q step / GRID)``: successes before the first failure."""
    q = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:
        c = _bexp(np.full(idx.size * batch, step, dtype=np.int64), rng).reshape(idx.size, batch)
        full = c.all(axis=1)
        first = (~c).argmax(axis=1)
        q[idx] += np.where(full, batch, first)
        idx = idx[full]
    return q


def _discrete_laplace_flat(n: int, kg: int, rng: np.random.Generator) -> np.ndarray:
    m = max(1, GRID // kg)  # m * kg <= GRID when kg <= GRID: one CKS pass per coin
    step = m * kg
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        nn = todo.size
        small = nn <= 32
        br = 1 if m == 1 else (8 if small else 2)  # R proposals per lane
        bq = 8 if small else 3  # geometric trials per lane
        w = rng.integers(0, 2 * m, size=(nn, br), dtype=np.int64)
        neg = (w[:, 0] & 1).astype(bool)  # fair sign (independent of w >> 1)
        r = w >> 1  # uniform on {0..m-1}
        kk = np.concatenate([(r * kg).ravel(), np.full(nn * bq, step, dtype=np.int64)])
        coins = _bexp(kk, rng)
        acc = coins[: nn * br].reshape(nn, br)
        qt = coins[nn * br :].reshape(nn, bq)
        rows = np.arange(nn)
        fr = acc.argmax(axis=1)
        has_r = acc[rows, fr]
        R = r[rows, fr]
        full = qt.all(axis=1)
        Q = (~qt).argmax(axis=1)
        if full.any():  # memoryless: continue counting
            Q[full] = bq + _geometric(step, int(full.sum()), rng)
        mag = m * Q + R
        # retry lanes with no accepted R (a whole fresh attempt) and the pair
        # (negative, 0) -- CKS Algorithm 2 -- so that 0 is not double counted
        bad = ~has_r | (neg & (mag == 0))
        good = ~bad
        out[todo[good]] = np.where(neg, -mag, mag)[good]
        todo = todo[bad]
    return out


def _discrete_laplace_small(n: int, kg: int, rng: np.random.Generator) -> list:
    """Same algorithm as :func:`_discrete_laplace_flat`, lane by lane in Python."""
    m = max(1, GRID // kg)
    step = m * kg
    coins = _CoinStream(rng, 4 * n + 4)
    unif = _UniformStream(rng, 2 * m, 2 * n + 2)
    out = []
    for _ in range(n):
        while True:
            w = unif.next()
            neg = w & 1  # fair sign, independent of w >> 1
            r = w >> 1  # uniform on {0..m-1}
            while r and not coins.bexp(r * kg):  # R: accept r with exp(-r g)
                r = unif.next() >> 1
            q = 0
            while coins.bexp(step):  # Q: successes before the first failure
                q += 1
            mag = m * q + r
            if neg and mag == 0:  # CKS Algorithm 2: do not count 0 twice
                continue
            out.append(-mag if neg else mag)
            break
    return out


def discrete_laplace(scale: float, size, rng: np.random.Generator) -> np.ndarray:
    """Exact discrete Laplace noise: ``P[Z = z] = (1-e^-g)/(1+e^-g) * exp(-|z| g)``.

    ``g = discrete_laplace_decay(scale) / 2**40 <= 1 / scale``: the effective
    scale ``1 / g`` is never below ``scale`` (it is larger by a relative
    ``< scale * 2**-40``), so this releases at least the asked-for noise.  Adding
    ``Z`` to an integer query of sensitivity ``Delta`` is ``(g * Delta)``-DP,
    hence ``(Delta / scale)``-DP.  The algorithm (CKS 2020, Algorithm 2, with
    ``m = max(1, floor(1/g))``) uses only uniform integers and
    :func:`bernoulli_exp`.

    Parameters
    ----------
    scale : float
        Finite, ``> 0`` and ``< 2**22``.
    size : int or tuple of int
        Output shape.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> import numpy as np
    >>> z = discrete_laplace(3.0, 200_000, np.random.default_rng(2))
    >>> abs(float(z.mean())) < 0.05, 17.0 < float(z.var()) < 19.0   # var = 2e^-g/(1-e^-g)^2 = 17.99
    (True, True)
    """
    kg = discrete_laplace_decay(scale)
    shape = _check_size(size)
    _check_rng(rng)
    n = math.prod(shape)
    if n <= _SMALL_LANES:
        return np.array(_discrete_laplace_small(n, kg, rng), dtype=np.int64).reshape(shape)
    out = np.empty(n, dtype=np.int64)
    chunk = 1 << 16
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        out[start:stop] = _discrete_laplace_flat(stop - start, kg, rng)
    return out.reshape(shape)


# ----------------------------------------------------------------------------
# selection
# ----------------------------------------------------------------------------


def _two_sum(a, b):
    """Knuth's TwoSum: ``s + err == a + b`` exactly, ``s = fl(a + b)``."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(x):
    c = _SPLITTER * x
    hi = c - (c - x)
    return hi, x - hi


def _ceil_scaled_product(rate: float, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Exact ``ceil(2**40 * rate * (s + e))`` for lanes where it lies in (1/4, 2**62).

    ``rate = a * 2**ex`` with ``a in [0.5, 1)``; ``V = a * s' + a * e'`` with
    ``s' = s * 2**(ex+40)`` (exact: no overflow or underflow for these lanes).
    Dekker's TwoProduct gives ``a s' = p + pe`` and ``a e' = q + qe`` exactly;
    Shewchuk's Grow-Expansion turns ``p + pe + q + qe`` into a nonoverlapping
    expansion ``g4 > g3 > g2 > g1``; its ceiling is read off from the top: add
    integer-valued components, and stop at the first non-integer one ``c`` with
    ``ceil(c)`` (the lower components sum to less than the lowest set bit of
    ``c``, so they cannot cross an integer).  If ``|a e'| < 2**-900`` only its
    sign can matter (``a s'`` is a multiple of ``2**-108``), so it is replaced by
    ``sign(e) * 2**-900``, which also covers underflow of ``e'``.
    """
    a, ex = math.frexp(rate)
    sh = ex + GRID_BITS
    s2 = np.ldexp(s, sh)
    ah, al = _split(a)
    p = a * s2
    sh_, sl = _split(s2)
    pe = ((ah * sh_ - p) + ah * sl + al * sh_) + al * sl
    if not e.any():
        # V = p + pe exactly, |pe| <= ulp(p)/2.  A non-integer p is at least
        # ulp(p) away from every integer, so ceil(V) = ceil(p); an integer p
        # gives ceil(V) = p + ceil(pe).
        fp = np.floor(p)
        return np.where(fp == p, p.astype(np.int64) + np.ceil(pe).astype(np.int64), fp.astype(np.int64) + 1)
    e2 = np.ldexp(e, sh)
    q = a * e2
    eh, el = _split(e2)
    qe = ((ah * eh - q) + ah * el + al * eh) + al * el
    tiny = np.abs(q) < _TINY
    if tiny.any():
        q = np.where(tiny, np.sign(e) * _TINY, q)
        qe = np.where(tiny, 0.0, qe)
    # Grow-Expansion((pe, p), qe), then Grow-Expansion(., q)
    Q, h1 = _two_sum(qe, pe)
    h3, h2 = _two_sum(Q, p)
    Q, g1 = _two_sum(q, h1)
    Q, g2 = _two_sum(Q, h2)
    g4, g3 = _two_sum(Q, h3)
    acc = np.zeros(s.size, dtype=np.int64)
    active = np.ones(s.size, dtype=bool)
    for c in (g4, g3, g2, g1):
        f = np.floor(c)
        isint = f == c
        acc += np.where(active, np.where(isint, c, f + 1.0), 0.0).astype(np.int64)
        active &= isint
        if not active.any():
            break
    return acc


def _gaps_grid(u: np.ndarray, rate: float, top: float | None = None) -> np.ndarray:
    """``min(ceil(2**40 * rate * (top - u_r)), 2**61)``, exactly, as int64 (``top`` defaults to ``max u``)."""
    M = u.max() if top is None else np.float64(top)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        s, e = _two_sum(M, -u)  # s + e == M - u exactly, s = fl(M - u) >= 0
        overflow = np.flatnonzero(~np.isfinite(s))
        if overflow.size:  # gap > 2**1023: exact rationals for those lanes
            big = _gaps_small([float(M)] + u[overflow].tolist(), rate)[1:]
            s[overflow] = 0.0
            e[overflow] = 0.0
        gam = rate * s  # within a relative 2**-52 of the true gap (or underflowed)
        out = np.zeros(u.size, dtype=np.int64)
        pos = s > 0  # <=> u_r < max u
        huge = gam >= _GAP_HUGE  # surely >= GAMMA_CAP
        tiny = pos & (gam <= _GAP_TINY)  # surely in (0, 2**-40): ceil = 1
        out[huge] = _CAP_GRID
        out[tiny] = 1
        mid = pos & ~huge & ~tiny
        exact = e == 0
        # lanes with s - (M - u) == 0 take the short exact path; chunks keep
        # the temporaries small
        for sel in (np.flatnonzero(mid & exact), np.flatnonzero(mid & ~exact)):
            for start in range(0, sel.size, _CHUNK):
                part = sel[start : start + _CHUNK]
                out[part] = np.minimum(_ceil_scaled_product(rate, s[part], e[part]), _CAP_GRID)
        if overflow.size:
            out[overflow] = big
    return out


def _gaps_small(u: list, rate: float) -> list:
    """Python-integer version of :func:`_gaps_grid` (exact rationals), for few candidates."""
    top = max(u)
    mn, md = top.as_integer_ratio()
    rn, rd = rate.as_integer_ratio()
    out = []
    for x in u:
        if x == top:
            out.append(0)
            continue
        xn, xd = x.as_integer_ratio()
        num = (rn * (mn * xd - xn * md)) << GRID_BITS
        k = -((-num) // (rd * md * xd))
        out.append(k if k < _CAP_GRID else _CAP_GRID)
    return out


def selection_gaps_to_grid(utilities, rate: float) -> np.ndarray:
    """The grid numerators ``k_r`` the selectors use: acceptance prob ``exp(-k_r / 2**40)``.

    ``k_r = ceil(2**40 * min(rate * (max(u) - u_r), 2**21))``, computed exactly
    (no floating-point error; the maximisers get exactly 0).  See the module
    docstring for what the upward rounding and the clipping mean for privacy.

    Examples
    --------
    >>> selection_gaps_to_grid([3.0, 1.0, 3.0], 0.25).tolist() == [0, GRID // 2, 0]
    True
    >>> int(selection_gaps_to_grid([0.0, 0.1], 1.0)[0]) == int(to_grid(0.1, "up"))
    True
    """
    u = _check_utilities(utilities)
    r = _check_real("rate", rate)
    if u.size <= _SMALL_LANES:
        return np.array(_gaps_small(u.tolist(), r), dtype=np.int64)
    return _gaps_grid(u, r)


def _pf_indices(gk: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` independent permute-and-flip draws, as int64 indices."""
    m = gk.size
    coins = _bexp(np.tile(gk, n), rng).reshape(n, m)
    counts = coins.sum(axis=1)
    j = rng.integers(0, counts, dtype=np.int64)
    return (coins.cumsum(axis=1) > j[:, None]).argmax(axis=1)


def _em_indices(gk: np.ndarray, rng: np.random.Generator, n: int, batch: int | None = None) -> np.ndarray:
    """``n`` independent exponential-mechanism draws, by rejection in batches."""
    m = gk.size
    b = max(64, 2 * m) if batch is None else int(batch)
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        nn = todo.size
        r = rng.integers(0, m, size=(nn, b), dtype=np.int64)
        coins = _bexp(gk[r].ravel(), rng).reshape(nn, b)
        first = coins.argmax(axis=1)
        has = coins[np.arange(nn), first]
        out[todo[has]] = r[has, first[has]]
        todo = todo[~has]
    return out


def _em_one(u: np.ndarray, rate: float, rng: np.random.Generator) -> int:
    """One exponential-mechanism draw; gaps are computed only for the proposals.

    Proposals come in batches of 64, 128, ... up to ``max(64, 2 m)``; the result
    is the first accepted proposal of an i.i.d. sequence whatever the batch
    sizes, so the law is exact.
    """
    m = u.size
    top = u.max()
    b, b_max = 64, max(64, 2 * m)
    while True:
        r = rng.integers(0, m, size=b, dtype=np.int64)
        heads = np.flatnonzero(_bexp(_gaps_grid(u[r], rate, top), rng))
        if heads.size:
            return int(r[heads[0]])
        b = min(2 * b, b_max)


def permute_and_flip(utilities, rate: float, rng: np.random.Generator) -> int:
    """Exact permute-and-flip: candidate ``r`` passes with ``exp(-rate (max u - u_r))``.

    McKenna & Sheldon 2020.  With ``rate = epsilon / (2 Delta)`` this is
    ``epsilon``-DP for utilities of sensitivity ``Delta`` -- calibrate with
    ``Delta + 2**-40 / rate`` to cover the upward rounding of the gaps (module
    docstring).  Sampling: all coins are drawn at once with
    :func:`bernoulli_exp` on :func:`selection_gaps_to_grid` (the maximisers'
    coins are always heads); the output is the first head in a uniformly random
    order, drawn exactly as a uniformly random head (for a uniform permutation
    independent of the coins, the first head in permuted order is uniform over
    the heads).

    Returns
    -------
    int
        An index into ``utilities``.

    Examples
    --------
    >>> import numpy as np
    >>> permute_and_flip([1.0, 1.0, -1e6], 1.0, np.random.default_rng(0)) in (0, 1)
    True
    """
    u = _check_utilities(utilities)
    r = _check_real("rate", rate)
    _check_rng(rng)
    if u.size <= _SMALL_LANES:
        gk = _gaps_small(u.tolist(), r)
        coins = _CoinStream(rng, u.size)
        heads = [i for i, k in enumerate(gk) if k == 0 or coins.bexp(k)]
        if len(heads) == 1:
            return heads[0]
        return heads[int(rng.integers(0, len(heads), dtype=np.int64))]
    heads = np.flatnonzero(_bexp(_gaps_grid(u, r), rng))
    if heads.size == 1:
        return int(heads[0])
    return int(heads[rng.integers(0, heads.size, dtype=np.int64)])


def exponential_mechanism(utilities, rate: float, rng: np.random.Generator) -> int:
    """Exact exponential mechanism: ``P(r)`` proportional to ``exp(-gamma~_r)``.

    ``gamma~_r`` is :func:`selection_gaps_to_grid` ``/ 2**40``, i.e.
    ``P(r) ~ exp(rate * u~_r)`` (McSherry & Talwar 2007); with
    ``rate = epsilon / (2 Delta)`` it is ``epsilon``-DP for sensitivity
    ``Delta`` (calibrate with ``Delta + 2**-40 / rate``).  Sampling is by
    rejection: proposals uniform on the candidates (``rng.integers``), each
    accepted with ``bernoulli_exp(k_r)``; the first accepted proposal of the
    i.i.d. sequence is returned, which has exactly the law above.  Proposals
    are drawn in batches (``max(64, 2 m)`` for ``m <= 32`` candidates, evaluated
    lazily; otherwise 64, 128, ... doubling up to ``max(64, 2 m)``, with gaps
    computed only for the proposals); how the sequence is cut into batches
    does not change which proposal is first accepted.  The expected number of
    proposals is ``m / sum_r exp(-gamma~_r)`` (at most ``m``).

    Returns
    -------
    int
        An index into ``utilities``.

    Examples
    --------
    >>> import numpy as np
    >>> exponential_mechanism([0.0, 50.0], 10.0, np.random.default_rng(0))
    1
    """
    u = _check_utilities(utilities)
    r = _check_real("rate", rate)
    _check_rng(rng)
    m = u.size
    if m <= _SMALL_LANES:
        gk = _gaps_small(u.tolist(), r)
        coins = _CoinStream(rng, 8)
        proposals = _UniformStream(rng, m, max(64, 2 * m))
        while True:
            j = proposals.next()
            if gk[j] == 0 or coins.bexp(gk[j]):
                return j
    return _em_one(u, r, rng)
