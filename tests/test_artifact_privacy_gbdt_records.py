"""dp-gbdt's records path publishes no deterministic function of the data (review s35, finding 2).

In memory, Newton boosting reads the records themselves (count 1 each) when a strided sample of up to 16,384 rows
is at least half distinct, and the distinct (bin row, label) entries otherwise (``gbdt.binned.binned_rows``).  The
registry's neighbour test (0/1 columns, n = 160) always takes the entries.  Here: neighbours that both take the
records (numeric columns, distinct rows), and neighbours on the two sides of the choice (D reads the entries, D
minus one duplicate reads the records).  The path is observed by wrapping ``binned_rows`` (test code only), so the
tests fail loudly if a pair no longer takes the path it was built for.  The artifact: fit's success, its warnings,
the JSON, the printout and the CLI's output.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import fit_artifact

import dpglass.models.gbdt.estimator as gbdt_estimator
from dpglass.audit.artifact import deterministic_leaks
from dpglass.cli import main
from dpglass.models import DPGradientBoostingClassifier

SEEDS = range(6)


@pytest.fixture
def paths(monkeypatch):
    """The paths the in-memory fits took, in order: "records" or "entries"."""
    seen = []
    original = gbdt_estimator.binned_rows

    def spy(X, y01, to_bins, n_cuts, **kw):
        out = original(X, y01, to_bins, n_cuts, **kw)
        records = out.n_entries == X.shape[0] and bool(np.all(np.asarray(out.counts) == 1))
        seen.append("records" if records else "entries")
        return out

    monkeypatch.setattr(gbdt_estimator, "binned_rows", spy)
    return seen


def _artifact(model, X, y) -> dict:
    return fit_artifact(lambda: model.fit(X, y))


def _sides(make, pair, paths, seeds=SEEDS):
    """Artifacts of both sides and the set of paths each side took."""
    out = []
    for X, y in pair:
        paths.clear()
        arts = [_artifact(make(s), X, y) for s in seeds]
        assert all(a["fit"] == "ok" for a in arts), [a["fit"] for a in arts]
        out.append((arts, set(paths)))
    return out


def _numeric(n=200, K=2, seed=5):
    """Three numeric columns on [0, 100) with one decimal: every row distinct, so the records themselves are read."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 100, (n, 3)), 1)
    y = ((X[:, 0] > 50) ^ (rng.random(n) < 0.15)).astype(int)
    if K > 2:
        y = np.where(X[:, 1] > 60, 2, y)
    return X, y


RECORDS_CONFIGS = {  # name: (K, parameters)
    "laplace": (2, dict(max_depth=2)),
    "gaussian": (2, dict(max_depth=2, leaf_noise="gaussian", delta=1e-6)),
    "quantile": (2, dict(binning="quantile")),
    "k3": (3, dict(max_depth=1)),
}


@pytest.mark.parametrize("name", sorted(RECORDS_CONFIGS))
def test_neighbours_that_read_the_records_publish_nothing_deterministic(paths, name):
    K, params = RECORDS_CONFIGS[name]
    X, y = _numeric(K=K)
    drop = int(np.flatnonzero(y == 1)[0])
    pair = [(X, y), (np.delete(X, drop, axis=0), np.delete(y, drop))]
    make = lambda s: DPGradientBoostingClassifier(epsilon=2.0, n_estimators=3, bounds=[(0, 100)] * 3,  # noqa: E731
                                                  classes=list(range(K)), random_state=s, **params)
    (left, left_paths), (right, right_paths) = _sides(make, pair, paths)
    assert left_paths == right_paths == {"records"}
    assert deterministic_leaks(left, right) == []


def _path(X, y, paths) -> str:
    """The path an in-memory fit on ``(X, y)`` takes (a one-tree fit, its noise irrelevant)."""
    paths.clear()
    DPGradientBoostingClassifier(epsilon=1.0, n_estimators=1, bounds=[(0, 8)] * 2, max_bins=9, classes=[0, 1],
                                 random_state=0).fit(X, y)
    return paths[-1]


def _straddle(paths):
    """Neighbours on the two sides of the choice, found whatever its threshold: 40 distinct rows on a 9 x 5 grid,
    then copies of them added one at a time until the fit groups the entries; D is that table, D' the one before
    (one duplicate fewer, the records themselves)."""
    u = np.arange(40)
    X = np.column_stack([u % 8, u // 8]).astype(float)
    y = (u % 3 == 0).astype(int)
    assert _path(X, y, paths) == "records"
    for extra in range(1, 4 * len(u)):
        more = np.arange(extra) % len(u)
        D = (np.vstack([X, X[more]]), np.concatenate([y, y[more]]))
        if _path(*D, paths) == "entries":
            return D, (D[0][:-1], D[1][:-1])
    raise AssertionError("no table of repeated rows was grouped")


@pytest.mark.parametrize("params", [dict(max_depth=2), dict(max_depth=1, leaf_noise="gaussian", delta=1e-6)],
                         ids=["laplace-depth2", "gaussian-depth1"])
def test_neighbours_on_the_two_sides_of_the_choice_publish_nothing_deterministic(paths, params):
    make = lambda s: DPGradientBoostingClassifier(epsilon=2.0, n_estimators=3, bounds=[(0, 8), (0, 8)],  # noqa: E731
                                                  max_bins=9, classes=[0, 1], random_state=s, **params)
    (left, left_paths), (right, right_paths) = _sides(make, _straddle(paths), paths)
    assert (left_paths, right_paths) == ({"entries"}, {"records"})
    assert deterministic_leaks(left, right) == []


def test_the_choice_changes_no_byte_of_the_model(paths, monkeypatch):
    """Forcing either path on the same data gives the same JSON and printout, for the straddling tables."""
    original = gbdt_estimator.binned_rows
    for X, y in _straddle(paths):
        for s in range(2):
            out = []
            for group in (True, False):
                monkeypatch.setattr(gbdt_estimator, "binned_rows",
                                    lambda *a, group=group, **kw: original(*a, **{**kw, "group": group}))
                model = DPGradientBoostingClassifier(epsilon=2.0, n_estimators=3, max_depth=2, bounds=[(0, 8)] * 2,
                                                     max_bins=9, classes=[0, 1], random_state=s).fit(X, y)
                out.append((json.dumps(model.to_dict()), str(model)))
            assert out[0] == out[1]


@pytest.mark.parametrize("pair", ["records", "straddle"])
def test_cli_output_on_the_records_path_is_not_a_deterministic_function_of_the_data(paths, tmp_path, capsys,
                                                                                  monkeypatch, pair):
    if pair == "records":
        X, y = _numeric(n=150)
        drop = int(np.flatnonzero(y == 1)[0])
        sides = [(X, y), (np.delete(X, drop, axis=0), np.delete(y, drop))]
        bounds, expected = ["--bounds=f0=0:100", "--bounds=f1=0:100", "--bounds=f2=0:100"], ({"records"},) * 2
    else:
        sides = list(_straddle(paths))
        bounds, expected = ["--bounds=f0=0:8", "--bounds=f1=0:8", "--param=max_bins=9"], ({"entries"}, {"records"})
    monkeypatch.chdir(tmp_path)
    outputs, taken = [], []
    for X, y in sides:
        pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(label=y).to_csv("data.csv", index=False)
        paths.clear()
        runs = []
        for s in range(4):
            code = main(["fit", "--data", "data.csv", "--target", "label", "--model", "dp-gbdt", "--epsilon", "2",
                         "--classes", "0,1", "--test-size", "0", "--seed", str(s), "--param=n_estimators=3",
                         "--out", "model.json", *bounds])
            captured = capsys.readouterr()
            assert code == 0, captured.err
            runs.append({"stdout": captured.out.splitlines(), "stderr": captured.err.splitlines(),
                         "json": json.loads((tmp_path / "model.json").read_text())})
        outputs.append(runs)
        taken.append(set(paths))
    assert tuple(taken) == expected
    assert deterministic_leaks(*outputs) == []


def test_pipeline_numbers_route_on_the_records_path_publishes_nothing_deterministic(paths):
    """DPPipeline hands dp-gbdt its numeric columns as numbers (clipped to the schema's bounds): distinct rows, so
    the records themselves are read; the clipped-records count is released noisily, the rest as in memory."""
    from dpglass.models import DPPipeline

    X, y = _numeric(n=150)
    X[::17, 1] = 120.0  # a few values above the bound: the pipeline clips them (and releases a noisy count)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(flag=(X[:, 2] > 30).astype(int))
    schema = {"target": "y", "columns": [*({"name": c, "kind": "numeric", "bounds": [0, 100], "missing": "none"}
                                           for c in "abc"), {"name": "flag", "kind": "binary"}]}
    drop = int(np.flatnonzero(y == 1)[0])
    keep = np.arange(len(y)) != drop
    pair = [(frame, pd.Series(y)), (frame[keep], pd.Series(y[keep]))]
    make = lambda s: DPPipeline(schema=schema, model=DPGradientBoostingClassifier(n_estimators=3),  # noqa: E731
                                epsilon=2.0, classes=[0, 1], random_state=s)
    (left, left_paths), (right, right_paths) = _sides(make, pair, paths)
    assert left_paths == right_paths == {"records"}
    assert deterministic_leaks(left, right) == []
