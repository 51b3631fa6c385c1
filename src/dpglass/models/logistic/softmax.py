"""The softmax (multinomial) objective of :func:`~dpglass.models.logistic.solver.minimise`, K >= 3 classes.

The free parameters are the ``K - 1`` rows ``F_m`` of ``p`` coefficients,
flattened row by row into ``beta`` of length ``(K - 1) p``; the K class scores
of a row ``a`` are ``z = G F a + b`` (``G`` the public centred basis,
:func:`~dpglass.models.logistic.plan.centred_basis`; ``b`` the public offsets),
and

``F(beta) = sum_e w_e [log sum_k exp(z_ek) - z_e,y_e] + (mu/2)||beta||^2``

over the distinct rows ``a_e`` with integer weights ``w_e``.  For K = 2,
``G = (-1/2, 1/2)`` and this is the binary objective of
:mod:`~dpglass.models.logistic.solver` with offset ``b_1 - b_0``; its
:class:`~dpglass.models.logistic.solver.RowBlocks` is that case specialised
(the scalar sigmoid), and the fit uses it for two classes.
:class:`SoftmaxRows` gives :func:`minimise` what ``RowBlocks`` gives it: the
Newton pass, the scores' direction, the value and a *certified* bound on the
gradient norm (:meth:`SoftmaxRows.certified_bound`; docs/privacy.md, "DP
logistic regression", "K classes").  Nothing here is released.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from dpglass.models.logistic.plan import centred_basis
from dpglass.models.logistic.solver import BLOCK_ROWS, _FAN, _U, _gamma, _tree_sum, scaled_rows

__all__ = ["EXP_ULPS", "SoftmaxRows", "softmax_scores"]

#: Assumed relative error of ``numpy.exp`` in units of roundoff (the binary solver assumes 8 for ``expit``).
EXP_ULPS = 8.0
#: Absolute slack per probability for exp's underflow (subnormal or 0 results); as the binary bound's 1e-300.
_TINY = 1e-300


def softmax_scores(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P, lse)``: the row-wise softmax of the scores and ``log sum exp``; stable (the largest score is
    subtracted first)."""
    top = Z.max(axis=1)
    E = np.exp(Z - top[:, None])
    S = E.sum(axis=1)
    return E / S[:, None], top + np.log(S)


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

    def _offsets(self, offset) -> np.ndarray:
        return np.broadcast_to(np.asarray(offset, dtype=np.float64), (self.k,))

    # ------------------------------------------------------------ what minimise asks
    def newton_pass(self, beta, mu, offset):
        """At ``beta``: ``(scores Z, probabilities P, gradient, Hessian, F)``, the last two in ``beta``'s order."""
        q, p, b, G = self.k - 1, self.p, self._offsets(offset), self.basis
        V = beta.reshape(q, p)
        Z, P = np.empty((self.m, self.k)), np.empty((self.m, self.k))
        g, H, loss = np.zeros((q, p)), np.zeros((q * p, q * p)), 0.0
        for s, e, A, Y in self.blocks():
            z = (A @ V.T) @ G.T + b
            Pb, lse = softmax_scores(z)
            Z[s:e], P[s:e] = z, Pb
            w = self.w[s:e]
            g += (((Pb - Y) * w[:, None]) @ G).T @ A
            # sum_i w_i (G' diag(p_i) G - (G' p_i)(G' p_i)') (x) a_i a_i'
            for k in range(self.k):
                H += np.kron(np.outer(G[k], G[k]), A.T @ (A * (w * Pb[:, k])[:, None]))
            B = ((np.sqrt(w)[:, None] * (Pb @ G))[:, :, None] * A[:, None, :]).reshape(e - s, q * p)
            H -= B.T @ B
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
        "DP logistic regression", "K classes: the certificate").

        ``margins`` and ``P`` are the scores and probabilities of :meth:`newton_pass` at ``beta``.  Per row:
        the scores' error ``|z^ - z| <= gamma_{p+K+1} (|G| |F| |a| + |b|)``; the float softmax is within a
        relative ``r`` of the exact softmax of the float scores (exp within :data:`EXP_ULPS` ulps, the
        subtraction of the largest score, a sum of K positive terms, a division), and that within a factor
        ``e^(+-delta)``, ``delta = 2 max_k |z^_k - z_k|``, of the exact one (``log p_k`` is ``z_k`` minus a
        1-Lipschitz log-sum-exp); the gradient ``mu beta + sum_e w_e G'(p_e - e_y) a_e`` is summed in the binary
        solver's tree of 64-row groups, each term ``fl(fl(fl(w fl(p - y)) G) a)`` within ``gamma_{K+3}``.
        Inflated by 1% at the end.
        """
        q, p, b, G = self.k - 1, self.p, self._offsets(offset), self.basis
        beta = np.asarray(beta, dtype=np.float64)
        V = beta.reshape(q, p)
        absV, absb, absG = np.abs(V), np.abs(b), np.abs(G)
        parts, levels, mag, err_p_sum = [], 0, np.zeros(q * p), np.zeros(q * p)
        for s, e, A, Y in self.blocks():
            absA = np.abs(A)
            err_z = _gamma(p + self.k + 1) * ((absA @ absV.T) @ absG.T + absb)  # |z^ - z| per row and class
            delta = 2.0 * err_z.max(axis=1)
            z = margins[s:e]
            spread = z.max(axis=1) - z.min(axis=1)  # max_k |z^_k - max z^|
            r = np.expm1((2.0 * _U * spread + (2.0 * EXP_ULPS + self.k + 2.0) * _U) * (1.0 + 1e-6))
            Pb = P[s:e]
            err_p = (Pb + _TINY) / (1.0 - r)[:, None] * (r + np.expm1(delta))[:, None] + _TINY  # |p^ - p|
            w = self.w[s:e, None]
            R = (Pb - Y) * w
            v_block, lev = _tree_sum(((R @ G)[:, :, None] * A[:, None, :]).reshape(e - s, q * p))
            parts.append(v_block)
            levels = max(levels, lev)
            mag += ((np.abs(R) @ absG)[:, :, None] * absA[:, None, :]).reshape(e - s, q * p).sum(axis=0)
            err_p_sum += (((err_p * w) @ absG)[:, :, None] * absA[:, None, :]).reshape(e - s, q * p).sum(axis=0)
        v, top = _tree_sum(np.array(parts).reshape(-1, q * p))
        g = mu * beta + v
        err_v = (_gamma((levels + top) * (_FAN - 1)) + _gamma(self.k + 3)) * mag + err_p_sum
        err = err_v + 2.0 * _U * (mu * np.abs(beta) + np.abs(g))  # the product mu*beta and the addition
        return 1.01 * (float(np.linalg.norm(g)) + float(np.linalg.norm(err)))
