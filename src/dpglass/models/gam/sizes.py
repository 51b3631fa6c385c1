"""dp-gam's ``"auto"`` sizes: ``first_cycle``, ``n_cycles``, ``max_bins`` (and ``count_share``) picked from the
released class counts by a public rule (docs/privacy.md, "DP-GAM (dp-gam)", "Defaults").

**The plan.**  With any of ``first_cycle``, ``n_cycles`` or ``max_bins`` set to ``"auto"``, the class counts are
released first (after the DP quantile edges of ``binning="quantile"``, whose number is then the fixed
:data:`~dpglass.models.gam.plan.MAX_BINS`) at a zCDP cost ``rho_c`` fixed before any data is read:
``count_share`` (``"auto"``: ``1 / (d + 1)``, the class counts' noise then equal to one cell's of the count-based
first cycle) of ``rho*``, the largest zCDP whose Rényi conversion (with the quantile steps, if any) is within
``(epsilon, delta)``.  From the released counts ``c`` alone, :func:`resolve` computes ``n_hat = sum max(c_k, 0)``
and the signals ``s = n_hat * epsilon / (d * K)`` and ``t = n_hat * epsilon / (B * K)`` (``B`` the bins of all
features in the gradient branch: public) and picks the sizes by the rule of its version (:func:`rule`, version 1;
:func:`rule_v2`, version 2, which also reads ``c = n_hat * epsilon / K``); the rest of the plan is then calibrated
under RDP with the counts' entry fixed.  The file check recomputes the same choice from the file's
``class_counts`` by the rule version the file names (``sizes_rule``; absent: version 1, the files written before
the versions) and replays the same plan.  Whatever the rule, it reads released values and public constants only,
so the argument below holds for every version.

**Privacy.**  Every release after the counts is a discrete Gaussian, whose Rényi curve is linear,
``alpha * rho_i`` (Canonne, Kamath & Steinke 2020, Thm 14).  By adaptive composition of RDP (Mironov 2017,
Prop. 1: the conditional divergence of the later releases is bounded by its supremum over the earlier outputs),
the fit's curve is at most ``prefix(alpha) + alpha * max_b R_b`` with ``R_b`` the zCDP of branch ``b``'s rest:
the curve of the branch of largest ``R_b``, whose conversion the calibration checked to be at most ``epsilon`` at
``delta`` under RDP alone (``gam.plan._rdp_only``: not the smaller of RDP and the basic sum, which would not cover
the supremum).  So whatever the counts are, the fit is ``(epsilon, delta)``-DP.  (PLD composition is not used here: it
has no such argument for a branch chosen from released values.)
"""

from __future__ import annotations

import math

__all__ = ["AUTO_KEYS", "CLASS_SIGNAL", "COUNTS_SIGNAL", "RULE_VERSION", "RULE_VERSIONS", "check_rule_version",
           "is_auto", "resolve", "rule", "rule_v2", "signal"]

#: The parameters that take ``"auto"`` (picked by :func:`rule`).
AUTO_KEYS = ("first_cycle", "n_cycles", "max_bins")
#: Below this many records per (bin, class) of the gradient branch's bins, times epsilon, the model is the
#: count-based first cycle alone (a private naive Bayes): measured on validation parts of training data
#: (docs/privacy.md, "DP-GAM (dp-gam)", "Defaults").
COUNTS_SIGNAL = 3.0
#: Version 2 of the rule: below this many records per class times epsilon (``n_hat eps / K``), the naive Bayes
#: whatever the bins (measured on validation parts of training data: docs/privacy.md, "DP-GAM", "Defaults").
CLASS_SIGNAL = 300.0
#: Bins per numeric column of the count-based model: ``2`` below this signal, else ``4``.
TWO_BINS_SIGNAL = 2.5
#: The versions of the rule (a file with "auto" sizes names the one its fit applied: ``sizes_rule``, absent = 1)
#: and the one new fits apply.  Version 1: :func:`rule`; version 2: :func:`rule_v2`.
RULE_VERSIONS = (1, 2)
RULE_VERSION = 2
#: The large-table branch: today's gradient defaults.
LARGE = {"first_cycle": "gradients", "n_cycles": 2, "max_bins": 16}


def is_auto(params: dict) -> bool:
    """Whether any size is ``"auto"`` (the plan then branches on the released class counts)."""
    return any(params.get(k) == "auto" for k in AUTO_KEYS)


def signal(n_hat: float, epsilon: float, d: int, K: int) -> float:
    """``n_hat * epsilon / (d * K)``: records per (feature, class) times epsilon, public given the counts."""
    return float(n_hat) * float(epsilon) / (max(int(d), 1) * int(K))


def rule(s: float, t: float) -> dict:
    """The sizes for the signals ``s = n_hat eps / (d K)`` and ``t = n_hat eps / (B K)`` (``B``: the gradient
    branch's bins over all features), a public rule of released values."""
    if t < COUNTS_SIGNAL:
        return {"first_cycle": "counts", "n_cycles": 0, "max_bins": 2 if s < TWO_BINS_SIGNAL else 4}
    return dict(LARGE)


def rule_v2(s: float, t: float, c: float) -> dict:
    """Version 2: version 1's sizes (:func:`rule`), but the naive Bayes also wherever ``c = n_hat eps / K``
    (records per class, times epsilon) is below :data:`CLASS_SIGNAL`, however few bins there are: on small tables
    of few bins (COMPAS: t = 6-8 at epsilon = 0.1) one release of the class counts per bin beats two gradient
    cycles (docs/privacy.md, "DP-GAM (dp-gam)", "Defaults").  A public rule of released values."""
    if c < CLASS_SIGNAL:
        return {"first_cycle": "counts", "n_cycles": 0, "max_bins": 2 if s < TWO_BINS_SIGNAL else 4}
    return rule(s, t)


def check_rule_version(version) -> int:
    """``version`` if this dpglass knows that rule (raises ValueError naming the known ones otherwise)."""
    if isinstance(version, bool) or not isinstance(version, int) or version not in RULE_VERSIONS:
        raise ValueError(f"the 'auto' sizes rule version is {version!r}; this dpglass knows versions "
                         f"{', '.join(map(str, RULE_VERSIONS))} (a file written by a newer dpglass needs that version)")
    return version


def resolve(params: dict, class_counts, d: int, K: int, bins: int, version: int = RULE_VERSION) -> dict:
    """``params`` with every ``"auto"`` size replaced by the choice of rule ``version`` for the released
    ``class_counts`` (negative counts read as 0; ``bins``: the number of bins of all features in the gradient
    branch, public); ``max_bins`` is :data:`LARGE`'s with ``binning="quantile"`` (its quantile edges are released
    before the counts)."""
    n_hat = sum(max(int(c), 0) for c in class_counts)
    s, t = signal(n_hat, params["epsilon"], d, K), signal(n_hat, params["epsilon"], bins, K)
    chosen = rule(s, t) if check_rule_version(version) == 1 else rule_v2(s, t, signal(n_hat, params["epsilon"], 1, K))
    if params.get("binning") == "quantile":
        chosen["max_bins"] = LARGE["max_bins"]
    return {**params, **{k: chosen[k] for k in AUTO_KEYS if params.get(k) == "auto"}}


def auto_count_share(params: dict, d: int) -> float:
    """The class counts' share of ``rho*`` in an "auto" plan: ``count_share``, or ``1 / (d + 1)``."""
    share = params.get("count_share")
    return 1.0 / (int(d) + 1) if share in (None, "auto") else float(share)


def zcdp_budget(epsilon: float, delta: float, prefix_curve) -> float:
    """The largest ``rho`` (relative 1e-6, from below) whose curve ``alpha * rho`` plus ``prefix_curve`` converts to at
    most ``epsilon`` at ``delta`` (``prefix_curve(rho)``: the composed epsilon of the prefix and a rho-zCDP
    release)."""
    lo, hi = 0.0, max(epsilon, 1.0) ** 2
    while prefix_curve(hi) <= epsilon:  # pragma: no cover - a rho-zCDP release converts to at least rho
        lo, hi = hi, 2 * hi
    for _ in range(200):
        if lo > 0 and hi / lo < 1 + 1e-6:
            break
        mid = (lo + hi) / 2 if lo == 0 else math.sqrt(lo * hi)
        lo, hi = (mid, hi) if prefix_curve(mid) <= epsilon else (lo, mid)
    return lo
