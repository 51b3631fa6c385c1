"""The Dask backend's merge: the partitions' reductions merged on the cluster, by key range or by hash part.

The reductions are cut into parts of the key space and each part is merged by
its own tree of exact integer sums (fan-in :data:`FAN_IN`), so no worker ever
holds the whole table.  For a learner that gathers its table
(:func:`_merge_by_buckets`) the parts are :data:`N_BUCKETS` key ranges,
brought to the client one at a time in key order; for a learner that asks for
statistics (:func:`_kept_table`) they are :func:`kept_parts` parts cut by a
hash of the key, persisted on the workers and never gathered.  Either way the
merged entries and their counts do not depend on the partitioning nor on the
number of parts.
"""

from __future__ import annotations

import numpy as np

from dpglass.aggregates.dask_faults import gather_statistics
from dpglass.aggregates.parts import DistributedTable, TableParts
from dpglass.aggregates.table import hash_buckets, merge_counts, table_from_keys

__all__ = ["FAN_IN", "N_BUCKETS", "kept_parts", "split_buckets"]

#: Reductions merged per task in the merge tree.
FAN_IN = 8
#: Key ranges merged separately on the cluster (a power of two up to 256).
N_BUCKETS = 16


def _merge_tree(parts, submit):
    while len(parts) > 1:
        parts = [submit(merge_counts, *parts[i : i + FAN_IN]) for i in range(0, len(parts), FAN_IN)]
    return parts[0]


def split_buckets(pair, n_buckets: int = None):
    """A sorted ``(keys, counts)`` cut into ``n_buckets`` key ranges (by the top bits of the first byte)."""
    keys, counts = pair
    n_buckets = n_buckets or N_BUCKETS
    if keys.dtype == np.uint64:
        first = (keys >> np.uint64(56)).astype(np.uint8)  # big-endian keys: the packed row's first byte
    else:
        first = keys.view(np.uint8).reshape(keys.shape[0], -1)[:, 0] if keys.size else np.zeros(0, np.uint8)
    step = 256 // n_buckets
    cuts = np.searchsorted(first, np.arange(1, n_buckets) * step, side="left")
    edges = np.concatenate([[0], cuts, [keys.shape[0]]])
    return [(keys[a:b].copy(), counts[a:b].copy()) for a, b in zip(edges[:-1], edges[1:])]


def kept_parts(client) -> int:
    """Parts a kept table is cut into: at least :data:`N_BUCKETS`, and two a worker (a power of two, <= 256)."""
    workers = len(client.scheduler_info().get("workers", {})) or 1
    return int(min(256, max(N_BUCKETS, 1 << (2 * workers - 1).bit_length())))


def _bucket_roots(client, futures, retries: int, split=split_buckets, n_buckets: int = N_BUCKETS) -> list:
    """The futures of the ``n_buckets`` merged parts (sorted keys, counts), each merged by its own tree: key
    ranges (``split_buckets``), or parts by a hash of the key (``hash_buckets``)."""
    import operator

    submit = lambda fn, *a: client.submit(fn, *a, retries=retries, pure=True)  # noqa: E731
    cut = [submit(split, f, n_buckets) for f in futures]
    return [_merge_tree([submit(operator.getitem, s, b) for s in cut], submit) for b in range(n_buckets)]


def _bucket_table(pair, n_features: int):
    return table_from_keys(pair[0], pair[1], n_features)


def _kept_table(client, futures, retries: int, n_features: int, classes, columns) -> DistributedTable:
    """The merged table as pattern tables persisted on the workers (never gathered), cut by a hash of the key
    into :func:`kept_parts` parts (balanced whatever the rows' skew; each part sorted by key)."""
    roots = _bucket_roots(client, futures, retries, hash_buckets, kept_parts(client))
    parts = [client.submit(_bucket_table, r, n_features, retries=retries, pure=True) for r in roots]
    return DistributedTable(TableParts(parts, client, retries, gather_statistics), n_features, classes=classes,
                            columns=columns)


def _merge_by_buckets(client, futures, retries: int):
    """Merge the partitions' reductions bucket by bucket on the cluster; fill the result on the client.

    The key space is cut into :data:`N_BUCKETS` ranges, each merged by its own
    tree, so no worker holds more than about one bucket of the final table,
    and the client receives the buckets one at a time, in key order, into
    arrays sized in advance: the same sorted keys and counts as one merge.
    """
    roots = _bucket_roots(client, futures, retries)
    sizes = client.gather([client.submit(_size, r, retries=retries, pure=True) for r in roots])
    first = roots[0].result()
    keys = np.empty(sum(sizes), dtype=first[0].dtype)
    counts = np.empty(sum(sizes), dtype=np.int64)
    at = 0
    for b, root in enumerate(roots):
        part_keys, part_counts = first if b == 0 else root.result()
        keys[at : at + sizes[b]], counts[at : at + sizes[b]] = part_keys, part_counts
        at += sizes[b]
        first = part_keys = part_counts = None
        roots[b] = None  # let the cluster free the bucket
    return keys, counts


def _size(pair) -> int:
    return int(pair[0].shape[0])


def _delayed_submit(fn, *args):
    import dask

    return dask.delayed(fn, pure=True)(*args)
