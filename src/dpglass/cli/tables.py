"""What the CLI does with a practitioner's CSV: read it, build a schema, check the output path.

Shared by the command modules of :mod:`dpglass.cli` (fit, predict, schema), so
that the commands stay short.  Every failure is one of :mod:`dpglass.exceptions`'
typed errors, named in the user's terms (the file, the column, the option) and
saying what to do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpglass.exceptions import DataValidationError, InvalidParameterError

__all__ = ["check_binary_columns", "check_out_path", "inline_schema", "read_csv", "split_target", "prediction_frame"]


def read_csv(path, text_columns=()):
    """The CSV as a DataFrame, or a DataValidationError naming the file.

    ``text_columns`` (a schema's categorical columns) are read as text, value
    by value: left to pandas, one record's "?" would turn a column of numbers
    into text for every record, and so change how the others are encoded.
    """
    import pandas as pd

    if not Path(path).is_file():
        raise DataValidationError(f"{path} does not exist (or is not a file); pass the path of a CSV file.")
    try:
        frame = pd.read_csv(path, dtype={c: str for c in text_columns} or None)
    except (OSError, ValueError) as exc:
        raise DataValidationError(f"Could not read {path} as CSV: {exc}") from exc
    if frame.shape[1] == 0:
        raise DataValidationError(f"{path} has no columns; a model needs a table with a header.")
    # a header and no records is a dataset (n = 0 is a neighbour of n = 1): a private fit with declared
    # classes runs on it, so refusing it would tell the two apart (docs/privacy.md, "Errors and warnings")
    return frame


def split_target(frame, target, path):
    """``(features, labels)``; the labels must be present and not missing."""
    if target not in frame.columns:
        raise DataValidationError(
            f"{path} has no column {target!r}; its columns are: {', '.join(map(str, frame.columns))}."
        )
    y = frame[target]
    if y.isna().any():
        raise DataValidationError(
            f"The target column {target!r} of {path} has missing labels; drop or label those records first."
        )
    return frame.drop(columns=[target]), canonical_labels(y.to_numpy())


def canonical_labels(y: np.ndarray) -> np.ndarray:
    """Labels as the file means them, whatever one record's spelling: pandas reads a column of whole numbers
    as float when one record writes ``1.0``, which would change every label (and the declared label set)
    through one record.  Whole-number floats become int64; other labels are kept.

    >>> canonical_labels(np.array([0.0, 1.0, 1.0])).dtype.kind, canonical_labels(np.array([0.5, 1.0])).dtype.kind
    ('i', 'f')
    """
    if y.dtype.kind == "f" and np.isfinite(y).all() and (y == np.round(y)).all():
        return y.astype(np.int64)
    return y


def check_binary_columns(X, path, target) -> None:
    """Without a schema a CSV must hold 0/1 feature columns: else say how to describe it on the command line.

    (The library's own message names ``dpglass.datasets.Binarizer``, which a
    command-line user cannot call.)  Names the first other column; no count.
    """
    import pandas as pd

    for name in X.columns:
        values = pd.to_numeric(X[name], errors="coerce")
        if values.isin([0, 1]).all():
            continue
        what = "missing values" if X[name].isna().any() else "values other than 0 and 1"
        raise DataValidationError(
            f"Column {name!r} of {path} holds {what}, and no schema says how to read it. Describe the raw "
            f"columns with public bounds and categories: `dpglass schema --data {path} --target {target} --out "
            f"schema.json` writes a template to fill in, then `dpglass fit --data {path} --target {target} "
            "--schema schema.json`; or give them inline (--bounds NAME=LO:HI, --categorical NAME=A,B,..., "
            "--binary NAME, --drop NAME)."
        )


def _pairs(items, option, sep="="):
    out = {}
    for item in items:
        name, ok, value = item.partition(sep)
        if not ok or not name:
            raise InvalidParameterError(f"{option} takes NAME{sep}VALUE; got {item!r}.")
        out[name] = value
    return out


def inline_schema(frame, target, *, bounds=(), categorical=(), binary=(), drop=(), quantiles=()):
    """A Schema from ``--bounds age=17:90 --categorical sex=F,M --binary smoker --drop id``.

    Every column of the file but the target must be named by one option:
    nothing is dropped or guessed silently.
    """
    from dpglass.schema import Schema
    from dpglass.schema import binary as binary_col
    from dpglass.schema import categorical as cat_col
    from dpglass.schema import ignore, numeric

    cols = {}
    for name, text in _pairs(bounds, "--bounds").items():
        lo, ok, hi = text.partition(":")
        try:
            cols[name] = numeric(name, float(lo), float(hi),
                                 thresholds="dp-quantiles" if name in quantiles else "grid")
        except ValueError:
            raise InvalidParameterError(f"--bounds {name}={text}: give LO:HI, two numbers (e.g. age=17:90).") from None
    for name, text in _pairs(categorical, "--categorical").items():
        cols[name] = cat_col(name, [v for v in text.split(",") if v])
    for name in binary:
        cols[name] = binary_col(name)
    for name in drop:
        cols[name] = ignore(name)
    unbounded = [n for n in quantiles if n not in cols]
    if unbounded:
        raise InvalidParameterError(
            f"--dp-quantiles {unbounded[0]} needs the column's public bounds too: add --bounds {unbounded[0]}=LO:HI "
            "(the quantiles are drawn on a grid inside them)."
        )
    unknown = [n for n in cols if n not in frame.columns]
    if unknown:
        raise DataValidationError(f"The options name column(s) {unknown!r} that the file does not have.")
    missing = [str(c) for c in frame.columns if c not in cols and c != target]
    if missing:
        raise DataValidationError(
            f"Column(s) {missing!r} are not described: give each one --bounds NAME=LO:HI (numeric), "
            "--categorical NAME=A,B,... (categories), --binary NAME or --drop NAME, or pass --schema FILE "
            "(`dpglass schema --data FILE.csv` writes a template)."
        )
    return Schema([cols[str(c)] for c in frame.columns if c != target], target=target)


def check_out_path(path) -> None:
    """Refuse an output path whose folder does not exist, before any training."""
    if path is None:
        return
    folder = Path(path).expanduser().resolve().parent
    if not folder.is_dir():
        raise InvalidParameterError(
            f"--out {path}: the folder {folder} does not exist. Create it first (nothing was trained)."
        )


def prediction_frame(model, frame, *, target=None, id_column=None):
    """The columns a saved model reads, matched by name in any order; the id column (or None)."""
    ids = None
    if id_column is not None:
        if id_column not in frame.columns:
            raise DataValidationError(f"--id {id_column!r} is not a column of the file.")
        ids = frame[id_column]
    schema = getattr(getattr(model, "encoding_", None), "schema", None)
    target = target or (schema.target if schema is not None else None)
    drop = [c for c in (target, id_column) if c is not None and c in frame.columns]
    frame = frame.drop(columns=drop)
    if schema is not None:
        known = {c.name for c in schema.columns}
        extra = [str(c) for c in frame.columns if c not in known]
        if extra:
            raise DataValidationError(
                f"Column(s) {extra!r} are not in the model's schema; pass --id or --target for them, "
                "or remove them from the file."
            )
        return frame, ids
    if hasattr(model, "feature_names_in_"):
        names = [str(n) for n in model.feature_names_in_]
        missing = [n for n in names if n not in frame.columns]
        if missing:
            raise DataValidationError(f"The file lacks the model's column(s) {missing!r}.")
        extra = [str(c) for c in frame.columns if c not in names]
        if extra:
            raise DataValidationError(
                f"Column(s) {extra!r} are not model features; pass --id or --target for them, or remove them."
            )
        return frame[names], ids
    return np.asarray(frame), ids


def categorical_columns(schema) -> list:
    """The names of a schema's categorical columns (read as text from CSV files)."""
    return [] if schema is None else [c.name for c in schema.columns if c.kind == "categorical"]
