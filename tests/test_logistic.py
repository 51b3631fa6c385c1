"""DPLogisticRegression: objective perturbation (CMS 2011, Algorithm 2)."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass.models.logistic import DPLogisticRegression, _augment
from dpglass.privacy.objective_perturbation import objective_perturbation_calibration, sample_objective_noise


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    X = (rng.random((3000, 6)) < 0.5).astype(np.uint8)
    logits = 2.0 * X[:, 0] - 1.5 * X[:, 1] + 0.5 * X[:, 2] - 0.3
    y = (rng.random(3000) < 1 / (1 + np.exp(-logits))).astype(np.uint8)
    return X, y


def test_calibration_formulas():
    eps_b, extra = objective_perturbation_calibration(1.0, 1000, 0.01, c=0.25)
    ratio = 0.25 / (1000 * 0.01)
    assert eps_b == pytest.approx(1.0 - math.log(1 + 2 * ratio + ratio**2)) and extra == 0.0
    # tiny budget: the extra regulariser brings the Jacobian term down to epsilon/2
    eps_b, extra = objective_perturbation_calibration(0.05, 50, 0.001, c=0.25)
    assert eps_b == 0.025
    total_reg = 0.001 + extra
    assert 2 * math.log1p(0.25 / (50 * total_reg)) == pytest.approx(0.05 / 2)
    with pytest.raises(InvalidParameterError):
        objective_perturbation_calibration(0.0, 10, 0.1)


def test_noise_distribution():
    """||b|| ~ Gamma(d, 2/eps'), direction uniform: check means (seeded, loose tolerances)."""
    rng = np.random.default_rng(0)
    d, eps = 4, 0.5
    draws = np.array([sample_objective_noise(d, eps, rng) for _ in range(20000)])
    norms = np.linalg.norm(draws, axis=1)
    assert norms.mean() == pytest.approx(d * 2 / eps, rel=0.02)
    assert norms.var() == pytest.approx(d * (2 / eps) ** 2, rel=0.05)
    assert np.all(np.abs((draws / norms[:, None]).mean(axis=0)) < 0.02)


def test_ledger_and_optimality(data):
    X, y = data
    clf = DPLogisticRegression(epsilon=0.8, random_state=0).fit(X, y)
    assert clf.privacy_ledger_.total() == (0.8, 0.0)
    assert clf.privacy_ledger_.guarantee == "proven"
    (entry,) = clf.privacy_ledger_.entries
    assert entry.mechanism == "objective-perturbation" and "CMS 2011" in entry.note
    assert clf.optimality_ <= 1e-8
    assert clf.n_features_used_ == X.shape[1]


def test_huge_epsilon_matches_nonprivate_solution(data):
    X, y = data
    n = len(y)
    alpha = 1e-3
    clf = DPLogisticRegression(epsilon=1e9, alpha=alpha, random_state=0).fit(X, y)
    Z = _augment(X, True, math.sqrt(X.shape[1] + 1))
    ref = LogisticRegression(C=1 / (n * alpha), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(Z, y)
    norm = math.sqrt(X.shape[1] + 1)
    np.testing.assert_allclose(clf.coef_, ref.coef_[0, :-1] / norm, atol=1e-4)
    assert clf.intercept_ == pytest.approx(ref.coef_[0, -1] / norm, abs=1e-4)
    assert clf.score(X, y) > 0.7


def test_reproducible_and_seed_dependent(data):
    X, y = data
    a = DPLogisticRegression(epsilon=0.5, random_state=1).fit(X, y)
    b = DPLogisticRegression(epsilon=0.5, random_state=1).fit(X, y)
    c = DPLogisticRegression(epsilon=0.5, random_state=2).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.allclose(a.coef_, c.coef_)


def test_rows_scaled_to_unit_norm():
    X = np.array([[1, 1, 1, 1], [1, 0, 0, 0], [0, 0, 0, 0]], dtype=np.uint8)
    Z = _augment(X, True, math.sqrt(5))
    assert np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-12)
    Z = _augment(X, True, 1.5)  # a smaller public bound: the first row is shrunk to it
    assert np.linalg.norm(Z, axis=1).max() == pytest.approx(1.0)
    assert np.linalg.norm(Z[1]) == pytest.approx(math.sqrt(2) / 1.5)


def test_predictions_and_printout(data):
    X, y = data
    names = [f"f{j}" for j in range(X.shape[1])]
    Xdf = pd.DataFrame(X, columns=names)
    clf = DPLogisticRegression(epsilon=5.0, random_state=0).fit(Xdf, np.where(y, "yes", "no"))
    proba = clf.predict_proba(Xdf)
    np.testing.assert_allclose(proba.sum(axis=1), 1)
    np.testing.assert_array_equal(clf.predict(Xdf), np.where(clf.decision_function(Xdf) > 0, "yes", "no"))
    text = str(clf)
    assert all(name in text for name in names) and "(intercept)" in text


@pytest.mark.parametrize(
    "params",
    [{"epsilon": 0.0}, {"epsilon": -2}, {"alpha": 0.0}, {"data_norm": -1.0}, {"fit_intercept": "yes"}, {"tol": 0}],
)
def test_invalid_parameters(data, params):
    X, y = data
    (name,) = params
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of DPLogisticRegression"):
        DPLogisticRegression(**params).fit(X, y)


def test_bad_data(data):
    X, y = data
    with pytest.raises(DataValidationError, match="binary features"):
        DPLogisticRegression().fit(X + 0.5, y)


# scikit-learn's estimator checks run for every registered model in
# tests/test_estimator_checks.py (with no expected failures).


def test_save_and_load_round_trip(data, tmp_path):
    from dpglass.models import load_model

    X, y = data
    clf = DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    clf.save(tmp_path / "model.json")
    again = load_model(tmp_path / "model.json")
    assert isinstance(again, DPLogisticRegression)
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    assert again.privacy_ledger_.total() == clf.privacy_ledger_.total() and str(again) == str(clf)
