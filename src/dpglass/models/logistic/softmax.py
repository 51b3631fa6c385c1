"""The softmax (multinomial) objective of :func:`~dpglass.models.logistic.solver.minimise`, K >= 3 classes.

With the first class as the reference (its coefficients are 0) the free
parameters are the ``K - 1`` rows ``F_k`` (k = 1..K-1) of ``p`` coefficients,
flattened row by row into ``beta`` of length ``(K - 1) p``, and

``F(beta) = sum_e w_e [log(1 + sum_k exp(z_ek)) - z_e,y_e] + (mu/2)||beta||^2``,
``z_ek = F_k . a_e + b_k`` (``z_e0 = 0``, and the bracket's second term is 0 when ``y_e = 0``),

over the distinct rows ``a_e`` with integer weights ``w_e``; ``b`` are the
public offsets.  For K = 2 this is the binary objective of
:mod:`~dpglass.models.logistic.solver`, whose :class:`RowBlocks` is its
specialisation (the scalar sigmoid): the fit uses that one for two classes.
:class:`SoftmaxRows` gives :func:`minimise` what :class:`RowBlocks` gives it:
the Newton pass, the margins' direction, the value and a *certified* bound on
the gradient norm (:meth:`SoftmaxRows.certified_bound`, argued in
docs/privacy.md, "DP logistic regression", "K classes").  Nothing here is
released.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from dpglass.models.logistic.solver import BLOCK_ROWS, _FAN, _U, _gamma, _tree_sum, scaled_rows

__all__ = ["EXP_ULPS", "SoftmaxRows", "softmax_logits"]

#: Assumed relative error of ``numpy.exp`` in units of roundoff (the binary solver assumes 8 for ``expit``).
EXP_ULPS = 8.0
#: Absolute slack per probability for exp's underflow (subnormal or 0 results); as the binary bound's 1e-300.
_TINY = 1e-300


def softmax_logits(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(P, p0, lse)`` of logits ``[0, Z]`` (row-wise): the probabilities of classes 1..K-1, of class 0, and
    ``log(1 + sum exp Z)``; stable (the largest logit, 0 included, is subtracted first)."""
    top = Z.max(axis=1, initial=0.0)
    E = np.exp(Z - top[:, None])
    e0 = np.exp(-top)
    S = e0 + E.sum(axis=1)
    return E / S[:, None], e0 / S, top + np.log(S)


@dataclass(frozen=True)
class SoftmaxRows:
    """The solver's rows for K >= 3 classes: ``rows(s, e)`` the float rows ``s..e-1``, ``labels`` (codes
    0..K-1) and ``w`` per row, ``p`` the row length and ``k`` the number of classes."""

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
        """The :func:`~dpglass.models.logistic.solver.scaled_rows` of a PatternTable's distinct rows."""
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

    def blocks(self):
        """``(s, e, A, Y)`` per block: the rows and the labels' indicators of classes 1..K-1."""
        size = max(_FAN, (BLOCK_ROWS // (self.k - 1)) // _FAN * _FAN)  # a few float blocks of (K - 1) p columns
        for s in range(0, self.m, size):
            e = min(s + size, self.m)
            yield s, e, self.rows(s, e), self._indicators(s, e)

    def _indicators(self, s, e) -> np.ndarray:
        y = self.labels[s:e]
        Y = np.zeros((e - s, self.k - 1))
        at = np.flatnonzero(y > 0)
        Y[at, y[at] - 1] = 1.0
        return Y

    def _offsets(self, offset) -> np.ndarray:
        return np.broadcast_to(np.asarray(offset, dtype=np.float64), (self.k - 1,))

    # ------------------------------------------------------------ what minimise asks
    def newton_pass(self, beta, mu, offset):
        """At ``beta``: ``(logits Z, probabilities P of classes 1..K-1, gradient, Hessian, F)``."""
        q, p, b = self.k - 1, self.p, self._offsets(offset)
        V = beta.reshape(q, p)
        Z, P = np.empty((self.m, q)), np.empty((self.m, q))
        G, H, loss = np.zeros((q, p)), np.zeros((q * p, q * p)), 0.0
        for s, e, A, Y in self.blocks():
            z = A @ V.T + b
            Pb, _, lse = softmax_logits(z)
            Z[s:e], P[s:e] = z, Pb
            w = self.w[s:e]
            G += ((Pb - Y) * w[:, None]).T @ A
            for k in range(q):  # diag(P) (x) x x^T, then minus (P (x) x)(P (x) x)^T, weighted
                H[k * p:(k + 1) * p, k * p:(k + 1) * p] += A.T @ (A * (w * Pb[:, k])[:, None])
            B = ((np.sqrt(w)[:, None] * Pb)[:, :, None] * A[:, None, :]).reshape(e - s, q * p)
            H -= B.T @ B
            loss += float(w @ (lse - (z * Y).sum(axis=1)))
        H[np.diag_indices_from(H)] += mu
        return Z, P, (mu * V + G).reshape(-1), H, loss + 0.5 * mu * float(beta @ beta)

    def direction(self, step) -> np.ndarray:
        """How the logits move along the step: ``a_e . step_k`` for every row and free class."""
        S = step.reshape(self.k - 1, self.p)
        out = np.empty((self.m, self.k - 1))
        for s, e, A, _ in self.blocks():
            out[s:e] = A @ S.T
        return out

    def value(self, margins, beta, mu) -> float:
        total = 0.0
        for s, e, _, Y in self.blocks():
            z = margins[s:e]
            _, _, lse = softmax_logits(z)
            total += float(self.w[s:e] @ (lse - (z * Y).sum(axis=1)))
        return total + 0.5 * mu * float(beta @ beta)

    def certified_bound(self, beta, margins, P, mu, offset) -> float:
        """A rigorous upper bound on ``||grad F(beta)||`` from its own float evaluation (docs/privacy.md,
        "DP logistic regression", "K classes: the certificate").

        ``margins`` and ``P`` are the logits and probabilities of :meth:`newton_pass` at ``beta``.  Per row:
        the logits' error ``|z^ - z| <= gamma_{p+1} (|a|.|F_k| + |b_k|)``; the float softmax is within a
        relative ``r`` of the exact softmax of the float logits (exp within :data:`EXP_ULPS` ulps, the
        subtraction of the largest logit, a sum of K positive terms, a division), and the exact softmax of the
        float logits within a factor ``e^(+-delta)``, ``delta = 2 max_k |z^_k - z_k|``, of the exact one (log p_k
        is z_k minus a 1-Lipschitz log-sum-exp); the gradient's sum is the binary solver's tree of 64-row
        groups, each term ``fl(fl(w fl(p - y)) a)`` within ``gamma_3``.  Inflated by 1% at the end.
        """
        q, p, b = self.k - 1, self.p, self._offsets(offset)
        beta = np.asarray(beta, dtype=np.float64)
        V = beta.reshape(q, p)
        absV, absb = np.abs(V), np.abs(b)
        parts, levels, mag, err_p_sum = [], 0, np.zeros(q * p), np.zeros(q * p)
        for s, e, A, Y in self.blocks():
            absA = np.abs(A)
            err_z = _gamma(p + 1) * (absA @ absV.T + absb)  # |z^ - z| per row and free class
            delta = 2.0 * err_z.max(axis=1, initial=0.0)
            z = margins[s:e]
            spread = z.max(axis=1, initial=0.0) - z.min(axis=1, initial=0.0)  # max_k |z^_k - max(0, z^)|
            r = np.expm1((2.0 * _U * spread + (2.0 * EXP_ULPS + self.k + 2.0) * _U) * (1.0 + 1e-6))
            Pb = P[s:e]
            err_p = (Pb + _TINY) / (1.0 - r)[:, None] * (r + np.expm1(delta))[:, None] + _TINY  # |p^ - p|
            R = (Pb - Y) * self.w[s:e, None]
            v_block, lev = _tree_sum((R[:, :, None] * A[:, None, :]).reshape(e - s, q * p))
            parts.append(v_block)
            levels = max(levels, lev)
            mag += (np.abs(R)[:, :, None] * absA[:, None, :]).reshape(e - s, q * p).sum(axis=0)
            err_p_sum += ((err_p * self.w[s:e, None])[:, :, None] * absA[:, None, :]).reshape(e - s, q * p).sum(axis=0)
        v, top = _tree_sum(np.array(parts).reshape(-1, q * p))
        g = mu * beta + v
        err_v = (_gamma((levels + top) * (_FAN - 1)) + _gamma(3)) * mag + err_p_sum
        err = err_v + 2.0 * _U * (mu * np.abs(beta) + np.abs(g))  # the product mu*beta and the addition
        return 1.01 * (float(np.linalg.norm(g)) + float(np.linalg.norm(err)))
