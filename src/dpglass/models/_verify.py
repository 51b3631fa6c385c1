"""Check a saved model file before it is trusted.

A model file is the JSON written by ``model.save(path)`` / ``to_dict()``.
:func:`verify_model_dict` refuses, with a :class:`~dpglass.exceptions.ModelFileError`
that names the field, a file that

* lacks a key, holds a value of the wrong type, or is internally inconsistent
  (``feature_names`` of the wrong length, a feature index out of range, a
  condition whose name is not that feature's, a tree with a cycle, ...);
* carries parameters the class does not accept or does not allow;
* is a private model whose privacy ledger is missing, emptied, edited or
  inconsistent with the parameters: the ledger's budget must be the model's
  ``epsilon``, its recorded total and guarantee must be what the entries
  compose to, the total must fit the budget, and the entries must be the
  releases the learner makes for those parameters (number, names,
  mechanisms, per-release epsilon and delta, guarantee).

Model-specific checks are one function per model class in
:data:`MODEL_CHECKS` (keyed by class name); the mechanism names each learner
writes are in :data:`KNOWN_MECHANISMS`.  A class without an entry gets the
generic checks only, and a trial restore of its state turns a missing key into
a ``ModelFileError`` instead of a ``KeyError``.

:mod:`dpglass.models._files` reads files for ``load_model`` and ``dpglass inspect`` (it finds a file's class through
the registry); this module imports no estimator, so the estimators' ``from_dict`` can call it.
"""

from __future__ import annotations


import contextvars
import json
import math
import numbers

import numpy as np

from dpglass._validation import MAX_CLASSES
from dpglass.exceptions import InvalidParameterError, ModelFileError
from dpglass.models._file_checks import (
    ADVICE, _Context, _close, _fail,
    _is_num, _need, _need_num, _resolved_delta,
)
from dpglass.models.teachers.verify import check_dpbag, check_saa
from dpglass.models.boosting.verify import _check_boosting
from dpglass.models.gbdt.verify import check_gbdt
from dpglass.models.gam.verify import check_gam
from dpglass.models._held_out import check_held_out
from dpglass.local.verify import check_ldp
from dpglass.models.logistic.verify import _check_logistic
from dpglass.models.rule_list.verify import RULE_LIST_COUNT_NAMES, RULE_LIST_SELECTION_NAMES, _check_rule_list
from dpglass.models.selection.plan import MECHANISM_PREFIX as SELECTION_MECHANISM
from dpglass.models.selection.verify import check_selection
from dpglass.privacy.ledger import GUARANTEES, PrivacyLedger, _within

__all__ = ["KNOWN_MECHANISMS", "MODEL_CHECKS", "verify_model_dict"]


KNOWN_MECHANISMS = {
    "DPRuleListClassifier": (*RULE_LIST_COUNT_NAMES, *(n for v in RULE_LIST_SELECTION_NAMES.values() for n in v)),
    "SmoothBoostClassifier": ("exponential", "laplace", "advanced-composition(", "discrete laplace"),
    "DPLogisticRegression": ("discrete laplace",),  # plus logistic.MECHANISM; the removed objective perturbation is refused
    "DPGradientBoostingClassifier": ("exponential", "discrete laplace (grid)", "discrete gaussian (grid)", "laplace",
                                     "exponential-quantile"),
    # bagging.DPBAG_MECHANISM and bagging.SAA_MECHANISM_PREFIX
    "DPBaggingClassifier": ("dp-bag (report-noisy-max, data-dependent moments accountant)",),
    "SubsampleAggregateClassifier": ("composition(",),
}

_TOP_KEYS = (
    ("model", str, "the model's class name"),
    ("params", dict, "the model's parameters"),
    ("classes", list, "the class labels"),
    ("n_features_in", numbers.Integral, "the number of features (an int)"),
    ("feature_names", list, "the feature names"),
)
_LEDGER_KEYS = (
    ("budget", dict, "the budget {epsilon, delta}"),
    ("total", dict, "the total spent {epsilon, delta}"),
    ("guarantee", str, f"one of {GUARANTEES}"),
    ("entries", list, "the list of releases"),
)


# ------------------------------------------------------------------ helpers


# ------------------------------------------------------------- entry point
def verify_model_dict(data: dict, cls) -> None:
    """Refuse a model dict that ``cls.from_dict`` must not trust.

    A file ``dpglass fit --out`` wrote may carry a ``held_out`` section at its top level (the DP held-out
    estimate: :func:`dpglass.models._held_out.check_held_out`), checked first and then set aside; nowhere else.

    Raises
    ------
    ModelFileError
        Naming the key or field at fault, what was expected, and what to do.
    """
    if isinstance(data, dict) and "held_out" in data:
        if _NESTED.get():  # a pipeline's inner model, a selection's model: dpglass writes none there
            _fail("held_out", "is inside a model's part of the file", "the held-out section at the file's top level")
        check_held_out(data)
        data = {k: v for k, v in data.items() if k != "held_out"}
    token = _NESTED.set(True)
    try:
        _verify_model_dict(data, cls)
    finally:
        _NESTED.reset(token)


#: True while a file is being verified: a nested verify_model_dict (an inner model's) refuses a held-out section.
_NESTED = contextvars.ContextVar("dpglass_verify_nested", default=False)


def _verify_model_dict(data: dict, cls) -> None:
    own = getattr(cls, "_verify_dict", None)
    if own is not None:  # a model whose file has a shape of its own (the table pipeline) checks it itself
        own(data)
        return
    d, names = _check_top_level(data, cls)
    params = _check_params(data["params"], cls)
    _check_declared_classes(data, params)
    ledger = _check_ledger(data, cls, params)
    selected = "selected_by" in data
    if selected:  # written by PrivateGridSearch: its plan's one entry (selection/verify.py), then the model's values
        SELECTION_CHECK(data, _Context(cls, params, d, names, ledger, data["privacy_ledger"]["entries"]))
    own = None if selected else ledger
    ctx = _Context(cls, params, d, names, own, data["privacy_ledger"]["entries"] if own is not None else [])
    check = MODEL_CHECKS.get(cls.__name__)
    if check is not None:
        check(data, ctx)
    _trial_restore(data, cls, params)


def _check_declared_classes(data: dict, params: dict) -> None:
    """A declared label set (``params.classes``) is the file's ``classes``, the same labels of the same types in
    the same order, as every fit writes it (predict_proba's columns, rules, rows and trees follow that order)."""
    declared = params.get("classes")
    if declared is None:
        return
    written = [c.item() if hasattr(c, "item") else c for c in declared]
    if json.dumps(written) != json.dumps(data["classes"]):
        _fail("classes", f"is {data['classes']!r}", f"params.classes = {written!r}, in that order (the declared "
              "label set, which a fit keeps)")


def _check_top_level(data, cls) -> tuple[int, list]:
    if not isinstance(data, dict):
        raise ModelFileError(f"A model file holds a JSON object; got {type(data).__name__}. {ADVICE}")
    for key, kind, what in _TOP_KEYS:
        _need(data, key, key, kind, what)
    if data["model"] != cls.__name__:
        _fail("model", f"is {data['model']!r}", f"{cls.__name__!r} (load the file with dpglass.models.load_model)")
    d = int(data["n_features_in"])
    if d < 1:
        _fail("n_features_in", f"is {d}", "an int >= 1")
    classes, most = data["classes"], getattr(cls, "_max_classes", 2)
    if not isinstance(most, int):  # DPPipeline's follows its model's: its model's file check counts them
        most = MAX_CLASSES
    if not 2 <= len(classes) <= most or len({json.dumps(c) for c in classes}) != len(classes):
        _fail("classes", f"is {classes!r}", "two distinct class labels" if most == 2
              else f"2 to {most} distinct class labels")
    if not all(isinstance(c, (str, numbers.Real)) for c in classes):
        _fail("classes", f"is {classes!r}", "labels that are strings or numbers")
    names = data["feature_names"]
    if len(names) != d or not all(isinstance(n, str) for n in names):
        _fail("feature_names", f"has {len(names)} entries", f"{d} strings (n_features_in)")
    if "has_feature_names" in data and not isinstance(data["has_feature_names"], bool):
        _fail("has_feature_names", f"is {data['has_feature_names']!r}", "true or false")
    return d, names


def _check_params(raw: dict, cls) -> dict:
    if getattr(cls, "_private", False) and raw.get("random_state") is not None:
        # to_dict writes None: a DP model's seed would let anyone replay and subtract its noise
        _fail("params.random_state", f"is {raw['random_state']!r}", "null (a private model's file never holds "
              "its seed)")
    accepted = set(cls().get_params(deep=False))
    unknown, missing = sorted(set(raw) - accepted), sorted(accepted - set(raw))
    if unknown:
        _fail(f"params.{unknown[0]}", f"is not a parameter of {cls.__name__}", f"only {sorted(accepted)}")
    if missing:
        _fail(f"params.{missing[0]}", "is missing", f"every parameter of {cls.__name__}: {sorted(accepted)}")
    try:
        cls(**cls._params_from_dict(dict(raw)))._validate_params()
    except (InvalidParameterError, TypeError, ValueError) as exc:
        raise ModelFileError(f"Model file field 'params' is invalid: {exc} {ADVICE}") from None
    return raw


def _trial_restore(data: dict, cls, params: dict) -> None:
    """Restore the state on a scratch instance: a key the checks missed becomes a ModelFileError, and so does a
    key the model does not write (a file is what ``to_dict`` wrote, nothing added: e.g. no seed beside it)."""
    model = cls(**cls._params_from_dict(dict(params)))
    model.n_features_in_ = int(data["n_features_in"])
    model.classes_ = np.array(data["classes"])
    try:
        model._state_from_dict(data)
    except KeyError as exc:
        _fail(str(exc.args[0]) if exc.args else "?", "is missing", f"the state {cls.__name__} saves")
    except (IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFileError(f"The state of this {cls.__name__} file cannot be read ({exc}). {ADVICE}") from None
    try:
        written = set(model._state_to_dict())
    except (AttributeError, KeyError, TypeError, ValueError):  # a state that needs more than the file: no list
        return
    extra = sorted(set(data) - _BASE_KEYS - written)
    if extra:
        _fail(extra[0], f"is not a field of a {cls.__name__} file", "only the fields dpglass writes")


#: Top-level fields every model file may carry besides its state.
_BASE_KEYS = {"model", "params", "classes", "n_features_in", "feature_names", "has_feature_names", "privacy_ledger",
              "selected_by"}


# ----------------------------------------------------------- the ledger
def _check_ledger(data: dict, cls, params: dict) -> PrivacyLedger | None:
    """Generic checks of a private model's ledger; returns the rebuilt ledger."""
    if not getattr(cls, "_private", False):
        for key in ("privacy_ledger", "selected_by"):
            if key in data:
                _fail(key, f"is present on the non-private {cls.__name__}", "no privacy ledger")
        return None
    raw = _need(data, "privacy_ledger", "privacy_ledger", dict,
                "the ledger of every release (a private model's file always carries one)")
    _check_ledger_shape(raw)
    try:
        ledger = PrivacyLedger.from_dict(raw)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ModelFileError(f"Model file field 'privacy_ledger' cannot be rebuilt: {exc}. {ADVICE}") from None
    _check_ledger_totals(raw, ledger)
    _check_mechanisms(raw["entries"], cls.__name__, selected="selected_by" in data)
    if "selected_by" not in data:
        if "epsilon" in params and not _close(ledger.epsilon, params["epsilon"]):
            _fail("privacy_ledger.budget.epsilon", f"is {ledger.epsilon!r}", f"params.epsilon = {params['epsilon']!r}")
        want = _resolved_delta(params)
        if want is not None and not (_close(ledger.delta, want) or ledger.delta == want):
            _fail("privacy_ledger.budget.delta", f"is {ledger.delta!r}", f"the resolved params.delta = {want!r}")
    return ledger


#: The fields PrivacyLedger.to_dict writes (a file is what dpglass wrote: nothing added, no room for data).
_LEDGER_FIELDS = {"budget", "total", "guarantee", "accountant", "replayable", "entries"}
_PAIR_FIELDS = {"epsilon", "delta"}


def _check_ledger_shape(raw: dict) -> None:
    for key, kind, what in _LEDGER_KEYS:
        _need(raw, key, f"privacy_ledger.{key}", kind, what)
    for where, have, allowed in (("privacy_ledger", raw, _LEDGER_FIELDS),
                                 ("privacy_ledger.budget", raw["budget"], _PAIR_FIELDS),
                                 ("privacy_ledger.total", raw["total"], _PAIR_FIELDS)):
        extra = sorted(set(have) - allowed)
        if extra:
            _fail(f"{where}.{extra[0]}", "is not a field dpglass writes", f"only {sorted(allowed)}")
    from dpglass.privacy.accounting import ACCOUNTANTS

    if raw.get("accountant", "basic") not in ACCOUNTANTS:
        _fail("privacy_ledger.accountant", f"is {raw.get('accountant')!r}", f"one of {ACCOUNTANTS}")
    if raw.get("replayable") is not None and not isinstance(raw["replayable"], bool):
        _fail("privacy_ledger.replayable", f"is {raw['replayable']!r}", "true, false or null (not recorded)")
    if not raw["entries"]:
        _fail("privacy_ledger.entries", "is empty", "every release the model made (a fitted model made some)")
    for i, entry in enumerate(raw["entries"]):
        field = f"privacy_ledger.entries[{i}]"
        if not isinstance(entry, dict):
            _fail(field, f"is {entry!r}", "an object describing one release")
        _need(entry, "release", f"{field}.release", str, "what was released")
        _need(entry, "mechanism", f"{field}.mechanism", str, "the mechanism's name")
        _need_num(entry, "epsilon", f"{field}.epsilon")
        for key in ("sensitivity", "scale"):
            if entry.get(key) is not None and not _is_num(entry[key]):
                _fail(f"{field}.{key}", f"is {entry[key]!r}", "a finite number or null")
        _check_curve(entry, field)
        for key in ("partition", "part"):
            # no dpglass learner composes in parallel inside its ledger: a partition
            # would turn a sum into a maximum (an edited file claiming less)
            if entry.get(key) is not None:
                _fail(f"{field}.{key}", f"is {entry[key]!r}", "null (no dpglass model writes partitions)")
    budget = raw["budget"]
    eps = _need(budget, "epsilon", "privacy_ledger.budget.epsilon", numbers.Real, "the model's epsilon")
    if not (_is_num(eps) and eps > 0):
        _fail("privacy_ledger.budget.epsilon", f"is {eps!r}", "a finite number > 0")
    delta = _need_num(budget, "delta", "privacy_ledger.budget.delta", "a number in [0, 1)")
    if not 0 <= delta < 1:
        _fail("privacy_ledger.budget.delta", f"is {delta!r}", "a number in [0, 1)")
    for key in ("epsilon", "delta"):
        _need_num(raw["total"], key, f"privacy_ledger.total.{key}")


def _check_curve(entry: dict, field: str) -> None:
    """A declared privacy curve may not be more private than its entry's own (epsilon, delta)."""
    from dpglass.privacy.accounting import is_positive_integer

    curve = entry.get("curve")
    if curve is None:
        return
    eps = float(entry["epsilon"])
    if not isinstance(curve, dict):
        _fail(f"{field}.curve", f"is {curve!r}", "an object naming the mechanism family, or null")
    kind = curve.get("kind")
    shapes = {"discrete-laplace": {"kind", "parameter", "sensitivity"}, "laplace": {"kind", "scale", "sensitivity"},
              "gaussian": {"kind", "sigma", "sensitivity"}, "discrete-gaussian": {"kind", "sigma", "sensitivity"},
              "randomized-response": {"kind", "noise", "buckets"}, "bounded-range": {"kind", "epsilon"},
              "pure": {"kind"}}
    if kind not in shapes or set(curve) != shapes[kind] or not all(_is_num(v) and v > 0 for k, v in curve.items()
                                                                    if k != "kind"):
        _fail(f"{field}.curve", f"is {curve!r}", "one of the curves of dpglass.privacy.accounting")
    for key in {"discrete-laplace": ("sensitivity",), "discrete-gaussian": ("sensitivity",),
                "randomized-response": ("buckets",)}.get(kind, ()):
        if not is_positive_integer(curve[key]):
            _fail(f"{field}.curve.{key}", f"is {curve[key]!r}", "an integer >= 1")
    if kind == "bounded-range" and not entry["mechanism"].startswith("exponential"):
        _fail(f"{field}.curve", f"is bounded-range for mechanism {entry['mechanism']!r}",
              "bounded-range only for the exponential mechanism")
    loss = {"discrete-laplace": lambda c: c["parameter"] * c["sensitivity"],
            "laplace": lambda c: c["sensitivity"] / c["scale"],
            "bounded-range": lambda c: c["epsilon"],
            "randomized-response": lambda c: math.log((1 - c["noise"] + c["noise"] / c["buckets"])
                                                      / (c["noise"] / c["buckets"]))}.get(kind)
    if loss is not None and loss(curve) < eps * (1 - 1e-9):
        _fail(f"{field}.curve", f"claims a privacy loss {loss(curve)!r} below the entry's epsilon {eps!r}",
              "a curve at least as revealing as the entry")
    if kind == "discrete-gaussian":
        from dpglass.privacy.mechanisms.gaussian import zcdp_epsilon

        # its entry states the zCDP conversion at the entry's delta, exactly
        if not (entry.get("delta", 0) > 0 and _close(eps, zcdp_epsilon(curve["sigma"], curve["sensitivity"],
                                                                        entry["delta"]))):
            _fail(f"{field}.curve", f"does not match the entry's (epsilon, delta) = ({eps!r}, {entry.get('delta')!r})",
                  "the epsilon of its sigma at the entry's delta (zCDP conversion)")
    if kind == "gaussian":
        from dpglass.privacy.mechanisms.gaussian import _analytic_gaussian_sigma

        if entry.get("delta", 0) > 0 and curve["sigma"] / curve["sensitivity"] > 1.000001 * _analytic_gaussian_sigma(
                eps, entry["delta"], 1.0):
            _fail(f"{field}.curve", "claims more noise than its (epsilon, delta) needs", "the noise actually used")


def _check_ledger_totals(raw: dict, ledger: PrivacyLedger) -> None:
    eps, delta = ledger.total()
    rec = raw["total"]
    for key, got, want in (("epsilon", rec["epsilon"], eps), ("delta", rec["delta"], delta)):
        if not _close(got, want):
            _fail(f"privacy_ledger.total.{key}", f"is {got!r}", f"{want!r}, what the entries compose to")
    if not _within(eps, ledger.epsilon):
        _fail("privacy_ledger.entries", f"spend epsilon={eps!r}", f"at most the budget epsilon={ledger.epsilon!r}")
    if not _within(delta, ledger.delta):
        _fail("privacy_ledger.entries", f"spend delta={delta!r}", f"at most the budget delta={ledger.delta!r}")
    if raw["guarantee"] != ledger.guarantee:
        _fail("privacy_ledger.guarantee", f"is {raw['guarantee']!r}",
              f"{ledger.guarantee!r}, the weakest guarantee among the entries")


def _known_mechanisms(model: str):
    """KNOWN_MECHANISMS[model], plus the name a learner module declares as ``MECHANISM`` (logistic)."""
    known = KNOWN_MECHANISMS.get(model)
    if model == "DPLogisticRegression":
        from dpglass.models.logistic.plan import MECHANISM

        known = known + (MECHANISM,)
    return known


def _check_mechanisms(entries: list, model: str, selected: bool) -> None:
    known = (SELECTION_MECHANISM,) if selected else _known_mechanisms(model)
    if known is None:  # a model without a declared list
        return
    for i, e in enumerate(entries):
        name = e["mechanism"]
        if not any(name == k or (k.endswith("(") and name.startswith(k)) for k in known):
            _fail(f"privacy_ledger.entries[{i}].mechanism", f"is {name!r}",
                  f"one of the mechanisms {model} uses: {', '.join(known)}")


# ------------------------------------------------------------- rule lists


# ----------------------------------------------------------- boosting


# ------------------------------------------------------------- logistic


#: Model-specific checks by class name: state (and, given the model's own
#: ledger, the ledger's consistency with the parameters).  A new model adds one.
#: LDPHistogramClassifier is outside the registry (no central ledger: its reports' sums).
#: A file written by PrivateGridSearch (it carries ``selected_by``), whatever its model's class: the selection's
#: release plan replayed; the model's own check then runs without a ledger of its own.
SELECTION_CHECK = check_selection
MODEL_CHECKS = {
    "GreedyRuleListClassifier": _check_rule_list,
    "DPRuleListClassifier": _check_rule_list,
    "SmoothBoostClassifier": _check_boosting,
    "DPLogisticRegression": _check_logistic,
    "DPGradientBoostingClassifier": check_gbdt,
    "DPGAMClassifier": check_gam,
    "DPBaggingClassifier": check_dpbag,
    "SubsampleAggregateClassifier": check_saa,
    "LDPHistogramClassifier": check_ldp,
}
