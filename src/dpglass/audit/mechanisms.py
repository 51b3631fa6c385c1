"""Empirical epsilon lower bounds for a mechanism on one neighbouring pair.

:func:`audit_mechanism` samples a mechanism ``n_samples`` times on each of two
neighbouring inputs ``d`` and ``d_prime``, chooses output events and turns the
observed frequencies into an epsilon lower bound that holds with the stated
confidence.  If the mechanism were ``(eps, delta)``-DP, every event ``E`` would
satisfy ``P[E | d] <= e**eps P[E | d'] + delta`` (and the same with ``d`` and
``d'`` swapped), so

    eps >= ln((P[E | d] - delta) / P[E | d']).

Both probabilities are replaced by one-sided Clopper-Pearson bounds (a lower
bound on the numerator, an upper bound on the denominator), and a union bound
over every (event, direction) pair that is evaluated keeps the overall
confidence.  This is the estimator of DP-Sniper (Bichsel, Steffen, Bogunovic
& Vechev, S&P 2021) and of the statistical testers of Ding et al. (StatDP,
CCS 2018), written for a fixed pair of inputs.

Selection bias.  With ``events="auto"`` the events are chosen on one part of
the samples (``split``, half by default) and the bound is computed on the other
part only, so the chosen events are fixed with respect to the samples that
certify them; the union bound runs over the ``n_select`` chosen events.  With
events given by the caller (a fixed threshold grid, fixed output sets or
predicates, decided before sampling) every sample is used and the union bound
runs over all of them.

Outputs may be scalars (events are thresholds ``x <= t`` and ``x > t``),
vectors (projected on the direction of the mean difference estimated on the
selection part, then thresholds) or discrete labels (any hashable value, or
integer arrays; events are single outputs and unions of the outputs with the
largest estimated likelihood ratio).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy import stats

from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.rng import check_random_state

__all__ = [
    "AuditResult",
    "Event",
    "EventBound",
    "audit_mechanism",
    "clopper_pearson",
    "epsilon_lower_bound",
]


# ----------------------------------------------------------------- statistics
def clopper_pearson(k, n, alpha, side):
    """One-sided Clopper-Pearson bound on a binomial proportion.

    Parameters
    ----------
    k : int or array of int
        Observed successes.
    n : int
        Trials.
    alpha : float
        Probability that the bound fails (one-sided).
    side : {"lower", "upper"}

    Returns
    -------
    float or numpy.ndarray
        ``lower``: the ``alpha`` quantile of ``Beta(k, n - k + 1)`` (0 when
        ``k = 0``); ``upper``: the ``1 - alpha`` quantile of
        ``Beta(k + 1, n - k)`` (1 when ``k = n``).  Exact (conservative)
        coverage ``>= 1 - alpha`` for every true proportion.

    Examples
    --------
    >>> round(float(clopper_pearson(50, 100, 0.025, "lower")), 4)
    0.3983
    >>> abs(float(clopper_pearson(0, 100, 0.05, "upper")) - (1 - 0.05 ** (1 / 100))) < 1e-12
    True
    """
    k = np.asarray(k, dtype=np.float64)
    if side == "lower":
        with np.errstate(invalid="ignore"):
            out = np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)
    elif side == "upper":
        with np.errstate(invalid="ignore"):
            out = np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1)), 1.0)
    else:
        raise InvalidParameterError(f"side must be 'lower' or 'upper'; got {side!r}.")
    return float(out) if out.ndim == 0 else out


def epsilon_lower_bound(k_num, n_num, k_den, n_den, alpha, delta=0.0):
    """``ln((p_lo - delta) / q_hi)`` from counts, each bound at level ``alpha``.

    ``p_lo`` is the Clopper-Pearson lower bound of ``k_num / n_num`` and
    ``q_hi`` the upper bound of ``k_den / n_den``; both hold together with
    probability at least ``1 - 2 alpha``.  Returns ``-inf`` when
    ``p_lo <= delta``.

    Examples
    --------
    >>> round(float(epsilon_lower_bound(6000, 10000, 2000, 10000, 0.0125)), 3)
    1.035
    """
    p_lo = clopper_pearson(k_num, n_num, alpha, "lower")
    q_hi = clopper_pearson(k_den, n_den, alpha, "upper")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(np.asarray(p_lo) > delta, np.log(np.maximum(np.asarray(p_lo) - delta, 1e-300) / q_hi), -np.inf)
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------- events
@dataclass(frozen=True)
class Event:
    """A set of outputs.

    ``kind`` is ``"le"`` (scalar ``x <= threshold``), ``"gt"`` (``x > threshold``),
    ``"in"`` (a discrete output in ``values``) or ``"predicate"`` (``func(outputs)``
    returns a boolean array).  For vector outputs audited with
    ``events="auto"`` the scalar is the projection on ``direction``.
    """

    kind: str
    threshold: float | None = None
    values: tuple = ()
    direction: tuple | None = None
    func: Callable | None = field(default=None, compare=False)
    label: str = ""

    def indicator(self, outputs) -> np.ndarray:
        """Boolean array: which of the outputs lie in the event."""
        if self.kind == "predicate":
            return np.asarray(self.func(outputs), dtype=bool)
        if self.kind == "in":
            keys = outputs if isinstance(outputs, list) else _keys(outputs)
            wanted = set(self.values)
            return np.fromiter((k in wanted for k in keys), dtype=bool, count=len(keys))
        x = np.asarray(outputs, dtype=np.float64)
        if self.direction is not None:
            x = x.reshape(len(x), -1) @ np.asarray(self.direction)
        return x <= self.threshold if self.kind == "le" else x > self.threshold

    def __str__(self) -> str:
        if self.label:
            return self.label
        if self.kind in ("le", "gt"):
            what = "x" if self.direction is None else "w.x"
            return f"{what} {'<=' if self.kind == 'le' else '>'} {self.threshold:.6g}"
        if self.kind == "in":
            shown = ", ".join(repr(v) for v in self.values[:4])
            more = f", ... ({len(self.values)} outputs)" if len(self.values) > 4 else ""
            return f"output in {{{shown}{more}}}"
        return getattr(self.func, "__name__", "predicate")


@dataclass(frozen=True)
class EventBound:
    """The evaluated bound for one event in one direction.

    ``direction`` is ``"d/d'"`` when the bound is on ``P[E|d] / P[E|d']`` and
    ``"d'/d"`` for the reverse.
    """

    event: Event
    direction: str
    k_num: int
    k_den: int
    n: int
    p_lower: float
    q_upper: float
    epsilon_lower: float

    @property
    def point_estimate(self) -> float:
        """ln of the ratio of the raw frequencies (no confidence): a diagnostic."""
        if self.k_den == 0:
            return math.inf if self.k_num else math.nan
        return math.log(self.k_num / self.k_den) if self.k_num else -math.inf


@dataclass(frozen=True)
class AuditResult:
    """What :func:`audit_mechanism` (and :func:`~dpglass.audit.audit_learner`) report.

    Attributes
    ----------
    epsilon_lower : float
        The largest bound over the evaluated events, floored at 0: with
        probability at least ``confidence`` the mechanism is not
        ``(eps, delta)``-DP for any ``eps < epsilon_lower``.
    delta : float
        The delta used in the bound (the claim's).
    claim : tuple (epsilon, delta) or None
    confidence, n_samples, seconds
        ``n_samples`` draws on each input; wall-clock seconds of sampling
        and evaluation.
    best : EventBound or None
        The event that gives ``epsilon_lower``.
    bounds : tuple of EventBound
        Every evaluated (event, direction) pair; the union bound runs over them.
    selection : str
        ``"split"`` (events chosen on a disjoint part of the samples) or
        ``"fixed"`` (events given in advance).
    name : str
    """

    epsilon_lower: float
    delta: float
    claim: tuple | None
    confidence: float
    n_samples: int
    seconds: float
    best: EventBound | None
    bounds: tuple
    selection: str
    name: str = ""
    details: dict = field(default_factory=dict)

    @property
    def violation(self) -> bool:
        """True when the lower bound exceeds the claimed epsilon."""
        return self.claim is not None and self.epsilon_lower > self.claim[0]

    @property
    def verdict(self) -> str:
        if self.claim is None:
            return "NO CLAIM"
        return "VIOLATION" if self.violation else "PASS"

    def summary(self) -> str:
        """A few human-readable lines."""
        head = f"{self.name}: " if self.name else ""
        if self.claim is not None:
            eps, delta = self.claim
            claim = f"claimed ({eps:.4g}, {delta:.3g})-DP"
        else:
            claim = "no claim"
        lines = [
            f"{head}{claim}; empirical epsilon lower bound {self.epsilon_lower:.4f} "
            f"at {self.confidence:.0%} confidence (delta={self.delta:.3g}) -> {self.verdict}",
            f"  {self.n_samples:,} samples per input, {len(self.bounds)} (event, direction) pairs "
            f"evaluated ({self.selection}), {self.seconds:.1f} s",
        ]
        if self.best is not None:
            b = self.best
            lines.append(
                f"  best event: {b.event} [{b.direction}]: counts {b.k_num} vs {b.k_den} of {b.n}, "
                f"P_lo={b.p_lower:.4g}, Q_hi={b.q_upper:.4g}"
            )
        return "\n".join(lines)


# ------------------------------------------------------------------- sampling
def _keys(outputs) -> list:
    """Hashable keys of discrete outputs (rows of a 2-d array become tuples)."""
    if isinstance(outputs, np.ndarray):
        if outputs.ndim == 1:
            return outputs.tolist()
        return [tuple(r) for r in outputs.reshape(len(outputs), -1).tolist()]
    return [tuple(o) if isinstance(o, list) else o for o in outputs]


def _draw(mechanism, batch, data, n, rng):
    if batch is not None:
        out = batch(data, n, rng)
    else:
        out = [mechanism(data, g) for g in rng.spawn(n)]
    if isinstance(out, np.ndarray):
        if len(out) != n:
            raise InvalidParameterError(f"batch returned {len(out)} outputs; expected {n}.")
        return out
    out = list(out)
    if len(out) != n:
        raise InvalidParameterError(f"batch returned {len(out)} outputs; expected {n}.")
    if all(isinstance(o, (float, np.floating)) for o in out):
        return np.asarray(out, dtype=np.float64)
    if all(isinstance(o, np.ndarray) and o.dtype.kind == "f" for o in out):
        return np.stack(out)
    return out


def _kind_of(a, b, kind):
    if kind != "auto":
        return kind
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return "scalar" if a.ndim == 1 else "vector"
    return "discrete"


# ------------------------------------------------------------ event choosing
def _threshold_levels(n_thresholds: int) -> np.ndarray:
    """Quantile levels dense in both tails (where likelihood ratios are largest)."""
    half = max(2, n_thresholds // 2)
    tail = np.geomspace(1e-4, 0.5, half)
    return np.unique(np.concatenate([tail, 1 - tail]))


def _scalar_candidates(xa, xb, n_thresholds):
    pooled = np.concatenate([xa, xb])
    pooled = pooled[np.isfinite(pooled)]
    if pooled.size == 0:
        return [Event("le", 0.0), Event("gt", 0.0)]
    thr = np.unique(np.quantile(pooled, _threshold_levels(n_thresholds)))
    return [Event("le", float(t)) for t in thr] + [Event("gt", float(t)) for t in thr]


def _scalar_counts(events, xa, xb):
    sa, sb = np.sort(xa), np.sort(xb)
    ka, kb = [], []
    for e in events:
        le_a = np.searchsorted(sa, e.threshold, side="right")
        le_b = np.searchsorted(sb, e.threshold, side="right")
        ka.append(le_a if e.kind == "le" else len(sa) - le_a)
        kb.append(le_b if e.kind == "le" else len(sb) - le_b)
    return np.array(ka), np.array(kb)


def _discrete_candidates(keys_a, keys_b, max_union=8):
    ca, cb = {}, {}
    for k in keys_a:
        ca[k] = ca.get(k, 0) + 1
    for k in keys_b:
        cb[k] = cb.get(k, 0) + 1
    outs = list(set(ca) | set(cb))
    events = [Event("in", values=(o,)) for o in outs]
    na, nb = max(len(keys_a), 1), max(len(keys_b), 1)
    for num, den, nn, nd in ((ca, cb, na, nb), (cb, ca, nb, na)):
        ratio = sorted(outs, key=lambda o: -((num.get(o, 0) + 0.5) / nn) / ((den.get(o, 0) + 0.5) / nd))
        for j in range(2, min(max_union, len(ratio)) + 1):
            events.append(Event("in", values=tuple(ratio[:j])))
    return events


def _discrete_counts(events, keys_a, keys_b):
    ca, cb = {}, {}
    for k in keys_a:
        ca[k] = ca.get(k, 0) + 1
    for k in keys_b:
        cb[k] = cb.get(k, 0) + 1
    ka = np.array([sum(ca.get(v, 0) for v in e.values) for e in events])
    kb = np.array([sum(cb.get(v, 0) for v in e.values) for e in events])
    return ka, kb


def _generic_counts(events, outs_a, outs_b):
    ka = np.array([int(e.indicator(outs_a).sum()) for e in events])
    kb = np.array([int(e.indicator(outs_b).sum()) for e in events])
    return ka, kb


def _bounds_for(events, ka, kb, n, alpha, delta):
    """Both directions of every event: arrays (eps, direction flag)."""
    fwd = epsilon_lower_bound(ka, n, kb, n, alpha, delta)
    rev = epsilon_lower_bound(kb, n, ka, n, alpha, delta)
    return np.atleast_1d(fwd), np.atleast_1d(rev)


def _subset(outputs, idx):
    if isinstance(outputs, np.ndarray):
        return outputs[idx]
    return [outputs[i] for i in idx]


# ---------------------------------------------------------------- the audit
def audit_mechanism(mechanism: Callable | None = None, d: Any = None, d_prime: Any = None, n_samples: int = 100_000,
                    *, batch: Callable | None = None, events: str | Sequence = "auto", claim: tuple | None = None,
                    delta: float | None = None, confidence: float = 0.95, kind: str = "auto", split: float = 0.5,
                    n_select: int = 4, n_thresholds: int = 64, rng=None, name: str = "") -> AuditResult:
    """Epsilon lower bound for ``mechanism`` on the neighbouring inputs ``d``, ``d_prime``.

    Parameters
    ----------
    mechanism : callable ``(data, rng) -> output`` or None
        One draw of the mechanism (a scalar, a 1-d float vector or any
        hashable discrete output).  Called ``n_samples`` times per input with
        independent child generators unless ``batch`` is given.
    d, d_prime : any
        The neighbouring inputs, passed to ``mechanism``/``batch`` as is.
    n_samples : int
        Draws on each input.
    batch : callable ``(data, n, rng) -> outputs`` or None
        Vectorised sampler returning ``n`` outputs at once (a float array of
        shape ``(n,)`` or ``(n, k)``, an integer array, or a list of hashable
        outputs).  Preferred: it is what makes 10**6 samples cheap.
    events : "auto" or sequence
        ``"auto"``: choose events on a ``split`` fraction of the samples and
        evaluate them on the rest.  A sequence fixed in advance (no split): of
        :class:`Event`, of floats (thresholds: both ``x <= t`` and ``x > t``),
        or of callables ``outputs -> bool array``.
    claim : (epsilon, delta) or None
        The guarantee under test; ``violation`` compares against it.
    delta : float or None
        The delta in the bound ``ln((P - delta)/Q)``; default: the claim's,
        else 0.
    confidence : float in (0, 1)
        The returned bound holds with at least this probability (union bound
        over every evaluated (event, direction) pair, two one-sided
        Clopper-Pearson bounds each).
    kind : {"auto", "scalar", "vector", "discrete"}
    split : float in (0, 1)
        Fraction of the samples used to choose the events (``events="auto"``).
    n_select : int
        Number of (event, direction) pairs carried from selection to
        evaluation.
    n_thresholds : int
        Size of the quantile grid of candidate thresholds (scalar outputs).
    rng : None, int, SeedSequence or Generator
    name : str
        Label for the report.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> import numpy as np
    >>> lap = lambda x, n, g: x + g.laplace(0, 1.0, n)   # Laplace, sensitivity 1, eps 1
    >>> res = audit_mechanism(batch=lap, d=0.0, d_prime=1.0, n_samples=200_000, claim=(1.0, 0.0), rng=0)
    >>> 0.8 < res.epsilon_lower <= 1.0, res.verdict
    (True, 'PASS')
    """
    _check_audit(mechanism, batch, confidence, n_samples)
    n_samples = int(n_samples)
    if delta is None:
        delta = float(claim[1]) if claim is not None else 0.0
    rng = check_random_state(rng)
    g_a, g_b, g_split = rng.spawn(3)
    start = time.perf_counter()
    out_a = _draw(mechanism, batch, d, n_samples, g_a)
    out_b = _draw(mechanism, batch, d_prime, n_samples, g_b)
    kind = _kind_of(out_a, out_b, kind)
    fail = 1.0 - confidence

    if isinstance(events, str):
        if events != "auto":
            raise InvalidParameterError(f"events must be 'auto' or a sequence; got {events!r}.")
        if not 0 < split < 1:
            raise InvalidParameterError(f"split must be in (0, 1); got {split!r}.")
        alpha = fail / (2 * n_select)
        pairs, n_eval = _split_events(out_a, out_b, kind, split, n_select, n_thresholds, alpha, delta, g_split)
        selection = "split"
    else:
        evs = _fixed_events(events)
        alpha = fail / (2 * 2 * len(evs))
        pairs, n_eval = _fixed_pairs(evs, out_a, out_b, kind), n_samples
        selection = "fixed"

    bounds = _event_bounds(pairs, n_eval, alpha, delta)
    return _result(bounds, delta, claim, confidence, n_samples, start, selection, name, kind, alpha)


def _result(bounds, delta, claim, confidence, n_samples, start, selection, name, kind, alpha) -> AuditResult:
    best = max(bounds, key=lambda b: b.epsilon_lower) if bounds else None
    eps_lower = max(0.0, best.epsilon_lower) if best is not None else 0.0
    return AuditResult(
        epsilon_lower=eps_lower,
        delta=float(delta),
        claim=None if claim is None else (float(claim[0]), float(claim[1])),
        confidence=float(confidence),
        n_samples=n_samples,
        seconds=time.perf_counter() - start,
        best=best,
        bounds=tuple(bounds),
        selection=selection,
        name=name,
        details={"kind": kind, "alpha_per_bound": alpha},
    )


def _check_audit(mechanism, batch, confidence, n_samples) -> None:
    if mechanism is None and batch is None:
        raise InvalidParameterError("audit_mechanism needs a mechanism (data, rng) -> output or a batch sampler.")
    if not 0 < confidence < 1:
        raise InvalidParameterError(f"confidence must be in (0, 1); got {confidence!r}.")
    if int(n_samples) < 4:
        raise InvalidParameterError(f"n_samples must be at least 4; got {int(n_samples)}.")


def _split_events(out_a, out_b, kind, split, n_select, n_thresholds, alpha, delta, g_split):
    """Choose ``n_select`` (event, direction) pairs on a ``split`` part of the samples; count them on the rest.

    Returns the pairs ``(event, direction, count on d, count on d')`` on the
    evaluation part and its size.
    """
    n_samples = len(out_a)
    n_sel = int(round(split * n_samples))
    perm_a, perm_b = g_split.permutation(n_samples), g_split.permutation(n_samples)
    sel_a, ev_a = _subset(out_a, perm_a[:n_sel]), _subset(out_a, perm_a[n_sel:])
    sel_b, ev_b = _subset(out_b, perm_b[:n_sel]), _subset(out_b, perm_b[n_sel:])
    direction = None
    if kind == "vector":
        sa, sb = np.asarray(sel_a, float), np.asarray(sel_b, float)
        w = sa.reshape(len(sa), -1).mean(0) - sb.reshape(len(sb), -1).mean(0)
        w = w / (np.linalg.norm(w) or 1.0)
        direction = tuple(float(v) for v in w)
        sel_a, sel_b = sa.reshape(len(sa), -1) @ w, sb.reshape(len(sb), -1) @ w
        ev_a = np.asarray(ev_a, float).reshape(len(ev_a), -1) @ w
        ev_b = np.asarray(ev_b, float).reshape(len(ev_b), -1) @ w
    if kind in ("scalar", "vector"):
        sel_a, sel_b = np.asarray(sel_a, float), np.asarray(sel_b, float)
        cands = _scalar_candidates(sel_a, sel_b, n_thresholds)
        ka, kb = _scalar_counts(cands, sel_a, sel_b)
    else:
        sel_a, sel_b = _keys(sel_a), _keys(sel_b)
        ev_a, ev_b = _keys(ev_a), _keys(ev_b)
        cands = _discrete_candidates(sel_a, sel_b)
        ka, kb = _discrete_counts(cands, sel_a, sel_b)
    # rank on the selection part with the confidence the evaluation will use
    fwd, rev = _bounds_for(cands, ka, kb, n_sel, alpha, delta)
    scored = [(fwd[i], i, "d/d'") for i in range(len(cands))] + [(rev[i], i, "d'/d") for i in range(len(cands))]
    scored.sort(key=lambda t: -t[0] if np.isfinite(t[0]) else math.inf)
    chosen = scored[:n_select]
    chosen_events = [cands[i] for _, i, _ in chosen]
    if direction is not None:
        chosen_events = [Event(e.kind, e.threshold, direction=direction) for e in chosen_events]
        ka, kb = _scalar_counts(chosen_events, ev_a, ev_b)
    elif kind == "scalar":
        ka, kb = _scalar_counts(chosen_events, ev_a, ev_b)
    else:
        ka, kb = _discrete_counts(chosen_events, ev_a, ev_b)
    pairs = [(e, dirn, ka[j], kb[j]) for j, (e, (_, _, dirn)) in enumerate(zip(chosen_events, chosen))]
    return pairs, n_samples - n_sel


def _fixed_events(events) -> list:
    """Events given in advance as :class:`Event`, predicates or thresholds (both ``x <= t`` and ``x > t``)."""
    evs = []
    for e in events:
        if isinstance(e, Event):
            evs.append(e)
        elif callable(e):
            evs.append(Event("predicate", func=e))
        else:
            evs.extend([Event("le", float(e)), Event("gt", float(e))])
    if not evs:
        raise InvalidParameterError("events is empty.")
    return evs


def _fixed_pairs(evs, out_a, out_b, kind) -> list:
    """Both directions of every fixed event, counted on all the samples."""
    if all(e.kind in ("le", "gt") and e.direction is None for e in evs) and kind == "scalar":
        ka, kb = _scalar_counts(evs, np.asarray(out_a, float), np.asarray(out_b, float))
    elif all(e.kind == "in" for e in evs):
        ka, kb = _discrete_counts(evs, _keys(out_a), _keys(out_b))
    else:
        ka, kb = _generic_counts(evs, out_a, out_b)
    return [(e, "d/d'", ka[j], kb[j]) for j, e in enumerate(evs)] + [
        (e, "d'/d", ka[j], kb[j]) for j, e in enumerate(evs)
    ]


def _event_bounds(pairs, n_eval, alpha, delta) -> list:
    """The :class:`EventBound` of every (event, direction, count on d, count on d') pair."""
    bounds = []
    for e, dirn, k1, k2 in pairs:
        k_num, k_den = (int(k1), int(k2)) if dirn == "d/d'" else (int(k2), int(k1))
        p_lo = clopper_pearson(k_num, n_eval, alpha, "lower")
        q_hi = clopper_pearson(k_den, n_eval, alpha, "upper")
        eps = math.log((p_lo - delta) / q_hi) if p_lo > delta else -math.inf
        bounds.append(EventBound(e, dirn, k_num, k_den, n_eval, float(p_lo), float(q_hi), eps))
    return bounds
