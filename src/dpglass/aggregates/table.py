"""The pattern table: distinct (0/1 row, label) pairs of a dataset with their record counts, and the key
arithmetic that builds and merges them.  The core of :mod:`dpglass.aggregates` (its backends build on it)."""

from __future__ import annotations

import numpy as np

__all__ = ["CHUNK_ROWS", "PackedRows", "PatternTable", "adopt_table", "count_keys", "encode_keys", "hash_buckets",
           "is_distributed", "key_dtype", "merge_counts", "table_from_keys"]

#: Rows processed at a time (unpacking, matrix products): fixed, so that every
#: float sum is taken in the same order whatever the backend or machine.
CHUNK_ROWS = 1 << 15


def _unpack(packed: np.ndarray, d: int) -> np.ndarray:
    return np.unpackbits(packed, axis=1, count=d) if packed.shape[0] else np.zeros((0, d), np.uint8)


class PackedRows:
    """A 0/1 matrix stored bit-packed (``np.packbits`` along rows: d/8 bytes a row).

    Read by column (:meth:`column`), by chunk of unpacked rows
    (:meth:`chunks`), or through weighted column sums (:meth:`tdot`), which
    never materialise a float copy of more than :data:`CHUNK_ROWS` rows.
    """

    def __init__(self, packed: np.ndarray, n_features: int):
        self.packed = np.ascontiguousarray(packed, dtype=np.uint8)
        self.n_features = int(n_features)

    @classmethod
    def from_array(cls, X) -> "PackedRows":
        X = np.asarray(X)
        n, d = X.shape
        packed = np.empty((n, (d + 7) // 8), dtype=np.uint8)
        for s in range(0, n, CHUNK_ROWS):
            packed[s : s + CHUNK_ROWS] = np.packbits(X[s : s + CHUNK_ROWS] != 0, axis=1)
        return cls(packed, d)

    @property
    def n_rows(self) -> int:
        return self.packed.shape[0]

    def unpack(self, rows=slice(None)) -> np.ndarray:
        """The unpacked uint8 rows selected by ``rows`` (a slice, index array or mask)."""
        return _unpack(self.packed[rows], self.n_features)

    def chunks(self, index: np.ndarray | None = None):
        """Yield ``(selection, uint8 rows)`` over all rows (or ``index``), :data:`CHUNK_ROWS` at a time."""
        n = self.n_rows if index is None else len(index)
        for s in range(0, n, CHUNK_ROWS):
            sel = slice(s, min(s + CHUNK_ROWS, n)) if index is None else index[s : s + CHUNK_ROWS]
            yield sel, self.unpack(sel)

    def column(self, j: int) -> np.ndarray:
        """Column ``j`` as uint8 (read from the packed bits)."""
        return (self.packed[:, j >> 3] >> (7 - (j & 7))) & np.uint8(1)

    def tdot(self, w: np.ndarray) -> np.ndarray:
        """``X.T @ w`` in float64 for a vector or ``(n, k)`` matrix ``w``, chunk by chunk in a fixed order."""
        w = np.asarray(w, dtype=np.float64)
        out = np.zeros((self.n_features,) + w.shape[1:])
        for sel, rows in self.chunks():
            out += rows.T.astype(np.float64) @ w[sel]
        return out

    def map_rows(self, fn) -> np.ndarray:
        """``fn(rows)`` applied chunk by chunk to the unpacked rows, concatenated."""
        parts = [fn(rows) for _, rows in self.chunks()]
        return np.concatenate(parts) if parts else fn(np.zeros((0, self.n_features), np.uint8))


class PatternTable(PackedRows):
    """The distinct (row, label) pairs of a training set with their record counts.

    Entries are sorted by the bytes of the packed row, then by the label.

    Attributes
    ----------
    packed : ndarray of uint8, shape (m, ceil(d / 8))
    labels : ndarray of uint8, shape (m,)
        The class code 0..K-1 (code k is ``classes[k]``; for two classes, 1 is the positive one).
    counts : ndarray of int64, shape (m,)
        Records with this row and label (>= 1).
    n_features : int
    classes : list of K >= 2 labels or None
        ``[negative, positive]`` for two classes.  Set when the table is
        built for a fit (a table passed to ``fit`` must carry it).
    columns : list or None
        The feature names, when the data had them.
    """

    def __init__(self, packed, labels, counts, n_features: int, *, classes=None, columns=None):
        super().__init__(packed, n_features)
        self.labels = np.asarray(labels, dtype=np.uint8)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.classes = None if classes is None else list(classes)
        self.columns = None if columns is None else list(columns)

    @property
    def n_entries(self) -> int:
        return self.n_rows

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    @property
    def shape(self) -> tuple[int, int]:
        """``(records, features)``, as the array it summarises."""
        return self.n_records, self.n_features

    def _new_rows(self) -> np.ndarray:
        """Whether each entry starts a new distinct row (entries are sorted by row, then label)."""
        m = self.n_entries
        new = np.ones(m, dtype=bool)
        for s in range(1, m, CHUNK_ROWS):
            e = min(s + CHUNK_ROWS, m)
            new[s:e] = np.any(self.packed[s:e] != self.packed[s - 1 : e - 1], axis=1)
        return new

    def by_class(self, n_classes: int | None = None):
        """``(rows, W)``: the distinct rows (bit-packed, sorted) and their record counts by class, ``W`` of
        shape (rows, K) in float64 (``K = len(classes)`` unless ``n_classes`` is given)."""
        K = int(n_classes if n_classes is not None else len(self.classes))
        m = self.n_entries
        if m == 0:
            return self.packed, np.zeros((0, K))
        new = self._new_rows()
        W = np.zeros((int(new.sum()), K))
        done = -1  # the row index of the entry before the chunk
        for s in range(0, m, CHUNK_ROWS):  # by chunks: no full-size temporaries
            e = min(s + CHUNK_ROWS, m)
            row = done + np.cumsum(new[s:e])
            W[row, self.labels[s:e]] = self.counts[s:e]  # each (row, label) pair is one entry
            done = int(row[-1])
        return self.packed[np.flatnonzero(new)], W

    def by_pattern(self):
        """``(rows, w0, w1)``: the distinct rows (bit-packed, sorted) and their negative / positive counts
        (float64): :meth:`by_class` of a two-class table."""
        rows, W = self.by_class(2)
        return rows, np.ascontiguousarray(W[:, 0]), np.ascontiguousarray(W[:, 1])

    def with_counts(self, counts) -> "PatternTable":
        """The table of the same entries with new ``counts`` (entries whose count is 0 are dropped).

        Used to split a table into parts (a train / validation split, the
        teachers' parts): each part keeps the order, classes and columns.
        """
        counts = np.asarray(counts, dtype=np.int64)
        keep = np.flatnonzero(counts)
        return PatternTable(self.packed[keep], self.labels[keep], counts[keep], self.n_features,
                            classes=self.classes, columns=self.columns)

    def records(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X01, y01)``: one row per record, entry by entry in the table's order (the counts expanded).

        For learners that read records, not tables; memory is that of the records.
        """
        index = np.repeat(np.arange(self.n_entries), self.counts)
        return self.unpack(index), self.labels[index]

    def equals(self, other: "PatternTable") -> bool:
        return (self.n_features == other.n_features and np.array_equal(self.packed, other.packed)
                and np.array_equal(self.labels, other.labels) and np.array_equal(self.counts, other.counts))


# ------------------------------------------------------------ keys (both backends)
def key_dtype(n_features: int) -> np.dtype:
    """Packed row plus a label byte: a uint64 when it fits in 8 bytes, raw bytes otherwise."""
    width = (n_features + 7) // 8 + 1
    return np.dtype(np.uint64) if width <= 8 else np.dtype((np.void, width))


def encode_keys(X, y01, n_features: int) -> np.ndarray:
    """One sortable key per record: its packed row then its label, compared as bytes."""
    X = np.asarray(X)
    n = X.shape[0]
    B = (n_features + 7) // 8
    dt = key_dtype(n_features)
    keys = np.empty(n, dtype=dt)
    width = 8 if dt == np.uint64 else B + 1
    for s in range(0, n, CHUNK_ROWS):
        e = min(s + CHUNK_ROWS, n)
        buf = np.zeros((e - s, width), dtype=np.uint8)
        if B:
            buf[:, :B] = np.packbits(X[s:e] != 0, axis=1)
        buf[:, B] = y01[s:e]
        if dt == np.uint64:
            keys[s:e] = buf.view(">u8")[:, 0]  # big-endian: integer order is byte order
        else:
            keys[s:e] = buf.view(dt)[:, 0]
    return keys


def count_keys(keys: np.ndarray, counts: np.ndarray | None = None, *, owned: bool = False):
    """``(sorted distinct keys, int64 counts)``: the exact reduction, whatever order the keys come in.

    Without ``counts`` each key counts once; ``owned=True`` lets the keys be sorted in place.
    """
    if counts is None:
        if not owned:
            keys = keys.copy()
        keys.sort()
        if keys.size == 0:
            return keys, np.zeros(0, dtype=np.int64)
        new = np.empty(keys.size, dtype=bool)
        new[0] = True
        new[1:] = keys[1:] != keys[:-1]
        start = np.flatnonzero(new)
        del new
        c = np.diff(np.append(start, keys.size))
        return keys[start], c.astype(np.int64, copy=False)
    order = np.argsort(keys, kind="stable")
    keys, counts = keys[order], np.asarray(counts, dtype=np.int64)[order]
    del order
    if keys.size == 0:
        return keys, counts
    start = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    return keys[start], np.add.reduceat(counts, start)


def merge_counts(*parts):
    """Merge several ``(keys, counts)`` reductions into one (exact integer sums)."""
    parts = [p for p in parts if p[0].size] or parts[:1]
    if len(parts) == 1:
        return parts[0]
    return count_keys(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


def _key_hash(keys: np.ndarray) -> np.ndarray:
    """A uint8 hash of every key (a multiplicative hash of its bytes): spreads skewed rows evenly."""
    if keys.dtype == np.uint64:
        h = keys * np.uint64(0x9E3779B97F4A7C15)
    else:
        raw = keys.view(np.uint8).reshape(keys.shape[0], -1)
        h = np.zeros(keys.shape[0], dtype=np.uint64)
        for col in range(raw.shape[1]):
            h = (h ^ raw[:, col].astype(np.uint64)) * np.uint64(0x100000001B3)
        h = h * np.uint64(0x9E3779B97F4A7C15)
    return (h >> np.uint64(56)).astype(np.uint8)


def hash_buckets(pair, n_buckets: int):
    """A sorted ``(keys, counts)`` cut into ``n_buckets`` parts by a hash of the key (each part still sorted):
    balanced parts for statistics, whose sums do not depend on which part holds an entry."""
    keys, counts = pair
    which = _key_hash(keys) % np.uint8(n_buckets)
    order = np.argsort(which, kind="stable")  # keeps the key order inside a part
    edges = np.searchsorted(which[order], np.arange(n_buckets + 1), side="left")
    return [(keys[order[a:b]], counts[order[a:b]]) for a, b in zip(edges[:-1], edges[1:])]


def table_from_keys(keys: np.ndarray, counts: np.ndarray, n_features: int) -> PatternTable:
    B = (n_features + 7) // 8
    m = keys.shape[0]
    packed = np.empty((m, B), dtype=np.uint8)
    labels = np.empty(m, dtype=np.uint8)
    for s in range(0, m, CHUNK_ROWS):
        block = keys[s : s + CHUNK_ROWS]
        if keys.dtype == np.uint64:
            raw = block.astype(">u8").view(np.uint8).reshape(-1, 8)
        else:
            raw = block.view(np.uint8).reshape(-1, B + 1)
        packed[s : s + CHUNK_ROWS] = raw[:, :B]
        labels[s : s + CHUNK_ROWS] = raw[:, B]
    return PatternTable(packed, labels, counts, n_features)


def adopt_table(estimator, table: PatternTable, declared=None) -> PatternTable:
    """Set ``n_features_in_``, ``feature_names_in_`` and ``classes_`` of ``estimator`` from a table it fits on.

    ``declared`` is the label set the estimator was given (its ``classes``
    parameter or the caller's schema), which must be the table's.  With a
    declared label set a table of zero records is accepted (whether fit
    succeeds must not depend on n); without one it is refused.
    """
    from dpglass.exceptions import DataValidationError

    if table.classes is None or len(table.classes) < 2:
        raise DataValidationError("A PatternTable passed to fit must carry its classes (table.classes).")
    most = getattr(estimator, "_max_classes", 2)
    if len(table.classes) > most:
        raise DataValidationError(
            f"{type(estimator).__name__} learns {most} classes at most, and the table has {len(table.classes)}: "
            f"{list(table.classes)[:8]!r}. Choose a model that learns K classes (`dpglass models` lists them).")
    if declared is not None and [*declared] != [*table.classes]:
        raise DataValidationError(f"The table's classes {list(table.classes)!r} are not the declared classes "
                                  f"{list(declared)!r}.")
    if table.n_records == 0 and declared is None:
        raise DataValidationError("X is empty: fit needs at least one record (or declare the label set: classes=).")
    columns = table.columns
    estimator.n_features_in_ = table.n_features
    if columns is not None and len(columns) == table.n_features and all(isinstance(c, str) for c in columns):
        estimator.feature_names_in_ = np.asarray(columns, dtype=object)
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    estimator.classes_ = np.asarray(table.classes)
    return table


# ------------------------------------------------------------------- dispatch
def is_distributed(X) -> bool:
    """Whether ``X`` is a dask collection (the Dask backend then builds the table)."""
    mod = type(X).__module__ or ""
    return mod.startswith("dask") and hasattr(X, "__dask_graph__")
