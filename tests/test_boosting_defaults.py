"""Smooth boosting's one-round committee (issue 28): the round's mechanism under a public base measure favouring the
constants (DP-1R's constant stumps, the joint trees' one-label trees).

When ``n_rounds="auto"`` resolves from the released count to one round of
stumps or joint trees, the round's exponential mechanism draws with the base measure of
``boosting.plan.SINGLE_ROUND_CONSTANTS_PRIOR`` (docs/privacy.md, "Smooth
boosting", "One round").  The measure is public, so it cancels from every
probability ratio of neighbours: the privacy map is the uniform mechanism's.
"""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
from scipy.special import softmax

from dpglass.exceptions import ModelFileError
from dpglass.models import SmoothBoostClassifier
from dpglass.models.boosting.joint_trees import _TreeUtilities, leaf_labellings
from dpglass.models.boosting.plan import (
    SINGLE_ROUND_CONSTANTS_PRIOR,
    _prior_joint_noise,
    _prior_offsets,
    _stump_noise,
    boost_plan,
)
from dpglass.models.boosting.weak_learners import (
    FeatureMatrix,
    literal_errors,
    vote_labels,
)
from dpglass.privacy.mechanisms import ExponentialMechanism


def _params(**kw):
    return dict(SmoothBoostClassifier(weak_learner="stump", epsilon=1.0).get_params(deep=False), **kw)


def test_the_prior_fires_only_for_a_one_round_committee_from_the_count():
    one = boost_plan(_params(), 5, records_estimate=300)
    many = boost_plan(_params(), 5, records_estimate=30_000)
    assert one.n_rounds == 1 and "base measure" in one.rounds[0][0].entry.note
    assert many.n_rounds > 1 and all("base measure" not in s.entry.note for r in many.rounds for s in r)
    assert many.rounds[0][0].noise.func is _stump_noise  # the uniform mechanism, as before
    fixed = boost_plan(_params(n_rounds=1), 5)  # an explicit committee: no count, no prior
    assert "base measure" not in fixed.rounds[0][0].entry.note
    trees = boost_plan(_params(weak_learner="tree"), 5, records_estimate=300)
    assert trees.n_rounds == 1 and "base measure" in trees.rounds[0][0].entry.note  # one joint tree: it fires too
    top_down = boost_plan(_params(weak_learner="tree", tree_learner="top-down"), 5)  # never counted
    assert all("base measure" not in s.entry.note for r in top_down.rounds for s in r)


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
    off = _prior_offsets(mech, 4, 2, SINGLE_ROUND_CONSTANTS_PRIOR)
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


# ------------------------------------------------------------------ one joint tree


def _lse(v):
    return float(np.log(np.sum(np.exp(v - v.max()))) + v.max())


def _chain_law(ut, r, w, d, K=2):
    """The law of :func:`_prior_joint_noise` (depth 1) from its stages' probabilities."""
    classes, labs = vote_labels(K), leaf_labellings(K)
    const = np.array([ut._floored(ut.UB[0, labs.index((c, c))]) for c in classes])
    group = np.array([(_lse(r * const) + np.log(w / K)) / r, (_lse(r * ut.root()) + np.log((1 - w) / (d * K**2))) / r])
    pg, pc, pj = softmax(r * group), softmax(r * const), softmax(r * ut.root())
    law = {}
    for ci, c in enumerate(classes):
        law[(0, c, c)] = law.get((0, c, c), 0.0) + pg[0] * pc[ci]
    for j in range(d):
        for li, lab in enumerate(labs):
            law[(j, *lab)] = law.get((j, *lab), 0.0) + pg[1] * pj[j] * softmax(r * ut.labels(j))[li]
    return law


def _base_measure_law(ut, r, w, d, K=2):
    """The exponential mechanism with the base measure, directly over every (feature, labelling)."""
    labs = leaf_labellings(K)
    keys, logits = [], []
    for j in range(d):
        for li, lab in enumerate(labs):
            pi = (1 - w) / (d * K**2) + (w / K if j == 0 and lab[0] == lab[1] else 0.0)
            keys.append((j, *lab))
            logits.append(np.log(pi) + r * ut._floored(ut.UB[j, li]))
    return dict(zip(keys, softmax(np.array(logits))))


def _utilities(counts, d, rate):
    kinds = np.array(list(itertools.product((0, 1), repeat=d + 1)))
    rows = kinds.repeat(counts, axis=0)
    return _TreeUtilities(FeatureMatrix(rows[:, :d].astype(np.uint8).reshape(-1, d)), rows[:, d], np.ones(len(rows)),
                          1, rate)


class _Forced:
    """A stage whose selections follow a given path of indices, adding up the log-probability of each (the
    softmax at its rate): the law of :func:`_prior_joint_noise`, path by path."""

    def __init__(self, rate, path):
        self._rate, self.path, self.logp = rate, list(path), 0.0

    def select(self, u, rng):
        i = self.path.pop(0)
        self.logp += float(np.log(softmax(self._rate * np.asarray(u, dtype=np.float64))[i]))
        return i


def test_the_chain_draws_the_base_measure_mechanism():
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 6, size=8)
    for rate in (0.2, 1.0):
        ut = _utilities(counts, 2, rate)
        paths = [(0, c) for c in range(2)] + [(1, j, lab) for j in range(2) for lab in range(4)]
        code = {}
        for path in paths:
            stage = _Forced(rate, path)
            (tree,) = _prior_joint_noise(stage, 1, 2, 2, 0.75, lambda depth, r, ut=ut: ut, None)
            code[tree] = code.get(tree, 0.0) + np.exp(stage.logp)
        chain, direct = _chain_law(ut, rate, 0.75, 2), _base_measure_law(ut, rate, 0.75, 2)
        assert set(chain) == set(direct) == set(code)
        np.testing.assert_allclose([chain[k] for k in direct], list(direct.values()), rtol=1e-12)
        np.testing.assert_allclose([code[k] for k in direct], list(direct.values()), rtol=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_one_joint_tree_privacy_map_on_both_sides_of_the_limit(epsilon):
    """Every pair of neighbouring tables of up to 2 records on {0,1}^2 x {0,1}: the log ratio of every tree's
    probability is at most epsilon (the chain's rate is at most epsilon / 2, sensitivity 1), and above epsilon/8."""
    rate = epsilon / 2
    worst = 0.0
    for size in range(3):
        for combo in itertools.combinations_with_replacement(range(8), size):
            a = np.bincount(np.array(combo, dtype=int), minlength=8)
            la = _base_measure_law(_utilities(a, 2, rate), rate, 0.75, 2)
            for kind in range(8):
                b = a.copy()
                b[kind] += 1
                lb = _base_measure_law(_utilities(b, 2, rate), rate, 0.75, 2)
                worst = max(worst, max(abs(np.log(la[k]) - np.log(lb[k])) for k in la))
    assert epsilon / 8 < worst <= epsilon * (1 + 1e-9)


def test_a_one_joint_tree_file_verifies_and_favours_the_constant_without_signal():
    rng = np.random.default_rng(0)
    constants = 0
    for seed in range(12):
        X = rng.integers(0, 2, size=(300, 6))
        y = (rng.random(300) < 0.7).astype(int)
        m = SmoothBoostClassifier(weak_learner="tree", epsilon=1.0, classes=[0, 1], random_state=seed).fit(X, y)
        assert len(m.estimators_) == 1 and "base measure" in m.privacy_ledger_.entries[1].note
        data = m.to_dict()
        SmoothBoostClassifier.from_dict(copy.deepcopy(data))
        constants += len(set(m.estimators_[0].value[3:])) == 1
    assert constants >= 6
    data["privacy_ledger"]["entries"][1]["note"] = "a uniform measure"
    with pytest.raises(ModelFileError, match="entries"):
        SmoothBoostClassifier.from_dict(data)
