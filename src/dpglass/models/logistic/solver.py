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
copy of the table.  Every sum over the entries is exact (per-entry floats on a
fixed grid, added as integers: :class:`SoftmaxPart`), so the path does not
depend on how the entries are cut into parts: on Dask the parts stay on the
workers and the client adds their integer sums (issue 30).  Nothing here is released; the privacy argument needs only
the certificate (docs/privacy.md, "DP logistic regression").
"""

from __future__ import annotations

import numpy as np

from dpglass.aggregates.parts import TableParts, table_parts
from dpglass.exceptions import InvalidParameterError
from dpglass.models.logistic.plan import centred_basis

__all__ = ["BLOCK_ROWS", "EXP_ULPS", "MAX_ITER", "RowBlocks", "SoftmaxRows", "SolverNotCertifiedError", "minimise",
           "scaled_rows", "softmax_scores"]

#: Newton iterations before giving up (never reached in practice; see docs).
MAX_ITER = 500
#: Rows per float block read from the rows (at most 2**14: what keeps the exact sums' partial sums below 2**53).
BLOCK_ROWS = 1 << 14

_U = 2.0**-53  # unit roundoff of float64
#: Assumed relative error of ``numpy.exp`` in units of roundoff.
EXP_ULPS = 8.0
#: Absolute slack per probability for exp's underflow (subnormal or 0 results).
_TINY = 1e-300
_SHRINK = 1.0 - 2.0**-30  # rows are kept at norm <= data_norm * _SHRINK (margin for the float norm)
#: A Newton decrement below this fraction of |F| is under F's float resolution (see :func:`minimise`).
_FLAT = 2.0**-30
#: The gradient's, loss's and certificate's per-entry terms are quantised at 2**-QUANTUM_BITS ...
QUANTUM_BITS = 80
#: ... as N_LIMBS integer limbs of LIMB_BITS bits (units 2**-80, 2**-50, 2**-20, 2**10, 2**40), summed exactly.
LIMB_BITS, N_LIMBS = 30, 5
#: The Hessian's per-entry weights are quantised at 2**-HESSIAN_BITS (the preconditioner: not certified).
HESSIAN_BITS = 30


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
        if (norms > c * _SHRINK).any():
            X = X * shrink_factors(norms, c)[:, None]
    return X


def _gamma(k: float) -> float:
    return k * _U / (1.0 - k * _U)


def softmax_scores(Z: np.ndarray, probabilities: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
    """``(P, lse)``: the row-wise softmax of the scores and ``log sum exp``; stable (the largest score is
    subtracted first, and ``lse = top + log1p(sum of the other terms)``, exact to a few ulps for large margins).
    Two classes by columns (the same floats: one other term, ``exp`` element by element; ``P`` None if not
    asked for)."""
    if Z.shape[1] == 2:
        return _softmax_two(Z, probabilities)
    top = Z.max(axis=1)
    E = np.exp(Z - top[:, None])
    rows = np.arange(Z.shape[0])
    E[rows, Z.argmax(axis=1)] = 0.0  # exp(0) = 1 exactly: summed apart
    rest = E.sum(axis=1)
    E[rows, Z.argmax(axis=1)] = 1.0
    return E / (1.0 + rest)[:, None], top + np.log1p(rest)


def _softmax_two(Z: np.ndarray, probabilities: bool) -> tuple[np.ndarray | None, np.ndarray]:
    second = Z[:, 1] > Z[:, 0]  # argmax: the first of equal scores is the top one
    top = np.where(second, Z[:, 1], Z[:, 0])
    rest = np.exp(np.where(second, Z[:, 0], Z[:, 1]) - top)
    if not probabilities:
        return None, top + np.log1p(rest)
    total, P = 1.0 + rest, np.empty_like(Z)
    P[:, 0] = np.where(second, rest, 1.0) / total
    P[:, 1] = np.where(second, 1.0, rest) / total
    return P, top + np.log1p(rest)


def _row_sums(A: np.ndarray) -> np.ndarray:
    """``A.sum(axis=1)``; two columns added as columns (the same float: one addition)."""
    return A[:, 0] + A[:, 1] if A.shape[1] == 2 else A.sum(axis=1)


def residuals(P: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``p - e_y`` per row, its label's entry computed as ``-(sum of the other probabilities)``: relative to the
    residual itself, not to ``p_y ~ 1`` (what keeps the certificate tight on a well-fitted large table)."""
    R = P.copy()
    rows = np.arange(P.shape[0])
    R[rows, labels] = 0.0
    R[rows, labels] = -_row_sums(R)
    return R


# ------------------------------------------------------------------ exact sums
def limbs(v: np.ndarray, up: bool = False) -> np.ndarray:
    """``round(v / 2**-QUANTUM_BITS)`` (``up``: the ceiling) as :data:`N_LIMBS` float limbs of integers, last axis.

    Limb ``i`` is in units ``2**(LIMB_BITS i - QUANTUM_BITS)``; all but the last are within ``2**(LIMB_BITS - 1)``
    in magnitude: ``low = q - 2**LIMB_BITS r`` with ``r = rint(q 2**-LIMB_BITS)``, then ``q = r``.  Every
    operation is exact (scalings by powers of two, ``rint`` of a float, and differences of floats whose exact
    result is a float), so the limbs add up to the quantised value exactly."""
    out = np.empty(np.shape(v) + (N_LIMBS,))
    q = np.multiply(v, 2.0**QUANTUM_BITS)
    q = np.ceil(q, out=q) if up else np.rint(q, out=q)
    r = np.empty_like(q)
    for i in range(N_LIMBS - 1):
        np.rint(np.multiply(q, 2.0**-LIMB_BITS, out=r), out=r)
        low = out[..., i]
        np.subtract(q, np.multiply(r, 2.0**LIMB_BITS, out=low), out=low)
        q, r = r, q
    out[..., N_LIMBS - 1] = q
    return out


def limb_floats(sums: np.ndarray, up: bool = False) -> np.ndarray:
    """Exact int64 limb sums (last axis) as floats: the integer they make, times the quantum, rounded to nearest
    once (``up``: then one ulp up, an upper bound)."""
    values, unit = [], 1 << QUANTUM_BITS
    for row in np.asarray(sums, dtype=np.int64).reshape(-1, N_LIMBS).tolist():
        total = 0
        for x in reversed(row):  # Horner: sum_i x_i 2**(LIMB_BITS i), a Python integer
            total = (total << LIMB_BITS) + x
        values.append(total / unit)  # an integer quotient: rounded to nearest once
    out = np.array(values, dtype=np.float64)
    if up:
        out = np.nextafter(out, np.inf)
    return out.reshape(np.shape(sums)[:-1])


def rowdot(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A @ B`` row by row, column 0 first: a row's result depends on that row alone, not on the block it is in
    (BLAS's kernels add in an order set by the block's shape)."""
    out = np.zeros((B.shape[1], A.shape[0]))  # a result column a row: contiguous sums
    for j in range(A.shape[1]):
        column = A[:, j]
        for i in range(B.shape[1]):
            if B[j, i] != 0.0:  # a zero term adds +-0: out (never -0) is unchanged
                out[i] += column * B[j, i]
    return out.T


def _scaled(X: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The rows ``s x`` of a block (``X`` itself where no row is shrunk: ``1 x = x`` exactly)."""
    return X if bool((scale == 1.0).all()) else X * scale[:, None]


def _column_sums(X: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``sum_e x_ej L_e..`` for 0/1 rows ``X`` and integer limbs ``L`` (b, q, N_LIMBS): exact (every partial sum
    is an integer below ``2**53``: limbs below ``2**29``, blocks of at most ``2**14`` rows, so one float matrix
    product adds them exactly in any order), as int64 (q, p, N)."""
    return _limb_columns(X.T @ L.reshape(L.shape[0], -1), L.shape[1])


def _limb_columns(sums: np.ndarray, q: int) -> np.ndarray:
    """A product ``X' L`` (p, q N_LIMBS) of exact integer sums as int64 (q, p, N_LIMBS)."""
    return sums.astype(np.int64).reshape(sums.shape[0], q, N_LIMBS).transpose(1, 0, 2)


def _loss_limbs(ell: np.ndarray) -> np.ndarray:
    """The per-entry losses' limbs summed exactly (float sums over at most ``BLOCK_ROWS`` entries, then int64)."""
    out = np.zeros(N_LIMBS, np.int64)
    for s in range(0, ell.shape[0], BLOCK_ROWS):
        out += limbs(ell[s:s + BLOCK_ROWS]).sum(axis=0).astype(np.int64)
    return out


class SoftmaxPart:
    """One part of the solver's rows and what a Newton step asks of it, every sum exact (docs/privacy.md, "DP
    logistic regression", "Exact sums").

    A row is ``a_e = s_e x_e``: ``x_e`` 0/1 (the intercept's 1 last) and ``s_e`` its shrink factor
    (:func:`scaled_rows`).  Per entry the float terms are computed from that entry alone (:func:`rowdot`), then
    quantised and summed as integers: the gradient's ``fl(fl(fl(w r) G) s)`` and the loss's ``fl(w (lse - z_y))``
    at ``2**-80`` (:func:`limbs`), the Hessian's weights ``fl(w s^2 M)`` at ``2**-30`` (the preconditioner
    only), the certificate's bound terms rounded up at ``2**-80``.  So a sum is the same however the entries are
    cut into parts and blocks.  One pass over the rows at a new ``beta`` gives its scores, probabilities, log-sum-exps
    and gradient limbs (a cache keyed by ``beta``: the line search and the certificate read them again; a
    recomputed part rebuilds it) and, for a Newton step, the Hessian; ``rows(s, e)`` gives a block of rows, valid
    until the next one is asked for."""

    def __init__(self, rows, labels, w, p: int, k: int):
        self.rows, self.labels, self.w, self.p, self.k = rows, labels, w, int(p), int(k)
        self.G = centred_basis(self.k)
        self._at, self._step = None, None

    @property
    def m(self) -> int:
        return self.labels.shape[0]

    def blocks(self):
        """``(s, e, X, scale)`` per block of at most ``BLOCK_ROWS / (K - 1)`` rows (``X`` valid until the next)."""
        size = max(1, BLOCK_ROWS // (self.k - 1))
        for s in range(0, self.m, size):
            e = min(s + size, self.m)
            yield (s, e) + self.rows(s, e)

    def _sweep(self, beta, b, hessian: bool = False):
        """At ``beta``: the scores, probabilities, log-sum-exps and gradient limbs (kept, unless already kept at
        ``beta``) and, if asked, the Hessian quanta (low and high halves), in one pass over the rows."""
        key = (beta.tobytes(), b.tobytes())
        fresh, q, p, k = self._at != key, self.k - 1, self.p, self.k
        if not fresh and not hessian:
            return None
        if fresh:
            V, Z, P, lse = beta.reshape(q, p), np.empty((self.m, k)), np.empty((self.m, k)), np.empty(self.m)
            g = np.zeros((q, p, N_LIMBS), np.int64)
        H = np.zeros((2, q * p, q * p), np.int64) if hessian else None
        for s, e, X, scale in self.blocks():
            L = None
            if fresh:
                Z[s:e] = rowdot(rowdot(_scaled(X, scale), V.T), self.G.T) + b
                P[s:e], lse[s:e] = softmax_scores(Z[s:e])
                u = rowdot(residuals(P[s:e], self.labels[s:e]) * self.w[s:e, None], self.G) * scale[:, None]
                L = limbs(u).reshape(e - s, q * N_LIMBS)
            if hessian:  # the gradient's column sums in the Hessian's first product
                block, sums = self._hessian_block((P if fresh else self.P)[s:e], X, self.w[s:e] * scale * scale, L)
                H += block
            if fresh:
                g += _limb_columns(sums if hessian else X.T @ L, q)
        if fresh:
            self._at, self.Z, self.P, self.lse, self.g = key, Z, P, lse, g
        return H

    def _hessian_block(self, P, X, weights, extra=None):
        """``sum_e Mq_e (x) x_e x_e'`` over a block (``Mq`` the quantised ``weights_e G'(diag p_e - p_e p_e')G``),
        and ``X' extra`` (exact integer columns, or None) taken in the first Gram product."""
        q, p, k = self.k - 1, self.p, self.k
        D = -P[:, :, None] * P[:, None, :]
        D[:, np.arange(k), np.arange(k)] = P * (_row_sums(P)[:, None] - P)
        M = np.einsum("ki,nkl,lj->nij", self.G, D, self.G) * weights[:, None, None]
        Mq = np.sign(M) * np.minimum(np.rint(np.abs(M) * 2.0**HESSIAN_BITS), 2.0**60)
        H, sums = np.zeros((2, q * p, q * p), np.int64), None
        for i in range(q):
            for j in range(i, q):
                block, more = _gram(X, Mq[:, i, j], extra if i == j == 0 else None)
                sums = more if i == j == 0 else sums
                H[:, i * p:(i + 1) * p, j * p:(j + 1) * p] += block
                if j != i:
                    H[:, j * p:(j + 1) * p, i * p:(i + 1) * p] += block.transpose(0, 2, 1)
        return H, sums

    def scores(self, beta, b):
        self._sweep(beta, b)
        return self.Z, self.P

    def loss(self, Z, lse=None) -> np.ndarray:
        if lse is None:
            lse = softmax_scores(Z, probabilities=False)[1]
        return _loss_limbs(self.w * (lse - Z[np.arange(self.m), self.labels]))

    def gradient(self, beta, b) -> np.ndarray:
        self._sweep(beta, b)
        return self.g.copy()

    def newton(self, beta, b):
        """``(gradient limbs, Hessian quanta (low and high), loss limbs)`` at ``beta``."""
        H = self._sweep(beta, b, hessian=True)
        return self.g.copy(), H, self.loss(self.Z, self.lse)

    def line(self, beta, b, step, t) -> np.ndarray:
        """The loss limbs at ``beta - t step`` (the scores moved along the step's direction, cached by step)."""
        Z, _ = self.scores(beta, b)
        key = (self._at, step.tobytes())
        if self._step != key:
            S, dZ = step.reshape(self.k - 1, self.p), np.empty((self.m, self.k))
            for s, e, X, scale in self.blocks():
                dZ[s:e] = rowdot(rowdot(_scaled(X, scale), S.T), self.G.T)
            self._step, self.dZ = key, dZ
        return self.loss(Z - t * self.dZ)

    def bound(self, beta, b):
        """The certificate's sums at ``beta``: gradient limbs, ``mag`` and ``err_r`` rounded up, entries per column."""
        q, p, k = self.k - 1, self.p, self.k
        Z, P = self.scores(beta, b)
        absV, absG = np.abs(beta.reshape(q, p)), np.abs(self.G)
        mag, err, count = np.zeros((q, p, N_LIMBS), np.int64), np.zeros((q, p, N_LIMBS), np.int64), np.zeros(p, np.int64)
        for s, e, X, scale in self.blocks():
            labels, rows, w = self.labels[s:e], np.arange(e - s), self.w[s:e, None]
            err_z = _gamma(p + k + 1) * (rowdot(rowdot(_scaled(X, scale), absV.T), absG.T) + np.abs(b))
            err_p = probability_errors(Z[s:e], P[s:e], 2.0 * err_z.max(axis=1))
            R = residuals(P[s:e], labels)
            err_r = err_p.copy()
            err_r[rows, labels] = 0.0
            err_r[rows, labels] = err_r.sum(axis=1) + _gamma(k) * np.abs(R[rows, labels])
            mag += _column_sums(X, limbs(rowdot(np.abs(R * w), absG) * scale[:, None], up=True))
            err += _column_sums(X, limbs(rowdot(err_r * w, absG) * scale[:, None], up=True))
            count += X.sum(axis=0).astype(np.int64)
        return self.g.copy(), mag, err, count


def _gram(X: np.ndarray, weights: np.ndarray, extra=None):
    """``sum_e weights_e x_e x_e'`` exactly for integer ``weights`` (below ``2**60``) and 0/1 rows, as int64
    (low, high) halves in units 1 and ``2**26``.  One float product when the weights' absolute sum is below
    ``2**53`` (every partial sum is then an exact integer), else one per 26-bit half (partial sums below
    ``2**25`` and ``2**34`` times the rows): the same integers either way.  With ``extra`` (b, r) columns whose
    products are exact too (the gradient's limbs), also ``X' extra`` (floats of integers), in the same product
    where there is one: ``(halves, X' extra or None)``."""
    p = X.shape[1]
    if float(np.abs(weights).sum()) < 2.0**53:
        if extra is None:
            total = (X.T @ (X * weights[:, None])).astype(np.int64)
        else:
            W = np.empty((X.shape[0], p + extra.shape[1]))
            np.multiply(X, weights[:, None], out=W[:, :p])
            W[:, p:] = extra
            both = X.T @ W
            total, extra = both[:, :p].astype(np.int64), both[:, p:]
        high = total >> 26
        return np.stack([total - (high << 26), high]), extra
    high = np.rint(weights / 2.0**26)
    low = (X.T @ (X * (weights - high * 2.0**26)[:, None])).astype(np.int64)
    return np.stack([low, (X.T @ (X * high[:, None])).astype(np.int64)]), (None if extra is None else X.T @ extra)


def _newton(part, beta, b):
    return part.newton(beta, b)


def _line(part, beta, b, step, t):
    return part.line(beta, b, step, t)


def _bound(part, beta, b):
    return part.bound(beta, b)


def _table_part(table, k: int, fit_intercept: bool, c: float) -> SoftmaxPart:
    """A :class:`SoftmaxPart` of a PatternTable (or a part of one), unpacked a block at a time into one reused
    float buffer (the intercept's column of 1s written once); the shrink factors are computed once."""
    d, one = table.n_features, int(bool(fit_intercept))
    ones = np.zeros(table.packed.shape[0], np.int64)  # the 1s of each row: its squared norm, exactly
    for s in range(0, ones.shape[0], BLOCK_ROWS):
        ones[s:s + BLOCK_ROWS] = _unpack_rows(table.packed[s:s + BLOCK_ROWS], d).sum(axis=1, dtype=np.int64) + one
    scale, buffer = shrink_factors(np.sqrt(ones.astype(np.float64)), c), []

    def rows(s, e):
        if not buffer or buffer[0].shape[0] < e - s:
            buffer[:] = [np.ones((e - s, d + one))]
        X = buffer[0][:e - s]
        X[:, :d] = _unpack_rows(table.packed[s:e], d)
        return X, scale[s:e]

    return SoftmaxPart(rows, np.asarray(table.labels, dtype=np.int64), np.asarray(table.counts, dtype=np.float64),
                       d + one, k)


def _unpack_rows(packed, d: int) -> np.ndarray:
    return np.unpackbits(packed, axis=1, count=d) if d else np.zeros((packed.shape[0], 0), np.uint8)


def shrink_factors(norms: np.ndarray, c: float) -> np.ndarray:
    """:func:`scaled_rows`' factor per row of float norm ``norms``: ``c (1 - 2**-30) / norm`` above that, else 1."""
    limit = c * _SHRINK
    return np.where(norms > limit, limit / np.where(norms > limit, norms, 1.0), 1.0)


class SoftmaxRows:
    """The solver's rows as parts (:class:`~dpglass.aggregates.parts.TableParts` of :class:`SoftmaxPart`): one
    part in memory, the table's parts on a Dask cluster; ``p`` the row length, ``k`` the number of classes.  What
    :func:`minimise` asks is summed over the parts exactly (:func:`~dpglass.aggregates.parts.exact_sum`)."""

    def __init__(self, parts, p: int, k: int):
        self.parts, self.p, self.k = parts, int(p), int(k)

    @classmethod
    def dense(cls, A, labels, w, n_classes: int) -> SoftmaxRows:
        """Rows ``A`` of the form ``s x`` (0/1 ``x``, one factor ``s`` a row: :func:`scaled_rows`' output)."""
        A = np.asarray(A, dtype=np.float64)
        X = (A != 0).astype(np.float64)
        scale = np.abs(A).max(axis=1) if A.shape[1] else np.ones(A.shape[0])
        if not np.array_equal(X * scale[:, None], A):
            raise InvalidParameterError("SoftmaxRows.dense takes rows s*x (x 0/1, one factor s >= 0 a row).")
        part = SoftmaxPart(lambda s, e: (X[s:e], scale[s:e]), np.asarray(labels, dtype=np.int64),
                           np.asarray(w, dtype=np.float64), A.shape[1], int(n_classes))
        return cls(TableParts([part]), A.shape[1], n_classes)

    @classmethod
    def from_table(cls, table, n_classes: int, fit_intercept: bool, c: float) -> SoftmaxRows:
        """The :func:`scaled_rows` of a table's distinct rows: a PatternTable, or a DistributedTable's parts."""
        parts = table_parts(table).map(_table_part, int(n_classes), bool(fit_intercept), float(c))
        return cls(parts, table.n_features + int(bool(fit_intercept)), n_classes)

    @property
    def n_params(self) -> int:
        return (self.k - 1) * self.p

    @property
    def basis(self) -> np.ndarray:
        return centred_basis(self.k)

    def offsets(self, offset) -> np.ndarray:
        """The K score offsets: K numbers, or (two classes) one number ``o``, the binary margin's offset: (0, o)."""
        b = np.asarray(offset, dtype=np.float64)
        if b.ndim == 0 and self.k == 2:
            return np.array([0.0, float(b)])
        return np.array(np.broadcast_to(b, (self.k,)))

    # ------------------------------------------------------------ what minimise asks
    def newton_pass(self, beta, mu, offset):
        """At ``beta``: ``(gradient, Hessian, F)``, in ``beta``'s order (the scores stay with the parts, keyed by
        ``beta``).  The gradient's and F's sums are exact sums of per-entry floats
        quantised at ``2**-80``, the Hessian ``sum_e w_e M_e (x) a_e a_e'`` (``M_e = G'(diag p_e - p_e p_e')G``)
        exact at ``2**-30`` per entry's weight."""
        g, H, loss = self.parts.sum(_newton, np.asarray(beta, dtype=np.float64), self.offsets(offset))
        carry = H[0] >> 26  # one representation of each integer (low half in [0, 2**26)), then one rounding
        low, high = H[0] - (carry << 26), H[1] + carry
        Hf = low.astype(np.float64) * 2.0**-HESSIAN_BITS + high.astype(np.float64) * 2.0**(26 - HESSIAN_BITS)
        Hf[np.diag_indices_from(Hf)] += mu
        value = float(limb_floats(loss)) + 0.5 * mu * float(beta @ beta)
        return mu * beta + limb_floats(g).reshape(-1), Hf, value

    def value_along(self, beta, step, t, mu, offset) -> float:
        """``F(beta - t step)``, the scores moved along the step on the parts."""
        loss = self.parts.sum(_line, np.asarray(beta, dtype=np.float64), self.offsets(offset), step, float(t))
        at = beta - t * step
        return float(limb_floats(loss)) + 0.5 * mu * float(at @ at)

    def certified_bound(self, beta, mu=0.0, offset=0.0) -> float:
        """A rigorous upper bound on ``||grad F(beta)||`` from its own float evaluation (docs/privacy.md,
        "DP logistic regression", "The certificate"; the scores and probabilities at ``beta`` are the parts').

        The gradient is ``mu beta + sum_e w_e G'(p_e - e_y) a_e``; per row, :func:`probability_errors` bounds
        ``|p^_k - p_k|`` relative to ``p_k`` and the label's entry ``-(sum of the others)`` is within the others'
        errors plus ``gamma_{K-1}`` of itself (:func:`residuals`).  The terms ``fl(fl(fl(w r) G) s) x`` are within
        ``gamma_{K+3}``, quantised at ``2**-80`` (within ``2**-81`` each: the entries of a column times
        ``2**-81``), summed exactly and rounded once (``u |v|``).  Inflated by 1% at the end."""
        beta = np.asarray(beta, dtype=np.float64)
        g_l, mag_l, err_l, count = self.parts.sum(_bound, beta, self.offsets(offset))
        v = limb_floats(g_l).reshape(-1)
        mag, err_r = limb_floats(mag_l, up=True).reshape(-1), limb_floats(err_l, up=True).reshape(-1)
        grid = np.tile(count.astype(np.float64), self.k - 1) * 2.0**-(QUANTUM_BITS + 1) + _U * np.abs(v)
        g = mu * beta + v
        err = _gamma(self.k + 3) * mag + err_r + grid + 2.0 * _U * (mu * np.abs(beta) + np.abs(g))
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
    The line search moves the scores along the step on the parts (one pass
    over the rows per step, then only the loss per halving); where the Newton decrement is below ``F``'s float resolution
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
        g, H, value = state
        gnorm = float(np.linalg.norm(g))
        if gnorm <= 0.5 * tol and rows.certified_bound(beta, mu, offset) <= tol:
            return beta
        step = np.linalg.solve(H, g)  # H is symmetric positive definite (>= mu I)
        decrement = float(g @ step)
        if decrement <= _FLAT * (abs(value) + 1.0):
            full = beta - step
            at_full = rows.newton_pass(full, mu, offset)  # also the next iteration's pass if the step is taken
            if float(np.linalg.norm(at_full[0])) < gnorm:
                beta, state = full, at_full
                continue
        t = 1.0
        while rows.value_along(beta, step, t, mu, offset) > value - 0.25 * t * decrement:
            t *= 0.5
            if t < 1e-12:  # no float decrease left: certify the best point found, or give up
                if rows.certified_bound(beta, mu, offset) <= tol:
                    return beta
                raise SolverNotCertifiedError(_NOT_CERTIFIED)
        beta = beta - t * step
        state = rows.newton_pass(beta, mu, offset)
    raise SolverNotCertifiedError(_NOT_CERTIFIED)


_NOT_CERTIFIED = ("The Newton solver did not reach a certified gradient norm <= tol; nothing was released. This "
                  "happens only on very large tables (from about 3e10 records, for two classes or K, when many "
                  "labels are not fitted: the float64 sums' rounding then exceeds tol; docs/privacy.md, \"DP "
                  "logistic regression\"). Use a larger tol (the sensitivity grows only by 2*tol/alpha).")
