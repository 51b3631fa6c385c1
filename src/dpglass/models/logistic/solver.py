"""The certified solver of :mod:`dpglass.models.logistic.estimator`: one implementation for every K >= 2.

:func:`minimise` runs damped Newton on the softmax (multinomial) objective of
:class:`SoftmaxRows`: the free parameters are the ``K - 1`` rows ``F_m`` of
``p`` coefficients, flattened row by row into ``beta`` of length
``(K - 1) p``; the K class scores of a row ``a`` are ``z = G F a + b`` (``G``
the public centred basis, :func:`~dpglass.models.logistic.plan.centred_basis`;
``b`` the public offsets), and

``F(beta) = sum_e w_e [log sum_k exp(z_ek) - z_e,y_e] + (mu/2)||beta||^2``

over the distinct rows ``a_e`` of the data with integer weights ``w_e`` (their
record counts).  Two classes are its K = 2 case: ``G = (-1/2, 1/2)``, and with
offsets ``(0, o)`` the objective is the binary
``sum_e w_e log(1 + exp(-y_e (beta.a_e + o))) + (mu/2)||beta||^2``
(:class:`RowBlocks` builds it from +-1 labels).  It returns a point whose
gradient norm is *certified* ``<= tol`` (:meth:`SoftmaxRows.certified_bound`).
The rows are read a block at a time (a dense array, or the bit-packed
:class:`~dpglass.aggregates.PatternTable` unpacked block by block), so the
solver holds a few vectors of length m and one float block, never a float
copy of the table.  Nothing here is released; the privacy argument needs only
the certificate (docs/privacy.md, "DP logistic regression").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from dpglass.models.logistic.plan import centred_basis

__all__ = ["BLOCK_ROWS", "EXP_ULPS", "MAX_ITER", "RowBlocks", "SoftmaxRows", "SolverNotCertifiedError", "minimise",
           "scaled_rows", "softmax_scores"]

#: Newton iterations before giving up (never reached in practice; see docs).
MAX_ITER = 500
#: Rows per float block read from the rows (a multiple of :data:`_FAN`).
BLOCK_ROWS = 1 << 14

_U = 2.0**-53  # unit roundoff of float64
#: Assumed relative error of ``numpy.exp`` in units of roundoff.
EXP_ULPS = 8.0
#: Absolute slack per probability for exp's underflow (subnormal or 0 results).
_TINY = 1e-300
_SHRINK = 1.0 - 2.0**-30  # rows are kept at norm <= data_norm * _SHRINK (margin for the float norm)
#: A Newton decrement below this fraction of |F| is under F's float resolution (see :func:`minimise`).
_FLAT = 2.0**-30
#: Fan-in of :func:`_tree_sum`'s tree.
_FAN = 64
#: Fan-in of :func:`_tree_sum`'s tree: pairs (the error bound grows with the levels times the fan-in minus 1).
_PAIR = 2


class SolverNotCertifiedError(RuntimeError):
    """The solver did not reach a certified gradient norm: nothing is released."""


def scaled_rows(X01, fit_intercept: bool, c: float) -> np.ndarray:
    """The rows ``x_i`` (original scale, intercept column 1), shrunk so that ``||x_i|| <= c``.

    A row whose float norm exceeds ``c * (1 - 2**-30)`` is multiplied by
    ``c (1 - 2**-30) / norm``; the margin ``2**-30`` covers the rounding of the
    norm (relative error below ``p * 2**-53``), so every returned row has exact
    Euclidean norm ``<= c``.  Per-record and data-independent in form.
    """
    X = np.asarray(X01, dtype=np.float64)
    if fit_intercept:
        X = np.column_stack([X, np.ones(X.shape[0])])
    if X.shape[0]:
        norms = np.linalg.norm(X, axis=1)
        limit = c * _SHRINK
        big = norms > limit
        if big.any():
            X = X.copy()
            X[big] *= (limit / norms[big])[:, None]
    return X


def _tree_sum(T: np.ndarray) -> tuple[np.ndarray, int]:
    """``(column sums of T, levels)``: sums of :data:`_PAIR` rows at a time, then of those, until one row.

    Each level adds ``_PAIR - 1`` times, so the result is within
    ``gamma_{levels (_PAIR - 1)}`` times the sum of ``|T|`` of the exact sums
    (Higham 2002, Lemma 3.3): ``levels`` grows like ``log_2`` of the rows,
    where one dot product's bound grows like the rows.
    """
    levels = 0
    while T.shape[0] > 1:
        if T.shape[0] % _PAIR:
            T = np.concatenate([T, np.zeros((_PAIR - T.shape[0] % _PAIR, T.shape[1]))])
        T = T[0::2] + T[1::2]
        levels += 1
    return (T[0] if T.shape[0] else np.zeros(T.shape[1])), levels


def _gamma(k: float) -> float:
    return k * _U / (1.0 - k * _U)


def softmax_scores(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P, lse)``: the row-wise softmax of the scores and ``log sum exp``; stable (the largest score is
    subtracted first, and ``lse = top + log1p(sum of the other terms)``, exact to a few ulps for large margins)."""
    top = Z.max(axis=1)
    E = np.exp(Z - top[:, None])
    rows = np.arange(Z.shape[0])
    E[rows, Z.argmax(axis=1)] = 0.0  # exp(0) = 1 exactly: summed apart
    rest = E.sum(axis=1)
    E[rows, Z.argmax(axis=1)] = 1.0
    return E / (1.0 + rest)[:, None], top + np.log1p(rest)


def residuals(P: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``p - e_y`` per row, its label's entry computed as ``-(sum of the other probabilities)``: relative to the
    residual itself, not to ``p_y ~ 1`` (what keeps the certificate tight on a well-fitted large table)."""
    R = P.copy()
    rows = np.arange(P.shape[0])
    R[rows, labels] = 0.0
    R[rows, labels] = -R.sum(axis=1)
    return R


@dataclass(frozen=True)
class SoftmaxRows:
    """The solver's rows: ``rows(s, e)`` the float rows ``s..e-1``, ``labels`` (codes 0..K-1) and ``w`` per row,
    ``p`` the row length and ``k`` the number of classes (2 for the binary model)."""

    rows: Callable[[int, int], np.ndarray]
    labels: np.ndarray
    w: np.ndarray
    p: int
    k: int

    @classmethod
    def dense(cls, A, labels, w, n_classes: int) -> "SoftmaxRows":
        A = np.asarray(A, dtype=np.float64)
        return cls(lambda s, e: A[s:e], np.asarray(labels, dtype=np.int64), np.asarray(w, dtype=np.float64),
                   A.shape[1], int(n_classes))

    @classmethod
    def from_table(cls, table, n_classes: int, fit_intercept: bool, c: float) -> "SoftmaxRows":
        """The :func:`scaled_rows` of a PatternTable's distinct rows, unpacked a block at a time."""
        d = table.n_features

        def rows(s, e):
            bits = np.unpackbits(table.packed[s:e], axis=1, count=d) if d else np.zeros((e - s, 0), np.uint8)
            return scaled_rows(bits, fit_intercept, c)

        return cls(rows, table.labels.astype(np.int64), table.counts.astype(np.float64),
                   d + int(bool(fit_intercept)), int(n_classes))

    @property
    def m(self) -> int:
        return self.labels.shape[0]

    @property
    def n_params(self) -> int:
        return (self.k - 1) * self.p

    @property
    def basis(self) -> np.ndarray:
        return centred_basis(self.k)

    def blocks(self):
        """``(s, e, A, Y)`` per block: the rows and the labels' one-hot indicators."""
        size = max(_FAN, (BLOCK_ROWS // (self.k - 1)) // _FAN * _FAN)  # a few float blocks of (K - 1) p columns
        for s in range(0, self.m, size):
            e = min(s + size, self.m)
            Y = np.zeros((e - s, self.k))
            Y[np.arange(e - s), self.labels[s:e]] = 1.0
            yield s, e, self.rows(s, e), Y

    def offsets(self, offset) -> np.ndarray:
        """The K score offsets: K numbers, or (two classes) one number ``o``, the binary margin's offset: (0, o)."""
        b = np.asarray(offset, dtype=np.float64)
        if b.ndim == 0 and self.k == 2:
            return np.array([0.0, float(b)])
        return np.broadcast_to(b, (self.k,))

    # ------------------------------------------------------------ what minimise asks
    def newton_pass(self, beta, mu, offset):
        """At ``beta``: ``(scores Z, probabilities P, gradient, Hessian, F)``, the last two in ``beta``'s order.

        The Hessian is ``sum_e w_e M_e (x) a_e a_e'`` with ``M_e = G'(diag p_e - p_e p_e')G`` (K - 1 square;
        ``p_k(1 - p_k)`` as ``p_k`` times the other probabilities), one Gram matrix per pair of free rows."""
        q, p, b, G = self.k - 1, self.p, self.offsets(offset), self.basis
        V = beta.reshape(q, p)
        Z, P = np.empty((self.m, self.k)), np.empty((self.m, self.k))
        g, H, loss = np.zeros((q, p)), np.zeros((q * p, q * p)), 0.0
        for s, e, A, Y in self.blocks():
            z = (A @ V.T) @ G.T + b
            Pb, lse = softmax_scores(z)
            Z[s:e], P[s:e] = z, Pb
            w = self.w[s:e]
            g += ((residuals(Pb, self.labels[s:e]) * w[:, None]) @ G).T @ A
            D = -Pb[:, :, None] * Pb[:, None, :]
            D[:, np.arange(self.k), np.arange(self.k)] = Pb * (Pb.sum(axis=1, keepdims=True) - Pb)
            M = np.einsum("ki,nkl,lj->nij", G, D, G) * w[:, None, None]
            for i in range(q):
                for j in range(i, q):
                    block = A.T @ (A * M[:, i, j][:, None])
                    H[i * p:(i + 1) * p, j * p:(j + 1) * p] += block
                    if j != i:
                        H[j * p:(j + 1) * p, i * p:(i + 1) * p] += block.T
            loss += float(w @ (lse - (z * Y).sum(axis=1)))
        H[np.diag_indices_from(H)] += mu
        return Z, P, (mu * V + g).reshape(-1), H, loss + 0.5 * mu * float(beta @ beta)

    def direction(self, step) -> np.ndarray:
        """How the class scores move along the step: ``G step a_e`` for every row."""
        S, G = step.reshape(self.k - 1, self.p), self.basis
        out = np.empty((self.m, self.k))
        for s, e, A, _ in self.blocks():
            out[s:e] = (A @ S.T) @ G.T
        return out

    def value(self, margins, beta, mu) -> float:
        total = 0.0
        for s, e, _, Y in self.blocks():
            z = margins[s:e]
            _, lse = softmax_scores(z)
            total += float(self.w[s:e] @ (lse - (z * Y).sum(axis=1)))
        return total + 0.5 * mu * float(beta @ beta)

    def certified_bound(self, beta, margins, P, mu, offset) -> float:
        """A rigorous upper bound on ``||grad F(beta)||`` from its own float evaluation (docs/privacy.md,
        "DP logistic regression", "The certificate").

        ``margins`` and ``P`` are the scores and probabilities of :meth:`newton_pass` at ``beta``.  The gradient
        is ``mu beta + sum_e w_e G'(p_e - e_y) a_e``; per row, :func:`probability_errors` bounds ``|p^_k - p_k|``
        relative to ``p_k`` and the label's entry ``-(sum of the others)`` is within the others' errors plus
        ``gamma_{K-1}`` of itself (:func:`residuals`): every error is relative to the residual ``p - e_y``, not
        to ``p_y``.  The terms ``fl(fl(fl(w r) G) a)`` are within ``gamma_{K+3}`` and are summed in a tree of
        pairs (:func:`_tree_sum`: the float part grows like ``n log m``).  Inflated by 1% at the end.
        """
        q, p, b, G = self.k - 1, self.p, self.offsets(offset), self.basis
        beta = np.asarray(beta, dtype=np.float64)
        absV, absb, absG = np.abs(beta.reshape(q, p)), np.abs(b), np.abs(G)
        parts, levels, mag, err_r_sum = [], 0, np.zeros(q * p), np.zeros(q * p)
        for s, e, A, _ in self.blocks():
            absA, labels, rows = np.abs(A), self.labels[s:e], np.arange(e - s)
            err_z = _gamma(p + self.k + 1) * ((absA @ absV.T) @ absG.T + absb)  # |z^ - z| per row and class
            err_p = probability_errors(margins[s:e], P[s:e], 2.0 * err_z.max(axis=1))
            R = residuals(P[s:e], labels)
            err_r = err_p.copy()
            err_r[rows, labels] = 0.0
            err_r[rows, labels] = err_r.sum(axis=1) + _gamma(self.k) * np.abs(R[rows, labels])
            w = self.w[s:e, None]
            v_block, lev = _tree_sum((((R * w) @ G)[:, :, None] * A[:, None, :]).reshape(e - s, q * p))
            parts.append(v_block)
            levels = max(levels, lev)
            mag += ((np.abs(R * w) @ absG)[:, :, None] * absA[:, None, :]).reshape(e - s, q * p).sum(axis=0)
            err_r_sum += (((err_r * w) @ absG)[:, :, None] * absA[:, None, :]).reshape(e - s, q * p).sum(axis=0)
        v, top = _tree_sum(np.array(parts).reshape(-1, q * p))
        g = mu * beta + v
        err_v = (_gamma((levels + top) * (_PAIR - 1)) + _gamma(self.k + 3)) * mag + err_r_sum
        err = err_v + 2.0 * _U * (mu * np.abs(beta) + np.abs(g))  # the product mu*beta and the addition
        return 1.01 * (float(np.linalg.norm(g)) + float(np.linalg.norm(err)))


def probability_errors(Z: np.ndarray, P: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """``|p^_k - p_k|`` per row and class: ``P`` the float :func:`softmax_scores` of the float scores ``Z``,
    ``p`` the exact softmax of the exact scores, ``delta`` per row a bound on ``2 max_k |z^_k - z_k|``.

    ``t_k = top - z^_k``: the float ``exp(fl(z^_k - top))`` is within a relative ``rho_k = expm1((t_k +
    EXP_ULPS + 1) u)`` of ``e_k = exp(z^_k - top)`` (the subtraction's rounding, ``u t_k``, and exp's); the
    float sum ``S`` of the K terms (the top one exactly 1) is within ``sigma = gamma_K + sum_k e_k rho_k /
    sum_k e_k``, relative) of the exact one, and the division
    adds ``u``: ``r_k = (1 + rho_k)(1 + u)/(1 - sigma) - 1`` relative to the exact softmax of the float scores.
    That one is within ``e^(+-delta)`` of ``p`` (``log p_k`` is ``z_k`` minus a 1-Lipschitz log-sum-exp):
    ``|p^_k - p_k| <= p_k f_k``, ``f_k = (1 + r_k) e^delta - 1``, and ``p_k <= p^_k / (1 - f_k)``.  Underflow
    (exp's result 0 or subnormal) adds :data:`_TINY` twice.  The bound's own float evaluation is covered by the
    slack of its constants (``(1 + 1e-6)`` on ``rho``, ``1.001`` on ``sigma``) and the caller's final 1%.
    """
    t = Z.max(axis=1, keepdims=True) - Z
    rho = np.expm1((t * (1.0 + 1e-6) + EXP_ULPS + 1.0) * _U)
    sigma = _gamma(P.shape[1]) + 1.001 * (P * rho).sum(axis=1, keepdims=True) / P.sum(axis=1, keepdims=True)
    r = (1.0 + rho) * (1.0 + _U) / (1.0 - sigma) - 1.0
    f = np.expm1(np.log1p(r) + delta[:, None])
    return (P + _TINY) * f / (1.0 - f) + _TINY


class RowBlocks:
    """Two classes with +-1 labels ``ys``: the K = 2 case of :class:`SoftmaxRows` (labels ``ys > 0``; a number
    ``offset`` given to :func:`minimise` is the binary margin's offset)."""

    @staticmethod
    def dense(A, ys, w) -> SoftmaxRows:
        return SoftmaxRows.dense(A, np.asarray(ys) > 0, w, 2)

    @staticmethod
    def from_table(table, fit_intercept: bool, c: float) -> SoftmaxRows:
        return SoftmaxRows.from_table(table, 2, fit_intercept, c)


def minimise(rows, mu: float, tol: float, max_iter: int = MAX_ITER, offset=0.0) -> np.ndarray:
    """Damped Newton for ``F`` (module docstring); returns a point with certified ``||grad F|| <= tol``.

    ``rows`` is the objective, a :class:`SoftmaxRows` (the softmax loss over
    the K - 1 free rows, flattened; K = 2 is the binary loss): it gives the
    Newton pass, the scores' direction, the value and the certified gradient
    bound.  ``offset`` is public: the K class offsets (the released log-odds of
    the classes, or 0), or for two classes one number, the margin's offset.  ``F`` is ``mu``-strongly convex and smooth: Newton with Armijo
    backtracking converges globally and quadratically near the minimiser.
    The line search moves the margins along the step (no pass over the
    rows); where the Newton decrement is below ``F``'s float resolution
    (``F ~ n log 2`` on a large table) it reads noise, so there the full
    step is taken when it lowers the gradient norm.  With no rows,
    ``F = (mu/2)||beta||^2`` and ``beta = 0`` is returned at once.

    Raises
    ------
    SolverNotCertifiedError
        If no certified point is found in ``max_iter`` iterations.
    """
    beta = np.zeros(rows.n_params)
    state = rows.newton_pass(beta, mu, offset)
    for _ in range(max_iter + 1):
        margins, s, g, H, value = state
        gnorm = float(np.linalg.norm(g))
        if gnorm <= 0.5 * tol and rows.certified_bound(beta, margins, s, mu, offset) <= tol:
            return beta
        step = np.linalg.solve(H, g)  # H is symmetric positive definite (>= mu I)
        decrement = float(g @ step)
        if decrement <= _FLAT * (abs(value) + 1.0):
            full = beta - step
            at_full = rows.newton_pass(full, mu, offset)  # also the next iteration's pass if the step is taken
            if float(np.linalg.norm(at_full[2])) < gnorm:
                beta, state = full, at_full
                continue
        dm = rows.direction(step)
        t = 1.0
        while rows.value(margins - t * dm, beta - t * step, mu) > value - 0.25 * t * decrement:
            t *= 0.5
            if t < 1e-12:  # no float decrease left: certify the best point found, or give up
                if rows.certified_bound(beta, margins, s, mu, offset) <= tol:
                    return beta
                raise SolverNotCertifiedError(_NOT_CERTIFIED)
        beta = beta - t * step
        state = rows.newton_pass(beta, mu, offset)
    raise SolverNotCertifiedError(_NOT_CERTIFIED)


_NOT_CERTIFIED = ("The Newton solver did not reach a certified gradient norm <= tol; nothing was released. This "
                  "happens only on very large tables (from about 3e10 records, for two classes or K, when many "
                  "labels are not fitted: the float64 sums' rounding then exceeds tol; docs/privacy.md, \"DP "
                  "logistic regression\"). Use a larger tol (the sensitivity grows only by 2*tol/alpha).")
