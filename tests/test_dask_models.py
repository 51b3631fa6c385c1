"""The models beyond the rule lists and boosting fit through Dask to the in-memory model.

DPLogisticRegression, DPPipeline, PrivateGridSearch, SubsampleAggregateClassifier
and DPBaggingClassifier learn from the data's pattern table (or, for the
pipeline, from its encoding's counts and then the inner model's table), built
in memory or on the session's LocalCluster of 2 processes (``dask_client`` in
conftest.py): the same ``random_state`` gives the same model, to the last bit
of its JSON.  The data are a few small parquet files in a temporary folder.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from dpglass.exceptions import DataValidationError  # noqa: E402
from dpglass.models import (  # noqa: E402
    DPBaggingClassifier, DPLogisticRegression, DPPipeline, DPRuleListClassifier, PrivateGridSearch,
    SmoothBoostClassifier, SubsampleAggregateClassifier,
)
from dpglass_experiments.one_rule import OneRuleClassifier  # noqa: E402
from dpglass.schema import Schema, binary, categorical, ignore, numeric  # noqa: E402

FEATURES = [f"f{j}" for j in range(8)]


@pytest.fixture(scope="module")
def binary_parquet(tmp_path_factory):
    """1,800 records, 8 binary features, labels 'no'/'yes', in 3 parquet files."""
    rng = np.random.default_rng(21)
    X = (rng.random((1800, 8)) < np.linspace(0.2, 0.6, 8)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | X[:, 2]) ^ (rng.random(1800) < 0.1)
    df = pd.DataFrame(X, columns=FEATURES).assign(y=np.where(y, "yes", "no"))
    public = (rng.random((300, 8)) < 0.4).astype(np.uint8)
    return df, _write(df, tmp_path_factory.mktemp("binary"), 3), public


@pytest.fixture(scope="module")
def raw_parquet(tmp_path_factory):
    """Raw columns for the pipeline: numeric (some outside the bounds, some missing), categorical, binary, id."""
    rng = np.random.default_rng(22)
    n = 1500
    df = pd.DataFrame({"age": rng.integers(10, 99, n).astype(float), "job": rng.choice(["a", "b", "c"], n),
                       "flag": rng.integers(0, 2, n), "id": np.arange(n)})
    df.loc[df.index[::97], "age"] = np.nan
    df["y"] = np.where((df.age > 40) & (df.job != "a") | (df.flag == 1) & (rng.random(n) < 0.3), "hi", "lo")
    return df, _write(df, tmp_path_factory.mktemp("raw"), 3)


def _write(df, folder, parts):
    for i, chunk in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[chunk].to_parquet(folder / f"part{i}.parquet")
    return str(folder / "*.parquet")


def _split(glob, features=None):
    frame = dd.read_parquet(glob)
    return frame[features] if features else frame.drop(columns=["y"]), frame["y"]


def _fit_both(make, df, glob, features=FEATURES, **fit_kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # paper-claim and clipping warnings
        through_dask = make().fit(*_split(glob, features), **fit_kw)
        in_memory = make().fit(df[features] if features else df.drop(columns=["y"]), df["y"], **fit_kw)
    return through_dask, in_memory


# the data have missing ages and a job "c" outside the list: declared as no indicator (else refused)
SCHEMA = Schema([numeric("age", 17, 90, thresholds="dp-quantiles", n_thresholds=3, missing="none"),
                 categorical("job", ["a", "b"], missing="none"), binary("flag"), ignore("id")], target="y")

BINARY_MODELS = {
    "dp-logistic": lambda: DPLogisticRegression(epsilon=1.0, random_state=0),
    "dp-logistic-no-intercept": lambda: DPLogisticRegression(epsilon=2.0, alpha=1.0, fit_intercept=False,
                                                             classes=["no", "yes"], random_state=1),
    "search-logistic": lambda: PrivateGridSearch(estimator=DPLogisticRegression(), param_grid={"alpha": [1.0, 10.0]},
                                                 epsilon=3.0, stopping_probability=0.5, random_state=2),
    "search-boosting": lambda: PrivateGridSearch(estimator=SmoothBoostClassifier(), param_grid={"n_rounds": [2, 4]},
                                                 epsilon=3.0, stopping_probability=0.5, random_state=3),
}


@pytest.mark.parametrize("name", list(BINARY_MODELS))
def test_dask_fit_is_the_in_memory_model(dask_client, binary_parquet, name):
    df, glob, _ = binary_parquet
    through_dask, in_memory = _fit_both(BINARY_MODELS[name], df, glob)
    assert through_dask.to_dict() == in_memory.to_dict()
    assert list(through_dask.feature_names_in_) == FEATURES and list(through_dask.classes_) == ["no", "yes"]
    np.testing.assert_array_equal(through_dask.predict(df[FEATURES]), in_memory.predict(df[FEATURES]))
    if name.startswith("search"):
        np.testing.assert_array_equal(through_dask.results_["noisy_correct"], in_memory.results_["noisy_correct"])


@pytest.mark.parametrize("cls, params", [
    (SubsampleAggregateClassifier, dict(delta=1e-6, n_teachers=6, noise_scale=3.0)),
    (DPBaggingClassifier, dict(delta=1e-6, n_teachers=4, n_partitions=3, noise_scale=20.0)),
])
def test_teacher_ensembles_through_dask(dask_client, binary_parquet, cls, params):
    df, glob, public = binary_parquet
    public_frame = pd.DataFrame(public, columns=FEATURES)
    make = lambda: cls(epsilon=2.0, random_state=4, **params)  # noqa: E731
    through_dask, in_memory = _fit_both(make, df, glob, X_public=public_frame)
    assert through_dask.to_dict() == in_memory.to_dict()
    assert through_dask.n_labelled_ == in_memory.n_labelled_ > 0
    # the public part may itself be a dask DataFrame (it is public: it is brought to the client)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = make().fit(*_split(glob, FEATURES), X_public=dd.from_pandas(public_frame, npartitions=2))
    assert again.to_dict() == in_memory.to_dict()


def test_cli_takes_the_public_part_through_dask(dask_client, binary_parquet, tmp_path, capsys):
    from dpglass.cli import main
    from dpglass.privacy.rng import check_random_state, spawn

    df, glob, public = binary_parquet
    public_csv = tmp_path / "public.csv"
    pd.DataFrame(public, columns=FEATURES).to_csv(public_csv, index=False)
    out = tmp_path / "model.json"
    rc = main(["fit", "--data", glob, "--target", "y", "--model", "subsample-aggregate", "--epsilon", "2",
               "--public", str(public_csv), "--scheduler", dask_client.scheduler.address, "--seed", "3",
               "--out", str(out)])
    assert rc == 0 and "public part: 300 records" in capsys.readouterr().out
    ref = SubsampleAggregateClassifier(epsilon=2.0, random_state=spawn(check_random_state(3), 2)[1])
    ref.fit(df[FEATURES], df["y"], X_public=pd.DataFrame(public, columns=FEATURES))
    assert json.loads(out.read_text()) == json.loads(json.dumps(ref.to_dict()))


@pytest.mark.parametrize("model", [DPLogisticRegression(), DPRuleListClassifier(max_length=3)],
                         ids=["logistic", "rule-list"])
def test_pipeline_through_dask_reads_counts_then_the_inner_model_fits_on_the_encoded_partitions(
        dask_client, raw_parquet, model):
    df, glob = raw_parquet
    make = lambda: DPPipeline(schema=SCHEMA, model=model, epsilon=2.0, random_state=5)  # noqa: E731
    through_dask, in_memory = _fit_both(make, df, glob, features=None)
    assert through_dask.to_dict() == in_memory.to_dict()
    assert len(through_dask.encoding_.cuts[0]) > 0  # DP quantiles were drawn (budget spent, as in memory)
    assert through_dask.clipped_records_noisy_ == in_memory.clipped_records_noisy_
    raw = df.drop(columns=["y"])
    np.testing.assert_array_equal(through_dask.predict(raw), in_memory.predict(raw))


def test_pipeline_names_the_partition_of_a_bad_value(dask_client, raw_parquet, tmp_path):
    df, _ = raw_parquet
    bad = df.copy()
    bad.loc[bad.index[-3], "flag"] = 7  # in the last of 3 parts
    X, y = _split(_write(bad, tmp_path, 3))
    with pytest.raises(DataValidationError, match=r"a partition: Column 'flag' is binary"):
        DPPipeline(schema=SCHEMA, model=DPLogisticRegression(), random_state=0).fit(X, y)
    no_stats = DPPipeline(schema=Schema([numeric("age", 17, 90, missing="none"), binary("flag"), ignore("id"), ignore("job")],
                                        target="y"), model=DPLogisticRegression(), clip_share=0.0, random_state=0)
    with pytest.raises(DataValidationError, match=r"a partition: Column 'flag' is binary"):
        no_stats.fit(X, y)  # nothing to count: the value is found as the partitions are encoded


def test_wrappers_refuse_inner_models_without_a_dask_path(binary_parquet, raw_parquet):
    _, glob, _ = binary_parquet
    with pytest.raises(DataValidationError, match="PrivateGridSearch fits through Dask when its estimator does"):
        PrivateGridSearch(estimator=_NoTables(), param_grid={"epsilon_share": [1.0]}, epsilon=1.0,
                          random_state=0).fit(*_split(glob, FEATURES))
    _, raw = raw_parquet
    with pytest.raises(DataValidationError, match="DPPipeline fits through Dask when its model does"):
        DPPipeline(schema=SCHEMA, model=_NoTables(), random_state=0).fit(*_split(raw))


class _NoTables(OneRuleClassifier):
    """A DP-looking estimator with no table path (the wrappers must refuse it through Dask)."""

    _private = True

    def __init__(self, *, epsilon=1.0, epsilon_share=1.0, random_state=None):
        self.epsilon, self.epsilon_share, self.random_state = epsilon, epsilon_share, random_state


def test_record_order_does_not_matter_in_memory(binary_parquet):
    """The split and the teachers' parts are drawn on the table: shuffling the records changes nothing."""
    df, _, public = binary_parquet
    shuffled = df.sample(frac=1.0, random_state=0)
    saa = lambda: SubsampleAggregateClassifier(epsilon=2.0, delta=1e-6, n_teachers=6, noise_scale=3.0,  # noqa: E731
                                               random_state=4)
    public_kw = {"X_public": pd.DataFrame(public, columns=FEATURES)}
    for make, kw in ((BINARY_MODELS["search-boosting"], {}), (saa, public_kw)):
        a = make().fit(df[FEATURES], df["y"], **kw)
        b = make().fit(shuffled[FEATURES], shuffled["y"], **kw)
        assert a.to_dict() == b.to_dict()


def test_cli_fits_dp_logistic_regression_through_the_scheduler(dask_client, binary_parquet, tmp_path, capsys):
    from dpglass.cli import main
    from dpglass.privacy.rng import check_random_state, spawn

    df, glob, _ = binary_parquet
    out = tmp_path / "model.json"
    rc = main(["fit", "--data", glob, "--target", "y", "--model", "dp-logistic-regression", "--epsilon", "1",
               "--scheduler", dask_client.scheduler.address, "--seed", "3", "--out", str(out)])
    assert rc == 0 and "through Dask" in capsys.readouterr().out
    ref = DPLogisticRegression(epsilon=1.0, random_state=spawn(check_random_state(3), 2)[1]).fit(df[FEATURES],
                                                                                                  df["y"])
    assert json.loads(out.read_text()) == json.loads(json.dumps(ref.to_dict()))
