"""Tests of dpglass.datasets: loaders, data home, downloads, Binarizer, dp_quantile.

Dataset files are read only from $DPGLASS_DATA (layout of shared/data); tests
that need a file skip when the variable is unset or the file is absent.  No
test touches the network: the downloader is replaced where it matters.
"""

from __future__ import annotations

import math
import os
import shutil
import urllib.error
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpglass.datasets import Binarizer, DatasetInfo, dp_quantile, get_data_home, list_datasets, load_dataset
from dpglass.datasets import _home, _loaders
from dpglass.exceptions import (
    DataValidationError,
    DatasetNotFoundError,
    InvalidParameterError,
    NotFittedError,
    PrivacyLeakWarning,
)

# name -> (shape of X, {label: count}) as documented in shared/data/PROVENANCE.md
# (or, for the raw datasets, the row count there and the column count of our encoding)
EXPECTED = {
    "breast-cancer": ((569, 60), {1: 212, 0: 357}),
    "compas-corels": ((7214, 27), {0: 3743, 1: 3471}),
    "compas-rules": ((6150, 18), {0: 3283, 1: 2867}),
    "german-rules": ((1000, 49), {1: 700, 0: 300}),
    "adult-corels": ((48842, 24), {0: 37155, 1: 11687}),
    "adult": ((48842, 117), {0: 37155, 1: 11687}),
    "compas": ((7214, 24), {0: 3963, 1: 3251}),
    "german": ((1000, 77), {1: 700, 0: 300}),
    "mushroom": ((8124, 126), {1: 3916, 0: 4208}),
    "cod-rna": ((59535, 24), {0: 39690, 1: 19845}),
    "adult-162": ((48842, 162), {0: 37155, 1: 11687}),
    "cod-rna-80": ((59535, 80), {0: 39690, 1: 19845}),
}
FILES = {info.name: info.files for info in list_datasets()}


@pytest.fixture(scope="module")
def shared_home() -> Path:
    value = os.environ.get("DPGLASS_DATA")
    if not value:
        pytest.skip("DPGLASS_DATA is not set: point it at a data directory (e.g. shared/data) to run this test")
    return Path(value)


def _need_files(home: Path, name: str, files=None) -> None:
    for rel in files if files is not None else FILES[name]:
        if not (home / rel).is_file():
            pytest.skip(f"{rel} is not in DPGLASS_DATA={home}")


def _check_xy(X, y, shape, counts):
    assert isinstance(X, pd.DataFrame)
    assert X.shape == shape
    assert (X.dtypes == np.uint8).all()
    values = X.to_numpy()
    assert ((values == 0) | (values == 1)).all()
    assert not X.isna().any().any()
    assert X.columns.is_unique and all(isinstance(c, str) and c for c in X.columns)
    assert isinstance(y, np.ndarray) and y.dtype == np.uint8 and y.shape == (shape[0],)
    assert dict(zip(*np.unique(y, return_counts=True))) == counts


# ============================================================================ loaders
def test_registry_matches_expected_table():
    infos = list_datasets()
    assert [i.name for i in infos] == list(EXPECTED)
    for info in infos:
        assert isinstance(info, DatasetInfo)
        assert (info.n_samples, info.n_features) == EXPECTED[info.name][0]
        assert all(f in _home.REMOTE_FILES for f in info.files)


@pytest.mark.parametrize("name", [n for n in EXPECTED if n != "breast-cancer"])
def test_dataset_loads_from_data_home(shared_home, name):
    _need_files(shared_home, name)
    X, y = load_dataset(name, shared_home, download=False)
    _check_xy(X, y, *EXPECTED[name])


def test_breast_cancer_needs_no_files(tmp_path, monkeypatch):
    monkeypatch.setattr(_home, "_fetch_url", _no_network)
    X, y = load_dataset("breast-cancer", tmp_path / "empty", download=False)
    _check_xy(X, y, *EXPECTED["breast-cancer"])
    assert "mean radius>12" in X.columns and "worst area>2200" in X.columns
    assert not (tmp_path / "empty").exists()  # nothing was created


def test_breast_cancer_label_is_malignant():
    from sklearn.datasets import load_breast_cancer

    _, y = load_dataset("breast-cancer")
    target = load_breast_cancer().target  # 0 = malignant in scikit-learn
    np.testing.assert_array_equal(y, (target == 0).astype(np.uint8))


def test_breast_cancer_thresholds_follow_documented_rule():
    for _, lo, hi, cuts in _loaders._BREAST_CANCER_CUTS:
        for k, t in zip((1, 2), cuts):
            exact = lo + (hi - lo) * k / 4
            assert t == float(f"{exact:.2g}"), (lo, hi, cuts)


def test_adult_splits(shared_home):
    _need_files(shared_home, "adult")
    X_tr, y_tr = load_dataset("adult", shared_home, download=False, split="train")
    X_te, y_te = load_dataset("adult", shared_home, download=False, split="test")
    _check_xy(X_tr, y_tr, (32561, 117), {0: 24720, 1: 7841})
    _check_xy(X_te, y_te, (16281, 117), {0: 12435, 1: 3846})
    assert list(X_tr.columns) == list(X_te.columns)
    X, y = load_dataset("adult", shared_home, download=False)
    pd.testing.assert_frame_equal(X, pd.concat([X_tr, X_te], ignore_index=True))
    assert {"workclass=?", "occupation=?", "native-country=?", "age>25", "sex=Male"} <= set(X.columns)
    assert not any(c.startswith("fnlwgt") for c in X.columns)


def test_adult_split_needs_only_its_file(shared_home, tmp_path):
    _need_files(shared_home, "adult", ["raw/adult/adult.data"])
    (tmp_path / "raw/adult").mkdir(parents=True)
    shutil.copy(shared_home / "raw/adult/adult.data", tmp_path / "raw/adult/adult.data")
    X, _ = load_dataset("adult", tmp_path, download=False, split="train")
    assert X.shape == (32561, 117)
    with pytest.raises(DatasetNotFoundError, match="adult.test"):
        load_dataset("adult", tmp_path, download=False, split="test")


def test_readable_names(shared_home):
    _need_files(shared_home, "compas")
    X, _ = load_dataset("compas", shared_home, download=False)
    assert {"priors_count>3", "sex=Male", "race=Caucasian", "c_charge_degree=Felony"} <= set(X.columns)
    _need_files(shared_home, "mushroom")
    X, y = load_dataset("mushroom", shared_home, download=False)
    assert "odor=foul" in X.columns and "stalk-root=?" in X.columns
    assert y[X["odor=foul"] == 1].all()  # every foul-smelling mushroom is poisonous (UCI)


@pytest.mark.parametrize("name,groups", [("adult-162", 14), ("cod-rna-80", 8)])
def test_paper_002_encodings_are_one_hot_per_attribute(shared_home, name, groups):
    _need_files(shared_home, name)
    X, _ = load_dataset(name, shared_home, download=False)
    assert (X.to_numpy().sum(axis=1) == groups).all()  # one category or bin of every attribute
    assert len({c.split("=", 1)[0] for c in X.columns}) == groups
    if name == "adult-162":
        # paper 002's Table 4 prints a model with "13 <= education-num <= 14.5": our bin 9
        assert "education-num=[13,14.5)" in X.columns and "workclass=?" in X.columns
        base, _ = load_dataset("adult", shared_home, download=False)
        cats = [c for c in base.columns if ">" not in c]  # the categoricals are adult's, column for column
        pd.testing.assert_frame_equal(X[cats], base[cats])


def test_adult_162_splits(shared_home):
    _need_files(shared_home, "adult-162")
    X_tr, y_tr = load_dataset("adult-162", shared_home, download=False, split="train")
    X_te, _ = load_dataset("adult-162", shared_home, download=False, split="test")
    assert X_tr.shape == (32561, 162) and X_te.shape == (16281, 162)
    assert list(X_tr.columns) == list(X_te.columns)


@pytest.mark.parametrize("ranges", [_loaders.ADULT_162_RANGES, _loaders.CODRNA_80_RANGES])
def test_paper_002_bins_are_equal_width_over_the_declared_ranges(ranges):
    frame = pd.DataFrame({c: [lo, (lo + hi) / 2, hi, hi + 1, lo - 1] for c, (lo, hi) in ranges.items()})
    out = _loaders.equal_width_onehot(frame, ranges)
    assert out.shape == (5, _loaders.PAPER_BINS * len(ranges))
    for c, (lo, hi) in ranges.items():
        cols = [k for k in out.columns if k.startswith(c + "=")]
        assert cols[0] == f"{c}=[{_fmt(lo)},{_fmt(lo + (hi - lo) / 10)})" and cols[-1].endswith(f"{_fmt(hi)}]")
        hits = out[cols].to_numpy().argmax(axis=1).tolist()
        assert hits == [0, 5, 9, 9, 0]  # lo, the midpoint, hi; out-of-range values go to the end bins


def _fmt(v):
    from dpglass.datasets.binarizer import _format_value

    return _format_value(round(v, 6))


def test_split_only_for_adult_and_unknown_name():
    with pytest.raises(InvalidParameterError, match="only available for 'adult'"):
        load_dataset("breast-cancer", split="train")
    with pytest.raises(InvalidParameterError, match="'name' parameter of load_dataset"):
        load_dataset("iris")
    with pytest.raises(InvalidParameterError, match="'split' parameter"):
        load_dataset("adult", split="validation")


def test_loads_return_copies():
    X, y = load_dataset("breast-cancer")
    X.iloc[:, 0] = 7
    y[:] = 9
    X2, y2 = load_dataset("breast-cancer")
    assert X2.iloc[:, 0].max() <= 1 and y2.max() <= 1


def test_shared_files_have_recorded_sha256(shared_home):
    checked = 0
    for rel, remote in _home.REMOTE_FILES.items():
        path = shared_home / rel
        if path.is_file():
            assert _home.sha256_file(path) == remote.sha256, rel
            assert path.stat().st_size == remote.size, rel
            checked += 1
    if not checked:
        pytest.skip(f"no dataset file in DPGLASS_DATA={shared_home}")


# ============================================================================ data home / download
def _no_network(url, timeout=60.0):
    raise urllib.error.URLError("network is disabled in the tests")


def test_get_data_home(monkeypatch, tmp_path):
    assert get_data_home(tmp_path) == tmp_path
    monkeypatch.setenv("DPGLASS_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    monkeypatch.delenv("DPGLASS_DATA")
    assert get_data_home() == Path("~/.cache/dpglass").expanduser()
    with pytest.raises(InvalidParameterError, match="'data_home' parameter"):
        get_data_home(3)


def test_missing_file_without_download(tmp_path, monkeypatch):
    def fail(url, timeout=60.0):
        raise AssertionError("download=False must not touch the network")

    monkeypatch.setattr(_home, "_fetch_url", fail)
    with pytest.raises(DatasetNotFoundError) as info:
        load_dataset("compas-rules", tmp_path, download=False)
    message = str(info.value)
    assert str(tmp_path / "binarized/compas/compas_rules_full_single.csv") in message
    assert _home.REMOTE_FILES["binarized/compas/compas_rules_full_single.csv"].url in message
    assert isinstance(info.value, FileNotFoundError)


def test_missing_file_offline(tmp_path, monkeypatch):
    monkeypatch.setattr(_home, "_fetch_url", _no_network)
    with pytest.raises(DatasetNotFoundError) as info:
        load_dataset("mushroom", tmp_path)
    message = str(info.value)
    assert "raw/mushroom/agaricus-lepiota.data" in message
    assert str(tmp_path / "raw/mushroom/agaricus-lepiota.data") in message
    assert "https://archive.ics.uci.edu/" in message
    assert not (tmp_path / "raw").exists()


def test_sha256_mismatch_raises_and_saves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(_home, "_fetch_url", lambda url, timeout=60.0: b"not the german credit data\n")
    with pytest.raises(DatasetNotFoundError, match="sha256"):
        load_dataset("german-rules", tmp_path)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_download_writes_verified_file(shared_home, tmp_path, monkeypatch):
    rel = "binarized/german_credit/german_credit_rules_full_single.csv"
    _need_files(shared_home, "german-rules")
    payload = (shared_home / rel).read_bytes()
    urls = []

    def fake(url, timeout=60.0):
        urls.append(url)
        return payload

    monkeypatch.setattr(_home, "_fetch_url", fake)
    X, y = load_dataset("german-rules", tmp_path)
    assert urls == [_home.REMOTE_FILES[rel].url]
    assert (tmp_path / rel).read_bytes() == payload
    assert [p.name for p in (tmp_path / rel).parent.iterdir()] == [Path(rel).name]  # no leftover .part
    _check_xy(X, y, *EXPECTED["german-rules"])
    load_dataset("german-rules", tmp_path)  # present now: no second download
    assert len(urls) == 1


def test_list_datasets_statuses(tmp_path):
    infos = {i.name: i for i in list_datasets(tmp_path)}
    assert infos["breast-cancer"].status == "bundled" and infos["breast-cancer"].files == ()
    for name, info in infos.items():
        if name == "breast-cancer":
            continue
        assert info.status.startswith("missing: would download from https://"), info.status
        for rel in info.files:
            assert _home.REMOTE_FILES[rel].url in info.status
    offline = {i.name: i for i in list_datasets(tmp_path, download=False)}
    assert offline["adult"].status == (
        f"missing: put raw/adult/adult.data at {tmp_path / 'raw/adult/adult.data'}; "
        f"put raw/adult/adult.test at {tmp_path / 'raw/adult/adult.test'}"
    )


def test_list_datasets_found(shared_home):
    for info in list_datasets(shared_home):
        if info.name == "breast-cancer":
            continue
        if all((shared_home / f).is_file() for f in info.files):
            assert info.status == f"data home {shared_home}"


# ============================================================================ Binarizer: given
def test_given_thresholds_exact_output_frame():
    X = pd.DataFrame({"age": [18, 30, 31, 70], "sex": ["Male", "Female", "Other", "Male"]}, index=[5, 6, 7, 8])
    thresholds = {"age": [60, 30]}
    categories = {"sex": ["Female", "Male"]}
    b = Binarizer(thresholds=thresholds, categories=categories)
    out = b.fit_transform(X)
    expected = pd.DataFrame(
        {"age>30": [0, 0, 1, 1], "age>60": [0, 0, 0, 1], "sex=Female": [0, 1, 0, 0], "sex=Male": [1, 0, 0, 1]},
        index=[5, 6, 7, 8],
        dtype=np.uint8,
    )
    pd.testing.assert_frame_equal(out, expected)
    assert list(b.get_feature_names_out()) == list(expected.columns)
    np.testing.assert_array_equal(b.thresholds_["age"], [30.0, 60.0])
    assert thresholds == {"age": [60, 30]} and categories == {"sex": ["Female", "Male"]}  # not mutated
    assert len(b.privacy_ledger_) == 0
    assert clone(b).get_params() == b.get_params()


def test_given_thresholds_array_and_names():
    X = np.array([[0.5, 3.0], [1.5, -1.0], [2.5, 10.0]])
    b = Binarizer(thresholds={0: [1, 2], 1: [0.25]}).fit(X)
    out = b.transform(X)
    assert isinstance(out, np.ndarray) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, [[0, 0, 1], [1, 0, 0], [1, 1, 1]])
    assert list(b.get_feature_names_out()) == ["x0>1", "x0>2", "x1>0.25"]
    assert list(b.get_feature_names_out(["a", "b"])) == ["a>1", "a>2", "b>0.25"]


def test_categories_from_data_warn():
    X = pd.DataFrame({"color": ["red", "blue", "red"]})
    with pytest.warns(PrivacyLeakWarning, match="values found in the data"):
        b = Binarizer().fit(X)
    assert list(b.get_feature_names_out()) == ["color=blue", "color=red"]
    assert b.privacy_ledger_.guarantee == "none"


def test_transform_checks():
    X = pd.DataFrame({"a": [1.0, 2.0]})
    b = Binarizer(thresholds={"a": [1.5]})
    with pytest.raises(NotFittedError):
        b.transform(X)
    b.fit(X)
    with pytest.raises(DataValidationError, match="lacks the column"):
        b.transform(pd.DataFrame({"b": [1.0]}))
    with pytest.raises(DataValidationError, match="impute"):
        b.transform(pd.DataFrame({"a": [np.nan]}))


# ============================================================================ Binarizer: dp-quantiles
def _normal_frame(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"u": rng.uniform(0, 100, n), "v": rng.normal(0, 1, n), "c": rng.choice(["a", "b"], n)})


def test_dp_quantiles_ledger_total_is_epsilon():
    X = _normal_frame()
    b = Binarizer(
        method="dp-quantiles", n_thresholds=3, epsilon=0.7, bounds={"u": (0, 100), "v": (-5, 5)},
        categories={"c": ["a", "b"]}, random_state=1,
    ).fit(X)  # fmt: skip
    ledger = b.privacy_ledger_
    assert len(ledger) == 6
    assert ledger.epsilon == 0.7
    assert ledger.total()[0] == pytest.approx(0.7) and ledger.total()[1] == 0.0
    assert {e.mechanism for e in ledger} == {"exponential-quantile"}
    assert all(e.epsilon == pytest.approx(0.7 / 6) and e.sensitivity == 1.0 for e in ledger)
    assert ledger.guarantee == "proven"
    out = b.transform(X)
    assert out.shape[0] == len(X) and list(out.columns[-2:]) == ["c=a", "c=b"]
    for col, (lo, hi) in {"u": (0, 100), "v": (-5, 5)}.items():
        t = b.thresholds_[col]
        assert np.all((t >= lo) & (t <= hi)) and np.all(np.diff(t) > 0)


def test_dp_quantiles_given_columns_cost_nothing():
    X = _normal_frame()
    b = Binarizer(thresholds={"v": [0.0]}, method="dp-quantiles", n_thresholds=2, epsilon=1.0, bounds={"u": (0, 100)},
                  categories={"c": ["a"]}, random_state=0).fit(X)  # fmt: skip
    assert len(b.privacy_ledger_) == 2 and all("'u'" in e.release for e in b.privacy_ledger_)
    np.testing.assert_array_equal(b.thresholds_["v"], [0.0])


def test_dp_quantiles_reproducible():
    X = _normal_frame()
    kw = dict(method="dp-quantiles", epsilon=0.5, bounds={"u": (0, 100), "v": (-5, 5)}, categories={"c": ["a"]})
    a = Binarizer(**kw, random_state=42).fit(X).thresholds_
    b = Binarizer(**kw, random_state=42).fit(X).thresholds_
    c = Binarizer(**kw, random_state=43).fit(X).thresholds_
    for col in ("u", "v"):
        np.testing.assert_array_equal(a[col], b[col])
    assert any(not np.array_equal(a[col], c[col]) for col in ("u", "v"))


def test_dp_quantiles_large_epsilon_near_true_quantiles():
    X = _normal_frame(n=4000, seed=3)
    b = Binarizer(method="dp-quantiles", n_thresholds=3, epsilon=60.0, bounds={"u": (0, 100), "v": (-5, 5)},
                  categories={"c": ["a", "b"]}, random_state=0).fit(X)  # fmt: skip
    for col, tol in (("u", 1.5), ("v", 0.05)):
        true = np.quantile(X[col], [0.25, 0.5, 0.75])
        np.testing.assert_allclose(b.thresholds_[col], true, atol=tol)


def test_dp_quantile_clips_to_bounds_and_handles_edge_cases():
    rng = np.random.default_rng(0)
    x = np.concatenate([np.full(500, -1e9), np.full(500, 1e9)])  # far outside the bounds
    for q in (0.0, 0.5, 1.0):
        t = dp_quantile(x, q, 1.0, (-1, 1), rng)
        assert -1 <= t <= 1
    assert 0 <= dp_quantile([], 0.5, 1.0, (0, 1), rng) <= 1
    assert 0 <= dp_quantile(np.full(10, 0.5), 0.5, 1.0, (0, 1), rng) <= 1


def test_dp_quantile_matches_exponential_mechanism_distribution():
    # values 1, 2, 3 in bounds (0, 4) on a public grid of 8 cells (9 points
    # 0, 0.5, ..., 4): #{x < t} = 0,0,0,1,1,2,2,3,3; for q = 0.5 (qn = 1.5)
    # the utilities are -|count - 1.5|.
    eps = 2.0
    grid = np.arange(9) / 2
    below = np.array([0, 0, 0, 1, 1, 2, 2, 3, 3])
    weights = np.exp(eps / 2 * -np.abs(below - 1.5))
    expected = weights / weights.sum()
    rng = np.random.default_rng(7)
    draws = np.array([dp_quantile([1, 2, 3], 0.5, eps, (0, 4), rng, grid_cells=8) for _ in range(20000)])
    assert set(np.unique(draws)) <= set(grid)  # the output is a point of the public grid
    freq = np.array([np.mean(draws == t) for t in grid])
    np.testing.assert_allclose(freq, expected, atol=0.015)


def test_quantiles_method_warns():
    X = _normal_frame()[["u"]]
    with pytest.warns(PrivacyLeakWarning, match="without differential privacy"):
        b = Binarizer(method="quantiles", n_thresholds=1).fit(X)
    assert b.thresholds_["u"][0] == pytest.approx(np.median(X["u"]), rel=1e-5)
    assert b.privacy_ledger_.guarantee == "none"


# ============================================================================ Binarizer: validation
@pytest.mark.parametrize(
    "params, match",
    [
        (dict(method="dp"), "'method' parameter of Binarizer must be one of"),
        (dict(method="dp-quantiles", epsilon=1.0), "needs public bounds for column"),
        (dict(method="dp-quantiles", epsilon=0.0, bounds={"u": (0, 1)}), "'epsilon' parameter of Binarizer"),
        (dict(method="dp-quantiles", epsilon=-1.0, bounds={"u": (0, 1)}), "'epsilon' parameter of Binarizer"),
        (dict(method="dp-quantiles", epsilon=math.inf, bounds={"u": (0, 1)}), "finite"),
        (dict(method="dp-quantiles", bounds={"u": (0, 1)}), "privacy budget"),
        (dict(method="dp-quantiles", epsilon=1.0, bounds={"u": (1, 0)}), r"lo < hi"),
        (dict(n_thresholds=0, thresholds={"u": [1]}), "'n_thresholds' parameter"),
        (dict(thresholds={"w": [1]}), "not in X"),
        (dict(), "no thresholds for numeric column"),
        (dict(thresholds={"u": "high"}), "non-empty list of numbers"),
        (dict(thresholds={"u": [1]}, random_state=-1), "random_state"),
    ],
)
def test_binarizer_parameter_errors(params, match):
    X = pd.DataFrame({"u": [0.1, 0.5, 0.9]})
    with pytest.raises(InvalidParameterError, match=match):
        Binarizer(**params).fit(X)


def test_binarizer_nan_says_impute():
    X = pd.DataFrame({"u": [0.1, np.nan]})
    with pytest.raises(DataValidationError, match="impute first"):
        Binarizer(thresholds={"u": [0.5]}).fit(X)
    with pytest.raises(DataValidationError, match="impute"):
        dp_quantile([0.1, np.nan], 0.5, 1.0, (0, 1), 0)


def test_thresholds_for_categorical_column_rejected():
    X = pd.DataFrame({"s": ["a", "b"]})
    with pytest.raises(InvalidParameterError, match="categorical"):
        Binarizer(thresholds={"s": [1]}).fit(X)
