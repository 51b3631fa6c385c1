"""DP-LR on Dask: the solver's sums are taken on the workers, exactly (issue 30).

The table's parts stay on the workers (:mod:`dpglass.aggregates.parts`); each
Newton step, line-search value and certificate asks them for exact integer
sums of quantised per-entry terms (:class:`~dpglass.models.logistic.solver.SoftmaxPart`),
so the solver's path -- and the file -- does not depend on how the entries
are cut into parts: the Dask model equals the in-memory one byte for byte.
"""

from __future__ import annotations

import functools
import json
import os
import warnings

import numpy as np
import pytest
from conftest import three_class_parquet, refuse_table_gather

from dpglass.aggregates import pattern_table
from dpglass.aggregates.parts import TableParts
from dpglass.aggregates.table import PatternTable
from dpglass.models import DPLogisticRegression
from dpglass.models.logistic import solver as S
from dpglass.models.logistic.solver import SoftmaxRows, _table_part, minimise

FEATURES = [f"f{j}" for j in range(6)]


def _table(seed, K, n=600, d=5):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.4).astype(np.uint8)
    X[: n // 3] = X[0]  # repeated rows: counts above 1
    y = ((X[:, 0] + X[:, 1] + (rng.random(n) < 0.3)) % K).astype(np.uint8)
    return pattern_table(X, y)


def _cut(table, K, cuts, seed, c):
    """The table's entries shuffled and cut into ``cuts`` parts, as :class:`SoftmaxRows` over those parts."""
    m = table.labels.shape[0]
    order = np.random.default_rng(seed).permutation(m)
    pieces = [PatternTable(table.packed[i], table.labels[i], table.counts[i], table.n_features)
              for i in np.array_split(order, cuts)]
    parts = TableParts(pieces).map(_table_part, K, True, c)
    return SoftmaxRows(parts, table.n_features + 1, K)


@pytest.mark.parametrize("K,records", [(2, 1), (3, 1), (3, 10**5)])
def test_sums_and_the_solution_do_not_depend_on_the_cut(K, records):
    """Gradient, Hessian, value, line values and certificate are bit for bit the same over any cut and order of
    the entries (also an empty part), and so is the certified point; with counts scaled up the whole table's
    Hessian takes the two-half Gram products and the one-entry parts the single one (the same integers)."""
    table = _table(K, K)
    table.counts[:] = table.counts * records
    c = np.sqrt(table.n_features + 1.0)
    mu, off = 30.0 * c * c, (0.4 if K == 2 else np.array([0.0, -0.3, 0.5]))
    beta = np.random.default_rng(1).normal(0, 0.5, (K - 1) * (table.n_features + 1))
    step = np.random.default_rng(2).normal(0, 0.1, beta.size)
    results = []
    for cuts, seed in [(1, 0), (3, 1), (7, 2), (table.labels.shape[0] + 1, 3)]:
        rows = _cut(table, K, cuts, seed, c) if cuts > 1 else SoftmaxRows.from_table(table, K, True, c)
        g, H, F = rows.newton_pass(beta, mu, off)
        results.append((g, H, F, rows.value_along(beta, step, 0.5, mu, off), rows.certified_bound(beta, mu, off),
                        minimise(rows, mu, c * (1e-6 if records == 1 else 1e-4), offset=off)))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert np.array_equal(a, b)


def test_the_quantisation_term_on_both_sides_of_the_limit():
    """One entry whose gradient term (2**-86.6) is below the 2**-80 grid: its quantised sum is 0.  The certified
    bound covers the exact gradient (long double) by its term m 2**-81; the same bound from the float bound terms
    without that term (the tree-sum certificate's form) does not."""
    table = pattern_table(np.array([[1, 0]], np.uint8), np.array([1], np.uint8))
    c, mu, o = np.sqrt(3.0), 1.0, 60.0
    rows = SoftmaxRows.from_table(table, 2, True, c)
    beta = np.zeros(3)
    g, _, _ = rows.newton_pass(beta, mu, o)
    assert np.array_equal(g, np.zeros(3))  # the term is below the grid
    p0 = np.longdouble(1) / (1 + np.exp(np.longdouble(o)))
    exact = float(np.sqrt(2.0) * p0)  # |(p - e_y) G| a, a = (1, 0, 1)
    assert exact <= rows.certified_bound(beta, mu, o)
    # without the grid term: the float bound terms of the one entry
    b = np.array([0.0, o])
    Z = b[None, :]
    P, _ = S.softmax_scores(Z)
    err_p = S.probability_errors(Z, P, 2.0 * S._gamma(6) * np.abs(b)[None, :].max(axis=1))
    R = S.residuals(P, np.array([1]))
    err_r = err_p.copy()
    err_r[0, 1] = err_p[0, 0] + S._gamma(2) * abs(R[0, 1])
    a = np.array([1.0, 0.0, 1.0])
    absG = np.abs(S.centred_basis(2))[:, 0]
    without = 1.01 * float(np.linalg.norm(S._gamma(5) * (np.abs(R[0]) @ absG) * a + (err_r[0] @ absG) * a))
    assert exact > without


# ------------------------------------------------------------- on a real cluster
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    df, glob, _ = three_class_parquet(tmp_path_factory.mktemp("logistic-stats"), FEATURES, seed=7, n=1500, low=0.2,
                                      n_files=4)
    return df, glob



@pytest.mark.parametrize("name,params", [
    ("K2", {"epsilon": 1.0, "classes": ["a", "b"], "random_state": 0}),
    ("K3", {"epsilon": 2.0, "classes": ["a", "b", "c"], "random_state": 1}),
    ("K3-no-intercept", {"epsilon": 2.0, "fit_intercept": False, "classes": ["a", "b", "c"], "random_state": 2}),
])
def test_dask_fit_on_the_workers_is_the_in_memory_model(dask_client, data, monkeypatch, name, params):
    df, glob = data
    ddf = dd.read_parquet(glob)
    if name == "K2":
        ddf, df = ddf[ddf["y"] != "c"], df[df["y"] != "c"]
    ref = DPLogisticRegression(**params).fit(df[FEATURES], df["y"])
    refuse_table_gather(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPLogisticRegression(**params).fit(ddf[FEATURES], ddf["y"])
    assert json.dumps(model.to_dict()) == json.dumps(ref.to_dict())


def _crash_once(marker: str, fn, part, beta, b):
    """The second Newton pass kills its worker (once, by a marker file): the part and its scores are rebuilt."""
    if np.any(beta != 0):
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return fn(part, beta, b)
        os.close(fd)
        os._exit(1)
    return fn(part, beta, b)


def test_worker_killed_mid_fit_gives_the_same_model(dask_client, data, tmp_path, monkeypatch):
    df, glob = data
    params = {"epsilon": 2.0, "classes": ["a", "b", "c"], "random_state": 1}
    ref = DPLogisticRegression(**params).fit(df[FEATURES], df["y"])
    marker = tmp_path / "killed-once"
    monkeypatch.setattr(S, "_newton", functools.partial(_crash_once, str(marker), S._newton))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPLogisticRegression(**params).fit(dd.read_parquet(glob)[FEATURES], dd.read_parquet(glob)["y"])
    assert marker.exists()
    assert json.dumps(model.to_dict()) == json.dumps(ref.to_dict())
