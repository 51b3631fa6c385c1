"""dp-gam's "auto" sizes rule carries a version: a file names the rule its fit applied (``sizes_rule``, absent for
version 1, the files written before versions existed), the file check replays that version's branch, an unknown
version is refused naming the field, and files of explicit sizes are unchanged.

``data/gam_auto_rule1.json`` holds two files saved at commit 9504380 (before version 2): a 0/1 fit whose counts take
version 1's gradient branch (t = 6.3 >= 3) where version 2 takes the naive Bayes (c = n_hat eps / K = 50.5 < 300),
and a raw-column fit in the naive-Bayes branch under both."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpglass.exceptions import ModelFileError
from dpglass.models import DPGAMClassifier, DPPipeline, load_model
from dpglass.models._verify import verify_model_dict
from dpglass.models.gam import sizes
from dpglass.models.gam.plan import gam_plan
from dpglass.schema import Schema, categorical, numeric

OLD = json.loads((Path(__file__).parent / "data" / "gam_auto_rule1.json").read_text())


def _fit(n=120, seed=7, **kw):
    """A 0/1 fit with t >= 3 and c < 300 (versions 1 and 2 disagree) for n = 120."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, 4)) < 0.5).astype(int)
    y = (X[:, 0] | (X[:, 1] & X[:, 2])).astype(int)
    return DPGAMClassifier(**{"epsilon": 1.0, "delta": 1e-6, "classes": [0, 1], "random_state": 3, **kw}).fit(X, y), X


@pytest.mark.parametrize("name", sorted(OLD))
def test_files_saved_before_versions_load_verify_and_save_unchanged(name):
    data = OLD[name]
    assert "sizes_rule" not in data
    verify_model_dict(copy.deepcopy(data), DPGAMClassifier)
    model = DPGAMClassifier.from_dict(copy.deepcopy(data))
    assert model.sizes_rule_ == 1
    assert json.dumps(model.to_dict()) == json.dumps(data)  # re-saved byte for byte: still version 1


def test_the_old_file_is_checked_against_version_1_not_the_current_rule():
    data = OLD["gradient_branch"]
    p, counts = data["params"], data["class_counts"]
    v1, v2 = gam_plan(p, 4, 2, counts, 1), gam_plan(p, 4, 2, counts, 2)
    assert v1.public.n_cycles == 2 and len(data["visits"]) == 8  # the file: version 1's gradient branch
    assert v2.public.n_cycles == 0 and v2.public.first_cycle == "counts"  # what version 2 picks for the same counts
    claimed = dict(copy.deepcopy(data), sizes_rule=2)  # the same file claiming version 2 is refused
    with pytest.raises(ModelFileError, match="visits|first_cycle_counts|privacy_ledger"):
        verify_model_dict(claimed, DPGAMClassifier)


def test_a_new_auto_fit_names_its_rule_and_verifies():
    m, X = _fit()
    assert m.sizes_rule_ == sizes.RULE_VERSION == 2
    assert m.visit_sums_ == [] and m.first_counts_ is not None  # version 2: the naive Bayes here
    data = json.loads(json.dumps(m.to_dict()))
    assert data["sizes_rule"] == 2
    verify_model_dict(copy.deepcopy(data), DPGAMClassifier)
    back = DPGAMClassifier.from_dict(data)
    assert back.sizes_rule_ == 2 and np.array_equal(back.decision_function(X), m.decision_function(X))
    assert json.dumps(back.to_dict()) == json.dumps(data)


@pytest.mark.parametrize("value,reason", [(3, "knows versions 1, 2"), ("2", "knows versions"), (True, "knows"),
                                          (None, "knows"), (1, "absent for version 1")])
def test_an_unknown_or_malformed_version_is_refused_naming_the_field(value, reason):
    data = json.loads(json.dumps(_fit()[0].to_dict()))
    data["sizes_rule"] = value
    with pytest.raises(ModelFileError, match="sizes_rule") as err:
        verify_model_dict(data, DPGAMClassifier)
    assert reason in str(err.value)


def test_a_version_dropped_from_a_new_file_is_refused_where_the_branches_differ():
    data = json.loads(json.dumps(_fit()[0].to_dict()))
    del data["sizes_rule"]  # now claims version 1, whose branch for these counts is the gradient cycles
    with pytest.raises(ModelFileError, match="visits|first_cycle_counts|privacy_ledger"):
        verify_model_dict(data, DPGAMClassifier)


def test_explicit_sizes_write_no_version_and_refuse_one():
    m, _ = _fit(first_cycle="gradients", n_cycles=2, max_bins=16, count_share=0.25)
    assert m.sizes_rule_ is None
    data = json.loads(json.dumps(m.to_dict()))
    assert "sizes_rule" not in data
    verify_model_dict(copy.deepcopy(data), DPGAMClassifier)
    data["sizes_rule"] = 2
    with pytest.raises(ModelFileError, match="sizes_rule"):
        verify_model_dict(data, DPGAMClassifier)


def test_a_pipeline_file_carries_its_models_rule_version(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(18, 80, 150), "job": rng.choice(["a", "b", "c"], 150)})
    y = ((frame["age"] > 40) ^ (rng.random(150) < 0.2)).astype(int).to_numpy()
    schema = Schema([numeric("age", 18, 90, thresholds=[30.5, 50.5]), categorical("job", ["a", "b", "c"])],
                    target="y")
    pipe = DPPipeline(schema=schema, model=DPGAMClassifier(classes=[0, 1]), epsilon=1.0, random_state=0).fit(frame, y)
    assert pipe.model_.sizes_rule_ == 2 and pipe.to_dict()["inner_model"]["sizes_rule"] == 2
    path = tmp_path / "pipe.json"
    pipe.save(path)
    assert load_model(path).model_.sizes_rule_ == 2
