"""Export a verified model's decision as one SQL ``SELECT`` or a dependency-free Python module (issue 29).

``to_sql(model, table)`` and ``to_python(model)`` take a fitted model; :func:`export_file` reads a model file
through the library's loader, which verifies it first (an edited file is refused before anything is written).
Exportable: the rule lists (DP and GreedyRL), smooth boosting (stumps and trees), DP-GBDT, dp-gam and DP
logistic regression, alone, inside a DPPipeline (then the export reads the schema's raw columns) or selected by
PrivateGridSearch; the others are refused with the reason (:data:`~dpglass.export.families.NOT_EXPORTABLE`).

Exporting is post-processing of the released model: it reads the model's released state only, never data, so
it costs no privacy budget and the guarantee of the file is the guarantee of what is exported.
"""

from __future__ import annotations

from dpglass.export.families import EXPORTABLE, NOT_EXPORTABLE, decision_of
from dpglass.export.ir import NotExportableError
from dpglass.export.python import decision_python
from dpglass.export.sql import decision_sql

__all__ = ["EXPORTABLE", "NOT_EXPORTABLE", "NotExportableError", "export_file", "to_python", "to_sql"]

FORMATS = ("sql", "python")


def _header(model, decision, inputs, what: str, numbers: str) -> list:
    from dpglass import __version__

    ledger = getattr(model, "privacy_ledger_", None)
    if ledger is None:
        guarantee = "none (a non-private model)"
    else:
        eps, delta = ledger.total()
        guarantee = f"({eps:.6g}, {delta:.3g})-DP, {ledger.guarantee} (the model file's ledger)"
    columns = list(dict.fromkeys(r.column for r in inputs.columns))
    head = [f"{what} of a dpglass {type(model).__name__}" + (f" ({decision.model} on the schema's raw columns)"
                                                           if inputs.schema else "") + f", dpglass {__version__}",
            f"privacy: {guarantee}; exporting is post-processing (no data read, no budget spent)",
            f"classes: {', '.join(map(str, decision.classes))}",
            f"reads columns: {', '.join(columns)}",
            f"scores: {', '.join(decision.score_names)} = {decision.score_meaning}",
            f"numbers are exact ({numbers}); sums in the model's own order; ties as predict breaks them"]
    return head + [f"note: {n}" for n in decision.notes]


def to_sql(model, table: str = "data") -> str:
    """One SQL ``SELECT`` over ``table`` (the model's columns): its columns, the scores and ``prediction``."""
    decision, inputs = decision_of(model)
    header = _header(model, decision, inputs, "SQL", "a double is written as it is when that decimal is the "
                     "double itself, else as an exact integer scaled by powers of two, its repr in a comment") + [
        "rows predict would refuse (a value off the model's inputs) get NULL scores and prediction",
        ("store numbers as numbers (SQLite casts a non-numeric text to 0), categories as text or integers, and "
         "missing values as NULL (PostgreSQL's NaN is a number above all others)"),
        "scores, not probabilities: exp() is not standard SQL (predict_proba is their softmax / logistic)"]
    return decision_sql(decision, inputs, str(table), header)


def to_python(model) -> str:
    """The source of a Python module (standard library only) with ``predict(row)`` and ``score(row)``."""
    decision, inputs = decision_of(model)
    header = _header(model, decision, inputs, "Python export", "the repr of each double") + [
        "", "predict(row) -> label; score(row) -> tuple named by SCORES; row: a mapping of column names to values",
        "(ValueError where the model's predict would refuse the row)."]
    return decision_python(decision, inputs, header)


def export_file(path, to: str, table: str = "data") -> str:
    """The export of a model file, read and verified by the library's loader (an edited file raises
    :class:`~dpglass.exceptions.ModelFileError` before anything is written)."""
    from dpglass.exceptions import ModelFileError
    from dpglass.models._files import open_model_file

    if to not in FORMATS:
        raise NotExportableError(f"Export to {to!r}? The formats are {', '.join(FORMATS)}.")
    data, cls = open_model_file(path)
    try:
        model = cls.from_dict(data)  # verifies the file first (verify_model_dict), as load_model and inspect do
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    return to_sql(model, table) if to == "sql" else to_python(model)
