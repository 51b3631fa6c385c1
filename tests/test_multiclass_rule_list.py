"""Rule lists on K >= 2 classes (issue 31): the sensitivities by brute force, the learners, the file and its edits.

docs/privacy.md, "DP greedy rule lists", "K classes": the weighted Gini impurity of K classes has the binary
local sensitivity g(n - 1) (so the binary smooth bound), errors-pf's utilities stay monotone of sensitivity 1,
and each class-count release is one (cells x K) table of l1 sensitivity 1.  Each claim is checked here on every
neighbouring pair of a small domain, with a smaller bound shown to fail.
"""

import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.cli import main
from dpglass.exceptions import DataValidationError, ModelFileError
from dpglass.models import DPRuleListClassifier, GreedyRuleListClassifier, load_model
from dpglass.models.rule_list.candidates import CountCache, SufficientStats, build_candidates
from dpglass.models.rule_list.impurity import split_errors, split_gini
from dpglass.models.rule_list.rules import Rule, majority
from dpglass.models.rule_list.selection import (
    MECHANISMS, Certification, ErrorsPF, StepCounts, local_scale_factor,
)
from dpglass.privacy.mechanisms import PermuteAndFlip
from dpglass.privacy.sensitivity import gini_local_sensitivity, gini_smooth_sensitivity, weighted_gini

LABELS = ["Gentoo", "Adelie", "Chinstrap"]  # declared unsorted: the counts' and predict_proba's column order


def g(x):
    return 2.0 * x / (x + 1.0) ** 2


def literal_gini(caught, left):
    """Paper 001's eqs. (1)-(2) for K classes, as written: sum over sides of |side|/n (1 - sum_k p_k**2)."""
    n = caught.sum(axis=0) + left.sum(axis=0)
    out = np.zeros(n.shape)
    for side in (caught, left):
        size = side.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where(size > 0, size * (1.0 - ((side / size) ** 2).sum(axis=0)), 0.0)
        out += term
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, out / n, 0.0)


def all_splits(K: int, M: int) -> np.ndarray:
    """Every split of at most M records into (caught, left) x K classes: shape (2K, tables)."""
    grid = np.indices((M + 1,) * (2 * K), dtype=np.int16).reshape(2 * K, -1)
    return grid[:, grid.sum(axis=0) <= M].astype(np.float64)


def worst_change_by_size(K: int, M: int) -> np.ndarray:
    """h(m): the largest |G(D + x) - G(D)| over splits D of m records and every added record x (side, class)."""
    T = all_splits(K, M - 1)
    base = literal_gini(T[:K], T[K:])
    m = T.sum(axis=0).astype(int)
    h = np.zeros(M)
    for cell in range(2 * K):  # the added record's side and class
        U = T.copy()
        U[cell] += 1
        change = np.abs(literal_gini(U[:K], U[K:]) - base)
        np.maximum.at(h, m, change)
    return h


# ------------------------------------------------------------------ the Gini impurity of K classes
@pytest.mark.parametrize("K,M", [(2, 30), (3, 12), (4, 6)])
def test_k_class_gini_local_sensitivity_is_the_binary_one_on_every_neighbour(K, M):
    """Every split of < M records and every added record: the worst change at m records is g(m) (the binary
    add-only bound, Lemma of the K-class section), so L(n) = max(h(n), h(n-1)) is gini_local_sensitivity(n);
    the paper's g(n), and 0.999 of the bound, are exceeded by some neighbour (the limit's other side)."""
    h = worst_change_by_size(K, M)
    np.testing.assert_allclose(h, g(np.arange(M)), rtol=1e-12, atol=1e-15)
    for n in range(1, M):
        L = max(h[n], h[n - 1]) if n < M - 1 else h[n - 1]  # sizes n+1 > M-1 are not enumerated: g(n) < g(n-1)
        assert L == pytest.approx(gini_local_sensitivity(n), rel=1e-12)
        assert L > 0.999 * gini_local_sensitivity(n)
        if n >= 2:
            assert L > gini_local_sensitivity(n, variant="paper") * (1 + 1e-9)  # g(n) misses removals
    assert h.max() == pytest.approx(0.5)  # the global sensitivity, reached at m = 1


def test_split_gini_is_the_literal_definition_and_the_binary_function_bit_for_bit():
    T = all_splits(3, 9)
    np.testing.assert_allclose(split_gini(T[:3], T[3:]), literal_gini(T[:3], T[3:]), rtol=1e-12, atol=1e-15)
    assert split_gini(T[:3], T[3:]).max() <= 1 - 1 / 3 + 1e-12  # the range U = 1 - 1/K
    rng = np.random.default_rng(0)
    c = rng.integers(0, 10**6, (2, 5000)).astype(float)
    left = rng.integers(0, 10**6, (2, 5000)).astype(float)
    left[:, :50] = 0
    c[:, 50:100] = 0
    ours = split_gini(c, left)
    theirs = weighted_gini(c[1], c[0], left[1], left[0])
    assert ours.tobytes() == theirs.tobytes()
    np.testing.assert_array_equal(split_errors(c, left), np.minimum(c[0], c[1]) + np.minimum(left[0], left[1]))


@pytest.mark.parametrize("support", [1, 3])
@pytest.mark.parametrize("beta", [0.02, 0.1, 0.3, 1.0])
def test_smooth_sensitivity_of_k_class_gini_from_the_enumerated_local_sensitivity(beta, support):
    """The smallest beta-smooth bound that depends on n only, max_{m >= Lambda} L(m) e^{-beta |n - m|}, built
    from the 3-class enumeration, is gini_smooth_sensitivity (a smaller value would fail at its argmax m)."""
    M = 12
    h = worst_change_by_size(3, M)
    L = {m: (max(h[m], h[m - 1]) if m < M - 1 else h[m - 1]) for m in range(1, M)}
    for n in range(support, M - 1):
        terms = [L[m] * math.exp(-beta * abs(n - m)) for m in range(support, M)]
        assert max(terms) == pytest.approx(gini_smooth_sensitivity(n, beta, min_support=support), rel=1e-12)
    S = [gini_smooth_sensitivity(n, beta, min_support=support) for n in range(support, 60)]
    assert all(a <= math.exp(beta) * b * (1 + 1e-12) for a, b in zip(S, S[1:]))  # beta-smooth
    assert all(a <= math.exp(beta) * b * (1 + 1e-12) for a, b in zip(S[1:], S))


def test_local_pf_scale_factor_covers_the_range_of_k_classes():
    """local-pf's lemma: L <= eps' (1 + U/4) with U = 1 - 1/K and sup_x |1/g(x) - 1/g(x-1)| < 1/2; the factor
    is 9/8 for two classes, and the binary factor would not cover three (U = 2/3)."""
    from fractions import Fraction

    gx = lambda x: Fraction(2 * x, (x + 1) ** 2)  # noqa: E731
    for x in range(2, 300):  # exactly 1/2 - 1/(2x(x-1)) < 1/2
        assert 1 / gx(x) - 1 / gx(x - 1) == Fraction(1, 2) - Fraction(1, 2 * x * (x - 1))
    for K in range(2, 12):
        U = 1 - 1 / K
        eps_prime = 1.0 / local_scale_factor(K)
        assert eps_prime + U * (eps_prime / 2) * 0.5 <= 1.0 + 1e-15
    assert local_scale_factor(2) == 9 / 8
    assert (1 / (9 / 8)) * (1 + (1 - 1 / 3) / 4) > 1.0  # 9/8 is too small for K = 3


def _small_tables(K, n_features=2, trials=25, seed=0, most=10):
    rng = np.random.default_rng(seed)
    patterns = np.array(list(itertools.product([0, 1], repeat=n_features)), dtype=np.uint8)
    for _ in range(trials):
        n = int(rng.integers(1, most))
        yield patterns[rng.integers(0, len(patterns), n)], rng.integers(0, K, n).astype(np.uint8), patterns


def _step(X, y, cands, K):
    st = SufficientStats(X, y, cands, K)
    caught = np.concatenate([st.class_counts(), np.zeros((K, 1))], axis=1)  # "no rule" last
    return StepCounts(caught, st.remaining_counts(), 0.0)


def test_local_pf_exact_law_on_three_class_neighbours_stays_within_e_eps():
    eps, K = 1.0, 3
    cands = build_candidates(2, 2, True)

    def law(X, y):
        s = _step(X, y, cands, K)
        return PermuteAndFlip(eps / local_scale_factor(K), float(gini_local_sensitivity(s.n))).probabilities(-s.ginis)

    worst = 0.0
    for X, y, patterns in _small_tables(K, seed=4):
        p = law(X, y)
        for row, label in itertools.product(patterns, range(K)):
            q = law(np.vstack([X, row]), np.append(y, label).astype(np.uint8))
            worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(q)))))
    assert 0 < worst <= eps


# ------------------------------------------------------------------ errors-pf for K classes
def test_k_class_errors_are_monotone_with_sensitivity_exactly_one():
    """Adding any record (pattern, class) moves every candidate's errors, and "no rule"'s, by 0 or 1, and some
    addition moves one by 1 (a sensitivity below 1 would fail)."""
    K = 3
    cands = build_candidates(3, 2, True)
    moved = set()
    for X, y, patterns in _small_tables(K, n_features=3, trials=20, seed=1, most=25):
        before = _step(X, y, cands, K).errors
        for row, label in itertools.product(patterns, range(K)):
            after = _step(np.vstack([X, row]), np.append(y, label).astype(np.uint8), cands, K).errors
            diff = set(np.unique(after - before))
            assert diff <= {0.0, 1.0}
            moved |= diff
    assert moved == {0.0, 1.0}


def test_errors_pf_exact_law_on_three_class_neighbours_is_eps_dp_and_tight():
    eps, K = 1.0, 3
    cands = build_candidates(2, 2, True)
    selector = ErrorsPF(epsilon=eps, delta=0.0, certification=Certification(), n_classes=K)
    pf = PermuteAndFlip(eps, 1.0, monotonic=True)

    def law(X, y):
        u = -_step(X, y, cands, K).errors
        u[-1] += selector.stop_bonus(len(u))
        return pf.probabilities(u)

    worst = 0.0
    for X, y, patterns in _small_tables(K, seed=11, trials=30, most=12):
        p = law(X, y)
        for row, label in itertools.product(patterns, range(K)):
            q = law(np.vstack([X, row]), np.append(y, label).astype(np.uint8))
            worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(q)))))
    assert worst <= eps * (1 + 1e-9)
    assert worst > 0.99 * eps


# ------------------------------------------------------------------ learners on three classes
def three_class(n=3000, seed=3):
    """Class 1 when x0 and x1, class 2 when x2 and not x0, else class 0, with 5% of labels redrawn."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, 7)) < rng.uniform(0.3, 0.7, 7)).astype(np.uint8)
    y = np.where(X[:, 0] & X[:, 1], 1, np.where(X[:, 2] & (1 - X[:, 0]), 2, 0))
    noise = rng.random(n) < 0.05
    y[noise] = rng.integers(0, 3, noise.sum())
    return X, y


def test_counts_are_tables_over_k_classes_and_count_cache_agrees():
    X, y = three_class(800)
    cands = build_candidates(7, 2, True)
    st = SufficientStats(X, y, cands, 4)  # a declared fourth class with no record
    C = st.class_counts()
    assert C.shape == (4, len(cands)) and not C[3].any()
    for i in (0, 5, 40):
        mask = st.covers(i, X)
        assert list(C[:, i]) == [float((y[mask] == k).sum()) for k in range(4)]
    chunked = SufficientStats(X, y, build_candidates(7, 3, True), 4)  # max_card 3: counted by chunks
    assert np.array_equal(chunked.class_counts()[:, : len(cands)], C)
    cache = CountCache(st, max_entries=4)
    st.remove(3)
    N, C2 = cache.class_counts((3,))
    assert np.array_equal(C2, st.class_counts()) and tuple(N) == st.remaining()
    assert cache.counts((3,))[:4] == st.remaining()


@pytest.mark.parametrize("criterion", ["gini", "errors"])
def test_greedy_learns_the_planted_three_class_list_with_exact_counts(criterion):
    X, y = three_class()
    names = [f"x{j}" for j in range(7)]
    frame = pd.DataFrame(X, columns=names)
    model = GreedyRuleListClassifier(max_length=4, criterion=criterion).fit(frame, y)
    assert model.score(frame, y) > 0.93
    assert {model.rules_[0].prediction, model.rules_[1].prediction} == {1, 2}
    remaining = np.ones(len(y), bool)
    for rule in model.rules_ + [model.default_rule_]:
        caught = rule.matches(X) & remaining
        assert rule.counts == tuple(float((y[caught] == k).sum()) for k in range(3))
        assert rule.prediction == int(np.argmax(rule.counts))
        remaining &= ~caught


def _no_tie_three_class():
    rng = np.random.default_rng(8)
    X = (rng.random((3000, 7)) < rng.uniform(0.2, 0.8, 7)).astype(np.uint8)
    logits = X @ rng.normal(0, 1.5, (7, 3)) + rng.normal(0, 0.5, 3)
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = (rng.random(3000)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return X, y


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_huge_epsilon_recovers_greedy_on_three_classes(mechanism):
    X, y = _no_tie_three_class()
    kw = dict(max_length=3, max_card=2, min_support=0.01, allow_negations=False)
    if mechanism == "errors-pf":
        kw["min_support"] = None
        greedy = GreedyRuleListClassifier(**{**kw, "min_support": 0.0}, criterion="errors").fit(X, y)
    else:
        greedy = GreedyRuleListClassifier(**kw).fit(X, y)
    eps = 1e10 if mechanism == "global-gaussian" else 1e6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp = DPRuleListClassifier(epsilon=eps, delta=1e-6, mechanism=mechanism, random_state=1, **kw).fit(X, y)
    assert [r.conditions for r in dp.rules_] == [r.conditions for r in greedy.rules_]
    assert [r.prediction for r in dp.rules_] == [r.prediction for r in greedy.rules_]
    assert len(dp.default_rule_.counts) == 3


@pytest.mark.parametrize("mechanism", ["errors-pf", "certified-pf"])
def test_the_class_count_table_is_the_partition_times_k(mechanism):
    """At a huge epsilon the released table is the exact counts of each class in each cell of the list."""
    X, y = three_class(1500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPRuleListClassifier(epsilon=1e7, mechanism=mechanism, classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    remaining = np.ones(len(y), bool)
    for rule in model.rules_ + [model.default_rule_]:
        caught = rule.matches(X) & remaining
        assert rule.counts == tuple(float((y[caught] == k).sum()) for k in range(4))
        remaining &= ~caught
    last = model.privacy_ledger_.entries[-1]
    assert f"{len(model.rules_) + 1} cells x 4 classes" in last.note and last.sensitivity == 1.0


def test_errors_pf_recovers_the_planted_three_class_list_at_epsilon_one():
    X, y = three_class()
    for seed in range(3):
        model = DPRuleListClassifier(epsilon=1.0, classes=[0, 1, 2], random_state=seed).fit(X, y)
        assert model.score(X, y) > 0.9
        assert model.privacy_ledger_.total() == (pytest.approx(1.0), 0.0)


def test_printout_names_the_labels_and_every_class_count():
    X, y = three_class(1500)
    labels = np.array(["Adelie", "Chinstrap", "Gentoo"])[y]
    model = DPRuleListClassifier(epsilon=2.0, classes=LABELS, random_state=0).fit(X, labels)
    lines = str(model).splitlines()
    assert len(lines) == len(model.rules_) + 1
    for line, rule in zip(lines, model.rules_ + [model.default_rule_]):
        assert f"then {LABELS[rule.prediction]}" in line or line.startswith(f"else {LABELS[rule.prediction]}")
        assert "(noisy counts Gentoo: " in line and ", Adelie: " in line and ", Chinstrap: " in line
    exact = GreedyRuleListClassifier(max_length=2).fit(X, labels)
    assert str(exact).splitlines()[-1].startswith("else ") and "(counts Adelie: " in str(exact)


def test_predict_proba_has_k_columns_and_its_argmax_is_the_printed_prediction():
    """Ties too: equal noisy counts, counts all <= 0 (uniform probabilities), and exact ties of a greedy list."""
    for counts, noisy, want in [((5.0, 5.0, 1.0), True, 1), ((-3.0, -1.0, -2.0), True, 1), ((3.0, 3.0, 3.0), True, 2),
                                ((3.0, 3.0, 3.0), False, 0), ((1.0, 4.0, 4.0), False, 1), ((0.0, 2.0), True, 1)]:
        rule = Rule((), majority(counts, noisy), counts, noisy)
        p = np.array(rule.proba())
        assert rule.prediction == want and int(np.argmax(p)) == want
        assert np.all(p >= 0) and p.sum() == pytest.approx(1.0, abs=1e-12)
    X, y = three_class(600)
    model = DPRuleListClassifier(epsilon=0.3, classes=LABELS, random_state=2).fit(X, np.array(LABELS)[y])
    proba = model.predict_proba(X)
    assert proba.shape == (len(y), 3)
    assert np.array_equal(model.classes_[np.argmax(proba, axis=1)], model.predict(X))


def test_zero_records_with_three_declared_classes_fit():
    for mechanism in ("errors-pf", "certified-pf"):
        model = DPRuleListClassifier(epsilon=1.0, mechanism=mechanism, classes=LABELS, random_state=0)
        model.fit(np.zeros((0, 4), dtype=np.uint8), np.array([], dtype=object))
        assert len(model.default_rule_.counts) == 3 and model.predict_proba(np.zeros((2, 4))).shape == (2, 3)


def test_a_label_outside_the_declared_classes_is_refused_with_the_values():
    X, y = three_class(100)
    with pytest.raises(DataValidationError, match="Emperor"):
        DPRuleListClassifier(classes=LABELS[:2] + ["Emperor"]).fit(X, np.array(LABELS)[y])


def test_black_box_audit_of_a_three_class_list_on_a_tiny_pair():
    """dpglass.audit on D and D minus one record (3 classes, 12 records): no privacy loss above the claim."""
    from dpglass.audit import audit_learner

    X = np.array([[1, 0]] * 4 + [[0, 1]] * 4 + [[1, 1]] * 2 + [[0, 0]] * 2, dtype=np.uint8)
    y = np.array([1] * 4 + [2] * 4 + [0, 2] + [0, 1])
    est = DPRuleListClassifier(epsilon=2.0, max_length=1, max_card=1, classes=[0, 1, 2])
    res = audit_learner(est, X, y, n_runs=200, rng=0)
    assert res.verdict == "PASS" and res.claim[0] == 2.0, res.summary()


def test_through_dask_equals_in_memory_on_three_classes(dask_client, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    X, y = three_class(1200)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(7)]).assign(y=np.array(LABELS)[y])
    for i, chunk in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[chunk].to_parquet(tmp_path / f"part{i}.parquet")
    parts = dd.read_parquet(str(tmp_path / "*.parquet"))
    for mechanism in ("errors-pf", "certified-pf"):
        make = lambda: DPRuleListClassifier(epsilon=1.0, mechanism=mechanism, classes=LABELS, random_state=5)
        remote = make().fit(parts.drop(columns=["y"]), parts["y"])
        local = make().fit(frame.drop(columns=["y"]), frame["y"])
        assert json.dumps(remote.to_dict()) == json.dumps(local.to_dict())


# ------------------------------------------------------------------ the file: save, load, inspect, edits
def _file(tmp_path, mechanism="errors-pf", declared=True, **kw):
    X, y = three_class(1500)
    model = DPRuleListClassifier(epsilon=1.0, mechanism=mechanism, classes=LABELS if declared else None,
                                 random_state=6, **kw).fit(X, np.array(LABELS)[y])
    path = tmp_path / "model.json"
    model.save(path)
    return model, path, json.loads(path.read_text()), X


@pytest.mark.parametrize("mechanism", ["errors-pf", "certified-pf", "local-pf"])
def test_three_class_file_loads_verifies_and_inspects(tmp_path, capsys, mechanism):
    model, path, data, X = _file(tmp_path, mechanism)
    loaded = load_model(path)
    assert json.dumps(loaded.to_dict()) == json.dumps(model.to_dict()) and str(loaded) == str(model)
    assert np.array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert all(len(r["counts"]) == 3 for r in data["rules"] + [data["default_rule"]])
    assert main(["inspect", str(path)]) == 0
    assert "Gentoo, Adelie, Chinstrap" in capsys.readouterr().out
    greedy = GreedyRuleListClassifier(max_length=3).fit(X, np.array(LABELS)[three_class(1500)[1]])
    greedy.save(tmp_path / "greedy.json")
    assert str(load_model(tmp_path / "greedy.json")) == str(greedy)


EDITS = {
    "a class label": (lambda d: d["classes"].__setitem__(0, "Emperor"), "'classes'"),
    "the labels' order": (lambda d: d.__setitem__("classes", ["Adelie", "Gentoo", "Chinstrap"]), "'classes'"),
    "a fourth label": (lambda d: d["classes"].append("Emperor"), "'classes'"),
    "a count off its domain": (lambda d: d["rules"][0]["counts"].__setitem__(1, 12.5), "rules[0].counts"),
    "a class count dropped": (lambda d: d["default_rule"]["counts"].pop(), "default_rule.counts"),
    "a class count added": (lambda d: d["rules"][0]["counts"].append(3.0), "rules[0].counts"),
    "a prediction": (lambda d: d["default_rule"].__setitem__("prediction", (d["default_rule"]["prediction"] + 1) % 3),
                     "default_rule.prediction"),
    "a prediction off the classes": (lambda d: d["rules"][0].__setitem__("prediction", 3), "rules[0].prediction"),
    "the table's note": (lambda d: d["privacy_ledger"]["entries"][-1].__setitem__(
        "note", d["privacy_ledger"]["entries"][-1]["note"].replace("x 3 classes", "x 2 classes")), "entries"),
    # errors-pf's plan is rebuilt from its number of selections: one fewer no longer matches its rules
    "an entry dropped": (lambda d: d["privacy_ledger"]["entries"].pop(0), "entries|'rules'"),
    "an entry added": (lambda d: d["privacy_ledger"]["entries"].insert(0, dict(d["privacy_ledger"]["entries"][0])),
                       "entries"),
    "entries reordered": (lambda d: d["privacy_ledger"]["entries"].reverse(), "entries"),
}


@pytest.mark.parametrize("mechanism", ["errors-pf", "certified-pf"])
@pytest.mark.parametrize("edit", list(EDITS))
def test_edits_of_a_three_class_file_are_refused_naming_the_field(tmp_path, mechanism, edit):
    _, path, data, _ = _file(tmp_path, mechanism)
    change, field = EDITS[edit]
    change(data)
    if "privacy_ledger" in data:
        from ledger_edits import recompose

        recompose(data)  # a forger's consistent totals: the plan must still refuse the edit
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=field.replace("[", r"\[").replace("]", r"\]")):
        load_model(path)


def test_a_three_class_gini_file_with_an_edited_remaining_count_is_refused(tmp_path):
    _, path, data, _ = _file(tmp_path, "certified-pf")
    data["remaining_counts"][0] += 0.5
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="remaining_counts"):
        load_model(path)


def test_an_undeclared_three_class_file_loads(tmp_path):
    model, path, _, X = _file(tmp_path, declared=False)
    assert list(model.classes_) == sorted(LABELS)
    assert np.array_equal(load_model(path).predict(X), model.predict(X))
