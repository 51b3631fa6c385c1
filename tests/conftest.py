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
