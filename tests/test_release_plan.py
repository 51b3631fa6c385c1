"""Release plans (issue 27): the fit spends only through its family's plan; the file verifier replays it."""

import json
import pathlib
import re

import numpy as np
import pytest

from dpglass.exceptions import BudgetExceededError, InvalidParameterError, ModelFileError
from dpglass.models import DPLogisticRegression
from dpglass.models.logistic.estimator import release_plan
from dpglass.privacy.ledger import LedgerEntry, PrivacyLedger
from dpglass.privacy.plan import GridMultiples, Integers, PlannedRelease, Points
from ledger_edits import entries, load_dict

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "dpglass"

#: Families whose fit spends only through ``PrivacyLedger.release`` (the list grows as families move to plans).
PLANNED_FAMILIES = ("models/logistic/estimator.py", "models/rule_list/errors.py", "models/rule_list/gini.py",
                    "models/teachers/estimator.py", "models/_binning.py", "models/gbdt/fit.py", "models/boosting/estimator.py",
                    "models/selection/estimator.py", "models/gam/fit.py", "models/gam/estimator.py",
                    "models/pipeline/estimator.py", "cli/held_out.py")


def _step(name="count", eps=0.5, domain=Integers(), noise=lambda v, rng: [int(x) + 1 for x in v]):
    return PlannedRelease(LedgerEntry(name, "discrete laplace", epsilon=eps, sensitivity=1.0), noise, domain,
                          ("counts",))


def test_release_checks_the_budget_before_it_draws():
    drawn = []
    step = _step(eps=0.75, noise=lambda v, rng: drawn.append(v) or list(v))
    ledger = PrivacyLedger(epsilon=1.0).follow([step, step])
    assert ledger.release(step, [3], None) == [3]
    with pytest.raises(BudgetExceededError):
        ledger.release(step, [4], None)
    assert drawn == [[3]] and len(ledger) == 1  # nothing drawn, nothing recorded for the refused release


def test_release_takes_the_plans_steps_in_order():
    a, b = _step("a", 0.25), _step("b", 0.25)
    ledger = PrivacyLedger(epsilon=1.0).follow([a, b])
    with pytest.raises(InvalidParameterError, match="not the plan's next step"):
        ledger.release(b, [1], None)
    ledger.release(a, [1], None)
    ledger.release(b, [1], None)
    with pytest.raises(InvalidParameterError, match="nothing more"):
        ledger.release(a, [1], None)


def test_domains_accept_their_values_and_name_the_first_other():
    assert Integers().problem([1, -2, 3.0]) is None and "not an integer" in Integers().problem([1, 2.5])
    assert Integers().problem([True]) is not None
    g = GridMultiples(2.0 ** -6)
    assert g.problem([3 * 2.0 ** -6, 0.0]) is None and "grid step" in g.problem([0.1])
    assert g.problem([float("nan")]) is not None
    assert Points((0.5, 1.5)).problem([1.5]) is None and Points((0.5,)).problem([0.7]) is not None


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = (rng.random((400, 4)) < 0.5).astype(int)
    y = X[:, 0] | X[:, 1]
    path = tmp_path_factory.mktemp("plan") / "lr.json"
    DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=1).fit(X, y).save(path)
    return json.loads(path.read_text())


def test_the_fit_records_exactly_its_plan(saved):
    plan = release_plan(saved["params"], saved["n_features_in"])
    assert [e["release"] for e in saved["privacy_ledger"]["entries"]] == [s.release for s in plan]
    assert load_dict(saved).privacy_ledger_.total() == (1.0, 0.0)


TAMPERS = {
    "dropped entry": lambda d: entries(d).pop(0),
    "added entry": lambda d: entries(d).append(dict(entries(d)[0])),
    "reordered entries": lambda d: entries(d).reverse(),
    "cheaper counts": lambda d: entries(d)[0].update(epsilon=entries(d)[0]["epsilon"] / 2),
    "renamed release": lambda d: entries(d)[1].update(release="coefficients"),
    "count off the integers": lambda d: d["class_counts"].__setitem__(0, d["class_counts"][0] + 0.5),
    "coefficient off the grid": lambda d: d["coef"].__setitem__(1, 0.4375 + 1e-9),
    "raw value as intercept_grid": lambda d: d.update(intercept_grid=0.4172),
    "grid step edited": lambda d: d.update(grid_step=d["grid_step"] / 2),
}


@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_the_verifier_replays_the_plan(saved, tamper):
    data = json.loads(json.dumps(saved))
    TAMPERS[tamper](data)
    with pytest.raises(ModelFileError, match=r"privacy_ledger|class_counts|coef|intercept|grid_step"):
        load_dict(data)


@pytest.mark.parametrize("path", PLANNED_FAMILIES)
def test_a_planned_family_writes_no_ledger_entry_by_hand(path):
    text = (SRC / path).read_text()
    assert not re.search(r"\.spend\(|ledger_of\(|_entries\.append", text), path
    assert ".release(" in text


@pytest.fixture(scope="module")
def saved_list(tmp_path_factory):
    from dpglass.models import DPRuleListClassifier

    rng = np.random.default_rng(3)
    X = (rng.random((600, 6)) < 0.4).astype(int)
    y = (X[:, 0] & X[:, 1]) | X[:, 2]
    path = tmp_path_factory.mktemp("plan") / "rl.json"
    DPRuleListClassifier(epsilon=2.0, max_length=3, classes=[0, 1], random_state=4).fit(X, y).save(path)
    return json.loads(path.read_text())


LIST_TAMPERS = {
    "dropped selection": lambda d: entries(d).pop(0),
    "added selection": lambda d: entries(d).insert(0, dict(entries(d)[0])),
    "counts before the selections": lambda d: entries(d).insert(0, entries(d).pop()),
    "a cheaper selection": lambda d: entries(d)[0].update(epsilon=entries(d)[0]["epsilon"] / 2),
    "a larger count table budget": lambda d: entries(d)[-1].update(epsilon=entries(d)[-1]["epsilon"] * 2),
    "a count off the integers": lambda d: d["default_rule"]["counts"].__setitem__(0, 3.5),
    "a rule's count off the integers": lambda d: d["rules"][0]["counts"].__setitem__(1, 1e-3),
}


def test_errors_pf_records_exactly_its_plan(saved_list):
    from dpglass.models.rule_list.errors import errors_plan

    recorded = entries(saved_list)
    plan = errors_plan(2.0, 3, len(recorded) - 1, len(saved_list["rules"]))
    assert [e["release"] for e in recorded] == [s.release for s in plan]
    assert load_dict(saved_list).privacy_ledger_.total()[0] == pytest.approx(2.0)


@pytest.mark.parametrize("tamper", list(LIST_TAMPERS))
def test_the_verifier_replays_the_errors_pf_plan(saved_list, tamper):
    data = json.loads(json.dumps(saved_list))
    LIST_TAMPERS[tamper](data)
    with pytest.raises(ModelFileError, match=r"privacy_ledger|rules|default_rule"):
        load_dict(data)


def test_a_fitted_model_pickles_without_its_plan(saved_list):
    """Plan steps hold noise functions (lambdas); a fitted model's ledger must pickle and deep-copy (scikit-learn's
    estimator checks, joblib) with its entries only."""
    import copy
    import pickle

    from dpglass.models.rule_list.errors import errors_plan

    model = load_dict(saved_list)
    ledger = model.privacy_ledger_
    ledger.follow(errors_plan(2.0, 3, len(ledger) - 1, len(saved_list["rules"])))  # what a fit leaves behind
    assert hasattr(ledger, "_plan")
    for clone in (pickle.loads(pickle.dumps(model)).privacy_ledger_, copy.deepcopy(ledger)):
        assert clone.entries == ledger.entries and not hasattr(clone, "_plan")


GINI_FITS = {
    "certified-pf": dict(mechanism="certified-pf"),
    "exponential, basic": dict(mechanism="exponential", accountant="basic"),
    "global-gaussian, paper": dict(mechanism="global-gaussian", variant="paper", delta=1e-6),
    "noisy-counts, gaussian counts": dict(mechanism="noisy-counts", count_noise="gaussian", delta=1e-6),
}


@pytest.fixture(scope="module")
def gini_files(tmp_path_factory):
    import warnings

    from dpglass.models import DPRuleListClassifier

    rng = np.random.default_rng(5)
    X = (rng.random((800, 5)) < 0.4).astype(int)
    y = (X[:, 0] & X[:, 1]) | X[:, 2]
    out = {}
    for name, kw in GINI_FITS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = DPRuleListClassifier(epsilon=2.0, max_length=3, classes=[0, 1], random_state=6, **kw).fit(X, y)
        out[name] = json.loads(json.dumps(model.to_dict()))
    return out


@pytest.mark.parametrize("name", list(GINI_FITS))
def test_a_gini_list_records_exactly_its_plan(gini_files, name):
    from dpglass.models.rule_list.gini_plan import gini_steps  # noqa: F401  (the plan the verifier replays)

    data = gini_files[name]
    assert len(data["remaining_counts"]) == sum(e["release"].endswith("remaining count")
                                                for e in entries(data))
    assert load_dict(data).stop_reason_ == data["stop_reason"]


GINI_TAMPERS = {
    # a count below the minimum support and margin stops the plan at once (certified-pf's entries read it too)
    "a remaining count changed": lambda d: d["remaining_counts"].__setitem__(0, -10**6),
    "a remaining count off the integers": lambda d: d["remaining_counts"].__setitem__(0, 10.5),
    "a remaining count dropped": lambda d: d["remaining_counts"].pop(),
    "the stop reason": lambda d: d.update(stop_reason="minimum support" if d["stop_reason"] != "minimum support"
                                          else "no improvement"),
    "a count entry dropped": lambda d: entries(d).pop(0),
    "a cheaper selection": lambda d: entries(d)[1].update(epsilon=entries(d)[1]["epsilon"] / 2),
    "a selection's note": lambda d: entries(d)[1].update(note="Alice, 37"),
}


@pytest.mark.parametrize("tamper", list(GINI_TAMPERS))
@pytest.mark.parametrize("name", list(GINI_FITS))
def test_the_verifier_replays_the_gini_plan(gini_files, name, tamper):
    data = json.loads(json.dumps(gini_files[name]))
    GINI_TAMPERS[tamper](data)
    with pytest.raises(ModelFileError, match=r"privacy_ledger|remaining_counts|stop_reason|rules"):
        load_dict(data)


#: Where a ledger entry may still be written without a plan step, and why: none left (issue 27; PrivateGridSearch,
#: the last, releases its selection through selection.plan.release_plan). A module added here must say why.
NOT_YET_PLANNED: dict = {}


def test_no_ledger_entry_is_written_outside_release():
    """Entries reach a ledger through PrivacyLedger.release (a plan step) or include (another ledger's releases);
    only the ledger itself appends, and spend() is left to the modules listed in NOT_YET_PLANNED."""
    spenders, appenders = set(), set()
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        text = "\n".join(line for line in path.read_text().splitlines() if ">>>" not in line)
        if re.search(r"\.spend\(", text):
            spenders.add(rel)
        if re.search(r"_entries\.(append|extend|insert)", text):
            appenders.add(rel)
    assert spenders == set(NOT_YET_PLANNED), spenders
    assert appenders == {"privacy/ledger.py"}, appenders


# ------------------------------------------------------------------ the issue-27 review (helper-15)
def test_an_entrys_sensitivity_and_scale_have_no_float_room(saved_list):
    """M1: within the 1e-9 tolerance a sensitivity or scale carried ~20 free bits (a record hidden in 6 of them
    loaded as verified); only a calibrated epsilon (and what follows from it) may differ in its last bits."""
    for key in ("sensitivity", "scale"):
        data = json.loads(json.dumps(saved_list))
        value = entries(data)[0][key]
        entries(data)[0][key] = value * (1 + 3e-10)
        with pytest.raises(ModelFileError, match=rf"entries\[0\]\.{key}"):
            load_dict(data)


def test_a_logistic_file_states_the_ledger_its_fit_writes(saved):
    """M3: a logistic file switched to the pld accountant with a free delta loaded as verified."""
    data = json.loads(json.dumps(saved))
    data["privacy_ledger"].update(accountant="pld")
    data["privacy_ledger"]["budget"]["delta"] = 3.7419e-7
    with pytest.raises(ModelFileError):
        load_dict(data)


@pytest.fixture(scope="module")
def searched_files():
    from dpglass.models import DPRuleListClassifier
    from dpglass.models.selection.estimator import PrivateGridSearch

    rng = np.random.default_rng(7)
    X = (rng.random((500, 4)) < 0.5).astype(int)
    y = X[:, 0] | X[:, 1]
    out = {}
    for name, est, grid in (("logistic", DPLogisticRegression(classes=[0, 1]), {"alpha": [10.0, 30.0]}),
                            ("gini", DPRuleListClassifier(mechanism="exponential", classes=[0, 1]),
                             {"max_length": [2, 3]})):
        search = PrivateGridSearch(est, grid, epsilon=3.0, stopping_probability=0.5, random_state=1).fit(X, y)
        out[name] = json.loads(json.dumps(search.to_dict()))
    return out


SEARCHED_TAMPERS = {
    "logistic: intercept_grid off the grid": ("logistic", lambda d: d.update(intercept_grid=0.41723)),
    "logistic: a raw coefficient": ("logistic", lambda d: d["coef"].__setitem__(0, 0.41723)),
    "gini: a raw remaining count": ("gini", lambda d: d["remaining_counts"].__setitem__(0, 37.42)),
    "gini: remaining counts dropped": ("gini", lambda d: d.update(remaining_counts=[])),
    "gini: the stop reason": ("gini", lambda d: d.update(stop_reason="minimum support" if d["stop_reason"]
                                                        != "minimum support" else "max_length")),
}


@pytest.mark.parametrize("tamper", list(SEARCHED_TAMPERS))
def test_a_searched_models_values_are_checked_too(searched_files, tamper):
    """M2: in a PrivateGridSearch file (the model has no ledger of its own) the model's released values went
    unchecked for logistic regression and the Gini lists."""
    which, edit = SEARCHED_TAMPERS[tamper]
    data = json.loads(json.dumps(searched_files[which]))
    load_dict(json.loads(json.dumps(data)))  # the untouched file loads
    edit(data)
    with pytest.raises(ModelFileError):
        load_dict(data)


@pytest.mark.parametrize("where", ["rules.0", "rules.0.conditions.0", "default_rule"])
def test_a_rule_holds_only_the_fields_dpglass_writes(saved_list, where):
    """M5: an added key inside a rule or a condition loaded as verified."""
    data = json.loads(json.dumps(saved_list))
    obj = data
    for key in where.split("."):
        obj = obj[int(key)] if key.isdigit() else obj[key]
    obj["comment"] = "Alice: 37.42"
    with pytest.raises(ModelFileError, match="comment"):
        load_dict(data)


def test_a_ledger_that_follows_a_plan_records_nothing_else():
    """L3: spend() or include() after follow() shifted the plan's order and skipped its budget check."""
    a, b = _step("a", 0.5), _step("b", 0.5)
    ledger = PrivacyLedger(epsilon=1.0).follow([a, b])
    for call in (lambda: ledger.spend("c", "laplace", epsilon=0.4), lambda: ledger.include(PrivacyLedger())):
        with pytest.raises(InvalidParameterError, match="follows a release plan"):
            call()
    twin = _step("a", 0.5)  # equal to the plan's step, but not the plan's step
    with pytest.raises(InvalidParameterError, match="not the plan's next step"):
        ledger.release(twin, [1], None)
