"""The dpglass command line (README's main command and the fit/predict loop)."""

import json

import numpy as np
import pandas as pd
import pytest

from dpglass.cli import main


def test_help_lists_subcommands(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for cmd in ("datasets", "models", "fit", "predict"):
        assert cmd in out


def test_readme_main_command(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DPGLASS_DATA", str(tmp_path))  # breast-cancer needs no file
    assert main(["fit", "--dataset", "breast-cancer", "--epsilon", "1", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert out.count("\nelse ") >= 1 or "\nelse" in out
    assert "held-out accuracy (DP estimate):" in out
    assert "privacy ledger:" in out and "(budget: epsilon=1," in out
    assert "noisy counts" in out
    assert out.startswith("dp-rule-list on breast-cancer: 60 binary features (label 1: malignant)")  # "then 1" reads


def test_fit_and_predict_csv(tmp_path, capsys, binary_data):
    X, y = binary_data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["label"] = y
    data = tmp_path / "train.csv"
    frame.to_csv(data, index=False)
    model_path = tmp_path / "model.json"
    rc = main(["fit", "--data", str(data), "--target", "label", "--mechanism", "global-laplace",
               "--epsilon", "2", "--seed", "1", "--out", str(model_path)])
    assert rc == 0
    saved = json.loads(model_path.read_text())
    assert saved["model"] == "DPRuleListClassifier"
    frame.drop(columns=["label"]).to_csv(tmp_path / "new.csv", index=False)
    out = tmp_path / "pred.csv"
    assert main(["predict", "--model", str(model_path), "--data", str(tmp_path / "new.csv"), "--out", str(out)]) == 0
    pred = pd.read_csv(out)["prediction"].to_numpy()
    assert set(np.unique(pred)) <= {0, 1}


def test_fit_with_a_public_part(tmp_path, capsys, binary_data):
    X, y = binary_data
    names = [f"f{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame(X[:400], columns=names).assign(label=y[:400])
    frame.to_csv(tmp_path / "train.csv", index=False)
    public = pd.DataFrame(X[400:], columns=names)
    public[names[::-1]].to_csv(tmp_path / "public.csv", index=False)  # any column order
    model_path = tmp_path / "m.json"
    argv = ["fit", "--data", str(tmp_path / "train.csv"), "--target", "label", "--model", "subsample-aggregate",
            "--epsilon", "2", "--delta", "1e-6", "--param", "n_teachers=5", "--param", "noise_scale=4",
            "--seed", "0", "--out", str(model_path)]
    assert main(argv + ["--public", str(tmp_path / "public.csv")]) == 0
    out = capsys.readouterr().out
    assert "public part: 200 records" in out and "of 200 public records" in out
    assert json.loads(model_path.read_text())["n_public"] == 200
    public.drop(columns=["f0"]).to_csv(tmp_path / "bad.csv", index=False)
    assert main(argv + ["--public", str(tmp_path / "bad.csv")]) == 2
    assert "exactly the feature columns" in capsys.readouterr().err
    assert main(["fit", "--data", str(tmp_path / "train.csv"), "--target", "label", "--seed", "0",
                 "--public", str(tmp_path / "public.csv")]) == 2
    assert "does not learn from a public part" in capsys.readouterr().err


def test_greedy_model_and_param_passthrough(capsys):
    assert main(["fit", "--model", "greedy-rule-list", "--param", "max_length=2", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "privacy ledger" not in out and "(counts 0:" in out


@pytest.mark.parametrize(
    "argv,match",
    [
        (["fit", "--epsilon", "-1"], "'epsilon' parameter"),
        (["fit", "--mechanism", "magic"], "'mechanism' parameter"),
        (["fit", "--model", "nope"], "Unknown model 'nope'"),
        (["fit", "--param", "colour=red"], "has no parameter colour"),
        (["fit", "--dataset", "no-such-data"], "no-such-data"),
        (["fit", "--data", "/nonexistent.csv", "--target", "y"], "does not exist"),
    ],
)
def test_clear_errors(argv, match, capsys):
    assert main(argv) == 2
    assert match in capsys.readouterr().err


def test_datasets_and_models_listing(capsys, tmp_path):
    assert main(["datasets", "--data-home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "breast-cancer" in out and "compas-corels" in out
    assert main(["models"]) == 0
    assert "dp-rule-list" in capsys.readouterr().out
