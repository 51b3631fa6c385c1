"""How a DP rule list picks the next rule: one selector per mechanism.

Each selector is a measurement in OpenDP's sense: an object built from its
public parameters that, given the exact counts of every candidate on the
remaining records (the last candidate is "no rule") and a generator, samples
the index it selects and returns it with its own ledger entry (epsilon, delta,
guarantee, note).  No caller edits an entry.  ``SELECTORS`` maps each
``mechanism=`` name to its class.  The privacy argument
of each selector is in ``docs/privacy.md`` (section "DP greedy rule lists").
Counts are of K >= 2 classes (:class:`StepCounts`); the Gini impurity of K
classes has the binary sensitivities (docs/privacy.md, "K classes"), and
only local-pf's scale and noisy-counts' table size depend on K.

Selectors
---------
``local-pf``
    Permute-and-flip (report-noisy-max with exponential noise) on -Gini with
    the scale set by the local sensitivity g(n - 1) at the true remaining
    count n, calibrated to 1 / (1 + (1 - 1/K) / 4) of the budget (8/9 for two
    classes).  Pure epsilon-DP: the noise scale varies with n, but
    1/g(n - 1) moves by less than 1/2 per record and the Gini impurity lies
    in [0, 1 - 1/K], so the winner's threshold moves by at most
    (1 + (1 - 1/K) / 4) * epsilon' (docs/privacy.md).
``certified-pf`` (default)
    Permute-and-flip on -Gini with sensitivity g(m0 - 1), where m0 is a lower
    bound on the remaining count certified by the released noisy count (it
    fails with probability delta_T).  Proven (epsilon, delta_T).
``smooth-laplace`` / ``smooth-cauchy``
    Paper 001's sm-Laplace / sm-Cauchy: every candidate's Gini plus noise
    scaled to the smooth sensitivity of the Gini impurity, lowest noisy value
    wins.  Each single noisy value is (epsilon, delta)-DP (NRS 2007); counting
    the report-noisy-min over them as one release is the paper's claim, which
    dpglass cannot prove, so the ledger marks it ``paper-claim``.
``global-laplace``
    Report-noisy-min with Laplace noise at the global sensitivity 0.5; scale
    2 * 0.5 / epsilon since the Gini scores are not monotone (Dwork & Roth,
    Claim 3.9 and its non-monotone variant).  ``variant="paper"``: 0.5/epsilon.
``global-gaussian``
    Gaussian noise on every candidate's Gini calibrated (analytic Gaussian) to
    the l2 sensitivity of the whole vector, sqrt(m) * 0.5; the argmin is
    post-processing.  ``variant="paper"``: calibrated per value (0.5).
``exponential``
    The exponential mechanism on -Gini with sensitivity 0.5 (McSherry-Talwar).
``noisy-counts``
    Laplace noise on every candidate's 2K-cell count table (caught / left x
    class; l1 sensitivity 1 each; epsilon split over the m candidates), Gini
    of the noisy tables.
    ``variant="paper"`` splits over 2m as paper 001 does.
``errors-pf`` (dpglass's default since issue 12)
    Permute-and-flip on minus the number of training errors the list would
    make if it ended with the candidate (caught records and the rest each
    predicted by their majority class).  Adding a record raises every
    candidate's count by 0 or 1, so the utilities are monotone with sensitivity 1: scale
    1/epsilon, in records, and pure.  "No rule" scores the errors of stopping
    now plus a public bonus ``ln(m) / epsilon`` (m options), about the largest
    of m noises, so that the list stops unless a rule beats the noise.  Run by
    :mod:`dpglass.models.rule_list.errors`, which releases no remaining
    counts (docs/privacy.md, "errors-pf").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpglass.privacy.mechanisms import (
    DiscreteLaplaceMechanism,
    ExponentialMechanism,
    GaussianMechanism,
    PermuteAndFlip,
    ReportNoisyMax,
    SmoothCauchyMechanism,
    SmoothLaplaceMechanism,
)
from dpglass.models.rule_list.impurity import split_errors, split_gini
from dpglass.privacy.sensitivity import GINI_GLOBAL_SENSITIVITY, gini_local_sensitivity, gini_smooth_sensitivity

__all__ = [
    "Certification", "LOCAL_SCALE_FACTOR", "MECHANISMS", "PURE_MECHANISMS", "SELECTORS", "StepCounts",
    "certification_margin", "local_scale_factor", "select", "select_next_rule",
]


def local_scale_factor(n_classes: int = 2) -> float:
    """1 + c for local-pf: c = U sup_n |1/LS(n) - 1/LS(n-1)| / 4 < U / 4 with U = 1 - 1/K the range of the
    Gini impurity of K classes (docs/privacy.md, "local-pf"): 9/8 for two classes, (5K - 1)/(4K) for K."""
    return 1.0 + (1.0 - 1.0 / n_classes) / 4.0


#: local_scale_factor of two classes: 9/8
LOCAL_SCALE_FACTOR = local_scale_factor(2)


def certification_margin(epsilon_count: float, delta_t: float) -> float:
    """T with P[Z > T] <= delta_t for the discrete Laplace count noise: ln(1/delta_t)/epsilon + 1.

    The count noise Z is discrete Laplace with parameter g <= epsilon_count
    (g is epsilon rounded down to the 2**-40 grid), so for an integer t >= 1,
    P[Z >= t] = e**(-g t) / (1 + e**(-g)) <= e**(-g t); the "+ 1" makes
    g T >= ln(1/delta_t) whatever that rounding (docs/privacy.md).

    Examples
    --------
    >>> round(certification_margin(1.0, 1e-6), 4)
    14.8155
    """
    return math.log(1.0 / delta_t) / epsilon_count + 1.0


@dataclass(frozen=True)
class StepCounts:
    """Exact counts of one step: ``caught`` (K, options), each option's caught records of each class ("no rule"
    last, catching none), and ``remaining`` (K,), the remaining records of each class."""

    caught: np.ndarray
    remaining: np.ndarray
    n_hat: float  # the released noisy remaining count

    @property
    def n(self) -> int:
        """The number of remaining records."""
        return int(sum(float(v) for v in self.remaining))

    @property
    def left(self) -> np.ndarray:
        return np.asarray(self.remaining, dtype=np.float64)[:, None] - self.caught

    @property
    def n_options(self) -> int:
        return self.caught.shape[1]

    @property
    def ginis(self) -> np.ndarray:
        return split_gini(self.caught, self.left)

    @property
    def errors(self) -> np.ndarray:
        """Training errors if the list ended with each candidate: both sides predict their majority."""
        return split_errors(self.caught, self.left)


def select_next_rule(cache, removed: list, used: np.ndarray, n_hat: float, rng, ledger, planned):
    """One greedy step of a DP rule list: select among the unused candidates and "no rule".

    Releases the selection through ``ledger`` as the plan's step ``planned``
    (its noise is the selector's ``choose``); on a rule, marks it used
    (``removed``, ``used``).  Returns ``(candidate, the records of each class
    it catches)``, or ``(None, None)`` when "no rule" is selected.
    """
    N, C = cache.class_counts(tuple(removed))
    idx = np.flatnonzero(~used)
    caught = np.concatenate([C[:, idx], np.zeros((C.shape[0], 1))], axis=1)  # last: no rule
    choice = ledger.release(planned, StepCounts(caught, N, n_hat), rng)
    if choice == len(idx):
        return None, None
    cand = int(idx[choice])
    removed.append(cand)
    used[cand] = True
    return cand, tuple(C[:, cand])


@dataclass(frozen=True)
class Certification:
    """The minimum-support stop: margin T, support Lambda, and how its failure is paid."""

    margin: float = 0.0
    support: int = 1
    delta: float = 0.0  # charged failure probability (0 if not charged)
    heuristic_confidence: float | None = None  # paper 001's Algorithm 3 (not charged)

    def note(self) -> str:
        if self.heuristic_confidence is not None:
            c = self.heuristic_confidence
            return (f"minimum-support stop with confidence {c} (paper 001 Alg. 3): fails with "
                    f"probability up to {1 - c:.3g} per step, NOT charged to delta")
        if self.delta > 0:
            return f"certification margin T={self.margin:.4g} fails with probability {self.delta:.3g} (charged)"
        return ""


class RuleSelector:
    """Base of the selection measurements: budget, certification, entry building."""

    name = ""
    uses_delta = False  # the selection itself spends delta
    certifies = False  # relies on the certified minimum support

    def __init__(self, *, epsilon, delta, certification: Certification, gamma=4.0, variant="corrected",
                 n_classes: int = 2):
        self.n_classes = int(n_classes)  # K, public: the Gini impurity's range 1 - 1/K (local-pf) and table sizes
        self.epsilon = float(epsilon)
        self.delta = float(delta) if self.uses_delta else 0.0
        self.cert = certification if self.certifies else Certification()
        self.gamma = float(gamma)
        self.paper = variant == "paper"

    @classmethod
    def curve_for(cls, epsilon: float) -> dict | None:
        """The selection's privacy curve at ``epsilon`` (None: its (epsilon, delta) pair), for calibration."""
        return None

    def _entry(self, mechanism, *, guarantee="proven", note="", **details) -> dict:
        note = "; ".join(x for x in (note, self.cert.note()) if x)
        if self.cert.heuristic_confidence is not None:
            guarantee = "paper-claim"
        curve = self.curve_for(self.epsilon)
        if curve is not None:
            details["curve"] = curve
        return dict(mechanism=mechanism, epsilon=self.epsilon, delta=self.delta + self.cert.delta,
                    guarantee=guarantee, note=note, **details)

    def entry(self, n_options: int, n_hat: float) -> dict:  # pragma: no cover - overridden
        """The selection's ledger fields: public parameters, the number of options ("no rule" included) and the
        released remaining count only (the release plan's step, replayed by the file verifier)."""
        raise NotImplementedError

    def choose(self, counts: StepCounts, rng) -> int:  # pragma: no cover - overridden
        """The selected option's index ("no rule" last): the step's noise."""
        raise NotImplementedError

    def select(self, counts: StepCounts, rng) -> tuple[int, dict]:
        """``(choice, entry)``: one selection and its ledger fields."""
        return self.choose(counts, rng), self.entry(counts.n_options, counts.n_hat)


class LocalPF(RuleSelector):
    """Permute-and-flip at the local sensitivity of the true remaining count (pure)."""

    name = "local-pf"

    def choose(self, counts, rng):
        factor = local_scale_factor(self.n_classes)
        mech = PermuteAndFlip(self.epsilon / factor, float(gini_local_sensitivity(counts.n)))
        return mech.select(-counts.ginis, rng)

    def entry(self, n_options, n_hat):
        # sensitivity and scale depend on the exact remaining count: not recorded
        K = self.n_classes  # epsilon / local_scale_factor(K) = 4K epsilon / (5K - 1)
        return self._entry("permute-and-flip (local scale)",
                           note=f"scale 2 g(n-1) / ({4 * K} epsilon / {5 * K - 1}) at the true remaining count n "
                                "(not recorded); pure")


class CertifiedPF(RuleSelector):
    """Permute-and-flip at g(m0 - 1), m0 a lower bound certified by the released count."""

    name = "certified-pf"
    certifies = True

    def _mechanism(self, n_hat):
        m0 = math.ceil(n_hat - self.cert.margin)
        sens = float(gini_local_sensitivity(m0)) if m0 >= 2 else GINI_GLOBAL_SENSITIVITY
        return m0, PermuteAndFlip(self.epsilon, sens)

    def choose(self, counts, rng):
        return self._mechanism(counts.n_hat)[1].select(-counts.ginis, rng)

    def entry(self, n_options, n_hat):
        m0, mech = self._mechanism(n_hat)
        return self._entry("permute-and-flip", sensitivity=mech.sensitivity, scale=mech.scale,
                           note=f"sensitivity g(m0-1) with certified lower bound m0={m0} on the remaining count")


class SmoothSelector(RuleSelector):
    """Paper 001's sm-Laplace / sm-Cauchy: noisy Ginis at the smooth sensitivity, argmin."""

    certifies = True

    def _mechanism(self):
        if self.name == "smooth-laplace":
            # above the admissibility limit the noise is calibrated to the
            # largest valid epsilon (more private than the ledger states)
            return SmoothLaplaceMechanism(min(self.epsilon, SmoothLaplaceMechanism.max_epsilon(self.delta)), self.delta)
        return SmoothCauchyMechanism(self.epsilon, self.gamma)

    def choose(self, counts, rng):
        mech = self._mechanism()
        support = self.cert.support if self.certifies_support else 1
        sens = float(gini_smooth_sensitivity(counts.n, mech.beta, min_support=support,
                                             variant="paper" if self.paper else "corrected"))
        return int(np.argmin(mech.randomise(counts.ginis, sens, rng)))

    def entry(self, n_options, n_hat):
        # the smooth sensitivity is a function of the exact count: not recorded
        return self._entry(self.name, guarantee="paper-claim",
                           note=("report-noisy-min over smooth-sensitivity noise counted as one release "
                                 f"(paper 001); beta={self._mechanism().beta:.4g}; not proven, see docs/privacy.md"))


class SmoothLaplace(SmoothSelector):
    name = "smooth-laplace"
    uses_delta = True
    certifies_support = True


class SmoothCauchy(SmoothSelector):
    name = "smooth-cauchy"
    # pure: smooth sensitivity over all sizes, unless the paper's minimum support is used
    certifies_support = True

    def __init__(self, *, certification: Certification, variant="corrected", **kw):
        super().__init__(certification=certification, variant=variant, **kw)
        paper_support = variant == "paper" or certification.heuristic_confidence is not None
        self.cert = certification if paper_support else Certification()


class GlobalLaplace(RuleSelector):
    """Report-noisy-min with (discrete) Laplace noise at the global sensitivity 0.5."""

    name = "global-laplace"

    def _mechanism(self):
        # variant="paper": scale sens/eps as if the scores were monotone (not proven)
        return ReportNoisyMax(self.epsilon, GINI_GLOBAL_SENSITIVITY, monotonic=self.paper)

    def choose(self, counts, rng):
        return self._mechanism().select(-counts.ginis, rng)

    def entry(self, n_options, n_hat):
        return self._entry("report-noisy-min (discrete laplace)", sensitivity=GINI_GLOBAL_SENSITIVITY,
                           scale=self._mechanism().scale, guarantee="paper-claim" if self.paper else "proven",
                           note="paper 001 scale sens/eps on non-monotone scores" if self.paper else "")


class GlobalGaussian(RuleSelector):
    """Gaussian noise on the vector of Ginis (l2 sensitivity sqrt(m) * 0.5), argmin."""

    name = "global-gaussian"
    uses_delta = True

    def _mechanism(self, m: int):
        # paper 001 calibrates each value to 0.5; the rigorous version the whole vector
        sens = GINI_GLOBAL_SENSITIVITY * (1.0 if self.paper else math.sqrt(m))
        return GaussianMechanism(self.epsilon, self.delta, sens, calibration="analytic")

    def choose(self, counts, rng):
        return int(np.argmin(self._mechanism(counts.n_options).randomise(counts.ginis, rng)))

    def entry(self, n_options, n_hat):
        m = n_options
        mech = self._mechanism(m)
        note = ("Gaussian per value (paper 001); argmin over values not proven" if self.paper
                else f"analytic Gaussian on the vector of {m} Ginis, l2 sensitivity sqrt(m)*0.5; "
                     "float noise inside the argmin (docs/privacy.md)")
        return self._entry("gaussian", sensitivity=mech.sensitivity, scale=mech.scale,
                           guarantee="paper-claim" if self.paper else "proven", note=note)


class Exponential(RuleSelector):
    """The exponential mechanism on -Gini with sensitivity 0.5."""

    name = "exponential"

    @classmethod
    def curve_for(cls, epsilon):
        return ExponentialMechanism(epsilon, GINI_GLOBAL_SENSITIVITY).curve

    def choose(self, counts, rng):
        return ExponentialMechanism(self.epsilon, GINI_GLOBAL_SENSITIVITY).select(-counts.ginis, rng)

    def entry(self, n_options, n_hat):
        return self._entry("exponential", sensitivity=GINI_GLOBAL_SENSITIVITY,
                           scale=2 * GINI_GLOBAL_SENSITIVITY / self.epsilon)


class NoisyCounts(RuleSelector):
    """Discrete Laplace noise on every candidate's 2K-cell table (caught / left x class); Gini of the noisy tables."""

    name = "noisy-counts"

    def _mechanism(self, m: int):
        return DiscreteLaplaceMechanism(self.epsilon / (2 * m if self.paper else m))

    def choose(self, counts, rng):
        K = counts.caught.shape[0]
        # rows: caught then left, each from the last class to the first (for two classes the binary table's
        # order: caught positives, caught negatives, left positives, left negatives)
        table = np.concatenate([counts.caught[::-1], counts.left[::-1]])
        noisy = np.maximum(self._mechanism(counts.n_options).randomise(table, rng), 0).astype(np.float64)
        return int(np.argmin(split_gini(noisy[K - 1 :: -1], noisy[: K - 1 : -1], empty=1.0 - 1.0 / K)))

    def entry(self, n_options, n_hat):
        m = n_options
        return self._entry("discrete laplace counts", sensitivity=1.0, scale=self._mechanism(m).scale,
                           note=f"{2 * self.n_classes}-cell table of each of {m} candidates at "
                                f"epsilon/{2 * m if self.paper else m} each")


class ErrorsPF(RuleSelector):
    """Permute-and-flip on minus the training errors (monotone, sensitivity 1), with a stop bonus."""

    name = "errors-pf"

    def __init__(self, *, bonus: float = 1.0, **kw):
        super().__init__(**kw)
        self.bonus = float(bonus)  # a public multiplier of the stop bonus (experiments vary it)

    def stop_bonus(self, n_options: int) -> float:
        """What "no rule" gets on top of its utility: bonus * ln(n_options) / epsilon (public)."""
        return self.bonus * math.log(n_options) / self.epsilon

    def _mechanism(self):
        return PermuteAndFlip(self.epsilon, 1.0, monotonic=True)

    def entry(self, n_options=None, n_hat=None) -> dict:
        """The selection's ledger fields: public parameters only (the release plan's step)."""
        return self._entry(
            "permute-and-flip (errors)", sensitivity=1.0, scale=self._mechanism().scale,
            note="minus the training errors, monotone with sensitivity 1; \"no rule\" gets a bonus "
                 "ln(options)/epsilon")

    def choose(self, counts, rng) -> int:
        """The selected option's index ("no rule" last): the release plan's noise."""
        utilities = -counts.errors
        utilities[-1] += self.stop_bonus(len(utilities))
        return self._mechanism().select(utilities, rng)



SELECTORS = {cls.name: cls for cls in (LocalPF, CertifiedPF, SmoothLaplace, SmoothCauchy, GlobalLaplace,
                                        GlobalGaussian, Exponential, NoisyCounts, ErrorsPF)}
MECHANISMS = tuple(SELECTORS)
#: Mechanisms whose selection spends no delta.
PURE_MECHANISMS = tuple(name for name, cls in SELECTORS.items() if not cls.uses_delta and name != "certified-pf")


def select(mechanism, *, c0, c1, n0, n1, n_hat, margin, epsilon, delta, min_support, gamma, variant, rng):
    """One selection by ``SELECTORS[mechanism]`` on explicit counts of two classes (the audit's entry point).

    ``c0``, ``c1`` have "no rule" last; ``delta`` is the selection's own delta
    and ``min_support`` the Lambda of the smooth sensitivity.  Returns
    ``(index, entry)`` exactly as the rule-list learner gets them.
    """
    cert = Certification(margin=margin, support=min_support)
    selector = SELECTORS[mechanism](epsilon=epsilon, delta=delta, certification=cert, gamma=gamma, variant=variant)
    caught = np.stack([np.asarray(c0, float), np.asarray(c1, float)])
    return selector.select(StepCounts(caught, np.array([n0, n1], dtype=float), n_hat), rng)
