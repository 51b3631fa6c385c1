"""Release plans of the teacher ensembles (issue 27): subsample-and-aggregate and DP-Bag spend only through
their plans (models/teachers/plan.py), and the file verifier replays them."""

import json
import pathlib
import re
import warnings
from dataclasses import asdict

import numpy as np
import pytest

from dpglass.exceptions import BudgetExceededError, ModelFileError
from dpglass.models import DPBaggingClassifier, SubsampleAggregateClassifier
from dpglass.models.teachers.plan import (
    DPBAG_MECHANISM,
    dpbag_release_plan,
    saa_label_entry,
    saa_labels,
    saa_release_plan,
)
from dpglass.privacy.accounting import compose
from dpglass.privacy.ledger import PrivacyLedger
from ledger_edits import load_dict
from dpglass.privacy.mechanisms import ReportNoisyMax
from dpglass.privacy.plan import Integers, Points

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "dpglass"


def _data(n=600, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(np.uint8)
    y = (X[:, 0] | X[:, 1]).astype(np.uint8)
    return X, y, (rng.random((300, d)) < 0.5).astype(np.uint8)


def _fit(cls, public=True, **params):
    X, y, X_public = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DP-Bag's paper-claim warning is not the subject here
        return cls(random_state=0, **params).fit(X, y, X_public=X_public if public else None)


def _plan(model):
    params = model.get_params(deep=False)
    if isinstance(model, DPBaggingClassifier):
        return dpbag_release_plan(params)
    return saa_release_plan(params, model.n_public_)


SAA = dict(epsilon=2.0, delta=1e-6, n_teachers=10, noise_scale=6.0)
BAG = dict(epsilon=3.0, delta=1e-5, n_teachers=10, n_partitions=3, noise_scale=10.0)
FITS = {
    "saa auto": (SubsampleAggregateClassifier, True, SAA),
    "saa basic, delta 0": (SubsampleAggregateClassifier, True, {**SAA, "delta": 0.0}),
    "saa rdp, no public part": (SubsampleAggregateClassifier, False, {**SAA, "accountant": "rdp", "n_public": 80}),
    "saa no label": (SubsampleAggregateClassifier, True, {**SAA, "epsilon": 0.01, "delta": 0.0}),
    "dp-bag": (DPBaggingClassifier, True, BAG),
    "dp-bag default delta, no public part": (DPBaggingClassifier, False, {**BAG, "delta": None, "n_public": 90}),
}


# ------------------------------------------------------------------ the fit follows the plan
@pytest.mark.parametrize("name", list(FITS))
def test_the_fit_records_exactly_its_plan(name):
    cls, public, params = FITS[name]
    model = _fit(cls, public, **params)
    assert [asdict(e) for e in model.privacy_ledger_.entries] == [asdict(s.entry) for s in _plan(model)]


def test_saa_plan_is_q_label_releases_composed_from_public_inputs():
    params = SubsampleAggregateClassifier(**{**SAA, "noise_scale": 25.0}).get_params()
    (step,) = saa_release_plan(params, 300)
    q, acct, eps, delta = saa_labels(params, 300)
    assert acct in ("pld", "rdp") and 50 < q < 300  # tight composition: more than basic's epsilon * noise_scale
    assert (eps, delta) == compose([saa_label_entry(25.0)] * q, acct, 1e-6) and eps <= 2.0
    assert step.entry.epsilon == eps and step.entry.guarantee == "proven"
    assert step.entry.mechanism == f"composition(discrete laplace x{q}, {acct})"
    assert step.domain == Integers() and step.fields == ()  # noisy counts; the file does not hold them
    assert saa_labels(params, 9)[0] == 9 and saa_labels({**params, "max_queries": 4}, 300)[0] == 4  # the cap


def test_saa_step_draws_exactly_q_counts_after_the_budget_check():
    params = SubsampleAggregateClassifier(**SAA).get_params()
    plan = saa_release_plan(params, 300)
    q = saa_labels(params, 300)[0]
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):  # half the budget: refused before anything is drawn
        PrivacyLedger(epsilon=1.0, delta=1e-6).follow(plan).release(plan[0], np.zeros(q, np.int64), rng)
    assert rng.bit_generator.state == before
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-6).follow(plan)
    with pytest.raises(RuntimeError, match=f"releases {q} vote counts"):
        ledger.release(plan[0], np.zeros(q + 1, np.int64), rng)
    assert len(ledger) == 0
    noisy = ledger.release(plan[0], np.full(q, 5, np.int64), rng)
    assert noisy.shape == (q,) and noisy.dtype == np.int64 and len(ledger) == 1


def test_dpbag_plan_is_one_paper_claim_step_of_labels():
    params = DPBaggingClassifier(**{**BAG, "delta": None}).get_params()
    (step,) = dpbag_release_plan(params)
    e = step.entry
    assert (e.mechanism, e.guarantee, e.epsilon, e.delta) == (DPBAG_MECHANISM, "paper-claim", 3.0, 1e-8)
    assert (e.sensitivity, e.scale, e.curve) == (3.0, 30.0, None)
    assert step.domain == Points((0, 1)) and step.fields == ()
    ones = np.array([0, 30, 15, 29, 1])  # votes for the second class out of k T = 30
    labels = step.noise(np.column_stack([30 - ones, ones]), np.random.default_rng(4))  # each query's vote histogram
    mech, rng = ReportNoisyMax(epsilon=0.2, sensitivity=3.0), np.random.default_rng(4)
    assert labels.tolist() == [mech.select(np.array([30.0 - v, v]), rng) for v in ones]  # one draw a query, in order
    assert step.domain.problem(labels) is None


# ------------------------------------------------------------------ the verifier replays it
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("teachers")
    out = {}
    for name in ("saa auto", "dp-bag"):
        cls, public, params = FITS[name]
        path = root / f"{name}.json"
        _fit(cls, public, **params).save(path)
        out[name] = json.loads(path.read_text())
    return out


def _entry(d):
    return d["privacy_ledger"]["entries"][0]


def _cheaper(d):
    _entry(d)["epsilon"] *= 0.999
    d["privacy_ledger"]["total"]["epsilon"] = _entry(d)["epsilon"]  # the totals agree: only the plan tells
    return "privacy_ledger.entries[0].epsilon"


TAMPERS = {
    "dropped entry": lambda d: d["privacy_ledger"]["entries"].clear() or "privacy_ledger",
    "cheaper labels": _cheaper,
    "renamed release": lambda d: _entry(d).update(release="labels") or "privacy_ledger.entries[0].release",
    "note edited": lambda d: _entry(d).update(note="") or "privacy_ledger.entries[0].note",
    "scale edited": lambda d: _entry(d).update(scale=_entry(d)["scale"] * 2) or "privacy_ledger.entries[0].scale",
    "curve added": lambda d: _entry(d).update(curve={"kind": "pure"}) or "privacy_ledger.entries[0].curve",
    "noise scale edited": lambda d: d["params"].update(noise_scale=d["params"]["noise_scale"] * 2) or "privacy_ledger",
}


@pytest.mark.parametrize("model", ["saa auto", "dp-bag"])
@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_the_verifier_replays_the_plan(saved, model, tamper):
    data = json.loads(json.dumps(saved[model]))
    load_dict(data)  # the untouched file loads
    field = TAMPERS[tamper](data)
    with pytest.raises(ModelFileError, match=re.escape(repr(field)[:-1])):
        load_dict(data)


def test_saa_number_of_labels_is_the_plans(saved):
    data = json.loads(json.dumps(saved["saa auto"]))
    q = data["n_labelled"]
    data["params"]["max_queries"] = q - 1  # fewer labels allowed than the file claims to hold
    with pytest.raises(ModelFileError, match="privacy_ledger.entries"):
        load_dict(data)
    data = json.loads(json.dumps(saved["saa auto"]))
    data["composition"] = "basic" if data["composition"] != "basic" else "pld"
    with pytest.raises(ModelFileError, match="composition"):
        load_dict(data)


def test_dpbag_claim_cannot_be_made_proven(saved):
    data = json.loads(json.dumps(saved["dp-bag"]))
    _entry(data)["guarantee"] = data["privacy_ledger"]["guarantee"] = "proven"
    with pytest.raises(ModelFileError, match="privacy_ledger.entries\\[0\\].guarantee"):
        load_dict(data)


def test_a_composed_epsilon_off_in_its_last_bits_is_the_plans(saved):
    """PLD and RDP floats may differ in their last bits between machines: within 1e-9 relative is accepted."""
    data = json.loads(json.dumps(saved["saa auto"]))
    eps = float(np.nextafter(_entry(data)["epsilon"], 0.0))
    _entry(data)["epsilon"] = data["privacy_ledger"]["total"]["epsilon"] = eps
    assert load_dict(data).n_labelled_ == saved["saa auto"]["n_labelled"]


# ------------------------------------------------------------------ one copy of the plan
def test_the_teachers_write_no_ledger_entry_by_hand_and_verify_without_budget_arithmetic():
    for path in ("models/teachers/estimator.py", "models/teachers/plan.py", "models/teachers/verify.py"):
        assert not re.search(r"\.spend\(|ledger_of\(|_entries\.append", (SRC / path).read_text()), path
    verifier = (SRC / "models/teachers/verify.py").read_text()
    assert not re.search(r"compose\(|saa_query_budget\(|DiscreteLaplaceMechanism|ReportNoisyMax", verifier)
    assert "check_against_plan" in verifier


def test_privacy_does_not_import_models():
    for path in (SRC / "privacy").rglob("*.py"):
        assert not re.search(r"^\s*(from|import) dpglass\.models", path.read_text(), re.M), path
