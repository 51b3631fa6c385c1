"""DPRuleListClassifier's model-file checks: the rules, their conditions and counts, and the releases (errors-pf's
release plan replayed; the Gini mechanisms' sequence)."""

from __future__ import annotations

import numbers

import numpy as np

from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass.models._file_checks import _Context, _fail, _is_count, _is_num, _need, _resolved_delta
from dpglass.models.rule_list.rules import majority


#: Mechanism names each private model writes into its ledger (a name ending in
#: "(" is a prefix).  Both the float-Laplace names of earlier versions and the
#: discrete-Laplace names of the current ones are accepted.  PrivateGridSearch's
#: entry is accepted on files that carry ``selected_by``.
RULE_LIST_COUNT_NAMES = ("laplace", "discrete laplace", "discrete gaussian")


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


_STOP_REASONS = ("max_length", "minimum support", "no improvement")


def _check_rule_list(data: dict, ctx: _Context) -> None:
    rules = _need(data, "rules", "rules", list, "the list of rules")
    default = _need(data, "default_rule", "default_rule", dict, "the default rule")
    stop = _need(data, "stop_reason", "stop_reason", str, f"one of {_STOP_REASONS}")
    if stop not in _STOP_REASONS:
        _fail("stop_reason", f"is {stop!r}", f"one of {_STOP_REASONS}")
    if len(rules) > ctx.params["max_length"]:
        _fail("rules", f"has {len(rules)} rules", f"at most params.max_length = {ctx.params['max_length']}")
    n_classes = len(data["classes"])  # 2 to _max_classes, checked by _verify
    noisy = bool(getattr(ctx.cls, "_noisy", False))
    for i, rule in enumerate(rules):
        _check_rule(rule, f"rules[{i}]", ctx, noisy, is_default=False, n_classes=n_classes)
    _check_rule(default, "default_rule", ctx, noisy, is_default=True, n_classes=n_classes)
    _check_rule_candidates(rules, ctx)
    if ctx.params.get("mechanism") == "errors-pf":
        if ctx.ledger is not None:  # (in a selection's file its counts are checked as integers above)
            _check_errors_list_ledger(data, ctx, n_classes)
    elif noisy:
        # its plan, and without a ledger of its own (a selection's file) its values
        _check_rule_list_ledger(data, ctx, n_classes)


def _check_rule(rule, field: str, ctx: _Context, noisy: bool, is_default: bool, n_classes: int) -> None:
    if not isinstance(rule, dict):
        _fail(field, f"is {rule!r}", "an object with conditions, prediction, counts, noisy")
    _only_keys(rule, field, ("conditions", "prediction", "counts", "noisy"))
    conds = _need(rule, "conditions", f"{field}.conditions", list, "the rule's conditions")
    max_card = ctx.params["max_card"]
    if is_default and conds:
        _fail(f"{field}.conditions", f"has {len(conds)} conditions", "none (the default rule)")
    if not is_default and not 1 <= len(conds) <= max_card:
        _fail(f"{field}.conditions", f"has {len(conds)} conditions", f"1 to params.max_card = {max_card}")
    for j, cond in enumerate(conds):
        _check_condition(cond, f"{field}.conditions[{j}]", ctx)
    K = n_classes
    counts = _need(rule, "counts", f"{field}.counts", list, f"{K} class counts, one per class")
    if len(counts) != K or not all(_is_num(c) and float(c).is_integer() for c in counts):
        _fail(f"{field}.counts", f"is {counts!r}", f"{K} integers, one per class (released counts are integers)")
    if not noisy and min(counts) < 0:
        _fail(f"{field}.counts", f"is {counts!r}", f"{K} counts of records (>= 0; a non-private list has no noise)")
    if _need(rule, "noisy", f"{field}.noisy", bool, "true or false") != noisy:
        _fail(f"{field}.noisy", f"is {rule['noisy']!r}", f"{noisy} for a {ctx.cls.__name__}")
    pred = _need(rule, "prediction", f"{field}.prediction", numbers.Integral, f"a class index 0..{K - 1}")
    want = majority(counts, noisy)
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


def _only_keys(obj: dict, field: str, keys: tuple) -> None:
    """A released object holds the fields dpglass writes and nothing else (no room for data)."""
    extra = sorted(set(obj) - set(keys))
    if extra:
        _fail(f"{field}.{extra[0]}", "is not a field dpglass writes", f"only {list(keys)}")


def _check_condition(cond, field: str, ctx: _Context) -> None:
    if not isinstance(cond, dict):
        _fail(field, f"is {cond!r}", "an object with feature, name, value")
    _only_keys(cond, field, ("feature", "name", "value"))
    feature = _need(cond, "feature", f"{field}.feature", numbers.Integral, "a feature index (int)")
    if not 0 <= feature < ctx.d:
        _fail(f"{field}.feature", f"is {feature}", f"a feature index in [0, {ctx.d})")
    name = _need(cond, "name", f"{field}.name", str, "the feature's name")
    if name != ctx.names[feature]:
        _fail(f"{field}.name", f"is {name!r}", f"{ctx.names[feature]!r}, feature_names[{feature}]")
    _need(cond, "value", f"{field}.value", bool, "true (x = 1) or false (x = 0)")


def _check_rule_list_ledger(data: dict, ctx: _Context, n_classes: int) -> None:
    """The Gini mechanisms: the ledger is the release plan (``gini_steps``) replayed from the parameters and the
    values that select its branches (the file's remaining counts and rules), entry for entry; every released
    count lies in its domain, and the list stops where the plan says, for the reason it gives."""
    from dpglass.models.rule_list.gini_plan import COUNT_NOISES, GiniListConfig, resolve_min_support
    from dpglass.privacy.plan import check_against_plan, check_domains

    p, entries, own = ctx.params, ctx.entries, ctx.ledger is not None
    if p.get("count_noise", "laplace") not in COUNT_NOISES:
        _fail("params.count_noise", f"is {p.get('count_noise')!r}", f"one of {COUNT_NOISES}")
    delta = ctx.ledger.delta if own else _resolved_delta(p)
    cfg = GiniListConfig(
        epsilon=float(p["epsilon"]), delta=delta, K=int(p["max_length"]), mechanism=p["mechanism"],
        min_support=resolve_min_support(p["mechanism"], p["min_support"]), confidence=p["confidence"],
        gamma=4.0 if p["gamma"] is None else float(p["gamma"]), variant=p["variant"], accountant=p["accountant"],
        count_noise=p.get("count_noise", "laplace"), n_classes=n_classes)
    try:
        accountant = cfg.budget[2]
    except InvalidParameterError as exc:
        _fail("params", f"cannot be composed ({exc})", "parameters a DPRuleListClassifier accepts")
    if own and ctx.ledger.accountant != accountant:
        _fail("privacy_ledger.accountant", f"is {ctx.ledger.accountant!r}", f"{accountant!r} for these parameters")
    if cfg.plan.spends_delta and delta <= 0:
        _fail("privacy_ledger.budget.delta", "is 0", f"> 0: mechanism={p['mechanism']!r} spends delta")
    counts = data.get("remaining_counts")
    if not (isinstance(counts, list) and all(_is_count(c) for c in counts)):
        _fail("remaining_counts", f"is {counts!r}", "the released noisy remaining counts (integers), one per step")
    steps, stop, n_rules = _replay(cfg, data, ctx, counts)
    if own:
        check_against_plan(entries, steps, data, _fail)
    else:
        check_domains(steps, data, _fail)
    if n_rules != len(data["rules"]):
        _fail("rules", f"has {len(data['rules'])} rules", f"{n_rules}, as many as the plan's selected rules")
    if stop != data["stop_reason"]:
        _fail("stop_reason", f"is {data['stop_reason']!r}", f"{stop!r}, where the plan stops on the released values")


def _replay(cfg, data: dict, ctx: _Context, counts: list) -> tuple[list, str, int]:
    """Walk the plan on the file's released values: its remaining counts in order, and selections that chose
    its rules (then "no rule"); ``(steps, stop reason, rules chosen)``."""
    from dpglass.models.rule_list.gini_plan import GiniWalk

    n_candidates = len(ctx.cls(**ctx.params)._candidate_set(ctx.d, list(ctx.names)).literals)
    walk, rules, hats, chosen = GiniWalk(cfg, n_candidates), len(data["rules"]), iter(counts), 0
    while walk.next != "done":
        if walk.next == "count":
            value = next(hats, None)
            if value is None:
                _fail("remaining_counts", f"has {len(counts)} counts", "one per remaining count the plan releases")
            walk.advance(float(value))
        elif walk.next == "select":  # the first len(rules) selections chose the rules, a later one "no rule"
            value = chosen < rules
            chosen += int(value)
            walk.advance(value)
        else:
            walk.advance(None)
    if next(hats, None) is not None:
        used = sum(s.release.endswith("remaining count") for s in walk.steps)
        _fail("remaining_counts", f"has {len(counts)} counts", f"{used}, one per remaining count the plan releases")
    return walk.steps, walk.stop, chosen


def _check_errors_list_ledger(data: dict, ctx: _Context, n_classes: int) -> None:
    """errors-pf: the ledger is the release plan (``errors_plan``) replayed from the parameters and the stop it
    released (1..K selections, the rules they chose), and every released count is an integer."""
    from dpglass.models.rule_list.errors import errors_plan
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
    check_against_plan(entries, errors_plan(eps, K, n_sel, n_rules, n_classes=n_classes), data, _fail)
