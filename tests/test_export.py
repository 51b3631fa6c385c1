"""dpglass export (issue 29): the SQL run in SQLite and the exported Python function give exactly
``model.predict`` on every row (and the scores bit for bit, at least within 1e-12), for every exportable
registered model with two and three classes, on 0/1 columns, on DP-GBDT's numeric columns and through a
DPPipeline on raw columns with missing values; an edited file is refused; a refused model says why."""

import io
import json
import math
import os
import shlex
import shutil
import sqlite3
import subprocess
import types
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.cli import main
from dpglass.exceptions import ModelFileError
from dpglass.export import NotExportableError, export_file, to_python, to_sql
from dpglass.export.families import expit_threshold
from dpglass.models import (
    DPGradientBoostingClassifier,
    DPLogisticRegression,
    DPPipeline,
    PrivateGridSearch,
)
from dpglass.registry import REGISTRY
from dpglass.schema import Schema, binary, categorical, numeric

#: Every registered model, classified: a new model fails test_every_registered_model_is_classified until it is.
EXPORTABLE = {"greedy-rule-list", "dp-rule-list", "smooth-boost-stumps", "smooth-boost-trees",
              "dp-logistic-regression", "dp-gbdt", "dp-gam"}
REFUSED = {"subsample-aggregate": "teacher ensemble", "dp-bag": "teacher ensemble"}
#: Faster fits of the same models: the RDP accountant (the default "auto" tries PLD, seconds a fit).
FAST = {"dp-gbdt": {"accountant": "rdp"}, "dp-gam": {"accountant": "rdp"}}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _module(src: str):
    mod = types.ModuleType("exported")
    exec(compile(src, "exported", "exec"), mod.__dict__)  # noqa: S102  (the module under test)
    return mod


def _run_sql(sql: str, frame: pd.DataFrame) -> pd.DataFrame:
    con = sqlite3.connect(":memory:")
    frame.to_sql("t", con, index=False)
    cur = con.execute(sql)
    return pd.DataFrame(cur.fetchall(), columns=[d[0] for d in cur.description])


def _model_scores(model, X) -> np.ndarray:
    """What the export's scores are: decision_function, or predict_proba for the rule lists."""
    inner = getattr(model, "model_", model)
    if hasattr(inner, "decision_function"):
        s = (inner.decision_function(model._encode(X)) if inner is not model else model.decision_function(X))
    else:
        s = model.predict_proba(X)
    s = np.asarray(s, dtype=np.float64)
    return s[:, None] if s.ndim == 1 else s


def _check_export(model, X):
    """The SQL (SQLite) and the Python module give predict exactly and the scores bit for bit."""
    pred = np.asarray(model.predict(X), dtype=object)
    scores = _model_scores(model, X)
    mod = _module(to_python(model))
    sql = to_sql(model, "t")
    out = _run_sql(sql, X)
    names = list(mod.SCORES)
    assert list(out["prediction"]) == list(pred)
    sql_scores = out[names].to_numpy(dtype=np.float64)
    rows = X.to_dict("records")
    py_scores = np.array([mod.score(r) for r in rows], dtype=np.float64)
    np.testing.assert_allclose(sql_scores, scores, rtol=0, atol=1e-12)
    np.testing.assert_allclose(py_scores, scores, rtol=0, atol=1e-12)
    if "not on a power-of-two grid" not in sql:  # the same doubles: same constants, same order of additions
        assert np.array_equal(sql_scores, scores) and np.array_equal(py_scores, scores)
    assert [mod.predict(r) for r in rows] == list(pred)
    assert [mod.predict(X.iloc[i]) for i in range(min(len(X), 5))] == list(pred[:5])  # a pandas row (numpy values)


def _binary_data(K: int, n: int = 120, d: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.integers(0, 2, (n, d)), columns=[f"f{i}" for i in range(d)])
    y = ((X.f0 + (K - 1) * X.f1 + rng.integers(0, 2, n)) % K).map(lambda k: f"c{k}")
    return X, y


def test_every_registered_model_is_classified():
    assert set(REGISTRY) == EXPORTABLE | set(REFUSED), "classify the new model here (exportable or refused)"


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("name", sorted(EXPORTABLE))
def test_export_gives_predict_on_every_row(name, K):
    spec = REGISTRY[name]
    model = spec.make(**spec.test_params, **FAST.get(name, {}))
    if K > model._max_classes:
        pytest.skip(f"{name} learns two classes")
    X, y = _binary_data(K)
    params = {"random_state": 1} if "random_state" in model.get_params() else {}
    if spec.private:
        params["classes"] = [f"c{k}" for k in range(K)]
    model.set_params(**params).fit(X, y)
    _check_export(model, X)


@pytest.mark.parametrize("name", sorted(EXPORTABLE - {"greedy-rule-list"}))
def test_a_model_fitted_on_zero_records_exports(name):
    """With a declared label set a private fit succeeds on zero records (n is private): its export too (a rule
    list of the default rule alone, all-zero shapes, ...)."""
    spec = REGISTRY[name]
    X, y = _binary_data(3)
    model = spec.make(**spec.test_params, **FAST.get(name, {}), classes=["c0", "c1", "c2"], random_state=0)
    model.fit(X.iloc[:0], y.iloc[:0])
    _check_export(model, X.iloc[:20])


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_model_says_why(name):
    spec = REGISTRY[name]
    X, y = _binary_data(2)
    X_public = X.iloc[:60]
    model = spec.make(**{k: v for k, v in spec.test_params.items() if k != "n_public"}, random_state=0)
    model.fit(X, y, X_public=X_public) if "n_public" in spec.test_params else model.fit(X, y)
    with pytest.raises(NotExportableError, match=REFUSED[name]):
        to_sql(model)
    with pytest.raises(NotExportableError, match="Exportable: "):
        to_python(model)



def test_a_local_dp_model_is_refused_with_the_reason():
    from dpglass.local.classifier import LDPHistogramClassifier

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (400, 1))
    model = LDPHistogramClassifier(alpha=1.0, bounds=([0.0], [1.0]), randomizer="laplace", random_state=0,
                                   classes=[0, 1]).fit(X, (X[:, 0] > 0.5).astype(int))
    with pytest.raises(NotExportableError, match="local-DP"):
        to_sql(model)


def test_names_and_labels_cannot_escape_their_quotes():
    """Column names and labels are the file's text: quoted in SQL (identifiers, strings), repr'd in Python, on one
    comment line in the headers."""
    X, y = _binary_data(2)
    X.columns = ['a"""\nimport os', "b'; DROP TABLE t; --", "c\n", "d", "e"]
    y = y.map({"c0": "it's", "c1": 'say """hi"""'})
    model = DPLogisticRegression(classes=["it's", 'say """hi"""'], random_state=0, epsilon=5.0).fit(X, y)
    _check_export(model, X)
    assert 'FROM "main"."t" AS t' in to_sql(model, "main.t")


def test_boolean_columns_are_read_as_predict_reads_them():
    X, y = _binary_data(2)
    X = X.astype(bool)
    model = REGISTRY["dp-rule-list"].make(max_length=3, epsilon=2.0, classes=["c0", "c1"], random_state=0).fit(X, y)
    _check_export(model, X)


def test_gbdt_on_numeric_columns_reads_the_bounds_and_the_edges():
    rng = np.random.default_rng(3)
    n = 300
    X = pd.DataFrame({"a": rng.normal(0, 2, n), "b": rng.integers(0, 2, n), "c": rng.uniform(-1, 5, n)})
    y = np.where(X.a + X.b - 0.5 * X.c + rng.normal(0, 1, n) > 0, "yes", "no")
    for K_y, kw in ((y, {}), (np.where(X.c > 3, "hi", y), {"classes": ["no", "yes", "hi"]})):
        model = DPGradientBoostingClassifier(n_estimators=4, max_depth=2, epsilon=2.0, bounds=[(-3, 3), None, (0, 4)],
                                             random_state=2, accountant="rdp",
                                             **({"classes": ["no", "yes"]} | kw)).fit(X, K_y)
        # values beyond the bounds (clipped by predict) and on the edges themselves
        edges = [float(e) for e in model.edges_[0]]
        extra = pd.DataFrame({"a": [-10.0, 10.0] + edges, "b": [0, 1] + [1] * len(edges),
                              "c": [-5.0, 9.0] + [float(model.edges_[2][0])] * len(edges)})
        _check_export(model, pd.concat([X, extra], ignore_index=True))



@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_gam_on_its_own_columns_reads_bins_codes_and_the_missing_bin(binning):
    """dp-gam's columns: numeric with bounds (clipped, binned at its edges), category codes, 0/1, and the
    missing bin of the columns that declare it."""
    rng = np.random.default_rng(5)
    n = 300
    X = pd.DataFrame({"a": rng.normal(0, 2, n), "code": rng.integers(0, 4, n).astype(float),
                      "b": rng.integers(0, 2, n).astype(float), "c": rng.uniform(-1, 5, n)})
    for col in ("a", "code", "b"):
        X.loc[rng.random(n) < 0.1, col] = np.nan
    y = np.where(np.nan_to_num(X.a) + X.code.fillna(1) - X.c / 2 + rng.normal(0, 1, n) > 0.5, "yes", "no")
    for labels, classes in ((y, ["no", "yes"]), (np.where(X.c > 3.5, "hi", y), ["no", "yes", "hi"])):
        model = REGISTRY["dp-gam"].make(n_cycles=1, epsilon=3.0, bounds=[(-3, 3), None, None, (0, 4)],
                                        categories=[None, 4, None, None], missing=[True, True, True, False],
                                        max_bins=6, binning=binning, classes=classes, random_state=2,
                                        accountant="rdp")
        model.fit(X, labels)
        edges = [float(e) for e in model.edges_[0]]
        extra = pd.DataFrame({"a": [-10.0, 10.0, *edges], "code": [0.0, 3.0] + [np.nan] * len(edges),
                              "b": [1.0, 0.0] + [np.nan] * len(edges), "c": [-5.0, 9.0] + [4.0] * len(edges)})
        _check_export(model, pd.concat([X, extra], ignore_index=True))


SCHEMA = Schema([numeric("age", 18, 90, thresholds="grid", n_thresholds=3, missing="none"),
                 numeric("hours", 0, 80, thresholds=(20, 40.5), integer=True),
                 categorical("job", ["clerk", "exec", "farmer", "7"], missing="none"),
                 binary("married", missing="none")], target="y")


def _raw_table(n: int = 160, seed: int = 0, K: int = 2):
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 95, n)
    age[rng.random(n) < 0.15] = np.nan
    job = rng.choice(["clerk", "exec", "farmer", "7", "pilot"], n).astype(object)
    job[rng.random(n) < 0.1] = None  # missing, and "pilot" outside the list: no indicator (missing="none")
    married = rng.integers(0, 2, n).astype(float)
    married[rng.random(n) < 0.1] = np.nan
    X = pd.DataFrame({"age": age, "hours": rng.integers(0, 81, n).astype(float), "job": job, "married": married})
    score = np.nan_to_num(age, nan=40) / 30 + (job == "exec") + married - X.hours / 40
    y = np.digitize(score + rng.normal(0, 0.5, n), [1.0, 2.0][: K - 1])
    return X, np.array([f"c{k}" for k in range(K)])[y]


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("name", sorted(EXPORTABLE - {"greedy-rule-list"}))
def test_a_pipeline_reads_the_raw_columns(name, K):
    spec = REGISTRY[name]
    inner = spec.make(**{k: v for k, v in spec.test_params.items() if k != "epsilon"}, **FAST.get(name, {}))
    if K > inner._max_classes:
        pytest.skip(f"{name} learns two classes")
    X, y = _raw_table(K=K)
    inner.set_params(classes=[f"c{k}" for k in range(K)])
    model = DPPipeline(schema=SCHEMA, model=inner, epsilon=3.0, random_state=4).fit(X, y)
    _check_export(model, X)


def test_rows_predict_refuses_are_null_in_sql_and_an_error_in_python():
    X, y = _raw_table()
    model = DPPipeline(schema=SCHEMA, model=DPLogisticRegression(classes=["c0", "c1"]), random_state=0).fit(X, y)
    bad = X.iloc[:3].copy()
    bad["hours"] = [np.nan, 20.5, 30.0]  # missing (the column says "error"), a fraction in an integer column, fine
    out = _run_sql(to_sql(model, "t"), bad)
    assert out["prediction"].isna().tolist() == [True, True, False]
    assert out["score"].isna().tolist() == [True, True, False]
    mod = _module(to_python(model))
    for row in bad.iloc[:2].to_dict("records"):
        with pytest.raises(ValueError, match="hours"):
            mod.predict(row)
    assert mod.predict(bad.iloc[2].to_dict()) == model.predict(bad.iloc[2:])[0]
    plain = DPLogisticRegression(classes=["c0", "c1"], random_state=0).fit(*_binary_data(2))
    X2 = _binary_data(2)[0].iloc[:2].copy()
    X2.loc[0, "f3"] = 2
    assert _run_sql(to_sql(plain, "t"), X2)["prediction"].isna().tolist() == [True, False]
    with pytest.raises(ValueError, match="f3"):
        _module(to_python(plain)).predict(X2.iloc[0].to_dict())


def test_sql_numbers_are_read_exactly():
    """Every double the SQL writes reads back as itself in SQLite (before 3.43 it misreads some 17-digit
    decimals by one ulp: the export writes those as an exact integer scaled by powers of two)."""
    from dpglass.export.sql import _number

    misread = [4.664542332531044, -0.3837909419477952, -5.398673997639166]  # by SQLite 3.40.1 as decimals
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(0, 3, 6000), rng.uniform(0, 1, 2000), 10.0 ** rng.uniform(-307, 307, 500),
                             np.round(rng.uniform(-99, 99, 500) * 4) / 4, misread,
                             [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -0.0, 0.1, 1e-5, 2.0**60,
                              expit_threshold()]]).tolist()
    con = sqlite3.connect(":memory:")
    for i in range(0, len(values), 500):
        chunk = values[i:i + 500]
        assert list(con.execute("SELECT " + ", ".join(_number(v) for v in chunk)).fetchone()) == chunk
    assert _number(37.5) == "CAST(37.5 AS DOUBLE PRECISION)"  # a short exact decimal stays readable
    if sqlite3.sqlite_version_info < (3, 43):  # the other side: the plain decimals are misread here
        plain = con.execute("SELECT " + ", ".join(f"CAST({v!r} AS DOUBLE PRECISION)" for v in misread)).fetchone()
        assert list(plain) != misread


def test_ties_go_where_predict_sends_them():
    """Two classes: classes_[1] from the first double where expit(s) > 1 - expit(s) (expit(0) = 1/2 is a tie, to
    classes_[0]); K classes: equal scores to the first class."""
    t = expit_threshold()
    assert 0 < t < 1e-15
    X, y = _binary_data(2)
    model = DPGradientBoostingClassifier(n_estimators=2, epsilon=1.0, classes=["c0", "c1"], random_state=0,
                                         accountant="rdp").fit(X, y)
    for tree in model.estimators_:
        tree.value[:] = 0.0
    for s in (0.0, math.nextafter(t, 0.0), t, -t, 1e-300):
        model.init_score_ = s
        _check_export(model, X.iloc[:3])
    X3, y3 = _binary_data(3)
    model = DPGradientBoostingClassifier(n_estimators=3, epsilon=1.0, classes=["c0", "c1", "c2"],
                                         random_state=0, accountant="rdp").fit(X3, y3)
    for tree in model.estimators_:
        tree.value[:] = 0.0
    for init in ([0.5, 0.5, 0.1], [0.1, 0.5, 0.5], [0.2, 0.1, 0.2], [0.0, 0.0, 0.0]):
        model.init_score_ = np.array(init)
        _check_export(model, X3.iloc[:3])


def test_a_selected_model_exports_as_itself(tmp_path):
    X, y = _binary_data(2, n=200)
    search = PrivateGridSearch(estimator=DPLogisticRegression(classes=["c0", "c1"]),
                               param_grid={"alpha": [0.5, 2.0]}, epsilon=2.0, random_state=0).fit(X, y)
    _check_export(search, X)
    path = tmp_path / "search.json"
    search.best_estimator_.save(path) if not hasattr(search, "save") else search.save(path)
    mod = _module(export_file(path, "python"))
    assert [mod.predict(r) for r in X.to_dict("records")] == list(search.predict(X))


def test_an_edited_file_is_refused_before_anything_is_written(tmp_path, capsys):
    X, y = _binary_data(2)
    model = REGISTRY["dp-rule-list"].make(max_length=2, epsilon=1.0, classes=["c0", "c1"], random_state=0).fit(X, y)
    path = tmp_path / "model.json"
    model.save(path)
    assert main(["export", str(path), "--to", "sql", "--table", "people", "--out", str(tmp_path / "m.sql")]) == 0
    assert 'FROM "people" AS t' in (tmp_path / "m.sql").read_text()
    assert main(["export", str(path), "--to", "python"]) == 0
    assert "def predict(row):" in capsys.readouterr().out
    data = json.loads(path.read_text())
    data["default_rule"]["counts"][0] += 0.5  # off the noisy counts' integer domain
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="edited.json"):
        export_file(edited, "sql")
    out = tmp_path / "edited.sql"
    assert main(["export", str(edited), "--to", "sql", "--out", str(out)]) == 2
    assert not out.exists()
    assert "dpglass export: error:" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------ PostgreSQL
#: ``psql`` arguments of a scratch PostgreSQL database (e.g. "-h /tmp/pg -p 54329 -U postgres"); unset: skipped.
PSQL = os.environ.get("DPGLASS_TEST_PSQL")


def _run_psql(sql: str, frame: pd.DataFrame) -> pd.DataFrame:
    cmd = ["psql", *shlex.split(PSQL), "-v", "ON_ERROR_STOP=1", "-q"]
    types_ = [f'"{c}" ' + ("TEXT" if pd.api.types.infer_dtype(frame[c], skipna=True) in ("string", "mixed")
                           else "DOUBLE PRECISION") for c in frame.columns]
    csv = frame.to_csv(index=False, header=False, float_format=lambda v: repr(float(v)))
    load = f"DROP TABLE IF EXISTS t; CREATE TABLE t ({', '.join(types_)});\nCOPY t FROM STDIN WITH (FORMAT csv);\n"
    done = subprocess.run(cmd, input=load + csv + "\\.\n", check=False, text=True, capture_output=True)
    assert done.returncode == 0, done.stderr
    done = subprocess.run(cmd + ["--csv", "-c", sql.rstrip().rstrip(";")], check=False, text=True, capture_output=True)
    assert done.returncode == 0, done.stderr
    return pd.read_csv(io.StringIO(done.stdout), keep_default_na=False, na_values=[""])


@pytest.mark.skipif(not PSQL or shutil.which("psql") is None,
                    reason="set DPGLASS_TEST_PSQL to the psql arguments of a scratch PostgreSQL database")
@pytest.mark.parametrize("K", [2, 3])
def test_postgresql_runs_the_same_sql(K):
    """Every exportable model on 0/1 columns and through a DPPipeline on raw columns: PostgreSQL's labels and
    score doubles are predict's and decision_function's."""
    labels = [f"c{k}" for k in range(K)]
    X01, y01 = _binary_data(K)
    X, y = _raw_table(K=K)
    for name in sorted(EXPORTABLE):
        spec = REGISTRY[name]
        params = {k: v for k, v in spec.test_params.items() if k != "epsilon"}
        fitted = [(spec.make(**params, **({"classes": labels, "random_state": 1} if spec.private else {}),
                             **FAST.get(name, {})).fit(X01, y01), X01)]
        if spec.private:
            inner = spec.make(**params, **FAST.get(name, {}), classes=labels)
            fitted.append((DPPipeline(schema=SCHEMA, model=inner, epsilon=3.0, random_state=4).fit(X, y), X))
        for model, data in fitted:
            sql = to_sql(model, "t")
            out = _run_psql(sql, data)
            assert list(out["prediction"].astype(str)) == [str(p) for p in model.predict(data)], name
            got = out[list(_module(to_python(model)).SCORES)].to_numpy(dtype=np.float64)
            want = _model_scores(model, data)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
            assert "not on a power-of-two grid" in sql or np.array_equal(got, want), name


@pytest.mark.parametrize("edit", ["cut", "label", "shape"])
def test_an_edited_pipeline_file_is_refused(tmp_path, edit):
    X, y = _raw_table()
    model = DPPipeline(schema=SCHEMA, model=REGISTRY["dp-gam"].make(n_cycles=1, accountant="rdp", classes=["c0", "c1"]),
                       epsilon=3.0, random_state=0).fit(X, y)
    data = model.to_dict()
    if edit == "cut":
        data["encoding"]["schema"]["columns"][0]["bounds"] = [18, 95]
    elif edit == "label":
        data["classes"] = ["c0", "c9"]
    else:
        data["inner_model"]["shapes"][0][0][0] += 1.0
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="edited.json"):
        export_file(path, "python")


@pytest.mark.parametrize("name", ["dp-gam", "dp-gbdt", "dp-rule-list"])
def test_the_cli_loop_fit_export_predict_agrees(tmp_path, capsys, name):
    """`dpglass fit --data --schema` then `dpglass export`: the SQL over the CSV's rows (loaded as text and
    numbers, as a database would hold them) and the Python module give `dpglass predict`'s labels."""
    X, y = _raw_table(n=120, seed=7, K=3)
    data, schema, model = tmp_path / "raw.csv", tmp_path / "schema.json", tmp_path / "m.json"
    X.assign(y=y).to_csv(data, index=False)
    schema.write_text(json.dumps(SCHEMA.to_dict()))
    params = ["--param", "n_cycles=1", "--param", "accountant=rdp"] if name == "dp-gam" else (
        ["--param", "n_estimators=3", "--param", "accountant=rdp"] if name == "dp-gbdt" else [])
    assert main(["fit", "--data", str(data), "--target", "y", "--schema", str(schema), "--model", name,
                 "--epsilon", "3", "--classes", "c0,c1,c2", "--seed", "0", "--out", str(model), *params]) == 0
    assert main(["predict", "--model", str(model), "--data", str(data), "--out", str(tmp_path / "p.csv")]) == 0
    expected = pd.read_csv(tmp_path / "p.csv")["prediction"].astype(str).tolist()
    capsys.readouterr()
    assert main(["export", str(model), "--to", "sql", "--table", "t", "--out", str(tmp_path / "m.sql")]) == 0
    assert main(["export", str(model), "--to", "python", "--out", str(tmp_path / "m.py")]) == 0
    frame = pd.read_csv(data, dtype={"job": str}).drop(columns="y")
    assert _run_sql((tmp_path / "m.sql").read_text(), frame)["prediction"].astype(str).tolist() == expected
    mod = _module((tmp_path / "m.py").read_text())
    assert [str(mod.predict(r)) for r in frame.to_dict("records")] == expected
