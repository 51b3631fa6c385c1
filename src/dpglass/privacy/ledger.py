"""The privacy ledger: every release a model makes about its training data.

A :class:`PrivacyLedger` is append-only.  Each :class:`LedgerEntry` says what was
released, by which mechanism, with which (epsilon, delta), sensitivity and noise
scale, and which records it touched.  :meth:`PrivacyLedger.total` composes the
entries:

* entries with ``partition=None`` touch all records and compose sequentially
  (epsilons add, deltas add: basic composition, Dwork & Roth 2014, Thm 3.16);
* entries that share a ``partition`` label touch disjoint parts of the records
  (named by ``part``).  Within a part they compose sequentially; across the
  parts of one partition the cost is the maximum (parallel composition,
  McSherry 2009).  The partition must be fixed by public information or by
  earlier releases of the same ledger (e.g. "caught / not caught by the
  released rule"); that is the caller's obligation and is stated in
  ``docs/privacy.md`` for every model.

Composition results that are not sums (advanced composition, a privacy proof of
a whole loop) are recorded as a single entry whose ``epsilon``/``delta`` are the
composed values and whose ``note`` says how they were obtained.

Floating point: budget splits such as ``eps / (3K + 1)`` summed back can exceed
``eps`` in the last bit.  Comparisons against a budget therefore allow a
relative slack of :data:`RELATIVE_TOLERANCE` (1e-9), far below any meaningful
privacy difference.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from typing import Iterator

from dpglass.exceptions import BudgetExceededError, InvalidParameterError

__all__ = ["LedgerEntry", "PrivacyLedger", "RELATIVE_TOLERANCE", "GUARANTEES"]

RELATIVE_TOLERANCE = 1e-9

#: What kind of argument backs an entry.
#: ``"proven"``: a proof or reference in docs/privacy.md;
#: ``"paper-claim"``: the accounting the source paper states, which dpglass
#: could not prove (docs/privacy.md says why); ``"none"``: a non-private release.
GUARANTEES = ("proven", "paper-claim", "none")


@dataclass(frozen=True)
class LedgerEntry:
    """One release about the training data.

    Parameters
    ----------
    release : str
        What was released, in words (e.g. ``"rule 2: selected candidate"``).
    mechanism : str
        The mechanism's name (e.g. ``"laplace"``, ``"permute-and-flip"``).
    epsilon, delta : float
        The privacy cost of this release alone.
    sensitivity : float or None
        The sensitivity the noise was calibrated to, if any.
    scale : float or None
        The noise scale actually used (Laplace b, Gaussian sigma, ...).
    partition, part : str or None
        Parallel composition: entries sharing ``partition`` touch the disjoint
        ``part`` of the records they name.  ``None`` means all records.
    guarantee : {"proven", "paper-claim", "none"}
        What argument backs the entry (see :data:`GUARANTEES`).
    note : str
        Free text: composition used, reference, caveats.
    curve : dict or None
        The entry's privacy curve for tight composition
        (:mod:`dpglass.privacy.accounting`); None means its (epsilon, delta) pair.
    """

    release: str
    mechanism: str
    epsilon: float
    delta: float = 0.0
    sensitivity: float | None = None
    scale: float | None = None
    partition: str | None = None
    part: str | None = None
    guarantee: str = "proven"
    note: str = ""
    curve: dict | None = None

    def __post_init__(self):
        if not (isinstance(self.epsilon, (int, float)) and math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise InvalidParameterError(
                f"A ledger entry's epsilon must be a finite number >= 0. Got {self.epsilon!r} instead."
            )
        if not (isinstance(self.delta, (int, float)) and 0 <= self.delta < 1):
            raise InvalidParameterError(
                f"A ledger entry's delta must be a number in [0, 1). Got {self.delta!r} instead."
            )
        if (self.partition is None) != (self.part is None):
            raise InvalidParameterError(
                "A ledger entry names both 'partition' and 'part', or neither. "
                f"Got partition={self.partition!r}, part={self.part!r}."
            )
        if self.guarantee not in GUARANTEES:
            raise InvalidParameterError(
                f"A ledger entry's guarantee must be one of {GUARANTEES}. Got {self.guarantee!r} instead."
            )
        # store plain floats so JSON round trips are exact
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "delta", float(self.delta))


def _within(value: float, limit: float) -> bool:
    return value <= limit * (1.0 + RELATIVE_TOLERANCE) + 1e-300


@dataclass
class PrivacyLedger:
    """Append-only record of releases, with an optional budget it refuses to exceed.

    Parameters
    ----------
    epsilon, delta : float or None
        The budget.  ``epsilon=None`` means no limit (the ledger still records).
    accountant : {"basic", "pld"}
        How :meth:`total` composes the entries (:mod:`dpglass.privacy.accounting`):
        sums, or privacy loss distributions reporting epsilon at the budget's delta.
    replayable : bool or None
        Whether the noise came from a seeded (replayable) generator
        (:func:`dpglass.privacy.rng.is_replayable`): such a model is for
        research, not for release.  ``None``: not recorded.

    Examples
    --------
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-6)
    >>> _ = ledger.spend("count of records", "laplace", epsilon=0.5, sensitivity=1.0, scale=2.0)
    >>> _ = ledger.spend("caught counts", "laplace", epsilon=0.25, partition="rule 1", part="caught")
    >>> _ = ledger.spend("left counts", "laplace", epsilon=0.25, partition="rule 1", part="left")
    >>> ledger.total()
    (0.75, 0.0)
    >>> ledger.spend("too much", "laplace", epsilon=0.5)
    Traceback (most recent call last):
    ...
    dpglass.exceptions.BudgetExceededError: Spending (0.5, 0) on 'too much' would bring the total to (1.25, 0) above the budget (1, 1e-06). Give the model a larger budget or fewer releases.
    """

    epsilon: float | None = None
    delta: float = 0.0
    replayable: bool | None = None
    accountant: str = "basic"
    _entries: list = field(default_factory=list, repr=False)

    # ------------------------------------------------------------------ state
    #: What a fit holds while it follows a plan (steps carry noise functions): not part of a ledger's state.
    _FIT_STATE = ("_plan", "_parts_due", "_plan_fits")

    def __getstate__(self) -> dict:
        """A pickled (or deep-copied) ledger is its budget and entries: the plan a fit followed stays behind."""
        return {k: v for k, v in self.__dict__.items() if k not in self._FIT_STATE}

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """The entries, in release order."""
        return tuple(self._entries)

    def __iter__(self) -> Iterator[LedgerEntry]:
        return iter(tuple(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    # ---------------------------------------------------------------- spending
    def spend(self, release: str, mechanism: str, epsilon: float, delta: float = 0.0, **details) -> LedgerEntry:
        """Record a release; refuse it if the total would exceed the budget.

        Parameters are those of :class:`LedgerEntry`.

        Returns
        -------
        LedgerEntry

        Raises
        ------
        BudgetExceededError
            If the total after this release would exceed the budget.
        """
        self._not_following("spend")
        entry = LedgerEntry(release=release, mechanism=mechanism, epsilon=epsilon, delta=delta, **details)
        self._check_budget(entry)
        self._entries.append(entry)
        return entry

    def follow(self, plan) -> "PrivacyLedger":
        """Hold the fit to ``plan`` (a list of :class:`~dpglass.privacy.plan.PlannedRelease`): each
        :meth:`release` must be the plan's next step.  A plan with a data-dependent branch (a list that stops
        early) is followed again, rebuilt from the values released so far: it must begin with the releases
        already recorded.  Returns self."""
        plan = list(plan)
        done = [s.entry for s in plan[: len(self._entries)]]
        if done != self._entries:  # a plan rebuilt from released values must agree with what is recorded
            raise InvalidParameterError("The plan does not begin with the releases already recorded.")
        self._plan = plan
        # a plan that fits the budget as a whole fits at every step (composition only grows): release need not
        # compose again (a tight accountant's composition of a long plan is costly); else each step is checked
        self._plan_fits = self.epsilon is None or self._fits(self._compose([s.entry for s in plan]))
        return self

    def release(self, step, exact, rng):
        """Release ``exact`` through a plan step: check order and budget, draw the noise, record, return it.

        The budget is checked **before** the noise is drawn, and the noisy
        values are checked to lie in the step's public domain (a failure there
        is a bug in the family's plan, not the data's fault).

        A step's ``parts`` (the same release on other disjoint parts of the
        records, :class:`~dpglass.privacy.plan.PlannedRelease`) are released
        after it, each once, in any order: their noise is drawn and checked,
        and nothing more is recorded (parallel composition: the step's entry
        covers every part).

        Raises
        ------
        BudgetExceededError
            If the total after this release would exceed the budget (nothing is drawn).
        InvalidParameterError
            If ``step`` is not the next step of the plan this ledger follows (nor a part still due).
        """
        due = getattr(self, "_parts_due", [])
        if any(p is step for p in due):  # another part of a recorded release: its entry is already counted
            self._parts_due = [p for p in due if p is not step]
            return self._draw(step, exact, rng)
        plan = getattr(self, "_plan", None)
        if plan is not None:
            i = len(self._entries)
            if i >= len(plan) or plan[i] is not step:  # the plan's own step object, not one merely equal to it
                expected = repr(plan[i].release) if i < len(plan) else "nothing more"
                raise InvalidParameterError(f"Release {step.release!r} is not the plan's next step ({expected}).")
        if plan is None or not self._plan_fits:
            self._check_budget(step.entry)
        noisy = self._draw(step, exact, rng)
        self._entries.append(step.entry)
        self._parts_due = due + list(getattr(step, "parts", ()))
        return noisy

    @staticmethod
    def _draw(step, exact, rng):
        noisy = step.noise(exact, rng)
        problem = step.domain.problem(noisy)
        if problem is not None:  # pragma: no cover - a plan whose noise leaves its own domain
            raise RuntimeError(f"{step.release!r} {problem}; its plan says {step.domain}.")
        return noisy

    def _fits(self, total: tuple[float, float]) -> bool:
        return _within(total[0], self.epsilon) and _within(total[1], self.delta)

    def include(self, other: "PrivacyLedger", prefix: str = "") -> "PrivacyLedger":
        """Compose the releases another ledger recorded (a pipeline's encoder, its model) into this one, in order,
        against this ledger's budget; ``prefix`` names their part (e.g. ``"model: "``).  The entries were
        released through ``other.release``: this records them, it releases nothing.  The budget is checked once,
        for the whole part (composition only adds loss, so when the whole fits every prefix does; one composition
        instead of one per entry, which was most of a dp-gam pipeline's fit).  Returns self."""
        self._not_following("include")
        entries = [replace(e, release=prefix + e.release) for e in other]
        if entries and self.epsilon is not None:
            total = self._compose(self._entries + entries)
            if not self._fits(total):
                raise BudgetExceededError(
                    f"Including {len(entries)} release{'s' if len(entries) > 1 else ''}"
                    f"{f' of {prefix.strip()!r}' if prefix.strip() else ''} would bring the total to "
                    f"({total[0]:g}, {total[1]:g}) above the budget ({self.epsilon:g}, {self.delta:g}).")
        self._entries.extend(entries)
        return self

    def _not_following(self, what: str) -> None:
        """A ledger that follows a plan records only the plan's steps (anything else would shift its order)."""
        if getattr(self, "_plan", None) is not None:
            raise InvalidParameterError(f"This ledger follows a release plan: {what}() would record outside it; "
                                        "release the plan's steps with release().")

    def _check_budget(self, entry: LedgerEntry) -> None:
        new_eps, new_delta = self._compose(self._entries + [entry])
        if self.epsilon is not None and not self._fits((new_eps, new_delta)):
            raise BudgetExceededError(
                f"Spending ({entry.epsilon:g}, {entry.delta:g}) on {entry.release!r} would bring the total to "
                f"({new_eps:g}, {new_delta:g}) above the budget ({self.epsilon:g}, {self.delta:g}). "
                "Give the model a larger budget or fewer releases."
            )

    def _compose(self, entries) -> tuple[float, float]:
        from dpglass.privacy.accounting import compose

        return compose(entries, self.accountant, self.delta or 0.0)

    def total(self) -> tuple[float, float]:
        """The (epsilon, delta) spent, by the ledger's accountant (parallel parts: basic)."""
        return self._compose(self._entries)

    def remaining(self) -> tuple[float, float]:
        """Budget left: ``(inf, 1)`` minus the total when no budget was set."""
        eps, delta = self.total()
        if self.epsilon is None:
            return math.inf, 1.0 - delta
        return max(self.epsilon - eps, 0.0), max(self.delta - delta, 0.0)

    @property
    def guarantee(self) -> str:
        """The weakest guarantee among the entries: proven, paper-claim or none."""
        kinds = {e.guarantee for e in self._entries}
        for kind in ("none", "paper-claim"):
            if kind in kinds:
                return kind
        return "proven"

    # ----------------------------------------------------------- serialising
    def to_dict(self) -> dict:
        """A JSON-ready dict (budget, entries and total)."""
        eps, delta = self.total()
        return {
            "budget": {"epsilon": self.epsilon, "delta": self.delta},
            "total": {"epsilon": eps, "delta": delta},
            "guarantee": self.guarantee,
            "accountant": self.accountant,
            "replayable": self.replayable,
            "entries": [asdict(e) for e in self._entries],
        }

    @classmethod
    def from_dict(cls, data: dict) -> "PrivacyLedger":
        """Rebuild a ledger written by :meth:`to_dict`."""
        budget = data.get("budget", {})
        ledger = cls(epsilon=budget.get("epsilon"), delta=budget.get("delta", 0.0), replayable=data.get("replayable"),
                     accountant=data.get("accountant", "basic"))
        for item in data.get("entries", []):
            ledger._entries.append(LedgerEntry(**item))
        return ledger

    def to_json(self, **kwargs) -> str:
        """Serialise with :func:`json.dumps`."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> "PrivacyLedger":
        """Rebuild a ledger from :meth:`to_json` output."""
        return cls.from_dict(json.loads(text))

    def __str__(self) -> str:
        rows = [("release", "mechanism", "epsilon", "delta", "records")]
        for e in self._entries:
            records = "all" if e.partition is None else f"{e.partition}: {e.part}"
            flag = "" if e.guarantee == "proven" else f" [{e.guarantee}]"
            rows.append((e.release + flag, e.mechanism, f"{e.epsilon:.4g}", f"{e.delta:.3g}", records))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        eps, delta = self.total()
        budget = "no limit" if self.epsilon is None else f"epsilon={self.epsilon:.4g}, delta={self.delta:.3g}"
        how = "" if self.accountant == "basic" else f"; composed by {self.accountant}"
        lines.append(f"total: epsilon={eps:.4g}, delta={delta:.3g} (budget: {budget}; guarantee: {self.guarantee}{how})")
        if self.replayable:
            lines.append("noise: REPLAYABLE (seeded generator): for research, not for release")
        elif self.replayable is False:
            lines.append("noise: cryptographic (ChaCha20 keyed from the operating system)")
        return "\n".join(lines)
