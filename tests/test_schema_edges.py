"""Schema edges (issue 26): degenerate cut points, unknown keys, the clipping warning and clip_share=0."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpglass.cli import main
from dpglass.exceptions import DataValidationError, InvalidParameterError, ModelFileError
from dpglass.models import DPPipeline, DPRuleListClassifier, load_model
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.rng import check_random_state
from dpglass.schema import ClippingWarning, Schema, categorical, fit_encoding, load_schema, numeric
from dpglass.schema.encoding import grid_cut_points

# names added by issue 26 are imported in the tests that use them, so that each test fails on its own before it
CLIP_OFF_RELEASE = "encoder: no count of clipped records (clip_share=0)"


def _encoding(schema, frame, eps_q=0.0, seed=0):
    encoding, _, _ = fit_encoding(frame, schema, quantile_epsilon=eps_q, clip_epsilon=0.0,
                                  rng=check_random_state(seed))
    return encoding


def _assert_exact_distinct_interior(name, cuts, bounds, names):
    lo, hi = bounds
    assert all(lo < t < hi for t in cuts), cuts  # strictly inside the bounds: every cut can split
    assert all(a < b for a, b in zip(cuts, cuts[1:])), cuts  # distinct, in order
    assert len(set(names)) == len(names)  # the printout tells them apart
    assert [float(n.removeprefix(f"{name}>")) for n in names] == list(cuts)  # printed exactly


# ---------------------------------------------------------------- item 5: cut points


@pytest.mark.parametrize("bounds, k", [((2007, 2009), 4), ((10000, 10010), 9), ((1e6, 1e6 + 1), 64), ((0, 1), 64),
                                       ((17, 90), 4)])
def test_grid_cut_points_are_exact_distinct_values_strictly_inside_the_bounds(bounds, k):
    """Rounded to 4 significant digits, 2007:2009 gave year>2009 (never true) and 10000:10010 with 9 thresholds
    gave two cut points on the bounds."""
    schema = Schema([numeric("x", *bounds, n_thresholds=k)])
    frame = pd.DataFrame({"x": np.linspace(*bounds, 50)})
    encoding = _encoding(schema, frame)
    cuts = encoding.cuts[0]
    assert len(cuts) == k and cuts == grid_cut_points(schema.columns[0])
    _assert_exact_distinct_interior("x", cuts, bounds, encoding.feature_names())
    X = encoding.transform(frame)
    assert all(0 < X[:, j].sum() < len(frame) for j in range(k))  # no indicator is constant over the range


def test_grid_keeps_its_short_cut_points_where_four_digits_tell_them_apart():
    assert grid_cut_points(numeric("age", 17, 90, n_thresholds=4)) == (31.6, 46.2, 60.8, 75.4)
    names = _encoding(Schema([numeric("age", 17, 90)]), pd.DataFrame({"age": [20, 50]})).feature_names()
    assert names == ["age>31.6", "age>46.2", "age>60.8", "age>75.4"]


def test_integer_column_cuts_half_way_between_whole_numbers_and_refuses_a_grid_with_too_many():
    year = Schema.from_dict({"columns": [{"name": "year", "kind": "numeric", "bounds": [2007, 2009],
                                          "integer": True, "n_thresholds": 2}]})
    frame = pd.DataFrame({"year": [2007, 2008, 2009, 2005]})
    encoding = _encoding(year, frame)
    assert encoding.cuts == ((2007.5, 2008.5),) and encoding.feature_names() == ["year>2007.5", "year>2008.5"]
    np.testing.assert_array_equal(encoding.transform(frame), [[0, 0], [1, 0], [1, 1], [0, 0]])
    assert Schema.from_dict(year.to_dict()) == year  # the declaration travels with the schema (and model files)
    with pytest.raises(InvalidParameterError, match=r"Column 'year'.*only 2 distinct cut point.*year>2007\.5, "
                                                    r"year>2008\.5.*n_thresholds to at most 2"):
        numeric("year", 2007, 2009, integer=True, n_thresholds=4)
    with pytest.raises(InvalidParameterError, match="whole-number bounds"):
        numeric("year", 2007, 2009.5, integer=True, n_thresholds=1)
    with pytest.raises(InvalidParameterError, match="2008.0 and 2008.4.*same way"):
        numeric("year", 2007, 2009, integer=True, thresholds=[2008.0, 2008.4])
    # the value is not quoted (issue-26 review, L5: an error may be pasted where the data may not)
    with pytest.raises(DataValidationError, match=r"Column 'year' is declared integer.*no value is quoted"):
        _encoding(year, pd.DataFrame({"year": [2007, 2008.5]}))


def test_a_grid_that_floating_point_cannot_spread_is_refused_with_the_column_and_what_to_do():
    with pytest.raises(InvalidParameterError, match=r"Column 'big'.*n_thresholds=9.*only \d distinct.*fewer"):
        numeric("big", 1e16, 1e16 + 4, n_thresholds=9)
    with pytest.raises(InvalidParameterError, match="lists cut point|same number"):
        numeric("x", 0, 10, thresholds=[3, 5, 3])


@pytest.mark.parametrize("bounds, integer", [((10000, 10010), False), ((1e6, 1e6 + 1), False),
                                             ((2007, 2009), True), ((2007, 2009), False)])
def test_dp_quantile_cut_points_are_distinct_interior_and_printed_exactly(bounds, integer):
    """The DP route rounded to 6 significant digits: with bounds 1e6:1e6+1 every quantile fell on a bound and
    the column got no cut point at all."""
    k = 2 if integer else 9
    schema = Schema([numeric("x", *bounds, thresholds="dp-quantiles", n_thresholds=k, integer=integer),
                     categorical("c", ["a", "b"])], target="y")
    rng = np.random.default_rng(0)
    values = rng.integers(bounds[0], bounds[1] + 1, 600) if integer else rng.uniform(*bounds, 600)
    frame = pd.DataFrame({"x": values, "c": rng.choice(["a", "b"], 600)})
    encoding = _encoding(schema, frame, eps_q=50.0)
    cuts = encoding.cuts[0]
    from dpglass.schema.columns import quantile_cut_points

    assert len(cuts) >= (2 if integer else 5)  # high epsilon: most quantiles are kept apart, none is lost
    assert set(cuts) <= set(quantile_cut_points(schema.columns[0]))
    _assert_exact_distinct_interior("x", cuts, bounds, encoding.feature_names()[:len(cuts)])
    if integer:
        assert set(cuts) <= {2007.5, 2008.5}
    y = (frame["x"] > np.median(frame["x"])).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = DPPipeline(schema=schema, model=DPRuleListClassifier(max_length=2), epsilon=4.0,
                            random_state=0).fit(frame, y)
    again = DPPipeline.from_dict(json.loads(json.dumps(fitted.to_dict())))  # the file verifier accepts its cuts
    assert again.encoding_ == fitted.encoding_ and str(again) == str(fitted)


# ---------------------------------------------------------------- item 6: unknown keys


def _write(tmp_path, text, suffix):
    path = tmp_path / f"schema{suffix}"
    path.write_text(text)
    return path


JSON_TOP = '{"taget": "y", "columns": [{"name": "a", "kind": "numeric", "bounds": [0, 1]}]}'
JSON_COL = '{"target": "y", "columns": [{"name": "a", "kind": "numeric", "bounds": [0, 1], "n_threshold": 8}]}'
TOML_TOP = 'taget = "y"\n[[columns]]\nname = "a"\nkind = "numeric"\nbounds = [0, 1]\n'
TOML_COL = 'target = "y"\n[[columns]]\nname = "a"\nkind = "numeric"\nbounds = [0, 1]\nn_threshold = 8\n'


@pytest.mark.parametrize("text, suffix, match", [
    (JSON_TOP, ".json", r"key 'taget'.*did you mean 'target'"),
    (JSON_COL, ".json", r"Column 'a'.*key 'n_threshold'.*did you mean 'n_thresholds'"),
    (TOML_TOP, ".toml", r"key 'taget'.*did you mean 'target'"),
    (TOML_COL, ".toml", r"Column 'a'.*key 'n_threshold'.*did you mean 'n_thresholds'"),
], ids=["json-top", "json-column", "toml-top", "toml-column"])
def test_a_misspelt_key_is_refused_with_the_closest_valid_key(text, suffix, match, tmp_path):
    """"n_threshold": 8 silently used the default 4."""
    with pytest.raises(InvalidParameterError, match=match):
        load_schema(_write(tmp_path, text, suffix))


def test_unknown_keys_through_the_cli_and_keys_of_another_kind(tmp_path, capsys):
    path = _write(tmp_path, JSON_COL, ".json")
    pd.DataFrame({"a": [0.1, 0.9], "y": [0, 1]}).to_csv(tmp_path / "d.csv", index=False)
    assert main(["fit", "--data", str(tmp_path / "d.csv"), "--target", "y", "--schema", str(path)]) == 2
    assert "did you mean 'n_thresholds'" in capsys.readouterr().err
    with pytest.raises(InvalidParameterError, match="'categories', which only categorical columns read"):
        Schema.from_dict({"columns": [{"name": "a", "kind": "numeric", "bounds": [0, 1], "categories": ["x"]}]})
    with pytest.raises(InvalidParameterError, match="did you mean 'numeric'"):
        Schema.from_dict({"columns": [{"name": "a", "kind": "numerc", "bounds": [0, 1]}]})
    with pytest.raises(InvalidParameterError, match="label set is not part of the schema.*--classes"):
        Schema.from_dict({"target": "y", "classes": [0, 1], "columns": [{"name": "a", "kind": "binary"}]})
    with pytest.raises(InvalidParameterError, match="lists 2 cut points.*n_thresholds"):
        Schema.from_dict({"columns": [{"name": "a", "kind": "numeric", "bounds": [0, 1], "thresholds": [0.2, 0.5],
                                       "n_thresholds": 4}]})
    # a template's numeric column turned to "ignore" keeps its other keys: nothing of it is read
    Schema.from_dict({"columns": [{"name": "id", "kind": "ignore", "bounds": None, "thresholds": "grid",
                                   "n_thresholds": 4, "missing": "error"}, {"name": "a", "kind": "binary"}]})


# ---------------------------------------------------------------- item 10: the clipping warning, clip_share=0


@pytest.mark.parametrize("epsilon", [0.01, 0.02, 0.1, 1.0, 5.0])
def test_clip_warning_threshold_bounds_the_false_alarm_by_the_noise_law(epsilon):
    from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
    from dpglass.privacy.samplers import GRID, discrete_laplace_decay
    from dpglass.schema.encoding import CLIP_FALSE_ALARM, clip_warning_threshold

    t = clip_warning_threshold(epsilon)
    q = math.exp(-discrete_laplace_decay(DiscreteLaplaceMechanism(epsilon).scale) / GRID)  # the sampler's law
    assert q ** t / (1 + q) <= CLIP_FALSE_ALARM  # P(Z >= t) with nothing clipped
    assert t == 1 or q ** (t - 1) / (1 + q) > CLIP_FALSE_ALARM  # the smallest such t


@pytest.mark.parametrize("epsilon", [0.01, 1.0])
def test_no_clipping_warning_when_nothing_is_out_of_bounds(epsilon):
    """It fired on 16 of 40 penguin fits with nothing clipped: at epsilon=0.01, 'about 484 records, give or take
    7,071' for a 344-row file."""
    schema = Schema([numeric("a", 0, 1)])
    frame = pd.DataFrame({"a": np.linspace(0, 1, 344)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for seed in range(200):
            fit_encoding(frame, schema, quantile_epsilon=0.0, clip_epsilon=epsilon, rng=check_random_state(seed))
    assert [w for w in caught if issubclass(w.category, ClippingWarning)] == []


def test_clipping_warning_fires_when_many_records_are_clipped_and_says_its_threshold():
    schema = Schema([numeric("a", 0, 1)])
    frame = pd.DataFrame({"a": np.r_[np.full(300, 5.0), np.linspace(0, 1, 44)]})
    for seed in range(50):
        with pytest.warns(ClippingWarning, match=r"at least 7, which its noise alone reaches with probability "
                                                 r"at most 0\.001.*clip_share=0"):
            fit_encoding(frame, schema, quantile_epsilon=0.0, clip_epsilon=1.0, rng=check_random_state(seed))


def _clipped_table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.uniform(-5, 5, n), "c": rng.choice(["u", "v"], n)})  # half outside [0, 1]
    return frame, (frame["a"] > 0).astype(int)


SCHEMA = Schema([numeric("a", 0, 1), categorical("c", ["u", "v"])], target="y")


@pytest.mark.parametrize("share", [0, 0.0])
def test_clip_share_zero_counts_nothing_warns_nothing_and_gives_the_model_the_whole_budget(share, tmp_path):
    X, y = _clipped_table()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippingWarning)  # half the values are out of bounds: still no warning
        fitted = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(), epsilon=1.0, clip_share=share,
                            random_state=0).fit(X, y)
    assert fitted.clipped_records_noisy_ is None
    ledger = fitted.privacy_ledger_
    encoder = [e for e in ledger if e.release.startswith("encoder: ")]
    assert [(e.release, e.mechanism, e.epsilon) for e in encoder] == [(CLIP_OFF_RELEASE, "none", 0.0)]
    assert "no count of clipped records (clip_share=0)" in str(ledger)
    assert fitted.model_.privacy_ledger_.epsilon == 1.0  # the whole budget goes to the model
    fitted.save(tmp_path / "m.json")
    assert str(load_model(tmp_path / "m.json")) == str(fitted)  # the verifier accepts it
    data = json.loads((tmp_path / "m.json").read_text())
    data["privacy_ledger"]["entries"][0]["epsilon"] = 0.5  # an entry saying nothing was released may not spend
    data["privacy_ledger"]["total"]["epsilon"] = PrivacyLedger.from_dict(data["privacy_ledger"]).total()[0]
    data["privacy_ledger"]["budget"]["epsilon"] = data["params"]["epsilon"] = 1.5
    # refused: the model's budget is no longer what the shares leave, and the plan's entry costs nothing
    with pytest.raises(ModelFileError, match=r"inner_model\.privacy_ledger\.budget\.epsilon|entries\[0\]\.epsilon"):
        DPPipeline.from_dict(data)


def test_a_pipeline_file_of_a_clipped_count_may_not_also_claim_it_was_off():
    X, y = _clipped_table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = DPPipeline(schema=SCHEMA, model=DPRuleListClassifier(), random_state=0).fit(X, y)
    data = json.loads(json.dumps(fitted.to_dict()))
    data["privacy_ledger"]["entries"].insert(0, dict(data["privacy_ledger"]["entries"][0], release=CLIP_OFF_RELEASE,
                                                     mechanism="none", epsilon=0.0, sensitivity=None, scale=None))
    with pytest.raises(ModelFileError, match=r"privacy_ledger\.entries"):  # not the encoder's plan
        DPPipeline.from_dict(data)


def test_quantile_share_zero_with_dp_quantiles_is_refused_in_the_users_terms():
    schema = Schema([numeric("a", 0, 1, thresholds="dp-quantiles"), categorical("c", ["u", "v"])], target="y")
    X, y = _clipped_table()
    with pytest.raises(InvalidParameterError, match="quantile_share=0.*column 'a'"):
        DPPipeline(schema=schema, model=DPRuleListClassifier(), quantile_share=0).fit(X, y)


def test_cli_takes_clip_share_zero(tmp_path, capsys):
    X, y = _clipped_table()
    X.assign(y=y).to_csv(tmp_path / "f.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA.to_dict()))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippingWarning)
        code = main(["fit", "--data", str(tmp_path / "f.csv"), "--target", "y", "--schema", str(tmp_path / "s.json"),
                     "--param", "clip_share=0", "--seed", "0", "--out", str(tmp_path / "m.json")])
    out = capsys.readouterr().out
    assert code == 0 and CLIP_OFF_RELEASE in out
    assert load_model(tmp_path / "m.json").clip_share == 0
