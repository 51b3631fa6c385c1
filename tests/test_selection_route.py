"""PrivateGridSearch over a DPPipeline takes the pipeline's route for its model (numbers for dp-gbdt and dp-gam,
codes for dp-gam), with one encoding paid from the search's epsilon; numeric records are searched as a table of
records (dpglass.models.selection.records)."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.exceptions import InvalidParameterError, ModelFileError
from dpglass.models import DPGradientBoostingClassifier, DPPipeline, PrivateGridSearch, load_model
from dpglass.models.selection.records import record_table
from dpglass.privacy.ledger import RELATIVE_TOLERANCE

SCHEMA = {"target": "y", "columns": [
    {"name": "age", "kind": "numeric", "bounds": [18, 80], "thresholds": "dp-quantiles", "n_thresholds": 3},
    {"name": "job", "kind": "categorical", "categories": ["a", "b", "c"]},
    {"name": "owner", "kind": "binary"}]}
GRID = {"model__n_estimators": [5, 10]}


@pytest.fixture(scope="module")
def raw_table():
    rng = np.random.default_rng(5)
    n = 1500
    X = pd.DataFrame({"age": rng.uniform(18, 80, n), "job": rng.choice(["a", "b", "c"], n),
                      "owner": rng.integers(0, 2, n)})
    y = ((X["age"].to_numpy() > 45) ^ (rng.random(n) < 0.1)).astype(int)
    return X, y


def _gbdt_pipe():
    return DPPipeline(schema=SCHEMA, model=DPGradientBoostingClassifier(classes=[0, 1], delta=0))


@pytest.fixture(scope="module")
def gbdt_search(raw_table):
    X, y = raw_table
    return PrivateGridSearch(_gbdt_pipe(), GRID, epsilon=2.0, random_state=0).fit(X, y)


def test_a_gbdt_pipeline_is_searched_on_numbers_with_the_pipelines_budget(gbdt_search, raw_table):
    X, y = raw_table
    best = gbdt_search.best_estimator_
    assert best.encoding_.numbers and not best.encoding_.codes
    assert best.model_.best_estimator_.bounds == [(18.0, 80.0), None, None, None, None]
    # numbers go to the model: no DP quantile is released by the encoder, only the clipped count
    releases = [e.release for e in gbdt_search.privacy_ledger_]
    assert releases[0].startswith("encoder: noisy count") and len(releases) == 2
    eps, delta = gbdt_search.privacy_ledger_.total()
    assert eps <= 2.0 * (1 + RELATIVE_TOLERANCE) and delta == 0
    assert (gbdt_search.predict(X) == y).mean() > 0.8
    # the records' order does not matter (the table of records is sorted)
    again = PrivateGridSearch(_gbdt_pipe(), GRID, epsilon=2.0, random_state=0).fit(X.iloc[::-1], y[::-1])
    assert json.dumps(again.to_dict()) == json.dumps(gbdt_search.to_dict())


def test_the_searched_route_round_trips_and_a_changed_bound_is_refused(gbdt_search, raw_table, tmp_path):
    X, _ = raw_table
    gbdt_search.save(tmp_path / "s.json")
    loaded = load_model(tmp_path / "s.json")
    np.testing.assert_array_equal(loaded.predict_proba(X), gbdt_search.predict_proba(X))
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["encoding"]["numbers"] is True and "selected_by" in data["inner_model"]

    def wider_bound(d):
        d["inner_model"]["params"]["bounds"][0] = [0.0, 100.0]

    def zero_one_route(d):
        d["encoding"]["numbers"] = False

    def other_point(d):
        d["inner_model"]["selected_by"]["best_params"] = {"n_estimators": 7}

    def other_label(d):
        d["classes"] = [0, 2]

    def dropped_clip_count(d):  # the total recomputed: the file claims the count cost nothing
        d["privacy_ledger"]["total"]["epsilon"] -= d["privacy_ledger"]["entries"].pop(0)["epsilon"]

    def reordered(d):
        d["privacy_ledger"]["entries"].reverse()

    for edit, match in ((wider_bound, r"inner_model\.params\.bounds"), (zero_one_route, "encoding"),
                        (other_point, r"selected_by\.best_params"), (other_label, "classes"),
                        (dropped_clip_count, "privacy_ledger"), (reordered, "privacy_ledger")):
        bad = json.loads(json.dumps(data))
        edit(bad)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ModelFileError, match=match):
            load_model(tmp_path / "bad.json")


def test_through_dask_the_search_is_the_in_memory_one(gbdt_search, raw_table):
    dd = pytest.importorskip("dask.dataframe")
    X, y = raw_table
    frame = dd.from_pandas(X.assign(y=y), npartitions=3)
    search = PrivateGridSearch(_gbdt_pipe(), GRID, epsilon=2.0, random_state=0).fit(frame[list(X.columns)],
                                                                                    frame["y"])
    assert json.dumps(search.to_dict()) == json.dumps(gbdt_search.to_dict())


def test_model_auto_inside_a_search_is_refused_in_the_users_terms(raw_table):
    X, y = raw_table
    with pytest.raises(InvalidParameterError, match="model='auto' chooses the class from a noisy count"):
        PrivateGridSearch(DPPipeline(schema=SCHEMA, model="auto"), GRID, epsilon=1.0).fit(X, y)


def test_a_direct_search_over_dp_gbdt_with_bounds_reads_numbers(raw_table, tmp_path):
    X, y = raw_table
    Xn = X[["age", "owner"]].astype(float)
    est = DPGradientBoostingClassifier(classes=[0, 1], delta=0, bounds=[(18, 80), None])
    search = PrivateGridSearch(est, {"n_estimators": [5, 10]}, epsilon=2.0, random_state=1).fit(Xn, y)
    assert (search.predict(Xn) == y).mean() > 0.8
    search.save(tmp_path / "g.json")
    np.testing.assert_array_equal(load_model(tmp_path / "g.json").predict(Xn), search.predict(Xn))
    # zero records fit with a declared label set (whether fit succeeds must not depend on n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        empty = PrivateGridSearch(est, {"n_estimators": [5]}, epsilon=2.0, random_state=1).fit(Xn.iloc[:0], y[:0])
    assert empty.best_estimator_.classes_.tolist() == [0, 1]


def test_the_table_of_records_is_a_function_of_the_multiset_of_records():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (200, 3)).astype(float)
    X[rng.random(200) < 0.1, 1] = np.nan
    X[:5, 0] = -0.0
    y = rng.integers(0, 3, 200)
    a = record_table(X, y)
    perm = rng.permutation(200)
    b = record_table(X[perm], y[perm])
    assert a.n_records == 200 and a.n_entries < 200
    np.testing.assert_array_equal(a.rows, b.rows)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.counts, b.counts)
    # the records come back as a multiset: same rows and labels, counts expanded
    R, L = a.records()
    got = sorted(map(repr, zip(map(tuple, R), L)))
    want = sorted(map(repr, zip(map(tuple, X + 0.0), y)))
    assert got == want
    part = a.with_counts(np.where(np.arange(a.n_entries) % 2 == 0, a.counts, 0))
    assert part.n_records == a.counts[::2].sum() and part.n_entries == len(a.counts[::2])


# ------------------------------------------------------------------- dp-gam
GAM_SCHEMA = {"target": "y", "columns": [
    {"name": "age", "kind": "numeric", "bounds": [18, 80], "thresholds": "grid", "n_thresholds": 4,
     "missing": "none"},
    {"name": "job", "kind": "categorical", "categories": ["a", "b", "c"]},
    {"name": "owner", "kind": "binary"}]}
GAM_GRID = {"model__n_cycles": [1, 2], "model__max_bins": [4, 8]}


@pytest.fixture(scope="module")
def gam_data():
    rng = np.random.default_rng(7)
    n = 1500
    X = pd.DataFrame({"age": rng.uniform(18, 80, n), "job": rng.choice(["a", "b", "c"], n),
                      "owner": rng.integers(0, 2, n)})
    X.loc[rng.random(n) < 0.05, "age"] = np.nan
    y = ((X["age"].fillna(30).to_numpy() > 45) ^ (rng.random(n) < 0.1)).astype(int)
    return X, y


def _gam_pipe():
    from dpglass.models import DPGAMClassifier

    return DPPipeline(schema=GAM_SCHEMA, model=DPGAMClassifier(classes=[0, 1], first_cycle="gradients"))


@pytest.fixture(scope="module")
def gam_search(gam_data):
    X, y = gam_data
    return PrivateGridSearch(_gam_pipe(), GAM_GRID, epsilon=2.0, delta=1e-6, random_state=0).fit(X, y)


def test_a_gam_pipeline_is_searched_on_its_route_by_renyi_curves(gam_search, gam_data):
    X, y = gam_data
    best = gam_search.best_estimator_
    assert best.encoding_.numbers and best.encoding_.codes and best.encoding_.missing_bins
    run = best.model_.best_estimator_
    assert run.categories == [None, 3, None] and run.missing == [True, False, False]
    assert run.feature_groups == ["age", "job", "owner"] and run.accountant == "rdp"
    eps, delta = gam_search.privacy_ledger_.total()
    assert eps <= 2.0 * (1 + RELATIVE_TOLERANCE) and delta <= 1e-6 * (1 + RELATIVE_TOLERANCE)
    assert run.privacy_ledger_.total()[0] <= gam_search.run_epsilon_ * (1 + RELATIVE_TOLERANCE)
    assert (gam_search.predict(X) == y).mean() > 0.75


def test_the_curve_the_search_charges_is_the_runs_own_plan(gam_search):
    """The Rényi curve of a run is the sum of the curves of the entries dp-gam's plan makes from its public
    parameters (d and K stated by the pipeline): the run's actual ledger holds exactly those entries."""
    from dataclasses import asdict

    from sklearn.base import clone

    from dpglass.models.selection.rdp import release_entries

    run = gam_search.best_estimator_.model_.best_estimator_
    planned = release_entries(clone(run))
    assert [asdict(e) for e in planned] == [asdict(e) for e in run.privacy_ledger_]


def test_a_searched_gam_pipeline_round_trips_and_tampering_is_refused(gam_search, gam_data, tmp_path):
    X, _ = gam_data
    gam_search.save(tmp_path / "g.json")
    np.testing.assert_array_equal(load_model(tmp_path / "g.json").predict_proba(X), gam_search.predict_proba(X))
    data = json.loads((tmp_path / "g.json").read_text())

    def fewer_codes(d):
        d["inner_model"]["params"]["categories"] = [None, 2, None]

    def bigger_run(d):
        d["inner_model"]["params"]["epsilon"] *= 1.5

    def no_missing_bin(d):
        d["inner_model"]["params"]["missing"] = [False, False, False]

    for edit, match in ((fewer_codes, "categories"), (bigger_run, "epsilon"), (no_missing_bin, "missing")):
        bad = json.loads(json.dumps(data))
        edit(bad)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ModelFileError, match=match):
            load_model(tmp_path / "bad.json")


def test_a_gam_search_through_dask_is_the_in_memory_one(gam_search, gam_data):
    dd = pytest.importorskip("dask.dataframe")
    X, y = gam_data
    frame = dd.from_pandas(X.assign(y=y), npartitions=4)
    search = PrivateGridSearch(_gam_pipe(), GAM_GRID, epsilon=2.0, delta=1e-6, random_state=0).fit(
        frame[list(X.columns)], frame["y"])
    assert json.dumps(search.to_dict()) == json.dumps(gam_search.to_dict())


def test_gam_searches_it_cannot_compose_are_refused_before_any_run(gam_data, monkeypatch):
    from dpglass.models import DPGAMClassifier

    X, y = gam_data
    fits = []
    monkeypatch.setattr(DPGAMClassifier, "fit", lambda self, *a, **k: fits.append(1))
    with pytest.raises(InvalidParameterError, match="needs delta > 0; give the search a delta > 0"):
        PrivateGridSearch(_gam_pipe(), GAM_GRID, epsilon=2.0, delta=0.0).fit(X, y)
    undeclared = DPPipeline(schema=GAM_SCHEMA, model=DPGAMClassifier())
    with pytest.raises(InvalidParameterError, match="needs the number of columns and of classes"):
        PrivateGridSearch(undeclared, GAM_GRID, epsilon=2.0, delta=1e-6).fit(X, y)
    assert not fits


def test_a_run_budget_dp_gam_cannot_plan_only_moves_the_calibrations_bracket():
    """At epsilon/1024 dp-gam's plan on 12 columns asks for noise beyond the exact sampler's range: the
    calibration starts its bracket at the smallest doubling every candidate can run (public parameters only)."""
    from dpglass.models import DPGAMClassifier
    from dpglass.models.selection.plan import release_plan
    from dpglass.models.selection.rdp import Unplannable, release_entries

    est = DPGAMClassifier(classes=[0, 1], bounds=[(0, 1)] * 12, missing=[False] * 12, first_cycle="gradients",
                          max_bins=16)
    with pytest.raises(Unplannable, match="cannot be planned"):
        release_entries(est.set_params(epsilon=1 / 1024, delta=1e-6, n_cycles=3, max_bins=16,
                                       first_cycle="gradients", accountant="rdp"))
    plan = release_plan({"estimator": est, "param_grid": {"n_cycles": [1, 2, 3]}, "epsilon": 1.0, "delta": 1e-6,
                         "method": "liu-talwar", "stopping_probability": 0.25, "eta": None,
                         "validation_fraction": 0.2})
    entry = plan.steps[0].entry
    assert 0.2 < plan.run_epsilon < 0.4 and 0.99 < entry.epsilon <= 1.0 and entry.delta == 1e-6


def test_neighbouring_record_sets_give_tables_one_count_apart():
    """Removing one record lowers one entry's count by 1 (dropping it at 0) and leaves every other entry and the
    entries' order as they were: the table is the multiset of records, and the split (Binomial(count, f) per
    entry) is the per-record Bernoulli law on it, as for the 0/1 pattern table."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (60, 2)).astype(float)
    X[rng.random(60) < 0.2, 0] = np.nan
    y = rng.integers(0, 2, 60)
    full = record_table(X, y)
    for i in range(60):
        keep = np.arange(60) != i
        part = record_table(X[keep], y[keep])
        assert part.n_records == full.n_records - 1
        def key(t, k):
            return t.rows[k].tobytes(), int(t.labels[k])

        a = {key(full, k): int(c) for k, c in enumerate(full.counts)}
        b = {key(part, k): int(c) for k, c in enumerate(part.counts)}
        moved = {k for k in a if a[k] != b.get(k, 0)}
        assert len(moved) == 1 and set(b) <= set(a)
        (k,) = moved
        assert a[k] - b.get(k, 0) == 1 and k == (np.ascontiguousarray(X[i] + 0.0).tobytes(), int(y[i]))
        # the other entries keep their order
        order_a = [key(full, k) for k in range(full.n_entries) if key(full, k) in b]
        assert order_a == [key(part, k) for k in range(part.n_entries)]


# ------------------------------------------------------------ dp-gam "auto" sizes
@pytest.mark.parametrize("binning", ["uniform", "quantile"])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("epsilon", [0.05, 0.7, 5.0])
def test_the_auto_size_curve_bounds_every_branch_and_no_smaller_one_does(binning, K, epsilon):
    """dp-gam with "auto" sizes picks its branch from its released class counts: the search charges a run
    the prefix's curve plus alpha * rho_hi.  Every branch's full plan (counts spanning every size the rule picks)
    stays below it at every order; and the largest branch is within 1% of it (a bound 2% lower is broken)."""
    from dpglass.models import DPGAMClassifier
    from dpglass.models.gam.plan import gam_plan
    from dpglass.models.selection.rdp import _sum_curves, _training_curve
    from dpglass.privacy import rdp

    d = 4
    est = DPGAMClassifier(classes=list(range(K)), bounds=[(0, 1), (0, 1), None, None], categories=[None, None, 3, None],
                          epsilon=epsilon, delta=1e-6, accountant="rdp", binning=binning, first_cycle="auto",
                          n_cycles="auto", max_bins="auto", count_share="auto")
    params = est.get_params(deep=False)
    bound = _training_curve(est)
    prefix = _sum_curves(s.entry for s in gam_plan(params, d, K).bins)
    branches, worst = set(), 0.0
    for n_hat in [0, 1, 3, 10, 30, 60, 100, 200, 300, 600, 1000, 3000, 10**4, 10**5, 10**6, 10**7]:
        counts = [n_hat // K] * K
        branch = gam_plan(params, d, K, class_counts=counts)
        branches.add((branch.public.first_cycle, branch.public.n_cycles, branch.public.max_bins))
        curve = _sum_curves(s.entry for s in branch.steps)
        assert np.all(curve <= bound * (1 + 1e-9) + 1e-12), n_hat
        worst = max(worst, float(np.max((curve - prefix) / rdp.ORDERS)))
    assert len(branches) >= 2  # the counts-only model (naive Bayes) and the gradient cycles, at least
    rho_hi = float(np.max((bound - prefix) / rdp.ORDERS))
    assert worst >= 0.99 * rho_hi and not np.all(prefix + rdp.ORDERS * 0.98 * rho_hi >= prefix + rdp.ORDERS * worst)


def test_a_pipeline_over_dp_gam_with_auto_sizes_is_searched(gam_data, tmp_path):
    from dpglass.models import DPGAMClassifier

    X, y = gam_data
    auto = {k: "auto" for k in ("first_cycle", "n_cycles", "max_bins", "count_share")}
    pipe = DPPipeline(schema=GAM_SCHEMA, model=DPGAMClassifier(classes=[0, 1], **auto))
    search = PrivateGridSearch(pipe, {"model__max_step": [1.0, 2.0]}, epsilon=2.0, delta=1e-6,
                               stopping_probability=0.5, random_state=0).fit(X, y)
    eps, delta = search.privacy_ledger_.total()
    assert eps <= 2.0 * (1 + RELATIVE_TOLERANCE) and delta <= 1e-6 * (1 + RELATIVE_TOLERANCE)
    search.save(tmp_path / "a.json")
    np.testing.assert_array_equal(load_model(tmp_path / "a.json").predict(X), search.predict(X))


@pytest.mark.parametrize("which", ["dp-gam", "dp-gbdt"])
def test_a_routed_pipeline_search_fits_zero_records_with_a_declared_label_set(which):
    from dpglass.models import DPGAMClassifier

    X = pd.DataFrame({"age": pd.Series(dtype=float), "job": pd.Series(dtype=object), "owner": pd.Series(dtype=int)})
    model, grid, delta = ((DPGAMClassifier(classes=[0, 1], first_cycle="gradients"), {"model__n_cycles": [1, 2]}, 1e-6)
                          if which == "dp-gam" else
                          (DPGradientBoostingClassifier(classes=[0, 1], delta=0), {"model__n_estimators": [5]}, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = PrivateGridSearch(DPPipeline(schema=GAM_SCHEMA, model=model), grid, epsilon=1.0, delta=delta,
                                   random_state=0).fit(X, np.zeros(0, dtype=int))
    assert search.best_estimator_.classes_.tolist() == [0, 1] and isinstance(search.best_score_, int)


def test_the_bracket_also_moves_past_auto_sizes_that_leave_no_zcdp():
    """At epsilon/1024 on 12 columns an "auto" dp-gam has no zCDP left for its counts (a zero rho): that budget
    is unplannable too, and the calibration starts above it."""
    from dpglass.models import DPGAMClassifier
    from dpglass.models.selection.plan import release_plan

    auto = {k: "auto" for k in ("first_cycle", "n_cycles", "max_bins", "count_share")}
    est = DPGAMClassifier(classes=[0, 1], bounds=[(0, 1)] * 12, missing=[False] * 12, **auto)
    plan = release_plan({"estimator": est, "param_grid": {"max_step": [1.0, 2.0]}, "epsilon": 0.98, "delta": 1e-6,
                         "method": "liu-talwar", "stopping_probability": 0.25, "eta": None,
                         "validation_fraction": 0.2})
    assert 0.2 < plan.run_epsilon < 0.4 and plan.steps[0].entry.epsilon <= 0.98


def test_only_a_numeric_or_code_column_moves_a_search_off_the_01_table():
    from dpglass.models import DPGAMClassifier, DPRuleListClassifier
    from dpglass.models.selection.records import reads_numbers

    assert not reads_numbers(DPGradientBoostingClassifier()) and not reads_numbers(DPRuleListClassifier())
    assert not reads_numbers(DPGradientBoostingClassifier(bounds=[None, None]))
    assert reads_numbers(DPGradientBoostingClassifier(bounds=[None, (0, 1)]))
    assert reads_numbers(DPGAMClassifier(bounds=[None, None], categories=[None, 3]))
    assert not reads_numbers(DPGAMClassifier(categories=[None, None]))


@pytest.mark.parametrize("which", ["dp-gam", "dp-gbdt"])
def test_a_three_class_pipeline_is_searched_on_its_route(gam_data, tmp_path, which):
    from dpglass.models import DPGAMClassifier

    X, _ = gam_data
    age = X["age"].fillna(30).to_numpy()
    y = np.where(age < 35, "young", np.where(age < 60, "middle", "old"))
    labels = ["middle", "old", "young"]
    model, grid, delta = ((DPGAMClassifier(classes=labels), {"model__n_cycles": [1, 2]}, 1e-6)
                          if which == "dp-gam" else
                          (DPGradientBoostingClassifier(classes=labels, delta=0), {"model__n_estimators": [5, 10]}, 0.0))
    search = PrivateGridSearch(DPPipeline(schema=GAM_SCHEMA, model=model), grid, epsilon=3.0, delta=delta,
                               random_state=0).fit(X, y)
    proba = search.predict_proba(X)
    assert proba.shape == (len(y), 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert (search.predict(X) == y).mean() > 0.6
    search.save(tmp_path / "k3.json")
    np.testing.assert_array_equal(load_model(tmp_path / "k3.json").predict_proba(X), proba)
