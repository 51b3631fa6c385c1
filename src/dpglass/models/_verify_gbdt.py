"""Verification of a saved :class:`~dpglass.models.DPGradientBoostingClassifier` file.

Hooked into :data:`dpglass.models._verify.MODEL_CHECKS`.  Refuses trees of the
wrong number or depth, splits that name a feature or cut that does not
exist, bounds or edges of the wrong length, non-finite leaf values, and a
ledger whose releases are not the ones the learner writes for the file's
parameters (count, names, mechanisms, accountant).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["check_gbdt"]

MECHANISMS = ("exponential", "discrete laplace (grid)", "laplace", "exponential-quantile")


def _expected_releases(p: dict, d_numeric: int, x: float) -> list[tuple]:
    """(release name, mechanism, epsilon) of every entry the learner writes for parameters ``p``.

    ``x`` is the file's ``tree_epsilon`` (a tree's budget; DPBoost: an
    ensemble's); the quantile entries' epsilon is checked by the total only.
    """
    out = []
    if p["binning"] == "quantile" and d_numeric:
        out += [(None, "exponential-quantile", None)] * d_numeric
    T, D = int(p["n_estimators"]), int(p["max_depth"])
    grid = "discrete laplace (grid)"
    if p["variant"] == "newton":
        hs = float(p["hessian_share"])
        sel = float(p["split_share"]) if p["split"] == "exponential" else 0.0
        out += [("intercept: leaf gradient sums", grid, x * (1 - hs)), ("intercept: leaf Hessian sums", grid, x * hs)]
        for t in range(1, T + 1):
            if sel:
                out += [(f"tree {t}: level {lev + 1} splits", "exponential", x * sel / D) for lev in range(D)]
            out += [(f"tree {t}: leaf gradient sums", grid, x * (1 - sel) * (1 - hs)),
                    (f"tree {t}: leaf Hessian sums", grid, x * (1 - sel) * hs)]
    else:
        for e in range(1, math.ceil(T / int(p["trees_per_ensemble"])) + 1):
            out += [(f"ensemble {e}: level {lev + 1} splits of every tree", "exponential", x / (2 * D))
                    for lev in range(D)]
            out.append((f"ensemble {e}: leaf values of every tree", "laplace", x / 2))
    return out


def check_gbdt(data: dict, ctx, fail, is_num) -> None:
    """Model-specific checks (helpers come from ``_verify`` to avoid an import cycle)."""
    from dpglass.models.gbdt import DPGradientBoostingClassifier

    p, d = dict(ctx.params), ctx.d
    p["n_estimators"], _ = DPGradientBoostingClassifier(
        **{k: p[k] for k in ("epsilon", "variant", "n_estimators", "learning_rate")})._resolved_sizes()
    for key in ("bounds_resolved", "edges", "trees"):
        if not isinstance(data.get(key), list):
            fail(key, "is missing or not a list", "what DPGradientBoostingClassifier.to_dict writes")
    bounds, edges, trees = data["bounds_resolved"], data["edges"], data["trees"]
    if len(bounds) != d or len(edges) != d:
        fail("edges", f"has {len(edges)} entries (bounds {len(bounds)})", f"{d}, one per feature")
    for j, (b, e) in enumerate(zip(bounds, edges)):
        if b is None and e != [0.5]:
            fail(f"edges[{j}]", f"is {e!r}", "[0.5] for a 0/1 column")
        if b is not None and (len(e) != int(p["max_bins"]) - 1 or not all(is_num(v) for v in e)):
            fail(f"edges[{j}]", f"has {len(e)} cut points", f"max_bins - 1 = {int(p['max_bins']) - 1} numbers")
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
    if ctx.ledger is None:
        return
    numeric = sum(1 for b in bounds if b is not None)
    x = data.get("tree_epsilon")
    if not (is_num(x) and x > 0):
        fail("tree_epsilon", f"is {x!r}", "a finite number > 0")
    expected = _expected_releases(p, numeric, float(x))
    entries = ctx.entries
    if len(entries) != len(expected):
        fail("privacy_ledger.entries", f"has {len(entries)} releases", f"{len(expected)} for these parameters")
    for i, (e, (release, mech, eps)) in enumerate(zip(entries, expected)):
        field = f"privacy_ledger.entries[{i}]"
        if e["mechanism"] != mech or (release is not None and e["release"] != release):
            fail(field, f"is {e['release']!r} by {e['mechanism']!r}", f"{release or 'a bin release'!r} by {mech!r}")
        if eps is not None and not math.isclose(e["epsilon"], eps, rel_tol=1e-9):
            fail(f"{field}.epsilon", f"is {e['epsilon']!r}", f"{eps!r} (tree_epsilon and the shares)")
        curve = e.get("curve")
        if mech == "discrete laplace (grid)" and (not isinstance(curve, dict) or not math.isclose(
                curve.get("parameter", 0) * curve.get("sensitivity", 0), e["epsilon"], rel_tol=1e-9)):
            fail(f"{field}.curve", f"is {curve!r}", "the discrete Laplace curve of the entry's epsilon")
    spent, budget = ctx.ledger.total()[0], ctx.ledger.epsilon
    low = 1 - 1e-9 if ctx.ledger.accountant == "basic" else 0.97  # PLD calibration is to a relative 1e-2
    if spent < budget * low:
        fail("privacy_ledger.entries", f"spend epsilon={spent!r}", f"the whole budget epsilon={budget!r}")
    want = p.get("accountant") or ("pld" if (p["variant"] == "newton" and ctx.ledger.delta > 0) else "basic")
    if ctx.ledger.accountant != want:
        fail("privacy_ledger.accountant", f"is {ctx.ledger.accountant!r}", f"{want!r} for these parameters")
