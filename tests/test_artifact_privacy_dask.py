"""The artifact is the unit of privacy, through Dask too (review s35, finding 2).

``tests/test_artifact_privacy.py`` fits in memory.  Here every registered private model, and the two wrappers that
fit through Dask (``DPPipeline``, ``PrivateGridSearch``), fits on a real LocalCluster (the session's, conftest's
``dask_client``) on D and on D minus one record, a few seeds a side: every field of the JSON, every line of the
printout, the warnings and whether fit succeeded, when constant across the seeds of one side, must be the same on
the other side.  The neighbour drops the first of a duplicated record (the index-shift case of the keyed split),
and the same records are written as parquet files, so the partitions are the workers' own.  The CLI through Dask
(``dpglass fit --scheduler``) is checked the same way on its stdout, stderr and saved file; and one record against
none (every partition empty) with a declared label set.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import fit_artifact, write_parquet_parts

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from dpglass.audit.artifact import deterministic_leaks  # noqa: E402
from dpglass.cli import main  # noqa: E402
from dpglass.registry import list_estimators  # noqa: E402

SEEDS = range(4)
PRIVATE = [s for s in list_estimators(private=True) if getattr(s.cls, "_distributed_fit", False)]
FEATURES = [f"f{j}" for j in range(5)]


def _specs(fast: set, multiclass: bool = False) -> list:
    """The registered private models that fit through Dask; those not in ``fast`` marked slow (a Dask fit is a few
    round trips to the cluster: 1-4 s each on a loaded machine, and a check takes 6-8 fits)."""
    specs = [s for s in PRIVATE if not multiclass or getattr(s.cls, "_max_classes", 2) > 2]
    return [pytest.param(s, id=s.name, marks=() if s.name in fast else pytest.mark.slow) for s in specs]


def _frame(n=160, seed=7, K=2):
    """0/1 features, labels 0..K-1 reading the first two columns, as a frame; a duplicated record's first index."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, len(FEATURES))) < 0.5).astype(np.uint8)
    y = ((X[:, 0] | X[:, 1]) & (rng.random(n) < 0.9)).astype(np.uint8)
    if K > 2:
        y = np.where(X[:, 2] & (rng.random(n) < 0.7), 2, y).astype(np.uint8)
    df = pd.DataFrame(X, columns=FEATURES).assign(y=y)
    keys = [tuple(r) for r in df.itertuples(index=False)]
    drop = next(i for i, k in enumerate(keys) if keys.count(k) > 1 and k[-1] == 1)
    return df, drop


def _neighbours(tmp_path, n_files=4, **kw):
    """Globs of D and D minus one duplicated positive record, each written as ``n_files`` parquet files."""
    df, drop = _frame(**kw)
    globs = []
    for name, frame in (("D", df), ("D-1", df.drop(index=drop))):
        folder = tmp_path / name
        folder.mkdir()
        globs.append(write_parquet_parts(frame.reset_index(drop=True), folder, n_files))
    return globs


def _artifact(make, glob, **fit_kw) -> dict:
    """Whether fit succeeded, its warnings, and the model's JSON and printout."""
    frame = dd.read_parquet(glob)
    return fit_artifact(lambda: make().fit(frame[FEATURES], frame["y"], **fit_kw))


def _leaks(make, globs, seeds=SEEDS, **fit_kw):
    sides = [[_artifact(lambda: make(s), glob, **fit_kw) for s in seeds] for glob in globs]
    assert all(a["fit"] == "ok" for a in sides[0] + sides[1]), [a["fit"] for a in sides[0] + sides[1]]
    return deterministic_leaks(*sides)


@pytest.mark.parametrize("spec", _specs({"smooth-boost-stumps"}))
def test_dask_fits_publish_no_deterministic_function_of_the_data(dask_client, tmp_path, spec):
    globs = _neighbours(tmp_path)
    leaks = _leaks(lambda s: spec.make(**spec.test_params, classes=[0, 1], random_state=s), globs)
    assert leaks == [], f"{spec.name} through Dask publishes deterministic functions of the data: {leaks[:5]}"


def _wrappers():
    from dpglass.models import DPGradientBoostingClassifier, DPPipeline, PrivateGridSearch, SmoothBoostClassifier

    schema = {"target": "y", "columns": [{"name": f, "kind": "binary"} for f in FEATURES]}
    return {
        "search-boosting": lambda s: PrivateGridSearch(
            estimator=SmoothBoostClassifier(classes=[0, 1]), param_grid={"n_rounds": [2, 4]}, epsilon=2.0,
            stopping_probability=0.5, random_state=s),
        "pipeline-gbdt": lambda s: DPPipeline(schema=schema, model=DPGradientBoostingClassifier(n_estimators=3),
                                              epsilon=1.0, classes=[0, 1], random_state=s),
        "pipeline-auto": lambda s: DPPipeline(schema=schema, model="auto", epsilon=1.0, classes=[0, 1],
                                              random_state=s),
    }


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n == "search-boosting" else pytest.mark.slow)
                                  for n in sorted(_wrappers())])
def test_dask_wrappers_publish_no_deterministic_function_of_the_data(dask_client, tmp_path, name):
    leaks = _leaks(_wrappers()[name], _neighbours(tmp_path))
    assert leaks == [], f"{name} through Dask publishes deterministic functions of the data: {leaks[:5]}"


@pytest.mark.parametrize("spec", _specs({"dp-gam"}, multiclass=True))
def test_dask_fits_of_three_classes_publish_no_deterministic_function_of_the_data(dask_client, tmp_path, spec):
    globs = _neighbours(tmp_path, K=3)
    leaks = _leaks(lambda s: spec.make(**spec.test_params, classes=[0, 1, 2], random_state=s), globs, seeds=range(3))
    assert leaks == [], f"{spec.name} (K=3) through Dask publishes deterministic functions of the data: {leaks[:5]}"


@pytest.mark.parametrize("spec", _specs({"dp-rule-list", "dp-gbdt"}))
def test_dask_fit_on_one_record_and_on_none_publish_the_same(dask_client, tmp_path, spec):
    """D = one record, D' = no record (every partition empty): whether fit succeeds and every constant field."""
    df = pd.DataFrame([[1, 0, 1, 0, 1, 1]], columns=[*FEATURES, "y"]).astype(np.uint8)
    globs = []
    for name, frame in (("one", df), ("none", df.iloc[:0])):
        (tmp_path / name).mkdir()
        globs.append(write_parquet_parts(frame, tmp_path / name, 2))
    leaks = _leaks(lambda s: spec.make(**spec.test_params, classes=[0, 1], random_state=s), globs, seeds=range(3))
    assert leaks == [], f"{spec.name} through Dask tells one record from none: {leaks[:5]}"


# ------------------------------------------------------------------------------------------------ the CLI
CLI_PARAMS = {"subsample-aggregate": ["--param=n_teachers=5", "--param=noise_scale=2.0", "--param=n_public=60"],
              "dp-bag": ["--param=n_teachers=4", "--param=n_partitions=3", "--param=noise_scale=20.0",
                         "--param=n_public=60"]}


def _cli_params(spec):
    return CLI_PARAMS.get(spec.name, [f"--param={k}={json.dumps(v)}" for k, v in spec.test_params.items()
                                      if k != "epsilon"])


@pytest.mark.parametrize("spec", _specs({"subsample-aggregate"}))
def test_dask_cli_output_is_not_a_deterministic_function_of_the_data(dask_client, tmp_path, capfd, monkeypatch, spec):
    """``dpglass fit --data 'data/*.parquet' --scheduler <address>`` on D and D-1: stdout, stderr, the exit code and
    the saved file, from the same folder name on both sides (the printed path is the same)."""
    df, drop = _frame()
    outputs = {}
    for name, frame in (("D", df), ("D-1", df.drop(index=drop))):
        home = tmp_path / name
        (home / "data").mkdir(parents=True)
        write_parquet_parts(frame.reset_index(drop=True), home / "data", 4)
        monkeypatch.chdir(home)
        runs = []
        for s in range(3):
            code = main(["fit", "--data", "data/*.parquet", "--target", "y", "--model", spec.name, "--epsilon", "1",
                         "--classes", "0,1", "--seed", str(s), "--scheduler", dask_client.scheduler.address,
                         "--out", "model.json", *_cli_params(spec)])
            out, err = capfd.readouterr()
            saved = json.loads((home / "model.json").read_text()) if code == 0 else None
            runs.append({"code": code, "stdout": out.splitlines(), "stderr": err.splitlines(), "json": saved})
        outputs[name] = runs
    assert [r["code"] for r in outputs["D"] + outputs["D-1"]] == [0] * 6, outputs["D"][0]["stderr"]
    leaks = deterministic_leaks(outputs["D"], outputs["D-1"])
    assert leaks == [], f"dpglass fit --model {spec.name} through Dask: {leaks[:5]}"


# ------------------------------------------------------------------------------- numeric columns, layouts
def _numeric_neighbours(tmp_path, n_files=(4, 4)):
    """Numeric columns a, b and c (c with missing values) and a flag; D and D minus its first positive record, written
    as ``n_files`` parquet files each (a different number of files on the two sides: the layout is the curator's,
    and ceil(n / rows per file) would tell n)."""
    rng = np.random.default_rng(9)
    n = 160
    df = pd.DataFrame({"a": np.round(rng.uniform(0, 100, n), 1), "b": np.round(rng.uniform(0, 100, n), 1),
                       "c": np.round(rng.uniform(0, 100, n), 1), "flag": rng.integers(0, 2, n).astype(float)})
    df.loc[df.index[::13], "c"] = np.nan
    df["y"] = ((df["a"] > 50) ^ (rng.random(n) < 0.15)).astype(int)
    drop = int(np.flatnonzero(df["y"].to_numpy() == 1)[0])
    globs = []
    for name, frame, files in (("D", df, n_files[0]), ("D-1", df.drop(index=drop), n_files[1])):
        (tmp_path / name).mkdir()
        globs.append(write_parquet_parts(frame.reset_index(drop=True), tmp_path / name, files))
    return globs


def _numeric_models():
    from dpglass.models import DPGAMClassifier, DPGradientBoostingClassifier

    gbdt = dict(epsilon=2.0, n_estimators=3, bounds=[(0, 100), (0, 100), (0, 1)], classes=[0, 1])
    gam = dict(epsilon=2.0, n_cycles=1, bounds=[(0, 100), (0, 100), None], missing=[False, True, False],
               classes=[0, 1])
    return {  # name: (columns read, model of a seed)
        "gbdt-uniform": (["a", "b", "flag"], lambda s: DPGradientBoostingClassifier(**gbdt, random_state=s)),
        "gbdt-quantile": (["a", "b", "flag"], lambda s: DPGradientBoostingClassifier(
            **gbdt, binning="quantile", max_bins=8, random_state=s)),
        "gam-missing-quantile": (["a", "c", "flag"], lambda s: DPGAMClassifier(
            **gam, binning="quantile", max_bins=6, random_state=s)),
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_numeric_models()))
@pytest.mark.parametrize("files", [(4, 4), (5, 3)], ids=["same-layout", "other-layout"])
def test_dask_fits_on_numeric_columns_publish_no_deterministic_function_of_the_data(dask_client, tmp_path, name,
                                                                                    files):
    globs = _numeric_neighbours(tmp_path, files)
    columns, make = _numeric_models()[name]
    sides = [[_numeric_artifact(lambda: make(s), glob, columns) for s in range(3)] for glob in globs]
    assert all(a["fit"] == "ok" for a in sides[0] + sides[1]), [a["fit"] for a in sides[0] + sides[1]]
    assert deterministic_leaks(*sides) == []


def _numeric_artifact(make, glob, columns) -> dict:
    frame = dd.read_parquet(glob)
    return fit_artifact(lambda: make().fit(frame[columns], frame["y"]))
