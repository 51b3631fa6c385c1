"""Saved model files are verified before they are trusted (``dpglass.models._verify``).

Every registered private model is fitted on tiny data, saved, and then its file
is edited the ways an audit found it could be: each edit must be refused with a
ModelFileError naming the field, by ``load_model``, ``Class.from_dict``,
``dpglass inspect`` and ``dpglass predict`` alike.
"""

import copy
import json

import numpy as np
import pandas as pd
import pytest

from dpglass.cli import main
from dpglass.exceptions import DataValidationError, InvalidParameterError, ModelFileError
from dpglass.models import DPRuleListClassifier, SmoothBoostClassifier, load_model
from dpglass.models._verify import MODEL_CHECKS, verify_model_dict
from ledger_edits import recompose
from dpglass.registry import get_spec, list_estimators

PRIVATE = {spec.name: spec for spec in list_estimators(private=True)}
PAPER_CLAIM = "dp-rule-list/smooth-laplace"


def _data():
    rng = np.random.default_rng(20240601)
    X = (rng.random((1000, 5)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(1000) < 0.1)).astype(np.uint8)
    return X, y


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """name -> (path of the saved file, its dict, the fitted model); plus a CSV to predict on."""
    X, y = _data()
    root = tmp_path_factory.mktemp("models")
    fits = {name: (spec, dict(spec.test_params)) for name, spec in PRIVATE.items()}
    fits[PAPER_CLAIM] = (get_spec("dp-rule-list"), {**get_spec("dp-rule-list").test_params,
                                                     "mechanism": "smooth-laplace", "delta": 1e-6})
    out = {}
    for name, (spec, params) in fits.items():
        model = spec.make(**{**params, "random_state": 0}).fit(X, y)
        path = root / (name.replace("/", "_") + ".json")
        model.save(path)
        out[name] = (path, json.loads(path.read_text()), model)
    csv = root / "new.csv"
    pd.DataFrame(X[:20], columns=[f"x{i}" for i in range(X.shape[1])]).to_csv(csv, index=False)
    out["csv"] = csv
    return out


def test_model_file_error_is_a_data_validation_error():
    assert issubclass(ModelFileError, DataValidationError)


def test_every_registered_model_has_its_checks():
    for spec in list_estimators():
        assert spec.cls.__name__ in MODEL_CHECKS, spec.name


@pytest.mark.parametrize("name", [*PRIVATE, PAPER_CLAIM])
def test_untouched_file_loads_and_inspects(name, saved, capsys):
    path, data, model = saved[name]
    X, _ = _data()
    back = load_model(path)
    np.testing.assert_array_equal(back.predict(X[:50]), model.predict(X[:50]))
    assert type(model).from_dict(copy.deepcopy(data)).privacy_ledger_.total() == model.privacy_ledger_.total()
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    eps, delta = model.privacy_ledger_.total()
    assert "\nverified: yes (the file is consistent" in out
    assert out.rstrip().endswith(str(model).rstrip())  # then the model, as released
    assert f"composed by: {model.privacy_ledger_.accountant}" in out
    assert f"total (recomputed): epsilon={eps:.6g}, delta={delta:.6g}" in out
    assert f"guarantee: {model.privacy_ledger_.guarantee}" in out
    assert f"model: {type(model).__name__}" in out
    for entry in model.privacy_ledger_:
        assert entry.release in out
    if name in PRIVATE:
        assert f"registry: {name}" in out


def _rule_list_mechanisms():
    from dpglass.models.rule_list.estimator import DPRuleListClassifier

    return list(DPRuleListClassifier._parameter_constraints["mechanism"][0])


@pytest.mark.parametrize("mechanism", _rule_list_mechanisms())
@pytest.mark.parametrize("variant", ["corrected", "paper"])
def test_every_rule_list_mechanism_verifies(mechanism, variant):
    """The verifier knows the ledger names of every selection mechanism (a renamed one fails here)."""
    from dpglass.models import DPRuleListClassifier

    X, y = _data()
    make = lambda: DPRuleListClassifier(mechanism=mechanism, variant=variant, epsilon=5.0, delta=1e-6, max_length=2,
                                        random_state=0).fit(X, y)
    if mechanism == "errors-pf" and variant == "paper":  # paper 001 has no errors-pf
        with pytest.raises(InvalidParameterError, match="has neither"):
            make()
        return
    model = make()
    back = DPRuleListClassifier.from_dict(json.loads(json.dumps(model.to_dict())))
    assert back.privacy_ledger_.total() == model.privacy_ledger_.total()


@pytest.mark.parametrize("learner", [dict(weak_learner="stump"), dict(weak_learner="tree"),
                                     dict(weak_learner="tree", tree_learner="top-down", tree_nodes=2)],
                         ids=["stump", "joint-tree", "top-down-tree"])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_boosting_compositions_verify(learner, delta):
    from dpglass.models import SmoothBoostClassifier

    X, y = _data()
    model = SmoothBoostClassifier(delta=delta, n_rounds=30, accountant="basic", random_state=0, **learner).fit(X, y)
    data = json.loads(json.dumps(model.to_dict()))
    assert data["composition"] == ("advanced" if delta else "basic")
    SmoothBoostClassifier.from_dict(copy.deepcopy(data))
    data["privacy_ledger"]["entries"][-1]["epsilon"] /= 2  # a lowered round (basic) or composed epsilon
    with pytest.raises(ModelFileError, match="privacy_ledger"):
        SmoothBoostClassifier.from_dict(data)


# ----------------------------------------------------------- tamperings
def _first_rule(data):
    if not data["rules"]:
        pytest.skip("the fitted rule list has no rule to edit")  # pragma: no cover - seeded data gives rules
    return data["rules"][0]


def t_entries_emptied(data):
    data["privacy_ledger"].update(entries=[], total={"epsilon": 0.0, "delta": 0.0}, guarantee="proven")
    return "privacy_ledger.entries"


def t_ledger_removed(data):
    del data["privacy_ledger"]
    return "privacy_ledger"


def t_entry_epsilon_lowered(data):
    data["privacy_ledger"]["entries"][0]["epsilon"] /= 2
    recompose(data)  # a careful forger fixes the total too
    return "privacy_ledger.entries"


def t_total_edited(data):
    data["privacy_ledger"]["total"]["epsilon"] /= 2
    return "privacy_ledger.total.epsilon"


def t_budget_raised(data):
    data["privacy_ledger"]["budget"]["epsilon"] *= 2
    return "privacy_ledger.budget.epsilon"


def t_budget_and_params_raised(data):
    data["privacy_ledger"]["budget"]["epsilon"] *= 2
    data["params"]["epsilon"] *= 2
    for key in ("round_epsilon", "tree_epsilon"):  # boosting: a careful forger keeps the state consistent
        if key in data:
            data[key] *= 2
    return "privacy_ledger.entries"


def t_missing_top_level_key(data):
    del data["feature_names"]
    return "feature_names"


def t_unknown_parameter(data):
    data["params"]["sneaky"] = 1
    return "params.sneaky"


def t_invalid_parameter(data):
    data["params"]["epsilon"] = -1.0
    return "epsilon"


def t_guarantee_proven(data):
    data["privacy_ledger"]["guarantee"] = "proven"
    return "privacy_ledger.guarantee"


def t_every_guarantee_proven(data):
    for e in data["privacy_ledger"]["entries"]:
        e["guarantee"] = "proven"
    data["privacy_ledger"]["guarantee"] = "proven"
    return "privacy_ledger.entries[1].guarantee"  # the first selection


def t_rule_feature_out_of_range(data):
    _first_rule(data)["conditions"][0]["feature"] = data["n_features_in"]
    return "rules[0].conditions[0].feature"


def t_condition_name(data):
    _first_rule(data)["conditions"][0]["name"] = "not_this_feature"
    return "rules[0].conditions[0].name"


def t_rule_list_missing_state(data):
    del data["default_rule"]
    return "default_rule"


def t_rule_prediction_flipped(data):
    rule = _first_rule(data)
    rule["prediction"] = 1 - rule["prediction"]
    return "rules[0].prediction"


def t_stump_feature_out_of_range(data):
    data["estimators"][0][0] = data["n_features_in"]
    return "estimators[0]"


def t_boosting_missing_state(data):
    del data["estimators"]
    return "estimators"


def t_boosting_round_dropped(data):
    data["estimators"].pop()
    return "estimators"


def t_tree_feature_out_of_range(data):
    data["estimators"][0]["feature"][0] = data["n_features_in"]  # the root is internal
    return "estimators[0].feature[0]"


def t_tree_cycle(data):
    data["estimators"][0]["left"][0] = 0  # the root's left child is the root
    return "estimators[0].left/right"


def t_logistic_coef_length(data):
    data["coef"].append(0.5)
    return "coef"


def t_logistic_missing_state(data):
    del data["intercept"]
    return "intercept"


def t_logistic_coef_not_finite(data):
    data["coef"][0] = "nan"
    return "coef"


def t_bag_guarantee_proven(data):
    data["privacy_ledger"]["entries"][0]["guarantee"] = "proven"
    data["privacy_ledger"]["guarantee"] = "proven"
    return "privacy_ledger.entries[0].guarantee"


def t_saa_more_labels(data):
    data["n_labelled"] += 1
    return "n_labelled"


def t_student_coef_length(data):
    data["coef"].append(0.5)
    return "coef"


GENERIC = [t_entries_emptied, t_ledger_removed, t_entry_epsilon_lowered, t_total_edited, t_budget_raised,
           t_budget_and_params_raised, t_missing_top_level_key, t_unknown_parameter, t_invalid_parameter]
SPECIFIC = {
    "dp-rule-list": [t_rule_feature_out_of_range, t_condition_name, t_rule_list_missing_state,
                     t_rule_prediction_flipped],
    PAPER_CLAIM: [t_guarantee_proven, t_every_guarantee_proven, t_condition_name],
    "smooth-boost-stumps": [t_stump_feature_out_of_range, t_boosting_missing_state, t_boosting_round_dropped],
    "smooth-boost-trees": [t_tree_feature_out_of_range, t_tree_cycle, t_boosting_missing_state],
    "dp-logistic-regression": [t_logistic_coef_length, t_logistic_missing_state, t_logistic_coef_not_finite],
    "dp-bag": [t_bag_guarantee_proven, t_student_coef_length, t_logistic_missing_state],
    "subsample-aggregate": [t_saa_more_labels, t_student_coef_length, t_logistic_coef_not_finite],
}
CASES = [(name, t) for name in PRIVATE for t in GENERIC]
CASES += [(name, t) for name, ts in SPECIFIC.items() if name in PRIVATE or name == PAPER_CLAIM for t in ts]


@pytest.mark.parametrize("name,tamper", CASES, ids=[f"{n}-{t.__name__[2:]}" for n, t in CASES])
def test_tampered_file_is_refused(name, tamper, saved, tmp_path, capsys):
    _, data, model = saved[name]
    data = copy.deepcopy(data)
    field = tamper(data)
    with pytest.raises(ModelFileError) as exc:
        type(model).from_dict(copy.deepcopy(data))
    assert field in str(exc.value) and "do not edit model files by hand" in str(exc.value), str(exc.value)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError):
        load_model(path)
    for argv in (["inspect", str(path)], ["predict", "--model", str(path), "--data", str(saved["csv"])]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert "verified: yes" not in captured.out
        assert "error:" in captured.err and field in captured.err, captured.err


# --------------------------------------------------------- other details
def test_replayable_flag(saved, tmp_path, capsys):
    path, data, _ = saved["dp-rule-list"]
    for value, shown in ((None, "unknown (file predates the flag)"), (True, "yes"), (False, "no")):
        edited = copy.deepcopy(data)
        if value is None:
            edited["privacy_ledger"].pop("replayable", None)
        else:
            edited["privacy_ledger"]["replayable"] = value
        (tmp_path / "m.json").write_text(json.dumps(edited))
        assert main(["inspect", str(tmp_path / "m.json")]) == 0
        assert f"replayable noise: {shown}" in capsys.readouterr().out
    edited["privacy_ledger"]["replayable"] = "no"
    with pytest.raises(ModelFileError, match="privacy_ledger.replayable"):
        verify_model_dict(edited, type(saved["dp-rule-list"][2]))


def test_non_private_model_round_trip_and_no_ledger(tmp_path, capsys):
    X, y = _data()
    model = get_spec("greedy-rule-list").make(max_length=2).fit(X, y)
    model.save(tmp_path / "g.json")
    assert main(["inspect", str(tmp_path / "g.json")]) == 0
    out = capsys.readouterr().out
    assert "privacy: none" in out and "verified: yes" in out
    data = model.to_dict()
    data["privacy_ledger"] = {"budget": {"epsilon": 1.0, "delta": 0.0}}
    with pytest.raises(ModelFileError, match="privacy_ledger"):
        type(model).from_dict(data)


def test_private_selection_file(tmp_path, capsys):
    from dpglass.models import SmoothBoostClassifier
    from dpglass.models.selection.estimator import PrivateGridSearch

    X, y = _data()
    search = PrivateGridSearch(estimator=SmoothBoostClassifier(n_rounds=2), param_grid={"n_rounds": [1, 2]},
                               epsilon=3.0, stopping_probability=0.5, random_state=0).fit(X, y)
    search.save(tmp_path / "s.json")
    assert main(["inspect", str(tmp_path / "s.json")]) == 0
    assert "selected by: private selection" in capsys.readouterr().out
    data = json.loads((tmp_path / "s.json").read_text())
    edited = copy.deepcopy(data)
    edited["params"]["epsilon"] *= 2  # the run budget no longer fits the selection's entry
    with pytest.raises(ModelFileError, match="params.epsilon"):
        SmoothBoostClassifier.from_dict(edited)
    edited = copy.deepcopy(data)
    edited["privacy_ledger"]["entries"][0]["mechanism"] = "laplace"
    with pytest.raises(ModelFileError, match="mechanism"):
        SmoothBoostClassifier.from_dict(edited)


def test_not_json_and_wrong_model(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["inspect", str(tmp_path / "bad.json")]) == 2
    assert "could not read" in capsys.readouterr().err
    (tmp_path / "other.json").write_text(json.dumps({"model": "Pickle"}))
    assert main(["inspect", str(tmp_path / "other.json")]) == 2
    assert "'model'" in capsys.readouterr().err


@pytest.mark.parametrize("make", [
    lambda: SmoothBoostClassifier(weak_learner="tree", n_rounds=2, random_state=0),
    lambda: SmoothBoostClassifier(n_rounds=2, random_state=0),
    lambda: DPRuleListClassifier(random_state=0),
], ids=["joint-trees", "stumps", "errors-pf"])
def test_a_forged_entry_sensitivity_is_refused(make, tmp_path, binary_data):
    """Review finding: a recorded sensitivity edited to 0.01 was accepted (and printed by inspect)."""
    import json

    X, y = binary_data
    make().fit(X, y).save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    data["privacy_ledger"]["entries"][0]["sensitivity"] = 0.01
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="sensitivity"):
        load_model(tmp_path / "m.json")


@pytest.mark.parametrize("model, key, value", [
    ("SmoothBoostClassifier", "records_estimate", 10**400),
    ("DPLogisticRegression", "class_counts", [10**400, 3]),
])
def test_counts_beyond_any_table_are_a_model_file_error(model, key, value):
    import dpglass.models as models

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (300, 5)).astype(np.uint8)
    cls = getattr(models, model)
    d = json.loads(json.dumps(cls(epsilon=1.0, random_state=0).fit(X, X[:, 0]).to_dict()))
    d[key] = value  # JSON holds integers of any size; float() of this one overflows
    with pytest.raises(ModelFileError, match=key):
        cls.from_dict(d)


def test_a_files_class_is_one_registry_lookup():
    """Every public class a model file names resolves through dpglass.registry.loadable_class: the registry's
    estimators, and the classes only loaded (DPPipeline, the local-DP classifier), which no loop over the registry
    sees; PrivateGridSearch writes its selected model's file and is named by none."""
    import dpglass.local as local
    import dpglass.models as models
    from dpglass.models._files import model_class
    from dpglass.registry import LOADABLE_ONLY, REGISTRY, loadable_class

    public = {name for name in models.__all__ if name[0].isupper()} | {"LDPHistogramClassifier"}
    for name in public - {"PrivateGridSearch"}:
        cls = loadable_class(name)
        assert cls is not None and cls.__name__ == name and hasattr(cls, "from_dict"), name
        assert model_class(name) is cls
    assert loadable_class("LDPHistogramClassifier") is local.LDPHistogramClassifier
    assert set(LOADABLE_ONLY) == public - {s.cls.__name__ for s in REGISTRY.values()} - {"PrivateGridSearch"}
    assert not {s.cls.__name__ for s in REGISTRY.values()} & set(LOADABLE_ONLY)
    for name in ("PrivateGridSearch", "dp-rule-list", "ModelFileError", None, 3):
        assert loadable_class(name) is None, name
