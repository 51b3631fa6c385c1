"""The papers' published numbers, as data: one CSV table per paper, one row per number.

Each reproduction compares its results with the numbers its paper prints;
they are kept here, not in code: ``p001_rule_lists.csv`` (paper 001, Ly et
al.) and ``p002_boosting.csv`` (paper 002, Asadi et al.).  Columns:

``source``
    Where the paper prints the number (``Table II``, ``Section 5``, ...).
``dataset``, ``method``
    The paper's names (empty when the number is about neither).
``epsilon``
    The privacy budget it belongs to (empty: none, or every epsilon).
``quantity``
    What it is (``accuracy``, ``vulnerability``, ``n_rounds``, ``grid density``, ...).
``value``
    As printed: a number, a number with the paper's mark (``0.507+``:
    truncated above), or numbers separated by spaces (a grid).
``error``
    The ``±`` the paper prints beside it, if any.
``note``
    Anything a reader needs to interpret it.

:func:`load_paper` reads a table; :class:`PaperNumbers` looks numbers up.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["Number", "PaperNumbers", "load_paper"]


def _parse(token: str):
    """A printed number: int if written as one, else float (a trailing ``+``/``-`` mark is dropped)."""
    token = token.rstrip("+-") if len(token) > 1 else token
    try:
        return int(token)
    except ValueError:
        return float(token)


@dataclass(frozen=True)
class Number:
    """One published number (a row of a paper's table)."""

    source: str
    dataset: str
    method: str
    epsilon: float | None
    quantity: str
    text: str
    error: float | None
    note: str

    @property
    def value(self):
        """The number (its mark, e.g. the ``+`` of ``0.507+``, dropped)."""
        return _parse(self.text)

    @property
    def values(self) -> tuple:
        """The numbers of a space-separated list (a grid)."""
        return tuple(_parse(t) for t in self.text.split())


class PaperNumbers:
    """A paper's published numbers, looked up by quantity, dataset, method and epsilon.

    Examples
    --------
    >>> p002 = load_paper("p002_boosting")
    >>> p002.get("accuracy", source="Table 4", dataset="Adult")
    0.82
    >>> p002.by_epsilon("n_rounds", dataset="Mushroom")[5.0]
    29
    """

    def __init__(self, name: str, numbers):
        self.name = name
        self.numbers = tuple(numbers)

    def rows(self, quantity: str | None = None, **where) -> list[Number]:
        """The numbers of ``quantity`` (any if None) whose fields equal ``where`` (``epsilon`` as a float)."""
        out = []
        for n in self.numbers:
            if quantity is not None and n.quantity != quantity:
                continue
            if all(_matches(getattr(n, key), value) for key, value in where.items()):
                out.append(n)
        return out

    def one(self, quantity: str, **where) -> Number:
        """The only number of ``quantity`` matching ``where``; KeyError if there is none or several."""
        found = self.rows(quantity, **where)
        if len(found) != 1:
            raise KeyError(f"{self.name}: {len(found)} numbers of {quantity!r} where {where}.")
        return found[0]

    def get(self, quantity: str, default=math.nan, **where):
        """The value of :meth:`one`, or ``default`` if the paper has no such number."""
        found = self.rows(quantity, **where)
        if not found:
            return default
        return self.one(quantity, **where).value

    def by_epsilon(self, quantity: str, **where) -> dict:
        """``{epsilon: value}`` of ``quantity`` over the paper's epsilons, in the table's order."""
        return {n.epsilon: n.value for n in self.rows(quantity, **where) if n.epsilon is not None}


def _matches(field, wanted) -> bool:
    if wanted is None:
        return field in (None, "")
    if isinstance(field, float) or field is None:
        return field is not None and math.isclose(field, float(wanted), rel_tol=1e-9, abs_tol=0.0)
    return field == wanted


@lru_cache(maxsize=None)
def load_paper(name: str) -> PaperNumbers:
    """The published numbers of ``<name>.csv`` in this package."""
    text = resources.files(__name__).joinpath(f"{name}.csv").read_text(encoding="utf-8")
    numbers = []
    for rec in csv.DictReader(text.splitlines()):
        numbers.append(Number(
            source=rec["source"], dataset=rec["dataset"], method=rec["method"],
            epsilon=float(rec["epsilon"]) if rec["epsilon"] else None, quantity=rec["quantity"],
            text=rec["value"], error=float(rec["error"]) if rec["error"] else None, note=rec["note"],
        ))
    return PaperNumbers(name, numbers)
