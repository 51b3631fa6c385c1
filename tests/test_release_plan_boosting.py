"""Smooth boosting's release plan (issue 27): the fit spends only through it, the file verifier replays it.

The plan (``boosting.plan.boost_plan``) is the parameters' and ``n_features``'
alone, but for the committee size when it comes from a noisy count of the
records: the plan then stops after the count and is rebuilt from it.  Under
advanced composition the ledger holds one entry for every round: the plan is
one step whose parts are the other releases of every round.
"""

import copy
import json
import pathlib
import pickle
import re

import numpy as np
import pytest

from dpglass.exceptions import BudgetExceededError, InvalidParameterError, ModelFileError
from dpglass.models import SmoothBoostClassifier
from dpglass.models.boosting.plan import AUTO_COUNT_SHARE, boost_plan, release_plan, round_plan, round_steps
from dpglass.models.boosting.estimator import smooth_boost
from dpglass.privacy.accounting import compose
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.plan import Points, Product, check_against_plan
from ledger_edits import cheaper, entries, recompose

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "dpglass"

STUMP = dict(weak_learner="stump")
JOINT = dict(weak_learner="tree")
TOP_DOWN = dict(weak_learner="tree", tree_learner="top-down", tree_nodes=2)
FITS = {
    "stump": dict(STUMP, n_rounds=4),
    "stump-count": dict(STUMP),  # n_rounds="auto", delta = 0: a noisy count of the records sets the rounds
    "joint-count-delta": dict(JOINT, delta=1e-6, accountant="basic"),  # a count, then rounds with delta > 0
    "stump-paper-rdp": dict(STUMP, n_rounds=5, variant="paper", delta=1e-6, accountant="rdp"),
    "joint": dict(JOINT, n_rounds=3),
    "joint-depth-1-pld": dict(JOINT, tree_nodes=1, n_rounds=3, delta=1e-6, accountant="pld"),
    "top-down": dict(TOP_DOWN, n_rounds=3),
    "top-down-rdp": dict(TOP_DOWN, n_rounds=4, delta=1e-6, accountant="rdp"),
    "stump-advanced": dict(STUMP, n_rounds=60, delta=1e-6, accountant="basic"),
    "top-down-advanced": dict(TOP_DOWN, n_rounds=40, delta=1e-6, accountant="basic"),
}


def _data(seed=7, n=1200, d=6):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.4).astype(np.uint8)
    y = ((X[:, 0] | X[:, 1]) ^ (rng.random(n) < 0.15)).astype(np.uint8)
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    return {name: SmoothBoostClassifier(epsilon=1.0, random_state=1, **kw).fit(X, y) for name, kw in FITS.items()}


@pytest.fixture(scope="module")
def saved(fitted):
    return {name: json.loads(json.dumps(m.to_dict())) for name, m in fitted.items()}


def _plan_of(m):
    return boost_plan(m.get_params(), m.n_features_in_, m.records_estimate_)


# ------------------------------------------------------------------ the fit follows its plan
@pytest.mark.parametrize("name", FITS)
def test_the_fit_records_exactly_its_plan_and_draws_every_part(fitted, name):
    m = fitted[name]
    plan = _plan_of(m)
    assert list(m.privacy_ledger_.entries) == [s.entry for s in plan.steps]
    assert release_plan(m.get_params(), m.n_features_in_, m.records_estimate_) == list(plan.steps)
    assert m.privacy_ledger_._parts_due == []  # every round drew its releases
    assert len(m.estimators_) == plan.n_rounds == len(plan.rounds)
    assert (m.round_epsilon_, m.composition_, m.privacy_ledger_.accountant) == (
        plan.round_epsilon, plan.composition, plan.accountant)
    if m.records_estimate_ is None:  # the plan is the parameters' alone: other data, the same releases
        other = SmoothBoostClassifier(epsilon=1.0, random_state=2, **FITS[name]).fit(*_data(9, 500))
        assert other.privacy_ledger_.entries == m.privacy_ledger_.entries


@pytest.mark.parametrize("name", FITS)
def test_the_plan_fits_its_budget(fitted, name):
    plan = _plan_of(fitted[name])
    eps, delta = compose([s.entry for s in plan.steps], plan.accountant, plan.delta)
    assert eps <= 1.0 * (1 + 1e-9) and delta <= plan.delta


@pytest.mark.parametrize("learner,kw", [("stump", STUMP), ("joint", JOINT), ("top-down", TOP_DOWN)])
@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_the_tight_accountants_calibrate_the_plans_own_privacy_maps(learner, kw, accountant):
    """round_budget calibrates round_plan's entries: they carry the plan's epsilons and curves, round for round."""
    params = SmoothBoostClassifier(epsilon=1.0, delta=1e-6, n_rounds=3, accountant=accountant, **kw).get_params()
    plan = boost_plan(params, 5)
    maps = round_plan(params["weak_learner"], params["tree_nodes"], 3, params["tree_learner"])(plan.round_epsilon)
    assert [(e.epsilon, e.delta, e.curve) for e in maps] == [(s.entry.epsilon, s.entry.delta, s.entry.curve)
                                                             for s in plan.steps]


def test_advanced_composition_is_one_step_whose_parts_are_the_other_releases():
    params = SmoothBoostClassifier(delta=1e-6, n_rounds=40, accountant="basic", **TOP_DOWN).get_params()
    plan = boost_plan(params, 5)
    assert plan.composition == "advanced" and len(plan.steps) == 1
    (step,) = plan.steps
    assert step.entry.release == "40 boosting rounds (tree weak learner)"
    assert step.entry.mechanism == "advanced-composition(exponential x80, laplace x40)"
    assert len(step.parts) == 40 * 3 - 1 and all(p.entry is step.entry for p in step.parts)
    flat = [s for steps in plan.rounds for s in steps]
    assert flat[0] is step and all(a is b for a, b in zip(flat[1:], step.parts))
    assert [s.fields for s in plan.rounds[1]] == [("estimators[1] split 1",), ("estimators[1] split 2",),
                                                  ("estimators[1] leaf labels",)]


def test_the_count_is_a_branch_the_plan_is_rebuilt_from():
    params = SmoothBoostClassifier(epsilon=1.0).get_params()
    head = boost_plan(params, 6)
    assert head.n_rounds is None and head.rounds == () and head.steps == (head.count,)
    assert head.count.entry.epsilon == pytest.approx(AUTO_COUNT_SHARE) and head.count.fields == ("records_estimate",)
    full = boost_plan(params, 6, 5000)
    assert full.steps[0] == head.count and full.n_rounds == 11 == len(full.steps) - 1
    assert boost_plan(params, 6, 700).n_rounds == 1
    # a ledger following the head accepts the rebuilt plan (it begins with the count); another is refused
    ledger = PrivacyLedger(epsilon=1.0).follow(head.steps)
    ledger.release(head.count, 5000, np.random.default_rng(0))
    ledger.follow(full.steps)
    with pytest.raises(InvalidParameterError, match="begin with the releases already recorded"):
        ledger.follow(boost_plan(dict(params, epsilon=2.0), 6, 5000).steps)


def test_the_budget_is_checked_before_the_first_round_draws():
    """A ledger with less than the plan needs: under advanced composition the one entry does not fit, so round 1
    draws nothing; under basic composition the rounds that fit draw and the first that does not draws nothing."""
    X, y = _data()
    for kw, recorded in ((dict(STUMP, n_rounds=60, delta=1e-6, accountant="basic"), 0),
                         (dict(STUMP, n_rounds=4), 2)):
        params = SmoothBoostClassifier(epsilon=1.0, **kw).get_params()
        plan = boost_plan(params, X.shape[1])
        ledger = PrivacyLedger(epsilon=0.5, delta=plan.delta, accountant=plan.accountant).follow(plan.steps)
        rng = np.random.default_rng(0)
        drawn = []
        ledger._draw = lambda step, exact, rng, drawn=drawn: drawn.append(step) or PrivacyLedger._draw(step, exact, rng)
        with pytest.raises(BudgetExceededError):
            smooth_boost(X, y, plan=plan, ledger=ledger, learning_rate=0.5, density=0.35, rng=rng)
        assert len(ledger) == len(drawn) == recorded


def test_domains_of_the_round_steps():
    (stump,) = round_steps("stump", 3, 0.5)
    assert isinstance(stump.domain, Product) and "8 public stumps" in str(stump.domain)
    assert stump.domain.problem([(-1, 1), (2, -1)]) is None
    for bad in ([(3, 1)], [(0, 0)], [(-2, 1)], [(0, 1, 1)], [0], [(0.5, 1)], [(True, 1)]):
        assert "not one of the public stumps" in stump.domain.problem(bad)
    (joint,) = round_steps("joint", 3, 0.5, tree_nodes=3)
    assert "432 public depth-2 trees" in str(joint.domain)  # 3**3 split features x 2**4 labellings
    assert joint.domain.problem([(0, 2, 1, -1, 1, 1, -1)]) is None
    for bad in ([(0, 2, 1, -1, 1, 0, -1)], [(0, 3, 1, -1, 1, 1, -1)], [(0, 2, -1, 1, 1, -1)]):
        assert joint.domain.problem(bad) is not None
    split_1, split_2, labels = round_steps("top-down", 3, 0.5, tree_nodes=2)
    assert split_1.domain.problem([(0, 2)]) is None and split_1.domain.problem([(1, 0)]) is not None
    assert split_2.domain.problem([(1, 2)]) is None and split_2.domain.problem([(2, 0)]) is not None
    assert labels.domain == Points((-1, 1)) and labels.domain.problem([1, -1, 1]) is None
    assert labels.domain.problem([1, 0, 1]) is not None


def test_the_released_values_lie_in_their_domains_as_drawn(fitted):
    """The ledger checks every draw against its step's domain; the file's view of them passes the replay."""
    from dpglass.models.boosting.verify import _released

    for name in ("stump", "joint", "top-down", "top-down-advanced"):
        m = fitted[name]
        plan, data = _plan_of(m), json.loads(json.dumps(m.to_dict()))
        check_against_plan(data["privacy_ledger"]["entries"], plan.steps, _released(data, plan), _fail)


def _fail(field, problem, expected=None):
    raise ModelFileError(f"{field} {problem}; expected {expected}")


@pytest.mark.parametrize("name,edit,message", [
    ("stump", lambda d: d["estimators"][2].__setitem__(0, 6), "estimators[2] holds (6, 1), not one of the public"),
    ("stump-advanced", lambda d: d["estimators"][59].__setitem__(1, 0), "estimators[59] holds"),
    ("joint", lambda d: d["estimators"][1]["value"].__setitem__(3, 5), "estimators[1] holds"),
    ("top-down-advanced", lambda d: d["estimators"][39]["value"].__setitem__(d["estimators"][39]["feature"].index(-1),
                                                                            0), "estimators[39] leaf labels holds 0"),
    ("stump-count", lambda d: d.update(records_estimate=0.5), "records_estimate holds 0.5, not an integer"),
])
def test_the_replay_refuses_a_value_off_its_domain(fitted, name, edit, message):
    """Beside the structural checks, the replay itself refuses values off their steps' domains (the parts' too)."""
    from dpglass.models.boosting.verify import _released

    m = fitted[name]
    plan, data = _plan_of(m), json.loads(json.dumps(m.to_dict()))
    edit(data)
    with pytest.raises(ModelFileError, match=re.escape(message)):
        check_against_plan(data["privacy_ledger"]["entries"], plan.steps, _released(data, plan), _fail)


def test_a_fitted_model_pickles_without_its_plan(fitted):
    m = fitted["stump-advanced"]
    clone = pickle.loads(pickle.dumps(m))
    assert clone.privacy_ledger_.entries == m.privacy_ledger_.entries and not hasattr(clone.privacy_ledger_, "_plan")


@pytest.mark.parametrize("path", ["models/boosting/weak_learners.py", "models/boosting/plan.py", "models/boosting/smooth_measure.py"])
def test_the_familys_other_modules_write_no_ledger_entry_and_no_ledger(path):
    text = (SRC / path).read_text()
    assert not re.search(r"\.spend\(|ledger_of\(|_entries\.append|PrivacyLedger\(", text), path


# ------------------------------------------------------------------ the verifier replays it
def _swap(items, i, j):
    items[i], items[j] = items[j], items[i]


#: (fit, edit, a field the refusal must name)
TAMPERS = {
    "dropped entry": ("stump", lambda d: (entries(d).pop(), recompose(d)), "privacy_ledger.entries"),
    "added entry": ("top-down", lambda d: (entries(d).append(dict(entries(d)[0])), recompose(d)),
                    "privacy_ledger"),
    "reordered entries": ("top-down", lambda d: _swap(entries(d), 1, 2), "privacy_ledger.entries[1]"),
    "cheaper stump": ("stump", lambda d: cheaper(d, 1), "privacy_ledger.entries[1].epsilon"),
    "cheaper split": ("top-down-rdp", lambda d: cheaper(d, 0), "privacy_ledger.entries[0].epsilon"),
    "cheaper composed rounds": ("stump-advanced", lambda d: cheaper(d, 0), "privacy_ledger.entries[0].epsilon"),
    "cheaper count": ("stump-count", lambda d: cheaper(d, 0), "privacy_ledger.entries[0].epsilon"),
    "a smaller count scale": ("stump-count", lambda d: entries(d)[0].update(scale=1.0),
                              "privacy_ledger.entries[0].scale"),
    "renamed release": ("joint", lambda d: entries(d)[0].update(release="round 1: stump"),
                        "privacy_ledger.entries[0].release"),
    "changed note": ("joint-depth-1-pld", lambda d: entries(d)[1].update(note="a tree on one record"),
                     "privacy_ledger.entries[1].note"),
    "changed composed note": ("top-down-advanced", lambda d: entries(d)[0].update(note="advanced composition"),
                              "privacy_ledger.entries[0].note"),
    "a lighter guarantee": ("stump-paper-rdp", lambda d: entries(d)[0].update(sensitivity=1.0),
                            "privacy_ledger.entries[0].sensitivity"),
    "a composed entry split in rounds": ("stump-advanced", lambda d: entries(d).append(dict(entries(d)[0])),
                                         "privacy_ledger"),
    "round_epsilon": ("joint", lambda d: d.update(round_epsilon=d["round_epsilon"] * 1.01), "round_epsilon"),
    "composition": ("stump-advanced", lambda d: d.update(composition="rdp"), "composition"),
    "accountant": ("joint-depth-1-pld", lambda d: (d["privacy_ledger"].update(accountant="rdp"), recompose(d)),
                   "privacy_ledger.accountant"),
    "a stump off its domain": ("stump", lambda d: d["estimators"][2].__setitem__(0, d["n_features_in"]),
                               "estimators[2]"),
    "a stump with sign 0": ("stump-advanced", lambda d: d["estimators"][30].__setitem__(1, 0), "estimators[30]"),
    "a joint tree's split off its domain": (
        "joint", lambda d: d["estimators"][1]["feature"].__setitem__(2, d["n_features_in"]), "estimators[1]"),
    "a joint tree's label off its domain": ("joint", lambda d: d["estimators"][0]["value"].__setitem__(4, 0),
                                            "estimators[0]"),
    "a top-down label off its domain": ("top-down-advanced", lambda d: d["estimators"][7]["value"].__setitem__(
        d["estimators"][7]["feature"].index(-1), 2), "estimators[7]"),
    "a top-down tree out of its growth order": ("top-down", lambda d: _swap_children(d["estimators"][0]),
                                                "estimators[0].left/right"),
    "a count off the integers": ("stump-count", lambda d: d.update(records_estimate=1500.5), "records_estimate"),
    "a count for another committee": ("stump-count", lambda d: d.update(records_estimate=10**6), "estimators"),
    "a count where none is made": ("stump", lambda d: d.update(records_estimate=1200), "records_estimate"),
}


def _swap_children(tree):
    """Still a tree with the same shape, but its root's children are numbered 2, 1: no fit grows that layout."""
    tree["left"][0], tree["right"][0] = tree["right"][0], tree["left"][0]


@pytest.mark.parametrize("name", list(TAMPERS))
def test_the_verifier_replays_the_plan(saved, name):
    fit, edit, field = TAMPERS[name]
    data = copy.deepcopy(saved[fit])
    SmoothBoostClassifier.from_dict(copy.deepcopy(data))  # the untouched file loads
    edit(data)
    with pytest.raises(ModelFileError, match=re.escape(field)):
        SmoothBoostClassifier.from_dict(data)
