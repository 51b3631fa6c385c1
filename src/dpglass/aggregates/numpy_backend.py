"""In-memory backend of the aggregation seam: the pattern table of 0/1 numpy arrays.

The records are encoded chunk by chunk into one sortable key each (the
bit-packed row followed by the label, 8 bytes for up to 56 features), and
the keys are counted with ``np.unique``.  Working memory is the keys (8 bytes
a record, or ``d/8 + 1``) and their sorted copy: no float or bool copy of the
data is ever made.  The Dask backend runs the same two functions on every
partition and merges the counts, so both give the same table.
"""

from __future__ import annotations

import numpy as np

from dpglass.aggregates.table import PatternTable, count_keys, encode_keys, table_from_keys

__all__ = ["pattern_table", "reduce_block"]


def reduce_block(X, y01, n_features: int):
    """``(keys, counts)`` of one block of records: sorted distinct (row, label) keys and their counts."""
    return count_keys(encode_keys(X, np.asarray(y01, dtype=np.uint8), n_features), owned=True)


def pattern_table(X, y01) -> PatternTable:
    """The :class:`~dpglass.aggregates.PatternTable` of 0/1 ``X`` (n, d) and class codes ``y01`` (n,): 0/1, or 0..K-1."""
    X = np.asarray(X)
    keys, counts = reduce_block(X, y01, X.shape[1])
    return table_from_keys(keys, counts, X.shape[1])
