"""Exact output distributions of one rule-list selection, and the search for bad pairs.

One step of a DP rule list picks an index among the remaining candidates
("no rule" last) from their exact counts.  For small candidate sets its output
distribution can be computed exactly (to quadrature precision), which turns
the question "is this selection (eps, delta)-DP on this neighbouring pair?"
into arithmetic: the hockey-stick divergence
``delta(eps) = sum_o max(0, P(o) - e**eps Q(o))`` in both directions.
:func:`search_selection_pairs` uses that to look for neighbouring pairs of
small datasets where a selection exceeds its claimed ``(eps, delta)``; the
sampling audit (:func:`~dpglass.audit.audit_mechanism`) then confirms a
candidate pair empirically, independently of this arithmetic.

Noisy-argmin probabilities: with ``X_j = G_j + b Z_j`` (i.i.d. ``Z``),
``P(argmin = i) = integral h(u) prod_{j != i} P[Z > u + (G_i - G_j)/b] du``
(``h`` the density of ``Z``), integrated by adaptive quadrature with the kinks
of the Laplace density as break points.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from dpglass.privacy.rng import check_random_state
from scipy import special

from dpglass.privacy.mechanisms import (
    ExponentialMechanism,
    GaussianMechanism,
    PermuteAndFlip,
    SmoothCauchyMechanism,
    SmoothLaplaceMechanism,
    cauchy_like_cdf,
)
from dpglass.privacy.sensitivity import (
    GINI_GLOBAL_SENSITIVITY,
    gini_local_sensitivity,
    gini_smooth_sensitivity,
    weighted_gini,
)

__all__ = [
    "argmin_probabilities",
    "selection_probabilities",
    "hockey_stick",
    "privacy_profile",
    "literal_tables",
    "search_selection_pairs",
    "SelectionPair",
]


# ---------------------------------------------------------------- noise laws
def _laplace_sf(z):
    z = np.asarray(z, dtype=np.float64)
    return np.where(z >= 0, 0.5 * np.exp(-np.abs(z)), 1.0 - 0.5 * np.exp(-np.abs(z)))


def _laplace_pdf(z):
    return 0.5 * np.exp(-np.abs(z))


def _cauchy_like(gamma):
    c = gamma * math.sin(math.pi / gamma) / (2 * math.pi)
    return (lambda z: c / (1.0 + np.abs(z) ** gamma)), (lambda z: 1.0 - cauchy_like_cdf(z, gamma))


def _gauss():
    return (lambda z: np.exp(-0.5 * np.asarray(z) ** 2) / math.sqrt(2 * math.pi)), (lambda z: special.ndtr(-np.asarray(z)))


def _log_sf_laplace(z):
    return np.where(z >= 0, math.log(0.5) - z, np.log1p(-0.5 * np.exp(np.minimum(z, 0.0))))


def argmin_probabilities(values, scale, noise="laplace", gamma=4.0, n_grid=20_001):
    """Exact ``P(argmin_j values_j + scale * Z_j = i)`` for i.i.d. noise ``Z``.

    ``P(argmin = i) = integral f_i(x) prod_{j != i} S_j(x) dx`` with ``f_i``
    the density and ``S_j`` the survival function of ``values_j + scale Z``,
    computed in log space on the grid ``x = c + scale * sinh(t)`` (dense near
    the values, reaching ``|x - c| ~ scale * 1e8`` for heavy tails) with the
    trapezoid rule.  Relative accuracy about 1e-6 on every probability above
    1e-15, enough for privacy-loss arithmetic.

    Parameters
    ----------
    values : 1-d array
    scale : float > 0
    noise : {"laplace", "cauchy-like", "gaussian"}
        Standard Laplace, ``h(z) ∝ 1/(1+|z|**gamma)`` or standard normal.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> p = argmin_probabilities([0.0, 1.0], 1.0)
    >>> abs(float(p[1]) - 3 * math.exp(-1) / 4) < 1e-7   # P[Z0 - Z1 > 1] = (2 + 1) e^-1 / 4
    True
    """
    g = np.asarray(values, dtype=np.float64)
    b = float(scale)
    c = 0.5 * (g.min() + g.max())
    t_max = 20.0 if noise == "cauchy-like" else math.asinh((g.max() - g.min()) / b + 80.0)
    t = np.linspace(-t_max, t_max, n_grid)
    x = c + b * np.sinh(t)
    jac = np.cosh(t) * (t[1] - t[0])
    jac[0] *= 0.5
    jac[-1] *= 0.5
    z = (x[None, :] - g[:, None]) / b  # (m, grid)
    if noise == "laplace":
        log_pdf = math.log(0.5) - np.abs(z)
        log_sf = _log_sf_laplace(z)
    elif noise == "gaussian":
        log_pdf = -0.5 * z * z - 0.5 * math.log(2 * math.pi)
        log_sf = special.log_ndtr(-z)
    elif noise == "cauchy-like":
        gm = float(gamma)
        norm = gm * math.sin(math.pi / gm) / (2 * math.pi)
        with np.errstate(over="ignore"):
            log_pdf = math.log(norm) - np.log1p(np.abs(z) ** gm)
            w = 1.0 / (1.0 + np.abs(z) ** gm)
        tail = 0.5 * special.betainc(1.0 - 1.0 / gm, 1.0 / gm, w)  # P(Z > |z|)
        with np.errstate(divide="ignore"):
            log_sf = np.where(z >= 0, np.log(tail), np.log1p(-tail))
    else:
        raise ValueError(f"unknown noise {noise!r}")
    total = log_sf.sum(axis=0)
    with np.errstate(invalid="ignore"):
        integrand = np.exp(log_pdf + total[None, :] - log_sf) * jac[None, :]
    return np.nan_to_num(integrand).sum(axis=1)


# -------------------------------------------------------------- one selection
def selection_probabilities(mechanism, *, c0, c1, n0, n1, epsilon, delta=0.0, min_support=1, gamma=4.0,
                            variant="corrected", n_hat=None, margin=0.0):
    """Exact output distribution of ``dpglass.models.rule_list.selection.select``.

    Same arguments as ``select`` (``c0``, ``c1`` with "no rule" last), for the
    mechanisms whose distribution has a closed form or a one-dimensional
    integral: ``smooth-laplace``, ``smooth-cauchy``, ``global-laplace``,
    ``global-gaussian``, ``exponential``, ``local-pf``, ``certified-pf`` (given ``n_hat``).
    """
    c0 = np.asarray(c0, dtype=np.float64)
    c1 = np.asarray(c1, dtype=np.float64)
    ginis = np.asarray(weighted_gini(c1, c0, n1 - c1, n0 - c0), dtype=np.float64)
    m = ginis.size
    paper = variant == "paper"
    if mechanism == "smooth-laplace":
        mech = SmoothLaplaceMechanism(epsilon, delta)
        s = gini_smooth_sensitivity(int(n0 + n1), mech.beta, min_support=min_support, variant=variant)
        return argmin_probabilities(ginis, float(mech.scale(s)), "laplace")
    if mechanism == "smooth-cauchy":
        mech = SmoothCauchyMechanism(epsilon, gamma)
        s = gini_smooth_sensitivity(int(n0 + n1), mech.beta, min_support=min_support, variant=variant)
        return argmin_probabilities(ginis, float(mech.scale(s)), "cauchy-like", gamma)
    if mechanism == "global-laplace":
        return argmin_probabilities(ginis, (1.0 if paper else 2.0) * GINI_GLOBAL_SENSITIVITY / epsilon, "laplace")
    if mechanism == "global-gaussian":
        sens = GINI_GLOBAL_SENSITIVITY * (1.0 if paper else math.sqrt(m))
        return argmin_probabilities(ginis, GaussianMechanism(epsilon, delta, sens).scale, "gaussian")
    if mechanism == "exponential":
        return ExponentialMechanism(epsilon, GINI_GLOBAL_SENSITIVITY).probabilities(-ginis)
    if mechanism == "local-pf":
        from dpglass.models.rule_list.selection import LOCAL_SCALE_FACTOR

        sens = float(gini_local_sensitivity(int(n0 + n1)))
        return PermuteAndFlip(epsilon / LOCAL_SCALE_FACTOR, sens).probabilities(-ginis)
    if mechanism == "certified-pf":
        m0 = math.ceil(n_hat - margin)
        sens = float(gini_local_sensitivity(m0)) if m0 >= 2 else GINI_GLOBAL_SENSITIVITY
        return PermuteAndFlip(epsilon, sens).probabilities(-ginis)
    raise ValueError(f"no exact distribution for mechanism {mechanism!r}")


def hockey_stick(p, q, epsilon) -> float:
    """``sum_o max(0, p_o - e**eps q_o)``: the smallest delta for ``P <= e**eps Q + delta``."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    return float(np.maximum(p - math.exp(epsilon) * q, 0.0).sum())


def privacy_profile(p, q, epsilon):
    """``(max log ratio over outputs, delta(eps))``, both directions."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    with np.errstate(divide="ignore"):
        lr = np.abs(np.log(p) - np.log(q))
    return float(np.max(lr)), max(hockey_stick(p, q, epsilon), hockey_stick(q, p, epsilon))


# ------------------------------------------------------------------- search
def literal_tables(cells: np.ndarray, n_features: int):
    """Caught counts of every literal candidate (x_j = 1, x_j = 0) plus "no rule".

    ``cells`` has shape ``(2**n_features, 2)``: the number of records of each
    feature row (rows in binary order, feature 0 the most significant bit) and
    label (0, 1).  Returns ``(c0, c1, n0, n1)`` as ``select`` takes them.
    """
    rows = np.array(list(itertools.product([0, 1], repeat=n_features)))
    c0, c1 = [], []
    for j in range(n_features):
        for v in (1, 0):
            mask = rows[:, j] == v
            c0.append(cells[mask, 0].sum())
            c1.append(cells[mask, 1].sum())
    c0.append(0)
    c1.append(0)
    return np.array(c0, float), np.array(c1, float), float(cells[:, 0].sum()), float(cells[:, 1].sum())


@dataclass(frozen=True)
class SelectionPair:
    """A neighbouring pair of remaining sets and the exact privacy profile of a selection on it."""

    cells: tuple  # D as a tuple of (row, label) counts
    removed: tuple  # (row index, label) of the record D' lacks
    max_log_ratio: float
    delta_at_claim: float
    p: tuple
    q: tuple

    @property
    def excess(self) -> float:
        return self.delta_at_claim


def _profile_for(mechanism, cells, removed, n_features, epsilon, delta, min_support, gamma, variant):
    d2 = cells.copy()
    d2[removed] -= 1
    kw = dict(epsilon=epsilon, delta=delta, min_support=min_support, gamma=gamma, variant=variant)
    p = selection_probabilities(mechanism, **dict(zip(("c0", "c1", "n0", "n1"), literal_tables(cells, n_features))), **kw)
    q = selection_probabilities(mechanism, **dict(zip(("c0", "c1", "n0", "n1"), literal_tables(d2, n_features))), **kw)
    mlr, dlt = privacy_profile(p, q, epsilon)
    return SelectionPair(tuple(map(tuple, cells.tolist())), removed, mlr, dlt, tuple(p), tuple(q))


def search_selection_pairs(mechanism, *, epsilon, delta=0.0, n_features=2, max_count=30, n_random=200,
                           n_climb=200, min_support=1, gamma=4.0, variant="corrected", rng=None):
    """Random search plus hill climbing for the pair with the largest ``delta(eps)``.

    Datasets are count tables over ``2**n_features`` feature rows and two
    labels; candidates are all literals plus "no rule"; the neighbour removes
    one record from a non-empty cell.  The objective is the exact
    hockey-stick divergence at the claimed ``epsilon`` (ties broken by the
    largest log ratio over outputs).  Returns the best :class:`SelectionPair`
    found.  A result with ``delta_at_claim > delta`` is a counterexample to the
    claim (confirm it with the sampling audit).
    """
    rng = check_random_state(rng)
    shape = (2**n_features, 2)

    def score(sp):
        return (sp.delta_at_claim, sp.max_log_ratio)

    def evaluate(cells):
        best = None
        for r, lab in zip(*np.nonzero(cells)):
            if cells.sum() - 1 < max(min_support, 1):
                continue
            sp = _profile_for(mechanism, cells, (int(r), int(lab)), n_features, epsilon, delta, min_support, gamma, variant)
            if best is None or score(sp) > score(best):
                best = sp
        return best

    best = None
    for _ in range(n_random):
        cells = rng.integers(0, max_count + 1, size=shape) * (rng.random(shape) < 0.7)
        if cells.sum() < max(2, min_support + 1) or cells[:, 0].sum() == 0 and cells[:, 1].sum() == 0:
            continue
        sp = evaluate(cells)
        if sp is not None and (best is None or score(sp) > score(best)):
            best = sp
    if best is None:
        return None
    cur = np.array(best.cells)
    for _ in range(n_climb):
        cand = cur.copy()
        idx = tuple(rng.integers(0, s) for s in shape)
        cand[idx] = max(0, cand[idx] + int(rng.choice([-3, -1, 1, 3])))
        if cand.sum() < max(2, min_support + 1):
            continue
        sp = evaluate(cand)
        if sp is not None and score(sp) >= score(best):
            best, cur = sp, cand
    return best
