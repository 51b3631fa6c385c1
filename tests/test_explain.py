"""``model.explain()`` and ``model.plot()`` for every registered family and DPPipeline (issue 29): the readout
is exact (an additive model's intercept plus contributions is its score; coefficients are its decision function;
a partial dependence is the brute-force mean over the domain), it is a function of the released model alone (the
loaded file gives the same frame), and matplotlib stays optional."""

import itertools
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.models import DPPipeline, load_model
from dpglass.models.readout import explain_model
from dpglass.registry import list_estimators

SPECS = list_estimators()


def _data(K=2, n=400, d=5, seed=1):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(n) < 0.2)).astype(int)
    if K == 3:
        y = np.where(X[:, 1] == 1, 2, y)
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(d)]), y


def fit_spec(spec, K=2, seed=0):
    X, y = _data(K)
    params = dict(spec.test_params)
    if "random_state" in spec.cls().get_params():
        params["random_state"] = seed
    if spec.private:
        params["classes"] = list(range(K))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return spec.make(**params).fit(X, y), X


def _scores(model, X):
    S = np.asarray(model.decision_function(X), dtype=float)
    return S[:, None] if S.ndim == 1 else S


def _column(model, S, c):
    """The score column of class ``c``: the only one with two classes, else its position in ``classes_``."""
    return S[:, 0] if S.shape[1] == 1 else S[:, [str(k) for k in model.classes_].index(str(c))]


def _all_points(d):
    return np.array(list(itertools.product([0, 1], repeat=d)), dtype=np.uint8)


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_family_explains_itself_exactly(spec, K, tmp_path):
    model, X = fit_spec(spec, K)
    frame = explain_model(model)
    assert isinstance(frame, pd.DataFrame) and len(frame) > 0
    kind = frame.attrs["kind"]
    if spec.name != "dp-gam":  # dp-gam keeps its own explain(); every other family's is the readout's
        pd.testing.assert_frame_equal(model.explain(), frame)
    P = pd.DataFrame(_all_points(X.shape[1]), columns=X.columns)
    if kind == "rules":
        assert len(frame) == len(model.rules_) + 1
        assert list(frame["prediction"]) == [model.classes_[r.prediction] for r in model.rules_ + [model.default_rule_]]
        assert frame["condition"].iloc[-1].startswith("otherwise")
    elif kind == "coefficients":
        S = _scores(model, P)
        for c in dict.fromkeys(frame["class"]):
            part = frame[frame["class"] == c].set_index("feature")["coefficient"]
            np.testing.assert_allclose(P.to_numpy() @ part[list(X.columns)].to_numpy() + part["(intercept)"],
                                       _column(model, S, c), atol=1e-12)
    elif kind == "shapes":  # intercept + each column's contribution at its value = the score, on every point
        S = _scores(model, P)
        for c in dict.fromkeys(frame["class"]):
            part = frame[frame["class"] == c]
            total = part[part["feature"] == "(intercept)"]["contribution"].sum() + sum(
                part[part["feature"] == f].set_index("bin")["contribution"].loc[P[f].to_numpy()].to_numpy()
                for f in X.columns)
            np.testing.assert_allclose(total, _column(model, S, c), atol=1e-9)
    else:  # trees: each partial dependence is the mean over the whole (small) domain, by brute force
        assert kind == "trees"
        S = _scores(model, P)
        for f in X.columns:
            for v in (0, 1):
                want = S[P[f].to_numpy() == v].mean(axis=0)
                got = frame[(frame["feature"] == f) & (frame["bin"] == v)]["partial_dependence"].to_numpy()
                np.testing.assert_allclose(got, want, atol=1e-12)
        spread = frame.groupby("feature")["partial_dependence"].agg(lambda s: s.max() - s.min())
        assert np.isclose(frame["importance"].max(), spread.max())
    if spec.private:  # a function of the released model alone: the saved file gives the same readout
        model.save(tmp_path / "m.json")
        pd.testing.assert_frame_equal(explain_model(load_model(tmp_path / "m.json")), frame)


def test_depth_two_gbdt_reads_as_trees_and_depth_one_as_shapes():
    spec = next(s for s in SPECS if s.name == "dp-gbdt")
    X, y = _data()
    deep = spec.make(**{**spec.test_params, "max_depth": 2, "random_state": 0, "classes": [0, 1]}).fit(X, y)
    assert explain_model(deep).attrs["kind"] == "trees"
    assert explain_model(fit_spec(spec)[0]).attrs["kind"] == "shapes"


def _raw(n=500, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(17, 91, n),
                          "job": rng.choice(["exec", "sales", "craft"], n),
                          "hours": np.round(rng.uniform(0, 99, n), 1)})
    frame["y"] = np.where((frame.age > 40) & (frame.job == "exec") | (frame.hours > 60), "yes", "no")
    return frame


SCHEMA = {"target": "y", "columns": [
    {"name": "age", "kind": "numeric", "bounds": [17, 90], "thresholds": "grid", "n_thresholds": 3},
    {"name": "job", "kind": "categorical", "categories": ["exec", "sales", "craft"]},
    {"name": "hours", "kind": "numeric", "bounds": [0, 99], "thresholds": "grid", "n_thresholds": 2}]}


@pytest.mark.parametrize("name", ["dp-gam", "dp-logistic-regression", "smooth-boost-trees", "dp-rule-list", "dp-gbdt"])
def test_pipeline_reads_in_the_raw_columns_terms(name):
    spec = next(s for s in SPECS if s.name == name)
    raw = _raw()
    params = {k: v for k, v in spec.test_params.items() if k != "epsilon"}
    model = spec.make(**params, classes=["no", "yes"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = DPPipeline(schema=SCHEMA, model=model, epsilon=2.0, random_state=0).fit(raw.drop(columns="y"), raw["y"])
    frame = pipe.explain()
    kind = frame.attrs["kind"]
    if kind == "rules":
        return
    assert set(frame["group"]) - {"(intercept)"} == {"age", "job", "hours"}
    if getattr(pipe.encoding_, "codes", False):  # categories read as codes are shown by their names
        assert list(frame[(frame["group"] == "job")]["value"])[:3] == ["exec", "sales", "craft"]
        return
    assert list(frame[(frame["group"] == "job")]["value"]) == ["exec", "sales", "craft"]
    assert list(frame[(frame["group"] == "age")]["value"])[0].startswith("<= ")
    if kind == "shapes":  # intercept + the raw columns' contributions = the model's score on the raw records
        inner, enc = pipe.model_, pipe.encoding_
        S = _scores(inner, pd.DataFrame(enc.transform(raw), columns=enc.feature_names()))[:, 0]
        cuts = dict(zip([c.name for c in enc.schema.features], enc.cuts))
        names = list(enc.feature_names())
        for col in ("age", "hours"):  # a column the model reads as a number: its own cut points (DP-GBDT's bins)
            if col in names and getattr(inner, "edges_", None) is not None:
                cuts[col] = list(inner.edges_[names.index(col)])
        total = np.full(len(raw), frame[frame["group"] == "(intercept)"]["contribution"].sum())
        for col in ("age", "hours"):
            seg = np.searchsorted(np.array(cuts[col]), raw[col].to_numpy(), side="left")
            total += frame[frame["group"] == col].set_index("bin")["contribution"].loc[seg].to_numpy()
        job = frame[frame["group"] == "job"].set_index("value")["contribution"]
        total += job.loc[raw["job"]].to_numpy()
        np.testing.assert_allclose(total, S, atol=1e-9)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_plot_returns_a_figure_for_every_family(spec):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    fig = fit_spec(spec)[0].plot()
    assert isinstance(fig, Figure) and fig.axes


def test_plot_without_matplotlib_names_the_extra(monkeypatch):
    model = fit_spec(SPECS[0])[0]
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"dpglass\[plot\]"):
        model.plot()


@pytest.mark.parametrize("name", ["dp-gbdt", "smooth-boost-trees", "dp-rule-list", "dp-logistic-regression"])
def test_plot_of_three_classes_and_of_a_pipeline(name):
    pytest.importorskip("matplotlib")
    spec = next(s for s in SPECS if s.name == name)
    assert fit_spec(spec, K=3)[0].plot().axes
    raw = _raw()
    model = spec.make(**{k: v for k, v in spec.test_params.items() if k != "epsilon"}, classes=["no", "yes"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = DPPipeline(schema=SCHEMA, model=model, epsilon=2.0, random_state=0).fit(raw.drop(columns="y"), raw["y"])
    fig = pipe.plot()
    if pipe.explain().attrs["kind"] in ("shapes", "trees"):
        assert {ax.get_title() for ax in fig.axes} == {"age", "job", "hours"}


def test_a_searched_pipeline_reads_as_its_selected_model():
    """PrivateGridSearch over a DPPipeline: explain() is the selected model's readout in the raw columns' terms."""
    from dpglass.models import DPRuleListClassifier, PrivateGridSearch

    raw = _raw()
    pipe = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(classes=["no", "yes"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = PrivateGridSearch(pipe, {"model__max_length": [1, 2]}, epsilon=2.0, random_state=0)
        search.fit(raw.drop(columns="y"), raw["y"])
    frame = search.explain()
    assert frame.attrs["kind"] == "rules"
    assert list(frame["condition"]) == list(search.best_estimator_.explain()["condition"])
