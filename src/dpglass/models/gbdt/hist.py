"""Per-(node, bin) sums for the split search of :mod:`dpglass.models.gbdt.estimator`, all features at once.

The bin matrix ``B`` (n, d) is kept a second time as :class:`Cells`: row by
row, the *non-zero* bins as global codes ``offset[j] + bin`` (uint16 when the
codes fit, else uint32).  A level's histograms are ``np.bincount`` over
``node * n_bins + code`` of those cells, :data:`~dpglass.aggregates.CHUNK_ROWS`
rows at a time (the per-chunk histograms added in row order); each feature's
bin 0 is the node's total minus its other bins.  Most cells of one-hot
columns are 0, so Adult's cells are about a ninth of ``B``: no per-feature
loop, and no index or float copy of more than one chunk of cells (built
chunk by chunk too).  The rows are the entries of the binned pattern table
(:mod:`dpglass.models.gbdt.binned`).  (Only sums of the weight vectors passed
in are computed; nothing here is released.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpglass.aggregates import CHUNK_ROWS

__all__ = ["Cells"]


@dataclass(frozen=True)
class Cells:
    """The non-zero bins of a bin matrix, row-major: ``counts[i]`` codes per row ``i``, concatenated.

    Row ``i``'s codes are ``codes[starts[i]:starts[i + 1]]``.
    """

    counts: np.ndarray
    codes: np.ndarray
    offsets: np.ndarray
    starts: np.ndarray

    @classmethod
    def from_bins(cls, B: np.ndarray, offsets: np.ndarray) -> "Cells":
        """Cells of ``B`` with feature ``j``'s bins at codes ``offsets[j] + bin`` (``offsets``: d + 1 values)."""
        n = B.shape[0]
        dtype = np.uint16 if offsets[-1] <= np.iinfo(np.uint16).max else np.uint32
        counts = np.empty(n, dtype=np.int64)
        for s in range(0, n, CHUNK_ROWS):
            counts[s : s + CHUNK_ROWS] = np.count_nonzero(B[s : s + CHUNK_ROWS], axis=1)
        starts = np.concatenate([[0], np.cumsum(counts)])
        codes = np.empty(int(starts[-1]), dtype=dtype)
        first = np.asarray(offsets[:-1]).astype(dtype)
        for s in range(0, n, CHUNK_ROWS):
            block = B[s : s + CHUNK_ROWS]
            nonzero = block != 0
            cols = np.nonzero(nonzero)[1]
            codes[starts[s] : starts[min(s + CHUNK_ROWS, n)]] = first[cols] + block[nonzero].astype(dtype)
        return cls(counts, codes, np.asarray(offsets, dtype=np.int64), starts)

    @property
    def n_bins(self) -> int:
        return int(self.offsets[-1])

    def take(self, rows: np.ndarray) -> "Cells":
        """The cells of ``rows`` (sorted or not), in that order."""
        counts = self.counts[rows]
        first = np.cumsum(counts) - counts  # where each row's cells start in the result
        pos = np.repeat(self.starts[rows] - first, counts) + np.arange(int(counts.sum()))
        return Cells(counts, self.codes[pos], self.offsets, np.concatenate([[0], np.cumsum(counts)]))

    def histograms(self, node: np.ndarray, n_nodes: int, weights) -> list:
        """Per (node, global bin) sums of each weight vector; ``node[i]`` in ``0..n_nodes-1`` per row."""
        nb = self.n_bins
        n = self.counts.shape[0]
        out = [np.zeros(n_nodes * nb) for _ in weights]
        for s in range(0, n, CHUNK_ROWS):
            e = min(s + CHUNK_ROWS, n)
            counts, codes = self.counts[s:e], self.codes[self.starts[s] : self.starts[e]]
            idx = codes if n_nodes == 1 else np.repeat(node[s:e] * nb, counts) + codes
            for h, w in zip(out, weights):
                h += np.bincount(idx, np.repeat(w[s:e], counts), minlength=n_nodes * nb)
        first = self.offsets[:-1]
        for k, w in enumerate(weights):
            h = out[k].reshape(n_nodes, nb)
            total = np.bincount(node, w, minlength=n_nodes)
            h[:, first] = total[:, None] - np.add.reduceat(h, first, axis=1)  # bin 0 holds no cell
            out[k] = h
        return out
