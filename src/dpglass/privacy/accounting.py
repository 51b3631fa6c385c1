"""Composing a ledger's releases: basic (sums) or by privacy loss distributions (PLD).

Each ledger entry may declare its **privacy curve** (``LedgerEntry.curve``), a
small JSON object naming the mechanism family and its parameters:

``{"kind": "discrete-laplace", "parameter": g, "sensitivity": k}``
    integer noise with pmf ∝ exp(-g |z|) on a query of l1 sensitivity k;
``{"kind": "laplace", "scale": b, "sensitivity": s}``
    continuous Laplace;
``{"kind": "gaussian", "sigma": σ, "sensitivity": s}``
    Gaussian with l2 sensitivity s;
``{"kind": "discrete-gaussian", "sigma": σ, "sensitivity": k}``
    discrete Gaussian (Canonne, Kamath & Steinke 2020) on an integer query;
``{"kind": "randomized-response", "noise": p, "buckets": m}``
    m-ary randomized response (true bucket with probability 1 - p, else uniform);
``{"kind": "bounded-range", "epsilon": ε}``
    an ε-bounded-range selection: the exponential mechanism (Durfee & Rogers
    2019; Dong, Durfee & Rogers 2020); the PLD accountant charges it as pure
    ε, the RDP accountant as ε²/8-zCDP (Cesar & Rogers 2021);
``{"kind": "pure"}`` or no curve
    the entry's own (epsilon, delta) pair, the worst case of any mechanism
    with that guarantee (permute-and-flip; smooth-sensitivity releases;
    certified selections).

Accountants: ``"basic"`` adds epsilons and deltas (Dwork & Roth 2014, Thm
3.16); it is the only accountant for delta = 0.  ``"pld"`` composes the
entries' privacy loss distributions with Google's dp-accounting package
(Meiser & Mohammadi 2018; Koskela et al.; "pessimistic" discretisation, so
every number is an upper bound) and reports the epsilon at the budget's
delta.  ``"rdp"`` adds Rényi divergences (:mod:`dpglass.privacy.rdp`); an
entry's own delta is added to the total delta (the Kairouz-Oh-Viswanath
decomposition, docs/privacy.md), except for Gaussian curves, whose Rényi
divergences already describe the whole release.  Entries that share a ``partition``
(parallel composition) count once, as one part's releases, when every part
makes the same releases; otherwise the partition is charged by basic
composition.  Models choose with :func:`choose_accountant` (``"auto"``):
the accountant that lets each release spend the most.

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

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.privacy import rdp

__all__ = ["ACCOUNTANTS", "DEFAULT_DELTA", "calibrate", "choose_accountant", "compose", "curve_pld", "curve_rdp"]

#: The delta a model uses when ``delta=None``: a public constant, at most 1/(100 n) for
#: tables of up to a million records.  Pass a smaller delta for larger tables.
DEFAULT_DELTA = 1e-8

ACCOUNTANTS = ("basic", "pld", "rdp")
#: What a model's ``accountant=`` accepts: an accountant, or "auto".
CHOICES = ACCOUNTANTS + ("auto",)
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


def _key(e) -> str:
    return json.dumps({"curve": e.curve, "eps": e.epsilon, "delta": e.delta}, sort_keys=True)


def _sequential_view(entries):
    """``(entries composed in sequence, entries charged by basic composition)``.

    A partition whose parts all make the same releases (the same multiset of
    curves) is one part's releases in sequence: a record lies in one part and
    the others' releases do not depend on it.  Any other partition is charged
    by basic (parallel) composition.
    """
    seq, rest, parts = [], [], {}
    for e in entries:
        if e.partition is None:
            seq.append(e)
        else:
            parts.setdefault(e.partition, {}).setdefault(e.part, []).append(e)
    for by_part in parts.values():
        shapes = {tuple(sorted(_key(e) for e in es)) for es in by_part.values()}
        if len(shapes) == 1:
            seq.extend(next(iter(by_part.values())))
        else:
            rest.extend(e for es in by_part.values() for e in es)
    return seq, rest


def is_positive_integer(x) -> bool:
    """Whether a curve's integer field (a sensitivity in grid units, a number of buckets) is an exact integer >= 1."""
    return not isinstance(x, bool) and float(x).is_integer() and x >= 1


def _int(x) -> int:
    """An integer field of a curve: exact, >= 1, never truncated."""
    if not is_positive_integer(x):
        raise InvalidParameterError(f"A privacy curve's integer field must be an integer >= 1; got {x!r}.")
    return int(x)


#: dp-accounting's epsilon(delta) carries float error of up to ~1e-4 relative in delta at extreme
#: compositions (found by exact brute force); asking at a slightly smaller delta keeps every
#: reported epsilon an upper bound.
PLD_DELTA_MARGIN = 1e-3
#: Above this per-release epsilon (Gaussian curves aside) the PLD accountant is not run: dp-accounting's loss grid (interval
#: 1e-4) grows with epsilon and takes minutes, while tight composition gains little there.  The
#: result is then basic composition (a valid bound).
PLD_MAX_EPSILON = 2.0


@functools.lru_cache(maxsize=512)
def _pld_of(key: str):
    from dp_accounting.pld import common, privacy_loss_distribution as pld

    c = json.loads(key)
    kind, d = c["kind"], dict(value_discretization_interval=DISCRETISATION)
    if kind == "discrete-laplace":
        return pld.from_discrete_laplace_mechanism(c["parameter"], sensitivity=_int(c["sensitivity"]), **d)
    if kind == "laplace":
        return pld.from_laplace_mechanism(c["scale"], sensitivity=c["sensitivity"], **d)
    if kind == "gaussian":
        return pld.from_gaussian_mechanism(c["sigma"], sensitivity=c["sensitivity"], **d)
    if kind == "discrete-gaussian":
        return pld.from_discrete_gaussian_mechanism(c["sigma"], sensitivity=_int(c["sensitivity"]), **d)
    if kind == "randomized-response":
        return pld.from_randomized_response(c["noise"], _int(c["buckets"]), **d)
    if kind == "pure":
        return pld.from_privacy_parameters(common.DifferentialPrivacyParameters(c["epsilon"], c["delta"]), **d)
    raise InvalidParameterError(f"Unknown privacy curve kind {kind!r}.")


def _curve(entry) -> dict:
    curve = dict(entry.curve or {"kind": "pure"})
    if curve["kind"] == "bounded-range":  # PLD: the worst case of an eps-DP mechanism
        curve = {"kind": "pure"}
    if curve["kind"] == "pure":
        curve = {"kind": "pure", "epsilon": entry.epsilon, "delta": entry.delta}
    return curve


def curve_pld(entry):
    """The PLD of one entry: its declared curve, else the worst case of its (epsilon, delta)."""
    return _pld_of(json.dumps(_curve(entry), sort_keys=True))


@functools.lru_cache(maxsize=512)
def _rdp_of(key: str) -> np.ndarray:
    c, a = json.loads(key), rdp.ORDERS
    kind = c["kind"]
    if kind == "discrete-laplace":
        return rdp.discrete_laplace(a, c["parameter"], _int(c["sensitivity"]))
    if kind == "laplace":
        return rdp.laplace(a, c["scale"], c["sensitivity"])
    if kind in ("gaussian", "discrete-gaussian"):
        return rdp.gaussian(a, c["sigma"], c["sensitivity"])
    if kind == "randomized-response":
        return rdp.randomized_response(a, c["noise"], _int(c["buckets"]))
    if kind == "bounded-range":
        return rdp.bounded_range(a, c["epsilon"])
    if kind == "pure":
        return rdp.pure(a, c["epsilon"])
    raise InvalidParameterError(f"Unknown privacy curve kind {kind!r}.")


def curve_rdp(entry) -> np.ndarray:
    """The Rényi divergences of one entry at :data:`dpglass.privacy.rdp.ORDERS` (its delta is charged apart)."""
    curve = dict(entry.curve or {"kind": "pure"})
    if curve["kind"] == "pure":
        curve = {"kind": "pure", "epsilon": entry.epsilon}
    elif curve["kind"] == "bounded-range":
        curve["epsilon"] = min(curve.get("epsilon", entry.epsilon), entry.epsilon)
    return _rdp_of(json.dumps(curve, sort_keys=True))


def _grouped(entries):
    counts: dict = {}
    for e in entries:
        counts.setdefault(_key(e), [e, 0])[1] += 1
    return counts.values()


def _pld_epsilon(seq, delta: float) -> float:
    """Epsilon at ``delta`` of the PLD composition; inf where dp-accounting cannot represent it.

    (Very large per-release epsilons overflow its grids; there basic
    composition is as good as any.)
    """
    if any(e.epsilon > PLD_MAX_EPSILON and (e.curve or {}).get("kind") not in ("gaussian", "discrete-gaussian")
           for e in seq):
        return math.inf
    try:
        total = None
        for e, k in _grouped(seq):
            p = curve_pld(e)
            p = p.self_compose(k) if k > 1 else p
            total = p if total is None else total.compose(p)
        return float(total.get_epsilon_for_delta(delta * (1 - PLD_DELTA_MARGIN)))
    except (OverflowError, ValueError, MemoryError):
        return math.inf


#: Curves whose Rényi divergences describe the whole release (its own delta is only
#: the pair stated for basic composition, and is not charged again under RDP).
_FULL_RDP = ("gaussian", "discrete-gaussian")


def _rdp_epsilon(seq, delta: float) -> float:
    own = sum(e.delta for e in seq if (e.curve or {}).get("kind") not in _FULL_RDP)
    if own >= delta:
        return math.inf
    total = sum(k * curve_rdp(e) for e, k in _grouped(seq))
    return rdp.to_epsilon(total, delta - own)


def compose(entries, accountant: str, delta: float) -> tuple[float, float]:
    """``(epsilon, delta)`` of the entries under ``accountant`` (``pld``/``rdp``: epsilon at ``delta``).

    With a tight accountant and ``delta = 0``, or when the entries' own
    deltas reach ``delta``, the result is the basic one (a tight accountant
    needs a delta to trade); it is also the basic one whenever that is
    smaller (both are valid bounds).
    """
    entries = list(entries)
    if accountant not in ACCOUNTANTS:
        raise InvalidParameterError(f"accountant must be one of {ACCOUNTANTS}; got {accountant!r}.")
    basic = _basic(entries)
    if accountant == "basic" or delta <= 0 or not entries:
        return basic
    seq, rest = _sequential_view(entries)
    par = _basic(rest)
    slack = delta - par[1]
    if not seq or slack <= 0:
        return basic
    eps = (_pld_epsilon if accountant == "pld" else _rdp_epsilon)(seq, slack) + par[0]
    return (eps, delta) if eps < basic[0] else basic


def calibrate(plan, epsilon: float, delta: float, accountant: str, *, tol: float = 1e-3) -> float:
    """The largest per-release epsilon ``x`` with ``compose(plan(x), accountant, delta)[0] <= epsilon``.

    ``plan(x)`` returns the list of ledger entries a model would write if each
    release spent ``x`` (their curves calibrated to ``x``); the composed epsilon
    is increasing in ``x``.  Bisection on a log scale to a relative ``tol``.
    It starts from the basic split ``epsilon / len(plan)``, which is within
    the budget when every entry states ``epsilon = x``; a plan whose entries
    state more (a Gaussian release's pair at its delta) is searched below it.
    """
    n = len(plan(1.0))
    lo = epsilon / max(n, 1)
    if accountant == "basic" or delta <= 0:
        return lo
    hi = None
    for _ in range(60):
        if compose(plan(lo), accountant, delta)[0] <= epsilon:
            break
        hi, lo = lo, lo / 2
    else:
        raise InvalidParameterError(f"No per-release epsilon keeps this release plan within epsilon={epsilon!r}.")
    if hi is not None:
        return _bisect(plan, lo, hi, epsilon, delta, accountant, tol)
    hi = epsilon
    if compose(plan(hi), accountant, delta)[0] <= epsilon:
        return hi
    return _bisect(plan, lo, hi, epsilon, delta, accountant, tol)


def _bisect(plan, lo: float, hi: float, epsilon: float, delta: float, accountant: str, tol: float) -> float:
    """The largest ``x`` in ``[lo, hi)`` (``lo`` fits, ``hi`` does not) to a relative ``tol``."""
    while hi / lo > 1 + tol:
        mid = math.sqrt(lo * hi)
        if compose(plan(mid), accountant, delta)[0] <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


def choose_accountant(plan, epsilon: float, delta: float, accountant: str) -> tuple[float, str]:
    """``(per-release epsilon, accountant)``: ``"auto"`` takes the accountant whose calibration is largest.

    ``"auto"`` is ``"basic"`` when ``delta = 0``; otherwise it tries ``"pld"``
    and ``"rdp"`` on the release plan (public parameters only) and keeps the
    one that lets each release spend more (ties: ``"pld"``).
    """
    if accountant not in CHOICES:
        raise InvalidParameterError(f"accountant must be one of {CHOICES}; got {accountant!r}.")
    if delta <= 0 or accountant == "basic":
        return calibrate(plan, epsilon, 0.0, "basic"), "basic"
    if accountant != "auto":
        return calibrate(plan, epsilon, delta, accountant), accountant
    best = max((calibrate(plan, epsilon, delta, a), -i, a) for i, a in enumerate(("pld", "rdp")))
    return best[0], best[2]
