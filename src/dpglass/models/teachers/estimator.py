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
  one record is in one teacher's part); with ``K >= 3`` classes the argmax
  of the ``K`` noisy vote counts (two of which one record can move, so a
  label costs two counts).  It labels as many public records as
  the composition of those counts allows within ``(epsilon, delta)``
  (tight composition: privacy loss distributions or Rényi DP), a number that
  depends on public quantities only.  Proven (docs/privacy.md).
* :class:`DPBaggingClassifier`: differentially private bagging (Jordon, Yoon
  and van der Schaar, NeurIPS 2019).  ``n_partitions`` independent partitions
  of the private records into ``n_teachers`` parts each, one teacher per
  part; the label of a public record is the report-noisy-max of the ``K``
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
    saa_vote_labels,
)
from dpglass.models.logistic.estimator import LogisticScores
from dpglass.models.teachers.learners import (  # the (non-released) learners and the votes live there; re-exported
    _votes,
    _with_intercept,
    fit_logistic,
    fit_teacher,
    vote_histograms,
)
from dpglass.models.teachers.workers import (  # where the teachers learn (each part of the table); re-exported
    assign_records,
    dpbag_queries,
    teacher_parts,
    teacher_states,
    teacher_weights,
)
from dpglass.aggregates.parts import table_parts
from dpglass.privacy.accounting import CHOICES as ACCOUNTANT_CHOICES
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.rng import check_random_state, is_replayable, spawn
from dpglass.privacy.splits import part_seeds

__all__ = [
    "DPBaggingClassifier",
    "SubsampleAggregateClassifier",
    "DPBAG_MECHANISM",
    "SAA_MECHANISM_PREFIX",
    "assign_records",
    "dpbag_epsilon",
    "dpbag_release_plan",
    "fit_teacher",
    "saa_query_budget",
    "saa_release_plan",
    "teacher_parts",
    "vote_histograms",
]

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


# ------------------------------------------------------------------------- estimators
def _features_used(coef: np.ndarray) -> int:
    """Features with a non-zero coefficient (for some class)."""
    return int(np.count_nonzero(coef if coef.ndim == 1 else np.any(coef != 0, axis=0)))


class _TeacherStudent(LogisticScores, ClassifierBase):
    """What DP-Bag and subsample-and-aggregate share: data checks, the public part, the student, printing."""

    _private = True

    _distributed_fit = True  # teachers learn from parts of the pattern table: fits on dask collections
    _worker_stats = True  # on Dask the table stays on the workers; the teachers are fitted there (teachers.workers)
    _max_classes = 255  # teachers vote over K classes (a noisy argmax); the student is multinomial for K >= 3

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
        beta = fit_logistic(_with_intercept(X_pub[: labels.size]), labels, len(self.classes_), float(self.alpha))
        self.coef_ = beta[..., :-1].copy()  # (d,) for two classes, (K, d) for more
        self.intercept_ = float(beta[-1]) if beta.ndim == 1 else beta[:, -1].copy()
        self.privacy_ledger_ = ledger
        self.privacy_ledger_.replayable = is_replayable(rng)
        self.n_features_used_ = _features_used(self.coef_)

    def _headline(self) -> list[str]:  # pragma: no cover - both subclasses override it
        raise NotImplementedError

    def to_text(self, top: int | None = None) -> str:
        """The student's coefficient table (largest magnitude first), with feature names."""
        names = self.feature_names()
        eps, delta = self.privacy_ledger_.total()
        lines = self._headline()
        lines.append(f"privacy: epsilon={eps:.4g}, delta={delta:.3g} ({self.privacy_ledger_.guarantee})")
        return "\n".join(lines + self._coefficient_table(names, self._feature_order(top)))  # K columns for K >= 3

    def _state_to_dict(self) -> dict:
        if np.ndim(self.coef_) == 1:
            coef, intercept = [float(c) for c in self.coef_], float(self.intercept_)
        else:
            coef, intercept = [[float(c) for c in row] for row in self.coef_], [float(c) for c in self.intercept_]
        return {"coef": coef, "intercept": intercept, "n_public": int(self.n_public_),
                "public_given": bool(self.public_given_)}

    def _state_from_dict(self, data: dict) -> None:
        self.coef_ = np.array(data["coef"], dtype=np.float64)
        self.intercept_ = float(data["intercept"]) if self.coef_.ndim == 1 else np.array(data["intercept"], float)
        self.n_public_ = int(data["n_public"])
        self.public_given_ = bool(data.get("public_given", True))  # files before the flag: a public part assumed
        self.n_features_used_ = _features_used(self.coef_)

    def _public_words(self) -> str:
        """What the student learned from: the declared public records, or uniform random rows."""
        if self.public_given_:
            return "public records"
        return "uniform random 0/1 rows (no public part was given: X_public / --public)"


class SubsampleAggregateClassifier(_TeacherStudent):
    """Subsample-and-aggregate: teachers on disjoint parts label public records; a student learns from them.

    The private records are split at random among ``n_teachers`` teachers
    (each record joins one, by a keyed hash of a public seed and of the
    record itself: drawn where its entry of the pattern table is, so the
    order of the records does not matter and the fit is the same through
    Dask, :mod:`dpglass.models.teachers.workers`), each an L2 logistic
    regression.  Public records (``X_public``, in a random order) are
    labelled by the teachers' noisy majority: with ``v`` the number of
    teachers voting for the second class, the label is ``2 (v + Z) > T``,
    ``Z`` exact discrete Laplace noise of scale ``noise_scale``.  One record
    changes one teacher, so ``v`` has sensitivity 1 and each label is
    ``1/noise_scale``-DP.  With ``K >= 3`` classes (multinomial teachers and
    student) the label is the argmax of the ``K`` noisy vote counts; one
    record moves one teacher's vote, changing two counts by one, so each
    label is ``2/noise_scale``-DP (two counts).  ``Q`` labels compose by the ``accountant`` to at
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
    classes : list of K >= 2 labels or None, default=None
        The public label set, in order (``predict_proba``'s columns).
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
        params, T, K = self.get_params(deep=False), int(self.n_teachers), len(self.classes_)
        plan = saa_release_plan(params, self.n_public_, K)  # Q labels: public parameters, part's size, classes
        q, acct = saa_labels(params, self.n_public_, K)[:2]
        self._warn_about_guarantee(float(self.epsilon))
        states = teacher_states(table_parts(table), part_seeds(1, split_rng), T)  # each part draws its teachers
        W = teacher_weights(states, T, table.n_features, K, float(self.alpha))
        hist = np.concatenate([vote_histograms(_votes(W, X_pub[a:min(a + _BLOCK, q)]), K) for a in range(0, q, _BLOCK)]
                              ) if q else np.zeros((0, K), dtype=np.int64)
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=delta).follow(plan)
        exact = hist[:, 1] if K == 2 else hist  # the counts of plan.released_classes(K)
        noisy = ledger.release(plan[0], exact, noise_rng)
        labels = saa_vote_labels(noisy, T, K)  # post-processing of the counts: their noisy argmax
        self.n_labelled_, self.composition_, self.delta_ = q, acct, delta
        self._fit_student(X_pub, labels, ledger, rng)
        return self

    def _headline(self) -> list[str]:
        return [f"SubsampleAggregateClassifier: student logistic regression on {self.n_labelled_} of "
                f"{self.n_public_} {self._public_words()}, labelled by the noisy {self._vote_words()} of "
                f"{self.n_teachers} teachers"]

    def _vote_words(self) -> str:
        K = len(self.classes_)
        return "majority" if K == 2 else f"plurality (argmax of the vote counts of {K} classes)"

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
    a random order) are labelled in turn by report-noisy-max over the ``K``
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
    classes : list of K >= 2 labels or None, default=None
        The public label set, in order (``predict_proba``'s columns).
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
        K = len(self.classes_)
        plan = dpbag_release_plan(self.get_params(deep=False), K)  # one paper-claim entry: the whole budget
        states = teacher_states(table_parts(table), part_seeds(k, split_rng), T)  # the accountant reads them too
        W = teacher_weights(states, T * k, table.n_features, K, float(self.alpha))
        q, hist = dpbag_queries(states, W, X_pub, T, epsilon=float(self.epsilon), delta=delta,
                                noise_scale=float(self.noise_scale), cap=cap, n_classes=K)
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=delta).follow(plan)
        labels = ledger.release(plan[0], hist, noise_rng)  # report-noisy-max, query after query
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
