"""DP-GBDT with K classes (issue 31): the softmax loss, K trees a round (two classes: one, the binary model).

* the privacy maps on both sides of the limit, by brute force on small K: one record's K gradient terms
  have l1 norm <= 2 and its Hessian terms <= 1 - 1/K (two classes: 1 and 1/4), attained
  (a smaller bound is violated); the quantised, projected terms of the fit never exceed the caps; on every
  neighbouring pair of a small domain the round's split utilities and leaf sums move by at most the plan's
  sensitivity, which is reached; the round's product of exponential mechanisms is within its epsilon (and
  bounded range) on every pair, and a per-tree calibration would not be; DPBoost's joint gain bound;
* the plan: one step per level, gradient sums and Hessian sums for the round's K trees, within budget;
  two classes give the binary plan;
* fits: probabilities in ``classes_`` order, the printout per class, the ledger is the plan, Dask is the
  in-memory model, zero records with declared classes, accuracy above the majority class;
* files: a 3-class file loads, verifies and ``dpglass inspect`` reads it; edits are refused, the field named.
"""

import copy
import itertools
import json
import math
import re
import warnings

import numpy as np
import pytest
from scipy.special import expit, softmax

from dpglass.exceptions import DataValidationError, InvalidParameterError, ModelFileError
from dpglass.models import DPGradientBoostingClassifier, load_model
from dpglass.models.gbdt.budget import gbdt_plan
from dpglass.models.gbdt.fit import Binned, _grow, _leaf_sums, class_probabilities, newton_terms
from dpglass.models.gbdt.fit import _abs_gradient_utility, _dpboost_gain
from dpglass.models.gbdt.releases import (
    QUANTUM, class_term_caps, dpboost_gain_sensitivity, dpboost_l1, scored_classes,
)
from dpglass.privacy.accounting import compose
from dpglass.privacy.mechanisms import ExponentialMechanism
from dpglass.privacy.mechanisms._common import GRID_SLACK
from ledger_edits import cheaper, entries, recompose

LABELS = ["Gentoo", "Adelie", "Chinstrap"]  # declared, unsorted: predict_proba's column order


def three_classes(n=1500, seed=0, K=3):
    """Two numeric columns and one 0/1 column; class k is likelier where x0 is near k's third of [0, 10]."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    x0 = np.clip(rng.normal((y + 0.5) * 10 / K, 1.2), 0, 10)
    x1 = rng.uniform(-1, 1, n) + 0.5 * (y == K - 1)
    x2 = (rng.random(n) < np.where(y == 1, 0.8, 0.3)).astype(float)
    return np.column_stack([x0, x1, x2]), y


BOUNDS = [(0.0, 10.0), (-1.0, 1.5), None]


def _fit(K=3, seed=0, n=1500, labels=LABELS, **kw):
    X, y = three_classes(n, seed, K)
    params = dict(bounds=BOUNDS, n_estimators=6, random_state=seed, classes=labels[:K])
    params.update(kw)
    return DPGradientBoostingClassifier(**params).fit(X, np.array(labels)[y])


# ------------------------------------------------------------------ sensitivities, by brute force
def _simplex(K, steps=24):
    """Every p on the simplex with coordinates multiples of 1/steps (24: c = 1/2, 1/3, 1/4 are on it)."""
    out = []
    for bars in itertools.combinations(range(steps + K - 1), K - 1):
        edges = (-1, *bars, steps + K - 1)
        out.append([edges[i + 1] - edges[i] - 1 for i in range(K)])
    return np.array(out, dtype=np.float64) / steps


@pytest.mark.parametrize("K", [2, 3, 4, 5, 6])
def test_one_records_terms_have_the_claimed_l1_bounds_and_no_smaller(K):
    """On every point of the simplex grid and every label, the terms of the C scored classes (all K; two classes:
    class 1): |g_k| <= 1, h_k in [0, 1/4], l1(g) <= min(C, 2), l1(h) <= C c (1 - c), c = min(1/2, 1/C); both
    bounds are attained (so no smaller bound holds), and the caps are them in units."""
    k = scored_classes(K)
    C = k.size
    P = _simplex(K, 20 if K == 5 else 24)  # c = 1/C on the grid
    worst_g = worst_h = 0.0
    for y in range(K):
        g = P[:, k] - (k == y)
        h = P[:, k] * (1 - P[:, k])
        assert np.abs(g).max() <= 1 and h.min() >= 0 and h.max() <= 0.25
        worst_g = max(worst_g, np.abs(g).sum(axis=1).max())
        worst_h = max(worst_h, h.sum(axis=1).max())
    c = 0.5 if C <= 2 else 1 / C
    assert worst_g == pytest.approx(min(C, 2), abs=1e-12)
    assert worst_h == pytest.approx(C * c * (1 - c), abs=1e-12)
    g_cap, h_cap = class_term_caps(K)
    assert g_cap == min(C, 2) * 2**20
    assert h_cap == math.floor(C * c * (1 - c) * 2**20) and worst_h * 2**20 - h_cap < 1
    # the tightness of the Hessian bound: a finer grid never beats it
    fine = _simplex(K, 60 if K <= 4 else 35 if K == 5 else 18)
    assert (fine[:, k] * (1 - fine[:, k])).sum(axis=1).max() <= C * c * (1 - c) + 1e-12


@pytest.mark.parametrize("K", [2, 3, 4, 7])
def test_the_fits_quantised_terms_never_exceed_the_caps_and_reach_them(K):
    """newton_terms (the fit's per-record map) on scores from tame to extreme: every row within its caps (after
    rounding each term, which alone could exceed them), and rows at the caps exist."""
    rng = np.random.default_rng(K)
    C = scored_classes(K).size
    F = np.concatenate([rng.normal(0, s, (4000, C)) for s in (0.5, 3, 40)])
    vertices = [[40.0 * (1 - 2 * (j == i)) for j in range(C)] for i in range(C)]  # l1(g) -> its bound
    flat = [[0.0] * C]  # uniform: l1(h) -> its bound
    F = np.concatenate([F, np.array(vertices), np.array(flat)])
    g_cap, h_cap = class_term_caps(K)
    top_g = top_h = 0
    for y in range(K):
        g, h = newton_terms(F, np.full(F.shape[0], y), K)
        assert np.all(g == np.rint(g)) and np.abs(g).max() <= 2**20 and np.all((h >= 0) & (h <= 2**18))
        assert np.abs(g).sum(axis=1).max() <= g_cap and h.sum(axis=1).max() <= h_cap
        top_g, top_h = max(top_g, np.abs(g).sum(axis=1).max()), max(top_h, h.sum(axis=1).max())
    assert top_g >= g_cap - 2 and top_h >= 0.97 * h_cap


def test_two_classes_are_the_binary_model():
    """One score: the logistic closed form the binary model computes; its caps are 1 and 1/4; its plan is the
    two-class plan."""
    F = np.random.default_rng(0).normal(0, 4, (1000, 1))
    P = class_probabilities(F)
    assert np.array_equal(P[:, 1], expit(F[:, 0])) and np.array_equal(P[:, 0], 1 - expit(F[:, 0]))
    assert class_term_caps(2) == (2**20, 2**18)
    params = DPGradientBoostingClassifier(bounds=BOUNDS).get_params()
    assert gbdt_plan(params, 3) == gbdt_plan(params, 3, 2)
    assert np.allclose(class_probabilities(np.zeros((2, 3))), 1 / 3)
    G = np.random.default_rng(1).normal(0, 5, (100, 4))
    assert np.allclose(class_probabilities(G), softmax(G, axis=1))
    assert list(scored_classes(2)) == [1] and list(scored_classes(4)) == [0, 1, 2, 3]


# ------------------------------------------------------------------ neighbouring pairs of a small domain
ROWS = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.uint8)  # two 0/1 features: the bin rows


def _scores(K):
    """The released model's scores of each bin row (extreme: a record can sit near a vertex of the simplex)."""
    base = np.array([[30.0, -30.0, 5.0, -8.0], [-30.0, 30.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [-30, -30, 30, 1]])
    return base[:, : scored_classes(K).size]


def _table(records):
    """A Binned of records (bin-row index, label), one entry per distinct pair."""
    pairs = sorted(set(records))
    counts = np.array([records.count(p) for p in pairs], dtype=np.int64)
    B = ROWS[[r for r, _ in pairs]] if pairs else np.zeros((0, 2), dtype=np.uint8)
    labels = np.array([lab for _, lab in pairs], dtype=np.uint8)
    return Binned(B, np.array([1, 1]), labels, counts), np.array([r for r, _ in pairs], dtype=np.int64)


def _round(records, K, depth=2):
    """The fit's own computation of one round on these records: the utilities of every level (data-independent
    splits chosen, so both neighbours share the structure) and the leaf gradient and Hessian sums."""
    binned, row = _table(records)
    g, h = newton_terms(_scores(K)[row], binned.labels, K)
    c = binned.counts.astype(np.float64)[:, None]
    seen = []

    def choose(level, utilities):
        seen.append(np.array(utilities))
        return [(level % 2, 0)] * len(utilities)

    C = scored_classes(K).size
    structure = _grow(binned, np.arange(len(row)), depth, _abs_gradient_utility, choose, None,
                      [[c[:, 0] * g[:, k]] for k in range(C)])
    from dpglass.models.gbdt.trees import leaf_index

    leaves = [leaf_index(binned.B, f, cut, depth) for f, cut in structure]
    return seen, _leaf_sums(leaves, c * g, 2**depth), _leaf_sums(leaves, c * h, 2**depth)


def _neighbours(K, size=2):
    domain = [(r, lab) for r in range(4) for lab in range(K)]
    for m in range(size + 1):
        for D in itertools.combinations_with_replacement(domain, m):
            for x in domain:
                yield list(D), list(D) + [x]


@pytest.mark.parametrize("K", [3, 4])
def test_a_rounds_utilities_and_leaf_sums_move_by_at_most_the_plans_sensitivity(K):
    """Every pair D, D + x (D of up to two records of the domain, x any record): per level, the K trees'
    utilities move by sum_k max |change| <= the split step's sensitivity; the leaf gradient (Hessian) sums by l1
    <= the plan's; each bound is reached, and a per-tree bound of 1 (what one tree alone needs) is exceeded."""
    plan = gbdt_plan(DPGradientBoostingClassifier(max_depth=2, n_estimators=1).get_params(), 2, K)
    split, (gsum, hsum) = plan.trees[0].splits[0], plan.trees[0].leaves
    C, width = K, [1, 2]
    worst_u = worst_g = worst_h = 0.0
    for D, D1 in _neighbours(K):
        u0, g0, h0 = _round(D, K)
        u1, g1, h1 = _round(D1, K)
        for level in range(2):
            moved = np.abs(u1[level] - u0[level]).reshape(C, width[level], -1).max(axis=(1, 2)).sum()
            worst_u = max(worst_u, moved)
        worst_g = max(worst_g, np.abs(g1 - g0).sum() * QUANTUM)
        worst_h = max(worst_h, np.abs(h1 - h0).sum() * QUANTUM)
    assert worst_u <= split.entry.sensitivity and worst_u == pytest.approx(split.entry.sensitivity, rel=1e-5)
    assert worst_g <= gsum.entry.sensitivity and worst_g == pytest.approx(gsum.entry.sensitivity, rel=1e-5)
    assert worst_h <= hsum.entry.sensitivity
    assert worst_u > 1.5 and worst_g > 1.5  # the sequential view of one tree's bound, 1, does not hold jointly


def _log_ratio_range(mech, u0, u1, C):
    """(max |log P/P'|, max - min of log P/P') of the product of C independent selections (rows of u)."""
    lo = hi = 0.0
    for k in range(C):
        r = np.log(mech.probabilities(u0[k])) - np.log(mech.probabilities(u1[k]))
        lo, hi = lo + r.min(), hi + r.max()
    return max(abs(lo), abs(hi)), hi - lo


def test_the_rounds_product_of_exponential_mechanisms_is_within_its_epsilon_on_every_pair():
    """The split step's mechanism (its rate reserving the roundings of K selections) on every neighbouring
    pair: the joint output's log-ratio is within the entry's epsilon and its range too (bounded range); the same
    rate calibrated to one tree's sensitivity 1 exceeds it."""
    K, eps = 3, 0.8
    plan = gbdt_plan(DPGradientBoostingClassifier(max_depth=1, n_estimators=1, epsilon=eps, delta=0).get_params(),
                     2, K)
    step = plan.trees[0].splits[0]
    level_eps = step.entry.epsilon
    mech = ExponentialMechanism(level_eps - (K - 1) * GRID_SLACK, step.entry.sensitivity)
    naive = ExponentialMechanism(level_eps, 1.0)
    worst = worst_range = worst_naive = 0.0
    for D, D1 in _neighbours(K):
        u0, u1 = _round(D, K, depth=1)[0][0], _round(D1, K, depth=1)[0][0]
        ratio, span = _log_ratio_range(mech, u0, u1, K)
        worst, worst_range = max(worst, ratio), max(worst_range, span)
        worst_naive = max(worst_naive, _log_ratio_range(naive, u0, u1, K)[0])
    assert worst <= level_eps and worst_range <= level_eps
    assert worst > 0.45 * level_eps and worst_naive > level_eps


def test_dpbooss_joint_gain_bound_holds_and_is_approached():
    """A record with gradients g (clipped to g*, l1 <= min(C g*, max(2, g*))) changes the C trees' gains by less
    than (2 l1/g* + C) g*^2 in total (docs/privacy.md), sampled over sums, counts and gradients; large counts
    reach it, so no smaller constant holds."""
    rng = np.random.default_rng(0)
    for K, gstar, lam in ((2, 1.0, 0.1), (3, 1.0, 0.1), (5, 0.5, 1.0), (5, 1.0, 0.1)):
        C, bound = scored_classes(K).size, dpboost_gain_sensitivity(gstar, K)
        l1 = dpboost_l1(gstar, K)
        worst = 0.0
        for m in (0, 1, 2, 5, 50, 10**6):
            for i in range(300):
                g = rng.uniform(-gstar, gstar, C) if i else np.where(np.arange(C) % 2, gstar, -gstar)
                g *= min(1.0, l1 / np.abs(g).sum())
                s = rng.uniform(-m * gstar, m * gstar, C) if i % 3 else -np.sign(g) * m * gstar
                tot = s + rng.uniform(-gstar, gstar, C)  # the other side's records: one more record at most
                before = _dpboost_gain((s, tot), (m, m + 1), lam)
                after = _dpboost_gain((s + g, tot + g), (m + 1, m + 2), lam)
                worst = max(worst, np.abs(after - before).sum())
        assert worst < bound, (K, worst, bound)
        assert worst > 0.9 * (2 * gstar * l1 + C * gstar**2), (K, worst)


# ------------------------------------------------------------------ the plan
def test_the_plan_releases_each_rounds_trees_together_within_budget():
    for K in (3, 5):
        params = DPGradientBoostingClassifier(n_estimators=4, max_depth=2, bounds=BOUNDS).get_params()
        plan = gbdt_plan(params, 3, K)
        C = K
        assert len(plan.steps) == 2 + 4 * (2 + 2)
        assert [s.release for s in plan.steps[2:6]] == [
            "round 1: level 1 splits", "round 1: level 2 splits", "round 1: leaf gradient sums",
            "round 1: leaf Hessian sums"]
        split = plan.trees[1].splits[1]
        assert split.fields == tuple(f"trees[{C + k}] splits at level 2" for k in range(C))
        assert split.entry.sensitivity == 2.0 and split.entry.curve == {"kind": "bounded-range",
                                                                         "epsilon": split.entry.epsilon}
        g, h = plan.trees[0].leaves
        assert g.entry.sensitivity == 2.0 and h.entry.sensitivity == class_term_caps(K)[1] * QUANTUM
        assert g.entry.curve["sensitivity"] == math.floor(2.0 / g.domain.step) + C  # one rounding a tree
        assert compose([s.entry for s in plan.steps], plan.accountant, plan.delta)[0] <= 1.0 + 1e-9


def test_gaussian_leaves_are_for_two_classes():
    with pytest.raises(InvalidParameterError, match="two classes"):
        _fit(leaf_noise="gaussian")
    params = DPGradientBoostingClassifier(leaf_noise="gaussian").get_params()
    with pytest.raises(ValueError, match="two classes"):
        gbdt_plan(params, 3, 3)


# ------------------------------------------------------------------ fits
@pytest.fixture(scope="module")
def fitted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "newton": _fit(),
            "deep-quantile": _fit(max_depth=2, binning="quantile", max_bins=8, seed=1),
            "random-basic": _fit(split="random", delta=0, seed=2),
            "four": _fit(K=4, labels=["a", "b", "c", "d"], seed=3),
            "dpboost": _fit(variant="dpboost", n_estimators=6, trees_per_ensemble=3, max_depth=2, seed=4),
            "dpboost-gradient": _fit(variant="dpboost", n_estimators=4, trees_per_ensemble=2,
                                     subset_selection="gradient", seed=5),
        }


@pytest.mark.parametrize("name", ["newton", "deep-quantile", "random-basic", "four", "dpboost", "dpboost-gradient"])
def test_a_fit_records_its_plan_and_predicts_in_classes_order(fitted, name):
    m = fitted[name]
    K = len(m.classes_)
    plan = gbdt_plan(m.get_params(), 3, K)
    assert list(m.privacy_ledger_) == [s.entry for s in plan.steps]
    assert m.privacy_ledger_.total()[0] <= 1.0 * (1 + 1e-9)
    assert len(m.estimators_) == m.n_estimators_ * K and np.shape(m.init_score_) == (K,)
    X, _ = three_classes(400, seed=9, K=K)
    proba, scores = m.predict_proba(X), m.decision_function(X)
    assert proba.shape == scores.shape == (400, K)
    assert np.allclose(proba.sum(axis=1), 1) and np.allclose(proba, softmax(scores, axis=1))
    assert np.array_equal(m.predict(X), m.classes_[np.argmax(proba, axis=1)])


def test_the_printout_names_each_trees_class(fitted):
    text = str(fitted["newton"])
    assert "score(c) = intercept(c) + one leaf value per tree of c, for each class c (3 trees a round)" in text
    for label in LABELS:
        assert re.search(rf"intercept\({label}\) = [+-]\d", text)
    assert "tree 1, round 1, adds to score(Gentoo):" in text and "tree 6, round 2, adds to score(Chinstrap):" in text


def test_more_classes_than_two_learn_better_than_the_majority_class():
    """epsilon = 1 on 3000 records of three classes: well above the majority class (about 1/3)."""
    X, y = three_classes(4000, seed=11)
    acc = [DPGradientBoostingClassifier(bounds=BOUNDS, random_state=s).fit(X[:3000], y[:3000])
           .score(X[3000:], y[3000:]) for s in range(3)]
    assert np.mean(acc) > 0.6, acc


def test_zero_records_with_declared_classes_and_labels_outside_them():
    m = DPGradientBoostingClassifier(bounds=BOUNDS, classes=LABELS, n_estimators=3, random_state=0)
    m.fit(np.zeros((0, 3)), np.array([], dtype=object))
    assert m.predict_proba(np.zeros((2, 3))).shape == (2, 3)
    X, y = three_classes(100)
    with pytest.raises(DataValidationError, match="Emperor"):
        DPGradientBoostingClassifier(bounds=BOUNDS, classes=LABELS).fit(X, np.where(y == 0, "Emperor", "Adelie"))


# ------------------------------------------------------------------ files
@pytest.mark.parametrize("name", ["newton", "deep-quantile", "random-basic", "four", "dpboost", "dpboost-gradient"])
def test_a_k_class_file_loads_verifies_and_predicts_the_same(fitted, name, tmp_path):
    m = fitted[name]
    m.save(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    X, _ = three_classes(300, seed=8, K=len(m.classes_))
    assert str(back) == str(m) and list(back.privacy_ledger_) == list(m.privacy_ledger_)
    np.testing.assert_array_equal(back.predict_proba(X), m.predict_proba(X))


def test_dpglass_inspect_verifies_a_three_class_file(fitted, tmp_path, capsys):
    from dpglass.cli import main

    fitted["newton"].save(tmp_path / "m.json")
    assert main(["inspect", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    assert "Chinstrap" in out and "Adelie" in out
    data = json.loads((tmp_path / "m.json").read_text())
    data["trees"][0]["value"][0] = 5.0  # beyond the clip
    (tmp_path / "bad.json").write_text(json.dumps(data))
    assert main(["inspect", str(tmp_path / "bad.json")]) != 0


def _drop_class(d):
    d["classes"].pop()
    d["params"]["classes"].pop()


#: (fit, edit, a field the refusal must name)
TAMPERS = {
    "a class label changed": ("newton", lambda d: d["classes"].__setitem__(1, "Emperor"), "classes"),
    "a class dropped": ("newton", _drop_class, "trees"),
    "the intercepts of two classes only": ("four", lambda d: d["init_score"].pop(), "init_score"),
    "one intercept for three classes": ("newton", lambda d: d.update(init_score=0.1), "init_score"),
    "an intercept beyond its clip": ("newton", lambda d: d["init_score"].__setitem__(1, 2.5), "init_score"),
    "a leaf beyond its clip": ("newton", lambda d: d["trees"][3]["value"].__setitem__(0, 2.5), "trees[3].value"),
    "a split on a cut that does not exist": ("newton", lambda d: d["trees"][5]["cut"].__setitem__(0, 31),
                                             "trees[5]"),
    "a cut point off the quantile grid": ("deep-quantile", lambda d: d["edges"][0].__setitem__(2, 3.0001),
                                          "edges[0]"),
    "a DPBoost leaf off its round's grid": ("dpboost", lambda d: d["trees"][3]["value"].__setitem__(1, 0.0123),
                                           "trees[3].value"),
    "a DPBoost intercept": ("dpboost", lambda d: d["init_score"].__setitem__(0, 0.5), "init_score"),
    "dropped entry": ("newton", lambda d: (entries(d).pop(), recompose(d)), "privacy_ledger.entries"),
    "added entry": ("newton", lambda d: (entries(d).append(copy.deepcopy(entries(d)[-1])), recompose(d)),
                    "privacy_ledger.entries"),
    "swapped entries": ("newton", lambda d: entries(d).insert(2, entries(d).pop(3)), "privacy_ledger.entries[2]"),
    "cheaper split level": ("newton", lambda d: cheaper(d, 2), "privacy_ledger.entries[2].epsilon"),
    "the binary sensitivity on the gradient sums": (
        "newton", lambda d: (entries(d)[3].update(sensitivity=1.0), recompose(d)),
        "privacy_ledger.entries[3].sensitivity"),
    "the binary sensitivity on the splits": (
        "four", lambda d: (entries(d)[2].update(sensitivity=1.0), recompose(d)),
        "privacy_ledger.entries[2].sensitivity"),
    "tree_epsilon": ("newton", lambda d: d.update(tree_epsilon=d["tree_epsilon"] * 1.01), "tree_epsilon"),
}


@pytest.mark.parametrize("name", list(TAMPERS))
def test_edits_of_a_k_class_file_are_refused_naming_the_field(fitted, name):
    fit, edit, field = TAMPERS[name]
    data = copy.deepcopy(fitted[fit].to_dict())  # its lists are the model's own
    DPGradientBoostingClassifier.from_dict(copy.deepcopy(data))  # the untouched file loads
    edit(data)
    with pytest.raises(ModelFileError, match=re.escape(field)):
        DPGradientBoostingClassifier.from_dict(data)


def test_the_file_check_reads_k_without_the_shared_check(fitted):
    """The family's check alone (gbdt/verify.py): three labels give the plan of three classes."""
    from dpglass.models.gbdt.verify import check_gbdt
    from dpglass.models._file_checks import _Context

    m = fitted["newton"]
    data = copy.deepcopy(m.to_dict())
    ledger = m.privacy_ledger_
    ctx = _Context(type(m), data["params"], 3, data["feature_names"], ledger, data["privacy_ledger"]["entries"])
    check_gbdt(data, ctx)
    data["classes"] = data["classes"][:2]
    data["params"]["classes"] = data["params"]["classes"][:2]
    with pytest.raises(ModelFileError, match="trees"):
        check_gbdt(data, ctx)


# ------------------------------------------------------------------ Dask
def test_a_dask_fit_is_the_in_memory_model(dask_client):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    X, y = three_classes(1200, seed=6)
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2"]).assign(y=np.array(LABELS)[y])
    ddf = dd.from_pandas(frame, npartitions=3)
    for classes in (LABELS, None):
        kw = dict(bounds=BOUNDS, n_estimators=4, max_depth=2, binning="quantile", max_bins=8, random_state=2,
                  classes=classes)
        through_dask = DPGradientBoostingClassifier(**kw).fit(ddf[["x0", "x1", "x2"]], ddf["y"])
        in_memory = DPGradientBoostingClassifier(**kw).fit(frame[["x0", "x1", "x2"]], frame["y"])
        assert through_dask.to_dict() == in_memory.to_dict()
        assert list(through_dask.classes_) == (LABELS if classes else sorted(LABELS))


def test_a_dask_fit_reads_the_label_set_before_its_plan(monkeypatch):
    """The plan needs K before the first release: without declared classes the Dask route reads the label set
    first (one pass over the labels) and passes it to the table, so the table never reads it again."""
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd
    from dpglass.aggregates import dask_backend

    X, y = three_classes(300, seed=7)
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2"]).assign(y=np.array(LABELS)[y])
    ddf = dd.from_pandas(frame, npartitions=2)
    seen = []
    real = dask_backend._classes
    monkeypatch.setattr(dask_backend, "_classes", lambda yy, classes: seen.append(classes) or real(yy, classes))
    m = DPGradientBoostingClassifier(bounds=BOUNDS, n_estimators=2, random_state=0).fit(ddf[["x0", "x1", "x2"]],
                                                                                         ddf["y"])
    assert seen[0] is None and all(c == sorted(LABELS) for c in seen[1:]) and len(seen) == 2
    assert list(m.classes_) == sorted(LABELS) and len(m.estimators_) == 2 * 3
