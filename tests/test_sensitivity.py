"""Tests for dpglass.privacy.sensitivity against brute force.

The brute-force helpers live here (only the tests need them):

* :func:`_gini_eq12` is the weighted Gini impurity written literally as eqs.
  (1)-(2) of paper 001, independent of the library's closed form;
* :func:`_enumerated_local_sensitivity` enumerates every split ``(a, b, c, d)``
  of ``n`` records and every single-record addition and removal;
* :func:`_brute_smooth` is ``max_{k=0..n} exp(-k beta) T_k(n)``, vectorised
  over ``k``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.sensitivity import (
    GINI_GLOBAL_SENSITIVITY,
    gini_local_sensitivity,
    gini_smooth_sensitivity,
    weighted_gini,
)

N_ENUM = 40
BETA_1 = 3.0 - 2.0 * math.sqrt(2.0)  # below it Q has two positive roots


# --------------------------------------------------------------------------
# brute-force helpers


def _gini_eq12(a, b, c, d):
    """Eqs. (1)-(2) of paper 001: (n_c/n) gini(y_c) + (n_l/n) gini(y_l)."""
    a, b, c, d = (np.asarray(v, dtype=np.float64) for v in (a, b, c, d))
    n_c, n_l = a + b, c + d
    n = n_c + n_l
    with np.errstate(divide="ignore", invalid="ignore"):
        y_c = np.where(n_c > 0, a / n_c, 0.0)
        y_l = np.where(n_l > 0, c / n_l, 0.0)
        g_c = np.where(n > 0, n_c / n, 0.0) * (1 - y_c**2 - (1 - y_c) ** 2)
        g_l = np.where(n > 0, n_l / n, 0.0) * (1 - y_l**2 - (1 - y_l) ** 2)
    return g_c + g_l


def _all_splits(n):
    """All count tuples (a, b, c, d) with a + b + c + d = n, as a (m, 4) array."""
    rows = [
        (a, b, c, n - a - b - c)
        for a in range(n + 1)
        for b in range(n + 1 - a)
        for c in range(n + 1 - a - b)
    ]
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


@lru_cache(maxsize=None)
def _enumerated_local_sensitivity(n):
    """Largest |G(D) - G(D')| over splits of n records and single-record changes.

    Returns (overall max, max over additions, max over removals, the set of
    (tuple, "+"/"-", index) attaining the overall max up to 1e-12).
    """
    t = _all_splits(n)
    g0 = _gini_eq12(*t.T)
    add_best = rem_best = 0.0
    diffs = []
    for i in range(4):
        e = np.zeros(4, dtype=np.int64)
        e[i] = 1
        up = np.abs(_gini_eq12(*(t + e).T) - g0)
        can = t[:, i] > 0
        down = np.where(can, np.abs(_gini_eq12(*np.maximum(t - e, 0).T) - g0), -1.0)
        add_best = max(add_best, float(up.max()))
        rem_best = max(rem_best, float(down.max()))
        diffs.append((i, up, down))
    best = max(add_best, rem_best)
    argmax = set()
    for i, up, down in diffs:
        for sign, arr in (("+", up), ("-", down)):
            for j in np.flatnonzero(arr >= best - 1e-12):
                argmax.add((tuple(int(v) for v in t[j]), sign, i))
    return best, add_best, rem_best, frozenset(argmax)


def _g_printed(x):
    """g as printed in paper 001: 1 - (x/(x+1))^2 - (1/(x+1))^2 (cancels for large x)."""
    x = np.asarray(x, dtype=np.float64)
    return 1 - (x / (x + 1)) ** 2 - (1 / (x + 1)) ** 2


def _g(x):
    """The same function as 2x/(x+1)^2 (see test_g_identity), accurate for large x."""
    x = np.asarray(x, dtype=np.float64)
    return 2 * x / (x + 1) ** 2


def _local_formula(m, variant):
    """Test-side local sensitivity: corrected g(m-1) (0.5 for m <= 1), paper g(m)."""
    m = np.asarray(m, dtype=np.float64)
    if variant == "corrected":
        return np.where(m <= 1, 0.5, _g(np.where(m <= 1, 2.0, m) - 1))
    return _g(m)


def _brute_smooth(n, beta, lam, variant):
    """max_{k = 0..n} exp(-k beta) T_k(n), T_k(n) = L(max(lam, n - k))."""
    k = np.arange(n + 1, dtype=np.float64)
    m = np.maximum(lam, n - k)
    return float(np.max(np.exp(-k * beta) * _local_formula(m, variant)))


def _paper_theorem_iv1(n, beta, lam):
    """Theorem IV.1 exactly as printed: max of xi at 0, floor t, ceil t, n - lam."""

    def xi(k):
        return math.exp(-k * beta) * float(_g(max(lam, n - k)))

    disc = (1 - beta) ** 2 - 4 * beta
    t = n - (1 - beta - math.sqrt(disc)) / (2 * beta) if disc >= 0 else 0.0
    ks = [0, math.floor(t), math.ceil(t), n - lam]
    return max(xi(k) for k in ks if k >= 0)


# --------------------------------------------------------------------------
# weighted Gini impurity


def test_weighted_gini_matches_eqs_1_2_and_readme_example():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 30, size=(4, 5000))
    counts[:, :50] = 0  # include empty sides and n = 0
    counts[2:, 50:100] = 0
    np.testing.assert_allclose(weighted_gini(*counts), _gini_eq12(*counts), rtol=0, atol=1e-15)
    assert weighted_gini(0, 0, 0, 0) == 0.0
    assert math.isclose(weighted_gini(0, 0, 1, 9), 0.18, rel_tol=1e-15)
    assert weighted_gini(0, 0, 0, 9) == 0.0
    assert weighted_gini(1, 1, 0, 0) == GINI_GLOBAL_SENSITIVITY


def test_weighted_gini_broadcasts_and_types():
    out = weighted_gini(np.arange(3)[:, None], np.arange(4), 1, 2)
    assert out.shape == (3, 4) and out.dtype == np.float64
    assert isinstance(weighted_gini(1, 2, 3, 4), float)
    assert isinstance(weighted_gini([1], 2, 3, 4), np.ndarray)
    assert weighted_gini(np.int64(1), 1.0, 0, 0) == 0.5  # real weights accepted


@pytest.mark.parametrize("bad", [-1, -0.5, math.nan, math.inf, "3", True, [1, -1]])
def test_weighted_gini_rejects_bad_counts(bad):
    with pytest.raises(InvalidParameterError, match="The 'left_neg' parameter of weighted_gini must be"):
        weighted_gini(1, 1, 1, bad)


# --------------------------------------------------------------------------
# local sensitivity


@pytest.mark.parametrize("n", range(N_ENUM + 1))
def test_local_sensitivity_equals_enumeration(n):
    best, add_best, rem_best, _ = _enumerated_local_sensitivity(n)
    if n == 0:
        assert best == 0.0  # exact value; the library returns 0.5 conservatively
        assert gini_local_sensitivity(0) == 0.5
        return
    assert abs(gini_local_sensitivity(n) - best) <= 1e-12
    # the paper's g(n) is exactly the worst *addition*, tight
    assert abs(gini_local_sensitivity(n, variant="paper") - add_best) <= 1e-12
    if n >= 2:
        # ... the worst case is a removal, and the paper's value is too small
        assert abs(rem_best - best) <= 1e-12
        assert add_best < best - 1e-6
        assert gini_local_sensitivity(n, variant="paper") < gini_local_sensitivity(n) - 1e-6


def test_local_sensitivity_worst_cases():
    # n = 1: attained by additions only (removal leaves the empty dataset, G = 0).
    _, add_best, rem_best, argmax = _enumerated_local_sensitivity(1)
    assert rem_best == 0.0 and add_best == 0.5
    assert all(sign == "+" for _, sign, _ in argmax)
    # n >= 3: attained only by removing the single minority record of a side
    # that holds every record (the other side empty): four tuples in all.
    for n in range(3, N_ENUM + 1):
        *_, argmax = _enumerated_local_sensitivity(n)
        assert argmax == {
            ((1, n - 1, 0, 0), "-", 0),
            ((n - 1, 1, 0, 0), "-", 1),
            ((0, 0, 1, n - 1), "-", 2),
            ((0, 0, n - 1, 1), "-", 3),
        }


def test_readme_counterexample():
    before, after = weighted_gini(0, 0, 1, 9), weighted_gini(0, 0, 0, 9)
    assert math.isclose(before - after, 0.18)
    assert gini_local_sensitivity(10, variant="paper") < before - after
    assert math.isclose(gini_local_sensitivity(10), before - after)


def test_g_identity():
    x = np.concatenate([np.arange(0, 1000), np.geomspace(1e3, 1e9, 200)])
    np.testing.assert_allclose(_g(x), _g_printed(x), rtol=0, atol=1e-15)


def test_local_sensitivity_formula_and_monotone():
    n = np.arange(0, 10_000)
    np.testing.assert_allclose(gini_local_sensitivity(n), _local_formula(n, "corrected"), rtol=1e-14)
    np.testing.assert_allclose(gini_local_sensitivity(n, "paper"), _local_formula(n, "paper"), rtol=1e-14)
    np.testing.assert_allclose(gini_local_sensitivity(n[2:]), 2 * (n[2:] - 1) / n[2:] ** 2, rtol=1e-14)
    assert np.all(np.diff(gini_local_sensitivity(n)) <= 0)
    assert gini_local_sensitivity(n).max() == GINI_GLOBAL_SENSITIVITY
    assert isinstance(gini_local_sensitivity(5), float)
    assert gini_local_sensitivity(10**9) == pytest.approx(2e-9, rel=1e-8)


# --------------------------------------------------------------------------
# smooth sensitivity: closed form against brute force


def test_smooth_from_definition_small_n():
    """S*(n) = max over sizes m >= lam of L(m) exp(-beta |n - m|), L enumerated."""
    table = np.array([_enumerated_local_sensitivity(m)[0] for m in range(N_ENUM + 1)])
    table[0] = 0.5  # the library's conservative value at m = 0
    m = np.arange(N_ENUM + 1)
    for beta in (1e-3, 0.05, 0.1, BETA_1, 0.3, 1.0, 4.0):
        for lam in (1, 2, 3, 7):
            for n in range(lam, 21):
                # sizes above N_ENUM have a smaller L (monotone) and a larger distance
                ok = m >= lam
                expected = np.max(table[ok] * np.exp(-beta * np.abs(n - m[ok])))
                got = gini_smooth_sensitivity(n, beta, min_support=lam)
                assert abs(got - expected) <= 1e-12 * expected, (n, beta, lam)


@pytest.mark.parametrize("variant", ["corrected", "paper"])
def test_closed_form_equals_brute_force_grid(variant):
    """Every n <= 400 on a grid of beta (incl. near 3 - 2 sqrt 2 and 1) and lam."""
    n_max = 400
    betas = np.concatenate(
        [np.geomspace(1e-6, 2.0, 45), [BETA_1 * (1 - 1e-12), BETA_1, BETA_1 * (1 + 1e-12), 1.0, 6.0, 50.0]]
    )
    k = np.arange(n_max + 1, dtype=np.float64)[:, None]
    ns = np.arange(n_max + 1)
    for lam in (1, 2, 3, 5, 17, 100, 500):
        m = np.maximum(lam, ns[None, :] - k)
        loc = _local_formula(m, variant)
        valid = k <= ns[None, :]
        for beta in betas:
            brute = np.max(np.where(valid, np.exp(-k * beta) * loc, 0.0), axis=0)
            got = gini_smooth_sensitivity(ns, beta, min_support=lam, variant=variant)
            np.testing.assert_allclose(got, brute, rtol=1e-12, atol=0, err_msg=f"{beta=} {lam=}")


@pytest.mark.parametrize("variant", ["corrected", "paper"])
def test_closed_form_equals_brute_force_random(variant):
    """3000 random (n, beta, lam): n log-uniform to 1e5, beta log-uniform in [1e-6, 1]."""
    rng = np.random.default_rng(20241101 + (variant == "paper"))
    count = 3000
    n = np.floor(np.exp(rng.uniform(0, math.log(1e5 + 1), count))).astype(np.int64) - 1
    n[:300] = rng.integers(5e4, 1e5 + 1, 300)  # some at full size
    beta = np.exp(rng.uniform(math.log(1e-6), 0.0, count))
    beta[:20] = 1e-6
    lam_kind = rng.integers(0, 3, count)
    lam = np.where(
        lam_kind == 0, 1, np.where(lam_kind == 1, rng.integers(1, 10, count), 1 + (rng.uniform(0, 1.2, count) * n).astype(np.int64))
    )
    for ni, bi, li in zip(n.tolist(), beta.tolist(), lam.tolist()):
        expected = _brute_smooth(ni, bi, li, variant)
        got = gini_smooth_sensitivity(ni, bi, min_support=li, variant=variant)
        assert abs(got - expected) <= 1e-12 * expected, (ni, bi, li)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(0, 10**5),
    log_beta=st.floats(math.log(1e-7), math.log(5.0)),
    lam=st.integers(1, 200),
    variant=st.sampled_from(["corrected", "paper"]),
)
def test_closed_form_equals_brute_force_hypothesis(n, log_beta, lam, variant):
    beta = math.exp(log_beta)
    expected = _brute_smooth(n, beta, lam, variant)
    got = gini_smooth_sensitivity(n, beta, min_support=lam, variant=variant)
    assert abs(got - expected) <= 1e-12 * expected


@pytest.mark.parametrize("beta", [0.01, 0.05, 0.1, 0.15])
def test_paper_variant_is_theorem_iv1_as_printed(beta):
    """Reproduction: variant="paper" equals Theorem IV.1's formula (n >= 3)."""
    for lam in (1, 2, 5, 30):
        for n in range(max(3, lam), 600, 7):
            got = gini_smooth_sensitivity(n, beta, min_support=lam, variant="paper")
            assert abs(got - _paper_theorem_iv1(n, beta, lam)) <= 1e-12 * got


def test_large_n_and_tiny_beta():
    # x = n - 1 < y1 ~ 1/beta: xi increases all the way to y = 1 (k = n - 2)
    n = 10**9
    for beta in (1e-12, 1e-15, 1e-300):
        expected = 0.5 * math.exp(-(n - 2) * beta)
        assert gini_smooth_sensitivity(n, beta) == pytest.approx(expected, rel=1e-12)
        assert gini_smooth_sensitivity(n, beta, variant="paper") == pytest.approx(
            0.5 * math.exp(-(n - 1) * beta), rel=1e-12
        )
    # brute force at n = 2e6, beta = 1e-6 (x ~ 2 y1)
    n = 2_000_000
    for beta in (1e-6, 3e-6, 1e-5):
        for variant in ("corrected", "paper"):
            expected = _brute_smooth(n, beta, 1, variant)
            assert gini_smooth_sensitivity(n, beta, variant=variant) == pytest.approx(expected, rel=1e-12)
    out = gini_smooth_sensitivity(np.array([0, 1, 10**6, 10**9, 2**53 - 1], dtype=np.uint64), 1e-9)
    assert np.all(np.isfinite(out)) and np.all(out > 0) and np.all(out <= 0.5)
    assert gini_smooth_sensitivity(10**9, 1e9) == gini_local_sensitivity(10**9)
    assert gini_smooth_sensitivity(10**30, 0.1) == pytest.approx(2e-30, rel=1e-12)  # Python int


# --------------------------------------------------------------------------
# smooth sensitivity: properties


def _sweep():
    rng = np.random.default_rng(7)
    betas = np.concatenate([np.geomspace(1e-6, 1.0, 25), [BETA_1, 2.0, 10.0]])
    ns = np.unique(np.concatenate([np.arange(0, 300), rng.integers(0, 10**6, 300)]))
    return betas, ns


@pytest.mark.parametrize("lam", [1, 2, 5, 60])
def test_upper_bound_and_beta_smooth(lam):
    betas, ns = _sweep()
    for beta in betas:
        s = gini_smooth_sensitivity(ns, beta, min_support=lam)
        dom = ns >= lam
        assert np.all(s[dom] >= gini_local_sensitivity(ns[dom]))
        assert np.all(s <= GINI_GLOBAL_SENSITIVITY)
        # beta-smooth for every n >= lam + 1 (in fact for every n: constant below lam)
        for n_ in (ns, ns[ns >= lam + 1]):
            here = gini_smooth_sensitivity(n_, beta, min_support=lam)
            for step in (-1, 1):
                other = gini_smooth_sensitivity(np.maximum(n_ + step, 0), beta, min_support=lam)
                assert np.all(here <= math.exp(beta) * other * (1 + 1e-12))
        # below the domain: the value at n = lam
        below = ns[ns < lam]
        if below.size:
            assert np.all(gini_smooth_sensitivity(below, beta, min_support=lam) == gini_smooth_sensitivity(lam, beta, min_support=lam))
        # Lambda = 1 and 2 coincide for the corrected variant (L(1) = L(2) = 0.5)
    np.testing.assert_array_equal(
        gini_smooth_sensitivity(ns, 0.01, min_support=1), gini_smooth_sensitivity(ns, 0.01, min_support=2)
    )


@pytest.mark.parametrize("variant", ["corrected", "paper"])
def test_monotone_in_beta_and_lambda(variant):
    betas, ns = _sweep()
    prev = None
    for beta in np.sort(betas):
        s = gini_smooth_sensitivity(ns, beta, variant=variant)
        if prev is not None:
            assert np.all(s <= prev * (1 + 1e-12))
        prev = s
    # a larger minimum support can only lower the bound (fewer datasets)
    s1 = gini_smooth_sensitivity(ns, 0.01, min_support=1, variant=variant)
    s9 = gini_smooth_sensitivity(ns, 0.01, min_support=9, variant=variant)
    assert np.all(s9[ns >= 9] <= s1[ns >= 9])


def test_equals_local_sensitivity_when_n_large_compared_with_one_over_beta():
    """Documented sufficient condition: x = n-1, beta x >= 2 and beta x >= 2 log((x+1)^2/(4x))."""
    for beta in np.geomspace(1e-5, 1.0, 30):
        x = np.unique(np.geomspace(1, 1e8, 400).astype(np.int64))
        cond = (beta * x >= 2) & (beta * x >= 2 * np.log((x + 1.0) ** 2 / (4.0 * x)))
        n = x[cond] + 1
        np.testing.assert_array_equal(gini_smooth_sensitivity(n, beta), gini_local_sensitivity(n))
    # ... and it is not true for n ~ 1/beta
    assert gini_smooth_sensitivity(100, 0.01) > gini_local_sensitivity(100) * 1.5


def test_paper_variant_is_not_an_upper_bound():
    n = np.arange(2, 5000)
    s = gini_smooth_sensitivity(n, 0.05, variant="paper")
    assert np.any(s < gini_local_sensitivity(n))  # for n >> 1/beta it is g(n) < g(n-1)
    assert gini_smooth_sensitivity(4000, 0.05, variant="paper") == gini_local_sensitivity(4000, variant="paper")


# --------------------------------------------------------------------------
# vectorisation, types, validation


def test_vectorised_equals_scalar_calls():
    rng = np.random.default_rng(3)
    ns = rng.integers(0, 10**6, 200)
    ns[:10] = np.arange(10)
    betas = np.exp(rng.uniform(math.log(1e-6), math.log(3.0), 200))
    for variant in ("corrected", "paper"):
        for lam in (1, 4):
            vec = gini_smooth_sensitivity(ns, betas, min_support=lam, variant=variant)
            assert vec.shape == (200,) and vec.dtype == np.float64
            scal = [gini_smooth_sensitivity(int(n), float(b), min_support=lam, variant=variant) for n, b in zip(ns, betas)]
            assert all(isinstance(v, float) for v in scal)
            np.testing.assert_array_equal(vec, scal)
            # scalar beta broadcast, 2-D shapes kept, lists accepted
            grid = gini_smooth_sensitivity(ns.reshape(20, 10), 0.1, min_support=lam, variant=variant)
            np.testing.assert_array_equal(grid.ravel(), [gini_smooth_sensitivity(int(n), 0.1, lam, variant) for n in ns])
    assert gini_smooth_sensitivity(ns[:, None], betas[None, :5]).shape == (200, 5)
    assert isinstance(gini_smooth_sensitivity([3, 4], 0.1), np.ndarray)
    assert isinstance(gini_smooth_sensitivity(np.int32(7), np.float32(0.1)), float)
    assert gini_smooth_sensitivity(np.array([], dtype=int), 0.1).shape == (0,)
    np.testing.assert_array_equal(gini_local_sensitivity(ns), [gini_local_sensitivity(int(n)) for n in ns])


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n": -1}, "n"),
        ({"n": 2.0}, "n"),
        ({"n": True}, "n"),
        ({"n": [3, -1]}, "n"),
        ({"n": np.array([1.0, 2.0])}, "n"),
        ({"n": "10"}, "n"),
        ({"beta": 0.0}, "beta"),
        ({"beta": -0.1}, "beta"),
        ({"beta": math.inf}, "beta"),
        ({"beta": math.nan}, "beta"),
        ({"beta": True}, "beta"),
        ({"beta": [0.1, 0.0]}, "beta"),
        ({"min_support": 0}, "min_support"),
        ({"min_support": 2.0}, "min_support"),
        ({"variant": "Paper"}, "variant"),
    ],
)
def test_smooth_sensitivity_validation(kwargs, name):
    params = {"n": 10, "beta": 0.1, "min_support": 1, "variant": "corrected", **kwargs}
    with pytest.raises(InvalidParameterError, match=rf"^The '{name}' parameter of gini_smooth_sensitivity must be .* Got .* instead\.$"):
        gini_smooth_sensitivity(**params)


def test_local_sensitivity_validation():
    with pytest.raises(InvalidParameterError, match="The 'n' parameter of gini_local_sensitivity must be an int in the range"):
        gini_local_sensitivity(-3)
    with pytest.raises(InvalidParameterError, match="The 'variant' parameter of gini_local_sensitivity must be one of 'corrected', 'paper'"):
        gini_local_sensitivity(3, variant="add-only")
