"""The decision of a model as a small expression tree, which the SQL and Python writers both print.

A model's decision is read from its released state only (post-processing of a verified file): its scores are
:class:`Num` expressions over its features (constants, ``CASE``-like choices, ``+ - * /`` in a fixed order), and
its prediction one of three forms: the first rule that holds (:class:`Rules`), the first class of largest score
(:class:`Argmax`), or one score against a threshold (:class:`Threshold`).  Every number is a Python float,
printed by the writers with ``repr`` (the shortest decimal that reads back as the same double), and every sum is
written left to right in the order the model's own ``decision_function`` adds its terms, so that IEEE double
arithmetic in SQLite, PostgreSQL or Python gives the model's own bits.

Features are the model's input columns, by index: ``Bit(j)`` is "feature j is 1" (a 0/1 feature, or one
indicator of a DPPipeline's encoding), ``Above(j, t)`` is "feature j > t" (a number or a category code: DP-GBDT's
and dp-gam's bins) and ``Missing(j)`` "feature j is missing" (dp-gam's missing bin).  How a feature is read
from a row (a column of the table, or the schema's encoding of a raw column) is the writers' business
(:mod:`dpglass.export.inputs`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpglass.exceptions import InvalidParameterError

__all__ = ["Above", "All", "Argmax", "Bit", "Case", "Const", "Decision", "Missing", "Not", "NotExportableError",
           "Op", "Rules", "Threshold", "Truth", "case", "conjunction", "negate", "total"]


class NotExportableError(InvalidParameterError):
    """The model's decision cannot be exported (the message says why)."""


# ------------------------------------------------------------------------------------------- conditions
@dataclass(frozen=True)
class Truth:
    """A constant condition."""

    value: bool


@dataclass(frozen=True)
class Bit:
    """Feature ``j`` is 1."""

    j: int


@dataclass(frozen=True)
class Above:
    """Feature ``j`` (a number) is greater than ``t``."""

    j: int
    t: float


@dataclass(frozen=True)
class Missing:
    """Feature ``j`` is missing (a model that declares missing values: dp-gam's own bin)."""

    j: int


@dataclass(frozen=True)
class Not:
    arg: object


def negate(cond) -> object:
    """``Not(cond)``, a constant folded."""
    return Truth(not cond.value) if isinstance(cond, Truth) else Not(cond)


@dataclass(frozen=True)
class All:
    """Every condition holds (at least two)."""

    args: tuple


def conjunction(conds) -> object:
    """``All`` of the conditions, simplified: constants folded, one condition as itself."""
    out = []
    for c in conds:
        if isinstance(c, Truth):
            if not c.value:
                return Truth(False)
            continue
        out.append(c)
    if not out:
        return Truth(True)
    return out[0] if len(out) == 1 else All(tuple(out))


# ------------------------------------------------------------------------------------------------ numbers
@dataclass(frozen=True)
class Const:
    value: float


@dataclass(frozen=True)
class Case:
    """``then`` where ``cond`` holds, else ``other``."""

    cond: object
    then: object
    other: object


@dataclass(frozen=True)
class Op:
    """``left op right``, op one of ``+ - * /`` (double arithmetic, one rounding)."""

    op: str
    left: object
    right: object


def case(cond, then, other):
    """:class:`Case`, with a constant condition or two equal branches folded."""
    if isinstance(cond, Truth):
        return then if cond.value else other
    if then == other:
        return then
    return Case(cond, then, other)


def total(first, terms) -> object:
    """``((first + t1) + t2) + ...``: the terms added left to right, as the model adds them."""
    out = first
    for t in terms:
        out = Op("+", out, t)
    return out


# ---------------------------------------------------------------------------------------------- decisions
@dataclass(frozen=True)
class Rules:
    """The class (an index into ``classes``) of the first rule whose condition holds, else ``default``."""

    rules: tuple  # ((condition, class index), ...)
    default: int


@dataclass(frozen=True)
class Argmax:
    """The first class of largest score: class ``k``'s score is score number ``scores[k]``."""

    scores: tuple


@dataclass(frozen=True)
class Threshold:
    """Two classes: ``classes[1]`` when score number ``score`` is ``>= t`` (``strict``: ``> t``), else
    ``classes[0]``."""

    score: int
    t: float
    strict: bool = False


@dataclass(frozen=True)
class Decision:
    """What the writers print: the scores (names and expressions) and the prediction.

    ``model`` names the model (the header), ``score_meaning`` says what the scores are, ``notes`` are lines for
    the header (how exact the export is where that needs saying).
    """

    model: str
    classes: tuple
    score_names: tuple
    scores: tuple
    prediction: object
    score_meaning: str
    notes: tuple = ()
