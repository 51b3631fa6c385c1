"""Findings of the issue-26 adversarial review (helper-7, /work/runs/review26/report.md), each fixed at its root:
what one record changes in what dpglass publishes, and fields of a saved file that could carry data."""

import copy
import json

import numpy as np
import pandas as pd
import pytest

from dpglass.cli import main
from dpglass.exceptions import ModelFileError
from dpglass.models import DPPipeline, DPRuleListClassifier, SmoothBoostClassifier
from dpglass.models.selection.estimator import PrivateGridSearch
from ledger_edits import load_dict


def _fit_json(tmp_path, name, text, *extra):
    path = tmp_path / f"{name}.csv"
    path.write_text(text)
    out = tmp_path / f"{name}.json"
    assert main(["fit", "--data", str(path), "--target", "y", "--model", "dp-logistic-regression", "--seed", "3",
                 "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_one_records_spelling_of_its_label_changes_nothing(tmp_path, capsys):
    """H1: one record writing 1.0 made pandas read every label as float: classes [0.0, 1.0] in the file."""
    base = "f,y\n" + "0,0\n1,1\n" * 5
    with_float = _fit_json(tmp_path, "a", base + "1,1.0\n")
    without = _fit_json(tmp_path, "b", base)
    assert with_float["classes"] == without["classes"] == [0, 1]


def test_a_header_without_records_fits_with_declared_classes(tmp_path, capsys):
    """H2: a CSV with a header and no records was refused, its one-record neighbour fitted (exit 2 against 0)."""
    empty, one = tmp_path / "e.csv", tmp_path / "o.csv"
    empty.write_text("f,y\n")
    one.write_text("f,y\n1,1\n")
    for path in (empty, one):
        assert main(["fit", "--data", str(path), "--target", "y", "--classes", "0,1", "--seed", "1"]) == 0
    capsys.readouterr()
    assert main(["fit", "--data", str(empty), "--target", "y", "--seed", "1"]) == 2
    assert "declare it with --classes" in capsys.readouterr().err


def _pipeline_file():
    rng = np.random.default_rng(1)
    raw = pd.DataFrame({"age": np.round(rng.uniform(17, 90, 300), 2)})
    y = np.where(raw.age > 40, "yes", "no")
    schema = {"target": "y", "columns": [{"name": "age", "kind": "numeric", "bounds": [17, 90],
                                          "thresholds": "dp-quantiles", "n_thresholds": 2}]}
    model = DPRuleListClassifier(classes=["no", "yes"], max_length=1)
    return DPPipeline(schema=schema, model=model, epsilon=2.0, random_state=0).fit(raw, y).to_dict()


@pytest.mark.parametrize("i", [0, 1, 2])
def test_an_encoder_entry_spends_no_delta(i):
    """M1: an encoder entry with delta 3.742e-9 loaded as verified (a float channel, and a false claim)."""
    data = _pipeline_file()
    data["privacy_ledger"]["entries"][i]["delta"] = 3.742e-9
    data["privacy_ledger"]["total"]["delta"] = 3.742e-9
    with pytest.raises(ModelFileError, match=r"delta"):
        load_dict(data)


@pytest.mark.parametrize("where", ["privacy_ledger", "privacy_ledger.budget", "inner_model.privacy_ledger"])
def test_a_ledger_holds_only_the_fields_dpglass_writes(where):
    """M3: an added key in a ledger loaded as verified."""
    data = _pipeline_file()
    target = data
    for key in where.split("."):
        target = target[key]
    target["comment"] = "Alice: 37.42"
    with pytest.raises(ModelFileError, match="comment"):
        load_dict(data)


@pytest.fixture(scope="module")
def selection_file():
    rng = np.random.default_rng(0)
    X = (rng.random((300, 4)) < 0.5).astype(int)
    y = X[:, 0] | X[:, 1]
    search = PrivateGridSearch(estimator=SmoothBoostClassifier(n_rounds=2), param_grid={"n_rounds": [1, 2]},
                               epsilon=3.0, stopping_probability=0.5, random_state=0).fit(X, y)
    return json.loads(json.dumps(search.to_dict()))


SELECTION_TAMPERS = {
    "noisy count not an integer (M2)": lambda s: s.update(noisy_correct_count=37.42),
    "an added field (M3)": lambda s: s.update(comment="Alice"),
    "the method switched at eta 1 (L3)": lambda s: s.update(method="papernot-steinke" if s["method"] == "liu-talwar"
                                                            else "liu-talwar"),
}


@pytest.mark.parametrize("tamper", list(SELECTION_TAMPERS))
def test_a_selection_file_is_what_the_search_wrote(selection_file, tamper):
    data = copy.deepcopy(selection_file)
    SELECTION_TAMPERS[tamper](data["selected_by"])
    # a field of selected_by itself, or the entry the plan rebuilt from it disagrees with (the switched method)
    with pytest.raises(ModelFileError, match=r"selected_by|privacy_ledger\.entries\[0\]\.mechanism"):
        load_dict(data)
    load_dict(copy.deepcopy(selection_file))  # the untouched file loads


@pytest.mark.parametrize("i", [0, 2])
def test_an_encoder_entry_is_its_plans_note_and_all(i):
    """M4: a note holding free text ('Alice (row 17): age 37.42') loaded as verified; the encoder's entries are
    now its release plan's, replayed from the schema (issue 27)."""
    data = _pipeline_file()
    data["privacy_ledger"]["entries"][i]["note"] = "Alice (row 17): age 37.42"
    with pytest.raises(ModelFileError, match=r"entries\[\d\]\.note"):
        load_dict(data)
