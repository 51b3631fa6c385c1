"""``DPPipeline(model="auto")`` and ``dpglass fit`` with a schema and no ``--model``: a default model for a table.

The rule reads public facts and one noisy count of records (discrete Laplace,
sensitivity 1, paid from the budget and first in the ledger); the file keeps
the count and the rule's version (``auto_rule``; absent: version 1), and its
check recomputes the choice from them.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpglass.cli import main
from dpglass.exceptions import InvalidParameterError, ModelFileError
from dpglass.models import (
    DPGAMClassifier,
    DPGradientBoostingClassifier,
    DPPipeline,
    DPRuleListClassifier,
)
from dpglass.models.pipeline.auto import (
    AUTO_RELEASE,
    AUTO_RULE,
    AUTO_SHARE,
    GAM_EPSILON,
    GAM_SIGNAL,
    MIN_EPSILON,
    PER_COLUMN,
    SIGNAL,
    auto_plan,
    candidates,
    choose_model,
    rule_version,
)
from dpglass.schema import Schema, binary, categorical, ignore, numeric

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


#: A file written by the version-1 rule (dpglass at 9504380, before rule versions): 3,000 records at epsilon 0.2,
#: where version 1 chose the rule list (epsilon < 0.25) and version 2 would choose dp-gam (0.2 x 2,749 >= 100 x 3).
RULE_1_FILE = Path(__file__).parent / "data" / "pipeline_auto_rule1.json"
BINARY = Schema([binary(f"b{i}") for i in range(4)], target="y")


def test_rule_1_on_both_sides_of_its_limits():
    assert choose_model(SCHEMA, 1.0, None, math.ceil(SIGNAL), rule=1) == "dp-gbdt"
    assert choose_model(SCHEMA, 1.0, None, math.ceil(SIGNAL) - 1, rule=1) == "dp-rule-list"
    assert choose_model(SCHEMA, MIN_EPSILON, None, 10 ** 9, rule=1) == "dp-gbdt"
    assert choose_model(SCHEMA, np.nextafter(MIN_EPSILON, 0), None, 10 ** 9, rule=1) == "dp-rule-list"
    assert choose_model(SCHEMA, 5.0, 0.0, -3, rule=1) == "dp-rule-list"  # a negative noisy count is a small table


def test_rule_2_on_both_sides_of_its_limits():
    """dp-gam from GAM_SIGNAL at epsilon >= GAM_EPSILON; below it, dp-gam (a numeric or categorical column) or
    dp-gbdt (binary columns only) from PER_COLUMN x (feature columns); else the rule list."""
    assert AUTO_RULE == 2 and choose_model(SCHEMA, 1.0, None, 10 ** 9) == "dp-gam"  # the default rule is 2
    d = len(SCHEMA.features)  # 3: the ignored id is not read
    assert d == 3 and PER_COLUMN * d < GAM_SIGNAL
    assert choose_model(SCHEMA, GAM_EPSILON, None, math.ceil(GAM_SIGNAL), rule=2) == "dp-gam"
    assert choose_model(SCHEMA, GAM_EPSILON, None, math.ceil(PER_COLUMN * d), rule=2) == "dp-gam"
    assert choose_model(SCHEMA, GAM_EPSILON, None, math.ceil(PER_COLUMN * d) - 1, rule=2) == "dp-rule-list"
    assert choose_model(SCHEMA, 0.5, None, math.ceil(2 * PER_COLUMN * d), rule=2) == "dp-gam"
    assert choose_model(SCHEMA, 0.5, None, math.ceil(2 * PER_COLUMN * d) - 1, rule=2) == "dp-rule-list"
    wide = Schema([numeric(f"x{i}", 0, 1) for i in range(40)], target="y")  # PER_COLUMN x 40 > GAM_SIGNAL
    assert choose_model(wide, GAM_EPSILON, None, math.ceil(GAM_SIGNAL), rule=2) == "dp-gam"
    assert choose_model(wide, GAM_EPSILON, None, math.ceil(GAM_SIGNAL) - 1, rule=2) == "dp-rule-list"
    assert choose_model(wide, np.nextafter(GAM_EPSILON, 0), None, math.ceil(GAM_SIGNAL), rule=2) == "dp-rule-list"
    assert choose_model(BINARY, 0.5, None, 800, rule=2) == "dp-gbdt"  # 0/1 columns only, epsilon < 1
    assert choose_model(BINARY, 0.5, None, 799, rule=2) == "dp-rule-list"
    assert choose_model(BINARY, 1.0, None, 1000, rule=2) == "dp-gam"
    assert choose_model(SCHEMA, 5.0, 0.0, -3, rule=2) == "dp-rule-list"
    assert set(candidates(2)) == {"dp-gam", "dp-gbdt", "dp-rule-list"} and set(candidates(1)) == {"dp-gbdt",
                                                                                                   "dp-rule-list"}


def test_rule_2_at_delta_zero_puts_dp_gbdt_where_dp_gam_would_be():
    """dp-gam needs delta > 0 (Gaussian noise): at delta=0 rule 2 picks dp-gbdt in its place, so a pure fit never
    fails on the choice (review s36, finding 1: it failed after the count was drawn, naming a model nobody asked
    for); delta=None (the model's own) keeps dp-gam."""
    for schema, eps, n in ((SCHEMA, 1.0, 10 ** 6), (SCHEMA, 0.5, 10 ** 6), (BINARY, 1.0, 1000)):
        assert choose_model(schema, eps, None, n, rule=2) == "dp-gam"
        assert choose_model(schema, eps, 0.0, n, rule=2) == "dp-gbdt"
    assert choose_model(SCHEMA, 1.0, 0.0, 10, rule=2) == "dp-rule-list"
    df, y = _table(300)
    for s in range(4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe = DPPipeline(schema=SCHEMA, model="auto", epsilon=5.0, delta=0.0, classes=["hi", "lo"],
                              random_state=s).fit(df, y)
        assert pipe.model_choice_ == "dp-gbdt" and pipe.privacy_ledger_.total()[1] == 0.0
        DPPipeline.from_dict(json.loads(json.dumps(pipe.to_dict())))


@pytest.mark.parametrize("version", [0, 3, "2", True, 2.0])
def test_an_unknown_rule_version_is_refused(version):
    with pytest.raises(InvalidParameterError, match="rule version"):
        rule_version(version)
    assert rule_version(None) == 1 and rule_version(1) == 1 and rule_version(2) == 2


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
    assert isinstance(big.model_, DPGAMClassifier) and big.model_choice_ == "dp-gam"
    assert isinstance(small.model_, DPRuleListClassifier) and small.model_choice_ == "dp-rule-list"
    for fitted in (big, small):
        entries = list(fitted.privacy_ledger_)
        assert entries[0].release == AUTO_RELEASE and entries[0].epsilon == pytest.approx(AUTO_SHARE * 1.0)
        assert fitted.privacy_ledger_.total()[0] <= 1.0 * (1 + 1e-9)
        assert f"model='auto' (rule 2) chose {fitted.model_choice_}" in str(fitted)
        assert fitted.auto_rule_ == 2 and fitted.to_dict()["auto_rule"] == 2
    assert big.encoding_.numbers and big.encoding_.codes  # dp-gam takes numbers and codes through the route
    assert list(big.model_.classes_) == ["hi", "lo"] and list(small.model_.classes_) == ["hi", "lo"]


def test_auto_on_binary_columns_at_a_small_epsilon_is_dp_gbdt():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 2, (4000, 4)), columns=[f"b{i}" for i in range(4)])
    y = np.where(X.b0 ^ (rng.random(4000) < 0.2), "hi", "lo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = DPPipeline(schema=BINARY, model="auto", epsilon=0.5, random_state=0, classes=["hi", "lo"]).fit(X, y)
    assert isinstance(fitted.model_, DPGradientBoostingClassifier) and fitted.model_choice_ == "dp-gbdt"
    DPPipeline.from_dict(json.loads(json.dumps(fitted.to_dict())))


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
    assert model.model == "auto" and model.model_choice_ == "dp-gam" and model.auto_rule_ == 2
    assert json.dumps(model.to_dict()) == json.dumps(auto_file)  # saved again as it was loaded
    assert model.predict(df).shape == (50,)


@pytest.mark.parametrize("key, value, field", [
    ("records_noisy", 10, "inner_model.model"),  # the rule would have chosen the rule list
    ("records_noisy", 2500.5, "records_noisy"),  # not an integer
    ("auto_rule", 3, "auto_rule"),  # a version this dpglass does not know
    ("auto_rule", "2", "auto_rule"),
    ("auto_rule", True, "auto_rule"),
    ("auto_rule", 1, "auto_rule"),  # version 1 is spelt by its absence
    ("auto_rule", None, "auto_rule"),
])
def test_an_auto_file_whose_choice_does_not_follow_is_refused(auto_file, key, value, field):
    with pytest.raises(ModelFileError, match=field):
        DPPipeline.from_dict(_edit(auto_file, key, value))


def _ledger_edit(how):
    def edit(data):
        entries = data["privacy_ledger"]["entries"]
        if how == "swap":
            entries[0], entries[1] = entries[1], entries[0]
        elif how == "add":
            entries.insert(0, entries[0])
        else:
            entries.pop(0)
    return edit


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.update(classes=["hi", "LO"]), "classes"),
    (lambda d: (d["inner_model"].update(classes=["hi", "LO"]), d.update(classes=["hi", "LO"])), "classes"),
    (_ledger_edit("swap"), r"privacy_ledger\.entries\[0\]"),
    (_ledger_edit("add"), "privacy_ledger"),
    (_ledger_edit("drop"), "privacy_ledger"),
])
def test_a_tampered_rule_2_file_is_refused_naming_the_field(auto_file, edit, field):
    data = json.loads(json.dumps(auto_file))
    edit(data)
    with pytest.raises(ModelFileError, match=field):
        DPPipeline.from_dict(data)


def test_an_auto_file_without_its_rule_version_is_checked_under_rule_1(auto_file):
    """Dropping ``auto_rule`` makes the file a version-1 file: its check replays rule 1, which chooses dp-gbdt from
    this count, not the file's dp-gam."""
    assert auto_file["auto_rule"] == 2 and auto_file["inner_model"]["model"] == "DPGAMClassifier"
    dropped = json.loads(json.dumps(auto_file))
    del dropped["auto_rule"]
    with pytest.raises(ModelFileError, match=r"inner_model\.model.*DPGradientBoostingClassifier.*rule version 1"):
        DPPipeline.from_dict(dropped)


def test_a_file_of_rule_1_loads_verifies_and_saves_unchanged():
    """A file written before rule versions (no ``auto_rule``) is checked under rule 1, which chose its rule list;
    loaded, it prints and saves as it was written.  Marked as version 2 it is refused: rule 2 chooses dp-gam."""
    data = json.loads(RULE_1_FILE.read_text())
    assert "auto_rule" not in data and choose_model(SCHEMA, 0.2, None, data["records_noisy"]) == "dp-gam"
    model = DPPipeline.from_dict(json.loads(json.dumps(data)))
    assert model.auto_rule_ == 1 and model.model_choice_ == "dp-rule-list"
    assert json.dumps(model.to_dict()) == json.dumps(data)
    assert "model='auto' chose dp-rule-list from a noisy count of" in str(model)
    df, _ = _table(20, seed=5)
    assert model.predict(df).shape == (20,)
    with pytest.raises(ModelFileError, match=r"inner_model\.model.*rule version 2"):
        DPPipeline.from_dict(_edit(data, "auto_rule", 2))


def test_an_explicit_model_file_with_a_rule_version_is_refused():
    df, y = _table(200)
    d = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(max_length=2), random_state=1,
                   classes=["hi", "lo"]).fit(df, y).to_dict()
    with pytest.raises(ModelFileError, match="auto_rule"):
        DPPipeline.from_dict(_edit(d, "auto_rule", 2))


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
    assert "auto (dp-gam, by DPPipeline's rule) on" in text and AUTO_RELEASE in text
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
    # epsilon 0.3 on 2,500 records: dp-gam (0.3 x 2,500 >= 100 x 3 columns)
    make = lambda: DPPipeline(schema=SCHEMA, model="auto", epsilon=0.3, random_state=2, classes=["hi", "lo"])  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        through_dask = make().fit(frame.drop(columns=["y"]), frame["y"])
        in_memory = make().fit(df.drop(columns=["y"]), df["y"])
    assert through_dask.model_choice_ == "dp-gam"
    assert through_dask.to_dict() == in_memory.to_dict()


@pytest.mark.parametrize("epsilon, choice", [(None, "dp-rule-list"), ("5", "dp-gam")])
def test_cli_fit_without_a_model_on_breast_cancer_through_its_schema(tmp_path, capsys, epsilon, choice):
    """The breast-cancer table as a raw CSV with its public schema (the documented Min/Max of each feature, the
    bounds the built-in encoding is cut from), no --model: the CLI fits model='auto' and prints its choice (about
    400 training records: the rule list at epsilon 1, dp-gam at 5)."""
    from sklearn.datasets import load_breast_cancer

    from dpglass.datasets._loaders import _BREAST_CANCER_CUTS

    frame = load_breast_cancer(as_frame=True).data
    frame.assign(malignant=np.where(load_breast_cancer().target == 0, "yes", "no")).to_csv(tmp_path / "bc.csv",
                                                                                           index=False)
    Schema([numeric(name, lo, hi) for name, lo, hi, _ in _BREAST_CANCER_CUTS], target="malignant").save(
        tmp_path / "bc.json")
    argv = ["fit", "--data", str(tmp_path / "bc.csv"), "--target", "malignant", "--schema", str(tmp_path / "bc.json"),
            "--classes", "no,yes", "--seed", "0", "--out", str(tmp_path / "m.json")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(argv + (["--epsilon", epsilon] if epsilon else [])) == 0
    text = capsys.readouterr().out
    assert f"auto ({choice}, by DPPipeline's rule) on" in text and f"model='auto' (rule 2) chose {choice}" in text
    saved = json.loads((tmp_path / "m.json").read_text())
    assert saved["auto_rule"] == 2 and DPPipeline.from_dict(saved).model_choice_ == choice
