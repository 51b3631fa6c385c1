"""How a table's columns reach a DPPipeline's model: the route its class declares, and the parameters that say it.

A public function of the model's class and the schema only (docs/privacy.md, "DPPipeline"): which columns are
handed on as numbers or codes never depends on the data.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from dpglass.exceptions import DataValidationError
from dpglass.schema import Encoding
from dpglass.schema.encoding import _checked_values as checked_values

__all__ = ["CutCodeEncoding", "column_digests", "cut_coded", "interval_labels", "load_encoding", "model_inputs",
           "model_route", "with_cut_codes"]


def model_route(model_cls) -> dict:
    """How a model class takes a table, as it declares it: ``numbers`` when it takes numeric columns with
    public bounds (a ``bounds`` parameter, one entry per column: ``(lo, hi)``, or None for a 0/1 column:
    dp-gbdt, dp-gam), ``codes`` when it takes categorical columns as integer codes (a ``categories`` parameter,
    one entry per column: ``m`` codes ``0..m-1``, or None: dp-gam), ``missing_bins`` when it gives missing
    numbers a bin of their own (a ``missing`` parameter, one flag per column: dp-gam).  A class may say
    otherwise with the class attributes ``_takes_numeric`` / ``_takes_categories`` / ``_takes_missing``.  A
    function of the class only."""
    names = set(model_cls._get_param_names())
    return {"numbers": bool(getattr(model_cls, "_takes_numeric", "bounds" in names)),
            "codes": bool(getattr(model_cls, "_takes_categories", "categories" in names)),
            "missing_bins": bool(getattr(model_cls, "_takes_missing", "missing" in names))}


def model_inputs(model, encoding: Encoding) -> dict:
    """The parameters the pipeline sets on its model so that it reads the encoded columns: public functions of
    the schema and the model's class.  A model that takes numbers gets ``bounds`` (the schema's bounds of each
    numeric column, None for a 0/1 or code column); one that takes categories gets ``categories`` (each code
    column's number of codes, None elsewhere); one that reads its features in groups (``feature_groups=None``:
    dp-gam) gets each encoded column's raw column.  Read on the cut-codes route where it applies
    (:func:`with_cut_codes`), so that a caller holding the plain route's encoding (PrivateGridSearch's) sets what
    the encoded table holds."""
    encoding = with_cut_codes(encoding)
    params = {}
    if encoding.numbers:
        params["bounds"] = encoding.column_bounds()
    if encoding.codes:
        params["categories"] = encoding.column_categories()
    if encoding.missing_bins:
        params["missing"] = encoding.column_missing()
    if model.get_params().get("feature_groups", False) is None:
        params["feature_groups"] = encoding.source_columns()
    return params


def column_digests(encoding: Encoding, auto: bool = False) -> dict | None:
    """What a pipeline file on the numbers or codes route, or of ``model="auto"`` (any route), records of the
    schema its model read: each feature column's name and a digest of its schema entry (kind, bounds, categories
    in their order, missing rule, ...); None for the other 0/1-route files (written before these routes existed,
    and unchanged), whose model's features name each category already.

    On these routes the model reads a column as one number or one code, so nothing else in the file says
    which category code 1 is, or whether a missing value is read or refused; the file check recomputes the
    digests from the file's schema (:mod:`dpglass.models.pipeline.verify`), so an edit of one of them alone is
    refused, naming the column.  Public: a function of the schema only.  Not a signature: a file edited
    consistently everywhere is another file, which no check can tell from a fitted one."""
    if not (encoding.numbers or encoding.codes or auto):
        return None
    return {col.name: hashlib.sha256(json.dumps(col.to_dict(), sort_keys=True).encode()).hexdigest()[:16]
            for col in encoding.schema.features}


def cut_coded(encoding, col) -> bool:
    """Whether ``encoding`` hands the numeric column ``col`` to its model as the code of its interval between the
    schema's listed cut points: a model that takes numbers and codes (dp-gam), a column listing its cut points
    (``numeric(..., thresholds=[...])``).  A function of the schema and the route only."""
    return (bool(getattr(encoding, "cut_codes", False)) and col.kind == "numeric"
            and isinstance(col.thresholds, tuple))


def lists_cut_points(schema) -> bool:
    """Whether some numeric feature column of ``schema`` lists its cut points."""
    return any(c.kind == "numeric" and isinstance(c.thresholds, tuple) for c in schema.features)


def interval_labels(col) -> list:
    """The intervals of a cut-coded column, code by code: ``<= t1``, ``(t1, t2]``, ..., ``> tk`` (``x > t`` is the
    0/1 route's test), then ``missing`` when the column declares ``missing="none"`` (its own last code)."""
    cuts = [float(t) for t in col.thresholds]
    labels = [f"<= {cuts[0]:.6g}"] + [f"({a:.6g}, {b:.6g}]" for a, b in zip(cuts, cuts[1:])] + [f"> {cuts[-1]:.6g}"]
    return labels + (["missing"] if col.missing == "none" else [])


class CutCodeEncoding(Encoding):
    """The numbers/codes route (dp-gam) where the schema lists a numeric column's cut points: that column is the
    code of its interval, the number of its listed cut points ``t`` with ``x > t`` (``0..k``; a missing value,
    under ``missing="none"``, the extra code ``k + 1``), and the model reads it as a column of codes
    (``categories``).  A per-record map of public cut points fixed before the data: it spends nothing.  The file
    says ``"cut_codes": true`` in its encoding; the cut points are the schema's (covered by its column digests).
    Every other column as :class:`~dpglass.schema.Encoding` hands it."""

    cut_codes = True

    def column_bounds(self) -> list:
        return [None if cut_coded(self, col) else b for col, b in zip(self.schema.features, super().column_bounds())]

    def column_categories(self) -> list:
        return [len(col.thresholds) + 1 + (col.missing == "none") if cut_coded(self, col) else m
                for col, m in zip(self.schema.features, super().column_categories())]

    def column_missing(self) -> list:
        return [False if cut_coded(self, col) else f for col, f in zip(self.schema.features, super().column_missing())]

    def transform(self, frame) -> np.ndarray:
        X = super().transform(frame)  # checks the columns and their values as ever
        for j, col in enumerate(self.schema.features):  # numbers and codes: one encoded column per schema column
            if cut_coded(self, col):
                v = checked_values(frame[col.name], col)
                codes = np.searchsorted(np.asarray(col.thresholds, dtype=np.float64), v, side="left")
                X[:, j] = np.where(np.isnan(v), len(col.thresholds) + 1, codes)
        return X

    def to_dict(self) -> dict:
        return {**super().to_dict(), "cut_codes": True}


def with_cut_codes(encoding: Encoding) -> Encoding:
    """``encoding`` on the cut-codes route when it hands numbers and codes and the schema lists a numeric column's
    cut points; else ``encoding`` itself (every other file unchanged)."""
    if encoding.numbers and encoding.codes and lists_cut_points(encoding.schema):
        return CutCodeEncoding(encoding.schema, encoding.cuts, encoding.numbers, encoding.codes, encoding.missing_bins)
    return encoding


def load_encoding(data: dict) -> Encoding:
    """The encoding a pipeline file holds, on the cut-codes route when it says ``"cut_codes": true``."""
    data = dict(data)
    flag = data.pop("cut_codes", False)
    encoding = Encoding.from_dict(data)
    if flag is False:
        return encoding
    if flag is not True or not (encoding.numbers and encoding.codes and lists_cut_points(encoding.schema)):
        raise DataValidationError(f"The encoding's 'cut_codes' is {flag!r}; it is true only with numbers and codes "
                                  "and a numeric column listing its cut points.")
    return with_cut_codes(encoding)
