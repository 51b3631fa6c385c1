"""The worker-side statistics seam (dpglass.aggregates.parts): the table stays on the workers, learners ask for sums.

Uses the session's 2-worker LocalCluster (``dask_client`` in conftest.py).
"""

from __future__ import annotations

import functools
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import three_class_parquet, refuse_table_gather

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from dpglass.aggregates import dask_backend, pattern_table  # noqa: E402
from dpglass.aggregates.numpy_backend import reduce_block  # noqa: E402
from dpglass.aggregates.parts import DistributedTable, TableParts, exact_sum, table_parts  # noqa: E402
from dpglass.aggregates.table import hash_buckets, merge_counts  # noqa: E402
from dpglass.models import DPRuleListClassifier  # noqa: E402
from dpglass.models.rule_list import candidates as rl_candidates  # noqa: E402

FEATURES = [f"f{j}" for j in range(9)]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    df, glob, _ = three_class_parquet(tmp_path_factory.mktemp("stats"), FEATURES, seed=7, n=3000, low=0.1, n_files=5)
    return df, glob


def _dask(glob):
    ddf = dd.read_parquet(glob)
    return ddf[FEATURES], ddf["y"]


def test_exact_sum_of_parts():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    assert exact_sum([a]) is a  # one part (in memory): the result as computed
    out = exact_sum([(a, 2), (b, 3)])
    assert out[0].tolist() == [4.0, 6.0] and out[1] == 5 and a.tolist() == [1.0, 2.0]


def test_kept_table_is_the_table_in_parts(dask_client, data):
    df, glob = data
    Xd, yd = _dask(glob)
    kept = pattern_table(Xd, yd, classes=["a", "b", "c"], keep=True)
    assert isinstance(kept, DistributedTable) and kept.parts.distributed and len(kept.parts.parts) > 1
    whole = pattern_table(Xd, yd, classes=["a", "b", "c"])
    assert kept.gather().equals(whole) and kept.n_records == len(df) == whole.n_records
    assert kept.shape == (len(df), len(FEATURES)) and kept.classes == ["a", "b", "c"]
    assert table_parts(kept) is kept.parts and isinstance(table_parts(whole), TableParts)


@pytest.mark.parametrize("d", [24, 70])
def test_kept_parts_are_balanced_by_a_hash_of_the_key(d):
    rng = np.random.default_rng(d)
    X = np.zeros((4000, d), dtype=np.uint8)
    X[:, 9:] = rng.random((4000, d - 9)) < 0.5  # the first byte is always 0: one key range would hold everything
    keys, counts = reduce_block(X, (rng.random(4000) < 0.5).astype(np.uint8), d)
    parts = hash_buckets((keys, counts), 16)
    sizes = [p[0].shape[0] for p in parts]
    assert sum(sizes) == keys.shape[0] and max(sizes) < 2 * keys.shape[0] / 16
    for k, c in parts:  # each part sorted by key, with its counts
        assert np.array_equal(np.sort(k), k) and c.min() >= 1
    merged = merge_counts(*parts)
    assert np.array_equal(merged[0], keys) and np.array_equal(merged[1], counts)



MODELS = {
    "errors-pf": lambda: DPRuleListClassifier(epsilon=1.0, classes=["a", "b", "c"], random_state=0),
    "exponential": lambda: DPRuleListClassifier(epsilon=1.0, mechanism="exponential", classes=["a", "b", "c"],
                                                random_state=1),
    "card3-paper": lambda: DPRuleListClassifier(epsilon=2.0, max_card=3, mechanism="exponential", variant="paper",
                                                classes=["a", "b", "c"], random_state=2),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_rule_list_counts_on_the_workers_give_the_in_memory_model(dask_client, data, monkeypatch, name):
    df, glob = data
    Xd, yd = _dask(glob)
    ref = MODELS[name]().fit(df[FEATURES], df["y"])
    refuse_table_gather(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MODELS[name]().fit(Xd, yd)
    assert model.to_dict() == ref.to_dict()


def _crash_once(marker: str, fn, cache, removed):
    """The first statistic to run after a rule is chosen kills its worker (once, by a marker file)."""
    if removed:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return fn(cache, removed)
        os.close(fd)
        os._exit(1)
    return fn(cache, removed)


def test_worker_killed_mid_statistics_recomputes_its_parts(dask_client, data, tmp_path, monkeypatch):
    df, glob = data
    Xd, yd = _dask(glob)
    ref = MODELS["errors-pf"]().fit(df[FEATURES], df["y"])
    marker = tmp_path / "killed-once"
    monkeypatch.setattr(rl_candidates, "_class_counts",
                        functools.partial(_crash_once, str(marker), rl_candidates._class_counts))
    model = MODELS["errors-pf"]().fit(Xd, yd)
    assert marker.exists()  # a worker died holding persisted parts; they were recomputed from the files
    assert model.to_dict() == ref.to_dict()


def test_statistics_lost_beyond_the_retries_is_a_clear_error(dask_client, data, monkeypatch):
    _, glob = data
    Xd, yd = _dask(glob)
    scheduler = dask_client.cluster.scheduler
    saved, scheduler.allowed_failures = scheduler.allowed_failures, 0
    try:
        monkeypatch.setattr(rl_candidates, "_class_counts", _always_crash)
        with pytest.raises(dask_backend.DistributedFitError, match="No model was fitted"):
            MODELS["errors-pf"]().fit(Xd, yd)
    finally:
        scheduler.allowed_failures = saved


def _always_crash(cache, removed):
    """Kills one of the two workers (the other stays up), every time a statistic runs there."""
    if str(distributed.get_worker().name) == "0":
        os._exit(1)
    return rl_candidates.CountCache.class_counts(cache, removed)


# ------------------------------------------------------------------ DP-GBDT
from dpglass.models import DPGradientBoostingClassifier  # noqa: E402
from dpglass.models.gbdt import fit as gbdt_fit  # noqa: E402

NUMERIC = ["a", "b", "c"]


@pytest.fixture(scope="module")
def numeric(tmp_path_factory):
    rng = np.random.default_rng(11)
    n = 4000
    df = pd.DataFrame(rng.random((n, len(NUMERIC))) * 10, columns=NUMERIC).assign(d=(rng.random(n) < 0.3) * 1)
    score = df["a"] - df["b"] + 3 * df["d"] + rng.normal(0, 2, n)
    df["y"] = np.where(score > 2, "hi", np.where(score > -2, "mid", "lo"))
    folder = tmp_path_factory.mktemp("gbdt-stats")
    for i, chunk in enumerate(np.array_split(np.arange(n), 4)):
        df.iloc[chunk].to_parquet(folder / f"part{i}.parquet")
    return df, str(folder / "*.parquet")


GBDT = {
    "K3-depth2": lambda: DPGradientBoostingClassifier(epsilon=2.0, bounds=[(0, 10)] * 3 + [None], max_depth=2,
                                                      n_estimators=4, classes=["hi", "lo", "mid"], random_state=0),
    "K2-quantile": lambda: DPGradientBoostingClassifier(epsilon=2.0, bounds=[(0, 10)] * 3 + [None],
                                                        binning="quantile", n_estimators=3, classes=["lo", "hi"],
                                                        random_state=1),
}


def _gbdt_data(df, glob, name):
    if name == "K2-quantile":  # two classes: mid records dropped, in memory and in the files alike
        ddf = dd.read_parquet(glob)
        ddf = ddf[ddf["y"] != "mid"]
        df = df[df["y"] != "mid"]
    else:
        ddf = dd.read_parquet(glob)
    return df[NUMERIC + ["d"]], df["y"], ddf[NUMERIC + ["d"]], ddf["y"]


@pytest.mark.parametrize("name", list(GBDT))
def test_gbdt_sums_on_the_workers_give_the_in_memory_model(dask_client, numeric, monkeypatch, name):
    X, y, Xd, yd = _gbdt_data(*numeric, name)
    ref = GBDT[name]().fit(X, y)
    refuse_table_gather(monkeypatch)
    model = GBDT[name]().fit(Xd, yd)
    assert model.to_dict() == ref.to_dict()


def _crash_level_once(marker: str, fn, part, *args):
    if args[-1] == 1:  # the second level of a tree
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return fn(part, *args)
        os.close(fd)
        os._exit(1)
    return fn(part, *args)


def test_gbdt_worker_killed_mid_tree_gives_the_same_model(dask_client, numeric, tmp_path, monkeypatch):
    X, y, Xd, yd = _gbdt_data(*numeric, "K3-depth2")
    ref = GBDT["K3-depth2"]().fit(X, y)
    marker = tmp_path / "killed-once"
    monkeypatch.setattr(gbdt_fit, "_level_hists", functools.partial(_crash_level_once, str(marker),
                                                                    gbdt_fit._level_hists))
    model = GBDT["K3-depth2"]().fit(Xd, yd)
    assert marker.exists()  # the scores cached on the lost worker were rebuilt from the released trees
    assert model.to_dict() == ref.to_dict()
