"""Multiclass (issue 31), registry-driven: every model that learns K classes, and every one that does not.

A family becomes multiclass by raising ``_max_classes`` on its estimator class;
from then on every test here runs on it, through the registry
(:func:`dpglass.registry.list_estimators`): fit on 3-class 0/1 data,
``predict_proba`` with K columns in ``classes_`` order, string labels, the
printout in the table's labels, a saved file that loads and verifies, the
artifact check on 3-class data (the model and the CLI's output), the CLI,
:class:`~dpglass.models.DPPipeline` and
:class:`~dpglass.models.PrivateGridSearch` with three classes.  A binary-only
model must refuse a 3-class target in scikit-learn's words, naming itself.

:data:`EXPECTED_MULTICLASS` lists the registry names that must be multiclass
(the lead adds each family as it lands), so that these tests cannot silently
run on nothing.  Meanwhile (and always) the paths that are not a family's
(CLI, pipeline, grid search) also run on a test-only multiclass estimator,
``tests/multiclass_toy.py``.
"""

import io
import json
import os
import sys

import numpy as np
import pandas as pd
import pytest

from dpglass.audit.artifact import deterministic_leaks, model_artifact
from dpglass.cli import main
from dpglass.exceptions import DataValidationError, ModelFileError
from dpglass.models import DPPipeline, load_model
from dpglass.registry import REGISTRY, list_estimators

sys.path.insert(0, os.path.dirname(__file__))
from multiclass_toy import TOY_SPEC  # noqa: E402

#: Registry names that must learn K classes (``_max_classes > 2``); the lead adds each family as it lands.
EXPECTED_MULTICLASS: frozenset = frozenset({"greedy-rule-list", "dp-rule-list", "smooth-boost-stumps", "smooth-boost-trees",
                                            "dp-logistic-regression", "dp-gbdt", "subsample-aggregate", "dp-bag",
                                            "dp-gam"})

MULTI = [s for s in list_estimators() if s.cls._max_classes > 2]
BINARY_ONLY = [s for s in list_estimators() if s.cls._max_classes <= 2]
PRIVATE_MULTI = [s for s in MULTI if s.private]
LABELS = ["Gentoo", "Adelie", "Chinstrap"]  # declared in this (unsorted) order: predict_proba's column order
SEEDS = range(10)
#: Toy save/load: the shared file check (models/_verify._check_top_level) accepts two labels only, so far.
def three_class_data(n=240, d=5, seed=3):
    """0/1 features, labels 0, 1, 2: x0 says 'class 1', x1 says 'class 2' (each right 85% of the time)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = (rng.random((n, d)) < 0.5).astype(np.uint8)
    X[:, 0] = np.where(rng.random(n) < 0.85, y == 1, rng.random(n) < 0.5)
    X[:, 1] = np.where(rng.random(n) < 0.85, y == 2, rng.random(n) < 0.5)
    return X, y.astype(np.int64)


def _make(spec, seed=0, **extra):
    params = {**spec.test_params, **extra}
    if "random_state" in spec.cls().get_params():
        params["random_state"] = seed
    return spec.make(**params)


@pytest.fixture
def toy_registered(monkeypatch):
    """The test-only multiclass model in the registry (the CLI, load_model and the pipeline find it there)."""
    monkeypatch.setitem(REGISTRY, TOY_SPEC.name, TOY_SPEC)
    return TOY_SPEC


def _paths_models():
    """Every multiclass registry model, and the toy (whose file check waits for models/_verify)."""
    return [pytest.param(s.name, id=s.name) for s in PRIVATE_MULTI] + [pytest.param(TOY_SPEC.name, id="toy")]


@pytest.fixture
def multi_spec(request, monkeypatch):
    name = request.param
    if name == TOY_SPEC.name:
        monkeypatch.setitem(REGISTRY, TOY_SPEC.name, TOY_SPEC)
    return REGISTRY[name]


# ------------------------------------------------------------ the registry
def test_expected_families_are_multiclass():
    """The set of multiclass registry names holds every name the lead listed: the tests below are not vacuous."""
    names = {s.name for s in MULTI}
    assert names >= EXPECTED_MULTICLASS, f"listed as multiclass but binary-only: {sorted(EXPECTED_MULTICLASS - names)}"


@pytest.mark.parametrize("spec", BINARY_ONLY, ids=lambda s: s.name)
def test_binary_only_models_refuse_three_classes_naming_themselves(spec):
    X, y = three_class_data()
    with pytest.raises(DataValidationError) as err:
        _make(spec).fit(X, np.array(LABELS)[y])
    message = str(err.value)
    assert message.startswith("Only binary classification is supported"), message
    assert spec.cls.__name__ in message, f"the error does not name the model: {message}"


def test_models_listing_says_how_many_classes_each_learns(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for spec in list_estimators():
        at = next(i for i, line in enumerate(lines) if line.startswith(f"{spec.name:24s} "))
        want = "two classes" if spec.cls._max_classes <= 2 else f"K classes (up to {spec.cls._max_classes})"
        assert lines[at + 2].strip() == f"learns: {want}", (spec.name, lines[at:at + 3])


# ------------------------------------------------------------ each multiclass model
@pytest.mark.parametrize("spec", MULTI, ids=lambda s: s.name)
def test_fit_predict_proba_three_classes(spec):
    X, y = three_class_data()
    model = _make(spec).fit(X, y)
    assert list(model.classes_) == [0, 1, 2]
    proba = model.predict_proba(X)
    assert proba.shape == (len(y), 3)
    assert np.all(proba >= 0) and np.allclose(proba.sum(axis=1), 1.0)
    pred = model.predict(X)
    assert set(np.unique(pred)) <= {0, 1, 2}
    assert np.array_equal(pred, model.classes_[np.argmax(proba, axis=1)])


@pytest.mark.parametrize("spec", MULTI, ids=lambda s: s.name)
def test_string_labels_in_declared_order_and_printout(spec):
    X, y = three_class_data()
    labels = np.array(["Adelie", "Chinstrap", "Gentoo"])[y]  # codes sorted; declared unsorted below
    model = _make(spec, classes=LABELS).fit(X, labels) if "classes" in spec.cls().get_params() \
        else _make(spec).fit(X, labels)
    order = LABELS if "classes" in spec.cls().get_params() else sorted(LABELS)
    assert list(model.classes_) == order
    proba, pred = model.predict_proba(X), model.predict(X)
    assert proba.shape == (len(y), 3) and set(pred) <= set(LABELS)
    assert np.array_equal(pred, model.classes_[np.argmax(proba, axis=1)])
    # column k is classes_[k]: on records where it is most probable, the prediction is that label
    for k, label in enumerate(model.classes_):
        assert np.all(pred[np.argmax(proba, axis=1) == k] == label)
    text = str(model)
    assert any(label in text for label in LABELS), f"the printout names no label:\n{text}"


@pytest.mark.parametrize("spec", MULTI, ids=lambda s: s.name)
def test_saved_file_loads_verifies_and_predicts_the_same(spec, tmp_path):
    X, y = three_class_data()
    model = _make(spec, seed=4).fit(X, np.array(LABELS)[y])
    path = tmp_path / "model.json"
    model.save(path)
    loaded = load_model(path)  # verifies the file
    assert list(loaded.classes_) == list(model.classes_)
    assert np.array_equal(loaded.predict(X), model.predict(X))
    assert np.allclose(loaded.predict_proba(X), model.predict_proba(X))
    data = json.loads(path.read_text())
    for edit in (lambda d: d["classes"].pop(), lambda d: d["classes"].__setitem__(2, d["classes"][0])):
        bad = json.loads(json.dumps(data))
        edit(bad)
        path.write_text(json.dumps(bad))
        with pytest.raises(ModelFileError):
            load_model(path)


@pytest.mark.parametrize("spec", PRIVATE_MULTI, ids=lambda s: s.name)
def test_no_published_field_is_a_deterministic_function_of_three_class_data(spec):
    X, y = three_class_data(n=160)
    drop = int(np.flatnonzero(y == 2)[0])  # a record of the third class: its count, the weights, n all move
    X2, y2 = np.delete(X, drop, axis=0), np.delete(y, drop)
    side = lambda A, b: [model_artifact(_make(spec, seed=s, classes=[0, 1, 2]).fit(A, b)) for s in SEEDS]
    leaks = deterministic_leaks(side(X, y), side(X2, y2))
    assert leaks == [], f"{spec.name} publishes deterministic functions of 3-class data: {leaks[:5]}"


# ------------------------------------------------------------ the CLI
def _csv(path, X, labels):
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(label=labels)
    frame.to_csv(path, index=False)


def _fit_argv(spec, path, seed, *extra):
    params = [f"--param={k}={json.dumps(v)}" for k, v in spec.test_params.items() if k != "epsilon"]
    return ["fit", "--data", str(path), "--target", "label", "--model", spec.name, "--epsilon", "1",
            "--classes", "A,B,C", "--seed", str(seed), *params, *extra]


@pytest.mark.parametrize("multi_spec", _paths_models(), indirect=True)
def test_cli_output_on_three_classes_is_not_a_deterministic_function_of_the_data(multi_spec, tmp_path, capsys):
    X, y = three_class_data(n=120)
    labels = np.array(["A", "B", "C"])[y]
    path = tmp_path / "data.csv"  # the same file name on both sides
    drop = int(np.flatnonzero(y == 2)[0])
    outputs = {}
    for name, keep in (("D", np.ones(len(y), bool)), ("D-1", np.arange(len(y)) != drop)):
        _csv(path, X[keep], labels[keep])
        runs = []
        for s in range(6):
            assert main(_fit_argv(multi_spec, path, s)) == 0
            runs.append({"stdout": capsys.readouterr().out.splitlines()})
        outputs[name] = runs
    assert deterministic_leaks(outputs["D"], outputs["D-1"]) == []
    printed = "\n".join(line for run in outputs["D"] for line in run["stdout"])
    assert any(label in printed for label in ("A", "B", "C")) and "held-out accuracy" in printed


@pytest.mark.parametrize("multi_spec", [pytest.param(s.name, id=s.name) for s in PRIVATE_MULTI]
                         + [pytest.param(TOY_SPEC.name, id="toy")], indirect=True)
def test_cli_fit_save_predict_three_classes(multi_spec, tmp_path, capsys):
    X, y = three_class_data()
    labels = np.array(["A", "B", "C"])[y]
    _csv(tmp_path / "train.csv", X, labels)
    out = tmp_path / "model.json"
    assert main(_fit_argv(multi_spec, tmp_path / "train.csv", 1, "--out", str(out))) == 0
    capsys.readouterr()
    assert list(load_model(out).classes_) == ["A", "B", "C"]  # the file verifies
    pd.DataFrame(X[:20], columns=[f"f{j}" for j in range(X.shape[1])]).to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", "--model", str(out), "--data", str(tmp_path / "new.csv"), "--proba"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(printed.columns) == ["prediction", "p(A)", "p(B)", "p(C)"]
    assert set(printed["prediction"]) <= {"A", "B", "C"}


@pytest.mark.parametrize("spec", BINARY_ONLY[:1], ids=lambda s: s.name)
def test_cli_refuses_three_classes_for_a_binary_model(spec, tmp_path, capsys):
    X, y = three_class_data(n=60)
    _csv(tmp_path / "d.csv", X, np.array(["A", "B", "C"])[y])
    code = main(["fit", "--data", str(tmp_path / "d.csv"), "--target", "label", "--model", spec.name])
    err = capsys.readouterr().err
    assert code == 2 and "Only binary classification is supported" in err and spec.cls.__name__ in err, err


def test_cli_schema_notes_a_three_class_target(tmp_path, capsys):
    frame = pd.DataFrame({"bill": [39.1, 46.5, 49.3, 40.3], "island": ["Biscoe", "Dream", "Biscoe", "Torgersen"],
                          "species": ["Adelie", "Chinstrap", "Gentoo", "Adelie"]})
    frame.to_csv(tmp_path / "penguins.csv", index=False)
    assert main(["schema", "--data", str(tmp_path / "penguins.csv"), "--target", "species"]) == 0
    captured = capsys.readouterr()
    template = json.loads(captured.out)
    assert template["target"] == "species"
    assert "more than two labels" in captured.err and "--classes A,B,C" in captured.err


# ------------------------------------------------------------ DPPipeline, PrivateGridSearch
def raw_three_class(n=300, seed=5):
    """A raw table (a numeric and a categorical column, an id) with a three-class string target."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    frame = pd.DataFrame({
        "bill": np.clip(35 + 6 * y + rng.normal(0, 2.5, n), 30, 60).round(1),
        "island": np.where(rng.random(n) < 0.8, np.array(["Torgersen", "Dream", "Biscoe"])[y],
                           rng.choice(["Torgersen", "Dream", "Biscoe"], n)),
        "id": np.arange(n),
    })
    return frame, np.array(["Adelie", "Chinstrap", "Gentoo"])[y]


SCHEMA = {"target": "species", "columns": [
    {"name": "bill", "kind": "numeric", "bounds": [30, 60], "thresholds": "grid", "n_thresholds": 5},
    {"name": "island", "kind": "categorical", "categories": ["Biscoe", "Dream", "Torgersen"]},
    {"name": "id", "kind": "ignore"},
]}


@pytest.mark.parametrize("multi_spec", _paths_models(), indirect=True)
def test_cli_fit_raw_table_through_the_pipeline_with_three_classes(multi_spec, tmp_path, capsys):
    frame, y = raw_three_class()
    frame.assign(species=y).to_csv(tmp_path / "penguins.csv", index=False)
    params = [f"--param={k}={json.dumps(v)}" for k, v in multi_spec.test_params.items() if k != "epsilon"]
    assert main(["fit", "--data", str(tmp_path / "penguins.csv"), "--target", "species", "--model", multi_spec.name,
                 "--bounds", "bill=30:60", "--categorical", "island=Biscoe,Dream,Torgersen", "--drop", "id",
                 "--classes", "Gentoo,Adelie,Chinstrap", "--epsilon", "2", "--seed", "3", *params]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{multi_spec.name} on ") and "DPPipeline" in out and "held-out accuracy" in out
    assert any(label in out for label in LABELS)


def _pipeline(spec, seed=0, **kw):
    inner = {k: v for k, v in spec.test_params.items() if k != "epsilon"}
    if "classes" in spec.cls().get_params():
        inner["classes"] = LABELS
    return DPPipeline(schema=SCHEMA, model=spec.make(**inner), epsilon=2.0, random_state=seed, **kw)


@pytest.mark.parametrize("multi_spec", _paths_models(), indirect=True)
def test_pipeline_on_a_three_class_table(multi_spec):
    frame, y = raw_three_class()
    model = _pipeline(multi_spec).fit(frame, y)
    assert list(model.classes_) == list(model.model_.classes_)
    assert set(model.classes_) == set(LABELS)
    proba = model.predict_proba(frame)
    assert proba.shape == (len(y), 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert set(model.predict(frame)) <= set(LABELS)
    assert model.__sklearn_tags__().classifier_tags.multi_class  # the pipeline learns what its model learns
    assert any(label in str(model) for label in LABELS)


@pytest.mark.parametrize("multi_spec", [pytest.param(s.name, id=s.name) for s in PRIVATE_MULTI]
                         + [pytest.param(TOY_SPEC.name, id="toy")], indirect=True)
def test_pipeline_file_with_three_classes_round_trips_and_verifies(multi_spec, tmp_path):
    frame, y = raw_three_class()
    model = _pipeline(multi_spec, seed=1).fit(frame, y)
    path = tmp_path / "pipeline.json"
    model.save(path)
    loaded = load_model(path)
    assert np.array_equal(loaded.predict(frame), model.predict(frame))
    data = json.loads(path.read_text())
    data["classes"] = [data["classes"][1], data["classes"][0], data["classes"][2]]  # not the model's column order
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="classes"):
        load_model(path)


@pytest.mark.parametrize("multi_spec", _paths_models(), indirect=True)
def test_pipeline_artifact_on_three_classes(multi_spec):
    frame, y = raw_three_class(n=160)
    drop = int(np.flatnonzero(y == "Gentoo")[0])
    keep = np.arange(len(y)) != drop
    side = lambda F, b: [model_artifact(_pipeline(multi_spec, seed=s).fit(F, b)) for s in SEEDS]
    assert deterministic_leaks(side(frame, y), side(frame[keep].reset_index(drop=True), y[keep])) == []


def _grid(spec):
    """A small grid over one of the model's own parameters (the toy's smoothing; else the first numeric one)."""
    if spec.name == TOY_SPEC.name:
        return {"smoothing": [0.5, 2.0]}
    params = spec.make(**spec.test_params).get_params()
    if "n_cycles" in params:  # dp-gam
        return {"n_cycles": [1, 2]}
    for key in ("max_length", "n_rounds", "n_estimators", "n_teachers"):
        if key in params and isinstance(params[key], int) and params[key] >= 2:
            return {key: [params[key] - 1, params[key]]}
    if "fit_intercept" in params:
        return {"fit_intercept": [True, False]}
    return {}


def _search(estimator, grid, X, y):
    from dpglass.models import PrivateGridSearch

    return PrivateGridSearch(estimator=estimator, param_grid=grid, epsilon=3.0, stopping_probability=0.5,
                             random_state=0).fit(X, y)


def _searchable_on_two_classes(spec, grid) -> bool:
    """Whether PrivateGridSearch searches the model at all (DP-Bag always spends delta: it is refused, K or not)."""
    from dpglass.exceptions import InvalidParameterError

    X, y = three_class_data(n=120)
    inner = {k: v for k, v in spec.test_params.items() if k != "epsilon"}
    try:
        _search(spec.make(**inner), grid, X, np.minimum(y, 1))
    except InvalidParameterError:
        return False
    return True


@pytest.mark.parametrize("multi_spec", _paths_models(), indirect=True)
def test_private_grid_search_with_three_classes(multi_spec):
    grid = _grid(multi_spec)
    assert grid, f"no small grid for {multi_spec.name}: add one to _grid"
    if not _searchable_on_two_classes(multi_spec, grid):
        pytest.skip(f"PrivateGridSearch does not search {multi_spec.name} on two classes either")
    X, y = three_class_data(n=400)
    labels = np.array(LABELS)[y]
    inner = {k: v for k, v in multi_spec.test_params.items() if k != "epsilon"}
    search = _search(multi_spec.make(**inner), grid, X, labels)
    assert set(search.classes_) == set(LABELS)
    proba = search.predict_proba(X)
    assert proba.shape == (len(y), 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert set(search.predict(X)) <= set(LABELS)
    assert list(search.best_estimator_.classes_) == list(search.classes_)
    eps, _ = search.privacy_ledger_.total()
    assert eps <= 3.0 * (1 + 1e-9)


@pytest.mark.parametrize("multi_spec", _paths_models(), indirect=True)
def test_private_grid_search_over_a_three_class_pipeline(multi_spec):
    grid = _grid(multi_spec)
    assert grid, f"no small grid for {multi_spec.name}: add one to _grid"
    if not _searchable_on_two_classes(multi_spec, grid):
        pytest.skip(f"PrivateGridSearch does not search {multi_spec.name} on two classes either")
    frame, y = raw_three_class(n=400)
    search = _search(_pipeline(multi_spec), {f"model__{k}": v for k, v in grid.items()}, frame, y)
    assert search.predict_proba(frame).shape == (len(y), 3)
    assert set(search.predict(frame)) <= set(LABELS)


def test_a_pipeline_file_whose_classes_are_not_its_models_is_refused(tmp_path):
    """Two classes too: the pipeline's classes are its model's, in its order (predict_proba's columns)."""
    from dpglass.models import DPRuleListClassifier

    frame, y = raw_three_class()
    two = np.where(y == "Adelie", "Adelie", "other")
    model = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(max_length=2), epsilon=2.0, random_state=0)
    model.fit(frame, two).save(tmp_path / "p.json")
    assert list(load_model(tmp_path / "p.json").classes_) == ["Adelie", "other"]
    data = json.loads((tmp_path / "p.json").read_text())
    data["classes"] = data["classes"][::-1]
    (tmp_path / "p.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="'classes' is"):
        load_model(tmp_path / "p.json")


# ------------------------------------------------------------ the 3-class audit observes the file (review finding 4)
from dpglass.audit import audit_learner  # noqa: E402


def _two_classes_and_a_lone_third(n=24, seed=0):
    """Labels 0 and 1 (x0 says 'class 1', mostly) and one record of label 2: the neighbour without it has no
    third label at all, so a label set read from the data differs between the two with certainty."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = (rng.random((n, 3)) < 0.5).astype(np.uint8)
    X[:, 0] = np.where(rng.random(n) < 0.85, y == 1, X[:, 0])
    return np.vstack([X, [[0, 1, 1]]]), np.append(y, 2)


def _file_view(model, X):
    """What a reader of the saved file sees besides the predictions: its label set and class count (review
    finding 4: the predictions alone almost never show a rare label's presence)."""
    labels = tuple(str(c) for c in model.to_dict()["classes"])
    return labels, len(labels), tuple(str(v) for v in model.predict(np.unique(X, axis=0)))


def _audit_file_view(estimator, X, y):
    return audit_learner(estimator, X, y, neighbour=len(y) - 1, n_runs=60, claim=(1.0, 0.0), rng=0,
                         output=lambda m: _file_view(m, X))


@pytest.mark.filterwarnings("ignore::dpglass.exceptions.UnprovenGuaranteeWarning")  # DP-Bag says it is a claim
@pytest.mark.parametrize("spec", PRIVATE_MULTI, ids=lambda s: s.name)
def test_quick_three_class_audit_of_the_file_passes_with_declared_classes(spec):
    """Every private multiclass model at epsilon = 1, its label set declared, against the neighbour without the
    lone third-class record: the file's labels, class count and predictions pass a 60-run audit a side."""
    X, y = _two_classes_and_a_lone_third()
    res = _audit_file_view(_make(spec, epsilon=1.0, classes=[0, 1, 2]), X, y)
    assert res.verdict == "PASS", res.summary()


@pytest.mark.parametrize("spec", [s for s in PRIVATE_MULTI if s.name in ("dp-logistic-regression",
                                                                          "subsample-aggregate")],
                         ids=lambda s: s.name)
def test_quick_three_class_audit_of_the_file_flags_a_label_set_read_from_the_data(spec):
    """Negative control (the audit's power): the same model with ``classes=None`` reads its label set from y, so
    the file says 3 classes on one side and 2 on the other for every seed; the audit must flag it."""
    X, y = _two_classes_and_a_lone_third()
    res = _audit_file_view(_make(spec, epsilon=1.0), X, y)
    assert res.violation and res.epsilon_lower > 1.1, res.summary()


# ------------------------------------------------------------ the rule-list sweep engine (shared_fit) with K classes
@pytest.mark.parametrize("make", [lambda s: REGISTRY["dp-rule-list"].make(epsilon=2.0, random_state=s, classes=[0, 1, 2]),
                                  lambda s: REGISTRY["greedy-rule-list"].make()],
                         ids=["dp-rule-list", "greedy-rule-list"])
def test_shared_rule_list_fits_score_three_classes_as_the_fitted_model(make):
    """dpglass_experiments.shared_fit fits and scores a K-class rule list exactly as est.fit and est.score would (its
    counts were two columns before session 34): the same accuracies on training and held-out data."""
    from dpglass_experiments.shared_fit import RuleListFits

    X, y = three_class_data(n=300)
    X_ev, y_ev = three_class_data(n=120, seed=8)
    fits = RuleListFits(X, y, X_ev, y_ev, [f"x{j}" for j in range(X.shape[1])])
    for seed in range(3):
        cell = fits.fit_score(make(seed))
        model = make(seed).fit(X, y)
        assert cell.train_accuracy == pytest.approx(model.score(X, y), abs=1e-12)
        assert cell.held_out_accuracy == pytest.approx(model.score(X_ev, y_ev), abs=1e-12)
        assert 0.0 <= cell.vulnerability <= 1.0
