"""Release plans of the teacher ensembles (issue 27): subsample-and-aggregate and DP-Bag.

Each model releases one thing about its private records: the labels of
public records, drawn from the teachers' votes.  Its plan
(:func:`saa_release_plan`, :func:`dpbag_release_plan`) is written once, from
the public parameters and the public part's size; ``fit`` spends only
through it (:meth:`~dpglass.privacy.ledger.PrivacyLedger.release`) and the
file verifier replays it (:func:`~dpglass.privacy.plan.check_against_plan`).

* Subsample-and-aggregate: one step, the noisy vote counts of the first
  ``Q`` public records (integers): with two classes the count of the second
  class (the first is ``T`` minus it), with ``K >= 3`` classes the count of
  every class (:func:`released_classes`).  One record moves one teacher's
  vote, which changes :func:`moved_counts` of the released counts by one
  (1 for two classes, 2 for more), so a label costs that many
  :func:`saa_label_entry` releases; ``Q`` is the largest number of labels
  whose composition fits ``(epsilon, delta)`` (:func:`saa_query_budget`:
  public inputs only).  The ledger records the composition as one entry (a
  composition result, as the ledger's conventions allow); the labels, the
  noisy argmax of the vote histogram (:func:`saa_vote_labels`; ``2 (v + Z) > T``
  for two classes), are post-processing.
* DP-Bag: one step, the report-noisy-max labels (indices 0..K-1) of as many
  public records as the paper's data-dependent accountant allows
  (:func:`dpbag_epsilon`); the paper's claim is the whole ``(epsilon, delta)``
  whatever that number is, so the step is one composite ``paper-claim``
  entry and its number of labels is not part of the plan.

Neither file holds the released values (the noisy counts or labels): only
the student fitted on them (a derived value, range-checked by the verifier)
and, for subsample-and-aggregate, the public ``Q``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpglass.privacy.accounting import DEFAULT_DELTA
from dpglass.privacy.accounting import compose
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism, ReportNoisyMax
from dpglass.privacy.plan import Integers, PlannedRelease, Points

__all__ = [
    "DPBAG_MECHANISM",
    "SAA_MECHANISM_PREFIX",
    "dpbag_epsilon",
    "dpbag_release_plan",
    "moved_counts",
    "query_cap",
    "released_classes",
    "resolved_delta",
    "saa_label_entry",
    "saa_labels",
    "saa_query_budget",
    "saa_release_plan",
    "saa_vote_labels",
]

#: The ledger name of DP-Bag's release (one entry).
DPBAG_MECHANISM = "dp-bag (report-noisy-max, data-dependent moments accountant)"
#: Prefix of subsample-and-aggregate's ledger entry: ``composition(discrete laplace x<Q>, <accountant>)``.
SAA_MECHANISM_PREFIX = "composition("


def resolved_delta(params: dict) -> float:
    """The delta a fit uses: ``params["delta"]``, or the public default :data:`~dpglass.privacy.accounting.DEFAULT_DELTA`."""
    return DEFAULT_DELTA if params.get("delta") is None else float(params["delta"])


def query_cap(params: dict, n_public: int) -> int:
    """At most this many public records are labelled: the public part's size, or ``max_queries`` if smaller."""
    return int(n_public) if params.get("max_queries") is None else min(int(n_public), int(params["max_queries"]))


# ---------------------------------------------------------- subsample-and-aggregate's budget
def saa_label_entry(noise_scale: float) -> LedgerEntry:
    """One label's release alone: a vote count (sensitivity 1) with discrete Laplace noise of scale ``noise_scale``."""
    mech = DiscreteLaplaceMechanism(1.0 / noise_scale)
    return LedgerEntry("label", "discrete laplace", epsilon=mech.epsilon, curve=mech.curve)


def released_classes(n_classes: int) -> tuple[int, ...]:
    """The classes whose noisy vote counts subsample-and-aggregate releases for one public record.

    Two classes: the second only (``(1,)``: the first's count is ``T`` minus it, so releasing it too would
    double the cost for nothing).  ``K >= 3``: every class (releasing ``K - 1`` of them costs as much, see
    :func:`moved_counts`, and would leave the remaining one with ``K - 1`` noises).
    """
    return (1,) if int(n_classes) == 2 else tuple(range(int(n_classes)))


def moved_counts(n_classes: int) -> int:
    """How many released vote counts one record can change, each by one: 1 for two classes, 2 for more.

    Adding or removing a record changes one teacher's part (the parts are disjoint), hence at most its vote,
    from class ``a`` to class ``b``: the vote histogram changes by ``e_b - e_a``.  Among
    :func:`released_classes` that is one count for two classes (only class 1 is released) and at most two
    (``a`` and ``b``) for ``K >= 3``.  Each released count has sensitivity 1, so one label's release is
    dominated by this many sensitivity-1 discrete-Laplace releases (docs/privacy.md, subsample and
    aggregate).
    """
    return min(2, len(released_classes(n_classes)))


def _composed(q: int, noise_scale: float, delta: float, accountant: str, per_label: int = 1) -> tuple[float, float]:
    if q == 0:
        return 0.0, 0.0
    return compose([saa_label_entry(noise_scale)] * (q * per_label), accountant, delta)


def _largest_within(fits, lo: int, hi: int) -> int:
    """The largest ``q`` in ``[lo, hi]`` with ``fits(q)``, given ``fits(lo)`` and monotonicity."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


@functools.lru_cache(maxsize=256)
def saa_query_budget(epsilon: float, delta: float, noise_scale: float, cap: int,
                     accountant: str = "auto", per_label: int = 1) -> tuple[int, str, float, float]:
    """``(Q, accountant, epsilon spent, delta spent)``: how many noisy labels fit ``(epsilon, delta)``.

    Each label costs ``per_label`` discrete-Laplace counts of scale
    ``noise_scale`` and sensitivity 1 (``1/noise_scale``-DP each,
    :func:`saa_label_entry`; ``per_label`` is :func:`moved_counts`: 1 for two
    classes, 2 for more); ``Q`` is the largest number (at most ``cap``) whose
    ``Q * per_label`` counts compose under the accountant within ``epsilon``
    at ``delta``.  ``"auto"``: ``"basic"`` when ``delta = 0``, else whichever
    of ``"pld"`` and ``"rdp"`` allows more labels.  Public inputs only.

    Examples
    --------
    >>> saa_query_budget(1.0, 0.0, 50.0, 1000)[:2]  # basic composition: 1 / (1/50)
    (50, 'basic')
    >>> saa_query_budget(1.0, 0.0, 50.0, 1000, per_label=2)[:2]  # three classes or more: two counts a label
    (25, 'basic')
    """
    if delta <= 0 or accountant == "basic":
        q = min(cap, int(math.floor(epsilon * noise_scale * (1 + 1e-12) / per_label)))
        q = _largest_within(lambda m: _composed(m, noise_scale, 0.0, "basic", per_label)[0] <= epsilon * (1 + 1e-12),
                            0, q)
        return (q, "basic", *_composed(q, noise_scale, 0.0, "basic", per_label))
    tried = ("pld", "rdp") if accountant == "auto" else (accountant,)
    best = None
    for acct in tried:
        fits = lambda m, a=acct: _composed(m, noise_scale, delta, a, per_label)[0] <= epsilon  # noqa: E731
        lo = saa_query_budget(epsilon, 0.0, noise_scale, cap, "basic", per_label)[0]  # basic is always valid
        hi = lo
        while hi < cap and fits(min(cap, 2 * hi + 1)):
            hi = min(cap, 2 * hi + 1)
        q = _largest_within(fits, hi, min(cap, 2 * hi + 1))
        if best is None or q > best[0]:
            best = (q, acct)
    q, acct = best
    return (q, acct, *_composed(q, noise_scale, delta, acct, per_label))


def saa_labels(params: dict, n_public: int, n_classes: int = 2) -> tuple[int, str, float, float]:
    """:func:`saa_query_budget` of a SubsampleAggregateClassifier's parameters, its public part's size and its
    number of classes (public: the declared label set)."""
    args = (float(params["epsilon"]), resolved_delta(params), float(params["noise_scale"]),
            query_cap(params, n_public), params["accountant"])
    per = moved_counts(n_classes)
    return saa_query_budget(*args) if per == 1 else saa_query_budget(*args, per_label=per)


def saa_release_plan(params: dict, n_public: int, n_classes: int = 2) -> list[PlannedRelease]:
    """SubsampleAggregateClassifier's releases: one step, the noisy vote counts of ``Q`` public records.

    ``Q`` and the composed ``(epsilon, delta)`` are :func:`saa_labels` of the
    parameters, the public part's size and the number of classes; the step's
    noise is discrete Laplace of scale ``noise_scale`` on each count of
    :func:`released_classes` (drawn in one array, query after query) and
    refuses any other shape of counts than ``(Q,)`` (two classes) or
    ``(Q, K)``; the released counts are integers (docs/privacy.md, subsample
    and aggregate).
    """
    K = int(n_classes)
    q, acct, eps, spent_delta = saa_labels(params, n_public, K)
    s, T = float(params["noise_scale"]), int(params["n_teachers"])
    mech = DiscreteLaplaceMechanism(1.0 / s)
    m = q * moved_counts(K)
    if K == 2:
        what, composed = "noisy teacher vote counts", f"{q} labels"
        how = f"each label is 2 (v + Z) > {T} for the vote count v (sensitivity 1)"
    else:
        what, composed = f"noisy teacher vote counts of {K} classes", f"{m} counts ({q} labels x 2)"
        how = (f"each label is the argmax of v + Z for the {K} vote counts v (each of sensitivity 1; one record "
               "moves one teacher's vote, changing two counts by one, so a label costs two counts)")
    entry = LedgerEntry(
        f"labels of {q} public records ({what})", f"{SAA_MECHANISM_PREFIX}discrete laplace x{m}, {acct})",
        epsilon=eps, delta=spent_delta, sensitivity=1.0, scale=mech.scale, guarantee="proven",
        note=(f"{T} teachers on disjoint random parts; {how} and Z discrete Laplace of scale {s:g}; {composed} composed "
              f"by {acct} (docs/privacy.md, subsample and aggregate)"))
    shape = (q,) if K == 2 else (q, K)
    return [PlannedRelease(entry, functools.partial(_noisy_counts, mech, shape), Integers(), ())]


def _noisy_counts(mech: DiscreteLaplaceMechanism, shape: tuple, votes, rng) -> np.ndarray:
    """``votes + Z`` (int64) for vote counts of exactly ``shape``; nothing is drawn for none."""
    votes = np.asarray(votes).astype(np.int64)
    if votes.shape != shape:  # a fit that asks for other releases than its plan's
        n = " x ".join(str(m) for m in shape)
        raise RuntimeError(f"The plan releases {n} vote counts; got an array of shape {votes.shape}.")
    return mech.randomise(votes, rng) if votes.size else votes


def saa_vote_labels(noisy, n_teachers: int, n_classes: int) -> np.ndarray:
    """The labels (codes, uint8) from the released noisy counts: the argmax of each noisy vote histogram.

    ``noisy`` holds the counts of :func:`released_classes`: for two classes the
    count ``v + Z`` of the second, the first's being ``T - (v + Z)``, so the
    label is 1 exactly when ``2 (v + Z) > T``; for ``K >= 3`` the ``(Q, K)``
    counts.  A tie goes to the first class (numpy's argmax).  Post-processing.
    """
    noisy = np.asarray(noisy, dtype=np.int64)
    if int(n_classes) == 2:
        noisy = np.column_stack([int(n_teachers) - noisy, noisy]) if noisy.size else np.zeros((0, 2), np.int64)
    return np.argmax(noisy, axis=1).astype(np.uint8) if noisy.shape[0] else np.zeros(0, dtype=np.uint8)


# ---------------------------------------------------------------- DP-Bag's accountant
def dpbag_epsilon(moment_sum, noise_scale: float, delta: float) -> np.ndarray:
    """The paper's epsilon-hat after queries whose largest per-record sum of ``m_i(x)^2`` is ``moment_sum``.

    DP-Bag bounds record i's log moment of order ``l`` after the queries
    ``x_1..x_q`` by ``alpha_i(l) = 2 lambda^2 l (l+1) sum_j m_i(x_j)^2``
    (``lambda = 1/noise_scale``) and reports
    ``min over l >= 1 of (max_i alpha_i(l) + log(1/delta)) / l`` (the moments
    accountant's tail bound).  The minimum over integer ``l`` is taken at the
    two integers around ``sqrt(log(1/delta) / a)``, ``a = 2 lambda^2 S``.

    Examples
    --------
    >>> round(float(dpbag_epsilon(100.0, 50.0, 1e-5)), 4)  # 100 unanimous queries at lambda = 0.02
    1.9994
    """
    s = np.atleast_1d(np.asarray(moment_sum, dtype=np.float64))
    a = 2.0 * s / (noise_scale * noise_scale)
    c = math.log(1.0 / delta)
    out = np.zeros_like(a)
    pos = a > 0
    root = np.sqrt(c / a[pos])
    best = np.full(root.shape, np.inf)
    for l in (np.maximum(np.floor(root), 1.0), np.maximum(np.ceil(root), 1.0)):
        best = np.minimum(best, a[pos] * (l + 1.0) + c / l)
    out[pos] = best
    return out if np.ndim(moment_sum) else out[0]


def dpbag_release_plan(params: dict, n_classes: int = 2) -> list[PlannedRelease]:
    """DPBaggingClassifier's releases: one ``paper-claim`` step, the labels of public records.

    Each label is report-noisy-max over the ``K`` raw vote counts (for two
    classes ``(k T - v, v)``) with Laplace noise of scale ``k * noise_scale``
    (``ReportNoisyMax(2/noise_scale, sensitivity k)``: the paper's normalised
    counts at scale ``noise_scale``), drawn query after query; the released
    values are indices in ``{0, ..., K - 1}``.  How many are released is decided by
    the paper's data-dependent accountant (:func:`dpbag_epsilon`); its claim
    is the whole ``(epsilon, delta)``, which is what the entry records
    (docs/privacy.md, DP-Bag).
    """
    s, T, k = float(params["noise_scale"]), int(params["n_teachers"]), int(params["n_partitions"])
    K = int(n_classes)
    mech = ReportNoisyMax(epsilon=2.0 / s, sensitivity=float(k), noise="laplace")  # scale k * s on raw votes
    over = "" if K == 2 else f" over {K} classes"
    entry = LedgerEntry(
        "labels of public records (noisy teacher votes, as many as the accountant allows)", DPBAG_MECHANISM,
        epsilon=float(params["epsilon"]), delta=resolved_delta(params), sensitivity=float(k), scale=mech.scale,
        guarantee="paper-claim",
        note=(f"Jordon, Yoon & van der Schaar 2019: {k} partitions x {T} teachers, report-noisy-max{over} with "
              f"Laplace scale {s:g} on vote counts / {k}; stops before the data-dependent moments "
              "bound exceeds epsilon. The bound and the stopping rule use the data without noise "
              "(docs/privacy.md, DP-Bag)"))
    return [PlannedRelease(entry, functools.partial(_noisy_max_labels, mech, K), Points(tuple(range(K))), ())]


def _noisy_max_labels(mech: ReportNoisyMax, n_classes: int, histograms, rng) -> np.ndarray:
    """The report-noisy-max label of every query (one draw each, in order), from its ``K`` raw vote counts."""
    histograms = np.asarray(histograms)
    if histograms.ndim != 2 or histograms.shape[1] != n_classes:  # a fit that asks for other releases
        raise RuntimeError(f"The plan selects among {n_classes} vote counts; got an array of shape "
                           f"{histograms.shape}.")
    return np.array([mech.select(row.astype(np.float64), rng) for row in histograms], dtype=np.uint8)
