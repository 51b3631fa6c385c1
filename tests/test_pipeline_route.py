"""DPPipeline's route: numbers and categories reach the models that take them (issue 28).

dp-gbdt declares a ``bounds`` parameter, so the pipeline hands it every numeric
column as its values clipped to the schema's public bounds (it bins them in its
own plan) and keeps the categorical columns one-hot: the pipeline's model is
then dp-gbdt fitted by hand on those columns with the same bounds and the same
seed stream, to the last bit of its JSON.  A model with a ``categories``
parameter (dp-gam) gets each categorical column as one column of codes.  Every
other model keeps the 0/1 route, whose files are unchanged.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import write_parquet_parts

from dpglass.exceptions import ModelFileError
from dpglass.models import DPGradientBoostingClassifier, DPPipeline, DPRuleListClassifier
from dpglass.models.pipeline.route import model_route
from dpglass.privacy.rng import check_random_state, spawn
from dpglass.schema import Encoding, Schema, binary, categorical, fit_encoding, ignore, numeric

SCHEMA = Schema([numeric("age", 17, 90, thresholds="dp-quantiles", n_thresholds=3, missing="none"),
                 categorical("job", ["a", "b"], missing="none"), binary("flag"),
                 numeric("hours", 0, 99, thresholds="grid", n_thresholds=4), ignore("id")], target="y")
BOUNDS = [(17.0, 90.0), None, None, None, (0.0, 99.0)]  # age, job=a, job=b, flag, hours


def _raw(n=1200, seed=22):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(10, 99, n).astype(float), "job": rng.choice(["a", "b", "c"], n),
                       "flag": rng.integers(0, 2, n), "hours": np.round(rng.normal(40, 12, n), 1),
                       "id": np.arange(n)})
    df.loc[df.index[::97], "age"] = np.nan  # missing: declared "none" (the lower bound, as numbers)
    y = np.where((df.age > 40) & (df.job != "a") | (df.hours > 55) ^ (rng.random(n) < 0.1), "hi", "lo")
    return df, y


def _hand_columns(df):
    """What the schema route hands dp-gbdt, written out by hand: numbers clipped, one-hot jobs, the flag."""
    age = np.clip(df.age.fillna(17.0), 17, 90)
    return pd.DataFrame({"age": age, "job=a": (df.job == "a").astype(float), "job=b": (df.job == "b").astype(float),
                         "flag": df.flag.astype(float), "hours": np.clip(df.hours, 0, 99)})


def _fit(model, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping and undeclared-classes warnings are not what these tests are about
        return model.fit(*args, **kw)


def test_routes_are_declared_by_the_models_parameters():
    assert model_route(DPGradientBoostingClassifier) == {"numbers": True, "codes": False, "missing_bins": False}
    assert model_route(DPRuleListClassifier) == {"numbers": False, "codes": False, "missing_bins": False}

    class Opted(DPGradientBoostingClassifier):
        _takes_numeric = False  # a class may decline the route its parameters suggest

    assert model_route(Opted) == {"numbers": False, "codes": False, "missing_bins": False}


@pytest.mark.parametrize("clip_share", [0.0, 0.02])
@pytest.mark.parametrize("seed, eps", [(0, 1.0), (3, 0.3)])
def test_schema_route_equals_the_hand_route_for_dp_gbdt(seed, eps, clip_share):
    df, y = _raw()
    kw = dict(classes=["hi", "lo"], n_estimators=8, max_depth=2, delta=1e-6)
    pipe = _fit(DPPipeline(schema=SCHEMA, model=DPGradientBoostingClassifier(**kw), epsilon=eps,
                           clip_share=clip_share, random_state=seed), df.drop(columns="id"), y)
    model_rng = spawn(check_random_state(seed), 2)[1]  # the pipeline's stream: the encoder's child, the model's
    hand = _fit(DPGradientBoostingClassifier(**{**kw, "epsilon": eps * (1 - clip_share)}, bounds=BOUNDS,
                                             random_state=model_rng), _hand_columns(df), y)
    assert json.dumps(pipe.model_.to_dict()) == json.dumps(hand.to_dict())
    assert pipe.encoding_.numbers and not pipe.encoding_.codes
    assert pipe.encoding_.feature_names() == ["age", "job=a", "job=b", "flag", "hours"]
    assert not any(e.release.startswith("encoder: age quantile") for e in pipe.privacy_ledger_)  # dp-gbdt bins
    np.testing.assert_array_equal(pipe.predict(df), hand.predict(_hand_columns(df)))
    text = str(pipe)
    assert "age <= " in text or "hours <= " in text  # raw column terms
    again = DPPipeline.from_dict(json.loads(json.dumps(pipe.to_dict())))  # verified on load
    np.testing.assert_array_equal(again.predict_proba(df), pipe.predict_proba(df))


def test_the_route_depends_on_the_schema_only():
    """Two tables that differ in every record give the same encoding on the numbers route (no cut points, the
    clipped count off): nothing published about the encoding is a function of the data."""
    a, ya = _raw(seed=1)
    b, yb = _raw(n=40, seed=2)
    make = lambda: DPPipeline(schema=SCHEMA, model=DPGradientBoostingClassifier(n_estimators=2, classes=["hi", "lo"]),  # noqa: E731
                              clip_share=0.0, random_state=0)
    assert _fit(make(), a, ya).encoding_.to_dict() == _fit(make(), b, yb).encoding_.to_dict()


def test_missing_values_follow_the_schemas_rule_on_every_route():
    """``missing="none"``: on the 0/1 route no indicator; as numbers the lower bound (above no cut point); as codes
    the extra last code."""
    frame = pd.DataFrame({"age": [np.nan, 20.0, 200.0], "job": ["a", None, "zzz"], "flag": [1, 0, 1],
                          "hours": [1.0, -5.0, 50.0]})
    binary_route, _, _ = fit_encoding(frame, SCHEMA, quantile_epsilon=1.0, clip_epsilon=0.0, rng=0)
    numbers, ledger, _ = fit_encoding(frame, SCHEMA, quantile_epsilon=0.0, clip_epsilon=0.0, rng=0, numbers=True)
    both, _, _ = fit_encoding(frame, SCHEMA, quantile_epsilon=0.0, clip_epsilon=0.0, rng=0, numbers=True, codes=True)
    assert binary_route.transform(frame)[0, :len(binary_route.cuts[0])].sum() == 0
    np.testing.assert_array_equal(numbers.transform(frame)[:, 0], [17.0, 20.0, 90.0])
    np.testing.assert_array_equal(numbers.transform(frame)[:, 4], [1.0, 0.0, 50.0])
    assert both.feature_names() == ["age", "job", "flag", "hours"]
    np.testing.assert_array_equal(both.transform(frame)[:, 1], [0, 2, 2])  # "a"; missing and unlisted: code 2
    assert both.column_categories() == [None, 3, None, None] and both.column_bounds()[1] is None
    assert not any("quantile" in e.release for e in ledger)  # no cut points on the numbers route: no quantile
    assert Encoding.from_dict(both.to_dict()) == both
    assert "numbers" not in binary_route.to_dict() and "codes" not in binary_route.to_dict()  # 0/1 files unchanged
    gaps, _, _ = fit_encoding(frame, SCHEMA, quantile_epsilon=0.0, clip_epsilon=0.0, rng=0, numbers=True,
                              missing_bins=True)
    np.testing.assert_array_equal(gaps.transform(frame)[:, 0], [np.nan, 20.0, 90.0])  # NaN: the model's own bin
    assert gaps.column_missing() == [True, False, False, False, False] and Encoding.from_dict(gaps.to_dict()) == gaps


@pytest.fixture(scope="module")
def fitted():
    df, y = _raw()
    pipe = _fit(DPPipeline(schema=SCHEMA, model=DPGradientBoostingClassifier(n_estimators=3, classes=["hi", "lo"]),
                           epsilon=1.0, random_state=4), df, y)
    return json.loads(json.dumps(pipe.to_dict()))


def _edit(data, path, value, *more):
    data = json.loads(json.dumps(data))
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return _edit(data, *more) if more else data


@pytest.mark.parametrize("edits, field", [
    ([("encoding", "numbers"), False], "inner_model.feature_names"),  # the 0/1 route's columns are others
    ([("encoding", "codes"), True], "encoding.codes"),  # dp-gbdt takes no codes
    ([("encoding", "cuts", 0), [40.5]], "encoding.cuts['age']"),  # no cut points on the numbers route
    ([("inner_model", "params", "bounds", 0), [0, 90]], "inner_model.params.bounds"),  # not the schema's bounds
    ([("inner_model", "params", "bounds", 1), [0, 1]], "inner_model.params.bounds"),  # a one-hot column binned
])
def test_file_check_refuses_a_tampered_route(fitted, edits, field):
    DPPipeline.from_dict(fitted)
    with pytest.raises(ModelFileError, match=field.replace("[", r"\[").replace("]", r"\]")):
        DPPipeline.from_dict(_edit(fitted, *edits))


def test_file_check_refuses_an_encoder_quantile_on_the_numbers_route(fitted):
    entries = fitted["privacy_ledger"]["entries"]
    extra = {**entries[0], "release": "encoder: age quantile 1/4"}
    with pytest.raises(ModelFileError, match="privacy_ledger"):
        DPPipeline.from_dict(_edit(fitted, ("privacy_ledger", "entries"), [extra, *entries]))


def test_the_rule_list_keeps_the_01_route():
    df, y = _raw()
    pipe = _fit(DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(max_length=2, classes=["hi", "lo"]),
                           random_state=0), df, y)
    assert not pipe.encoding_.numbers and pipe.encoding_.feature_names()[0].startswith("age>")
    assert any(e.release.startswith("encoder: age quantile") for e in pipe.privacy_ledger_)


def test_dp_gam_takes_numbers_and_codes():
    from dpglass.models import DPGAMClassifier

    if model_route(DPGAMClassifier) != {"numbers": True, "codes": True, "missing_bins": True}:
        pytest.skip("dp-gam does not take bounds and categories yet (helper A's interface)")
    df, y = _raw()
    pipe = _fit(DPPipeline(schema=SCHEMA, model=DPGAMClassifier(classes=["hi", "lo"]), epsilon=1.0, delta=1e-6,
                           random_state=0), df, y)
    params = pipe.model_.get_params()
    assert pipe.encoding_.feature_names() == ["age", "job", "flag", "hours"]
    assert params["categories"] == [None, 3, None, None]
    assert [None if b is None else tuple(b) for b in params["bounds"]] == [(17.0, 90.0), None, None, (0.0, 99.0)]
    assert params["missing"] == [True, False, False, False]  # a missing age: dp-gam's own bin
    assert np.isnan(pipe._encode(df)["age"].to_numpy()).sum() == df.age.isna().sum()
    data = json.loads(json.dumps(pipe.to_dict()))
    again = DPPipeline.from_dict(data)
    np.testing.assert_array_equal(again.predict(df), pipe.predict(df))
    for key, value, field in (("missing", [False] * 4, "inner_model.params.missing"),
                              ("categories", [None, 2, None, None], "inner_model.params.categories")):
        with pytest.raises(ModelFileError, match=field):
            DPPipeline.from_dict(_edit(data, ("inner_model", "params", key), value))


def test_dask_route_is_the_in_memory_model(dask_client, tmp_path):
    """Through Dask, the numbers route is a per-partition map with public bounds, and the clipped count is summed
    on the cluster: the same model, to the last bit of its JSON."""
    dd = pytest.importorskip("dask.dataframe")
    df, y = _raw()
    df = df.assign(y=y)
    frame = dd.read_parquet(write_parquet_parts(df, tmp_path, 3))
    make = lambda: DPPipeline(schema=SCHEMA, model=DPGradientBoostingClassifier(  # noqa: E731
        n_estimators=4, max_depth=2, binning="quantile", classes=["hi", "lo"]), epsilon=2.0, random_state=5)
    through_dask = _fit(make(), frame.drop(columns=["y"]), frame["y"])
    in_memory = _fit(make(), df.drop(columns=["y"]), df["y"])
    assert through_dask.encoding_.numbers and through_dask.to_dict() == in_memory.to_dict()
    np.testing.assert_array_equal(through_dask.predict(df), in_memory.predict(df))
