"""Tight accounting (issue 16, first slice): PLD composition against closed forms, calibration, ledgers."""

import math

import numpy as np
import pytest
from scipy import special

from dpglass.models import DPRuleListClassifier, SmoothBoostClassifier, load_model
from dpglass.models.boosting import per_round_epsilon, pld_round_epsilon
from dpglass.privacy.accounting import calibrate, compose
from dpglass.privacy.ledger import LedgerEntry, PrivacyLedger


def _dl(eps):
    return LedgerEntry("count", "discrete laplace", epsilon=eps,
                       curve={"kind": "discrete-laplace", "parameter": eps, "sensitivity": 1})


def test_k_fold_laplace_matches_dp_accounting_and_beats_basic():
    # the reference: 39 Laplace releases at 1/39 compose to about 0.63 at delta = 1e-6
    lap = LedgerEntry("x", "laplace", epsilon=1 / 39, curve={"kind": "laplace", "scale": 39.0, "sensitivity": 1.0})
    eps, delta = compose([lap] * 39, "pld", 1e-6)
    assert 0.61 < eps < 0.65 and delta == 1e-6
    assert compose([lap] * 39, "basic", 1e-6) == pytest.approx((1.0, 0.0))


def _gaussian_delta(eps, sigma):  # Balle & Wang 2018, Thm 8, sensitivity 1
    return special.ndtr(1 / (2 * sigma) - eps * sigma) - math.exp(eps) * special.ndtr(-1 / (2 * sigma) - eps * sigma)


@pytest.mark.parametrize("sigma", [0.8, 2.0, 5.0])
def test_gaussian_curve_matches_the_analytic_formula(sigma):
    g = LedgerEntry("g", "gaussian", epsilon=10.0, delta=0.5, curve={"kind": "gaussian", "sigma": sigma,
                                                                    "sensitivity": 1.0})
    for delta in (1e-3, 1e-6):
        eps, _ = compose([g], "pld", delta)
        # PLD is pessimistic: its epsilon is an upper bound, within the discretisation of the exact one
        assert _gaussian_delta(eps, sigma) <= delta * (1 + 1e-6)
        assert _gaussian_delta(eps - 0.01, sigma) > delta


def test_pure_entries_never_compose_above_basic_and_zero_delta_is_basic():
    pure = LedgerEntry("s", "exponential", epsilon=0.05)
    assert compose([pure] * 40, "pld", 1e-6)[0] <= 2.0
    assert compose([pure] * 40, "pld", 0.0) == pytest.approx((2.0, 0.0))


def test_calibration_hits_the_target_within_tolerance():
    def plan(x):
        return [_dl(x)] * 21 + [LedgerEntry("sel", "pf", epsilon=x, delta=1e-9)] * 10

    for eps in (0.3, 1.0, 4.0):
        x = calibrate(plan, eps, 1e-6, "pld")
        assert compose(plan(x), "pld", 1e-6)[0] <= eps * (1 + 1e-9)
        assert compose(plan(x * 1.01), "pld", 1e-6)[0] > eps  # within 1% of the largest feasible
        assert x >= eps / 31


def test_ledger_never_exceeds_its_budget_under_pld():
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-6, accountant="pld")
    x = calibrate(lambda v: [_dl(v)] * 50, 1.0, 1e-6, "pld")
    for _ in range(50):
        ledger.spend("c", "discrete laplace", epsilon=x, curve={"kind": "discrete-laplace", "parameter": x,
                                                              "sensitivity": 1})
    assert ledger.total()[0] <= 1.0 * (1 + 1e-9) and x > 1.0 / 50 * 1.5
    with pytest.raises(Exception, match="above the budget"):
        for _ in range(30):
            ledger.spend("c", "discrete laplace", epsilon=x, curve={"kind": "discrete-laplace", "parameter": x,
                                                                  "sensitivity": 1})


def test_pld_rounds_are_larger_than_advanced_composition():
    for eps, delta, k in ((1.0, 1e-5, 99), (0.4, 1e-6, 49)):
        assert pld_round_epsilon(eps, delta, k) > per_round_epsilon(eps, delta, k)[0]


@pytest.mark.parametrize("model", ["rule-list", "stumps", "trees"])
def test_models_with_the_pld_accountant_stay_within_budget_and_verify(model, tmp_path, binary_data):
    X, y = binary_data
    if model == "rule-list":
        est = DPRuleListClassifier(epsilon=1.0, max_length=10, accountant="pld", random_state=0)
    else:
        est = SmoothBoostClassifier(epsilon=1.0, delta=1e-5, n_rounds=20, accountant="pld",
                                    weak_learner="stump" if model == "stumps" else "tree", tree_nodes=2,
                                    random_state=0)
    est.fit(X, y)
    eps, delta = est.privacy_ledger_.total()
    assert eps <= 1.0 * (1 + 1e-9) and est.privacy_ledger_.accountant == "pld"
    est.save(tmp_path / "m.json")
    assert load_model(tmp_path / "m.json").privacy_ledger_.total() == (eps, delta)


def test_an_edited_curve_that_claims_more_noise_is_refused(tmp_path, binary_data):
    import json

    from dpglass.exceptions import ModelFileError

    X, y = binary_data
    DPRuleListClassifier(epsilon=1.0, max_length=10, accountant="pld", random_state=0).fit(X, y).save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    data["privacy_ledger"]["entries"][0]["curve"]["parameter"] /= 10
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="curve"):
        load_model(tmp_path / "m.json")
