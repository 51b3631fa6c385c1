"""Tight accounting: PLD and RDP composition against closed forms and brute force, calibration, ledgers."""

import math

import numpy as np
import pytest
from scipy import special

from dpglass.models import DPRuleListClassifier, SmoothBoostClassifier, load_model
from dpglass.models.boosting.estimator import per_round_epsilon, round_budget
from dpglass.privacy import rdp
from dpglass.privacy.accounting import calibrate, choose_accountant, compose
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
        for acct in ("pld", "rdp"):
            assert round_budget(eps, delta, k, "stump", 1, acct)[0] > per_round_epsilon(eps, delta, k)[0]


#: SmoothBoostClassifier's weak learners: stumps, joint trees (the default), paper 002's top-down trees.
BOOSTED = {"stumps": dict(weak_learner="stump"), "trees": dict(weak_learner="tree"),
           "top-down-trees": dict(weak_learner="tree", tree_learner="top-down", tree_nodes=2)}


@pytest.mark.parametrize("model", ["rule-list", *BOOSTED])
def test_models_with_the_pld_accountant_stay_within_budget_and_verify(model, tmp_path, binary_data):
    X, y = binary_data
    if model == "rule-list":
        est = DPRuleListClassifier(epsilon=1.0, max_length=10, mechanism="certified-pf", accountant="pld", random_state=0)
    else:
        est = SmoothBoostClassifier(epsilon=1.0, delta=1e-5, n_rounds=20, accountant="pld", random_state=0,
                                    **BOOSTED[model])
    est.fit(X, y)
    eps, delta = est.privacy_ledger_.total()
    assert eps <= 1.0 * (1 + 1e-9) and est.privacy_ledger_.accountant == "pld"
    est.save(tmp_path / "m.json")
    assert load_model(tmp_path / "m.json").privacy_ledger_.total() == (eps, delta)


def test_an_edited_curve_that_claims_more_noise_is_refused(tmp_path, binary_data):
    import json

    from dpglass.exceptions import ModelFileError

    X, y = binary_data
    DPRuleListClassifier(epsilon=1.0, max_length=10, mechanism="certified-pf", accountant="pld", random_state=0).fit(X, y).save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    data["privacy_ledger"]["entries"][0]["curve"]["parameter"] /= 10
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="curve"):
        load_model(tmp_path / "m.json")


# ------------------------------------------------------------------ RDP curves
def _brute_rdp(p, q, a):
    return float(special.logsumexp(a * np.log(p) + (1 - a) * np.log(q)) / (a - 1))


@pytest.mark.parametrize("t,k", [(0.3, 1), (0.7, 3), (2.0, 2)])
def test_discrete_laplace_rdp_matches_a_brute_force_sum(t, k):
    z = np.arange(-int(300 / t), int(300 / t) + k + 1, dtype=float)
    log_c = math.log((1 - math.exp(-t)) / (1 + math.exp(-t)))
    p, q = np.exp(log_c - t * np.abs(z)), np.exp(log_c - t * np.abs(z - k))
    for a in (1.5, 2.0, 5.0, 12.0):
        assert rdp.discrete_laplace(np.array([a]), t, k)[0] == pytest.approx(_brute_rdp(p, q, a), rel=1e-9)


def test_pure_and_randomized_response_rdp_match_their_two_point_pairs():
    eps = 0.8
    p = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
    for a in (1.5, 3.0, 40.0):
        assert rdp.pure(np.array([a]), eps)[0] == pytest.approx(_brute_rdp(p, p[::-1], a), rel=1e-9)
    noise, m = 0.4, 5
    P = np.full(m, noise / m); P[0] += 1 - noise
    Q = np.full(m, noise / m); Q[1] += 1 - noise
    for a in (1.5, 3.0, 40.0):
        assert rdp.randomized_response(np.array([a]), noise, m)[0] == pytest.approx(_brute_rdp(P, Q, a), rel=1e-9)


def test_laplace_rdp_matches_dp_accountings_rdp_accountant():
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as ra

    orders = [1.5, 2.0, 4.0, 16.0, 64.0]
    acc = ra.RdpAccountant(orders=orders)
    acc.compose(dp_event.LaplaceDpEvent(noise_multiplier=3.0), 10)
    ours = 10 * rdp.laplace(np.array(orders), 3.0, 1.0)
    np.testing.assert_allclose(ours, acc._rdp, rtol=1e-9)


def test_gaussian_rdp_conversion_is_a_valid_and_close_bound():
    sigma, delta = 4.0, 1e-6
    eps = rdp.to_epsilon(rdp.gaussian(rdp.ORDERS, sigma, 1.0), delta)
    assert _gaussian_delta(eps, sigma) <= delta  # valid: the exact curve is below delta at that epsilon
    exact = compose([LedgerEntry("g", "gaussian", epsilon=10.0, delta=0.5,
                                 curve={"kind": "gaussian", "sigma": sigma, "sensitivity": 1.0})], "pld", delta)[0]
    assert exact <= eps < exact * 1.3  # RDP is looser than the exact curve, by a bounded factor


def test_bounded_range_composes_tighter_than_pure_under_rdp():
    em = LedgerEntry("s", "exponential", epsilon=0.05, curve={"kind": "bounded-range", "epsilon": 0.05})
    pf = LedgerEntry("s", "permute-and-flip", epsilon=0.05)
    e_em, e_pf = compose([em] * 200, "rdp", 1e-6)[0], compose([pf] * 200, "rdp", 1e-6)[0]
    assert e_em < 0.75 * e_pf < 0.75 * 10.0
    assert compose([em] * 200, "pld", 1e-6)[0] == pytest.approx(compose([pf] * 200, "pld", 1e-6)[0])


def test_rdp_charges_each_entrys_own_delta():
    e = LedgerEntry("s", "pf", epsilon=0.1, delta=1e-7)
    assert compose([e] * 10, "rdp", 1e-6)[0] < 1.0
    assert compose([e] * 10, "rdp", 1e-6 - 1e-12)[1] <= 1e-6
    # own deltas reaching the budget leave nothing to trade: basic
    assert compose([e] * 10, "rdp", 1e-6)[0] <= compose([e] * 10, "basic", 1e-6)[0]
    assert compose([e] * 10, "rdp", 5e-7) == pytest.approx((1.0, 1e-6))


def test_identical_parts_compose_as_one_part_and_unequal_parts_basically():
    def entry(part, eps=0.1):
        return LedgerEntry("x", "discrete laplace", epsilon=eps, partition="trees", part=part,
                           curve={"kind": "discrete-laplace", "parameter": eps, "sensitivity": 1})
    same = [entry(p) for p in ("a", "b") for _ in range(20)]
    one = [entry("a") for _ in range(20)]
    assert compose(same, "pld", 1e-6)[0] == pytest.approx(compose(one, "pld", 1e-6)[0])
    assert compose(same, "basic", 1e-6)[0] == pytest.approx(2.0)
    unequal = same + [entry("a", 0.3)]
    assert compose(unequal, "pld", 1e-6)[0] == pytest.approx(2.3)


def test_auto_picks_the_accountant_that_allows_more():
    def plan(x):
        return [LedgerEntry("s", "exponential", epsilon=x, curve={"kind": "bounded-range", "epsilon": x})] * 100

    x, acct = choose_accountant(plan, 1.0, 1e-6, "auto")
    assert acct == "rdp" and x == pytest.approx(calibrate(plan, 1.0, 1e-6, "rdp"))
    assert x > calibrate(plan, 1.0, 1e-6, "pld")
    assert choose_accountant(plan, 1.0, 0.0, "auto") == (0.01, "basic")


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
@pytest.mark.parametrize("model", ["rule-list-exponential", *BOOSTED])
def test_every_accountant_stays_within_budget_and_verifies(model, accountant, tmp_path, binary_data):
    X, y = binary_data
    if model.startswith("rule-list"):
        est = DPRuleListClassifier(epsilon=1.0, max_length=5, mechanism="exponential", delta=1e-6,
                                   accountant=accountant, random_state=0)
    else:
        est = SmoothBoostClassifier(epsilon=1.0, delta=1e-5, n_rounds=20, accountant=accountant, random_state=0,
                                    **BOOSTED[model])
    est.fit(X, y)
    eps, delta = est.privacy_ledger_.total()
    assert eps <= 1.0 * (1 + 1e-9) and delta <= est.privacy_ledger_.delta
    assert est.privacy_ledger_.accountant == accountant
    est.save(tmp_path / "m.json")
    assert load_model(tmp_path / "m.json").privacy_ledger_.total() == (eps, delta)


def test_the_default_accountant_is_tight_for_delta_and_basic_for_pure(binary_data):
    X, y = binary_data
    # a Gini list is tight only where that buys more than AUTO_MARGIN per release: K = 10 at (1, 1e-8),
    # not K = 5, where basic composition gives the same split and an early stop's rest to the table
    gini = DPRuleListClassifier(epsilon=1.0, mechanism="certified-pf", max_length=10, random_state=0).fit(X, y)
    assert gini.privacy_ledger_.accountant in ("pld", "rdp")
    gini = DPRuleListClassifier(epsilon=1.0, mechanism="certified-pf", random_state=0).fit(X, y)
    assert gini.privacy_ledger_.accountant == "basic"
    # errors-pf (the default) composes basically: its unused budget moves to the counts
    assert DPRuleListClassifier(epsilon=1.0, random_state=0).fit(X, y).privacy_ledger_.accountant == "basic"
    assert SmoothBoostClassifier(epsilon=1.0, n_rounds=5, random_state=0).fit(X, y).privacy_ledger_.accountant == "basic"
    assert SmoothBoostClassifier(epsilon=1.0, delta=1e-6, n_rounds=50, random_state=0).fit(
        X, y).privacy_ledger_.accountant == "rdp"


def test_a_bounded_range_curve_edited_onto_another_mechanism_is_refused(tmp_path, binary_data):
    import json

    from dpglass.exceptions import ModelFileError

    X, y = binary_data
    DPRuleListClassifier(epsilon=1.0, max_length=5, mechanism="certified-pf", accountant="rdp", random_state=0).fit(X, y).save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    sel = next(e for e in data["privacy_ledger"]["entries"] if e["release"].endswith("selection"))
    sel["curve"] = {"kind": "bounded-range", "epsilon": sel["epsilon"]}
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="curve"):
        load_model(tmp_path / "m.json")


@pytest.mark.parametrize("accountant,mechanism", [("pld", "certified-pf"), ("rdp", "exponential")])
def test_learner_audit_at_the_composed_claim_stays_under_it(accountant, mechanism):
    """The learner audit of a rule list composed tightly: its lower bound stays under the ledger's total."""
    from dpglass.audit import audit_learner

    rng = np.random.default_rng(0)
    X = (rng.random((16, 2)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(16) < 0.1)).astype(np.uint8)
    est = DPRuleListClassifier(epsilon=4.0, delta=1e-6, mechanism=mechanism, max_length=2, max_card=1,
                               min_support=0.0, accountant=accountant)
    res = audit_learner(est, X, y, n_runs=300, rng=0)
    assert res.verdict == "PASS", res.summary()
    # the claim is what the ledger composed to, at most the budget
    assert res.claim[0] <= 4.0 * (1 + 1e-9)


def test_an_integer_curve_field_edited_below_one_is_refused(tmp_path, binary_data):
    """The review's attack: sensitivity 0.9999999999 passed a relative check and truncated to 0 (free counts)."""
    import json

    from dpglass.exceptions import InvalidParameterError, ModelFileError

    X, y = binary_data
    DPRuleListClassifier(epsilon=1.0, delta=1e-6, max_length=5, mechanism="certified-pf", accountant="rdp",
                         random_state=0).fit(
        X, y).save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    for e in data["privacy_ledger"]["entries"]:
        if e.get("curve", {}) and e["curve"]["kind"] == "discrete-laplace":
            e["curve"]["sensitivity"] = 0.9999999999
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="sensitivity"):
        load_model(tmp_path / "m.json")
    bad = LedgerEntry("c", "discrete laplace", epsilon=0.1,
                      curve={"kind": "discrete-laplace", "parameter": 0.1, "sensitivity": 0.9999999999})
    with pytest.raises(InvalidParameterError, match="integer"):
        compose([bad] * 3, "rdp", 1e-6)
