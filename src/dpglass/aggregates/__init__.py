"""The aggregation seam: every learner reads its training data through a :class:`PatternTable`.

DP training in dpglass needs only sums over records: a rule's caught and
caught-positive counts, a literal's weighted error, a leaf's weighted
masses.  Every one of them is a function of the **pattern table**: the
distinct (row, label) pairs of the training data with their record counts.
A learner never sees the records themselves, only this table:

* :class:`~dpglass.models.rule_list.estimator.DPRuleListClassifier` and GreedyRL sum
  it per distinct row (``w0``, ``w1``) and build their Gram counts from it;
* :class:`~dpglass.models.boosting.estimator.SmoothBoostClassifier` reweights records
  every round, but a record's smooth weight depends only on its margin
  ``y * sum_t h_t(x)``, a function of its (row, label): records sharing a
  (row, label) always share their weight, so each round's weighted sums are
  sums over the table's entries weighted by their integer counts;
* :class:`~dpglass.models.logistic.estimator.DPLogisticRegression` sums its loss and
  gradient over the entries, weighted by their counts;
* :class:`~dpglass.models.selection.estimator.PrivateGridSearch` draws its random
  split entry by entry (a Binomial split of each count, the law of per-record
  coins) and hands the parts on as sub-tables (:meth:`PatternTable.with_counts`);
  the teacher ensembles (:mod:`dpglass.models.teachers.workers`) give each record
  its teacher by a keyed hash of public seeds and the record
  (:func:`dpglass.privacy.splits.keyed_parts`), drawn where the entries are;
* :class:`~dpglass.models.pipeline.estimator.DPPipeline` encodes raw columns first (on
  a dask DataFrame: a map over the partitions) and its model builds the table
  of the encoded columns;
* :class:`~dpglass.models.gbdt.estimator.DPGradientBoostingClassifier` reads the
  *binned* pattern table of :mod:`dpglass.models.gbdt.binned` (distinct
  bin-code rows of numeric and 0/1 columns, binned with public edges), built
  from these same keys and merges.

A table that carries its ``classes`` may itself be passed as ``X`` to the
``fit`` of a model with ``_distributed_fit`` (``y`` is then ignored).

The table is built by one of two backends, chosen by the type of ``X``:

``numpy`` (:mod:`dpglass.aggregates.numpy_backend`, the default)
    in memory, from 0/1 arrays, in fixed-size chunks of bit-packed rows
    (no float copy of the data).
``dask`` (:mod:`dpglass.aggregates.dask_backend`, ``pip install dpglass[dask]``)
    from a dask DataFrame and Series: each partition reduces itself to its
    own table, the tables are merged on the cluster (exact integer sums),
    and only the merged table comes back to the client.

Both backends sort the entries the same way (by the bytes of the packed row,
then the label) and count with integers, so the table -- and every float
computed from it on the client -- is the same whatever the partitioning:
with the same ``random_state`` the two paths give the same model bit for
bit.  Noise is drawn by the learners on the client, from the estimator's
generator, after the table is built: never per partition.
"""

from __future__ import annotations

__all__ = ["CHUNK_ROWS", "PackedRows", "PatternTable", "adopt_table", "is_distributed", "pattern_table"]

from dpglass.aggregates.table import (  # noqa: F401  (the package's names: the table and its key arithmetic)
    CHUNK_ROWS, PackedRows, PatternTable, _unpack, adopt_table, count_keys, encode_keys, is_distributed, key_dtype,
    merge_counts, table_from_keys,
)


def pattern_table(X, y, **kwargs) -> PatternTable:
    """The :class:`PatternTable` of 0/1 features ``X`` and 0/1 labels ``y``, by the backend ``X`` calls for.

    A :class:`PatternTable` is returned as is.  Numpy arrays go to
    :func:`dpglass.aggregates.numpy_backend.pattern_table`; dask collections
    to :func:`dpglass.aggregates.dask_backend.pattern_table` (``kwargs`` are
    passed on).
    """
    if isinstance(X, PatternTable):
        return X
    if is_distributed(X):
        from dpglass.aggregates import dask_backend

        return dask_backend.pattern_table(X, y, **kwargs)
    from dpglass.aggregates import numpy_backend

    return numpy_backend.pattern_table(X, y)
