"""PrivateGridSearch's release plan (issue 27): the search spends only through selection.plan.release_plan (one
step, the best of K runs), and load_model replays it from the file's selected_by, budget and model parameters."""

import copy
import json
import pathlib
import re
import warnings
from dataclasses import asdict

import numpy as np
import pandas as pd
import pytest

from dpglass.exceptions import BudgetExceededError, ModelFileError
from dpglass.models import (
    DPLogisticRegression,
    DPPipeline,
    DPRuleListClassifier,
    PrivateGridSearch,
    SmoothBoostClassifier,
)
from dpglass.models.selection.plan import (
    RandomStopping, SearchData, SelectedRun, candidate_guarantee, release_plan,
)
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.rng import check_random_state
from ledger_edits import entries, load_dict, recompose

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "dpglass"


def _bits(n=900, d=5, seed=2):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(n) < 0.1)).astype(np.uint8)
    return X, y


def _fit(search, X=None, y=None):
    if X is None:
        X, y = _bits()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the paper-claim and weak-epsilon warnings are not the subject here
        return search.fit(X, y)


SEARCHES = {
    "logistic, liu-talwar": lambda: PrivateGridSearch(
        DPLogisticRegression(classes=[0, 1]), {"alpha": [1.0, 10.0]}, epsilon=1.5, stopping_probability=0.4,
        random_state=1),
    "boosting, papernot-steinke": lambda: PrivateGridSearch(
        SmoothBoostClassifier(classes=[0, 1]), {"n_rounds": [1, 3], "learning_rate": [0.25, 0.5]}, epsilon=2.0,
        method="papernot-steinke", eta=0.5, stopping_probability=0.3, validation_fraction=0.3, random_state=2),
    "rule lists, delta > 0": lambda: PrivateGridSearch(
        DPRuleListClassifier(mechanism="local-pf", classes=[0, 1]), {"max_length": [2, 3]}, epsilon=1.5, delta=1e-6,
        stopping_probability=0.4, random_state=3),
    "smooth-cauchy and local-pf": lambda: PrivateGridSearch(
        DPRuleListClassifier(classes=[0, 1]), {"mechanism": ["local-pf", "smooth-cauchy"], "max_length": [2]},
        epsilon=2.0, stopping_probability=0.6, random_state=1),
}


@pytest.fixture(scope="module")
def fitted():
    return {name: _fit(make()) for name, make in SEARCHES.items()}


@pytest.fixture(scope="module")
def saved(fitted):
    return {name: json.loads(json.dumps(s.to_dict())) for name, s in fitted.items()}


# ------------------------------------------------------------------ the fit follows the plan
@pytest.mark.parametrize("name", list(SEARCHES))
def test_the_fit_records_exactly_its_plan(fitted, name):
    search = fitted[name]
    plan = release_plan(search._selection_params())
    assert [asdict(e) for e in search.privacy_ledger_.entries] == [asdict(s.entry) for s in plan.steps]
    assert search.run_epsilon_ == plan.run_epsilon and search.eta_ == plan.eta
    params = search.best_estimator_.get_params(deep=False)
    assert {k: params[k] for k in plan.run_budget} == plan.run_budget  # every run got the plan's budget
    assert search.best_params_ in plan.candidates and isinstance(search.best_score_, int)


def test_the_plan_is_built_from_public_parameters_only():
    """The same parameters give the same plan, before any data is read; its one step is the whole selection."""
    params = SEARCHES["rule lists, delta > 0"]()._selection_params()
    a, b = release_plan(params), release_plan(params)
    assert a.steps == b.steps and len(a.steps) == 1 and a.steps[0].fields == (
        "selected_by.best_params", "selected_by.noisy_correct_count")
    assert a.steps[0].entry.epsilon <= 1.5 and a.steps[0].entry.delta == 1e-6


def test_the_budget_is_checked_before_the_first_run():
    """The selection's one release goes through PrivacyLedger.release: a plan over the budget runs nothing."""
    plan = release_plan(SEARCHES["logistic, liu-talwar"]()._selection_params())
    runs = []
    ledger = PrivacyLedger(epsilon=1.0).follow(plan.steps)  # the plan spends 1.5
    data = SearchData(_Table([5, 3]), lambda train, validation: lambda params, rng: runs.append(params))
    with pytest.raises(BudgetExceededError):
        ledger.release(plan.steps[0], data, check_random_state(0))
    assert runs == [] and len(ledger) == 0


class _Table:
    """The two things the selection mechanism reads of a pattern table: its entries' counts, and a part of it."""

    def __init__(self, counts):
        self.counts = np.asarray(counts)

    def with_counts(self, counts):
        return _Table(counts)


def test_the_mechanism_draws_k_runs_and_keeps_the_best():
    """RandomStopping splits the table, draws K, each run's grid point, its training stream and its score noise;
    ties keep the earliest run."""
    plan = release_plan(SEARCHES["boosting, papernot-steinke"]()._selection_params())
    step = plan.steps[0]
    assert isinstance(step.noise, RandomStopping)
    seen, parts = [], []

    def runs(train, validation):
        parts.append((train.counts, validation.counts))
        return run

    def run(params, rng):
        seen.append(params)
        return f"model {len(seen)}", 100 * params["n_rounds"]  # exact counts: more rounds score better

    out = PrivacyLedger(epsilon=2.0).follow(plan.steps).release(step, SearchData(_Table([40, 0, 25]), runs),
                                                               check_random_state(5))
    (train, validation), = parts  # one split, shared by every run
    assert (train + validation).tolist() == [40, 0, 25] and validation.sum() > 0
    assert isinstance(out, SelectedRun) and out.run_params == seen and len(out.noisy) == len(seen) >= 1
    assert out.index == int(np.flatnonzero(out.noisy == out.noisy.max())[0])  # the earliest of the best
    assert out.model == f"model {out.index + 1}" and out.params == seen[out.index]
    assert out.noisy_correct_count == int(out.noisy[out.index])


def test_a_fitted_search_pickles_without_its_plan(fitted):
    import pickle

    search = pickle.loads(pickle.dumps(fitted["logistic, liu-talwar"]))
    assert len(search.privacy_ledger_) == 1 and not hasattr(search.privacy_ledger_, "_plan")


def test_the_selection_writes_no_ledger_entry_by_hand():
    for path in sorted((SRC / "models" / "selection").glob("*.py")):
        text = path.read_text()
        assert not re.search(r"\.spend\(|\.include\(|_entries\.", text), path
    assert ".release(" in (SRC / "models" / "selection" / "estimator.py").read_text()


# ------------------------------------------------------------------ the guarantee is the grid's
def test_a_mixed_grid_states_its_weakest_guarantee_whichever_candidate_ran():
    """The entry's guarantee is a public property of the grid: before the plan it was read from the runs, so it
    said which candidates had run (here: proven when only local-pf did)."""
    for seed in (1, 5):
        search = _fit(SEARCHES["smooth-cauchy and local-pf"]().set_params(random_state=seed))
        assert search.privacy_ledger_.guarantee == "paper-claim", search.results_["params"]
    proven = _fit(SEARCHES["smooth-cauchy and local-pf"]().set_params(param_grid={"max_length": [2, 3]}))
    assert proven.privacy_ledger_.guarantee == "proven"


RULE_LISTS = [dict(mechanism=m, variant=v) for m in ("errors-pf", "local-pf", "exponential", "noisy-counts",
                                                     "global-laplace", "smooth-cauchy", "smooth-laplace")
             for v in ("corrected", "paper")]
RULE_LISTS += [dict(mechanism="certified-pf", confidence=0.95), dict(mechanism="smooth-cauchy", confidence=0.95),
               dict(mechanism="global-gaussian", variant="paper"), dict(mechanism="global-gaussian")]
BOOSTING = [dict(weak_learner=w, tree_learner=t, variant=v) for w in ("stump", "tree") for t in ("joint", "top-down")
            for v in ("corrected", "paper")]


@pytest.mark.parametrize("cls, params", [(DPRuleListClassifier, p) for p in RULE_LISTS]
                         + [(SmoothBoostClassifier, p) for p in BOOSTING])
def test_candidate_guarantee_is_what_the_familys_ledger_says(cls, params):
    """candidate_guarantee restates from public parameters which configurations a family marks paper-claim; a
    fit of each says the same (the search also refuses a run weaker than its plan)."""
    X, y = _bits(400)
    model = cls(classes=[0, 1], random_state=0, **({"max_length": 2} if cls is DPRuleListClassifier
                                                   else {"n_rounds": 2}), **params)
    try:
        _fit(model, X, y)
    except Exception as exc:  # noqa: BLE001 - a configuration the family refuses is no candidate
        pytest.skip(f"not a valid configuration: {exc}")
    assert candidate_guarantee(model) == model.privacy_ledger_.guarantee


# ------------------------------------------------------------------ the verifier replays the plan
def _zero_cost_copy(d):
    """Another entry that costs nothing (the totals stand): only the plan's entry count refuses it."""
    return dict(entries(d)[0], release="an extra release", epsilon=0.0, delta=0.0)


def _off_grid(d):
    """A valid point of the model's parameters that the grid does not hold, in the file and in the model."""
    point = {k: (v + 7 if isinstance(v, int) else v / 3 if isinstance(v, float) else v)
             for k, v in d["selected_by"]["best_params"].items()}
    d["selected_by"]["best_params"] = point
    d["params"].update(point)


def _another_point(d):
    """The model's parameters at another grid point than the one selected_by says was released."""
    best = d["selected_by"]["best_params"]
    key, values = next((k, v) for g in d["selected_by"]["param_grid"] for k, v in g.items() if len(v) > 1)
    d["params"][key] = next(v for v in values if v != best[key])


def _larger_budget(d):
    d["privacy_ledger"]["budget"]["epsilon"] *= 2


TAMPERS = {
    # the ledger
    "entry dropped": (lambda d: entries(d).pop(), r"privacy_ledger\.entries"),
    "entry added after": (lambda d: entries(d).append(_zero_cost_copy(d)), r"privacy_ledger\.entries"),
    "entry added before (reordered)": (lambda d: entries(d).insert(0, _zero_cost_copy(d)),
                                       r"privacy_ledger\.entries"),
    "cheaper entry": (lambda d: (entries(d)[0].update(epsilon=entries(d)[0]["epsilon"] / 2), recompose(d)),
                      r"privacy_ledger\.entries\[0\]\.epsilon"),
    "note edited": (lambda d: entries(d)[0].update(note=entries(d)[0]["note"] + " Alice: 37.42"),
                    r"privacy_ledger\.entries\[0\]\.note"),
    "scale edited": (lambda d: entries(d)[0].update(scale=entries(d)[0]["scale"] * 2),
                     r"privacy_ledger\.entries\[0\]\.scale"),
    "a larger budget": (_larger_budget, r"privacy_ledger\.entries\[0\]\.epsilon"),
    "accountant pld": (lambda d: d["privacy_ledger"].update(accountant="pld"), r"privacy_ledger\.accountant"),
    # the public parameters the plan is rebuilt from
    "gamma edited": (lambda d: d["selected_by"].update(stopping_probability=0.9),
                     r"privacy_ledger\.entries\[0\]\.(mechanism|epsilon)"),
    "validation fraction edited": (lambda d: d["selected_by"].update(validation_fraction=0.25),
                                   r"privacy_ledger\.entries\[0\]\.note"),
    "a point added to the grid": (lambda d: d["selected_by"]["param_grid"].append(
        copy.deepcopy(d["selected_by"]["param_grid"][0])), r"privacy_ledger\.entries\[0\]\.(note|epsilon)"),
    "encoded_once on a search of its own": (lambda d: d["selected_by"].update(encoded_once=True),
                                            r"privacy_ledger\.entries\[0\]\.note"),
    "an unknown field": (lambda d: d["selected_by"].update(comment="Alice"), r"selected_by\.comment"),
    "grid missing": (lambda d: d["selected_by"].pop("param_grid"), r"selected_by\.param_grid"),
    "a larger run budget": (lambda d: d["params"].update(epsilon=d["params"]["epsilon"] * 1.5), r"params\.epsilon"),
    "the model is not the selected point": (lambda d: _another_point(d), r"params\."),
    # the released values off their domains, or raw values in their place
    "best point off the grid": (_off_grid, r"selected_by\.best_params"),
    "noisy count off the integers": (lambda d: d["selected_by"].update(noisy_correct_count=37.5),
                                     r"selected_by\.noisy_correct_count"),
    "noisy count an integral float": (lambda d: d["selected_by"].update(
        noisy_correct_count=float(d["selected_by"]["noisy_correct_count"])), r"selected_by\.noisy_correct_count"),
    "raw accuracy as the score": (lambda d: d["selected_by"].update(noisy_correct_count=0.8372),
                                  r"selected_by\.noisy_correct_count"),
    "raw value as the best point": (lambda d: d["selected_by"]["best_params"].update(
        {k: 0.8372 for k in d["selected_by"]["best_params"]}), r"selected_by\.best_params"),
}
CASES = [(name, t) for name in SEARCHES for t in TAMPERS]


@pytest.mark.parametrize("name, tamper", CASES)
def test_the_verifier_replays_the_plan(saved, name, tamper):
    data = copy.deepcopy(saved[name])
    load_dict(copy.deepcopy(data))  # the untouched file loads
    edit, field = TAMPERS[tamper]
    edit(data)
    with pytest.raises(ModelFileError, match=field):
        load_dict(data)


def test_a_selected_models_own_values_are_checked_against_their_domains(saved):
    """A raw training value in the selected model's released fields (a coefficient off its grid) is refused by its
    family's check, without a ledger of its own."""
    data = copy.deepcopy(saved["logistic, liu-talwar"])
    data["coef"][0] = 0.4172
    with pytest.raises(ModelFileError, match="coef"):
        load_dict(data)


def test_a_guarantee_claimed_stronger_than_the_grids_is_refused(saved):
    data = copy.deepcopy(saved["smooth-cauchy and local-pf"])
    entries(data)[0]["guarantee"] = "proven"
    recompose(data)
    with pytest.raises(ModelFileError, match=r"privacy_ledger\.entries\[0\]\.guarantee"):
        load_dict(data)


# ------------------------------------------------------------------ a pipeline's selection
SCHEMA = {"target": "y", "columns": [
    {"name": "age", "kind": "numeric", "bounds": [18, 80], "thresholds": "dp-quantiles", "n_thresholds": 3},
    {"name": "owner", "kind": "binary"}]}


@pytest.fixture(scope="module")
def pipeline_file():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"age": rng.uniform(18, 80, 900), "owner": rng.integers(0, 2, 900)})
    y = ((X["age"].to_numpy() > 45) ^ (rng.random(900) < 0.1)).astype(int)
    search = _fit(PrivateGridSearch(DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(classes=[0, 1])),
                                    {"model__max_length": [1, 2]}, epsilon=1.0, random_state=0), X, y)
    return json.loads(json.dumps(search.to_dict()))


def test_a_pipelines_selection_says_it_ran_on_one_encoding(pipeline_file):
    inner = pipeline_file["inner_model"]
    assert inner["selected_by"]["encoded_once"] is True and "encoding was fitted once" in entries(inner)[0]["note"]
    load_dict(pipeline_file)
    data = copy.deepcopy(pipeline_file)
    del data["inner_model"]["selected_by"]["encoded_once"]
    with pytest.raises(ModelFileError, match=r"inner_model|privacy_ledger\.entries\[0\]\.note"):
        load_dict(data)


def test_a_pipelines_selection_entry_moved_before_the_encoders_is_refused(pipeline_file):
    data = copy.deepcopy(pipeline_file)
    entries(data).insert(0, entries(data).pop())
    with pytest.raises(ModelFileError, match=r"privacy_ledger\.entries"):
        load_dict(data)
