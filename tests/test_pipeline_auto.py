"""``DPPipeline(model="auto")`` and ``dpglass fit`` with a schema and no ``--model``: a default model for a table.

The rule reads public facts and one noisy count of records (discrete Laplace,
sensitivity 1, paid from the budget and first in the ledger); the file keeps
the count, and its check recomputes the choice from it.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.cli import main
from dpglass.exceptions import ModelFileError
from dpglass.models import DPGradientBoostingClassifier, DPPipeline, DPRuleListClassifier
from dpglass.models.pipeline.auto import AUTO_RELEASE, AUTO_SHARE, MIN_EPSILON, SIGNAL, auto_plan, choose_model
from dpglass.schema import Schema, categorical, ignore, numeric

SCHEMA = Schema([numeric("age", 17, 90), categorical("job", ["a", "b", "c"]), numeric("hours", 0, 99), ignore("id")],
                target="y")


def _table(n, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(17, 91, n).astype(float), "job": rng.choice(["a", "b", "c"], n),
                       "hours": rng.integers(0, 100, n).astype(float), "id": np.arange(n)})
    y = np.where((df.age > 40) & (df.job != "a") ^ (rng.random(n) < 0.1), "hi", "lo")
    return df, y


def _fit(n, eps, seed=0):
    df, y = _table(n, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPPipeline(schema=SCHEMA, model="auto", epsilon=eps, random_state=seed, classes=["hi", "lo"]).fit(df, y)


def test_the_rule_on_both_sides_of_its_limits():
    assert choose_model(SCHEMA, 1.0, None, math.ceil(SIGNAL)) == "dp-gbdt"
    assert choose_model(SCHEMA, 1.0, None, math.ceil(SIGNAL) - 1) == "dp-rule-list"
    assert choose_model(SCHEMA, MIN_EPSILON, None, 10 ** 9) == "dp-gbdt"
    assert choose_model(SCHEMA, np.nextafter(MIN_EPSILON, 0), None, 10 ** 9) == "dp-rule-list"
    assert choose_model(SCHEMA, 5.0, 0.0, -3) == "dp-rule-list"  # a negative noisy count is a small table


def test_the_count_has_sensitivity_one_and_its_privacy_map_is_tight():
    """Adding or removing one record moves the count by exactly 1 (all neighbouring pairs of tables of up to 4
    records), and the discrete Laplace count's loss ``|k - n| - |k - n'|`` over its scale reaches epsilon: a
    smaller epsilon in the ledger would be violated."""
    for n in range(4):
        assert {abs((n + 1) - n), abs(n - (n + 1))} == {1}
    eps = 0.3
    step = auto_plan(eps)[0]
    scale = step.entry.scale
    losses = [(abs(k - 5) - abs(k - 6)) / scale for k in range(-20, 30)]
    assert max(losses) == pytest.approx(eps) and max(losses) > 0.99 * eps
    assert step.entry.sensitivity == 1.0 and step.entry.epsilon == eps


def test_auto_chooses_by_the_noisy_count_and_the_ledger_says_so():
    big, small = _fit(3000, 1.0), _fit(150, 1.0)
    assert isinstance(big.model_, DPGradientBoostingClassifier) and big.model_choice_ == "dp-gbdt"
    assert isinstance(small.model_, DPRuleListClassifier) and small.model_choice_ == "dp-rule-list"
    for fitted in (big, small):
        entries = list(fitted.privacy_ledger_)
        assert entries[0].release == AUTO_RELEASE and entries[0].epsilon == pytest.approx(AUTO_SHARE * 1.0)
        assert fitted.privacy_ledger_.total()[0] <= 1.0 * (1 + 1e-9)
        assert f"model='auto' chose {fitted.model_choice_}" in str(fitted)
    assert big.encoding_.numbers  # dp-gbdt takes numbers through the route
    assert list(big.model_.classes_) == ["hi", "lo"] and list(small.model_.classes_) == ["hi", "lo"]


def test_explicit_models_are_unchanged_by_auto():
    df, y = _table(400)
    a = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(max_length=2), random_state=1).fit(df, y)
    d = a.to_dict()
    assert "model" not in d["params"] and "records_noisy" not in d  # the files of explicit models keep their keys


@pytest.fixture(scope="module")
def auto_file():
    return json.loads(json.dumps(_fit(3000, 1.0).to_dict()))


def _edit(data, key, value):
    data = json.loads(json.dumps(data))
    data[key] = value
    return data


def test_an_auto_file_verifies_and_predicts(auto_file):
    model = DPPipeline.from_dict(auto_file)
    df, _ = _table(50, seed=3)
    assert model.model == "auto" and model.model_choice_ == "dp-gbdt"
    assert model.predict(df).shape == (50,)


@pytest.mark.parametrize("key, value, field", [
    ("records_noisy", 10, "inner_model.model"),  # the rule would have chosen the rule list
    ("records_noisy", 2500.5, "records_noisy"),  # not an integer
])
def test_an_auto_file_whose_choice_does_not_follow_is_refused(auto_file, key, value, field):
    with pytest.raises(ModelFileError, match=field):
        DPPipeline.from_dict(_edit(auto_file, key, value))


def test_an_auto_file_without_its_count_is_refused(auto_file):
    dropped = json.loads(json.dumps(auto_file))
    dropped["privacy_ledger"]["entries"] = dropped["privacy_ledger"]["entries"][1:]
    with pytest.raises(ModelFileError, match="privacy_ledger"):
        DPPipeline.from_dict(dropped)
    no_count = json.loads(json.dumps(auto_file))
    del no_count["records_noisy"]
    with pytest.raises(ModelFileError, match="records_noisy"):
        DPPipeline.from_dict(no_count)
    not_auto = json.loads(json.dumps(auto_file))
    del not_auto["params"]["model"]
    with pytest.raises(ModelFileError):
        DPPipeline.from_dict(not_auto)


def test_cli_fit_with_a_schema_and_no_model_is_auto(tmp_path, capsys):
    df, y = _table(2000)
    df.assign(y=y).to_csv(tmp_path / "t.csv", index=False)
    SCHEMA.save(tmp_path / "s.json")
    out = tmp_path / "m.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["fit", "--data", str(tmp_path / "t.csv"), "--target", "y", "--schema", str(tmp_path / "s.json"),
                     "--classes", "hi,lo", "--epsilon", "1", "--seed", "0", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "auto (dp-gbdt, by DPPipeline's rule) on" in text and AUTO_RELEASE in text
    assert json.loads(out.read_text())["params"]["model"] == "auto"
    assert main(["fit", "--data", str(tmp_path / "t.csv"), "--target", "y", "--schema", str(tmp_path / "s.json"),
                 "--max-length", "3"]) == 2
    assert "Model 'auto' has no parameter max_length" in capsys.readouterr().err


def test_the_contract_command_keeps_the_rule_list(capsys):
    assert main(["fit", "--dataset", "breast-cancer", "--epsilon", "1", "--seed", "0"]) == 0
    assert capsys.readouterr().out.startswith("dp-rule-list on breast-cancer")
    assert main(["fit", "--dataset", "breast-cancer", "--model", "auto"]) == 2
    assert "--model auto chooses a model for a raw table" in capsys.readouterr().err


def test_auto_through_dask_is_the_in_memory_model(dask_client, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    df, y = _table(2500)
    df = df.assign(y=y)
    for i, chunk in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[chunk].to_parquet(tmp_path / f"part{i}.parquet")
    frame = dd.read_parquet(str(tmp_path / "*.parquet"))
    # epsilon 0.3 on 2,500 records: dp-gbdt with its "auto" 15 trees (each tree is 2 round trips to the workers)
    make = lambda: DPPipeline(schema=SCHEMA, model="auto", epsilon=0.3, random_state=2, classes=["hi", "lo"])  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        through_dask = make().fit(frame.drop(columns=["y"]), frame["y"])
        in_memory = make().fit(df.drop(columns=["y"]), df["y"])
    assert through_dask.to_dict() == in_memory.to_dict()
