"""dpglass.local: the LDP randomizers (guarantee by audit, report lengths, sensitivities), the classifier, the CLI."""

from __future__ import annotations

import itertools
import json
import math
from decimal import Decimal, getcontext

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_moons

from dpglass.audit.mechanisms import audit_mechanism
from dpglass.cli import main
from dpglass.exceptions import DataValidationError, InvalidParameterError, ModelFileError
from dpglass.local import (
    Grid,
    HistogramClassifier,
    HistogramRandomizer,
    LDPHistogramClassifier,
    Reports,
    UnaryRandomizer,
    auto_bandwidth,
    load_reports,
    save_reports,
)
from dpglass.local.randomizers import oue_q_numerator
from dpglass.models import load_model
from dpglass.privacy.samplers import GRID

MOONS_BOUNDS = ([-1.5, -1.0], [2.5, 1.5])


# ------------------------------------------------------------ the guarantee
def _report_batch(randomizer, half):
    def batch(record, n, rng):
        x, y = record
        X = np.tile(np.asarray(x, dtype=float), (n, 1))
        rep = randomizer.randomize(X, np.full(n, y), half=np.full(n, half), rng=rng)
        return rep.values.astype(np.float64) if randomizer.name == "laplace" else [tuple(r) for r in rep.values]
    return batch


@pytest.mark.parametrize("half", [0, 1])
def test_audit_one_laplace_report_stays_under_alpha(half):
    # d = 1, h = 1/4: x = 0.05 lies in cubes {0, 1}, x = 0.95 in {3, 4}: disjoint, l1 distance 4 = 2^(d+1)
    rnd = HistogramRandomizer(1.0, 0.25, ([0.0], [1.0]))
    res = audit_mechanism(batch=_report_batch(rnd, half), d=([0.05], 1), d_prime=([0.95], 1), n_samples=60_000,
                          claim=(1.0, 0.0), kind="vector", rng=0, name="ldp laplace report")
    assert res.verdict == "PASS", res.summary()
    assert 0.2 < res.epsilon_lower <= 1.0, res.summary()


def test_audit_one_oue_report_stays_under_alpha():
    rnd = UnaryRandomizer(1.0, 0.5, ([0.0], [1.0]))  # 2 cells x 2 labels = 4 bits: 16 outputs
    res = audit_mechanism(batch=_report_batch(rnd, 0), d=([0.1], 0), d_prime=([0.9], 1), n_samples=60_000,
                          claim=(1.0, 0.0), kind="discrete", rng=1, name="ldp oue report")
    assert res.verdict == "PASS", res.summary()
    assert 0.5 < res.epsilon_lower <= 1.0, res.summary()


@pytest.mark.parametrize("d,h", [(1, 0.25), (2, 0.3), (3, 0.3)])
def test_indicator_l1_sensitivity(d, h):
    rnd = HistogramRandomizer(1.0, h, (np.zeros(d), np.ones(d)))
    rng = np.random.default_rng(d)
    on_grid = np.array(list(itertools.product(np.arange(0, 1.0001, h / 2), repeat=d)))[:200]
    U = np.vstack([rng.random((300, d)), on_grid, np.zeros((1, d)), np.ones((1, d)), np.full((1, d), 0.05),
                   np.full((1, d), 0.95)])
    for half in (0, 1):
        B = rnd.indicators(U, np.ones(len(U), dtype=np.int8), np.full(len(U), half))
        assert B.sum(axis=1).max() <= 2**d and set(np.unique(B)) <= {0, 1}
        assert (B.sum(axis=1) >= 1).all()  # every point of the box is in some cube
        dist = np.abs(B[:, None, :] - B[None, :, :]).sum(axis=2)
        assert dist.max() <= rnd.l1_sensitivity == 2 ** (d + 1)
    assert dist.max() == 2 ** (d + 1)  # tight: 0.05 and 0.95 have disjoint cubes (when h < 1/2)


def test_exact_grid_point_is_in_one_cube_per_axis():
    g = Grid(np.zeros(2), np.ones(2), 0.25)
    flat, valid = g.cube_members(np.array([[0.5, 0.5], [0.6, 0.1]]))
    assert valid.sum(axis=1).tolist() == [1, 4]


@pytest.mark.parametrize("alpha", [0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 30.0])
def test_oue_probability_is_exactly_safe(alpha):
    num = oue_q_numerator(alpha)
    getcontext().prec = 80
    e = Decimal(alpha).exp()
    assert Decimal(num) / Decimal(GRID) * (e + 1) >= 1  # (1 - q)/q <= e^alpha exactly
    assert Decimal(num - 1) / Decimal(GRID) * (e + 1) < 1  # the smallest such grid value


def test_reports_have_the_same_length_and_are_integers():
    X = np.array([[-5.0, 0.0], [0.0, 0.2], [2.4, 1.4], [100.0, -3.0]])  # two outside the box (clipped)
    for cls in (HistogramRandomizer, UnaryRandomizer):
        rnd = cls(1.0, 0.2, MOONS_BOUNDS, random_state=0)
        rep = rnd.randomize(X, [0, 1, 1, 0])
        assert rep.values.shape == (4, rnd.report_length)
        assert rep.values.dtype.kind in "iu"
        one = rnd.randomize_one(X[0], 1, half=1)
        assert one.shape == (rnd.report_length,)


def test_half_is_a_fair_public_coin():
    rnd = HistogramRandomizer(1.0, 0.5, ([0.0], [1.0]), random_state=3)
    half = rnd.randomize(np.zeros((4000, 1)), np.zeros(4000)).half
    assert abs(half.mean() - 0.5) < 0.05


# ------------------------------------------------------------- T_n by simulation
def _population_T(h, K):
    """d = 1, X ~ U[0, 1], eta(x) = x: E[1{|X - hj| < h} (eta(X) - 1/2)] = integral of (x - 1/2) over the cube."""
    out = []
    for j in range(K + 1):
        a, b = max(0.0, h * (j - 1)), min(1.0, h * (j + 1))
        out.append(((b - 0.5) ** 2 - (a - 0.5) ** 2) / 2)
    return np.array(out)


@pytest.mark.parametrize("randomizer", ["laplace", "oue"])
def test_T_expectation_matches_the_population_quantity(randomizer):
    rng = np.random.default_rng(5)
    n, h = 200_000, 0.25
    X = rng.random((n, 1))
    y = (rng.random(n) < X[:, 0]).astype(int)
    clf = LDPHistogramClassifier(alpha=2.0, bandwidth=h, bounds=([0.0], [1.0]), randomizer=randomizer,
                                 random_state=7).fit(X, y)
    target = _population_T(h, clf.grid_.K)
    # standard error of T: Laplace scale 2^(d+1)/alpha = 2, var 2*4 per entry; halves of n/2
    se = math.sqrt(8 * (2 / n + 0.25 * 2 / n) + 1 / n) if randomizer == "laplace" else math.sqrt(4 * 2 / n)
    assert np.abs(clf.statistic_ - target).max() < 5 * se, (clf.statistic_, target)
    exact = HistogramClassifier(bandwidth=h, bounds=([0.0], [1.0])).fit(X, y).statistic_
    assert np.abs(exact - target).max() < 5 / math.sqrt(n)


def test_accuracy_rises_with_n():
    Xte, yte = make_moons(4000, noise=0.2, random_state=99)
    acc = {}
    for n in (1_000, 50_000):
        X, y = make_moons(n, noise=0.2, random_state=n)
        acc[n] = np.mean([LDPHistogramClassifier(alpha=1.0, bounds=MOONS_BOUNDS, randomizer="oue", random_state=s)
                          .fit(X, y).score(Xte, yte) for s in range(2)])
    assert acc[50_000] > acc[1_000] + 0.05 and acc[50_000] > 0.85, acc


def test_auto_bandwidth_satisfies_theorem_2():
    for d in (1, 2, 3):
        hs = [auto_bandwidth(n, 1.0, d) for n in (10**4, 10**6, 10**8, 10**10)]
        assert all(a > b for a, b in zip(hs, hs[1:]))  # h -> 0
        growth = [n * h ** (2 * d) for n, h in zip((10**4, 10**6, 10**8, 10**10), hs)]
        assert all(a < b for a, b in zip(growth, growth[1:]))  # n alpha^2 h^2d -> infinity


def test_fit_reports_equals_fit_and_roundtrips(tmp_path):
    X, y = make_moons(3000, noise=0.2, random_state=0)
    for name in ("laplace", "oue"):
        rnd = (HistogramRandomizer if name == "laplace" else UnaryRandomizer)(2.0, 0.25, MOONS_BOUNDS, random_state=1)
        rep = rnd.randomize(X, y)
        path = tmp_path / f"{name}.npz"
        save_reports(rep, path, feature_names=["a", "b"])
        back = load_reports(path)
        assert np.array_equal(back.values, rep.values) and np.array_equal(back.half, rep.half)
        a = LDPHistogramClassifier(alpha=2.0, bandwidth=0.25, bounds=MOONS_BOUNDS, randomizer=name).fit_reports(rep)
        b = LDPHistogramClassifier(alpha=2.0, randomizer=name).fit_reports(path)
        assert np.array_equal(a.statistic_, b.statistic_)
        b.save(tmp_path / "m.json")
        c = load_model(tmp_path / "m.json")
        assert np.array_equal(c.predict(X), b.predict(X)) and c.feature_names() == ["a", "b"]
        data = json.loads((tmp_path / "m.json").read_text())
        assert data["guarantee"] == "alpha-LDP per report; classifier is post-processing"
        assert data["params"]["random_state"] is None
        data["report_sums"] = data["report_sums"][:1]
        with pytest.raises(ModelFileError):
            LDPHistogramClassifier.from_dict(data)


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("alpha", [0, -1.0, float("nan"), float("inf")])
def test_bad_alpha(alpha):
    with pytest.raises(InvalidParameterError, match="alpha"):
        HistogramRandomizer(alpha, 0.2, MOONS_BOUNDS)
    with pytest.raises(InvalidParameterError, match="alpha"):
        LDPHistogramClassifier(alpha=alpha, bounds=MOONS_BOUNDS).fit([[0.0, 0.0], [1.0, 1.0]], [0, 1])


@pytest.mark.parametrize("h", [0, -0.1, 1.5])
def test_bad_bandwidth(h):
    with pytest.raises(InvalidParameterError, match="bandwidth"):
        UnaryRandomizer(1.0, h, MOONS_BOUNDS)
    with pytest.raises(InvalidParameterError, match="bandwidth"):
        LDPHistogramClassifier(bandwidth=h, bounds=MOONS_BOUNDS).fit([[0.0, 0.0], [1.0, 1.0]], [0, 1])


@pytest.mark.parametrize("bounds,match", [
    (None, "required"), (([1.0, 0.0], [0.0, 1.0]), "inverted"), (([0.0], [1.0]), "2 features"),
    (([0.0, 0.0], [1.0]), "same length"), (([0.0, np.nan], [1.0, 1.0]), "finite"),
])
def test_bad_bounds(bounds, match):
    with pytest.raises(InvalidParameterError, match=match):
        LDPHistogramClassifier(bandwidth=0.5, bounds=bounds).fit([[0.0, 0.0], [1.0, 1.0]], [0, 1])


def test_bad_labels():
    X3 = [[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]]
    with pytest.raises(DataValidationError, match="binary"):  # two labels of the user's, not three
        LDPHistogramClassifier(bandwidth=0.5, bounds=MOONS_BOUNDS).fit(X3, [0, 1, 2])
    with pytest.raises(DataValidationError, match="outside the declared classes"):
        LDPHistogramClassifier(bandwidth=0.5, bounds=MOONS_BOUNDS, classes=[0, 1]).fit(X3[:2], [0, 2])
    with pytest.raises(DataValidationError, match="0 or 1"):
        HistogramRandomizer(1.0, 0.5, MOONS_BOUNDS).randomize([[0.0, 0.0]], ["yes"])


def test_bad_reports():
    rnd = HistogramRandomizer(1.0, 0.5, MOONS_BOUNDS, random_state=0)
    rep = rnd.randomize(np.zeros((10, 2)), np.zeros(10))
    wrong = Reports(rep.randomizer, rep.alpha, rep.bandwidth, rep.lower, rep.upper, rep.values[:, :-1], rep.half)
    with pytest.raises(DataValidationError, match="entries each"):
        LDPHistogramClassifier(alpha=1.0).fit_reports(wrong)
    with pytest.raises(DataValidationError, match="alpha"):
        LDPHistogramClassifier(alpha=2.0).fit_reports(rep)
    with pytest.raises(DataValidationError, match="randomizer"):
        LDPHistogramClassifier(alpha=1.0, randomizer="oue").fit_reports(rep)
    one_half = Reports(rep.randomizer, rep.alpha, rep.bandwidth, rep.lower, rep.upper, rep.values,
                       np.zeros(10, dtype=np.int8))
    with pytest.raises(DataValidationError, match="both halves"):
        LDPHistogramClassifier(alpha=1.0).fit_reports(one_half)


def test_size_limit_says_what_is_needed():
    with pytest.raises(InvalidParameterError, match="1,002,001"):
        HistogramRandomizer(1.0, 0.001, MOONS_BOUNDS)
    assert HistogramRandomizer(1.0, 0.001, MOONS_BOUNDS, max_cells=2_000_000).report_length == 1_002_001


# ------------------------------------------------------------------------ CLI
def test_cli_randomize_fit_predict(tmp_path, capsys):
    X, y = make_moons(6000, noise=0.2, random_state=0)
    data = tmp_path / "m.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": np.where(y == 1, "pos", "neg")}).to_csv(data, index=False)
    new = tmp_path / "new.csv"
    pd.DataFrame({"b": X[:200, 1], "a": X[:200, 0]}).to_csv(new, index=False)
    reports, model, preds = tmp_path / "r.npz", tmp_path / "m.json", tmp_path / "p.csv"
    assert main(["ldp", "randomize", "--data", str(data), "--target", "label", "--positive", "pos",
                 "--bounds", "a=-1.5:2.5", "--bounds", "b=-1:1.5", "--alpha", "4", "--randomizer", "oue",
                 "--block-rows", "1000", "--seed", "0", "--out", str(reports)]) == 0
    assert len(load_reports(reports)) == 6000
    assert main(["ldp", "fit", "--reports", str(reports), "--out", str(model)]) == 0
    assert main(["predict", "--model", str(model), "--data", str(new), "--out", str(preds)]) == 0
    acc = (pd.read_csv(preds)["prediction"].to_numpy() == np.where(y[:200] == 1, "pos", "other")).mean()
    assert acc > 0.8
    assert main(["ldp", "randomize", "--data", str(data), "--target", "label", "--bounds", "a=-1.5:2.5",
                 "--alpha", "1", "--out", str(tmp_path / "x.npz")]) == 2  # labels neg/pos without --positive
    assert "0 or 1" in capsys.readouterr().err
