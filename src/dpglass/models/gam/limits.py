"""dp-gam's plan limits, public functions of the parameters (never of the data): the noise scales of a plan, the
least visit budget whose scales the discrete Gaussian sampler can draw, the largest scale an explicit PLD accountant
composes in reasonable time, the RDP-only conversion that "auto" sizes calibrate their branches with, and the
refusals in the user's terms.

Every noise scale of a plan without "auto" sizes is ``c / x`` for the visit budget ``x`` (each release's zCDP is a
fixed share of ``x**2 / 2``); with "auto" sizes the class counts' scale is fixed before the branch and the others
are ``c / x``.
"""

from __future__ import annotations

import math

from dpglass.exceptions import InvalidParameterError
from dpglass.models.gam.first import table_scale
from dpglass.privacy.accounting import _rdp_epsilon
from dpglass.privacy.discrete_gaussian import MAX_SIGMA

__all__ = ["MAX_SIGMA", "PLD_EXPLICIT_SIGMA_LIMIT", "least_budget", "no_rdp_budget", "pld_too_slow",
           "rdp_only_epsilon", "scales", "too_small"]

#: An explicit ``accountant="pld"`` is refused when the RDP-calibrated plan has a noise scale above this many grid
#: units (public): the PLD of a discrete Gaussian is built on about 23 sigma points, and calibrating such a plan took
#: about 45 s on 4 features at this scale (0.6 s per 1000 units; minutes beyond), for a few percent of epsilon.
PLD_EXPLICIT_SIGMA_LIMIT = 65536.0
#: What each release's scale is called in the user's terms, and the parameter that gives it more budget.
_NAMES = {"count": ("the class counts", "a larger count_share"),
          "gradient": ("the gradient sums", "a smaller hessian_share"),
          "hessian": ("the Hessian sums", "a larger hessian_share"),
          "first": ("the count-based first cycle", "a larger first_share")}


def scales(pub, x: float) -> dict:
    """The discrete Gaussian scales (grid units) of the plan's kinds of release when each visit spends ``x``:
    ``count``, with visits ``gradient`` and ``hessian``, with ``first_cycle="counts"`` ``first``."""
    rho_c, rho_g, rho_h = pub.rhos(x)
    g, h = pub.grids()
    out = {"count": _sigma(1, rho_c)}
    if pub.n_visits:
        out.update(gradient=_sigma(g.units, rho_g), hessian=_sigma(h.units, rho_h))
    if pub.counts_first:
        out["first"] = _sigma(table_scale(pub.n_features)[1], pub.rho_first(x))
    return out


def _sigma(units: int, rho: float) -> float:
    return units / math.sqrt(2.0 * rho) if rho > 0 else math.inf


def least_budget(pub) -> float:
    """The least ``x`` at which every scale that ``x`` sets is within the sampler's ``MAX_SIGMA`` (they are
    ``c / x``; the margin covers the rounding of ``c / x``); 0 when ``x`` sets none."""
    s = scales(pub, 1.0)
    if pub.count_rho is not None:
        s.pop("count")
    return max(s.values(), default=0.0) / MAX_SIGMA * (1.0 + 1e-9)


def too_small(pub, x: float, kind: str | None = None) -> InvalidParameterError:
    """The refusal of a budget whose plan needs noise beyond the sampler at ``x`` (in release ``kind``, or the
    largest), naming the release and the parameter to change."""
    s = scales(pub, x)
    what, share = _NAMES[kind or max(s, key=s.get)]
    return InvalidParameterError(
        f"DPGAMClassifier's budget is too small for its plan: at epsilon={pub.epsilon:g} and delta={pub.delta:g}, "
        f"{what} would need noise of scale above {MAX_SIGMA:g} grid units, more than the discrete Gaussian sampler "
        f"draws. Raise epsilon (or delta), give them {share}, or plan fewer releases (n_cycles, features).")


def no_rdp_budget(pub) -> InvalidParameterError:
    """The refusal of "auto" sizes when no zCDP budget converts to within epsilon at delta under RDP alone (their
    argument over branches is an RDP one; the conversion's largest order bounds how small epsilon may be)."""
    return InvalidParameterError(
        f"DPGAMClassifier's 'auto' sizes need a budget that RDP alone converts to epsilon={pub.epsilon:g} at "
        f"delta={pub.delta:g}, and none does (epsilon is too small for this delta): raise epsilon or delta.")


def pld_too_slow(pub, x: float) -> InvalidParameterError | None:
    """With an explicit ``accountant="pld"``: the refusal when the plan calibrated under RDP at ``x`` has a scale
    above :data:`PLD_EXPLICIT_SIGMA_LIMIT` (else None)."""
    s = scales(pub, x)
    if pub.accountant != "pld" or max(s.values()) <= PLD_EXPLICIT_SIGMA_LIMIT:
        return None
    what, share = _NAMES[max(s, key=s.get)]
    return InvalidParameterError(
        f"DPGAMClassifier with accountant='pld' at epsilon={pub.epsilon:g} would compose noise of scale "
        f"{max(s.values()):.0f} grid units ({what}), above {PLD_EXPLICIT_SIGMA_LIMIT:g}: its privacy loss "
        "distributions would take minutes to build, for a few percent of epsilon. Use accountant='rdp' or 'auto' "
        f"(which uses RDP here), or raise epsilon, or give {what} {share}.")


def rdp_only_epsilon(entries, delta: float) -> float:
    """The epsilon at ``delta`` of the entries composed in sequence under RDP alone (never the basic sum, which
    :func:`~dpglass.privacy.accounting.compose` takes when it is smaller): what the "auto" sizes' argument over
    branches needs (docs/privacy.md, "DP-GAM", "auto" sizes)."""
    return _rdp_epsilon(list(entries), delta)
