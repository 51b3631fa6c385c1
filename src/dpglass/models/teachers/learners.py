"""The teachers' and the student's learner (never released) and the teachers' votes, for K >= 2 classes.

Teachers and students are L2-regularised logistic regressions: the binary
logistic loss for two classes (:func:`_logistic`, one weight vector, class 1
where its score is > 0) and the multinomial (softmax) loss for ``K >= 3``
(:func:`_softmax_logistic`, one weight vector per class, the class of the
largest score).  They are not privacy arguments: only the noisy votes of the
teachers leave them (docs/privacy.md, teacher ensembles), and the student is a
post-processing of public records and released labels.  What the file check
uses of them is the range of the student: every accepted Newton step lowers
the objective, which is ``Q log K`` at 0 for ``Q`` labelled records
(``teachers/verify.py``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logsumexp, softmax

__all__ = ["fit_logistic", "fit_teacher", "vote_histograms"]

#: Gradient tolerance (per row) and iteration cap of the (non-released) teacher and student fits.
_TOL = 1e-6
_MAX_NEWTON = 100


def _with_intercept(X01) -> np.ndarray:
    X = np.asarray(X01, dtype=np.float64)
    return np.column_stack([X, np.ones(X.shape[0])])


def _logistic(A: np.ndarray, y01: np.ndarray, alpha: float, w: np.ndarray | None = None) -> np.ndarray:
    """``argmin sum_i w_i log(1 + exp(-y_i b.a_i)) + (alpha/2)||b||^2`` (rows ``A`` with intercept); 0 if no rows.

    ``w`` are the rows' record counts (a teacher's part of the pattern table;
    None: one record a row).  Damped Newton (the objective is
    ``alpha``-strongly convex), stopped when the gradient norm is below
    ``_TOL`` times the number of records plus one, or when no step decreases
    the objective.  Teachers and students are not privacy arguments (only
    noisy votes leave the teachers; the student is post-processing), so no
    certificate is needed.
    """
    ys = 2.0 * np.asarray(y01, dtype=np.float64) - 1.0
    w = np.ones(A.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    YA = A * ys[:, None]
    beta = np.zeros(A.shape[1])
    value = float((w * np.logaddexp(0.0, -(YA @ beta))).sum())
    limit = _TOL * (float(w.sum()) + 1)
    for _ in range(_MAX_NEWTON):
        s = expit(-(YA @ beta))
        g = alpha * beta - YA.T @ (w * s)
        if float(np.linalg.norm(g)) <= limit:
            break
        H = A.T @ (A * (w * (s * (1.0 - s)))[:, None])
        H[np.diag_indices_from(H)] += alpha
        step = np.linalg.solve(H, g)
        t = 1.0
        while t > 1e-10:
            cand = beta - t * step
            new = float((w * np.logaddexp(0.0, -(YA @ cand))).sum()) + 0.5 * alpha * float(cand @ cand)
            if new <= value - 0.25 * t * float(g @ step):
                break
            t *= 0.5
        else:
            break
        beta, value = cand, new
    return beta


def _softmax_objective(A, codes, w, alpha, B) -> float:
    S = A @ B.T
    loss = logsumexp(S, axis=1) - S[np.arange(S.shape[0]), codes]  # >= 0: logsumexp is at least the max
    return float((w * loss).sum()) + 0.5 * alpha * float((B * B).sum())


def _softmax_hessian(A, P, w, alpha) -> np.ndarray:
    """``sum_i w_i (diag(p_i) - p_i p_i^T) (x) a_i a_i^T + alpha I``, blocks of classes."""
    K, p = P.shape[1], A.shape[1]
    H = np.empty((K * p, K * p))
    for k in range(K):
        for m in range(k, K):
            c = w * P[:, k] * ((1.0 if k == m else 0.0) - P[:, m])
            block = A.T @ (A * c[:, None])
            H[k * p:(k + 1) * p, m * p:(m + 1) * p] = block
            H[m * p:(m + 1) * p, k * p:(k + 1) * p] = block.T
    H[np.diag_indices_from(H)] += alpha
    return H


def _softmax_logistic(A: np.ndarray, codes: np.ndarray, n_classes: int, alpha: float,
                      w: np.ndarray | None = None) -> np.ndarray:
    """``argmin_B sum_i w_i (logsumexp(B a_i) - (B a_i)_{y_i}) + (alpha/2)||B||_F^2``: weights ``(K, p)``.

    The multinomial counterpart of :func:`_logistic` (one weight vector per
    class, every one penalised), by the same damped Newton from 0 with the
    same stopping rule; 0 if there are no rows.  Every accepted step lowers
    the objective, which is ``sum_i w_i log K`` at 0.
    """
    codes = np.asarray(codes, dtype=np.int64)
    K, p = int(n_classes), A.shape[1]
    w = np.ones(A.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    Y = np.zeros((A.shape[0], K))
    Y[np.arange(A.shape[0]), codes] = 1.0
    B = np.zeros((K, p))
    value = _softmax_objective(A, codes, w, alpha, B)
    limit = _TOL * (float(w.sum()) + 1)
    for _ in range(_MAX_NEWTON):
        P = softmax(A @ B.T, axis=1)
        G = ((P - Y) * w[:, None]).T @ A + alpha * B
        if float(np.linalg.norm(G)) <= limit:
            break
        step = np.linalg.solve(_softmax_hessian(A, P, w, alpha), G.ravel()).reshape(K, p)
        decrease = float((G * step).sum())
        t = 1.0
        while t > 1e-10:
            cand = B - t * step
            new = _softmax_objective(A, codes, w, alpha, cand)
            if new <= value - 0.25 * t * decrease:
                break
            t *= 0.5
        else:
            break
        B, value = cand, new
    return B


def fit_logistic(A: np.ndarray, codes: np.ndarray, n_classes: int, alpha: float, w=None) -> np.ndarray:
    """The L2 logistic regression of :func:`_logistic` (two classes: weights ``(p,)``) or of
    :func:`_softmax_logistic` (``K >= 3``: weights ``(K, p)``)."""
    if int(n_classes) == 2:
        return _logistic(A, codes, alpha, w)
    return _softmax_logistic(A, codes, n_classes, alpha, w)


def fit_teacher(table, n_classes: int, alpha: float) -> np.ndarray:
    """The weights of one teacher: the logistic regression of :func:`fit_logistic` on its records.

    ``table`` is the teacher's part of the pattern table (its entries in key
    order, with its record counts): the loss is summed over those records,
    each distinct row once, weighted by its count.  ``(d + 1,)`` for two
    classes, ``(K, d + 1)`` for ``K >= 3``; a teacher with no records has
    weights 0 (it votes for the first class).  A column that is 0 on every
    row of the part gets weight 0 (the L2 optimum): the solve is on the others.
    """
    K, p = int(n_classes), int(table.n_features) + 1
    W = np.zeros(p if K == 2 else (K, p))
    if table.n_entries:
        A = _with_intercept(table.unpack())
        used = np.flatnonzero(A.any(axis=0))
        W[..., used] = fit_logistic(A[:, used], table.labels, K, alpha, np.asarray(table.counts, np.float64))
    return W


def _votes(W: np.ndarray, X_block) -> np.ndarray:
    """Every teacher's vote on every row, ``(rows, teachers)``: booleans (class 1) for two classes, else codes.

    Two classes: class 1 where the score is > 0; ``K >= 3``: the class of the
    largest score, a tie to the first (so a teacher with weights 0 votes for
    the first class, as for two).
    """
    A = _with_intercept(X_block)
    if W.ndim == 2:
        return (A @ W.T) > 0.0
    return np.argmax(np.einsum("np,tkp->ntk", A, W), axis=2).astype(np.uint8)


def vote_histograms(V: np.ndarray, n_classes: int) -> np.ndarray:
    """``(rows, K)`` int64: how many of the teachers' votes ``V`` (:func:`_votes`) go to each class."""
    V = np.asarray(V)
    return np.stack([(V == c).sum(axis=1) for c in range(int(n_classes))], axis=1).astype(np.int64) \
        if V.shape[0] else np.zeros((0, int(n_classes)), dtype=np.int64)
