"""DP-LR's solver: the faster per-entry code gives the same floats as the plain formulas (issue 30, session 36).

The solver's path -- and so the released file -- is a function of per-entry floats (scores row by row, the
softmax, the residuals, the quantised limbs) and of exact integer sums.  The fast paths (two classes by columns,
``rowdot`` skipping zero terms, ``limbs`` in place, shrink factors from counts of 1s, one pass per beta with its
results kept) must give those floats bit for bit; each is checked here against the plain formula it replaces.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpglass.aggregates import pattern_table
from dpglass.models.logistic import solver as S


def _bits(a: np.ndarray) -> np.ndarray:
    return (np.asarray(a, dtype=np.float64) + 0.0).view(np.int64)  # +0.0: -0 and +0 are the same number


def _plain_softmax(Z):
    top = Z.max(axis=1)
    E = np.exp(Z - top[:, None])
    rows = np.arange(Z.shape[0])
    E[rows, Z.argmax(axis=1)] = 0.0
    rest = E.sum(axis=1)
    E[rows, Z.argmax(axis=1)] = 1.0
    return E / (1.0 + rest)[:, None], top + np.log1p(rest)


def _plain_residuals(P, labels):
    R = P.copy()
    rows = np.arange(P.shape[0])
    R[rows, labels] = 0.0
    R[rows, labels] = -R.sum(axis=1)
    return R


def _plain_limbs(v, up=False):
    q = np.ceil(v * 2.0**S.QUANTUM_BITS) if up else np.rint(v * 2.0**S.QUANTUM_BITS)
    out = []
    for _ in range(S.N_LIMBS - 1):
        low = q - 2.0**S.LIMB_BITS * np.rint(q / 2.0**S.LIMB_BITS)
        out.append(low)
        q = (q - low) / 2.0**S.LIMB_BITS
    out.append(q)
    return np.stack(out, axis=-1)


def _scores(rng, n):
    Z = rng.standard_normal((n, 2)) * 10.0 ** rng.integers(-3, 3, (n, 1))
    Z[::5, 1] = Z[::5, 0]  # ties: the first class is the top one
    Z[::7] = 0.0
    Z[::11, 0] = -0.0
    Z[::13] *= 400.0  # margins where exp underflows
    return Z


def test_two_class_softmax_and_residuals_are_the_plain_formulas():
    rng = np.random.default_rng(0)
    Z = _scores(rng, 5000)
    P, lse = S.softmax_scores(Z)
    P0, lse0 = _plain_softmax(Z)
    assert np.array_equal(_bits(P), _bits(P0)) and np.array_equal(_bits(lse), _bits(lse0))
    assert S.softmax_scores(Z, probabilities=False)[0] is None
    assert np.array_equal(_bits(S.softmax_scores(Z, probabilities=False)[1]), _bits(lse0))
    labels = rng.integers(0, 2, Z.shape[0])
    assert np.array_equal(_bits(S.residuals(P, labels)), _bits(_plain_residuals(P0, labels)))
    assert np.array_equal(_bits(S._row_sums(P)), _bits(P0.sum(axis=1)))


@pytest.mark.parametrize("q", [1, 2, 4])
def test_rowdot_is_the_row_by_row_sum_in_column_order(q):
    """Each row's result is ``((0 + a_0 b_0) + a_1 b_1) + ...``, computed here one row at a time; zero terms of
    ``B`` (skipped) and zero rows give the same floats."""
    rng = np.random.default_rng(q)
    A = (rng.random((300, 9)) < 0.5) * np.where(rng.random((300, 1)) < 0.3, rng.random((300, 1)), 1.0)
    A[:7] = 0.0
    B = rng.standard_normal((9, q)) * 10.0 ** rng.integers(-8, 8, (9, q))
    B[2] = 0.0
    B[5, 0] = -0.0
    expected = np.zeros((300, q))
    for e in range(300):
        for i in range(q):
            total = 0.0
            for j in range(9):
                total = total + A[e, j] * B[j, i]
            expected[e, i] = total
    assert np.array_equal(_bits(S.rowdot(A, B)), _bits(expected))


@pytest.mark.parametrize("up", [False, True])
def test_limbs_are_the_plain_limbs(up):
    rng = np.random.default_rng(3)
    v = rng.standard_normal((4000, 2)) * 10.0 ** rng.integers(-26, 9, (4000, 2))
    v[::9] = 0.0
    v[::4] *= -1.0
    fast, plain = S.limbs(v, up), _plain_limbs(v, up)
    assert np.array_equal(fast, plain)  # equal numbers (a limb may be -0 where the plain one is +0)
    assert np.array_equal(fast.sum(axis=0), plain.sum(axis=0))


@pytest.mark.parametrize("data_norm", [None, 2.0])
def test_a_table_parts_rows_are_scaled_rows(data_norm):
    """The table part's blocks (0/1 rows into a reused buffer, shrink factors from counts of 1s) are
    :func:`scaled_rows` of the unpacked table, bit for bit, also where rows are shrunk."""
    rng = np.random.default_rng(4)
    X = (rng.random((2000, 11)) < 0.5).astype(np.uint8)
    X[:5] = 1
    table = pattern_table(X, (rng.random(2000) < 0.4).astype(np.uint8))
    c = float(np.sqrt(12.0)) if data_norm is None else data_norm
    part = S._table_part(table, 2, True, c)
    A = S.scaled_rows(table.unpack(), True, c)
    got = np.concatenate([X_block * scale[:, None] for _, _, X_block, scale in part.blocks()])
    assert np.array_equal(_bits(got), _bits(A))
    shrunk = np.any((A != 0) & (A != 1), axis=1)
    full = np.all(table.unpack() == 1, axis=1)
    assert full.any() and (np.array_equal(shrunk, full) if data_norm is None else shrunk.sum() > 100)


@pytest.mark.parametrize("K", [2, 3])
def test_a_parts_answers_do_not_depend_on_what_was_asked_before(K):
    """The pass at a beta is kept (scores, gradient) and the Hessian taken in it: a fresh part asked for the line
    value, the bound or the Newton sums in any order gives the same integers as one asked in the solver's order."""
    rng = np.random.default_rng(K)
    X = (rng.random((3000, 6)) < 0.4).astype(np.uint8)
    table = pattern_table(X, rng.integers(0, K, 3000).astype(np.uint8))
    c = float(np.sqrt(7.0))
    beta, step = rng.normal(0, 0.5, (K - 1) * 7), rng.normal(0, 0.1, (K - 1) * 7)
    b = np.zeros(K)

    def answers(order):
        part, out = S._table_part(table, K, True, c), {}
        for name in order:
            if name == "newton":
                out[name] = part.newton(beta, b)
            elif name == "line":
                out[name] = part.line(beta, b, step, 0.5)
            else:
                out[name] = part.bound(beta, b)
        return out

    first = answers(["newton", "line", "bound"])
    for order in (["bound", "line", "newton"], ["line", "newton", "bound"]):
        other = answers(order)
        for name in first:
            for x, y in zip(np.atleast_1d(first[name]) if name == "line" else first[name],
                            np.atleast_1d(other[name]) if name == "line" else other[name]):
                assert np.array_equal(x, y), (name, order)


@pytest.mark.parametrize("up", [False, True])
def test_limb_floats_are_the_plain_integer_quotient(up):
    """The Horner sum of the limbs is the integer the plain sum of shifted limbs makes, divided once."""
    rng = np.random.default_rng(5)
    v = rng.standard_normal((300, 4)) * 10.0 ** rng.integers(-22, 12, (300, 4))
    sums = np.concatenate([S.limbs(v).astype(np.int64).sum(axis=0), rng.integers(-2**40, 2**40, (50, S.N_LIMBS))])
    plain = np.array([sum(int(x) << (S.LIMB_BITS * i) for i, x in enumerate(row)) / (1 << S.QUANTUM_BITS)
                      for row in sums])
    if up:
        plain = np.nextafter(plain, np.inf)
    assert np.array_equal(_bits(S.limb_floats(sums, up)), _bits(plain))
    assert S.limb_floats(sums[0], up).shape == () and S.limb_floats(sums[:0], up).shape == (0,)
