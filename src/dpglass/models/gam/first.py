"""dp-gam's count-based first cycle (``first_cycle="counts"``): one release of the class counts in every bin of
every feature, from which every shape starts at its naive-Bayes log-likelihood ratio (post-processing).

The exact values are ``a * T`` with ``T[j][b, k] = #{i : bin_j(x_i) = b, y_i = k}``, all features' tables
concatenated (feature by feature, bin by bin, class by class) into one integer vector, and ``a`` a public integer
scale (:func:`table_scale`).  **Sensitivity.** Adding or removing one record changes one cell of each of the d
tables by ``a``: the l2 distance is ``a sqrt(d)`` exactly, at most the integer ``k`` of :func:`table_scale`.
**Guarantee.** The discrete Gaussian of scale sigma on an integer vector of l2 sensitivity k is
``k**2 / (2 sigma**2)``-zCDP (Canonne, Kamath & Steinke 2020, Thm 14); the ledger entry carries its curve and the
plan's accountant composes it with the other releases.  ``a`` only lets the integer ``k`` sit within 1% of the real
``a sqrt(d)`` (``k = ceil(sqrt(d))`` alone would cost up to 30% more noise at d = 13).

The starting shapes are post-processing of the released vector: ``s_j[b, k] = log p_j(b | k) - log p_j(b | 0)`` with
``p_j(b | k) = (T~[b, k] + ALPHA) / (sum_b T~[b, k] + ALPHA n_j)`` and ``T~ = max(released, 0) / a`` (the
naive-Bayes scores of issue 31's reference, class 0 the reference class); the cycles of gradient visits then
correct them (each visit's sums read the scores of the model released so far, these included).
"""

from __future__ import annotations

import math

import numpy as np

from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import DiscreteGaussianMechanism
from dpglass.privacy.plan import Integers, PlannedRelease

__all__ = ["ALPHA", "FIELD", "bin_class_counts", "first_shapes", "first_step", "pooled_counts", "portable_log",
           "smoothing", "table_scale"]

#: Pseudo-count added to every cell of a released table before the ratios (public).
ALPHA = 1.0
#: With "auto" sizes, the pseudo-count is at least this many standard deviations of a cell's noise
#: (docs/privacy.md, "DP-GAM", "Defaults": measured on validation parts of training data).
SMOOTH_SIGMAS = 0.5
#: The largest integer scale :func:`table_scale` tries.
SCALE_MAX = 64
#: The file field of the released vector.
FIELD = "first_cycle_counts"
#: ln 2 split as fdlibm does: ``_LN2_HI`` has 32 significant bits (``e * _LN2_HI`` is exact for ``|e| < 2**21``).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
#: ``1 / (2i + 1)``, i = 0..11: the series of ``atanh(s) / s`` in ``z = s**2``; ``z <= 0.0295`` so the first
#: omitted term is below ``2**-53`` of the sum.
_ATANH_SERIES = tuple(1.0 / (2 * i + 1) for i in range(12))


def portable_log(x) -> np.ndarray:
    """The natural log of positive finite float64 values by IEEE-754 basic operations only (``frexp``, ``+ - * /``,
    each a separate, correctly rounded step in a fixed order), so the same bits on every machine: ``np.log`` takes a
    CPU-dependent SIMD path and libm's ``log`` differs between libraries and FMA variants, while the verifier
    compares the replayed shapes bit for bit.  ``x = m 2**e`` with ``m`` in ``[sqrt(1/2), sqrt(2))``,
    ``log m = 2 atanh(s)``, ``s = (m - 1) / (m + 1)`` (``m - 1`` is exact), ``|s| <= 0.172``; error a few ulp."""
    m, e = np.frexp(np.asarray(x, dtype=np.float64))
    low = m < 0.7071067811865476
    m = np.where(low, m * 2.0, m)
    e = (e - low).astype(np.float64)
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    p = np.full_like(s, _ATANH_SERIES[-1])
    for c in _ATANH_SERIES[-2::-1]:
        p = p * z + c
    return e * _LN2_HI + (e * _LN2_LO + (2.0 * s) * p)


def table_scale(d: int) -> tuple[int, int]:
    """``(a, k)``: the integer scale ``a`` in 1..SCALE_MAX whose integer bound ``k >= a sqrt(d)`` (the least such,
    ``k**2 >= a**2 d`` in integers) is relatively closest to ``a sqrt(d)`` (first best)."""
    best = None
    for a in range(1, SCALE_MAX + 1):
        k = math.isqrt(a * a * d - 1) + 1
        ratio = (k * k) / (a * a * d)
        if best is None or ratio < best[0]:
            best = (ratio, a, k)
    return best[1], best[2]


def first_step(pub, rho: float, entry_delta: float) -> PlannedRelease:
    """The release of the scaled class-per-bin counts of every feature, ``rho``-zCDP."""
    a, k = table_scale(pub.n_features)
    mech = DiscreteGaussianMechanism(k / math.sqrt(2.0 * rho), entry_delta, k)
    cells = sum(pub.n_bins(j) for j in range(pub.n_features)) * pub.n_classes
    note = (f"the class counts in every bin of every feature ({cells} cells), times a = {a}: one record moves one "
            f"cell of each of the {pub.n_features} features' tables by a, l2 a*sqrt(d) <= {k}; the starting shapes "
            "(naive-Bayes log ratios) are post-processing")
    entry = LedgerEntry(release="first cycle: class counts per bin of every feature", mechanism="discrete gaussian",
                        epsilon=mech.epsilon, delta=mech.delta, sensitivity=float(k), scale=mech.scale,
                        guarantee="proven", note=note, curve=mech.curve)

    def noise(v, rng):
        return [int(c) for c in mech.randomise(np.asarray(v, dtype=np.int64), rng)]

    return PlannedRelease(entry, noise, Integers(), (FIELD,))


def bin_class_counts(table, pub) -> np.ndarray:
    """The exact vector ``a * T`` (int64) of a (binned or 0/1) pattern table."""
    a, _ = table_scale(pub.n_features)
    labels = np.asarray(table.labels, dtype=np.intp)
    counts = np.asarray(table.counts, dtype=np.int64)
    parts = []
    for j in range(pub.n_features):
        T = np.zeros((pub.n_bins(j), pub.n_classes), dtype=np.int64)
        np.add.at(T, (np.asarray(table.column(j), dtype=np.intp), labels), counts)
        parts.append(T.ravel())
    return a * np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def smoothing(plan) -> float:
    """The pseudo-count of the starting shapes: :data:`ALPHA`; with "auto" sizes (``count_rho`` set) the larger of
    it and :data:`SMOOTH_SIGMAS` standard deviations of a cell's noise (count units, public): a noisy ratio is shrunk
    towards 0 instead of followed."""
    if plan.public.count_rho is None or plan.first is None:
        return ALPHA
    a, _ = table_scale(plan.public.n_features)
    return max(ALPHA, SMOOTH_SIGMAS * plan.first.entry.scale / a)


def first_shapes(released, pub, alpha: float = ALPHA) -> list:
    """The starting shapes, one ``(n_j, C)`` array per feature, from the released vector (post-processing; the logs
    by :func:`portable_log`, so a file's replay gives the same bits on every machine)."""
    a, _ = table_scale(pub.n_features)
    v = np.maximum(np.asarray(released, dtype=np.float64), 0.0) / a
    out, at = [], 0
    for j in range(pub.n_features):
        n_j, K = pub.n_bins(j), pub.n_classes
        T = v[at : at + n_j * K].reshape(n_j, K)
        at += n_j * K
        logp = portable_log((T + alpha) / (T.sum(axis=0) + alpha * n_j))
        out.append(logp[:, 1:] - logp[:, :1])
    return out


def pooled_counts(class_counts, released, plan) -> np.ndarray:
    """With "auto" sizes: the class counts estimated from every release that holds them (post-processing): the
    released counts (noise variance ``s_c**2``) and each feature's per-class total of its released table
    (``n_j`` cells of variance ``s_t**2``, in count units), weighted by their inverse variances.  The initial
    scores then read ``d * K`` more noisy cells than the K counts alone."""
    pub = plan.public
    a, _ = table_scale(pub.n_features)
    var_c = plan.counts.entry.scale ** 2
    var_t = (plan.first.entry.scale / a) ** 2
    v = np.asarray(released, dtype=np.float64) / a
    num = np.asarray(class_counts, dtype=np.float64) / var_c
    den = 1.0 / var_c
    at = 0
    for j in range(pub.n_features):
        n_j, K = pub.n_bins(j), pub.n_classes
        num = num + v[at : at + n_j * K].reshape(n_j, K).sum(axis=0) / (n_j * var_t)
        den += 1.0 / (n_j * var_t)
        at += n_j * K
    return num / den
