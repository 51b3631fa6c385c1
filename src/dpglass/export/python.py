"""A model's decision as the source of one dependency-free Python module: ``predict(row)`` and ``score(row)``.

``row`` is a mapping from column names to values (a dict, a CSV reader's row, a pandas row).  ``score(row)``
returns the scores as a tuple, named by ``SCORES`` (the SQL export's score columns), ``predict(row)`` the class
label; a value that the model's ``predict`` refuses raises ``ValueError`` naming the column.  Only the standard
library (``math``, ``numbers``) is imported.  Numbers are written with ``repr`` and sums in the model's order, so
Python's float arithmetic gives the model's own bits.
"""

from __future__ import annotations

import math

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

__all__ = ["decision_python"]

#: The helpers the generated module carries: reading a value as the model's ``predict`` reads it (a copy of
#: the schema's rules in the generated text, so that the module needs nothing but the standard library).
_RUNTIME = '''
def _sum(terms):
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def _missing(v):
    return v is None or (isinstance(v, float) and v != v)


def _value(row, name):
    """The row's value, a numpy scalar as its Python value."""
    v = row[name]
    return v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v


def _bit(row, name, missing_ok=False):
    v = _value(row, name)
    if missing_ok and _missing(v):
        return None
    if isinstance(v, bool) or (isinstance(v, numbers.Real) and v in (0, 1)):
        return int(v)
    raise ValueError(f"column {name!r} must be 0 or 1, not {v!r}")


def _code(row, name, size, missing_ok=False):
    v = _value(row, name)
    if missing_ok and _missing(v):
        return None
    if not isinstance(v, bool) and isinstance(v, numbers.Real) and v in range(size):
        return float(v)
    raise ValueError(f"column {name!r} must hold a category code 0..{size - 1}, not {v!r}")


def _number(row, name, missing_ok=False, integer=False):
    v = _value(row, name)
    if _missing(v):
        if missing_ok:
            return None
        raise ValueError(f"column {name!r} has a missing value, which the model's schema does not allow")
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"column {name!r} must be a number, not {v!r}") from None
    if x != x:
        if missing_ok:
            return None
        raise ValueError(f"column {name!r} has a missing value, which the model's schema does not allow")
    if integer and math.isfinite(x) and x != math.floor(x):
        raise ValueError(f"column {name!r} is declared integer but holds {v!r}")
    return x


def _category(row, name, categories, missing_ok=False):
    v = _value(row, name)
    if _missing(v):
        key = None
    elif isinstance(v, bool):
        key = str(v)
    elif isinstance(v, numbers.Integral):
        key = str(int(v))
    elif isinstance(v, numbers.Real):
        f = float(v)
        key = str(int(f)) if f.is_integer() else repr(f)
    else:
        key = str(v)
    if key not in categories and not missing_ok:
        raise ValueError(f"column {name!r} holds {v!r}, outside its categories {list(categories)!r}")
    return key


def _binary(row, name, missing_ok=False):
    v = _value(row, name)
    if _missing(v):
        if missing_ok:
            return 0
        raise ValueError(f"column {name!r} has a missing value, which the model's schema does not allow")
    if isinstance(v, bool) or (isinstance(v, numbers.Real) and v in (0, 1)):
        return int(v)
    raise ValueError(f"column {name!r} is binary: 0 or 1, not {v!r}")
'''


def _reads(inputs) -> list:
    """The body of ``_features(row)``: the model's features, read and checked column by column."""
    lines, out = [], []
    if not inputs.schema:
        for f in inputs.features:
            if f.kind == "code":
                out.append(f"_code(row, {f.column!r}, {f.value!r}, {f.missing_ok!r})")
            else:
                out.append(f"_{'bit' if f.kind == 'bit' else 'number'}(row, {f.column!r}, {f.missing_ok!r})")
        return ["    return ["] + [f"        {x}," for x in out] + ["    ]"]
    for i, r in enumerate(inputs.columns):
        v = f"v{i}"
        mine = [f for f in inputs.features if f.column == r.column]
        if r.kind == "numeric":
            lines.append(f"    {v} = _number(row, {r.column!r}, {r.missing_ok!r}, {r.integer!r})")
            for f in mine:  # the 0/1 route's indicators, or the numbers route's clipped value (missing: low)
                lo, hi = f.value if f.kind == "clipped" else (None, None)
                missing = None if f.missing_ok else lo  # kept missing (the model's missing bin) or the low bound
                if f.kind == "interval":  # the cut-codes route: how many listed cut points it is above
                    cuts = f.value[0]
                    out.append(f"{float(len(cuts) + 1)!r} if {v} is None else float(sum({v} > c for c in {cuts!r}))")
                    continue
                out.append(f"int({v} is not None and {v} > {f.value!r})" if f.kind == "above" else
                           f"{missing!r} if {v} is None else min(max({v}, {lo!r}), {hi!r})")
        elif r.kind == "categorical":
            lines.append(f"    {v} = _category(row, {r.column!r}, {tuple(r.categories)!r}, {r.missing_ok!r})")
            for f in mine:  # the indicators, or the codes route's index (missing or unlisted: the last)
                out.append(f"int({v} == {f.value!r})" if f.kind == "is" else
                           f"float({tuple(f.value)!r}.index({v})) if {v} in {tuple(f.value)!r} else "
                           f"{float(len(f.value))!r}")
        else:
            lines.append(f"    {v} = _binary(row, {r.column!r}, {r.missing_ok!r})")
            out.append(v)
    return lines + ["    return ["] + [f"        {x}," for x in out] + ["    ]"]


class _Writer:
    def __init__(self, inputs):
        self.inputs = inputs

    def cond(self, c) -> str:
        if isinstance(c, Truth):
            return repr(bool(c.value))
        kind = self.inputs.features[c.j].kind if isinstance(c, (Bit, Above, Missing)) else None
        if isinstance(c, Bit):
            if kind not in ("bit", "above", "is", "true"):
                raise NotExportableError(f"Feature {c.j} is a {kind} feature, not a 0/1 one.")
            return f"x[{c.j}] == 1"
        if isinstance(c, Above):
            if kind not in ("number", "code", "clipped", "index", "interval"):
                raise NotExportableError(f"A threshold on feature {c.j}, a {kind} feature.")
            if self.inputs.features[c.j].missing_ok:  # a missing value is above nothing
                return f"(x[{c.j}] is not None and x[{c.j}] > {float(c.t)!r})"
            return f"x[{c.j}] > {float(c.t)!r}"
        if isinstance(c, Missing):
            return f"x[{c.j}] is None"
        if isinstance(c, Not):
            return f"not ({self.cond(c.arg)})"
        if isinstance(c, All):
            return " and ".join(f"({self.cond(a)})" for a in c.args)
        raise TypeError(c)

    def num(self, e) -> str:
        if isinstance(e, Const):
            return _float(e.value)
        if isinstance(e, Case):  # a chain of choices unnested: a if c else b if d else e
            parts = []
            while isinstance(e, Case):
                parts.append(f"{self.num(e.then)} if {self.cond(e.cond)} else")
                e = e.other
            return "(" + " ".join(parts) + f" {self.num(e)})"
        if isinstance(e, Op) and e.op == "+":  # a left-to-right sum: a flat list, however long
            terms = []
            while isinstance(e, Op) and e.op == "+":
                terms.append(e.right)
                e = e.left
            return f"_sum([{', '.join(self.num(t) for t in [e, *reversed(terms)])}])"
        if isinstance(e, Op):
            return f"({self.num(e.left)} {e.op} {self.num(e.right)})"
        raise TypeError(e)


def _float(value: float) -> str:
    value = float(value)
    if not math.isfinite(value):
        raise NotExportableError(f"The model holds the number {value!r}, which this export cannot write.")
    return repr(value)


def _predict_body(decision, w: _Writer) -> list:
    p = decision.prediction
    if isinstance(p, Rules):
        lines = ["    x = _features(row)"]
        lines += [f"    if {w.cond(c)}:\n        return CLASSES[{k}]" for c, k in p.rules]
        return lines + [f"    return CLASSES[{p.default}]"]
    lines = ["    s = score(row)"]
    if isinstance(p, Threshold):
        return lines + [(f"    return CLASSES[1] if s[{p.score}] {'>' if p.strict else '>='} {_float(p.t)} "
                         "else CLASSES[0]")]
    if isinstance(p, Argmax):  # the first class of largest score
        return lines + [f"    scores = [{', '.join(f's[{i}]' for i in p.scores)}]",
                        "    best = 0",
                        "    for k in range(1, len(scores)):",
                        "        if scores[k] > scores[best]:",
                        "            best = k",
                        "    return CLASSES[best]"]
    raise TypeError(p)


def decision_python(decision, inputs, header: list) -> str:
    """The module's source: ``CLASSES``, ``SCORES``, ``COLUMNS``, ``score(row)``, ``predict(row)``."""
    w = _Writer(inputs)
    # the docstring's text escaped: a name holding quotes or backslashes stays inside it
    doc = "\n".join(" ".join(str(h).splitlines()).replace("\\", "\\\\").replace('"', '\\"') for h in header)
    columns = tuple(dict.fromkeys(r.column for r in inputs.columns))
    src = [f'"""{doc}\n"""', "", "import math", "import numbers", "",
           f"CLASSES = {list(decision.classes)!r}", f"SCORES = {tuple(decision.score_names)!r}",
           f"COLUMNS = {columns!r}", _RUNTIME, "",
           "def _features(row):",
           "    \"\"\"The model's features, read from the row (ValueError if predict would refuse it).\"\"\""]
    src += _reads(inputs)
    src += ["", "", "def score(row):", f"    \"\"\"{decision.score_meaning}: a tuple, named by SCORES.\"\"\"",
            "    x = _features(row)", "    return ("]
    src += [f"        {w.num(e)}," for e in decision.scores] + ["    )"]
    src += ["", "", "def predict(row):", "    \"\"\"The class label the model predicts for the row.\"\"\""]
    src += _predict_body(decision, w)
    return "\n".join(src) + "\n"
