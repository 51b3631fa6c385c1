"""The worker-side statistics seam: a table's parts stay where they are, and a learner asks them for sums.

A learner that reads its table only through *statistics* -- functions of the
entries and of the public model released so far, summed over the entries --
never needs the table itself.  :class:`TableParts` holds the table as parts:

* in memory, one part: the local :class:`~dpglass.aggregates.PatternTable`;
* on a ``distributed`` cluster, the parts that the Dask backend merged
  (:func:`dpglass.aggregates.dask_backend.pattern_table` with ``keep=True``:
  cut by a hash of the key, two parts a worker or more, so that skewed rows
  still give balanced parts), persisted on the workers as futures and never
  gathered.

``parts.map(fn, *args)`` builds a per-part state (``fn(part, *args)``, e.g.
a learner's statistics object) where each part lives; ``parts.sum(fn,
*args)`` runs ``fn(state, *args)`` on every part and adds the results on the
client.  The results must be **exact**: int64 arrays or float64 arrays of
integers below 2**53 (counts), so that the sum does not depend on how the
entries are cut into parts, and the Dask model equals the in-memory one bit
for bit.  With one part (in memory) the result is returned as computed: the
same function, the same floats.

Faults: a part is a future computed from the files (read, reduce, merge by
key range); a worker that dies loses its parts, and the scheduler recomputes
them from their lineage before the statistic runs again.  A per-part state
may cache work between steps (a learner's working copy), but every result is
a function of the part and of the arguments alone, so a recomputed state
returns the same sums.  What moves to the client per step is the statistic
(a few arrays the size of the model's candidates), never entries.
"""

from __future__ import annotations

import numpy as np

from dpglass.aggregates.numpy_backend import pattern_table
from dpglass.aggregates.table import PatternTable

__all__ = ["DistributedTable", "TableParts", "class_counts", "exact_sum", "table_parts"]


def exact_sum(results: list):
    """The element-wise sum of per-part results (arrays, numbers or tuples of them), in part order.

    One result is returned as is.  Float arrays must hold integers (counts):
    their sum is then exact below 2**53 in any order.
    """
    if len(results) == 1:
        return results[0]
    first = results[0]
    if isinstance(first, tuple):
        return tuple(exact_sum([r[i] for r in results]) for i in range(len(first)))
    if isinstance(first, np.ndarray):
        out = first
        for r in results[1:]:
            out = out + r  # promoted: an empty part's sums may come back as int64
        return out
    return sum(results[1:], first)


def _same(args):
    return args


def _call(fn, part, args):
    return fn(part, *args)


class TableParts:
    """A table's parts: local objects, or futures on a ``distributed`` client (see the module)."""

    def __init__(self, parts: list, client=None, retries: int = 2, gather=None):
        self.parts = list(parts)
        self.client = client
        self.retries = int(retries)
        self._gather = gather  # the Dask backend's: lost workers become DistributedFitError

    @classmethod
    def local(cls, table) -> "TableParts":
        return cls([table])

    @property
    def distributed(self) -> bool:
        return self.client is not None

    def map(self, fn, *args) -> "TableParts":
        """The parts' states ``fn(part, *args)``, each computed (and kept) where its part is."""
        if self.client is None:
            return TableParts([fn(p, *args) for p in self.parts])
        # the arguments travel once (a task, not scattered data: a task is recomputed if its worker dies)
        shared = self.client.submit(_same, args, pure=True, retries=self.retries)
        futures = [self.client.submit(_call, fn, p, shared, pure=True, retries=self.retries) for p in self.parts]
        return TableParts(futures, self.client, self.retries, self._gather)

    def results(self, fn, *args) -> list:
        """``[fn(part, *args) for each part]``, brought to the client (small results only)."""
        if self.client is None:
            return [fn(p, *args) for p in self.parts]
        futures = [self.client.submit(_call, fn, p, args, pure=True, retries=self.retries) for p in self.parts]
        return self.gather(futures)

    def gather(self, futures) -> list:
        """Futures of tasks built on these parts (e.g. the teachers' groups), brought to the client; a lost worker
        becomes the Dask backend's DistributedFitError, as for :meth:`results`."""
        return self._gather(self.client, futures)

    def sum(self, fn, *args):
        """``fn(part, *args)`` summed over the parts (:func:`exact_sum`)."""
        return exact_sum(self.results(fn, *args))


def _n_records(table) -> int:
    return int(table.n_records)


def class_counts(part, n_classes: int) -> np.ndarray:
    """The records of each class code ``0 .. n_classes - 1`` in a table or a part of one (anything with ``labels``
    and ``counts``), as exact int64 sums: a statistic for :meth:`TableParts.sum`."""
    labels, counts = np.asarray(part.labels), np.asarray(part.counts, dtype=np.int64)
    return np.array([int(counts[labels == k].sum()) for k in range(int(n_classes))], dtype=np.int64)


def _whole(table):
    return table.packed, table.labels, table.counts


class DistributedTable:
    """A pattern table whose entries stay on the cluster: its public shape and its :class:`TableParts`.

    Passed to a learner that asks for statistics (``_worker_stats``); its
    ``classes``, ``columns`` and ``n_features`` are the table's.
    :meth:`gather` brings the entries to the client (the same table as the
    in-memory path, sorted by key again).
    """

    def __init__(self, parts: TableParts, n_features: int, *, classes=None, columns=None):
        self.parts = parts
        self.n_features = int(n_features)
        self.classes = None if classes is None else list(classes)
        self.columns = None if columns is None else list(columns)

    @property
    def n_records(self) -> int:
        return int(self.parts.sum(_n_records))

    @property
    def shape(self) -> tuple[int, int]:
        return self.n_records, self.n_features

    def gather(self) -> PatternTable:
        pieces = self.parts.results(_whole)
        B = (self.n_features + 7) // 8
        packed = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros((0, B), np.uint8)
        labels = np.concatenate([p[1] for p in pieces]) if pieces else np.zeros(0, np.uint8)
        counts = np.concatenate([p[2] for p in pieces]) if pieces else np.zeros(0, np.int64)
        order = np.lexsort([labels] + [packed[:, j] for j in reversed(range(B))])  # by row bytes, then label
        return PatternTable(packed[order], labels[order], counts[order], self.n_features, classes=self.classes,
                            columns=self.columns)


def table_parts(X, y=None) -> TableParts:
    """The parts of the training data ``X``: a :class:`DistributedTable`'s, else the one local pattern table
    (of a :class:`~dpglass.aggregates.PatternTable` or of 0/1 arrays ``X``, class codes ``y``)."""
    if isinstance(X, DistributedTable):
        return X.parts
    if isinstance(X, PatternTable):
        return TableParts.local(X)
    return TableParts.local(pattern_table(np.asarray(X), y))
