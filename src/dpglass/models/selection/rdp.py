"""Private selection with delta > 0: Papernot and Steinke's Rényi theorem for the best of K runs.

:class:`~dpglass.models.PrivateGridSearch` with ``delta > 0`` charges the
selection by the Rényi DP of one run instead of its pure epsilon.  Papernot
and Steinke ("Hyperparameter tuning with Renyi differential privacy", ICLR
2022, Theorem 2): if one run ``Q`` is ``(a, R(a))``-RDP at every order, and
``K ~ D_{eta,gamma}`` (truncated negative binomial), the best of ``K``
independent runs is ``(a, R'(a))``-RDP with::

    R'(a) = R(a) + min_{b >= 1} [ (1 + eta)(1 - 1/b) R(b) + (1 + eta) log(1/gamma) / b ] + log(E[K]) / (a - 1).

(``b = 1`` gives the term ``(1 + eta) log(1/gamma)``.)  The total is then
converted to ``(epsilon, delta)`` (CKS 2020, Prop. 12).

One run's curve ``R``: a run draws a grid point uniformly (public
randomness), trains that candidate on the training part and scores it on the
validation part with a discrete-Laplace count.  A record lies in one part
(parallel composition holds order by order), so the run is bounded by the
maximum of the training curve and the scoring curve; the uniform mixture over
grid points is bounded by the maximum over the grid (Rényi divergence is
jointly quasi-convex; van Erven and Harremoës 2014, Thm 13).  The training
curve of a grid point is the sum of the Rényi curves of every release its
full run would make (:meth:`_release_plan`, public parameters only); a
candidate without a plan is charged as pure epsilon.  docs/privacy.md,
"Private hyper-parameter selection", gives the argument.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import clone

from dpglass.exceptions import InvalidParameterError
from dpglass.models.gam.plan import auto_bound, gam_plan
from dpglass.models.gam.sizes import is_auto
from dpglass.privacy import rdp
from dpglass.privacy.accounting import curve_rdp

__all__ = ["Unplannable", "best_of_k_rdp", "calibrate_runs", "candidate_budget", "is_planned", "release_entries",
           "run_curve", "selection_epsilon", "unplanned_gam"]

_FULL_CURVES = ("gaussian", "discrete-gaussian")


def best_of_k_rdp(run: np.ndarray, eta: float, gamma: float, expected_runs: float) -> np.ndarray:
    """Papernot and Steinke (2022), Theorem 2, at :data:`dpglass.privacy.rdp.ORDERS`."""
    a = rdp.ORDERS
    hat = (1 + eta) * (1 - 1 / a) * run + (1 + eta) * math.log(1 / gamma) / a
    best_hat = min(float(np.min(hat)), (1 + eta) * math.log(1 / gamma))  # b = 1
    return run + best_hat + math.log(expected_runs) / (a - 1)


def _gam_shape(model):
    """``(d, K)`` of a dp-gam candidate when its parameters state them (``bounds``, ``categories`` or ``missing``:
    one entry per column, as a DPPipeline sets them from the schema; ``classes``: the label set), else None.
    dp-gam's plan is a function of its parameters, d and K (:func:`dpglass.models.gam.plan.release_plan`)."""
    if type(model).__name__ != "DPGAMClassifier":
        return None
    params = model.get_params(deep=False)
    columns = next((params[k] for k in ("bounds", "categories", "missing") if params.get(k) is not None), None)
    if columns is None or params.get("classes") is None:
        return None
    return len(columns), len(params["classes"])


def is_planned(model) -> bool:
    """Whether a candidate's full run has a release plan of public parameters: its own ``_release_plan``, or
    dp-gam's with d and K stated (:func:`_gam_shape`)."""
    return hasattr(model, "_release_plan") or _gam_shape(model) is not None


def unplanned_gam(model) -> str | None:
    """Why a dp-gam candidate has no plan the search can read (None if it has one, or is not dp-gam)."""
    if type(model).__name__ != "DPGAMClassifier" or is_planned(model):
        return None
    return ("its release plan, which the search composes by its Rényi curve, needs the number of columns and of "
            "classes: give classes=[...] and bounds (or categories), one entry per column, or search it inside a "
            "DPPipeline, which sets them from the schema")


def release_entries(model) -> list:
    """The ledger entries of a planned candidate's full run (:func:`is_planned`), from public parameters; for a
    dp-gam with ``"auto"`` sizes, the entries before its branch (its quantile edges, then its class counts)."""
    if hasattr(model, "_release_plan"):
        return model._release_plan()
    return _gam_entries(model)


def _gam_entries(model, bound: bool = False) -> list:
    """dp-gam's planned entries (``bound``: :func:`~dpglass.models.gam.plan.auto_bound`'s, above every branch of
    "auto" sizes); a budget its plan cannot make is :class:`Unplannable`."""
    params = model.get_params(deep=False)
    try:
        if bound:
            return auto_bound(params, *_gam_shape(model))
        return [step.entry for step in gam_plan(params, *_gam_shape(model)).steps]
    except (ValueError, ArithmeticError) as exc:  # InvalidParameterError is a ValueError; a zero zCDP divides by 0
        raise Unplannable(f"DPGAMClassifier cannot be planned for the search at a run budget of epsilon "
                          f"{float(params['epsilon']):g}: {exc}") from None


def _training_curve(model) -> np.ndarray:
    """The Rényi curve of a planned candidate's full run: the sum of its entries' curves; for a dp-gam with
    ``"auto"`` sizes, whose releases after the class counts follow a branch picked from them, the curve of
    :func:`~dpglass.models.gam.plan.auto_bound` (its quantile edges and one discrete Gaussian of zCDP above
    every branch's: each branch's discrete Gaussians are calibrated under RDP within the run's budget, their
    curves are linear, and by adaptive composition, Mironov 2017, Prop. 1, the run's curve is below the
    prefix's plus the largest branch's; docs/privacy.md, "PrivateGridSearch(delta > 0)", dp-gam)."""
    if hasattr(model, "_release_plan") or not is_auto(model.get_params(deep=False)):
        return _sum_curves(release_entries(model), type(model).__name__)
    return _sum_curves(_gam_entries(model, bound=True))


def _sum_curves(entries, name: str = "DPGAMClassifier") -> np.ndarray:
    total = np.zeros_like(rdp.ORDERS)
    for entry in entries:
        if entry.delta > 0 and (entry.curve or {}).get("kind") not in _FULL_CURVES:
            raise InvalidParameterError(
                f"PrivateGridSearch with delta > 0 composes runs by their Rényi curves; {name} releases "
                f"{entry.release!r} as an (epsilon, delta) pair with delta > 0, which has none. "
                "Choose a mechanism without its own delta (e.g. mechanism='local-pf' or 'exponential' for rule "
                "lists) or use delta=0.")
        total = total + curve_rdp(entry)
    return total


class Unplannable(InvalidParameterError):
    """A candidate's plan refuses its run budget (e.g. dp-gam's noise at a tiny epsilon is beyond the exact
    sampler's range): that budget cannot be run, whatever its privacy."""


def _plan_curve(model) -> np.ndarray:
    """The Rényi curve of one candidate's full run, from its public release plan (pure epsilon without one)."""
    if not is_planned(model):
        return rdp.pure(rdp.ORDERS, float(model.epsilon))
    return _training_curve(model)


def run_curve(estimator, candidates: list, run_epsilon: float, delta: float) -> np.ndarray:
    """The Rényi curve bounding one run: max over the grid of (training, scoring), order by order."""
    score = rdp.discrete_laplace(rdp.ORDERS, run_epsilon, 1)
    worst = score
    for params in candidates:
        model = clone(estimator).set_params(**params, **candidate_budget(estimator, run_epsilon, delta))
        worst = np.maximum(worst, _plan_curve(model))
    return worst


def candidate_budget(estimator, run_epsilon: float, delta: float) -> dict:
    """What the search sets on each candidate: its epsilon; where the candidate declares a release plan,
    the search's delta and the Rényi accountant (it calibrates to them); else delta = 0 (pure)."""
    params, planned = estimator.get_params(deep=False), is_planned(estimator)
    out = {"epsilon": run_epsilon}
    if "delta" in params:
        out["delta"] = delta if planned else 0.0
    if planned and delta > 0 and "accountant" in params:
        out["accountant"] = "rdp"  # the search composes runs by their Rényi curves: calibrate them the same way
    return out


def selection_epsilon(estimator, candidates, run_epsilon, delta, eta, gamma, expected_runs) -> float:
    """The selection's epsilon at ``delta`` when every run gets ``run_epsilon``."""
    curve = best_of_k_rdp(run_curve(estimator, candidates, run_epsilon, delta), eta, gamma, expected_runs)
    return rdp.to_epsilon(curve, delta)


def calibrate_runs(estimator, candidates, epsilon, delta, eta, gamma, expected_runs, tol=1e-3) -> tuple[float, float]:
    """``(run epsilon, selection epsilon)``: the largest run budget whose selection fits ``(epsilon, delta)``.

    Bisection on a log scale (the selection's epsilon increases with the run
    budget); public parameters only.
    """
    def total(x):
        return selection_epsilon(estimator, candidates, x, delta, eta, gamma, expected_runs)

    lo, hi = epsilon / 1024, epsilon
    while True:  # the bracket's low end: the smallest budget of the doubling that every candidate can run
        try:
            low_total = total(lo)
            break
        except Unplannable:  # no candidate refuses its budget here today but dp-gam's: others are unchanged
            if 2 * lo >= hi:
                raise
            lo *= 2
    if low_total > epsilon:
        raise InvalidParameterError(
            f"PrivateGridSearch cannot fit (epsilon={epsilon!r}, delta={delta!r}) by the Rényi theorem: even "
            f"runs of epsilon {lo:g} exceed it (the log(E[K]) and log(1/gamma) terms). Use a larger "
            "stopping_probability, delta=0, or a larger budget.")
    if total(hi) <= epsilon:
        return hi, total(hi)
    while hi / lo > 1 + tol:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if total(mid) <= epsilon else (lo, mid)
    return lo, total(lo)
