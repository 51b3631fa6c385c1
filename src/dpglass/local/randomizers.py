"""On-device randomizers for local differential privacy (each record privatized alone).

Two non-interactive α-LDP randomizers over the same public grid
(:class:`Grid`: a public box mapped to ``[0, 1]^d``, grid step ``h``):

:class:`HistogramRandomizer` (``"laplace"``, the reference)
    Berrett & Butucea's mechanism (paper 004, slide 7).  ``B`` is the 0/1
    vector of the cubes ``{x : ||x - x_j||_inf < h}``, ``x_j = h j``, that hold
    the record; a record of the first half releases ``B + W``, a record of the
    second half ``y B + W``, where ``W`` has independent **discrete** Laplace
    coordinates with ``P[W = w] ~ exp(-|w| alpha / 2^(d+1))`` (the exact
    sampler :func:`dpglass.privacy.samplers.discrete_laplace`; the slides'
    continuous Laplace of scale ``2^(d+1)/alpha``, replaced by its integer
    analogue: same guarantee, and no float noise is ever released).
    ``||B||_1 <= 2^d`` for every input, so any two inputs of one person give
    vectors at l1 distance ``<= 2^(d+1)``: alpha-LDP.

:class:`UnaryRandomizer` (``"oue"``, beyond the slides, lower variance)
    Each record reports only its own *(fine cell, label)* category, for any
    number ``K >= 2`` of labels, through
    optimized unary encoding (Wang, Blocki, Li & Jha 2017): a bit per category,
    the record's own bit is 1 with probability ``p = 1/2``, every other bit with
    probability ``q >= 1/(e^alpha + 1)`` (a rational on the grid ``2^-40``,
    rounded up from an exact lower bound on ``e^alpha``), so
    ``p (1 - q) / ((1 - p) q) = (1 - q)/q <= e^alpha``.  Bits are drawn as
    integer comparisons of uniform integers (``U < num`` with ``U`` uniform on
    ``{0 .. 2^40 - 1}``): exact laws, nothing float-valued is released.  The
    server debiases the column sums into unbiased estimates of the counts of
    each (cell, label); summed over the ``2^d`` fine cells of a cube they
    estimate the same histograms as the reference mechanism, with a variance
    that does not grow as ``4^d / alpha^2``.  The guarantee does not depend on
    the number of categories (two reports differ in the laws of two bits).

The reference mechanism is binary (a record reports ``B`` or ``y B``, the
slides' statistic estimates ``eta - 1/2``): it refuses ``n_classes > 2``;
use ``"oue"`` for ``K`` labels.

Both privatize one record (:meth:`randomize_one`, the on-device step) or a
batch (:meth:`randomize`, for simulation).  Every report of one randomizer has
the same length whatever the record.  The half of a record (reference
mechanism only) is a public coin, independent of the data, and is published
with the report.

Reports are dense: ``(ceil(1/h) + 1)^d`` integers or ``K ceil(1/h)^d`` bits.
A configuration above ``max_cells`` is refused with the number it would need
(raise ``max_cells`` knowingly): the curse of dimensionality is real here,
the noise per report grows as ``2^d`` and the cells as ``h^-d``.

See ``docs/privacy.md``, section "Local differential privacy (dpglass.local)",
for the proofs.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass.privacy.rng import check_random_state, spawn
from dpglass.privacy.samplers import GRID, discrete_laplace

__all__ = [
    "DEFAULT_MAX_CELLS",
    "RANDOMIZERS",
    "Grid",
    "HistogramRandomizer",
    "UnaryRandomizer",
    "Reports",
    "make_randomizer",
    "check_n_classes",
    "oue_q_numerator",
]

#: Refuse reports longer than this unless the user raises ``max_cells``.
DEFAULT_MAX_CELLS = 1 << 16
#: Entries of one dense block of reports in memory (rows x cells).
_BLOCK_ENTRIES = 1 << 22


# ----------------------------------------------------------------- checks
def check_alpha(alpha) -> float:
    """``alpha`` must be a finite real > 0."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not math.isfinite(alpha) or alpha <= 0:
        raise InvalidParameterError(
            f"The 'alpha' parameter (the local privacy level) must be a finite number > 0. Got {alpha!r} instead."
        )
    if alpha > 60:
        raise InvalidParameterError(f"The 'alpha' parameter must be at most 60 (e^alpha overflows the bit "
                                    f"probabilities). Got {alpha!r} instead.")
    return float(alpha)


def check_bandwidth(h) -> float:
    """``h`` must be a finite real in (0, 1]: the grid step in the unit box."""
    if isinstance(h, bool) or not isinstance(h, numbers.Real) or not math.isfinite(h) or not 0 < h <= 1:
        raise InvalidParameterError(
            "The 'bandwidth' parameter must be a number in (0, 1] (the grid step h in the box mapped to [0, 1]^d), "
            f"or 'auto' for the classifier. Got {h!r} instead."
        )
    return float(h)


def check_bounds(bounds, d: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``bounds = (lower, upper)``, two arrays of length d with lower < upper, all finite."""
    if bounds is None:
        raise InvalidParameterError(
            "The 'bounds' parameter is required: pass bounds=(lower, upper), the public box of the features "
            "(one lower and one upper value per feature), chosen without looking at the data."
        )
    try:
        lower, upper = bounds
        lower = np.atleast_1d(np.asarray(lower, dtype=np.float64))
        upper = np.atleast_1d(np.asarray(upper, dtype=np.float64))
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The 'bounds' parameter must be a pair (lower, upper) of number arrays. Got {bounds!r} instead."
        ) from None
    if lower.ndim != 1 or lower.shape != upper.shape or lower.size == 0:
        raise InvalidParameterError(
            f"The 'bounds' lower and upper arrays must have the same length (one per feature); got lengths "
            f"{lower.size} and {upper.size}."
        )
    if d is not None and lower.size != d:
        raise InvalidParameterError(
            f"The 'bounds' have {lower.size} entries per side but the data has {d} features; give one lower and "
            "one upper bound per feature."
        )
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()):
        raise InvalidParameterError("The 'bounds' must be finite numbers.")
    bad = np.flatnonzero(~(lower < upper))
    if bad.size:
        raise InvalidParameterError(
            f"The 'bounds' are inverted or empty for feature(s) {bad.tolist()}: each lower bound must be "
            "strictly below its upper bound."
        )
    return lower, upper


def check_labels(y, n: int, n_classes: int = 2) -> np.ndarray:
    """Labels as codes in {0, ..., n_classes - 1} (int8 for two classes, int16 for more)."""
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise DataValidationError(f"y must be a 1-d array of {n} labels (one per record); got shape {arr.shape}.")
    K = int(n_classes)
    codes, to = ("0 or 1", "0/1") if K == 2 else (f"codes 0..{K - 1}", f"0..{K - 1}")
    if arr.dtype == bool:
        return arr.astype(np.int8 if K == 2 else np.int16)
    try:
        f = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise DataValidationError(f"The labels must be {codes} (got non-numeric labels); map your classes to {to}.") \
            from None
    bad = ~((f >= 0) & (f <= K - 1) & (f == np.floor(f)))
    if bad.any():
        raise DataValidationError(
            f"The labels must be {codes}; got {sorted(set(arr[bad].tolist()))[:5]!r}. Map your "
            f"{'two' if K == 2 else K} classes to {to}."
        )
    return f.astype(np.int8 if K == 2 else np.int16)


def check_n_classes(n_classes) -> int:
    """``n_classes``: an int from 2 to 255 (one report entry per (cell, label) for ``"oue"``)."""
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral) or not 2 <= n_classes <= 255:
        raise InvalidParameterError(f"The 'n_classes' parameter must be an int from 2 to 255 (the number of labels). "
                                    f"Got {n_classes!r} instead.")
    return int(n_classes)


def check_features(X, d: int | None = None, names=None) -> np.ndarray:
    """A finite 2-d float array; an error names the column at fault.

    ``names``: the columns' names for the messages (a DataFrame's own columns
    are used when None; otherwise columns are named by their position).
    """
    from dpglass._validation import _first_text_column

    if names is None and hasattr(X, "columns"):
        names = [str(c) for c in X.columns]
    text = _first_text_column(X)
    if text is not None:
        raise DataValidationError(f"Column {str(text[0])!r} of X holds text (e.g. {text[1]!r}); the features "
                                  "are numbers in a public box (one column per feature).")
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataValidationError("X must be numeric (one column per feature).") from None
    if arr.ndim == 1 and d is not None and arr.size == d:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise DataValidationError(f"X must be a 2-d array (records x features); got shape {arr.shape}.")
    if d is not None and arr.shape[1] != d:
        raise DataValidationError(f"X has {arr.shape[1]} features; the bounds describe {d}.")
    finite = np.isfinite(arr).all(axis=0)
    if not finite.all():
        j = int(np.flatnonzero(~finite)[0])
        where = f"column {names[j]!r}" if names is not None and len(names) == arr.shape[1] else f"column {j}"
        raise DataValidationError(  # no count of records: an error may be pasted where the data may not
            f"X has missing or infinite values in {where}; impute or drop those records first (a device reports "
            "a number in the public box for every feature)."
        )
    return arr


# ------------------------------------------------------------------- grid
@dataclass(frozen=True)
class Grid:
    """The public grid: box ``[lower, upper]`` mapped to ``[0, 1]^d``, step ``h``.

    Cube centres ``x_j = h j`` with ``j_k in {0, ..., K}``, ``K = ceil(1/h)``
    (the cubes of radius ``h`` that can meet ``[0, 1]^d``); fine cells
    ``[h c, h (c + 1))`` with ``c_k in {0, ..., K - 1}`` (the last one closed).
    Points outside the box are clipped onto it (a per-record map).
    """

    lower: np.ndarray
    upper: np.ndarray
    h: float
    K: int = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "K", max(1, math.ceil(1.0 / self.h - 1e-12)))

    @property
    def d(self) -> int:
        return int(self.lower.size)

    @property
    def n_cubes(self) -> int:
        return (self.K + 1) ** self.d

    @property
    def n_fine(self) -> int:
        return self.K**self.d

    def unit(self, X: np.ndarray) -> np.ndarray:
        """Features mapped to ``[0, 1]^d`` (clipped)."""
        return np.clip((X - self.lower) / (self.upper - self.lower), 0.0, 1.0)

    def nearest(self, U: np.ndarray) -> np.ndarray:
        """``j*(x)``: the flat index of the nearest cube centre (the slides' argmin)."""
        j = np.clip(np.rint(U / self.h), 0, self.K).astype(np.int64)
        return self._flat(j, self.K + 1)

    def fine(self, U: np.ndarray) -> np.ndarray:
        """The flat index of the fine cell of each point."""
        c = np.clip(np.floor(U / self.h), 0, self.K - 1).astype(np.int64)
        return self._flat(c, self.K)

    @staticmethod
    def _flat(idx: np.ndarray, base: int) -> np.ndarray:
        weights = base ** np.arange(idx.shape[1], dtype=np.int64)
        return idx @ weights

    def cube_members(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The cubes holding each point: flat indices ``(n, 2^d)`` and a validity mask.

        Per coordinate, ``|u - h j| < h`` holds for ``j in {floor(u/h), floor(u/h) + 1}``
        (only ``j = u/h`` when ``u/h`` is an integer); out-of-grid indices are
        dropped.  Whatever the float rounding, each point gets at most two
        indices per coordinate, hence at most ``2^d`` cubes: that is all the
        privacy proof uses.
        """
        t = U / self.h
        a = np.floor(t)
        cand = np.stack([a, a + 1.0], axis=-1)  # (n, d, 2)
        ok = (np.abs(t[..., None] - cand) < 1.0) & (cand >= 0) & (cand <= self.K)
        cand = cand.astype(np.int64)
        n, d = U.shape
        corners = np.array(list(itertools.product((0, 1), repeat=d)), dtype=np.int64)  # (2^d, d)
        dims = np.arange(d)
        j = cand[:, dims[None, :], corners]  # (n, 2^d, d)
        valid = ok[:, dims[None, :], corners].all(axis=2)
        flat = j @ ((self.K + 1) ** np.arange(d, dtype=np.int64))
        return flat, valid

    def cube_of_fine(self) -> np.ndarray:
        """``M`` (n_cubes x n_fine, 0/1): the fine cells that make up each cube (up to null boundaries)."""
        M = np.zeros((self.n_cubes, self.n_fine), dtype=np.int8)
        d, K = self.d, self.K
        for c in itertools.product(range(K), repeat=d):
            fc = self._flat(np.array([c]), K)[0]
            for off in itertools.product((0, 1), repeat=d):
                j = np.array(c) + np.array(off)
                M[self._flat(j[None, :], K + 1)[0], fc] = 1
        return M

    def to_dict(self) -> dict:
        return {"lower": self.lower.tolist(), "upper": self.upper.tolist(), "bandwidth": self.h, "K": self.K}


def report_size_check(name: str, cells: int, max_cells: int, d: int, h: float) -> None:
    if cells > max_cells:
        raise InvalidParameterError(
            f"A {name} report would have {cells:,} entries ((1/h)^d grows fast: d={d}, h={h:g}), above "
            f"max_cells={max_cells:,}. Use a larger bandwidth, fewer features, or raise max_cells to at least "
            f"{cells:,} if every device can afford it."
        )


# ---------------------------------------------------------------- reports
@dataclass
class Reports:
    """Privatized reports and their public metadata (what the analyst receives).

    ``values``: ``(n, length)`` int32 (``"laplace"``: noisy indicators) or
    uint8 bits (``"oue"``).  ``half``: ``(n,)`` int8, the public coin of each
    report (0: ``B + W``, 1: ``y B + W``; all 0 for ``"oue"``).
    ``n_classes``: the number of labels ``K`` the devices encoded (2 unless
    ``"oue"`` reports of more; the metadata states it only then).
    """

    randomizer: str
    alpha: float
    bandwidth: float
    lower: np.ndarray
    upper: np.ndarray
    values: np.ndarray
    half: np.ndarray
    n_classes: int = 2

    def metadata(self) -> dict:
        meta = {"randomizer": self.randomizer, "alpha": self.alpha, "bandwidth": self.bandwidth,
                "lower": np.asarray(self.lower).tolist(), "upper": np.asarray(self.upper).tolist()}
        if int(self.n_classes) != 2:  # binary report files are as they were
            meta["n_classes"] = int(self.n_classes)
        return meta

    def __len__(self) -> int:
        return int(self.values.shape[0])


# ------------------------------------------------------------ randomizers
class _RandomizerBase:
    name = ""

    def __init__(self, alpha, bandwidth, bounds, *, max_cells=DEFAULT_MAX_CELLS, random_state=None, n_classes=2):
        self.alpha = check_alpha(alpha)
        self.n_classes = check_n_classes(n_classes)
        self._check_classes()
        self.bandwidth = check_bandwidth(bandwidth)
        lower, upper = check_bounds(bounds)
        if isinstance(max_cells, bool) or not isinstance(max_cells, numbers.Integral) or max_cells < 1:
            raise InvalidParameterError(f"The 'max_cells' parameter must be a positive int. Got {max_cells!r} instead.")
        self.max_cells = int(max_cells)
        self.grid = Grid(lower, upper, self.bandwidth)
        report_size_check(self.name, self.report_length, self.max_cells, self.grid.d, self.bandwidth)
        self._rng = check_random_state(random_state)

    @property
    def d(self) -> int:
        return self.grid.d

    def _check_classes(self) -> None:  # the reference mechanism refuses K > 2
        pass

    @property
    def report_length(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def _block_rows(self) -> int:
        return max(1, _BLOCK_ENTRIES // self.report_length)

    def randomize_one(self, x, y, half: int | None = None, rng=None) -> np.ndarray:
        """The report one device sends for its record ``(x, y)`` (1-d array).

        ``half`` (reference mechanism): 0 or 1, the public coin; drawn fairly when None.
        """
        reports = self.randomize(np.asarray(x, dtype=np.float64).reshape(1, -1), np.asarray([y]),
                                 half=None if half is None else np.asarray([half]), rng=rng)
        return reports.values[0]

    def randomize(self, X, y, half=None, rng=None) -> Reports:
        """Reports of a batch of records (simulation of many devices), in blocks of rows."""
        X = check_features(X, self.d)
        y = check_labels(y, X.shape[0], self.n_classes)
        g = self._rng if rng is None else check_random_state(rng)
        coin_rng, noise_rng = spawn(g, 2)
        if half is None:
            half = self.draw_halves(X.shape[0], coin_rng)
        else:
            half = np.asarray(half)
            if half.shape != (X.shape[0],) or not np.isin(half, (0, 1)).all():
                raise InvalidParameterError("half must hold one 0 or 1 per record.")
            half = half.astype(np.int8)
        values = np.empty((X.shape[0], self.report_length), dtype=self.dtype)
        step = self._block_rows()
        for start in range(0, X.shape[0], step):
            stop = min(X.shape[0], start + step)
            values[start:stop] = self._privatize(self.grid.unit(X[start:stop]), y[start:stop], half[start:stop],
                                                 noise_rng)
        return Reports(self.name, self.alpha, self.bandwidth, self.grid.lower, self.grid.upper, values, half,
                       self.n_classes)

    def draw_halves(self, n: int, rng) -> np.ndarray:  # overridden by the reference mechanism
        return np.zeros(n, dtype=np.int8)


class HistogramRandomizer(_RandomizerBase):
    """Berrett & Butucea's alpha-LDP histogram mechanism (slides of paper 004, Theorem 1).

    Parameters
    ----------
    alpha : float > 0
        Local privacy level of every report.
    bandwidth : float in (0, 1]
        Grid step ``h`` in the box mapped to ``[0, 1]^d``.
    bounds : (lower, upper)
        The public box (arrays of length d); values outside are clipped onto it.
    max_cells : int
        Refuse reports longer than this.
    random_state : None, int, SeedSequence or Generator
        ``None`` (release): ChaCha20 from OS entropy.
    n_classes : int, default=2
        Must be 2: the slides' mechanism is binary (a record reports ``B`` or
        ``y B``); :class:`UnaryRandomizer` encodes ``K`` labels.

    Examples
    --------
    >>> r = HistogramRandomizer(1.0, 0.5, ([0, 0], [1, 1]), random_state=0)
    >>> r.report_length, r.l1_sensitivity, r.noise_scale
    (9, 8, 8.0)
    >>> rep = r.randomize([[0.3, 0.8], [0.9, 0.1]], [1, 0])
    >>> rep.values.shape, rep.values.dtype.kind
    ((2, 9), 'i')
    """

    name = "laplace"
    dtype = np.int32

    def _check_classes(self) -> None:
        if self.n_classes != 2:
            raise InvalidParameterError(
                f"The 'laplace' randomizer (the slides' mechanism, paper 004) is binary: a record reports B or y B, "
                f"and the statistic estimates eta - 1/2. Got {self.n_classes} classes: use randomizer='oue', which "
                "reports the (cell, label) of any of up to 255 labels."
            )

    @property
    def report_length(self) -> int:
        return self.grid.n_cubes

    @property
    def l1_sensitivity(self) -> int:
        """``2^(d+1)``: ``||B||_1 <= 2^d`` for every input, for ``B`` and for ``y B``."""
        return 2 ** (self.d + 1)

    @property
    def noise_scale(self) -> float:
        """The discrete Laplace scale ``2^(d+1) / alpha`` (the slides' Laplace scale)."""
        return self.l1_sensitivity / self.alpha

    def draw_halves(self, n: int, rng) -> np.ndarray:
        """The public coin: each record's half, fair and independent of the data."""
        return rng.integers(0, 2, size=n, dtype=np.int64).astype(np.int8)

    def indicators(self, U: np.ndarray, y: np.ndarray, half: np.ndarray) -> np.ndarray:
        """``B`` (half 0) or ``y B`` (half 1) for points ``U`` in the unit box, dense int64."""
        flat, valid = self.grid.cube_members(U)
        keep = valid & ((half == 0) | (y == 1))[:, None]
        B = np.zeros((U.shape[0], self.report_length), dtype=np.int64)
        rows = np.broadcast_to(np.arange(U.shape[0])[:, None], flat.shape)
        B[rows[keep], flat[keep]] = 1
        return B

    def _privatize(self, U, y, half, rng) -> np.ndarray:
        B = self.indicators(U, y, half)
        noisy = B + discrete_laplace(self.noise_scale, B.shape, rng)
        if np.abs(noisy).max(initial=0) >= 2**31 - 1:  # probability ~ exp(-2^31 alpha / 2^(d+1)): never
            raise RuntimeError("a report entry does not fit in int32")
        return noisy.astype(np.int32)


def _exp_lower_bound(alpha: float) -> Fraction:
    """An exact rational ``<= e^alpha``: the Taylor sum of the double ``alpha`` (all terms > 0)."""
    a = Fraction(alpha)
    total, term, k = Fraction(1), Fraction(1), 0
    while True:
        k += 1
        term = term * a / k
        total += term
        if k > 2 * alpha + 10 and term < total * Fraction(1, 2**80):
            return total


def oue_q_numerator(alpha: float) -> int:
    """``num`` with ``q = num / 2^40 >= 1 / (e^alpha + 1)``, the smallest such on the grid.

    Computed in exact rational arithmetic from a lower bound on ``e^alpha``
    (no float exponential), so ``(1 - q) / q <= e^alpha`` holds exactly.

    Examples
    --------
    >>> q = oue_q_numerator(1.0) / 2**40
    >>> 0.2689 < q < 0.26895                            # 1/(e + 1) = 0.268941...
    True
    """
    e_lo = _exp_lower_bound(check_alpha(alpha))
    bound = Fraction(GRID) / (e_lo + 1)
    num = -((-bound.numerator) // bound.denominator)  # ceil
    return int(max(1, min(num, GRID // 2)))


class UnaryRandomizer(_RandomizerBase):
    """Optimized unary encoding of the record's (fine cell, label): alpha-LDP, lower variance.

    The report has ``L M^d`` bits for ``L = n_classes`` labels and
    ``M = ceil(1/h)`` steps a side: bit ``L c + y`` is the record's own (for
    two labels ``2 c + y``).  Own bit 1 with probability 1/2, every other bit with
    probability ``q = num / 2^40 >= 1/(e^alpha + 1)`` (:func:`oue_q_numerator`).
    Every record uses the same mechanism (no halves).  ``n_classes`` (keyword,
    default 2): the number of labels, codes ``0..n_classes - 1``.

    Examples
    --------
    >>> r = UnaryRandomizer(1.0, 0.5, ([0, 0], [1, 1]), random_state=0)
    >>> r.report_length
    8
    >>> set(r.randomize([[0.3, 0.8]], [1]).values.ravel().tolist()) <= {0, 1}
    True
    """

    name = "oue"
    dtype = np.uint8

    @property
    def report_length(self) -> int:
        return self.n_classes * self.grid.n_fine

    @property
    def p(self) -> float:
        return 0.5

    @property
    def q_numerator(self) -> int:
        return oue_q_numerator(self.alpha)

    @property
    def q(self) -> float:
        return self.q_numerator / GRID

    def categories(self, U: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.n_classes * self.grid.fine(U) + y.astype(np.int64)

    def _privatize(self, U, y, half, rng) -> np.ndarray:
        n, m = U.shape[0], self.report_length
        u = rng.integers(0, GRID, size=(n, m), dtype=np.int64)
        bits = u < self.q_numerator
        own = self.categories(U, y)
        rows = np.arange(n)
        bits[rows, own] = u[rows, own] < (GRID >> 1)  # p = 1/2 exactly (an independent uniform draw)
        return bits.astype(np.uint8)


#: Randomizer name -> class.
RANDOMIZERS = {"laplace": HistogramRandomizer, "oue": UnaryRandomizer}


def make_randomizer(name: str, alpha, bandwidth, bounds, **kw):
    """The randomizer registered under ``name`` (``"laplace"`` or ``"oue"``)."""
    try:
        cls = RANDOMIZERS[name]
    except (KeyError, TypeError):
        raise InvalidParameterError(
            f"The 'randomizer' parameter must be one of {sorted(RANDOMIZERS)}. Got {name!r} instead."
        ) from None
    return cls(alpha, bandwidth, bounds, **kw)

