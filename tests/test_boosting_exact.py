"""DP-1R's utilities computed exactly and rounded once (review s35: float utilities exceeded their proven
sensitivity by ulps), and the short-committee learning rate (issue 28: rule 2 of smooth boosting's files).

docs/privacy.md, "Smooth boosting", "Exact utilities" and "Short committees".
"""

from __future__ import annotations

import copy
import itertools
from fractions import Fraction

import numpy as np
import pytest

from dpglass.aggregates import pattern_table
from dpglass.aggregates.parts import TableParts
from dpglass.exceptions import ModelFileError
from dpglass.models import SmoothBoostClassifier
from dpglass.models.boosting.exact_utilities import ROUNDING_EPSILON, STUMP_FLOOR, ExactUtilities, as_exact
from dpglass.models.boosting.hypotheses import Stump
from dpglass.models.boosting.plan import BOOST_RULE, SHORT_COMMITTEE_RATE, boost_plan, learning_rate_scale
from dpglass.models.boosting.smooth_measure import (
    PartsMeasure, _as_floats, _boost_part, _project_exact, bregman_projection, level_weights_exact,
)
from dpglass.models.boosting.weak_learners import stump_errors, stump_utilities
from dpglass.privacy.mechanisms import ExponentialMechanism

KAPPA, LAM = 0.35, 0.5
#: What rounding can add to a stump utility's sensitivity at rate r: two utilities, each within half an ulp of a
#: number of magnitude at most STUMP_FLOOR / r.
def _rounding_bound(rate):
    return 2 * 2.0**-52 * STUMP_FLOOR / rate


# ------------------------------------------------------------------ the exact projection
def test_the_exact_projection_meets_its_target_exactly_and_matches_the_closed_form():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(1, 8))
        w = rng.random(m) * rng.choice([0.1, 1.0, 3.0])
        counts = rng.integers(1, 50, size=m)
        target = Fraction(float(rng.random() * counts.sum()))
        mu = _project_exact(w, target, counts)
        assert all(0 <= v <= 1 for v in mu)
        mass = sum(v * int(c) for v, c in zip(mu, counts))
        capped = sum(min(Fraction(1), Fraction(float(x))) * int(c) for x, c in zip(w, counts))
        if capped >= target:  # inactive: just capped
            assert mu == [min(Fraction(1), Fraction(float(x))) for x in w]
        else:  # active: exactly the target, one factor c >= 1 on every uncapped value
            assert mass == target
            factors = {v / Fraction(float(x)) for v, x in zip(mu, w) if v < 1}
            assert len(factors) <= 1 and all(f >= 1 for f in factors)
        floats = bregman_projection(w, target, counts)
        np.testing.assert_allclose(floats, [float(v) for v in mu], rtol=0, atol=0)


def test_lemma_s_prime_holds_exactly_on_random_neighbours():
    """With the exact projection, ||mu - mu'||_1 + mu'(z) <= 2 - kappa and any [0, 1]-weighted sum moves by <= 1,
    as Fractions (no tolerance)."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        t = int(rng.integers(0, 4))
        n_levels = t + 1
        counts = rng.integers(0, 6, size=n_levels)
        z = int(rng.integers(0, n_levels))
        bigger = counts.copy()
        bigger[z] += 1
        n = int(counts.sum())
        mu = level_weights_exact(counts, t, density=KAPPA, learning_rate=LAM, target=Fraction(KAPPA) * n)
        mu2 = level_weights_exact(bigger, t, density=KAPPA, learning_rate=LAM, target=Fraction(KAPPA) * (n + 1))
        l1 = sum(abs(a - b) * int(c) for a, b, c in zip(mu, mu2, counts)) + mu2[z]
        assert l1 <= 2 - Fraction(KAPPA)
        # f = 1 on the records of a random set of levels, 0 elsewhere (the extremes of [0, 1] weights)
        f = rng.integers(0, 2, size=n_levels)
        moved = sum(b * int(c) * int(g) for b, c, g in zip(mu2, bigger, f)) - sum(
            a * int(c) * int(g) for a, c, g in zip(mu, counts, f))
        assert abs(moved) <= 1


# ------------------------------------------------------------------ exact utilities, rounded once
def test_centred_utilities_are_the_exact_values_rounded_once_and_floored():
    u = ExactUtilities([-3, 0, -1, -10**40], 7)
    rate = 0.37
    c = u.centred(rate)
    assert c[1] == 0.0
    assert c[0] == -3 / 7 and c[2] == -1 / 7  # Python's int division is correctly rounded
    assert c[3] == -(STUMP_FLOOR / rate)  # floored
    off = np.array([0.25, -0.5, 1.0, 0.0])
    shifted = u.plus(off).centred(rate)
    exact = [Fraction(v, 7) + Fraction(o) for v, o in zip(u.numerators, off)]
    top = max(exact)
    for s, e in zip(shifted, exact):
        want = max(e - top, -Fraction(STUMP_FLOOR) / Fraction(rate))
        assert abs(Fraction(s) - want) <= Fraction(2.0**-53) * abs(want) + Fraction(0)
    assert as_exact(np.array([0.5, 1.5])).centred(1.0).tolist() == [-1.0, 0.0]


def _measure(X, y, committee=()):
    parts = TableParts.local(pattern_table(np.asarray(X, dtype=np.uint8), np.asarray(y, dtype=np.uint8)))
    return PartsMeasure(parts.map(_boost_part, 2), tuple(committee), n_classes=2, n_features=X.shape[1],
                        density=KAPPA, learning_rate=LAM)


def _kinds():
    """The 8 records of {0,1}^2 x {0,1}."""
    return [((a, b), c) for a, b, c in itertools.product((0, 1), repeat=3)]


def _table(counts):
    rows = [r for (r, _), k in zip(_kinds(), counts) for _ in range(k)]
    labels = [c for (_, c), k in zip(_kinds(), counts) for _ in range(k)]
    return np.array(rows, dtype=np.uint8).reshape(-1, 2), np.array(labels, dtype=np.uint8)


@pytest.mark.parametrize("committee", [(), (Stump(0, 1), Stump(-1, -1)), (Stump(0, 1), Stump(1, 1), Stump(-1, 1))])
def test_stump_utilities_sensitivity_on_both_sides_of_the_limit(committee):
    """Every pair of neighbouring tables of up to 2 records on {0,1}^2 x {0,1} (add one record): the exact utilities
    move by at most 1 (Lemma S', no float slack), and some pair moves one by exactly 1, so no smaller bound holds;
    the rounded, centred utilities the mechanism draws on move by at most 1 + 2 * 2**-52 * STUMP_FLOOR / rate once
    re-anchored at the exact maximum."""
    rate = ExponentialMechanism(1.0 - ROUNDING_EPSILON, 1.0)._rate
    worst, worst_rounded = Fraction(0), Fraction(0)
    for size in range(3):
        for counts in itertools.product(range(size + 1), repeat=8):
            if sum(counts) != size:
                continue
            for kind in range(8):
                bigger = list(counts)
                bigger[kind] += 1
                ua, ub = (stump_utilities(_measure(*_table(c), committee)) if sum(c) else None
                          for c in (counts, bigger))
                ea = ([Fraction(v, ua.denominator) for v in ua.numerators] if ua is not None
                      else [Fraction(0)] * len(ub))
                eb = [Fraction(v, ub.denominator) for v in ub.numerators]
                worst = max(worst, max(abs(a - b) for a, b in zip(ea, eb)))
                if ua is not None:
                    ra = [Fraction(c) + max(ea) for c in ua.centred(rate)]
                    rb = [Fraction(c) + max(eb) for c in ub.centred(rate)]
                    worst_rounded = max(worst_rounded, max(abs(a - b) for a, b in zip(ra, rb)))
    if len(committee) == 3:  # a record three stumps mislabel is capped at 1: added beside another, it moves by 1
        assert worst == 1  # reached: a smaller sensitivity would be violated
    assert worst <= 1
    assert worst_rounded <= 1 + Fraction(_rounding_bound(rate))


def _level_tables(rng, levels, scale):
    """Synthetic integer counts by (level, class) and by (level, class, feature), as a fit's parts sum them."""
    T = rng.integers(scale // 2, scale, size=(levels, 2)).astype(np.float64)
    M1 = np.floor(T[:, :, None] * rng.random((levels, 2, 5)))
    return T, M1


def _float_utilities(mu_float, T, M1):
    """The previous contraction: float level measure, float sums by class, then the errors."""
    Tc = np.tensordot(mu_float, T, axes=(0, 0))
    Mc = np.tensordot(mu_float, M1, axes=(0, 0))
    return -stump_errors(Tc, Mc)


@pytest.mark.parametrize("scale", [10**7, 10**10, 10**13])
def test_at_large_counts_the_exact_utilities_keep_sensitivity_one_and_the_float_ones_did_not(scale):
    """Synthetic level counts (no large fit): add one record at each (level, class, feature pattern) in turn.  The
    exact utilities move by at most 1 and their rounded centred values by at most 1 + the stated rounding bound;
    the float contraction moves some utility by more than that bound at these counts."""
    rng = np.random.default_rng(scale % 97)
    rate = ExponentialMechanism(0.5 - ROUNDING_EPSILON, 1.0)._rate
    bound = 1 + Fraction(_rounding_bound(rate))
    t = 2
    worst_float = 0.0
    for trial in range(3):
        T, M1 = _level_tables(rng, t + 1, scale)
        n = int(T.sum())
        mu = level_weights_exact(T.sum(axis=1), t, density=KAPPA, learning_rate=LAM, target=Fraction(KAPPA) * n)
        errs = np.stack([stump_errors(T[i], M1[i]) for i in range(t + 1)])
        u = ExactUtilities.of_levels(mu, -errs)
        for level, k in itertools.product(range(t + 1), range(2)):
            x = rng.integers(0, 2, size=5)
            T2, M2 = T.copy(), M1.copy()
            T2[level, k] += 1
            M2[level, k] += x
            mu2 = level_weights_exact(T2.sum(axis=1), t, density=KAPPA, learning_rate=LAM,
                                      target=Fraction(KAPPA) * (n + 1))
            u2 = ExactUtilities.of_levels(mu2, -np.stack([stump_errors(T2[i], M2[i]) for i in range(t + 1)]))
            ea = [Fraction(v, u.denominator) for v in u.numerators]
            eb = [Fraction(v, u2.denominator) for v in u2.numerators]
            assert max(abs(a - b) for a, b in zip(ea, eb)) <= 1
            ra = [Fraction(c) + max(ea) for c in u.centred(rate)]
            rb = [Fraction(c) + max(eb) for c in u2.centred(rate)]
            assert max(abs(a - b) for a, b in zip(ra, rb)) <= bound
            fa = _float_utilities(_as_floats(mu), T, M1)
            worst_float = max(worst_float, max(abs(Fraction(f) - e) for f, e in zip(fa, ea)))
    # the float contraction's own error (against the exact values) grows with kappa n and exceeds what the
    # rounded centred utilities may move by: what the review found
    assert worst_float > bound - 1


def test_the_stump_step_reserves_the_rounding_share_and_keeps_its_ledger_entry():
    params = dict(SmoothBoostClassifier(weak_learner="stump", epsilon=1.0, n_rounds=4).get_params(deep=False))
    plan = boost_plan(params, 3)
    step = plan.rounds[0][0]
    assert step.entry.epsilon == 0.25 and step.entry.sensitivity == 1.0
    assert step.entry.curve == ExponentialMechanism(0.25, 1.0).curve  # the ledger is unchanged
    select = step.noise.args[0]
    assert select.epsilon == 0.25 - ROUNDING_EPSILON
    # 2 * rate * (1 + rounding) + the sampler's grid slack is the entry's epsilon
    assert 2 * select._rate * (1 + _rounding_bound(select._rate)) + 2.0**-39 <= 0.25 + 1e-18
    assert 2 * 2 * 2.0**-52 * STUMP_FLOOR <= ROUNDING_EPSILON


# ------------------------------------------------------------------ rule 2: short committees of stumps
def _params(**kw):
    return dict(SmoothBoostClassifier(weak_learner="stump", epsilon=5.0).get_params(deep=False), **kw)


def test_the_short_committee_rate_fires_only_for_a_counted_committee_of_5_to_13_stumps():
    assert boost_plan(_params(), 10, records_estimate=500).learning_rate_scale == SHORT_COMMITTEE_RATE
    assert boost_plan(_params(), 10, records_estimate=300).n_rounds == 3
    assert boost_plan(_params(), 10, records_estimate=300).learning_rate_scale == 1.0  # 3 rounds: the full rate
    assert boost_plan(_params(), 10, records_estimate=100).learning_rate_scale == 1.0  # one round: no reweighting
    assert boost_plan(_params(), 10, records_estimate=10**5).learning_rate_scale == 1.0  # the cap: 15 rounds
    assert boost_plan(_params(n_rounds=5), 10).learning_rate_scale == 1.0  # an explicit committee
    assert boost_plan(_params(weak_learner="tree"), 10, records_estimate=500).learning_rate_scale == 1.0
    assert boost_plan(_params(delta=1e-6), 10).learning_rate_scale == 1.0  # tight accountant: no count
    assert [learning_rate_scale(True, "stump", r) for r in (1, 3, 5, 13, 15)] == [1.0, 1.0, 0.5, 0.5, 1.0]


def _german_like(seed=0, n=500):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 12))
    y = ((X[:, 0] + (rng.random(n) < 0.4)) > 0).astype(int)
    return X, y


def test_a_rule_2_file_records_it_verifies_and_tampering_with_it_is_refused():
    X, y = _german_like()
    m = SmoothBoostClassifier(weak_learner="stump", epsilon=5.0, classes=[0, 1], random_state=0).fit(X, y)
    assert 5 <= len(m.estimators_) < 15 and m.rule_ == BOOST_RULE
    data = m.to_dict()
    assert data["rule"] == BOOST_RULE
    back = SmoothBoostClassifier.from_dict(copy.deepcopy(data))
    assert back.rule_ == BOOST_RULE and np.array_equal(back.predict(X), m.predict(X))
    for bad in (3, 1, "2", None):
        edited = copy.deepcopy(data)
        edited["rule"] = bad
        with pytest.raises(ModelFileError, match="rule"):
            SmoothBoostClassifier.from_dict(edited)
    old = copy.deepcopy(data)
    del old["rule"]  # a file written before rule 2 (the full rate): it still verifies
    assert SmoothBoostClassifier.from_dict(old).rule_ is None
    # the same fit at the full rate, as before rule 2: another committee in general, same plan and ledger
    assert m.records_estimate_ is not None


def test_rule_2_is_refused_where_it_does_not_apply_and_absent_where_it_did_not_fire():
    X, y = _german_like(n=3000)
    m = SmoothBoostClassifier(weak_learner="stump", epsilon=5.0, classes=[0, 1], random_state=0).fit(X, y)
    assert len(m.estimators_) == 15 and m.rule_ is None
    data = m.to_dict()
    assert "rule" not in data
    data["rule"] = BOOST_RULE
    with pytest.raises(ModelFileError, match="rule"):
        SmoothBoostClassifier.from_dict(data)


def test_rule_2_reweights_at_the_smaller_rate(monkeypatch):
    """A rule-2 fit at learning_rate 0.5 is the fit at learning_rate 0.25 without the rule: the same plan, the
    same draws, the smaller rate."""
    X, y = _german_like(seed=3)
    kw = dict(weak_learner="stump", epsilon=5.0, classes=[0, 1], random_state=7)
    short = SmoothBoostClassifier(**kw).fit(X, y)
    assert short.rule_ == BOOST_RULE and 5 <= len(short.estimators_) < 15
    from dpglass.models.boosting import plan as plan_module

    monkeypatch.setattr(plan_module, "SHORT_COMMITTEE_RATE", 1.0)
    full = SmoothBoostClassifier(learning_rate=0.5 * SHORT_COMMITTEE_RATE, **kw).fit(X, y)
    assert full.estimators_ == short.estimators_
