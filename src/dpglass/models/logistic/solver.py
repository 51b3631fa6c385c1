"""The certified solver of :mod:`dpglass.models.logistic.estimator`, block by block.

:func:`minimise` runs damped Newton on
``F(beta) = sum_e w_e log(1 + exp(-y_e (beta.a_e + offset))) + (mu/2)||beta||^2``
over the distinct rows ``a_e`` of the data with integer weights ``w_e``
(their record counts) and returns a point whose gradient norm is
*certified* ``<= tol`` (:func:`certified_gradient_bound`).  The rows are read
a block of :data:`BLOCK_ROWS` at a time from a :class:`RowBlocks` (a dense
array, or the bit-packed :class:`~dpglass.aggregates.PatternTable` unpacked
block by block), so the solver holds a few vectors of length m and one float
block, never a float copy of the table.  K >= 3 classes: the same loop on
the softmax objective of :class:`~dpglass.models.logistic.softmax.SoftmaxRows`,
whose two-class case this objective is.  Nothing here is released; the
privacy argument needs only the certificate (docs/privacy.md, "DP logistic
regression").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import expit

__all__ = ["BLOCK_ROWS", "MAX_ITER", "RowBlocks", "SolverNotCertifiedError", "certified_gradient_bound",
           "minimise", "scaled_rows"]

#: Newton iterations before giving up (never reached in practice; see docs).
MAX_ITER = 500
#: Rows per float block read from a :class:`RowBlocks` (a multiple of :data:`_FAN`).
BLOCK_ROWS = 1 << 14

_U = 2.0**-53  # unit roundoff of float64
_EXPIT_ULPS = 8.0  # assumed relative error of scipy.special.expit, in units of _U
_SHRINK = 1.0 - 2.0**-30  # rows are kept at norm <= data_norm * _SHRINK (margin for the float norm)
#: A Newton decrement below this fraction of |F| is under F's float resolution (see :func:`minimise`).
_FLAT = 2.0**-30
#: Fan-in of :func:`_tree_sum`'s tree.
_FAN = 64


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


@dataclass(frozen=True)
class RowBlocks:
    """The solver's rows: ``rows(s, e)`` returns the float rows ``s..e-1``; ``ys`` (+-1) and ``w`` per row."""

    rows: Callable[[int, int], np.ndarray]
    ys: np.ndarray
    w: np.ndarray
    p: int

    @classmethod
    def dense(cls, A, ys, w) -> "RowBlocks":
        A = np.asarray(A, dtype=np.float64)
        return cls(lambda s, e: A[s:e], np.asarray(ys, dtype=np.float64), np.asarray(w, dtype=np.float64),
                   A.shape[1])

    @classmethod
    def from_table(cls, table, fit_intercept: bool, c: float) -> "RowBlocks":
        """The :func:`scaled_rows` of a PatternTable's distinct rows, unpacked a block at a time."""
        d = table.n_features

        def rows(s, e):
            bits = np.unpackbits(table.packed[s:e], axis=1, count=d) if d else np.zeros((e - s, 0), np.uint8)
            return scaled_rows(bits, fit_intercept, c)

        ys = 2.0 * table.labels.astype(np.float64) - 1.0
        return cls(rows, ys, table.counts.astype(np.float64), d + int(bool(fit_intercept)))

    @property
    def m(self) -> int:
        return self.ys.shape[0]

    @property
    def n_params(self) -> int:
        return self.p

    def blocks(self):
        """``(s, e, YA)`` per block: the signed rows ``y_e a_e``."""
        for s in range(0, self.m, BLOCK_ROWS):
            e = min(s + BLOCK_ROWS, self.m)
            yield s, e, self.rows(s, e) * self.ys[s:e, None]

    # what :func:`minimise` asks of an objective (the softmax one is ``softmax.SoftmaxRows``)
    def newton_pass(self, beta, mu, offset):
        return _newton_pass(self, beta, mu, offset)

    def direction(self, step):
        return _direction(self, step)

    def value(self, margins, beta, mu) -> float:
        return _value(self, margins, beta, mu)

    def certified_bound(self, beta, margins, s, mu, offset) -> float:
        return certified_gradient_bound(self, beta, s, mu, offset)


def _tree_sum(T: np.ndarray) -> tuple[np.ndarray, int]:
    """``(column sums of T, levels)``: sums of :data:`_FAN` rows at a time, then of those, until one row.

    Each level's partial sums have ``_FAN - 1`` additions, so the result is
    within ``gamma_{levels (_FAN - 1)}`` times the sum of ``|T|`` of the exact
    sums (Higham 2002, Lemma 3.3), whatever order NumPy adds a group in:
    ``levels`` grows like ``log_64`` of the rows, where one dot product's
    bound grows like the rows.
    """
    levels = 0
    while T.shape[0] > 1:
        pad = (-T.shape[0]) % _FAN
        if pad:
            T = np.concatenate([T, np.zeros((pad, T.shape[1]))])
        T = T.reshape(-1, _FAN, T.shape[1]).sum(axis=1)
        levels += 1
    return (T[0] if T.shape[0] else np.zeros(T.shape[1])), levels


def _gamma(k: float) -> float:
    return k * _U / (1.0 - k * _U)


def _slope(s, err_m):
    """A bound on sigma' between the computed and the exact margin: ``min(1/4, sigma'(-m^) e^err_m)``.

    ``(log sigma')' = 1 - 2 sigma`` lies in (-1, 1), so ``sigma'(x + t) <= sigma'(x) e^|t|``; and
    ``sigma'(-m^) = sigma(1 - sigma)`` at ``sigma = s^ / (1 + theta)``, ``|theta| <= _EXPIT_ULPS u``, is at most
    ``s^ (1 + 9u) ((1 - s^)(1 + 2u) + 9u s^)`` (the ``1 + 2u`` for the float ``1 - s^``).  Far from the
    boundary, where the margins are large, this is much smaller than the global 1/4.
    """
    s = np.maximum(s, 1e-300)  # expit underflows to 0 (or a subnormal) while sigma(-m^) can be ~5e-309
    local = s * (1.0 + 9.0 * _U) * ((1.0 - s) * (1.0 + 2.0 * _U) + 9.0 * _U * s)
    return np.minimum(0.25, local * np.exp(err_m) * (1.0 + 4.0 * _U))


def certified_gradient_bound(rows: RowBlocks, beta, s, mu, offset: float = 0.0) -> float:
    """A rigorous upper bound on ``||grad F(beta)||``, from its own float evaluation.

    ``s`` is ``expit(-margins)`` at ``beta``, evaluated in float64.  The
    gradient is evaluated as ``mu beta - v``, ``v`` summed by a tree of
    64-term groups inside each block and then over the blocks' sums.
    Standard error bounds (Higham 2002, Section 3.1), valid for any summation
    order: ``|fl(a.b) - a.b| <= gamma_k |a|.|b|``, ``gamma_k = k u/(1 - k u)``;
    ``expit`` within ``_EXPIT_ULPS`` units of roundoff (relative); ``sigma``'s
    slope between the computed and the exact margin is bounded by
    :func:`_slope`; each term ``fl(fl(w s) y a)`` within ``gamma_2``.  The
    bound is evaluated in float itself, then inflated by 1%, far more than
    its own rounding.  Its float part grows like ``n log m``, not ``n m``.
    """
    beta = np.asarray(beta, dtype=np.float64)
    p = rows.p
    parts, levels, mag, err_s_sum = [], 0, np.zeros(p), np.zeros(p)
    for a, b, YA in rows.blocks():
        absA = np.abs(YA)
        err_m = _gamma(p + 1) * (absA @ np.abs(beta) + abs(offset))  # |m^ - m|, the offset's addition included
        err_s = _EXPIT_ULPS * _U * s[a:b] + _slope(s[a:b], err_m) * err_m + 1e-300  # |s^ - sigma(-m)|
        ws = rows.w[a:b] * s[a:b]
        v_block, lev = _tree_sum(YA * ws[:, None])
        parts.append(v_block)
        levels = max(levels, lev)
        mag += absA.T @ ws
        err_s_sum += absA.T @ (rows.w[a:b] * err_s)
    v, top = _tree_sum(np.array(parts).reshape(-1, p))
    g = mu * beta - v
    # |v^ - sum_e w_e y_e a_e sigma(-m_e)|: the tree sums, the products w s y a, the errors of s
    err_v = (_gamma((levels + top) * (_FAN - 1)) + _gamma(2)) * mag + err_s_sum
    err = err_v + 2.0 * _U * (mu * np.abs(beta) + np.abs(g))  # the product mu*beta and the subtraction
    return 1.01 * (float(np.linalg.norm(g)) + float(np.linalg.norm(err)))


def _newton_pass(rows: RowBlocks, beta, mu, offset):
    """At ``beta``: ``(margins, s, gradient, Hessian, F)`` in one pass over the blocks."""
    m, p = rows.m, rows.p
    margins, s = np.empty(m), np.empty(m)
    v, H, loss = np.zeros(p), np.zeros((p, p)), 0.0
    for a, b, YA in rows.blocks():
        mg = YA @ beta + rows.ys[a:b] * offset
        sb = expit(-mg)  # sigma(-m_e)
        margins[a:b], s[a:b] = mg, sb
        w = rows.w[a:b]
        v += YA.T @ (w * sb)
        H += YA.T @ (YA * (w * (sb * (1.0 - sb)))[:, None])  # y^2 = 1: the signed rows give A'DA
        loss += float(w @ np.logaddexp(0.0, -mg))
    H[np.diag_indices_from(H)] += mu
    return margins, s, mu * beta - v, H, loss + 0.5 * mu * float(beta @ beta)


def _direction(rows: RowBlocks, step) -> np.ndarray:
    """``y_e a_e . step`` for every row: how the margins move along the step."""
    out = np.empty(rows.m)
    for a, b, YA in rows.blocks():
        out[a:b] = YA @ step
    return out


def _value(rows: RowBlocks, margins, beta, mu) -> float:
    return float(rows.w @ np.logaddexp(0.0, -margins)) + 0.5 * mu * float(beta @ beta)


def minimise(rows, mu: float, tol: float, max_iter: int = MAX_ITER, offset=0.0) -> np.ndarray:
    """Damped Newton for ``F`` (module docstring); returns a point with certified ``||grad F|| <= tol``.

    ``rows`` is the objective: a :class:`RowBlocks` (two classes, the binary
    loss above) or a :class:`~dpglass.models.logistic.softmax.SoftmaxRows`
    (K classes, the softmax loss over the K - 1 free rows, flattened); both
    give the Newton pass, the margins' direction, the value and the certified
    gradient bound.  ``offset`` is a public constant (the released log-odds of
    the classes, or 0; one per free row for the softmax).  ``F`` is ``mu``-strongly convex and smooth: Newton with Armijo
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


_NOT_CERTIFIED = ("The Newton solver did not reach a certified gradient norm <= tol; nothing was released. "
                  "Use a larger tol (the sensitivity grows only by 2*tol/alpha).")
