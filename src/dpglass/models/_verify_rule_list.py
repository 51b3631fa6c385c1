"""DPRuleListClassifier's model-file checks: the rules, their conditions and counts, and the releases (errors-pf's
release plan replayed; the Gini mechanisms' sequence)."""

from __future__ import annotations

import numbers

import numpy as np

from dpglass.exceptions import DataValidationError, InvalidParameterError, ModelFileError
from dpglass.models._file_checks import (
    _GUARANTEE_RANK, _Context, _check_declared_curve, _check_noise_scale, _close, _fail,
    _is_num, _need,
)


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
                             "dpglass.models._verify_rule_list.RULE_LIST_SELECTION_NAMES.")
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
