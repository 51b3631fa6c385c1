"""Release plans of the teacher ensembles (issue 27): subsample-and-aggregate and DP-Bag.

Each model releases one thing about its private records: the labels of
public records, drawn from the teachers' votes.  Its plan
(:func:`saa_release_plan`, :func:`dpbag_release_plan`) is written once, from
the public parameters and the public part's size; ``fit`` spends only
through it (:meth:`~dpglass.privacy.ledger.PrivacyLedger.release`) and the
file verifier replays it (:func:`~dpglass.privacy.plan.check_against_plan`).

* Subsample-and-aggregate: one step, the noisy vote counts of the first
  ``Q`` public records (integers), ``Q`` the largest number of
  :func:`saa_label_entry` releases whose composition fits ``(epsilon, delta)``
  (:func:`saa_query_budget`: public inputs only).  The ledger records the
  composition as one entry (a composition result, as the ledger's
  conventions allow); the labels ``2 (v + Z) > T`` are post-processing.
* DP-Bag: one step, the report-noisy-max labels (indices 0/1) of as many
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
    "query_cap",
    "resolved_delta",
    "saa_label_entry",
    "saa_labels",
    "saa_query_budget",
    "saa_release_plan",
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


def _composed(q: int, noise_scale: float, delta: float, accountant: str) -> tuple[float, float]:
    if q == 0:
        return 0.0, 0.0
    return compose([saa_label_entry(noise_scale)] * q, accountant, delta)


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
                     accountant: str = "auto") -> tuple[int, str, float, float]:
    """``(Q, accountant, epsilon spent, delta spent)``: how many noisy labels fit ``(epsilon, delta)``.

    Each label is a discrete-Laplace count of scale ``noise_scale`` and
    sensitivity 1 (``1/noise_scale``-DP alone, :func:`saa_label_entry`);
    ``Q`` is the largest number (at most ``cap``) whose composition under the
    accountant stays within ``epsilon`` at ``delta``.  ``"auto"``:
    ``"basic"`` when ``delta = 0``, else whichever of ``"pld"`` and ``"rdp"``
    allows more labels.  Public inputs only.

    Examples
    --------
    >>> saa_query_budget(1.0, 0.0, 50.0, 1000)[:2]  # basic composition: 1 / (1/50)
    (50, 'basic')
    """
    if delta <= 0 or accountant == "basic":
        q = min(cap, int(math.floor(epsilon * noise_scale * (1 + 1e-12))))
        q = _largest_within(lambda m: _composed(m, noise_scale, 0.0, "basic")[0] <= epsilon * (1 + 1e-12), 0, q)
        return (q, "basic", *_composed(q, noise_scale, 0.0, "basic"))
    tried = ("pld", "rdp") if accountant == "auto" else (accountant,)
    best = None
    for acct in tried:
        fits = lambda m, a=acct: _composed(m, noise_scale, delta, a)[0] <= epsilon  # noqa: E731
        lo = saa_query_budget(epsilon, 0.0, noise_scale, cap, "basic")[0]  # basic is always valid
        hi = lo
        while hi < cap and fits(min(cap, 2 * hi + 1)):
            hi = min(cap, 2 * hi + 1)
        q = _largest_within(fits, hi, min(cap, 2 * hi + 1))
        if best is None or q > best[0]:
            best = (q, acct)
    q, acct = best
    return (q, acct, *_composed(q, noise_scale, delta, acct))


def saa_labels(params: dict, n_public: int) -> tuple[int, str, float, float]:
    """:func:`saa_query_budget` of a SubsampleAggregateClassifier's parameters and its public part's size."""
    return saa_query_budget(float(params["epsilon"]), resolved_delta(params), float(params["noise_scale"]),
                            query_cap(params, n_public), params["accountant"])


def saa_release_plan(params: dict, n_public: int) -> list[PlannedRelease]:
    """SubsampleAggregateClassifier's releases: one step, the noisy vote counts of ``Q`` public records.

    ``Q`` and the composed ``(epsilon, delta)`` are :func:`saa_labels` of the
    parameters and the public part's size; the step's noise is discrete
    Laplace of scale ``noise_scale`` on each count (drawn in one vector, in
    query order) and refuses any number of counts but ``Q``; the released
    counts are integers (docs/privacy.md, subsample and aggregate).
    """
    q, acct, eps, spent_delta = saa_labels(params, n_public)
    s, T = float(params["noise_scale"]), int(params["n_teachers"])
    mech = DiscreteLaplaceMechanism(1.0 / s)
    entry = LedgerEntry(
        f"labels of {q} public records (noisy teacher vote counts)", f"{SAA_MECHANISM_PREFIX}discrete laplace x{q}, "
        f"{acct})", epsilon=eps, delta=spent_delta, sensitivity=1.0, scale=mech.scale, guarantee="proven",
        note=(f"{T} teachers on disjoint random parts; each label is 2 (v + Z) > {T} for the vote count v "
              f"(sensitivity 1) and Z discrete Laplace of scale {s:g}; {q} labels composed by {acct} "
              "(docs/privacy.md, subsample and aggregate)"))
    return [PlannedRelease(entry, functools.partial(_noisy_counts, mech, q), Integers(), ())]


def _noisy_counts(mech: DiscreteLaplaceMechanism, q: int, votes, rng) -> np.ndarray:
    """``votes + Z`` (int64) for exactly ``q`` vote counts; nothing is drawn for none."""
    votes = np.asarray(votes).astype(np.int64)
    if votes.shape != (q,):  # a fit that asks for other releases than its plan's
        raise RuntimeError(f"The plan releases {q} vote counts; got an array of shape {votes.shape}.")
    return mech.randomise(votes, rng) if q else votes


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


def dpbag_release_plan(params: dict) -> list[PlannedRelease]:
    """DPBaggingClassifier's releases: one ``paper-claim`` step, the labels of public records.

    Each label is report-noisy-max over the two raw vote counts
    ``(k T - v, v)`` with Laplace noise of scale ``k * noise_scale``
    (``ReportNoisyMax(2/noise_scale, sensitivity k)``: the paper's normalised
    counts at scale ``noise_scale``), drawn query after query; the released
    values are indices in ``{0, 1}``.  How many are released is decided by
    the paper's data-dependent accountant (:func:`dpbag_epsilon`); its claim
    is the whole ``(epsilon, delta)``, which is what the entry records
    (docs/privacy.md, DP-Bag).
    """
    s, T, k = float(params["noise_scale"]), int(params["n_teachers"]), int(params["n_partitions"])
    mech = ReportNoisyMax(epsilon=2.0 / s, sensitivity=float(k), noise="laplace")  # scale k * s on raw votes
    entry = LedgerEntry(
        "labels of public records (noisy teacher votes, as many as the accountant allows)", DPBAG_MECHANISM,
        epsilon=float(params["epsilon"]), delta=resolved_delta(params), sensitivity=float(k), scale=mech.scale,
        guarantee="paper-claim",
        note=(f"Jordon, Yoon & van der Schaar 2019: {k} partitions x {T} teachers, report-noisy-max with "
              f"Laplace scale {s:g} on vote counts / {k}; stops before the data-dependent moments "
              "bound exceeds epsilon. The bound and the stopping rule use the data without noise "
              "(docs/privacy.md, DP-Bag)"))
    return [PlannedRelease(entry, functools.partial(_noisy_max_labels, mech, k * T), Points((0, 1)), ())]


def _noisy_max_labels(mech: ReportNoisyMax, votes_total: int, ones, rng) -> np.ndarray:
    """The report-noisy-max label of every query (one draw each, in order), from its votes for the second class."""
    return np.array([mech.select(np.array([votes_total - v, v], dtype=np.float64), rng) for v in ones],
                    dtype=np.uint8)
