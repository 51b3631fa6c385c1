"""Teacher ensembles with K >= 2 classes (issue 31): subsample-and-aggregate (proven) and DP-Bag (paper-claim).

The vote histogram of one public record moves by ``e_b - e_a`` between neighbours (one teacher's vote); with
two classes subsample-and-aggregate releases the second class's count only (one count moves), with K >= 3
every count (two move): the privacy map is checked by brute force on every histogram of a few votes, on both
sides of the limit; then the fits, the ledger, the printout, the files and their verification.
"""

import itertools
import json
import math
import warnings

import numpy as np
import pytest

from dpglass.exceptions import ModelFileError
from dpglass.models import DPBaggingClassifier, SubsampleAggregateClassifier
from dpglass.models.teachers import learners
from dpglass.models.teachers.plan import (
    dpbag_release_plan,
    moved_counts,
    released_classes,
    saa_label_entry,
    saa_labels,
    saa_query_budget,
    saa_release_plan,
    saa_vote_labels,
)
from dpglass.privacy.accounting import compose
from dpglass.privacy.plan import Integers, Points
from ledger_edits import entries, load_dict, recompose

LABELS = ["Gentoo", "Adelie", "Chinstrap"]  # declared in this (unsorted) order


def three_class(n=3000, d=6, seed=0, n_public=600):
    """0/1 features; the label is 'Adelie' where x0, else 'Chinstrap' where x1, else 'Gentoo' (5% flipped)."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(np.uint8)
    code = np.where(X[:, 0] == 1, 1, np.where(X[:, 1] == 1, 2, 0))
    flip = rng.random(n) < 0.05
    code[flip] = rng.integers(0, 3, flip.sum())
    return X, np.array(LABELS)[code], (rng.random((n_public, d)) < 0.5).astype(np.uint8)


def _fit(cls, seed=0, public=True, **params):
    X, y, P = three_class()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DP-Bag's paper-claim warning is not the subject here
        return cls(random_state=seed, **params).fit(X, y, X_public=P if public else None)


SAA = dict(epsilon=2.0, delta=1e-6, n_teachers=100, noise_scale=20.0, classes=LABELS)
BAG = dict(epsilon=3.0, delta=1e-5, n_teachers=20, n_partitions=3, noise_scale=20.0, classes=LABELS)


# --------------------------------------------------------------- the privacy map, by brute force
def _histograms(T, K):
    """Every vote histogram of T teachers over K classes."""
    return [h for h in itertools.product(range(T + 1), repeat=K) if sum(h) == T]


def _neighbours(h):
    """One teacher's vote moved from class a to class b (every a with a vote, every b != a)."""
    for a, b in itertools.permutations(range(len(h)), 2):
        if h[a] > 0:
            g = list(h)
            g[a] -= 1
            g[b] += 1
            yield tuple(g)


def _released(h):
    K = len(h)
    return np.array([h[k] for k in released_classes(K)])


def _worst_log_ratio(r, r2, s, window=6):
    """max over outputs o of log P[r + Z = o] / P[r2 + Z = o], Z iid discrete Laplace of scale s (exact pmf)."""
    lo, hi = np.minimum(r, r2) - window, np.maximum(r, r2) + window
    worst = -math.inf
    for o in itertools.product(*(range(a, b + 1) for a, b in zip(lo, hi))):
        o = np.array(o)
        worst = max(worst, float((np.abs(o - r2) - np.abs(o - r)).sum()) / s)
    return worst


@pytest.mark.parametrize("K", [2, 3, 4])
def test_released_counts_move_by_the_claimed_amount_on_every_neighbouring_pair(K):
    """l_inf 1, and exactly ``moved_counts(K)`` counts at most (1 for two classes, 2 for more), attained."""
    worst = 0
    for T in range(1, 5):
        for h in _histograms(T, K):
            for g in _neighbours(h):
                shift = _released(g) - _released(h)
                assert np.abs(shift).max(initial=0) <= 1
                assert np.abs(shift).sum() <= moved_counts(K)
                worst = max(worst, int(np.abs(shift).sum()))
    assert worst == moved_counts(K) == (1 if K == 2 else 2)


@pytest.mark.parametrize("K", [2, 3])
def test_one_label_costs_moved_counts_over_s_and_no_less(K):
    """The pure-epsilon privacy map of one label on both sides of the limit: the loss reaches c/s exactly on some
    pair (so charging fewer counts than c would be wrong) and never exceeds it."""
    s, c = 2.0, moved_counts(K)
    worst = max(_worst_log_ratio(_released(h), _released(g), s)
                for T in range(1, 4) for h in _histograms(T, K) for g in _neighbours(h))
    assert math.isclose(worst, c / s, rel_tol=1e-12)
    assert worst > (c - 1) / s + 1e-9  # a smaller bound (one count less a label) is violated
    entry = saa_label_entry(s)
    assert math.isclose(compose([entry] * c, "basic", 0.0)[0], c / s)  # what the ledger charges a label


def test_two_classes_are_the_k2_case_of_the_argmax():
    for T in (1, 4, 7, 10):
        noisy = np.arange(-5, T + 6)
        assert np.array_equal(saa_vote_labels(noisy, T, 2), (2 * noisy > T).astype(np.uint8))
    hist = np.array([[3, 3, 1], [0, 2, 5], [4, 4, 4], [-1, 0, 0]])
    assert saa_vote_labels(hist, 7, 3).tolist() == [0, 2, 0, 1]  # argmax, a tie to the first class
    assert released_classes(2) == (1,) and released_classes(3) == (0, 1, 2)


def test_the_budget_charges_two_counts_a_label_for_three_classes():
    for eps, delta, s in [(1.0, 0.0, 50.0), (2.0, 1e-6, 25.0), (0.5, 1e-8, 10.0)]:
        q2 = saa_query_budget(eps, delta, s, 10_000)
        q3 = saa_query_budget(eps, delta, s, 10_000, per_label=2)
        assert q3[0] < q2[0] and q3[1] in ("basic", "pld", "rdp")
        assert compose([saa_label_entry(s)] * (2 * q3[0]), q3[1], delta)[0] <= eps * (1 + 1e-12)
        assert compose([saa_label_entry(s)] * (2 * q3[0] + 2), q3[1], delta)[0] > eps  # one more label does not fit
    params = SubsampleAggregateClassifier(**SAA).get_params()
    assert saa_labels(params, 600, 2) == saa_query_budget(2.0, 1e-6, 20.0, 600, "auto")
    assert saa_labels(params, 600, 5) == saa_query_budget(2.0, 1e-6, 20.0, 600, "auto", per_label=2)


def test_saa_plan_for_three_classes():
    params = SubsampleAggregateClassifier(**SAA).get_params()
    (step,) = saa_release_plan(params, 600, 3)
    q, acct, eps, delta = saa_labels(params, 600, 3)
    assert (step.entry.epsilon, step.entry.delta) == (eps, delta) == compose([saa_label_entry(20.0)] * (2 * q), acct,
                                                                             1e-6)
    assert step.entry.mechanism == f"composition(discrete laplace x{2 * q}, {acct})"
    assert step.entry.sensitivity == 1.0 and step.entry.guarantee == "proven" and step.domain == Integers()
    assert "3 classes" in step.entry.release and f"{q} labels x 2" in step.entry.note
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match=f"{q} x 3 vote counts"):
        step.noise(np.zeros(q, np.int64), rng)
    noisy = step.noise(np.full((q, 3), 10, np.int64), rng)
    assert noisy.shape == (q, 3) and noisy.dtype == np.int64
    assert saa_release_plan(params, 600, 2) != saa_release_plan(params, 600, 3)  # K is part of the plan


def test_one_record_moves_one_teachers_vote_with_the_real_teachers():
    """Coupled parts: D and D plus one record differ in one teacher's part, so every public record's vote
    histogram differs by e_b - e_a (the sensitivity the plan uses), with the teachers dpglass fits."""
    X, y, P = three_class(n=240, seed=4, n_public=200)
    codes = np.searchsorted(sorted(LABELS), y)  # any coding of the labels
    T = 6
    parts = np.random.default_rng(1).integers(0, T, X.shape[0])

    def histograms(Xs, ys, parts):
        W = np.zeros((T, 3, X.shape[1] + 1))
        for t in range(T):
            rows = parts == t
            if rows.any():
                W[t] = learners.fit_logistic(learners._with_intercept(Xs[rows]), ys[rows], 3, 1.0)
        return learners.vote_histograms(learners._votes(W, P), 3)

    base = histograms(X, codes, parts)
    assert (base.sum(axis=1) == T).all()
    moved = 0
    for z in range(5):  # a record of each kind joins teacher z % T
        Xz = np.vstack([X, X[z]])
        hz = histograms(Xz, np.append(codes, (codes[z] + 1) % 3), np.append(parts, z % T))
        diff = hz - base
        assert (np.abs(diff).sum(axis=1) <= 2).all() and (diff.sum(axis=1) == 0).all()
        moved += int(np.abs(diff).sum())
    assert moved > 0  # the added records did change some votes


# ------------------------------------------------------------------ the learners
def test_softmax_teacher_is_the_l2_multinomial_optimum():
    from scipy.optimize import minimize
    from scipy.special import logsumexp

    X, y, _ = three_class(n=300, seed=2)
    codes = np.array([LABELS.index(v) for v in y])
    A = learners._with_intercept(X)
    w = np.random.default_rng(0).integers(1, 4, A.shape[0]).astype(float)  # record counts of table rows
    B = learners._softmax_logistic(A, codes, 3, 0.5, w)

    def objective(b):
        S = A @ b.reshape(3, -1).T
        return float((w * (logsumexp(S, axis=1) - S[np.arange(len(codes)), codes])).sum()) + 0.25 * b @ b

    ref = minimize(objective, np.zeros(B.size), method="BFGS", options={"gtol": 1e-9}).x
    np.testing.assert_allclose(B.ravel(), ref, atol=1e-4)
    assert objective(B.ravel()) <= objective(np.zeros(B.size))  # below the objective at 0: the file's range
    assert not learners._softmax_logistic(A[:0], codes[:0], 3, 1.0).any()  # no rows: 0


def test_two_classes_keep_the_binary_learner():
    X, y, _ = three_class(n=300, seed=2)
    codes = (y == "Adelie").astype(np.uint8)
    A = learners._with_intercept(X)
    np.testing.assert_array_equal(learners.fit_logistic(A, codes, 2, 1.0), learners._logistic(A, codes, 1.0))
    W = np.zeros((2, A.shape[1]))
    W[1] = learners._logistic(A, codes, 1.0)
    votes = learners._votes(W, X)
    assert votes.dtype == bool and not votes[:, 0].any()  # a teacher with weights 0 votes for the first class
    np.testing.assert_array_equal(learners.vote_histograms(votes, 2)[:, 1], votes.sum(axis=1))


# ------------------------------------------------------------------ fits
@pytest.mark.parametrize("cls,params", [(SubsampleAggregateClassifier, SAA), (DPBaggingClassifier, BAG)])
def test_three_class_fit_predicts_k_columns_in_the_declared_order(cls, params):
    model = _fit(cls, **params)
    X, y, _ = three_class(seed=9)
    assert model.classes_.tolist() == LABELS
    proba = model.predict_proba(X)
    assert proba.shape == (X.shape[0], 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.predict(X), np.array(LABELS)[proba.argmax(axis=1)])
    assert model.coef_.shape == (3, X.shape[1]) and model.intercept_.shape == (3,)
    assert model.decision_function(X).shape == (X.shape[0], 3)
    majority = max(np.mean(y == c) for c in LABELS)
    assert model.score(X, y) > majority + 0.1
    text = str(model)
    assert all(label in text.splitlines()[3 + (cls is DPBaggingClassifier)] for label in LABELS)  # column heads
    assert "predict the class with the largest score" in text  # DP logistic regression's table (LogisticScores)


def test_saa_three_class_fit_records_its_plan_and_labels_q_records():
    model = _fit(SubsampleAggregateClassifier, **SAA)
    q, acct = saa_labels(model.get_params(), 600, 3)[:2]
    assert model.n_labelled_ == q and model.composition_ == acct
    (entry,) = model.privacy_ledger_.entries
    assert entry == saa_release_plan(model.get_params(), 600, 3)[0].entry
    assert "noisy plurality" in str(model) and f"on {q} of 600 public records" in str(model)
    assert model.privacy_ledger_.total()[0] <= 2.0 * (1 + 1e-9)


def test_dpbag_three_classes_stays_a_paper_claim():
    X, y, P = three_class()
    with pytest.warns(Warning, match="paper's claim"):
        model = DPBaggingClassifier(random_state=0, **BAG).fit(X, y, X_public=P)
    (entry,) = model.privacy_ledger_.entries
    (step,) = dpbag_release_plan(model.get_params(), 3)
    assert entry == step.entry and entry.guarantee == "paper-claim" and "over 3 classes" in entry.note
    assert step.domain == Points((0, 1, 2))
    assert "paper-claim" in str(model) and "n_labelled" not in json.dumps(model.to_dict())


def test_dpbag_record_shares_take_the_largest_class():
    from dpglass.models.teachers.workers import _membership, _record_shares

    assignment = np.array([[0, 1, 2], [1, 1, 0]])  # 2 partitions x 3 teachers, 3 records
    M = _membership(assignment, 3)
    V = np.array([[0, 1, 2, 2, 2, 1]], dtype=np.uint8)  # one query: the 6 teachers' votes
    # record 0: teachers 0 and 4 vote 0 and 2; record 1: teachers 1 and 4 vote 1 and 2; record 2: 2 and 3 vote 2, 2
    np.testing.assert_allclose(_record_shares(M, V, 3)[:, 0], [0.5, 0.5, 1.0])


def test_a_fit_on_zero_records_with_declared_classes_succeeds():
    X, y, P = three_class()
    for cls, params in [(SubsampleAggregateClassifier, SAA), (DPBaggingClassifier, BAG)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls(random_state=0, **params).fit(X[:0], y[:0], X_public=P)
        assert model.classes_.tolist() == LABELS and model.predict(P).shape == (600,)


@pytest.mark.parametrize("cls,params", [(SubsampleAggregateClassifier, SAA), (DPBaggingClassifier, BAG)])
def test_the_artifact_does_not_show_one_record(cls, params):
    """D against D minus one record: every field that is the same across seeds is the same on both sides."""
    from dpglass.audit.artifact import deterministic_leaks, model_artifact

    X, y, P = three_class(n=400)
    side = lambda A, b: [model_artifact(_fit_on(cls, A, b, P, s, params)) for s in range(6)]  # noqa: E731
    assert deterministic_leaks(side(X, y), side(X[1:], y[1:])) == []


def _fit_on(cls, X, y, P, seed, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(random_state=seed, **params).fit(X, y, X_public=P)


# ------------------------------------------------------------------ files
@pytest.fixture(scope="module")
def files():
    return {name: _fit(cls, **params).to_dict() for name, (cls, params) in
            {"saa": (SubsampleAggregateClassifier, SAA), "bag": (DPBaggingClassifier, BAG),
             "saa-undeclared": (SubsampleAggregateClassifier, {**SAA, "classes": None})}.items()}


@pytest.mark.parametrize("name", ["saa", "bag", "saa-undeclared"])
def test_three_class_files_load_verify_and_predict_the_same(files, name, tmp_path):
    data = json.loads(json.dumps(files[name]))
    model = load_dict(data)
    X, _, _ = three_class(seed=5)
    cls = DPBaggingClassifier if name == "bag" else SubsampleAggregateClassifier
    ref = cls.from_dict(json.loads(json.dumps(files[name])))
    assert np.array_equal(model.predict(X), ref.predict(X)) and model.to_dict() == data
    assert str(model) == str(ref)


def test_dpglass_inspect_verifies_a_three_class_file(files, tmp_path, capsys):
    from dpglass.cli import main

    path = tmp_path / "m.json"
    path.write_text(json.dumps(files["saa"]))
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert all(label in out for label in LABELS) and "proven" in out


def _drop_row(data):
    data["coef"].pop()


def _short_intercept(data):
    data["intercept"] = data["intercept"][:2]


def _scalar_intercept(data):
    data["intercept"] = 0.0


def _huge(data):
    data["coef"][0][0] = 1e6


def _renamed(data):
    data["classes"][2] = "Emperor"


def _reordered(data):
    data["classes"] = [data["classes"][1], data["classes"][0], data["classes"][2]]


def _two_labels(data):
    data["classes"] = data["classes"][:2]


def _four_labels(data):
    data["classes"] = [*data["classes"], "Emperor"]


def _cheaper_count(data):
    e = entries(data)[0]
    q = data["n_labelled"]
    e["mechanism"] = e["mechanism"].replace(f"x{2 * q},", f"x{q},")
    recompose(data)


def _q_doubled(data):
    data["n_labelled"] = 2 * data["n_labelled"]


def _no_entry(data):
    entries(data).clear()
    recompose(data)


def _entry_twice(data):
    entries(data).append(dict(entries(data)[0]))
    recompose(data)


def _note_binary(data):
    e = entries(data)[0]
    e["note"] = e["note"].replace(" over 3 classes", "")


SAA_EDITS = {"coef": [_drop_row, _huge], "intercept": [_short_intercept, _scalar_intercept],
             "classes": [_renamed, _reordered, _four_labels], "privacy_ledger": [_cheaper_count, _no_entry,
                                                                                 _entry_twice],
             "n_labelled": [_q_doubled], "any": [_two_labels]}


@pytest.mark.parametrize("field,edit", [(f, e) for f, es in SAA_EDITS.items() for e in es],
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_edited_saa_files_are_refused_with_the_field_named(files, field, edit):
    data = json.loads(json.dumps(files["saa"]))
    edit(data)
    with pytest.raises(ModelFileError) as err:
        load_dict(data)
    if field != "any":
        assert field in str(err.value), str(err.value)


@pytest.mark.parametrize("edit", [_drop_row, _huge, _renamed, _two_labels, _four_labels, _note_binary, _no_entry],
                         ids=lambda e: e.__name__)
def test_edited_dpbag_files_are_refused(files, edit):
    data = json.loads(json.dumps(files["bag"]))
    edit(data)
    with pytest.raises(ModelFileError):
        load_dict(data)


def test_an_undeclared_label_set_of_another_size_is_refused(files):
    """Without params.classes the labels are the file's, but their number fixes the plan: 2 or 4 labels do not
    verify against a three-class ledger."""
    for edit in (_two_labels, _four_labels):
        data = json.loads(json.dumps(files["saa-undeclared"]))
        edit(data)
        with pytest.raises(ModelFileError):
            load_dict(data)


# ------------------------------------------------------------------ Dask
@pytest.mark.parametrize("cls,params", [(SubsampleAggregateClassifier, SAA), (DPBaggingClassifier, BAG)])
def test_three_class_fit_through_dask_is_the_in_memory_one(dask_client, tmp_path, cls, params):
    import dask.dataframe as dd
    import pandas as pd

    X, y, P = three_class(n=1500)
    columns = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=columns).assign(y=y)
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[rows].to_parquet(tmp_path / f"part{i}.parquet")
    parts = dd.read_parquet(str(tmp_path / "*.parquet"))
    public = pd.DataFrame(P, columns=columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        through_dask = cls(random_state=4, **params).fit(parts[columns], parts["y"], X_public=public)
        in_memory = cls(random_state=4, **params).fit(frame[columns], frame["y"], X_public=public)
    assert through_dask.to_dict() == in_memory.to_dict()
    assert through_dask.classes_.tolist() == LABELS
