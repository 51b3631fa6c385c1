"""A DPPipeline file's public fields are bound to each other: an edit that changes what the model reads is refused,
naming the field (helper G's review of session 34, findings 2, 4, 5 and 8)."""

from __future__ import annotations

import copy
import json
import warnings

import pytest
from conftest import people_table

from dpglass.exceptions import InvalidParameterError, ModelFileError
from dpglass.models import DPGAMClassifier, DPGradientBoostingClassifier, DPPipeline

SCHEMA = {"target": "y", "columns": [
    {"name": "age", "kind": "numeric", "bounds": [17, 90], "thresholds": "grid", "n_thresholds": 4, "missing": "none"},
    {"name": "job", "kind": "categorical", "categories": ["a", "b", "c"], "missing": "none"},
    {"name": "flag", "kind": "binary"}]}


raw = people_table  # helper G's table


def _file(model, schema=SCHEMA, **kw):
    X, y = raw(300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = DPPipeline(schema=schema, model=model, epsilon=1, classes=[0, 1], random_state=0, **kw).fit(X, y)
    return json.loads(json.dumps(pipe.to_dict()))


@pytest.fixture(scope="module")
def gam_file():
    return _file(DPGAMClassifier())


@pytest.fixture(scope="module")
def gbdt_file():
    return _file(DPGradientBoostingClassifier(n_estimators=4, max_depth=2))


def test_the_files_load_unedited(gam_file, gbdt_file):
    DPPipeline.from_dict(copy.deepcopy(gam_file))
    DPPipeline.from_dict(copy.deepcopy(gbdt_file))


def test_a_pipeline_file_whose_missing_bins_flag_is_removed_is_refused(gam_file):
    """Without the flag a missing age would be read as the lower bound instead of its own bin."""
    d = copy.deepcopy(gam_file)
    d["encoding"].pop("missing_bins")
    with pytest.raises(ModelFileError, match="encoding.missing_bins"):
        DPPipeline.from_dict(d)


@pytest.mark.parametrize("cats", [["b", "a", "c"], ["a", "b", "z"]])
def test_a_codes_route_file_with_its_category_list_edited_is_refused(gam_file, cats):
    d = copy.deepcopy(gam_file)
    d["encoding"]["schema"]["columns"][1]["categories"] = cats
    with pytest.raises(ModelFileError, match="job"):
        DPPipeline.from_dict(d)


def test_inner_feature_groups_are_the_schemas_columns(gam_file):
    d = copy.deepcopy(gam_file)
    d["inner_model"]["params"]["feature_groups"] = ["age", "age", "flag"]
    with pytest.raises(ModelFileError, match="feature_groups"):
        DPPipeline.from_dict(d)


def test_a_pipeline_model_with_its_own_feature_groups_is_refused_at_fit():
    X, y = raw(40)
    with pytest.raises(InvalidParameterError, match="feature_groups=None"):
        DPPipeline(schema=SCHEMA, model=DPGAMClassifier(feature_groups=["x", "y", "z"]), classes=[0, 1]).fit(X, y)


@pytest.mark.parametrize("column, rule", [(0, "error"), (1, "error")])
def test_a_missing_rule_edited_in_a_numbers_route_file_is_refused(gbdt_file, gam_file, column, rule):
    for f in (gbdt_file, gam_file):
        d = copy.deepcopy(f)
        d["encoding"]["schema"]["columns"][column]["missing"] = rule
        with pytest.raises(ModelFileError):
            DPPipeline.from_dict(d)


def test_a_missing_rule_edited_in_an_auto_file_is_refused_on_either_route():
    """model="auto" files carry the digests on the 0/1 route too (the rule list's); other 0/1 files are unchanged."""
    X, y = raw(120)
    chosen = set()
    for s in range(6):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe = DPPipeline(schema=SCHEMA, model="auto", epsilon=2.5, classes=[0, 1], random_state=s).fit(X, y)
        chosen.add(pipe.model_choice_)
        d = json.loads(json.dumps(pipe.to_dict()))
        DPPipeline.from_dict(copy.deepcopy(d))
        d["encoding"]["schema"]["columns"][0]["missing"] = "error"
        with pytest.raises(ModelFileError, match=r"encoding\.schema\.columns\[0\]|inner_model\.params\.missing"):
            DPPipeline.from_dict(d)
    assert chosen == {"dp-gam", "dp-rule-list"}


def test_auto_refuses_a_bad_share_before_it_draws_the_count():
    """quantile_share=0 with a dp-quantiles column suits dp-gbdt (numbers) but not the rule list (0/1): refused
    whatever the count would pick, on every seed, before the count is drawn."""
    S = copy.deepcopy(SCHEMA)
    S["columns"][0]["thresholds"] = "dp-quantiles"
    X, y = raw(120)
    for s in range(4):
        pipe = DPPipeline(schema=S, model="auto", epsilon=4.2, quantile_share=0.0, classes=[0, 1], random_state=s)
        with pytest.raises(InvalidParameterError, match="quantile_share=0"):
            pipe.fit(X, y)
        assert not hasattr(pipe, "records_noisy_")


def test_a_pipeline_over_its_budget_names_the_shares():
    """Review G finding 7 (not fixed up front: the model's releases are known only from its plan): an encoder that
    takes most of the budget can leave a PLD model only the basic sum; the error names the shares and the way out,
    and the suggested accountant fits."""
    from dpglass.exceptions import BudgetExceededError

    X, y = raw(200)
    make = lambda acc: DPPipeline(schema=SCHEMA, model=DPGradientBoostingClassifier(accountant=acc), epsilon=7.0,
                                  delta=1e-3, clip_share=0.9, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BudgetExceededError, match=r"clip_share=0\.9.*accountant='rdp'"):
            make("auto").fit(X, y)
        assert make("rdp").fit(X, y).privacy_ledger_.total()[0] <= 7.0
