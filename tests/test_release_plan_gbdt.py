"""DP-GBDT's release plan (issue 27): the fit spends only through it, the file verifier replays it.

Also the two additions to the plan core it needed: a step's ``parts`` (one
entry, released on disjoint parts of the records: a DPBoost ensemble's trees)
and a followed plan checked against the budget as a whole, once.
"""

import copy
import json
import re
from dataclasses import asdict

import numpy as np
import pytest

from dpglass.exceptions import BudgetExceededError, InvalidParameterError, ModelFileError
from dpglass.privacy.ledger import LedgerEntry, PrivacyLedger
from dpglass.privacy.plan import Integers, PlannedRelease, check_against_plan
from ledger_edits import cheaper, entries, recompose


def _fail(field, problem, expected=None):
    raise ModelFileError(f"{field} {problem}; expected {expected}")


# ------------------------------------------------------------------ the core: parts, one budget check
def _counting(name, eps, drawn, fields=(), parts=()):
    def noise(v, rng):
        drawn.append((name, v))
        return [int(x) for x in v]

    entry = LedgerEntry(name, "discrete laplace", epsilon=eps, sensitivity=1.0)
    return PlannedRelease(entry, noise, Integers(), fields, parts)


def _with_parts(drawn, n_parts=2):
    first = _counting("a", 0.5, drawn, ("a0",))
    parts = tuple(PlannedRelease(first.entry, first.noise, Integers(), (f"a{k}",)) for k in range(1, n_parts + 1))
    return PlannedRelease(first.entry, first.noise, first.domain, first.fields, parts)


def test_parts_draw_after_their_step_each_once_and_record_nothing():
    drawn = []
    a, b = _with_parts(drawn), _counting("b", 0.5, drawn)
    ledger = PrivacyLedger(epsilon=1.0).follow([a, b])
    with pytest.raises(InvalidParameterError, match="next step"):
        ledger.release(a.parts[0], [1], None)  # its entry is not recorded yet
    ledger.release(a, [1], None)
    ledger.release(b, [2], None)  # the plan goes on; the parts stay due
    ledger.release(a.parts[1], [3], None)
    ledger.release(a.parts[0], [4], None)
    with pytest.raises(InvalidParameterError, match="next step"):
        ledger.release(a.parts[0], [5], None)  # each part once
    assert [e.release for e in ledger] == ["a", "b"] and ledger.total() == (1.0, 0.0)
    assert [v for _, v in drawn] == [[1], [2], [3], [4]]


def test_the_verifier_checks_every_parts_fields():
    a = _with_parts([])
    entries = [asdict(a.entry)]
    check_against_plan(entries, [a], {"a0": [1], "a1": [2], "a2": [3]}, _fail)
    with pytest.raises(ModelFileError, match="a2 holds 0.5"):
        check_against_plan(entries, [a], {"a0": [1], "a1": [2], "a2": [0.5]}, _fail)


def test_a_plan_within_the_budget_is_composed_once(monkeypatch):
    calls = []
    compose = PrivacyLedger._compose
    monkeypatch.setattr(PrivacyLedger, "_compose", lambda self, e: calls.append(len(e)) or compose(self, e))
    steps = [_counting(f"s{i}", 0.25, []) for i in range(4)]
    ledger = PrivacyLedger(epsilon=1.0).follow(steps)
    for s in steps:
        ledger.release(s, [0], None)
    assert calls == [4]
    # a plan beyond the budget as a whole: every step is checked, and the one that does not fit draws nothing
    calls.clear()
    drawn = []
    steps = [_counting(f"s{i}", 0.4, drawn) for i in range(3)]
    ledger = PrivacyLedger(epsilon=1.0).follow(steps)
    ledger.release(steps[0], [0], None)
    ledger.release(steps[1], [0], None)
    with pytest.raises(BudgetExceededError):
        ledger.release(steps[2], [0], None)
    assert len(drawn) == 2 and calls == [3, 1, 2, 3]


# ------------------------------------------------------------------ DP-GBDT's plan
from dpglass.models import DPGradientBoostingClassifier, load_model  # noqa: E402
from dpglass.models.gbdt.budget import gbdt_plan, release_plan  # noqa: E402
from dpglass.models.gbdt.releases import Candidates, dpboost_leaf_clip  # noqa: E402
from dpglass.privacy.accounting import compose  # noqa: E402
from dpglass.privacy.mechanisms import LaplaceMechanism  # noqa: E402

BOUNDS = [(0.0, 10.0), (-1.0, 1.0), None, None]
FITS = {
    "newton": dict(n_estimators=4, max_depth=2),
    "quantile": dict(binning="quantile", max_bins=6, n_estimators=3),
    "random-pld": dict(split="random", n_estimators=3, accountant="pld"),
    "gaussian": dict(leaf_noise="gaussian", n_estimators=3, accountant="rdp"),
    "dpboost": dict(variant="dpboost", n_estimators=5, trees_per_ensemble=2, max_depth=2),
    "dpboost-gradient-quantile": dict(variant="dpboost", subset_selection="gradient", binning="quantile", max_bins=4,
                                      n_estimators=6, trees_per_ensemble=3, delta=0.0),
}


def _data(seed=3, n=1500):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 10, n), rng.uniform(-1, 1, n), rng.random(n) < 0.5, rng.random(n) < 0.3])
    y = ((X[:, 0] > 6) ^ (rng.random(n) < 0.2)).astype(np.uint8)
    return X.astype(float), y


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    return {name: DPGradientBoostingClassifier(bounds=BOUNDS, epsilon=0.8, random_state=1, **kw).fit(X, y)
            for name, kw in FITS.items()}


@pytest.fixture(scope="module")
def saved(fitted):
    return {name: json.loads(json.dumps(m.to_dict())) for name, m in fitted.items()}


@pytest.mark.parametrize("name", FITS)
def test_the_fit_records_exactly_its_plan_and_draws_every_part(fitted, name):
    m = fitted[name]
    plan = release_plan(m.get_params(), m.n_features_in_)
    assert list(m.privacy_ledger_.entries) == [s.entry for s in plan]
    assert m.privacy_ledger_._parts_due == []  # every tree of every ensemble drew its releases
    # the plan is the parameters' alone: other data, the same releases
    other = DPGradientBoostingClassifier(bounds=BOUNDS, epsilon=0.8, random_state=2, **FITS[name]).fit(*_data(9, 700))
    assert other.privacy_ledger_.entries == m.privacy_ledger_.entries


@pytest.mark.parametrize("name", FITS)
def test_the_plan_fits_its_budget(fitted, name):
    m = fitted[name]
    plan = gbdt_plan(m.get_params(), m.n_features_in_)
    eps, delta = compose([s.entry for s in plan.steps], plan.accountant, plan.delta)
    assert eps <= 0.8 * (1 + 1e-9) and delta <= plan.delta
    assert (plan.x, plan.accountant, plan.reg_lambda) == (m.tree_epsilon_, m.accountant_, m.reg_lambda_)


def test_a_dpboost_ensemble_is_one_entry_per_step_with_a_part_per_other_tree():
    params = DPGradientBoostingClassifier(variant="dpboost", bounds=BOUNDS, n_estimators=5, trees_per_ensemble=2,
                                          max_depth=2, delta=0.0).get_params()
    plan = gbdt_plan(params, 4)
    assert [s.release for s in plan.steps][:3] == ["ensemble 1: level 1 splits of every tree",
                                                   "ensemble 1: level 2 splits of every tree",
                                                   "ensemble 1: leaf values of every tree"]
    assert len(plan.steps) == 3 * 3 and [len(s.parts) for s in plan.steps] == [1] * 6 + [0] * 3
    assert len(plan.trees) == 5 and plan.trees[1].leaves[0] is plan.steps[2].parts[0]
    for i, tree in enumerate(plan.trees):  # tree k of an ensemble: leaves clipped to g*(1 - eta)^k, its own grid
        grid = LaplaceMechanism(plan.x / 2, dpboost_leaf_clip(1.0, plan.reg_lambda, 0.1, i % 2)[1]).granularity
        assert tree.leaves[0].domain.step == grid and tree.leaves[0].entry is plan.steps[3 * (i // 2) + 2].entry


def test_splits_are_public_feature_cut_pairs():
    params = DPGradientBoostingClassifier(bounds=BOUNDS, max_bins=4, n_estimators=2).get_params()
    plan = gbdt_plan(params, 4)
    cands = plan.trees[0].splits[0].domain
    assert isinstance(cands, Candidates) and len(cands.points) == 3 + 3 + 1 + 1
    assert cands.problem([(0, 2), [3, 0]]) is None
    for bad in ([(2, 1)], [(4, 0)], [(0, 0.5)], [7], [None]):
        assert "candidates" in cands.problem(bad)


def test_the_budget_is_checked_before_a_release_that_exceeds_it(fitted):
    """A ledger with less than the plan needs: the step that does not fit draws nothing."""
    from dpglass.models.gbdt.fit import fit_newton

    m = fitted["newton"]
    plan = gbdt_plan(m.get_params(), 4)
    ledger = PrivacyLedger(epsilon=0.4, delta=plan.delta, accountant=plan.accountant).follow(plan.steps)
    X, y = _data()
    binned = m._binned_table(m._check_fit(X, y))
    with pytest.raises(BudgetExceededError):
        fit_newton(binned, plan, ledger, np.random.default_rng(0), max_leaf=2.0)
    assert 0 < len(ledger) < len(plan.steps) and ledger.total()[0] <= 0.4 * (1 + 1e-9)


#: (fit, edit, a field the refusal must name)
TAMPERS = {
    "dropped entry": ("newton", lambda d: (entries(d).pop(), recompose(d)), "privacy_ledger.entries"),
    "swapped entries": ("newton", lambda d: entries(d).insert(2, entries(d).pop(3)), "privacy_ledger.entries[2]"),
    "cheaper split level": ("newton", lambda d: cheaper(d, 2), "privacy_ledger.entries[2].epsilon"),
    "cheaper leaf sums": ("gaussian", lambda d: entries(d)[3]["curve"].update(sigma=1e3),
                          "privacy_ledger.entries[3].curve"),
    "renamed release": ("newton", lambda d: entries(d)[0].update(release="leaf sums"),
                        "privacy_ledger.entries[0].release"),
    "edited note": ("dpboost", lambda d: entries(d)[2].update(note="trees on one record each"),
                    "privacy_ledger.entries[2].note"),
    "accountant": ("random-pld", lambda d: (d["privacy_ledger"].update(accountant="rdp"), recompose(d)),
                   "privacy_ledger.accountant"),
    "tree_epsilon": ("dpboost", lambda d: d.update(tree_epsilon=d["tree_epsilon"] * 1.01), "tree_epsilon"),
    "reg_lambda": ("newton", lambda d: d.update(reg_lambda=d["reg_lambda"] / 2), "reg_lambda"),
    "more bins in the parameters": ("quantile", lambda d: d["params"].update(max_bins=7), "edges[0]|entries"),
    "fewer quantile bins released": ("quantile", lambda d: d["params"].update(quantile_share=0.05),
                                     "privacy_ledger.entries[0].epsilon"),
    "a cut point off the quantile grid": ("quantile", lambda d: d["edges"][1].__setitem__(2, 0.0123),
                                          "edges[1]"),
    "a split on a cut that does not exist": ("newton", lambda d: d["trees"][1]["cut"].__setitem__(0, 31),
                                             "trees[1]"),
    "a DPBoost leaf off its tree's grid": ("dpboost", lambda d: d["trees"][3]["value"].__setitem__(1, 0.0123),
                                           "trees[3].value"),
    "a newton leaf beyond its clip": ("newton", lambda d: d["trees"][0]["value"].__setitem__(0, 2.5),
                                      "trees[0].value"),
}


@pytest.mark.parametrize("name", list(TAMPERS))
def test_the_verifier_replays_the_plan(saved, name):
    fit, edit, field = TAMPERS[name]
    data = copy.deepcopy(saved[fit])
    DPGradientBoostingClassifier.from_dict(copy.deepcopy(data))  # the untouched file loads
    edit(data)
    with pytest.raises(ModelFileError, match="|".join(re.escape(f) for f in field.split("|"))):
        DPGradientBoostingClassifier.from_dict(data)


def test_a_saved_model_loads_with_its_plan(tmp_path, fitted):
    for name, m in fitted.items():
        m.save(tmp_path / f"{name}.json")
        back = load_model(tmp_path / f"{name}.json")
        assert back.privacy_ledger_.entries == m.privacy_ledger_.entries
