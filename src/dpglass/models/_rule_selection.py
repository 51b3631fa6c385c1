"""How a DP rule list picks the next rule: one selector per mechanism.

Each selector receives the exact counts of every candidate on the remaining
records (the last candidate is "no rule") and returns the index it selects
together with the ledger entry describing that release.  The privacy argument
of each selector is in ``docs/privacy.md`` (section "DP greedy rule lists").

Selectors
---------
``local-pf``
    Permute-and-flip (report-noisy-max with exponential noise) on -Gini with
    the scale set by the local sensitivity g(n - 1) at the true remaining
    count n, calibrated to 8/9 of the budget.  Pure epsilon-DP: the noise
    scale varies with n, but 1/g(n - 1) moves by less than 1/2 per record and
    the Gini impurity lies in [0, 1/2], so the winner's threshold moves by at
    most (9/8) * epsilon' (docs/privacy.md).
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
    Laplace noise on every candidate's 4-cell count table (l1 sensitivity 1
    each; epsilon split over the m candidates), Gini of the noisy tables.
    ``variant="paper"`` splits over 2m as paper 001 does.
"""

from __future__ import annotations

import math

import numpy as np

from dpglass.privacy.mechanisms import (
    ExponentialMechanism,
    GaussianMechanism,
    PermuteAndFlip,
    SmoothCauchyMechanism,
    SmoothLaplaceMechanism,
    sample_laplace,
)
from dpglass.privacy.sensitivity import (
    GINI_GLOBAL_SENSITIVITY,
    gini_local_sensitivity,
    gini_smooth_sensitivity,
    weighted_gini,
)

__all__ = ["LOCAL_SCALE_FACTOR", "MECHANISMS", "PURE_MECHANISMS", "certification_margin", "select"]

#: 1 + c, with c = sup_n |1/LS(n) - 1/LS(n-1)| / 4 < 1/8 for the Gini impurity
LOCAL_SCALE_FACTOR = 9.0 / 8.0

MECHANISMS = (
    "local-pf",
    "certified-pf",
    "smooth-laplace",
    "smooth-cauchy",
    "global-laplace",
    "global-gaussian",
    "exponential",
    "noisy-counts",
)
#: Mechanisms whose selection spends no delta.
PURE_MECHANISMS = ("local-pf", "smooth-cauchy", "global-laplace", "exponential", "noisy-counts")


def certification_margin(epsilon_count: float, delta_t: float) -> float:
    """T such that P[Lap(1/epsilon_count) > T] = delta_t: ln(1/(2 delta_t)) / epsilon_count."""
    return math.log(1.0 / (2.0 * delta_t)) / epsilon_count


def select(mechanism, *, c0, c1, n0, n1, n_hat, margin, epsilon, delta, min_support, gamma, variant, rng):
    """Select a candidate index (the last index is "no rule").

    Parameters
    ----------
    c0, c1 : ndarray
        Exact caught (negative, positive) counts, "no rule" last (0, 0).
    n0, n1 : float
        Exact remaining (negative, positive) counts.
    n_hat : float
        The released noisy remaining count.
    margin : float
        Certification margin T (0 when the mechanism needs none).
    epsilon, delta : float
        Budget of this selection (delta excludes the certification failure).
    min_support : int
        Lambda: the smooth sensitivity is taken over datasets of >= Lambda records.

    Returns
    -------
    index : int
    entry : dict
        Keyword arguments for :meth:`PrivacyLedger.spend` (mechanism, sensitivity,
        scale, guarantee, note).
    """
    m = c0.shape[0]
    n = n0 + n1
    ginis = weighted_gini(c1, c0, n1 - c1, n0 - c0)
    paper = variant == "paper"

    if mechanism == "local-pf":
        sens = float(gini_local_sensitivity(int(n)))
        mech = PermuteAndFlip(epsilon / LOCAL_SCALE_FACTOR, sens)
        # sensitivity and scale depend on the exact remaining count: they are
        # not recorded (the ledger is released with the model)
        return int(mech.select(-ginis, rng)), dict(
            mechanism="permute-and-flip (local scale)",
            note="scale 2 g(n-1) / (8 epsilon / 9) at the true remaining count n (not recorded); pure",
        )

    if mechanism == "certified-pf":
        m0 = math.ceil(n_hat - margin)
        sens = float(gini_local_sensitivity(m0)) if m0 >= 2 else GINI_GLOBAL_SENSITIVITY
        mech = PermuteAndFlip(epsilon, sens)
        return int(mech.select(-ginis, rng)), dict(
            mechanism="permute-and-flip", sensitivity=sens, scale=2 * sens / epsilon,
            note=f"sensitivity g(m0-1) with certified lower bound m0={m0} on the remaining count",
        )

    if mechanism in ("smooth-laplace", "smooth-cauchy"):
        if mechanism == "smooth-laplace":
            # above the admissibility limit the noise is calibrated to the
            # largest valid epsilon (more private than the ledger states)
            mech = SmoothLaplaceMechanism(min(epsilon, SmoothLaplaceMechanism.max_epsilon(delta)), delta)
        else:
            mech = SmoothCauchyMechanism(epsilon, gamma)
        sens = float(gini_smooth_sensitivity(int(n), mech.beta, min_support=min_support, variant=variant))
        noisy = mech.randomise(ginis, sens, rng)
        # the smooth sensitivity is a function of the exact remaining count:
        # not recorded (the ledger is released with the model)
        return int(np.argmin(noisy)), dict(
            mechanism=mechanism, guarantee="paper-claim",
            note=(
                "report-noisy-min over smooth-sensitivity noise counted as one release "
                f"(paper 001); beta={mech.beta:.4g}; not proven, see docs/privacy.md"
            ),
        )

    if mechanism == "global-laplace":
        scale = (1.0 if paper else 2.0) * GINI_GLOBAL_SENSITIVITY / epsilon
        noisy = ginis + sample_laplace(scale, m, rng)
        return int(np.argmin(noisy)), dict(
            mechanism="report-noisy-min (laplace)", sensitivity=GINI_GLOBAL_SENSITIVITY, scale=scale,
            guarantee="paper-claim" if paper else "proven",
            note="paper 001 scale sens/eps on non-monotone scores" if paper else "",
        )

    if mechanism == "global-gaussian":
        # paper 001 calibrates each value to the per-value sensitivity 0.5; the
        # rigorous version calibrates the whole vector (l2 sensitivity sqrt(m)*0.5)
        sens = GINI_GLOBAL_SENSITIVITY * (1.0 if paper else math.sqrt(m))
        mech = GaussianMechanism(epsilon, delta, sens, calibration="analytic")
        guarantee = "paper-claim" if paper else "proven"
        note = (
            "Gaussian per value (paper 001); argmin over values not proven"
            if paper
            else f"analytic Gaussian on the vector of {m} Ginis, l2 sensitivity sqrt(m)*0.5"
        )
        noisy = mech.randomise(ginis, rng)
        return int(np.argmin(noisy)), dict(
            mechanism="gaussian", sensitivity=sens, scale=mech.scale, guarantee=guarantee, note=note
        )

    if mechanism == "exponential":
        mech = ExponentialMechanism(epsilon, GINI_GLOBAL_SENSITIVITY)
        return int(mech.select(-ginis, rng)), dict(
            mechanism="exponential", sensitivity=GINI_GLOBAL_SENSITIVITY, scale=2 * GINI_GLOBAL_SENSITIVITY / epsilon
        )

    if mechanism == "noisy-counts":
        per = epsilon / (2 * m if paper else m)
        noise = sample_laplace(1.0 / per, (4, m), rng)
        a = np.maximum(c1 + noise[0], 0)
        b = np.maximum(c0 + noise[1], 0)
        c = np.maximum(n1 - c1 + noise[2], 0)
        d = np.maximum(n0 - c0 + noise[3], 0)
        noisy = _gini_of_noisy(a, b, c, d)
        return int(np.argmin(noisy)), dict(
            mechanism="laplace counts", sensitivity=1.0, scale=1.0 / per,
            note=f"4-cell table of each of {m} candidates at epsilon/{2 * m if paper else m} each",
        )

    raise ValueError(f"unknown mechanism {mechanism!r}")  # guarded by parameter validation


def _gini_of_noisy(a, b, c, d):
    """Weighted Gini of real-valued (noisy, clipped) count tables."""
    n = a + b + c + d
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(a + b > 0, a * b / (a + b), 0.0)
        right = np.where(c + d > 0, c * d / (c + d), 0.0)
        return np.where(n > 0, 2.0 * (left + right) / n, 0.5)
