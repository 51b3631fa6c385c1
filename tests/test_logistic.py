"""DPLogisticRegression: output perturbation with discrete Laplace noise on a public grid.

The mechanism must hold for add/remove neighbours at every n (0, 1, 2, ...):
the objective has no n, the sensitivity is proven by strong convexity and
checked here numerically, and a black-box audit on 3 vs 2 records (the pair on
which the previous objective-perturbation version measured epsilon >= 4.4 at a
claimed 1) must stay within the claim.
"""

import json
import math
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from dpglass.aggregates import pattern_table
from dpglass.audit import audit_mechanism
from dpglass.exceptions import DataValidationError, InvalidParameterError, ModelFileError
from dpglass.models.logistic.solver import RowBlocks, minimise, scaled_rows
from dpglass.models.logistic.estimator import (
    AUTO_ALPHA,
    CLASS_COUNT_SHARE,
    DEFAULT_ALPHA,
    class_offset,
    MECHANISM,
    DPLogisticRegression,
    default_data_norm,
    dp_logistic_regression,
)
from dpglass.privacy.objective_perturbation import output_perturbation_calibration, snap_to_grid
from dpglass.privacy.samplers import discrete_laplace, discrete_laplace_decay

TOL = 1e-4


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    X = (rng.random((3000, 6)) < 0.5).astype(np.uint8)
    logits = 2.0 * X[:, 0] - 1.5 * X[:, 1] + 0.5 * X[:, 2] - 0.3
    y = (rng.random(3000) < 1 / (1 + np.exp(-logits))).astype(np.uint8)
    return X, y


def _release(X, y, *, epsilon=1.0, alpha=DEFAULT_ALPHA, fit_intercept=True, data_norm=None, tol=TOL, seed=0):
    return dp_logistic_regression(np.asarray(X), np.asarray(y), epsilon=epsilon, alpha=alpha,
                                  fit_intercept=fit_intercept, data_norm=data_norm, tol=tol,
                                  rng=np.random.default_rng(seed))


def _theta(rel):
    return np.append(rel.coef, rel.intercept)


def _f_hat(X, y, alpha, fit_intercept=True, data_norm=None, tol=TOL):
    """The certified solver point, in the scaled coordinates f = c beta of docs/privacy.md."""
    X = np.asarray(X, dtype=float)
    p = X.shape[1] + int(fit_intercept)
    c = default_data_norm(p) if data_norm is None else data_norm
    A, ys, w = _table_rows(X, y, fit_intercept, c)  # what the release solves on: the pattern table
    beta = minimise(RowBlocks.dense(A, ys, w), alpha * c * c, c * tol)
    return c * beta, beta, c


def _table_rows(X, y, fit_intercept, c):
    """The solver's input: the distinct (row, label) pairs, scaled, with their record counts."""
    t = pattern_table(np.asarray(X), np.asarray(y, dtype=np.uint8))
    return scaled_rows(t.unpack(), fit_intercept, c), 2.0 * t.labels - 1.0, t.counts.astype(float)


# ------------------------------------------------------------ (1) the audit
# d = 1 feature + intercept; D' = two records, D = D' plus one.  On pairs this
# small the realised shift of the grid indices is about half the proven bound
# S1 (the added record's loss gradient has norm ~1/2 at margins near 0), so
# the mechanism's exact privacy loss on the pair is ~epsilon/2.
PAIR_D = (np.array([[0], [0], [1]]), np.array([0, 1, 1]))
PAIR_DP = (PAIR_D[0][:2], PAIR_D[1][:2])
N_RUNS = 20_000


def _pair_indices():
    """Grid indices k_D, k_D' (a release at epsilon=1e9 has no noise left) and the calibration."""
    (X, y), (Xp, yp) = PAIR_D, PAIR_DP
    a, b = _release(X, y, epsilon=1e9), _release(Xp, yp, epsilon=1e9)
    gamma = a.grid_step
    c = default_data_norm(2)
    cal = output_perturbation_calibration(epsilon=1.0, regularization=DEFAULT_ALPHA * c * c, row_norm=c,
                                          n_coef=2, tol=c * TOL)
    assert cal.grid_step == gamma
    ka, kb = (np.round(_theta(r) / gamma).astype(np.int64) for r in (a, b))
    return ka, kb, cal


def test_tiny_data_black_box_audit_stays_within_epsilon():
    """8,000 seeded releases of the whole estimator on D (3 records) and D' (2 of them), both directions,
    half-split events (the audit's power is checked below on the mechanism alone, with N_RUNS draws)."""

    def batch(data, n, rng):
        X, y = data
        seeds = rng.integers(0, 2**63 - 1, size=n)
        return np.stack([_theta(_release(X, y, epsilon=1.0, seed=int(s))) for s in seeds])

    res = audit_mechanism(batch=batch, d=PAIR_D, d_prime=PAIR_DP, n_samples=8_000, claim=(1.0, 0.0), rng=2024,
                          name="DPLogisticRegression 3 vs 2 records")
    assert res.verdict == "PASS", res.summary()
    # the exact privacy loss of the discrete Laplace mechanism on this pair
    ka, kb, cal = _pair_indices()
    exact = np.abs(ka - kb).sum() * discrete_laplace_decay(cal.scale) / 2**40
    assert 0.4 < exact <= 1.0
    assert res.epsilon_lower <= exact + 0.05, res.summary()


@pytest.mark.parametrize("fraction,claim", [(0.25, 1.0), (0.5, "exact")])
def test_audit_flags_a_mechanism_with_too_little_noise(fraction, claim):
    """Power: the same audit flags the mechanism with a quarter of the noise (true loss ~2 eps) against eps,
    and with half the noise against the exact loss of the correct mechanism on this pair (eps/2): on 3 vs 2
    records half the noise still happens to meet eps = 1, so only the sharper claim can reveal it."""
    ka, kb, cal = _pair_indices()
    g = discrete_laplace_decay(cal.scale) / 2**40
    exact = float(np.abs(ka - kb).sum() * g)
    scale = cal.scale * fraction

    def batch(k, n, rng):
        return cal.grid_step * (k + discrete_laplace(scale, (n, k.size), rng))

    target = exact if claim == "exact" else claim
    res = audit_mechanism(batch=batch, d=ka, d_prime=kb, n_samples=N_RUNS, claim=(target, 0.0), rng=7)
    assert res.verdict == "VIOLATION", res.summary()


def test_release_is_grid_index_plus_discrete_laplace():
    """What the audit's power test samples is what dp_logistic_regression does, draw for draw."""
    ka, _, cal = _pair_indices()
    X, y = PAIR_D
    for seed in range(5):
        rel = _release(X, y, epsilon=1.0, seed=seed)
        z = discrete_laplace(cal.scale, 2, np.random.default_rng(seed))
        np.testing.assert_array_equal(_theta(rel), cal.grid_step * (ka + z))


# ------------------------------------------------------- (2) the sensitivity
def test_sensitivity_bound_on_random_small_neighbours():
    rng = np.random.default_rng(5)
    worst_l2, worst_l1 = 0.0, 0.0
    for trial in range(300):
        d = int(rng.integers(1, 4))
        n = int(rng.integers(0, 6))
        alpha = float(rng.choice([0.05, 0.2, 1.0, 10.0]))
        fit_intercept = bool(rng.integers(0, 2))
        data_norm = None if trial % 3 else float(rng.uniform(0.5, 2.0))  # small bounds: rows get shrunk
        X = (rng.random((n + 1, d)) < 0.5).astype(float)
        y = rng.integers(0, 2, n + 1).astype(float)
        drop = int(rng.integers(0, n + 1))
        keep = np.arange(n + 1) != drop
        f1, b1, c = _f_hat(X, y, alpha, fit_intercept, data_norm)
        f2, b2, _ = _f_hat(X[keep], y[keep], alpha, fit_intercept, data_norm)
        bound = (1.0 + 2.0 * TOL) / alpha
        worst_l2 = max(worst_l2, float(np.linalg.norm(f1 - f2)) / bound)
        assert np.linalg.norm(f1 - f2) <= bound
        p = d + int(fit_intercept)
        cal = output_perturbation_calibration(epsilon=1.0, regularization=alpha * c * c, row_norm=c, n_coef=p,
                                              tol=c * TOL)
        l1 = int(np.abs(snap_to_grid(b1, cal.grid_step) - snap_to_grid(b2, cal.grid_step)).sum())
        worst_l1 = max(worst_l1, l1 / cal.l1_sensitivity)
        assert l1 <= cal.l1_sensitivity
    assert worst_l2 > 0.4 and worst_l1 > 0.4, (worst_l2, worst_l1)  # the checks are not vacuous


def test_row_scaling_and_shrinking():
    X = np.array([[1, 1, 1, 1], [1, 0, 0, 0], [0, 0, 0, 0]], dtype=np.uint8)
    c = default_data_norm(5)
    assert c >= math.sqrt(5)
    A = scaled_rows(X, True, c)
    np.testing.assert_array_equal(A[1:], np.column_stack([X[1:], np.ones(2)]))  # 0/1 rows kept as they are
    assert np.all(np.linalg.norm(A, axis=1) <= c)
    A = scaled_rows(X, True, 1.5)  # a smaller public bound: the first row is shrunk to it (just below)
    assert np.linalg.norm(A, axis=1).max() == pytest.approx(1.5) and np.linalg.norm(A, axis=1).max() <= 1.5
    assert np.linalg.norm(A[1]) == pytest.approx(math.sqrt(2))


def test_certified_gradient_bound_covers_the_exact_gradient(data):
    """Solved on the pattern table (counts as weights); certified against the gradient summed record by record."""
    X, y = data
    c = default_data_norm(7)
    mu = 1.0 * c * c
    A, ys, w = _table_rows(X, y, True, c)
    assert A.shape[0] < len(y)  # records do share rows: the weights matter
    rows = RowBlocks.dense(A, ys, w)  # the K = 2 case of the one solver's rows
    beta = minimise(rows, mu, c * TOL)
    bound = rows.certified_bound(beta, mu, 0.0)
    assert bound <= c * TOL
    # the gradient of the sum over the records, in extended precision (long double), is within the bound
    YAl = (scaled_rows(X, True, c) * (2.0 * y - 1.0)[:, None]).astype(np.longdouble)
    bl = beta.astype(np.longdouble)
    sl = 1 / (1 + np.exp(YAl @ bl))
    gl = mu * bl - YAl.T @ sl
    assert float(np.sqrt((gl * gl).sum())) <= bound


def test_ten_billion_records_of_twenty_thousand_rows_certify():
    """The certified bound's float part grows like n log m (blocked sums), and the solver steps by the gradient
    where F's float resolution hides the decrease: before both, this table raised SolverNotCertifiedError."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (20_000, 20)).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(20_000) < 0.2)).astype(np.uint8)
    table = pattern_table(X, y)
    table.counts[:] = table.counts * (10**10 // 20_000)
    release = dp_logistic_regression(table, None, epsilon=1.0, alpha=30.0, fit_intercept=True, data_norm=None,
                                     tol=TOL, rng=rng)
    assert release.coef[0] > 1.0  # the planted feature


def test_separable_ten_billion_records_certify_at_small_alpha():
    """Review finding: with sigma's global slope 1/4 the margins' rounding (growing with n, p and ||beta||) kept the
    bound above tol on separable data at alpha = 1; the local slope certifies it."""
    r = np.random.default_rng(0)
    m, d = 2000, 20
    A = np.column_stack([r.integers(0, 2, (m, d)), np.ones(m)]).astype(float)
    ys = np.where(A[:, 0] > 0, 1.0, -1.0)
    w = np.maximum(1, r.dirichlet(np.ones(m) * 0.3) * 1e10).round()
    c = np.sqrt(d + 1)
    minimise(RowBlocks.dense(A, ys, w), 1.0 * c * c, c * TOL)


# -------------------------------------------------------------- (3) the grid
def test_released_coefficients_are_multiples_of_the_grid(data):
    X, y = data
    clf = DPLogisticRegression(epsilon=0.7, random_state=3).fit(X, y)
    gamma = clf.grid_step_
    mant, _ = math.frexp(gamma)
    assert mant == 0.5  # a power of two
    theta = np.append(clf.coef_, clf.intercept_grid_)
    np.testing.assert_array_equal(theta / gamma, np.round(theta / gamma))
    # the rounding term p is at most 1% of sqrt(p) Delta2 / gamma
    p, c = 7, default_data_norm(7)
    eps_coef = 0.7 - 0.7 * CLASS_COUNT_SHARE  # the class counts take their share first
    cal = output_perturbation_calibration(epsilon=eps_coef, regularization=AUTO_ALPHA / 0.7 * c * c, row_norm=c,
                                          n_coef=p, tol=c * TOL)
    assert cal.grid_step == gamma
    assert p <= 0.01 * math.sqrt(p) * cal.l2_sensitivity / gamma < 2 * p


def test_calibration_constants():
    cal = output_perturbation_calibration(epsilon=0.3, regularization=7.0, row_norm=1.3, n_coef=5, tol=1e-3)
    l2 = (1.3 + 2e-3) / 7.0
    assert cal.l2_sensitivity >= l2
    assert cal.l1_sensitivity == math.floor(math.sqrt(5) * l2 / cal.grid_step + 5)
    assert Fraction(cal.scale) >= Fraction(cal.l1_sensitivity) / Fraction(0.3)  # never less noise than S1/eps
    assert cal.scale == pytest.approx(cal.l1_sensitivity / 0.3, rel=1e-15)
    # tiny epsilon: a coarser public grid keeps the scale within the exact sampler's range
    tiny = output_perturbation_calibration(epsilon=1e-4, regularization=7.0, row_norm=1.3, n_coef=5, tol=1e-3)
    assert tiny.grid_step > cal.grid_step and tiny.scale < 2.0**22
    with pytest.raises(InvalidParameterError):
        output_perturbation_calibration(epsilon=1e-7, regularization=7.0, row_norm=1.3, n_coef=5, tol=1e-3)


# ------------------------------------------------- (4) the ledger and to_dict
def test_ledger_is_two_proven_entries_and_data_independent(data):
    X, y = data
    a = DPLogisticRegression(epsilon=0.8, random_state=0).fit(X, y)
    b = DPLogisticRegression(epsilon=0.8, random_state=0).fit(X[:17], y[:17])  # other data, other n
    assert a.privacy_ledger_.total() == pytest.approx((0.8, 0.0))
    assert a.privacy_ledger_.guarantee == "proven"
    counts, entry = a.privacy_ledger_.entries
    assert counts.mechanism == "discrete laplace" and counts.epsilon == pytest.approx(0.8 * CLASS_COUNT_SHARE)
    assert counts.sensitivity == 1.0 and counts.scale == pytest.approx(1 / counts.epsilon)
    eps_coef = 0.8 - counts.epsilon
    assert entry.mechanism == MECHANISM and entry.delta == 0.0 and entry.epsilon == pytest.approx(eps_coef)
    assert entry.sensitivity == float(int(entry.sensitivity)) and entry.scale >= entry.sensitivity / eps_coef
    assert "strong convexity" in entry.note
    assert a.privacy_ledger_.to_dict() == b.privacy_ledger_.to_dict()
    da, db = a.to_dict(), b.to_dict()
    for key in ("coef", "intercept", "intercept_grid", "class_counts"):
        del da[key], db[key]
    assert da == db  # nothing but the noisy coefficients depends on the data
    assert not hasattr(a, "optimality_")
    assert "delta" not in a.get_params()


def test_to_dict_round_trip(data, tmp_path):
    from dpglass.models import load_model

    X, y = data
    clf = DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    d = json.loads(json.dumps(clf.to_dict()))
    again = DPLogisticRegression.from_dict(d)
    np.testing.assert_array_equal(again.coef_, clf.coef_)  # grid multiples: JSON keeps them exactly
    assert again.intercept_ == clf.intercept_ and again.grid_step_ == clf.grid_step_
    assert again.to_dict() == clf.to_dict()
    clf.save(tmp_path / "model.json")
    loaded = load_model(tmp_path / "model.json")
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert loaded.privacy_ledger_.total() == clf.privacy_ledger_.total() and str(loaded) == str(clf)


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["privacy_ledger"]["entries"][-1].update(scale=d["privacy_ledger"]["entries"][-1]["scale"] / 2),
     "scale"),
    (lambda d: d["privacy_ledger"]["entries"][-1].update(sensitivity=1e-3), "sensitivity"),
    (lambda d: d.update(grid_step=d["grid_step"] / 2), "grid_step"),
    (lambda d: d["coef"].__setitem__(0, d["coef"][0] + d["grid_step"] / 3), "coef"),
    (lambda d: d["params"].update(alpha=1000.0), "scale|sensitivity"),  # a claim the release's noise does not meet
    (lambda d: d["privacy_ledger"]["entries"][0].update(scale=20.0), "scale"),  # the class counts' noise
])
def test_coefficient_release_is_recomputed_on_load(data, edit, match):
    X, y = data
    d = json.loads(json.dumps(DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y).to_dict()))
    edit(d)
    with pytest.raises(ModelFileError, match=match):
        DPLogisticRegression.from_dict(d)


# ------------------------------------------------- (5) n = 0, 1, one class
@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_and_empty_training_sets_fit(n):
    X = np.ones((n, 3), dtype=np.uint8)
    y = np.ones(n, dtype=np.uint8)
    _, beta, _ = _f_hat(X, y, DEFAULT_ALPHA)
    if n == 0:
        np.testing.assert_array_equal(beta, 0.0)  # an empty sum: f = 0
    rel = _release(X, y, epsilon=1.0, seed=n)
    assert rel.coef.shape == (3,) and np.isfinite(rel.intercept)
    assert rel.ledger.total() == (1.0, 0.0)


def test_single_class_and_huge_margins():
    rng = np.random.default_rng(0)
    X = (rng.random((500, 4)) < 0.5).astype(np.uint8)
    for y in (np.zeros(500, np.uint8), np.ones(500, np.uint8)):
        rel = _release(X, y, alpha=0.01, epsilon=1e9)  # weak regularisation: large coefficients, still certified
        assert np.isfinite(_theta(rel)).all()
        assert np.sign(rel.intercept) == (1 if y[0] else -1)


def test_estimator_fits_two_records():
    clf = DPLogisticRegression(random_state=0).fit(np.array([[0, 1], [1, 0]]), np.array([0, 1]))
    assert clf.coef_.shape == (2,) and clf.privacy_ledger_.total() == (1.0, 0.0)


# ------------------------------------------------------------- (6) accuracy
def test_accuracy_beats_majority_at_epsilon_10():
    rng = np.random.default_rng(42)
    n, d = 4000, 8
    X = (rng.random((2 * n, d)) < 0.5).astype(np.uint8)
    logits = 3.0 * X[:, 0] - 3.0 * X[:, 1] + 2.0 * X[:, 2] - 1.0
    y = (rng.random(2 * n) < 1 / (1 + np.exp(-logits))).astype(np.uint8)
    clf = DPLogisticRegression(epsilon=10.0, random_state=0).fit(X[:n], y[:n])
    majority = max(y[n:].mean(), 1 - y[n:].mean())
    assert clf.score(X[n:], y[n:]) > majority + 0.1


def test_huge_epsilon_matches_nonprivate_solution(data):
    X, y = data
    alpha = 1.0
    Z = np.column_stack([X, np.ones(len(y))])  # the intercept as a feature: fit_intercept=False has no offset
    clf = DPLogisticRegression(epsilon=1e9, alpha=alpha, fit_intercept=False, random_state=0).fit(Z, y)
    c = default_data_norm(Z.shape[1])
    # sklearn minimises C sum loss + ||w||^2/2, i.e. sum loss + (1/2C)||w||^2: here 1/C = alpha c^2
    ref = LogisticRegression(C=1 / (alpha * c * c), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(Z, y)
    np.testing.assert_allclose(clf.coef_, ref.coef_[0], atol=clf.grid_step_)
    assert clf.intercept_ == 0.0 and clf.class_counts_ is None
    assert len(clf.privacy_ledger_) == 1


def test_offset_is_the_log_odds_of_the_released_counts_and_shifts_every_margin(data):
    """fit_intercept=True: minimise sum loss(y (f.x + offset)) + (alpha/2)||f||^2, offset from the noisy counts."""
    X, y = data
    alpha = 1.0
    clf = DPLogisticRegression(epsilon=1e9, alpha=alpha, random_state=0).fit(X, y)
    offset = class_offset(clf.class_counts_)
    assert abs(clf.class_counts_[1] - int(y.sum())) <= 1 and clf.intercept_ == clf.intercept_grid_ + offset
    c = default_data_norm(X.shape[1] + 1)
    A, ys = np.column_stack([X, np.ones(len(y))]) / c, 2.0 * y - 1
    F = lambda f: np.logaddexp(0, -ys * (A @ f + offset)).sum() + alpha / 2 * f @ f  # noqa: E731
    ref = minimize(F, np.zeros(A.shape[1]), method="BFGS", options={"gtol": 1e-10}).x / c
    np.testing.assert_allclose(clf.coef_, ref[:-1], atol=2 * clf.grid_step_)
    assert clf.intercept_grid_ == pytest.approx(ref[-1], abs=2 * clf.grid_step_)


def test_little_signal_shrinks_to_the_majority_class():
    """With no signal, the noisy coefficients are small and the offset predicts the majority class."""
    rng = np.random.default_rng(5)
    X = (rng.random((700, 40)) < 0.5).astype(np.uint8)
    y = (rng.random(700) < 0.7).astype(np.uint8)
    preds = [DPLogisticRegression(epsilon=1.0, random_state=s).fit(X, y).predict(X) for s in range(5)]
    assert np.mean([np.mean(p == 1) for p in preds]) > 0.9


# -------------------------------------------------------------- the API
def test_reproducible_and_seed_dependent(data):
    X, y = data
    a = DPLogisticRegression(epsilon=0.5, random_state=1).fit(X, y)
    b = DPLogisticRegression(epsilon=0.5, random_state=1).fit(X, y)
    c = DPLogisticRegression(epsilon=0.5, random_state=2).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.allclose(a.coef_, c.coef_)


def test_predictions_and_printout(data):
    X, y = data
    names = [f"f{j}" for j in range(X.shape[1])]
    Xdf = pd.DataFrame(X, columns=names)
    clf = DPLogisticRegression(epsilon=5.0, random_state=0).fit(Xdf, np.where(y, "yes", "no"))
    proba = clf.predict_proba(Xdf)
    np.testing.assert_allclose(proba.sum(axis=1), 1)
    np.testing.assert_array_equal(clf.predict(Xdf), np.where(clf.decision_function(Xdf) > 0, "yes", "no"))
    text = str(clf)
    assert all(name in text for name in names) and "(intercept)" in text and "discrete Laplace" in text


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
