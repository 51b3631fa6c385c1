"""Verification of a saved :class:`~dpglass.models.DPGradientBoostingClassifier` file.

Hooked into :data:`dpglass.models._verify.MODEL_CHECKS`.  Refuses trees of the
wrong number or depth, splits that name a feature or cut that does not
exist, a released value outside its public domain (bounds other than the
parameters', cut points other than the public ones, leaf values off their
grid or beyond their public range: :func:`_check_edges`,
:func:`_check_leaf_values`), and a ledger whose releases are not the ones the
learner writes for the file's parameters (count, names, mechanisms, epsilons,
curves: the mechanisms' own, the accountant and each tree's budget that the
parameters give).
"""

from __future__ import annotations

import math

import numpy as np

from dpglass.models._gbdt_budget import leaf_delta, leaf_epsilons, resolved_lambda, split_curve
from dpglass.models._gbdt_releases import dpboost_gain_sensitivity, leaf_sum_entry

__all__ = ["check_gbdt"]

MECHANISMS = ("exponential", "discrete laplace (grid)", "discrete gaussian (grid)", "laplace", "exponential-quantile")
ACCOUNTANT_CHOICES = ("auto", "basic", "pld", "rdp")


def _expected_releases(p: dict, d_numeric: int, x: float, leaf_delta: float, lam: float) -> list[tuple]:
    """(release name, mechanism, epsilon, curve, delta, (sensitivity, scale)) of every entry the learner writes.

    ``x`` is the file's ``tree_epsilon`` (a tree's budget; DPBoost: an
    ensemble's); the quantile entries' epsilon is checked by the total only
    (their curve, like DPBoost's leaf values', is the pure pair: none).
    ``leaf_delta > 0``: Gaussian leaf sums stating their pair at it.
    """

    def sums(release, eps, sens):
        e = leaf_sum_entry("", eps, sens, "", leaf_delta)
        return (release, e["mechanism"], e["epsilon"], e["curve"], leaf_delta, (e["sensitivity"], e["scale"]))

    out = []
    if p["binning"] == "quantile" and d_numeric:
        out += [(None, "exponential-quantile", None, None, 0.0, (None, None))] * d_numeric
    T, D = int(p["n_estimators"]), int(p["max_depth"])
    if p["variant"] == "newton":
        hs = float(p["hessian_share"])
        sel = float(p["split_share"]) if p["split"] == "exponential" else 0.0
        eps_g, eps_h = leaf_epsilons(x, p["split"], p["split_share"], hs)
        out += [sums("intercept: leaf gradient sums", x * (1 - hs), 1.0), sums("intercept: leaf Hessian sums", x * hs, 0.25)]
        for t in range(1, T + 1):
            if sel:
                s = x * sel / D
                out += [(f"tree {t}: level {lev + 1} splits", "exponential", s, split_curve(s, 1.0), 0.0,
                         (1.0, None)) for lev in range(D)]
            out += [sums(f"tree {t}: leaf gradient sums", eps_g, 1.0),
                    sums(f"tree {t}: leaf Hessian sums", eps_h, 0.25)]
    else:
        gstar = float(p["gradient_clip"])
        s, sens = x / (2 * D), dpboost_gain_sensitivity(gstar)
        for e in range(1, math.ceil(T / int(p["trees_per_ensemble"])) + 1):
            out += [(f"ensemble {e}: level {lev + 1} splits of every tree", "exponential", s, split_curve(s, sens), 0.0,
                     (sens, None)) for lev in range(D)]
            out.append((f"ensemble {e}: leaf values of every tree", "laplace", x / 2, None, 0.0,
                        (gstar / (1.0 + lam), None)))
    return out


def _file_budget(data: dict, model, fail, is_num) -> tuple[float, float, float]:
    """``(tree_epsilon, resolved delta, the delta each Gaussian leaf release states)`` of the file, checked
    for form (the ledger's delta budget is checked against the parameters by ``_verify``)."""
    from dpglass.models._base import DEFAULT_DELTA

    delta, want_delta = data.get("delta"), (DEFAULT_DELTA if model.delta is None else float(model.delta))
    if not (is_num(delta) and math.isclose(delta, want_delta, rel_tol=1e-12, abs_tol=0.0)):
        fail("delta", f"is {delta!r}", f"the resolved params.delta = {want_delta!r}")
    x = data.get("tree_epsilon")
    if not (is_num(x) and x > 0):
        fail("tree_epsilon", f"is {x!r}", "a finite number > 0")
    if model.accountant not in ACCOUNTANT_CHOICES:
        fail("params.accountant", f"is {model.accountant!r}", f"one of {ACCOUNTANT_CHOICES}")
    if model.leaf_noise not in ("laplace", "gaussian"):
        fail("params.leaf_noise", f"is {model.leaf_noise!r}", "'laplace' or 'gaussian'")
    return float(x), want_delta, leaf_delta(model.leaf_noise, want_delta, int(model.n_estimators))


def _check_split(model, delta: float, x: float, ledger, fail) -> None:
    """The accountant (given the model's own ledger) and tree_epsilon must be what the parameters give
    (``_gbdt_budget.budget``)."""
    try:
        want_x, acct = model._budget(delta)
    except ValueError as exc:
        fail("params", f"cannot be fitted ({exc})", "parameters DPGradientBoostingClassifier accepts")
    if ledger is not None and ledger.accountant != acct:  # None: a file a selection wrote (its one entry)
        fail("privacy_ledger.accountant", f"is {ledger.accountant!r}", f"{acct!r} for these parameters")
    if not math.isclose(x, want_x, rel_tol=1e-9):
        fail("tree_epsilon", f"is {x!r}", f"{want_x!r}, the {acct} split of the budget for these parameters")


def _check_entries(entries: list, expected: list, ledger, fail) -> None:
    """Entry by entry: name, mechanism, epsilon, delta, curve (the mechanism's own); the whole budget spent."""
    from dpglass.models._verify import _check_declared_curve

    if len(entries) != len(expected):
        fail("privacy_ledger.entries", f"has {len(entries)} releases", f"{len(expected)} for these parameters")
    for i, (e, (release, mech, eps, curve, delta, noise)) in enumerate(zip(entries, expected)):
        field = f"privacy_ledger.entries[{i}]"
        if e["mechanism"] != mech or (release is not None and e["release"] != release):
            fail(field, f"is {e['release']!r} by {e['mechanism']!r}", f"{release or 'a bin release'!r} by {mech!r}")
        if eps is not None and not math.isclose(e["epsilon"], eps, rel_tol=1e-9):
            fail(f"{field}.epsilon", f"is {e['epsilon']!r}", f"{eps!r} (tree_epsilon and the shares)")
        if not math.isclose(e.get("delta", 0.0), delta, rel_tol=1e-9, abs_tol=0.0):
            fail(f"{field}.delta", f"is {e.get('delta')!r}", f"{delta!r}")
        _check_declared_curve(e, field, curve)
        for key, want in zip(("sensitivity", "scale"), noise):
            got = e.get(key)
            if (want is None) != (got is None) or (want is not None and not math.isclose(got, want, rel_tol=1e-12)):
                fail(f"{field}.{key}", f"is {got!r}", f"{want!r}, recomputed from the parameters")
    spent, budget = ledger.total()[0], ledger.epsilon
    low = 1 - 1e-9 if ledger.accountant == "basic" else 0.97  # tight calibration is to a relative 1e-2
    if spent < budget * low:
        fail("privacy_ledger.entries", f"spend epsilon={spent!r}", f"the whole budget epsilon={budget!r}")


def check_gbdt(data: dict, ctx, fail, is_num) -> None:
    """Model-specific checks (helpers come from ``_verify`` to avoid an import cycle)."""
    from dpglass.models.gbdt import DPGradientBoostingClassifier

    p, d = dict(ctx.params), ctx.d
    p["n_estimators"], lr = DPGradientBoostingClassifier(
        **{k: p[k] for k in ("epsilon", "variant", "n_estimators", "learning_rate")})._resolved_sizes()
    for key in ("bounds_resolved", "edges", "trees"):
        if not isinstance(data.get(key), list):
            fail(key, "is missing or not a list", "what DPGradientBoostingClassifier.to_dict writes")
    bounds, edges, trees = data["bounds_resolved"], data["edges"], data["trees"]
    if len(bounds) != d or len(edges) != d:
        fail("edges", f"has {len(edges)} entries (bounds {len(bounds)})", f"{d}, one per feature")
    _check_edges(p, d, bounds, edges, fail, is_num)
    if len(trees) != int(p["n_estimators"]):
        fail("trees", f"has {len(trees)} trees", f"params.n_estimators = {p['n_estimators']}")
    n_cuts = np.array([len(e) for e in edges])
    D = int(p["max_depth"])
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
    model = DPGradientBoostingClassifier(**{k: v for k, v in p.items() if k != "bounds"})
    model.bounds_ = [None if b is None else (float(b[0]), float(b[1])) for b in bounds]
    x, delta, ld = _file_budget(data, model, fail, is_num)
    want_lam = resolved_lambda(p["variant"], p.get("reg_lambda"), x, p["split"], p["split_share"], p["hessian_share"])
    if ctx.ledger is not None:  # first the ledger against the file's own state, then that state against the parameters
        _check_entries(ctx.entries, _expected_releases(p, sum(1 for b in bounds if b is not None), x, ld, want_lam),
                       ctx.ledger, fail)
    _check_split(model, delta, x, ctx.ledger, fail)  # the leaf grids below are built on tree_epsilon
    lam = data.get("reg_lambda")  # after tree_epsilon is known to be right: the default lambda depends on it
    if not (is_num(lam) and math.isclose(lam, want_lam, rel_tol=1e-12)):
        fail("reg_lambda", f"is {lam!r}", f"{want_lam!r}, the lambda the parameters give")
    _check_leaf_values(data, p, lr, x, float(lam), fail, is_num)


def _check_edges(p: dict, d: int, bounds: list, edges: list, fail, is_num) -> None:
    """Every cut point is a public one (issue 26): 0.5 on a 0/1 column; on a numeric column the equal-width grid
    of its bounds (``uniform_edges``, what fit cuts at), or with ``binning="quantile"`` ``max_bins - 1`` sorted
    points of the DP quantile's public grid on the bounds (the mechanism's only outputs).  The bounds are the
    parameters' (``check_feature_bounds``, as fit resolves them): the grids are built on them."""
    from dpglass.exceptions import InvalidParameterError
    from dpglass.models._gbdt_trees import check_feature_bounds, uniform_edges
    from dpglass.privacy.quantile import GRID_CELLS, _grid

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
        elif not (isinstance(e, list) and len(e) == nb - 1 and all(is_num(v) for v in e) and e == sorted(e)
                  and set(e) <= set(_grid(b[0], b[1], GRID_CELLS).tolist())):
            fail(f"edges[{j}]", f"is {e!r}", f"max_bins - 1 = {nb - 1} sorted points of the DP quantile grid "
                 f"({GRID_CELLS} cells on the bounds {list(b)})")


def _check_leaf_values(data: dict, p: dict, lr: float, x: float, lam: float, fail, is_num) -> None:
    """Leaf values in their public domain (``lr``: the resolved learning rate).

    Newton: ``lr * clip(-G/(H + lambda), +-max_leaf_value)`` from noisy sums
    the file does not hold, so only the clip's range is checked (the
    intercept's without ``lr``).  DPBoost: ``lr`` times a multiple of the grid
    of tree k's Laplace release (``dpboost_leaf_clip``; k is the tree's place
    in its ensemble), and no intercept (0).
    """
    from dpglass.models._gbdt_releases import dpboost_leaf_clip
    from dpglass.privacy.mechanisms import LaplaceMechanism

    init = data.get("init_score")
    if p["variant"] == "newton":
        top = float(p["max_leaf_value"])
        if not (is_num(init) and abs(init) <= top):
            fail("init_score", f"is {init!r}", f"a number within +-max_leaf_value = {top!r}")
        for i, t in enumerate(data["trees"]):
            if any(abs(v) > lr * top for v in t["value"]):
                fail(f"trees[{i}].value", f"is {t['value']!r}",
                     f"values within +-learning_rate * max_leaf_value = {lr * top!r}")
        return
    if init != 0.0:
        fail("init_score", f"is {init!r}", "0 (DPBoost releases no intercept)")
    K = int(p["trees_per_ensemble"])
    for i, t in enumerate(data["trees"]):
        g = LaplaceMechanism(x / 2, dpboost_leaf_clip(p["gradient_clip"], lam, lr, i % K)[1]).granularity
        if not all(_scaled_grid_point(v, lr, g) for v in t["value"]):
            fail(f"trees[{i}].value", f"is {t['value']!r}", f"learning_rate times multiples of the Laplace grid {g!r} "
                 "of its tree (as fit computes them)")


def _scaled_grid_point(v: float, lr: float, g: float) -> bool:
    """Whether ``v`` is ``lr * (m * g)`` in float64 for an integer ``m`` (fit's ``learning_rate * Vn``)."""
    if lr == 0:
        return v == 0
    u = round(v / lr / g)
    return any(lr * (m * g) == v for m in (u - 1, u, u + 1))
