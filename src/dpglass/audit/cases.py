"""The audit catalogue: every dpglass mechanism with its claim and a hard neighbouring pair.

An :class:`AuditCase` bundles a sampler, a neighbouring pair and the guarantee
dpglass states for it; :func:`mechanism_cases` builds one per mechanism and per
rule-list selection step.  The CLI (``dpglass audit --model NAME``), the tests
and ``docs/audit.md`` all run these.  Each case says how its pair was chosen.

Selection steps (``selection/<mechanism>``) audit one call of
``dpglass.models.rule_list.selection.select`` on the exact counts of two
neighbouring remaining sets over two binary features (candidates: the four
literals and "no rule").  Their claim is the per-selection ``(eps, delta)`` of
``docs/privacy.md``; for ``certified-pf`` it is the pair (noisy remaining
count, selection), ``(2 eps_node, delta_T)``, and the output is the selected
index with the noisy count rounded down (post-processing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dpglass.audit.mechanisms import AuditResult, audit_mechanism
from dpglass.audit.selection import literal_tables
from dpglass.models.rule_list.selection import certification_margin, select
from dpglass.privacy.mechanisms import (
    DiscreteLaplaceMechanism,
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PermuteAndFlip,
    ReportNoisyMax,
    SmoothCauchyMechanism,
    SmoothLaplaceMechanism,
)
from dpglass.privacy.sensitivity import gini_smooth_sensitivity, weighted_gini

__all__ = ["AuditCase", "mechanism_cases", "selection_case", "smooth_selection_batch", "select_batch"]


@dataclass(frozen=True)
class AuditCase:
    """One audit: a sampler, a neighbouring pair and the claim under test.

    Attributes
    ----------
    name : str
    claim : (epsilon, delta)
    guarantee : str
        ``"proven"``, ``"paper-claim"`` or ``"broken"`` (zoo entries).
    d, d_prime : any
        The neighbouring inputs given to the sampler.
    batch : callable ``(data, n, rng) -> outputs`` or None
    mechanism : callable ``(data, rng) -> output`` or None
    pair : str
        How the pair was chosen (why it is hard for this mechanism).
    n_samples : int
        Draws per input in the full audit.
    quick_samples : int
        Draws per input in the default (quick) test run.
    """

    name: str
    claim: tuple
    guarantee: str
    d: Any
    d_prime: Any
    batch: Callable | None = None
    mechanism: Callable | None = None
    pair: str = ""
    n_samples: int = 400_000
    quick_samples: int = 40_000
    kind: str = "auto"
    extra: dict = field(default_factory=dict)

    def run(self, n_samples: int | None = None, *, confidence: float = 0.95, rng=None, **kw) -> AuditResult:
        """Audit this case (``n_samples`` defaults to the full-audit size)."""
        return audit_mechanism(
            self.mechanism, self.d, self.d_prime, n_samples or self.n_samples, batch=self.batch,
            claim=self.claim, confidence=confidence, kind=self.kind, rng=rng, name=self.name, **kw,
        )


# ------------------------------------------------------------------ samplers
def _loop(select_one):
    """Batch sampler from a one-draw function ``(data, rng) -> hashable``."""

    def batch(data, n, rng):
        return np.array([select_one(data, rng) for _ in range(n)])

    return batch


def _selector_utilities(m: int, sensitivity: float):
    """``u(d) = 0`` and ``u(d') = (+s, -s, ..., -s)``: candidate 0 gains, all others lose."""
    u_d = np.zeros(m)
    u_dp = np.full(m, -sensitivity)
    u_dp[0] = sensitivity
    return u_d, u_dp


def smooth_selection_batch(mechanism: str, *, epsilon: float, delta: float, min_support: int = 1,
                           gamma: float = 4.0, variant: str = "corrected"):
    """Vectorised ``select`` for ``smooth-laplace`` / ``smooth-cauchy`` on count tables.

    ``data`` is a ``(c0, c1, n0, n1)`` tuple; each draw is exactly what
    ``select`` does (same mechanism objects, sensitivity function and noise
    calls), for ``n`` draws at once; ``tests/test_audit.py`` checks that one
    draw reproduces ``select`` bit for bit.
    """

    def batch(data, n, rng):
        c0, c1, n0, n1 = data
        ginis = weighted_gini(c1, c0, n1 - c1, n0 - c0)
        mech = SmoothLaplaceMechanism(epsilon, delta) if mechanism == "smooth-laplace" else SmoothCauchyMechanism(epsilon, gamma)
        sens = float(gini_smooth_sensitivity(int(n0 + n1), mech.beta, min_support=min_support, variant=variant))
        noisy = mech.randomise(np.broadcast_to(ginis, (n, len(ginis))), sens, rng)
        return np.argmin(noisy, axis=1)

    return batch


def select_batch(mechanism: str, *, epsilon: float, delta: float, min_support: int = 1, gamma: float = 4.0,
                 variant: str = "corrected", margin: float = 0.0):
    """``select`` called once per draw; for ``certified-pf`` the noisy count is drawn first.

    The output of ``certified-pf`` is ``index * 100000 + floor(n_hat)``: the
    selection together with the noisy remaining count it was certified from.
    """
    count = DiscreteLaplaceMechanism(epsilon)

    def one(data, rng):
        c0, c1, n0, n1 = data
        n_hat = float(count.randomise(int(n0 + n1), rng)) if mechanism == "certified-pf" else 0.0
        idx, _ = select(mechanism, c0=c0, c1=c1, n0=n0, n1=n1, n_hat=n_hat, margin=margin, epsilon=epsilon,
                        delta=delta, min_support=min_support, gamma=gamma, variant=variant, rng=rng)
        if mechanism == "certified-pf":
            return idx * 100_000 + int(math.floor(min(max(n_hat, -1e4), 9e4)))
        return idx

    return _loop(one)


#: Default neighbouring pair of remaining sets for the selection steps: rows
#: (x0, x1) = 00, 01, 10, 11 with (negatives, positives).  D' removes the only
#: positive, which sits alone in row 11: every literal's Gini and the "no rule"
#: Gini change, the no-rule Gini by the full local sensitivity g(n - 1).
DEFAULT_SELECTION_CELLS = ((3, 0), (3, 0), (3, 0), (0, 1))
DEFAULT_SELECTION_REMOVED = (3, 1)


#: errors-pf's pair. On the default pair every candidate's error count moves with the removed record, so the
#: output law does not change (an audit without power: helper-26). Here removing one of the two positives of
#: row 11 changes some candidates' error counts and not others', so the utilities move apart (lower bound
#: about 0.6 at epsilon = 1 with 40,000 draws a side).
ERRORS_SELECTION_PAIR = {"cells": ((1, 0), (1, 0), (1, 0), (0, 2)), "removed": (3, 1)}


def selection_case(mechanism: str, *, epsilon: float = 1.0, delta: float = 1e-3, cells=DEFAULT_SELECTION_CELLS,
                   removed=DEFAULT_SELECTION_REMOVED, min_support: int = 1, gamma: float = 4.0,
                   variant: str = "corrected", delta_t: float = 1e-3, pair: str | None = None,
                   name: str | None = None, guarantee: str | None = None) -> AuditCase:
    """An :class:`AuditCase` for one selection step on a pair of count tables."""
    cells = np.array(cells, dtype=np.int64)
    cells2 = cells.copy()
    cells2[tuple(removed)] -= 1
    d = literal_tables(cells, 2)
    d_prime = literal_tables(cells2, 2)
    from dpglass.models.rule_list.selection import PURE_MECHANISMS

    pure = mechanism in PURE_MECHANISMS
    sel_delta = 0.0 if pure else delta
    if mechanism in ("smooth-laplace", "smooth-cauchy"):
        batch = smooth_selection_batch(mechanism, epsilon=epsilon, delta=delta, min_support=min_support,
                                       gamma=gamma, variant=variant)
        n_samples, quick = 2_000_000, 100_000
    else:
        margin = certification_margin(epsilon, delta_t) if mechanism == "certified-pf" else 0.0
        batch = select_batch(mechanism, epsilon=epsilon, delta=sel_delta, min_support=min_support, gamma=gamma,
                             variant=variant, margin=margin)
        n_samples, quick = 40_000, 4_000
    if mechanism == "certified-pf":
        claim = (2 * epsilon, delta_t)
    else:
        claim = (epsilon, sel_delta)
    if guarantee is None:
        guarantee = "paper-claim" if mechanism in ("smooth-laplace", "smooth-cauchy") or variant == "paper" else "proven"
    return AuditCase(
        name=name or f"selection/{mechanism}",
        claim=claim,
        guarantee=guarantee,
        d=d,
        d_prime=d_prime,
        batch=batch,
        pair=pair or (
            f"remaining counts {cells.tolist()} (rows 00,01,10,11 x (neg,pos)) vs the same minus one record "
            f"of cell {tuple(removed)}"
        ),
        n_samples=n_samples,
        quick_samples=quick,
        kind="discrete",
        extra={"cells": cells.tolist(), "removed": tuple(removed), "mechanism": mechanism},
    )


# ----------------------------------------------------------------- catalogue
def mechanism_cases(epsilon: float = 1.0) -> dict[str, AuditCase]:
    """Every dpglass mechanism and rule-list selection step as an :class:`AuditCase`.

    Examples
    --------
    >>> sorted(mechanism_cases())[:3]
    ['dp-quantile', 'exponential', 'gaussian']
    """
    eps = float(epsilon)
    cases: dict[str, AuditCase] = {}

    lap = LaplaceMechanism(eps, 1.0)
    cases["laplace"] = AuditCase(
        "laplace", (eps, 0.0), "proven", 0.0, 1.0,
        batch=lambda x, n, g: lap.randomise_each(np.full(n, x), g),  # n independent scalar releases
        pair="values 0 and 1 (a sensitivity-1 query at its extreme): every threshold event has ratio up to e^eps",
        n_samples=1_000_000, quick_samples=100_000,
    )
    gauss = GaussianMechanism(eps, 1e-5, 1.0)
    cases["gaussian"] = AuditCase(
        "gaussian", (eps, 1e-5), "proven", 0.0, 1.0,
        batch=lambda x, n, g: gauss.randomise(np.full(n, x), g),
        pair="values 0 and 1 (l2 sensitivity 1), analytic calibration at delta=1e-5",
        n_samples=1_000_000, quick_samples=100_000,
    )
    m = 20
    u_d, u_dp = _selector_utilities(m, 1.0)
    sel_pair = (f"{m} candidates; utilities all 0 on d, and on d' candidate 0 gains the sensitivity while the other "
                f"{m - 1} lose it (the non-monotone worst case: the ratio for candidate 0 tends to e^eps as m grows)")
    for name, mech in (
        ("exponential", ExponentialMechanism(eps, 1.0)),
        ("permute-and-flip", PermuteAndFlip(eps, 1.0)),
        ("report-noisy-max", ReportNoisyMax(eps, 1.0)),
    ):
        cases[name] = AuditCase(
            name, (eps, 0.0), "proven", u_d, u_dp,
            batch=_loop(lambda u, g, mech=mech: mech.select(u, g)),
            pair=sel_pair, n_samples=200_000, quick_samples=20_000, kind="discrete",
        )

    # NRS single-value releases of a Gini impurity on the pair of the known defect:
    # counts (0,0,1,9) -> Gini 0.18; remove the positive -> (0,0,0,9), Gini 0.
    def smooth_value(mech):
        def batch(counts, n, g):
            a, b, c, dd = counts
            value = weighted_gini(a, b, c, dd)
            s = float(gini_smooth_sensitivity(int(a + b + c + dd), mech.beta))
            return mech.randomise(np.full(n, value), s, g)

        return batch

    gini_pair = ("counts (caught+, caught-, left+, left-) = (0,0,1,9) vs (0,0,0,9): the Gini drops by g(9) = 0.18, "
                 "the full local sensitivity at n = 10, and the smooth bound changes between n = 10 and 9")
    sl = SmoothLaplaceMechanism(eps, 1e-4)
    cases["smooth-laplace"] = AuditCase(
        "smooth-laplace", (eps, 1e-4), "proven", (0, 0, 1, 9), (0, 0, 0, 9), batch=smooth_value(sl),
        pair=gini_pair, n_samples=1_000_000, quick_samples=100_000,
    )
    sc = SmoothCauchyMechanism(eps)
    cases["smooth-cauchy"] = AuditCase(
        "smooth-cauchy", (eps, 0.0), "proven", (0, 0, 1, 9), (0, 0, 0, 9), batch=smooth_value(sc),
        pair=gini_pair, n_samples=1_000_000, quick_samples=100_000,
    )

    from dpglass.privacy.quantile import dp_quantile

    base = [0.5] * 10
    cases["dp-quantile"] = AuditCase(
        "dp-quantile", (eps, 0.0), "proven", base, base + [0.0],
        mechanism=lambda v, g: dp_quantile(v, 0.5, eps, (0.0, 1.0), g),
        pair="ten values at 0.5 vs the same plus one value at the lower bound 0 (moves the median's rank)",
        n_samples=50_000, quick_samples=8_000,
    )

    from dpglass.models.rule_list.selection import MECHANISMS

    for mech in MECHANISMS:
        pair = ERRORS_SELECTION_PAIR if mech == "errors-pf" else {}
        case = selection_case(mech, epsilon=eps, **pair)
        cases[case.name] = case
    return cases
