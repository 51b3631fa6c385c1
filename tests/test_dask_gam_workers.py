"""dp-gam with its binned table on the workers (issue 30): each visit's per-bin gradient and Hessian sums, the class
counts and the first cycle's per-bin class counts are statistics of the table's parts (gam.fit.GamPart), summed
exactly; the client holds the model and one visit's sums.  Dask on the session's LocalCluster equals in memory to
the last bit of the JSON, with the table never gathered; a worker killed mid-fit gives the same model."""

from __future__ import annotations

import functools
import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import three_class_parquet, refuse_table_gather

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from dpglass.aggregates import pattern_table  # noqa: E402
from dpglass.aggregates.parts import TableParts  # noqa: E402
from dpglass.models import DPGAMClassifier  # noqa: E402
from dpglass.models.gam import fit as gam_fit  # noqa: E402

COLUMNS = ["num", "cat", "flag", "gappy"]
BOUNDS = [(0, 10), None, None, (0, 10)]
CATEGORIES = [None, 4, None, None]
MISSING = [False, False, False, True]


@pytest.fixture(scope="module")
def raw_parquet(tmp_path_factory):
    rng = np.random.default_rng(12)
    n = 1500
    X = np.column_stack([rng.random(n) * 10, rng.integers(0, 4, n), rng.random(n) < 0.5, rng.random(n) * 10])
    X[rng.random(n) < 0.1, 3] = np.nan
    y = ((X[:, 0] > 5).astype(int) + 2 * (X[:, 1] == 2)).clip(0, 2)
    df = pd.DataFrame(X, columns=COLUMNS).assign(y=np.array(["lo", "mid", "hi"])[y])
    folder = tmp_path_factory.mktemp("gam-workers")
    for i, chunk in enumerate(np.array_split(np.arange(n), 3)):
        df.iloc[chunk].to_parquet(folder / f"part{i}.parquet")
    return df, str(folder / "*.parquet")


MODELS = {
    "K3-uniform": dict(binning="uniform", first_cycle="gradients", n_cycles=1, max_bins=6, count_share=0.25),
    "K3-quantile-counts": dict(binning="quantile", first_cycle="counts", n_cycles=1, max_bins=6, count_share=0.25),
    "K3-auto": dict(),
}


def _model(name):
    return DPGAMClassifier(epsilon=2.0, bounds=BOUNDS, categories=CATEGORIES, missing=MISSING,
                           classes=["lo", "mid", "hi"], random_state=3, **MODELS[name])



def _fit(name, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _model(name).fit(X, y)


@pytest.mark.parametrize("name", list(MODELS))
def test_gam_sums_on_the_workers_give_the_in_memory_model(dask_client, raw_parquet, monkeypatch, name):
    df, glob = raw_parquet
    ref = _fit(name, df[COLUMNS], df["y"])
    refuse_table_gather(monkeypatch)
    ddf = dd.read_parquet(glob)
    model = _fit(name, ddf[COLUMNS], ddf["y"])
    assert json.dumps(model.to_dict()) == json.dumps(ref.to_dict())


def _crash_at_visit(marker: str, fn, part, j, n_bins, intercept, start, steps):
    """The third visit's statistic kills its worker (once, by a marker file): its parts lose their cached scores."""
    if len(steps) == 2:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return fn(part, j, n_bins, intercept, start, steps)
        os.close(fd)
        os._exit(1)
    return fn(part, j, n_bins, intercept, start, steps)


def test_a_worker_killed_mid_fit_rebuilds_its_scores(dask_client, raw_parquet, tmp_path, monkeypatch):
    df, glob = raw_parquet
    ref = _fit("K3-uniform", df[COLUMNS], df["y"])
    marker = tmp_path / "killed-once"
    monkeypatch.setattr(gam_fit, "_visit_sums", functools.partial(_crash_at_visit, str(marker), gam_fit._visit_sums))
    ddf = dd.read_parquet(glob)
    model = _fit("K3-uniform", ddf[COLUMNS], ddf["y"])
    assert marker.exists()
    assert json.dumps(model.to_dict()) == json.dumps(ref.to_dict())


def test_a_parts_scores_are_a_cache_of_the_released_model():
    """A part that applied a prefix of the steps, a fresh one and one told another history agree with a direct
    computation: the cache never changes a sum."""
    rng = np.random.default_rng(0)
    X = (rng.random((400, 5)) < 0.5).astype(np.uint8)
    table = pattern_table(X, (rng.random(400) < 0.4).astype(np.uint8))
    intercept = np.array([0.25])
    start = [rng.normal(size=(2, 1)) for _ in range(5)]
    steps = [(j % 5, rng.normal(size=(2, 1))) for j in range(7)]
    direct = np.tile(intercept, (table.n_entries, 1))
    for j in range(5):
        direct += start[j][table.column(j).astype(np.intp)]
    warm = gam_fit.GamPart(table, 2)
    for i, (j, step) in enumerate(steps):
        warm.scores(intercept, start, steps[:i])
        direct += step[table.column(j)]
    assert np.array_equal(warm.scores(intercept, start, steps), direct)
    assert np.array_equal(gam_fit.GamPart(table, 2).scores(intercept, start, steps), direct)
    other = [(0, np.zeros((2, 1)))] + steps[1:]
    assert not np.array_equal(warm.scores(intercept, start, other), direct)  # another history: rebuilt
    assert np.array_equal(warm.scores(intercept, start, steps), direct)
    # the statistics of two parts add up to those of the whole table
    cut = rng.random(table.n_entries) < 0.5
    parts = TableParts([type(table)(table.packed[m], table.labels[m], table.counts[m], table.n_features)
                        for m in (cut, ~cut)]).map(gam_fit.GamPart, 2)
    whole = TableParts.local(table).map(gam_fit.GamPart, 2)
    for j in range(5):
        a = parts.sum(gam_fit._visit_sums, j, 2, intercept, start, steps)
        b = whole.sum(gam_fit._visit_sums, j, 2, intercept, start, steps)
        assert all(np.array_equal(u, v) and u.dtype == np.int64 for u, v in zip(a, b))


# ------------------------------------------------------------------ 0/1 columns: the pattern table's parts
FEATURES = [f"f{j}" for j in range(6)]


@pytest.fixture(scope="module")
def binary_parquet(tmp_path_factory):
    df, glob, _ = three_class_parquet(tmp_path_factory.mktemp("gam-plain"), FEATURES, seed=13, n=1500, low=0.2,
                                      n_files=3, xor=True)
    return df, glob


@pytest.mark.parametrize("first_cycle", ["counts", "gradients"])
def test_plain_gam_on_the_workers_gives_the_in_memory_model(dask_client, binary_parquet, monkeypatch, first_cycle):
    df, glob = binary_parquet
    assert DPGAMClassifier._worker_stats  # its 0/1 table is kept on the workers

    def fit(X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return DPGAMClassifier(epsilon=2.0, classes=["a", "b", "c"], first_cycle=first_cycle, n_cycles=1,
                                   max_bins=4, count_share=0.25, random_state=5).fit(X, y)

    ref = fit(df[FEATURES], df["y"])
    refuse_table_gather(monkeypatch)
    ddf = dd.read_parquet(glob)
    model = fit(ddf[FEATURES], ddf["y"])
    assert json.dumps(model.to_dict()) == json.dumps(ref.to_dict())
