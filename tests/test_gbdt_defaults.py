"""DP-GBDT's default trees' lambda (issue 28): raised from the intercept's released Hessian sums on small tables.

``gbdt.budget.tree_lambda`` is post-processing of a released value; the file
holds that value when the rule fires and the verifier recomputes the lambda
from it (docs/privacy.md, DP gradient boosted trees, "The trees' lambda").
"""

from __future__ import annotations

import copy
import itertools
import json

import numpy as np
import pytest

from dpglass.exceptions import ModelFileError
from dpglass.models import DPGradientBoostingClassifier
from dpglass.models.gbdt.budget import (
    LAMBDA_MAX_NOISE_SCALES,
    LAMBDA_NOISE_SCALES,
    LEAF_STEP_PRIOR,
    gbdt_plan,
    leaf_gradient_scale,
    tree_lambda,
)


def _plan(**params):
    base = DPGradientBoostingClassifier(epsilon=1.0).get_params(deep=False)
    return gbdt_plan(dict(base, **params), 6, params.pop("n_classes", 2) if "n_classes" in params else 2)


def _scale(plan):
    pub = plan.public
    return leaf_gradient_scale(plan.x, pub.split, pub.split_share, pub.hessian_share)


def test_the_rule_is_the_plan_lambda_on_large_tables_and_at_most_eight_scales_on_small_ones():
    plan = _plan()
    b = _scale(plan)
    assert plan.reg_lambda == pytest.approx(LAMBDA_NOISE_SCALES * b, rel=1e-12)
    assert tree_lambda(plan, [1e6]) is plan.reg_lambda  # the same float: files unchanged where it does not fire
    assert tree_lambda(plan, [-5.0]) == LAMBDA_MAX_NOISE_SCALES * b  # no records seen: the cap
    assert tree_lambda(plan, [0.0]) == LAMBDA_MAX_NOISE_SCALES * b
    # in between: the Bayes lambda v / (s^2 H) of a leaf of H = H0 / 2**depth, v = 2 scale^2 (Laplace)
    entry = plan.trees[0].leaves[0].entry
    v = 2 * entry.scale**2
    h0 = 2 * v / (LEAF_STEP_PRIOR**2 * 6 * b)  # the leaf's Bayes lambda is 6 noise scales
    assert tree_lambda(plan, [h0]) == pytest.approx(6 * b, rel=1e-12)
    # monotone: fewer records, more shrinkage, between the plan's lambda and the cap
    values = [tree_lambda(plan, [h]) for h in np.geomspace(1, 1e5, 50)]
    assert all(a >= c for a, c in itertools.pairwise(values))
    assert min(values) == plan.reg_lambda and max(values) == LAMBDA_MAX_NOISE_SCALES * b


def test_with_learning_rate_one_the_cap_is_the_plan_lambda():
    plan = _plan(epsilon=0.4)
    assert plan.public.learning_rate == 1.0
    assert tree_lambda(plan, [0.0]) is plan.reg_lambda
    half = _plan(epsilon=0.4, learning_rate=0.8)  # at most 4 / 0.8 = 5 noise scales
    assert tree_lambda(half, [0.0]) == pytest.approx(5 * _scale(half), rel=1e-12)


def test_an_explicit_lambda_and_dpboost_keep_theirs():
    assert tree_lambda(_plan(reg_lambda=2.0), [0.0]) == 2.0
    dp = _plan(variant="dpboost")
    assert tree_lambda(dp, [0.0]) == dp.reg_lambda == 0.1


def _table(n, seed=0, k=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 6))
    y = (rng.random(n) < np.where(X[:, 0] == 1, 0.75, 0.65)).astype(int) if k == 2 else rng.integers(0, k, n)
    return X, y


def _fit(n, seed=0, k=2, **params):
    X, y = _table(n, seed, k)
    return DPGradientBoostingClassifier(epsilon=1.0, classes=list(range(k)), random_state=seed,
                                        **params).fit(X, y)


@pytest.fixture(scope="module")
def small():
    return _fit(300)


def test_a_small_table_raises_the_trees_lambda_and_the_file_verifies(small):
    plan = gbdt_plan(small.get_params(deep=False), 6, 2)
    assert small.intercept_hessian_ is not None and len(small.intercept_hessian_) == 1
    assert plan.reg_lambda < small.reg_lambda_ <= LAMBDA_MAX_NOISE_SCALES * _scale(plan) * (1 + 1e-12)
    assert small.reg_lambda_ == plan.tree_lambda(small.intercept_hessian_)
    data = small.to_dict()
    assert data["intercept_hessian"] == small.intercept_hessian_
    back = DPGradientBoostingClassifier.from_dict(json.loads(json.dumps(data)))
    assert json.dumps(back.to_dict()) == json.dumps(data)
    assert back.reg_lambda_ == small.reg_lambda_


def test_a_large_table_keeps_the_plan_lambda_and_the_file_has_no_new_field():
    m = _fit(40_000)
    assert m.intercept_hessian_ is None and "intercept_hessian" not in m.to_dict()
    assert m.reg_lambda_ == gbdt_plan(m.get_params(deep=False), 6, 2).reg_lambda


def test_zero_records_fit_with_the_cap():
    m = DPGradientBoostingClassifier(epsilon=1.0, classes=[0, 1], random_state=0).fit(np.zeros((0, 6)), [])
    DPGradientBoostingClassifier.from_dict(m.to_dict())  # verifies, whichever way the noisy sum fell


def test_three_classes_raise_it_from_the_classes_sums_and_verify():
    m = _fit(300, k=3)
    assert m.intercept_hessian_ is not None and len(m.intercept_hessian_) == 3
    DPGradientBoostingClassifier.from_dict(json.loads(json.dumps(m.to_dict())))


def _grid(m):
    return gbdt_plan(m.get_params(deep=False), 6, len(m.classes_)).intercept[1].domain.step


def _six_scales(d, g):
    """Intercept Hessian sums (on the grid) whose rule gives about 6 noise scales, not the file's 8."""
    plan = gbdt_plan(d["params"], 6, 2)
    h0 = 2 * (2 * plan.trees[0].leaves[0].entry.scale**2) / (LEAF_STEP_PRIOR**2 * 6 * _scale(plan))
    d["intercept_hessian"] = [g * round(h0 / g)]


@pytest.mark.parametrize("edit, field", [
    (_six_scales, "reg_lambda"),
    (lambda d, g: d.update(intercept_hessian=[d["intercept_hessian"][0] + g / 2]), "intercept_hessian"),
    (lambda d, g: d.pop("intercept_hessian"), "reg_lambda"),
    (lambda d, g: d.update(intercept_hessian=[1e9]), "intercept_hessian"),
    (lambda d, g: d.update(intercept_hessian=[1.0, 2.0]), "intercept_hessian"),
    (lambda d, g: d.update(reg_lambda=d["reg_lambda"] * 1.5), "reg_lambda"),
])
def test_tampering_with_the_rule_is_refused_with_the_field_named(small, edit, field):
    data = copy.deepcopy(small.to_dict())
    edit(data, _grid(small))
    with pytest.raises(ModelFileError, match=field):
        DPGradientBoostingClassifier.from_dict(data)


def test_the_field_on_a_file_whose_rule_did_not_fire_is_refused():
    m = _fit(40_000)
    data = m.to_dict()
    data["intercept_hessian"] = [0.0]
    with pytest.raises(ModelFileError, match="reg_lambda"):
        DPGradientBoostingClassifier.from_dict(data)


def test_the_trees_take_the_raised_lambda(small, monkeypatch):
    """The same fit with the rule switched off: the same intercept and first split (the same draws), and the first
    tree's leaves larger in magnitude (the floor lambda shrinks them less)."""
    from dpglass.models.gbdt.budget import GbdtPlan

    monkeypatch.setattr(GbdtPlan, "tree_lambda", lambda self, h: self.reg_lambda)
    off = _fit(300)
    assert off.intercept_hessian_ is None and off.reg_lambda_ < small.reg_lambda_
    assert off.init_score_ == small.init_score_
    a, b = small.estimators_[0], off.estimators_[0]
    assert np.array_equal(a.feature, b.feature) and np.array_equal(a.cut, b.cut)
    assert np.all(np.abs(a.value) < np.abs(b.value))
