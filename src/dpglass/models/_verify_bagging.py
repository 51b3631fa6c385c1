"""Verification of saved teacher-student models: DP-Bag and subsample-and-aggregate.

The student (coefficients, intercept) must fit the features and lie in its
public range (:func:`_check_student_range`); the ledger must be the one
release the learner makes for the file's parameters:

* DP-Bag: one ``paper-claim`` entry spending the whole ``(epsilon, delta)``
  (its number of labels is data-dependent and is not saved);
* subsample-and-aggregate: one ``proven`` entry whose number of labels and
  composed ``(epsilon, delta)`` are recomputed from the parameters and the
  public part's size (:func:`dpglass.models.bagging.saa_query_budget`): the
  file is not trusted.
"""

from __future__ import annotations

import math
import numbers

__all__ = ["check_dpbag", "check_saa"]


def _check_student(data, ctx, fail, is_num, need) -> None:
    coef = need(data, "coef", "coef", list, f"the student's {ctx.d} coefficients")
    if len(coef) != ctx.d or not all(is_num(v) for v in coef):
        fail("coef", f"has {len(coef)} entries", f"{ctx.d} finite numbers (n_features_in)")
    if not is_num(need(data, "intercept", "intercept", numbers.Real, "the student's intercept")):
        fail("intercept", f"is {data['intercept']!r}", "a finite number")
    n_public = need(data, "n_public", "n_public", numbers.Integral, "the number of public records, an int")
    if n_public < 1:
        fail("n_public", f"is {n_public!r}", "an int >= 1")
    if not isinstance(data.get("public_given", True), bool):  # absent in files written before the flag
        fail("public_given", f"is {data['public_given']!r}", "true or false")
    if data.get("public_given") is False and n_public != ctx.params["n_public"]:
        fail("n_public", f"is {n_public!r}", f"params.n_public = {ctx.params['n_public']!r} (the uniform random rows "
             "drawn without a public part)")
    cap = n_public if ctx.params["max_queries"] is None else min(n_public, int(ctx.params["max_queries"]))
    _check_student_range(data, ctx, cap, fail)  # labels: at most the cap on queries (DP-Bag's number is not saved)


def _check_student_range(data, ctx, n_labels: int, fail) -> None:
    """The student's (coefficients, intercept) lie in the ball its fit can reach (issue 26).

    ``bagging._logistic`` descends from 0 on ``sum_i log(1 + exp(-y_i b.a_i)) + (alpha/2)||b||^2``
    over the ``Q`` labelled public records: every accepted step lowers the objective, so the released
    ``b`` has ``(alpha/2)||b||^2 <= Q log 2`` (the objective at 0), whatever the labels and records.
    The values themselves are a float optimum of records and labels the file does not hold: only this
    range is checked (``Q = 0``: the student is 0).
    """
    beta = [*data["coef"], data["intercept"]]
    top = math.sqrt(2.0 * n_labels * math.log(2.0) / float(ctx.params["alpha"]))
    norm = math.sqrt(math.fsum(float(v) ** 2 for v in beta))
    if norm > top * (1 + 1e-9):
        field = "intercept" if abs(float(data["intercept"])) > top else "coef"
        fail(field, f"makes the student's norm {norm!r}", f"at most sqrt(2 Q log 2 / alpha) = {top!r} for Q = "
             f"{n_labels} labelled public records (the student's objective at 0)")


def _one_entry(ctx, fail) -> dict:
    if len(ctx.entries) != 1:
        fail("privacy_ledger.entries", f"has {len(ctx.entries)} releases", "1 (the labels of public records)")
    return ctx.entries[0]


def _check_delta(data, ctx, fail, close, need_num, resolved) -> float:
    delta = need_num(data, "delta", "delta", "the resolved delta")
    want = resolved(ctx.params)
    if want is not None and not (delta == want or close(delta, want)):
        fail("delta", f"is {delta!r}", f"the resolved params.delta = {want!r}")
    if not (ctx.ledger.delta == delta or close(ctx.ledger.delta, delta)):
        fail("privacy_ledger.budget.delta", f"is {ctx.ledger.delta!r}", f"the model's delta = {delta!r}")
    return delta


def check_dpbag(data, ctx, h) -> None:
    """DP-Bag: the student, and one paper-claim entry spending the whole budget."""
    from dpglass.models.bagging import DPBAG_MECHANISM

    _check_student(data, ctx, h.fail, h.is_num, h.need)
    if ctx.ledger is None:
        return
    delta = _check_delta(data, ctx, h.fail, h.close, h.need_num, h.resolved)
    if delta <= 0:
        h.fail("delta", "is 0", "> 0 (the moments accountant needs a delta)")
    e = _one_entry(ctx, h.fail)
    p = ctx.params
    field = "privacy_ledger.entries[0]"
    if e["mechanism"] != DPBAG_MECHANISM:
        h.fail(f"{field}.mechanism", f"is {e['mechanism']!r}", repr(DPBAG_MECHANISM))
    if not (h.close(e["epsilon"], p["epsilon"]) and (e.get("delta", 0.0) == delta or h.close(e["delta"], delta))):
        h.fail(field, f"spends ({e['epsilon']!r}, {e.get('delta')!r})",
               f"the whole budget ({p['epsilon']!r}, {delta!r})")
    if e.get("guarantee") != "paper-claim":
        h.fail(f"{field}.guarantee", f"is {e.get('guarantee')!r}", "'paper-claim' (a data-dependent accountant)")
    k, s = float(p["n_partitions"]), float(p["noise_scale"])
    if e.get("sensitivity") is None or not h.close(e["sensitivity"], k):
        h.fail(f"{field}.sensitivity", f"is {e.get('sensitivity')!r}", f"params.n_partitions = {k:g}")
    if e.get("scale") is None or not h.close(e["scale"], k * s):
        h.fail(f"{field}.scale", f"is {e.get('scale')!r}", f"n_partitions * noise_scale = {k * s!r}")
    if e.get("curve") is not None:
        h.fail(f"{field}.curve", f"is {e['curve']!r}", "null")


def check_saa(data, ctx, h) -> None:
    """Subsample-and-aggregate: the student, and the labels' entry recomputed from the parameters."""
    from dpglass.models.bagging import SAA_MECHANISM_PREFIX, saa_query_budget

    _check_student(data, ctx, h.fail, h.is_num, h.need)
    if ctx.ledger is None:
        return
    delta = _check_delta(data, ctx, h.fail, h.close, h.need_num, h.resolved)
    p = ctx.params
    cap = int(data["n_public"]) if p["max_queries"] is None else min(int(data["n_public"]), int(p["max_queries"]))
    q, acct, eps, spent_delta = saa_query_budget(float(p["epsilon"]), delta, float(p["noise_scale"]), cap,
                                                 p["accountant"])
    e = _one_entry(ctx, h.fail)
    field = "privacy_ledger.entries[0]"
    release = f"labels of {q} public records (noisy teacher vote counts)"
    mech = f"{SAA_MECHANISM_PREFIX}discrete laplace x{q}, {acct})"
    if e["release"] != release or e["mechanism"] != mech:
        h.fail(field, f"is {e['release']!r} by {e['mechanism']!r}", f"{release!r} by {mech!r}")
    if not (h.close(e["epsilon"], eps) or e["epsilon"] == eps):
        h.fail(f"{field}.epsilon", f"is {e['epsilon']!r}", f"{eps!r}, {q} labels composed by {acct}")
    if not (e.get("delta", 0.0) == spent_delta or h.close(e.get("delta", 0.0), spent_delta)):
        h.fail(f"{field}.delta", f"is {e.get('delta')!r}", repr(spent_delta))
    s = float(p["noise_scale"])
    if e.get("scale") is None or not h.close(e["scale"], s) or e.get("sensitivity") != 1.0:
        h.fail(f"{field}.scale", f"is {e.get('scale')!r} (sensitivity {e.get('sensitivity')!r})",
               f"params.noise_scale = {s!r} (sensitivity 1)")
    if e.get("curve") is not None:
        h.fail(f"{field}.curve", f"is {e['curve']!r}", "null (the entry is already composed)")
    n = h.need(data, "n_labelled", "n_labelled", numbers.Integral, "the number of labelled public records")
    if n != q:
        h.fail("n_labelled", f"is {n!r}", f"{q}, what these parameters allow on {data['n_public']} public records")
    _check_student_range(data, ctx, q, h.fail)  # tighter than the cap's
    if h.need(data, "composition", "composition", str, "the accountant used") != acct:
        h.fail("composition", f"is {data['composition']!r}", repr(acct))
