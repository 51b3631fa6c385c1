"""Teacher ensembles on a public part: subsample-and-aggregate (proven) and DP-Bag (paper-claim)."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.aggregates import pattern_table
from dpglass.aggregates.parts import TableParts
from dpglass.privacy.splits import part_seeds
from dpglass.exceptions import DataValidationError, InvalidParameterError, UnprovenGuaranteeWarning
from dpglass.models import DPBaggingClassifier, SubsampleAggregateClassifier, load_model
from dpglass.models.teachers import estimator as B
from dpglass.models.teachers.plan import saa_label_entry
from dpglass.privacy.accounting import compose


def _data(n=3000, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(np.uint8)
    y = ((X[:, 0] | X[:, 1]) ^ (rng.random(n) < 0.05)).astype(np.uint8)
    public = (rng.random((800, d)) < 0.5).astype(np.uint8)
    return X, y, public


# ------------------------------------------------------------------ subsample-and-aggregate
def test_saa_budget_is_basic_composition_at_delta_zero():
    q, acct, eps, delta = B.saa_query_budget(1.0, 0.0, 50.0, 10_000)
    assert (q, acct, delta) == (50, "basic", 0.0) and math.isclose(eps, 1.0)
    assert B.saa_query_budget(1.0, 0.0, 50.0, 20)[0] == 20  # the public part caps it
    assert B.saa_query_budget(0.01, 0.0, 50.0, 100)[0] == 0  # not even one label fits


@pytest.mark.parametrize("accountant", ["pld", "rdp", "auto"])
def test_saa_budget_is_the_largest_number_of_labels_within_the_budget(accountant):
    q, acct, eps, delta = B.saa_query_budget(1.0, 1e-5, 50.0, 100_000, accountant)
    entry = saa_label_entry(50.0)  # one label alone
    assert q > 50  # tight composition beats basic's epsilon * noise_scale
    assert compose([entry] * q, acct, 1e-5)[0] <= 1.0 < compose([entry] * (q + 1), acct, 1e-5)[0]
    assert eps <= 1.0 and delta == 1e-5
    if accountant == "auto":
        assert q == max(B.saa_query_budget(1.0, 1e-5, 50.0, 100_000, a)[0] for a in ("pld", "rdp"))


def test_saa_labels_as_many_public_records_as_the_budget_allows_and_learns():
    X, y, public = _data()
    clf = SubsampleAggregateClassifier(epsilon=3.0, delta=1e-6, n_teachers=50, noise_scale=10.0,
                                       random_state=0).fit(X, y, X_public=public)
    q = B.saa_query_budget(3.0, 1e-6, 10.0, public.shape[0], "auto")[0]
    assert clf.n_labelled_ == q and clf.n_public_ == 800
    assert clf.score(X, y) > 0.85
    (entry,) = clf.privacy_ledger_.entries
    assert entry.guarantee == "proven" and entry.mechanism == f"composition(discrete laplace x{q}, {clf.composition_})"
    assert clf.privacy_ledger_.total()[0] <= 3.0 * (1 + 1e-9)
    assert f"on {q} of 800 public records" in str(clf)


def test_saa_without_budget_for_a_label_releases_a_constant_student():
    X, y, public = _data(n=300)
    clf = SubsampleAggregateClassifier(epsilon=0.01, delta=0.0, noise_scale=50.0, random_state=0)
    clf.fit(X, y, X_public=public)
    assert clf.n_labelled_ == 0 and not clf.coef_.any() and clf.intercept_ == 0.0
    assert clf.privacy_ledger_.total() == (0.0, 0.0)
    assert (clf.predict(X) == 0).all()


def test_saa_max_queries_caps_the_labels():
    X, y, public = _data(n=500)
    clf = SubsampleAggregateClassifier(epsilon=5.0, delta=1e-6, n_teachers=5, noise_scale=2.0, max_queries=7,
                                       random_state=0).fit(X, y, X_public=public)
    assert clf.n_labelled_ == 7


# ------------------------------------------------------------------------------ DP-Bag
def test_dpbag_epsilon_is_the_paper_moments_bound_minimised_over_orders():
    lam, delta = 0.02, 1e-5
    for moment_sum in (0.5, 3.0, 40.0, 700.0):
        brute = min((2 * lam**2 * moment_sum * l * (l + 1) + math.log(1 / delta)) / l for l in range(1, 20_000))
        assert math.isclose(float(B.dpbag_epsilon(moment_sum, 1 / lam, delta)), brute, rel_tol=1e-12)
    sums = np.array([0.0, 1.0, 2.0, 10.0])
    eps = B.dpbag_epsilon(sums, 50.0, delta)
    assert eps[0] == 0.0 and (np.diff(eps) > 0).all()


def _brute_force_shares(W, X_pub, assignment, T):
    votes = B._votes(W, X_pub)  # (queries, teachers)
    k, n = assignment.shape
    share = np.zeros((n, X_pub.shape[0]))
    for i in range(n):
        for p in range(k):
            share[i] += votes[:, p * T + assignment[p, i]]
    return share / k


def _teachers(X, y, T, k, seed, alpha=1.0):
    """The table of (X, y), every record's teachers (records in the table's order) and the teachers' weights."""
    table = pattern_table(X, y)
    states = B.teacher_states(TableParts.local(table), part_seeds(k, np.random.default_rng(seed)), T)
    W = B.teacher_weights(states, T * k, table.n_features, 2, alpha)
    np.testing.assert_array_equal(states.parts[0].assignment,
                                  B.assign_records(table, T, k, np.random.default_rng(seed)))  # the same draw
    return table, states, W


def test_dpbag_queries_follow_the_paper_accountant_record_by_record():
    X, y, public = _data(n=200)
    T, k = 4, 3
    _, states, W = _teachers(X, y, T, k, seed=1)
    q, hist = B.dpbag_queries(states, W, public, T, epsilon=2.0, delta=1e-5, noise_scale=30.0, cap=800)
    share = _brute_force_shares(W, public, states.parts[0].assignment, T)
    moments = np.cumsum(np.maximum(share, 1 - share) ** 2, axis=1).max(axis=0)
    eps_hat = B.dpbag_epsilon(moments, 30.0, 1e-5)
    assert 0 < q < 800 and eps_hat[q - 1] <= 2.0 < eps_hat[q]  # stops before the bound exceeds epsilon
    ones = B._votes(W, public[:q]).sum(axis=1)  # the vote histogram of each query: (k T - ones, ones)
    np.testing.assert_array_equal(hist, np.column_stack([k * T - ones, ones]))


def test_unanimous_teachers_give_the_data_independent_number_of_queries():
    # every teacher votes alike on every public record: m_i = 1, the bound of a 2 lambda-DP mechanism
    X = np.zeros((50, 2), dtype=np.uint8)
    y = np.zeros(50, dtype=np.uint8)
    _, states, W = _teachers(X, y, 5, 4, seed=0)
    q, _ = B.dpbag_queries(states, W, np.zeros((500, 2), dtype=np.uint8), 5, epsilon=1.0, delta=1e-5,
                           noise_scale=20.0, cap=500)
    m = np.arange(1, 501, dtype=float)
    assert q == int((B.dpbag_epsilon(m, 20.0, 1e-5) <= 1.0).sum())


def test_dpbag_is_marked_paper_claim_and_publishes_no_label_count():
    X, y, public = _data()
    with pytest.warns(UnprovenGuaranteeWarning, match="DP-Bag"):
        clf = DPBaggingClassifier(epsilon=4.0, delta=1e-5, n_teachers=50, n_partitions=4, noise_scale=20.0,
                                  random_state=0).fit(X, y, X_public=public)
    assert clf.n_labelled_ > 0 and clf.score(X, y) > 0.8
    (entry,) = clf.privacy_ledger_.entries
    assert entry.guarantee == "paper-claim" and clf.privacy_ledger_.guarantee == "paper-claim"
    assert clf.privacy_ledger_.total() == (4.0, 1e-5)  # the claim: the whole budget, whatever was labelled
    text = str(clf) + json.dumps(clf.to_dict())
    assert "n_labelled" not in text and f"{clf.n_labelled_} public" not in text
    assert "paper-claim" in str(clf)


def test_dpbag_needs_a_delta():
    X, y, public = _data(n=100)
    with pytest.raises(InvalidParameterError, match="delta"):
        DPBaggingClassifier(delta=0.0).fit(X, y, X_public=public)


# --------------------------------------------------------------------------- shared
def test_teachers_are_l2_logistic_regressions_with_a_penalised_intercept():
    from scipy.optimize import minimize

    X, y, _ = _data(n=400)
    table, states, W = _teachers(X, y, 2, 1, seed=3, alpha=0.5)
    X_rec, y_rec = table.records()  # the records in the table's order, as assigned
    rows = states.parts[0].assignment[0] == 1
    A = np.column_stack([X_rec[rows], np.ones(rows.sum())])
    ys = 2.0 * y_rec[rows] - 1

    def objective(b):
        return np.logaddexp(0, -ys * (A @ b)).sum() + 0.25 * b @ b

    ref = minimize(objective, np.zeros(A.shape[1]), method="BFGS", options={"gtol": 1e-9}).x
    np.testing.assert_allclose(W[1], ref, atol=1e-4)


def test_teacher_parts_split_every_entry_among_the_teachers():
    rng = np.random.default_rng(4)
    X = (rng.random((5000, 3)) < 0.5).astype(np.uint8)  # 8 rows x 2 labels: entries of hundreds of records
    y = (rng.random(5000) < 0.3).astype(np.uint8)
    table = pattern_table(X, y)
    T, k = 7, 3
    assignment = B.assign_records(table, T, k, np.random.default_rng(0))
    parts = B.teacher_parts(table, assignment, T).toarray()
    assert parts.shape == (k * T, table.n_entries)
    for p in range(k):  # in each partition, every record of every entry goes to exactly one teacher
        np.testing.assert_array_equal(parts[p * T:(p + 1) * T].sum(axis=0), table.counts)
        np.testing.assert_array_equal(parts[p * T:(p + 1) * T].sum(axis=1), np.bincount(assignment[p], minlength=T))
    # an entry's split is Multinomial(c, 1/T): each teacher's share of a large entry is about c/T
    big = np.argmax(table.counts)
    assert np.all(np.abs(parts[:T, big] - table.counts[big] / T) < 5 * np.sqrt(table.counts[big] / T))


@pytest.mark.parametrize("cls", [SubsampleAggregateClassifier, DPBaggingClassifier])
def test_public_part_must_match_the_features(cls):
    X, y, public = _data(n=200)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(6)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnprovenGuaranteeWarning)
        with pytest.raises(DataValidationError):
            cls(delta=1e-6, n_teachers=3, random_state=0).fit(X, y, X_public=public[:, :4])
        with pytest.raises(DataValidationError):
            cls(delta=1e-6, n_teachers=3, random_state=0).fit(X, y, X_public=public + 1)
        model = cls(delta=1e-6, n_teachers=3, random_state=0).fit(frame, y, X_public=pd.DataFrame(
            public, columns=frame.columns))
        assert model.n_public_ == 800
        # without a public part: n_public uniform 0/1 rows, drawn from the model's generator
        assert cls(delta=1e-6, n_teachers=3, n_public=70, random_state=0).fit(X, y).n_public_ == 70


@pytest.mark.parametrize("cls", [SubsampleAggregateClassifier, DPBaggingClassifier])
def test_save_load_round_trip(cls, tmp_path):
    X, y, public = _data(n=600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnprovenGuaranteeWarning)
        model = cls(epsilon=3.0, delta=1e-6, n_teachers=6, noise_scale=5.0, random_state=0).fit(X, y, X_public=public)
    model.save(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert back.privacy_ledger_.total() == model.privacy_ledger_.total()
    assert str(back) == str(model)


def test_the_verifier_knows_the_ledger_names():
    from dpglass.models._verify import KNOWN_MECHANISMS

    assert KNOWN_MECHANISMS["DPBaggingClassifier"] == (B.DPBAG_MECHANISM,)
    assert KNOWN_MECHANISMS["SubsampleAggregateClassifier"] == (B.SAA_MECHANISM_PREFIX,)
