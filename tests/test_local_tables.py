"""dpglass.local on a user's table (issue 26, item 4): columns by name, the user's labels, errors that name the
column, and LDP model files read by ``dpglass inspect`` (verified; a tampered file is refused)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_moons

from dpglass.cli import main
from dpglass.exceptions import DataValidationError, ModelFileError
from dpglass.local import HistogramClassifier, LDPHistogramClassifier, UnaryRandomizer, save_reports
from dpglass.models import DPRuleListClassifier, load_model

BOUNDS = ([-1.5, -1.0], [2.5, 1.5])


def _table(n=4000, seed=0):
    X, y = make_moons(n, noise=0.2, random_state=seed)
    return pd.DataFrame({"flipper": X[:, 0], "bill": X[:, 1]}), np.where(y == 1, "Adelie", "other")


def _fitted(randomizer="oue", zero_one=False, **kw):
    """A model of the table (labels 'Adelie'/'other', or 1/0 with ``zero_one``: a failure is then the columns')."""
    X, y = _table()
    if zero_one:
        y = (y == "Adelie").astype(int)
    clf = LDPHistogramClassifier(alpha=4.0, bandwidth=0.2, bounds=BOUNDS, randomizer=randomizer, random_state=0,
                                 **kw).fit(X, y)
    return clf, X, y


# --------------------------------------------------------------- columns by name
@pytest.mark.parametrize("randomizer", ["laplace", "oue"])
def test_reordered_dataframe_columns_give_the_same_predictions(randomizer):
    clf, X, _ = _fitted(randomizer, zero_one=True)
    swapped = X[["bill", "flipper"]]
    assert np.array_equal(clf.decision_function(swapped), clf.decision_function(X))
    assert np.array_equal(clf.predict(swapped), clf.predict(X))
    assert np.array_equal(clf.predict_proba(swapped), clf.predict_proba(X))
    ref = HistogramClassifier(bandwidth=0.2, bounds=BOUNDS).fit(X, _table()[1] == "Adelie")
    assert np.array_equal(ref.predict(swapped), ref.predict(X))


@pytest.mark.parametrize("columns,named", [(["flipper"], "'bill'"), (["flipper", "bill", "mass"], "'mass'"),
                                           (["flipper", "mass"], "'mass'")])
def test_missing_or_extra_columns_are_refused_by_name(columns, named):
    clf, X, _ = _fitted(zero_one=True)
    frame = X.assign(mass=1.0)[columns]
    with pytest.raises(DataValidationError, match=named):
        clf.predict(frame)


def test_saved_model_reads_columns_by_name(tmp_path):
    clf, X, _ = _fitted()
    clf.save(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    assert back.feature_names() == ["flipper", "bill"]
    assert np.array_equal(back.predict(X[["bill", "flipper"]]), clf.predict(X))


# ----------------------------------------------------------------- the user's labels
def test_labels_are_the_users():
    clf, X, y = _fitted()
    assert clf.classes_.tolist() == ["Adelie", "other"]  # read from y as the central models read them (sorted)
    pred = clf.predict(X)
    assert set(pred.tolist()) <= {"Adelie", "other"}
    assert clf.score(X, y) > 0.8
    proba = clf.predict_proba(X)
    assert np.array_equal(clf.classes_[proba.argmax(axis=1)], pred)  # columns in classes_ order
    declared, _, _ = _fitted(classes=["other", "Adelie"])
    assert declared.classes_.tolist() == ["other", "Adelie"]
    assert np.array_equal(declared.predict(X), np.where(declared.predict_proba(X)[:, 1] == 1, "Adelie", "other"))
    assert "predict Adelie where T >= 0, else other" in str(declared)


def test_label_set_is_handled_as_by_the_central_models():
    X, _ = _table(50)
    one = np.full(50, "other")
    with pytest.raises(DataValidationError) as central:
        DPRuleListClassifier(epsilon=1.0).fit((X > 0).astype(int), one)
    with pytest.raises(DataValidationError) as local:
        LDPHistogramClassifier(alpha=1.0, bandwidth=0.5, bounds=BOUNDS).fit(X, one)
    assert str(local.value) == str(central.value)  # one class read from the data: refused, same words
    clf = LDPHistogramClassifier(alpha=1.0, bandwidth=0.5, bounds=BOUNDS, classes=["other", "Adelie"],
                                 random_state=0).fit(X, one)
    assert clf.classes_.tolist() == ["other", "Adelie"]
    with pytest.raises(DataValidationError, match="outside the declared classes"):
        LDPHistogramClassifier(alpha=1.0, bandwidth=0.5, bounds=BOUNDS, classes=["a", "b"]).fit(X, one)


def test_reports_carry_the_label_set(tmp_path):
    X, y = _table()
    rep = UnaryRandomizer(4.0, 0.2, BOUNDS, random_state=1).randomize(X.to_numpy(), (y == "Adelie").astype(int))
    path = tmp_path / "r.npz"
    save_reports(rep, path, feature_names=["flipper", "bill"], classes=["other", "Adelie"])
    clf = LDPHistogramClassifier(alpha=4.0, randomizer="oue").fit_reports(path)
    assert clf.classes_.tolist() == ["other", "Adelie"]
    assert np.array_equal(clf.predict(X[["bill", "flipper"]]), clf.predict(X))
    assert (clf.predict(X) == y).mean() > 0.8
    assert LDPHistogramClassifier(alpha=4.0, randomizer="oue").fit_reports(rep).classes_.tolist() == [0, 1]
    with pytest.raises(DataValidationError, match="classes"):
        LDPHistogramClassifier(alpha=4.0, randomizer="oue", classes=["Adelie", "other"]).fit_reports(path)


# ------------------------------------------------------------ errors name the column
def test_missing_value_error_names_the_column():
    clf, X, y = _fitted(zero_one=True)
    bad = X.copy()
    bad.loc[5, "bill"] = np.nan
    with pytest.raises(DataValidationError, match="'bill'"):
        clf.predict(bad)
    with pytest.raises(DataValidationError, match="'bill'"):
        clf.predict(bad[["bill", "flipper"]])
    with pytest.raises(DataValidationError, match="'bill'"):
        clf.predict(bad.to_numpy())  # an unnamed array: the fitted name of its column
    with pytest.raises(DataValidationError, match="'bill'"):
        LDPHistogramClassifier(alpha=1.0, bandwidth=0.5, bounds=BOUNDS).fit(bad, y)
    text = X.astype(object)
    text.loc[3, "flipper"] = "?"
    with pytest.raises(DataValidationError, match="'flipper'"):
        clf.predict(text)


# ------------------------------------------------------------------------- the CLI
def test_cli_columns_by_name_and_labels_of_the_file(tmp_path, capsys):
    X, y = _table(6000)
    data = tmp_path / "people.csv"
    X.assign(income=np.where(y == "Adelie", ">50K", "<=50K")).to_csv(data, index=False)
    new = tmp_path / "new.csv"
    X[["bill", "flipper"]].iloc[:300].to_csv(new, index=False)
    reports, model, preds = tmp_path / "r.npz", tmp_path / "m.json", tmp_path / "p.csv"
    assert main(["ldp", "randomize", "--data", str(data), "--target", "income", "--classes", "<=50K,>50K",
                 "--bounds", "flipper=-1.5:2.5", "--bounds", "bill=-1:1.5", "--alpha", "4", "--randomizer", "oue",
                 "--seed", "0", "--out", str(reports)]) == 0
    assert main(["ldp", "fit", "--reports", str(reports), "--out", str(model)]) == 0
    out = capsys.readouterr().out
    assert "predict >50K where T >= 0, else <=50K" in out and "-LDP" in out
    assert main(["predict", "--model", str(model), "--data", str(new), "--proba", "--out", str(preds)]) == 0
    got = pd.read_csv(preds)
    assert list(got.columns) == ["prediction", "p(<=50K)", "p(>50K)"]
    truth = np.where(y[:300] == "Adelie", ">50K", "<=50K")
    assert (got["prediction"].to_numpy() == truth).mean() > 0.8
    bad = tmp_path / "bad.csv"
    frame = X.assign(income=np.where(y == "Adelie", ">50K", "<=50K")).astype({"bill": object})
    frame.loc[7, "bill"] = None
    frame.to_csv(bad, index=False)
    assert main(["ldp", "randomize", "--data", str(bad), "--target", "income", "--classes", "<=50K,>50K",
                 "--bounds", "flipper=-1.5:2.5", "--bounds", "bill=-1:1.5", "--alpha", "4",
                 "--out", str(tmp_path / "x.npz")]) == 2
    assert "'bill'" in capsys.readouterr().err
    frame.loc[7, "bill"] = "?"
    frame.to_csv(bad, index=False)
    assert main(["ldp", "randomize", "--data", str(bad), "--target", "income", "--classes", "<=50K,>50K",
                 "--bounds", "flipper=-1.5:2.5", "--bounds", "bill=-1:1.5", "--alpha", "4",
                 "--out", str(tmp_path / "x.npz")]) == 2
    assert "'bill'" in capsys.readouterr().err
    assert main(["ldp", "randomize", "--data", str(data), "--target", "income", "--classes", "no,yes",
                 "--bounds", "flipper=-1.5:2.5", "--bounds", "bill=-1:1.5", "--alpha", "4",
                 "--out", str(tmp_path / "x.npz")]) == 2
    assert "outside the declared classes" in capsys.readouterr().err


# ---------------------------------------------------------------- dpglass inspect
def test_inspect_reads_an_ldp_model_file(tmp_path, capsys):
    clf, _, _ = _fitted()
    path = tmp_path / "m.json"
    clf.save(path)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "model: LDPHistogramClassifier" in out and "classes: Adelie, other" in out
    assert "verified: yes" in out
    assert "each of the 4000 reports is 4-LDP" in out
    # the line format_model_report should print instead of "privacy: none (non-private model, no ledger)"
    assert "4-LDP" in LDPHistogramClassifier._privacy_summary(json.loads(path.read_text()))


_TAMPERINGS = {
    "guarantee": lambda d: d.update(guarantee="epsilon-DP"),
    "alpha lowered": lambda d: d.update(alpha_per_report=1.0),
    "seed written": lambda d: d["params"].update(random_state=3),
    "reports dropped": lambda d: d.update(report_sums=d["report_sums"][:1]),
    "count edited": lambda d: d.update(report_counts=[d["report_counts"][0] + 1, 0]),
    "bit sum out of range": lambda d: d["report_sums"][0].__setitem__(0, d["n_reports"] + 1),
    "sums as floats": lambda d: d.update(report_sums=[[v + 0.5 for v in r] for r in d["report_sums"]]),
    "box edited": lambda d: d["params"].update(bounds=[[0.0, 0.0], [1.0, 1.0]]),
    "field added": lambda d: d.update(note="hand-edited"),
    "unknown parameter": lambda d: d["params"].update(epsilon=1.0),
    "classes edited": lambda d: d["params"].update(classes=["x", "y"]),
    "one class": lambda d: d.update(classes=["Adelie", "Adelie"]),
}


@pytest.mark.parametrize("tamper", sorted(_TAMPERINGS))
def test_a_tampered_ldp_file_is_refused(tmp_path, capsys, tamper):
    clf, _, _ = _fitted(classes=["other", "Adelie"])
    data = clf.to_dict()
    edited = copy.deepcopy(data)
    _TAMPERINGS[tamper](edited)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(edited))
    assert main(["inspect", str(path)]) == 2
    assert "error" in capsys.readouterr().err
    with pytest.raises(ModelFileError):
        load_model(path)
    path.write_text(json.dumps(data))  # the file as written is accepted
    assert main(["inspect", str(path)]) == 0
