"""A model's decision as one standard SQL ``SELECT`` (SQLite and PostgreSQL both run it).

The query returns every column of the table, the scores (``score``, or ``score_0 ..`` / ``proba_0 ..`` in
class order) and ``prediction`` (the class label).  Only ``CASE``, comparisons, ``IN``, ``CAST`` and
``+ - * /`` on ``DOUBLE PRECISION``: no vendor function, no ``exp()`` (SQLite has it only in builds with its
math functions), so a logistic, GBDT or dp-gam model exports its scores (log-odds), not its probabilities, and
its prediction is decided on the scores exactly as ``predict`` decides it.  Every constant is
``CAST(<repr of the double> AS DOUBLE PRECISION)``: PostgreSQL would otherwise read ``0.1`` as an exact
decimal and do decimal arithmetic.  A row that ``predict`` would refuse (a value off the model's inputs: see
:mod:`dpglass.export.inputs`) gets NULL scores and a NULL prediction.
"""

from __future__ import annotations

import math
from fractions import Fraction

from dpglass.export.ir import (
    Above,
    All,
    Argmax,
    Bit,
    Case,
    Const,
    Missing,
    Not,
    NotExportableError,
    Op,
    Rules,
    Threshold,
    Truth,
)

__all__ = ["decision_sql", "quote_identifier"]


def quote_identifier(name: str) -> str:
    """A standard SQL delimited identifier: ``"name"`` with ``"`` doubled."""
    return '"' + str(name).replace('"', '""') + '"'


def _one_line(text: str) -> str:
    """A comment's text on one line (a name holding a line break cannot end the comment)."""
    return " ".join(str(text).splitlines())


def _text(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _double(integer: int) -> str:
    return f"CAST({integer} AS DOUBLE PRECISION)"


def _number(value: float) -> str:
    """The double ``value``, exactly, in any SQL engine.

    A short decimal that is the double itself (``37.5``, ``0.25``, ``3.0``) is written as it is: any parser
    reads it exactly.  Any other double is written as an integer of at most 53 bits (an exact BIGINT) scaled by
    powers of two (each an exact BIGINT, the scaling exact), its ``repr`` in a comment: SQLite before 3.43
    misreads about 3 in 100,000 17-digit decimal literals by one unit in the last place (measured: 13 of
    400,000 with Python's SQLite 3.40.1), which would change a score's bits and could flip a tie.
    """
    value = float(value)
    if not math.isfinite(value):
        raise NotExportableError(f"The model holds the number {value!r}, which SQL cannot write.")
    text = repr(value)
    digits = text.lstrip("-").replace(".", "").lstrip("0")
    if "e" not in text and len(digits) <= 17 and Fraction(text) == Fraction(value):
        return f"CAST({text} AS DOUBLE PRECISION)"
    mantissa, exponent = math.frexp(value)  # value = mantissa * 2**exponent, 0.5 <= |mantissa| < 1
    integer, shift = int(mantissa * 2**53), exponent - 53  # value = integer * 2**shift, |integer| < 2**53
    while shift < 0 and integer % 2 == 0:
        integer, shift = integer // 2, shift + 1
    parts = [_double(integer)]
    while shift != 0:
        step = max(-62, min(62, shift))
        parts.append(("/ " if step < 0 else "* ") + _double(1 << abs(step)))
        shift -= step
    return f"({' '.join(parts)} /* {text} */)"


def _label(value) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    return _text(value)


def _col(name: str) -> str:
    return f"CAST(t.{quote_identifier(name)} AS DOUBLE PRECISION)"


def _interval_above(f, t: float) -> str:
    """A cut-coded column's code above ``t``: the code is the number of listed cut points the value is above (a
    missing value: the extra last code), so code > t iff the value is above cut point k (k = floor(t) + 1, the
    least code above t), or missing where the column has the missing code."""
    cuts, has_missing = f.value
    k = math.floor(t) + 1
    name = f"t.{quote_identifier(f.column)}"
    if k <= 0:
        return "1 = 1"
    parts = [f"{name} IS NOT NULL AND {_col(f.column)} > {_number(cuts[k - 1])}"] if k <= len(cuts) else []
    if has_missing and k <= len(cuts) + 1:
        parts.append(f"{name} IS NULL")
    return " OR ".join(f"({p})" for p in parts) if parts else "1 = 0"


def _key(name: str) -> str:
    return f"CAST(t.{quote_identifier(name)} AS VARCHAR)"


class _Writer:
    def __init__(self, inputs):
        self.inputs = inputs

    def feature_true(self, j: int) -> str:
        f = self.inputs.features[j]
        if f.kind == "bit":  # checked 0/1 (or missing, where declared: tested first) by the row's validity
            return f"{_col(f.column)} = 1"
        # a schema indicator is false, never NULL, on a missing value (so that NOT of it holds); where the column
        # may not be missing, the row's validity has checked it is not
        present = f"t.{quote_identifier(f.column)} IS NOT NULL AND " if f.missing_ok else ""
        if f.kind == "true":
            return f"{present}{_col(f.column)} = 1"
        if f.kind == "above":
            return f"{present}{_col(f.column)} > {_number(f.value)}"
        if f.kind == "is":
            return f"{present}{_key(f.column)} = {_text(f.value)}"
        raise NotExportableError(f"Feature {j} ({f.column!r}) is a {f.kind} feature, not a 0/1 one.")

    def above(self, j: int, t: float) -> str:
        """Feature j > t: a number or code of the model's own columns, a numeric column clipped to the schema's
        bounds (missing: the lower bound), a categorical column's index (missing or unlisted: the last)."""
        f = self.inputs.features[j]
        if f.kind in ("number", "code"):
            return f"{_col(f.column)} > {_number(t)}"
        if f.kind == "clipped":
            lo, hi = f.value
            if t < lo or t >= hi:  # a missing value kept missing is above nothing (tested first where it counts)
                return ((f"t.{quote_identifier(f.column)} IS NOT NULL" if f.missing_ok else "1 = 1") if t < lo
                        else "1 = 0")
            return f"t.{quote_identifier(f.column)} IS NOT NULL AND {_col(f.column)} > {_number(t)}"
        if f.kind == "interval":
            return _interval_above(f, t)
        if f.kind == "index":
            keys = [k for i, k in enumerate(f.value) if i > t]
            parts = [f"{_key(f.column)} IN ({', '.join(_text(k) for k in keys)})"] if keys else []
            if len(f.value) > t:  # the extra code: missing or unlisted (only where the schema allows them)
                parts += [f"t.{quote_identifier(f.column)} IS NULL",
                          f"{_key(f.column)} NOT IN ({', '.join(_text(k) for k in f.value)})"]
            return " OR ".join(parts) if parts else "1 = 0"
        raise NotExportableError(f"A threshold on feature {j} ({f.column!r}), a {f.kind} feature.")

    def cond(self, c) -> str:
        if isinstance(c, Truth):
            return "1 = 1" if c.value else "1 = 0"
        if isinstance(c, Bit):
            return self.feature_true(c.j)
        if isinstance(c, Above):
            return self.above(c.j, float(c.t))
        if isinstance(c, Missing):  # a model's own column declared missing (the encoding never hands one on)
            f = self.inputs.features[c.j]
            return f"t.{quote_identifier(f.column)} IS NULL" if f.missing_ok else "1 = 0"
        if isinstance(c, Not):
            if isinstance(c.arg, Bit) and self.inputs.features[c.arg.j].kind == "bit":
                return f"{_col(self.inputs.features[c.arg.j].column)} = 0"
            return f"NOT ({self.cond(c.arg)})"
        if isinstance(c, All):
            return " AND ".join(f"({self.cond(a)})" for a in c.args)
        raise TypeError(c)

    def num(self, e, indent: str) -> str:
        if isinstance(e, Const):
            return _number(e.value)
        if isinstance(e, Case):  # a chain of choices as one CASE (first match): no nesting to overflow a parser
            inner = indent + "  "
            whens = []
            while isinstance(e, Case):
                whens.append(f"WHEN {self.cond(e.cond)} THEN {self.num(e.then, inner)}")
                e = e.other
            return "CASE " + f"\n{inner}".join(whens) + f"\n{inner}ELSE {self.num(e, inner)} END"
        if isinstance(e, Op) and e.op == "+":  # a left-to-right sum, flat: a + b + c is ((a + b) + c) in SQL
            terms = []
            while isinstance(e, Op) and e.op == "+":
                terms.append(e.right)
                e = e.left
            return "(" + f"\n{indent}+ ".join(self.num(t, indent) for t in [e, *reversed(terms)]) + ")"
        if isinstance(e, Op):
            return f"({self.num(e.left, indent)}\n{indent}{e.op} {self.num(e.right, indent)})"
        raise TypeError(e)

    def valid(self) -> str | None:
        """The rows ``predict`` accepts (None: every row)."""
        parts = []
        for r in self.inputs.columns:
            c, raw = _col(r.column), f"t.{quote_identifier(r.column)}"
            if r.kind in ("bit", "code"):
                values = ", ".join(str(v) for v in range(r.size if r.kind == "code" else 2))
                parts.append(f"({c} IN ({values}) OR {c} IS NULL)" if r.missing_ok else f"{c} IN ({values})")
            elif r.kind == "number":
                if not r.missing_ok:
                    parts.append(f"{raw} IS NOT NULL")
            elif r.kind == "numeric":
                checks = ([] if r.missing_ok else [f"{raw} IS NOT NULL"]) + (
                    [f"{c} = CAST({c} AS INTEGER)"] if r.integer else [])
                if checks and r.missing_ok:
                    checks = [f"({c} IS NULL OR {' AND '.join(checks)})"]
                parts += checks
            elif r.kind == "categorical" and not r.missing_ok:
                parts.append(f"{_key(r.column)} IN ({', '.join(_text(k) for k in r.categories)})")
            elif r.kind == "binary":
                parts.append(f"({c} IN (0, 1){f' OR {c} IS NULL' if r.missing_ok else ''})")
        return " AND ".join(parts) if parts else None


def _prediction(decision, w: _Writer, scores: list) -> str:
    labels = [_label(c) for c in decision.classes]
    p = decision.prediction
    if isinstance(p, Rules):
        if not p.rules:  # the default rule alone
            return labels[p.default]
        whens = [f"  WHEN {w.cond(c)} THEN {labels[k]}" for c, k in p.rules]
        return "CASE\n" + "\n".join(whens) + f"\n  ELSE {labels[p.default]} END"
    if isinstance(p, Threshold):
        return f"CASE WHEN {scores[p.score]} {'>' if p.strict else '>='} {_number(p.t)} THEN {labels[1]} " \
               f"ELSE {labels[0]} END"
    if isinstance(p, Argmax):  # class k when it is >= every later class (every earlier one lost to a later one)
        idx = list(p.scores)
        whens = [f"  WHEN {' AND '.join(f'{scores[idx[k]]} >= {scores[idx[m]]}' for m in range(k + 1, len(idx)))}"
                 f" THEN {labels[k]}" for k in range(len(idx) - 1)]
        return "CASE\n" + "\n".join(whens) + f"\n  ELSE {labels[-1]} END"
    raise TypeError(p)


def decision_sql(decision, inputs, table: str, header: list) -> str:
    """The ``SELECT`` over ``table`` (a dotted name is ``schema.table``): its columns, the scores, the prediction
    (NULL where ``predict`` refuses)."""
    w = _Writer(inputs)
    valid = w.valid()
    cols = []
    for name, expr in zip(decision.score_names, decision.scores):
        body = w.num(expr, "      ")
        cols.append(f"  {body if valid is None else f'CASE WHEN {valid} THEN {body} END'} AS {quote_identifier(name)}")
    names = [f"s.{quote_identifier(n)}" for n in decision.score_names]
    if isinstance(decision.prediction, Rules):  # read from the row itself (the conditions), inside the subquery
        pred = _prediction(decision, w, names)
        cols.append(f"  {pred if valid is None else f'CASE WHEN {valid} THEN {pred} END'} AS "
                    f"{quote_identifier('prediction')}")
        outer = "s.*"
    else:  # decided on the scores (NULL scores: NULL prediction)
        pred = _prediction(decision, w, names)
        outer = f"s.*,\n  CASE WHEN {names[0]} IS NULL THEN NULL ELSE {pred} END AS {quote_identifier('prediction')}"
    lines = [f"-- {_one_line(h)}" if h else "--" for h in header]
    source = ".".join(quote_identifier(p) for p in str(table).split("."))
    return "\n".join(lines + [f"SELECT {outer}", "FROM (", "SELECT t.*,", ",\n".join(cols),
                              f"FROM {source} AS t", ") AS s;"]) + "\n"
