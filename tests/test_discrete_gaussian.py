"""The exact discrete Gaussian sampler, its mechanism, and Gaussian class counts in rule lists."""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpglass.exceptions import InvalidParameterError, ModelFileError
from dpglass.models import DPRuleListClassifier, load_model
from dpglass.privacy import rdp
from dpglass.privacy.accounting import calibrate, compose
from dpglass.privacy.discrete_gaussian import (
    _uniform_below, bernoulli_exp_rational, discrete_gaussian, variance_parameter,
)
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import DiscreteGaussianMechanism
from dpglass.privacy.mechanisms.gaussian import zcdp_epsilon


def _pmf(sigma, support):
    s2 = float(variance_parameter(sigma))
    w = np.exp(-support.astype(float) ** 2 / (2 * s2))
    return w / w.sum()


@pytest.mark.parametrize("sigma", [0.6, 2.5, 7.0])
def test_discrete_gaussian_matches_its_pmf_by_chi_square(sigma):
    z = discrete_gaussian(sigma, 30_000, np.random.default_rng(int(sigma * 10)))
    assert z.dtype == np.int64
    top = int(4 * sigma) + 1
    support = np.arange(-top, top + 1)
    p = _pmf(sigma, np.arange(-60 * top, 60 * top + 1))
    inner = p[60 * top - top: 60 * top + top + 1]
    observed = np.array([np.sum(z == k) for k in support] + [np.sum(np.abs(z) > top)])
    expected = np.append(inner, 1 - inner.sum()) * len(z)
    keep = expected > 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    exp *= obs.sum() / exp.sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-4


def test_a_biased_sampler_fails_the_same_check():
    """The chi-square check has power: a sampler at 1.15 sigma is rejected."""
    z = discrete_gaussian(2.5 * 1.15, 30_000, np.random.default_rng(25))
    support = np.arange(-11, 12)
    p = _pmf(2.5, np.arange(-600, 601))[600 - 11: 600 + 12]
    obs = np.append([np.sum(z == k) for k in support], np.sum(np.abs(z) > 11))
    exp = np.append(p, 1 - p.sum()) * len(z)
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue < 1e-6


def test_variance_parameter_rounds_up_exactly():
    for sigma in (0.1, 1 / 3, 16.48, 2.0**20 + 0.3):
        s = variance_parameter(sigma)
        assert s >= Fraction(sigma) ** 2 and s - Fraction(sigma) ** 2 < Fraction(1, 2**24)
        assert s.denominator <= 2**24
    with pytest.raises(InvalidParameterError, match="sigma"):
        variance_parameter(float("inf"))


def test_exact_helpers_are_uniform_and_have_the_right_bias():
    rng = np.random.default_rng(3)
    m = (1 << 70) + 12345  # the multi-word path
    draws = np.array([_uniform_below(m, rng) / m for _ in range(4000)], dtype=float)
    assert stats.kstest(draws, "uniform").pvalue > 1e-4
    hits = sum(bernoulli_exp_rational(Fraction(7, 5), rng) for _ in range(20_000))
    assert hits / 20_000 == pytest.approx(math.exp(-1.4), abs=4 * math.sqrt(0.25 / 20_000))


def test_mechanism_states_its_zcdp_conversion_and_releases_integers():
    mech = DiscreteGaussianMechanism(4.0, 1e-6)
    assert mech.epsilon == pytest.approx(rdp.to_epsilon(rdp.gaussian(rdp.ORDERS, 4.0, 1.0), 1e-6))
    assert mech.curve == {"kind": "discrete-gaussian", "sigma": 4.0, "sensitivity": 1}
    out = mech.randomise(np.array([3, 5]), np.random.default_rng(0))
    assert out.dtype == np.int64 and isinstance(mech.randomise(2, np.random.default_rng(0)), int)
    with pytest.raises(InvalidParameterError, match="integers"):
        mech.randomise(0.5, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError):
        DiscreteGaussianMechanism(0.0, 1e-6)


def test_gaussian_entries_are_charged_by_their_curve_alone_under_rdp():
    mech = DiscreteGaussianMechanism(8.0, 1e-7)
    e = LedgerEntry("c", "discrete gaussian", epsilon=mech.epsilon, delta=mech.delta, curve=mech.curve)
    want = rdp.to_epsilon(20 * rdp.gaussian(rdp.ORDERS, 8.0, 1.0), 1e-6)
    assert compose([e] * 20, "rdp", 1e-6)[0] == pytest.approx(want)


def test_calibration_searches_below_the_basic_split_when_entries_state_more():
    """A Gaussian entry states (epsilon, delta) above x: the basic split alone would overspend."""
    def plan(x):
        mech = DiscreteGaussianMechanism(1.0 / x, 1e-8)
        gauss = LedgerEntry("c", "dg", epsilon=mech.epsilon, delta=mech.delta, curve=mech.curve)
        pure = LedgerEntry("s", "pf", epsilon=x)
        return [gauss] * 6 + [pure] * 10

    for acct in ("pld", "rdp"):
        x = calibrate(plan, 1.0, 1e-6, acct)
        assert compose(plan(x), acct, 1e-6)[0] <= 1.0
        assert compose(plan(x * 1.01), acct, 1e-6)[0] > 1.0 or x * 1.01 > 1.0


@pytest.fixture()
def gaussian_list(binary_data, tmp_path):
    X, y = binary_data
    est = DPRuleListClassifier(epsilon=1.0, delta=1e-6, max_length=5, mechanism="certified-pf", count_noise="gaussian",
                               random_state=0)
    est.fit(X, y)
    est.save(tmp_path / "m.json")
    return est, tmp_path / "m.json", X


def test_gaussian_class_counts_stay_within_budget_and_verify(gaussian_list):
    est, path, X = gaussian_list
    eps, delta = est.privacy_ledger_.total()
    assert eps <= 1.0 and delta <= 1e-6
    kinds = {e.mechanism for e in est.privacy_ledger_.entries}
    assert "discrete gaussian" in kinds and "discrete laplace" in kinds  # remaining counts stay Laplace
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


def test_an_edited_gaussian_sigma_is_refused(gaussian_list):
    _, path, _ = gaussian_list
    data = json.loads(path.read_text())
    entry = next(e for e in data["privacy_ledger"]["entries"] if e["mechanism"] == "discrete gaussian")
    entry["curve"]["sigma"] *= 4  # claims four times the noise: composes to less
    entry["scale"] *= 4
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="curve"):
        load_model(path)


@pytest.mark.parametrize("kw", [dict(delta=0.0), dict(accountant="basic")])
def test_gaussian_counts_need_delta_and_a_tight_accountant(kw, binary_data):
    X, y = binary_data
    with pytest.raises(InvalidParameterError, match="count_noise"):
        DPRuleListClassifier(epsilon=1.0, count_noise="gaussian", mechanism="local-pf",
                             **{"delta": 1e-6, **kw}).fit(X, y)


def test_zcdp_epsilon_is_above_the_exact_gaussian_epsilon():
    """The stated pair is valid: it is at least the analytic (exact) epsilon of a continuous Gaussian of that sigma."""
    from dpglass.privacy.mechanisms.gaussian import _analytic_gaussian_sigma

    eps = zcdp_epsilon(5.0, 1, 1e-6)
    assert _analytic_gaussian_sigma(eps, 1e-6, 1.0) <= 5.0
