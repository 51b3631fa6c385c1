"""The private computation of :class:`~dpglass.models.gam.estimator.DPGAMClassifier`: cyclic Newton boosting of
one shape per column, from noisy per-bin gradient and Hessian sums.

The learner reads the data's :class:`~dpglass.aggregates.PatternTable` (the distinct 0/1 rows and labels with
their counts) or, on raw columns, dp-gbdt's binned table (the distinct bin-code rows;
:mod:`dpglass.models.gam.columns`): the same table in memory or through Dask.  Records of one entry share their scores, gradient and
Hessian terms, so every sum is the entry's count times its record's quantised terms, in int64: exact, in any
order.

The model is ``F_k(x) = b_k + sum_j s_j[x_j, k]`` for the C = K - 1 classes but the first (whose score is 0):
``b`` from the noisy class counts (:func:`initial_scores`), each shape ``s_j`` a ``(n_j, C)`` table (zero, or with
``first_cycle="counts"`` the naive-Bayes ratios of :mod:`dpglass.models.gam.first`).  A visit of feature ``j``
releases the per-bin sums ``G`` and ``H`` (``(n_j, C)`` each) and adds the damped Newton step
:func:`newton_step` to ``s_j``.  :func:`replay` recomputes the intercepts and the shapes from the released values
alone, with the same functions in the same order: the fit's model is its result bit for bit, which is what the
file check verifies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from dpglass.models.gam.first import (
    bin_class_counts,
    first_shapes,
    pooled_counts,
    smoothing,
)
from dpglass.models.gam.plan import OFFSET_LIMIT, QUANTUM, term_caps

__all__ = ["GamFit", "bin_sums", "class_probabilities", "fit_gam", "initial_scores", "newton_step", "project_l2",
           "record_terms", "replay", "zero_shapes"]


def class_probabilities(F: np.ndarray) -> np.ndarray:
    """``(m, K)`` probabilities from the scores ``F`` ``(m, K - 1)`` of ``classes_[1:]`` (the reference class's
    score is 0): the softmax of ``[0, F]``; for two classes its closed form ``p_1 = expit(F_1)``."""
    if F.shape[1] == 1:
        p1 = expit(F[:, 0])
        return np.column_stack([1.0 - p1, p1])
    Z = np.concatenate([np.zeros((F.shape[0], 1)), F], axis=1)
    Z -= Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def project_l2(units: np.ndarray, cap: int) -> np.ndarray:
    """Integer rows (int64, one record's terms) with l2 norm at most ``cap``: a row of squared norm ``S > cap**2``
    becomes ``sign(u) floor(|u| cap / r)`` with ``r = ceil(sqrt(S))`` (integer arithmetic: exact); other rows are
    returned unchanged.  A per-record map: it enforces :func:`~dpglass.models.gam.plan.term_bounds` on the
    rounded terms."""
    u = np.asarray(units, dtype=np.int64)
    S = (u * u).sum(axis=1)
    over = S > int(cap) ** 2
    if not over.any():
        return u
    r = np.ceil(np.sqrt(S[over].astype(np.float64))).astype(np.int64)
    r += r * r < S[over]  # float sqrt is within one of the integer root: r**2 >= S now
    u = u.copy()
    u[over] = np.sign(u[over]) * ((np.abs(u[over]) * int(cap)) // r[:, None])
    return u


def record_terms(F: np.ndarray, labels: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """One record's gradient and Hessian terms per entry, ``(m, C)`` int64 each, in :data:`QUANTUM` units.

    ``g_k = p_k - 1[y = k]`` and ``h_k = p_k (1 - p_k)`` (``p`` the softmax of ``[0, F]``), clipped to their
    ranges, rounded to units and projected to the l2 caps of :func:`~dpglass.models.gam.plan.term_caps`:
    per-record maps of the record and of the released model.
    """
    P = class_probabilities(F)[:, 1:]
    onehot = (np.asarray(labels)[:, None] == np.arange(1, n_classes)).astype(np.float64)
    g_cap, h_cap = term_caps(n_classes)
    g = np.rint(np.clip(P - onehot, -1.0, 1.0) / QUANTUM).astype(np.int64)
    h = np.rint(np.clip(P * (1.0 - P), 0.0, 0.25) / QUANTUM).astype(np.int64)
    return project_l2(g, g_cap), project_l2(h, h_cap)


def bin_sums(column: np.ndarray, counts: np.ndarray, terms: np.ndarray, n_bins: int = 2) -> np.ndarray:
    """``(n_bins, C)`` int64: per bin ``b`` the sum of the terms of the records whose bin code is ``b`` (exact;
    for a 0/1 feature, over ``x_j = 0`` and over ``x_j = 1``)."""
    W = np.asarray(counts, dtype=np.int64)[:, None] * terms
    if n_bins == 2:
        one = np.asarray(column) != 0
        return np.stack([W[~one].sum(axis=0), W[one].sum(axis=0)])
    out = np.zeros((n_bins, W.shape[1]), dtype=np.int64)
    np.add.at(out, np.asarray(column, dtype=np.intp), W)
    return out


def initial_scores(class_counts) -> np.ndarray:
    """``(C,)``: ``log((c_k + 1/2) / (c_0 + 1/2))`` of the released counts (negatives read as 0), clipped to
    +-:data:`~dpglass.models.gam.plan.OFFSET_LIMIT`: the log-odds of each class against the reference."""
    c = [max(float(v), 0.0) + 0.5 for v in class_counts]
    return np.array([min(max(math.log(ck / c[0]), -OFFSET_LIMIT), OFFSET_LIMIT) for ck in c[1:]], dtype=np.float64)


def newton_step(G: np.ndarray, H: np.ndarray, floor: float, learning_rate: float, max_step: float) -> np.ndarray:
    """The damped Newton step of a shape from released sums: ``lr * clip(-G / (max(H, 0) + floor), +-max_step)``
    (elementwise float64: the same bits on every machine)."""
    G, H = np.asarray(G, dtype=np.float64), np.asarray(H, dtype=np.float64)
    return learning_rate * np.clip(-G / (np.maximum(H, 0.0) + floor), -max_step, max_step)


@dataclass
class GamFit:
    """What a fit releases (``class_counts``; ``visits``: the ``(G, H)`` released per visit) and the model they
    give (``intercept`` ``(C,)``, ``shapes``: one ``(n_bins_j, C)`` array per feature)."""

    class_counts: list
    visits: list
    intercept: np.ndarray
    shapes: list
    first: list | None = None  # first_cycle="counts": the released class counts per bin


def zero_shapes(pub) -> list:
    """One ``(n_bins_j, C)`` array of zeros per feature."""
    return [np.zeros((pub.n_bins(j), pub.n_classes - 1)) for j in range(pub.n_features)]


def replay(class_counts, visits, plan, first=None) -> tuple[np.ndarray, list]:
    """``(intercept, shapes)`` from the released values alone (the fit's model, bit for bit)."""
    pub = plan.public
    shapes = zero_shapes(pub) if plan.first is None else first_shapes(first, pub, smoothing(plan))
    for (j, _, _), (G, H) in zip(plan.visits, visits):
        shapes[j] += newton_step(G, H, plan.hessian_floor, pub.learning_rate, pub.max_step)
    return _intercept(class_counts, first, plan), shapes


def _intercept(class_counts, first, plan) -> np.ndarray:
    """The initial scores: of the released counts, or with "auto" sizes and a count-based start of the pooled
    counts (:func:`~dpglass.models.gam.first.pooled_counts`)."""
    if plan.first is None or plan.public.count_rho is None:
        return initial_scores(class_counts)
    return initial_scores(pooled_counts(class_counts, first, plan))


def fit_gam(table, plan, ledger, rng, class_counts=None) -> GamFit:
    """Cyclic Newton boosting on ``table`` (a PatternTable of 0/1 rows, or a binned table of bin codes, with
    class codes 0..K-1; ``table.column(j)``: feature j's bin code per entry), releasing through ``plan`` (a
    :class:`~dpglass.models.gam.plan.GamPlan`) on ``ledger``, which follows it (the quantile edges, if any, are
    released before the table is binned; with "auto" sizes ``class_counts`` are already released)."""
    pub = plan.public
    K = pub.n_classes
    labels, counts = np.asarray(table.labels), np.asarray(table.counts, dtype=np.int64)
    if class_counts is None:
        exact = [int(counts[labels == k].sum()) for k in range(K)]
        class_counts = ledger.release(plan.counts, exact, rng)
    intercept = initial_scores(class_counts)
    F = np.tile(intercept, (labels.size, 1))
    shapes, first = zero_shapes(pub), None
    columns: dict = {}
    if plan.first is not None:  # the count-based first cycle: every shape starts at its naive-Bayes ratios
        first = ledger.release(plan.first, bin_class_counts(table, pub), rng)
        shapes = first_shapes(first, pub, smoothing(plan))
        intercept = _intercept(class_counts, first, plan)
        F = np.tile(intercept, (labels.size, 1))
        for j in range(pub.n_features):
            col = columns[j] = np.asarray(table.column(j), dtype=np.intp)
            F += shapes[j][col]
    visits = []
    for j, g_step, h_step in plan.visits:
        col = columns.get(j)
        if col is None:
            col = columns[j] = np.asarray(table.column(j), dtype=np.uint8)
        g, h = record_terms(F, labels, K)
        G = ledger.release(g_step, bin_sums(col, counts, g, pub.n_bins(j)), rng)
        H = ledger.release(h_step, bin_sums(col, counts, h, pub.n_bins(j)), rng)
        step = newton_step(G, H, plan.hessian_floor, pub.learning_rate, pub.max_step)
        shapes[j] += step
        F += step[col]
        visits.append((G, H))
    return GamFit(list(class_counts), visits, intercept, shapes, first)
