"""The artifact is the unit of privacy: nothing published is a deterministic function of the data.

For every registered private model: fit on D and on D minus one record with
many seeds; every field of ``to_dict()``, every line of the printout and every
line of the CLI's output that is constant across seeds on one side must be
identical on the other side.  New models inherit the test through the registry.
"""

import json

import numpy as np
import pandas as pd
import pytest

from dpglass.audit.artifact import deterministic_leaks, model_artifact, non_grid_numbers
from dpglass.cli import main
from dpglass.registry import list_estimators

SEEDS = range(10)
PRIVATE = [s for s in list_estimators(private=True)]


def _data(n=160, d=5, seed=7):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(np.uint8)
    y = ((X[:, 0] | X[:, 1]) & (rng.random(n) < 0.9)).astype(np.uint8)
    return X, y


@pytest.mark.parametrize("spec", PRIVATE, ids=lambda s: s.name)
def test_no_published_field_is_a_deterministic_function_of_the_data(spec):
    X, y = _data()
    # remove a positive record: it changes n, the class counts and the weights
    drop = int(np.flatnonzero(y == 1)[0])
    X2, y2 = np.delete(X, drop, axis=0), np.delete(y, drop)
    side = lambda A, b: [model_artifact(spec.make(**spec.test_params, random_state=s).fit(A, b)) for s in SEEDS]
    leaks = deterministic_leaks(side(X, y), side(X2, y2))
    assert leaks == [], f"{spec.name} publishes deterministic functions of the data: {leaks[:5]}"


def test_the_check_has_power_on_a_model_that_publishes_n():
    spec = next(s for s in PRIVATE if s.name == "dp-rule-list")
    X, y = _data()

    def with_n(A, b, s):
        art = model_artifact(spec.make(**spec.test_params, random_state=s).fit(A, b))
        art["json"]["n_samples"] = len(b)  # what a careless model would publish
        return art

    leaks = deterministic_leaks([with_n(X, y, s) for s in SEEDS], [with_n(X[1:], y[1:], s) for s in SEEDS])
    assert [k for k, _, _ in leaks] == ["json.n_samples"]


@pytest.mark.parametrize("spec", PRIVATE, ids=lambda s: s.name)
def test_cli_output_is_not_a_deterministic_function_of_the_data(spec, tmp_path, capsys):
    X, y = _data(n=120)
    outputs = {}
    path = tmp_path / "data.csv"  # the same file name on both sides
    for name, rows in (("D", slice(None)), ("D-1", slice(1, None))):
        frame = pd.DataFrame(X[rows], columns=[f"f{j}" for j in range(X.shape[1])]).assign(label=y[rows])
        frame.to_csv(path, index=False)
        runs = []
        for s in range(6):
            params = [f"--param={k}={json.dumps(v)}" for k, v in spec.test_params.items() if k != "epsilon"]
            code = main(["fit", "--data", str(path), "--target", "label", "--model", spec.name, "--epsilon", "1",
                         "--test-size", "0", "--seed", str(s), *params])
            assert code == 0
            runs.append({"stdout": capsys.readouterr().out.splitlines()})
        outputs[name] = runs
    assert deterministic_leaks(outputs["D"], outputs["D-1"]) == []


def test_released_rule_counts_are_integers():
    spec = next(s for s in PRIVATE if s.name == "dp-rule-list")
    X, y = _data(n=400)
    model = spec.make(max_length=3, epsilon=5.0, random_state=0).fit(X, y)
    data = model.to_dict()
    assert non_grid_numbers(data, fields=("counts",)) == []
    assert all(float(c).is_integer() for r in data["rules"] + [data["default_rule"]] for c in r["counts"])


@pytest.mark.parametrize("learner", ["stump", "tree"])
def test_boosting_auto_rounds_publish_only_a_noisy_count(learner):
    """n_rounds="auto" (the default) sizes the committee from a noisy count: near a size boundary
    (n * epsilon / 400 about 3) neither the estimate nor the number of rounds is fixed by the data."""
    from dpglass.models import SmoothBoostClassifier

    X, y = _data(n=1230)
    drop = int(np.flatnonzero(y == 1)[0])
    X2, y2 = np.delete(X, drop, axis=0), np.delete(y, drop)
    side = lambda A, b: [model_artifact(SmoothBoostClassifier(epsilon=1.0, weak_learner=learner, random_state=s)
                                        .fit(A, b)) for s in SEEDS]
    left = side(X, y)
    assert deterministic_leaks(left, side(X2, y2)) == []
    assert len({a["json"]["records_estimate"] for a in left}) > 1
