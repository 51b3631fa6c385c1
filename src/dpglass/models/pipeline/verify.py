"""Verification of a saved :class:`~dpglass.models.DPPipeline`: encoding, inner model, one ledger.

The inner model is verified as a file of its own (``verify_model_dict``); the
pipeline's ledger must be the encoder's releases followed by exactly the
inner model's releases (prefixed ``model: ``), within the pipeline's budget,
with the encoder spending what the shares and the schema imply.
"""

from __future__ import annotations

from dpglass.exceptions import ModelFileError
from dpglass.models._file_checks import _close as close
from dpglass.models._file_checks import _fail as fail
from dpglass.models._file_checks import _rule_version
from dpglass.models._verify import _check_ledger_shape, _check_ledger_totals, _check_top_level, verify_model_dict
from dpglass.models.pipeline.auto import AUTO_SHARE, RULES, auto_plan, choose_model
from dpglass.models.pipeline.route import column_digests, load_encoding, model_route
from dpglass.privacy.plan import check_against_plan
from dpglass.privacy.ledger import PrivacyLedger

__all__ = ["verify_pipeline_dict"]

_PARAMS = {"epsilon", "delta", "quantile_share", "clip_share", "random_state"}
_KEYS = {"model", "params", "classes", "n_features_in", "feature_names", "encoding", "clipped_records_noisy",
         "inner_model", "privacy_ledger"}
_AUTO_KEYS = {"records_noisy", "auto_rule"}  # model="auto" files only (auto_rule: from version 2)
_ROUTE_KEYS = {"column_digests"}  # numbers/codes route files only


def verify_pipeline_dict(data: dict, cls) -> None:
    """Refuse an inconsistent pipeline file."""
    from dpglass.registry import registered_class

    _check_top_level(data, cls)
    for key in ("params", "encoding", "inner_model", "privacy_ledger"):
        if not isinstance(data.get(key), dict):
            fail(key, "is missing or not an object", "what DPPipeline.to_dict writes")
    params = data["params"]
    auto = params.get("model") == "auto"
    if set(params) != _PARAMS | ({"model"} if auto else set()):
        fail("params", f"has keys {sorted(params)!r}", f"exactly {sorted(_PARAMS)!r} (and model: 'auto')")
    if params["random_state"] is not None:
        fail("params.random_state", f"is {params['random_state']!r}", "null (a private model's file never holds "
             "its seed)")
    extra = sorted(set(data) - _KEYS - (_AUTO_KEYS if auto else set()) - _ROUTE_KEYS)
    if extra:
        fail(extra[0], "is not a field of a DPPipeline file", f"only {sorted(_KEYS)!r}")
    version = _rule_version(data, "auto_rule", tuple(RULES)) if auto else None
    try:
        encoding = load_encoding(data["encoding"])
    except Exception as exc:  # noqa: BLE001 - any malformed encoding is a bad file
        raise ModelFileError(f"Model file field 'encoding' is not a valid encoding: {exc}.") from None
    if [c.name for c in encoding.schema.features] != data["feature_names"]:
        fail("feature_names", "differ from the schema's feature columns", "the schema's feature column names")
    inner = data["inner_model"]
    inner_cls = registered_class(inner.get("model"))
    if inner_cls is None:
        fail("inner_model.model", f"is {inner.get('model')!r}", "a registered dpglass model")
    _check_route(encoding, inner, inner_cls)  # first: a route flag changed is named, not what it implies
    verify_model_dict(inner, inner_cls)
    if data["classes"] != inner["classes"]:  # predict_proba's columns are the model's, in its order
        fail("classes", f"is {data['classes']!r}", f"the inner model's classes {inner['classes']!r}, in its order")
    if inner["feature_names"] != encoding.feature_names():
        fail("inner_model.feature_names", "differ from the encoding's columns", "the encoded feature names")
    _check_digests(data, encoding, auto)
    raw = data["privacy_ledger"]
    _check_ledger_shape(raw)
    ledger = PrivacyLedger.from_dict(raw)
    _check_ledger_totals(raw, ledger)
    if not close(ledger.epsilon, params["epsilon"]):
        fail("privacy_ledger.budget.epsilon", f"is {ledger.epsilon!r}", f"params.epsilon = {params['epsilon']!r}")
    _check_composition(raw, inner, params)
    _check_entries(raw["entries"], inner["privacy_ledger"]["entries"])
    n_auto = _check_auto(data, encoding, params, version) if auto else 0
    _check_encoder_releases(data, encoding, params, n_auto)


def _check_digests(data: dict, encoding, auto: bool) -> None:
    """On the numbers and codes routes and in ``model="auto"`` files, each schema column is the one the model was
    fitted with (:func:`~dpglass.models.pipeline.route.column_digests`): a category renamed or moved, or a
    missing rule changed, would silently change what the model reads."""
    want, got = column_digests(encoding, auto), data.get("column_digests")
    if want is None:
        if got is not None:
            fail("column_digests", "is present", "absent: the 0/1 route names its categories in the model's features")
        return
    if not isinstance(got, dict) or list(got) != list(want):
        fail("column_digests", f"is {got!r}" if not isinstance(got, dict) else f"names {list(got)!r}",
             f"one digest per schema feature column, in its order: {list(want)!r}")
    for i, col in enumerate(encoding.schema.columns):
        if col.name in want and got[col.name] != want[col.name]:
            fail(f"encoding.schema.columns[{i}]", f"({col.name!r}) is {col.to_dict()!r}",
                 f"the column the model was fitted with (column_digests[{col.name!r}]); do not edit a schema "
                 "in a model file")


def _check_composition(raw: dict, inner: dict, params: dict) -> None:
    """The pipeline composes with its model's accountant at its model's delta (or basically, as files written
    before 2026-11-23 did), and the model ran with the pipeline's delta parameter when it gives one (None: the
    model's own)."""
    own, theirs = raw.get("accountant", "basic"), inner["privacy_ledger"].get("accountant", "basic")
    if own not in (theirs, "basic"):
        fail("privacy_ledger.accountant", f"is {own!r}", f"the inner model's {theirs!r} (or 'basic')")
    if inner["privacy_ledger"].get("replayable") and raw.get("replayable") is False:  # one generator for both
        fail("privacy_ledger.replayable", "is false", "true, as the inner model's (seeded noise)")
    delta, inner_delta = raw["budget"].get("delta"), inner["privacy_ledger"]["budget"].get("delta")
    if delta != inner_delta:
        fail("privacy_ledger.budget.delta", f"is {delta!r}", f"the inner model's budget delta {inner_delta!r}")
    inner_params = inner.get("params", {})
    if params["delta"] is not None and "delta" in inner_params and inner_params["delta"] != params["delta"]:
        fail("params.delta", f"is {params['delta']!r}", f"the inner model's delta {inner['params']['delta']!r}")


def _check_route(encoding, inner: dict, inner_cls) -> None:
    """The encoding's route is the one the inner model's class takes (numbers, codes, or 0/1; a file of the 0/1
    route, as written before the route existed, loads for any model), and the model read the encoded columns
    with the schema's bounds and category counts (:func:`~dpglass.models.pipeline.estimator.model_inputs`)."""
    route = model_route(inner_cls)
    for flag, what in (("numbers", "numeric columns as numbers"), ("codes", "categorical columns as codes"),
                       ("missing_bins", "missing numbers in a bin of their own")):
        if getattr(encoding, flag) and not route[flag]:
            fail(f"encoding.{flag}", "is true", f"false: {inner_cls.__name__} does not take {what}")
    inner_params = inner.get("params", {})
    if encoding.numbers:
        want = [None if b is None else list(b) for b in encoding.column_bounds()]
        got = inner_params.get("bounds")
        got = None if got is None else [None if b is None else [float(v) for v in b] for b in got]
        if got != want:
            fail("inner_model.params.bounds", f"is {inner_params.get('bounds')!r}",
                 f"the schema's bounds of the numeric columns, None elsewhere: {want!r}")
    if encoding.missing_bins and not encoding.numbers:
        fail("encoding.missing_bins", "is true", "false: missing numbers stay NaN only on the numbers route")
    if encoding.numbers and route["missing_bins"] and not encoding.missing_bins:  # what DPPipeline.fit sets
        fail("encoding.missing_bins", "is missing or false",
             f"true: {inner_cls.__name__} takes numeric columns with missing numbers in a bin of their own")
    if encoding.numbers and route["missing_bins"] and inner_params.get("missing") != encoding.column_missing():
        fail("inner_model.params.missing", f"is {inner_params.get('missing')!r}",
             f"True for each numeric column declaring missing='none', False elsewhere: {encoding.column_missing()!r}")
    if encoding.codes and inner_params.get("categories") != encoding.column_categories():
        fail("inner_model.params.categories", f"is {inner_params.get('categories')!r}",
             f"the schema's number of codes of each categorical column, None elsewhere: "
             f"{encoding.column_categories()!r}")
    groups = inner_params.get("feature_groups")
    if groups is not None and list(groups) != encoding.source_columns():  # DPPipeline.fit sets them so
        fail("inner_model.params.feature_groups", f"is {groups!r}",
             f"each encoded column's raw column, as the schema gives them: {encoding.source_columns()!r}")


def _check_entries(entries, inner_entries) -> None:
    n_enc = len(entries) - len(inner_entries)
    if n_enc < 0:
        fail("privacy_ledger.entries", "are fewer than the inner model's", "the encoder's then the model's")
    for i, (outer, own) in enumerate(zip(entries[n_enc:], inner_entries)):
        if {**outer, "release": outer["release"].removeprefix("model: ")} != own or not outer["release"].startswith("model: "):
            fail(f"privacy_ledger.entries[{n_enc + i}]", "differs from the inner model's release",
                 "the inner model's entry, prefixed 'model: '")


def _check_auto(data: dict, encoding, params: dict, version: int) -> int:
    """A ``model="auto"`` file: its first entry is the selector's noisy count (replayed from its plan, the count an
    integer in ``records_noisy``), and the inner model is the one the rule version the file names (``auto_rule``;
    absent: 1) chooses from that count and the public parameters.  Returns the number of the selector's entries
    (1)."""
    from dpglass.registry import get_spec

    if "records_noisy" not in data:
        fail("records_noisy", "is missing", "the released noisy count of a model='auto' pipeline")
    eps = float(params["epsilon"]) * AUTO_SHARE
    check_against_plan(data["privacy_ledger"]["entries"][:1], auto_plan(eps), data, fail)
    choice = choose_model(encoding.schema, float(params["epsilon"]), params["delta"], data["records_noisy"], version)
    if data["inner_model"]["model"] != get_spec(choice).cls.__name__:
        fail("inner_model.model", f"is {data['inner_model']['model']!r}",
             f"{get_spec(choice).cls.__name__!r}, what model='auto' (rule version {version}) chooses from "
             f"records_noisy = {data['records_noisy']!r} at epsilon {params['epsilon']!r}")
    return 1


def _check_encoder_releases(data: dict, encoding, params: dict, n_auto: int = 0) -> None:
    """What the encoder released is what its schema and shares make it release (helper-25's review).

    The model got the budget the shares leave; the encoder's entries are its
    release plan (:func:`~dpglass.schema.encoding.encoder_plan`) replayed
    from the schema and shares, entry for entry (names, epsilons, noise,
    notes); the DP quantile cut points lie on the quantile mechanism's public
    grid; grid and user-given cut points are the schema's; the noisy clipped
    count is in the file exactly when its entry is in the ledger.  (A file
    that dropped an entry but kept what it released would claim less than it
    spent.)
    """
    from dpglass.schema.encoding import encoder_epsilons
    from dpglass.schema.encoding import encoder_plan, grid_cut_points, quantile_cut_points

    feats = encoding.schema.features
    eps = float(params["epsilon"]) * (1 - AUTO_SHARE if n_auto else 1)  # what model="auto"'s count leaves
    eps_q, eps_clip = encoder_epsilons(encoding.schema, eps, params["quantile_share"], params["clip_share"],
                                       encoding.numbers)
    inner_eps = data["inner_model"]["privacy_ledger"]["budget"]["epsilon"]
    if not close(inner_eps, eps - eps_q - eps_clip):
        fail("inner_model.privacy_ledger.budget.epsilon", f"is {inner_eps!r}",
             f"{eps - eps_q - eps_clip!r}, what the encoder's shares leave of params.epsilon")
    n_enc = len(data["privacy_ledger"]["entries"]) - len(data["inner_model"]["privacy_ledger"]["entries"])
    # the encoder's releases are its plan, entry for entry, its values in their domains (the clipped count an integer)
    check_against_plan(data["privacy_ledger"]["entries"][n_auto:max(n_enc, n_auto)],
                       encoder_plan(encoding.schema, eps_q, eps_clip, encoding.numbers), data, fail)
    noisy = data.get("clipped_records_noisy")
    if (noisy is not None) != (eps_clip > 0) or (noisy is not None and (isinstance(noisy, bool)
                                                                        or not isinstance(noisy, int))):
        fail("clipped_records_noisy", f"is {noisy!r}",
             "the released integer count when the ledger has its entry, else null")
    for col, cuts in zip(feats, encoding.cuts):
        field = f"encoding.cuts[{col.name!r}]"
        if col.kind != "numeric" or encoding.numbers:
            if cuts:
                fail(field, f"is {list(cuts)!r}", "empty (not a numeric column, or numbers handed to the model)")
        elif col.thresholds == "grid":
            if tuple(cuts) != grid_cut_points(col):
                fail(field, f"is {list(cuts)!r}", f"the public grid {list(grid_cut_points(col))!r}")
        elif col.thresholds == "dp-quantiles":
            points = set(quantile_cut_points(col))  # strictly inside the bounds
            if len(cuts) > col.n_thresholds or any(c not in points for c in cuts):
                fail(field, f"is {list(cuts)!r}", f"at most {col.n_thresholds} points of the DP quantile grid "
                     "strictly inside the bounds")
        elif tuple(cuts) != tuple(sorted(col.thresholds)):
            fail(field, f"is {list(cuts)!r}", f"the schema's cut points {sorted(col.thresholds)!r}")
