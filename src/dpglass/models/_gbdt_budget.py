"""How :class:`~dpglass.models.gbdt.DPGradientBoostingClassifier` splits its budget (public parameters only).

* :func:`newton_plan` / :func:`dpboost_plan`: the ledger entries a whole run
  writes when each tree (DPBoost: each ensemble) spends ``x``, with the
  curves the learner declares (bounded range for the exponential-mechanism
  splits, discrete Laplace for the newton leaf sums, the pure pair for
  DPBoost's leaf values and the quantiles).
* :func:`budget`: ``(x, accountant used)``.  ``"basic"`` (and any accountant
  when delta = 0) divides what the bins leave evenly; ``"pld"`` / ``"rdp"``
  calibrate the whole plan to ``(epsilon, delta)``
  (:func:`dpglass.privacy.accounting.calibrate`, relative tolerance
  :data:`TOL`); ``"auto"`` keeps whichever of the two lets ``x`` be larger
  (ties: ``"pld"``), as :func:`~dpglass.privacy.accounting.choose_accountant`
  does, but runs PLD compositions only when PLD can win, and bisects from
  the RDP result.  ``x`` is never below the basic split (``"auto"`` then
  reports ``"basic"``).

A DPBoost ensemble appears once in a plan whatever its subset selection: its
trees hold disjoint records and one record reaches one tree, so the ensemble
is dominated by one tree's releases (docs/privacy.md, "Data-dependent subsets
under the tight accountants").
"""

from __future__ import annotations

import functools
import math

from dpglass.models._gbdt_releases import dpboost_gain_sensitivity, leaf_sum_entry
from dpglass.privacy.accounting import CHOICES, calibrate, compose
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import ExponentialMechanism

__all__ = ["LAMBDA_NOISE_SCALES", "TOL", "budget", "dpboost_plan", "leaf_delta", "leaf_epsilons",
           "leaf_gradient_scale", "newton_plan", "resolved_lambda", "split_curve"]

#: Relative tolerance of the calibration (always on the safe side).
TOL = 1e-2


def split_curve(epsilon: float, sensitivity: float) -> dict:
    """The curve of one split level: the exponential mechanism's own (bounded range)."""
    return ExponentialMechanism(float(epsilon), float(sensitivity)).curve


def _leaf_sums(epsilon: float, sensitivity: float, leaf_delta: float) -> LedgerEntry:
    return LedgerEntry(**leaf_sum_entry("leaf sums", epsilon, sensitivity, "", leaf_delta))


def leaf_delta(leaf_noise: str, delta: float, n_trees: int) -> float:
    """The delta each Gaussian leaf release states its pair at: a quarter of delta over the 2(T + 1) releases.

    Only the basic view reads it; the tight accountants compose the curves (0: Laplace leaves).
    """
    return delta / (8 * (n_trees + 1)) if leaf_noise == "gaussian" else 0.0


def newton_plan(x: float, n_trees: int, depth: int, split: str, split_share: float, hessian_share: float,
                leaf_delta: float = 0.0) -> list:
    """The entries of a newton run whose trees (and intercept) spend ``x`` each (``leaf_delta > 0``: Gaussian)."""
    one = []
    if split == "exponential":
        s = x * split_share / depth
        one += [LedgerEntry("split level", "exponential", epsilon=s, curve=split_curve(s, 1.0))] * depth
    eps_g, eps_h = leaf_epsilons(x, split, split_share, hessian_share)
    one += [_leaf_sums(eps_g, 1.0, leaf_delta), _leaf_sums(eps_h, 0.25, leaf_delta)]
    # the intercept: one leaf holding every record, released like a tree's leaves
    start = [_leaf_sums(x * (1 - hessian_share), 1.0, leaf_delta), _leaf_sums(x * hessian_share, 0.25, leaf_delta)]
    return start + one * n_trees


def dpboost_plan(x: float, n_ensembles: int, depth: int, gradient_clip: float) -> list:
    """The entries of a DPBoost run whose ensembles spend ``x`` each (half on splits, half on leaves)."""
    s, sens = x / (2 * depth), dpboost_gain_sensitivity(gradient_clip)
    one = [LedgerEntry("split level", "exponential", epsilon=s, curve=split_curve(s, sens))] * depth
    one.append(LedgerEntry("leaf values", "laplace", epsilon=x / 2))
    return one * n_ensembles


def _pld_from(plan, epsilon: float, delta: float, x0: float) -> float:
    """The largest ``x >= x0`` (to a relative :data:`TOL`) whose plan composes to ``<= epsilon`` under PLD.

    ``x0`` must fit.  The bracket starts at ``[x0, 1.25 x0]`` and grows while
    its top fits: a handful of PLD compositions where a bisection from the
    basic split needs about twice as many.
    """
    def fits(x):
        return compose(plan(x), "pld", delta)[0] <= epsilon

    lo, hi = x0, min(epsilon, 1.25 * x0)
    while fits(hi):
        if hi >= epsilon:
            return epsilon
        lo, hi = hi, min(epsilon, 1.25 * hi)
    while hi / lo > 1 + TOL:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _choose(plan, epsilon: float, delta: float, accountant: str, x_basic: float) -> tuple[float, str]:
    """``(x, accountant)``; never below the basic split ``x_basic`` (``"auto"`` then says ``"basic"``).

    ``x_basic = 0``: no basic floor (Gaussian leaves, whose stated pairs do not add up to epsilon).
    """
    if accountant != "auto":
        return max(calibrate(plan, epsilon, delta, accountant, tol=TOL), x_basic), accountant
    x_rdp = calibrate(plan, epsilon, delta, "rdp", tol=TOL)
    best = (x_rdp, "rdp")
    start = max(x_rdp, x_basic)
    if compose(plan(start), "pld", delta)[0] <= epsilon:  # else PLD's calibration ends below x_rdp
        x_pld = _pld_from(plan, epsilon, delta, start)
        if x_pld >= x_rdp:
            best = (x_pld, "pld")
    return best if best[0] > x_basic else (x_basic, "basic")


@functools.lru_cache(maxsize=256)
def budget(variant: str, epsilon: float, delta: float, accountant: str, n_trees: int, depth: int, *,
           split: str = "exponential", split_share: float = 0.3, hessian_share: float = 0.3,
           trees_per_ensemble: int = 10, gradient_clip: float = 1.0, bins_epsilon: float = 0.0,
           bin_releases: int = 0, leaf_noise: str = "laplace") -> tuple[float, str]:
    """``(x, accountant used)``: each tree's budget (newton; DPBoost: each ensemble's).

    ``bins_epsilon`` is spent first, on the DP-quantile bins: ``bin_releases``
    pure entries (one per numeric column) of equal epsilon.  ``leaf_noise=
    "gaussian"`` (newton) needs delta > 0 and a tight accountant.  Raises
    ValueError for an unknown accountant or Gaussian leaves without them.
    """
    if accountant not in CHOICES:
        raise ValueError(f"accountant must be one of {CHOICES}; got {accountant!r}.")
    newton = variant == "newton"
    n_ens = -(-n_trees // trees_per_ensemble)
    x_basic = (epsilon - bins_epsilon) / ((n_trees + 1) if newton else n_ens)
    gaussian = newton and leaf_noise == "gaussian"
    if accountant == "basic" or delta <= 0:
        if gaussian:
            raise ValueError("Gaussian leaves need delta > 0 and accountant 'auto', 'pld' or 'rdp'.")
        return x_basic, "basic"
    k = max(int(bin_releases), 1)
    prefix = [LedgerEntry("bins", "exponential-quantile", epsilon=bins_epsilon / k)] * k if bins_epsilon else []
    if newton:
        ld = leaf_delta(leaf_noise, delta, n_trees)

        def plan(x):
            return prefix + newton_plan(x, n_trees, depth, split, split_share, hessian_share, ld)
    else:
        def plan(x):
            return prefix + dpboost_plan(x, n_ens, depth, gradient_clip)
    return _choose(plan, epsilon, delta, accountant, 0.0 if gaussian else x_basic)


#: The newton default lambda in units of the leaf gradient-sum noise scale: a leaf of few records is shrunk
#: towards 0 instead of following its noise.  Chosen on validation parts of the shipped datasets' training
#: parts (``benchmarks/gbdt_lambda.py``: the best mean over epsilon >= 0.4, within 0.003 of the majority class
#: at epsilon >= 1 where the old 1.17 fell 0.034 below it); a public constant.
LAMBDA_NOISE_SCALES = 4.0


def leaf_epsilons(x: float, split: str, split_share: float, hessian_share: float) -> tuple[float, float]:
    """``(gradient sums' epsilon, Hessian sums' epsilon)`` of a newton tree spending ``x``.

    ``split="exponential"`` keeps ``split_share`` of ``x`` for the splits; the
    leaves' rest is cut by ``hessian_share``.  Fit, plan and verifier read it here.
    """
    leaves = x * (1.0 - (float(split_share) if split == "exponential" else 0.0))
    return leaves * (1 - float(hessian_share)), leaves * float(hessian_share)


def leaf_gradient_scale(x: float, split: str, split_share: float, hessian_share: float) -> float:
    """The Laplace scale ``b_g`` of a newton tree's leaf gradient sums when the tree spends ``x`` (sensitivity 1).

    The Gaussian leaves (``leaf_noise="gaussian"``) have the same zCDP, a variance of ``b_g**2``.
    """
    return 1.0 / leaf_epsilons(x, split, split_share, hessian_share)[0]


def resolved_lambda(variant: str, reg_lambda, x: float, split: str, split_share: float,
                    hessian_share: float) -> float:
    """The L2 weight a fit uses: ``reg_lambda``, else 0.1 (DPBoost) or :data:`LAMBDA_NOISE_SCALES` times the
    leaf gradient-sum noise scale of a newton tree spending ``x`` (a function of the parameters only;
    ``load_model`` recomputes it)."""
    if reg_lambda is not None:
        return float(reg_lambda)
    if variant == "dpboost":
        return 0.1
    return LAMBDA_NOISE_SCALES * leaf_gradient_scale(x, split, split_share, hessian_share)
