"""Tests for dpglass.privacy.mechanisms.

Every random test uses a fixed seed, so its outcome is deterministic for a
given NumPy version; statistical thresholds are loose enough (p > 0.01 or
p > 1e-3 for "accept", p < 1e-6 for "reject") that a change of stream would
still pass with overwhelming probability.  Privacy constants are checked
exactly (probability ratios, density ratios, hockey-stick divergences).
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

import dpglass.privacy.mechanisms.smooth as smooth_module
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import integrate, optimize, special, stats

from dpglass.exceptions import InvalidParameterError
from dpglass.privacy import mechanisms
from dpglass.privacy.mechanisms import (
    ExponentialMechanism,
    GaussianMechanism,
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    LaplaceMechanism,
    PermuteAndFlip,
    ReportNoisyMax,
    SmoothCauchyMechanism,
    SmoothLaplaceMechanism,
    cauchy_like_cdf,
    sample_cauchy_like,
    sample_laplace,
)

N_KS = 200_000
MESSAGE = re.compile(r"^The '\w+' parameter of [\w.]+ must be .+\. Got .+ instead\.")


def rng(seed):
    return np.random.default_rng(seed)


# ------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "cls, kwargs, name",
    [
        (LaplaceMechanism, dict(epsilon=0), "epsilon"),
        (LaplaceMechanism, dict(epsilon=-1.0), "epsilon"),
        (LaplaceMechanism, dict(epsilon=math.inf), "epsilon"),
        (LaplaceMechanism, dict(epsilon=math.nan), "epsilon"),
        (LaplaceMechanism, dict(epsilon=True), "epsilon"),
        (LaplaceMechanism, dict(epsilon="1"), "epsilon"),
        (LaplaceMechanism, dict(epsilon=1.0, sensitivity=0.0), "sensitivity"),
        (LaplaceMechanism, dict(epsilon=1.0, sensitivity=math.inf), "sensitivity"),
        (GaussianMechanism, dict(epsilon=1.0, delta=0.0), "delta"),
        (GaussianMechanism, dict(epsilon=1.0, delta=1.0), "delta"),
        (GaussianMechanism, dict(epsilon=1.0, delta=1e-5, calibration="exact"), "calibration"),
        (GaussianMechanism, dict(epsilon=1.0, delta=1e-5, sensitivity=-2), "sensitivity"),
        (ExponentialMechanism, dict(epsilon=1.0, sensitivity=0), "sensitivity"),
        (ExponentialMechanism, dict(epsilon=1.0, sensitivity=1.0, monotonic=1), "monotonic"),
        (PermuteAndFlip, dict(epsilon=0.0, sensitivity=1.0), "epsilon"),
        (PermuteAndFlip, dict(epsilon=1.0, sensitivity=1.0, monotonic="yes"), "monotonic"),
        (ReportNoisyMax, dict(epsilon=1.0, sensitivity=1.0, noise="gumbel"), "noise"),
        (ReportNoisyMax, dict(epsilon=1.0, sensitivity=math.nan), "sensitivity"),
        (SmoothLaplaceMechanism, dict(epsilon=1.0, delta=1.5), "delta"),
        (SmoothLaplaceMechanism, dict(epsilon=math.inf, delta=1e-6), "epsilon"),
        (SmoothCauchyMechanism, dict(epsilon=1.0, gamma=1.0), "gamma"),
        (SmoothCauchyMechanism, dict(epsilon=1.0, gamma=math.inf), "gamma"),
        (SmoothCauchyMechanism, dict(epsilon=1.0, gamma=0.5), "gamma"),
    ],
)
def test_invalid_parameters_raise_with_the_standard_message(cls, kwargs, name):
    with pytest.raises(InvalidParameterError) as info:
        cls(**kwargs)
    message = str(info.value)
    assert MESSAGE.match(message), message
    assert f"'{name}' parameter of {cls.__name__}" in message
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_exact_message_format():
    with pytest.raises(InvalidParameterError, match=re.escape(
        "The 'epsilon' parameter of LaplaceMechanism must be a float in the range (0, inf). Got -1 instead."
    )):
        LaplaceMechanism(-1)
    with pytest.raises(InvalidParameterError, match=re.escape(
        "The 'noise' parameter of ReportNoisyMax must be one of 'laplace', 'exponential'. Got 'gumbel' instead."
    )):
        ReportNoisyMax(1.0, 1.0, noise="gumbel")


def test_classic_gaussian_needs_epsilon_below_one():
    with pytest.raises(InvalidParameterError, match="calibration='analytic'") as info:
        GaussianMechanism(1.0, 1e-5, calibration="classic")
    assert MESSAGE.match(str(info.value))
    GaussianMechanism(0.999, 1e-5, calibration="classic")
    GaussianMechanism(5.0, 1e-5, calibration="analytic")


@pytest.mark.parametrize(
    "call",
    [
        lambda: LaplaceMechanism(1.0).randomise(1.0, 42),
        lambda: LaplaceMechanism(1.0).randomise(1.0, np.random.RandomState(0)),
        lambda: LaplaceMechanism(1.0).randomise(math.nan, rng(0)),
        lambda: LaplaceMechanism(1.0).randomise([1.0, math.inf], rng(0)),
        lambda: LaplaceMechanism(1.0).randomise("3", rng(0)),
        lambda: GaussianMechanism(1.0, 1e-5).randomise(None, rng(0)),
        lambda: ExponentialMechanism(1.0, 1.0).select([], rng(0)),
        lambda: ExponentialMechanism(1.0, 1.0).select([[1.0, 2.0]], rng(0)),
        lambda: ExponentialMechanism(1.0, 1.0).probabilities([0.0, math.nan]),
        lambda: PermuteAndFlip(1.0, 1.0).select([0.0, -math.inf], rng(0)),
        lambda: PermuteAndFlip(1.0, 1.0).probabilities(np.zeros(10_001)),
        lambda: ReportNoisyMax(1.0, 1.0).select("abc", rng(0)),
        lambda: SmoothLaplaceMechanism(1.0, 1e-6).randomise(1.0, -0.1, rng(0)),
        lambda: SmoothCauchyMechanism(1.0).randomise(1.0, math.inf, rng(0)),
        lambda: SmoothCauchyMechanism(1.0).scale([1.0, -1.0]),
        lambda: sample_laplace(0.0, 3, rng(0)),
        lambda: sample_laplace(1.0, 2.5, rng(0)),
        lambda: sample_cauchy_like(1.0, 3, rng(0)),
        lambda: sample_cauchy_like(2.0, 3, None),
        lambda: cauchy_like_cdf(0.0, 1.0),
    ],
)
def test_invalid_call_arguments_raise(call):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert MESSAGE.match(str(info.value)), str(info.value)


def test_error_message_does_not_dump_large_arrays():
    values = np.full(1000, math.nan)
    with pytest.raises(InvalidParameterError, match=re.escape("Got an array of shape (1000,) instead.")):
        LaplaceMechanism(1.0).randomise(values, rng(0))


# ------------------------------------------------- repr, guarantee, state
ALL_MECHANISMS = [
    LaplaceMechanism(0.5, sensitivity=2),
    GaussianMechanism(0.5, 1e-6),
    GaussianMechanism(0.5, 1e-6, sensitivity=3.0, calibration="classic"),
    ExponentialMechanism(1, 0.5),
    ExponentialMechanism(1.0, 0.5, monotonic=True),
    PermuteAndFlip(2.0, 1.0),
    ReportNoisyMax(1.0, 1.0, noise="exponential", monotonic=True),
    SmoothLaplaceMechanism(1.0, 1e-6),
    SmoothCauchyMechanism(0.3, gamma=2.5),
    DiscreteGaussianMechanism(3.0, 1e-6),
]


@pytest.mark.parametrize("mech", ALL_MECHANISMS, ids=repr)
def test_repr_round_trips(mech):
    text = repr(mech)
    # every mechanism is built from its privacy parameter: epsilon, or the discrete Gaussian's sigma
    assert text.startswith(type(mech).__name__ + ("(sigma=" if isinstance(mech, DiscreteGaussianMechanism)
                                                  else "(epsilon="))
    rebuilt = eval(text, vars(mechanisms))  # noqa: S307 - our own repr
    assert repr(rebuilt) == text
    assert rebuilt.guarantee == mech.guarantee


def test_repr_examples():
    assert repr(LaplaceMechanism(1, 2)) == "LaplaceMechanism(epsilon=1.0, sensitivity=2.0)"
    assert repr(GaussianMechanism(0.5, 1e-6)) == (
        "GaussianMechanism(epsilon=0.5, delta=1e-06, sensitivity=1.0, calibration='analytic')"
    )
    assert repr(ReportNoisyMax(1.0, 2.0)) == (
        "ReportNoisyMax(epsilon=1.0, sensitivity=2.0, noise='laplace', monotonic=False)"
    )
    assert repr(SmoothCauchyMechanism(1.0)) == "SmoothCauchyMechanism(epsilon=1.0, gamma=4.0)"


def test_guarantees():
    assert LaplaceMechanism(0.7).guarantee == (0.7, 0.0)
    assert LaplaceMechanism(0.7).delta == 0.0
    assert GaussianMechanism(0.7, 1e-6).guarantee == (0.7, 1e-6)
    assert ExponentialMechanism(0.7, 1.0).guarantee == (0.7, 0.0)
    assert PermuteAndFlip(0.7, 1.0).guarantee == (0.7, 0.0)
    assert ReportNoisyMax(0.7, 1.0).guarantee == (0.7, 0.0)
    assert SmoothLaplaceMechanism(0.7, 1e-6).guarantee == (0.7, 1e-6)
    assert SmoothCauchyMechanism(0.7).guarantee == (0.7, 0.0)
    for mech in ALL_MECHANISMS:
        eps, delta = mech.guarantee
        assert type(eps) is float and type(delta) is float


@pytest.mark.parametrize("mech", ALL_MECHANISMS, ids=repr)
def test_mechanisms_are_immutable(mech):
    with pytest.raises(AttributeError):
        mech.epsilon = 100.0


def test_public_names():
    assert set(mechanisms.__all__) == {
        "sample_laplace", "sample_cauchy_like", "cauchy_like_cdf", "LaplaceMechanism", "DiscreteLaplaceMechanism",
        "GaussianMechanism", "DiscreteGaussianMechanism", "ExponentialMechanism", "PermuteAndFlip", "ReportNoisyMax",
        "SmoothLaplaceMechanism", "SmoothCauchyMechanism", "count_fields",
    }


# ------------------------------------------------------- samplers: KS tests
def _ks_pvalues(draws, cdf_at_scale, scale):
    return [stats.kstest(draws, lambda x, s=scale * f: cdf_at_scale(x, s)).pvalue for f in (1.0, 0.7, 1.3)]


def _laplace_cdf(x, s):
    return stats.laplace.cdf(x, scale=s)


def _normal_cdf(x, s):
    return special.ndtr(x / s)


KS_CASES = {
    "sample_laplace": (lambda: sample_laplace(2.5, N_KS, rng(101)), _laplace_cdf, 2.5),
    # one value per call: a vector of N values pays N grid units of rounding
    "LaplaceMechanism": (
        lambda: np.array([LaplaceMechanism(0.4).randomise(0.0, g) for g in rng(102).spawn(20_000)]),
        _laplace_cdf,
        LaplaceMechanism(0.4).scale_for(1),
    ),
    "GaussianMechanism": (
        lambda: GaussianMechanism(1.0, 1e-5).randomise(np.zeros(N_KS), rng(103)),
        _normal_cdf,
        GaussianMechanism(1.0, 1e-5).scale,
    ),
    "cauchy_like_2": (lambda: sample_cauchy_like(2.0, N_KS, rng(104)), lambda x, s: cauchy_like_cdf(x / s, 2.0), 1.0),
    "cauchy_like_4": (lambda: sample_cauchy_like(4.0, N_KS, rng(105)), lambda x, s: cauchy_like_cdf(x / s, 4.0), 1.0),
    "SmoothCauchy_4": (
        lambda: SmoothCauchyMechanism(1.0, gamma=4.0).randomise(np.zeros(N_KS), 0.1, rng(106)),
        lambda x, s: cauchy_like_cdf(x / s, 4.0),
        1.0,  # 2 (gamma + 1) * 0.1 / 1.0
    ),
    "SmoothLaplace": (
        lambda: SmoothLaplaceMechanism(0.5, 1e-6).randomise(np.zeros(N_KS), 0.3, rng(107)),
        _laplace_cdf,
        1.2,  # 2 * 0.3 / 0.5
    ),
}


@pytest.mark.parametrize("case", list(KS_CASES))
def test_sampler_matches_its_law_and_only_at_the_true_scale(case):
    draw, cdf, scale = KS_CASES[case]
    p_true, p_small, p_large = _ks_pvalues(draw(), cdf, scale)
    assert p_true > 0.01
    assert p_small < 1e-6 and p_large < 1e-6


def test_cauchy_like_gamma_2_is_the_standard_cauchy():
    x = np.linspace(-50, 50, 101)
    np.testing.assert_allclose(cauchy_like_cdf(x, 2.0), stats.cauchy.cdf(x), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("gamma", [1.5, 2.0, 3.0, 4.0, 7.5])
def test_cauchy_like_cdf_is_the_integral_of_the_density(gamma):
    norm = (math.pi / gamma) / math.sin(math.pi / gamma) * 2.0  # integral of 1/(1+|z|^gamma) over R
    total, _ = integrate.quad(lambda z: 2.0 / (1.0 + z**gamma), 0, math.inf)
    assert total == pytest.approx(norm, rel=1e-9)
    for x in (-30.0, -2.0, -0.3, 0.0, 0.7, 5.0):
        mass, _ = integrate.quad(lambda z: 1.0 / (1.0 + abs(z) ** gamma), -math.inf, x)
        assert float(cauchy_like_cdf(x, gamma)) == pytest.approx(mass / norm, rel=1e-8, abs=1e-12)
    ends = cauchy_like_cdf([-math.inf, -1e200, 1e200, math.inf], gamma)
    assert ends[0] == 0.0 and ends[3] == 1.0
    # polynomial tails: P(Z <= -t) ~ t**(1 - gamma) / ((gamma - 1) * norm)
    assert ends[1] == pytest.approx(1e200 ** (1 - gamma) / ((gamma - 1) * norm), rel=1e-9)
    assert 1.0 - ends[2] <= 2 * ends[1]


def test_samplers_are_reproducible_and_block_drawn():
    a = sample_cauchy_like(3.0, (4, 5), rng(7))
    b = sample_cauchy_like(3.0, (4, 5), rng(7))
    assert a.shape == (4, 5) and np.array_equal(a, b)
    assert np.isfinite(sample_cauchy_like(200.0, 10_000, rng(8))).all()  # no underflow to 0/0
    assert sample_laplace(1.0, None, rng(0)).shape == ()


# ------------------------------------------------------------- Laplace
def test_laplace_scale_and_randomise():
    mech = LaplaceMechanism(epsilon=0.25, sensitivity=2.0)
    assert mech.scale == 8.0
    assert mech.granularity == 2.0 ** (3 - 16)  # floor(log2(8)) - 16: public
    assert mech.scale_for(6) == pytest.approx(8.0 * (1 + 6 * mech.granularity / 2.0))
    out = mech.randomise(3.0, rng(1))
    assert isinstance(out, float)
    assert out == mech.randomise(3.0, rng(1))  # reproducible
    values = np.arange(6.0).reshape(2, 3) + 0.123456789
    noisy = mech.randomise(values, rng(2))
    assert noisy.shape == (2, 3)
    units = noisy / mech.granularity  # on the public grid: the low bits carry nothing
    np.testing.assert_array_equal(units, np.round(units))


def test_discrete_laplace_mechanism_releases_integers_with_the_right_spread():
    mech = DiscreteLaplaceMechanism(epsilon=0.5)
    out = mech.randomise(np.full(100_000, 7), rng(3))
    assert out.dtype == np.int64
    z = out - 7
    # P[Z = k] proportional to exp(-|k| / 2): compare a few exact probabilities
    a = np.exp(-0.5)
    for k in (0, 1, -3, 6):
        expected = (1 - a) / (1 + a) * a ** abs(k)
        assert np.mean(z == k) == pytest.approx(expected, abs=4 * np.sqrt(expected / 100_000))
    assert isinstance(mech.randomise(4, rng(0)), int)
    with pytest.raises(InvalidParameterError, match="integers"):
        mech.randomise(0.5, rng(0))


# ------------------------------------------------------------- Gaussian
def _gauss_delta(sigma, eps, sens):
    """Balle & Wang (2018), Thm 8: the exact delta of N(0, sigma^2) at epsilon."""
    return special.ndtr(sens / (2 * sigma) - eps * sigma / sens) - math.exp(eps) * special.ndtr(
        -sens / (2 * sigma) - eps * sigma / sens
    )


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 1.0, 3.0, 10.0, 40.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3, 0.1, 0.6])
def test_analytic_gaussian_satisfies_the_exact_condition(eps, delta):
    sens = 1.7
    sigma = GaussianMechanism(eps, delta, sensitivity=sens).scale
    assert _gauss_delta(sigma, eps, sens) == pytest.approx(delta, rel=1e-8)
    # independent solve directly in sigma
    ref = optimize.brentq(lambda s: _gauss_delta(s, eps, sens) - delta, 1e-8, 1e8, xtol=1e-300, rtol=1e-15)
    assert sigma == pytest.approx(ref, rel=1e-10)


def test_analytic_gaussian_known_value_and_comparison_with_classic():
    # eps = 1, delta = 1e-5: the analytic sigma is about 3.73, the classic bound
    # (not valid at eps = 1) would be 4.84.
    assert GaussianMechanism(1.0, 1e-5).scale == pytest.approx(3.730631634816, rel=1e-10)
    for eps in (0.05, 0.3, 0.9):
        classic = GaussianMechanism(eps, 1e-6, sensitivity=2.0, calibration="classic").scale
        assert classic == pytest.approx(math.sqrt(2 * math.log(1.25 / 1e-6)) * 2.0 / eps, rel=1e-15)
        assert GaussianMechanism(eps, 1e-6, sensitivity=2.0).scale < classic
        assert _gauss_delta(classic, eps, 2.0) <= 1e-6  # the classic sigma is private, just loose
    # sigma is linear in the sensitivity
    assert GaussianMechanism(0.5, 1e-6, sensitivity=3.0).scale == pytest.approx(
        3.0 * GaussianMechanism(0.5, 1e-6).scale, rel=1e-10
    )


def test_gaussian_randomise_shapes():
    mech = GaussianMechanism(1.0, 1e-5)
    assert isinstance(mech.randomise(0.0, rng(0)), float)
    assert mech.randomise(np.zeros((3, 2)), rng(0)).shape == (3, 2)


# ------------------------------------------------- exponential mechanism
def _neighbours(u, sens, generator, monotonic):
    """Utility vectors at distance <= sens per coordinate, incl. the extreme ones."""
    k = len(u)
    out = []
    if monotonic:
        for _ in range(20):
            out.append(u + generator.uniform(0, sens, size=k))
            out.append(u - generator.uniform(0, sens, size=k))
        out += [u + sens, u - sens]
    else:
        for _ in range(20):
            out.append(u + generator.uniform(-sens, sens, size=k))
        for i in range(k):  # worst case: one up, the rest down
            d = -np.full(k, sens)
            d[i] = sens
            out.append(u + d)
    return out


@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_mechanism_frequencies_match_probabilities(monotonic):
    em = ExponentialMechanism(epsilon=1.2, sensitivity=0.5, monotonic=monotonic)
    u = np.array([0.0, 0.4, 1.0, 1.1, -0.5])
    g = rng(11 + monotonic)
    n = 30_000 if monotonic else 100_000
    counts = np.bincount([em.select(u, g) for _ in range(n)], minlength=u.size)
    probs = em.probabilities(u)
    assert stats.chisquare(counts, probs * n).pvalue > 1e-3
    rate = 1.2 / (0.5 if monotonic else 1.0)
    np.testing.assert_allclose(probs, special.softmax(rate * u), rtol=1e-10)


@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_mechanism_is_epsilon_dp_exactly(monotonic):
    eps, sens = 0.8, 2.0
    em = ExponentialMechanism(eps, sens, monotonic=monotonic)
    g = rng(21)
    worst = 0.0
    for _ in range(5):
        u = g.normal(scale=5.0, size=6)
        for v in _neighbours(u, sens, g, monotonic):
            worst = max(worst, np.abs(np.log(em.probabilities(u)) - np.log(em.probabilities(v))).max())
    assert worst <= eps * (1 + 1e-12)
    assert worst >= 0.8 * eps  # the extreme neighbours come close to the bound


def test_monotone_variant_needs_monotone_neighbours():
    em = ExponentialMechanism(1.0, 1.0, monotonic=True)
    u = np.zeros(4)
    v = np.array([1.0, -1.0, -1.0, -1.0])  # not monotone: the ratio exceeds e^eps
    assert np.log(em.probabilities(v)[0] / em.probabilities(u)[0]) > 1.0


# ---------------------------------------------------------- permute-and-flip
def _permute_and_flip_by_enumeration(u, eps, sens, monotonic=False):
    """McKenna & Sheldon (2020), Alg. 1, averaged over all permutations."""
    u = np.asarray(u, dtype=float)
    accept = np.exp(eps * (u - u.max()) / ((1.0 if monotonic else 2.0) * sens))
    perms = list(itertools.permutations(range(u.size)))
    out = np.zeros(u.size)
    for perm in perms:
        still_running = 1.0
        for r in perm:
            out[r] += still_running * accept[r]
            still_running *= 1.0 - accept[r]
    return out / len(perms)


PF_CASES = [
    ([0.0, 1.0, 2.0], False),
    ([0.0, 1.0, 2.0], True),
    ([3.0, 0.5, 3.2, -1.0], False),
    ([5.0, 5.0, 5.0, 1.0], True),
]
PF_FREQUENCY_CASES = [PF_CASES[0], PF_CASES[3]]


@pytest.mark.parametrize("u, monotonic", PF_CASES)
def test_permute_and_flip_exact_probabilities(u, monotonic):
    pf = PermuteAndFlip(1.3, 0.7, monotonic=monotonic)
    np.testing.assert_allclose(
        pf.probabilities(u), _permute_and_flip_by_enumeration(u, 1.3, 0.7, monotonic), rtol=1e-10, atol=1e-15
    )


@pytest.mark.parametrize("u, monotonic", PF_FREQUENCY_CASES)
def test_permute_and_flip_frequencies(u, monotonic):
    pf = PermuteAndFlip(1.3, 0.7, monotonic=monotonic)
    g = rng(31 + len(u) + monotonic)
    n = 40_000
    counts = np.bincount([pf.select(u, g) for _ in range(n)], minlength=len(u))
    expected = _permute_and_flip_by_enumeration(u, 1.3, 0.7, monotonic) * n
    assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_permute_and_flip_is_epsilon_dp_and_beats_exponential():
    eps, sens = 1.0, 1.0
    pf, em = PermuteAndFlip(eps, sens), ExponentialMechanism(eps, sens)
    g = rng(41)
    for _ in range(5):
        u = g.normal(scale=3.0, size=5)
        for v in _neighbours(u, sens, g, monotonic=False):
            ratio = np.abs(np.log(pf.probabilities(u)) - np.log(pf.probabilities(v))).max()
            assert ratio <= eps * (1 + 1e-10)
        # McKenna & Sheldon (2020): never worse expected utility than the exponential mechanism
        assert pf.probabilities(u) @ u >= em.probabilities(u) @ u - 1e-12


def test_permute_and_flip_probabilities_scale_to_many_candidates():
    u = rng(5).normal(scale=4.0, size=700)
    p = PermuteAndFlip(0.5, 1.0).probabilities(u)
    assert abs(p.sum() - 1.0) < 1e-12 and (p > 0).all()
    assert np.argmax(p) == np.argmax(u)


# ----------------------------------------------------------- report noisy max
def test_report_noisy_max_scales():
    assert ReportNoisyMax(0.5, 2.0).scale == 8.0
    assert ReportNoisyMax(0.5, 2.0, monotonic=True).scale == 4.0
    assert ReportNoisyMax(0.5, 2.0, noise="exponential").scale == 8.0
    # the selectors reserve 2**-39 of epsilon for rounding their exponents
    assert PermuteAndFlip(0.5, 2.0).scale == pytest.approx(8.0, rel=1e-10) and PermuteAndFlip(0.5, 2.0).scale > 8.0
    assert PermuteAndFlip(0.5, 2.0, monotonic=True).scale == pytest.approx(4.0, rel=1e-10)


def _laplace_cdf_at(x, loc, scale):
    z = (x - loc) / scale
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))


def _rnm_laplace_probabilities(u, scale):
    """P(argmax(u + Lap(scale)) = r) by numerical integration."""
    u = np.asarray(u, dtype=float)
    out = []
    for r in range(u.size):
        others = np.delete(u, r)

        def integrand(x):
            return math.exp(-abs(x - u[r]) / scale) / (2 * scale) * _laplace_cdf_at(x, others, scale).prod()

        lo, hi = u.min() - 60 * scale, u.max() + 60 * scale
        out.append(integrate.quad(integrand, lo, hi, points=sorted(set(u)), limit=200, epsabs=1e-13)[0])
    return np.array(out)


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_report_noisy_max_frequencies(noise):
    u = np.array([0.0, 1.0, 1.5])
    rnm = ReportNoisyMax(1.0, 1.0, noise=noise)
    if noise == "laplace":
        expected = _rnm_laplace_probabilities(u, rnm.scale)
    else:
        expected = PermuteAndFlip(1.0, 1.0).probabilities(u)
    assert expected.sum() == pytest.approx(1.0, abs=1e-9)
    g = rng(51 if noise == "laplace" else 52)
    n = 30_000
    counts = np.bincount([rnm.select(u, g) for _ in range(n)], minlength=3)
    assert stats.chisquare(counts, expected * n).pvalue > 1e-3


def test_report_noisy_max_laplace_is_epsilon_dp_on_a_worst_case_pair():
    eps, sens = 1.0, 1.0
    scale = ReportNoisyMax(eps, sens).scale
    u = np.array([0.0, 0.0, 0.5])
    for d in ([1, -1, -1], [-1, 1, 1], [1, 1, -1], [0, 0, 1]):
        v = u + sens * np.asarray(d, dtype=float)
        p, q = _rnm_laplace_probabilities(u, scale), _rnm_laplace_probabilities(v, scale)
        assert np.abs(np.log(p / q)).max() <= eps + 1e-7


def test_selection_is_reproducible():
    u = np.linspace(0, 1, 50)
    for mech in (ExponentialMechanism(1.0, 1.0), PermuteAndFlip(1.0, 1.0), ReportNoisyMax(1.0, 1.0)):
        assert [mech.select(u, rng(3)) for _ in range(3)] == [mech.select(u, rng(3))] * 3
        g = rng(4)
        assert len({mech.select(u, g) for _ in range(50)}) > 1
        assert isinstance(mech.select(u, g), int)


# ------------------------------------------------------- smooth sensitivity
def test_smooth_laplace_constants():
    eps, delta = 0.8, 1e-7
    mech = SmoothLaplaceMechanism(eps, delta)
    assert mech.beta == pytest.approx(eps / (2 * math.log(2 / delta)), rel=1e-15)
    assert mech.scale(0.3) == pytest.approx(2 * 0.3 / eps, rel=1e-15)
    np.testing.assert_allclose(mech.scale([0.0, 1.0]), [0.0, 2.5])


def test_smooth_cauchy_constants():
    eps, gamma = 0.6, 3.0
    mech = SmoothCauchyMechanism(eps, gamma=gamma)
    assert mech.beta == pytest.approx(eps / (2 * (gamma + 1)), rel=1e-15)
    assert mech.scale(0.3) == pytest.approx(2 * (gamma + 1) * 0.3 / eps, rel=1e-15)
    assert SmoothCauchyMechanism(1.0).gamma == 4.0


@pytest.mark.parametrize("mech", [SmoothLaplaceMechanism(1.0, 1e-6), SmoothCauchyMechanism(1.0)], ids=repr)
def test_smooth_randomise_shape_and_reproducibility(mech):
    assert isinstance(mech.randomise(1.0, 0.2, rng(0)), float)
    values = np.arange(12.0).reshape(3, 4)
    out = mech.randomise(values, 0.2, rng(9))
    assert out.shape == (3, 4)
    np.testing.assert_array_equal(out, mech.randomise(values, 0.2, rng(9)))
    assert not np.array_equal(out, mech.randomise(values, 0.2, rng(10)))
    # one smooth bound per element, broadcast against the values
    per_row = mech.randomise(values, np.array([[0.0], [0.1], [0.2]]), rng(9))
    assert per_row.shape == (3, 4)
    np.testing.assert_array_equal(per_row[0], values[0])  # S = 0: no noise needed, none added
    assert mech.randomise(np.zeros(3), np.ones(3), rng(1)).shape == (3,)


def _smooth_corner_pairs(beta):
    """(shift, S_x, S_y) at the corners: S_y = e^{±beta} S_x, |f_x - f_y| <= min(S_x, S_y)."""
    for ratio in (math.exp(beta), math.exp(-beta), 1.0):
        for sign in (1.0, -1.0, 0.0):
            yield sign * min(1.0, ratio), 1.0, ratio


@pytest.mark.parametrize("eps, gamma", [(0.1, 1.5), (1.0, 2.0), (1.0, 4.0), (3.0, 8.0), (10.0, 4.0)])
def test_smooth_cauchy_is_pure_dp_on_the_worst_neighbours(eps, gamma):
    mech = SmoothCauchyMechanism(eps, gamma=gamma)

    def log_density(o, centre, s):
        b = mech.scale(s)
        return -np.log1p(np.abs((o - centre) / b) ** gamma) - np.log(b)

    o = np.concatenate([np.linspace(-200, 200, 400_001), np.geomspace(200, 1e12, 2000), -np.geomspace(200, 1e12, 2000)])
    worst = 0.0
    for shift, s_x, s_y in _smooth_corner_pairs(mech.beta):
        worst = max(worst, np.abs(log_density(o, 0.0, s_x) - log_density(o, shift, s_y)).max())
    assert worst <= eps
    assert worst >= 0.2 * eps  # the grid does reach the worst region


def _smooth_laplace_worst_delta(eps, delta):
    """Largest hockey-stick divergence D_{e^eps} over the corner pairs, by quadrature on a grid."""
    beta = eps / (2 * math.log(2 / delta))
    worst = 0.0
    for shift, s_x, s_y in _smooth_corner_pairs(beta):
        b_x, b_y = 2 * s_x / eps, 2 * s_y / eps
        span = 45 * max(b_x, b_y)  # the tails beyond carry < e**-40
        z = np.linspace(-span, span, 400_001)
        p = np.exp(-np.abs(z) / b_x) / (2 * b_x)
        q = np.exp(-np.abs(z - shift) / b_y) / (2 * b_y)
        for a, b in ((p, q), (q, p)):
            worst = max(worst, integrate.trapezoid(np.maximum(a - math.exp(eps) * b, 0.0), z))
    return worst


@pytest.mark.parametrize("eps, delta", [(0.5, 1e-6), (1.0, 1e-3), (2.0, 0.5), (5.0, 1e-6)])
def test_smooth_laplace_is_eps_delta_dp_on_the_worst_neighbours(eps, delta):
    SmoothLaplaceMechanism(eps, delta)  # accepted
    assert _smooth_laplace_worst_delta(eps, delta) <= delta


def test_smooth_laplace_refuses_epsilon_where_nrs_constants_fail():
    # At eps = 20, delta = 1e-6 the NRS constants really leak more than delta ...
    assert _smooth_laplace_worst_delta(20.0, 1e-6) > 2e-6
    # ... so the constructor refuses them, with the standard message and a way out.
    with pytest.raises(InvalidParameterError, match="SmoothCauchyMechanism") as info:
        SmoothLaplaceMechanism(20.0, 1e-6)
    assert MESSAGE.match(str(info.value))
    # Huge epsilon (beta grows with it) is refused cleanly, without overflow.
    for eps, delta in ((1e6, 1e-6), (1e6, 0.9), (1e300, 0.5), (1500.0, 1e-300)):
        with pytest.raises(InvalidParameterError):
            SmoothLaplaceMechanism(eps, delta)
    # Admissibility always holds for eps <= 2, whatever delta.
    for eps in np.linspace(0.01, 2.0, 40):
        for delta in (1e-30, 1e-12, 1e-6, 1e-2, 0.3, 2 / math.e, 0.9, 0.999999):
            SmoothLaplaceMechanism(float(eps), delta)


def test_laplace_dilation_closed_form_matches_numerical_divergence():
    # P = Lap(1) against the law of e^{-lam} Z (lam > 0) and of e^{lam} Z (lam < 0), at e^{eps/2}.
    for eps, lam in ((1.0, 0.05), (4.0, 0.6), (1.0, 0.9)):
        closed = smooth_module._laplace_dilation_delta(eps, lam)
        z = np.linspace(-60, 60, 600_001)
        p = 0.5 * np.exp(-np.abs(z))
        numeric = 0.0
        for scale in (math.exp(-lam), math.exp(lam)):
            q = np.exp(-np.abs(z) / scale) / (2 * scale)
            numeric = max(numeric, integrate.trapezoid(np.maximum(p - math.exp(eps / 2) * q, 0.0), z))
        assert closed == pytest.approx(numeric, rel=1e-4, abs=1e-12)


# ------------------------------------------------------------- properties
SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)
VALUES = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(values=hnp.arrays(np.float64, SHAPES, elements=VALUES), seed=st.integers(0, 2**32 - 1))
def test_randomise_preserves_shape(values, seed):
    for mech in (LaplaceMechanism(1.0), GaussianMechanism(1.0, 1e-6)):
        out = mech.randomise(values, rng(seed))
        assert np.shape(out) == values.shape and np.isfinite(out).all()
    for mech in (SmoothLaplaceMechanism(1.0, 1e-6), SmoothCauchyMechanism(1.0)):
        out = mech.randomise(values, 0.5, rng(seed))
        assert np.shape(out) == values.shape


UTILITIES = st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(utilities=UTILITIES, eps=st.floats(1e-3, 50.0), monotonic=st.booleans())
def test_probabilities_are_a_distribution(utilities, eps, monotonic):
    u = np.asarray(utilities)
    for mech in (ExponentialMechanism(eps, 1.0, monotonic), PermuteAndFlip(eps, 1.0, monotonic)):
        p = mech.probabilities(u)
        assert p.shape == u.shape and np.isfinite(p).all() and (p >= 0).all()
        assert abs(p.sum() - 1.0) < 1e-9
        assert p[np.argmax(u)] == pytest.approx(p.max(), rel=1e-9)
        assert 0 <= mech.select(u, rng(0)) < u.size
