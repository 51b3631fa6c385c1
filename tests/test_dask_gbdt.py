"""DPGradientBoostingClassifier through Dask: the same model as in memory, the binned table, bad partitions, the CLI.

The session's LocalCluster of 2 worker processes (tests/conftest.py) is used; the data are
a few small parquet files (numeric and 0/1 columns) in a temporary folder.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from dpglass.models.gbdt.binned import BitLayout, binned_table  # noqa: E402
from dpglass.exceptions import DataValidationError  # noqa: E402
from dpglass.models import DPGradientBoostingClassifier  # noqa: E402
from dpglass.models.gbdt.trees import apply_bins, uniform_edges  # noqa: E402

FEATURES = ["age", "score", "smoker", "urban"]
BOUNDS = [(0.0, 90.0), (-1.0, 1.0), None, None]


def _frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    age = np.round(rng.uniform(15, 95, n))  # some outside the bounds: clipped
    score = rng.uniform(-1, 1, n)
    smoker = (rng.random(n) < 0.4).astype(np.uint8)
    urban = rng.random(n) < 0.6  # bool column
    logit = 0.05 * (age - 50) - 1.2 * score + smoker
    y = rng.random(n) < 1 / (1 + np.exp(-logit))
    return pd.DataFrame({"age": age, "score": score, "smoker": smoker, "urban": urban,
                         "y": np.where(y, "sick", "well")})


def _write(df, folder, parts=3):
    folder.mkdir(parents=True, exist_ok=True)
    for i, chunk in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[chunk].to_parquet(folder / f"part{i}.parquet")
    return str(folder / "*.parquet")


@pytest.fixture
def client(dask_client):
    """The session's 2-process LocalCluster (tests/conftest.py)."""
    return dask_client


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    df = _frame()
    return df, _write(df, tmp_path_factory.mktemp("parquet"))


def _dask(glob):
    ddf = dd.read_parquet(glob)
    return ddf[FEATURES], ddf["y"]


MODELS = {
    "newton": dict(n_estimators=12),  # the defaults but 12 trees: each tree is 2 round trips to the workers
    "newton-deep-quantile": dict(max_depth=3, n_estimators=8, binning="quantile", max_bins=8),
    "newton-random-basic": dict(split="random", delta=0.0, n_estimators=6),
    "dpboost-random": dict(variant="dpboost", n_estimators=6, trees_per_ensemble=3, max_depth=2),
    "dpboost-gradient": dict(variant="dpboost", subset_selection="gradient", n_estimators=4, trees_per_ensemble=2),
}


# ------------------------------------------------------------------ the table
def test_binned_table_is_the_data():
    """Entries sorted by key, counts that add to n, bins that are the records' bins; bits round-trip."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 4, 500), rng.random(500) < 0.5, rng.uniform(0, 1, 500)])
    y = (rng.random(500) < 0.3).astype(np.uint8)
    bounds = [(0.0, 3.0), None, (0.0, 1.0)]
    edges = [uniform_edges(0, 3, 4), np.array([0.5]), uniform_edges(0, 1, 256)]
    layout = BitLayout([e.size for e in edges])
    assert layout.n_bits == 2 + 1 + 8
    table = binned_table(X, y, lambda rows: apply_bins(rows, bounds, edges, "t"), layout)
    B = apply_bins(X, bounds, edges, "t")
    assert np.array_equal(layout.collapse(layout.expand(B)), B)
    assert table.n_records == 500 and table.counts.min() >= 1
    got = {(tuple(r), int(lab)): int(c) for r, lab, c in zip(table.bins.tolist(), table.labels, table.counts)}
    want = {}
    for r, lab in zip(B.tolist(), y):
        want[tuple(r), int(lab)] = want.get((tuple(r), int(lab)), 0) + 1
    assert got == want


def test_table_does_not_depend_on_the_partitioning(data):
    """Dask's default scheduler (no client), 1 and 7 partitions: the table of the whole array."""
    from dpglass.models.gbdt.binned import PartitionBinning, dask_binned_table

    df, _ = data
    edges = [uniform_edges(0, 90, 32), uniform_edges(-1, 1, 32), np.array([0.5]), np.array([0.5])]
    binning = PartitionBinning(tuple(FEATURES), tuple(BOUNDS), tuple(edges), (31, 31, 1, 1), "t")
    y01 = (df["y"] == "well").to_numpy(np.uint8)
    whole = binned_table(df[FEATURES].to_numpy(np.float64), y01,
                         lambda rows: apply_bins(rows, BOUNDS, edges, "t"), BitLayout([31, 31, 1, 1]))
    for parts in (1, 7):
        ddf = dd.from_pandas(df, npartitions=parts)
        table, classes = dask_binned_table(ddf[FEATURES], ddf["y"], binning, classes=["sick", "well"])
        assert classes == ["sick", "well"] and table.equals(whole)


# ------------------------------------------------------------- equivalence
@pytest.mark.parametrize("name", list(MODELS))
def test_dask_fit_is_the_in_memory_model(client, data, name):
    df, glob = data
    Xd, yd = _dask(glob)
    kw = dict(MODELS[name], epsilon=1.0, bounds=BOUNDS, random_state=3)
    through_dask = DPGradientBoostingClassifier(**kw).fit(Xd, yd)
    in_memory = DPGradientBoostingClassifier(**kw).fit(df[FEATURES], df["y"])
    assert through_dask.to_dict() == in_memory.to_dict()
    assert list(through_dask.feature_names_in_) == FEATURES and list(through_dask.classes_) == ["sick", "well"]
    np.testing.assert_array_equal(through_dask.predict_proba(df[FEATURES]), in_memory.predict_proba(df[FEATURES]))


def test_in_memory_dtypes_and_row_order_do_not_change_the_model(data):
    """The table is sorted: shuffled rows, ints instead of floats, all give the same model."""
    df, _ = data
    kw = dict(bounds=BOUNDS, n_estimators=5, max_depth=2, random_state=4)
    ref = DPGradientBoostingClassifier(**kw).fit(df[FEATURES].to_numpy(np.float64), df["y"]).to_dict()
    shuffled = df.sample(frac=1.0, random_state=0)
    assert DPGradientBoostingClassifier(**kw).fit(shuffled[FEATURES].to_numpy(np.float64),
                                                  shuffled["y"]).to_dict() == ref
    as_ints = df[FEATURES].astype({"age": np.int16, "urban": np.uint8}).to_numpy()
    assert DPGradientBoostingClassifier(**kw).fit(as_ints, df["y"]).to_dict() == ref


# ------------------------------------------------------------ bad partitions
@pytest.mark.parametrize("part, spoil, kw, match", [
    (2, lambda df: df.iloc[:20].assign(score="high"), {}, r"a partition.*'score'"),  # non-numeric
    (1, lambda df: df.iloc[:10].drop(columns="age"), {"binning": "quantile"}, r"a partition: .*age"),  # missing
], ids=["non-numeric-column", "missing-column"])
def test_bad_partition_is_named(client, data, tmp_path, part, spoil, kw, match):
    df, _ = data
    folder = tmp_path / "spoiled"
    _write(df, folder, parts=3)
    spoil(df).to_parquet(folder / f"part{part}.parquet")
    Xd, yd = _dask(str(folder / "*.parquet"))
    with pytest.raises(DataValidationError, match=match):
        DPGradientBoostingClassifier(bounds=BOUNDS, random_state=0, **kw).fit(Xd, yd)


@pytest.mark.parametrize("column, value, match", [
    ("smoker", 2, r"a partition: column 'smoker' has the value 2 but no bounds"),
    ("score", np.nan, r"a partition: column 'score' has missing values"),
])
def test_bad_values_name_the_partition_and_column(data, column, value, match):
    df, _ = data
    bad = df.copy()
    bad[column] = bad[column].astype(np.float64)
    bad.loc[bad.index[-3], column] = value
    ddf = dd.from_pandas(bad, npartitions=2)  # the default scheduler: errors are the same
    with pytest.raises(DataValidationError, match=match):
        DPGradientBoostingClassifier(bounds=BOUNDS, random_state=0).fit(ddf[FEATURES], ddf["y"])


def test_bounds_must_match_the_columns(data):
    from dpglass.exceptions import InvalidParameterError

    _, glob = data
    Xd, yd = _dask(glob)
    with pytest.raises(InvalidParameterError, match="one entry per feature"):
        DPGradientBoostingClassifier(bounds=BOUNDS[:3]).fit(Xd, yd)


# ----------------------------------------------------------------------- CLI
def test_cli_fits_dp_gbdt_from_parquet(client, data, tmp_path, capsys):
    import json

    from dpglass.cli import main
    from dpglass.privacy.rng import check_random_state, spawn

    df, glob = data
    out = tmp_path / "gbdt.json"
    rc = main(["fit", "--data", glob, "--target", "y", "--model", "dp-gbdt", "--epsilon", "1",
               "--bounds", "age=0:90", "--bounds", "score=-1:1", "--scheduler", client.scheduler.address,
               "--seed", "7", "--param", "n_estimators=8", "--out", str(out)])  # 8 trees: 2 round trips each
    assert rc == 0
    printed = capsys.readouterr().out
    assert "through Dask" in printed and "privacy ledger" in printed and "tree 1:" in printed
    model_rng = spawn(check_random_state(7), 2)[1]  # the CLI's model generator
    ref = DPGradientBoostingClassifier(epsilon=1.0, bounds=BOUNDS, n_estimators=8,
                                       random_state=model_rng).fit(df[FEATURES], df["y"])
    assert json.loads(out.read_text()) == json.loads(json.dumps(ref.to_dict()))


def test_cli_says_which_columns_need_bounds(data, capsys):
    from dpglass.cli import main

    _, glob = data
    assert main(["fit", "--data", glob, "--target", "y", "--model", "dp-gbdt", "--bounds", "agee=0:90",
                 "--scheduler", "local"]) != 0
    assert "agee" in capsys.readouterr().err
