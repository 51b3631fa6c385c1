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

import functools

import numpy as np

from dpglass.aggregates.dask_faults import gather_statistics
from dpglass.aggregates.parts import DistributedTable, TableParts
from dpglass.aggregates.table import hash_buckets, merge_counts, table_from_keys

__all__ = ["FAN_IN", "MAX_KEPT_PARTS", "N_BUCKETS", "kept_parts", "part_workers", "split_buckets"]

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


#: The most parts a kept table is cut into (the key hash is a byte: a count above 255 would not fit it).
MAX_KEPT_PARTS = 128


def kept_parts(client) -> int:
    """Parts a kept table is cut into: two per thread of the cluster's workers (two a worker of one thread), from 2
    to :data:`MAX_KEPT_PARTS`.

    Each statistic a learner asks is one task a part, so the parts are as few as keep every thread busy: two a
    thread, so that a thread whose other part is late (its worker slower, or a part recomputed) still has work.
    The count never changes the model: every statistic is an exact sum, in any cut (tested with two counts).
    """
    threads = sum(int(t) for t in client.nthreads().values()) or 1
    return int(min(MAX_KEPT_PARTS, max(2, 2 * threads)))


def part_workers(client, n_parts: int) -> list:
    """The worker each of ``n_parts`` kept parts is placed on: round robin over the workers, each taking two parts
    per thread in turn, so that every worker holds its share (left to the scheduler, the merges follow the
    partitions' reductions and may all land on the worker that read the most files)."""
    threads = client.nthreads()
    slots = [w for r in range(2 * max(threads.values(), default=1)) for w in sorted(threads) if 2 * threads[w] > r]
    return [slots[i % len(slots)] for i in range(n_parts)] if slots else [None] * n_parts


def _bucket_roots(client, futures, retries: int, split=split_buckets, n_buckets: int = N_BUCKETS,
                  workers=None) -> list:
    """The futures of the ``n_buckets`` merged parts (sorted keys, counts), each merged by its own tree: key
    ranges (``split_buckets``), or parts by a hash of the key (``hash_buckets``); bucket ``b``'s merges on
    ``workers[b]`` if given (a preference: another worker runs them if that one is gone)."""
    import operator

    anywhere = functools.partial(_submit_on, client, retries, None)
    cut = [anywhere(split, f, n_buckets) for f in futures]
    return [_merge_tree([anywhere(operator.getitem, s, b) for s in cut],
                        anywhere if workers is None else functools.partial(_submit_on, client, retries, workers[b]))
            for b in range(n_buckets)]


def _submit_on(client, retries: int, worker, fn, *args):
    where = {} if worker is None else {"workers": [worker], "allow_other_workers": True}
    return client.submit(fn, *args, retries=retries, pure=True, **where)


def _bucket_table(pair, n_features: int):
    return table_from_keys(pair[0], pair[1], n_features)


def _kept_table(client, futures, retries: int, n_features: int, classes, columns) -> DistributedTable:
    """The merged table as pattern tables persisted on the workers (never gathered), cut by a hash of the key
    into :func:`kept_parts` parts (balanced whatever the rows' skew; each part sorted by key), placed round robin
    over the workers (:func:`part_workers`)."""
    n_parts = kept_parts(client)
    workers = part_workers(client, n_parts)
    roots = _bucket_roots(client, futures, retries, hash_buckets, n_parts, workers)
    parts = [_submit_on(client, retries, w, _bucket_table, r, n_features) for r, w in zip(roots, workers)]
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
