"""PrivateGridSearch: private selection from private candidates (dpglass.models.selection.estimator)."""

import math
import numbers

import numpy as np
import pandas as pd
import pytest

from dpglass._validation import Interval
from dpglass.exceptions import BudgetExceededError, InvalidParameterError
from dpglass.models import DPRuleListClassifier, GreedyRuleListClassifier, SmoothBoostClassifier
from dpglass.models._base import EPSILON, RANDOM_STATE, ClassifierBase
from dpglass.models.selection.estimator import (
    PrivateGridSearch,
    expected_repetitions,
    repetition_pmf,
    sample_repetitions,
    selection_epsilon_factor,
)
from dpglass.privacy.ledger import RELATIVE_TOLERANCE, PrivacyLedger
from dpglass.privacy.rng import check_random_state


class FeatureVote(ClassifierBase):
    """Test-only pure epsilon-DP classifier: predict y from one feature (or its negation).

    The sign comes from a Laplace-noised agreement margin (sensitivity 1).
    """

    _private = True
    _parameter_constraints = {
        "epsilon": EPSILON,
        "feature": [Interval(numbers.Integral, 0, None, closed="left")],
        "random_state": RANDOM_STATE,
    }
    spend_factor = 1.0  # OverSpender sets 2: a broken estimator that overspends

    def __init__(self, *, epsilon=1.0, feature=0, random_state=None):
        self.epsilon = epsilon
        self.feature = feature
        self.random_state = random_state

    def fit(self, X, y):
        self._validate_params()
        rng = check_random_state(self.random_state)
        X01, y01 = self._check_fit_data(X, y)
        margin = 2.0 * np.count_nonzero(X01[:, self.feature] == y01) - len(y01)
        noisy = margin + rng.laplace(0.0, 1.0 / self.epsilon)
        self.sign_ = 1 if noisy >= 0 else -1
        budget = None if self.spend_factor != 1 else self.epsilon
        self.privacy_ledger_ = PrivacyLedger(epsilon=budget)
        self.privacy_ledger_.spend("sign", "laplace", epsilon=self.spend_factor * self.epsilon, sensitivity=1.0)
        return self

    def predict_proba(self, X):
        x = self._check_predict_data(X)[:, self.feature].astype(float)
        p1 = x if self.sign_ > 0 else 1.0 - x
        return np.column_stack([1.0 - p1, p1])


class OverSpender(FeatureVote):
    spend_factor = 2.0


@pytest.fixture
def feature_data():
    rng = np.random.default_rng(7)
    X = (rng.random((1500, 4)) < 0.5).astype(np.uint8)
    y = X[:, 0].copy()
    return X, y


# ------------------------------------------------------------ the law of K
@pytest.mark.parametrize("eta", [0.0, 0.4, 1.0, 2.5])
@pytest.mark.parametrize("gamma", [0.05, 0.4])
def test_repetition_law_pmf_mean_and_sampler(eta, gamma):
    ks = np.arange(1, 4000)
    pmf = repetition_pmf(ks, eta, gamma)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-10)
    assert (ks * pmf).sum() == pytest.approx(expected_repetitions(eta, gamma), rel=1e-9)
    rng = np.random.default_rng(3)
    draws = np.array([sample_repetitions(eta, gamma, rng) for _ in range(4000)])
    assert draws.min() >= 1
    freq = np.bincount(draws, minlength=6)[1:6] / draws.size
    assert np.max(np.abs(freq - pmf[:5])) < 0.03  # 4000 draws: sd <= 0.008


def test_geometric_law_is_liu_talwar_stopping():
    assert repetition_pmf([1, 2, 3], 1.0, 0.25).tolist() == pytest.approx([0.25, 0.1875, 0.140625])
    assert expected_repetitions(1.0, 0.25) == 4.0
    assert selection_epsilon_factor(1.0) == 3.0 and selection_epsilon_factor(0.0) == 2.0
    assert repetition_pmf([1, 2], 1.0, 1.0).tolist() == [1.0, 0.0]


@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0, "K=10"])
def test_best_of_random_k_meets_the_theorem_on_exact_distributions(eta):
    """Exact output laws of best-of-K for an epsilon-DP Q with 6 ordered outputs.

    A random K keeps within (2 + eta) epsilon; a known, fixed K = 10 does not
    (which is why n_runs_ is not part of the release).
    """
    eps, gamma = 0.7, 0.2
    ks = np.arange(1, 3000)
    pk = (ks == 10).astype(float) if eta == "K=10" else repetition_pmf(ks, eta, gamma)
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(200):
        p = rng.dirichlet(np.ones(6))
        q = p * np.exp(eps * (rng.random(6) - 0.5))
        q /= q.sum()
        assert np.max(np.abs(np.log(p / q))) <= eps + 1e-12  # Q is eps-DP
        laws = []
        for r in (p, q):
            cdf = np.cumsum(r)
            G = (pk[None, :] * cdf[:, None] ** ks[None, :]).sum(axis=1)  # P[best <= j]
            laws.append(np.diff(np.concatenate([[0.0], G])))
        worst = max(worst, float(np.max(np.abs(np.log(laws[0] / laws[1])))))
    if eta == "K=10":
        assert worst > 3 * eps
    else:
        assert worst <= selection_epsilon_factor(eta) * eps + 1e-9


# --------------------------------------------------------------- the ledger
@pytest.mark.parametrize(
    "method, eta, epsilon",
    [("liu-talwar", None, 1.0), ("liu-talwar", 1.0, 0.3), ("papernot-steinke", None, 2.0),
     ("papernot-steinke", 0.5, 0.7), ("papernot-steinke", 3.0, 5.0)],
)
def test_ledger_charges_the_theorem_and_never_exceeds_the_budget(feature_data, method, eta, epsilon):
    X, y = feature_data
    search = PrivateGridSearch(
        estimator=FeatureVote(), param_grid={"feature": [0, 1, 2]}, epsilon=epsilon, method=method, eta=eta,
        stopping_probability=0.3, random_state=0,
    ).fit(X, y)
    ledger = search.privacy_ledger_
    eta_ = 1.0 if method == "liu-talwar" else (0.0 if eta is None else eta)
    assert search.eta_ == eta_
    assert search.run_epsilon_ == pytest.approx(epsilon / (2 + eta_), rel=1e-12)
    assert len(ledger) == 1
    (entry,) = ledger.entries
    assert entry.epsilon == (2 + eta_) * search.run_epsilon_  # the theorem's bound, exactly
    eps, delta = ledger.total()
    assert eps <= epsilon * (1 + RELATIVE_TOLERANCE) and eps == pytest.approx(epsilon, rel=1e-12)
    assert delta == 0.0 and ledger.delta == 0.0 and ledger.epsilon == epsilon
    assert entry.guarantee == "proven" and entry.sensitivity == 1.0
    assert entry.scale == pytest.approx(1.0 / search.run_epsilon_)
    assert "Corollary 3" in entry.note and f"{search.run_epsilon_:.6g}" in entry.note
    assert ("Liu-Talwar" in entry.note) == (eta_ == 1.0)
    assert search.expected_runs_ == pytest.approx(expected_repetitions(eta_, 0.3))
    # every run stayed inside its own budget
    best_eps, best_delta = search.best_estimator_.privacy_ledger_.total()
    assert best_eps <= search.run_epsilon_ * (1 + RELATIVE_TOLERANCE) and best_delta == 0.0
    assert search.n_runs_ == len(search.results_["params"]) >= 1


def test_a_candidate_that_overspends_is_refused(feature_data):
    X, y = feature_data
    with pytest.raises(BudgetExceededError, match="run budget"):
        PrivateGridSearch(estimator=OverSpender(), param_grid={"feature": [0]}, epsilon=1.0, random_state=0).fit(X, y)


# ------------------------------------------------------------ the selection
def test_selects_the_clearly_best_candidate_at_large_epsilon(feature_data):
    X, y = feature_data
    seen_best = 0
    for seed in range(6):
        search = PrivateGridSearch(
            estimator=FeatureVote(), param_grid={"feature": [0, 1, 2, 3]}, epsilon=60.0, stopping_probability=0.1,
            random_state=seed,
        ).fit(X, y)
        tried = {p["feature"] for p in search.results_["params"]}
        if 0 in tried:
            seen_best += 1
            assert search.best_params_ == {"feature": 0}
            n_val = search.results_["noisy_correct"].size and len(y) * search.validation_fraction
            assert search.best_score_ == pytest.approx(n_val, rel=0.3)  # a noisy count, about the validation size
            assert search.score(X, y) == 1.0
        assert search.results_["selected"].sum() == 1
        assert search.results_["selected"][search.best_index_]
    assert seen_best >= 4


def test_smooth_boost_end_to_end_with_dataframe(binary_data):
    X, y = binary_data
    frame = pd.DataFrame(X, columns=[f"col_{i}" for i in range(X.shape[1])])
    search = PrivateGridSearch(
        estimator=SmoothBoostClassifier(), param_grid={"n_rounds": [1, 3], "density": [0.2, 0.5]},
        epsilon=4.0, stopping_probability=0.34, random_state=1,
    ).fit(frame, y)
    assert set(search.best_params_) == {"n_rounds", "density"}
    assert search.best_estimator_.epsilon == search.run_epsilon_
    assert list(search.feature_names_in_) == list(frame.columns)
    assert search.predict(frame).shape == (len(y),)
    assert search.predict_proba(frame).shape == (len(y), 2)
    assert search.decision_function(frame).shape == (len(y),)
    assert search.score(frame, y) > 0.6
    text = str(search)
    assert "selected:" in text and "col_" in text


def test_reproducible_with_random_state(binary_data):
    X, y = binary_data
    kw = dict(epsilon=2.0, stopping_probability=0.3)
    grid = {"n_rounds": [1, 2, 3]}
    a = PrivateGridSearch(estimator=SmoothBoostClassifier(), param_grid=grid, random_state=5, **kw).fit(X, y)
    b = PrivateGridSearch(estimator=SmoothBoostClassifier(), param_grid=grid, random_state=5, **kw).fit(X, y)
    assert a.n_runs_ == b.n_runs_ and a.best_params_ == b.best_params_
    np.testing.assert_array_equal(a.results_["noisy_correct"], b.results_["noisy_correct"])
    assert a.results_["params"] == b.results_["params"]
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    c = PrivateGridSearch(estimator=SmoothBoostClassifier(), param_grid=grid, random_state=np.random.SeedSequence(5), **kw).fit(X, y)
    np.testing.assert_array_equal(a.results_["noisy_correct"], c.results_["noisy_correct"])
    d = PrivateGridSearch(estimator=SmoothBoostClassifier(), param_grid=grid, random_state=6, **kw).fit(X, y)
    assert not np.array_equal(a.results_["noisy_correct"][:1], d.results_["noisy_correct"][:1])
    # the user's estimator and grid are never mutated
    assert a.estimator.get_params() == SmoothBoostClassifier().get_params() and grid == {"n_rounds": [1, 2, 3]}


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "estimator, grid, kwargs, match",
    [
        (FeatureVote(), {"feature": [0]}, {"epsilon": 0.0}, "'epsilon' parameter"),
        (FeatureVote(), {"feature": [0]}, {"epsilon": math.inf}, "'epsilon' parameter"),
        (FeatureVote(), {"feature": [0]}, {"delta": 1.0}, r"'delta' parameter .* must be a float in \[0, 1\)"),
        (FeatureVote(), {"feature": [0]}, {"delta": -1e-5}, r"'delta' parameter .* must be a float in \[0, 1\)"),
        (DPRuleListClassifier(mechanism="certified-pf"), {"max_length": [2]}, {"delta": 1e-6}, "Rényi curves"),
        (FeatureVote(), {"feature": [0]}, {"method": "exponential"}, "'method' parameter"),
        (FeatureVote(), {"feature": [0]}, {"stopping_probability": 0.0}, "'stopping_probability'"),
        (FeatureVote(), {"feature": [0]}, {"stopping_probability": 1.5}, "'stopping_probability'"),
        (FeatureVote(), {"feature": [0]}, {"method": "papernot-steinke", "stopping_probability": 1.0},
         r"range \(0, 1\) with method='papernot-steinke'"),
        (FeatureVote(), {"feature": [0]}, {"eta": 0.5}, "'eta' parameter .* geometric"),
        (FeatureVote(), {"feature": [0]}, {"method": "papernot-steinke", "eta": -1.0}, "'eta' parameter"),
        (FeatureVote(), {"feature": [0]}, {"validation_fraction": 1.0}, "'validation_fraction'"),
        (FeatureVote(), {"feature": [0]}, {"scoring": "roc_auc"}, "'scoring' parameter"),
        (FeatureVote(), {"feature": [0]}, {"random_state": -1}, "'random_state' parameter"),
        (FeatureVote(), {"epsilon": [1.0, 2.0]}, {}, "free of 'epsilon'"),
        (FeatureVote(), [{"feature": [0]}, {"random_state": [0]}], {}, "free of 'epsilon'"),
        (FeatureVote(), {"depth": [1]}, {}, "does not have"),
        (FeatureVote(), {"feature": []}, {}, "'param_grid' parameter .* is invalid"),
        (FeatureVote(), {"feature": 3}, {}, "'param_grid' parameter .* is invalid"),
        (FeatureVote(), [], {}, "'param_grid' parameter"),
        (FeatureVote(), "feature", {}, "'param_grid' parameter"),
        (FeatureVote(), {"feature": [-1]}, {}, "Grid point .* 'feature' parameter"),
        (SmoothBoostClassifier(), {"n_rounds": [0, 3]}, {}, "Grid point .* 'n_rounds'"),
        (GreedyRuleListClassifier(), {"max_length": [2]}, {}, "'epsilon' and 'random_state'"),
        ("SmoothBoostClassifier", {}, {}, "'estimator' parameter"),
        (DPRuleListClassifier(mechanism="certified-pf"), {"max_length": [2]}, {},
         "needs delta > 0; .*give the search a delta > 0 or choose a pure mechanism"),
    ],
)
def test_bad_parameters_raise_clear_errors_before_any_fit(feature_data, estimator, grid, kwargs, match):
    X, y = feature_data
    kwargs = {"epsilon": 1.0, **kwargs}
    search = PrivateGridSearch(estimator=estimator, param_grid=grid, **kwargs)
    with pytest.raises(InvalidParameterError, match=match):
        search.fit(X, y)
    assert not hasattr(search, "best_estimator_") and not hasattr(search, "privacy_ledger_")


def test_predict_before_fit_raises():
    from dpglass.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        PrivateGridSearch(estimator=FeatureVote(), param_grid={"feature": [0]}, epsilon=1.0).predict(np.zeros((1, 4)))


def test_estimator_sklearn_clone_and_params():
    from sklearn.base import clone

    search = PrivateGridSearch(estimator=SmoothBoostClassifier(n_rounds=2), param_grid={"density": [0.3]}, epsilon=1.0, random_state=0)
    copy = clone(search)
    assert copy.get_params()["estimator__n_rounds"] == 2 and copy.epsilon == 1.0


# ------------------------------------------------ delta > 0: the Rényi theorem
@pytest.mark.parametrize("eta", [0.0, 1.0])
def test_renyi_best_of_k_bound_holds_on_exact_distributions(eta):
    """Papernot-Steinke Theorem 2 as implemented: the exact Rényi divergence of best-of-K stays under it."""
    from dpglass.models.selection.rdp import best_of_k_rdp
    from dpglass.privacy import rdp

    gamma, ks = 0.2, np.arange(1, 3000)
    pk = repetition_pmf(ks, eta, gamma)
    a = rdp.ORDERS
    sel = (a >= 1.5) & (a <= 64)  # orders where float sums are exact enough
    rng = np.random.default_rng(5)

    def renyi(p, q):
        return np.array([math.log(np.sum(p ** o * q ** (1 - o))) / (o - 1) for o in a[sel]])

    for _ in range(50):
        u = rng.random(6)
        p = np.exp(0.4 * u) / np.exp(0.4 * u).sum()  # exponential mechanisms on neighbouring utilities
        v = u + rng.uniform(-1, 1, 6)
        q = np.exp(0.4 * v) / np.exp(0.4 * v).sum()
        run = np.zeros_like(a)
        run[sel] = np.maximum(renyi(p, q), renyi(q, p))
        run[~sel] = np.inf
        laws = []
        for r in (p, q):
            G = (pk[None, :] * np.cumsum(r)[:, None] ** ks[None, :]).sum(axis=1)
            laws.append(np.diff(np.concatenate([[0.0], G])))
        exact = np.maximum(renyi(*laws), renyi(laws[1], laws[0]))
        bound = best_of_k_rdp(run, eta, gamma, expected_repetitions(eta, gamma))[sel]
        assert np.all(exact <= bound + 1e-9)


@pytest.fixture(scope="module")
def renyi_search():
    rng = np.random.default_rng(3)
    X = (rng.random((1500, 6)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(1500) < 0.15)).astype(np.uint8)
    grid = {"n_rounds": [10, 40], "learning_rate": [0.25, 0.5]}
    common = dict(estimator=SmoothBoostClassifier(), param_grid=grid, epsilon=1.0, stopping_probability=0.25,
                  random_state=0)
    return PrivateGridSearch(delta=1e-6, **common).fit(X, y), PrivateGridSearch(**common).fit(X, y), X


def test_renyi_selection_stays_within_budget_and_spends_more_per_round(renyi_search):
    tight, pure, _ = renyi_search
    eps, delta = tight.privacy_ledger_.total()
    assert eps <= 1.0 and delta == 1e-6
    assert tight.best_estimator_.accountant == "rdp" and tight.best_estimator_.delta == 1e-6
    # the same grid point gets more per round under the Rényi theorem than under the pure one
    for params in ({"n_rounds": 10, "learning_rate": 0.25}, {"n_rounds": 40, "learning_rate": 0.25}):
        a = SmoothBoostClassifier(**params, epsilon=tight.run_epsilon_, delta=1e-6, accountant="rdp")
        b = SmoothBoostClassifier(**params, epsilon=pure.run_epsilon_)
        assert a._release_plan()[0].epsilon > 1.3 * b._release_plan()[0].epsilon


def test_renyi_selection_round_trips_and_edits_are_refused(renyi_search, tmp_path):
    import json

    from dpglass.exceptions import ModelFileError
    from dpglass.models import load_model

    tight, _, X = renyi_search
    tight.save(tmp_path / "s.json")
    np.testing.assert_array_equal(load_model(tmp_path / "s.json").predict(X), tight.predict(X))
    data = json.loads((tmp_path / "s.json").read_text())
    for edit, match in ((lambda d: d["params"].__setitem__("epsilon", d["params"]["epsilon"] * 1.5), "epsilon"),
                        (lambda d: d["selected_by"]["param_grid"][0].__setitem__("n_rounds", [40]), "best_params"),
                        (lambda d: d["selected_by"].__setitem__("stopping_probability", 0.9), "mechanism"),
                        (lambda d: d["params"].__setitem__("accountant", "pld"), "accountant"),
                        (lambda d: d["params"].__setitem__("delta", 0.01), "delta"),
                        (lambda d: d["selected_by"].__setitem__("param_grid", [{"n_rounds": [10]},
                                                                               {"learning_rate": [0.25]}]),
                         r"selected_by\.param_grid.*over the same parameters")):
        bad = json.loads(json.dumps(data))
        edit(bad)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ModelFileError, match=match):
            load_model(tmp_path / "bad.json")
