"""Privacy audit (issue 4), quick seeded version: runs in the default test run.

Every random draw is seeded, so each test is deterministic; the margins are
large (correct mechanisms stay well below their claim, broken ones far
above), so a change of sampler or platform would not flip a verdict either.
The full audit is ``tests/test_audit_full.py`` (``pytest -m audit``).
"""

import math
import os
import sys

import numpy as np
import pytest

from dpglass.audit import (
    audit_learner,
    audit_mechanism,
    canary_audit,
    clopper_pearson,
    distributional_overfitting,
    model_vulnerability,
    one_run_epsilon_lower_bound,
    one_run_p_value,
    threshold_attack,
)
from dpglass.audit.cases import mechanism_cases, selection_case, smooth_selection_batch
from dpglass.audit.mechanisms import Event
from dpglass.audit.selection import literal_tables, search_selection_pairs, selection_probabilities
from dpglass.cli import main
from dpglass.models import DPRuleListClassifier, GreedyRuleListClassifier
from dpglass.models.rule_list.selection import select

sys.path.insert(0, os.path.dirname(__file__))
from audit_zoo import QUICK_FLAGGED, zoo_cases  # noqa: E402


# ------------------------------------------------------------ statistics
def test_clopper_pearson_matches_the_beta_quantiles_and_edges():
    assert clopper_pearson(0, 50, 0.05, "lower") == 0.0
    assert clopper_pearson(50, 50, 0.05, "upper") == 1.0
    assert clopper_pearson(50, 50, 0.05, "lower") == pytest.approx(0.05 ** (1 / 50))
    lo, hi = clopper_pearson(30, 100, 0.025, "lower"), clopper_pearson(30, 100, 0.025, "upper")
    assert lo < 0.3 < hi and hi - lo < 0.2


def test_lower_bound_of_an_exact_eps_mechanism_stays_below_eps():
    """Randomised response at eps = 1 is exactly eps-DP; 20 seeds never exceed 1."""
    p = math.e / (1 + math.e)

    def rr(bit, n, g):
        return np.where(g.random(n) < p, bit, 1 - bit)

    bounds = [audit_mechanism(batch=rr, d=1, d_prime=0, n_samples=20_000, claim=(1.0, 0.0), rng=s).epsilon_lower
              for s in range(20)]
    assert max(bounds) <= 1.0
    assert min(bounds) > 0.8  # and the audit has power


def test_fixed_events_use_all_samples_and_a_union_bound():
    res = audit_mechanism(batch=lambda x, n, g: x + g.laplace(0, 1.0, n), d=0.0, d_prime=1.0,
                          n_samples=50_000, events=[-1.0, 0.0, 2.0], claim=(1.0, 0.0), rng=1)
    assert res.selection == "fixed" and len(res.bounds) == 12
    assert res.bounds[0].n == 50_000
    assert 0.9 < res.epsilon_lower <= 1.0


def test_vector_outputs_are_projected():
    res = audit_mechanism(batch=lambda x, n, g: np.asarray(x) + g.laplace(0, 1.0, (n, 3)), d=[0, 0, 0],
                          d_prime=[1, 1, 1], n_samples=40_000, claim=(3.0, 0.0), rng=2)
    assert res.best.event.direction is not None
    assert 1.0 < res.epsilon_lower <= 3.0


def test_delta_enters_the_bound():
    def gauss(x, n, g):
        return x + g.normal(0, 1.0, n)

    pure = audit_mechanism(batch=gauss, d=0.0, d_prime=1.0, n_samples=40_000, rng=3)
    approx = audit_mechanism(batch=gauss, d=0.0, d_prime=1.0, n_samples=40_000, delta=0.05, rng=3)
    assert approx.epsilon_lower < pure.epsilon_lower


def test_predicate_events():
    ev = Event("predicate", func=lambda o: np.asarray(o) > 0.5, label="x > 0.5")
    res = audit_mechanism(batch=lambda x, n, g: x + g.laplace(0, 1.0, n), d=0.0, d_prime=1.0,
                          n_samples=20_000, events=[ev], rng=0)
    assert str(res.best.event) == "x > 0.5" and res.epsilon_lower > 0


# ------------------------------------------------------ library mechanisms
@pytest.mark.parametrize("name", sorted(mechanism_cases()))
def test_every_dpglass_mechanism_passes_its_quick_audit(name):
    case = mechanism_cases()[name]
    res = case.run(case.quick_samples, rng=0)
    assert res.verdict == "PASS", res.summary()


def test_the_errors_pf_audit_has_power_on_its_pair():
    """On the default pair errors-pf's output law does not move (lower bound 0 at any number of runs, helper-26):
    its own pair must show a clear part of the claimed epsilon, and a claim below that part must fail."""
    case = mechanism_cases()["selection/errors-pf"]
    res = case.run(rng=3)
    assert res.verdict == "PASS" and 0.3 < res.epsilon_lower <= 1.0, res.summary()
    import dataclasses

    weaker = dataclasses.replace(case, claim=(0.2, 0.0))  # claimed at a fifth of its epsilon: must be caught
    assert weaker.run(rng=3).verdict != "PASS"


@pytest.mark.parametrize("mechanism", ["smooth-laplace", "smooth-cauchy"])
def test_vectorised_smooth_selection_is_select_bit_for_bit(mechanism):
    cells = np.array([[3, 1], [0, 4], [5, 0], [2, 2]])
    c0, c1, n0, n1 = literal_tables(cells, 2)
    batch = smooth_selection_batch(mechanism, epsilon=1.0, delta=1e-3, min_support=2)
    for seed in range(20):
        want, _ = select(mechanism, c0=c0, c1=c1, n0=n0, n1=n1, n_hat=0.0, margin=0.0, epsilon=1.0, delta=1e-3,
                         min_support=2, gamma=4.0, variant="corrected", rng=np.random.default_rng(seed))
        got = batch((c0, c1, n0, n1), 1, np.random.default_rng(seed))
        assert int(got[0]) == want


@pytest.mark.parametrize("mechanism", ["smooth-laplace", "smooth-cauchy", "global-laplace", "exponential"])
def test_exact_selection_probabilities_match_select(mechanism):
    cells = np.array([[1, 0], [0, 0], [0, 0], [0, 2]])
    c0, c1, n0, n1 = literal_tables(cells, 2)
    p = selection_probabilities(mechanism, c0=c0, c1=c1, n0=n0, n1=n1, epsilon=2.0, delta=1e-3)
    assert p.sum() == pytest.approx(1.0, abs=1e-6)
    g = np.random.default_rng(5)
    draws = [select(mechanism, c0=c0, c1=c1, n0=n0, n1=n1, n_hat=0.0, margin=0.0, epsilon=2.0, delta=1e-3,
                    min_support=1, gamma=4.0, variant="corrected", rng=g)[0] for _ in range(4000)]
    freq = np.bincount(draws, minlength=p.size) / 4000
    assert np.max(np.abs(freq - p)) < 0.03


def test_pair_search_finds_no_violation_for_the_exponential_mechanism():
    best = search_selection_pairs("exponential", epsilon=1.0, max_count=2, n_random=6, n_climb=6, rng=0)
    assert best.delta_at_claim < 1e-12 and best.max_log_ratio <= 1.0


# -------------------------------------------------------------------- zoo
@pytest.mark.parametrize("name", QUICK_FLAGGED)
def test_zoo_entry_is_flagged(name):
    case = zoo_cases()[name]
    res = case.run(case.quick_samples, rng=0)
    assert res.violation, res.summary()
    assert res.epsilon_lower > 1.1 * case.claim[0]  # a clear margin, not a coin flip


# --------------------------------------------------------------- learners
def _tiny():
    rng = np.random.default_rng(0)
    X = (rng.random((16, 2)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(16) < 0.1)).astype(np.uint8)
    return X, y


def test_audit_learner_passes_the_dp_rule_list():
    X, y = _tiny()
    est = DPRuleListClassifier(epsilon=4.0, mechanism="certified-pf", max_length=1, max_card=1, min_support=0.0)
    res = audit_learner(est, X, y, n_runs=400, rng=0)
    assert res.verdict == "PASS"
    assert res.claim == (4.0, pytest.approx(1e-8))  # delta=None: the public default, not 1/n^2
    assert res.record[0] == "remove" and res.proxy


def test_audit_learner_flags_a_non_private_learner():
    # tied rows: removing one record flips the deterministic greedy list's predictions
    X = np.array([[1, 0]] * 4 + [[0, 1]] * 4 + [[1, 1]] * 2 + [[0, 0]] * 2, dtype=np.uint8)
    y = np.array([1] * 4 + [0] * 4 + [1, 0] + [0, 1], dtype=np.uint8)
    res = audit_learner(GreedyRuleListClassifier(max_length=2, max_card=1, min_support=0.0), X, y,
                        n_runs=100, claim=(1.0, 0.0), n_candidates=8, n_pilot=2, rng=0)
    assert res.violation and res.epsilon_lower > 2, res.summary()


def test_audit_learner_add_one_and_explicit_neighbour():
    X, y = _tiny()
    est = DPRuleListClassifier(epsilon=2.0, mechanism="exponential", max_length=1, max_card=1, min_support=0.0)
    assert audit_learner(est, X, y, neighbour="add-one", n_runs=150, rng=0).record[0] == "add"
    res = audit_learner(est, X, y, neighbour=(X[1:], y[1:]), n_runs=150, rng=0)
    assert res.neighbour == "given explicitly" and res.claim == (2.0, 0.0)


# ------------------------------------------------------ membership tools
def test_distributional_overfitting_of_a_memorising_split():
    # training records of label 1 all in rule 0, held-out ones all in rule 1
    v = distributional_overfitting([0, 0, 2], [1, 1, 0], [1, 1, 2], [1, 1, 0])
    assert v.tau[1] == 1.0 and v.tau[0] == 0.0
    assert v.vulnerability == pytest.approx(0.5 + 0.5 * (4 / 6))


def test_model_vulnerability_of_a_rule_list():
    X, y = _tiny()
    model = GreedyRuleListClassifier(max_length=2, min_support=0.0).fit(X[:8], y[:8])
    v = model_vulnerability(model, X[:8], y[:8], X[8:], y[8:])
    assert 0.5 <= v.vulnerability <= 1.0


def test_threshold_attack_roc():
    rng = np.random.default_rng(0)
    res = threshold_attack(rng.normal(2, 1, 2000), rng.normal(0, 1, 2000), fprs=(0.01, 0.1))
    assert 0.9 < res.auc < 0.95
    assert 0.1 < res.tpr_at_fpr[0.01] < res.tpr_at_fpr[0.1] < 0.8
    assert res.fpr[0] == 0.0 and res.tpr[-1] == 1.0


def test_one_run_bound_is_the_binomial_tail_for_pure_dp():
    from scipy import stats

    assert one_run_p_value(500, 100, 80, 1.0) == pytest.approx(stats.binom.sf(79, 100, math.e / (1 + math.e)))
    assert one_run_p_value(500, 100, 80, 1.0, delta=1e-3) > one_run_p_value(500, 100, 80, 1.0)
    assert one_run_epsilon_lower_bound(100, 100, 100) > one_run_epsilon_lower_bound(100, 100, 90) > 0


def test_one_run_canary_audit_of_randomised_response():
    """The 'model' reveals each canary's membership through randomised response at eps.

    The one-run bound is valid (<= eps) and has power (> eps / 2) with 4000 canaries.
    """
    eps = 1.0
    p = math.e / (1 + math.e)
    rng = np.random.default_rng(7)
    Xc = np.arange(4000).reshape(-1, 1)
    yc = np.zeros(4000)

    def train(X_tr, y_tr):
        present = set(X_tr[:, 0].tolist())
        flip = rng.random(4000) >= p
        return np.array([(i in present) != f for i, f in enumerate(flip)])

    res = canary_audit(train, np.empty((0, 1)), np.empty(0), Xc, yc, lambda model, X, y: model.astype(float),
                       k_plus=1000, k_minus=1000, claim=(eps, 0.0), rng=1)
    assert eps / 2 < res.epsilon_lower <= eps
    assert not res.violation


def test_one_run_canary_audit_flags_a_memoriser():
    Xc = np.arange(400).reshape(-1, 1)

    def train(X_tr, y_tr):
        return set(X_tr[:, 0].tolist())

    res = canary_audit(train, np.empty((0, 1)), np.empty(0), Xc, np.zeros(400),
                       lambda model, X, y: np.array([float(x in model) for x in X[:, 0]]),
                       k_plus=100, k_minus=100, claim=(1.0, 0.0), rng=0)
    assert res.correct == 200 and res.violation and res.epsilon_lower > 3


# -------------------------------------------------------------------- CLI
def test_cli_audit_mechanism(capsys):
    assert main(["audit", "--model", "laplace", "--runs", "20000", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "claimed: (1, 0)-DP" in out and "PASS" in out and "95% confidence" in out


def test_cli_audit_estimator(capsys):
    code = main(["audit", "--model", "dp-rule-list", "--mechanism", "global-laplace", "--runs", "150", "--seed", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "PASS" in out and "neighbour:" in out


def test_cli_audit_rejects_unknown_model(capsys):
    assert main(["audit", "--model", "no-such-thing"]) == 2
    assert "Unknown model" in capsys.readouterr().err


def test_cli_audit_list(capsys):
    assert main(["audit", "--list"]) == 0
    assert "selection/smooth-laplace" in capsys.readouterr().out


def test_selection_case_claims():
    assert selection_case("certified-pf", epsilon=0.5, delta_t=1e-4).claim == (1.0, 1e-4)
    assert selection_case("smooth-cauchy").claim == (1.0, 0.0)
    assert selection_case("smooth-laplace").guarantee == "paper-claim"


# ------------------------------------------------ multiclass learners (issue 31)
from dpglass.registry import list_estimators  # noqa: E402

#: Every private registered model that learns K classes (a family joins when it raises ``_max_classes``).
MULTICLASS_PRIVATE = [s for s in list_estimators(private=True) if s.cls._max_classes > 2]


def _tiny_three_class(n=24, seed=0):
    """24 records, 3 features, labels 0, 1, 2 (8 each): x0 says 'class 1', x1 says 'class 2', mostly."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = (rng.random((n, 3)) < 0.5).astype(np.uint8)
    X[:, 0] = np.where(rng.random(n) < 0.85, y == 1, X[:, 0])
    X[:, 1] = np.where(rng.random(n) < 0.85, y == 2, X[:, 1])
    return X, y


def _lone_third_class_record(X, y) -> int:
    """The pair's removed record: one of class 2 alone in its row (seed 0: row (0, 1, 0)), the most revealing."""
    return next(i for i in np.flatnonzero(y == 2) if (X == X[i]).all(axis=1).sum() == 1)


def _three_class_estimator(spec, epsilon):
    """The registered model at ``epsilon``, its label set declared (public), smallest settings (as dpglass audit)."""
    params = {**spec.test_params, "epsilon": epsilon}
    accepted = spec.cls().get_params()
    if "classes" in accepted:
        params["classes"] = [0, 1, 2]
    for name, value in (("max_length", 1), ("max_card", 1), ("min_support", 0.0)):
        if name in accepted:
            params[name] = value
    return spec.make(**params)


@pytest.mark.filterwarnings("ignore::dpglass.exceptions.UnprovenGuaranteeWarning")  # DP-Bag says it is a claim
@pytest.mark.parametrize("spec", MULTICLASS_PRIVATE, ids=lambda s: s.name)
def test_multiclass_learner_passes_its_quick_audit_on_a_three_class_pair(spec):
    """The whole fit as a black box on a tiny 3-class pair (a lone record of the third class removed), 60 runs a
    side at epsilon = 1: enough to flag an output that is a deterministic function of the data (the power test
    below)."""
    X, y = _tiny_three_class()
    drop = _lone_third_class_record(X, y)
    res = audit_learner(_three_class_estimator(spec, 1.0), X, y, neighbour=drop, n_runs=60, rng=0)
    assert res.verdict == "PASS", res.summary()


class _Memoriser:
    """Non-private: the majority label of each distinct row (a scikit-learn-style estimator with no parameters)."""

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, X, y):
        X, y = np.asarray(X), np.asarray(y)
        self.classes_ = np.unique(y)
        self.table_ = {}
        for row in np.unique(X, axis=0):
            values, counts = np.unique(y[(X == row).all(axis=1)], return_counts=True)
            self.table_[tuple(row)] = values[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.array([self.table_.get(tuple(r), self.classes_[0]) for r in np.asarray(X)])


def test_the_three_class_audit_flags_a_memoriser():
    """Power: the quick audit's pair and runs flag a learner whose output is a function of the data, and so does
    the full audit's neighbour search."""
    X, y = _tiny_three_class()
    res = audit_learner(_Memoriser(), X, y, neighbour=_lone_third_class_record(X, y), n_runs=60, claim=(1.0, 0.0),
                        rng=0)
    assert res.violation and res.epsilon_lower > 1.1, res.summary()
    searched = audit_learner(_Memoriser(), X, y, n_runs=60, claim=(1.0, 0.0), n_candidates=6, n_pilot=2, rng=0)
    assert searched.violation and searched.record[2] == 2, searched.summary()


@pytest.mark.audit
@pytest.mark.filterwarnings("ignore::dpglass.exceptions.UnprovenGuaranteeWarning")
@pytest.mark.parametrize("spec", MULTICLASS_PRIVATE, ids=lambda s: s.name)
def test_multiclass_learner_full_audit_on_a_three_class_pair(spec):
    """``-m audit``: epsilon = 8 (as the binary estimators' full audit), 2,000 runs a side, the neighbour chosen
    by a pilot among the rarest cells of all three classes."""
    X, y = _tiny_three_class()
    res = audit_learner(_three_class_estimator(spec, 8.0), X, y, n_runs=2000, n_candidates=6, n_pilot=40, rng=8)
    assert res.verdict == "PASS", res.summary()
