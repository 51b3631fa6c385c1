"""Verification of saved teacher-student models: DP-Bag and subsample-and-aggregate.

The ledger is the family's release plan replayed from the file's parameters
and public part's size (:mod:`dpglass.models.teachers.plan`,
:func:`~dpglass.privacy.plan.check_against_plan`), entry for entry:

* DP-Bag: one ``paper-claim`` entry spending the whole ``(epsilon, delta)``
  (its number of labels is data-dependent and is not saved);
* subsample-and-aggregate: one ``proven`` entry, the composition of ``Q``
  noisy vote counts, ``Q`` a function of the parameters and the public
  part's size (saved as ``n_labelled``, with the accountant as
  ``composition``: both must be the plan's).

Both plans depend on the number of classes ``K`` (the file's ``classes``,
public): a label set edited to another size rebuilds another plan, and the
ledger no longer matches it.  Neither file holds the released labels.  What
is checked besides the plan is structural (sizes, the resolved delta, the
public part) or derived: the student (coefficients, intercept; one row of
each per class for ``K >= 3``) is fitted on the labels and public records,
so only its public range is checked (:func:`_check_student_range`).
"""

from __future__ import annotations

import math
import numbers


from dpglass.models._file_checks import _close as close
from dpglass.models._file_checks import _fail as fail
from dpglass.models._file_checks import _is_num as is_num
from dpglass.models._file_checks import _need as need
from dpglass.models._file_checks import _need_num as need_num
from dpglass.models._file_checks import _resolved_delta as resolved

__all__ = ["check_dpbag", "check_saa"]


def _n_classes(data) -> int:
    return len(data["classes"])


def _check_coefficients(data, ctx) -> None:
    """Two classes: ``d`` coefficients and one intercept; ``K >= 3``: ``K`` rows of ``d`` and ``K`` intercepts."""
    K = _n_classes(data)
    if K == 2:
        coef = need(data, "coef", "coef", list, f"the student's {ctx.d} coefficients")
        if len(coef) != ctx.d or not all(is_num(v) for v in coef):
            fail("coef", f"has {len(coef)} entries", f"{ctx.d} finite numbers (n_features_in)")
        if not is_num(need(data, "intercept", "intercept", numbers.Real, "the student's intercept")):
            fail("intercept", f"is {data['intercept']!r}", "a finite number")
        return
    coef = need(data, "coef", "coef", list, f"the student's {K} rows of {ctx.d} coefficients")
    if len(coef) != K or not all(isinstance(r, list) and len(r) == ctx.d and all(is_num(v) for v in r)
                                 for r in coef):
        fail("coef", f"has {len(coef)} entries", f"{K} lists (one per class) of {ctx.d} finite numbers")
    intercept = need(data, "intercept", "intercept", list, f"the student's {K} intercepts")
    if len(intercept) != K or not all(is_num(v) for v in intercept):
        fail("intercept", f"is {intercept!r}", f"{K} finite numbers (one per class)")


def _check_student(data, ctx) -> None:
    from dpglass.models.teachers.plan import query_cap

    _check_coefficients(data, ctx)
    n_public = need(data, "n_public", "n_public", numbers.Integral, "the number of public records, an int")
    if n_public < 1:
        fail("n_public", f"is {n_public!r}", "an int >= 1")
    if not isinstance(data.get("public_given", True), bool):  # absent in files written before the flag
        fail("public_given", f"is {data['public_given']!r}", "true or false")
    if data.get("public_given") is False and n_public != ctx.params["n_public"]:
        fail("n_public", f"is {n_public!r}", f"params.n_public = {ctx.params['n_public']!r} (the uniform random rows "
             "drawn without a public part)")
    cap = query_cap(ctx.params, n_public)
    _check_student_range(data, ctx, cap)  # labels: at most the cap on queries (DP-Bag's number is not saved)


def _check_student_range(data, ctx, n_labels: int) -> None:
    """The student's (coefficients, intercept) lie in the ball its fit can reach (issue 26).

    ``learners._logistic`` descends from 0 on ``sum_i log(1 + exp(-y_i b.a_i)) + (alpha/2)||b||^2``
    over the ``Q`` labelled public records (``learners._softmax_logistic`` on
    ``sum_i (logsumexp(B a_i) - (B a_i)_{y_i}) + (alpha/2)||B||^2`` for ``K >= 3`` classes): every
    accepted step lowers the objective, and the loss is >= 0, so the released weights have
    ``(alpha/2)||B||^2 <= Q log K`` (the objective at 0), whatever the labels and records.  The values
    themselves are a float optimum of records and labels the file does not hold: only this range is
    checked (``Q = 0``: the student is 0).
    """
    K = _n_classes(data)
    rows = [data["coef"]] if K == 2 else data["coef"]
    intercepts = [data["intercept"]] if K == 2 else data["intercept"]
    beta = [v for row in rows for v in row] + list(intercepts)
    top = math.sqrt(2.0 * n_labels * math.log(K) / float(ctx.params["alpha"]))
    norm = math.sqrt(math.fsum(float(v) ** 2 for v in beta))
    if norm > top * (1 + 1e-9):
        field = "intercept" if math.sqrt(math.fsum(float(v) ** 2 for v in intercepts)) > top else "coef"
        fail(field, f"makes the student's norm {norm!r}", f"at most sqrt(2 Q log {K} / alpha) = {top!r} for Q = "
             f"{n_labels} labelled public records (the student's objective at 0)")


def _check_delta(data, ctx) -> float:
    delta = need_num(data, "delta", "delta", "the resolved delta")
    want = resolved(ctx.params)
    if want is not None and not (delta == want or close(delta, want)):
        fail("delta", f"is {delta!r}", f"the resolved params.delta = {want!r}")
    if not (ctx.ledger.delta == delta or close(ctx.ledger.delta, delta)):
        fail("privacy_ledger.budget.delta", f"is {ctx.ledger.delta!r}", f"the model's delta = {delta!r}")
    return delta


def _replay(plan_of, ctx, data) -> list:
    """The family's release plan for the file's parameters (and public part), replayed on its ledger."""
    from dpglass.exceptions import InvalidParameterError
    from dpglass.privacy.plan import check_against_plan

    try:
        plan = plan_of()
    except (InvalidParameterError, TypeError, ValueError) as err:
        fail("params", f"give no release plan ({err})", "the parameters of a fit that ran")
    check_against_plan(ctx.entries, plan, data, fail)
    return plan


def check_dpbag(data, ctx) -> None:
    """DP-Bag: the student, and its release plan (one paper-claim entry spending the whole budget)."""
    from dpglass.models.teachers.plan import dpbag_release_plan

    _check_student(data, ctx)
    if ctx.ledger is None:
        return
    delta = _check_delta(data, ctx)
    if delta <= 0:
        fail("delta", "is 0", "> 0 (the moments accountant needs a delta)")
    _replay(lambda: dpbag_release_plan(ctx.params, _n_classes(data)), ctx, data)


def check_saa(data, ctx) -> None:
    """Subsample-and-aggregate: the student, and its release plan replayed from the parameters and the public
    part's size (the number of labels is theirs: the file is not trusted)."""
    from dpglass.models.teachers.plan import saa_labels, saa_release_plan

    _check_student(data, ctx)
    if ctx.ledger is None:
        return
    _check_delta(data, ctx)
    n_public, K = data["n_public"], _n_classes(data)
    _replay(lambda: saa_release_plan(ctx.params, n_public, K), ctx, data)
    q, acct = saa_labels(ctx.params, n_public, K)[:2]
    n = need(data, "n_labelled", "n_labelled", numbers.Integral, "the number of labelled public records")
    if n != q:
        fail("n_labelled", f"is {n!r}", f"{q}, what these parameters allow on {n_public} public records")
    _check_student_range(data, ctx, q)  # tighter than the cap's
    if need(data, "composition", "composition", str, "the accountant used") != acct:
        fail("composition", f"is {data['composition']!r}", repr(acct))
