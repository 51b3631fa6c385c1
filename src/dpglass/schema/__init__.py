"""Public schemas for raw tables: what each column is, and how it becomes 0/1 features.

See :mod:`dpglass.schema.columns` (the declaration, JSON/TOML files, the
template) and :mod:`dpglass.schema.encoding` (cut points, categories, the
encoder's privacy cost).  :class:`dpglass.models.DPPipeline` fits a model on
raw columns through a schema with one ledger.
"""

from dpglass.schema.columns import (
    Column,
    Schema,
    binary,
    categorical,
    ignore,
    load_schema,
    numeric,
    schema_template,
)
from dpglass.schema.encoding import ClippingWarning, Encoding, fit_encoding

__all__ = [
    "ClippingWarning",
    "Column",
    "Encoding",
    "Schema",
    "binary",
    "categorical",
    "fit_encoding",
    "ignore",
    "load_schema",
    "numeric",
    "schema_template",
]
