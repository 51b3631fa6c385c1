"""With a declared label set, fit succeeds on zero records on every route (review s35, finding 1).

Whether fit succeeds is published and n is private: a fit that fails on an
empty table but not on a table of one record tells them apart with certainty.
In memory this held already; a caller's PatternTable (PrivateGridSearch's
coin-split parts) and a Dask fit whose partitions are all empty were refused.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.aggregates import pattern_table
from dpglass.exceptions import DataValidationError
from dpglass.models import SmoothBoostClassifier
from dpglass.models.selection.estimator import PrivateGridSearch
from dpglass.registry import list_estimators

SPECS = [s for s in list_estimators(private=True) if getattr(s.cls, "_distributed_fit", False)]


def _make(spec):
    return spec.make(**{**spec.test_params, "classes": [0, 1], "random_state": 0})


def _outcome(spec, n):
    """What a fit on a PatternTable of ``n`` records gives: "fitted", or the error's type (a model may not take tables)."""
    table = pattern_table(np.ones((n, 3), np.uint8), np.ones(n, np.uint8))
    table.classes = [0, 1]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _make(spec).fit(table, None)
    except DataValidationError as exc:
        return type(exc).__name__
    return "fitted"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_a_pattern_table_of_zero_records_fits_as_one_of_one_record_does(spec):
    assert _outcome(spec, 0) == _outcome(spec, 1)


def test_a_pattern_table_of_zero_records_without_declared_classes_is_refused():
    table = pattern_table(np.zeros((0, 3), np.uint8), np.zeros(0, np.uint8))
    table.classes = [0, 1]
    with pytest.raises(DataValidationError, match="declare the label set"):
        SmoothBoostClassifier(epsilon=1.0, n_rounds=1).fit(table, None)


def test_private_grid_search_on_zero_and_one_record_always_fits():
    for n in (0, 1):
        for seed in range(4):
            X, y = np.ones((n, 3), np.uint8), np.ones(n, np.uint8)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                PrivateGridSearch(estimator=SmoothBoostClassifier(n_rounds=1, classes=[0, 1]),
                                  param_grid={"n_rounds": [1, 3]}, epsilon=1.0, random_state=seed).fit(X, y)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_dask_zero_records_fit_with_declared_classes(dask_client, spec):
    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame({"a": [1, 0], "b": [0, 1], "c": [1, 1], "y": [0, 1]})
    ddf = dd.from_pandas(df, npartitions=2)
    ddf = ddf[ddf["a"] > 5]  # every partition empty
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _make(spec).fit(ddf[["a", "b", "c"]], ddf["y"])
    assert list(model.classes_) == [0, 1]
