"""Every released value of a saved model lies in its public domain (issue 26, item 2).

A file verifier that checks only the ledger lets an edited file carry raw data
in a released value: a uniform dp-gbdt model whose ``edges`` were three exact
training values loaded and inspected as 'verified: yes'.  Here every
registered model (plus DPPipeline and the local-DP LDPHistogramClassifier) is
fitted on small data, saved, and each released field is edited the three
ways that put data where noise or a public constant belongs: (a) a value
replaced by a raw training value or moved off its grid, (b) a non-integer
where the noisy counts are integers, (c) a cut point, edge or condition that
is not among the public ones.  Each edit must be refused by ``load_model`` (a
ModelFileError naming the field) and by ``dpglass inspect``.

The cases are keyed by registry name: a newly registered model fails
``test_every_model_declares_its_domains`` until it has tampers here.
"""

import copy
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.cli import main
from dpglass.exceptions import ModelFileError
from dpglass.models import load_model
from dpglass.models._files import model_class
from dpglass.models._verify import verify_model_dict
from dpglass.registry import REGISTRY, get_spec

PIPELINE, LDP = "DPPipeline", "LDPHistogramClassifier"


# ------------------------------------------------------------------ data
def _binary():
    rng = np.random.default_rng(20240601)
    X = (rng.random((800, 5)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(800) < 0.1)).astype(np.uint8)
    return X, y


def _numeric():
    """Two 0/1 columns and two real ones (three decimals: a raw value is never on a public grid)."""
    rng = np.random.default_rng(7)
    n = 800
    age = np.round(rng.uniform(18, 90, n), 3)
    hours = np.round(rng.normal(40, 12, n), 3)
    X = np.column_stack([(rng.random((n, 2)) < 0.5), age, hours]).astype(np.float64)
    y = ((age > 45) ^ (rng.random(n) < 0.1)).astype(np.uint8)
    return X, y


def _raw():
    rng = np.random.default_rng(0)
    n = 600
    frame = pd.DataFrame({"age": np.round(rng.uniform(17, 90, n), 2),
                          "occupation": rng.choice(["Exec-managerial", "Sales", "Craft-repair"], n),
                          "hours": np.round(rng.normal(40, 12, n), 2)})
    frame["income"] = np.where((frame.age > 37) ^ (rng.random(n) < 0.05), ">50K", "<=50K")
    return frame


SCHEMA = {"target": "income", "columns": [
    {"name": "age", "kind": "numeric", "bounds": [17, 90], "thresholds": "grid", "n_thresholds": 4},
    {"name": "occupation", "kind": "categorical", "categories": ["Exec-managerial", "Sales", "Craft-repair"]},
    {"name": "hours", "kind": "numeric", "bounds": [0, 99], "thresholds": "dp-quantiles", "n_thresholds": 2}]}
GBDT_NUMERIC = {"bounds": [None, None, [0.0, 100.0], [0.0, 80.0]], "max_bins": 4, "n_estimators": 3}


def _registered(name, **params):
    spec = get_spec(name)
    seed = {"random_state": 0} if spec.private else {}
    return lambda: spec.make(**{**spec.test_params, **params, **seed}).fit(*_binary())


def _gbdt_numeric(**params):
    spec = get_spec("dp-gbdt")
    return lambda: spec.make(**{**spec.test_params, **GBDT_NUMERIC, **params, "random_state": 0}).fit(*_numeric())


def _pipeline():
    from dpglass.models import DPPipeline, DPLogisticRegression

    frame = _raw()
    return DPPipeline(schema=SCHEMA, model=DPLogisticRegression(), epsilon=2.0, random_state=0).fit(
        frame.drop(columns="income"), frame["income"])


def _ldp(randomizer):
    from dpglass.local import LDPHistogramClassifier

    rng = np.random.default_rng(1)
    X = rng.random((3000, 2))
    y = (X[:, 0] > 0.5).astype(int)
    return LDPHistogramClassifier(alpha=2.0, bandwidth=0.5, bounds=([0, 0], [1, 1]), randomizer=randomizer,
                                  random_state=0).fit(X, y)


#: (model, fit label) -> how to fit it.  Every registry name has at least its test_params fit.
FITS = {
    ("greedy-rule-list", "no-negations"): _registered("greedy-rule-list", allow_negations=False),
    ("dp-rule-list", "no-negations"): _registered("dp-rule-list", allow_negations=False),
    ("dp-rule-list", "candidates"): _registered("dp-rule-list", candidates=[[(0, True)], [(1, False)],
                                                                            [(2, True), (3, True)]]),
    ("smooth-boost-stumps", "auto-rounds"): _registered("smooth-boost-stumps", n_rounds="auto"),
    ("smooth-boost-trees", "test"): _registered("smooth-boost-trees"),
    ("dp-logistic-regression", "test"): _registered("dp-logistic-regression"),
    ("dp-gam", "test"): _registered("dp-gam"),
    ("dp-gbdt", "binary"): _registered("dp-gbdt"),
    ("dp-gbdt", "uniform"): _gbdt_numeric(binning="uniform"),
    ("dp-gbdt", "quantile"): _gbdt_numeric(binning="quantile"),
    ("dp-gbdt", "dpboost"): _gbdt_numeric(variant="dpboost", n_estimators=4, trees_per_ensemble=2),
    ("subsample-aggregate", "test"): _registered("subsample-aggregate"),
    ("dp-bag", "test"): _registered("dp-bag"),
    (PIPELINE, "dp-logistic-regression"): _pipeline,
    (LDP, "laplace"): lambda: _ldp("laplace"),
    (LDP, "oue"): lambda: _ldp("oue"),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """(model, label) -> (path, the saved dict)."""
    root = tmp_path_factory.mktemp("domains")
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DP-Bag's paper-claim warning, clipping notes: not the subject here
        for (name, label), fit in FITS.items():
            path = root / f"{name}-{label}.json"
            fit().save(path)
            out[(name, label)] = (path, json.loads(path.read_text()))
    return out


# -------------------------------------------------------------- tampers
# Each takes the saved dict (a copy), edits one released value, and returns the field the refusal must name.
def _training_value():
    return float(_numeric()[0][17, 2])  # an exact age of the training data (three decimals)


def rule_count_not_integer(data):
    data["rules"][0]["counts"][1] += 0.5
    return "rules[0].counts"


def rule_count_raw_value(data):
    data["default_rule"]["counts"][0] = _training_value()
    return "default_rule.counts"


def rule_condition_negated(data):
    data["rules"][0]["conditions"][0]["value"] = False  # allow_negations=False: x = 0 is no candidate
    return "rules[0].conditions"


def rule_condition_not_a_candidate(data):
    cond = data["rules"][0]["conditions"][0]
    cond.update(feature=4, name="x4")  # the fit's candidates never test x4
    return "rules[0].conditions"


def greedy_count_negative(data):
    data["default_rule"]["counts"][1] = -3.0  # exact counts of records are >= 0
    return "default_rule.counts"


def stump_sign_not_a_sign(data):
    data["estimators"][0][1] = 2
    return "estimators[0]"


def stump_feature_not_integer(data):
    data["estimators"][0][0] = 0.5
    return "estimators[0]"


def records_estimate_not_integer(data):
    data["records_estimate"] += 0.5
    return "records_estimate"


def tree_leaf_not_a_label(data):
    leaf = data["estimators"][0]["feature"].index(-1)
    data["estimators"][0]["value"][leaf] = 3
    return "estimators[0]"


def tree_internal_value_carries_data(data):
    data["estimators"][0]["value"][0] = 37  # an internal node's value is 0: an integer there is a free channel
    return "estimators[0].value"


def logistic_coef_off_grid(data):
    data["coef"][1] += 1e-7
    return "coef"


def logistic_coef_raw_value(data):
    data["coef"][0] = _training_value()
    return "coef"


def logistic_intercept_grid_off_grid(data):
    data["intercept_grid"] += 1e-7
    data["intercept"] += 1e-7
    return "intercept_grid"


def logistic_class_count_not_integer(data):
    data["class_counts"][0] += 0.5
    return "class_counts"


def gam_gradient_sum_off_grid(data):
    data["visits"][0]["gradient_sums"][0][0] += 2**-20
    return "visits[0].gradient_sums"


def gbdt_binary_cut_moved(data):
    data["edges"][0] = [0.37]
    return "edges[0]"


def gbdt_leaf_beyond_its_range(data):
    data["trees"][0]["value"][0] = 37.25  # a raw age, beyond learning_rate * max_leaf_value
    return "trees[0].value"


def gbdt_init_beyond_its_range(data):
    data["init_score"] = 37.25
    return "init_score"


def gbdt_uniform_edges_are_training_values(data):
    X = _numeric()[0]
    data["edges"][2] = sorted(float(v) for v in X[[3, 5, 8], 2])  # the file: three exact training ages
    return "edges[2]"


def gbdt_uniform_edge_moved(data):
    data["edges"][3][1] += 1e-7
    return "edges[3]"


def gbdt_bounds_edited(data):
    data["bounds_resolved"][2] = [0.0, _training_value()]  # and the edges that such bounds would give
    lo, hi = data["bounds_resolved"][2]
    data["edges"][2] = [lo + (hi - lo) * k / 4 for k in (1, 2, 3)]
    return "bounds_resolved"


def gbdt_quantile_edge_off_grid(data):
    data["edges"][2][1] += 1e-7
    return "edges[2]"


def gbdt_quantile_edge_is_training_value(data):
    data["edges"][2][1] = _training_value()
    data["edges"][2].sort()
    return "edges[2]"


def gbdt_dpboost_leaf_off_grid(data):
    data["trees"][1]["value"][0] += 1e-9
    return "trees[1].value"


def gbdt_dpboost_init_not_zero(data):
    data["init_score"] = 0.125  # DPBoost releases no intercept: it starts at 0
    return "init_score"


def student_coef_raw_value(data):
    data["coef"][1] = _training_value()  # beyond what the student's objective allows
    return "coef"


def student_intercept_raw_value(data):
    data["intercept"] = -_training_value()
    return "intercept"


def student_public_size_edited(data):
    data["n_public"] += 1  # no public part given: the parameters' n_public uniform rows
    return "n_public"


def saa_labelled_not_integer(data):
    data["n_labelled"] += 0.5
    return "n_labelled"


def _renamed(data):
    """A careful forger renames the encoded columns after the edited cut points (the names show them)."""
    from dpglass.schema import Encoding

    data["inner_model"]["feature_names"] = Encoding.from_dict(data["encoding"]).feature_names()


def pipeline_grid_cut_is_training_value(data):
    data["encoding"]["cuts"][0][1] = float(_raw().age.iloc[3])
    _renamed(data)
    return "encoding.cuts['age']"


def pipeline_quantile_cut_off_grid(data):
    data["encoding"]["cuts"][-1][0] += 1e-7
    _renamed(data)
    return "encoding.cuts['hours']"


def pipeline_clipped_count_not_integer(data):
    data["clipped_records_noisy"] = 2.5
    return "clipped_records_noisy"


def pipeline_inner_coef_off_grid(data):
    data["inner_model"]["coef"][0] += 1e-7
    return "coef"


def ldp_sum_not_integer(data):
    data["report_sums"][0][2] += 0.5  # read as int64, this was truncated silently
    return "report_sums"


def ldp_count_not_integer(data):
    data["report_counts"][1] += 0.5
    data["n_reports"] += 0.5
    return "report_counts"


def ldp_upper_bound_edited(data):
    data["grid"]["upper"][0] = 0.731  # only the lower corner was compared with the parameters
    return "grid"


def oue_sum_beyond_its_reports(data):
    data["report_sums"][0][0] = data["report_counts"][0] + 1  # a sum of bits is at most the number of reports
    return "report_sums"


def oue_sum_in_the_empty_half(data):
    data["report_sums"][1][0] = 5  # 'oue' reports have no second half
    return "report_sums"


#: model -> [(fit label, tamper)].  Registry names must all be here.
TAMPERS = {
    "greedy-rule-list": [("no-negations", rule_count_not_integer), ("no-negations", greedy_count_negative),
                         ("no-negations", rule_condition_negated)],
    "dp-rule-list": [("no-negations", rule_count_not_integer), ("no-negations", rule_count_raw_value),
                     ("no-negations", rule_condition_negated), ("candidates", rule_condition_not_a_candidate)],
    "smooth-boost-stumps": [("auto-rounds", stump_sign_not_a_sign), ("auto-rounds", stump_feature_not_integer),
                            ("auto-rounds", records_estimate_not_integer)],
    "smooth-boost-trees": [("test", tree_leaf_not_a_label), ("test", tree_internal_value_carries_data)],
    "dp-logistic-regression": [("test", logistic_coef_off_grid), ("test", logistic_coef_raw_value),
                               ("test", logistic_intercept_grid_off_grid), ("test", logistic_class_count_not_integer)],
    "dp-gam": [("test", gam_gradient_sum_off_grid), ("test", logistic_class_count_not_integer)],
    "dp-gbdt": [("binary", gbdt_binary_cut_moved), ("binary", gbdt_leaf_beyond_its_range),
                ("binary", gbdt_init_beyond_its_range), ("uniform", gbdt_uniform_edges_are_training_values),
                ("uniform", gbdt_uniform_edge_moved), ("uniform", gbdt_bounds_edited),
                ("quantile", gbdt_quantile_edge_off_grid), ("quantile", gbdt_quantile_edge_is_training_value),
                ("dpboost", gbdt_dpboost_leaf_off_grid), ("dpboost", gbdt_dpboost_init_not_zero)],
    "subsample-aggregate": [("test", student_coef_raw_value), ("test", student_public_size_edited),
                            ("test", saa_labelled_not_integer)],
    "dp-bag": [("test", student_coef_raw_value), ("test", student_intercept_raw_value),
               ("test", student_public_size_edited)],
    PIPELINE: [("dp-logistic-regression", pipeline_grid_cut_is_training_value),
               ("dp-logistic-regression", pipeline_quantile_cut_off_grid),
               ("dp-logistic-regression", pipeline_clipped_count_not_integer),
               ("dp-logistic-regression", pipeline_inner_coef_off_grid)],
    LDP: [("laplace", ldp_sum_not_integer), ("laplace", ldp_count_not_integer), ("laplace", ldp_upper_bound_edited),
          ("oue", oue_sum_beyond_its_reports), ("oue", oue_sum_in_the_empty_half)],
}
CASES = [(name, label, t) for name in [*REGISTRY, PIPELINE, LDP] for label, t in TAMPERS.get(name, [])]


@pytest.mark.parametrize("name", [*REGISTRY, PIPELINE, LDP])
def test_every_model_declares_its_domains(name):
    """A new registered model fails here until its released fields have tampers (and its verifier, checks)."""
    assert TAMPERS.get(name), f"no domain tampers for {name!r}: add its released fields' tampers to TAMPERS"
    assert all((name, label) in FITS for label, _ in TAMPERS[name])


@pytest.mark.parametrize("key", list(FITS), ids=[f"{n}-{label}" for n, label in FITS])
def test_untouched_file_loads_and_inspects(key, saved, capsys):
    path, _ = saved[key]
    load_model(path)
    assert main(["inspect", str(path)]) == 0
    assert "verified: yes" in capsys.readouterr().out


@pytest.mark.parametrize("name,label,tamper", CASES, ids=[f"{n}-{label}-{t.__name__}" for n, label, t in CASES])
def test_a_value_outside_its_public_domain_is_refused(name, label, tamper, saved, tmp_path, capsys):
    _, data = saved[(name, label)]
    data = copy.deepcopy(data)
    field = tamper(data)
    cls = model_class(data["model"])
    with pytest.raises(ModelFileError) as exc:
        verify_model_dict(copy.deepcopy(data), cls)
    assert field in str(exc.value), str(exc.value)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(data))
    assert main(["inspect", str(path)]) == 2
    captured = capsys.readouterr()
    assert "verified: yes" not in captured.out
    assert "error:" in captured.err and field in captured.err, captured.err
    with pytest.raises(ModelFileError) as exc:
        load_model(path)
    assert field in str(exc.value), str(exc.value)
