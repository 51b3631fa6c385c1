"""How many parts a kept table is cut into (issue 30): a function of the cluster, never of the model.

A kept table (:func:`dpglass.aggregates.dask_backend.pattern_table` with
``keep=True``) is cut into :func:`~dpglass.aggregates.dask_merge.kept_parts`
parts, two per worker thread; every statistic is an exact sum, so the same fit
on the same files gives the same file whatever the count.  Checked for every
model that asks its parts for statistics, with two counts (3, not a power of
two, and 16, the count before) against the in-memory fit.  Uses the session's
2-worker LocalCluster (``dask_client``).
"""

from __future__ import annotations

import json
import warnings

import pytest
from conftest import three_class_parquet, refuse_table_gather

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from dpglass.aggregates import dask_merge, pattern_table  # noqa: E402
from dpglass.models import (  # noqa: E402
    DPGAMClassifier, DPGradientBoostingClassifier, DPLogisticRegression, DPRuleListClassifier, SmoothBoostClassifier,
    SubsampleAggregateClassifier,
)

FEATURES = [f"f{j}" for j in range(6)]
LABELS = ["a", "b", "c"]

MODELS = {
    "rule list": lambda: DPRuleListClassifier(epsilon=2.0, max_length=3, classes=LABELS, random_state=0),
    "stumps": lambda: SmoothBoostClassifier(epsilon=2.0, n_rounds=3, classes=LABELS, random_state=1),
    "trees": lambda: SmoothBoostClassifier(epsilon=2.0, weak_learner="tree", n_rounds=2, classes=LABELS,
                                           random_state=2),
    "dp-gbdt": lambda: DPGradientBoostingClassifier(epsilon=2.0, n_estimators=3, classes=LABELS, random_state=3),
    "dp-lr": lambda: DPLogisticRegression(epsilon=2.0, classes=LABELS, random_state=4),
    "teachers": lambda: SubsampleAggregateClassifier(epsilon=2.0, delta=1e-6, n_teachers=6, noise_scale=3.0,
                                                     classes=LABELS, random_state=5),
    "dp-gam": lambda: DPGAMClassifier(epsilon=2.0, n_cycles=1, classes=LABELS, random_state=6),
}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    df, glob, _ = three_class_parquet(tmp_path_factory.mktemp("kept-parts"), FEATURES, seed=11, n=900, low=0.15,
                                      n_files=3)
    return df, glob



def _fit(name, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return json.dumps(MODELS[name]().fit(X, y).to_dict())


def test_two_parts_per_worker_thread(dask_client):
    threads = sum(dask_client.nthreads().values())
    assert dask_merge.kept_parts(dask_client) == min(dask_merge.MAX_KEPT_PARTS, 2 * threads)


def test_a_kept_table_has_the_counted_parts(dask_client, data, monkeypatch):
    _, glob = data
    ddf = dd.read_parquet(glob)
    whole = pattern_table(ddf[FEATURES], ddf["y"], classes=LABELS)
    for count in (2, 5):
        monkeypatch.setattr(dask_merge, "kept_parts", lambda client, count=count: count)
        kept = pattern_table(ddf[FEATURES], ddf["y"], classes=LABELS, keep=True)
        assert len(kept.parts.parts) == count and kept.gather().equals(whole)


def test_the_parts_are_spread_over_the_workers(dask_client, data):
    from distributed import wait

    _, glob = data
    ddf = dd.read_parquet(glob)
    kept = pattern_table(ddf[FEATURES], ddf["y"], classes=LABELS, keep=True)
    wait(kept.parts.parts)
    held = {}
    for holders in dask_client.who_has(kept.parts.parts).values():
        for worker in holders:
            held[worker] = held.get(worker, 0) + 1
    threads = dask_client.nthreads()
    assert held == {w: 2 * t for w, t in threads.items()}  # two parts per thread, on every worker


@pytest.mark.parametrize("name", list(MODELS))
def test_the_part_count_does_not_change_the_model(dask_client, data, monkeypatch, name):
    df, glob = data
    ref = _fit(name, df[FEATURES], df["y"])
    refuse_table_gather(monkeypatch)
    for count in (3, 16):
        monkeypatch.setattr(dask_merge, "kept_parts", lambda client, count=count: count)
        ddf = dd.read_parquet(glob)
        assert _fit(name, ddf[FEATURES], ddf["y"]) == ref, f"{count} parts"
