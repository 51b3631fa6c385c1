"""What every model-file check uses: refusing a field, reading a number, the checks' context.

Low in the models package: it imports no model, so a family's file check (``_verify_<family>.py``) and the
entry point (:mod:`dpglass.models._verify`) both build on it without an import circle.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from dpglass.exceptions import ModelFileError
from dpglass.privacy.accounting import DEFAULT_DELTA
from dpglass.privacy.ledger import GUARANTEES, RELATIVE_TOLERANCE, PrivacyLedger
from dpglass.privacy.plan import check_against_plan, check_domains

ADVICE = ("Re-save the model with dpglass; do not edit model files by hand. A file written by an earlier dpglass "
          "whose releases differ from this version's is refused too: refit the model with this version.")


#: The name a count released by discrete Laplace has in a ledger (``mechanisms.count_fields``).
COUNT_MECHANISM = "discrete laplace"


_GUARANTEE_RANK = {g: i for i, g in enumerate(GUARANTEES)}  # proven < paper-claim < none


def _fail(field: str, problem: str, expected: str | None = None):
    exp = f"; expected {expected}" if expected else ""
    raise ModelFileError(f"Model file field {field!r} {problem}{exp}. {ADVICE}")


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _rule_version(data: dict, field: str, known) -> int:
    """The rule version a file names in ``field`` (model="auto"'s ``auto_rule``, dp-gam's ``sizes_rule``, smooth
    boosting's ``rule``): absent is version 1, the rule of every file written before versions, so that each rule
    has one spelling; present, a version in ``known`` after the first.  Returns the version."""
    if field not in data:
        return 1
    v = data[field]
    if not _is_int(v) or v == 1 or v not in known:
        text = repr(v) if len(repr(v)) <= 80 else repr(v)[:77] + "..."  # a file may hold anything there
        _fail(field, f"is {text}", f"absent for version 1, or a later rule version this dpglass knows (it knows "
              f"versions {', '.join(map(str, known))}; a newer dpglass may have written this file)")
    return int(v)


def _is_num(v) -> bool:
    try:
        return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
    except OverflowError:  # an integer beyond float range (JSON allows 10**400)
        return False


def _is_count(v) -> bool:
    """A released noisy count: an integer of int64 size (anything larger is not a count a fit writes)."""
    return _is_int(v) and abs(v) < 2**62


def _close(a, b) -> bool:
    return math.isclose(float(a), float(b), rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0)


def _need(mapping: dict, key: str, field: str, kind, what: str):
    """``mapping[key]``, refused when missing or not of ``kind``."""
    if key not in mapping:
        _fail(field, "is missing", what)
    value = mapping[key]
    bad = isinstance(value, bool) and kind is not bool and kind is not object
    if bad or not isinstance(value, kind):
        _fail(field, f"is {value!r} ({type(value).__name__})", what)
    return value


def _need_num(mapping: dict, key: str, field: str, what: str = "a finite number") -> float:
    value = _need(mapping, key, field, numbers.Real, what)
    if not _is_num(value):
        _fail(field, f"is {value!r}", what)
    return float(value)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.6g}"


@dataclass
class _Context:
    """What the model-specific checks need."""

    cls: type
    params: dict  # as written in the file (validated)
    d: int
    names: list
    ledger: PrivacyLedger | None  # the model's own ledger: None if non-private or written by a selection
    entries: list  # the ledger's raw entry dicts ([] without an own ledger)


def _replay_plan(ctx: "_Context", steps, values, accountant: str | None = None) -> None:
    """A file's released values against its release plan: its own fit's ledger entry for entry
    (``check_against_plan``) and, when given, the plan's accountant; a selection's file (no ledger of its own,
    its entry is checked by its selection): every value in its step's domain."""
    if ctx.ledger is None:
        check_domains(steps, values, _fail)
        return
    check_against_plan(ctx.entries, steps, values, _fail)
    if accountant is not None and ctx.ledger.accountant != accountant:
        _fail("privacy_ledger.accountant", f"is {ctx.ledger.accountant!r}", f"{accountant!r}, the plan's")


def _resolved_delta(params: dict):
    """The delta ``fit`` uses: params.delta, or the library's public default for null (None if unknown)."""
    if "delta" not in params:
        return None
    if params["delta"] is not None:
        return float(params["delta"])
    return float(DEFAULT_DELTA)  # the library's public constant (older versions' 1/n^2 files are refused)


def _check_noise_scale(entry: dict, field: str, sensitivity: float, epsilon: float) -> None:
    """A recorded noise scale must be at least sensitivity / epsilon (less noise would void the entry)."""
    scale = entry.get("scale")
    if scale is None or not _is_num(scale) or scale < sensitivity / epsilon * (1.0 - RELATIVE_TOLERANCE):
        _fail(f"{field}.scale", f"is {scale!r}", f"at least sensitivity / epsilon = {sensitivity / epsilon!r}")


def _check_declared_curve(entry: dict, field: str, want) -> None:
    """An entry's curve must be the one its learner declares (or none: the worst case of its pair)."""
    have = entry.get("curve")
    integer = ("sensitivity", "buckets") if want and want.get("kind") != "gaussian" else ()
    if have is not None and (want is None or set(have) != set(want) or any(
            k != "kind" and not (have[k] == want[k] if k in integer else _close(have[k], want[k])) for k in want)
            or have.get("kind") != want.get("kind")):
        _fail(f"{field}.curve", f"is {have!r}", f"{want!r} (the mechanism's own curve) or null")
