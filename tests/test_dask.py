"""Fitting through Dask (dpglass.aggregates): same model as in memory, faults, bad partitions.

The session's LocalCluster of 2 worker processes (``dask_client`` in
conftest.py) is shared with tests/test_dask_models.py; the data are a few
small parquet files in a temporary folder.
"""

from __future__ import annotations

import functools
import os
import warnings

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from dpglass.aggregates import PatternTable, pattern_table  # noqa: E402
from dpglass.aggregates import dask_backend  # noqa: E402
from dpglass.exceptions import DataValidationError  # noqa: E402
from dpglass.models import (  # noqa: E402
    DPRuleListClassifier, GreedyRuleListClassifier, SmoothBoostClassifier,
)

N_FEATURES = 10
FEATURES = [f"f{j}" for j in range(N_FEATURES)]


def _frame(n=2400, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, N_FEATURES)) < np.linspace(0.15, 0.6, N_FEATURES)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | X[:, 2]) ^ (rng.random(n) < 0.1)
    df = pd.DataFrame(X, columns=FEATURES)
    df["y"] = np.where(y, "yes", "no")
    return df


def _write(df, folder, parts=4):
    folder.mkdir(parents=True, exist_ok=True)
    for i, chunk in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[chunk].to_parquet(folder / f"part{i}.parquet")
    return str(folder / "*.parquet")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    df = _frame()
    glob = _write(df, tmp_path_factory.mktemp("parquet"))
    return df, glob


def _dask(glob):
    ddf = dd.read_parquet(glob)
    return ddf[FEATURES], ddf["y"]


MODELS = {
    "greedy-rl": lambda: GreedyRuleListClassifier(max_length=4),
    "dp-rl": lambda: DPRuleListClassifier(epsilon=1.0, random_state=0),
    "dp-rl-card3": lambda: DPRuleListClassifier(epsilon=2.0, max_card=3, allow_negations=False, random_state=1),
    "boost-stumps": lambda: SmoothBoostClassifier(epsilon=1.0, n_rounds=12, random_state=0),
    "boost-trees": lambda: SmoothBoostClassifier(epsilon=1.0, weak_learner="tree", n_rounds=6, random_state=2),
}


# ------------------------------------------------------------------ the table
@pytest.mark.parametrize("d", [0, 3, 8, 50, 56, 57, 80])
def test_table_does_not_depend_on_the_partitioning(d):
    rng = np.random.default_rng(d)
    X = (rng.random((3000, d)) < 0.2).astype(np.uint8)
    y = (rng.random(3000) < 0.4).astype(np.uint8)
    whole = pattern_table(X, y)
    assert whole.n_records == 3000 and whole.counts.min() >= 1
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(d)])
    for parts in (1, 7):
        ddf = dd.from_pandas(df.assign(t=y), npartitions=parts)  # dask's default scheduler (no client)
        table = pattern_table(ddf[list(df.columns)], ddf["t"], classes=[0, 1])
        assert table.equals(whole)


@pytest.mark.parametrize("d", [10, 60])  # uint64 keys, then raw-byte keys
def test_cluster_merges_by_key_range_to_the_same_table(dask_client, d):
    rng = np.random.default_rng(d)
    X = (rng.random((4000, d)) < np.linspace(0.05, 0.9, d)).astype(np.uint8)
    y = (rng.random(4000) < 0.4).astype(np.uint8)
    ddf = dd.from_pandas(pd.DataFrame(X, columns=[f"c{j}" for j in range(d)]).assign(t=y), npartitions=5)
    table = pattern_table(ddf[[f"c{j}" for j in range(d)]], ddf["t"], classes=[0, 1])
    assert table.equals(pattern_table(X, y))


def test_table_rows_and_counts_are_the_data():
    X = np.array([[1, 0], [1, 0], [0, 1], [1, 0]], dtype=np.uint8)
    y = np.array([1, 0, 1, 1], dtype=np.uint8)
    t = pattern_table(X, y)
    assert isinstance(t, PatternTable)
    assert t.unpack().tolist() == [[0, 1], [1, 0], [1, 0]]
    assert t.labels.tolist() == [1, 0, 1] and t.counts.tolist() == [1, 1, 2]
    rows, w0, w1 = t.by_pattern()
    assert np.unpackbits(rows, axis=1, count=2).tolist() == [[0, 1], [1, 0]]
    assert w0.tolist() == [0, 1] and w1.tolist() == [1, 2]


# ------------------------------------------------------------- equivalence
@pytest.mark.parametrize("name", list(MODELS))
def test_dask_fit_is_the_in_memory_model(dask_client, data, name):
    df, glob = data
    Xd, yd = _dask(glob)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        through_dask = MODELS[name]().fit(Xd, yd)
        in_memory = MODELS[name]().fit(df[FEATURES], df["y"])
    assert through_dask.to_dict() == in_memory.to_dict()
    assert list(through_dask.feature_names_in_) == FEATURES
    assert list(through_dask.classes_) == ["no", "yes"]
    np.testing.assert_array_equal(through_dask.predict(df[FEATURES]), in_memory.predict(df[FEATURES]))


def test_declared_classes_and_bool_columns(dask_client, data, tmp_path):
    df, _ = data
    glob = _write(df.assign(**{c: df[c].astype(bool) for c in FEATURES}), tmp_path / "bools", parts=3)
    Xd, yd = _dask(glob)
    model = DPRuleListClassifier(epsilon=1.0, classes=["no", "yes"], random_state=3).fit(Xd, yd)
    ref = DPRuleListClassifier(epsilon=1.0, classes=["no", "yes"], random_state=3).fit(df[FEATURES], df["y"])
    assert model.to_dict() == ref.to_dict()


# ------------------------------------------------------------ bad partitions
def test_non_binary_value_names_the_partition_and_column(dask_client, data, tmp_path):
    df, _ = data
    bad = df.copy()
    bad.loc[bad.index[-5], "f3"] = 2  # in the last of 4 parts
    Xd, yd = _dask(_write(bad, tmp_path / "bad", parts=4))
    with pytest.raises(DataValidationError, match=r"a partition: column 'f3' has the value 2"):
        DPRuleListClassifier(random_state=0).fit(Xd, yd)


def test_missing_column_names_the_partition(dask_client, data, tmp_path):
    df, _ = data
    folder = tmp_path / "missing"
    _write(df, folder, parts=3)
    df.iloc[:10].drop(columns="f5").to_parquet(folder / "part1.parquet")
    Xd, yd = _dask(str(folder / "*.parquet"))
    with pytest.raises(DataValidationError, match=r"a partition: .*f5"):
        SmoothBoostClassifier(random_state=0).fit(Xd, yd)


def test_label_outside_classes_names_the_partition(dask_client, data, tmp_path):
    df, _ = data
    bad = df.copy()
    bad.loc[bad.index[0], "y"] = "maybe"
    Xd, yd = _dask(_write(bad, tmp_path / "labels", parts=2))
    with pytest.raises(DataValidationError, match=r"a partition: y has the label 'maybe'"):
        DPRuleListClassifier(classes=["no", "yes"], random_state=0).fit(Xd, yd)


def test_models_without_a_dask_path_say_so(data):
    from dpglass_experiments.one_rule import OneRuleClassifier

    _, glob = data
    Xd, yd = _dask(glob)
    with pytest.raises(DataValidationError, match="does not fit on dask collections"):
        OneRuleClassifier().fit(Xd, yd)


# -------------------------------------------------------------------- faults
# Faults are injected from here: the partition reducer the graph calls is wrapped so that a fault runs first on
# the worker (the library has no test hook).
def _crash_once(marker: str, index: int) -> None:
    """The first reduction to run kills its worker process (once, by a marker file)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os._exit(1)


def _crash_always(index: int) -> None:
    """The reduction of partition 0 kills its worker, every time."""
    if index == 0:
        os._exit(1)


def _faulty(fault, reduce, part, index, *args):
    fault(index)
    return reduce(part, index, *args)


def _inject(monkeypatch, fault):
    """Every partition reduction of the fits that follow calls ``fault(partition index)`` first, on its worker."""
    monkeypatch.setattr(dask_backend, "_reduce_joined", functools.partial(_faulty, fault, dask_backend._reduce_joined))


def test_worker_killed_mid_fit_retries_to_the_same_model(dask_client, data, tmp_path, monkeypatch):
    df, glob = data
    Xd, yd = _dask(glob)
    marker = tmp_path / "killed-once"
    ref = SmoothBoostClassifier(epsilon=1.0, n_rounds=8, random_state=5).fit(df[FEATURES], df["y"])
    assert dask_client.cluster.scheduler.allowed_failures == 1  # conftest's cluster: one death is retried
    _inject(monkeypatch, functools.partial(_crash_once, str(marker)))
    model = SmoothBoostClassifier(epsilon=1.0, n_rounds=8, random_state=5).fit(Xd, yd)
    assert marker.exists()  # a worker did die
    assert model.to_dict() == ref.to_dict()


def test_workers_lost_beyond_the_retries_is_a_clear_error(dask_client, data, monkeypatch):
    _, glob = data
    Xd, yd = _dask(glob)
    scheduler = dask_client.cluster.scheduler
    saved, scheduler.allowed_failures = scheduler.allowed_failures, 0  # give up at the first death
    try:
        _inject(monkeypatch, _crash_always)
        with pytest.raises(dask_backend.DistributedFitError, match="a partition .*No model was fitted"):
            DPRuleListClassifier(random_state=0).fit(Xd, yd)
    finally:
        scheduler.allowed_failures = saved


def test_dev_extra_installs_dask():
    import pathlib

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    meta = tomllib.loads((pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    for extra in ("dev", "dask"):
        deps = " ".join(meta["optional-dependencies"][extra])
        assert "dask[dataframe]" in deps and "distributed" in deps and "pyarrow" in deps


# ----------------------------------------------------------------------- CLI
def test_cli_fits_parquet_through_the_scheduler(dask_client, data, tmp_path, capsys):
    import json

    from dpglass.cli import main
    from dpglass.privacy.rng import check_random_state, spawn

    df, glob = data
    out = tmp_path / "model.json"
    rc = main(["fit", "--data", glob, "--target", "y", "--model", "smooth-boost-stumps", "--epsilon", "1",
               "--scheduler", dask_client.scheduler.address, "--seed", "7", "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "through Dask" in printed and "privacy ledger" in printed
    model_rng = spawn(check_random_state(7), 2)[1]  # the CLI's model generator
    ref = SmoothBoostClassifier(epsilon=1.0, random_state=model_rng).fit(df[FEATURES], df["y"])
    assert json.loads(out.read_text()) == json.loads(json.dumps(ref.to_dict()))


def test_cli_refuses_a_split_or_a_bad_scheduler_through_dask(data):
    from dpglass.cli import main

    _, glob = data
    assert main(["fit", "--data", glob, "--target", "y", "--test-size", "0.3"]) != 0
    assert main(["fit", "--data", glob, "--target", "y", "--scheduler", "udp://nope"]) != 0
