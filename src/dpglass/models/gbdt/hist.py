"""Compact bin codes and the per-(node, bin) sums of the split search of
:mod:`dpglass.models.gbdt.estimator`, all features at once.

A table's bin codes are kept as :class:`Codes`, one uint8 array of ``m`` rows:
first the 0/1 features (one cut) as bits, eight a byte, then the others'
codes, one byte each.  On the worst case for memory (every column 0/1, given
as a uint8 array) that is an eighth of the input; a numeric column's float64
value becomes one byte.  The learners read the codes a chunk of rows at a
time (:meth:`Codes.chunks`, :data:`PASS_ROWS` rows or more): nothing the size
of the table is made besides the codes.

A level's histograms (:meth:`Codes.add_histograms`), chunk by chunk: one
``np.bincount`` per weight column over every byte of the chunk at once, each
byte indexed by (node, column, its value): the packed bytes' values (256 each)
and the other features' global bins (``offset + code``).  At the end
(:meth:`Codes.finish`) the product of each packed byte's 256 sums with the
256 x 8 table of the bytes' bits gives the bin-1 sums of its eight features
(no unpacked or float copy of the bits), and each 0/1 feature's bin 0 is the
node's total minus its bin 1.
Every weight the learners pass is an integer-valued float64 (quantised units
times counts) and every sum stays below 2**53, so each sum is exact whatever
the order in which its terms are added (chunks, the matrix product's order,
parts): the histograms do not depend on the chunk size, on how the records are
grouped into entries, or on how entries are cut into parts.  (Only sums of the
weights passed in are computed; nothing here is released.)
"""

from __future__ import annotations

import numpy as np

__all__ = ["PASS_ROWS", "Chunk", "Codes"]

#: Rows per chunk of a pass over the codes, at least (the sums are exact: any size gives the same result).
PASS_ROWS = 1 << 13

#: Bytes of codes per chunk (:meth:`Codes.chunks`): narrow tables read more rows a chunk, so that a pass is a few
#: large NumPy operations; a chunk's index and weight temporaries are about 16 bytes per byte of codes.
PASS_BYTES = 1 << 17


class Chunk:
    """Rows ``sel`` of a :class:`Codes` (a slice: a view of its array), decoded only as far as asked: one feature's
    codes (:meth:`column`), the leaves of a tree (:meth:`leaf_index`)."""

    def __init__(self, codes: Codes, sel):
        self.codes, self.sel = codes, sel
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


#: ``_BYTE_BITS[v, t]``: bit ``t`` of the byte ``v``, most significant first (as ``np.packbits`` writes them).
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)


class Codes:
    """The bin codes of ``m`` rows (see the module): ``data`` (m, n_bytes + d - n1) uint8, the n1 0/1 features
    packed (``np.packbits`` along rows, in feature order: ``bits``, its first ``n_bytes`` columns), then the other
    features' codes (``wide``)."""

    def __init__(self, data: np.ndarray, n_cuts):
        self.n_cuts = np.asarray(n_cuts, dtype=np.int64)
        self.one = np.flatnonzero(self.n_cuts == 1)
        self.many = np.flatnonzero(self.n_cuts != 1)
        self.n_bytes = (self.one.size + 7) // 8
        self.data = data
        self.offsets = np.concatenate([[0], np.cumsum(self.n_cuts + 1)]).astype(np.int64)
        self.place = np.zeros(self.n_cuts.size, dtype=np.int64)  # feature j's bit in bits, or column in wide
        self.place[self.one] = np.arange(self.one.size)
        self.place[self.many] = np.arange(self.many.size)
        # where each column's values go in a node's block of add_histograms' sums: 256 a packed byte, then the bins
        self.space = 256 * self.n_bytes + self.n_bins
        self.base = np.concatenate([256 * np.arange(self.n_bytes), 256 * self.n_bytes + self.offsets[self.many]])
        self.pass_rows = max(PASS_ROWS, PASS_BYTES // max(1, self.data.shape[1]))

    @classmethod
    def empty(cls, m: int, n_cuts) -> Codes:
        n_cuts = np.asarray(n_cuts, dtype=np.int64)
        n1 = int(np.count_nonzero(n_cuts == 1))
        return cls(np.zeros((m, (n1 + 7) // 8 + n_cuts.size - n1), dtype=np.uint8), n_cuts)

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
        for s in range(0, self.n_rows, self.pass_rows):
            yield Chunk(self, slice(s, min(s + self.pass_rows, self.n_rows)))

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
    def zeros(self, k: int, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
        """Empty accumulators for :meth:`add_histograms`: ``(sums (k, n_nodes, space), totals (k, n_nodes))``."""
        return np.zeros((k, n_nodes, self.space)), np.zeros((k, n_nodes))

    def add_histograms(self, acc, data: np.ndarray, node: np.ndarray, W: np.ndarray) -> None:
        """Add the sums of each column of ``W`` (r, k) over rows ``data`` (r, columns) of :attr:`data` (a chunk's,
        or some of them) to ``acc`` (:meth:`zeros`), rows at nodes ``node`` (r,) in ``0 .. n_nodes - 1``: by
        (node, packed byte and its value) and by (node, bin) of the other features, one ``np.bincount`` over all
        the rows' bytes; :meth:`finish` makes them histograms."""
        sums, totals = acc
        k, n_nodes, space = sums.shape
        for c in range(k):
            totals[c] += np.bincount(node, W[:, c], minlength=n_nodes)
        if not data.shape[1]:
            return
        idx = self.base + data  # (r, columns) int64
        if n_nodes > 1:
            idx += (node * space)[:, None]
        idx = idx.ravel()
        for c in range(k):
            sums[c] += np.bincount(idx, np.repeat(W[:, c], data.shape[1]),
                                   minlength=n_nodes * space).reshape(n_nodes, space)

    def finish(self, acc) -> np.ndarray:
        """The histograms (k, n_nodes, bins) of ``acc``: each 0/1 feature's bin 1 from its bytes' sums by value,
        its bin 0 the node's total minus its bin 1 (exact: sums of integer-valued floats)."""
        sums, totals = acc
        k, n_nodes, _ = sums.shape
        hist = sums[:, :, 256 * self.n_bytes :].copy()
        if self.one.size:
            by_value = sums[:, :, : 256 * self.n_bytes].reshape(k, n_nodes, self.n_bytes, 256)
            bin1 = (by_value @ _BYTE_BITS).reshape(k, n_nodes, 8 * self.n_bytes)[:, :, : self.one.size]
            first = self.offsets[self.one]
            hist[:, :, first + 1] = bin1
            hist[:, :, first] = totals[:, :, None] - bin1
        return hist

    def histograms(self, node: np.ndarray, n_nodes: int, weights) -> list:
        """Per (node, global bin) sums of each weight vector (length m), ``node[i]`` in ``0..n_nodes-1`` per row:
        a list of (n_nodes, bins) arrays."""
        acc = self.zeros(len(weights), n_nodes)
        W = np.column_stack(weights) if len(weights) else np.zeros((self.n_rows, 0))
        for chunk in self.chunks():
            self.add_histograms(acc, chunk.data, node[chunk.sel], W[chunk.sel])
        return list(self.finish(acc))
