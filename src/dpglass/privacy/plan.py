"""Release plans: what a fit may release, in order; each step carries its privacy map and its public domain.

OpenDP's lesson: a measurement carries its own privacy map.  A
:class:`PlannedRelease` is one step of a model family's plan: the ledger
entry it records (its mechanism, ε, δ, sensitivity, scale, curve: the
privacy map), the function that draws its noise, and the **public domain**
of the values it releases (integers, multiples of a grid step, a set of
public points).  A family writes its plan once, as a function of its public
parameters (and of values it released earlier, for data-dependent
branches); then

* the fit spends only through :meth:`~dpglass.privacy.ledger.PrivacyLedger.release`,
  which takes the next step of the plan, checks the budget *before* drawing,
  draws the noise, checks the noisy values lie in the step's domain and
  records the entry;
* the file verifier replays the same plan from the file's parameters
  (:func:`check_against_plan`): the ledger must be that sequence, entry for
  entry, and every released value must lie in its step's domain.

Derived values (an intercept from noisy counts) are checked by the family as
what the releases give.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np

from dpglass.privacy.ledger import RELATIVE_TOLERANCE, LedgerEntry

__all__ = ["GridMultiples", "Integers", "PlannedRelease", "Points", "Product", "Unrestricted", "check_against_plan",
           "check_domains"]


@dataclass(frozen=True)
class Integers:
    """Released values are integers (noisy counts)."""

    def problem(self, values) -> str | None:
        """None when every value lies in the domain, else what is wrong (for the verifier's message)."""
        for v in _flat(values):
            if isinstance(v, bool) or not (isinstance(v, (int, np.integer))
                                           or (isinstance(v, (float, np.floating)) and float(v).is_integer())):
                return f"holds {v!r}, not an integer"
        return None

    def __str__(self) -> str:
        return "integers"


@dataclass(frozen=True)
class GridMultiples:
    """Released values are integer multiples of a public grid step (a power of two: exact in float64)."""

    step: float

    def problem(self, values) -> str | None:
        for v in _flat(values):
            if not _finite(v) or not float(float(v) / self.step).is_integer():
                return f"holds {v!r}, not a multiple of the grid step {self.step!r}"
        return None

    def __str__(self) -> str:
        return f"multiples of {self.step!r}"


@dataclass(frozen=True)
class Points:
    """Released values are among public points (cut points, a label set)."""

    points: tuple

    def problem(self, values) -> str | None:
        allowed = set(self.points)
        for v in _flat(values):
            if v not in allowed:
                return f"holds {v!r}, not one of the public points"
        return None

    def __str__(self) -> str:
        return f"one of {len(self.points)} public points"


@dataclass(frozen=True)
class Product:
    """Released values are public candidates too many to list: tuples whose i-th coordinate is one of the public
    points ``factors[i]`` (a stump's (feature, sign); a whole tree's split features and leaf labels).

    A release is a list of such tuples (one per node or per hypothesis); ``what`` names the candidates in the
    verifier's message.
    """

    factors: tuple
    what: str = "public candidates"

    @cached_property
    def _sets(self) -> tuple:
        return tuple(frozenset(f) for f in self.factors)

    def problem(self, values) -> str | None:
        for v in values:
            if not self._contains(v):
                return f"holds {v!r}, not one of the {self.what}"
        return None

    def _contains(self, v) -> bool:
        try:
            t = tuple(v)
            return len(t) == len(self._sets) and all(
                not isinstance(c, bool) and c in s for c, s in zip(t, self._sets))
        except TypeError:  # not a sequence, or an unhashable coordinate
            return False

    def __str__(self) -> str:
        return f"one of the {math.prod(len(s) for s in self._sets)} {self.what}"


@dataclass(frozen=True)
class Unrestricted:
    """Any value: a non-private release (its entry's guarantee is ``"none"``), recorded so that the ledger says
    so; there is no public domain to check."""

    def problem(self, values) -> str | None:
        return None

    def __str__(self) -> str:
        return "any value (a non-private release)"


def _flat(values):
    if isinstance(values, (list, tuple, np.ndarray)):
        for v in values:
            yield from _flat(v)
    else:
        yield values


def _finite(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class PlannedRelease:
    """One step of a release plan.

    Parameters
    ----------
    entry : LedgerEntry
        What the ledger records for this step: its privacy map (mechanism,
        ε, δ, sensitivity, scale, curve), name and note.
    noise : callable ``(exact, rng) -> noisy``
        The step's mechanism applied to the exact values (a mechanism's
        ``randomise``, or a grid release built on one).
    domain : Integers, GridMultiples or Points
        Where every released value lies, whatever the data.
    fields : tuple of str
        The model file's fields holding the released values (the verifier
        checks them against ``domain``): a top-level key, or a path such as
        ``"rules[*].counts"`` or ``"default_rule.counts"``.
    parts : tuple of PlannedRelease
        The same release on other parts of the records, disjoint from this
        step's and from each other (parallel composition: one entry, this
        step's, covers them all; e.g. the trees of a DPBoost ensemble).  Each
        has this step's entry and its own noise, domain and fields; the fit
        releases each once, after this step, and the ledger records nothing
        for them.  A step whose entry is a composition result (the ledger's
        conventions allow one entry for a whole loop) holds the loop's other
        releases as its parts the same way: smooth boosting's rounds under
        advanced composition, whose one entry is checked against the budget
        before the first round draws.
    """

    entry: LedgerEntry
    noise: Callable = field(compare=False)  # steps of plans rebuilt from the same parameters are equal
    domain: object = None
    fields: tuple = ()
    parts: tuple = ()

    @property
    def release(self) -> str:
        return self.entry.release


def check_against_plan(raw_entries: list, plan: list, data: dict, fail) -> None:
    """A file's ledger entries are exactly the plan's, in order, and its released fields lie in their domains.

    ``raw_entries`` are the file's entry dicts; ``fail(field, problem, expected)``
    raises the verifier's error.  A fit records the plan's own entries and
    JSON round-trips floats, so values compare exactly, but for an entry's ε
    and δ (and its curve, and its scale when its ε differs) within
    :data:`~dpglass.privacy.ledger.RELATIVE_TOLERANCE` of the plan's: a
    composed ε from the PLD or RDP accountant may differ in its last bits
    between machines (vectorised ``exp``, FFTs).  Sensitivities, names,
    notes and the rest are exact: no float room for data.
    """
    if len(raw_entries) != len(plan):
        fail("privacy_ledger.entries", f"has {len(raw_entries)} releases",
             f"{len(plan)}: {', '.join(repr(s.release) for s in plan)}")
    for i, (got, step) in enumerate(zip(raw_entries, plan)):
        want = asdict(step.entry)
        # only a calibrated epsilon (and delta, and what follows from them: the curve, a scale when the epsilon
        # itself differs) may differ in its last bits; every other field is exact (no float room for data)
        loose = {"epsilon", "delta", "curve"} | ({"scale"} if got.get("epsilon") != want["epsilon"] else set())
        for key, value in want.items():
            if not _same(got.get(key), value, key in loose):
                fail(f"privacy_ledger.entries[{i}].{key}", f"is {got.get(key)!r}",
                     f"{value!r}, the plan's {step.release!r} recomputed from the parameters")
        extra = sorted(set(got) - set(want))
        if extra:
            fail(f"privacy_ledger.entries[{i}].{extra[0]}", "is not a ledger field", "only the fields dpglass writes")
    check_domains(plan, data, fail)


def check_domains(plan: list, data: dict, fail) -> None:
    """Every released field of the plan's steps (and of their parts) lies in the step's public domain."""
    for step in plan:
        for part in (step, *step.parts):
            for path in part.fields:
                for name, values in field_values(data, path, fail, step.release):
                    problem = part.domain.problem(values)
                    if problem is not None:
                        fail(name, problem, f"{part.domain}, the public domain of {step.release!r}")


def _same(got, want, loose: bool = False) -> bool:
    """Equal; with ``loose``, floats within the ledger's relative tolerance (in dicts and lists too); bools and
    ints exact, and a float never stands for an int or the reverse."""
    if isinstance(want, float) and isinstance(got, float):
        return got == want or (loose and math.isclose(got, want, rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0))
    if isinstance(want, dict) and isinstance(got, dict):
        return set(got) == set(want) and all(_same(got[k], want[k], loose) for k in want)
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(got) == len(want) and all(_same(a, b, loose) for a, b in zip(got, want))
    if type(got) is not type(want) and (isinstance(got, float) or isinstance(want, float)):
        return False
    return type(got) is type(want) and got == want if isinstance(want, bool) or isinstance(got, bool) else got == want


def field_values(data: dict, path: str, fail, release: str = "") -> list:
    """``[(field name, value)]`` at ``path`` in a model dict: ``"coef"``, ``"default_rule.counts"``,
    ``"rules[*].counts"`` (every item of a list)."""
    found = [(None, data)]
    for part in path.split("."):
        key, every = (part[:-3], True) if part.endswith("[*]") else (part, False)
        nxt = []
        for name, obj in found:
            here = key if name is None else f"{name}.{key}"
            if not isinstance(obj, dict) or key not in obj:
                fail(here, "is missing", f"the values of {release!r}")
            value = obj[key]
            if every:
                if not isinstance(value, list):
                    fail(here, f"is {value!r}", "a list")
                nxt += [(f"{here}[{i}]", v) for i, v in enumerate(value)]
            else:
                nxt.append((here, value))
        found = nxt
    return found
