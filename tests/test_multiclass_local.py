"""Local DP with K >= 2 labels (issue 31): the "oue" randomizer encodes (cell, label) for any number of labels, the
classifier predicts the plug-in argmax of the debiased label frequencies, the slides' "laplace" mechanism stays
binary and says so; files, their check, the CLI.
"""

from __future__ import annotations

import copy
import itertools
import json
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_blobs

from dpglass.cli import main
from dpglass.exceptions import DataValidationError, InvalidParameterError, ModelFileError
from dpglass.local import (
    HistogramClassifier,
    HistogramRandomizer,
    LDPHistogramClassifier,
    Reports,
    UnaryRandomizer,
    load_reports,
    save_reports,
)
from dpglass.local.classifier import _class_frequencies, _statistic
from dpglass.local.plug_in import _cube_labels
from dpglass.local.randomizers import Grid, oue_q_numerator
from dpglass.models import load_model
from dpglass.privacy.samplers import GRID

LABELS = ["Gentoo", "Adelie", "Chinstrap"]  # declared in this (unsorted) order
BOUNDS = ([-2.0, -2.0], [4.0, 4.0])


def blobs(n=40_000, seed=0):
    """Three Gaussian blobs in the box; labels in LABELS order of the centres."""
    X, y = make_blobs(n, centers=[[0, 0], [2, 0], [1, 2]], cluster_std=0.7, random_state=seed)
    return X, np.array(LABELS)[y]


def _fitted(n=40_000, alpha=1.0, seed=0, **kw):
    X, y = blobs(n, seed)
    params = dict(alpha=alpha, bounds=BOUNDS, randomizer="oue", random_state=seed, classes=LABELS)
    return LDPHistogramClassifier(**{**params, **kw}).fit(X, y), X, y


# ------------------------------------------------------------------ the randomizer
@pytest.mark.parametrize("K", [2, 3, 5])
def test_oue_encodes_cell_and_label_for_k_labels(K):
    rnd = UnaryRandomizer(1.0, 0.5, ([0.0, 0.0], [1.0, 1.0]), n_classes=K, random_state=0)
    assert rnd.report_length == K * 4
    U = np.array([[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9]])
    for y in range(K):
        assert rnd.categories(U, np.full(4, y)).tolist() == [K * c + y for c in range(4)]
    rep = rnd.randomize(U, np.arange(4) % K)
    assert rep.values.shape == (4, K * 4) and rep.n_classes == K
    assert ("n_classes" in rep.metadata()) == (K != 2)
    with pytest.raises(DataValidationError, match="codes 0..2" if K == 3 else "0"):
        rnd.randomize(U[:1], [K])


@pytest.mark.parametrize("K", [2, 3])
def test_oue_privacy_map_by_brute_force_on_both_sides_of_the_limit(K):
    """Every pair of inputs and every output of a tiny grid (4 cells x K labels): the largest ratio of output
    probabilities is exactly (1 - q)/q <= e^alpha, whatever K; a claim of alpha minus 1e-9 would be violated."""
    alpha = 1.0
    q = Fraction(oue_q_numerator(alpha), GRID)
    half = Fraction(1, 2)
    m = 4 * K
    outputs = np.array(list(itertools.product((0, 1), repeat=m)), dtype=bool)
    worst = Fraction(0)
    for c, c2 in itertools.permutations(range(m), 2):
        # only the bits c and c2 differ in law between the two inputs: their ratio is the whole ratio
        for bc, bc2 in itertools.product((0, 1), repeat=2):
            if not (outputs[:, c] == bc).any():
                continue
            p = (half if bc else 1 - half) * (q if bc2 else 1 - q)
            p2 = (q if bc else 1 - q) * (half if bc2 else 1 - half)
            worst = max(worst, p / p2)
    assert worst == (1 - q) / q
    getcontext().prec = 60
    e_alpha = Decimal(alpha).exp()
    ratio = Decimal(worst.numerator) / Decimal(worst.denominator)
    assert ratio <= e_alpha
    assert ratio > (Decimal(alpha) - Decimal("1e-9")).exp()  # tight: a smaller alpha would be violated


def test_oue_privacy_map_through_the_sampler_probabilities():
    """The whole report's law (product of the bits), two inputs of a 3-label grid, every one of the 2^12 outputs."""
    rnd = UnaryRandomizer(1.0, 0.5, ([0.0, 0.0], [1.0, 1.0]), n_classes=3)
    q = rnd.q_numerator / GRID
    outputs = np.array(list(itertools.product((0, 1), repeat=12)), dtype=bool)

    def law(own):
        p = np.where(outputs, q, 1 - q)
        p[:, own] = 0.5
        return p.prod(axis=1)

    cats = rnd.categories(np.array([[0.1, 0.1], [0.9, 0.9]]), np.array([0, 2]))
    ratio = (law(cats[0]) / law(cats[1])).max()
    assert np.isclose(ratio, (1 - q) / q) and ratio <= np.exp(1.0) * (1 + 1e-12)


def test_the_slides_mechanism_stays_binary():
    with pytest.raises(InvalidParameterError, match="binary.*oue"):
        HistogramRandomizer(1.0, 0.5, BOUNDS, n_classes=3)
    X, y = blobs(300)
    with pytest.raises(DataValidationError, match="binary") as err:
        LDPHistogramClassifier(alpha=1.0, bounds=BOUNDS, randomizer="laplace").fit(X, y)
    assert "randomizer='oue'" in str(err.value)
    with pytest.raises(DataValidationError, match="binary"):
        LDPHistogramClassifier(alpha=1.0, bounds=BOUNDS, classes=LABELS).fit(X, y)
    for bad in (1, 256, 2.5, True):
        with pytest.raises(InvalidParameterError, match="n_classes"):
            UnaryRandomizer(1.0, 0.5, BOUNDS, n_classes=bad)


# ------------------------------------------------------------------ the plug-in rule
def test_debiased_frequencies_are_unbiased_and_two_labels_give_the_slides_rule():
    grid = Grid(np.zeros(1), np.ones(1), 0.5)  # 2 fine cells, 3 cubes
    rnd = UnaryRandomizer(2.0, 0.5, ([0.0], [1.0]), n_classes=3, random_state=0)
    X = np.repeat([[0.2], [0.7]], [600, 400], axis=0)
    y = np.r_[np.zeros(300), np.ones(300), np.full(400, 2)].astype(int)
    true = np.zeros((2, 3))
    np.add.at(true, (grid.fine(X), y), 1)
    runs = []
    for seed in range(40):
        rep = rnd.randomize(X, y, rng=np.random.default_rng(seed))
        sums = np.vstack([rep.values.sum(axis=0), np.zeros(rep.values.shape[1], np.int64)])
        runs.append(_class_frequencies(grid, 2.0, sums, np.array([1000, 0]), 3))
    mean = np.mean(runs, axis=0)
    M = grid.cube_of_fine().astype(float)
    np.testing.assert_allclose(mean, M @ true, atol=4 * np.std(runs, axis=0).max() / np.sqrt(40) + 1e-9)
    # two labels: the argmax rule (a tie to the later label) is 1{T >= 0}, with T the slides' statistic
    freq = np.array([[3.0, 1.0], [1.0, 3.0], [2.0, 2.0], [-1.0, -1.5]])
    T = (freq[:, 1] - freq[:, 0]) / 2
    assert _cube_labels(T).tolist() == _cube_labels(freq).tolist() == [0, 1, 1, 0]
    assert _cube_labels(np.array([[1.0, 2.0, 2.0], [5.0, 0.0, 5.0]])).tolist() == [2, 2]


def test_two_label_statistic_is_the_slides_one():
    """The K = 2 case of the class frequencies gives T = (N1 - N0) / (2n) as the binary code wrote it."""
    rnd = UnaryRandomizer(1.0, 0.25, ([0.0, 0.0], [1.0, 1.0]), random_state=3)
    rng = np.random.default_rng(0)
    X, y = rng.random((2000, 2)), rng.integers(0, 2, 2000)
    rep = rnd.randomize(X, y)
    sums = np.vstack([rep.values.sum(axis=0), np.zeros(rep.values.shape[1], np.int64)])
    counts = np.array([2000, 0])
    q = oue_q_numerator(1.0) / GRID
    est = (sums.sum(axis=0) - 2000 * q) / (0.5 - q)
    M = rnd.grid.cube_of_fine().astype(np.float64)
    old = (M @ est[1::2] - M @ est[0::2]) / (2.0 * 2000)
    assert np.array_equal(_statistic("oue", rnd.grid, 1.0, sums, counts), old)


def test_three_label_classifier_learns_at_alpha_one():
    clf, X, y = _fitted()
    Xt, yt = blobs(10_000, seed=1)
    assert clf.classes_.tolist() == LABELS and clf.statistic_.shape == (clf.grid_.n_cubes, 3)
    majority = max(np.mean(yt == c) for c in LABELS)
    ref = HistogramClassifier(bandwidth=clf.bandwidth_, bounds=BOUNDS, classes=LABELS).fit(X, y)
    assert clf.score(Xt, yt) > majority + 0.3 and ref.score(Xt, yt) > majority + 0.3
    proba = clf.predict_proba(Xt[:50])
    assert proba.shape == (50, 3) and set(np.unique(proba)) <= {0.0, 1.0} and (proba.sum(axis=1) == 1).all()
    assert np.array_equal(np.array(LABELS)[proba.argmax(axis=1)], clf.predict(Xt[:50]))
    assert clf.decision_function(Xt[:5]).shape == (5, 3)
    text = str(clf)
    assert "0: Gentoo, 1: Adelie, 2: Chinstrap" in text and "1-LDP" in text


def test_the_non_private_reference_counts_each_label():
    X, y = blobs(2000)
    ref = HistogramClassifier(bandwidth=0.5, bounds=BOUNDS, classes=LABELS).fit(X, y)
    grid = ref.grid_
    flat, valid = grid.cube_members(grid.unit(X))
    for k, label in enumerate(LABELS):
        rows = y == label
        want = np.bincount(flat[rows][valid[rows]], minlength=grid.n_cubes) / len(y)
        np.testing.assert_allclose(ref.statistic_[:, k], want)


# ------------------------------------------------------------------ reports and their files
def test_fit_reports_from_a_file_with_three_labels(tmp_path):
    X, y = blobs(20_000)
    codes = np.array([LABELS.index(v) for v in y])
    rep = UnaryRandomizer(1.0, 0.25, BOUNDS, n_classes=3, random_state=1).randomize(X, codes)
    path = tmp_path / "r.npz"
    save_reports(rep, path, feature_names=["bill", "flipper"], classes=LABELS)
    assert load_reports(path).n_classes == 3
    clf = LDPHistogramClassifier(alpha=1.0, randomizer="oue").fit_reports(path)
    assert clf.classes_.tolist() == LABELS and (clf.predict(X) == y).mean() > 0.7
    assert LDPHistogramClassifier(alpha=1.0, randomizer="oue").fit_reports(rep).classes_.tolist() == [0, 1, 2]
    with pytest.raises(DataValidationError, match="3 labels"):
        LDPHistogramClassifier(alpha=1.0, randomizer="oue", classes=["a", "b"]).fit_reports(rep)
    with pytest.raises(DataValidationError, match="encode the labels"):
        LDPHistogramClassifier(alpha=1.0, randomizer="oue", classes=["a", "b", "c"]).fit_reports(path)
    with pytest.raises(DataValidationError, match="encode 3"):
        save_reports(rep, tmp_path / "x.npz", classes=["a", "b"])
    short = Reports(rep.randomizer, rep.alpha, rep.bandwidth, rep.lower, rep.upper, rep.values, rep.half)  # K = 2
    with pytest.raises(DataValidationError, match="entries each"):
        LDPHistogramClassifier(alpha=1.0, randomizer="oue").fit_reports(short)


@pytest.fixture(scope="module")
def saved():
    return _fitted()[0].to_dict()


def test_a_three_label_file_loads_and_verifies(saved, tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(saved))
    back = load_model(path)
    X, _ = blobs(3000, seed=4)
    ref = LDPHistogramClassifier.from_dict(json.loads(json.dumps(saved)))
    assert np.array_equal(back.predict(X), ref.predict(X)) and back.to_dict() == saved
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "verified: yes" in out and "1-LDP" in out and all(label in out for label in LABELS)


_TAMPERINGS = {
    "report_sums": [lambda d: d["report_sums"][0].pop(),  # one sum short in a half
                    lambda d: [half.extend([0, 0, 0]) for half in d["report_sums"]]],
    "classes": [lambda d: d.update(classes=d["classes"][:2]),
                lambda d: d.update(classes=[*d["classes"], "Emperor"]),
                lambda d: d["classes"].__setitem__(2, "Emperor"),  # params.classes is declared
                lambda d: d.update(classes=[d["classes"][1], d["classes"][0], d["classes"][2]])],
}


@pytest.mark.parametrize("field,i", [(f, i) for f, es in _TAMPERINGS.items() for i in range(len(es))])
def test_a_tampered_three_label_file_is_refused(saved, field, i):
    data = copy.deepcopy(saved)
    _TAMPERINGS[field][i](data)
    with pytest.raises(ModelFileError) as err:
        LDPHistogramClassifier.from_dict(data)
    if "params.classes" not in str(err.value):  # a declared label set is named as the parameter it contradicts
        assert field in str(err.value), str(err.value)


def test_a_laplace_file_with_three_labels_is_refused():
    X, y = blobs(4000)
    binary = LDPHistogramClassifier(alpha=1.0, bounds=BOUNDS, bandwidth=0.5, random_state=0).fit(
        X, np.where(y == "Adelie", "Adelie", "other")).to_dict()
    binary["classes"] = ["Adelie", "other", "Gentoo"]
    with pytest.raises(ModelFileError, match="binary"):
        LDPHistogramClassifier.from_dict(binary)


# ------------------------------------------------------------------ the CLI
def test_cli_randomize_fit_predict_three_labels(tmp_path, capsys):
    X, y = blobs(20_000)
    data = tmp_path / "people.csv"
    pd.DataFrame({"bill": X[:, 0], "flipper": X[:, 1], "species": y}).to_csv(data, index=False)
    new = tmp_path / "new.csv"
    pd.DataFrame({"flipper": X[:300, 1], "bill": X[:300, 0]}).to_csv(new, index=False)
    reports, model, preds = tmp_path / "r.npz", tmp_path / "m.json", tmp_path / "p.csv"
    args = ["ldp", "randomize", "--data", str(data), "--target", "species", "--classes", ",".join(LABELS),
            "--bounds", "bill=-2:4", "--bounds", "flipper=-2:4", "--alpha", "1", "--seed", "0", "--out", str(reports)]
    assert main(args) == 2  # the slides' mechanism (the default) is binary
    err = capsys.readouterr().err
    assert "binary" in err and "oue" in err
    assert main([*args, "--randomizer", "oue"]) == 0
    assert "entries per report" in capsys.readouterr().out
    meta = json.loads(str(np.load(reports)["meta"]))
    assert meta["classes"] == LABELS and meta["n_classes"] == 3
    assert main(["ldp", "fit", "--reports", str(reports), "--out", str(model)]) == 0
    out = capsys.readouterr().out
    assert "0: Gentoo, 1: Adelie, 2: Chinstrap" in out and "-LDP" in out
    assert main(["predict", "--model", str(model), "--data", str(new), "--proba", "--out", str(preds)]) == 0
    got = pd.read_csv(preds)
    assert list(got.columns) == ["prediction", *(f"p({c})" for c in LABELS)]
    assert (got["prediction"].to_numpy() == y[:300]).mean() > 0.7
    assert main(["inspect", str(model)]) == 0
    assert "verified: yes" in capsys.readouterr().out
    assert main(["ldp", "randomize", "--data", str(data), "--target", "species", "--classes", "Gentoo,Adelie",
                 "--bounds", "bill=-2:4", "--bounds", "flipper=-2:4", "--alpha", "1", "--randomizer", "oue",
                 "--out", str(tmp_path / "x.npz")]) == 2
    assert "outside the declared classes" in capsys.readouterr().err
