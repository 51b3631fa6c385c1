"""How a table's columns reach a DPPipeline's model: the route its class declares, and the parameters that say it.

A public function of the model's class and the schema only (docs/privacy.md, "DPPipeline"): which columns are
handed on as numbers or codes never depends on the data.
"""

from __future__ import annotations

import hashlib
import json

from dpglass.schema import Encoding

__all__ = ["column_digests", "model_inputs", "model_route"]


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
    dp-gam) gets each encoded column's raw column."""
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
