"""Smooth boosting's one-stump committee (issue 28): DP-1R under a public base measure favouring the constants.

When ``n_rounds="auto"`` resolves from the released count to one round of
stumps, the round's exponential mechanism draws with the base measure of
``boosting.plan.SINGLE_STUMP_CONSTANTS_PRIOR`` (docs/privacy.md, "Smooth
boosting", "One stump").  The measure is public, so it cancels from every
probability ratio of neighbours: the privacy map is the uniform mechanism's.
"""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest

from dpglass.exceptions import ModelFileError
from dpglass.models import SmoothBoostClassifier
from dpglass.models.boosting.plan import (
    SINGLE_STUMP_CONSTANTS_PRIOR,
    _prior_offsets,
    _stump_noise,
    boost_plan,
)
from dpglass.models.boosting.weak_learners import literal_errors
from dpglass.privacy.mechanisms import ExponentialMechanism


def _params(**kw):
    return dict(SmoothBoostClassifier(weak_learner="stump", epsilon=1.0).get_params(deep=False), **kw)


def test_the_prior_fires_only_for_a_one_stump_committee_from_the_count():
    one = boost_plan(_params(), 5, records_estimate=300)
    many = boost_plan(_params(), 5, records_estimate=30_000)
    assert one.n_rounds == 1 and "base measure" in one.rounds[0][0].entry.note
    assert many.n_rounds > 1 and all("base measure" not in s.entry.note for r in many.rounds for s in r)
    assert many.rounds[0][0].noise.func is _stump_noise  # the uniform mechanism, as before
    fixed = boost_plan(_params(n_rounds=1), 5)  # an explicit committee: no count, no prior
    assert "base measure" not in fixed.rounds[0][0].entry.note
    trees = boost_plan(_params(weak_learner="tree"), 5, records_estimate=300)
    assert all("base measure" not in s.entry.note for r in trees.rounds for s in r)


@pytest.mark.parametrize("K", [2, 3])
def test_the_offsets_are_the_base_measure(K):
    mech = ExponentialMechanism(0.7, 1.0)
    n = 4 * K * (K - 1) + K
    u = np.random.default_rng(0).normal(size=n)
    p = mech.probabilities(u + _prior_offsets(mech, n, K, 0.75))
    prior = np.r_[np.full(n - K, 0.25 / (n - K)), np.full(K, 0.75 / K)]
    want = prior * np.exp(mech._rate * u)
    np.testing.assert_allclose(p, want / want.sum(), rtol=1e-12)


def _datasets(size):
    """Every table of ``size`` records on one 0/1 feature with 0/1 labels (as counts of the 4 kinds)."""
    return [np.array(c) for c in itertools.product(range(size + 1), repeat=4) if sum(c) == size]


def _errors(counts):
    """DP-1R's utilities (minus mu-weighted errors, mu = 1) of the 4 stumps on a table given by kind counts."""
    X = np.array([[0], [0], [1], [1]], dtype=np.uint8).repeat(counts, axis=0)
    y = np.array([0, 1, 0, 1]).repeat(counts)
    return -literal_errors(X, y, np.ones(len(y)))


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_privacy_map_on_both_sides_of_the_limit(epsilon):
    """Over every pair of neighbouring tables of up to 3 records (add/remove one): the prior mechanism's log
    probability ratio is at most epsilon, and its largest is the uniform mechanism's (the base measure cancels);
    epsilon/4 would be violated."""
    mech = ExponentialMechanism(epsilon, 1.0)
    off = _prior_offsets(mech, 4, 2, SINGLE_STUMP_CONSTANTS_PRIOR)
    worst_prior = worst_uniform = 0.0
    for size in range(3):
        for a in _datasets(size):
            for kind in range(4):
                b = a.copy()
                b[kind] += 1
                ua, ub = _errors(a), _errors(b)
                for offsets, which in ((off, "prior"), (0.0, "uniform")):
                    r = np.abs(np.log(mech.probabilities(ua + offsets)) - np.log(mech.probabilities(ub + offsets)))
                    if which == "prior":
                        worst_prior = max(worst_prior, r.max())
                    else:
                        worst_uniform = max(worst_uniform, r.max())
    assert worst_prior <= epsilon * (1 + 1e-9)
    assert worst_prior == pytest.approx(worst_uniform, rel=1e-9)
    assert worst_prior > epsilon / 4


def _small(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(300, 8))
    y = (rng.random(300) < 0.7).astype(int)
    return SmoothBoostClassifier(weak_learner="stump", epsilon=1.0, classes=[0, 1], random_state=seed).fit(X, y)


def test_a_one_stump_file_verifies_and_tampering_is_refused():
    m = _small()
    assert m.records_estimate_ is not None and len(m.estimators_) == 1
    data = m.to_dict()
    SmoothBoostClassifier.from_dict(copy.deepcopy(data))
    edited = copy.deepcopy(data)
    entry = edited["privacy_ledger"]["entries"][1]
    entry["note"] = entry["note"].replace("base measure", "uniform measure")
    with pytest.raises(ModelFileError, match="entries"):
        SmoothBoostClassifier.from_dict(edited)
    edited = copy.deepcopy(data)
    edited["records_estimate"] = 10**6  # another committee size: the plan no longer matches
    with pytest.raises(ModelFileError):
        SmoothBoostClassifier.from_dict(edited)


def test_on_a_table_without_signal_the_one_stump_is_mostly_a_constant():
    constants = sum(_small(seed).estimators_[0].feature == -1 for seed in range(20))
    assert constants >= 12  # the uniform measure gives the 2 constants 2 / 18 of its mass
