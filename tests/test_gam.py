"""dp-gam (issue 28): the privacy map of each release on both sides of its limit, the plan and the ledger, the file
(round trip, tampers refused naming the field), the shapes summing to the decision function, Dask = in memory,
the pipeline's feature groups, and a black-box audit on a tiny pair."""

import copy
import itertools
import json
import math
import pathlib
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from ledger_edits import cheaper, entries, recompose

from dpglass.audit import audit_mechanism
from dpglass.cli import main
from dpglass.exceptions import InvalidParameterError, ModelFileError
from dpglass.models import DPPipeline, load_model
from dpglass.models._verify import verify_model_dict
from dpglass.models.gam import DPGAMClassifier
from dpglass.models.gam.fit import bin_sums, class_probabilities, record_terms
from dpglass.models.gam.plan import (
    QUANTUM,
    gam_plan,
    grid_units,
    release_plan,
    sum_grid,
    term_bounds,
    term_caps,
)
from dpglass.privacy.accounting import compose

LABELS = ["Gentoo", "Adelie", "Chinstrap"]  # declared in this (unsorted) order


#: The gradient route's fixed sizes (the defaults before "auto" sizes): the tests of its plan's mechanics use them.
FIXED = {"first_cycle": "gradients", "n_cycles": 2, "max_bins": 16, "count_share": 0.25}

def data(n=600, d=5, K=2, seed=0):
    """0/1 features; x0 says 'class 1', x1 'class 2' (K = 3), each right about 85% of the time."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    X = (rng.random((n, d)) < 0.4).astype(np.uint8)
    for k in range(1, K):
        X[:, k - 1] = np.where(rng.random(n) < 0.85, y == k, rng.random(n) < 0.3)
    return X, y


# --------------------------------------------------------------------------- (1) privacy maps
def _simplex_points(K, rng, n=20000):
    """Scores of classes 1..K-1 (class 0: 0): random ones, large ones (near the simplex's corners and edges)."""
    F = np.concatenate([rng.normal(0, 2, (n, K - 1)), rng.normal(0, 30, (n, K - 1))])
    extremes = [np.full(K - 1, 40.0), np.zeros(K - 1)]
    for k in range(K - 1):
        e = np.full(K - 1, -40.0)
        e[k] = 40.0
        extremes.append(e)
    return np.concatenate([F, np.array(extremes)])


@pytest.mark.parametrize("K", [2, 3, 4, 6])
def test_term_bounds_hold_on_the_simplex_and_are_approached(K):
    """||g||^2 <= min(K - 1, 2) and ||h||^2 <= 1/16, 1/8, 4/27 (K = 2, 3, >= 4) on every score vector, and each
    is approached (within 1e-6): a bound 1% smaller fails."""
    g_b, h_b = (float(b) for b in term_bounds(K))
    P = class_probabilities(_simplex_points(K, np.random.default_rng(K)))[:, 1:]
    worst_g = max(float(np.max(((P - np.eye(K)[y, 1:]) ** 2).sum(axis=1))) for y in range(K))
    worst_h = float(np.max(((P * (1 - P)) ** 2).sum(axis=1)))
    assert worst_g <= g_b * (1 + 1e-12) and worst_h <= h_b * (1 + 1e-12)
    # the points where the bounds are reached: p_y -> 0 with another class -> 1; p = 1/2 (K = 2), (0, 1/2, 1/2),
    # (0, 1/3, 1/3, 1/3, 0..)
    C = K - 1
    at_g = class_probabilities(np.array([[-40.0] + [40.0] + [-40.0] * (C - 2)] if C >= 2 else [[40.0]]))[:, 1:]
    y = 1 if C >= 2 else 0
    assert float(((at_g - np.eye(K)[y, 1:]) ** 2).sum()) > g_b * (1 - 1e-6)
    m = min(C, 3) if C != 1 else 1
    at_h = class_probabilities(np.array([[40.0] * m + [-40.0] * (C - m)] if C > 1 else [[0.0]]))[:, 1:]
    assert float(((at_h * (1 - at_h)) ** 2).sum()) > h_b * (1 - 1e-6)


def test_the_hessian_bound_for_three_or_more_scores_beats_the_per_term_bound():
    """For C >= 3 the bound 4/27 is not C/16 (each term's 1/16): three classes at 1/3 give 4/27 > 1/8."""
    assert term_bounds(4)[1] == Fraction(4, 27) > Fraction(1, 8) == term_bounds(3)[1]
    assert term_caps(2) == (2**20, 2**18)


@pytest.mark.parametrize("K", [2, 3, 5])
def test_quantised_terms_stay_within_their_caps(K):
    """The rounded terms are projected to the caps: the l2 bound holds for what is summed."""
    F = _simplex_points(K, np.random.default_rng(7), n=5000)
    g_cap, h_cap = term_caps(K)
    for y in range(K):
        g, h = record_terms(F, np.full(F.shape[0], y), K)
        assert int(np.max((g * g).sum(axis=1))) <= g_cap**2 and int(np.max((h * h).sum(axis=1))) <= h_cap**2


def _domain(K, d=2):
    rows = np.array(list(itertools.product([0, 1], repeat=d)), dtype=np.uint8)
    return np.repeat(rows, K, axis=0), np.tile(np.arange(K), len(rows))


def _states(K, d, rng):
    """Model states (intercept, shapes): random, and the ones that reach the bounds."""
    C = K - 1
    states = [(rng.normal(0, s, C), rng.normal(0, s, (d, 2, C))) for s in (0.5, 3, 20) for _ in range(4)]
    corner = np.full(C, -40.0)
    corner[-1] = 40.0
    states += [(corner, np.zeros((d, 2, C))), (np.full(C, 40.0), np.zeros((d, 2, C))), (np.zeros(C), np.zeros((d, 2, C)))]
    return states


@pytest.mark.parametrize("K", [2, 3, 4])
def test_each_visit_moves_by_at_most_its_sensitivity_on_every_neighbouring_pair(K):
    """Brute force on a small domain (d = 2, every (x, y)): every dataset of up to 2 records and each with one more
    record; at every model state and feature, the rounded gradient and Hessian sums (what the noise is added to)
    move by at most the plan's sensitivity in grid units, and the exact sums reach the real bound (a bound 1%
    smaller fails); the class counts move by 1."""
    d = 2
    Xd, yd = _domain(K, d)
    n = len(yd)
    eye = np.eye(n, dtype=np.int64)
    base = np.array([np.zeros(n, dtype=np.int64), *eye, *(eye[i] + eye[j] for i in range(n) for j in range(i, n))])
    grids = [sum_grid(cap, K - 1) for cap in term_caps(K)]
    reached, units = [0.0, 0.0], [0.0, 0.0]
    for intercept, shapes in _states(K, d, np.random.default_rng(K)):
        F = intercept + sum(shapes[j][Xd[:, j]] for j in range(d))
        for which, (grid, T) in enumerate(zip(grids, record_terms(F, yd, K))):
            for j in range(d):
                # the sums of every dataset (as bin_sums computes them), then of every dataset with record r added
                S = np.stack([bin_sums(Xd[:, j], c, T) for c in base])  # (datasets, 2, C)
                added = np.zeros((n, 2, K - 1), dtype=np.int64)
                added[np.arange(n), Xd[:, j]] = T  # record r's terms, in its bin
                assert all(np.array_equal(bin_sums(Xd[:, j], base[5] + eye[r], T), S[5] + added[r]) for r in range(n))
                U, V = grid_units(S, grid), grid_units(S[:, None] + added[None], grid)
                moved = np.sqrt(((V - U[:, None]).astype(float) ** 2).sum(axis=(2, 3)))
                assert moved.max() <= grid.units, (which, moved.max(), grid.units)
                units[which] = max(units[which], float(moved.max()))
                reached[which] = max(reached[which], float(np.sqrt((added.astype(float) ** 2).sum(axis=(1, 2))).max()))
    for which, grid in enumerate(grids):
        assert reached[which] <= grid.cap and reached[which] * QUANTUM > 0.99 * math.sqrt(term_bounds(K)[which])
        assert units[which] > 0.99 * grid.cap / 2**grid.shift  # the rounded sums too: a bound below cap/grid fails
    counts_step = gam_plan(DPGAMClassifier().get_params(), d, K).counts
    assert counts_step.entry.sensitivity == 1.0 and counts_step.entry.curve["sensitivity"] == 1


def test_the_grid_sensitivity_adds_sqrt_c_units_to_the_cap():
    """Two classes: the gradient's grid is 2**-5 and a record moves 32 + 1 units (the leaf sums of DP-GBDT);
    K classes: the grid is finer by about sqrt(C) and the rounding adds sqrt(C)."""
    g2 = sum_grid(term_caps(2)[0], 1)
    assert (g2.grid, g2.units) == (2.0**-5, 33)
    for K in (3, 5, 12, 255):
        for cap in term_caps(K):
            g = sum_grid(cap, K - 1)
            real = cap / 2**g.shift
            assert g.units - 1 < real + math.sqrt(K - 1) <= g.units and real >= 32 * math.sqrt(K - 1) / 2


# --------------------------------------------------------------------------- (2) the plan and the ledger
def test_the_fit_spends_exactly_its_plan_within_the_budget():
    X, y = data(K=3)
    for params in (dict(n_cycles=2), dict(n_cycles=1, accountant="pld"), dict(accountant="rdp", epsilon=0.3)):
        m = DPGAMClassifier(classes=[0, 1, 2], random_state=0, **{**FIXED, **params}).fit(X, y)
        plan = release_plan(m.get_params(), X.shape[1], 3)
        assert [e for e in m.privacy_ledger_] == [s.entry for s in plan]
        assert len(plan) == 1 + 2 * m.n_cycles * X.shape[1]
        assert [s.release for s in plan[1:5]] == ["cycle 1, feature 0: gradient sums", "cycle 1, feature 0: Hessian sums",
                                                  "cycle 1, feature 1: gradient sums", "cycle 1, feature 1: Hessian sums"]
        eps, delta = m.privacy_ledger_.total()
        assert eps <= m.epsilon * (1 + 1e-9) and delta == 1e-8
        assert eps == compose([s.entry for s in plan], m.accountant_, 1e-8)[0]
        assert eps > 0.97 * m.epsilon  # the calibration leaves little on the table


def test_the_released_sums_are_the_rounded_sums_plus_discrete_gaussian_noise():
    """Draw for draw: a visit's release is (rint(S / grid) + Z) * grid with Z the step's discrete Gaussian."""
    from dpglass.privacy.mechanisms import DiscreteGaussianMechanism

    plan = gam_plan(DPGAMClassifier(**{**FIXED, "n_cycles": 1}).get_params(), 2, 3)
    _, step, _ = plan.visits[0]
    S = np.array([[123456789, -987654], [5, 2**30]], dtype=np.int64)
    grid = sum_grid(term_caps(3)[0], 2)
    curve = step.entry.curve
    mech = DiscreteGaussianMechanism(curve["sigma"], step.entry.delta, curve["sensitivity"])
    want = (grid_units(S, grid) + (mech.randomise(np.zeros((2, 2), dtype=np.int64), np.random.default_rng(5)))) * grid.grid
    assert np.array_equal(step.noise(S, np.random.default_rng(5)), want)
    assert step.domain.step == grid.grid and step.entry.sensitivity == grid.cap * QUANTUM


def test_parameters_that_give_no_plan_are_refused_in_the_users_terms():
    X, y = data()
    with pytest.raises(InvalidParameterError, match="'delta' parameter"):
        DPGAMClassifier(delta=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="feature_groups"):
        DPGAMClassifier(feature_groups=["a", "b"]).fit(X, y)
    with pytest.raises(InvalidParameterError, match="accountant"):
        DPGAMClassifier(accountant="basic").fit(X, y)


def test_a_private_grid_search_refuses_dp_gam_before_any_run():
    """PrivateGridSearch composes a run as pure epsilon-DP or by a release plan without the data's d and K: dp-gam
    (Gaussian sums, never delta = 0) is refused in the user's terms, before anything is drawn."""
    from dpglass.models import PrivateGridSearch

    X, y = data()
    for delta in (0.0, 1e-6):
        with pytest.raises(InvalidParameterError, match="cannot be searched"):
            PrivateGridSearch(estimator=DPGAMClassifier(classes=[0, 1]), param_grid={"n_cycles": [1, 2]},
                              epsilon=3.0, delta=delta, random_state=0).fit(X, y)


def test_the_family_spends_only_through_its_plan():
    src = pathlib.Path(__file__).parents[1] / "src" / "dpglass" / "models" / "gam"
    for path in src.glob("*.py"):
        assert not re.search(r"\.spend\(|_entries\.append", path.read_text()), path
    assert ".release(" in (src / "fit.py").read_text()


def test_zero_records_with_a_declared_label_set_fit():
    m = DPGAMClassifier(classes=[0, 1, 2], random_state=0, **FIXED).fit(np.zeros((0, 3), dtype=np.uint8), np.zeros(0))
    assert len(m.privacy_ledger_) == 1 + 2 * 2 * 3 and [s.shape for s in m.shapes_] == [(2, 2)] * 3


# --------------------------------------------------------------------------- (3) reading the model
@pytest.mark.parametrize("K", [2, 3])
def test_the_contributions_sum_to_the_decision_function_on_every_row(K):
    X, y = data(K=K, seed=2)
    labels = np.array(LABELS[:K])[y]
    m = DPGAMClassifier(epsilon=2.0, classes=LABELS[:K], random_state=1).fit(X, labels)
    table = m.explain()
    assert list(table.columns) == ["group", "feature", "bin", "value", "class", "contribution"]
    scores = m.decision_function(X)
    for c, label in enumerate(LABELS[1:K], start=1):
        part = table[table["class"] == label]
        intercept = float(part.loc[part.feature == "(intercept)", "contribution"].iloc[0])
        lookup = {(f, int(b)): v for f, b, v in part.loc[part.feature != "(intercept)", ["feature", "bin", "contribution"]].itertuples(index=False)}
        names = m.feature_names()
        total = np.array([intercept + sum(lookup[(names[j], int(row[j]))] for j in range(X.shape[1])) for row in X])
        np.testing.assert_allclose(scores if K == 2 else scores[:, c], total, rtol=1e-12, atol=1e-12)
    Z = np.column_stack([np.zeros(len(X)), scores]) if K == 2 else scores
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(m.predict_proba(X), E / E.sum(axis=1, keepdims=True), rtol=1e-12)
    assert list(m.classes_) == LABELS[:K]


def test_the_printout_is_a_table_of_shapes_per_group():
    X, y = data(K=3, d=4)
    frame = pd.DataFrame(X, columns=["age>30", "age>50", "sex=F", "smoker"])
    m = DPGAMClassifier(feature_groups=["age", "age", "sex", "smoker"], classes=[0, 1, 2], random_state=0)
    text = m.fit(frame, y).to_text()
    assert "4 features in 3 groups" in text and "score(1)" in text and "score(2)" in text
    lines = text.splitlines()
    i = lines.index("group age")
    assert lines[i + 1].startswith("  age>30") and lines[i + 3].startswith("  age>50") and "group sex" in lines
    assert set(m.explain().group) == {"(intercept)", "age", "sex", "smoker"}


# --------------------------------------------------------------------------- (4) the file
@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    X, y = data(K=3, seed=4)
    m = DPGAMClassifier(epsilon=1.0, n_cycles=2, classes=LABELS, random_state=3).fit(X, np.array(LABELS)[y])
    path = tmp_path_factory.mktemp("gam") / "gam.json"
    m.save(path)
    return m, path, json.loads(path.read_text()), X


def test_a_saved_file_loads_inspects_and_predicts_the_same(fitted, capsys):
    m, path, _, X = fitted
    back = load_model(path)
    assert np.array_equal(back.predict_proba(X), m.predict_proba(X)) and back.to_text() == m.to_text()
    assert main(["inspect", str(path)]) == 0 and "verified: yes" in capsys.readouterr().out


def _raw_sum(d):
    """A visit's released sum replaced by an exact (raw) sum: a multiple of 2**-20, not of the grid."""
    d["visits"][0]["gradient_sums"][0][0] = 12.345678 + 2.0**-20


TAMPERS = {
    "gradient sum off its grid": (lambda d: d["visits"][1]["gradient_sums"][1].__setitem__(0, 0.001), "visits[1].gradient_sums"),
    "Hessian sum off its grid": (lambda d: d["visits"][2]["hessian_sums"][0].__setitem__(1, 1.0 + 2.0**-30), "visits[2].hessian_sums"),
    "raw gradient sum": (_raw_sum, "visits[0].gradient_sums"),
    "released sum moved on its grid": (lambda d: d["visits"][3]["gradient_sums"][0].__setitem__(0, d["visits"][3]["gradient_sums"][0][0] + 1.0), "shapes"),
    "shape edited": (lambda d: d["shapes"][1][0].__setitem__(0, 0.25), "shapes"),
    "intercept edited": (lambda d: d["intercept"].__setitem__(1, 0.0), "intercept"),
    "class count not an integer": (lambda d: d["class_counts"].__setitem__(0, 10.5), "class_counts"),
    "class count edited": (lambda d: d["class_counts"].__setitem__(2, d["class_counts"][2] + 50), "intercept"),
    "a visit dropped": (lambda d: d["visits"].pop(), "visits"),
    "a visit's key renamed": (lambda d: d["visits"][0].update(raw=d["visits"][0].pop("hessian_sums")), "visits[0]"),
    "visit epsilon edited": (lambda d: d.update(visit_epsilon=d["visit_epsilon"] * 2), "visit_epsilon"),
    "Hessian floor edited": (lambda d: d.update(hessian_floor=1.0), "hessian_floor"),
    "delta edited": (lambda d: d.update(delta=1e-6), "delta"),
    "a class label changed": (lambda d: d["classes"].__setitem__(1, "Emperor"), "classes"),
    "class labels reordered": (lambda d: d.update(classes=d["classes"][::-1]), "classes"),
    "feature groups of the wrong length": (lambda d: d["params"].update(feature_groups=["a"]), "params.feature_groups"),
    "more cycles claimed": (lambda d: d["params"].update(n_cycles=3), "visits"),
    "dropped ledger entry": (lambda d: (entries(d).pop(), recompose(d)), "privacy_ledger.entries"),
    "added ledger entry": (lambda d: (entries(d).append(copy.deepcopy(entries(d)[-1])), recompose(d)), "privacy_ledger.entries"),
    "reordered ledger entries": (lambda d: (entries(d).insert(1, entries(d).pop(2)), recompose(d)), "privacy_ledger.entries[1]"),
    "cheaper entry": (lambda d: cheaper(d, 3), "privacy_ledger.entries[3]"),
    "smaller sensitivity": (lambda d: (entries(d)[1].update(sensitivity=1.0), recompose(d)), "privacy_ledger.entries[1].sensitivity"),
    "accountant changed": (lambda d: (d["privacy_ledger"].update(accountant="pld" if d["privacy_ledger"]["accountant"] == "rdp" else "rdp"), recompose(d)), "privacy_ledger"),
}


@pytest.mark.parametrize("name", list(TAMPERS))
def test_an_edited_file_is_refused_naming_the_field(fitted, name, tmp_path, capsys):
    _, _, data, _ = fitted
    edit, field = TAMPERS[name]
    data = copy.deepcopy(data)
    edit(data)
    with pytest.raises(ModelFileError) as err:
        verify_model_dict(copy.deepcopy(data), DPGAMClassifier)
    assert f"'{field}" in str(err.value), str(err.value)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    assert main(["inspect", str(path)]) == 2


# --------------------------------------------------------------------------- (5) Dask and the pipeline
def test_a_dask_fit_is_the_in_memory_model(dask_client):
    dd = pytest.importorskip("dask.dataframe")
    X, y = data(n=900, K=3, seed=6)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(y=np.array(LABELS)[y])
    ddf = dd.from_pandas(frame, npartitions=3)
    cols = [f"f{j}" for j in range(X.shape[1])]
    for classes in (LABELS, None):
        kw = dict(n_cycles=2, classes=classes, random_state=2)
        through_dask = DPGAMClassifier(**kw).fit(ddf[cols], ddf["y"])
        in_memory = DPGAMClassifier(**kw).fit(frame[cols], frame["y"])
        assert json.dumps(through_dask.to_dict()) == json.dumps(in_memory.to_dict())


SCHEMA = {"columns": [
    {"name": "age", "kind": "numeric", "bounds": [18, 80], "thresholds": "grid", "n_thresholds": 3},
    {"name": "job", "kind": "categorical", "categories": ["a", "b", "c"]},
    {"name": "flag", "kind": "binary"}], "target": "y"}


def _raw(n=1500, seed=8):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(18, 80, n), "job": rng.choice(["a", "b", "c"], n),
                       "flag": rng.integers(0, 2, n)})
    y = np.where((df.age > 45) | (df.job == "c") & (rng.random(n) < 0.8), "hi", "lo")
    return df, y


def test_the_pipeline_hands_dp_gam_each_columns_raw_column(tmp_path):
    df, y = _raw()
    p = DPPipeline(schema=SCHEMA, model=DPGAMClassifier(), epsilon=2.0, random_state=0).fit(df, y)
    # the schema route (issue 28): age as numbers with its bounds, job as codes, one column (one group) each
    assert p.model_.feature_groups == ["age", "job", "flag"] and p.model_.categories == [None, 3, None]
    table = p.model_.explain()
    assert list(dict.fromkeys(table.group)) == ["(intercept)", "age", "job", "flag"]
    assert "age" in p.to_text() and "job" in p.to_text()
    p.save(tmp_path / "p.json")
    back = load_model(tmp_path / "p.json")
    assert np.array_equal(back.predict_proba(df), p.predict_proba(df))
    # a model given its own groups is refused: the pipeline groups by the schema's columns (its file check binds them)
    with pytest.raises(InvalidParameterError, match="feature_groups=None"):
        DPPipeline(schema=SCHEMA, model=DPGAMClassifier(feature_groups=list("abc")), random_state=0).fit(df, y)


def test_the_pipeline_leaves_other_models_parameters_alone():
    from dpglass.models import DPLogisticRegression

    df, y = _raw()
    p = DPPipeline(schema=SCHEMA, model=DPLogisticRegression(), random_state=0).fit(df, y)
    assert "feature_groups" not in p.model_.get_params()


# --------------------------------------------------------------------------- (6) the audit
def test_black_box_audit_on_a_tiny_pair():
    """2,000 seeded fits of the whole estimator (one cycle, one feature, two classes; the RDP accountant, whose
    composition is quick) on 3 records and on 2 of them, both directions: the measured lower bound stays within the
    claim."""
    X = np.array([[1], [0], [1]], dtype=np.uint8)
    y = np.array([1, 0, 0])
    pair_d, pair_dp = (X, y), (X[:2], y[:2])

    def batch(pair, n, rng):
        A, b = pair
        out = []
        for s in rng.integers(0, 2**63 - 1, size=n):
            m = DPGAMClassifier(epsilon=1.0, n_cycles=1, accountant="rdp", classes=[0, 1], random_state=int(s)).fit(A, b)
            out.append(np.concatenate([np.ravel(m.class_counts_), *(np.ravel(v) for v in m.visit_sums_[0])]))
        return np.array(out, dtype=np.float64)

    res = audit_mechanism(batch=batch, d=pair_d, d_prime=pair_dp, n_samples=2_000, claim=(1.0, 1e-8), rng=31,
                          name="DPGAMClassifier, 3 vs 2 records")
    assert res.verdict == "PASS", res.summary()
