"""Where the teachers learn: every part of the pattern table draws its own records' teachers, and each teacher
is fitted where its records are.

One code path, in memory (one part: the local table) and on a Dask cluster
(the table's parts persisted on the workers, :mod:`dpglass.aggregates.parts`):

1. :class:`TeacherPart` (``parts.map``): each part draws the teacher of every
   one of its records in every partition by the keyed split
   (:func:`dpglass.privacy.splits.keyed_parts`: a function of the public
   seeds and of the record itself, never of where its entry is), and counts
   each teacher's records of each of its entries (:func:`teacher_parts`).
2. :func:`teacher_weights`: the teachers are cut into groups; a group's task
   takes its teachers' sub-tables from every part (worker to worker), sorts
   each teacher's entries by key (the in-memory table's order) and fits it
   (:func:`~dpglass.models.teachers.learners.fit_teacher`).  The client gets
   the weights only: ``(teachers, d + 1)`` floats, never entries.
3. DP-Bag's accountant (:func:`dpbag_queries`) needs every record's teachers:
   each part returns, per public query, the largest moment of its records
   (:meth:`TeacherPart.worst`), and the client takes the maximum (exact).

Every result is a function of the part and of the arguments alone (a part's
state may cache work between steps, keyed by what it depends on), so a
worker that dies and has its parts recomputed from the files gives the same
teachers, and the Dask model equals the in-memory one bit for bit.
"""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp

from dpglass.aggregates import PatternTable, count_keys
from dpglass.aggregates.parts import TableParts
from dpglass.models.teachers.learners import _votes, fit_teacher, vote_histograms
from dpglass.models.teachers.plan import dpbag_epsilon
from dpglass.privacy.splits import entry_hashes, keyed_parts, part_seeds

__all__ = ["TeacherPart", "assign_records", "dpbag_queries", "teacher_parts", "teacher_states", "teacher_weights"]

#: Records assigned at a time when the teachers' parts are counted (memory: a few int64 per record).
_ASSIGN_BLOCK = 1 << 20
#: Public records whose teacher votes are computed at once (memory: rows x teachers booleans).
_BLOCK = 256


def assign_records(table, n_teachers: int, n_partitions: int, rng) -> np.ndarray:
    """``(n_partitions, records)``: the teacher of every record of ``table`` in every partition.

    The records are the table's, entry by entry in its key order (the ``c``
    records of an entry are interchangeable: they are numbered ``0..c-1``).
    The seeds of the keyed split (:func:`~dpglass.privacy.splits.keyed_parts`)
    are drawn from ``rng``; the teacher of a record is then a function of the
    seeds and of the record itself (docs/privacy.md, teacher ensembles).
    """
    return _assignment(table, part_seeds(n_partitions, rng), n_teachers)


def _assignment(table, seeds: np.ndarray, n_teachers: int) -> np.ndarray:
    return keyed_parts(entry_hashes(table.packed, table.labels), table.counts, int(n_teachers), seeds)


def teacher_parts(table, assignment: np.ndarray, n_teachers: int) -> sp.csr_matrix:
    """``(n_partitions * n_teachers, entries)``: how many records of each table entry each teacher learns from.

    Teacher ``p * n_teachers + t`` gets the records with ``assignment[p] == t``.
    """
    k, n = assignment.shape
    m = table.n_entries
    ends = np.cumsum(table.counts)
    keys, counts = [], []
    for p in range(k):
        for start in range(0, n, _ASSIGN_BLOCK):
            stop = min(start + _ASSIGN_BLOCK, n)
            entry = np.searchsorted(ends, np.arange(start, stop), side="right")  # the entry of each record
            teacher = assignment[p, start:stop].astype(np.int64) + p * n_teachers
            kk, cc = count_keys(teacher * m + entry, owned=True)
            keys.append(kk)
            counts.append(cc)
    if keys:  # an entry cut by a block boundary appears twice: merge
        kk, cc = count_keys(np.concatenate(keys), np.concatenate(counts))
    else:
        kk, cc = np.zeros(0, np.int64), np.zeros(0, np.int64)
    parts = sp.csr_matrix((cc.astype(np.float64), (kk // max(m, 1), kk % max(m, 1))), shape=(k * n_teachers, m))
    parts.sort_indices()
    return parts


def _membership(assignment: np.ndarray, n_teachers: int) -> sp.csr_matrix:
    """``(records, teachers)`` with ``1/k`` where a record is in a teacher's part (k = partitions)."""
    k, n = assignment.shape
    cols = (assignment.astype(np.int64) + (np.arange(k) * n_teachers)[:, None]).T.ravel()
    rows = np.repeat(np.arange(n), k)
    return sp.csr_matrix((np.full(n * k, 1.0 / k), (rows, cols)), shape=(n, k * n_teachers))


def _record_shares(M: sp.csr_matrix, V: np.ndarray, n_classes: int) -> np.ndarray:
    """``m_i(x)``, ``(records, queries)``: the largest share of record i's teachers voting for one class.

    The shares of classes ``1..K-1`` are counted, the first's is 1 minus their
    sum (for two classes ``max(share, 1 - share)``, as the paper writes it).
    """
    shares = [np.asarray(M @ (V == c).T.astype(np.float64)) for c in range(1, int(n_classes))]
    total = shares[0]
    for other in shares[1:]:
        total = total + other
    m = np.maximum(shares[0], 1.0 - total)
    for other in shares[1:]:
        m = np.maximum(m, other)
    return m


class TeacherPart:
    """One part of the table with its records' teachers (``seeds``: one a partition) and their counts."""

    def __init__(self, table, seeds: np.ndarray, n_teachers: int):
        self.table = table
        self.n_teachers = int(n_teachers)
        self.assignment = _assignment(table, seeds, n_teachers)
        self.counts = teacher_parts(table, self.assignment, n_teachers)
        self._members = None
        self._running = {}  # DP-Bag's per-record moments after a prefix of queries, keyed by that prefix

    def sub_table(self, t: int) -> tuple:
        """Teacher ``t``'s entries of this part: ``(packed rows, labels, record counts)``."""
        a, b = self.counts.indptr[t], self.counts.indptr[t + 1]
        rows = self.counts.indices[a:b]
        return self.table.packed[rows], self.table.labels[rows], self.counts.data[a:b]

    def sub_tables(self, lo: int, hi: int) -> list:
        """Teachers ``lo..hi-1``'s entries of this part (:meth:`sub_table` each)."""
        return [self.sub_table(t) for t in range(lo, hi)]

    def _moments(self, V: np.ndarray, running: np.ndarray, n_classes: int) -> np.ndarray:
        if self._members is None:
            self._members = _membership(self.assignment, self.n_teachers)
        m2 = _record_shares(self._members, V, n_classes) ** 2  # (records, queries)
        return running[:, None] + np.cumsum(m2, axis=1)

    def worst(self, V: np.ndarray, start: int, n_classes: int) -> np.ndarray:
        """The largest of this part's records' moments after each query ``start..len(V)-1`` of the votes ``V``.

        A record's moment after query ``q`` is ``sum_{q' <= q} m_i(x_q')^2``
        (the paper's), summed block by block of :data:`_BLOCK` queries (the
        same floats whatever part holds the record).  Zeros if no records.
        """
        running = self._running.get(_digest(V[:start]))
        if running is None:  # a new (or recomputed) part: replay the earlier blocks
            running = np.zeros(self.assignment.shape[1])
            for a in range(0, start, _BLOCK):
                running = self._moments(V[a:min(a + _BLOCK, start)], running, n_classes)[:, -1]
        cumulative = self._moments(V[start:], running, n_classes)
        self._running = {_digest(V): cumulative[:, -1]} if cumulative.shape[1] else self._running
        return cumulative.max(axis=0) if cumulative.shape[0] else np.zeros(cumulative.shape[1])


def _digest(V: np.ndarray) -> bytes:
    return hashlib.blake2b(repr(V.shape).encode() + np.ascontiguousarray(V).tobytes(), digest_size=16).digest()


def _worst(part: TeacherPart, V, start, n_classes):
    return part.worst(V, start, n_classes)


def _sub_tables(part: TeacherPart, lo: int, hi: int) -> list:
    return part.sub_tables(lo, hi)


def teacher_states(parts: TableParts, seeds: np.ndarray, n_teachers: int) -> TableParts:
    """Every part's :class:`TeacherPart`, built where the part is."""
    return parts.map(TeacherPart, np.asarray(seeds, dtype=np.uint64), int(n_teachers))


def fit_group(lo: int, hi: int, n_features: int, n_classes: int, alpha: float, *subs) -> np.ndarray:
    """The weights of teachers ``lo..hi-1`` from their sub-tables in every part (``subs``: one a part, the list
    of :meth:`TeacherPart.sub_tables`, or in memory the :class:`TeacherPart` itself, read one teacher at a time).

    A teacher's entries are put in key order (bytes of the packed row, then the
    label: the order of the whole table), so that its fit is the same floats
    whichever parts its entries come from.
    """
    from threadpoolctl import threadpool_limits

    B = (int(n_features) + 7) // 8
    W = []
    with threadpool_limits(1):  # thousands of small solves: threads only contend
        for i in range(hi - lo):
            pieces = [s.sub_table(lo + i) if isinstance(s, TeacherPart) else s[i] for s in subs]
            packed = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros((0, B), np.uint8)
            labels = np.concatenate([p[1] for p in pieces]) if pieces else np.zeros(0, np.uint8)
            counts = np.concatenate([p[2] for p in pieces]) if pieces else np.zeros(0)
            order = np.lexsort([labels] + [packed[:, j] for j in reversed(range(B))])
            W.append(fit_teacher(PatternTable(packed[order], labels[order], counts[order], int(n_features)),
                                 n_classes, alpha))
    return np.stack(W)


def teacher_weights(states: TableParts, n_total: int, n_features: int, n_classes: int, alpha: float) -> np.ndarray:
    """The weights of the ``n_total`` teachers: ``(teachers, d + 1)`` for two classes, ``(teachers, K, d + 1)``.

    In memory one group of all teachers; on a cluster as many groups as parts
    (each fitted by one task that pulls its teachers' sub-tables from every
    part); the client receives the weights only.
    """
    args = (int(n_features), int(n_classes), float(alpha))
    if not states.distributed:
        return fit_group(0, n_total, *args, *states.parts)  # one teacher's sub-table at a time
    client, retries = states.client, states.retries
    edges = np.linspace(0, n_total, min(n_total, len(states.parts)) + 1).astype(int)
    futures = []
    for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist()):
        subs = [client.submit(_sub_tables, s, lo, hi, pure=True, retries=retries) for s in states.parts]
        futures.append(client.submit(fit_group, lo, hi, *args, *subs, pure=True, retries=retries))
    return np.concatenate(states.gather(futures))


def dpbag_queries(states: TableParts, W, X_pub, n_teachers, *, epsilon, delta, noise_scale, cap, n_classes=2):
    """How many public records DP-Bag labels, and their raw vote histograms ``(queries, K)``.

    Queries ``X_pub[0], X_pub[1], ...`` are taken in turn while the paper's
    epsilon-hat (:func:`dpbag_epsilon`) after them stays at most ``epsilon``
    (the authors' code answers one query past that point; we do not), at
    most ``cap`` of them.  ``m_i(x)`` is the largest of the shares of record
    i's ``k`` teachers that vote for each of the ``K`` classes; every part
    returns its records' largest moments (:meth:`TeacherPart.worst`).
    Data-dependent: this is the paper's claim, not a proven bound.
    """
    V = np.zeros((0, W.shape[0]), dtype=bool if W.ndim == 2 else np.uint8)
    counts = []
    for start in range(0, min(cap, X_pub.shape[0]), _BLOCK):
        V = np.concatenate([V, _votes(W, X_pub[start:min(start + _BLOCK, cap)])])
        worst = np.max(np.stack(states.results(_worst, V, start, int(n_classes))), axis=0)
        over = np.flatnonzero(dpbag_epsilon(worst, noise_scale, delta) > epsilon * (1 + 1e-12))
        stop = int(over[0]) if over.size else V.shape[0] - start
        counts.append(vote_histograms(V[start:start + stop], n_classes))
        if over.size:
            break
    counts = np.concatenate(counts) if counts else np.zeros((0, int(n_classes)), dtype=np.int64)
    return counts.shape[0], counts
