"""Teacher ensembles that label a public, unlabelled part: DP-Bag and subsample-and-aggregate.

Both classifiers split the private (labelled) records among teachers, let the
teachers vote on records of an explicitly **public, unlabelled** set
``X_public`` (passed to ``fit``), release noisy labels of some of those public
records, and train a *student* on the labelled public records.  The student,
an L2-regularised logistic regression printed as a coefficient table, is what
is published: it is computed from public records and the noisy labels only
(post-processing).  Teachers are L2-regularised logistic regressions on their
parts; they are never released.

* :class:`SubsampleAggregateClassifier` (provable): ``n_teachers`` teachers
  on disjoint parts; the label of a public record is the noisy majority
  ``2 (v + Z) > T`` of the teachers' vote count ``v`` for the second class,
  ``Z`` discrete Laplace of scale ``noise_scale`` (a count of sensitivity 1:
  one record is in one teacher's part).  It labels as many public records as
  the composition of those counts allows within ``(epsilon, delta)``
  (tight composition: privacy loss distributions or Rényi DP), a number that
  depends on public quantities only.  Proven (docs/privacy.md).
* :class:`DPBaggingClassifier`: differentially private bagging (Jordon, Yoon
  and van der Schaar, NeurIPS 2019).  ``n_partitions`` independent partitions
  of the private records into ``n_teachers`` parts each, one teacher per
  part; the label of a public record is the report-noisy-max of the two
  normalised vote counts (votes / ``n_partitions``) with Laplace noise of
  scale ``noise_scale`` (the paper's ``1/lambda``); public records are
  labelled in turn until the paper's *data-dependent* moments accountant
  (per-record moments ``2 lambda^2 m_i(x)^2 l (l+1)`` with ``m_i(x)`` the
  largest share of record i's teachers that agree on x) would exceed
  ``epsilon``.  That accountant, and the stopping rule built on it, depend on
  the data without noise: the ledger marks the release ``paper-claim``
  (docs/privacy.md says why).

**The public part.** ``X_public`` is public by declaration: its rows are not
protected (the student is fitted on them), so pass records whose features
may be published, e.g. a public survey or records their owners released.
Without it, ``fit`` draws ``n_public`` rows uniformly from ``{0,1}^d``, which
is data-independent (hence private) but useful only for tests.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from dpglass._validation import Interval, check_binary_X
from dpglass.aggregates import is_distributed
from dpglass.models._base import CLASSES, EPSILON, RANDOM_STATE, ClassifierBase
from dpglass.models.teachers.plan import (  # the plans and budgets live there; re-exported
    DPBAG_MECHANISM,
    SAA_MECHANISM_PREFIX,
    dpbag_epsilon,
    dpbag_release_plan,
    query_cap,
    saa_labels,
    saa_query_budget,
    saa_release_plan,
)
from dpglass.models.logistic.estimator import LogisticScores
from dpglass.privacy.accounting import CHOICES as ACCOUNTANT_CHOICES
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.rng import check_random_state, is_replayable, spawn
from dpglass.privacy.splits import uniform_parts

__all__ = [
    "DPBaggingClassifier",
    "SubsampleAggregateClassifier",
    "DPBAG_MECHANISM",
    "SAA_MECHANISM_PREFIX",
    "assign_records",
    "dpbag_epsilon",
    "dpbag_release_plan",
    "fit_teachers",
    "saa_query_budget",
    "saa_release_plan",
    "teacher_parts",
]

#: Gradient tolerance (per row) and iteration cap of the (non-released) teacher and student fits.
_TOL = 1e-6
_MAX_NEWTON = 100
#: Public records whose teacher votes are computed at once (memory: rows x teachers booleans).
_BLOCK = 256

_COMMON_CONSTRAINTS = {
    "epsilon": EPSILON,
    "n_teachers": [Interval(numbers.Integral, 1, None, closed="left")],
    "noise_scale": [Interval(numbers.Real, 0, None, closed="neither")],
    "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
    "max_queries": [Interval(numbers.Integral, 0, None, closed="left"), None],
    "n_public": [Interval(numbers.Integral, 1, None, closed="left")],
    "classes": CLASSES,
    "random_state": RANDOM_STATE,
}


# ------------------------------------------------------------------ teachers and student
def _with_intercept(X01) -> np.ndarray:
    X = np.asarray(X01, dtype=np.float64)
    return np.column_stack([X, np.ones(X.shape[0])])


def _logistic(A: np.ndarray, y01: np.ndarray, alpha: float, w: np.ndarray | None = None) -> np.ndarray:
    """``argmin sum_i w_i log(1 + exp(-y_i b.a_i)) + (alpha/2)||b||^2`` (rows ``A`` with intercept); 0 if no rows.

    ``w`` are the rows' record counts (a teacher's part of the pattern table;
    None: one record a row).  Damped Newton (the objective is
    ``alpha``-strongly convex), stopped when the gradient norm is below
    ``_TOL`` times the number of records plus one, or when no step decreases
    the objective.  Teachers and students are not privacy arguments (only
    noisy votes leave the teachers; the student is post-processing), so no
    certificate is needed.
    """
    ys = 2.0 * np.asarray(y01, dtype=np.float64) - 1.0
    w = np.ones(A.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    YA = A * ys[:, None]
    beta = np.zeros(A.shape[1])
    value = float((w * np.logaddexp(0.0, -(YA @ beta))).sum())
    limit = _TOL * (float(w.sum()) + 1)
    for _ in range(_MAX_NEWTON):
        s = expit(-(YA @ beta))
        g = alpha * beta - YA.T @ (w * s)
        if float(np.linalg.norm(g)) <= limit:
            break
        H = A.T @ (A * (w * (s * (1.0 - s)))[:, None])
        H[np.diag_indices_from(H)] += alpha
        step = np.linalg.solve(H, g)
        t = 1.0
        while t > 1e-10:
            cand = beta - t * step
            new = float((w * np.logaddexp(0.0, -(YA @ cand))).sum()) + 0.5 * alpha * float(cand @ cand)
            if new <= value - 0.25 * t * float(g @ step):
                break
            t *= 0.5
        else:
            break
        beta, value = cand, new
    return beta


#: Records assigned at a time when the teachers' parts are counted (memory: a few int64 per record).
_ASSIGN_BLOCK = 1 << 20


def assign_records(table, n_teachers: int, n_partitions: int, rng) -> np.ndarray:
    """``(n_partitions, records)``: the teacher of every record in every partition, uniform and independent.

    The records are those of the :class:`~dpglass.aggregates.PatternTable`,
    entry by entry in its key order: the ``c`` records of an entry (same row,
    same label) are interchangeable, so per entry the parts receive a
    Multinomial(c, uniform) split of them, the law of per-record draws in any
    order (docs/privacy.md, teacher ensembles).  Record order does not matter.
    """
    return uniform_parts(table.n_records, n_teachers, n_partitions, rng)


def teacher_parts(table, assignment: np.ndarray, n_teachers: int) -> sp.csr_matrix:
    """``(n_partitions * n_teachers, entries)``: how many records of each table entry each teacher learns from.

    Teacher ``p * n_teachers + t`` gets the records with ``assignment[p] == t``.
    """
    from dpglass.aggregates import count_keys

    k, n = assignment.shape
    m = table.n_entries
    ends = np.cumsum(table.counts)
    keys, counts = [], []
    for p in range(k):
        for start in range(0, n, _ASSIGN_BLOCK):
            stop = min(start + _ASSIGN_BLOCK, n)
            entry = np.searchsorted(ends, np.arange(start, stop), side="right")  # the entry of each record
            teacher = assignment[p, start:stop].astype(np.int64) + p * n_teachers
            kk, cc = count_keys(teacher * m + entry, owned=True)
            keys.append(kk)
            counts.append(cc)
    if keys:  # an entry cut by a block boundary appears twice: merge
        kk, cc = count_keys(np.concatenate(keys), np.concatenate(counts))
    else:
        kk, cc = np.zeros(0, np.int64), np.zeros(0, np.int64)
    parts = sp.csr_matrix((cc.astype(np.float64), (kk // max(m, 1), kk % max(m, 1))), shape=(k * n_teachers, m))
    parts.sort_indices()
    return parts


def fit_teachers(table, parts: sp.csr_matrix, alpha: float) -> np.ndarray:
    """Weights ``(teachers, d + 1)`` of one logistic regression per teacher, on its part of the table.

    ``parts[t]`` holds teacher ``t``'s record count of every entry of the
    :class:`~dpglass.aggregates.PatternTable` (:func:`teacher_parts`); the
    loss is summed over those records (each distinct row once, weighted by
    its count).  A teacher with no records has weights 0 (it votes for the
    first class).
    """
    from threadpoolctl import threadpool_limits

    A = _with_intercept(table.unpack())
    labels = table.labels
    W = np.zeros((parts.shape[0], A.shape[1]))
    with threadpool_limits(1):  # thousands of small solves: threads only contend
        for t in range(parts.shape[0]):
            lo, hi = parts.indptr[t], parts.indptr[t + 1]
            if hi > lo:
                rows, w = parts.indices[lo:hi], parts.data[lo:hi]
                # a column that is 0 on every row of the part gets weight 0 (L2): solve on the others
                used = np.flatnonzero(A[rows].any(axis=0))
                W[t, used] = _logistic(A[np.ix_(rows, used)], labels[rows], alpha, w)
    return W


def _votes(W: np.ndarray, X_block) -> np.ndarray:
    """Teacher votes for the second class, ``(rows, teachers)`` booleans."""
    return (_with_intercept(X_block) @ W.T) > 0.0


# ---------------------------------------------------------------- DP-Bag's queries
def _membership(assignment: np.ndarray, n_teachers: int) -> sp.csr_matrix:
    """``(records, teachers)`` with ``1/k`` where a record is in a teacher's part (k = partitions)."""
    k, n = assignment.shape
    cols = (assignment + (np.arange(k) * n_teachers)[:, None]).T.ravel()
    rows = np.repeat(np.arange(n), k)
    return sp.csr_matrix((np.full(n * k, 1.0 / k), (rows, cols)), shape=(n, k * n_teachers))


def dpbag_queries(W, X_pub, assignment, n_teachers, *, epsilon, delta, noise_scale, cap):
    """How many public records DP-Bag labels, and their raw vote counts for the second class.

    Queries ``X_pub[0], X_pub[1], ...`` are taken in turn while the paper's
    epsilon-hat (:func:`dpbag_epsilon`) after them stays at most ``epsilon``
    (the authors' code answers one query past that point; we do not), at
    most ``cap`` of them.  ``m_i(x)`` is the larger of the shares of record
    i's ``k`` teachers that vote for each class.  Data-dependent: this is the
    paper's claim, not a proven bound.
    """
    M = _membership(assignment, n_teachers)
    running = np.zeros(M.shape[0])
    counts = []
    for start in range(0, min(cap, X_pub.shape[0]), _BLOCK):
        V = _votes(W, X_pub[start:min(start + _BLOCK, cap)])
        share = np.asarray(M @ V.T.astype(np.float64))  # (records, queries): share of i's teachers voting 1
        m2 = np.maximum(share, 1.0 - share) ** 2
        cumulative = running[:, None] + np.cumsum(m2, axis=1)
        worst = cumulative.max(axis=0) if cumulative.shape[0] else np.zeros(cumulative.shape[1])
        over = np.flatnonzero(dpbag_epsilon(worst, noise_scale, delta) > epsilon * (1 + 1e-12))
        stop = int(over[0]) if over.size else V.shape[0]
        counts.append(V[:stop].sum(axis=1))
        if over.size:
            break
        running = cumulative[:, -1]
    counts = np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64)
    return counts.size, counts.astype(np.int64)


# ------------------------------------------------------------------------- estimators
class _TeacherStudent(LogisticScores, ClassifierBase):
    """What DP-Bag and subsample-and-aggregate share: data checks, the public part, the student, printing."""

    _private = True

    _distributed_fit = True  # teachers learn from parts of the pattern table: fits on dask collections

    def _fit_common(self, X, y, X_public):
        self._validate_params()
        rng = check_random_state(self.random_state)
        table = self._fit_table(X, y)  # in memory or through Dask: the same table
        split_rng, public_rng, noise_rng = spawn(rng, 3)
        if X_public is None:  # data-independent public points (tests, sklearn's checks)
            X_pub = (public_rng.random((int(self.n_public), table.n_features)) < 0.5).astype(np.uint8)
        else:
            if is_distributed(X_public):  # public and small: brought to the client
                X_public = X_public.compute()
            X_pub = check_binary_X(self, X_public, reset=False)
            X_pub = X_pub[public_rng.permutation(X_pub.shape[0])]  # queries in a random order
        self.n_public_ = int(X_pub.shape[0])
        self.public_given_ = X_public is not None
        cap = query_cap(self.get_params(deep=False), self.n_public_)
        return rng, table, X_pub, cap, split_rng, noise_rng

    def _fit_student(self, X_pub, labels, ledger, rng) -> None:
        beta = _logistic(_with_intercept(X_pub[: labels.size]), labels, float(self.alpha))
        self.coef_ = beta[:-1].copy()
        self.intercept_ = float(beta[-1])
        self.privacy_ledger_ = ledger
        self.privacy_ledger_.replayable = is_replayable(rng)
        self.n_features_used_ = int(np.count_nonzero(self.coef_))

    def _headline(self) -> list[str]:  # pragma: no cover - both subclasses override it
        raise NotImplementedError

    def to_text(self, top: int | None = None) -> str:
        """The student's coefficient table (largest magnitude first), with feature names."""
        names = self.feature_names()
        order = np.argsort(-np.abs(self.coef_), kind="stable")[: top if top is not None else None]
        eps, delta = self.privacy_ledger_.total()
        lines = self._headline()
        lines.append(f"privacy: epsilon={eps:.4g}, delta={delta:.3g} ({self.privacy_ledger_.guarantee})")
        return "\n".join(lines + self._coefficient_table(names, order))

    def _state_to_dict(self) -> dict:
        return {"coef": [float(c) for c in self.coef_], "intercept": float(self.intercept_),
                "n_public": int(self.n_public_), "public_given": bool(self.public_given_)}

    def _state_from_dict(self, data: dict) -> None:
        self.coef_ = np.array(data["coef"], dtype=np.float64)
        self.intercept_ = float(data["intercept"])
        self.n_public_ = int(data["n_public"])
        self.public_given_ = bool(data.get("public_given", True))  # files before the flag: a public part assumed
        self.n_features_used_ = int(np.count_nonzero(self.coef_))

    def _public_words(self) -> str:
        """What the student learned from: the declared public records, or uniform random rows."""
        if self.public_given_:
            return "public records"
        return "uniform random 0/1 rows (no public part was given: X_public / --public)"


class SubsampleAggregateClassifier(_TeacherStudent):
    """Subsample-and-aggregate: teachers on disjoint parts label public records; a student learns from them.

    The private records are split uniformly at random among ``n_teachers``
    teachers (each record joins one, independently; drawn on the data's
    pattern table, so the order of the records does not matter and the fit
    is the same through Dask), each an L2 logistic regression.  Public records (``X_public``, in a random order) are
    labelled by the teachers' noisy majority: with ``v`` the number of
    teachers voting for the second class, the label is ``2 (v + Z) > T``,
    ``Z`` exact discrete Laplace noise of scale ``noise_scale``.  One record
    changes one teacher, so ``v`` has sensitivity 1 and each label is
    ``1/noise_scale``-DP; ``Q`` labels compose by the ``accountant`` to at
    most ``(epsilon, delta)``, and ``Q`` is the largest such number (public).
    The student, an L2 logistic regression fitted on the ``Q`` labelled
    public records, is released.  Proven (docs/privacy.md, "Subsample and
    aggregate").

    Parameters
    ----------
    epsilon : float, default=1.0
    delta : float in [0, 1) or None, default=None
        ``0``: pure epsilon-DP (basic composition).  ``None``: the public
        default 1e-8.
    n_teachers : int, default=100
    noise_scale : float, default=50.0
        Discrete Laplace scale on a vote count, in teachers (DP-Bag's
        ``1/lambda``); smaller means cleaner labels and fewer of them.
    alpha : float, default=1.0
        L2 weight of the teachers' and the student's logistic losses (sums).
    max_queries : int or None, default=None
        At most this many public records are labelled (None: all the budget allows).
    accountant : {"auto", "basic", "pld", "rdp"}, default="auto"
    n_public : int, default=1000
        Public points drawn uniformly from ``{0,1}^d`` when ``fit`` gets no ``X_public``.
    classes : list of two labels or None, default=None
    random_state : None, int, SeedSequence or Generator, default=None

    Attributes
    ----------
    coef_, intercept_ : the student's coefficients (feature order) and intercept
    n_labelled_ : int
        Public records labelled (a function of the parameters and ``n_public_``).
    n_public_ : int
        Rows of the public part.
    composition_ : str
        The accountant that set ``n_labelled_``.
    delta_ : float
        The resolved delta.
    privacy_ledger_ : PrivacyLedger
        One entry: the ``n_labelled_`` labels, composed.
    n_features_used_, classes_, n_features_in_, feature_names_in_

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((3000, 4)) < 0.5).astype(int)
    >>> y = X[:, 0] | X[:, 1]
    >>> public = (rng.random((500, 4)) < 0.5).astype(int)
    >>> clf = SubsampleAggregateClassifier(epsilon=2.0, delta=1e-6, n_teachers=20, noise_scale=10.0,
    ...                                    random_state=0).fit(X, y, X_public=public)
    >>> clf.n_labelled_  # labels of scale-10 vote counts that fit (2, 1e-6): public parameters only
    24
    >>> float(clf.score(X, y)) > 0.75
    True
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "delta": [Interval(numbers.Real, 0, 1, closed="left"), None],
        "accountant": [list(ACCOUNTANT_CHOICES)],
    }

    def __init__(self, *, epsilon=1.0, delta=None, n_teachers=100, noise_scale=50.0, alpha=1.0, max_queries=None,
                 accountant="auto", n_public=1000, classes=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.n_teachers = n_teachers
        self.noise_scale = noise_scale
        self.alpha = alpha
        self.max_queries = max_queries
        self.accountant = accountant
        self.n_public = n_public
        self.classes = classes
        self.random_state = random_state

    def fit(self, X, y, X_public=None):
        """Fit the teachers, label public records with noise, fit the student.

        Parameters
        ----------
        X : array-like of 0/1, shape (n_samples, n_features)
            The private records.
        y : array-like of shape (n_samples,)
        X_public : array-like of 0/1, shape (n_public, n_features) or None
            **Public** unlabelled records (not protected: the student is fitted
            on them).  None: ``n_public`` uniform random 0/1 rows.

        Returns
        -------
        self
        """
        rng, table, X_pub, _, split_rng, noise_rng = self._fit_common(X, y, X_public)
        delta = self._resolve_delta(self.delta)
        params, T = self.get_params(deep=False), int(self.n_teachers)
        plan = saa_release_plan(params, self.n_public_)  # Q labels: public parameters and the public part's size
        q, acct = saa_labels(params, self.n_public_)[:2]
        self._warn_about_guarantee(float(self.epsilon))
        parts = teacher_parts(table, assign_records(table, T, 1, split_rng), T)
        W = fit_teachers(table, parts, float(self.alpha))
        votes = np.concatenate([_votes(W, X_pub[a:min(a + _BLOCK, q)]).sum(axis=1) for a in range(0, q, _BLOCK)]
                               ) if q else np.zeros(0, dtype=np.int64)
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=delta).follow(plan)
        noisy = ledger.release(plan[0], votes, noise_rng)
        labels = (2 * np.asarray(noisy, dtype=np.int64) > T).astype(np.uint8)  # post-processing of the counts
        self.n_labelled_, self.composition_, self.delta_ = q, acct, delta
        self._fit_student(X_pub, labels, ledger, rng)
        return self

    def _headline(self) -> list[str]:
        return [f"SubsampleAggregateClassifier: student logistic regression on {self.n_labelled_} of "
                f"{self.n_public_} {self._public_words()}, labelled by the noisy majority of {self.n_teachers} "
                "teachers"]

    def _state_to_dict(self) -> dict:
        return {**super()._state_to_dict(), "n_labelled": int(self.n_labelled_), "composition": self.composition_,
                "delta": float(self.delta_)}

    def _state_from_dict(self, data: dict) -> None:
        super()._state_from_dict(data)
        self.n_labelled_ = int(data["n_labelled"])
        self.composition_ = str(data["composition"])
        self.delta_ = float(data["delta"])


class DPBaggingClassifier(_TeacherStudent):
    """Differentially private bagging (Jordon, Yoon and van der Schaar, NeurIPS 2019): a paper's claim.

    ``n_partitions`` times, the private records are split uniformly at
    random among ``n_teachers`` teachers (L2 logistic regressions), so every
    record trains ``n_partitions`` teachers.  Public records (``X_public``, in
    a random order) are labelled in turn by report-noisy-max over the two
    normalised vote counts (votes / ``n_partitions``, each in ``[0, T]``)
    with Laplace noise of scale ``noise_scale`` (the paper's ``1/lambda``;
    sampled exactly, on integer raw votes), while the paper's data-dependent
    moments accountant (:func:`dpbag_epsilon`) stays within ``epsilon``.
    A student (L2 logistic regression) is fitted on the labelled public
    records and released.

    **Guarantee: paper-claim.**  The accountant bounds each record's privacy
    loss by ``m_i(x)``, the share of its own teachers that agree on ``x``:
    a function of the data, used without noise both for the bound and to
    decide when to stop.  The ledger marks the release ``paper-claim`` and
    ``fit`` warns (docs/privacy.md, "DP-Bag").  Use
    :class:`SubsampleAggregateClassifier` for a proven release.

    Parameters
    ----------
    epsilon : float, default=1.0
    delta : float in (0, 1) or None, default=None
        The moments accountant needs ``delta > 0``; None: the public default 1e-8.
    n_teachers : int, default=100
        Teachers per partition (the authors' Adult example: 100).
    n_partitions : int, default=50
        Partitions (the authors' example: 50).
    noise_scale : float, default=50.0
        ``1/lambda`` (the authors' example: lambda = 0.02).
    alpha : float, default=1.0
    max_queries : int or None, default=None
    n_public : int, default=1000
    classes : list of two labels or None, default=None
    random_state : None, int, SeedSequence or Generator, default=None

    Attributes
    ----------
    coef_, intercept_, n_public_, privacy_ledger_, n_features_used_, classes_, n_features_in_, feature_names_in_
    n_labelled_ : int
        Public records labelled.  Data-dependent: not saved and not printed.
    delta_ : float
        The resolved delta.
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "n_partitions": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, *, epsilon=1.0, delta=None, n_teachers=100, n_partitions=50, noise_scale=50.0, alpha=1.0,
                 max_queries=None, n_public=1000, classes=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.n_teachers = n_teachers
        self.n_partitions = n_partitions
        self.noise_scale = noise_scale
        self.alpha = alpha
        self.max_queries = max_queries
        self.n_public = n_public
        self.classes = classes
        self.random_state = random_state

    def fit(self, X, y, X_public=None):
        """Fit the teachers, label public records while the paper's accountant allows, fit the student.

        Parameters
        ----------
        X : array-like of 0/1, shape (n_samples, n_features)
            The private records.
        y : array-like of shape (n_samples,)
        X_public : array-like of 0/1, shape (n_public, n_features) or None
            **Public** unlabelled records (not protected).  None: ``n_public``
            uniform random 0/1 rows.

        Returns
        -------
        self
        """
        rng, table, X_pub, cap, split_rng, noise_rng = self._fit_common(X, y, X_public)
        delta = self._resolve_delta(self.delta)
        T, k = int(self.n_teachers), int(self.n_partitions)
        self._warn_about_guarantee(float(self.epsilon), "DP-Bag's data-dependent moments accountant")
        plan = dpbag_release_plan(self.get_params(deep=False))  # one paper-claim entry: the whole budget
        assignment = assign_records(table, T, k, split_rng)  # per record: the accountant reads each one's teachers
        W = fit_teachers(table, teacher_parts(table, assignment, T), float(self.alpha))
        q, ones = dpbag_queries(W, X_pub, assignment, T, epsilon=float(self.epsilon), delta=delta,
                                noise_scale=float(self.noise_scale), cap=cap)
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=delta).follow(plan)
        labels = ledger.release(plan[0], ones, noise_rng)  # report-noisy-max, query after query
        self.n_labelled_, self.delta_ = q, delta
        self._fit_student(X_pub, labels, ledger, rng)
        return self

    def _headline(self) -> list[str]:
        return [f"DPBaggingClassifier (DP-Bag, Jordon, Yoon & van der Schaar 2019): student logistic regression on "
                f"{self._public_words()} labelled by {self.n_partitions} x {self.n_teachers} teachers' noisy votes",
                "guarantee: paper-claim (a data-dependent moments accountant; not proven, docs/privacy.md)"]

    def _state_to_dict(self) -> dict:
        return {**super()._state_to_dict(), "delta": float(self.delta_)}

    def _state_from_dict(self, data: dict) -> None:
        super()._state_from_dict(data)
        self.delta_ = float(data["delta"])
