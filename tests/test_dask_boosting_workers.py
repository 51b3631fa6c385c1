"""Smooth boosting (LazyBB) on Dask: each round's statistics are summed on the workers (issue 30).

The table's parts stay on the workers (:mod:`dpglass.aggregates.parts`); a
round asks them for integer counts by (margin level, class) -- the margins
computed where the entries are, from the released committee -- and the
client turns them into the learner's masses.  The model equals the in-memory
one bit for bit.  Uses the session's 2-worker LocalCluster (``dask_client``).
"""

from __future__ import annotations

import functools
import os
import warnings

from fractions import Fraction

import numpy as np
import pytest
from conftest import three_class_parquet, refuse_table_gather

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from dpglass.aggregates import pattern_table  # noqa: E402
from dpglass.aggregates.parts import TableParts  # noqa: E402
from dpglass.models import SmoothBoostClassifier  # noqa: E402
from dpglass.models.boosting import smooth_measure  # noqa: E402
from dpglass.models.boosting.hypotheses import (  # noqa: E402
    FeatureMatrix, Tree, class_grams, class_sums, leaf_sums, leaf_totals,
)
from dpglass.models.boosting.smooth_measure import PartsMeasure, _boost_part, smooth_weighting  # noqa: E402
from dpglass.models.boosting.weak_learners import ClassStump, literal_errors  # noqa: E402

FEATURES = [f"f{j}" for j in range(7)]
LABELS = ["a", "b", "c"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    df, glob, _ = three_class_parquet(tmp_path_factory.mktemp("boost-stats"), FEATURES, seed=5, n=2000, low=0.15,
                                      n_files=4)
    return df, glob


MODELS = {
    "stumps-K3": dict(epsilon=2.0, n_rounds=5, classes=LABELS, random_state=0),
    "stumps-K2-auto": dict(epsilon=2.0, classes=["a", "b"], random_state=1),
    "joint-depth2-K2": dict(epsilon=2.0, weak_learner="tree", n_rounds=3, classes=["a", "b"], random_state=2),
    "joint-depth1-K3": dict(epsilon=2.0, weak_learner="tree", tree_nodes=1, n_rounds=3, classes=LABELS,
                            random_state=3),
    "top-down-K3": dict(epsilon=2.0, weak_learner="tree", tree_learner="top-down", n_rounds=3, classes=LABELS,
                        random_state=4),
}


def _data(df, glob, name):
    ddf = dd.read_parquet(glob)
    if "K2" in name:  # two classes: the c records dropped, in memory and in the files alike
        ddf, df = ddf[ddf["y"] != "c"], df[df["y"] != "c"]
    return df[FEATURES], df["y"], ddf[FEATURES], ddf["y"]



@pytest.mark.parametrize("name", list(MODELS))
def test_round_statistics_on_the_workers_give_the_in_memory_model(dask_client, data, monkeypatch, name):
    X, y, Xd, yd = _data(*data, name)
    ref = SmoothBoostClassifier(**MODELS[name]).fit(X, y)
    refuse_table_gather(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SmoothBoostClassifier(**MODELS[name]).fit(Xd, yd)
    assert model.to_dict() == ref.to_dict()


def _crash_once(marker: str, fn, part, stat, committee, *args):
    """The first statistic asked after two rounds kills its worker (once, by a marker file)."""
    if len(committee) == 2:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return fn(part, stat, committee, *args)
        os.close(fd)
        os._exit(1)
    return fn(part, stat, committee, *args)


def test_worker_killed_mid_fit_gives_the_same_model(dask_client, data, tmp_path, monkeypatch):
    X, y, Xd, yd = _data(*data, "stumps-K3")
    ref = SmoothBoostClassifier(**MODELS["stumps-K3"]).fit(X, y)
    marker = tmp_path / "killed-once"
    monkeypatch.setattr(smooth_measure, "_part_stat", functools.partial(_crash_once, str(marker),
                                                                        smooth_measure._part_stat))
    model = SmoothBoostClassifier(**MODELS["stumps-K3"]).fit(Xd, yd)
    assert marker.exists()  # the margins cached on the lost worker were rebuilt from the released committee
    assert model.to_dict() == ref.to_dict()


# ------------------------------------------------- the statistics, by brute force (no cluster)
def _table(seed, n=400, d=5, K=3):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.4).astype(np.uint8)
    X[: n // 2] = X[0]  # repeated rows: entries with counts above 1
    y = rng.integers(0, K, n).astype(np.uint8)
    return X, y, pattern_table(X, y)


@pytest.mark.parametrize("seed", range(3))
def test_level_counts_give_the_measure_of_the_records(seed):
    """Summed over parts cut anywhere, the integer counts by (margin level, class) contracted with the level
    measure are the masses of the per-record measure (smooth_weighting), and the parts' sums are exact."""
    K = 3
    X, y, table = _table(seed, K=K)
    rng = np.random.default_rng(seed)
    committee = tuple(ClassStump(int(rng.integers(0, 5)), int(a), int((a + 1) % K)) for a in rng.integers(0, K, 3))
    cut = [slice(0, 37), slice(37, 120), slice(120, None)]
    pieces = [pattern_table(X[c], y[c]) for c in cut]
    whole = TableParts.local(table).map(_boost_part, K)
    split = TableParts(pieces).map(_boost_part, K)
    args = dict(n_classes=K, n_features=5, density=0.35, learning_rate=0.5)
    m_whole, m_split = PartsMeasure(whole, committee, **args), PartsMeasure(split, committee, **args)
    m_leaf = PartsMeasure(split, committee, **args)  # its first statistic does not count every entry
    leaf_first = m_leaf.ask(leaf_totals, (1, -1, -1), (1, -1, -1), (2, -1, -1))
    m_whole.ask(class_sums)
    m_split.ask(class_grams)
    target = m_whole.target
    assert target == m_split.target == m_leaf.target == Fraction(0.35) * len(y)  # kappa n, exactly
    assert np.array_equal(m_whole.mu, m_split.mu) and np.array_equal(m_whole.mu, m_leaf.mu)
    # the per-record measure, brute force
    margin = np.zeros(len(y), dtype=np.int64)
    for h in committee:
        margin += 2 * (h.predict(X) == y).astype(np.int64) - 1
    mu = smooth_weighting(margin, len(committee), density=0.35, learning_rate=0.5, target=target)
    F = FeatureMatrix(X)
    T = np.array([mu[y == k].sum() for k in range(K)])
    M1 = np.array([(mu[y == k][:, None] * X[y == k]).sum(axis=0) for k in range(K)])
    x1 = X[:, 1] == 1
    np.testing.assert_allclose(leaf_first, [[0.0, mu[(y == k) & ~x1].sum(), mu[(y == k) & x1].sum()]
                                            for k in range(K)], rtol=1e-12, atol=1e-12)
    for m in (m_whole, m_split):
        got_T, got_M1 = m.ask(class_sums)
        np.testing.assert_allclose(got_T, T, rtol=1e-12)
        np.testing.assert_allclose(got_M1, M1, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(literal_errors(m), literal_errors(F, y, mu, K), rtol=1e-12, atol=1e-9)
    # the integer sums themselves are identical whatever the cut (what makes Dask equal in memory)
    for stat, extra in [(class_sums, ()), (class_grams, ()), (leaf_totals, ((1, -1, -1), (1, -1, -1), (2, -1, -1))),
                        (leaf_sums, ((1, -1, -1), (1, -1, -1), (2, -1, -1), 2))]:
        a = whole.sum(smooth_measure._part_stat, stat, committee, *extra)
        b = split.sum(smooth_measure._part_stat, stat, committee, *extra)
        for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            assert np.array_equal(u, v) and np.array_equal(u, np.round(u))


@pytest.mark.parametrize("density", [0.4, 0.1])  # dense chunks, and the sparse copy of X.T (one-hot data)
def test_group_statistics_are_the_brute_force_sums(density):
    rng = np.random.default_rng(9)
    X = (rng.random((120, 4)) < density).astype(np.uint8)
    y = rng.integers(0, 2, 120)
    w = rng.integers(1, 5, len(y)).astype(np.float64)
    codes = y.astype(np.int64) + 2 * (X[:, 3] == 1)  # four groups
    F = FeatureMatrix(X)
    assert (F._sparse is not None) == (density < 0.25)
    if True:
        T, M1, Gram = class_grams(F, codes, w, 4)
        for g in range(4):
            rows = X[codes == g].astype(np.float64)
            assert T[g] == w[codes == g].sum()
            assert np.array_equal(M1[g], (w[codes == g][:, None] * rows).sum(axis=0))
            assert np.array_equal(Gram[g], rows.T @ (rows * w[codes == g][:, None]))
        tree = ((2, -1, -1), (1, -1, -1), (2, -1, -1))
        leaf = Tree(*tree, (0, 0, 0)).apply(X)
        tot = leaf_totals(F, codes, w, 4, *tree)
        assert all(tot[g, node] == w[(codes == g) & (leaf == node)].sum() for g in range(4) for node in range(3))
        assert np.array_equal(leaf_sums(F, codes, w, 4, *tree, 2)[1],
                              class_sums(F, codes, np.where(leaf == 2, w, 0.0), 4)[1])
