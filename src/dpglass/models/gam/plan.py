"""DP-GAM's release plan, from public inputs only: the class-count table, then per cycle and feature the noisy
per-bin gradient and Hessian sums, each with its privacy map and public domain.

A fit of :class:`~dpglass.models.gam.estimator.DPGAMClassifier` on ``d`` columns (feature ``j`` in ``n_j``
bins: 2 for a 0/1 column, its codes, ``max_bins`` for a numeric one, one more for a missing bin) and ``K``
classes (``C = K - 1`` scores: the softmax with ``classes_[0]`` as reference, the logistic loss for two classes)
releases, in order:

* ``binning="quantile"``: per numeric column its ``max_bins - 1`` DP quantiles (the shared
  :func:`~dpglass.models._binning.quantile_step`, pure epsilon);
* ``class counts``: the K counts, exact discrete Gaussian noise (a record is in one cell: l2 sensitivity 1);
* ``first_cycle="counts"``: the class counts in every bin of every feature (:mod:`dpglass.models.gam.first`);
* for each cycle ``t = 1..n_cycles`` and feature ``j = 0..d-1`` (a *visit*): the sums over the records of each
  bin of feature ``j`` (a 0/1 column: ``x_j = 0`` and ``x_j = 1``) of their C gradient terms, then of their C
  Hessian terms, each a ``(n_j, C)`` table rounded to a public grid with discrete Gaussian noise in grid units.

A record lies in one bin of each visit, so one record moves one row of a table: by its own term vector, whose
l2 norm is at most :func:`term_bounds` (proved there), after the per-record quantisation and projection of
:func:`term_caps`.  Rounding the exact sums to the grid adds at most ``sqrt(C)`` grid units to that distance
(:func:`sum_grid`).  Every step's ledger entry carries its discrete Gaussian curve; the accountant (``"rdp"``,
``"pld"``, or ``"auto"``: whichever lets each visit spend more) calibrates the visits' common budget ``x`` (each
visit is ``x**2 / 2``-zCDP, the counts ``count_share`` of the plan's total) so that the whole plan composes to
``(epsilon, delta)`` (docs/privacy.md, "DP-GAM (dp-gam)").  No release selects a branch: the plan is a function
of the parameters, ``d`` and ``K`` only (the bins' number is a parameter; the sums' sensitivity does not depend
on it).  The fit spends only through it
(:meth:`~dpglass.privacy.ledger.PrivacyLedger.release`) and the file check replays it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.models._binning import (
    BinnedColumns,
    check_categories,
    check_feature_bounds,
    check_missing,
    quantile_step,
)
from dpglass.models.gam.first import first_step
from dpglass.models.gam.limits import (
    MAX_SIGMA,
    least_budget,
    no_rdp_budget,
    pld_too_slow,
    rdp_only_epsilon,
    scales,
    too_small,
)
from dpglass.models.gam.sizes import (
    LARGE,
    RULE_VERSION,
    auto_count_share,
    is_auto,
    resolve,
    zcdp_budget,
)
from dpglass.privacy.accounting import DEFAULT_DELTA, calibrate, compose
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import DiscreteGaussianMechanism, count_fields
from dpglass.privacy.plan import GridMultiples, Integers, PlannedRelease

__all__ = [
    "ACCOUNTANTS",
    "COUNT_SHARE",
    "HESSIAN_FLOOR_SCALES",
    "MAX_BINS",
    "QUANTILE_SHARE",
    "QUANTUM",
    "TOL",
    "GamPlan",
    "Public",
    "SumGrid",
    "auto_bound",
    "gam_plan",
    "grid_units",
    "release_plan",
    "sum_grid",
    "term_bounds",
    "term_caps",
]

#: Per-record terms are rounded to multiples of this unit before they are summed: every sum is an exact integer
#: in these units (int64), whatever the order of summation.
QUANTUM = 2.0**-20
#: The grid of a sum release is about 2**-GRID_BITS of the l2 sensitivity divided by sqrt(C).
GRID_BITS = 5
#: Relative tolerance of the calibration of ``x`` (always on the safe side).
TOL = 1e-2
#: The accountants dp-gam takes (Gaussian noise needs a delta to trade: no basic composition).
ACCOUNTANTS = ("auto", "rdp", "pld")
#: "auto" runs PLD compositions only when every curve's sigma in grid units is at most this (public): the PLD of a
#: discrete Gaussian is built on about 23 sigma points, and gains only a few percent of epsilon over RDP.
PLD_SIGMA_LIMIT = 4096.0
#: ... and only when epsilon is at most this (public): above it PLD's loss grids grow (seconds a composition) for a
#: gain of a few percent of sigma where the guarantee says little anyway.
PLD_EPSILON_LIMIT = 5.0
#: Share of the plan's zCDP for the class-count table (``count_share`` default): on small tables the initial scores
#: are most of what can be learned (measured: docs/privacy.md, "DP-GAM (dp-gam)", "Defaults").
COUNT_SHARE = 0.25
#: ``hessian_floor="auto"``: this many standard deviations of a visit's gradient-sum noise times the square root of
#: the number of visits (a pure-noise step is then at most about 1/(scales * sqrt(visits)) of a standard deviation
#: per bin, and a record's score, a sum over the visits, moves by about 1/scales from noise alone).  Measured on
#: validation parts of the training data (docs/privacy.md, "DP-GAM (dp-gam)", "Defaults"): the smallest value that
#: keeps German, the weakest table, at its majority class at epsilon = 1.
HESSIAN_FLOOR_SCALES = 1.5
#: ... with "auto" sizes, in their gradient branch: small tables, which the larger floor kept at their majority,
#: take the naive-Bayes branch there (validation parts: docs/privacy.md, "DP-GAM (dp-gam)", "Defaults").
AUTO_FLOOR_SCALES = 0.75
#: The initial scores' clip (log-odds, a public constant).
OFFSET_LIMIT = 8.0
#: ``max_bins`` default: bins per numeric column (docs/privacy.md, "DP-GAM (dp-gam)", "Defaults").
MAX_BINS = 16
#: ``quantile_share`` default: the share of epsilon for the DP quantile edges (``binning="quantile"``).
QUANTILE_SHARE = 0.1
#: ``first_share`` default: the share of the plan's zCDP for the count-based first cycle (``first_cycle="counts"``).
FIRST_SHARE = 0.5
OWNER = "DPGAMClassifier"


def term_bounds(n_classes: int) -> tuple[Fraction, Fraction]:
    """``(B_g**2, B_h**2)``: squared l2 bounds of one record's C gradient and C Hessian terms.

    With scores ``F_0 = 0, F_1..F_C`` and ``p = softmax(F)``, a record of class ``y`` has
    ``g_k = p_k - 1[y = k]`` and ``h_k = p_k (1 - p_k)``, ``k = 1..C``.

    * Gradient: ``y = 0`` gives ``sum_k p_k**2 <= (sum_k p_k)**2 <= 1``; ``y = j >= 1`` gives
      ``(1 - p_j)**2 + sum_{k != j} p_k**2 <= (1 - p_j)**2 + (1 - p_j - p_0)**2 <= 2``, and at most ``C``
      terms of magnitude <= 1: ``B_g**2 = min(C, 2)``, approached (``p_y -> 0``, another class ``-> 1``).
    * Hessian: ``C = 1``: ``p(1 - p) <= 1/4``, reached at 1/2.  ``C = 2``: ``phi(t) = t**2 (1 - t)**2`` rises
      on [0, 1/2]; with ``a + b <= 1`` either both are <= 1/2 (sum <= 2/16) or ``a > 1/2`` and
      ``phi(b) <= phi(1 - a) = phi(a) <= 1/16``: ``1/8``, reached at (1/2, 1/2).  ``C >= 3``:
      ``phi(t) = t * t (1 - t)**2 <= t * 4/27`` (``t (1 - t)**2`` peaks at 1/3), so the sum is at most
      ``4/27 sum_k p_k <= 4/27``, reached at three classes of 1/3.
    """
    C = int(n_classes) - 1
    if C < 1:
        raise ValueError(f"n_classes must be at least 2; got {n_classes!r}.")
    h = Fraction(1, 16) if C == 1 else Fraction(1, 8) if C == 2 else Fraction(4, 27)
    return Fraction(min(C, 2)), h


def term_caps(n_classes: int) -> tuple[int, int]:
    """``(gradient cap, Hessian cap)``: ``floor(B * 2**20)``, the bounds of :func:`term_bounds` in
    :data:`QUANTUM` units (exact: ``isqrt(floor(B**2 * 2**40))``).  A record's quantised terms are projected
    to l2 norm at most the cap (``fit.project_l2``), so the bound holds for what is summed."""
    return tuple(math.isqrt(math.floor(b * 2**40)) for b in term_bounds(n_classes))


@dataclass(frozen=True)
class SumGrid:
    """The grid of a ``(2, C)`` sum release: ``grid = 2**(E - 20 - GRID_BITS)`` (``E`` the largest integer with
    ``C 4**E <= cap**2``), ``shift = log2(grid / QUANTUM)``, and ``units``: the l2 sensitivity of the rounded
    sums in grid units, the least integer >= ``cap / 2**shift + sqrt(C)``."""

    cap: int
    moved: int
    grid: float
    shift: int
    units: int

    @property
    def sensitivity(self) -> float:
        """The l2 sensitivity of the exact sums, in term units (``cap * QUANTUM``)."""
        return self.cap * QUANTUM


def sum_grid(cap: int, n_moved: int) -> SumGrid:
    """The grid and the sensitivity in grid units of sums whose one record moves ``n_moved`` coordinates by at
    most ``cap`` (l2, :data:`QUANTUM` units).

    The exact sums ``a`` and ``a'`` of neighbours differ by the record's vector, ``||a - a'|| <= cap``; in grid
    units ``rint(a / D) - rint(a' / D) = (a - a') / D + (e' - e)`` with rounding errors in [-1/2, 1/2] on the
    moved coordinates only, so the l2 distance is at most ``cap / D + sqrt(n_moved)``.  All integers: exact.
    """
    cap, C = int(cap), int(n_moved)
    E = 0
    while C * 4 ** (E + 1) <= cap * cap:
        E += 1
    shift = E - GRID_BITS
    if shift < 0:  # pragma: no cover - caps are ~2**18 and C <= 254
        raise ValueError("the term cap is too small for the grid")
    D = 2**shift
    k = -(-cap // D)  # ceil(cap / D)
    while (k * D - cap) ** 2 < C * D * D:  # k >= cap/D + sqrt(C), in integers
        k += 1
    return SumGrid(cap, C, 2.0 ** (E - 20 - GRID_BITS), shift, k)


def grid_units(unit_sums, grid: SumGrid) -> np.ndarray:
    """Exact sums in :data:`QUANTUM` units rounded to ``grid`` units (int64): what the noise is added to.
    Clipping to +-2**52 is public and 1-Lipschitz per coordinate; the product by a power of two and ``rint`` are
    exact on such integers."""
    units = np.clip(np.asarray(unit_sums, dtype=np.float64), -2.0**52, 2.0**52) * 2.0 ** -grid.shift
    return np.rint(units).astype(np.int64)


def resolved_sizes(params: dict) -> tuple[int, float]:
    """``(n_cycles, learning_rate)`` (public functions of the parameters)."""
    return int(params["n_cycles"]), float(params["learning_rate"])


@dataclass(frozen=True)
class Public(BinnedColumns):
    """The resolved public inputs of a plan (hashable: the calibration is cached on them)."""

    epsilon: float
    delta: float
    accountant: str
    n_cycles: int
    learning_rate: float
    hessian_share: float
    count_share: float
    hessian_floor: float | None
    max_step: float
    n_features: int
    n_classes: int
    bounds: tuple = ()  # per feature None (0/1 or categorical) or (low, high); () for all 0/1
    categories: tuple = ()  # per feature None or m (codes 0..m-1); () for none
    missing: tuple = ()  # per feature True when NaN has its own bin; () for none
    max_bins: int = MAX_BINS
    binning: str = "uniform"
    quantile_share: float = QUANTILE_SHARE
    first_cycle: str = "gradients"
    first_share: float = FIRST_SHARE
    count_rho: float | None = None  # "auto" sizes: the class counts' zCDP, fixed before the branch (sizes.py)

    @classmethod
    def of(cls, params: dict, n_features: int, n_classes: int) -> Public:
        """From a model's parameters (``get_params``, or a file's): None delta, "auto" and the columns'
        bounds, categories and missing flags resolved (raises InvalidParameterError for bad ones)."""
        T, lr = resolved_sizes(params)
        delta = DEFAULT_DELTA if params["delta"] is None else float(params["delta"])
        floor = params["hessian_floor"]
        d = int(n_features)
        bounds = check_feature_bounds(params.get("bounds"), d, OWNER)
        categories = check_categories(params.get("categories"), bounds, OWNER)
        missing = check_missing(params.get("missing"), d, OWNER)
        plain = all(b is None for b in bounds) and all(m is None for m in categories) and not any(missing)
        return cls(float(params["epsilon"]), delta, params["accountant"], T, lr, float(params["hessian_share"]),
                   COUNT_SHARE if params["count_share"] == "auto" else float(params["count_share"]),
                   None if floor == "auto" else float(floor),
                   float(params["max_step"]), d, int(n_classes),
                   () if plain else tuple(bounds), () if plain else tuple(categories), () if plain else tuple(missing),
                   int(params.get("max_bins", MAX_BINS)), params.get("binning", "uniform"),
                   float(params.get("quantile_share", QUANTILE_SHARE)), params.get("first_cycle", "gradients"),
                   float(params.get("first_share", FIRST_SHARE)))

    @property
    def n_visits(self) -> int:
        return self.n_cycles * self.n_features

    @property
    def plain(self) -> bool:
        """Every feature a 0/1 column without a missing bin (the original dp-gam: two bins each)."""
        return not self.bounds

    def n_bins(self, j: int) -> int:
        """Feature j's bins: 2 (0/1), m (categorical), max_bins (numeric), plus one for a missing bin."""
        if self.plain:
            return 2
        m, b = self.categories[j], self.bounds[j]
        return (m if m is not None else 2 if b is None else self.max_bins) + int(self.missing[j])

    def grids(self) -> tuple[SumGrid, SumGrid]:
        """The gradient sums' and the Hessian sums' grids."""
        g_cap, h_cap = term_caps(self.n_classes)
        return sum_grid(g_cap, self.n_classes - 1), sum_grid(h_cap, self.n_classes - 1)

    @property
    def counts_first(self) -> bool:
        """Whether the first cycle is the count table (``first_cycle="counts"``)."""
        return self.first_cycle == "counts"

    def rhos(self, x: float) -> tuple[float, float, float]:
        """``(counts, one gradient release, one Hessian release)`` zCDP when each visit spends ``x**2 / 2``."""
        visit = x * x / 2.0
        total = self.n_visits * visit
        if self.count_rho is not None:
            return self.count_rho, visit * (1.0 - self.hessian_share), visit * self.hessian_share
        if self.counts_first:
            counts = self._total(x) * self.count_share
        else:
            counts = total * self.count_share / (1.0 - self.count_share) if self.n_visits else x * x / 2.0
        return counts, visit * (1.0 - self.hessian_share), visit * self.hessian_share

    def _total(self, x: float) -> float:
        """The plan's zCDP with a count-based first cycle: the visits take ``1 - count_share - first_share`` of
        it (without visits, ``x**2 / 2`` is the whole)."""
        if not self.n_visits:
            return x * x / 2.0 / (self.count_share + self.first_share)
        return self.n_visits * x * x / 2.0 / (1.0 - self.count_share - self.first_share)

    def rho_first(self, x: float) -> float:
        """The count-based first cycle's zCDP (with "auto" sizes: ``first_share`` of what the counts leave, all of
        it without visits)."""
        if self.count_rho is not None:
            v = self.n_visits * x * x / 2.0
            return x * x / 2.0 if not v else v * self.first_share / (1.0 - self.first_share)
        return self._total(x) * self.first_share


@dataclass(frozen=True)
class GamPlan:
    """A fit's plan: ``x`` (each visit is ``x**2/2``-zCDP), the accountant, the resolved delta and Hessian floor,
    the steps (``counts``; ``visits``: one ``(feature, gradient step, Hessian step)`` per cycle and feature, in
    order) and ``steps``, all of them in ledger order."""

    x: float
    accountant: str
    delta: float
    hessian_floor: float
    public: Public
    counts: PlannedRelease
    visits: tuple
    steps: tuple
    bins: tuple = ()  # binning="quantile": one step per numeric column (its DP quantile edges), first in the plan
    first: PlannedRelease | None = None  # first_cycle="counts": the class counts per bin, after the class counts
    pending: bool = False  # "auto" sizes before the class counts are released: ``steps`` ends at the counts


def _entry_delta(pub: Public) -> float:
    """The delta each release states its pair at (the basic view only: the accountants read the curves): half
    of delta over the plan's releases (with "auto" sizes: a quarter of delta for the counts, a quarter for the
    rest, whatever the branch)."""
    if pub.count_rho is not None:
        return pub.delta / (4.0 * (1 + 2 * pub.n_visits))
    return pub.delta / (2.0 * (1 + 2 * pub.n_visits))


def _sigma(units: int, rho: float) -> float:
    return units / math.sqrt(2.0 * rho)


def _count_step(pub: Public, rho: float) -> PlannedRelease:
    mech = DiscreteGaussianMechanism(_sigma(1, rho), pub.delta / 4.0 if pub.count_rho is not None else
                                     _entry_delta(pub), 1)
    note = (f"the {pub.n_classes} class counts: one record changes one count by 1 (add/remove), l2 sensitivity 1; "
            "the initial scores log((c_k + 1/2)/(c_0 + 1/2)), clipped, are post-processing")
    entry = LedgerEntry(release="class counts (the initial scores)", **count_fields(mech), note=note)
    return PlannedRelease(entry, lambda v, rng: [int(c) for c in mech.randomise(np.asarray(v, dtype=np.int64),
                                                                                 rng)], Integers(), ("class_counts",))


def _sum_step(pub: Public, grid: SumGrid, rho: float, release: str, note: str, field: str) -> PlannedRelease:
    """A ``(2, C)`` table of exact sums in QUANTUM units, rounded to ``grid`` and released with discrete Gaussian
    noise in grid units (multiples of the grid)."""
    mech = DiscreteGaussianMechanism(_sigma(grid.units, rho), _entry_delta(pub), grid.units)

    def noise(unit_sums, rng):
        return np.asarray(mech.randomise(grid_units(unit_sums, grid), rng), dtype=np.float64) * grid.grid

    entry = LedgerEntry(release=release, mechanism="discrete gaussian (grid)", epsilon=mech.epsilon,
                        delta=mech.delta, sensitivity=grid.sensitivity, scale=mech.sigma * grid.grid,
                        guarantee="proven", note=note, curve=mech.curve)
    return PlannedRelease(entry, noise, GridMultiples(grid.grid), (field,))


def _notes(pub: Public, grids) -> tuple[str, str]:
    C = pub.n_classes - 1
    g_b, h_b = term_bounds(pub.n_classes)
    what = "p - y" if C == 1 else f"p_k - 1[y = k] of the {C} classes but the first"
    hwhat = "p(1 - p)" if C == 1 else f"p_k(1 - p_k) of the {C} classes but the first"
    if pub.plain:
        tail = ("; a record is in one bin (x_j = 0 or 1) and moves one row of the (2, C) table; rounded to the grid: "
                "+sqrt(C) units; zCDP composed by the plan's accountant")
    else:
        tail = ("; a record is in one bin of the feature (its value's, or the missing bin) and moves one row of the "
                "(bins, C) table; rounded to the grid: +sqrt(C) units; zCDP composed by the plan's accountant")
    return (f"per-bin sums of the gradients {what}, l2 <= sqrt({g_b}) per record{tail}; {grids[0].units} grid units",
            f"per-bin sums of the Hessians {hwhat}, l2 <= sqrt({h_b}) per record{tail}; {grids[1].units} grid units")


def visit_fields(i: int) -> tuple[str, str]:
    """The file fields of visit ``i``'s released sums (the verifier's view: one key per visit)."""
    return f"visits[{i}].gradient_sums", f"visits[{i}].hessian_sums"


def _steps(pub: Public, x: float) -> tuple[PlannedRelease, tuple, tuple]:
    rho_c, rho_g, rho_h = pub.rhos(x)
    grids = pub.grids()
    g_note, h_note = _notes(pub, grids)
    counts = _count_step(pub, rho_c)
    visits, steps = [], [*_bin_steps(pub), counts]
    if pub.counts_first:
        steps.append(first_step(pub, pub.rho_first(x), _entry_delta(pub)))
    for t in range(1, pub.n_cycles + 1):
        for j in range(pub.n_features):
            gf, hf = visit_fields(len(visits))
            g = _sum_step(pub, grids[0], rho_g, f"cycle {t}, feature {j}: gradient sums", g_note, gf)
            h = _sum_step(pub, grids[1], rho_h, f"cycle {t}, feature {j}: Hessian sums", h_note, hf)
            visits.append((j, g, h))
            steps += [g, h]
    return counts, tuple(visits), tuple(steps)


def _entries(pub: Public, x: float) -> list:
    """The plan's ledger entries when each visit spends ``x`` (one entry object per kind: cheap to compose)."""
    rho_c, rho_g, rho_h = pub.rhos(x)
    grids = pub.grids()
    count = _count_step(pub, rho_c).entry
    first = [first_step(pub, pub.rho_first(x), _entry_delta(pub)).entry] if pub.counts_first else []
    if not pub.n_visits:
        return [s.entry for s in _bin_steps(pub)] + [count] + first
    g = _sum_step(pub, grids[0], rho_g, "", "", "").entry
    h = _sum_step(pub, grids[1], rho_h, "", "", "").entry
    return [s.entry for s in _bin_steps(pub)] + [count] + first + [g, h] * pub.n_visits


@functools.lru_cache(maxsize=256)
def _bin_steps(pub: Public) -> tuple:
    """``binning="quantile"``: per numeric column its ``max_bins - 1`` DP quantiles (the shared
    :func:`~dpglass.models._binning.quantile_step`, dp-gbdt's), ``quantile_share`` of epsilon split evenly."""
    if not pub.quantiles:
        return ()
    nb, numeric = pub.max_bins, pub.numeric
    each = pub.epsilon * pub.quantile_share / (len(numeric) * (nb - 1))
    return tuple(quantile_step(j, pub.bounds[j], nb, each) for j in numeric)


def _max_sigma(pub: Public, x: float) -> float:
    return max(scales(pub, x).values())


@functools.lru_cache(maxsize=256)
def budget(pub: Public) -> tuple[float, str]:
    """``(x, accountant used)``: the largest visit budget whose plan composes to ``(epsilon, delta)``.

    ``"rdp"`` and ``"pld"`` calibrate the plan's own entries (:func:`~dpglass.privacy.accounting.calibrate`,
    relative :data:`TOL`); ``"auto"`` calibrates under RDP, then under PLD when epsilon and the curves are small
    enough (:data:`PLD_EPSILON_LIMIT`, :data:`PLD_SIGMA_LIMIT`: a public rule) and PLD lets ``x`` be larger
    (ties: RDP).  Every ``x`` is at least :func:`~dpglass.models.gam.limits.least_budget` (the sampler's range;
    below it the plan is refused in the user's terms), an explicit ``"pld"`` is refused where its noise is too
    large to compose in reasonable time, and with "auto" sizes ``x`` is RDP-only (:func:`_rdp_only`).
    """
    if pub.accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}; got {pub.accountant!r}.")
    if not pub.delta > 0:
        raise ValueError("dp-gam releases Gaussian noise: it needs delta > 0.")
    floor = least_budget(pub)

    def plan(x):
        return _entries(pub, max(x, floor))

    if compose(plan(floor), "rdp", pub.delta)[0] > pub.epsilon:
        raise too_small(pub, floor)
    x = max(calibrate(plan, pub.epsilon, pub.delta, "rdp", tol=TOL), floor)
    if pub.count_rho is not None:
        return _rdp_only(pub, plan, x, floor), "rdp"
    if pub.accountant == "rdp":
        return x, "rdp"
    if pub.accountant == "pld":
        refusal = pld_too_slow(pub, x)
        if refusal is not None:
            raise refusal
        return max(calibrate(plan, pub.epsilon, pub.delta, "pld", tol=TOL), floor), "pld"

    def fits(v):
        return compose(plan(v), "pld", pub.delta)[0] <= pub.epsilon

    lo = x * (1 + TOL)
    if pub.epsilon > PLD_EPSILON_LIMIT or _max_sigma(pub, x) > PLD_SIGMA_LIMIT or not fits(lo):
        return x, "rdp"
    hi = 1.25 * lo  # PLD lets x grow: bracket it from above the RDP result, then bisect
    while fits(hi):
        lo, hi = hi, 1.25 * hi
    while hi / lo > 1 + TOL:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo, "pld"


def _rdp_only(pub: Public, plan, x: float, floor: float) -> float:
    """With "auto" sizes: ``x`` lowered by factors ``1 + TOL`` until the plan's RDP conversion alone is within
    epsilon (the calibration accepts the smaller of RDP and the basic sum; the argument over branches needs RDP)."""
    while rdp_only_epsilon(plan(x), pub.delta) > pub.epsilon:
        if x <= floor:
            raise too_small(pub, floor)
        x = max(x / (1 + TOL), floor)
    return x


def resolved_floor(pub: Public, x: float) -> float:
    """The Hessian floor ``lambda`` of the Newton steps: ``hessian_floor``, or with "auto"
    :data:`HESSIAN_FLOOR_SCALES` times ``sqrt(n_visits)`` standard deviations of a gradient sum's noise (term
    units): public."""
    if pub.hessian_floor is not None:
        return pub.hessian_floor
    grid = pub.grids()[0]
    scales = HESSIAN_FLOOR_SCALES if pub.count_rho is None else AUTO_FLOOR_SCALES
    return scales * math.sqrt(pub.n_visits) * _sigma(grid.units, pub.rhos(x)[1]) * grid.grid


def gam_plan(params: dict, n_features: int, n_classes: int, class_counts=None,
             rule_version: int = RULE_VERSION) -> GamPlan:
    """The plan of a fit with these parameters on ``n_features`` columns and ``n_classes`` classes (raises
    ValueError for parameters it cannot plan: delta = 0, an unknown accountant; InvalidParameterError for
    bounds, categories or missing flags that do not describe ``n_features`` columns).  With "auto" sizes
    (:mod:`dpglass.models.gam.sizes`) the plan branches on the released ``class_counts`` by the rule of
    ``rule_version`` (a file's ``sizes_rule``): without them it is ``pending`` and ends at the counts."""
    if is_auto(params):
        return _auto_plan(params, n_features, n_classes, class_counts, rule_version)
    pub = Public.of(params, n_features, n_classes)
    if pub.counts_first and pub.count_share + pub.first_share >= 1.0:
        raise InvalidParameterError(
            f"{OWNER}'s count_share + first_share is {pub.count_share + pub.first_share:g}: with "
            "first_cycle='counts' they must leave a share of the budget for the cycles (sum below 1).")
    x, accountant = budget(pub)
    counts, visits, steps = _steps(pub, x)
    first = steps[len(_bin_steps(pub)) + 1] if pub.counts_first else None
    return GamPlan(x, accountant, pub.delta, resolved_floor(pub, x), pub, counts, visits, steps, _bin_steps(pub), first)


def release_plan(params: dict, n_features: int, n_classes: int = 2) -> list:
    """DPGAMClassifier's recorded releases, in order, from its public parameters (docs/privacy.md, DP-GAM)."""
    return list(gam_plan(params, n_features, n_classes).steps)


def _auto_plan(params: dict, d: int, K: int, class_counts, rule_version: int) -> GamPlan:
    """The plan with "auto" sizes: the counts at their fixed cost, then (given the released counts) the rule's
    branch calibrated under RDP with the counts' entry fixed (docs/privacy.md, "DP-GAM", "Defaults")."""
    pub0 = _auto_base(params, d, K)
    rho_star = _rho_star(pub0)
    if not rho_star > 0:
        raise no_rdp_budget(pub0)
    rho_c = auto_count_share(params, d) * rho_star
    if scales(dataclasses.replace(pub0, count_rho=rho_c), 1.0)["count"] > MAX_SIGMA:
        raise too_small(dataclasses.replace(pub0, count_rho=rho_c), 1.0, "count")
    if class_counts is None:
        pub = dataclasses.replace(pub0, count_rho=rho_c)
        bins, counts = _bin_steps(pub), _count_step(pub, rho_c)
        return GamPlan(math.nan, "rdp", pub.delta, math.nan, pub, counts, (), (*bins, counts), bins, None, True)
    large = Public.of({**params, **{k: v for k, v in LARGE.items() if params.get(k) == "auto"}}, d, K)
    bins = sum(large.n_bins(j) for j in range(d))
    resolved = {**resolve(params, class_counts, d, K, bins, rule_version), "accountant": "rdp"}
    pub = dataclasses.replace(Public.of(resolved, d, K), count_rho=rho_c)
    x, accountant = budget(pub)
    counts, visits, steps = _steps(pub, x)
    first = steps[len(_bin_steps(pub)) + 1] if pub.counts_first else None
    return GamPlan(x, accountant, pub.delta, resolved_floor(pub, x), pub, counts, visits, steps, _bin_steps(pub), first)


@functools.lru_cache(maxsize=256)
def _rho_star(pub: Public) -> float:
    """The largest zCDP a plan's discrete Gaussians may spend after its quantile steps (if any): RDP conversion
    alone at delta within epsilon (never the basic sum: the argument over branches is an RDP one)."""
    bins = [s.entry for s in _bin_steps(pub)]

    def composed(rho: float) -> float:
        mech = DiscreteGaussianMechanism(min(_sigma(1, rho), 2.0**30), pub.delta / 4.0, 1)
        entry = LedgerEntry(release="", mechanism="discrete gaussian", epsilon=mech.epsilon, delta=mech.delta,
                            sensitivity=1.0, scale=mech.scale, guarantee="proven", note="", curve=mech.curve)
        return rdp_only_epsilon([*bins, entry], pub.delta)

    return zcdp_budget(pub.epsilon, pub.delta, composed)


def auto_bound(params: dict, n_features: int, n_classes: int) -> list:
    """Ledger entries whose composed Rényi curve bounds every branch of a plan with "auto" sizes (for a search that
    composes runs by their curves): the quantile steps, if any, and one discrete Gaussian of zCDP
    ``rho* (1 + 1e-5)``: every branch's discrete Gaussians sum to at most ``rho*`` (to the calibration's 1e-6 from
    below), and their curves are linear."""
    pub0 = _auto_base(params, n_features, n_classes)
    rho = _rho_star(pub0) * (1 + 1e-5)
    mech = DiscreteGaussianMechanism(_sigma(1, rho), pub0.delta / 2.0, 1)
    entry = LedgerEntry(release="every release after the quantile steps, any branch (a bound)",
                        mechanism="discrete gaussian", epsilon=mech.epsilon, delta=mech.delta, sensitivity=1.0,
                        scale=mech.scale, guarantee="proven", note="", curve=mech.curve)
    return [*(s.entry for s in _bin_steps(pub0)), entry]


def _auto_base(params: dict, d: int, K: int) -> Public:
    """The public inputs every branch of an "auto" plan shares (its quantile steps and the counts' budget)."""
    base = {**params, "accountant": "rdp", "n_cycles": 0, "first_cycle": "gradients",
            "max_bins": MAX_BINS if params.get("max_bins") == "auto" else params["max_bins"]}
    return Public.of(base, d, K)
