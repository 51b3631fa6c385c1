"""PrivateGridSearch with default candidates, DP-GBDT and DPPipeline (issue 26, item 12)."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.exceptions import InvalidParameterError, ModelFileError
from dpglass.models import (
    DPGradientBoostingClassifier,
    DPPipeline,
    DPRuleListClassifier,
    PrivateGridSearch,
    load_model,
)
from dpglass.privacy.ledger import RELATIVE_TOLERANCE


@pytest.fixture(scope="module")
def bits():
    rng = np.random.default_rng(11)
    X = (rng.random((800, 5)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(800) < 0.1)).astype(int)
    return X, y


def _within(ledger, epsilon, delta):
    eps, dlt = ledger.total()
    return eps <= epsilon * (1 + RELATIVE_TOLERANCE) and dlt <= delta * (1 + RELATIVE_TOLERANCE)


# ------------------------------------------------------- default candidates
def test_the_default_rule_list_is_searched_as_a_pure_candidate(bits, tmp_path):
    """DPRuleListClassifier() has delta=None, but errors-pf is pure: the search runs it with delta=0."""
    X, y = bits
    search = PrivateGridSearch(DPRuleListClassifier(), {"max_length": [2, 3]}, epsilon=1.0, random_state=0).fit(X, y)
    assert _within(search.privacy_ledger_, 1.0, 0.0) and search.privacy_ledger_.total()[1] == 0
    assert search.best_estimator_.delta == 0 and search.best_estimator_.privacy_ledger_.total()[1] == 0
    search.save(tmp_path / "s.json")
    np.testing.assert_array_equal(load_model(tmp_path / "s.json").predict(X), search.predict(X))


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_a_candidate_that_would_spend_delta_is_refused_before_any_run(bits, delta, monkeypatch):
    X, y = bits
    fits = []
    monkeypatch.setattr(DPRuleListClassifier, "fit", lambda self, *a, **k: fits.append(1))
    # delta = 0: the search's pure theorem; delta > 0: certified-pf's certification has no Rényi curve
    match = ("needs delta > 0; give the search a delta > 0 or choose a pure mechanism" if delta == 0
             else "Rényi curves")
    search = PrivateGridSearch(DPRuleListClassifier(mechanism="certified-pf"), {"max_length": [2, 3]},
                               epsilon=1.0, delta=delta)
    with pytest.raises(InvalidParameterError, match=match):
        search.fit(X, y)
    gauss = PrivateGridSearch(DPRuleListClassifier(), {"count_noise": ["laplace", "gaussian"]}, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=r"count_noise='gaussian'.*needs delta > 0"):
        gauss.fit(X, y)
    assert not fits and not hasattr(search, "privacy_ledger_")


def test_every_registered_private_model_fits_or_is_refused_up_front(bits):
    """Each registered private model with its defaults, in a pure search and in a delta > 0 search."""
    from dpglass.registry import list_estimators

    X, y = bits
    refused = {"dp-bag": "cannot be searched: its 'delta' cannot be 0"}  # always spends delta, no Rényi curve
    for spec in list_estimators(private=True):
        grid = {k: [v] for k, v in spec.test_params.items() if k != "epsilon"}
        for delta in (0.0, 1e-6):
            search = PrivateGridSearch(spec.make(), grid, epsilon=1.0, delta=delta, stopping_probability=0.5,
                                       random_state=0)
            if spec.name in refused:
                with pytest.raises(InvalidParameterError, match=refused[spec.name]):
                    search.fit(X, y)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X, y)
            assert _within(search.privacy_ledger_, 1.0, delta), (spec.name, delta)


# ------------------------------------------------------------------ DP-GBDT
def test_dp_gbdt_is_searched_on_its_training_records(bits, tmp_path):
    X, y = bits
    search = PrivateGridSearch(DPGradientBoostingClassifier(classes=[0, 1], delta=0), {"n_estimators": [5, 10]},
                               epsilon=1.0, random_state=0).fit(X, y)
    assert _within(search.privacy_ledger_, 1.0, 0.0)
    assert search.best_estimator_.privacy_ledger_.total()[0] <= search.run_epsilon_ * (1 + RELATIVE_TOLERANCE)
    assert search.score(X, y) > 0.8
    search.save(tmp_path / "g.json")
    np.testing.assert_array_equal(load_model(tmp_path / "g.json").predict(X), search.predict(X))
    # the same search twice: the same model (the records' order does not matter to its binned table)
    again = PrivateGridSearch(DPGradientBoostingClassifier(classes=[0, 1], delta=0), {"n_estimators": [5, 10]},
                              epsilon=1.0, random_state=0).fit(X[::-1], y[::-1])
    np.testing.assert_array_equal(again.decision_function(X), search.decision_function(X))
