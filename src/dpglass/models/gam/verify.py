"""Verification of a saved :class:`~dpglass.models.gam.estimator.DPGAMClassifier` file.

Hooked into :data:`dpglass.models._verify.MODEL_CHECKS`.  In order:

* ``feature_groups`` names one group per feature (a declared label set is the file's ``classes``: checked for
  every family by :func:`dpglass.models._verify.verify_model_dict`);
* the release plan (:func:`dpglass.models.gam.plan.gam_plan`), rebuilt from the file's parameters,
  ``n_features_in`` and its K classes (with "auto" sizes: the branch that the rule version the file names,
  ``sizes_rule``, absent for version 1, picks for its ``class_counts``; an unknown version is refused), is replayed (:func:`~dpglass.privacy.plan.check_against_plan`): the ledger
  is the plan, entry for entry, and every released value lies in its step's public domain (``class_counts``:
  K integers; each visit's ``gradient_sums`` and ``hessian_sums``: two rows of K - 1 multiples of the step's grid);
* derived values: ``delta``, ``visit_epsilon``, ``hessian_floor`` and the accountant are the plan's, and the
  ``intercept`` and ``shapes`` are recomputed from the released values (:func:`dpglass.models.gam.fit.replay`)
  and must be equal: the shapes bit for bit (basic IEEE-754 operations only, the same on every machine), the
  intercept within :data:`INTERCEPT_ULPS` ulp (it takes libm's ``log``, whose last bit may differ between
  machines and libraries; a count edited by one moves it far more).
"""

from __future__ import annotations

import math

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.models._binning import category_edges, uniform_edges
from dpglass.models._file_checks import _fail as fail
from dpglass.models._file_checks import _is_count as is_count
from dpglass.models._file_checks import _is_num as is_num
from dpglass.models._file_checks import _replay_plan as replay_plan
from dpglass.models._file_checks import _rule_version as rule_version
from dpglass.models.gam.first import FIELD
from dpglass.models.gam.fit import replay
from dpglass.models.gam.plan import gam_plan
from dpglass.models.gam.readout import resolve_groups
from dpglass.models.gam.sizes import RULE_VERSIONS, is_auto

__all__ = ["INTERCEPT_ULPS", "check_gam"]

#: The recomputed intercept may differ from the file's by this many ulp (libm's ``log`` is not bit-reproducible
#: across machines; see the module docstring).
INTERCEPT_ULPS = 4


def check_gam(data: dict, ctx) -> None:
    """Model-specific checks of a DPGAMClassifier file."""
    p, d, K = ctx.params, ctx.d, len(data["classes"])  # a declared label set is checked by _verify for every family
    try:
        resolve_groups(p.get("feature_groups"), list(range(d)))
    except InvalidParameterError as exc:
        fail("params.feature_groups", f"is not one group name per feature ({exc})", f"{d} names or null")
    counts = data.get("class_counts")
    if is_auto(p) and not (isinstance(counts, list) and len(counts) == K and all(is_count(c) for c in counts)):
        fail("class_counts", f"is {_short(counts)}", f"the {K} released noisy class counts (integers)")
    version = _rule_version(data, is_auto(p))
    try:
        plan = gam_plan(p, d, K, counts if is_auto(p) else None, version)  # "auto" sizes: the rule's branch
    except (InvalidParameterError, TypeError, ValueError, KeyError) as exc:
        fail("params", f"give no release plan ({exc})", "parameters DPGAMClassifier accepts")
    edges = _check_edges(data, plan)
    counts, visits = _released(data, plan, K)
    first = _first(data, plan)
    view = {"class_counts": counts, **{f"visits[{i}]": v for i, v in enumerate(data["visits"])},
            **{f"edges[{j}]": edges[j] for j in plan.public.numeric}, **({FIELD: first} if first is not None else {})}
    replay_plan(ctx, plan.steps, view, plan.accountant)
    for key, want in (("delta", plan.delta), ("visit_epsilon", plan.x), ("hessian_floor", plan.hessian_floor)):
        got = data.get(key)
        if not (is_num(got) and math.isclose(got, want, rel_tol=1e-9, abs_tol=0.0)):
            fail(key, f"is {got!r}", f"{want!r}, the plan's for these parameters ({plan.accountant} composition)")
    intercept, shapes = replay(counts, visits, plan, first)
    for key, want in (("intercept", [intercept]), ("shapes", shapes)):
        got = data.get(key)
        got = [got] if key == "intercept" else got
        ulps = INTERCEPT_ULPS if key == "intercept" else 0
        try:
            same = isinstance(got, list) and len(got) == len(want) and all(
                _within(np.array(g, dtype=np.float64), w, ulps) for g, w in zip(got, want))
        except (TypeError, ValueError):
            same = False
        if not same:
            shown = want[0].tolist() if key == "intercept" else [w.tolist() for w in want]
            fail(key, f"is {_short(data.get(key))}", f"what the released class_counts and visits give: {_short(shown)}")


def _rule_version(data: dict, auto: bool) -> int:
    """The version of the "auto" sizes rule the file names (``sizes_rule``; absent: version 1, the rule of files
    written before versions existed): one this dpglass knows, and only in a file with "auto" sizes."""
    if not auto:
        if "sizes_rule" in data:
            fail("sizes_rule", f"is {_short(data['sizes_rule'])}", "absent: no size is 'auto'")
        return 1
    return rule_version(data, "sizes_rule", RULE_VERSIONS)


def _within(got: np.ndarray, want: np.ndarray, ulps: int) -> bool:
    """Same shape and every value within ``ulps`` units in the last place of the recomputed one (0: equal)."""
    if got.shape != want.shape:
        return False
    if not ulps:
        return bool(np.array_equal(got, want))
    return bool(np.all(np.abs(got - want) <= ulps * np.spacing(np.abs(want))))


def _first(data: dict, plan) -> list | None:
    """The count-based first cycle's released vector: one integer per (feature, bin, class), present exactly
    when the parameters ask for it."""
    if plan.first is None:
        if FIELD in data:
            fail(FIELD, f"is {_short(data[FIELD])}", "absent: params.first_cycle is 'gradients'")
        return None
    pub = plan.public
    cells = sum(pub.n_bins(j) for j in range(pub.n_features)) * pub.n_classes
    got = data.get(FIELD)
    if not (isinstance(got, list) and len(got) == cells and all(is_count(c) for c in got)):
        fail(FIELD, f"is {_short(got)}", f"{cells} released integers, one per (feature, bin, class)")
    return got


def _check_edges(data: dict, plan) -> list:
    """A file of raw columns holds each feature's edges: the codes' midpoints of a categorical column, the
    equal-width grid of a numeric one (``binning="uniform"``) or ``max_bins - 1`` sorted numbers (the DP
    quantiles, which the plan's replay puts on their public grid); a file of 0/1 columns holds none."""
    pub = plan.public
    edges = data.get("edges")
    if pub.plain:
        if "edges" in data:
            fail("edges", f"is {_short(edges)}", "absent: every feature is a 0/1 column (cut at 0.5)")
        return []
    if not (isinstance(edges, list) and len(edges) == pub.n_features and all(
            isinstance(e, list) and all(is_num(v) for v in e) for e in edges)):
        fail("edges", f"is {_short(edges)}", f"{pub.n_features} lists of numbers, one per feature")
    for j, (b, m, e) in enumerate(zip(pub.bounds, pub.categories, edges)):
        if m is not None:
            want = category_edges(m).tolist()
        elif b is None:
            want = [0.5]
        elif not pub.quantiles:
            want = uniform_edges(b[0], b[1], pub.max_bins).tolist()
        else:
            if not (len(e) == pub.max_bins - 1 and e == sorted(e)):
                fail(f"edges[{j}]", f"is {_short(e)}", f"max_bins - 1 = {pub.max_bins - 1} sorted points of the DP "
                     f"quantile grid on the bounds {list(b)}")
            continue
        if e != want:
            fail(f"edges[{j}]", f"is {_short(e)}", f"{_short(want)}, the public edges of this column")
    return edges


def _released(data: dict, plan, K: int) -> tuple[list, list]:
    """The class counts and each visit's ``(G, H)``, checked for shape: K integers; one visit per step of the
    plan, each ``{"gradient_sums", "hessian_sums"}`` of two rows of K - 1 finite numbers."""
    counts = data.get("class_counts")
    if not (isinstance(counts, list) and len(counts) == K and all(is_count(c) for c in counts)):
        fail("class_counts", f"is {_short(counts)}", f"the {K} released noisy class counts (integers)")
    visits = data.get("visits")
    if not (isinstance(visits, list) and len(visits) == len(plan.visits)):
        n = len(visits) if isinstance(visits, list) else visits
        fail("visits", f"has {n!r} entries" if isinstance(visits, list) else f"is {_short(visits)}",
             f"{len(plan.visits)}: params.n_cycles = {plan.public.n_cycles} passes over the {plan.public.n_features} "
             "features")
    out = []
    for i, v in enumerate(visits):
        if not (isinstance(v, dict) and set(v) == {"gradient_sums", "hessian_sums"}):
            fail(f"visits[{i}]", f"is {_short(v)}", "{gradient_sums, hessian_sums}")
        pair = []
        for key in ("gradient_sums", "hessian_sums"):
            rows, nb = v[key], plan.public.n_bins(plan.visits[i][0])
            if not (isinstance(rows, list) and len(rows) == nb and all(
                    isinstance(r, list) and len(r) == K - 1 and all(is_num(x) for x in r) for r in rows)):
                what = "two rows (x = 0, x = 1)" if nb == 2 else f"{nb} rows (the feature's bins)"
                fail(f"visits[{i}].{key}", f"is {_short(rows)}", f"{what} of {K - 1} finite numbers")
            pair.append(np.array(rows, dtype=np.float64))
        out.append(tuple(pair))
    return counts, out


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
