"""Compact bin codes and the per-(node, bin) sums of the split search of
:mod:`dpglass.models.gbdt.estimator`, all features at once.

A table's bin codes are kept as :class:`Codes`, one uint8 array of ``m`` rows:
first the 0/1 features (one cut) as bits, eight a byte, then the others'
codes, one byte each.  On the worst case for memory (every column 0/1, given
as a uint8 array) that is an eighth of the input; a numeric column's float64
value becomes one byte.  The learners read the codes a chunk of rows at a
time (:meth:`Codes.chunks`, :data:`PASS_ROWS` rows or more): nothing the size
of the table is made besides the codes.

A level's histograms (:meth:`Codes.add_histograms`), chunk by chunk, in one
of two layouts chosen per table from its codes (:meth:`Codes._layout`):

* the **bytes** (dense tables, e.g. the worst case of 50 independent 0/1
  columns): one ``np.bincount`` per weight column over every byte of the
  chunk at once, each byte indexed by (node, column, its value): the packed
  bytes' values (256 each) and the other features' global bins (``offset +
  code``).  At the end (:meth:`Codes.finish`) the product of each packed
  byte's 256 sums with the 256 x 8 table of the bytes' bits gives the bin-1
  sums of its eight features (no unpacked or float copy of the bits);
* the **cells** (sparse tables, e.g. one-hot columns beside a few numeric
  ones): each row's non-zero bins as global bins, kept chunk by chunk beside
  the codes, and one ``np.bincount`` over them by (node, bin).

Either way a feature's bin 0, where it was not summed (the 0/1 features; with
cells, every feature), is the node's total minus its other bins.
Every weight the learners pass is an integer-valued float64 (quantised units
times counts) and every sum stays below 2**53, so each sum is exact whatever
the order in which its terms are added (chunks, the matrix product's order,
parts): the histograms do not depend on the chunk size, on how the records are
grouped into entries, or on how entries are cut into parts.  (Only sums of the
weights passed in are computed; nothing here is released.)
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["PASS_ROWS", "Chunk", "Codes", "worker_pass_rows"]

#: Rows per chunk of a pass over the codes, at least (the sums are exact: any size gives the same result).
PASS_ROWS = 1 << 13

#: Bytes of codes per chunk (:meth:`Codes.chunks`): narrow tables read more rows a chunk, so that a pass is a few
#: large NumPy operations; a chunk's index and weight temporaries, about 16 bytes per byte of codes, are reused
#: (:meth:`Codes._buffers`).
PASS_BYTES = 1 << 17

#: Rows a chunk, at least, and bytes of codes a chunk on a Dask worker (:func:`worker_pass_rows`).  Dask's nanny
#: starts its workers with ``MALLOC_TRIM_THRESHOLD_`` set (64 KiB), which freezes glibc's mmap threshold at
#: 128 KiB and gives back the top of the heap above 64 KiB at every free: every temporary of a chunk above that
#: size then costs fresh page faults.  Chunks of 32 KiB of codes keep a pass's per-row temporaries (a float64 or
#: an int64 a row) near 32 KiB for the dense worst case (7 bytes a row): measured under that setting, a pass
#: 0.83 s with the in-memory chunks, 0.67 s with these (0.63 s in memory without it).
WORKER_PASS_ROWS, WORKER_PASS_BYTES = PASS_ROWS // 2, PASS_BYTES // 4


def worker_pass_rows(width: int) -> int:
    """Rows a chunk for codes of ``width`` bytes a row on a Dask worker (:data:`WORKER_PASS_BYTES`)."""
    return max(WORKER_PASS_ROWS, WORKER_PASS_BYTES // max(1, width))


class Chunk:
    """Rows ``sel`` of a :class:`Codes` (a slice: a view of its array), decoded only as far as asked: one feature's
    codes (:meth:`column`), the leaves of a tree (:meth:`leaf_index`)."""

    def __init__(self, codes: Codes, sel, index: int = 0):
        self.codes, self.sel, self.index = codes, sel, index
        self.data = codes.data[sel]

    @property
    def packed(self) -> np.ndarray:
        return self.data[:, : self.codes.n_bytes]

    @property
    def wide(self) -> np.ndarray:
        return self.data[:, self.codes.n_bytes :]

    @property
    def n_rows(self) -> int:
        return self.data.shape[0]

    def column(self, j: int) -> np.ndarray:
        """Feature ``j``'s bin codes (uint8)."""
        t = self.codes.place[j]
        if self.codes.n_cuts[j] != 1:
            return self.data[:, self.codes.n_bytes + t]
        return (self.data[:, t >> 3] >> (7 - (t & 7))) & np.uint8(1)

    def matrix(self, features) -> np.ndarray:
        """The bin matrix (r, len(features)) uint8 of these features."""
        B = np.empty((self.n_rows, len(features)), dtype=np.uint8)
        for i, j in enumerate(features):
            B[:, i] = self.column(int(j))
        return B

    def descend(self, node: np.ndarray, feature: np.ndarray, cut: np.ndarray, level: int) -> np.ndarray:
        """The rows' nodes at level ``level + 1`` of a tree (``feature``, ``cut``: its split arrays, level by level)
        from their nodes ``node`` at ``level`` (0 .. 2**level - 1): a row goes right when its bin is above the
        cut; only the features the level's splits use are decoded."""
        first = 2**level - 1
        at = first + node
        used = np.unique(feature[first : 2 * first + 1])
        if used.size == 1:
            code = self.column(int(used[0]))
        else:
            code = self.matrix(used)[np.arange(self.n_rows), np.searchsorted(used, feature[at])]
        return 2 * node + (code > cut[at])

    def leaf_index(self, feature: np.ndarray, cut: np.ndarray, depth: int) -> np.ndarray:
        """:func:`~dpglass.models.gbdt.trees.leaf_index` of the rows for the first ``depth`` levels of a tree,
        one :meth:`descend` a level."""
        node = np.zeros(self.n_rows, dtype=np.int64)
        for level in range(depth):
            node = self.descend(node, feature, cut, level)
        return node


#: Cells (non-zero bins) per byte of codes below which a table's histograms read cells (:meth:`Codes._layout`):
#: a cell costs about 1.2 bytes (one more repeat).  Measured: numeric Adult (11 cells, 18 bytes a row) 16% less
#: fit CPU with cells; binarised Adult (12.5 cells, 15 bytes) 5% more; COMPAS (8 cells, 3 bytes) and the dense
#: worst case (25 cells, 7 bytes) read bytes.
CELL_COST = 0.75

#: ``_BYTE_BITS[v, t]``: bit ``t`` of the byte ``v``, most significant first (as ``np.packbits`` writes them).
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)
#: ``_POPCOUNT[v]``: the set bits of the byte ``v``.
_POPCOUNT = _BYTE_BITS.sum(axis=1).astype(np.int64)


class Codes:
    """The bin codes of ``m`` rows (see the module): ``data`` (m, n_bytes + d - n1) uint8, the n1 0/1 features
    packed (``np.packbits`` along rows, in feature order: ``bits``, its first ``n_bytes`` columns), then the other
    features' codes (``wide``)."""

    def __init__(self, data: np.ndarray, n_cuts, pass_rows: int | None = None):
        self.n_cuts = np.asarray(n_cuts, dtype=np.int64)
        self.one = np.flatnonzero(self.n_cuts == 1)
        self.many = np.flatnonzero(self.n_cuts != 1)
        self.n_bytes = (self.one.size + 7) // 8
        self.data = data
        self.offsets = np.concatenate([[0], np.cumsum(self.n_cuts + 1)]).astype(np.int64)
        self.place = np.zeros(self.n_cuts.size, dtype=np.int64)  # feature j's bit in bits, or column in wide
        self.place[self.one] = np.arange(self.one.size)
        self.place[self.many] = np.arange(self.many.size)
        self.base = np.concatenate([256 * np.arange(self.n_bytes), 256 * self.n_bytes + self.offsets[self.many]])
        self.pass_rows = int(pass_rows or max(PASS_ROWS, PASS_BYTES // max(1, self.data.shape[1])))  # rows a chunk
        self._cells = None  # the sparse layout's cells, chunk by chunk (:meth:`_layout`); False: the bytes
        self._scratch = {}  # per thread: the bytes layout's reused index and weight buffers (:meth:`_buffers`)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_scratch": {}}  # buffers are working memory, never shipped

    @classmethod
    def empty(cls, m: int, n_cuts, *, worker: bool = False) -> Codes:
        """Zero codes of ``m`` rows; ``worker``: read in a Dask worker's chunks (:func:`worker_pass_rows`)."""
        n_cuts = np.asarray(n_cuts, dtype=np.int64)
        n1 = int(np.count_nonzero(n_cuts == 1))
        width = (n1 + 7) // 8 + n_cuts.size - n1
        return cls(np.zeros((m, width), dtype=np.uint8), n_cuts, worker_pass_rows(width) if worker else None)

    @classmethod
    def from_bins(cls, B: np.ndarray, n_cuts) -> Codes:
        """The codes of a bin matrix ``B`` (m, d), built a chunk at a time."""
        out = cls.empty(B.shape[0], n_cuts)
        for s in range(0, B.shape[0], PASS_ROWS):
            out.put(s, B[s : s + PASS_ROWS])
        return out

    @property
    def bits(self) -> np.ndarray:
        return self.data[:, : self.n_bytes]

    @property
    def wide(self) -> np.ndarray:
        return self.data[:, self.n_bytes :]

    def put(self, start: int, B: np.ndarray) -> None:
        """Write the rows of the bin matrix ``B`` (r, d) at rows ``start ..``."""
        end = start + B.shape[0]
        if self.one.size:
            self.data[start:end, : self.n_bytes] = np.packbits(B[:, self.one], axis=1)
        self.data[start:end, self.n_bytes :] = B[:, self.many]

    @property
    def n_rows(self) -> int:
        return self.data.shape[0]

    @property
    def n_features(self) -> int:
        return int(self.n_cuts.size)

    @property
    def n_bins(self) -> int:
        return int(self.offsets[-1])

    def chunks(self):
        """Yield every row's :class:`Chunk`, :attr:`pass_rows` rows at a time, in order."""
        for k, s in enumerate(range(0, self.n_rows, self.pass_rows)):
            yield Chunk(self, slice(s, min(s + self.pass_rows, self.n_rows)), k)

    def matrix(self) -> np.ndarray:
        """The whole bin matrix (m, d) uint8 (small tables and tests)."""
        parts = [c.matrix(range(self.n_features)) for c in self.chunks()]
        return np.concatenate(parts) if parts else np.zeros((0, self.n_features), dtype=np.uint8)

    def take(self, rows: np.ndarray) -> Codes:
        """The codes of ``rows`` (sorted or not), in that order."""
        return Codes(self.data[rows], self.n_cuts)

    def leaf_index(self, feature: np.ndarray, cut: np.ndarray, depth: int) -> np.ndarray:
        """:func:`~dpglass.models.gbdt.trees.leaf_index` of every row, a chunk at a time."""
        parts = [c.leaf_index(feature, cut, depth) for c in self.chunks()]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    # ------------------------------------------------------------ histograms
    def _layout(self) -> list | bool:
        """The histograms' layout, chosen once from the codes: the cells (each row's non-zero bins as global bin
        indices, a list of ``(counts, bins)`` per chunk) when a strided sample of rows has fewer non-zero bins than
        :data:`CELL_COST` times its bytes of codes, else ``False`` (the bytes themselves).  The layout is not
        released and both give exactly the same sums (integer-valued): it is speed, not privacy."""
        if self._cells is None:
            sample = self.data[:: max(1, self.n_rows // (1 << 14))]
            nonzero = int(_POPCOUNT[sample[:, : self.n_bytes]].sum()) + int(np.count_nonzero(sample[:, self.n_bytes :]))
            sparse = sample.shape[0] > 0 and nonzero < CELL_COST * sample.size
            self._cells = [self._chunk_cells(c) for c in self.chunks()] if sparse else False
        return self._cells

    def _chunk_cells(self, chunk: Chunk) -> tuple[np.ndarray, np.ndarray]:
        B = chunk.matrix(range(self.n_features))
        nonzero = B != 0
        bins = (self.offsets[:-1] + B)[nonzero]  # row by row, in feature order
        counts = np.count_nonzero(nonzero, axis=1).astype(np.uint8 if self.n_features < 256 else np.uint32)
        return counts, bins.astype(np.uint16 if self.n_bins < 1 << 16 else np.uint32)

    @property
    def space(self) -> int:
        """Sums kept per node by :meth:`add_histograms`: 256 per packed byte then the bins, or the bins (cells)."""
        return self.n_bins + (0 if self._layout() else 256 * self.n_bytes)

    def zeros(self, k: int, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
        """Empty accumulators for :meth:`add_histograms`: ``(sums (k, n_nodes, space), totals (k, n_nodes))``."""
        return np.zeros((k, n_nodes, self.space)), np.zeros((k, n_nodes))

    def add_histograms(self, acc, chunk: Chunk, node: np.ndarray, W: np.ndarray, rows=None) -> None:
        """Add the sums of each column of ``W`` (r, k) over the chunk's rows (or those where the mask ``rows`` is
        true: r of them) to ``acc`` (:meth:`zeros`), rows at nodes ``node`` (r,) in ``0 .. n_nodes - 1``, one
        ``np.bincount`` over all their bytes by (node, packed byte and its value) and by (node, bin) of the other
        features, or over their cells by (node, bin); :meth:`finish` makes them histograms."""
        sums, totals = acc
        k, n_nodes, space = sums.shape
        for c in range(k):
            totals[c] += np.bincount(node, W[:, c], minlength=n_nodes)
        cells = self._layout()
        if cells:
            counts, idx = cells[chunk.index]
            if rows is not None:
                idx, counts = idx[np.repeat(rows, counts)], counts[rows]
            if n_nodes > 1:
                idx = np.repeat(node * space, counts) + idx
        else:
            data = chunk.data if rows is None else chunk.data[rows]
            idx, rep = self._buffers(data.shape)
            np.add(self.base, data, out=idx)  # (r, columns) int64, by (column, its value)
            if n_nodes > 1:
                idx += (node * space)[:, None]
            for c in range(k):  # each row's weight once per column: np.repeat's values, in a reused buffer
                rep[...] = W[:, c : c + 1]
                sums[c] += np.bincount(idx.ravel(), rep.ravel(), minlength=n_nodes * space).reshape(n_nodes, space)
            return
        if idx.size:
            for c in range(k):
                sums[c] += np.bincount(idx, np.repeat(W[:, c], counts), minlength=n_nodes * space).reshape(n_nodes,
                                                                                                            space)

    def _buffers(self, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
        """This thread's index (int64) and weight (float64) buffers of ``shape`` (rows, columns) for
        :meth:`add_histograms`, reused from chunk to chunk and pass to pass.  Allocating them afresh costs a page
        fault per 4 KiB whenever large blocks are mapped on each allocation: on Dask's workers (its nanny sets
        ``MALLOC_TRIM_THRESHOLD_``, which freezes glibc's mmap threshold at 128 KiB) that made a pass about 2.5x
        slower than in memory.  Speed only: the sums are the same."""
        size = shape[0] * shape[1]
        idx, rep = self._scratch.get(threading.get_ident(), (None, None))
        if idx is None or idx.size < size:
            room = max(size, self.pass_rows * shape[1])
            idx, rep = np.empty(room, np.int64), np.empty(room)
            self._scratch[threading.get_ident()] = idx, rep
        return idx[:size].reshape(shape), rep[:size].reshape(shape)

    def finish(self, acc) -> np.ndarray:
        """The histograms (k, n_nodes, bins) of ``acc``: a 0/1 feature's bin 1 from its bytes' sums by value
        (bytes layout), and the bin 0 of every feature whose zeros were not summed (the 0/1 features; with cells,
        all) the node's total minus its other bins (exact: sums of integer-valued floats)."""
        sums, totals = acc
        k, n_nodes, space = sums.shape
        hist = sums[:, :, space - self.n_bins :].copy()
        zero = np.arange(self.n_features) if self._layout() else self.one
        if self.one.size and not self._layout():
            by_value = sums[:, :, : 256 * self.n_bytes].reshape(k, n_nodes, self.n_bytes, 256)
            bin1 = (by_value @ _BYTE_BITS).reshape(k, n_nodes, -1)[:, :, : self.one.size]
            hist[:, :, self.offsets[self.one] + 1] = bin1
        if zero.size:
            others = np.add.reduceat(hist, self.offsets[:-1], axis=2)[:, :, zero]  # bin 0 is 0 so far
            hist[:, :, self.offsets[zero]] = totals[:, :, None] - others
        return hist

    def histograms(self, node: np.ndarray, n_nodes: int, weights) -> list:
        """Per (node, global bin) sums of each weight vector (length m), ``node[i]`` in ``0..n_nodes-1`` per row:
        a list of (n_nodes, bins) arrays."""
        acc = self.zeros(len(weights), n_nodes)
        W = np.column_stack(weights) if len(weights) else np.zeros((self.n_rows, 0))
        for chunk in self.chunks():
            self.add_histograms(acc, chunk, node[chunk.sel], W[chunk.sel])
        return list(self.finish(acc))
