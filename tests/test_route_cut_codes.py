"""The pipeline hands dp-gam a numeric column's listed cut points as codes (issue 28, helper H).

A schema column ``numeric(..., thresholds=[t1, .., tk])`` reaches dp-gam as the code of its interval: the number of
listed cut points it is above (``x > t``, the 0/1 route's test), a missing value (``missing="none"``) the extra code
``k + 1``; dp-gam reads it as a column of ``k + 1 (+1)`` codes.  Public cut points fixed before the data: a per-record
map, no privacy cost.  Columns without listed cut points keep the numbers route.
"""

from __future__ import annotations

import json
import sqlite3
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import write_parquet_parts

from dpglass.exceptions import ModelFileError
from dpglass.export import to_python, to_sql
from dpglass.models import DPGAMClassifier, DPPipeline
from dpglass.models.pipeline.route import CutCodeEncoding
from dpglass.models.readout.explain import explain_model
from dpglass.privacy.rng import check_random_state, spawn
from dpglass.schema import Encoding, Schema, binary, categorical, numeric

CUTS = (20.5, 30.5, 45.5)
SCHEMA = Schema([numeric("age", 17, 90, thresholds=CUTS, missing="none"),
                 categorical("job", ["a", "b"], missing="none"), binary("flag"),
                 numeric("hours", 0, 99, thresholds="grid", n_thresholds=4)], target="y")


def _raw(n=900, seed=5):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(10, 99, n).astype(float), "job": rng.choice(["a", "b", "c"], n),
                       "flag": rng.integers(0, 2, n), "hours": np.round(rng.normal(40, 12, n), 1)})
    df.loc[df.index[::37], "age"] = np.nan
    df.loc[df.index[1::50], "age"] = 30.5  # on a cut point: below it (x > t is false), as on the 0/1 route
    y = np.where((df.age.fillna(0) > 30) & (df.job != "a") | (df.hours > 55) ^ (rng.random(n) < 0.1), "hi", "lo")
    return df, y


def _hand_columns(df):
    """The codes written out by hand: age's interval among CUTS (missing: 4), job's index (other: 2)."""
    age = sum((df.age > t).astype(float) for t in CUTS).where(df.age.notna(), float(len(CUTS) + 1))
    job = df.job.map({"a": 0.0, "b": 1.0}).fillna(2.0)
    return pd.DataFrame({"age": age, "job": job, "flag": df.flag.astype(float), "hours": np.clip(df.hours, 0, 99)})


def _fit(model, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(*args)


def _pipe(seed=0, eps=1.0):
    df, y = _raw()
    return _fit(DPPipeline(schema=SCHEMA, model=DPGAMClassifier(classes=["hi", "lo"], delta=1e-6), epsilon=eps,
                           clip_share=0.0, random_state=seed), df, y), df, y


@pytest.mark.parametrize("seed, eps", [(0, 1.0), (3, 0.3)])
def test_the_route_equals_dp_gam_fitted_by_hand_on_the_codes(seed, eps):
    pipe, df, y = _pipe(seed, eps)
    model_rng = spawn(check_random_state(seed), 2)[1]  # the pipeline's stream: the encoder's child, the model's
    hand = _fit(DPGAMClassifier(classes=["hi", "lo"], delta=1e-6, epsilon=eps, random_state=model_rng,
                                bounds=[None, None, None, (0.0, 99.0)], categories=[len(CUTS) + 2, 3, None, None],
                                missing=[False] * 4, feature_groups=["age", "job", "flag", "hours"]),
                _hand_columns(df), y)
    assert isinstance(pipe.encoding_, CutCodeEncoding)
    assert json.dumps(pipe.model_.to_dict()) == json.dumps(hand.to_dict())
    np.testing.assert_array_equal(pipe._encode(df).to_numpy(), _hand_columns(df).to_numpy())
    np.testing.assert_array_equal(pipe.predict(df), hand.predict(_hand_columns(df)))
    again = DPPipeline.from_dict(json.loads(json.dumps(pipe.to_dict())))  # verified on load
    assert isinstance(again.encoding_, CutCodeEncoding)
    np.testing.assert_array_equal(again.predict_proba(df), pipe.predict_proba(df))


def test_the_codes_spend_nothing_and_depend_on_the_schema_only():
    pipe, df, y = _pipe()
    assert all(e.epsilon == 0 for e in pipe.privacy_ledger_ if e.release.startswith("encoder:"))
    small = _fit(DPPipeline(schema=SCHEMA, model=DPGAMClassifier(classes=["hi", "lo"]), clip_share=0.0,
                            random_state=1), df.iloc[:30], y[:30])
    assert small.encoding_.to_dict() == pipe.encoding_.to_dict()


def test_without_listed_cut_points_the_numbers_route_is_unchanged():
    schema = Schema([numeric("age", 17, 90, thresholds="grid", n_thresholds=3, missing="none"),
                     categorical("job", ["a", "b"], missing="none")], target="y")
    df, y = _raw()
    pipe = _fit(DPPipeline(schema=schema, model=DPGAMClassifier(classes=["hi", "lo"]), random_state=0),
                df[["age", "job"]], y)
    assert type(pipe.encoding_) is Encoding and "cut_codes" not in pipe.to_dict()["encoding"]
    assert pipe.model_.get_params()["bounds"][0] == (17.0, 90.0)


def _edit(data, path, value):
    data = json.loads(json.dumps(data))
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


def test_a_tampered_cut_point_or_route_flag_is_refused_with_the_field_named():
    pipe, _, _ = _pipe()
    data = pipe.to_dict()
    assert data["encoding"]["cut_codes"] is True
    with pytest.raises(ModelFileError, match=r"encoding\.schema\.columns\[0\]"):
        DPPipeline.from_dict(_edit(data, ("encoding", "schema", "columns", 0, "thresholds"), [20.5, 31.5, 45.5]))
    dropped = json.loads(json.dumps(data))
    del dropped["encoding"]["cut_codes"]
    with pytest.raises(ModelFileError, match=r"inner_model\.params\.bounds"):
        DPPipeline.from_dict(dropped)
    with pytest.raises(ModelFileError, match="encoding"):
        DPPipeline.from_dict(_edit(data, ("encoding", "cut_codes"), "yes"))
    with pytest.raises(ModelFileError, match=r"inner_model\.params\.categories"):
        DPPipeline.from_dict(_edit(data, ("inner_model", "params", "categories"), [4, 3, None, None]))


def test_sql_and_python_exports_agree_with_predict_on_every_row():
    pipe, df, _ = _pipe()
    df = df.copy()
    df.loc[df.index[:4], "age"] = [20.5, 20.50001, 95.0, 5.0]  # on a cut point, just above, outside the bounds
    pred = np.asarray(pipe.predict(df), dtype=object)
    con = sqlite3.connect(":memory:")
    df.to_sql("t", con, index=False)
    cur = con.execute(to_sql(pipe, "t"))
    out = pd.DataFrame(cur.fetchall(), columns=[d[0] for d in cur.description])
    assert list(out["prediction"]) == list(pred)
    mod = {}
    exec(compile(to_python(pipe), "<export>", "exec"), mod)  # noqa: S102 - the module under test
    rows = [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
            for r in df.to_dict("records")]
    assert [mod["predict"](r) for r in rows] == list(pred)


def test_readouts_show_the_interval():
    pipe, _, _ = _pipe()
    frame = explain_model(pipe)
    values = list(frame[frame.group == "age"]["value"])
    assert values == ["<= 20.5", "(20.5, 30.5]", "(30.5, 45.5]", "> 45.5", "missing"]


def test_dask_route_is_the_in_memory_model(dask_client, tmp_path):
    """Through Dask the codes are the same per-partition map: the same model, to the last bit of its JSON."""
    dd = pytest.importorskip("dask.dataframe")
    df, y = _raw()
    df = df.assign(y=y)
    frame = dd.read_parquet(write_parquet_parts(df, tmp_path, 3))
    make = lambda: DPPipeline(schema=SCHEMA, model=DPGAMClassifier(classes=["hi", "lo"], delta=1e-6),  # noqa: E731
                              epsilon=1.0, random_state=5)
    through_dask = _fit(make(), frame.drop(columns=["y"]), frame["y"])
    in_memory = _fit(make(), df.drop(columns=["y"]), df["y"])
    assert isinstance(through_dask.encoding_, CutCodeEncoding)
    assert json.dumps(through_dask.to_dict()) == json.dumps(in_memory.to_dict())


def test_a_grid_search_over_the_pipeline_reads_the_codes_too():
    """PrivateGridSearch encodes once (the pipeline's _fit_encoding, on the cut-codes route) and sets its
    candidates' inputs through model_inputs: both read the listed cut points as codes."""
    from dpglass.models import PrivateGridSearch

    df, y = _raw()
    search = PrivateGridSearch(DPPipeline(schema=SCHEMA, model=DPGAMClassifier(classes=["hi", "lo"], delta=1e-6),
                                          epsilon=2.0, random_state=0),
                               {"model__max_bins": [4, 8]}, delta=1e-6, random_state=0)
    _fit(search, df, y)
    best = search.best_estimator_
    assert isinstance(best.encoding_, CutCodeEncoding)
    params = best.model_.best_estimator_.get_params()  # the pipeline's model is the search over dp-gam
    assert params["categories"][0] == len(CUTS) + 2 and params["bounds"][0] is None
    assert "cut_codes" in json.dumps(search.to_dict())


def test_the_card_lists_the_cut_points_the_model_reads(tmp_path):
    from dpglass.models.readout.card import model_card

    pipe, _, _ = _pipe()
    html = model_card(pipe)
    assert "20.5, 30.5, 45.5 (the model reads the interval)" in html
    assert "(20.5, 30.5]" in html  # the shapes, by interval
