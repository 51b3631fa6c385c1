"""Adult and cod-rna with their numeric columns kept numeric, and public bounds for them.

The built-in loaders (:func:`dpglass.datasets.load_dataset`) cut every numeric
column at fixed thresholds.  :class:`~dpglass.models.DPGradientBoostingClassifier`
learns from numeric columns directly, given public ``bounds``; this module
reads the same raw files, one-hot encodes the categoricals on their documented
category lists (as the built-in ``adult`` encoding does) and keeps the
numerics, with bounds chosen **before looking at the data** from what the
columns mean:

* Adult: age in [17, 90] (the Census extract keeps adults aged 17 and over;
  the file top-codes age at 90), education-num in [1, 16] (UCI's 16 education
  levels), capital-gain in [0, 100000] (the Census top-code 99999),
  capital-loss in [0, 5000], hours-per-week in [1, 99] (the top-code 99).
  ``fnlwgt`` (a sampling weight) is dropped as in the built-in encoding.
* cod-rna: f1 (a free-energy change) in [-2000, 0], f2 (a sequence length) in
  [50, 150], f3..f8 (base frequencies) in [0, 1]: the ranges the built-in
  encoding's round-number cuts are set in (``dpglass.datasets._loaders``).

Values outside the bounds are clipped by the model (a per-record map).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpglass.datasets._home import fetch_file, get_data_home
from dpglass.datasets._loaders import (
    _ADULT_CATEGORIES, _ADULT_FILES, _CODRNA_FILE, _read_adult, _read_codrna, load_dataset,
)

__all__ = ["ADULT_BOUNDS", "CODRNA_BOUNDS", "load_numeric"]

ADULT_BOUNDS = {
    "age": (17.0, 90.0),
    "education-num": (1.0, 16.0),
    "capital-gain": (0.0, 100000.0),
    "capital-loss": (0.0, 5000.0),
    "hours-per-week": (1.0, 99.0),
}
CODRNA_BOUNDS = {"f1": (-2000.0, 0.0), "f2": (50.0, 150.0), **{f"f{k}": (0.0, 1.0) for k in range(3, 9)}}


def _adult(split, data_home):
    home = get_data_home(data_home)
    load_dataset("adult", data_home, split=split)  # fetches and checks the files (hashes, shapes)
    parts = ["train", "test"] if split is None else [split]
    frame = pd.concat([_read_adult(home / _ADULT_FILES[p], _ADULT_FILES[p], p) for p in parts],
                      ignore_index=True)
    y = (frame["income"].str.rstrip(".") == ">50K").to_numpy().astype(np.uint8)
    cols = {}
    for name in frame.columns:
        if name in ("fnlwgt", "income"):
            continue
        if name in ADULT_BOUNDS:
            cols[name] = frame[name].to_numpy(dtype=np.float64)
        else:
            values = frame[name].astype(str)
            for cat in _ADULT_CATEGORIES[name]:
                cols[f"{name}={cat}"] = (values == cat).to_numpy().astype(np.float64)
    X = pd.DataFrame(cols)
    return X, y


def _codrna(data_home):
    path = fetch_file(_CODRNA_FILE, get_data_home(data_home), dataset="cod-rna")  # hash-checked
    return _read_codrna({_CODRNA_FILE: path})  # the loader's own reading and checks (shape, labels)


def load_numeric(name: str, split=None, data_home=None):
    """``(X, y, bounds)``: numeric columns kept, ``bounds`` one entry per column (None: a 0/1 column).

    ``data_home`` as for :func:`dpglass.datasets.load_dataset` (None: ``$DPGLASS_DATA``, else the default).
    """
    if name == "adult":
        X, y = _adult(split, data_home)
        table = ADULT_BOUNDS
    elif name == "cod-rna":
        X, y = _codrna(data_home)
        table = CODRNA_BOUNDS
    else:
        raise ValueError(f"No numeric encoding of {name!r}; use 'adult' or 'cod-rna'.")
    bounds = [table.get(c) for c in X.columns]
    return X, y, bounds
