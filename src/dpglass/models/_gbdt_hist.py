"""Per-(node, bin) sums for the split search of :mod:`dpglass.models.gbdt`, all features at once.

The bin matrix ``B`` (n, d) is kept a second time as :class:`Cells`: row by
row, the *non-zero* bins as global codes ``offset[j] + bin`` (uint16 when the
codes fit, else uint32).  A level's histograms are one ``np.bincount`` over
``node * n_bins + code`` of those cells; each feature's bin 0 is the node's
total minus its other bins.  Most cells of one-hot columns are 0, so Adult's
cells are about a ninth of ``B``: no per-feature loop, no float copy of the
data.  (Only sums of the weight vectors passed in are computed; nothing here
is released.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Cells"]


@dataclass(frozen=True)
class Cells:
    """The non-zero bins of a bin matrix, row-major: ``counts[i]`` codes per row ``i``, concatenated."""

    counts: np.ndarray
    codes: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_bins(cls, B: np.ndarray, offsets: np.ndarray) -> "Cells":
        """Cells of ``B`` with feature ``j``'s bins at codes ``offsets[j] + bin`` (``offsets``: d + 1 values)."""
        nonzero = B != 0
        counts = nonzero.sum(axis=1, dtype=np.int64)
        cols = np.nonzero(nonzero)[1]
        dtype = np.uint16 if offsets[-1] <= np.iinfo(np.uint16).max else np.uint32
        codes = (offsets[:-1].astype(dtype)[cols] + B[nonzero].astype(dtype)).astype(dtype, copy=False)
        return cls(counts, codes, np.asarray(offsets, dtype=np.int64))

    @property
    def n_bins(self) -> int:
        return int(self.offsets[-1])

    def take(self, rows: np.ndarray) -> "Cells":
        """The cells of ``rows`` (sorted or not), in that order."""
        starts = np.concatenate([[0], np.cumsum(self.counts)])[rows]
        counts = self.counts[rows]
        first = np.cumsum(counts) - counts  # where each row's cells start in the result
        pos = np.repeat(starts - first, counts) + np.arange(int(counts.sum()))
        return Cells(counts, self.codes[pos], self.offsets)

    def histograms(self, node: np.ndarray, n_nodes: int, weights) -> list:
        """Per (node, global bin) sums of each weight vector; ``node[i]`` in ``0..n_nodes-1`` per row."""
        nb = self.n_bins
        if n_nodes == 1:
            idx = self.codes
        else:
            idx = np.repeat(node * nb, self.counts) + self.codes
        out = []
        first = self.offsets[:-1]
        for w in weights:
            h = np.bincount(idx, np.repeat(w, self.counts), minlength=n_nodes * nb).reshape(n_nodes, nb)
            total = np.bincount(node, w, minlength=n_nodes)
            h[:, first] = total[:, None] - np.add.reduceat(h, first, axis=1)  # bin 0 holds no cell
            out.append(h)
        return out
