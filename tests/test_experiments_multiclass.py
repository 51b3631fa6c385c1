"""`dpglass reproduce multiclass` on a tiny plan, and the pieces it rests on (public cut points, the naive Bayes
floor's calibration and sensitivity)."""

import csv
import itertools
import math

import numpy as np
import pytest

from dpglass_experiments.multiclass import multiclass_models, reproduce
from dpglass_experiments.multiclass.data import WINE_RANGES, load
from dpglass_experiments.multiclass.naive_bayes import DELTA, _table, calibrated_sigma, fit_predict
from dpglass_experiments.multiclass.plan import NB_LABEL, REFERENCES, Plan

TINY = Plan((1.0,), n_splits=1, datasets=("wine", "synthetic"), synthetic_records=600, small=True)


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_reproduce_multiclass_tiny_plan(tmp_path):
    reproduce(tmp_path / "a", plan=TINY, progress=False, base_seed=7, n_jobs=1)
    rows = _rows(tmp_path / "a" / "results.csv")
    models = multiclass_models()
    per_dataset = len(models) + 1 + len(REFERENCES)  # one epsilon: each model once, the floor, the references
    assert len(rows) == 2 * per_dataset
    assert {r["method"] for r in rows} >= {NB_LABEL, "majority class", *(s.name for s in models)}
    assert all(r["error"] == "" for r in rows), [r["error"] for r in rows if r["error"]]
    assert all(float(r["epsilon_spent"]) <= 1.0 * (1 + 1e-9) for r in rows if r["epsilon_spent"] != "nan")
    for name in ("report.md", "summary.csv", "accuracy.png", "timings.json"):
        assert (tmp_path / "a" / name).exists()
    report = (tmp_path / "a" / "report.md").read_text()
    assert "Targets" in report and "diffprivlib" in report and "not a dpglass model" in report
    # a rerun resumes from raw/fits.csv: nothing is refitted, the rows are the same
    reproduce(tmp_path / "a", plan=TINY, progress=False, base_seed=7, n_jobs=1)
    assert _rows(tmp_path / "a" / "results.csv") == rows
    # every fit is seeded by its cell: a fresh run with the same base seed gives the same numbers
    reproduce(tmp_path / "b", plan=TINY, progress=False, base_seed=7, fresh=True, n_jobs=1)
    fresh = _rows(tmp_path / "b" / "results.csv")
    assert [(r["method"], r["accuracy"]) for r in fresh] == [(r["method"], r["accuracy"]) for r in rows]


def test_cut_points_come_from_the_public_ranges_not_the_data():
    a, b = load("synthetic", 4, 500), load("synthetic", 4, 5000)
    assert a.cuts == b.cuts == ((-2.5, 0.0, 2.5),) * 10
    digits = load("digits", 2)
    assert set(digits.cuts) == {(8.5,)} and digits.binary().shape == (1797, 64)  # pixels 0..16: x >= 9


def test_wine_ranges_are_the_documented_ones():
    """The ranges are those of the dataset's documentation (scikit-learn's copy of UCI's), typed in, not read."""
    from sklearn.datasets import load_wine

    table = load_wine().DESCR.split(":Summary Statistics:")[1].split("=====\n")[2].strip().splitlines()
    documented = [[float(v) for v in line.rsplit(":", 1)[1].split()[:2]] for line in table if ":" in line]
    assert documented == [[lo, hi] for _, lo, hi in WINE_RANGES]


def test_naive_bayes_table_sensitivity_on_every_neighbour_of_a_small_domain():
    """Adding or removing one record moves exactly d + 1 cells by one: l2 sensitivity sqrt(d + 1), and no less."""
    n_bins, K, d = 2, 3, 2
    records = [(k, b1, b2) for k in range(K) for b1 in range(n_bins) for b2 in range(n_bins)]
    worst = 0.0
    for data in itertools.combinations_with_replacement(records, 3):
        arr = np.array(data)
        full = _table(arr[:, 1:], arr[:, 0], n_bins, K)
        for i in range(len(arr)):
            rest = np.delete(arr, i, axis=0)
            diff = full - _table(rest[:, 1:], rest[:, 0], n_bins, K)
            assert np.abs(diff).max() == 1 and np.count_nonzero(diff) == d + 1
            worst = max(worst, float(np.linalg.norm(diff)))
    assert worst == pytest.approx(math.sqrt(d + 1))


@pytest.mark.parametrize("epsilon,d", [(0.1, 13), (1.0, 64), (4.0, 10)])
def test_naive_bayes_noise_is_calibrated_on_both_sides_of_the_limit(epsilon, d):
    from dpglass.privacy.mechanisms.gaussian import zcdp_epsilon

    sigma = calibrated_sigma(epsilon, d)
    assert zcdp_epsilon(sigma, math.sqrt(d + 1), DELTA) <= epsilon  # enough noise
    assert zcdp_epsilon(sigma * (1 - 1e-3), math.sqrt(d + 1), DELTA) > epsilon  # and not much more


def test_naive_bayes_floor_learns_wine():
    data = load("wine", 4)
    B, y = data.bins(), data.y
    pred = fit_predict(B, y, B, 4, 3, None, None)
    assert np.mean(pred == y) > 0.9
    noisy = fit_predict(B, y, B, 4, 3, 4.0, np.random.default_rng(0))
    assert np.mean(noisy == y) > 0.6
