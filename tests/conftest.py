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
