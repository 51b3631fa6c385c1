"""dp-gam fixes from session 34's adversarial review (helper G's findings 1, 6, 9, 11): the count-based first
cycle's shapes are bit-reproducible on every machine, errors quote no data value, and budgets too small for the
samplers, or too costly for an explicit PLD accountant, are refused up front in the user's terms."""

import json
import math

import numpy as np
import pytest

from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass.models import DPGAMClassifier
from dpglass.models.gam.first import first_shapes, portable_log
from dpglass.models.gam.plan import gam_plan


# --------------------------------------------------------------------------- finding 1: portable first-cycle logs
def _scalar_log(x: float) -> float:
    """portable_log's algorithm, one Python float at a time (IEEE-754 double, the same steps in the same order)."""
    m, e = math.frexp(x)
    if m < 0.7071067811865476:
        m, e = m * 2.0, e - 1
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    series = [1.0 / (2 * i + 1) for i in range(12)]
    p = series[-1]
    for c in series[-2::-1]:
        p = p * z + c
    e = float(e)
    return e * 6.93147180369123816490e-01 + (e * 1.90821492927058770002e-10 + (2.0 * s) * p)


class _Pub:
    n_features, n_classes = 1, 3

    def n_bins(self, j):
        return 255


def test_first_cycle_shapes_do_not_depend_on_numpys_simd_log(monkeypatch):
    """The replayed shapes equal a scalar loop of basic float operations bit for bit, and never call np.log (whose
    last bit depends on the CPU's SIMD path: a file written on one machine was refused on another)."""
    rng = np.random.default_rng(0)
    draws = [rng.integers(-50, 10**6, 255 * 3) for _ in range(20)]
    monkeypatch.setattr(np, "log", None)
    for v in draws:
        got = first_shapes(v, _Pub(), 1.5)[0]
        T = np.maximum(v, 0).astype(np.float64).reshape(255, 3)
        total = T.sum(axis=0)
        logp = [[_scalar_log((T[b, k] + 1.5) / (total[k] + 1.5 * 255)) for k in range(3)] for b in range(255)]
        want = np.array([[row[k] - row[0] for k in (1, 2)] for row in logp])
        assert np.array_equal(got, want)


def test_portable_log_is_within_two_ulp_of_libm():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.random(20000), np.exp(rng.uniform(-700, 700, 20000)), 1 + rng.normal(0, 1e-9, 200),
                        [1.0, 0.5, 2.0, 1e-300, 5e-324, 1.7e308]])
    x = x[x > 0]
    got, want = portable_log(x), np.array([math.log(v) for v in x])
    assert portable_log(np.array([1.0]))[0] == 0.0
    assert np.all(np.abs(got - want) <= 2 * np.spacing(np.abs(want)))


def test_a_count_first_file_loads_on_a_machine_whose_log_differs_in_the_last_bit(monkeypatch):
    """A count-first file loads where np.log rounds differently (simulated: every value one ulp up, as another SIMD
    path may give): the replayed shapes take no vectorised transcendental (the plan's calibration stops at a
    relative gap of 1e-3, far from an ulp, and its ledger is compared within a relative tolerance)."""
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, (400, 6)).astype(float)
    y = (X[:, 0] + rng.random(400) > 1).astype(int)
    d = json.loads(json.dumps(DPGAMClassifier(first_cycle="counts", n_cycles=2, max_bins=16, count_share=0.25,
                                              classes=[0, 1], random_state=3).fit(X, y).to_dict()))
    real = np.log
    monkeypatch.setattr(np, "log", lambda x, *a, **k: np.nextafter(real(x, *a, **k), np.inf))
    again = DPGAMClassifier.from_dict(d)
    assert json.dumps(again.to_dict()) == json.dumps(d)


# --------------------------------------------------------------------------- finding 6: no data value in an error
def test_a_bad_code_error_quotes_no_value():
    """The error names the column and the allowed codes, not the offending value (an error may be pasted where the
    data may not, as the schema's errors say)."""
    X = np.array([[0.0], [1.0], [73.25]])
    with pytest.raises(DataValidationError, match=r"Column 0 of X .* 3 codes \(0\.\.2\)") as info:
        DPGAMClassifier(categories=[3], classes=[0, 1]).fit(X, [0, 1, 0])
    assert "73.25" not in str(info.value) and "73" not in str(info.value)


# --------------------------------------------------------------------------- finding 9: budgets below the sampler
#: Fixed sizes (the defaults may be "auto").
FIXED = {"n_cycles": 2, "first_cycle": "gradients", "max_bins": 16, "count_share": 0.25}


def gam(**kw):
    return DPGAMClassifier(**{"classes": [0, 1], **FIXED, **kw})


def _bin_data(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, (n, d)).astype(float), rng.integers(0, 2, n)


@pytest.mark.parametrize("kw, names", [
    ({"epsilon": 1e-3}, ("epsilon=0.001", "Hessian sums", "hessian_share")),
    ({"epsilon": 1e-3, "first_cycle": "counts"}, ("epsilon=0.001", "hessian_share")),
    ({"epsilon": 1e-4, "n_cycles": 0}, ("epsilon=0.0001", "class counts", "count_share")),
])
def test_a_budget_too_small_for_the_sampler_is_refused_in_the_users_terms(kw, names):
    X, y = _bin_data()
    with pytest.raises(InvalidParameterError, match="too small for its plan") as info:
        gam(random_state=0, **kw).fit(X, y)
    assert "DiscreteGaussianMechanism" not in str(info.value)
    assert all(s in str(info.value) for s in names), str(info.value)


def test_auto_sizes_below_what_rdp_certifies_are_refused_before_the_counts():
    """"auto" sizes need an RDP budget (their argument over branches); at epsilon = 1e-3, delta = 1e-8 there is none
    (the conversion's largest order, 4096, needs epsilon of about 0.0025): refused before anything is drawn."""
    X, y = _bin_data()
    auto = {"n_cycles": "auto", "first_cycle": "auto", "max_bins": "auto", "count_share": "auto"}
    with pytest.raises(InvalidParameterError, match=r"'auto' sizes .* RDP alone .* epsilon=0.001 .* raise epsilon"):
        DPGAMClassifier(classes=[0, 1], epsilon=1e-3, random_state=0, **auto).fit(X, y)
    with pytest.raises(InvalidParameterError, match="RDP alone"):
        gam_plan(DPGAMClassifier(epsilon=1e-3, **auto).get_params(), 4, 2)  # the pending plan: before the counts


def test_the_least_budget_is_the_samplers_limit_on_both_sides():
    from dpglass.models.gam.limits import MAX_SIGMA, least_budget, scales
    from dpglass.models.gam.plan import Public

    for kw in ({}, {"first_cycle": "counts"}, {"hessian_share": 0.01}, {"n_cycles": 0}):
        pub = Public.of(gam(epsilon=1e-3, **kw).get_params(), 5, 3)
        floor = least_budget(pub)
        assert max(scales(pub, floor).values()) <= MAX_SIGMA < max(scales(pub, floor * (1 - 1e-6)).values())


def test_a_budget_just_within_the_sampler_still_fits_and_verifies():
    """The smallest epsilon that plans (found by bisection on the refusal) fits and its file loads."""
    X, y = _bin_data()
    lo, hi = 1e-3, 1.0
    for _ in range(20):
        mid = math.sqrt(lo * hi)
        try:
            gam_plan(gam(epsilon=mid).get_params(), 4, 2)
            hi = mid
        except InvalidParameterError:
            lo = mid
    m = gam(epsilon=hi, random_state=0).fit(X, y)
    DPGAMClassifier.from_dict(json.loads(json.dumps(m.to_dict())))


# --------------------------------------------------------------------------- finding 11: explicit PLD's cost
def test_an_explicit_pld_accountant_with_huge_noise_is_refused_at_once():
    import time

    X, y = _bin_data()
    t = time.time()
    with pytest.raises(InvalidParameterError, match="accountant='rdp' or 'auto'") as info:
        gam(epsilon=0.01, accountant="pld", random_state=0).fit(X, y)
    assert time.time() - t < 10 and "epsilon=0.01" in str(info.value)
    with pytest.raises(InvalidParameterError, match="gradient sums.*smaller hessian_share"):
        gam(epsilon=1.0, hessian_share=0.99999, accountant="pld").fit(X, y)
    gam(epsilon=0.01, accountant="rdp", random_state=0).fit(X, y)  # RDP takes it


# --------------------------------------------------------------------------- finding 3: "auto" sizes under RDP alone
@pytest.mark.parametrize("eps", [0.05, 1.0, 8.0])
def test_every_auto_branch_converts_to_epsilon_under_rdp_alone(eps):
    """The argument over branches (docs/privacy.md, "DP-GAM", "auto" sizes) needs each branch's RDP conversion,
    not the smaller of it and the basic sum, within epsilon; so does rho*, the bound of every branch."""
    from dpglass.models.gam.limits import rdp_only_epsilon

    auto = {"n_cycles": "auto", "first_cycle": "auto", "max_bins": "auto"}
    for d, K, kw in ((4, 2, {}), (13, 3, {"bounds": [(0, 1)] * 13, "binning": "quantile"}), (3, 2, {"n_cycles": 0})):
        params = DPGAMClassifier(epsilon=eps, **{**auto, **kw}).get_params()
        for total in (0, 30, 3000, 10**6):
            counts = [total // K] * K
            plan = gam_plan(params, d, K, counts)
            assert rdp_only_epsilon([s.entry for s in plan.steps], plan.delta) <= eps


def test_auto_sizes_without_visits_plan_and_verify():
    """With "auto" sizes and n_cycles=0 the gradient branch has no release that x scales (the least budget is 0)."""
    X, y = _bin_data(400, 5)
    for eps in (0.1, 8.0):
        m = DPGAMClassifier(classes=[0, 1], epsilon=eps, n_cycles=0, first_cycle="auto", max_bins="auto",
                            count_share="auto", random_state=0).fit(X, y)
        DPGAMClassifier.from_dict(json.loads(json.dumps(m.to_dict())))


def test_the_intercept_is_checked_within_a_few_ulp_and_a_count_edit_is_still_refused():
    """The intercept takes libm's log (not bit-reproducible across machines): a file whose intercept is off by one
    ulp loads; one off by 1e-9, or a class count moved by one, is refused naming the intercept."""
    from dpglass.exceptions import ModelFileError

    X, y = _bin_data(400, 5)
    d = json.loads(json.dumps(gam(random_state=0).fit(X, y).to_dict()))
    for delta, ok in ((1, True), (-2, True), (10**6, False)):
        e = json.loads(json.dumps(d))
        v = e["intercept"][0]
        e["intercept"][0] = float(v + delta * np.spacing(abs(v)))
        if ok:
            DPGAMClassifier.from_dict(e)
        else:
            with pytest.raises(ModelFileError, match="intercept"):
                DPGAMClassifier.from_dict(e)
    e = json.loads(json.dumps(d))
    e["class_counts"][1] += 1
    with pytest.raises(ModelFileError, match="intercept"):
        DPGAMClassifier.from_dict(e)
