"""Compact bin codes and the per-(node, bin) sums of the split search of
:mod:`dpglass.models.gbdt.estimator`, all features at once.

A table's bin codes are kept as :class:`Codes`: the 0/1 features (one cut)
as bits, eight a byte, and the others as one uint8 each.  On the worst case
for memory (every column 0/1, given as a uint8 array) that is an eighth of
the input; a numeric column's float64 value becomes one byte.  The learners
read the codes a chunk of :data:`PASS_ROWS` rows at a time (:meth:`Codes.chunks`),
as a bin matrix of the chunk: nothing the size of the table is made besides
the codes.

A level's histograms (:meth:`Codes.add_histograms`), chunk by chunk: for
every byte of the packed 0/1 features, one ``np.bincount`` of the weights by
(node, byte value), whose product with the 256 x 8 table of the bytes' bits
gives the bin-1 sums of its eight features (no unpacked or float copy of the
bits); the other features' bins one ``np.bincount`` over
``node * n_bins + offset + code``; each 0/1 feature's bin 0 is the node's
total minus its bin 1 (:meth:`Codes.finish`).
Every weight the learners pass is an integer-valued float64 (quantised units
times counts) and every sum stays below 2**53, so each sum is exact whatever
the order in which its terms are added (chunks, the matrix product's order,
parts): the histograms do not depend on the chunk size, on how the records are
grouped into entries, or on how entries are cut into parts.  (Only sums of the
weights passed in are computed; nothing here is released.)
"""

from __future__ import annotations

import numpy as np

from dpglass.models.gbdt.trees import leaf_index

__all__ = ["PASS_ROWS", "Chunk", "Codes"]

#: Rows per chunk of a pass over the codes (the sums are exact: any size gives the same result).
PASS_ROWS = 1 << 13


class Chunk:
    """Rows ``sel`` of a :class:`Codes` (a slice: views of its arrays), decoded only as far as asked: one feature's
    codes (:meth:`column`), the leaves of a tree (:meth:`leaf_index`)."""

    def __init__(self, codes: Codes, sel):
        self.codes, self.sel = codes, sel
        self.packed, self.wide = codes.bits[sel], codes.wide[sel]

    @property
    def n_rows(self) -> int:
        return self.wide.shape[0]

    def column(self, j: int) -> np.ndarray:
        """Feature ``j``'s bin codes (uint8)."""
        t = self.codes.place[j]
        if self.codes.n_cuts[j] != 1:
            return self.wide[:, t]
        return (self.packed[:, t >> 3] >> (7 - (t & 7))) & np.uint8(1)

    def matrix(self, features) -> np.ndarray:
        """The bin matrix (r, len(features)) uint8 of these features."""
        B = np.empty((self.n_rows, len(features)), dtype=np.uint8)
        for i, j in enumerate(features):
            B[:, i] = self.column(int(j))
        return B

    def leaf_index(self, feature: np.ndarray, cut: np.ndarray, depth: int) -> np.ndarray:
        """:func:`~dpglass.models.gbdt.trees.leaf_index` of the rows for the first ``depth`` levels of a tree,
        decoding only the features its splits there use."""
        if depth == 0:
            return np.zeros(self.n_rows, dtype=np.int64)
        inner = 2**depth - 1
        used = np.unique(feature[:inner])
        return leaf_index(self.matrix(used), np.searchsorted(used, feature[:inner]), cut[:inner], depth)



#: ``_BYTE_BITS[v, t]``: bit ``t`` of the byte ``v``, most significant first (as ``np.packbits`` writes them).
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)


class Codes:
    """The bin codes of ``m`` rows (see the module): ``bits`` (m, ceil(n1 / 8)) uint8, the n1 0/1 features packed
    (``np.packbits`` along rows, in feature order), and ``wide`` (m, d - n1) uint8, the other features' codes."""

    def __init__(self, bits: np.ndarray, wide: np.ndarray, n_cuts):
        self.n_cuts = np.asarray(n_cuts, dtype=np.int64)
        self.one = np.flatnonzero(self.n_cuts == 1)
        self.many = np.flatnonzero(self.n_cuts != 1)
        self.bits, self.wide = bits, wide
        self.offsets = np.concatenate([[0], np.cumsum(self.n_cuts + 1)]).astype(np.int64)
        self.place = np.zeros(self.n_cuts.size, dtype=np.int64)  # feature j's bit in bits, or column in wide
        self.place[self.one] = np.arange(self.one.size)
        self.place[self.many] = np.arange(self.many.size)

    @classmethod
    def empty(cls, m: int, n_cuts) -> Codes:
        n_cuts = np.asarray(n_cuts, dtype=np.int64)
        n1 = int(np.count_nonzero(n_cuts == 1))
        return cls(np.zeros((m, (n1 + 7) // 8), dtype=np.uint8),
                   np.zeros((m, n_cuts.size - n1), dtype=np.uint8), n_cuts)

    @classmethod
    def from_bins(cls, B: np.ndarray, n_cuts) -> Codes:
        """The codes of a bin matrix ``B`` (m, d), built a chunk at a time."""
        out = cls.empty(B.shape[0], n_cuts)
        for s in range(0, B.shape[0], PASS_ROWS):
            out.put(s, B[s : s + PASS_ROWS])
        return out

    def put(self, start: int, B: np.ndarray) -> None:
        """Write the rows of the bin matrix ``B`` (r, d) at rows ``start ..``."""
        end = start + B.shape[0]
        if self.one.size:
            self.bits[start:end] = np.packbits(B[:, self.one], axis=1)
        self.wide[start:end] = B[:, self.many]

    @property
    def n_rows(self) -> int:
        return self.wide.shape[0]

    @property
    def n_features(self) -> int:
        return int(self.n_cuts.size)

    @property
    def n_bins(self) -> int:
        return int(self.offsets[-1])

    def chunks(self):
        """Yield every row's :class:`Chunk`, :data:`PASS_ROWS` rows at a time, in order."""
        for s in range(0, self.n_rows, PASS_ROWS):
            yield Chunk(self, slice(s, min(s + PASS_ROWS, self.n_rows)))

    def matrix(self) -> np.ndarray:
        """The whole bin matrix (m, d) uint8 (small tables and tests)."""
        parts = [c.matrix(range(self.n_features)) for c in self.chunks()]
        return np.concatenate(parts) if parts else np.zeros((0, self.n_features), dtype=np.uint8)

    def take(self, rows: np.ndarray) -> Codes:
        """The codes of ``rows`` (sorted or not), in that order."""
        return Codes(self.bits[rows], self.wide[rows], self.n_cuts)

    def leaf_index(self, feature: np.ndarray, cut: np.ndarray, depth: int) -> np.ndarray:
        """:func:`~dpglass.models.gbdt.trees.leaf_index` of every row, a chunk at a time."""
        parts = [c.leaf_index(feature, cut, depth) for c in self.chunks()]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    # ------------------------------------------------------------ histograms
    def zeros(self, k: int, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
        """Empty accumulators for :meth:`add_histograms`: ``(hist (k, n_nodes, bins), totals (k, n_nodes))``."""
        return np.zeros((k, n_nodes, self.n_bins)), np.zeros((k, n_nodes))

    def add_histograms(self, acc, chunk: Chunk, node: np.ndarray, W: np.ndarray) -> None:
        """Add the chunk's per-(node, bin) sums of each column of ``W`` (r, k) to ``acc`` (:meth:`zeros`), rows
        at nodes ``node`` (r,) in ``0 .. n_nodes - 1``; the 0/1 features' bin 0 is left to :meth:`finish`."""
        hist, totals = acc
        k, n_nodes, nb = hist.shape
        for c in range(k):
            totals[c] += np.bincount(node, W[:, c], minlength=n_nodes)
        for b in range(self.bits.shape[1]):  # 8 of the 0/1 features a byte: sums by (node, byte value), then by bit
            idx = node * 256 + chunk.packed[:, b]
            bin1 = self.offsets[self.one[8 * b : 8 * b + 8]] + 1
            for c in range(k):
                by_value = np.bincount(idx, W[:, c], minlength=n_nodes * 256).reshape(n_nodes, 256)
                hist[c][:, bin1] += (by_value @ _BYTE_BITS)[:, : bin1.size]  # exact: sums of integer-valued floats
        if self.many.size:
            idx = ((node * nb)[:, None] + (self.offsets[self.many] + chunk.wide)).ravel()
            for c in range(k):
                hist[c] += np.bincount(idx, np.repeat(W[:, c], self.many.size),
                                       minlength=n_nodes * nb).reshape(n_nodes, nb)

    def finish(self, acc) -> np.ndarray:
        """The histograms (k, n_nodes, bins) of ``acc``: each 0/1 feature's bin 0 is the node's total minus its
        bin 1 (exact)."""
        hist, totals = acc
        first = self.offsets[self.one]
        hist[:, :, first] = totals[:, :, None] - hist[:, :, first + 1]
        return hist

    def histograms(self, node: np.ndarray, n_nodes: int, weights) -> list:
        """Per (node, global bin) sums of each weight vector (length m), ``node[i]`` in ``0..n_nodes-1`` per row:
        a list of (n_nodes, bins) arrays."""
        acc = self.zeros(len(weights), n_nodes)
        W = np.column_stack(weights) if len(weights) else np.zeros((self.n_rows, 0))
        for chunk in self.chunks():
            self.add_histograms(acc, chunk, node[chunk.sel], W[chunk.sel])
        return list(self.finish(acc))
