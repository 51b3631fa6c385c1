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

:func:`read_model_file` and :func:`format_model_report` serve ``dpglass inspect``.
"""

from __future__ import annotations

import dataclasses

import json
import math
import numbers
from dataclasses import dataclass

import numpy as np

from dpglass.exceptions import DataValidationError, InvalidParameterError, ModelFileError
from dpglass.privacy.ledger import GUARANTEES, RELATIVE_TOLERANCE, PrivacyLedger, _within

__all__ = [
    "KNOWN_MECHANISMS",
    "MODEL_CHECKS",
    "format_model_report",
    "read_model_file",
    "verify_model_dict",
]

ADVICE = ("Re-save the model with dpglass; do not edit model files by hand. A file written by an earlier dpglass "
          "whose releases differ from this version's is refused too: refit the model with this version.")

#: Mechanism names each private model writes into its ledger (a name ending in
#: "(" is a prefix).  Both the float-Laplace names of earlier versions and the
#: discrete-Laplace names of the current ones are accepted.  PrivateGridSearch's
#: entry is accepted on files that carry ``selected_by``.
RULE_LIST_COUNT_NAMES = ("laplace", "discrete laplace", "discrete gaussian")
#: The name a count released by discrete Laplace has in a ledger (``mechanisms.count_fields``).
COUNT_MECHANISM = "discrete laplace"
RULE_LIST_SELECTION_NAMES = {
    "local-pf": ("permute-and-flip (local scale)",),
    "certified-pf": ("permute-and-flip",),
    "smooth-laplace": ("smooth-laplace",),
    "smooth-cauchy": ("smooth-cauchy",),
    "global-laplace": ("report-noisy-min (laplace)", "report-noisy-min (discrete laplace)"),
    "global-gaussian": ("gaussian",),
    "exponential": ("exponential",),
    "noisy-counts": ("laplace counts", "discrete laplace counts"),
    "errors-pf": ("permute-and-flip (errors)",),
}
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
SELECTION_MECHANISM = "private-selection("
SELECTION_METHODS = ("liu-talwar", "papernot-steinke")

_TOP_KEYS = (
    ("model", str, "the model's class name"),
    ("params", dict, "the model's parameters"),
    ("classes", list, "the two class labels"),
    ("n_features_in", numbers.Integral, "the number of features (an int)"),
    ("feature_names", list, "the feature names"),
)
_LEDGER_KEYS = (
    ("budget", dict, "the budget {epsilon, delta}"),
    ("total", dict, "the total spent {epsilon, delta}"),
    ("guarantee", str, f"one of {GUARANTEES}"),
    ("entries", list, "the list of releases"),
)
_GUARANTEE_RANK = {g: i for i, g in enumerate(GUARANTEES)}  # proven < paper-claim < none
_STOP_REASONS = ("max_length", "minimum support", "no improvement")


# ------------------------------------------------------------------ helpers
def _fail(field: str, problem: str, expected: str | None = None):
    exp = f"; expected {expected}" if expected else ""
    raise ModelFileError(f"Model file field {field!r} {problem}{exp}. {ADVICE}")


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_num(v) -> bool:
    try:
        return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
    except OverflowError:  # an integer beyond float range (JSON allows 10**400)
        return False


def _is_count(v) -> bool:
    """A released noisy count: an integer of int64 size (anything larger is not a count a fit writes)."""
    return _is_int(v) and abs(v) < 2**62


def _close(a, b) -> bool:
    return math.isclose(float(a), float(b), rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0)


def _need(mapping: dict, key: str, field: str, kind, what: str):
    """``mapping[key]``, refused when missing or not of ``kind``."""
    if key not in mapping:
        _fail(field, "is missing", what)
    value = mapping[key]
    bad = isinstance(value, bool) and kind is not bool and kind is not object
    if bad or not isinstance(value, kind):
        _fail(field, f"is {value!r} ({type(value).__name__})", what)
    return value


def _need_num(mapping: dict, key: str, field: str, what: str = "a finite number") -> float:
    value = _need(mapping, key, field, numbers.Real, what)
    if not _is_num(value):
        _fail(field, f"is {value!r}", what)
    return float(value)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.6g}"


@dataclass
class _Context:
    """What the model-specific checks need."""

    cls: type
    params: dict  # as written in the file (validated)
    d: int
    names: list
    ledger: PrivacyLedger | None  # the model's own ledger: None if non-private or written by a selection
    entries: list  # the ledger's raw entry dicts ([] without an own ledger)


# ------------------------------------------------------------- entry point
def verify_model_dict(data: dict, cls) -> None:
    """Refuse a model dict that ``cls.from_dict`` must not trust.

    Raises
    ------
    ModelFileError
        Naming the key or field at fault, what was expected, and what to do.
    """
    if getattr(cls, "__name__", "") == "DPPipeline":
        from dpglass.models._verify_pipeline import verify_pipeline_dict

        verify_pipeline_dict(data, cls, _check_top_level, _check_ledger_shape, _check_ledger_totals, _close, _fail)
        return
    d, names = _check_top_level(data, cls)
    params = _check_params(data["params"], cls)
    ledger = _check_ledger(data, cls, params)
    selected = "selected_by" in data
    if selected:
        _check_selection(data, params, ledger, cls)
    own = None if selected else ledger
    ctx = _Context(cls, params, d, names, own, data["privacy_ledger"]["entries"] if own is not None else [])
    check = MODEL_CHECKS.get(cls.__name__)
    if check is not None:
        check(data, ctx)
    _trial_restore(data, cls, params)


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
    classes = data["classes"]
    if len(classes) != 2 or len({json.dumps(c) for c in classes}) != 2:
        _fail("classes", f"is {classes!r}", "two distinct class labels")
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


def _resolved_delta(params: dict):
    """The delta ``fit`` uses: params.delta, or the library's public default for null (None if unknown)."""
    if "delta" not in params:
        return None
    if params["delta"] is not None:
        return float(params["delta"])
    from dpglass.models import _base

    default = getattr(_base, "DEFAULT_DELTA", None)  # older versions resolved null to 1/n^2 (n unknown here)
    return None if default is None else float(default)


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
        from dpglass.models import logistic

        declared = getattr(logistic, "MECHANISM", None)
        known = known + ((declared,) if isinstance(declared, str) else ())
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


def _check_selection(data: dict, params: dict, ledger: PrivacyLedger, cls) -> None:
    """A file written by PrivateGridSearch: the ledger is the selection's one entry."""
    sel = _need(data, "selected_by", "selected_by", dict, "the selection's method and parameters")
    method = _need(sel, "method", "selected_by.method", str, f"one of {SELECTION_METHODS}")
    if method not in SELECTION_METHODS:
        _fail("selected_by.method", f"is {method!r}", f"one of {SELECTION_METHODS}")
    best = _need(sel, "best_params", "selected_by.best_params", dict, "the selected grid point")
    for key, value in best.items():
        if key not in params or params[key] != value:
            _fail(f"params.{key}", f"is {params.get(key)!r}", f"{value!r}, the selected selected_by.best_params")
    if not _is_int(sel.get("noisy_correct_count")):  # a discrete Laplace count: an integer (negative ones too)
        _fail("selected_by.noisy_correct_count", f"is {sel.get('noisy_correct_count')!r}",
              "an integer (the winner's noisy count of correct validation predictions)")
    keys = {"method", "best_params", "noisy_correct_count", "eta"} | (
        {"stopping_probability", "param_grid"} if ledger.delta > 0 else set())
    if set(sel) != keys:
        odd = sorted(set(sel) ^ keys)[0]
        _fail(f"selected_by.{odd}", "is missing" if odd in keys else "is not a field dpglass writes",
              f"exactly {sorted(keys)}")
    entries = data["privacy_ledger"]["entries"]
    if len(entries) != 1:
        _fail("privacy_ledger.entries", f"has {len(entries)} entries", "1 (the whole selection)")
    if method not in str(entries[0]["mechanism"]).lower():
        _fail("selected_by.method", f"is {method!r}", f"the method the ledger's entry names ({entries[0]['mechanism']!r})")
    eps, run = float(entries[0]["epsilon"]), float(params["epsilon"])
    eta = _need_num(sel, "eta", "selected_by.eta", "the selection's eta (1 for liu-talwar)")
    if eta < 0 or (method == "liu-talwar" and eta != 1):
        _fail("selected_by.eta", f"is {eta!r}", "1 for liu-talwar, >= 0 for papernot-steinke")
    if ledger.delta > 0:
        _check_renyi_selection(data, params, ledger, cls)
        return
    if not _close(eps, ledger.epsilon) or ledger.delta != 0 or entries[0].get("delta", 0.0) != 0:
        _fail("privacy_ledger.entries[0]", f"spends ({eps!r}, {entries[0].get('delta')!r})",
              f"the whole pure budget ({ledger.epsilon!r}, 0)")
    for key in ("count_noise", "leaf_noise"):  # Gaussian noise is never pure
        if params.get(key) == "gaussian":
            _fail(f"params.{key}", "is 'gaussian'", "a pure noise (the selection needs pure candidates)")
    if not _close(eps, (2.0 + eta) * run):
        _fail("params.epsilon", f"is {run!r}", f"the run budget epsilon/(2 + eta) = {eps / (2.0 + eta)!r}")
    if params.get("delta", 0.0) not in (0, 0.0):
        _fail("params.delta", f"is {params.get('delta')!r}", "0 (the selection needs pure candidates)")


def _check_renyi_selection(data: dict, params: dict, ledger: PrivacyLedger, cls) -> None:
    """A selection with delta > 0: recompute the Rényi bound from the grid and the selected model's parameters."""
    from sklearn.base import clone
    from sklearn.model_selection import ParameterGrid

    from dpglass.models._selection_rdp import selection_epsilon
    from dpglass.models.selection import expected_repetitions

    from dpglass.models._selection_rdp import candidate_budget

    sel, entry = data["selected_by"], data["privacy_ledger"]["entries"][0]
    eta = float(sel["eta"])
    gamma = _need_num(sel, "stopping_probability", "selected_by.stopping_probability", "the selection's gamma")
    grid = _need(sel, "param_grid", "selected_by.param_grid", list, "the grid the selection drew from")
    if not 0 < gamma <= 1 or (gamma == 1 and eta != 1):
        _fail("selected_by.stopping_probability", f"is {gamma!r}", "in (0, 1] (1 only for liu-talwar)")
    for part in (f"gamma={gamma:g}", f"eta={eta:g}" if sel["method"] != "liu-talwar" else "geometric"):
        if part not in entry["mechanism"]:  # the law's parameters are also in the entry's own name
            _fail("selected_by", f"does not match the entry's mechanism {entry['mechanism']!r}", f"{part} in it")
    if len({tuple(sorted(g)) for g in grid if isinstance(g, dict)}) > 1:
        _fail("selected_by.param_grid", "has sub-grids over different parameters", "one set of parameters")
    if not _close(float(entry.get("delta", 0.0)), ledger.delta):
        _fail("privacy_ledger.entries[0].delta", f"is {entry.get('delta')!r}", f"{ledger.delta!r}, the budget's delta")
    try:
        candidates = list(ParameterGrid(grid))
        base = cls(**cls._params_from_dict(dict(params)))
        run = float(params["epsilon"])
        for point in candidates:  # every grid point must be a valid estimator, as fit checks
            clone(base).set_params(**point)._validate_params()
        for key, value in candidate_budget(base, run, ledger.delta).items():  # as fit set them
            if params.get(key) != value:
                _fail(f"params.{key}", f"is {params.get(key)!r}", f"{value!r}, what the selection sets on its runs")
        want = selection_epsilon(base, candidates, run, ledger.delta, eta, gamma, expected_repetitions(eta, gamma))
    except (TypeError, ValueError, KeyError, OverflowError, InvalidParameterError) as exc:
        _fail("selected_by", f"cannot be recomputed ({exc})", "the grid and parameters a selection writes")
    if sel["best_params"] not in candidates:
        _fail("selected_by.best_params", f"is {sel['best_params']!r}", "a point of selected_by.param_grid")
    if not _close(float(entry["epsilon"]), want):
        _fail("privacy_ledger.entries[0].epsilon", f"is {entry['epsilon']!r}",
              f"{want!r}, the Rényi bound of runs at epsilon {run!r} over this grid")
    if want > ledger.epsilon * (1 + RELATIVE_TOLERANCE):
        _fail("params.epsilon", f"is {run!r}", f"a run budget whose selection fits epsilon={ledger.epsilon!r}")


def _check_noise_scale(entry: dict, field: str, sensitivity: float, epsilon: float) -> None:
    """A recorded noise scale must be at least sensitivity / epsilon (less noise would void the entry)."""
    scale = entry.get("scale")
    if scale is None or not _is_num(scale) or scale < sensitivity / epsilon * (1.0 - RELATIVE_TOLERANCE):
        _fail(f"{field}.scale", f"is {scale!r}", f"at least sensitivity / epsilon = {sensitivity / epsilon!r}")


# ------------------------------------------------------------- rule lists
def _check_rule_list(data: dict, ctx: _Context) -> None:
    rules = _need(data, "rules", "rules", list, "the list of rules")
    default = _need(data, "default_rule", "default_rule", dict, "the default rule")
    stop = _need(data, "stop_reason", "stop_reason", str, f"one of {_STOP_REASONS}")
    if stop not in _STOP_REASONS:
        _fail("stop_reason", f"is {stop!r}", f"one of {_STOP_REASONS}")
    if len(rules) > ctx.params["max_length"]:
        _fail("rules", f"has {len(rules)} rules", f"at most params.max_length = {ctx.params['max_length']}")
    noisy = bool(getattr(ctx.cls, "_noisy", False))
    for i, rule in enumerate(rules):
        _check_rule(rule, f"rules[{i}]", ctx, noisy, is_default=False)
    _check_rule(default, "default_rule", ctx, noisy, is_default=True)
    _check_rule_candidates(rules, ctx)
    if ctx.ledger is not None:
        errors_pf = ctx.params.get("mechanism") == "errors-pf"
        (_check_errors_list_ledger if errors_pf else _check_rule_list_ledger)(data, ctx)


def _check_rule(rule, field: str, ctx: _Context, noisy: bool, is_default: bool) -> None:
    if not isinstance(rule, dict):
        _fail(field, f"is {rule!r}", "an object with conditions, prediction, counts, noisy")
    conds = _need(rule, "conditions", f"{field}.conditions", list, "the rule's conditions")
    max_card = ctx.params["max_card"]
    if is_default and conds:
        _fail(f"{field}.conditions", f"has {len(conds)} conditions", "none (the default rule)")
    if not is_default and not 1 <= len(conds) <= max_card:
        _fail(f"{field}.conditions", f"has {len(conds)} conditions", f"1 to params.max_card = {max_card}")
    for j, cond in enumerate(conds):
        _check_condition(cond, f"{field}.conditions[{j}]", ctx)
    counts = _need(rule, "counts", f"{field}.counts", list, "two class counts")
    if len(counts) != 2 or not all(_is_num(c) and float(c).is_integer() for c in counts):
        _fail(f"{field}.counts", f"is {counts!r}", "two integers (released counts are integers)")
    if not noisy and min(counts) < 0:
        _fail(f"{field}.counts", f"is {counts!r}", "two counts of records (>= 0; a non-private list has no noise)")
    if _need(rule, "noisy", f"{field}.noisy", bool, "true or false") != noisy:
        _fail(f"{field}.noisy", f"is {rule['noisy']!r}", f"{noisy} for a {ctx.cls.__name__}")
    pred = _need(rule, "prediction", f"{field}.prediction", numbers.Integral, "0 or 1")
    c0, c1 = counts
    want = int(c1 >= c0) if noisy else int(c1 > c0)
    if pred != want:
        _fail(f"{field}.prediction", f"is {pred!r}", f"{want}, the majority of its counts {counts}")


def _check_rule_candidates(rules: list, ctx: _Context) -> None:
    """Each rule is one of the public candidates the fit selects from (issue 26): the conjunctions of
    ``max_card`` literals (``x = 0`` only with ``allow_negations``), or the user's ``candidates``, built by the
    fit's own ``_candidate_set``."""
    model = ctx.cls(**ctx.params)  # as written: _resolve_rules reads JSON's lists (and "not name" strings)
    try:
        literals = model._candidate_set(ctx.d, list(ctx.names)).literals
    except (DataValidationError, TypeError, ValueError) as exc:
        _fail("params.candidates", f"give no candidate rules ({exc})", "the parameters of a fit that ran")
    public = np.sort(literals, axis=1)  # literal ids 2j (x_j = 1) and 2j + 1 (x_j = 0), -1 padding first
    for i, rule in enumerate(rules):
        ids = sorted(2 * c["feature"] + (0 if c["value"] else 1) for c in rule["conditions"])
        key = [-1] * (public.shape[1] - len(ids)) + ids
        if len(key) != public.shape[1] or not (public == np.array(key)).all(axis=1).any():
            _fail(f"rules[{i}].conditions", f"are {[(c['name'], c['value']) for c in rule['conditions']]!r}",
                  "one of the public candidate rules (params max_card, allow_negations, candidates)")


def _check_condition(cond, field: str, ctx: _Context) -> None:
    if not isinstance(cond, dict):
        _fail(field, f"is {cond!r}", "an object with feature, name, value")
    feature = _need(cond, "feature", f"{field}.feature", numbers.Integral, "a feature index (int)")
    if not 0 <= feature < ctx.d:
        _fail(f"{field}.feature", f"is {feature}", f"a feature index in [0, {ctx.d})")
    name = _need(cond, "name", f"{field}.name", str, "the feature's name")
    if name != ctx.names[feature]:
        _fail(f"{field}.name", f"is {name!r}", f"{ctx.names[feature]!r}, feature_names[{feature}]")
    _need(cond, "value", f"{field}.value", bool, "true (x = 1) or false (x = 0)")


def _check_rule_list_ledger(data: dict, ctx: _Context) -> None:
    """The releases fit_dp_rule_list makes: a count and a selection per step, then the class counts.

    One table of every cell's counts (epsilon / (2K + 1) each, the table all
    that is left under basic accounting), or with variant="paper" each
    rule's pair at its step and the default rule's last (epsilon / (3K + 1)).
    """
    from dpglass.models._errors_rule_list import COUNTS_RELEASE
    from dpglass.models._rule_selection import SELECTORS
    from dpglass.models.rule_list import (
        COUNT_NOISES, DEFAULT_RELEASE, class_count_mechanism, delta_plan, one_count_table, rule_list_budget,
    )
    from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism

    p, entries = ctx.params, ctx.entries
    K = p["max_length"]
    plan = delta_plan(p["mechanism"], p["confidence"], p["variant"])
    table = one_count_table(p["variant"])
    count_noise = p.get("count_noise", "laplace")
    if count_noise not in COUNT_NOISES:
        _fail("params.count_noise", f"is {count_noise!r}", f"one of {COUNT_NOISES}")
    try:
        eps_node, part, acct = rule_list_budget(float(p["epsilon"]), ctx.ledger.delta, K, plan,
                                                p.get("accountant", "basic"), p["mechanism"], count_noise,
                                                table=table)
    except InvalidParameterError as exc:
        _fail("params", f"cannot be composed ({exc})", "parameters a DPRuleListClassifier accepts")
    if ctx.ledger.accountant != acct:
        _fail("privacy_ledger.accountant", f"is {ctx.ledger.accountant!r}", f"{acct!r} for these parameters")
    most = (2 if table else 3) * K + 1
    if len(entries) > most:
        _fail("privacy_ledger.entries", f"has {len(entries)} releases", f"at most {most} for these parameters")
    names = RULE_LIST_SELECTION_NAMES.get(p["mechanism"])
    if names is None:  # a selector added to rule_list without its name here
        raise ModelFileError(f"dpglass cannot verify mechanism={p['mechanism']!r}: add its ledger name to "
                             "dpglass.models._verify.RULE_LIST_SELECTION_NAMES.")
    last = COUNTS_RELEASE if table else DEFAULT_RELEASE
    n_rules, stop = _rule_list_sequence(entries, K, names, last, per_rule_counts=not table)
    if stop is None:  # the ledger allows K rules (max_length) or K - 1 (no improvement): the file says which
        stop = "no improvement" if data["stop_reason"] == "no improvement" else "max_length"
        n_rules = K - 1 if stop == "no improvement" else K
    if n_rules != len(data["rules"]):
        _fail("rules", f"has {len(data['rules'])} rules", f"{n_rules}, as many as the ledger's released rules")
    if stop != data["stop_reason"]:
        _fail("stop_reason", f"is {data['stop_reason']!r}", f"{stop!r}, where the ledger's releases stop")
    if plan.spends_delta and ctx.ledger.delta <= 0:
        _fail("privacy_ledger.budget.delta", "is 0", f"> 0: mechanism={p['mechanism']!r} spends delta")
    class_mech = class_count_mechanism(count_noise, eps_node, ctx.ledger.delta, 1 if table else K + 1)
    if table and acct == "basic":  # the table takes what the steps left
        class_mech = DiscreteLaplaceMechanism(float(p["epsilon"]) - (len(entries) - 1) * eps_node)
    counts = {"remaining count": DiscreteLaplaceMechanism(eps_node), "class counts": class_mech}
    sel_delta = part * (int(plan.selection) + int(plan.charged_certification))
    paper = p["mechanism"] in ("smooth-laplace", "smooth-cauchy") or (
        p["variant"] == "paper" and p["mechanism"] in ("global-laplace", "global-gaussian")
    ) or (p["confidence"] is not None and plan.certification)
    sel_guarantee = "paper-claim" if paper else "proven"
    for i, e in enumerate(entries):
        field = f"privacy_ledger.entries[{i}]"
        selection = e["release"].endswith(": selection")
        mech = None if selection else counts["remaining count" if e["release"].endswith("remaining count")
                                             else "class counts"]
        want_eps = eps_node if mech is None else mech.epsilon
        if not _close(e["epsilon"], want_eps):
            _fail(f"{field}.epsilon", f"is {e['epsilon']!r}", f"{want_eps!r}, the per-release epsilon ({acct} accounting)")
        want_delta = sel_delta if selection else mech.delta
        if not (_close(e.get("delta", 0.0), want_delta) or e.get("delta", 0.0) == want_delta):
            _fail(f"{field}.delta", f"is {e.get('delta')!r}", repr(want_delta))
        want_g = sel_guarantee if selection else "proven"
        if _GUARANTEE_RANK.get(e.get("guarantee", "proven"), 0) < _GUARANTEE_RANK[want_g]:
            _fail(f"{field}.guarantee", f"is {e.get('guarantee')!r}", f"{want_g!r} for these parameters")
        if mech is not None:
            names = _count_names(mech, legacy=e["release"] != COUNTS_RELEASE)  # the table never had float noise
            if e["mechanism"] not in names:
                _fail(f"{field}.mechanism", f"is {e['mechanism']!r}", " or ".join(map(repr, names)))
            if e.get("sensitivity") not in (None, 1.0):  # a record moves one count, or one cell of the table
                _fail(f"{field}.sensitivity", f"is {e.get('sensitivity')!r}", "1")
            _check_noise_scale(e, field, mech.scale * mech.epsilon, mech.epsilon)
        _check_declared_curve(e, field, SELECTORS[p["mechanism"]].curve_for(float(e["epsilon"])) if selection
                              else mech.curve)


def _count_names(mech, legacy: bool = True) -> tuple:
    """Ledger names of a count release (``legacy``: also "laplace", files of versions before discrete noise)."""
    if mech.curve["kind"] == "discrete-gaussian":
        return ("discrete gaussian",)
    return ("discrete laplace", "laplace") if legacy else ("discrete laplace",)


def _check_declared_curve(entry: dict, field: str, want) -> None:
    """An entry's curve must be the one its learner declares (or none: the worst case of its pair)."""
    have = entry.get("curve")
    integer = ("sensitivity", "buckets") if want and want.get("kind") != "gaussian" else ()
    if have is not None and (want is None or set(have) != set(want) or any(
            k != "kind" and not (have[k] == want[k] if k in integer else _close(have[k], want[k])) for k in want)
            or have.get("kind") != want.get("kind")):
        _fail(f"{field}.curve", f"is {have!r}", f"{want!r} (the mechanism's own curve) or null")


def _rule_list_sequence(entries: list, K: int, selection: tuple, last: str,
                        per_rule_counts: bool) -> tuple[int, str]:
    """Walk the releases in the order fit_dp_rule_list makes them; (rules released, stop reason).

    ``last`` is the final release's name (the table of counts, or the
    default rule's pair); ``per_rule_counts``: each rule's pair follows its
    selection (variant="paper").  The stop reason is None when the ledger
    cannot tell: K selections, then the table (a K-th rule, "max_length",
    or "no rule", "no improvement" after K - 1 rules).
    """
    pos = 0

    def expect(release: str, mechanisms: tuple) -> None:
        nonlocal pos
        if pos >= len(entries):
            _fail("privacy_ledger.entries", f"end after {pos} releases", f"{release!r} next")
        e = entries[pos]
        if e["release"] != release:
            _fail(f"privacy_ledger.entries[{pos}].release", f"is {e['release']!r}", repr(release))
        if e["mechanism"] not in mechanisms:
            _fail(f"privacy_ledger.entries[{pos}].mechanism", f"is {e['mechanism']!r}", " or ".join(map(repr, mechanisms)))
        pos += 1

    def at_last() -> bool:
        return pos < len(entries) and entries[pos]["release"] == last

    n_rules, stop = 0, "max_length"
    for step in range(1, K + 1):
        expect(f"rule {step}: remaining count", RULE_LIST_COUNT_NAMES)
        if at_last():
            stop = "minimum support"
            break
        expect(f"rule {step}: selection", selection)
        if at_last():  # "no rule"; with one table, the K-th selection may also have been a rule
            stop = "no improvement" if per_rule_counts or step < K else None
            break
        if per_rule_counts:
            expect(f"rule {step}: class counts of caught records", RULE_LIST_COUNT_NAMES)
        n_rules += 1
    expect(last, RULE_LIST_COUNT_NAMES)
    if pos != len(entries):
        _fail("privacy_ledger.entries", f"has {len(entries) - pos} releases after {last!r}", "none")
    return n_rules, stop


# ----------------------------------------------------------- boosting
def _check_boosting(data: dict, ctx: _Context) -> None:
    from dpglass.models.boosting import resolved_rounds, round_budget

    delta = _need_num(data, "delta", "delta", "the resolved delta, a number in [0, 1)")
    counted = _check_records_count(data, ctx, delta)
    if counted is not None:  # n_rounds="auto" from a noisy count: the rounds' budget is what the count left
        p = dict(ctx.params, **counted)
        ctx = dataclasses.replace(ctx, entries=ctx.entries[1:])
    else:
        p = dict(ctx.params, n_rounds=resolved_rounds(ctx.params["n_rounds"], ctx.params["weak_learner"],
                                                      ctx.params["tree_learner"]))
    hyps = _need(data, "estimators", "estimators", list, f"the {p['n_rounds']} hypotheses")
    if len(hyps) != p["n_rounds"]:
        _fail("estimators", f"has {len(hyps)} hypotheses", f"params.n_rounds = {p['n_rounds']}")
    joint = p["weak_learner"] == "tree" and p["tree_learner"] == "joint"
    if joint:
        _check_joint_tree_params(p)
    for i, h in enumerate(hyps):
        if p["weak_learner"] == "stump":
            _check_stump(h, f"estimators[{i}]", ctx.d)
        else:
            _check_tree(h, f"estimators[{i}]", ctx.d, p["tree_nodes"])
            if joint:
                _check_joint_tree_shape(h, f"estimators[{i}]")
    want = _resolved_delta(p)
    if not 0 <= delta < 1 or (want is not None and not _close(delta, want) and delta != want):
        _fail("delta", f"is {delta!r}", f"the resolved params.delta = {want!r}, in [0, 1)")
    eps_round, composition = round_budget(float(p["epsilon"]), delta, int(p["n_rounds"]), p["weak_learner"],
                                          int(p["tree_nodes"]), p.get("accountant", "basic"), p["tree_learner"])
    want_acct = composition if composition in ("pld", "rdp") else "basic"
    if ctx.ledger is not None and ctx.ledger.accountant != want_acct:
        _fail("privacy_ledger.accountant", f"is {ctx.ledger.accountant!r}", f"{want_acct!r} for these parameters")
    if not _close(_need_num(data, "round_epsilon", "round_epsilon"), eps_round):
        _fail("round_epsilon", f"is {data['round_epsilon']!r}", f"{eps_round!r} for these epsilon, delta, n_rounds")
    if _need(data, "composition", "composition", str, "'basic', 'advanced', 'pld' or 'rdp'") != composition:
        _fail("composition", f"is {data['composition']!r}", f"{composition!r} for these epsilon, delta, n_rounds")
    if ctx.ledger is not None:
        if not (_close(ctx.ledger.delta, delta) or ctx.ledger.delta == delta):
            _fail("privacy_ledger.budget.delta", f"is {ctx.ledger.delta!r}", f"the model's delta = {delta!r}")
        _check_boosting_ledger(ctx, p, eps_round, composition, delta)


def _check_records_count(data: dict, ctx: _Context, delta: float) -> dict | None:
    """``n_rounds="auto"`` by a noisy count (:func:`~dpglass.models.boosting.counts_records`): check the count's
    entry (first in the ledger) and return the resolved ``{"n_rounds", "epsilon"}`` of the rounds; else None."""
    from dpglass.models.boosting import AUTO_COUNT_SHARE, auto_rounds, counts_records

    p = ctx.params
    estimate = data.get("records_estimate")
    if not counts_records(p["n_rounds"], p["weak_learner"], p["tree_learner"], delta, p.get("accountant", "basic")):
        if estimate is not None:
            _fail("records_estimate", f"is {estimate!r}", "null (n_rounds is not resolved from a count here)")
        return None
    if not _is_count(estimate):
        _fail("records_estimate", f"is {estimate!r}", "the released noisy count of records (an integer)")
    eps0 = float(p["epsilon"]) * AUTO_COUNT_SHARE
    if ctx.ledger is not None:
        _check_first_count_entry(ctx, eps0, "the record count")
    rest = float(p["epsilon"]) - eps0
    return {"n_rounds": auto_rounds(estimate, rest, p["weak_learner"], p["tree_learner"]), "epsilon": rest}


def _check_first_count_entry(ctx: _Context, eps0: float, what: str) -> None:
    """The ledger's first entry is a count released by discrete Laplace at ``eps0`` (sensitivity 1, its own curve)."""
    e, field = ctx.entries[0] if ctx.entries else {}, "privacy_ledger.entries[0]"
    if e.get("mechanism") != COUNT_MECHANISM or e.get("sensitivity") != 1.0 or not _close(e["epsilon"], eps0):
        _fail(field, f"is {e.get('release')!r} by {e.get('mechanism')!r} at epsilon {e.get('epsilon')!r}",
              f"{what} by {COUNT_MECHANISM!r}, sensitivity 1, epsilon {eps0!r}")
    from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism

    want = DiscreteLaplaceMechanism(eps0).scale  # exactly the mechanism's: a larger one would claim more noise
    if not (_is_num(e.get("scale")) and _close(e["scale"], want)):
        _fail(f"{field}.scale", f"is {e.get('scale')!r}", f"{want!r}, the discrete Laplace scale at epsilon {eps0!r}")
    _check_declared_curve(e, field, {"kind": "discrete-laplace", "parameter": eps0, "sensitivity": 1})


def _check_stump(h, field: str, d: int) -> None:
    if not (isinstance(h, list) and len(h) == 2 and all(_is_int(v) for v in h)):
        _fail(field, f"is {h!r}", "a stump [feature, sign] of two ints")
    if not -1 <= h[0] < d:
        _fail(field, f"has feature {h[0]}", f"a feature index in [-1, {d}) (-1: constant)")
    if h[1] not in (-1, 1):
        _fail(field, f"has sign {h[1]}", "+1 or -1")


def _check_joint_tree_params(p: dict) -> None:
    from dpglass.models._weak_learners import JOINT_TREE_DEPTH

    if p["tree_nodes"] not in JOINT_TREE_DEPTH:
        _fail("params.tree_nodes", f"is {p['tree_nodes']!r}",
              f"one of {sorted(JOINT_TREE_DEPTH)} with tree_learner='joint'")
    if p.get("variant") == "paper":
        _fail("params.variant", "is 'paper'",
              "'corrected' with tree_learner='joint' (paper 002 calibrates top-down trees)")


def _check_joint_tree_shape(t: dict, field: str) -> None:
    """A joint tree is the complete tree of its depth, nodes in breadth-first order (``_joint_tree``)."""
    m = len(t["feature"])
    internal = (m - 1) // 2
    left = [2 * k + 1 if k < internal else -1 for k in range(m)]
    right = [2 * k + 2 if k < internal else -1 for k in range(m)]
    if t["left"] != left or t["right"] != right:
        _fail(f"{field}.left/right", f"are {t['left']}, {t['right']}", f"the complete tree's {left}, {right}")
    if any(f < 0 for f in t["feature"][:internal]):
        _fail(f"{field}.feature", f"is {t['feature']}", f"split features at the first {internal} nodes")


def _check_tree(t, field: str, d: int, n_internal: int) -> None:
    keys = ("feature", "left", "right", "value")
    if not isinstance(t, dict):
        _fail(field, f"is {t!r}", "a tree {feature, left, right, value}")
    arrays = [_need(t, k, f"{field}.{k}", list, "a list of ints") for k in keys]
    m = len(arrays[0])
    if m == 0 or any(len(a) != m for a in arrays) or not all(_is_int(v) for a in arrays for v in a):
        _fail(field, "has arrays " + ", ".join(f"{k}[{len(a)}]" for k, a in zip(keys, arrays)),
              "four non-empty lists of ints of equal length")
    feature, left, right, value = arrays
    for k in range(m):
        if not -1 <= feature[k] < d:
            _fail(f"{field}.feature[{k}]", f"is {feature[k]}", f"a feature index in [-1, {d}) (-1: leaf)")
        if feature[k] < 0 and (value[k] not in (-1, 1) or left[k] != -1 or right[k] != -1):
            _fail(f"{field}[{k}]", f"is a leaf with value {value[k]}, children {left[k]}, {right[k]}",
                  "value +1 or -1 and children -1")
        if feature[k] >= 0 and not (0 <= left[k] < m and 0 <= right[k] < m):
            _fail(f"{field}[{k}]", f"has children {left[k]}, {right[k]}", f"node indices in [0, {m})")
        if feature[k] >= 0 and value[k] != 0:  # the learners write 0: any other integer would carry data
            _fail(f"{field}.value[{k}]", f"is {value[k]} at a split node", "0 (only leaves hold a label)")
    seen, stack = [False] * m, [0]
    seen[0] = True
    while stack:
        k = stack.pop()
        for child in ((left[k], right[k]) if feature[k] >= 0 else ()):
            if seen[child]:
                _fail(f"{field}.left/right", f"reach node {child} twice (a cycle or a shared node)",
                      "a tree rooted at node 0")
            seen[child] = True
            stack.append(child)
    if not all(seen):
        _fail(field, f"has node {seen.index(False)} unreachable from the root", "a tree rooted at node 0")
    internal = sum(1 for f in feature if f >= 0)
    if internal != n_internal:
        _fail(field, f"has {internal} internal nodes", f"params.tree_nodes = {n_internal}")


def _boosting_round_releases(p: dict, eps_round: float) -> list[tuple[str, str, float, str]]:
    """(release, mechanism, epsilon, guarantee) of every entry smooth_boost writes under basic composition.

    ``variant="paper"`` (where the class has it) calibrates tree splits to paper 002's
    unproven Lemma 15: those entries must say ``paper-claim``.
    """
    out = []
    nodes = int(p["tree_nodes"])
    split_guarantee = "paper-claim" if p.get("variant") == "paper" else "proven"
    for t in range(1, int(p["n_rounds"]) + 1):
        if p["weak_learner"] == "stump":
            out.append((f"round {t}: stump", "exponential", eps_round, "proven"))
            continue
        if p["tree_learner"] == "joint":
            out.append((f"round {t}: tree (splits and leaf labels)", "exponential", eps_round, "proven"))
            continue
        split = (f"round {t}: tree split (leaf, feature)", "exponential", eps_round / (2.0 * nodes), split_guarantee)
        out += [split] * nodes
        out.append((f"round {t}: tree leaf labels", "laplace", eps_round / 2.0, "proven"))
    return out


def _check_boosting_ledger(ctx: _Context, p: dict, eps_round: float, composition: str, delta: float) -> None:
    """``p``: the parameters with ``n_rounds`` resolved."""
    from dpglass.models.boosting import advanced_composition_epsilon

    entries = ctx.entries
    expected = _boosting_round_releases(p, eps_round)
    if composition == "advanced":
        kinds = {}
        for _, mech, *_ in expected:
            kinds[mech] = kinds.get(mech, 0) + 1
        mech = "advanced-composition(" + ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items())) + ")"
        release = f"{p['n_rounds']} boosting rounds ({p['weak_learner']} weak learner)"
        weakest = max((g for *_, g in expected), key=_GUARANTEE_RANK.get)
        expected = [(release, mech, advanced_composition_epsilon(eps_round, int(p["n_rounds"]), delta), weakest)]
    if len(entries) != len(expected):
        _fail("privacy_ledger.entries", f"has {len(entries)} releases",
              f"{len(expected)} for {composition} composition of these n_rounds/weak_learner/tree_nodes")
    for i, (e, (release, mech, eps, guarantee)) in enumerate(zip(entries, expected)):
        field = f"privacy_ledger.entries[{i}]"
        if e["release"] != release or e["mechanism"] != mech:
            _fail(field, f"is {e['release']!r} by {e['mechanism']!r}", f"{release!r} by {mech!r}")
        if not _close(e["epsilon"], eps):
            _fail(f"{field}.epsilon", f"is {e['epsilon']!r}", f"{eps!r} ({composition} composition split)")
        want_delta = delta if composition == "advanced" else 0.0
        if not (e.get("delta", 0.0) == want_delta or _close(e.get("delta", 0.0), want_delta)):
            _fail(f"{field}.delta", f"is {e.get('delta')!r}", repr(want_delta))
        joint_or_stump = p["weak_learner"] == "stump" or p.get("tree_learner") == "joint"
        if mech == "exponential" and joint_or_stump and e.get("sensitivity") not in (None, 1.0):
            # their utility is minus the smooth-weighted error: sensitivity 1 (docs/privacy.md)
            _fail(f"{field}.sensitivity", f"is {e.get('sensitivity')!r}", "1 (the weighted error's sensitivity)")
        if mech == "laplace" and e.get("sensitivity") is not None:
            _check_noise_scale(e, field, e["sensitivity"], e["epsilon"])
        _check_declared_curve(e, field, {"kind": "bounded-range", "epsilon": float(e["epsilon"])}
                              if mech == "exponential" else None)
        if _GUARANTEE_RANK.get(e.get("guarantee", "proven"), 0) < _GUARANTEE_RANK[guarantee]:
            _fail(f"{field}.guarantee", f"is {e.get('guarantee')!r}", f"{guarantee!r} for these parameters")


# ------------------------------------------------------------- logistic
def _check_logistic(data: dict, ctx: _Context) -> None:
    """Shape and finiteness of whatever coefficient fields the file holds (names read defensively)."""
    coef_keys = [k for k in data if "coef" in k.lower()]
    vectors = [k for k in coef_keys if isinstance(data[k], list)]
    if not vectors:
        _fail("coef", "is missing", f"the {ctx.d} coefficients of the model")
    for key in coef_keys:
        value = data[key]
        if isinstance(value, list):
            if len(value) != ctx.d or not all(_is_num(v) for v in value):
                _fail(key, f"has {len(value)} entries", f"{ctx.d} finite numbers (n_features_in)")
        elif not _is_num(value):
            _fail(key, f"is {value!r}", "a finite number")
    for key in (k for k in data if "intercept" in k.lower()):
        value = data[key]
        values = value if isinstance(value, list) else [value]
        if not all(_is_num(v) for v in values):
            _fail(key, f"is {value!r}", "a finite number")
    if not ctx.params.get("fit_intercept", True) and (data.get("intercept") != 0.0 or any(
            e.get("mechanism") == COUNT_MECHANISM for e in ctx.entries)):
        _fail("intercept", f"is {data.get('intercept')!r}", "0 with no class counts (fit_intercept=false)")
    if "class_counts" in data:
        _check_logistic_offset(data, ctx)
    elif ("intercept_grid" in data or ctx.params.get("alpha") == "auto"
          or any(e.get("mechanism") == COUNT_MECHANISM for e in ctx.entries)):  # only files from before the offset lack it
        _fail("class_counts", "is missing", "the released class counts (every file since the class-count offset)")
    if ctx.ledger is not None:  # its own fit (a selection's file is checked by its selection): replay the plan
        from dpglass.models.logistic import release_plan
        from dpglass.privacy.plan import check_against_plan

        try:
            plan = release_plan(ctx.params, ctx.d)
        except (InvalidParameterError, TypeError, ValueError) as err:
            _fail("params", f"give no release plan ({err})", "the parameters of a fit that ran")
        check_against_plan(ctx.entries, plan, data, _fail)
        if data.get("grid_step") != plan[-1].domain.step:
            _fail("grid_step", f"is {data.get('grid_step')!r}", f"{plan[-1].domain.step!r}, the plan's grid")


def _check_logistic_offset(data: dict, ctx: _Context) -> None:
    """DPLogisticRegression: the intercept is the grid coordinate plus the log-odds of the released class counts
    (derived values: recomputed from the releases)."""
    from dpglass.models.logistic import class_offset

    counts, p = data["class_counts"], ctx.params
    if not p.get("fit_intercept", True):
        if counts is not None:
            _fail("class_counts", f"is {counts!r}", "null with fit_intercept=false")
        return
    if not (isinstance(counts, list) and len(counts) == 2 and all(_is_count(c) for c in counts)):
        _fail("class_counts", f"is {counts!r}", "the two released noisy class counts (integers)")
    grid = _need_num(data, "intercept_grid", "intercept_grid")
    if data.get("intercept") != grid + class_offset(counts):
        _fail("intercept", f"is {data.get('intercept')!r}",
              f"intercept_grid + the offset of class_counts = {grid + class_offset(counts)!r}")


def _check_errors_list_ledger(data: dict, ctx: _Context) -> None:
    """errors-pf: the ledger is the release plan (``errors_plan``) replayed from the parameters and the stop it
    released (1..K selections, the rules they chose), and every released count is an integer."""
    from dpglass.models._errors_rule_list import errors_plan
    from dpglass.privacy.plan import check_against_plan

    p, entries = ctx.params, ctx.entries
    K, eps = p["max_length"], float(p["epsilon"])
    if (p.get("min_support") not in (None, 0, 0.0) or p.get("confidence") is not None
            or p.get("variant", "corrected") != "corrected" or p.get("count_noise", "laplace") != "laplace"):
        _fail("params", "set min_support, confidence, variant or count_noise",
              "none of them with mechanism='errors-pf'")
    if ctx.ledger.accountant != "basic":
        _fail("privacy_ledger.accountant", f"is {ctx.ledger.accountant!r}", "'basic' for mechanism='errors-pf'")
    n_sel, n_rules, stop = len(entries) - 1, len(data["rules"]), data["stop_reason"]
    if not 1 <= n_sel <= K:
        _fail("privacy_ledger.entries", f"has {len(entries)} releases", f"1 to {K} selections, then the class counts")
    if not ((n_rules == n_sel == K and stop == "max_length") or (n_rules == n_sel - 1 and stop == "no improvement")):
        _fail("rules", f"has {n_rules} rules (stop_reason {stop!r}) after {n_sel} selections",
              f"{n_sel} rules ('max_length', when {n_sel} = max_length) or {n_sel - 1} ('no improvement')")
    check_against_plan(entries, errors_plan(eps, K, n_sel, n_rules), data, _fail)


def _check_gbdt(data, ctx, fail, is_num):
    from dpglass.models._verify_gbdt import check_gbdt

    check_gbdt(data, ctx, fail, is_num)


def _check_ldp(data, ctx):
    from dpglass.models._verify_ldp import check_ldp

    check_ldp(data, ctx, _fail, _is_count)


def _check_bagging(kind: str):
    """The check of DP-Bag (``"dpbag"``) or subsample-and-aggregate (``"saa"``): ``dpglass.models._verify_bagging``."""

    def check(data, ctx):
        from types import SimpleNamespace

        from dpglass.models import _verify_bagging

        helpers = SimpleNamespace(fail=_fail, is_num=_is_num, need=_need, need_num=_need_num, close=_close,
                                  resolved=_resolved_delta)
        getattr(_verify_bagging, f"check_{kind}")(data, ctx, helpers)

    return check


#: Model-specific checks by class name: state (and, given the model's own
#: ledger, the ledger's consistency with the parameters).  A new model adds one.
#: LDPHistogramClassifier is outside the registry (no central ledger: its reports' sums).
MODEL_CHECKS = {
    "GreedyRuleListClassifier": _check_rule_list,
    "DPRuleListClassifier": _check_rule_list,
    "SmoothBoostClassifier": _check_boosting,
    "DPLogisticRegression": _check_logistic,
    "DPGradientBoostingClassifier": lambda data, ctx: _check_gbdt(data, ctx, _fail, _is_num),
    "DPBaggingClassifier": _check_bagging("dpbag"),
    "SubsampleAggregateClassifier": _check_bagging("saa"),
    "LDPHistogramClassifier": _check_ldp,
}


# ------------------------------------------------------ dpglass inspect
def read_model_file(path):
    """Read, identify and verify a model file: ``(data, cls, registry names)``.

    Raises
    ------
    ModelFileError
        If the file is unreadable, names no registered model, or fails
        :func:`verify_model_dict` (the message starts with the path).
    """
    from dpglass.registry import list_estimators

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"{path}: could not read a dpglass model file ({exc}).") from None
    model = data.get("model") if isinstance(data, dict) else None
    cls = model_class(model)
    if cls is None:
        raise ModelFileError(f"{path}: 'model' is {model!r}, not a dpglass model (the registry's models, "
                             f"DPPipeline and LDPHistogramClassifier). {ADVICE}")
    try:
        verify_model_dict(data, cls)
        cls.from_dict(data)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    if model == "DPPipeline":  # a schema's encoder and a registered model: name the model
        inner = data["inner_model"]
        return data, cls, [f"encoder + {name}" for name in _registry_names(inner, list_estimators())]
    return data, cls, _registry_names(data, list_estimators())


def model_class(model):
    """The class a model file names: a registered model's, or one of the two outside the registry (the table
    pipeline and the local-DP classifier); None if dpglass has no such model.  ``load_model`` and
    ``dpglass inspect`` both read files through it."""
    if model == "DPPipeline":
        from dpglass.models.pipeline import DPPipeline

        return DPPipeline
    if model == "LDPHistogramClassifier":
        from dpglass.local import LDPHistogramClassifier

        return LDPHistogramClassifier
    from dpglass.registry import list_estimators

    return next((s.cls for s in list_estimators() if s.cls.__name__ == model), None)


def _registry_names(data: dict, specs) -> list:
    """The registry names whose class and parameters the file's model has (else every name of its class)."""
    specs = [s for s in specs if s.cls.__name__ == data.get("model")]
    params = data.get("params", {})
    names = [s.name for s in specs if all(params.get(k) == v for k, v in s.params.items())]
    return names or [s.name for s in specs]


def format_model_report(data: dict, cls, registry_names=()) -> str:
    """What an auditor reads about a verified model file (``dpglass inspect``)."""
    names = f" (registry: {', '.join(registry_names)})" if registry_names else ""
    lines = [f"model: {cls.__name__}{names}",
             f"features: {data['n_features_in']}; classes: {', '.join(map(str, data['classes']))}"]
    raw = data.get("privacy_ledger")
    if raw is None:  # a local-DP model states its own guarantee (no central ledger)
        summary = getattr(cls, "_privacy_summary", None)
        lines.append(summary(data) if summary else "privacy: none (non-private model, no ledger)")
        return "\n".join(lines)
    ledger = PrivacyLedger.from_dict(raw)
    lines += [f"guarantee: {ledger.guarantee}",
              f"budget: epsilon={_fmt(ledger.epsilon)}, delta={_fmt(ledger.delta)}",
              f"composed by: {ledger.accountant} ("
              + ("epsilons and deltas add up" if ledger.accountant == "basic" else
                 "the entries' curves compose to the total below; their epsilons do not add up to it") + ")"]
    if "selected_by" in data:
        sel = data["selected_by"]
        lines.append(f"selected by: private selection ({sel['method']}), best_params={sel['best_params']}")
    lines.append(f"releases ({len(ledger)}):")
    lines += ["  " + row for row in _release_table(ledger)]
    eps, delta = ledger.total()
    lines.append(f"total (recomputed): epsilon={_fmt(eps)}, delta={_fmt(delta)} "
                 f"<= budget epsilon={_fmt(ledger.epsilon)}, delta={_fmt(ledger.delta)} "
                 f"(recorded total: epsilon={_fmt(raw['total']['epsilon'])}, delta={_fmt(raw['total']['delta'])})")
    flag = raw.get("replayable")
    replay = "unknown (file predates the flag)" if flag is None else ("yes" if flag else "no")
    lines.append(f"replayable noise: {replay}")
    return "\n".join(lines)


def _release_table(ledger: PrivacyLedger) -> list[str]:
    head = ("#", "release", "mechanism", "epsilon", "delta", "sensitivity", "scale", "guarantee", "records")
    rows = [head]
    for i, e in enumerate(ledger, 1):
        records = "all" if e.partition is None else f"{e.partition}: {e.part}"
        rows.append((str(i), e.release, e.mechanism, _fmt(e.epsilon), _fmt(e.delta), _fmt(e.sensitivity),
                     _fmt(e.scale), e.guarantee, records))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
