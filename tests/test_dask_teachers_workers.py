"""Teacher ensembles with the table on the workers (issue 30): each part draws its records' teachers by the keyed
split, teachers are fitted where their records are, and the client receives weights only.

Also the keyed split's privacy property by brute force on a small domain: adding one record changes exactly one
teacher's part, by that record, in every partition (the vote-count sensitivity 1 of subsample-and-aggregate),
and the draw does not depend on how the table is cut into parts.
"""

from __future__ import annotations

import functools
import itertools
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import three_class_parquet, refuse_table_gather

from dpglass.aggregates import pattern_table
from dpglass.aggregates.parts import TableParts
from dpglass.aggregates.table import PatternTable
from dpglass.models import DPBaggingClassifier, SubsampleAggregateClassifier
from dpglass.models.teachers import workers
from dpglass.privacy.splits import entry_hashes, keyed_parts, part_seeds

FEATURES = [f"f{j}" for j in range(7)]


def _table(X, y):
    return pattern_table(np.asarray(X, dtype=np.uint8), np.asarray(y, dtype=np.uint8))


def _teacher_counts(table, seeds, T) -> np.ndarray:
    """``(k T, keys)``: each teacher's records of each of the domain's keys (dense, indexed by the full key)."""
    part = workers.TeacherPart(table, seeds, T)
    dense = part.counts.toarray()
    key = table.unpack() @ (1 << np.arange(table.n_features)) * 2 + table.labels
    out = np.zeros((dense.shape[0], (1 << table.n_features) * 2))
    out[:, key] = dense
    return out


# ------------------------------------------------------------------ the keyed split, by brute force
@pytest.mark.parametrize("k", [1, 3])
def test_adding_one_record_changes_one_teacher_by_one_record_in_every_partition(k):
    """All neighbours of a few small datasets over {0,1}^2 x {0,1}: the teachers' parts differ by one record in
    exactly one teacher of each partition (so a vote count moves by at most 1; a bound of 0 would be violated)."""
    rng = np.random.default_rng(k)
    T = 3
    domain = [(a, b, c) for a, b, c in itertools.product([0, 1], repeat=3)]
    for trial in range(6):
        seeds = part_seeds(k, rng)
        n = int(rng.integers(0, 9))
        base = [domain[i] for i in rng.integers(0, len(domain), n)]
        for record in domain:  # D and D + record, for every record of the domain
            D = np.array(base, dtype=np.uint8).reshape(-1, 3)
            D1 = np.array(base + [record], dtype=np.uint8)
            diff = _teacher_counts(_table(D1[:, :2], D1[:, 2]), seeds, T) - \
                _teacher_counts(_table(D[:, :2], D[:, 2]), seeds, T)
            key = record[0] + 2 * record[1]
            for p in range(k):
                block = diff[p * T:(p + 1) * T]
                assert (block != 0).sum() == 1 and block.sum() == 1  # one teacher, one record: never 0, never 2
                assert block[:, key * 2 + record[2]].sum() == 1  # the added record itself


def test_the_draw_does_not_depend_on_how_the_table_is_cut():
    rng = np.random.default_rng(0)
    X = (rng.random((4000, 9)) < 0.3).astype(np.uint8)
    y = (rng.random(4000) < 0.4).astype(np.uint8)
    table = _table(X, y)
    seeds = part_seeds(4, rng)
    whole = workers.TeacherPart(table, seeds, 5).counts.toarray()
    cut = rng.random(table.n_entries) < 0.5  # any cut of the entries into two parts
    halves = [PatternTable(table.packed[m], table.labels[m], table.counts[m], table.n_features) for m in (cut, ~cut)]
    for mask, half in zip((cut, ~cut), halves):
        np.testing.assert_array_equal(workers.TeacherPart(half, seeds, 5).counts.toarray(), whole[:, mask])


def test_keyed_parts_are_uniform_and_independent_of_the_seed():
    hashes = entry_hashes(np.array([[3], [7]], np.uint8), np.array([0, 1], np.uint8))
    a = keyed_parts(hashes, np.array([60000, 60000]), 6, part_seeds(2, np.random.default_rng(1)))
    for row in a:  # 120000 records in 6 parts: 20000 each, within 5 standard deviations
        assert np.all(np.abs(np.bincount(row, minlength=6) - 20000) < 5 * np.sqrt(20000 * 5 / 6))
    assert np.mean(a[0] == a[1]) < 1 / 6 + 0.01  # two partitions' seeds draw independently
    assert a.dtype == np.uint16 and a.max() < 6


# ------------------------------------------------------------------ Dask == in memory, nothing gathered
@pytest.fixture(scope="module")
def binary_parquet(tmp_path_factory):
    df, glob, rng = three_class_parquet(tmp_path_factory.mktemp("teachers"), FEATURES, seed=30, n=1600, low=0.2,
                                        n_files=3, flip=0.3, xor=True)
    public = pd.DataFrame((rng.random((300, len(FEATURES))) < 0.4).astype(np.uint8), columns=FEATURES)
    return df, glob, public


MODELS = {
    "saa-K3": lambda: SubsampleAggregateClassifier(epsilon=2.0, delta=1e-6, n_teachers=12, noise_scale=3.0,
                                                   classes=["a", "b", "c"], random_state=0),
    "saa-K2": lambda: SubsampleAggregateClassifier(epsilon=2.0, delta=1e-6, n_teachers=9, noise_scale=3.0,
                                                   classes=["a", "b"], random_state=1),
    "bag-K3": lambda: DPBaggingClassifier(epsilon=2.0, delta=1e-6, n_teachers=5, n_partitions=3, noise_scale=20.0,
                                          classes=["a", "b", "c"], random_state=2),
}



def _fit(name, X, y, public):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MODELS[name]().fit(X, y, X_public=public)


def _data(df, glob, name):
    import dask.dataframe as dd

    ddf = dd.read_parquet(glob)
    if name.endswith("K2"):  # two classes: the 'c' records dropped, in memory and on the cluster alike
        ddf, df = ddf[ddf["y"] != "c"], df[df["y"] != "c"]
    return df[FEATURES], df["y"], ddf[FEATURES], ddf["y"]


@pytest.mark.parametrize("name", list(MODELS))
def test_teachers_on_the_workers_give_the_in_memory_model(dask_client, binary_parquet, monkeypatch, name):
    pytest.importorskip("distributed")

    df, glob, public = binary_parquet
    X, y, Xd, yd = _data(df, glob, name)
    ref = _fit(name, X, y, public)
    refuse_table_gather(monkeypatch)
    model = _fit(name, Xd, yd, public)
    assert model.to_dict() == ref.to_dict()


def _crash_once(marker: str, fn, *args):
    """The first teachers' fit to run kills its worker (once, by a marker file)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return fn(*args)
    os.close(fd)
    os._exit(1)


def test_a_worker_killed_while_teachers_fit_gives_the_same_model(dask_client, binary_parquet, tmp_path, monkeypatch):
    df, glob, public = binary_parquet
    X, y, Xd, yd = _data(df, glob, "saa-K3")
    ref = _fit("saa-K3", X, y, public)
    marker = tmp_path / "killed-once"
    monkeypatch.setattr(workers, "fit_group", functools.partial(_crash_once, str(marker), workers.fit_group))
    model = _fit("saa-K3", Xd, yd, public)
    assert marker.exists()  # a worker died holding parts; they were recomputed from the files
    assert model.to_dict() == ref.to_dict()


def test_in_memory_teachers_use_the_same_parts_code(monkeypatch):
    """One code path: an in-memory fit draws its teachers through TeacherPart on one local part."""
    seen = []
    original = workers.TeacherPart.__init__

    def spy(self, table, seeds, T):
        seen.append((table.n_records, len(seeds), T))
        original(self, table, seeds, T)

    monkeypatch.setattr(workers.TeacherPart, "__init__", spy)
    rng = np.random.default_rng(3)
    X = (rng.random((500, 4)) < 0.5).astype(np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPBaggingClassifier(delta=1e-6, n_teachers=4, n_partitions=2, classes=[0, 1], random_state=0).fit(
            X, X[:, 0], X_public=X[:50])
    assert seen == [(500, 2, 4)]
    assert isinstance(TableParts.local(_table(X, X[:, 0])), TableParts)
