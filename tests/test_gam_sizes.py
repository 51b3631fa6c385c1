"""dp-gam's "auto" sizes: the plan branches on the released class counts by a public rule, every branch composes
to the budget, the file check recomputes the branch, Dask equals in memory."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest

from dpglass.audit import audit_learner
from dpglass.audit.artifact import neighbour_artifact_check
from dpglass.exceptions import ModelFileError
from dpglass.models import DPGAMClassifier
from dpglass.models._verify import verify_model_dict
from dpglass.models.gam import sizes
from dpglass.models.gam.plan import auto_bound, gam_plan
from dpglass.privacy.accounting import compose
from dpglass.privacy.mechanisms.gaussian import zcdp_epsilon

AUTO = {"first_cycle": "auto", "n_cycles": "auto", "max_bins": "auto", "count_share": "auto"}
BOUNDS = [(0, 10), None, None, (0, 10)]
CATEGORIES = [None, 4, None, None]
MISSING = [False, False, False, True]


def raw(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n) * 10, rng.integers(0, 4, n), rng.random(n) < 0.5, rng.random(n) * 10])
    X[rng.random(n) < 0.1, 3] = np.nan
    y = ((X[:, 0] > 5).astype(int) + 2 * (X[:, 1] == 2)).clip(0, 2)
    return X.astype(float), y


def model(**kw):
    kw = {"bounds": BOUNDS, "categories": CATEGORIES, "missing": MISSING, "classes": [0, 1, 2], "random_state": 0,
          **AUTO, **kw}
    return DPGAMClassifier(**kw)


def _rho(entry) -> float:
    c = entry.curve
    return c["sensitivity"] ** 2 / (2.0 * c["sigma"] ** 2)


# --------------------------------------------------------------------------- the rule
def test_the_rule_is_a_public_function_of_the_signal():
    assert sizes.rule(1.0, 0.1) == {"first_cycle": "counts", "n_cycles": 0, "max_bins": 2}
    assert sizes.rule(4.0, 0.1) == {"first_cycle": "counts", "n_cycles": 0, "max_bins": 4}
    assert sizes.rule(1e4, 2.9) == {"first_cycle": "counts", "n_cycles": 0, "max_bins": 4}
    assert sizes.rule(1e4, 3.0) == sizes.LARGE
    p = {"epsilon": 1.0, "first_cycle": "auto", "n_cycles": 3, "max_bins": "auto", "binning": "uniform"}
    for version in (1, 2):
        got = sizes.resolve(p, [-5, 20, 30], 5, 3, 80, version)  # n_hat = 50, s = 50 / 15, t = 50 / 240
        assert got["n_cycles"] == 3 and got["first_cycle"] == "counts" and got["max_bins"] == 4
        assert sizes.resolve({**p, "binning": "quantile"}, [40, 60, 0], 5, 3, 80, version)["max_bins"] == 16
    # t = 800 / 240 >= 3: version 1 takes the gradients; c = 800 / 3 < 300: version 2 the naive Bayes
    assert sizes.resolve(p, [-5, 500, 300], 5, 3, 80, 1)["first_cycle"] == "gradients"
    assert sizes.resolve(p, [-5, 500, 300], 5, 3, 80, 2)["first_cycle"] == "counts"
    assert sizes.resolve(p, [-5, 500, 400], 5, 3, 80, 2)["first_cycle"] == "gradients"  # c = 900 / 3 = 300
    assert sizes.resolve(p, [-5, 500, 300], 5, 3, 80) == sizes.resolve(p, [-5, 500, 300], 5, 3, 80, 2)
    assert not sizes.is_auto({"first_cycle": "counts", "n_cycles": 2, "max_bins": 16})


@pytest.mark.parametrize("s,t,c", [(0.5, 0.1, 10.0), (4.0, 2.9, 1e4), (40.0, 6.0, 299.9), (100.0, 30.0, 300.0),
                                   (1e4, 1e3, 1e6)])
def test_version_2_is_version_1_but_below_the_class_signal(s, t, c):
    """Version 2 changes the branch only where t >= 3 (version 1's gradients) and c < 300 (the naive Bayes, with
    version 1's bins); elsewhere both versions pick the same sizes."""
    v1, v2 = sizes.rule(s, t), sizes.rule_v2(s, t, c)
    if t >= sizes.COUNTS_SIGNAL and c < sizes.CLASS_SIGNAL:
        assert v1 == sizes.LARGE and v2["first_cycle"] == "counts" and v2["n_cycles"] == 0
        assert v2["max_bins"] == (2 if s < sizes.TWO_BINS_SIGNAL else 4)
    else:
        assert v1 == v2


# --------------------------------------------------------------------------- every branch within the budget
@pytest.mark.parametrize("eps,d,K,binning", [(0.1, 4, 2, "uniform"), (1.0, 13, 3, "uniform"),
                                              (1.0, 4, 3, "quantile"), (4.0, 64, 10, "uniform")])
def test_every_branch_composes_to_the_budget_and_the_supremum_too(eps, d, K, binning):
    """Adaptive composition: the counts' entry is the same in every branch, each branch fits, and the supremum
    of the branches' rest (linear Renyi curves: the largest rest zCDP) with the counts fits as well."""
    bounds = [(0, 1)] * d
    params = {**DPGAMClassifier(epsilon=eps, bounds=bounds, binning=binning, **AUTO).get_params(), "delta": 1e-6}
    prefix = gam_plan(params, d, K)
    assert prefix.pending and prefix.steps[-1] is prefix.counts
    n_pre = len(prefix.steps)
    worst, seen = 0.0, set()
    for n in (0, 1, 10, 100, 1000, 10**4, 10**5, 10**7):
        counts = [n // K] * K
        plan = gam_plan(params, d, K, counts)
        assert [s.entry for s in plan.steps[:n_pre]] == [s.entry for s in prefix.steps]
        assert compose([s.entry for s in plan.steps], "rdp", 1e-6)[0] <= eps
        seen.add((plan.public.first_cycle, plan.public.n_cycles, plan.public.max_bins))
        worst = max(worst, sum(_rho(s.entry) for s in plan.steps[n_pre:]))
    assert len(seen) >= 2  # the grid of counts reaches several branches
    rho_c = _rho(prefix.counts.entry)
    bound = auto_bound(params, d, K)  # what a search may compose for any run: above every branch, barely
    assert [e for e in bound[:-1]] == [s.entry for s in prefix.steps[:-1]]
    assert rho_c + worst <= _rho(bound[-1]) <= (rho_c + worst) * 1.03
    pre = [s.entry for s in prefix.steps[:-1]]
    if not pre:  # every release a discrete Gaussian: the supremum is a zCDP sum
        assert zcdp_epsilon(1.0 / np.sqrt(2 * (rho_c + worst)), 1.0, 1e-6) <= eps
    # the counts' share is 1/(d + 1) of the budget's zCDP, fixed before the branch
    assert rho_c == pytest.approx((rho_c + worst) / (d + 1), rel=0.05)


# --------------------------------------------------------------------------- fit, file check, tampering
@pytest.mark.parametrize("n", [40, 5000])
def test_an_auto_fit_follows_its_branch_and_its_file_verifies(n):
    X, y = raw(n=n)
    m = model().fit(X, y)
    plan = gam_plan(m.get_params(), 4, 3, m.class_counts_)
    assert [e for e in m.privacy_ledger_] == [s.entry for s in plan.steps]
    assert m.privacy_ledger_.accountant == "rdp" and m.privacy_ledger_.total()[0] <= 1.0
    big = plan.public.n_cycles > 0
    assert big == (n == 5000)
    data = json.loads(json.dumps(m.to_dict()))
    back = DPGAMClassifier.from_dict(data)
    assert np.array_equal(back.decision_function(X), m.decision_function(X))
    assert m.to_text().splitlines()[0].count(f"{plan.public.n_cycles} cycle") == 1


def test_tampered_counts_or_branch_are_refused_naming_the_field():
    X, y = raw(n=40)
    data = json.loads(json.dumps(model().fit(X, y).to_dict()))
    verify_model_dict(data, DPGAMClassifier)
    edits = {
        "class_counts": lambda d: d["class_counts"].__setitem__(0, 0.5),
        "edges|visits": lambda d: d["class_counts"].__setitem__(0, 10**6),  # another branch: other bins, cycles
        "first_cycle_counts": lambda d: d.pop("first_cycle_counts"),
        "privacy_ledger": lambda d: d["privacy_ledger"]["entries"].pop(),
    }
    for field, edit in edits.items():
        d = copy.deepcopy(data)
        edit(d)
        with pytest.raises(ModelFileError, match=field):
            verify_model_dict(d, DPGAMClassifier)


def test_zero_records_and_quantiles_with_auto_sizes():
    X, y = raw(n=10)
    m = model().fit(X[:0], y[:0])
    assert m.predict(X).shape == (10,)
    verify_model_dict(json.loads(json.dumps(model(binning="quantile", max_bins=8).fit(*raw(n=500)).to_dict())),
                      DPGAMClassifier)
    q = model(binning="quantile").fit(*raw(n=2000))
    assert [e.release for e in q.privacy_ledger_][:3] == ["bins: 15 quantiles of column 0",
                                                          "bins: 15 quantiles of column 3",
                                                          "class counts (the initial scores)"]
    verify_model_dict(json.loads(json.dumps(q.to_dict())), DPGAMClassifier)


def test_plain_columns_with_auto_sizes():
    rng = np.random.default_rng(1)
    X = (rng.random((400, 6)) < 0.5).astype(int)
    y = X[:, 0] | X[:, 1]
    m = DPGAMClassifier(epsilon=1.0, classes=[0, 1], random_state=0, **AUTO).fit(X, y)
    verify_model_dict(json.loads(json.dumps(m.to_dict())), DPGAMClassifier)
    assert m.score(X, y) >= 0.6


def test_dask_equals_in_memory_with_auto_sizes():
    dd = pytest.importorskip("dask.dataframe")
    X, y = raw(n=1500)
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(4)])
    for kw in ({}, {"binning": "quantile"}):
        mem = model(**kw).fit(df, y)
        dsk = model(**kw).fit(dd.from_pandas(df, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3))
        assert json.dumps(mem.to_dict()) == json.dumps(dsk.to_dict())


# --------------------------------------------------------------------------- the artifact and a black-box audit
@pytest.mark.parametrize("n", [40, 3000])  # the naive-Bayes branch and the gradient branch
def test_no_published_field_is_a_deterministic_function_of_the_data_with_auto_sizes(n):
    """D against D minus one record: no field (file or printout) constant across seeds differs between the two
    sides (the branch, the plan and every size are functions of released counts only)."""
    X, y = raw(n=n, seed=3)
    drop = int(np.flatnonzero(y == 2)[0])
    leaks = neighbour_artifact_check(lambda s: model(random_state=s), X, y, drop=drop, seeds=range(6))
    assert leaks == [], leaks[:5]


def test_quick_audit_of_an_auto_sized_file_on_a_tiny_pair():
    """A 60-run black-box audit a side at epsilon = 1 of the file's predictions and its branch (cycles, bins)
    against the neighbour without one record of the third class."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.random(25) * 10, rng.integers(0, 4, 25), rng.random(25) < 0.5, rng.random(25) * 10])
    y = np.arange(25) % 3

    def view(m):
        return (len(m.visit_sums_), tuple(len(e) for e in m.edges_),
                tuple(str(v) for v in m.predict(np.unique(X, axis=0))))

    res = audit_learner(model(epsilon=1.0, missing=None), X, y, neighbour=len(y) - 1, n_runs=60, claim=(1.0, 0.0),
                        rng=0, output=view)
    assert res.verdict == "PASS", res.summary()
