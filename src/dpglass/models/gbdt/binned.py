"""The binned pattern table: the aggregation seam of :class:`~dpglass.models.gbdt.estimator.DPGradientBoostingClassifier`.

The DP-GBDT learners bin every feature at public (or already released)
edges and then look at a record only through its **bin codes** and its
label: its prediction, gradient and Hessian, the node and leaf it falls in,
its DPBoost subset probability are all functions of (bin-code row, label).
So the sufficient statistic is the **binned pattern table**: the distinct
(bin-code row, label) pairs with their int64 record counts, and every sum the
learner takes is a sum over the table's entries weighted by their counts.

Keys.  Feature ``j``'s bin code (0 .. ``n_cuts[j]``) is written in
``n_cuts[j].bit_length()`` bits (1 for a 0/1 column, 5 for 32 bins) and the
bits of all features are concatenated: a row becomes a 0/1 vector of ``W``
bits (:class:`BitLayout`), i.e. a row of the 0/1 pattern table of
:mod:`dpglass.aggregates`.  The key of a record is those bits packed,
followed by its label (:func:`dpglass.aggregates.encode_keys`); the keys are
sorted and counted exactly as the 0/1 table's are:

* in memory (:func:`binned_table`): the array is binned and encoded
  :data:`~dpglass.models.gbdt.hist.PASS_ROWS` rows at a time (no float copy
  of the whole data, no whole bin matrix), then the keys are counted;
  Newton boosting, whose statistics are exact sums, reads the records
  themselves instead when they are distinct enough (:func:`binned_rows`:
  linear in the rows, no sort: the same sums, so the same model);
* through Dask (:func:`dask_binned_table`): each partition checks itself and
  bins itself to its bits **on the worker** (binning uses only the public or
  released edges), and :func:`dpglass.aggregates.dask_backend.pattern_table`
  reduces the partitions and merges them on the cluster by key range; only
  the merged table comes back.

Both give the same sorted entries with the same integer counts, so the
learner, which runs on the client and draws its noise there, computes the
same floats in the same order: the same model bit for bit.

``binning="quantile"`` needs one more aggregate, computed before the table:
per numeric column, the number of records below every point of the
quantile's public grid (:func:`dask_grid_counts`, exact integer sums over the
partitions), from which :func:`dpglass.privacy.quantile.dp_quantile_from_counts`
draws the same quantile :func:`~dpglass.privacy.quantile.dp_quantile` draws
from the whole column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpglass.aggregates import (
    CHUNK_ROWS,
    PatternTable,
    count_keys,
    encode_keys,
    key_dtype,
    table_from_keys,
)
from dpglass.aggregates.parts import table_parts
from dpglass.exceptions import DataValidationError
from dpglass.models._binning import apply_bins
from dpglass.models.gbdt.fit import Binned
from dpglass.models.gbdt.hist import PASS_ROWS, Codes

__all__ = ["BinnedTable", "BitLayout", "DaskData", "binned_rows", "binned_table", "dask_binned_table",
           "dask_grid_counts"]


class BitLayout:
    """Where each feature's bin code sits in a row's bit vector: ``n_cuts[j].bit_length()`` bits, MSB first."""

    def __init__(self, n_cuts):
        n_cuts = np.asarray(n_cuts, dtype=np.int64)
        if n_cuts.size and (n_cuts.min() < 1 or n_cuts.max() > 255):
            raise ValueError("every feature needs 1 to 255 cuts (bin codes fit a uint8)")
        widths = [int(c).bit_length() for c in n_cuts]
        # in np.unpackbits(B, axis=1) feature j's byte is bits 8j .. 8j + 7, most significant first
        self.positions = np.concatenate(
            [8 * j + 8 - w + np.arange(w) for j, w in enumerate(widths)] or [np.zeros(0, np.int64)]
        ).astype(np.intp)
        self.n_features = int(n_cuts.size)
        self.n_bits = int(self.positions.size)

    def expand(self, B: np.ndarray) -> np.ndarray:
        """The 0/1 bit rows (r, W) of a bin matrix ``B`` (r, d) uint8."""
        return np.unpackbits(np.ascontiguousarray(B, dtype=np.uint8), axis=1)[:, self.positions]

    def collapse(self, bits: np.ndarray) -> np.ndarray:
        """The bin matrix (r, d) uint8 of 0/1 bit rows (r, W): the inverse of :meth:`expand`."""
        full = np.zeros((bits.shape[0], 8 * self.n_features), dtype=np.uint8)
        full[:, self.positions] = bits
        return np.packbits(full, axis=1)


@dataclass(frozen=True)
class BinnedTable:
    """The distinct (bin-code row, label) pairs of a training set with their record counts.

    Entries are sorted by key (the bits of the row, then the label).

    Attributes
    ----------
    bins : ndarray of uint8, shape (m, d)
    labels : ndarray of uint8, shape (m,)
        0 or 1 (``classes_[1]`` is 1).
    counts : ndarray of int64, shape (m,)
        Records with this bin row and label (>= 1).
    """

    bins: np.ndarray
    labels: np.ndarray
    counts: np.ndarray

    @property
    def n_entries(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    def column(self, j: int) -> np.ndarray:
        """Feature j's bin code per entry (the learners' view, as :meth:`PatternTable.column`)."""
        return self.bins[:, j]

    def equals(self, other: "BinnedTable") -> bool:
        return (np.array_equal(self.bins, other.bins) and np.array_equal(self.labels, other.labels)
                and np.array_equal(self.counts, other.counts))

    @classmethod
    def from_pattern_table(cls, table: PatternTable, layout: BitLayout) -> "BinnedTable":
        """Decode the 0/1 pattern table of the bit rows back to bin codes, a chunk at a time."""
        m = table.n_entries
        bins = np.empty((m, layout.n_features), dtype=np.uint8)
        for s in range(0, m, CHUNK_ROWS):
            bins[s : s + CHUNK_ROWS] = layout.collapse(table.unpack(slice(s, s + CHUNK_ROWS)))
        return cls(bins, table.labels, table.counts)


def _bins(X, to_bins):
    """Yield ``(start, bin rows)`` of ``X``, :data:`~dpglass.models.gbdt.hist.PASS_ROWS` rows at a time: the one
    loop that bins an in-memory array (``to_bins`` checks and bins a block; one block is converted to float at a
    time)."""
    for s in range(0, X.shape[0], PASS_ROWS):
        yield s, to_bins(X[s : s + PASS_ROWS])


def _keys(X, y01, to_bins, layout: BitLayout) -> np.ndarray:
    keys = np.empty(X.shape[0], dtype=key_dtype(layout.n_bits))
    for s, B in _bins(X, to_bins):
        keys[s : s + B.shape[0]] = encode_keys(layout.expand(B), y01[s : s + B.shape[0]], layout.n_bits)
    return keys


def binned_table(X, y01, to_bins, layout: BitLayout) -> BinnedTable:
    """The :class:`BinnedTable` of an in-memory ``X`` (n, d) and 0/1 labels ``y01``.

    ``to_bins(rows)`` bins a block of rows of ``X`` to uint8 codes (it checks
    them too); it is called on :data:`~dpglass.models.gbdt.hist.PASS_ROWS` rows
    at a time, so only one chunk is ever converted to float.  Working memory:
    one key per record (8 bytes up to 56 bits a row, ``W/8 + 1`` beyond) and
    the table.
    """
    keys, counts = count_keys(_keys(X, np.asarray(y01, dtype=np.uint8), to_bins, layout), owned=True)
    return BinnedTable.from_pattern_table(table_from_keys(keys, counts, layout.n_bits), layout)


#: Rows binned to estimate how often rows repeat (:func:`binned_rows`).
SAMPLE_ROWS = 1 << 14


def binned_rows(X, y01, to_bins, n_cuts, *, group: bool | None = None) -> Binned:
    """The in-memory table of a learner that reads only exact sums (Newton boosting): linear in the rows.

    The records are binned once, in order, to their compact codes
    (:class:`~dpglass.models.gbdt.hist.Codes`: an eighth of a 0/1 uint8
    input).  When they are distinct enough -- at least nine in ten of a
    strided sample of :data:`SAMPLE_ROWS` rows are distinct -- the entries are
    the records themselves with count 1 (no sort, no key per record);
    otherwise the distinct (codes row, label) pairs with their counts (a sort
    of one key per record, :func:`~dpglass.aggregates.count_keys`, repaid by
    passes over fewer entries).  Both give every statistic exactly the same
    sums, so the same model: the choice is speed and memory, not privacy (it
    reads the data, and nothing about it is released or changes the result).
    ``group`` True or False makes the choice instead of the sample.
    """
    n_cuts = np.asarray(n_cuts, dtype=np.int64)
    y01 = np.asarray(y01, dtype=np.uint8)
    n = X.shape[0]
    codes = Codes.empty(n, n_cuts)
    for s, B in _bins(X, to_bins):
        codes.put(s, B)
    if group is None:
        sample = np.arange(0, n, max(1, n // SAMPLE_ROWS))
        # every pass of the fit (about (depth + 2) per tree) reads one row per entry: a tenth fewer entries
        # repays the sort (the sample overstates how distinct the rows are: repeats are rarer in a sample)
        group = 10 * np.unique(_code_keys(codes.data[sample], y01[sample])).size < 9 * sample.size
    if not group:
        return Binned(codes, n_cuts, y01, np.broadcast_to(np.int64(1), (n,)))
    width = codes.data.shape[1]
    keys, counts = count_keys(_code_keys(codes.data, y01), owned=True)
    del codes
    table = table_from_keys(keys, counts, 8 * width)  # its packed rows are the codes' bytes
    return Binned(Codes(table.packed, n_cuts), n_cuts, table.labels, table.counts)


def _code_keys(data: np.ndarray, y01: np.ndarray) -> np.ndarray:
    """One sortable key per row of codes (:attr:`~dpglass.models.gbdt.hist.Codes.data`): its bytes, then its label
    (:func:`~dpglass.aggregates.encode_keys` of the rows' bits)."""
    n_bits = 8 * data.shape[1]
    keys = np.empty(data.shape[0], dtype=key_dtype(n_bits))
    for s in range(0, data.shape[0], PASS_ROWS):
        keys[s : s + PASS_ROWS] = encode_keys(np.unpackbits(data[s : s + PASS_ROWS], axis=1),
                                              y01[s : s + PASS_ROWS], n_bits)
    return keys


# ----------------------------------------------------------------------- Dask
@dataclass(frozen=True)
class PartitionBinning:
    """What a worker needs to check and bin one partition: all public (or already released)."""

    columns: tuple
    bounds: tuple
    edges: tuple
    n_cuts: tuple
    owner: str
    categories: tuple = ()  # dp-gam: per feature None or m (codes 0..m-1); () for none
    missing: tuple = ()  # dp-gam: per feature True when NaN has its own bin; () for none

    def matrix(self, part, index: int) -> np.ndarray:
        """The partition's feature columns as float64 (r, d), checked; errors name the partition and column."""
        from dpglass.aggregates.dask_backend import partition_label

        where = partition_label(index)
        X = np.empty((len(part), len(self.columns)), dtype=np.float64)
        for j, c in enumerate(self.columns):
            if c not in part.columns:
                raise DataValidationError(f"{where}: column {c!r} is missing (X has {len(self.columns)} feature "
                                          f"columns; this partition has {list(part.columns)!r}).")
            if part[c].isna().any() and not (self.missing and self.missing[j]):
                raise DataValidationError(
                    f"{where}: column {c!r} has missing values. {self.owner} has no missing-value policy: impute "
                    "with a public value (for example the middle of the column's bounds) or drop the rows first.")
            try:
                X[:, j] = part[c].to_numpy()
            except (TypeError, ValueError):
                raise DataValidationError(f"{where}: column {c!r} is not numeric (dtype {part[c].dtype}); "
                                          f"{self.owner} takes numeric columns with public bounds and 0/1 "
                                          "columns.") from None
            col = X[:, j]
            if np.isinf(col).any():  # NaN was caught above (or is declared missing)
                raise DataValidationError(f"{where}: column {c!r} has infinite values; clip them to the column's "
                                          "public bounds first.")
            if self.bounds[j] is None and not (self.categories and self.categories[j] is not None):
                ok = (col == 0) | (col == 1) | np.isnan(col)
                if not ok.all():
                    raise DataValidationError(
                        f"{where}: column {c!r} has the value {col[~ok][0]:g} but no bounds. Pass bounds=[...] "
                        f"with a public (low, high) for column {j} ({c!r}; values outside are clipped), or None "
                        "for 0/1 columns.")
        return X

    def bits(self, part, partition_info=None):
        """``map_partitions`` body: the partition's bin codes as a DataFrame of ``W`` 0/1 uint8 columns."""
        import pandas as pd

        index = partition_info["number"] if partition_info else 0
        B = apply_bins(self.matrix(part, index), list(self.bounds), list(self.edges), self.owner,
                       list(self.categories) or None, list(self.missing) or None)
        layout = BitLayout(self.n_cuts)
        return pd.DataFrame(layout.expand(B), columns=_bit_names(layout.n_bits), index=part.index)

    def grid_counts(self, part, index: int, numeric: tuple, grid_cells: int):
        """``(below, n)``: per numeric column, the records of the partition below every quantile grid point."""
        from dpglass.privacy.quantile import grid_counts

        X = self.matrix(part, index)
        below = np.stack([grid_counts(X[:, j], self.bounds[j], grid_cells) for j in numeric]) if numeric else \
            np.zeros((0, grid_cells + 1), dtype=np.int64)
        return below, int(X.shape[0])


def _bit_names(n_bits: int) -> list:
    return [f"__dpglass_bit{k}__" for k in range(n_bits)]


def dask_binned_table(X, y, binning: PartitionBinning, *, classes=None) -> tuple[BinnedTable, list]:
    """``(table, classes)`` of a dask DataFrame ``X`` and Series ``y``: binned on the workers, merged on the cluster.

    Each partition is checked and binned to its bit rows by ``binning`` (a
    :class:`~dpglass.exceptions.DataValidationError` naming the partition and
    the column otherwise), then reduced, merged by key range and brought back
    by :func:`dpglass.aggregates.dask_backend.pattern_table` (its retries,
    fault handling and progress bar included).
    """
    import pandas as pd

    from dpglass.aggregates import dask_backend

    layout = BitLayout(binning.n_cuts)
    names = _bit_names(layout.n_bits)
    meta = pd.DataFrame({c: pd.Series(dtype=np.uint8) for c in names})
    bits = X.map_partitions(binning.bits, meta=meta)
    table = dask_backend.pattern_table(bits, y, classes=classes)
    return BinnedTable.from_pattern_table(table, layout), list(table.classes)


def _binned_part(table: PatternTable, layout: BitLayout, n_cuts: np.ndarray) -> Binned:
    """A worker's part as the learners read it: its bin codes decoded from the key bits a chunk at a time, read in
    a worker's chunks (:func:`~dpglass.models.gbdt.hist.worker_pass_rows`: the same sums, faster under Dask's
    malloc settings)."""
    codes = Codes.empty(table.n_entries, n_cuts, worker=True)
    for s in range(0, table.n_entries, PASS_ROWS):
        codes.put(s, layout.collapse(table.unpack(slice(s, s + PASS_ROWS))))
    return Binned(codes, n_cuts, table.labels, table.counts)


def dask_binned_parts(X, y, binning: PartitionBinning, n_cuts, *, classes=None) -> tuple:
    """``(parts, records, classes)``: the binned table of dask ``X``, ``y`` left on the workers as
    :class:`~dpglass.models.gbdt.fit.Binned` parts (:mod:`dpglass.aggregates.parts`; without a ``distributed``
    client, one local part), binned and merged as :func:`dask_binned_table` does."""
    import pandas as pd

    from dpglass.aggregates import dask_backend

    layout = BitLayout(binning.n_cuts)
    meta = pd.DataFrame({c: pd.Series(dtype=np.uint8) for c in _bit_names(layout.n_bits)})
    bits = X.map_partitions(binning.bits, meta=meta)
    table = dask_backend.pattern_table(bits, y, classes=classes, keep=True)
    parts = table_parts(table).map(_binned_part, layout, np.asarray(n_cuts, dtype=np.int64))
    return parts, table.n_records, list(table.classes)


def _add_counts(*parts):
    below = parts[0][0].copy()
    n = parts[0][1]
    for b, k in parts[1:]:
        below += b
        n += k
    return below, n


def dask_grid_counts(X, binning: PartitionBinning, numeric: list, grid_cells: int, *, retries: int = 2):
    """``(below, n)`` over all partitions: ``below[i, k]`` records of numeric column ``numeric[i]`` below grid point k.

    Exact integer sums, taken on the cluster (a tree of fan-in
    :data:`~dpglass.aggregates.dask_backend.FAN_IN`); only the sums come back.
    """
    import dask

    from dpglass.aggregates import dask_backend

    n = X.npartitions
    numeric = tuple(int(j) for j in numeric)
    reduce = dask.delayed(binning.grid_counts, pure=True)
    parts = [reduce(part, i, numeric, grid_cells) for i, part in enumerate(X.to_delayed())]
    client = dask_backend._client()
    try:
        if client is None:
            try:
                return dask.compute(_sum_tree(parts, dask_backend._delayed_submit))[0]
            except (DataValidationError, MemoryError):
                raise
            except Exception:
                dask_backend.raise_first_failure(parts, n)
                raise
        from distributed import wait

        futures = client.compute(parts, retries=retries)
        wait(futures)
        for i, f in enumerate(futures):
            if f.status == "error":
                exc = f.exception()
                raise dask_backend._partition_error(i, n, exc) from exc
        submit = lambda fn, *a: client.submit(fn, *a, retries=retries, pure=True)  # noqa: E731
        return _sum_tree(futures, submit).result()
    except DataValidationError:
        raise
    except Exception as exc:
        if dask_backend._lost(exc):
            raise dask_backend.DistributedFitError(
                f"The Dask cluster could not count the partitions for the quantile bins ({type(exc).__name__}). "
                "No model was fitted: rerun the fit (the result will be the same), or raise distributed's "
                "allowed-failures / retries if workers are being lost.") from exc
        raise


def _sum_tree(parts, submit):
    from dpglass.aggregates.dask_backend import FAN_IN

    while len(parts) > 1:
        parts = [submit(_add_counts, *parts[i : i + FAN_IN]) for i in range(0, len(parts), FAN_IN)]
    return parts[0]


class DaskData:
    """Dask ``X`` and ``y`` of a fit: the public column list, checked on the client; the aggregates, on the cluster."""

    def __init__(self, X, y, columns, classes):
        self.X, self.y, self.columns, self.classes = X, y, columns, classes

    @classmethod
    def check(cls, estimator, X, y) -> "DaskData":
        """Check what the client knows without reading data (types, columns); set ``n_features_in_`` and names."""
        from dpglass.aggregates import dask_backend, is_distributed

        dask_backend._require_dask()
        if y is None:
            raise DataValidationError("This classifier requires y to be passed, but the target y is None.")
        if not (is_distributed(X) and is_distributed(y)):
            raise DataValidationError("X and y must both be dask collections (or both in memory).")
        if not hasattr(X, "columns"):
            raise DataValidationError(f"X must be a dask DataFrame (one column per feature), not a dask "
                                      f"{type(X).__name__}.")
        columns = list(X.columns)
        if not columns:
            raise DataValidationError("X has no feature columns.")
        estimator.n_features_in_ = len(columns)
        if all(isinstance(c, str) for c in columns):
            estimator.feature_names_in_ = np.asarray(columns, dtype=object)
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        declared = estimator.__dict__.get("_schema_classes")
        if declared is None:
            declared = estimator.classes
        # the label set first (a pass over the labels when it is not declared): the plan needs K
        classes = dask_backend._classes(y, declared)
        estimator.classes_ = np.asarray(classes)
        return cls(X, y, columns, classes)

    def _binning(self, estimator, edges):
        missing = getattr(estimator, "missing_", None)  # dp-gam: declared missing columns have a NaN bin
        n_cuts = tuple(int(e.size) + (1 if missing and missing[j] else 0) for j, e in enumerate(edges))
        return PartitionBinning(tuple(self.columns), tuple(estimator.bounds_), tuple(edges), n_cuts,
                                type(estimator).__name__, tuple(getattr(estimator, "categories_", None) or ()),
                                tuple(missing or ()))

    def grid_counts(self, estimator, numeric: list, grid_cells: int):
        no_edges = [np.array([0.5])] * len(self.columns)  # not known yet, and counting does not bin
        return dask_grid_counts(self.X, self._binning(estimator, no_edges), numeric, grid_cells)

    def parts(self, estimator, n_cuts):
        """The binned table's parts, left on the workers (sets ``classes_``).  An empty table is returned as any
        other: without a declared label set :meth:`check` has refused empty labels already, so whether fit
        succeeds does not depend on n."""
        parts, _, classes = dask_binned_parts(self.X, self.y, self._binning(estimator, estimator.edges_), n_cuts,
                                              classes=self.classes)
        estimator.classes_ = np.asarray(classes)
        return parts

    def table(self, estimator):
        """The binned pattern table (sets ``classes_``); empty as :meth:`parts` may be."""
        table, classes = dask_binned_table(self.X, self.y, self._binning(estimator, estimator.edges_),
                                           classes=self.classes)
        estimator.classes_ = np.asarray(classes)
        return table
