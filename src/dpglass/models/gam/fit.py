"""The private computation of :class:`~dpglass.models.gam.estimator.DPGAMClassifier`: cyclic Newton boosting of
one shape per column, from noisy per-bin gradient and Hessian sums.

The learner reads the data's :class:`~dpglass.aggregates.PatternTable` (the distinct 0/1 rows and labels with
their counts) or, on raw columns, dp-gbdt's binned table (the distinct bin-code rows;
:mod:`dpglass.models.gam.columns`), through the table's parts (:mod:`dpglass.aggregates.parts`): in memory one
part, through Dask the parts left on the workers.  Records of one entry share their scores, gradient and Hessian
terms, so every sum is the entry's count times its record's quantised terms, in int64: exact, in any order and
whatever the cut into parts.  Every statistic (the class counts, the first cycle's per-bin class counts, each
visit's per-bin ``G`` and ``H``) is summed by ``parts.sum`` over :class:`GamPart` states; a part's entries' scores
are a cache, rebuilt from the released values (:meth:`GamPart.scores`) when a recomputed part has lost it.

The model is ``F_k(x) = b_k + sum_j s_j[x_j, k]`` for the C = K - 1 classes but the first (whose score is 0):
``b`` from the noisy class counts (:func:`initial_scores`), each shape ``s_j`` a ``(n_j, C)`` table (zero, or with
``first_cycle="counts"`` the naive-Bayes ratios of :mod:`dpglass.models.gam.first`).  A visit of feature ``j``
releases the per-bin sums ``G`` and ``H`` (``(n_j, C)`` each) and adds the damped Newton step
:func:`newton_step` to ``s_j``.  :func:`replay` recomputes the intercepts and the shapes from the released values
alone, with the same functions in the same order: the fit's model is its result bit for bit, which is what the
file check verifies.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from dpglass.aggregates import PatternTable
from dpglass.aggregates.parts import DistributedTable, TableParts, class_counts
from dpglass.models.gam.first import (
    bin_class_counts,
    first_shapes,
    pooled_counts,
    smoothing,
)
from dpglass.models.gam.plan import OFFSET_LIMIT, QUANTUM, term_caps

__all__ = ["GamFit", "GamPart", "bin_sums", "class_probabilities", "exact_counts", "fit_gam", "gam_parts",
           "initial_scores", "newton_step", "project_l2", "record_terms", "replay", "zero_shapes"]


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


def _bin_matrix(table) -> np.ndarray:
    """The ``(m, d)`` uint8 bin codes of a part: a 0/1 pattern table's rows, a binned table's ``bins``, or dp-gbdt's
    :class:`~dpglass.models.gbdt.fit.Binned` part's ``B`` (column-major: the learner reads one column a visit)."""
    if isinstance(table, PatternTable):
        B = table.unpack()
    else:
        B = table.bins if hasattr(table, "bins") else table.B
    return np.asfortranarray(np.asarray(B, dtype=np.uint8))


def _digest(*arrays) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.digest()


class GamPart:
    """One part of the table as the learner reads it (bin codes, class codes, counts) and its entries' scores.

    The scores are a cache: a function of the released model so far (the intercepts, the starting shapes and the
    visits' steps), which every statistic receives as arguments; a part that has applied a prefix of the steps
    applies the rest, any other (a part recomputed after its worker died) rebuilds them from the start, with the
    same float operations in the same order as a fit on one table.
    """

    def __init__(self, table, n_classes: int):
        self.bins = _bin_matrix(table)
        self.labels = np.asarray(table.labels)
        self.counts = np.asarray(table.counts, dtype=np.int64)
        self.n_classes = int(n_classes)
        self._F, self._base, self._applied = None, None, []

    def column(self, j: int) -> np.ndarray:
        return self.bins[:, j]

    def scores(self, intercept, start, steps) -> np.ndarray:
        """``(m, C)``: ``intercept + sum_j start[j][x_j]`` (``start`` None: the intercept alone), plus each
        visit's ``step[x_j]`` of ``steps`` (``(j, step)`` in order)."""
        base = _digest(intercept, *(start or ()))
        keys = [_digest(np.array([j]), step) for j, step in steps]
        if self._base != base or self._applied != keys[:len(self._applied)]:
            F = np.tile(intercept, (self.labels.size, 1))
            for j, shape in enumerate(start or ()):
                F += shape[self.bins[:, j].astype(np.intp)]
            self._F, self._base, self._applied = F, base, []
        for (j, step), key in list(zip(steps, keys))[len(self._applied):]:
            self._F += step[self.bins[:, j]]
            self._applied.append(key)
        return self._F


def _first_counts(part: GamPart, pub) -> np.ndarray:
    return bin_class_counts(part, pub)


def _visit_sums(part: GamPart, j: int, n_bins: int, intercept, start, steps):
    g, h = record_terms(part.scores(intercept, start, steps), part.labels, part.n_classes)
    col = part.column(j)
    return bin_sums(col, part.counts, g, n_bins), bin_sums(col, part.counts, h, n_bins)


def gam_parts(table) -> TableParts:
    """The parts of the learner's table: a :class:`~dpglass.aggregates.parts.TableParts` as is (dp-gbdt's binned
    parts on the workers), a kept table's parts, else the one local table."""
    if isinstance(table, TableParts):
        return table
    if isinstance(table, DistributedTable):
        return table.parts
    return TableParts.local(table)


def exact_counts(table, n_classes: int) -> list:
    """The ``K`` exact class counts of a table or of its parts (:func:`gam_parts`)."""
    return [int(c) for c in gam_parts(table).sum(class_counts, int(n_classes))]


def fit_gam(table, plan, ledger, rng, class_counts=None) -> GamFit:
    """Cyclic Newton boosting on ``table`` (a PatternTable of 0/1 rows, a binned table of bin codes, or their
    parts on a cluster (:func:`gam_parts`), with class codes 0..K-1), releasing through ``plan`` (a
    :class:`~dpglass.models.gam.plan.GamPlan`) on ``ledger``, which follows it (the quantile edges, if any, are
    released before the table is binned; with "auto" sizes ``class_counts`` are already released).  Each visit's
    sums are a statistic of the parts: the client holds the model and one visit's ``(n_j, C)`` sums."""
    pub = plan.public
    K = pub.n_classes
    parts = gam_parts(table).map(GamPart, K)
    if class_counts is None:
        class_counts = ledger.release(plan.counts, exact_counts(parts, K), rng)
    intercept = initial_scores(class_counts)
    shapes, first, start = zero_shapes(pub), None, None
    if plan.first is not None:  # the count-based first cycle: every shape starts at its naive-Bayes ratios
        first = ledger.release(plan.first, parts.sum(_first_counts, pub), rng)
        shapes = first_shapes(first, pub, smoothing(plan))
        intercept = _intercept(class_counts, first, plan)
        start = [s.copy() for s in shapes]
    visits, steps = [], []
    for j, g_step, h_step in plan.visits:
        Gx, Hx = parts.sum(_visit_sums, j, pub.n_bins(j), intercept, start, steps)
        G = ledger.release(g_step, Gx, rng)
        H = ledger.release(h_step, Hx, rng)
        step = newton_step(G, H, plan.hessian_floor, pub.learning_rate, pub.max_step)
        shapes[j] += step
        steps.append((j, step))
        visits.append((G, H))
    return GamFit(list(class_counts), visits, intercept, shapes, first)
