"""Composing a ledger's releases: basic (sums) or by privacy loss distributions (PLD).

Each ledger entry may declare its **privacy curve** (``LedgerEntry.curve``), a
small JSON object naming the mechanism family and its parameters:

``{"kind": "discrete-laplace", "parameter": g, "sensitivity": k}``
    integer noise with pmf ∝ exp(-g |z|) on a query of l1 sensitivity k;
``{"kind": "laplace", "scale": b, "sensitivity": s}``
    continuous Laplace;
``{"kind": "gaussian", "sigma": σ, "sensitivity": s}``
    Gaussian with l2 sensitivity s;
``{"kind": "pure"}`` or no curve
    the entry's own (epsilon, delta) pair, the worst case of any mechanism
    with that guarantee (selections: exponential mechanism, permute-and-flip;
    smooth-sensitivity releases).

``"basic"`` adds epsilons and deltas (Dwork & Roth 2014, Thm 3.16); it is the
only accountant for delta = 0.  ``"pld"`` composes the entries' privacy loss
distributions with Google's dp-accounting package (Meiser & Mohammadi 2018;
Koskela et al.; "pessimistic" discretisation, so every number is an upper
bound) and reports the epsilon at the budget's delta.  Entries that share a
``partition`` (parallel composition) are charged by basic composition in
both accountants.

Examples
--------
>>> from dpglass.privacy.ledger import LedgerEntry
>>> e = LedgerEntry("count", "discrete laplace", epsilon=1 / 39,
...                 curve={"kind": "discrete-laplace", "parameter": 1 / 39, "sensitivity": 1})
>>> round(compose([e] * 39, "basic", 1e-6)[0], 6)
1.0
>>> 0.62 < compose([e] * 39, "pld", 1e-6)[0] < 0.65
True
"""

from __future__ import annotations

import functools
import json
import math

from dpglass.exceptions import InvalidParameterError

__all__ = ["ACCOUNTANTS", "calibrate", "compose", "curve_pld"]

ACCOUNTANTS = ("basic", "pld")
#: Discretisation of the privacy loss (dp-accounting's default): smaller is
#: tighter and slower; pessimistic rounding keeps every result an upper bound.
DISCRETISATION = 1e-4


def _basic(entries) -> tuple[float, float]:
    eps = delta = 0.0
    parts: dict = {}
    for e in entries:
        if e.partition is None:
            eps += e.epsilon
            delta += e.delta
        else:
            acc = parts.setdefault(e.partition, {}).setdefault(e.part, [0.0, 0.0])
            acc[0] += e.epsilon
            acc[1] += e.delta
    for by_part in parts.values():
        eps += max(v[0] for v in by_part.values())
        delta += max(v[1] for v in by_part.values())
    return eps, delta


@functools.lru_cache(maxsize=512)
def _pld_of(key: str):
    from dp_accounting.pld import common, privacy_loss_distribution as pld

    c = json.loads(key)
    kind = c["kind"]
    if kind == "discrete-laplace":
        return pld.from_discrete_laplace_mechanism(c["parameter"], sensitivity=int(c["sensitivity"]),
                                                   value_discretization_interval=DISCRETISATION)
    if kind == "laplace":
        return pld.from_laplace_mechanism(c["scale"], sensitivity=c["sensitivity"],
                                          value_discretization_interval=DISCRETISATION)
    if kind == "gaussian":
        return pld.from_gaussian_mechanism(c["sigma"], sensitivity=c["sensitivity"],
                                           value_discretization_interval=DISCRETISATION)
    if kind == "pure":
        return pld.from_privacy_parameters(common.DifferentialPrivacyParameters(c["epsilon"], c["delta"]),
                                           value_discretization_interval=DISCRETISATION)
    raise InvalidParameterError(f"Unknown privacy curve kind {kind!r}.")


def curve_pld(entry):
    """The PLD of one entry: its declared curve, else the worst case of its (epsilon, delta)."""
    curve = entry.curve or {"kind": "pure"}
    if curve.get("kind") == "pure":
        curve = {"kind": "pure", "epsilon": entry.epsilon, "delta": entry.delta}
    return _pld_of(json.dumps(curve, sort_keys=True))


def compose(entries, accountant: str, delta: float) -> tuple[float, float]:
    """``(epsilon, delta)`` of the entries under ``accountant`` (``pld``: epsilon at ``delta``).

    With ``"pld"`` and ``delta = 0``, or when the entries' own deltas reach
    ``delta``, the result is the basic one (PLD needs a delta to trade).
    """
    entries = list(entries)
    if accountant not in ACCOUNTANTS:
        raise InvalidParameterError(f"accountant must be one of {ACCOUNTANTS}; got {accountant!r}.")
    basic = _basic(entries)
    if accountant == "basic" or delta <= 0 or not entries:
        return basic
    seq = [e for e in entries if e.partition is None]
    par = _basic([e for e in entries if e.partition is not None])
    if not seq:
        return basic
    counts: dict = {}
    for e in seq:
        key = json.dumps({"curve": e.curve, "eps": e.epsilon, "delta": e.delta}, sort_keys=True)
        counts.setdefault(key, [e, 0])[1] += 1
    total = None
    for e, k in counts.values():
        p = curve_pld(e)
        p = p.self_compose(k) if k > 1 else p
        total = p if total is None else total.compose(p)
    slack = delta - par[1]
    if slack <= 0:
        return basic
    eps = float(total.get_epsilon_for_delta(slack)) + par[0]
    return (eps, delta) if eps < basic[0] else basic  # both are valid bounds: report the smaller


def calibrate(plan, epsilon: float, delta: float, accountant: str, *, tol: float = 1e-3) -> float:
    """The largest per-release epsilon ``x`` with ``compose(plan(x), accountant, delta)[0] <= epsilon``.

    ``plan(x)`` returns the list of ledger entries a model would write if each
    release spent ``x`` (their curves calibrated to ``x``); the composed epsilon
    is increasing in ``x``.  Bisection on a log scale to a relative ``tol``,
    never returning more than the basic split would allow if that already
    meets the target.
    """
    n = len(plan(1.0))
    lo = epsilon / max(n, 1)  # the basic split: always within the budget
    if accountant == "basic" or delta <= 0:
        return lo
    if compose(plan(lo), accountant, delta)[0] > epsilon * (1 + 1e-9):
        return lo
    hi = epsilon
    if compose(plan(hi), accountant, delta)[0] <= epsilon:
        return hi
    while hi / lo > 1 + tol:
        mid = math.sqrt(lo * hi)
        if compose(plan(mid), accountant, delta)[0] <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo
