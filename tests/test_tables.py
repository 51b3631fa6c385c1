"""Raw tables end to end: schema, DPPipeline, the CLI on a practitioner's CSV, typed errors (issue 11)."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass import exceptions
from dpglass.cli import main
from dpglass.exceptions import ModelFileError
from dpglass.models import DPPipeline, DPRuleListClassifier, SmoothBoostClassifier, load_model
from dpglass.registry import list_estimators
from dpglass.schema import Schema, categorical, load_schema, numeric, schema_template

PRIVATE = list_estimators(private=True)
TYPED = (exceptions.InvalidParameterError, exceptions.DataValidationError, exceptions.BudgetExceededError)


def _raw(n=600, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "id": [f"r{i}" for i in range(n)],
        "age": rng.integers(17, 91, n),
        "occupation": rng.choice(["Exec-managerial", "Sales", "Craft-repair"], n),
        "hours": np.round(rng.normal(40, 12, n), 1),
    })
    signal = (frame.age > 37) & (frame.occupation == "Exec-managerial") | (frame.hours > 60)
    frame["income"] = np.where(signal ^ (rng.random(n) < 0.05), ">50K", "<=50K")
    return frame


SCHEMA = {
    "target": "income",
    "columns": [
        {"name": "id", "kind": "ignore"},
        {"name": "age", "kind": "numeric", "bounds": [17, 90], "thresholds": "grid", "n_thresholds": 4},
        {"name": "occupation", "kind": "categorical", "categories": ["Exec-managerial", "Sales", "Craft-repair"]},
        {"name": "hours", "kind": "numeric", "bounds": [0, 99], "thresholds": "dp-quantiles", "n_thresholds": 2},
    ],
}


@pytest.mark.parametrize("spec", PRIVATE, ids=lambda s: s.name)
def test_every_model_fits_a_raw_csv_through_the_cli_and_predicts_raw_records(spec, tmp_path, capsys):
    data, schema, model = tmp_path / "train.csv", tmp_path / "schema.json", tmp_path / "out" / "model.json"
    _raw().to_csv(data, index=False)
    schema.write_text(json.dumps(SCHEMA))
    model.parent.mkdir()
    params = [f"--param={k}={json.dumps(v)}" for k, v in spec.test_params.items() if k != "epsilon"]
    argv = ["fit", "--data", str(data), "--target", "income", "--schema", str(schema), "--model", spec.name,
            "--epsilon", "2", "--seed", "1", "--out", str(model), "--classes", "<=50K,>50K", *params]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a paper-claim or clipping warning is not what this test is about
        assert main(argv) == 0
    out = capsys.readouterr().out
    assert "budget spent: epsilon=2 of 2 given" in out or "budget spent: epsilon=" in out
    saved = load_model(model)
    assert isinstance(saved, DPPipeline)
    ledger = saved.privacy_ledger_
    releases = [e.release for e in ledger]
    # the encoder's spend is in it; a model that takes numbers (dp-gbdt) bins them itself: no cut points to release
    assert any(r.startswith("encoder: hours quantile") for r in releases) != saved.encoding_.numbers
    assert any(r.startswith("model: ") for r in releases)
    assert ledger.total()[0] <= 2.0 * (1 + 1e-9) and ledger.epsilon == 2.0
    # predict from raw records: columns in another order, target present, an id passed through
    new = _raw(50, seed=3)[["hours", "income", "occupation", "id", "age"]]
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", "--model", str(model), "--data", str(tmp_path / "new.csv"), "--id", "id", "--proba",
                 "--out", str(tmp_path / "pred.csv")]) == 0
    pred = pd.read_csv(tmp_path / "pred.csv")
    assert list(pred.columns[:2]) == ["id", "prediction"] and len(pred) == 50
    assert set(pred["prediction"]) <= {"<=50K", ">50K"}
    np.testing.assert_array_equal(pred["prediction"], saved.predict(new.drop(columns=["id", "income"])))


def test_printout_speaks_in_the_tables_terms():
    frame = _raw(3000)
    model = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(max_length=3), epsilon=8.0, random_state=0)
    model.fit(frame.drop(columns="income"), frame["income"])
    text = str(model)
    assert "age>" in text or "occupation=" in text or "hours>" in text
    assert ">50K" in text


@pytest.mark.parametrize("model, delta", [
    (SmoothBoostClassifier(), 1e-8),  # with the pipeline's delta: a tight accountant and its calibrated rounds
    (DPRuleListClassifier(mechanism="certified-pf", max_length=2, count_noise="gaussian", accountant="rdp"), None),
])
def test_pipeline_composes_with_the_models_accountant(model, delta):
    frame = _raw(800)
    fitted = DPPipeline(schema=SCHEMA, model=model, epsilon=1.0, delta=delta, random_state=0)
    fitted.fit(frame.drop(columns="income"), frame["income"])
    ledger = fitted.privacy_ledger_
    assert ledger.accountant == fitted.model_.privacy_ledger_.accountant != "basic"
    assert ledger.total()[0] <= 1.0 * (1 + 1e-9)
    again = DPPipeline.from_dict(json.loads(json.dumps(fitted.to_dict())))
    assert again.privacy_ledger_.total() == ledger.total()


def test_a_pure_model_stays_pure_in_a_pipeline_unless_the_pipeline_gives_a_delta():
    """DPPipeline(delta=None) leaves the model's own delta: SmoothBoostClassifier() is pure there as alone."""
    frame = _raw(400)
    X, y = frame.drop(columns="income"), frame["income"]
    pure = DPPipeline(schema=SCHEMA, model=SmoothBoostClassifier(), random_state=0).fit(X, y)
    assert pure.privacy_ledger_.total()[1] == 0 and pure.model_.delta == 0.0
    given = DPPipeline(schema=SCHEMA, model=SmoothBoostClassifier(), delta=1e-8, random_state=0).fit(X, y)
    assert given.model_.delta == 1e-8 and given.privacy_ledger_.delta == 1e-8
    for fitted in (pure, given):
        DPPipeline.from_dict(json.loads(json.dumps(fitted.to_dict())))


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["privacy_ledger"].update(accountant="pld"), "accountant"),
    (lambda d: d["privacy_ledger"]["budget"].update(delta=1e-4), "delta"),
    (lambda d: d["params"].update(delta=0.0), "delta"),
    (lambda d: next(e for e in d["privacy_ledger"]["entries"] if e["mechanism"] == "discrete laplace"
                    ).update(scale=100.0), "scale"),
])
def test_pipeline_file_claiming_less_loss_is_refused(edit, match):
    """Review findings: the pipeline's accountant, its delta and the encoder's noise were not tied to the model's."""
    from dpglass.privacy.ledger import PrivacyLedger

    frame = _raw(800)
    model = DPRuleListClassifier(mechanism="certified-pf", max_length=2, count_noise="gaussian", accountant="rdp")
    fitted = DPPipeline(schema=SCHEMA, model=model, epsilon=1.0, delta=1e-8, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted.fit(frame.drop(columns="income"), frame["income"])
    d = json.loads(json.dumps(fitted.to_dict()))
    edit(d)
    eps, delta = PrivacyLedger.from_dict(d["privacy_ledger"]).total()
    d["privacy_ledger"]["total"] = {"epsilon": eps, "delta": delta}
    with pytest.raises(ModelFileError, match=match):
        DPPipeline.from_dict(d)


def test_inline_schema_and_missing_description(tmp_path, capsys):
    data = tmp_path / "t.csv"
    _raw().to_csv(data, index=False)
    ok = ["fit", "--data", str(data), "--target", "income", "--bounds", "age=17:90", "--bounds", "hours=0:99",
          "--categorical", "occupation=Exec-managerial,Sales,Craft-repair", "--drop", "id", "--seed", "0"]
    assert main(ok) == 0
    capsys.readouterr()
    assert main(ok[:-4] + ["--seed", "0"]) == 2  # id not described: refused, nothing dropped silently
    assert "'id'" in capsys.readouterr().err


def test_out_into_a_missing_folder_is_refused_before_training(tmp_path, capsys):
    data = tmp_path / "t.csv"
    _raw().to_csv(data, index=False)
    code = main(["fit", "--data", str(data), "--target", "income", "--drop", "id", "--bounds", "age=17:90",
                 "--bounds", "hours=0:99", "--categorical", "occupation=Sales", "--out", str(tmp_path / "no" / "m.json")])
    assert code == 2
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and "nothing was trained" in captured.err
    assert captured.out == ""


def test_schema_template_leaves_bounds_to_the_user(tmp_path, capsys):
    data = tmp_path / "t.csv"
    _raw().to_csv(data, index=False)
    assert main(["schema", "--data", str(data), "--target", "income", "--out", str(tmp_path / "s.json")]) == 0
    template = json.loads((tmp_path / "s.json").read_text())
    kinds = {c["name"]: c for c in template["columns"]}
    assert kinds["id"]["kind"] == "ignore" and kinds["age"]["kind"] == "numeric" and kinds["age"]["bounds"] is None
    assert kinds["occupation"]["categories"] == []  # values found would reveal them
    assert kinds["age"]["missing"] == "error"  # the option is in front of the user, at its default
    with pytest.raises(exceptions.InvalidParameterError, match="bounds"):
        load_schema(tmp_path / "s.json")
    with pytest.warns(exceptions.PrivacyLeakWarning):
        filled = schema_template(_raw(), "income", fill_bounds_from_data=True)
    assert Schema.from_dict(filled).features


def test_pipeline_ledger_never_exceeds_and_artifact_has_no_deterministic_field():
    from dpglass.audit.artifact import deterministic_leaks, model_artifact

    frame = _raw(400)
    X, y = frame.drop(columns="income"), frame["income"]
    make = lambda s: DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(max_length=2, classes=["<=50K", ">50K"]),
                                epsilon=1.0, random_state=s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = [model_artifact(make(s).fit(X, y)) for s in range(8)]
        b = [model_artifact(make(s).fit(X.iloc[1:], y.iloc[1:])) for s in range(8)]
    assert deterministic_leaks(a, b) == []
    assert all(art["json"]["privacy_ledger"]["total"]["epsilon"] <= 1.0 + 1e-9 for art in a)


def test_declared_classes_make_single_class_data_fit():
    frame = _raw(200)
    X = pd.DataFrame((frame[["age"]].to_numpy() > 40).astype(int), columns=["old"])
    y = np.full(200, ">50K")
    with pytest.raises(exceptions.DataValidationError, match="only one class"):
        DPRuleListClassifier(random_state=0).fit(X, y)
    model = DPRuleListClassifier(classes=["<=50K", ">50K"], random_state=0).fit(X, y)
    assert list(model.classes_) == ["<=50K", ">50K"]


@pytest.mark.parametrize("seed", range(25))
def test_fuzz_cli_and_estimators_end_in_success_or_a_typed_error(seed, tmp_path, capsys):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(0, 40)), int(rng.integers(1, 5))
    cols = {f"c{j}": rng.choice([rng.integers(0, 2, n), rng.normal(size=n), rng.choice(["a", "b", np.nan], n)])
            for j in range(d)}
    frame = pd.DataFrame(cols)
    frame["y"] = rng.choice([0, 1, 2, np.nan], n) if rng.random() < 0.3 else rng.integers(0, 2, n)
    path = tmp_path / "f.csv"
    frame.to_csv(path, index=False)
    spec = PRIVATE[int(rng.integers(len(PRIVATE)))]
    argv = ["fit", "--data", str(path), "--target", rng.choice(["y", "nope"]), "--model", spec.name,
            "--epsilon", str(rng.choice([1.0, -1.0, 0.0, float("inf"), 1e6])), "--test-size", "0"]
    if rng.random() < 0.5:
        argv += ["--bounds", f"c0={rng.choice(['0:1', '1:0', 'x'])}"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(argv)
    assert code in (0, 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("dpglass fit: error:")


def test_paper_claim_mechanisms_and_large_epsilon_warn_at_fit_time():
    from dpglass.exceptions import UnprovenGuaranteeWarning, WeakGuaranteeWarning

    rng = np.random.default_rng(0)
    X = (rng.random((300, 3)) < 0.5).astype(int)
    y = X[:, 0]
    with pytest.warns(UnprovenGuaranteeWarning, match="paper's claim"):
        DPRuleListClassifier(mechanism="smooth-laplace", delta=1e-6, random_state=0).fit(X, y)
    with pytest.warns(WeakGuaranteeWarning, match="says little"):
        DPRuleListClassifier(epsilon=20.0, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the proven default at a moderate epsilon, labels declared, is silent
        DPRuleListClassifier(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)


def test_an_undeclared_label_set_warns_on_every_private_fit_whatever_the_data():
    from dpglass.exceptions import UndeclaredClassesWarning
    from dpglass.models import GreedyRuleListClassifier

    rng = np.random.default_rng(0)
    X = (rng.random((300, 3)) < 0.5).astype(int)
    for y in (X[:, 0], np.where(X[:, 0] == 1, "A", np.where(X[:, 1] == 1, "B", "C"))):  # 2 and 3 labels
        with pytest.warns(UndeclaredClassesWarning, match="label set is read from y"):
            DPRuleListClassifier(epsilon=1.0, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a non-private model publishes its labels by design: no warning
        GreedyRuleListClassifier().fit(X, X[:, 0])


def test_private_grid_search_takes_the_positional_form():
    from dpglass.models import PrivateGridSearch, SmoothBoostClassifier

    rng = np.random.default_rng(0)
    X = (rng.random((300, 4)) < 0.5).astype(int)
    search = PrivateGridSearch(SmoothBoostClassifier(), {"n_rounds": [3, 5]}, epsilon=1.0, random_state=0)
    assert search.fit(X, X[:, 0]).best_params_["n_rounds"] in (3, 5)


@pytest.mark.parametrize("case", ["features", "sparse", "nan-label", "inf-epsilon"])
def test_bad_input_gets_a_typed_error_in_the_users_terms(case):
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = (rng.random((60, 4)) < 0.5).astype(int)
    y = X[:, 0]
    with pytest.raises(TYPED) as info:
        if case == "features":
            DPRuleListClassifier(random_state=0).fit(X, y).predict(X[:, :3])
        elif case == "sparse":
            DPRuleListClassifier(random_state=0).fit(sp.csr_matrix(X), y)
        elif case == "nan-label":
            DPRuleListClassifier(random_state=0).fit(X, np.where(y == 1, np.nan, 0.0))
        else:
            DPRuleListClassifier(epsilon=float("inf")).fit(X, y)
    assert {"features": "3 features", "sparse": "dense", "nan-label": "missing labels",
            "inf-epsilon": "'epsilon' parameter of DPRuleListClassifier"}[case] in str(info.value)


@pytest.mark.parametrize("where", ["fit", "predict"])
@pytest.mark.parametrize("bad, match", [
    (("age", np.nan), "Column 'age' has missing values"),
    (("occupation", None), "Column 'occupation' has missing values"),
    (("occupation", "Nurse"), r"Column 'occupation' holds value\(s\) outside its schema categories.*'Nurse'"),
])
def test_missing_and_unlisted_values_are_refused_unless_the_schema_says_what_they_mean(where, bad, match):
    """A missing age read as "below every cut point" would score a person as the youngest: refused, with the
    column's name and what to declare; with missing="none" the documented per-record rule applies."""
    frame = _raw(400)
    X, y = frame.drop(columns="income"), frame["income"]
    broken = X.astype({"age": float, "occupation": object})
    broken.loc[7, bad[0]] = bad[1]
    model = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(), random_state=0)
    with pytest.raises(exceptions.DataValidationError, match=match) as info:
        model.fit(broken, y) if where == "fit" else model.fit(X, y).predict(broken)
    assert '"missing": "none"' in str(info.value)
    declared = json.loads(json.dumps(SCHEMA))
    for col in declared["columns"]:
        if col["name"] == bad[0]:
            col["missing"] = "none"
    fitted = DPPipeline(schema=declared, model=DPRuleListClassifier(), random_state=0).fit(broken, y)
    assert fitted.predict(broken).shape == (400,)
    assert DPPipeline.from_dict(json.loads(json.dumps(fitted.to_dict()))).encoding_.schema.columns == \
        fitted.encoding_.schema.columns  # the rule travels with the model file


def test_cli_checks_the_held_out_records_before_printing_a_model(tmp_path, capsys):
    frame = _raw(400)
    frame["age"] = frame["age"].astype(object)
    path, schema = tmp_path / "t.csv", tmp_path / "s.json"
    schema.write_text(json.dumps(SCHEMA))
    for seed in range(3):  # wherever the public split puts the bad record, nothing is printed before the error
        bad = frame.copy()
        bad.loc[seed * 100, "age"] = "unknown"
        bad.to_csv(path, index=False)
        code = main(["fit", "--data", str(path), "--target", "income", "--schema", str(schema), "--seed", str(seed)])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and "Column 'age'" in err


def test_inspect_verifies_a_pipeline_file(tmp_path, capsys):
    frame = _raw(400)
    model = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(frame.drop(columns="income"), frame["income"])
    model.save(tmp_path / "m.json")
    assert main(["inspect", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    assert "DPPipeline (registry: encoder + dp-rule-list)" in out and "verified: yes" in out
    data = json.loads((tmp_path / "m.json").read_text())
    data["params"]["epsilon"] = 2.0
    (tmp_path / "m.json").write_text(json.dumps(data))
    assert main(["inspect", str(tmp_path / "m.json")]) == 2
    assert "epsilon" in capsys.readouterr().err


def test_errors_name_the_column_and_the_labels():
    frame = _raw(60)
    with pytest.raises(exceptions.DataValidationError, match=r"column 'occupation' of X holds text.*dpglass schema"):
        DPRuleListClassifier().fit(frame[["age", "occupation"]], frame["income"])
    with pytest.raises(exceptions.DataValidationError, match=r"column 'age' of X has values other than 0 and 1"):
        DPRuleListClassifier().fit(frame[["age"]], frame["income"])
    labels = frame["income"].where(frame.index != 3, "late")
    with pytest.raises(exceptions.DataValidationError, match=r"label\(s\) \['late'\] outside the declared classes"):
        DPRuleListClassifier(classes=["<=50K", ">50K"]).fit((frame[["age"]] > 40).astype(int), labels)
    with pytest.raises(exceptions.DataValidationError, match="missing labels"):
        DPRuleListClassifier().fit((frame[["age"]] > 40).astype(int), frame["income"].where(frame.index != 3, None))


def test_teacher_student_models_take_a_raw_public_part_and_say_when_they_had_none(tmp_path, capsys):
    from dpglass.models import SubsampleAggregateClassifier

    frame = _raw(600)
    X, y = frame.drop(columns="income"), frame["income"]
    public = _raw(200, seed=1).drop(columns="income")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        given = DPPipeline(schema=SCHEMA, model=SubsampleAggregateClassifier(), random_state=0).fit(
            X, y, X_public=public)
        none = DPPipeline(schema=SCHEMA, model=SubsampleAggregateClassifier(), random_state=0).fit(X, y)
    assert given.model_.n_public_ == 200 and "200 public records" in str(given)
    assert "uniform random 0/1 rows (no public part was given" in str(none)
    for fitted in (given, none):  # the flag travels with the file
        assert str(DPPipeline.from_dict(json.loads(json.dumps(fitted.to_dict())))) == str(fitted)
    with pytest.raises(exceptions.InvalidParameterError, match="does not learn from a public part"):
        DPPipeline(schema=SCHEMA, model=DPRuleListClassifier()).fit(X, y, X_public=public)
    data, pub, schema = tmp_path / "d.csv", tmp_path / "p.csv", tmp_path / "s.json"
    frame.to_csv(data, index=False)
    public.to_csv(pub, index=False)
    schema.write_text(json.dumps(SCHEMA))
    code = main(["fit", "--data", str(data), "--target", "income", "--schema", str(schema), "--model",
                 "subsample-aggregate", "--public", str(pub), "--seed", "0"])
    out, err = capsys.readouterr()
    assert code == 0 and "public part: 200 records" in out and "Traceback" not in err


def test_cli_warnings_are_the_commands_lines(tmp_path, capsys):
    frame = _raw(300)
    frame.loc[:249, "age"] = 500  # 250 records outside the bounds, about 175 of them in the training part
    path, schema = tmp_path / "d.csv", tmp_path / "s.json"
    frame.to_csv(path, index=False)
    schema.write_text(json.dumps(SCHEMA))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shown = warnings.formatwarning
        # epsilon 10: the count's 0.2 makes it warn from 32 on (issue 26: only when clearly above its noise)
        assert main(["fit", "--data", str(path), "--target", "income", "--schema", str(schema), "--seed", "3",
                     "--epsilon", "10"]) == 0
        assert warnings.formatwarning is shown  # restored after the command
    assert any(w.category.__name__ == "ClippingWarning" and str(w.message).startswith("About ") for w in caught)
    from dpglass.cli.app import _format_warning
    from dpglass.schema import ClippingWarning

    line = _format_warning(ClippingWarning("About 3 records"), ClippingWarning, "/x/cli.py", 236, "model.fit()")
    assert line == "dpglass: ClippingWarning: About 3 records\n"  # what the command prints: no source line
    # PrivateGridSearch over a DPPipeline is tested in tests/test_selection_defaults.py (issue 26, item 12)


@pytest.mark.parametrize("categories", [[1, 2, 3], ["1", "2", "3"]])
def test_one_record_never_changes_how_the_others_are_encoded(categories, tmp_path):
    """helper-25's attack: pandas types a CSV column from all its values, so one "?" turned a column of numbers
    into text and, with missing="none", every record's indicators to 0 (epsilon >= 3.17 measured against a
    claimed 1). Categories are compared by their text value by value, and the CLI reads them as text."""
    from dpglass.cli.tables import read_csv
    from dpglass.schema import fit_encoding

    schema = Schema([categorical("grade", categories, missing="none"), numeric("age", 17, 90)], target="y")
    rows = pd.DataFrame({"grade": [1, 2, 3, 2, 1] * 4, "age": [30, 40, 50, 60, 70] * 4, "y": [0, 1] * 10})
    encodings = []
    for extra in (None, "?"):  # D minus the record, and D
        frame = rows if extra is None else pd.concat([rows, pd.DataFrame({"grade": [extra], "age": [33], "y": [1]})])
        path = tmp_path / "d.csv"
        frame.to_csv(path, index=False)
        for read in (read_csv(path, text_columns=["grade"]), pd.read_csv(path)):  # the CLI's reading, and pandas'
            X = read.drop(columns="y")
            encoding, _, _ = fit_encoding(X, schema, quantile_epsilon=0.0, clip_epsilon=0.0, rng=None)
            encodings.append(encoding.transform(X)[: len(rows)])
    for other in encodings[1:]:
        np.testing.assert_array_equal(other, encodings[0])
    assert encodings[0][:, :3].sum() == len(rows)  # every listed grade sets its indicator
    with pytest.raises(exceptions.InvalidParameterError, match="twice"):
        categorical("grade", [1, "1"])


@pytest.mark.parametrize("edit, match", [
    # helper-25: drop what the encoder paid for, keep what it released
    (lambda d: (d["params"].update(quantile_share=0.0),
                d["privacy_ledger"].update(entries=[e for e in d["privacy_ledger"]["entries"]
                                                    if "quantile" not in e["release"]])), "inner_model"),
    (lambda d: (d["params"].update(clip_share=0.0),
                d["privacy_ledger"].update(entries=[e for e in d["privacy_ledger"]["entries"]
                                                    if "outside the bounds" not in e["release"]])), "inner_model"),
    (lambda d: (d["encoding"]["cuts"][0].__setitem__(0, 33.777),  # off the grid, renamed in the inner model
                d["inner_model"].update(json.loads(json.dumps(d["inner_model"]).replace("age>31.6", "age>33.777")))),
     r"encoding.cuts\['age'\]"),
    (lambda d: d["encoding"]["schema"]["columns"][3].update(n_thresholds=5), r"privacy_ledger\.entries"),
    (lambda d: d.update(clipped_records_noisy=None), "clipped_records_noisy"),
])
def test_pipeline_file_hiding_an_encoder_release_is_refused(edit, match):
    frame = _raw(500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(), random_state=0).fit(
            frame.drop(columns="income"), frame["income"])
    data = json.loads(json.dumps(model.to_dict()))
    DPPipeline.from_dict(json.loads(json.dumps(data)))
    edit(data)
    from dpglass.privacy.ledger import PrivacyLedger

    eps, delta = PrivacyLedger.from_dict(data["privacy_ledger"]).total()  # the attacker restates the total
    data["privacy_ledger"]["total"].update(epsilon=eps, delta=delta)
    with pytest.raises(ModelFileError, match=match):
        DPPipeline.from_dict(data)


def test_dp_quantiles_without_bounds_say_what_to_add(tmp_path, capsys):
    path = tmp_path / "t.csv"
    _raw(50).to_csv(path, index=False)
    code = main(["fit", "--data", str(path), "--target", "income", "--drop", "id", "--bounds", "age=17:90",
                 "--dp-quantiles", "hours", "--categorical", "occupation=Sales,Exec-managerial,Craft-repair"])
    assert code == 2 and "--dp-quantiles hours needs the column's public bounds too" in capsys.readouterr().err


def test_a_file_carrying_a_seed_or_a_field_dpglass_does_not_write_is_refused():
    """helper-26: a private model's file never holds its seed, and a file is what to_dict wrote, nothing added."""
    frame = _raw(300)
    X, y = frame.drop(columns="income"), frame["income"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(), random_state=0).fit(X, y)
    binary = (X[["age"]] > 40).astype(int)
    alone = SmoothBoostClassifier(random_state=0).fit(binary, y)
    for model, cls in ((pipe, DPPipeline), (alone, SmoothBoostClassifier)):
        data = json.loads(json.dumps(model.to_dict()))
        cls.from_dict(json.loads(json.dumps(data)))
        seeded = json.loads(json.dumps(data))
        seeded["params"]["random_state"] = 7
        with pytest.raises(ModelFileError, match="random_state"):
            cls.from_dict(seeded)
        data["seed"] = 7
        with pytest.raises(ModelFileError, match="'seed' is not a field"):
            cls.from_dict(data)
