"""A zoo of deliberately broken DP mechanisms: the audit must flag them.

Test-tree only (never part of dpglass's API).  Each entry is an
:class:`~dpglass.audit.cases.AuditCase` whose ``claim`` is what a buggy
implementation would state, with a neighbouring pair chosen to expose the bug.
``tests/test_audit.py`` (quick, seeded) and ``tests/test_audit_full.py``
(``-m audit``) run them; ``docs/audit.md`` reports the figures.

Entries
-------
halved-laplace
    Laplace noise at half the scale its epsilon needs.
sensitivity-off-by-one
    Laplace on a Gini impurity of ``n`` (public) records calibrated to the
    local sensitivity of ``n + 1`` records, ``g(n)`` instead of ``g(n - 1)``.
rnm-monotone-scale
    Report-noisy-max with Laplace noise at ``Delta/eps`` (the monotone scale)
    on non-monotone scores: two candidates whose scores move in opposite
    directions by ``Delta``.
noisy-max-value
    Report-noisy-max at the (correct, monotone) scale ``1/eps`` on counts that
    also releases the noisy maximum value.
pred-dp-per-candidate
    Paper 001 Algorithm 1, line 14 read literally as a release: the noisy
    class counts of every candidate that improves on the running best are
    published, while the accounting charges one ``pred_DP``.
ovr-parallel-composition
    A K = 3 one-vs-rest scheme (issue 31) that releases each task's "rest"
    count with Laplace noise at ``1/eps`` and charges ``eps`` in all, by
    parallel composition misapplied ("each record is the positive of one
    task only"): a record is a negative of the other K - 1 tasks, so
    removing it moves K - 1 released counts.
paper-gn-selection, paper-gn-certified-pf
    The rule-list selection with the paper's local sensitivity ``g(n)`` in
    place of ``g(n - 1)`` (smooth-Laplace selection with ``variant="paper"``;
    certified permute-and-flip with ``g(m0)``).  docs/audit.md explains why
    these are not caught at a feasible number of runs.
"""

from __future__ import annotations

import math

import numpy as np

from dpglass.audit.cases import AuditCase, selection_case
from dpglass.models.rule_list.selection import certification_margin
from dpglass.privacy.mechanisms import (
    LaplaceMechanism, PermuteAndFlip, ReportNoisyMax, SmoothLaplaceMechanism, sample_laplace,
)

# The zoo's broken mechanisms draw NumPy's float Laplace in one block of n
# samples: LaplaceMechanism on a vector of n values would pay n grid units.
from dpglass.privacy.sensitivity import gini_local_sensitivity, gini_smooth_sensitivity, weighted_gini

__all__ = ["zoo_cases", "QUICK_FLAGGED"]

#: Entries the quick (default) test run must flag.
QUICK_FLAGGED = ("halved-laplace", "sensitivity-off-by-one", "rnm-monotone-scale", "noisy-max-value",
                 "pred-dp-per-candidate", "ovr-parallel-composition")


def _halved_laplace(eps):
    mech = LaplaceMechanism(eps, 0.5)  # BUG: sensitivity is 1, noise calibrated to 0.5

    return AuditCase(
        "halved-laplace", (eps, 0.0), "broken", 0.0, 1.0,
        batch=lambda x, n, g: x + sample_laplace(mech.scale, n, g),
        pair="values 0 and 1 of a sensitivity-1 query",
        n_samples=400_000, quick_samples=20_000,
    )


def _off_by_one(eps):
    n_public = 3
    sens = gini_local_sensitivity(n_public + 1)  # BUG: g(n) = L(n + 1); the truth is L(n) = g(n - 1)
    mech = LaplaceMechanism(eps, sens)

    def batch(counts, n, g):
        return weighted_gini(*counts) + sample_laplace(mech.scale, n, g)

    return AuditCase(
        "sensitivity-off-by-one", (eps, 0.0), "broken", (0, 0, 1, 2), (0, 0, 0, 2), batch=batch,
        pair=("counts (0,0,1,2) (Gini 4/9) vs (0,0,0,2) (Gini 0): removing the lone positive moves the Gini by "
              "g(2) = 0.444, the noise is calibrated to g(3) = 0.375"),
        n_samples=400_000, quick_samples=40_000,
    )


def _rnm_monotone_scale(eps):
    mech = ReportNoisyMax(eps, 1.0, monotonic=True)  # BUG: scores are not monotone

    return AuditCase(
        "rnm-monotone-scale", (eps, 0.0), "broken", np.array([0.0, 0.0]), np.array([1.0, -1.0]),
        batch=lambda s, n, g: np.array([mech.select(s, g) for _ in range(n)]),
        pair="two candidates, scores (0, 0) vs (1, -1): they move in opposite directions by the sensitivity",
        n_samples=200_000, quick_samples=20_000, kind="discrete",
    )


def _noisy_max_value(eps):
    scale = 1.0 / eps  # report-noisy-max on monotone counts: correct for the argmax alone

    def batch(counts, n, g):
        noisy = np.asarray(counts, float)[None, :] + g.laplace(0.0, scale, (n, len(counts)))
        # BUG: the noisy maximum is released along with the argmax.  Events on
        # the value alone are events on the release (post-processing).
        return noisy.max(axis=1)

    return AuditCase(
        "noisy-max-value", (eps, 0.0), "broken", (5.0, 5.0, 5.0), (6.0, 6.0, 6.0), batch=batch,
        pair="three counts that all contain the added record: (5,5,5) vs (6,6,6)",
        n_samples=400_000, quick_samples=20_000,
    )


def _ovr_parallel_composition(eps):
    mech = LaplaceMechanism(eps, 1.0)  # BUG: the K "rest" counts are charged as one count (parallel composition)

    def batch(class_counts, n, g):
        counts = np.asarray(class_counts, float)
        rest = counts.sum() - counts  # task k: its negatives, the records of every other class
        return rest[None, :] + sample_laplace(mech.scale, (n, len(counts)), g)

    return AuditCase(
        "ovr-parallel-composition", (eps, 0.0), "broken", (5, 5, 5), (4, 5, 5), batch=batch,
        pair=("class counts (5,5,5) vs (4,5,5): removing a record of class 0 moves the rest counts of tasks 1 and 2, "
              "an l1 shift of K - 1 = 2 under noise calibrated to 1"),
        n_samples=400_000, quick_samples=40_000,
    )


#: Remaining records for pred-dp-per-candidate: rows 00, 01, 10, 11 x (neg, pos).
_PRED_CELLS = np.array([[60, 0], [40, 30], [40, 40], [0, 60]])
#: Candidates in scan order (rows each catches): x1, x0, x0 & x1.  All catch row 11.
_PRED_CANDIDATES = ((1, 3), (2, 3), (3,))


def _pred_tables(cells):
    n0, n1 = float(cells[:, 0].sum()), float(cells[:, 1].sum())
    c0 = np.array([cells[list(r), 0].sum() for r in _PRED_CANDIDATES] + [0], float)
    c1 = np.array([cells[list(r), 1].sum() for r in _PRED_CANDIDATES] + [0], float)
    return c0, c1, n0, n1


def _pred_dp_per_candidate(eps_node, delta):
    sel = SmoothLaplaceMechanism(eps_node, delta)
    counts = LaplaceMechanism(eps_node, 1.0)
    ref_c1 = np.append(_pred_tables(_PRED_CELLS)[1][:-1], _PRED_CELLS[:, 1].sum())  # D's c1, no-rule last

    def batch(cells, n, g):
        c0, c1, n0, n1 = _pred_tables(np.asarray(cells))
        ginis = weighted_gini(c1, c0, n1 - c1, n0 - c0)
        s = float(gini_smooth_sensitivity(int(n0 + n1), sel.beta))
        noisy_g = sel.randomise(np.broadcast_to(ginis, (n, len(ginis))), s, g)
        tables_c1 = np.append(c1[:-1], n1)  # caught positives; "no rule" keeps all remaining
        noisy_c1 = tables_c1 + sample_laplace(counts.scale, (n, len(tables_c1)), g)
        # Algorithm 1: G* = noisy no-rule Gini and pred_DP(no rule) (lines 7-9), then
        # each candidate in order; an improving one gets pred_DP (line 14).
        best = noisy_g[:, -1].copy()
        released = np.zeros((n, len(ginis)), bool)
        released[:, -1] = True
        for j in range(len(ginis) - 1):
            better = noisy_g[:, j] < best
            released[:, j] = better
            best = np.where(better, noisy_g[:, j], best)
        # BUG: every pred_DP above is published (e.g. kept in the model's trace).
        # The statistic: max over the released tables of (noisy c1 - D's c1),
        # when all four were released (+inf otherwise): post-processing.
        shifted = noisy_c1 - ref_c1[None, :]
        stat = np.where(released.all(axis=1), shifted.max(axis=1), np.inf)
        return stat

    cells2 = _PRED_CELLS.copy()
    cells2[3, 1] -= 1
    return AuditCase(
        "pred-dp-per-candidate", (2 * eps_node, delta), "broken", _PRED_CELLS, cells2, batch=batch,
        pair=("270 remaining records; the removed positive (row 11) is caught by every candidate, whose Ginis "
              "decrease along the scan order, so every candidate improves and four noisy class-count tables "
              "that all contain the record are published; the claim charges one selection plus one pred_DP"),
        n_samples=400_000, quick_samples=40_000, kind="scalar",
    )


def _paper_gn_selection(eps_node, delta):
    # D: (1 positive, 9 negatives) remaining; the smooth-Laplace selection with the
    # paper's g(n).  The worst pair found by the exact search (docs/audit.md).
    return selection_case(
        "smooth-laplace", epsilon=eps_node, delta=delta, cells=((3, 0), (3, 0), (3, 0), (0, 1)), removed=(3, 1),
        variant="paper", name="paper-gn-selection", guarantee="broken",
        pair=("remaining (0,0,1,9)-type set: 9 negatives and one positive alone in row 11; removing it moves the "
              "no-rule Gini by g(9) = 0.18 > g(10), the paper's bound; large eps_node so that beta n >> 1 and the "
              "smooth bound equals g(n)"),
    )


def _paper_gn_certified_pf(eps_node, delta_t):
    cells = np.array([[3, 0], [3, 0], [3, 0], [0, 1]])
    cells2 = cells.copy()
    cells2[3, 1] -= 1
    from dpglass.audit.selection import literal_tables

    margin = certification_margin(eps_node, delta_t)
    count = LaplaceMechanism(eps_node, 1.0)

    def one(data, g):
        c0, c1, n0, n1 = data
        n_hat = float(count.randomise(n0 + n1, g))
        m0 = math.ceil(n_hat - margin)
        sens = float(gini_local_sensitivity(m0 + 1)) if m0 >= 1 else 0.5  # BUG: g(m0) for g(m0 - 1)
        ginis = weighted_gini(c1, c0, n1 - c1, n0 - c0)
        idx = PermuteAndFlip(eps_node, sens).select(-ginis, g)
        return idx * 100_000 + int(math.floor(min(max(n_hat, -1e4), 9e4)))

    return AuditCase(
        "paper-gn-certified-pf", (2 * eps_node, delta_t), "broken", literal_tables(cells, 2), literal_tables(cells2, 2),
        batch=lambda data, n, g: np.array([one(data, g) for _ in range(n)]),
        pair="the (0,0,1,9)-type pair of paper-gn-selection; certified count n_hat, PF with g(m0)",
        n_samples=150_000, quick_samples=10_000, kind="discrete",
    )


def zoo_cases(epsilon: float = 1.0) -> dict[str, AuditCase]:
    """Every zoo entry as an :class:`AuditCase` (claims at ``epsilon`` where it applies)."""
    eps = float(epsilon)
    cases = [
        _halved_laplace(eps),
        _off_by_one(2.0),
        _rnm_monotone_scale(2.0),
        _noisy_max_value(eps),
        _pred_dp_per_candidate(1.0, 1e-6),
        _ovr_parallel_composition(eps),
        _paper_gn_selection(2.0, 1e-2),
        _paper_gn_certified_pf(2.0, 1e-2),
    ]
    return {c.name: c for c in cases}

