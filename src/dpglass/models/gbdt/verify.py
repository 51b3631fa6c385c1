"""Verification of a saved :class:`~dpglass.models.DPGradientBoostingClassifier` file.

Hooked into :data:`dpglass.models._verify.MODEL_CHECKS`.  In order:

* structure and public constants: bounds equal to the parameters', the cut
  points of a 0/1 column (0.5) and of the equal-width grid, ``max_bins - 1``
  sorted quantile cut points, complete trees of ``max_depth`` whose splits
  name features and cuts that exist, as many as the parameters and the
  classes say (K a round for K >= 3 classes, one for two);
* the release plan (:func:`dpglass.models.gbdt.budget.gbdt_plan`), rebuilt
  from the file's parameters, ``n_features_in`` and its K classes, is replayed
  (:func:`~dpglass.privacy.plan.check_against_plan`): the ledger is the plan,
  entry for entry, and every released value the file holds lies in its
  step's public domain (quantile cut points on the quantile's grid, every
  split among the public (feature, cut) candidates);
* derived values: the resolved delta, ``tree_epsilon``, the accountant and
  ``reg_lambda`` are the plan's; leaf values computed from releases the file
  does not hold lie in their public range (newton: the clip, the intercepts'
  without the learning rate; DPBoost: the learning rate times multiples of
  the grid of its round's leaf release, and no intercept).  The intercept is
  a number for two classes and a list of K numbers (one per class) for more.
"""

from __future__ import annotations

import math

from dpglass.models._file_checks import _fail as fail
from dpglass.models._file_checks import _is_num as is_num
from dpglass.models._file_checks import _replay_plan as replay_plan
from dpglass.models.gbdt.releases import scored_classes

__all__ = ["check_gbdt"]


def check_gbdt(data: dict, ctx) -> None:
    """Model-specific checks."""
    from dpglass.exceptions import InvalidParameterError
    from dpglass.models.gbdt.budget import gbdt_plan, resolved_sizes

    p, d = ctx.params, ctx.d
    for key in ("bounds_resolved", "edges", "trees"):
        if not isinstance(data.get(key), list):
            fail(key, "is missing or not a list", "what DPGradientBoostingClassifier.to_dict writes")
    bounds, edges, trees = data["bounds_resolved"], data["edges"], data["trees"]
    if len(bounds) != d or len(edges) != d:
        fail("edges", f"has {len(edges)} entries (bounds {len(bounds)})", f"{d}, one per feature")
    _check_edges(p, d, bounds, edges)
    K = len(data["classes"])
    C = len(scored_classes(K))  # trees a round
    T = resolved_sizes(p)[0]
    if len(trees) != T * C:
        fail("trees", f"has {len(trees)} trees",
             f"params.n_estimators = {T}" + ("" if C == 1 else f" rounds of {C} trees (one per class)"))
    _check_trees(trees, int(p["max_depth"]), [len(e) for e in edges])
    try:
        plan = gbdt_plan(p, d, K)
    except (InvalidParameterError, TypeError, ValueError) as exc:
        fail("params", f"give no release plan ({exc})", "parameters DPGradientBoostingClassifier accepts")
    released = _released(data, plan)
    replay_plan(ctx, plan.steps, released, plan.accountant)
    _check_derived(data, plan)
    _check_leaf_values(data, plan, float(p["max_leaf_value"]))


def _released(data: dict, plan) -> dict:
    """The file's released values by the plan's field names: each numeric column's quantile cut points
    (``edges[j]``) and each tree level's (feature, cut) pairs."""
    from dpglass.models.gbdt.budget import split_field

    out = {f"edges[{j}]": data["edges"][j] for j in plan.public.numeric}
    for i, t in enumerate(data["trees"]):
        for level in range(plan.public.depth):
            nodes = range(2**level - 1, 2 ** (level + 1) - 1)
            out[split_field(i, level)] = [(t["feature"][k], t["cut"][k]) for k in nodes]
    return out


def _check_trees(trees: list, D: int, n_cuts: list) -> None:
    """Complete trees of depth ``D`` whose splits name a feature and one of its cuts, with finite leaf values."""
    d = len(n_cuts)
    for i, t in enumerate(trees):
        f, c, v = t.get("feature"), t.get("cut"), t.get("value")
        if not (isinstance(f, list) and isinstance(c, list) and isinstance(v, list)):
            fail(f"trees[{i}]", "lacks feature, cut or value lists", "a complete tree")
        if len(f) != 2**D - 1 or len(c) != len(f) or len(v) != 2**D:
            fail(f"trees[{i}]", f"has {len(f)} splits and {len(v)} leaves", f"{2**D - 1} and {2**D} (max_depth)")
        if any(not isinstance(x, int) or x < 0 or x >= d for x in f) or any(
                not isinstance(k, int) or k < 0 or k >= n_cuts[x] for x, k in zip(f, c)):
            fail(f"trees[{i}]", "names a feature or cut that does not exist", "indices within n_features_in/edges")
        if not all(is_num(x) for x in v):
            fail(f"trees[{i}].value", "holds a non-finite value", "finite leaf values")


def _check_derived(data: dict, plan) -> None:
    """delta, tree_epsilon and reg_lambda are the plan's (the leaf grids and lambda are built on tree_epsilon);
    with ``intercept_hessian`` (the trees' lambda raised from the intercept's released Hessian sums), those sums
    lie on their release's grid and reg_lambda is the plan's ``tree_lambda`` of them, above the plan's lambda."""
    lam = plan.reg_lambda
    if "intercept_hessian" in data:
        lam = _tree_lambda_of(data["intercept_hessian"], plan)
    for key, want, rel in (("delta", plan.delta, 1e-12), ("tree_epsilon", plan.x, 1e-9),
                           ("reg_lambda", lam, 1e-12)):
        got = data.get(key)
        if not (is_num(got) and math.isclose(got, want, rel_tol=rel, abs_tol=0.0)):
            fail(key, f"is {got!r}", f"{want!r}, the plan's for these parameters ({plan.accountant} composition)")


def _tree_lambda_of(hess, plan) -> float:
    """The trees' lambda of a file's ``intercept_hessian`` (refused off the intercept's Hessian release's grid, or
    where the rule leaves the plan's lambda: then the field has no place in the file)."""
    C = plan.public.per_round
    if plan.public.variant != "newton" or not (isinstance(hess, list) and len(hess) == C
                                                and all(is_num(v) for v in hess)):
        fail("intercept_hessian", f"is {hess!r}", f"{C} released Hessian sum{'s' if C > 1 else ''} of a newton "
             "intercept (or no field)")
    problem = plan.intercept[1].domain.problem(hess)
    if problem is not None:
        fail("intercept_hessian", f"is {hess!r}: {problem}", f"values of the release {plan.intercept[1].release!r}")
    lam = plan.tree_lambda(hess)
    if lam == plan.reg_lambda:
        fail("intercept_hessian", f"is {hess!r}", "absent: these sums leave the trees the plan's lambda "
             f"{plan.reg_lambda!r}")
    return lam


def _check_edges(p: dict, d: int, bounds: list, edges: list) -> None:
    """The bounds are the parameters' (``check_feature_bounds``, as fit resolves them: the grids are built on
    them); 0.5 cuts a 0/1 column; a numeric column is cut at the equal-width grid of its bounds
    (``uniform_edges``, what fit cuts at), or with ``binning="quantile"`` at ``max_bins - 1`` sorted numbers,
    which the plan's replay puts on the DP quantile's public grid."""
    from dpglass.exceptions import InvalidParameterError
    from dpglass.models.gbdt.trees import check_feature_bounds, uniform_edges

    try:
        want = check_feature_bounds(p["bounds"], d, "DPGradientBoostingClassifier")
    except InvalidParameterError as exc:
        fail("params.bounds", f"cannot be resolved ({exc})", f"one entry per feature ({d})")
    if [None if b is None else list(b) for b in want] != bounds:
        fail("bounds_resolved", f"is {bounds!r}", "params.bounds, as fit resolves them (public bounds)")
    nb = int(p["max_bins"])
    quantile = p["binning"] == "quantile" and any(b is not None for b in want)
    for j, (b, e) in enumerate(zip(want, edges)):
        if b is None:
            if e != [0.5]:
                fail(f"edges[{j}]", f"is {e!r}", "[0.5] for a 0/1 column")
        elif not quantile:
            if e != uniform_edges(b[0], b[1], nb).tolist():
                fail(f"edges[{j}]", f"is {e!r}", f"the equal-width grid of bounds {list(b)} with max_bins={nb}: "
                     f"{uniform_edges(b[0], b[1], nb).tolist()!r}")
        elif not (isinstance(e, list) and len(e) == nb - 1 and all(is_num(v) for v in e) and e == sorted(e)):
            fail(f"edges[{j}]", f"is {e!r}", f"max_bins - 1 = {nb - 1} sorted points of the DP quantile grid "
                 f"on the bounds {list(b)}")


def _check_leaf_values(data: dict, plan, max_leaf: float) -> None:
    """Leaf values in their public domain, derived from releases the file does not hold.

    Newton: ``learning_rate * clip(-G/(H + lambda), +-max_leaf_value)`` from
    the noisy sums, so only the clip's range is checked (the intercept's
    without the learning rate).  DPBoost: the learning rate times a multiple
    of the grid of the tree's leaf release (the plan's step for that tree),
    and no intercept (0).
    """
    init, lr, C = data.get("init_score"), plan.public.learning_rate, plan.public.per_round
    inits = [init] if C == 1 and not isinstance(init, list) else init if C > 1 else None
    if not (isinstance(inits, list) and len(inits) == C and all(is_num(v) for v in inits)):
        fail("init_score", f"is {init!r}", "a number" if C == 1 else f"a list of {C} numbers, one per class")
    if plan.public.variant == "newton":
        if any(abs(v) > max_leaf for v in inits):
            fail("init_score", f"is {init!r}", f"{'a number' if C == 1 else 'numbers'} within +-max_leaf_value = "
                 f"{max_leaf!r}")
        for i, t in enumerate(data["trees"]):
            if any(abs(v) > lr * max_leaf for v in t["value"]):
                fail(f"trees[{i}].value", f"is {t['value']!r}",
                     f"values within +-learning_rate * max_leaf_value = {lr * max_leaf!r}")
        return
    if any(v != 0.0 for v in inits):
        fail("init_score", f"is {init!r}", "0 (DPBoost releases no intercept)")
    for i, t in enumerate(data["trees"]):
        g = plan.trees[i // C].leaves[0].domain.step  # its round's step
        if not all(_scaled_grid_point(v, lr, g) for v in t["value"]):
            fail(f"trees[{i}].value", f"is {t['value']!r}", f"learning_rate times multiples of the Laplace grid {g!r} "
                 "of its tree (as fit computes them)")


def _scaled_grid_point(v: float, lr: float, g: float) -> bool:
    """Whether ``v`` is ``lr * (m * g)`` in float64 for an integer ``m`` (fit's ``learning_rate * Vn``)."""
    if lr == 0:
        return v == 0
    u = round(v / lr / g)
    return any(lr * (m * g) == v for m in (u - 1, u, u + 1))
