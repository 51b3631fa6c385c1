"""Exact samplers (dpglass.privacy.samplers) and the floating-point attack (dpglass.audit.floating_point).

The law tests compare large seeded samples with the *exact* pmf of the grid
parameters (chi-square or binomial z-test at a strict threshold); the seeds make
them deterministic.  Rare branches (CKS continuing past its first block) are
forced with a rigged generator and their conditional law is tested too.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpglass.audit.floating_point import (
    float_attack_exclusion_rate,
    integer_or_grid_valued,
    numpy_laplace_from_draws,
    numpy_laplace_preimages,
)
from dpglass.exceptions import InvalidParameterError
from dpglass.privacy import samplers as S
from dpglass.privacy.samplers import (
    GAMMA_CAP,
    GRID,
    bernoulli_exp,
    discrete_laplace,
    discrete_laplace_decay,
    exponential_mechanism,
    permute_and_flip,
    selection_gaps_to_grid,
    to_grid,
)

P_MIN = 1e-6  # chi-square p-value threshold (fixed seeds: deterministic)
Z_MAX = 5.0  # binomial z-test threshold


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------


def chisq_pvalue(samples, support, probs, min_expected=10.0):
    """Chi-square goodness of fit of integer ``samples`` to ``probs`` on ``support``.

    Cells with a small expected count are pooled (together with everything
    outside ``support``) into one "rest" cell.
    """
    samples = np.asarray(samples)
    n = samples.size
    support = np.asarray(support)
    probs = np.asarray(probs, dtype=float)
    counts = np.array([(samples == v).sum() for v in support])
    expected = n * probs
    keep = expected >= min_expected
    obs = list(counts[keep])
    exp = list(expected[keep])
    rest_obs = n - counts[keep].sum()
    rest_exp = n - expected[keep].sum()
    if rest_exp >= min_expected:
        obs.append(rest_obs)
        exp.append(rest_exp)
    else:
        assert rest_obs <= max(5, 20 * rest_exp), (rest_obs, rest_exp)
        exp[-1] += rest_exp
        obs[-1] += rest_obs
    obs = np.array(obs, dtype=float)
    exp = np.array(exp)
    stat = ((obs - exp) ** 2 / exp).sum()
    return stats.chi2.sf(stat, df=len(obs) - 1)


def binomial_z(successes, n, p):
    return (successes - n * p) / math.sqrt(n * p * (1 - p))


def dlap_pmf(kg, z):
    g = kg / GRID
    return math.tanh(g / 2) * np.exp(-g * np.abs(z))


def pf_law(k):
    """Exact permute-and-flip law for acceptance probabilities exp(-k/2**40).

    P(r) = p_r * int_0^1 prod_{j != r} (1 - p_j t) dt (uniform arrival times give
    a uniform order); the integrand is a polynomial of degree m - 1, so
    Gauss-Legendre with 64 nodes is exact up to rounding.
    """
    p = np.exp(-np.asarray(k, dtype=float) / GRID)
    x, w = np.polynomial.legendre.leggauss(64)
    t = (x + 1) / 2
    w = w / 2
    out = np.empty(p.size)
    for r in range(p.size):
        others = np.delete(p, r)
        out[r] = p[r] * (w * np.prod(1 - np.outer(t, others), axis=1)).sum()
    return out


def em_law(k):
    p = np.exp(-np.asarray(k, dtype=float) / GRID)
    return p / p.sum()


def gaps_reference(u, rate):
    top = Fraction(max(u))
    r = Fraction(rate)
    cap = GAMMA_CAP * GRID
    return [min(math.ceil(r * (top - Fraction(x)) * GRID), cap) for x in u]


class RecordingGenerator(np.random.Generator):
    """A Generator that records ``integers`` calls and refuses every float draw.

    ``rig_highs``: bounds for which ``integers`` returns all zeros (to force the
    rare branches where CKS runs past its first block).
    """

    def __init__(self, seed, rig_highs=()):
        super().__init__(np.random.PCG64(seed))
        self.calls = []
        self.rig_highs = set(rig_highs)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        self.calls.append((low, high, size, dtype, endpoint))
        if np.isscalar(high) and high in self.rig_highs:
            return np.zeros(size, dtype=dtype)
        return super().integers(low, high, size=size, dtype=dtype, endpoint=endpoint)

    def _refuse(self, *args, **kwargs):
        raise AssertionError("a float (or non-integer) draw was made")

    random = uniform = laplace = exponential = standard_exponential = _refuse
    normal = standard_normal = choice = permutation = shuffle = permuted = geometric = _refuse
    bytes = _refuse


# ----------------------------------------------------------------------------
# grid and exact gaps
# ----------------------------------------------------------------------------


def test_to_grid_is_exact_floor_and_ceil():
    x = np.array([0.0, 2.0**-40, 2.0**-41, 0.1, 1 / 3, 1.0, 2.0**22 - 2.0**-30])
    down = to_grid(x, "down")
    up = to_grid(x, "up")
    assert down.dtype == np.int64
    for xi, d, u in zip(x, down, up):
        exact = Fraction(float(xi)) * GRID
        assert d == math.floor(exact) and u == math.ceil(exact)
    assert isinstance(to_grid(0.5, "up"), np.integer)


def test_discrete_laplace_decay_never_less_noise():
    for scale in (0.5, 1.0, 3.0, 16.4, 1e-7, 123456.789, 2.0**22 - 1):
        kg = discrete_laplace_decay(scale)
        exact = Fraction(GRID) / Fraction(scale)
        assert kg <= exact  # g <= 1/scale: effective scale >= scale
        assert kg == min(math.floor(exact), GAMMA_CAP * GRID)
    assert discrete_laplace_decay(1e-9) == GAMMA_CAP * GRID  # tiny scales: capped (more noise)


def _tricky_utilities(rng, kind, m):
    if kind == 0:
        return rng.integers(-50, 50, m).astype(float), float(rng.choice([0.5, 0.25, 1.0, 0.1, 1 / 3, 3.0]))
    if kind == 1:
        return rng.normal(size=m) * 10 ** rng.uniform(-10, 10), 10 ** rng.uniform(-8, 8)
    if kind == 2:
        base = rng.normal()
        return base + rng.integers(-3, 3, m) * np.spacing(base), 10 ** rng.uniform(10, 16)
    if kind == 3:
        return np.concatenate([[1e300], rng.normal(size=m) * 1e-300]), 10 ** rng.uniform(-320, -290)
    if kind == 4:  # products that land exactly on / next to grid points
        u = np.concatenate([[1.0], 1.0 - rng.integers(1, 100, m) * 2.0**-52, [1e-300, -1e-300, 5e-324]])
        return u, float(rng.integers(1, 2**20)) * 2.0**-20
    if kind == 5:  # around the clipping point
        return np.array([0.0, -(2.0**21), -(2.0**21) - 2.0**-30, -(2.0**21) + 2.0**-31, -1e-320]), 1.0
    return rng.normal(size=m) * 1e5, 10 ** rng.uniform(-20, 3)


def test_selection_gaps_are_exact_ceilings():
    """Vectorised (error-free transformations) and Python-integer paths vs exact rationals."""
    rng = np.random.default_rng(2024)
    for case in range(700):
        u, rate = _tricky_utilities(rng, case % 7, int(rng.integers(1, 40)))
        ref = gaps_reference(list(u), rate)
        assert S._gaps_grid(np.asarray(u), rate).tolist() == ref, (case, u, rate)
        assert S._gaps_small(list(map(float, u)), rate) == ref, (case, u, rate)
    # spans beyond the float range are still exact (both size regimes)
    huge = [1.7e308, -1.7e308, 0.0] + [0.0] * 40
    for rate in (1.0, 2.0**-1070):
        assert selection_gaps_to_grid(huge, rate).tolist() == gaps_reference(huge, rate)
        assert selection_gaps_to_grid(huge[:3], rate).tolist() == gaps_reference(huge[:3], rate)
    # the public function; maximisers get exactly 0
    big = np.concatenate([rng.normal(size=100), [5.0, 5.0]])
    k = selection_gaps_to_grid(big, 0.7)
    assert k.tolist() == gaps_reference(list(big), 0.7)
    assert k[-1] == 0 and k[-2] == 0 and (k[:-2] > 0).all()


# ----------------------------------------------------------------------------
# Bernoulli(exp(-x))
# ----------------------------------------------------------------------------

X_VALUES = [0.0, 2.0**-40, 0.3, 1.0, 2.5, 7.0]


@pytest.mark.parametrize("x", X_VALUES)
def test_bernoulli_exp_exact_probability(x):
    k = int(to_grid(x, "down"))
    p = math.exp(-k / GRID)  # the exact law of the grid value (0.3 is not on the grid)
    rng = np.random.default_rng(11)
    n_bulk = 400_000
    heads_bulk = int(bernoulli_exp(np.full(n_bulk, k), rng).sum())
    heads_small = sum(int(bernoulli_exp(np.full(25, k), rng).sum()) for _ in range(1500))  # pure-Python path
    n_small = 25 * 1500
    if x == 0.0:
        assert heads_bulk == n_bulk and heads_small == n_small
    elif x == 2.0**-40:  # P[False] = 9.1e-13
        assert heads_bulk == n_bulk and heads_small == n_small
    else:
        assert abs(binomial_z(heads_bulk, n_bulk, p)) < Z_MAX
        assert abs(binomial_z(heads_small, n_small, p)) < Z_MAX


def test_bernoulli_exp_mixed_lanes_and_shapes():
    xs = np.array([0.0, 0.3, 1.0, 2.5, 7.0, 40.0, 2.0**21])
    k = to_grid(xs, "down")
    reps = 60_000
    coins = bernoulli_exp(np.tile(k, (reps, 1)), np.random.default_rng(5))
    assert coins.shape == (reps, xs.size) and coins.dtype == bool
    for j, x in enumerate(xs):
        p = math.exp(-x)
        h = int(coins[:, j].sum())
        if p == 1.0:
            assert h == reps
        elif p < 1e-12:
            assert h == 0
        else:
            assert abs(binomial_z(h, reps, p)) < Z_MAX, x


def _cks_tail_law(x, start):
    """P[K* odd | K* >= start] for CKS with parameter x in (0, 1]."""
    prob, surv, K = 0.0, 1.0, start
    while surv > 1e-18:
        stop = surv * (1 - x / K)
        if K % 2 == 1:
            prob += stop
        surv *= x / K
        K += 1
    return prob


@pytest.mark.parametrize("path", ["stream", "block", "table"])
def test_cks_continuation_branch_law(path):
    """Rig the first-stage draws to zero (A_1..A_8 all true) and test the tail law.

    Given K* >= 9, CKS with x = 1 returns True with probability
    P[K* odd | K* >= 9] = 0.8891...; an off-by-one in the continuation (e.g.
    Bernoulli(1/(K+1))) moves it by 0.011, i.e. > 10 standard errors here.
    """
    trials = 100_000
    if path == "stream":
        g = RecordingGenerator(1, rig_highs={S._BLOCK_HIGH})
        cs = S._CoinStream(g, 256)
        heads = sum(cs.cks(GRID) for _ in range(trials))
    elif path == "block":
        g = RecordingGenerator(2, rig_highs={S._BLOCK_HIGH})
        k = np.full(250, GRID, dtype=np.int64)
        heads = sum(int(S._cks(k, g).sum()) for _ in range(trials // 250))
    else:
        g = RecordingGenerator(3, rig_highs={math.factorial(S._BLOCK_COLS)})
        heads = int(S._bern_exp_minus_one(trials, g).sum())
    assert g.calls  # the rigged draws were made
    assert abs(binomial_z(heads, trials, _cks_tail_law(1.0, S._BLOCK_COLS + 1))) < Z_MAX


def test_exp_minus_one_table_is_the_cks_law():
    """The lookup table is CKS with x = 1: exact fractions, tail included, give e^-1."""
    t = S._EXP_MINUS_ONE
    n = t.size
    assert n == math.factorial(S._BLOCK_COLS)
    p_true = Fraction(int((t == 1).sum()), n)
    p_open = Fraction(int((t == 2).sum()), n)
    assert p_open == Fraction(1, n)
    # CKS: P[K* = K] = 1/(K-1)! - 1/K!, first failure at odd K gives True
    assert p_true == sum(Fraction(1, math.factorial(K - 1)) - Fraction(1, math.factorial(K)) for K in (3, 5, 7))
    total = float(p_true) + float(p_open) * _cks_tail_law(1.0, S._BLOCK_COLS + 1)
    assert math.isclose(total, math.exp(-1), rel_tol=1e-15)


def test_only_integer_draws_are_used():
    g = RecordingGenerator(3)
    bernoulli_exp(to_grid(np.linspace(0, 9, 300), "down"), g)
    bernoulli_exp(np.array([5, GRID * 3 + 7]), g)
    discrete_laplace(16.4, 2, g)
    discrete_laplace(0.5, 1000, g)
    u = np.random.default_rng(0).normal(size=50)
    permute_and_flip(u, 2.0, g)
    permute_and_flip(u[:5], 2.0, g)
    exponential_mechanism(u, 2.0, g)
    exponential_mechanism(u[:5], 2.0, g)
    assert g.calls
    for low, high, size, dtype, endpoint in g.calls:
        assert low == 0 and dtype is np.int64 and endpoint is False


# ----------------------------------------------------------------------------
# discrete Laplace
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.5, 3.0, 16.4])
def test_discrete_laplace_exact_law(scale):
    kg = discrete_laplace_decay(scale)
    rng = np.random.default_rng(int(scale * 10))
    bulk = discrete_laplace(scale, 300_000, rng)
    small = np.concatenate([discrete_laplace(scale, 16, rng) for _ in range(2500)])  # pure-Python path
    for z in (bulk, small):
        assert z.dtype == np.int64
        support = np.arange(-400, 401)
        assert chisq_pvalue(z, support, dlap_pmf(kg, support)) > P_MIN
    # symmetry and zero not double counted: P(0) = tanh(g/2)
    g = kg / GRID
    assert abs(binomial_z(int((bulk == 0).sum()), bulk.size, math.tanh(g / 2))) < Z_MAX


def test_discrete_laplace_shapes_and_determinism():
    a = discrete_laplace(3.0, (4, 5), np.random.default_rng(9))
    b = discrete_laplace(3.0, (4, 5), np.random.default_rng(9))
    assert a.shape == (4, 5) and a.dtype == np.int64 and np.array_equal(a, b)
    assert discrete_laplace(3.0, 0, np.random.default_rng(0)).shape == (0,)
    big1 = discrete_laplace(16.4, 70_000, np.random.default_rng(1))  # more than one chunk
    big2 = discrete_laplace(16.4, 70_000, np.random.default_rng(1))
    assert np.array_equal(big1, big2)


# ----------------------------------------------------------------------------
# selection
# ----------------------------------------------------------------------------


def test_pf_law_formula_matches_permutation_enumeration():
    k = np.array([0, 3 * GRID // 10, GRID, 5 * GRID // 2, 0])
    p = np.exp(-k / GRID)
    m = k.size
    law = np.zeros(m)
    perms = list(itertools.permutations(range(m)))
    for perm in perms:
        fail = 1.0
        for r in perm:
            law[r] += fail * p[r] / len(perms)
            fail *= 1 - p[r]
    assert np.allclose(law, pf_law(k), rtol=1e-12, atol=1e-15)
    assert math.isclose(law.sum(), 1.0)


SMALL_U = np.array([0.0, 1.0, 1.5, 3.0, 3.0, -2.0])


def _big_utilities():
    u = np.full(45, -40.0)
    u[:8] = [2.0, 1.5, 1.0, 0.9, 0.5, 0.0, -0.5, -1.0]
    return u


@pytest.mark.parametrize("mechanism", ["pf", "em"])
def test_selection_exact_law_public_small(mechanism):
    rate = 0.7
    k = selection_gaps_to_grid(SMALL_U, rate)
    law = pf_law(k) if mechanism == "pf" else em_law(k)
    fn = permute_and_flip if mechanism == "pf" else exponential_mechanism
    rng = np.random.default_rng(21)
    draws = np.array([fn(SMALL_U, rate, rng) for _ in range(30_000)])
    assert isinstance(fn(SMALL_U, rate, rng), int)
    assert chisq_pvalue(draws, np.arange(SMALL_U.size), law) > P_MIN


@pytest.mark.parametrize("mechanism", ["pf", "em"])
def test_selection_exact_law_public_bulk(mechanism):
    u = _big_utilities()  # 45 candidates: the vectorised path
    rate = 1.3
    k = selection_gaps_to_grid(u, rate)
    law = pf_law(k) if mechanism == "pf" else em_law(k)
    fn = permute_and_flip if mechanism == "pf" else exponential_mechanism
    rng = np.random.default_rng(22)
    draws = np.array([fn(u, rate, rng) for _ in range(6000)])
    assert chisq_pvalue(draws, np.arange(u.size), law) > P_MIN


def test_selection_exact_law_batched_helpers():
    u = _big_utilities()
    k = selection_gaps_to_grid(u, 1.3)
    rng = np.random.default_rng(23)
    pf = S._pf_indices(k, rng, 40_000)
    em = S._em_indices(k, rng, 40_000, batch=4)
    assert chisq_pvalue(pf, np.arange(u.size), pf_law(k)) > P_MIN
    assert chisq_pvalue(em, np.arange(u.size), em_law(k)) > P_MIN


def test_selection_edge_cases():
    rng = np.random.default_rng(0)
    assert permute_and_flip([3.0], 1.0, rng) == 0
    assert exponential_mechanism([3.0], 1.0, rng) == 0
    # huge gaps (clipped at 2**21): only the maximiser can come out
    u = np.array([0.0, 1e6, -1e300, 1e6 - 1e-3])
    assert all(permute_and_flip(u, 1e9, rng) == 1 for _ in range(50))
    assert all(exponential_mechanism(u, 1e9, rng) == 1 for _ in range(50))
    # all ties: uniform
    draws = [permute_and_flip(np.zeros(40), 1.0, rng) for _ in range(4000)]
    assert chisq_pvalue(draws, np.arange(40), np.full(40, 1 / 40)) > P_MIN


# ----------------------------------------------------------------------------
# determinism, independence, validation
# ----------------------------------------------------------------------------


def test_fixed_seed_determinism():
    u = np.random.default_rng(0).normal(size=100)
    for seed in (0, 1):
        runs = []
        for _ in range(2):
            rng = np.random.default_rng(seed)
            runs.append(
                (
                    discrete_laplace(16.4, 7, rng).tolist(),
                    bernoulli_exp(to_grid(np.linspace(0, 3, 50), "up"), rng).tolist(),
                    [permute_and_flip(u, 0.5, rng) for _ in range(5)],
                    [exponential_mechanism(u[:6], 0.5, rng) for _ in range(5)],
                )
            )
        assert runs[0] == runs[1]


def test_spawned_children_are_independent():
    a, b = np.random.default_rng(77).spawn(2)
    n = 200_000
    za = discrete_laplace(3.0, n, a)
    zb = discrete_laplace(3.0, n, b)
    assert not np.array_equal(za, zb)
    assert abs(np.corrcoef(za, zb)[0, 1]) < 4 / math.sqrt(n)
    # selections: a 2 x 2 contingency table of (child a picks 0, child b picks 0)
    x = np.array([permute_and_flip([0.0, 0.0], 1.0, a) for _ in range(4000)])
    y = np.array([permute_and_flip([0.0, 0.0], 1.0, b) for _ in range(4000)])
    table = np.array([[np.sum((x == i) & (y == j)) for j in (0, 1)] for i in (0, 1)])
    assert stats.chi2_contingency(table)[1] > P_MIN


BAD_CALLS = [
    lambda r: to_grid(-1.0, "down"),
    lambda r: to_grid(float("nan"), "up"),
    lambda r: to_grid(2.0**22, "up"),
    lambda r: to_grid(1.0, "nearest"),
    lambda r: to_grid("a", "up"),
    lambda r: bernoulli_exp(np.array([0.5]), r),
    lambda r: bernoulli_exp(np.array([-1]), r),
    lambda r: bernoulli_exp(np.array([1]), np.random.RandomState(0)),
    lambda r: discrete_laplace(0.0, 3, r),
    lambda r: discrete_laplace(-1.0, 3, r),
    lambda r: discrete_laplace(float("inf"), 3, r),
    lambda r: discrete_laplace(float("nan"), 3, r),
    lambda r: discrete_laplace(2.0**22, 3, r),
    lambda r: discrete_laplace(True, 3, r),
    lambda r: discrete_laplace(1.0, -1, r),
    lambda r: discrete_laplace(1.0, 2.5, r),
    lambda r: discrete_laplace(1.0, 3, 0),
    lambda r: permute_and_flip([], 1.0, r),
    lambda r: permute_and_flip([[1.0, 2.0]], 1.0, r),
    lambda r: permute_and_flip([1.0, float("nan")], 1.0, r),
    lambda r: permute_and_flip([1.0, 2.0], 0.0, r),
    lambda r: permute_and_flip([1.0, 2.0], float("inf"), r),
    lambda r: permute_and_flip([1.0, 2.0], -1.0, r),
    lambda r: permute_and_flip(["a"], 1.0, r),
    lambda r: permute_and_flip([1.0, 2.0], 1.0, None),
    lambda r: exponential_mechanism([], 1.0, r),
    lambda r: exponential_mechanism([1.0, float("inf")], 1.0, r),
    lambda r: exponential_mechanism([1.0, 2.0], float("nan"), r),
    lambda r: exponential_mechanism([1.0, 2.0], "1", r),
    lambda r: exponential_mechanism(np.ones((2, 2)), 1.0, r),
    lambda r: numpy_laplace_preimages(float("nan"), [0.0], 1.0),
    lambda r: numpy_laplace_preimages(0.0, [0.0], 0.0),
    lambda r: numpy_laplace_preimages([0.0, 1.0], [0.0], 1.0),
    lambda r: float_attack_exclusion_rate([0.0], [float("inf")], 1.0),
    lambda r: numpy_laplace_from_draws(np.array([0]), 0.0, 1.0),
    lambda r: integer_or_grid_valued([1.0], grid=0.0),
]


@pytest.mark.parametrize("call", BAD_CALLS)
def test_validation_errors_are_typed(call):
    with pytest.raises(InvalidParameterError):
        call(np.random.default_rng(0))


# ----------------------------------------------------------------------------
# the floating-point attack
# ----------------------------------------------------------------------------


def test_replay_of_numpy_laplace_is_bit_exact():
    bg = np.random.PCG64(123)
    state = bg.state
    loc = np.repeat([0.0, 1.0, 37.25, -3.5], 5000)
    x = np.random.Generator(bg).laplace(loc, 16.0)
    replay = np.random.PCG64()
    replay.state = state
    k = (replay.random_raw(loc.size) >> np.uint64(11)).astype(np.int64)
    assert (k > 0).all()
    assert np.array_equal(numpy_laplace_from_draws(k, loc, 16.0), x)
    # and c + laplace(0, scale) is the same double as laplace(c, scale)
    y = loc + np.random.Generator(np.random.PCG64(123)).laplace(0.0, 16.0, size=loc.size)
    assert np.array_equal(x, y)


def test_preimages_match_brute_force():
    """Against an independent search: +-300 draws around the analytic inverse."""
    rng = np.random.default_rng(8)
    scale = 16.0
    cands = np.arange(0.0, 6.0)
    for _ in range(12):
        out = float(rng.integers(0, 2)) + rng.laplace(0.0, scale)
        fast = numpy_laplace_preimages(out, cands, scale)
        for j, c in enumerate(cands):
            t = out - c
            U = 1 - math.exp(-t / scale) / 2 if t >= 0 else math.exp(t / scale) / 2
            k0 = int(round(U * 2.0**53))
            ks = np.arange(max(1, k0 - 300), min(2**53 - 1, k0 + 300), dtype=np.int64)
            brute = bool((numpy_laplace_from_draws(ks, c, scale) == out).any())
            assert fast[j] == brute, (out, c)


def test_preimage_exact_fallback(monkeypatch):
    """If numpy.log misleads the search, the exact fallback still gives the same answer."""
    from dpglass.audit import floating_point as fp

    rng = np.random.default_rng(9)
    outs = np.concatenate([rng.laplace(0.0, 16.0, 15), 1.0 + rng.laplace(0.0, 16.0, 15)])
    cands = np.arange(0.0, 8.0)
    honest = np.array([numpy_laplace_preimages(o, cands, 16.0) for o in outs])
    real_exact = fp._sample_exact
    calls = []

    def misleading(loc, scale, k):  # a search oracle that is off by 10**6 draws
        calls.append(1)
        return real_exact(loc, scale, np.clip(k + 10**6, 1, 2**53 - 1))

    monkeypatch.setattr(fp, "_sample_fast", misleading)
    fallback = np.array([numpy_laplace_preimages(o, cands, 16.0) for o in outs])
    assert calls and np.array_equal(honest, fallback)
    assert honest[:15, 0].all() and honest[15:, 1].all()


def test_float_laplace_attack_has_power_and_exact_noise_gives_it_nothing():
    scale = 1 / 0.0625
    cands = np.arange(41.0)
    rng = np.random.default_rng(2012)
    truths = np.repeat([0, 1], 150)
    outs = truths + rng.laplace(0.0, scale, size=truths.size)
    possible = np.array([numpy_laplace_preimages(o, cands, scale) for o in outs])
    assert possible[np.arange(truths.size), truths].all()  # the attack is sound
    wrong = np.ones_like(possible)
    wrong[np.arange(truths.size), truths] = False
    power = 1 - possible[wrong].mean()
    assert power > 0.3, power
    assert float_attack_exclusion_rate(outs[truths == 0], cands[1:], scale) > 0.3
    assert not integer_or_grid_valued(outs)

    # exact integer noise: outputs are integers and the discrete Laplace has full
    # support on the integers, so every integer candidate stays possible
    exact = truths + discrete_laplace(scale, truths.size, rng)
    assert exact.dtype == np.int64
    assert integer_or_grid_valued(exact)
    assert integer_or_grid_valued(exact.astype(float))
    kg = discrete_laplace_decay(scale)
    lik = dlap_pmf(kg, exact[:, None] - cands[None, :].astype(np.int64))
    assert (lik > 0).all()


def test_integer_or_grid_valued():
    assert integer_or_grid_valued(np.array([1, 2, 3], dtype=np.int64))
    assert integer_or_grid_valued([1.0, -2.0, 0.0])
    assert not integer_or_grid_valued([1.0, 2.5])
    assert not integer_or_grid_valued([float("inf")])
    assert integer_or_grid_valued([0.0, 2.0**-40, 3 * 2.0**-40], grid=2.0**-40)
    assert not integer_or_grid_valued([2.0**-41], grid=2.0**-40)
    assert integer_or_grid_valued([4, 8, -12], grid=4)
    assert not integer_or_grid_valued([4, 6], grid=4)
    assert integer_or_grid_valued([])
    assert not integer_or_grid_valued(["x"])
