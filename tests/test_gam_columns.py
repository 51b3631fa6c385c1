"""dp-gam on raw columns (issue 28): numeric columns with public bounds (equal-width or DP-quantile bins),
categorical codes, missing values in their own bin; the shared binning (dp-gbdt's), a visit's sensitivity by brute
force with more than two bins, the file (round trip, edges and sums tampered refused naming the field), explain()
summing to the decision function, Dask = in memory, zero records, and errors in the user's terms."""

import copy
import itertools
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from dpglass.exceptions import (
    DataValidationError,
    InvalidParameterError,
    ModelFileError,
)
from dpglass.models import DPGAMClassifier
from dpglass.models._binning import apply_bins, category_edges, uniform_edges
from dpglass.models._verify import verify_model_dict
from dpglass.models.gam.first import bin_class_counts, table_scale
from dpglass.models.gam.fit import bin_sums, record_terms
from dpglass.models.gam.plan import (
    QUANTUM,
    gam_plan,
    grid_units,
    release_plan,
    sum_grid,
    term_bounds,
    term_caps,
)
from dpglass.models.gbdt import trees as gbdt_trees

BOUNDS = [(0, 10), None, None, (0, 10)]
CATEGORIES = [None, 4, None, None]
MISSING = [False, False, False, True]


def raw(n=3000, seed=0):
    """A numeric column (x0 > 5 says class 1), a 4-code categorical (code 2 says class 2), a 0/1 column, and a
    numeric column with 10% missing values."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n) * 10, rng.integers(0, 4, n), rng.random(n) < 0.5, rng.random(n) * 10])
    X[rng.random(n) < 0.1, 3] = np.nan
    y = ((X[:, 0] > 5).astype(int) + 2 * (X[:, 1] == 2)).clip(0, 2)
    return X.astype(float), y


def model(**kw):
    kw = {"bounds": BOUNDS, "categories": CATEGORIES, "missing": MISSING, "classes": [0, 1, 2], "random_state": 0,
          "first_cycle": "gradients", "n_cycles": 2, "max_bins": 16, "count_share": 0.25, **kw}  # the fixed sizes
    return DPGAMClassifier(**kw)


# --------------------------------------------------------------------------- one binning
def test_dp_gbdt_and_dp_gam_share_one_binning():
    assert gbdt_trees.apply_bins is apply_bins and gbdt_trees.uniform_edges is uniform_edges
    from dpglass.models import _binning
    from dpglass.models.gbdt import releases
    assert releases.quantile_step is _binning.quantile_step


def test_bins_of_each_column_kind():
    X = np.array([[0.0, 3, 1, np.nan], [10.0, 0, 0, 2.5], [-4.0, 2, 1, 99.0]])
    edges = [uniform_edges(0, 10, 4), category_edges(4), np.array([0.5]), uniform_edges(0, 10, 4)]
    B = apply_bins(X, BOUNDS, edges, "m", CATEGORIES, MISSING)
    assert B.tolist() == [[0, 3, 1, 4], [3, 0, 0, 0], [0, 2, 1, 3]]  # NaN: the missing bin, after the 4 others


# --------------------------------------------------------------------------- privacy map with more bins
@pytest.mark.parametrize("K", [2, 3])
def test_a_visit_with_more_bins_moves_by_at_most_its_sensitivity(K):
    """Brute force: a 3-bin feature (domain: every (bin, y)), every dataset of up to 2 records and each with one
    more record, at random model states: the rounded sums move by at most the plan's grid units (the same as
    for 0/1 features: a record is in one bin), and the exact sums reach the real bound."""
    nb = 3
    codes = np.repeat(np.arange(nb), K)
    ys = np.tile(np.arange(K), nb)
    n = codes.size
    eye = np.eye(n, dtype=np.int64)
    base = np.array([np.zeros(n, dtype=np.int64), *eye, *(eye[i] + eye[j] for i in range(n) for j in range(i, n))])
    grids = [sum_grid(cap, K - 1) for cap in term_caps(K)]
    rng = np.random.default_rng(K)
    reached = [0.0, 0.0]
    states = [rng.normal(0, 3, (nb, K - 1)) for _ in range(20)] + [np.tile([40.0] + [-40.0] * (K - 2), (nb, 1)),
                                                                  np.zeros((nb, K - 1))]
    for shape in states:
        F = shape[codes]
        for which, (grid, T) in enumerate(zip(grids, record_terms(F, ys, K))):
            S = np.stack([bin_sums(codes, c, T, nb) for c in base])
            added = np.zeros((n, nb, K - 1), dtype=np.int64)
            added[np.arange(n), codes] = T
            U, V = grid_units(S, grid), grid_units(S[:, None] + added[None], grid)
            assert np.array_equal(np.stack([bin_sums(codes, base[3] + eye[r], T, nb) for r in range(n)]),
                                  S[3] + added)
            moved = np.sqrt(((V - U[:, None]).astype(float) ** 2).sum(axis=(2, 3)))
            assert moved.max() <= grid.units
            reached[which] = max(reached[which], float(np.sqrt((added.astype(float) ** 2).sum(axis=(1, 2))).max()))
    for which, grid in enumerate(grids):
        assert reached[which] * QUANTUM > 0.99 * math.sqrt(term_bounds(K)[which])  # a smaller bound fails


def test_the_sum_releases_do_not_depend_on_the_bins():
    """A record is in one bin of each visit: the sums' entries (noise, sensitivity) are the 0/1 model's."""
    raw_plan = release_plan(model().get_params(), 4, 3)
    plain = release_plan(DPGAMClassifier(first_cycle="gradients", n_cycles=2, max_bins=16, count_share=0.25).get_params(),
                         4, 3)
    assert [s.entry.curve for s in raw_plan] == [s.entry.curve for s in plain]


# --------------------------------------------------------------------------- fit, ledger, file
@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_a_raw_fit_spends_its_plan_and_its_file_verifies(binning):
    X, y = raw()
    m = model(binning=binning, max_bins=8).fit(X, y)
    plan = gam_plan(m.get_params(), 4, 3)
    assert [e for e in m.privacy_ledger_] == [s.entry for s in plan.steps]
    n_q = 2 if binning == "quantile" else 0
    assert len(plan.steps) == n_q + 1 + 2 * 2 * 4
    assert [s.shape for s in m.shapes_] == [(8, 2), (4, 2), (2, 2), (9, 2)]
    assert m.privacy_ledger_.total()[0] <= 1.0 + 1e-9
    assert m.score(X, y) > 0.6
    back = DPGAMClassifier.from_dict(json.loads(json.dumps(m.to_dict())))
    assert np.array_equal(back.decision_function(X), m.decision_function(X))
    if binning == "quantile":
        assert [s.release for s in plan.steps[:2]] == ["bins: 7 quantiles of column 0", "bins: 7 quantiles of column 3"]


def _tampered(data, edit):
    d = copy.deepcopy(data)
    edit(d)
    return d


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_tampered_raw_files_are_refused_naming_the_field(binning):
    X, y = raw(n=1000)
    data = json.loads(json.dumps(model(binning=binning, max_bins=6).fit(X, y).to_dict()))
    verify_model_dict(data, DPGAMClassifier)
    edits = {
        "edges[0]": lambda d: d["edges"][0].__setitem__(0, d["edges"][0][0] + 0.01),
        "edges[1]": lambda d: d["edges"].__setitem__(1, [0.5, 1.5]),
        "edges": lambda d: d.pop("edges"),
        "visits[2].gradient_sums": lambda d: d["visits"][2]["gradient_sums"].pop(),
        r"categories\[1\]": lambda d: d["params"].__setitem__("categories", [None, 1, None, None]),
    }
    for field, edit in edits.items():
        with pytest.raises(ModelFileError, match=field if field.startswith("categories") else re.escape(field)):
            verify_model_dict(_tampered(data, edit), DPGAMClassifier)


def test_explain_sums_to_the_decision_function_and_reads_the_bins():
    X, y = raw()
    m = model(max_bins=5).fit(X, y)
    table = m.explain()
    assert list(table.columns) == ["group", "feature", "bin", "value", "class", "contribution"]
    assert table.loc[table.feature == "x0", "value"].iloc[0] == "[0, 2]"
    assert table.loc[table.feature == "x3", "value"].iloc[-1] == "missing"
    B = apply_bins(X, m.bounds_, m.edges_, "m", m.categories_, m.missing_)
    scores = m.decision_function(X)
    names = m.feature_names()
    for k, label in enumerate([1, 2], start=1):
        part = table[table["class"] == str(label)]
        lookup = {(f, int(b)): v for f, b, v in part.loc[part.feature != "(intercept)",
                                                         ["feature", "bin", "contribution"]].itertuples(index=False)}
        intercept = float(part.loc[part.feature == "(intercept)", "contribution"].iloc[0])
        total = intercept + np.array([sum(lookup[(names[j], int(r[j]))] for j in range(4)) for r in B])
        np.testing.assert_allclose(scores[:, k], total, rtol=1e-12, atol=1e-12)
    text = m.to_text()
    assert "in [0, 2]" in text and "in (8, 10]" in text
    assert "= 2" in text and "missing" in text


def test_zero_records_fit_with_a_declared_label_set():
    X, y = raw(n=10)
    m = model(binning="quantile").fit(X[:0], y[:0])
    assert len(m.privacy_ledger_) == 2 + 1 + 16
    m2 = model().fit(X[:0], y[:0])
    assert m2.predict(X).shape == (10,)


# --------------------------------------------------------------------------- errors in the user's terms
def test_bad_values_and_parameters_are_refused_clearly():
    X, y = raw(n=200)
    bad = X.copy()
    bad[0, 1] = 7
    with pytest.raises(DataValidationError, match=r"Column 1 of X is declared categorical with 4 codes"):
        model().fit(bad, y)
    nan = X.copy()
    nan[0, 0] = np.nan
    with pytest.raises(DataValidationError, match=r"Column 0 of X has missing values .* missing=\[\.\.\.\]"):
        model().fit(nan, y)
    with pytest.raises(InvalidParameterError, match="both bounds"):
        model(categories=[4, None, None, None]).fit(X, y)
    with pytest.raises(InvalidParameterError, match="categories\\[1\\]"):
        model(categories=[None, 1, None, None]).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'missing' parameter"):
        model(missing=[True]).fit(X, y)
    with pytest.raises(DataValidationError, match="values other than 0 and 1 but no bounds"):
        model(bounds=None).fit(X, y)


# --------------------------------------------------------------------------- Dask
def test_dask_equals_in_memory_on_raw_columns():
    dd = pytest.importorskip("dask.dataframe")
    X, y = raw(n=1500)
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(4)])
    for kw in ({"binning": "uniform"}, {"binning": "quantile"}, {"first_cycle": "counts", "n_cycles": 1}):
        mem = model(max_bins=6, **kw).fit(df, y)
        dsk = model(max_bins=6, **kw).fit(dd.from_pandas(df, npartitions=3),
                                          dd.from_pandas(pd.Series(y), npartitions=3))
        assert json.dumps(mem.to_dict()) == json.dumps(dsk.to_dict())



# --------------------------------------------------------------------------- the count-based first cycle
@pytest.mark.parametrize("d", [1, 2, 3, 5, 13, 64, 117])
def test_the_first_cycle_scale_bounds_the_sensitivity_tightly(d):
    """k >= a sqrt(d) in integers, k - 1 < a sqrt(d) (a smaller integer bound fails), within 1% of the real one."""
    a, k = table_scale(d)
    assert k * k >= a * a * d > (k - 1) ** 2
    assert k / (a * math.sqrt(d)) < 1.01


@pytest.mark.parametrize("K", [2, 3])
def test_the_first_cycle_table_moves_by_its_sensitivity_on_every_neighbouring_pair(K):
    """Brute force (d = 2 features of 3 and 2 bins, every (bins, y) record, every dataset of up to 2 records and
    each with one more record): the exact vector moves by a sqrt(d) <= k in l2, reached."""
    pub = gam_plan(model(bounds=[(0, 1), None], categories=None, missing=None, max_bins=3, classes=list(range(K)),
                         first_cycle="counts").get_params(), 2, K).public
    a, k = table_scale(2)
    rows = [(b0, b1, c) for b0 in range(3) for b1 in range(2) for c in range(K)]

    class T:  # a binned table of the given records (entries: one per record)
        def __init__(self, recs):
            self.labels = np.array([r[2] for r in recs], dtype=np.intp)
            self.counts = np.ones(len(recs), dtype=np.int64)
            self.bins = np.array([r[:2] for r in recs], dtype=np.intp).reshape(-1, 2)

        def column(self, j):
            return self.bins[:, j]

    worst = 0.0
    for size in range(3):
        for recs in itertools.combinations_with_replacement(rows, size):
            base = bin_class_counts(T(list(recs)), pub)
            for extra in rows:
                moved = bin_class_counts(T([*recs, extra]), pub) - base
                worst = max(worst, float(np.sqrt((moved.astype(float) ** 2).sum())))
    assert worst == pytest.approx(a * math.sqrt(2)) and worst <= k


def test_a_count_first_fit_spends_its_plan_and_verifies():
    X, y = raw(n=1500)
    m = model(first_cycle="counts", n_cycles=1, max_bins=6).fit(X, y)
    plan = gam_plan(m.get_params(), 4, 3)
    assert [e for e in m.privacy_ledger_] == [s.entry for s in plan.steps]
    assert plan.steps[1].entry.release == "first cycle: class counts per bin of every feature"
    assert m.privacy_ledger_.total()[0] <= 1.0 + 1e-9
    data = json.loads(json.dumps(m.to_dict()))
    back = DPGAMClassifier.from_dict(data)
    assert np.array_equal(back.decision_function(X), m.decision_function(X))
    for edit in (lambda d: d["first_cycle_counts"].__setitem__(0, d["first_cycle_counts"][0] + 1),
                 lambda d: d["first_cycle_counts"].__setitem__(0, 0.5), lambda d: d.pop("first_cycle_counts")):
        with pytest.raises(ModelFileError, match="first_cycle_counts|shapes"):
            verify_model_dict(_tampered(data, edit), DPGAMClassifier)
    zero = model(first_cycle="counts", n_cycles=0).fit(X, y)
    assert len(zero.privacy_ledger_) == 2 and zero.score(X, y) > 0.5
