"""PrivateGridSearch with default candidates, DP-GBDT and DPPipeline (issue 26, item 12)."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.exceptions import InvalidParameterError, ModelFileError
from dpglass.models import (
    DPGradientBoostingClassifier,
    DPPipeline,
    DPRuleListClassifier,
    PrivateGridSearch,
    load_model,
)
from dpglass.privacy.ledger import RELATIVE_TOLERANCE


@pytest.fixture(scope="module")
def bits():
    rng = np.random.default_rng(11)
    X = (rng.random((800, 5)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(800) < 0.1)).astype(int)
    return X, y


def _within(ledger, epsilon, delta):
    eps, dlt = ledger.total()
    return eps <= epsilon * (1 + RELATIVE_TOLERANCE) and dlt <= delta * (1 + RELATIVE_TOLERANCE)


# ------------------------------------------------------- default candidates
def test_the_default_rule_list_is_searched_as_a_pure_candidate(bits, tmp_path):
    """DPRuleListClassifier() has delta=None, but errors-pf is pure: the search runs it with delta=0."""
    X, y = bits
    search = PrivateGridSearch(DPRuleListClassifier(), {"max_length": [2, 3]}, epsilon=1.0, random_state=0).fit(X, y)
    assert _within(search.privacy_ledger_, 1.0, 0.0) and search.privacy_ledger_.total()[1] == 0
    assert search.best_estimator_.delta == 0 and search.best_estimator_.privacy_ledger_.total()[1] == 0
    search.save(tmp_path / "s.json")
    np.testing.assert_array_equal(load_model(tmp_path / "s.json").predict(X), search.predict(X))


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_a_candidate_that_would_spend_delta_is_refused_before_any_run(bits, delta, monkeypatch):
    X, y = bits
    fits = []
    monkeypatch.setattr(DPRuleListClassifier, "fit", lambda self, *a, **k: fits.append(1))
    # delta = 0: the search's pure theorem; delta > 0: certified-pf's certification has no Rényi curve
    match = ("needs delta > 0; give the search a delta > 0 or choose a pure mechanism" if delta == 0
             else "Rényi curves")
    search = PrivateGridSearch(DPRuleListClassifier(mechanism="certified-pf"), {"max_length": [2, 3]},
                               epsilon=1.0, delta=delta)
    with pytest.raises(InvalidParameterError, match=match):
        search.fit(X, y)
    gauss = PrivateGridSearch(DPRuleListClassifier(), {"count_noise": ["laplace", "gaussian"]}, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=r"count_noise='gaussian'.*needs delta > 0"):
        gauss.fit(X, y)
    assert not fits and not hasattr(search, "privacy_ledger_")
    # DP-GBDT declares no release plan: any search runs it with delta=0, so Gaussian leaves are refused in both
    gbdt = PrivateGridSearch(DPGradientBoostingClassifier(leaf_noise="gaussian"), {"n_estimators": [3]},
                             epsilon=1.0, delta=delta)
    with pytest.raises(InvalidParameterError, match=r"leaf_noise='gaussian'.*needs delta > 0.*Laplace noise"):
        gbdt.fit(X, y)


def test_every_registered_private_model_fits_or_is_refused_up_front(bits):
    """Each registered private model with its defaults, in a pure search and in a delta > 0 search."""
    from dpglass.registry import list_estimators

    X, y = bits
    refused = {"dp-bag": "cannot be searched: its 'delta' cannot be 0",  # always spends delta, no Rényi curve
               # Gaussian sums: delta > 0 always, composed by the curves of a plan that needs d and K stated
               "dp-gam": "cannot be searched: its release plan, which the search composes by its Rényi curve"}
    for spec in list_estimators(private=True):
        grid = {k: [v] for k, v in spec.test_params.items() if k != "epsilon"}
        for delta in (0.0, 1e-6):
            search = PrivateGridSearch(spec.make(), grid, epsilon=1.0, delta=delta, stopping_probability=0.5,
                                       random_state=0)
            if spec.name in refused:
                with pytest.raises(InvalidParameterError, match=refused[spec.name]):
                    search.fit(X, y)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X, y)
            assert _within(search.privacy_ledger_, 1.0, delta), (spec.name, delta)


# ------------------------------------------------------------------ DP-GBDT
def test_dp_gbdt_is_searched_on_its_training_records(bits, tmp_path):
    X, y = bits
    search = PrivateGridSearch(DPGradientBoostingClassifier(classes=[0, 1], delta=0), {"n_estimators": [5, 10]},
                               epsilon=1.0, random_state=0).fit(X, y)
    assert _within(search.privacy_ledger_, 1.0, 0.0)
    assert search.best_estimator_.privacy_ledger_.total()[0] <= search.run_epsilon_ * (1 + RELATIVE_TOLERANCE)
    assert search.score(X, y) > 0.8
    search.save(tmp_path / "g.json")
    np.testing.assert_array_equal(load_model(tmp_path / "g.json").predict(X), search.predict(X))
    # the same search twice: the same model (the records' order does not matter to its binned table)
    again = PrivateGridSearch(DPGradientBoostingClassifier(classes=[0, 1], delta=0), {"n_estimators": [5, 10]},
                              epsilon=1.0, random_state=0).fit(X[::-1], y[::-1])
    np.testing.assert_array_equal(again.decision_function(X), search.decision_function(X))


# ----------------------------------------------------------------- DPPipeline
SCHEMA = {"target": "y", "columns": [
    {"name": "age", "kind": "numeric", "bounds": [18, 80], "thresholds": "dp-quantiles", "n_thresholds": 3},
    {"name": "job", "kind": "categorical", "categories": ["a", "b", "c"]},
    {"name": "owner", "kind": "binary"}]}


@pytest.fixture(scope="module")
def raw_table():
    rng = np.random.default_rng(5)
    n = 1500
    X = pd.DataFrame({"age": rng.uniform(18, 80, n), "job": rng.choice(["a", "b", "c"], n),
                      "owner": rng.integers(0, 2, n)})
    y = ((X["age"].to_numpy() > 45) ^ (rng.random(n) < 0.1)).astype(int)
    return X, y


@pytest.fixture(scope="module", params=[0.0, 1e-6], ids=["pure", "renyi"])
def pipeline_search(request, raw_table):
    X, y = raw_table
    pipe = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(classes=[0, 1]))
    search = PrivateGridSearch(pipe, {"model__max_length": [1, 2, 3]}, epsilon=1.0, delta=request.param,
                               random_state=0)
    return search.fit(X, y), request.param


def test_a_pipeline_is_searched_with_one_encoding_inside_the_budget(pipeline_search, raw_table):
    from dpglass.models.pipeline.estimator import encoder_epsilons
    from dpglass.schema import Schema

    search, delta = pipeline_search
    X, y = raw_table
    ledger = search.privacy_ledger_
    assert _within(ledger, 1.0, delta) and ledger.total()[1] == delta
    releases = [e.release for e in ledger]
    # the encoder's entries exactly as DPPipeline writes them (its shares of the search's epsilon), then the
    # selection
    alone = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(classes=[0, 1]), random_state=0).fit(X, y)
    enc = [e for e in alone.privacy_ledger_ if e.release.startswith("encoder: ")]
    assert [(e.release, e.mechanism, e.epsilon) for e in ledger][:len(enc)] == [(e.release, e.mechanism, e.epsilon)
                                                                                for e in enc]
    assert releases[len(enc):] == ["model: private selection: the best run's parameters, model and noisy "
                                   "validation score"]
    selection = list(ledger)[-1]
    assert "encoding was fitted once" in selection.note
    eps_q, eps_clip = encoder_epsilons(Schema.from_dict(SCHEMA), 1.0, 0.1, 0.02)
    assert selection.epsilon <= (1.0 - eps_q - eps_clip) * (1 + RELATIVE_TOLERANCE)
    # best_estimator_ is a DPPipeline of that encoding and the selected model, with the same ledger
    best = search.best_estimator_
    assert isinstance(best, DPPipeline) and best.privacy_ledger_ is ledger
    assert set(search.best_params_) == {"model__max_length"}
    assert best.model.max_length == search.best_params_["model__max_length"]
    assert best.model_.best_estimator_.max_length == search.best_params_["model__max_length"]
    # predict on raw rows, columns in any order
    np.testing.assert_array_equal(search.predict(X[["owner", "age", "job"]]), best.predict(X))
    assert (search.predict(X) == y).mean() > 0.75
    assert "PrivateGridSearch" in search.to_text() and "age>" in search.to_text()


def test_a_searched_pipeline_round_trips_and_tampered_entries_are_refused(pipeline_search, raw_table, tmp_path):
    search, _ = pipeline_search
    X, _ = raw_table
    search.save(tmp_path / "s.json")
    search.best_estimator_.save(tmp_path / "b.json")
    assert json.loads((tmp_path / "s.json").read_text()) == json.loads((tmp_path / "b.json").read_text())
    loaded = load_model(tmp_path / "s.json")
    assert isinstance(loaded, DPPipeline)
    np.testing.assert_array_equal(loaded.predict(X), search.predict(X))
    data = json.loads((tmp_path / "s.json").read_text())
    assert "selected_by" in data["inner_model"]

    def halve_encoder_entry(d):
        e = d["privacy_ledger"]["entries"][0]
        d["privacy_ledger"]["total"]["epsilon"] -= e["epsilon"] / 2
        e["epsilon"] /= 2

    def drop_clip_entry(d):  # the total recomputed: the file claims the count cost nothing
        d["privacy_ledger"]["total"]["epsilon"] -= d["privacy_ledger"]["entries"].pop(3)["epsilon"]

    def cheaper_selection(d):  # the selection claims less, in the pipeline's ledger and in the inner model's
        for led in (d["privacy_ledger"], d["inner_model"]["privacy_ledger"]):
            led["entries"][-1]["epsilon"] /= 2
            led["total"]["epsilon"] -= led["entries"][-1]["epsilon"]

    def bigger_run(d):
        d["inner_model"]["params"]["epsilon"] *= 1.5

    for edit, match in ((halve_encoder_entry, r"entries\[0\]\.epsilon"), (drop_clip_entry, r"privacy_ledger\.entries"),
                        (cheaper_selection, "entries"), (bigger_run, "epsilon")):
        bad = json.loads(json.dumps(data))
        edit(bad)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ModelFileError, match=match):
            load_model(tmp_path / "bad.json")


def test_a_pipeline_grid_names_the_models_parameters(raw_table):
    X, y = raw_table
    pipe = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier())
    for grid, match in (({"quantile_share": [0.1, 0.2]}, "'model__max_length'"),
                        ({"model__epsilon": [0.5]}, "free of 'epsilon'"),
                        ({"model__max_lenght": [2]}, "does not have")):
        with pytest.raises(InvalidParameterError, match=match):
            PrivateGridSearch(pipe, grid, epsilon=1.0).fit(X, y)
    certified = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(mechanism="certified-pf"))
    with pytest.raises(InvalidParameterError, match="needs delta > 0"):
        PrivateGridSearch(certified, {"model__max_length": [2]}, epsilon=1.0).fit(X, y)
