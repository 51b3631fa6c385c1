"""The DP held-out accuracy ``dpglass fit`` prints and writes into its model file (the ``held_out`` section).

One release plan (:func:`held_out_plan`), used by the CLI to draw the two noisy
counts (:mod:`dpglass.cli.held_out`) and by the file check to verify them
(:func:`check_held_out`); the line a reader sees (:func:`accuracy_estimate`),
printed by the CLI and shown on the model card.  docs/privacy.md, "The CLI's
held-out accuracy": the held-out records are chosen by public coins and are
disjoint from the training part, so the two counts (sensitivity 1 each,
discrete Laplace at epsilon/2 each: one release of l1 sensitivity 2 at epsilon)
compose in parallel with the model's releases: the run, file included, is
within the model's budget.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import asdict

from dpglass.models._file_checks import _fail
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
from dpglass.privacy.plan import Integers, PlannedRelease, check_domains

__all__ = [
    "HELD_OUT_ALPHA",
    "accuracy_estimate",
    "check_held_out",
    "held_out_bound",
    "held_out_lines",
    "held_out_mechanism",
    "held_out_plan",
    "held_out_section",
]

HELD_OUT_ALPHA = 0.05  # the interval covers both counts' noise with probability >= 95% (a union bound)

#: How the held-out records were chosen (written in the file, checked word for word).
RULE = ("each record held out by its own public coin with probability test_size (dpglass.privacy.splits."
        "split_rows), independently of the data; the held-out records are disjoint from the training part")
#: Why the section costs nothing beyond the model's budget (written in the file, checked word for word).
COMPOSITION = ("parallel: the two counts are computed on the held-out records only, disjoint from the training "
               "part by the public coins; adding or removing one record changes either the training part or the "
               "held-out part, not both, so the run (model and counts) is within the model's budget")
_FIELDS = {"rule", "test_size", "composition", "alpha", "epsilon_each", "noisy_correct", "noisy_records", "release"}


def held_out_mechanism(epsilon: float) -> DiscreteLaplaceMechanism:
    """The counts' noise: discrete Laplace of scale ``2 / epsilon`` (epsilon/2 for each count of sensitivity 1)."""
    return DiscreteLaplaceMechanism(epsilon, sensitivity=2)


def held_out_plan(epsilon: float) -> list:
    """The held-out part's plan: one step releasing ``[correct predictions, held-out records]``.

    Adding or removing one held-out record changes the number of records by 1
    and the number of correct predictions by 0 or 1 (the model is fixed by the
    training part): l1 sensitivity 2, so discrete Laplace of scale 2/epsilon is
    epsilon-DP for the pair (epsilon/2 for each count alone).
    """
    mech = held_out_mechanism(epsilon)
    entry = LedgerEntry(release="held-out accuracy: noisy counts of the correct predictions and of the records",
                        mechanism="discrete laplace", epsilon=epsilon, sensitivity=2.0, scale=mech.scale,
                        partition="public-coin split", part="held-out records",
                        note="two counts of sensitivity 1, discrete Laplace at epsilon/2 each (l1 sensitivity 2)",
                        curve=mech.curve)
    return [PlannedRelease(entry, noise=mech.randomise, domain=Integers(),
                           fields=("held_out.noisy_correct", "held_out.noisy_records"))]


def held_out_section(epsilon: float, test_size: float, noisy_correct: int, noisy_records: int) -> dict:
    """The file's ``held_out`` section: the two released counts and what makes them private, nothing more."""
    (step,) = held_out_plan(epsilon)
    return {"rule": RULE, "test_size": float(test_size), "composition": COMPOSITION, "alpha": HELD_OUT_ALPHA,
            "epsilon_each": epsilon / 2, "noisy_correct": int(noisy_correct), "noisy_records": int(noisy_records),
            "release": asdict(step.entry)}


def check_held_out(data: dict) -> None:
    """Refuse a ``held_out`` section that ``dpglass fit`` would not have written for this file's budget.

    Its released values must be integers (their public domain); its epsilons, its mechanism, its rule and its
    composition statement what :func:`held_out_plan` gives for the file's own budget epsilon; no field added.
    """
    sec = data["held_out"]
    if not isinstance(sec, dict):
        _fail("held_out", f"is {sec!r}", "an object (the section `dpglass fit --out` writes)")
    ledger = data.get("privacy_ledger")
    eps = ledger.get("budget", {}).get("epsilon") if isinstance(ledger, dict) else None
    if not (isinstance(eps, numbers.Real) and not isinstance(eps, bool) and math.isfinite(eps) and eps > 0):
        _fail("held_out", "is present on a file without a privacy budget", "no held-out section (only a private "
              "model's file carries its DP held-out estimate)")
    extra, missing = sorted(set(sec) - _FIELDS), sorted(_FIELDS - set(sec))
    if extra:
        _fail(f"held_out.{extra[0]}", "is not a field dpglass writes", f"only {sorted(_FIELDS)}")
    if missing:
        _fail(f"held_out.{missing[0]}", "is missing", f"every field of the section: {sorted(_FIELDS)}")
    check_domains(held_out_plan(float(eps)), data, _fail)  # the released counts: integers
    for key in ("noisy_correct", "noisy_records"):
        if not isinstance(sec[key], int) or isinstance(sec[key], bool):  # as written: a JSON integer
            _fail(f"held_out.{key}", f"holds {sec[key]!r}", "a JSON integer, the noisy count as released")
    want = held_out_section(float(eps), 0.5, 0, 0)
    for key in ("rule", "composition", "alpha", "epsilon_each"):
        if json.dumps(sec[key]) != json.dumps(want[key]):
            _fail(f"held_out.{key}", f"is {sec[key]!r}", f"{want[key]!r} (what the rule gives for the file's "
                  f"budget epsilon={eps!r})")
    p = sec["test_size"]
    if not (isinstance(p, float) and 0 < p < 1):
        _fail("held_out.test_size", f"is {p!r}", "a number in (0, 1): the coins' probability (--test-size)")
    got = sec["release"]
    if not isinstance(got, dict):
        _fail("held_out.release", f"is {got!r}", "the release's ledger entry")
    for key in sorted(set(got) | set(want["release"])):
        if key not in want["release"]:
            _fail(f"held_out.release.{key}", "is not a ledger field", "only the fields dpglass writes")
        if json.dumps(got.get(key)) != json.dumps(want["release"][key]):  # exact: no float room for data
            _fail(f"held_out.release.{key}", f"is {got.get(key)!r}", f"{want['release'][key]!r}, the held-out "
                  f"plan's release for the file's budget epsilon={eps!r}")


def accuracy_estimate(noisy_correct: int, noisy_size: int, k: int) -> str:
    """The held-out accuracy line from its two noisy counts, each within ``k`` of its true value w.p. >= 1 - alpha/2.

    On that event the exact accuracy lies in ``[(c - k) / (s + k), (c + k) / (s - k)]``
    (intersected with [0, 1]); when ``s - k < 1`` the size may be 0 and nothing
    is estimated.  The interval covers the noise only, not the sampling of the
    held-out records.  Post-processing of the two counts.

    >>> print(accuracy_estimate(80, 100, 3))
    held-out accuracy (DP estimate): 0.800, 95% interval 0.748 to 0.856 (noise only) = 80 / 100 (noisy counts)
    >>> print(accuracy_estimate(103, 100, 3).split(" = ")[0])
    held-out accuracy (DP estimate): 1.030, 95% interval 0.971 to 1.000 (noise only; the noisy ratio lies outside [0, 1])
    >>> print(accuracy_estimate(154, 121, 3))  # doctest: +ELLIPSIS
    held-out accuracy: no estimate: the noisy counts 154 correct of 121 are farther from any possible pair than ...
    >>> print(accuracy_estimate(5, 2, 3))
    held-out accuracy: too few held-out records to estimate (noisy counts 5 correct of 2, each give or take 3 at 95%)
    """
    c, s = int(noisy_correct), int(noisy_size)
    if s - k < 1:
        return (f"held-out accuracy: too few held-out records to estimate (noisy counts {c} correct of {s}, each "
                f"give or take {k} at {1 - HELD_OUT_ALPHA:.0%})")
    ratio, lo, hi = c / s, (c - k) / (s + k), (c + k) / (s - k)
    if hi < 0.0 or lo > 1.0:
        return (f"held-out accuracy: no estimate: the noisy counts {c} correct of {s} are farther from any possible "
                f"pair than their noise's {1 - HELD_OUT_ALPHA:.0%} bound ({k} each); a rare draw, or a tiny held-out part")
    note = "noise only" if 0.0 <= ratio <= 1.0 else "noise only; the noisy ratio lies outside [0, 1]"
    return (f"held-out accuracy (DP estimate): {ratio:.3f}, {1 - HELD_OUT_ALPHA:.0%} interval {max(lo, 0.0):.3f} to "
            f"{min(hi, 1.0):.3f} ({note}) = {c} / {s} (noisy counts)")


def held_out_lines(sec: dict) -> list:
    """What ``dpglass inspect`` prints about a verified ``held_out`` section."""
    k = held_out_bound(2 * sec["epsilon_each"])
    return ["held-out accuracy (written by dpglass fit):",
            "  " + accuracy_estimate(sec["noisy_correct"], sec["noisy_records"], k),
            (f"  from two noisy counts (discrete Laplace at epsilon={sec['epsilon_each']:.4g} each, each within {k} "
             f"with probability >= {1 - sec['alpha'] / 2:.3g}) on the records held out by public coins "
             f"(probability {sec['test_size']:.4g}), disjoint from the training part: parallel composition, no "
             "epsilon beyond the budget")]


def held_out_bound(epsilon: float) -> int:
    """``k``: each count's noise is within ``k`` with probability >= 1 - alpha/2 (the interval's half-width)."""
    return held_out_mechanism(epsilon).tail_bound(HELD_OUT_ALPHA / 2)
