"""SmoothBoostClassifier's model-file checks: the committee's stumps or trees and the rounds' releases."""

from __future__ import annotations

import dataclasses


from dpglass.models._file_checks import (
    COUNT_MECHANISM, _GUARANTEE_RANK, _Context, _check_declared_curve, _check_noise_scale, _close, _fail,
    _is_count, _is_int, _is_num, _need, _need_num, _resolved_delta,
)


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
