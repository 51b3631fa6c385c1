"""Shared fixtures: small seeded binary data; access to the shared datasets."""

import os

import numpy as np
import pytest


@pytest.fixture
def binary_data():
    """A small seeded 0/1 dataset whose label depends on the first two features."""
    rng = np.random.default_rng(12345)
    X = (rng.random((600, 6)) < 0.5).astype(np.uint8)
    logits = 2.0 * X[:, 0] - 1.5 * X[:, 1] + 0.8 * X[:, 2] - 0.5
    y = (rng.random(600) < 1 / (1 + np.exp(-logits))).astype(np.uint8)
    return X, y



def refuse_table_gather(monkeypatch) -> None:
    """Make a Dask fit fail if it brings the table to the client: the merged pattern table (the backend's merge by
    buckets) or a kept table's gather.  The statistics tests call it before fitting on the workers."""
    from dpglass.aggregates import dask_backend
    from dpglass.aggregates.parts import DistributedTable

    def refuse(*args, **kwargs):
        raise AssertionError("the table was brought to the client")

    monkeypatch.setattr(dask_backend, "_merge_by_buckets", refuse)  # no merged table gathered
    monkeypatch.setattr(DistributedTable, "gather", refuse)


def fit_artifact(fit, readouts: bool = False) -> dict:
    """What a fit publishes, for the neighbour-artifact checks: whether it succeeded (else its error's text), its
    warnings, the model's JSON and printout (``audit.artifact.model_artifact``), and with ``readouts`` its explain
    table, card, SQL and Python export (each, or the error it gives).  ``fit()`` fits and returns the model."""
    import warnings

    from dpglass.audit.artifact import model_artifact
    from dpglass.export import to_python, to_sql
    from dpglass.models.readout.card import model_card

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = fit()
        except Exception as exc:  # noqa: BLE001 - whether fit succeeds is published too
            return {"fit": f"{type(exc).__name__}: {exc}"}
    out = {"fit": "ok", "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught}),
           **model_artifact(model)}
    if readouts:
        for key, text in (("explain", lambda: model.explain().to_string()), ("card", lambda: model_card(model)),
                          ("sql", lambda: to_sql(model)), ("python", lambda: to_python(model))):
            try:
                out[key] = text().splitlines()
            except Exception as exc:  # noqa: BLE001 - a model without that output: its error is what is published
                out[key] = f"{type(exc).__name__}: {exc}"
    return out

def three_class_parquet(folder, features, *, seed, n, low, n_files, flip=0.2, xor=False):
    """Seeded 0/1 columns with labels a/b/c written as ``n_files`` parquet files in ``folder``, for the Dask tests.

    Column j is 1 with probability rising from ``low`` to 0.6; the label is "b" where the first two columns are 1,
    else "a" where the third is 1 (flipped with probability ``flip`` when ``xor``, else or-ed with such a coin), else
    "c".  Returns ``(frame, glob, rng)``: ``rng`` continues the same generator (for a public part, say).
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = (rng.random((n, len(features))) < np.linspace(low, 0.6, len(features))).astype(np.uint8)
    coin = rng.random(n) < flip
    y = np.where(X[:, 0] & X[:, 1], "b", np.where((X[:, 2] ^ coin) if xor else (X[:, 2] | coin), "a", "c"))
    df = pd.DataFrame(X, columns=features).assign(y=y)
    return df, write_parquet_parts(df, folder, n_files), rng


def write_parquet_parts(df, folder, n_files: int) -> str:
    """``df`` cut in row order into ``n_files`` parquet files ``part{i}.parquet`` in ``folder``; returns their glob."""
    for i, chunk in enumerate(np.array_split(np.arange(len(df)), n_files)):
        df.iloc[chunk].to_parquet(folder / f"part{i}.parquet")
    return str(folder / "*.parquet")


def people_table(n=120, seed=3, K=2):
    """Ages (some missing), jobs (some missing) and a 0/1 flag; with two classes the label reads age and job."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    age = rng.integers(17, 90, n).astype(float)
    age[rng.random(n) < 0.1] = np.nan
    job = rng.choice(["a", "b", "c"], n).astype(object)
    job[rng.random(n) < 0.05] = None
    flag = (rng.random(n) < 0.5).astype(int)
    y = ((age > 40) | (job == "a")).astype(int) if K == 2 else rng.integers(0, K, n)
    return pd.DataFrame({"age": age, "job": job, "flag": flag}), pd.Series(y)


def shared_data_available() -> bool:
    home = os.environ.get("DPGLASS_DATA")
    return bool(home) and os.path.isdir(home)


needs_shared_data = pytest.mark.skipif(
    not shared_data_available(), reason="DPGLASS_DATA is not set to the shared data folder"
)


@pytest.fixture(scope="session")
def _dask_cluster():
    """One LocalCluster of 2 worker processes for the whole run (starting one costs seconds).

    ``allowed-failures`` is 1: a task whose worker dies twice is given up
    (KilledWorker) instead of after 4 deaths, which the fault tests rely on.
    The client is not the global default: only tests that ask for
    ``dask_client`` run on the cluster; the others keep dask's default
    scheduler.
    """
    distributed = pytest.importorskip("distributed")
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=40)
    client = distributed.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


@pytest.fixture
def dask_client(_dask_cluster):
    """The session's cluster client, current (dpglass fits on it) for the duration of the test."""
    with _dask_cluster.as_current():
        yield _dask_cluster
    _dask_cluster.wait_for_workers(2, timeout=60)  # a test that killed a worker leaves the cluster whole
