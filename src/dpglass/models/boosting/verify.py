"""SmoothBoostClassifier's model-file checks: the committee's stumps or trees, then the family's release plan.

In order:

* structure: as many hypotheses as the plan's rounds, each a stump
  ``[feature, sign]`` (two classes) or ``[feature, hi, lo]`` (K > 2 classes)
  or a tree (four int arrays, rooted at node 0, labels at the leaves, ±1 for
  two classes and class codes for more, 0 at the splits, ``tree_nodes``
  internal nodes; a
  joint tree in the complete layout of its depth, a top-down tree in
  DP-TopDown's: split s makes nodes 2s + 1 and 2s + 2);
* the release plan (:func:`dpglass.models.boosting.plan.boost_plan`),
  rebuilt from the file's parameters, ``n_features_in``, its classes and, where the
  committee size comes from a noisy count, ``records_estimate``, is replayed
  (:func:`~dpglass.privacy.plan.check_against_plan`): the ledger is the plan,
  entry for entry, and every released value lies in its step's public
  domain (the count an integer, each stump among the 2d + 2, each joint tree
  among the complete trees with every labelling, each top-down split a (leaf
  position, feature) pair, the leaf labels ±1; under advanced composition
  through the one step's parts);
* derived values: the resolved delta, ``round_epsilon``, ``composition`` and
  the ledger's accountant are the plan's; the classes are the declared
  ``params.classes`` (in order) when there are some.

A file written by a model selection holds no ledger of its own: only the
domains are checked.  The verifier has no copy of the budget arithmetic.
"""

from __future__ import annotations

from dpglass.models._file_checks import (
    _Context, _close, _fail, _is_count, _is_int, _need, _need_num, _replay_plan, _rule_version,
)


def _check_boosting(data: dict, ctx: _Context) -> None:
    from dpglass.exceptions import InvalidParameterError
    from dpglass.models.boosting.plan import boost_plan, counts_records, resolved_delta

    p = ctx.params
    delta = _need_num(data, "delta", "delta", "the resolved delta, a number in [0, 1)")
    counted = counts_records(p["n_rounds"], p["weak_learner"], p["tree_learner"], resolved_delta(p), p["accountant"])
    estimate = _check_records_estimate(data, counted)
    learner = "stump" if p["weak_learner"] == "stump" else p["tree_learner"]
    if learner == "joint":
        _check_joint_tree_params(p)
    K = len(data["classes"])  # the label set (2 to _max_classes, checked by _verify): the candidates' labels
    try:
        plan = boost_plan(p, ctx.d, estimate, K)
    except (InvalidParameterError, TypeError, ValueError) as exc:
        _fail("params", f"give no release plan ({exc})", "the parameters of a fit that ran")
    hyps = _need(data, "estimators", "estimators", list, f"the {plan.n_rounds} hypotheses")
    if len(hyps) != plan.n_rounds:
        _fail("estimators", f"has {len(hyps)} hypotheses", f"{plan.n_rounds}, the plan's rounds (params.n_rounds)")
    for i, h in enumerate(hyps):
        _check_hypothesis(h, f"estimators[{i}]", learner, ctx.d, int(p["tree_nodes"]), K)
    _check_derived(data, ctx, plan, delta)
    _check_rule(data, plan)
    view = _released(data, plan)
    _replay_plan(ctx, plan.steps, view)  # the accountant: _check_derived


def _check_rule(data: dict, plan) -> None:
    """``rule``: absent (rule 1: the full learning rate; every file before rule 2, and every file where rule 2 does
    not apply), or :data:`~dpglass.models.boosting.plan.BOOST_RULE` where the plan's committee is a short counted
    one (:func:`~dpglass.models.boosting.plan.learning_rate_scale`).  Any other value is refused."""
    from dpglass.models.boosting.plan import BOOST_RULE

    rule = _rule_version(data, "rule", (1, BOOST_RULE))
    if rule != 1 and plan.learning_rate_scale == 1.0:
        _fail("rule", f"is {rule!r}", "absent: rule 2 applies only to a short counted committee of stumps "
              f"(records_estimate gives {plan.n_rounds} rounds)")


def _check_records_estimate(data: dict, counted: bool) -> int | None:
    """``records_estimate``: the released noisy count of records where the committee size comes from one (an
    integer: the plan's rounds are a function of it), else null."""
    estimate = data.get("records_estimate")
    if not counted:
        if estimate is not None:
            _fail("records_estimate", f"is {estimate!r}", "null (n_rounds is not resolved from a count here)")
        return None
    if not _is_count(estimate):
        _fail("records_estimate", f"is {estimate!r}", "the released noisy count of records (an integer)")
    return estimate


def _check_derived(data: dict, ctx: _Context, plan, delta: float) -> None:
    """delta, round_epsilon, composition and the ledger's accountant and delta are the plan's."""
    if not 0 <= delta < 1 or not (_close(delta, plan.delta) or delta == plan.delta):
        _fail("delta", f"is {delta!r}", f"the resolved params.delta = {plan.delta!r}, in [0, 1)")
    if ctx.ledger is not None and ctx.ledger.accountant != plan.accountant:
        _fail("privacy_ledger.accountant", f"is {ctx.ledger.accountant!r}", f"{plan.accountant!r}, the plan's")
    if not _close(_need_num(data, "round_epsilon", "round_epsilon"), plan.round_epsilon):
        _fail("round_epsilon", f"is {data['round_epsilon']!r}", f"{plan.round_epsilon!r}, the plan's")
    if _need(data, "composition", "composition", str, "'basic', 'advanced', 'pld' or 'rdp'") != plan.composition:
        _fail("composition", f"is {data['composition']!r}", f"{plan.composition!r}, the plan's")
    if ctx.ledger is not None and not (_close(ctx.ledger.delta, delta) or ctx.ledger.delta == delta):
        _fail("privacy_ledger.budget.delta", f"is {ctx.ledger.delta!r}", f"the model's delta = {delta!r}")


def _released(data: dict, plan) -> dict:
    """The file's released values by the plan's field names: the count, each round's stump or joint tree (split
    features, then leaf labels), each top-down tree's (leaf position, feature) splits and its leaf labels."""
    from dpglass.models.boosting.plan import labels_field, round_field, split_field

    view = {"records_estimate": data.get("records_estimate")}
    for t, h in enumerate(data["estimators"]):
        if plan.learner == "stump":
            view[round_field(t)] = [tuple(h)]
        elif plan.learner == "joint":
            internal = (len(h["feature"]) - 1) // 2
            view[round_field(t)] = [(*h["feature"][:internal], *h["value"][internal:])]
        else:
            splits, labels = _top_down_releases(h, f"estimators[{t}]")
            view.update({split_field(t, s): [pair] for s, pair in enumerate(splits)})
            view[labels_field(t)] = labels
    return view


def _top_down_releases(t: dict, field: str) -> tuple[list, list]:
    """A DP-TopDown tree's releases, replaying its growth: split s makes nodes 2s + 1 and 2s + 2 from one of the
    leaves, released as (its position among the leaves, feature); then the leaves' labels, in the fit's order."""
    feature, left, right = t["feature"], t["left"], t["right"]
    leaves, splits = [0], []
    for s in range((len(feature) - 1) // 2):
        lo = 2 * s + 1
        node = next((k for k in leaves if feature[k] >= 0 and left[k] == lo and right[k] == lo + 1), None)
        if node is None:
            _fail(f"{field}.left/right", f"make no leaf the parent of nodes {lo}, {lo + 1}",
                  "DP-TopDown's layout: split s (from 0) turns a leaf into nodes 2s + 1 and 2s + 2")
        splits.append((leaves.index(node), feature[node]))
        leaves.remove(node)
        leaves += [lo, lo + 1]
    return splits, [t["value"][k] for k in leaves]


def _check_hypothesis(h, field: str, learner: str, d: int, tree_nodes: int, n_classes: int = 2) -> None:
    if learner == "stump":
        _check_stump(h, field, d, n_classes)
        return
    _check_tree(h, field, d, tree_nodes, n_classes)
    if learner == "joint":
        _check_joint_tree_shape(h, field)


def _check_stump(h, field: str, d: int, n_classes: int = 2) -> None:
    if n_classes > 2:
        _check_class_stump(h, field, d, n_classes)
        return
    if not (isinstance(h, list) and len(h) == 2 and all(_is_int(v) for v in h)):
        _fail(field, f"is {h!r}", "a stump [feature, sign] of two ints")
    if not -1 <= h[0] < d:
        _fail(field, f"has feature {h[0]}", f"a feature index in [-1, {d}) (-1: constant)")
    if h[1] not in (-1, 1):
        _fail(field, f"has sign {h[1]}", "+1 or -1")


def _check_class_stump(h, field: str, d: int, n_classes: int) -> None:
    """A stump of K > 2 classes: [feature, class where it is 1, another class where it is 0], or [-1, c, c]."""
    if not (isinstance(h, list) and len(h) == 3 and all(_is_int(v) for v in h)):
        _fail(field, f"is {h!r}", f"a stump [feature, class if 1, class if 0] of three ints ({n_classes} classes)")
    if not -1 <= h[0] < d:
        _fail(field, f"has feature {h[0]}", f"a feature index in [-1, {d}) (-1: constant)")
    for v in h[1:]:
        if not 0 <= v < n_classes:
            _fail(field, f"votes for class {v}", f"a class code in [0, {n_classes})")
    if (h[0] < 0) != (h[1] == h[2]):
        _fail(field, f"is {h!r}", "two different classes for a feature, the same class twice for a constant")


def _check_joint_tree_params(p: dict) -> None:
    from dpglass.models.boosting.weak_learners import JOINT_TREE_DEPTH

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


def _check_tree(t, field: str, d: int, n_internal: int, n_classes: int = 2) -> None:
    keys = ("feature", "left", "right", "value")
    if not isinstance(t, dict):
        _fail(field, f"is {t!r}", "a tree {feature, left, right, value}")
    arrays = [_need(t, k, f"{field}.{k}", list, "a list of ints") for k in keys]
    m = len(arrays[0])
    if m == 0 or any(len(a) != m for a in arrays) or not all(_is_int(v) for a in arrays for v in a):
        _fail(field, "has arrays " + ", ".join(f"{k}[{len(a)}]" for k, a in zip(keys, arrays)),
              "four non-empty lists of ints of equal length")
    feature, left, right, value = arrays
    labels = (-1, 1) if n_classes == 2 else range(n_classes)
    what = "value +1 or -1" if n_classes == 2 else f"a class code in [0, {n_classes})"
    for k in range(m):
        if not -1 <= feature[k] < d:
            _fail(f"{field}.feature[{k}]", f"is {feature[k]}", f"a feature index in [-1, {d}) (-1: leaf)")
        if feature[k] < 0 and (value[k] not in labels or left[k] != -1 or right[k] != -1):
            _fail(f"{field}[{k}]", f"is a leaf with value {value[k]}, children {left[k]}, {right[k]}",
                  f"{what} and children -1")
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
