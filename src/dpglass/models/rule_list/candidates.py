"""Candidate rules and their counts, computed on sufficient statistics.

A candidate is a conjunction of up to ``max_card`` literals over binary
features; a literal tests ``x_j = 1`` or (with negations) ``x_j = 0``.  The set
is built from the schema alone (data-independent, so it costs no budget).

Counting works on the distinct rows of the training data with their counts
of each of the K classes (``PatternTable.by_class``).  For conjunctions of at
most two literals every candidate's caught count of class k comes from one
Gram matrix ``U.T @ diag(w_k) @ U`` of the positive literals, by
inclusion-exclusion for the negated ones; when a rule is added, the rows it
catches are subtracted from the Gram matrices, so a whole greedy run costs
about one Gram product.  Longer conjunctions are counted in chunks of
candidates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

from dpglass.aggregates import PackedRows, pattern_table
from dpglass.aggregates.parts import table_parts
from dpglass.exceptions import InvalidParameterError

__all__ = [
    "CandidateSet",
    "SufficientStats",
    "CountCache",
    "PartCounts",
    "count_candidates",
    "build_candidates",
    "MAX_CANDIDATES",
]

#: Refuse candidate sets larger than this (memory: ~100 bytes per candidate and step, and 8 bytes more per
#: candidate, class and step beyond two classes).
MAX_CANDIDATES = 5_000_000
#: Count pairwise (one d x d Gram matrix a class) while K * d**2 is at most this (2 GiB of float64 at most);
#: beyond, count candidates by chunks of rows.
MAX_GRAM_ENTRIES = 2**28
#: The widest product a Gram update takes (columns: d a class): bounds its working memory for many classes.
GRAM_COLUMNS = 4096


def count_candidates(n_features: int, max_card: int, allow_negations: bool) -> int:
    """Number of non-contradictory conjunctions of 1..max_card literals."""
    per = 2 if allow_negations else 1
    return sum(math.comb(n_features, k) * per**k for k in range(1, max_card + 1))


@dataclass(frozen=True)
class CandidateSet:
    """Conjunctions as arrays of literal ids.

    ``literals`` has shape (n_candidates, max_card); entry ``2*j`` means
    ``x_j = 1``, ``2*j + 1`` means ``x_j = 0``, and ``-1`` pads shorter rules.
    """

    literals: np.ndarray
    n_features: int

    def __len__(self) -> int:
        return self.literals.shape[0]

    @property
    def max_card(self) -> int:
        return self.literals.shape[1]

    def conditions(self, index: int) -> tuple[tuple[int, bool], ...]:
        """The literals of candidate ``index`` as (feature, value) pairs."""
        return tuple((int(l) // 2, int(l) % 2 == 0) for l in self.literals[index] if l >= 0)


def build_candidates(n_features: int, max_card: int, allow_negations: bool, rules=None) -> CandidateSet:
    """All conjunctions of up to ``max_card`` literals, or the user's ``rules``.

    Parameters
    ----------
    rules : sequence of sequences of (feature_index, value) or None
        A fixed candidate list; ``value`` True tests ``x = 1``, False ``x = 0``.

    Raises
    ------
    InvalidParameterError
        If the set would have more than :data:`MAX_CANDIDATES` members.
    """
    if rules is not None:
        width = max((len(r) for r in rules), default=1)
        lit = np.full((len(rules), width), -1, dtype=np.int64)
        seen = set()
        for i, rule in enumerate(rules):
            if len(rule) == 0:
                raise InvalidParameterError(f"Candidate rule {i} is empty; a rule needs at least one literal.")
            key = []
            for j, (feature, value) in enumerate(rule):
                if not 0 <= int(feature) < n_features:
                    raise InvalidParameterError(
                        f"Candidate rule {i} tests feature {feature}, but X has {n_features} features."
                    )
                lit[i, j] = 2 * int(feature) + (0 if value else 1)
                key.append(lit[i, j])
            feats = [k // 2 for k in key]
            if len(set(feats)) != len(feats):
                raise InvalidParameterError(f"Candidate rule {i} tests one feature twice: {rule!r}.")
            key = tuple(sorted(key))
            if key in seen:
                raise InvalidParameterError(f"Candidate rule {i} is a duplicate: {rule!r}.")
            seen.add(key)
        return CandidateSet(lit, n_features)

    total = count_candidates(n_features, max_card, allow_negations)
    if total > MAX_CANDIDATES:
        raise InvalidParameterError(
            f"{n_features} features with max_card={max_card} and allow_negations={allow_negations} "
            f"give {total:,} candidate rules (about {total * 100 / 2**30:.1f} GiB of working memory); "
            f"the limit is {MAX_CANDIDATES:,}. Lower max_card, drop features, or pass a fixed "
            "candidate list with candidates=."
        )
    return CandidateSet(_all_conjunctions(n_features, max_card, allow_negations), n_features)


@lru_cache(maxsize=32)
def _all_conjunctions(n_features: int, max_card: int, allow_negations: bool) -> np.ndarray:
    """Literal ids of every conjunction, by size then feature order (read-only, cached)."""
    values = np.array([0, 1] if allow_negations else [0], dtype=np.int64)
    blocks = []
    for k in range(1, min(max_card, n_features) + 1):
        feats = np.array(list(combinations(range(n_features), k)), dtype=np.int64).reshape(-1, k)
        offs = np.array(np.meshgrid(*[values] * k, indexing="ij")).reshape(k, -1).T  # (2^k, k)
        lits = (2 * feats[:, None, :] + offs[None, :, :]).reshape(-1, k)
        blocks.append(np.pad(lits, ((0, 0), (0, max_card - k)), constant_values=-1))
    out = np.concatenate(blocks) if blocks else np.empty((0, max_card), dtype=np.int64)
    out.setflags(write=False)
    return out


def _pair_plan(i: np.ndarray, j: np.ndarray, d: int):
    """Where to read each candidate's count in a flattened d x d Gram matrix, and how.

    A candidate is the literal pair (i, j) (i == j for a single literal); the
    count of records satisfying both is, with G the Gram matrix of the
    positive literals and T the total: G[fi,fj] (x_fi = x_fj = 1),
    G[fj,fj] - G[fi,fj] (x_fi = 0, x_fj = 1), G[fi,fi] - G[fi,fj] (x_fi = 1,
    x_fj = 0), T - G[fi,fi] - G[fj,fj] + G[fi,fj] (both 0); a single literal is
    G[f,f] or T - G[f,f].  Returns the flat indices of G[fi,fj], G[fi,fi],
    G[fj,fj] and the float64 coefficients (4, n_candidates) of the three and T.
    """
    fi, fj = i // 2, j // 2
    ni, nj = i % 2 == 1, j % 2 == 1
    single = fi == fj
    coef = np.empty((4, len(i)))
    #            (negated i, negated j): coefficients of G[fi,fj], G[fi,fi], G[fj,fj], T
    for (neg_i, neg_j), c in {(False, False): (1, 0, 0, 0), (True, False): (-1, 0, 1, 0),
                              (False, True): (-1, 1, 0, 0), (True, True): (1, -1, -1, 1)}.items():
        coef[:, (ni == neg_i) & (nj == neg_j) & ~single] = np.array(c, dtype=float)[:, None]
    coef[:, single & ~ni] = np.array([0.0, 1.0, 0.0, 0.0])[:, None]  # G[f,f]
    coef[:, single & ni] = np.array([0.0, -1.0, 0.0, 1.0])[:, None]  # T - G[f,f]
    return fi * d + fj, fi * (d + 1), fj * (d + 1), coef


class SufficientStats:
    """Distinct rows of (X, y) with their counts of each class, and candidate counting.

    Parameters
    ----------
    X : ndarray of uint8, shape (n, d), or a :class:`~dpglass.aggregates.PatternTable`
    y : ndarray of uint8, shape (n,), class codes 0..K-1 (ignored with a PatternTable)
    candidates : CandidateSet
    n_classes : int, default=2
        K, the number of declared classes (public: a class may hold no record).

    Attributes
    ----------
    W : ndarray of float64, shape (distinct rows, K)
        The records of each distinct row in each class (never modified).
    alive : ndarray of bool
        The distinct rows not yet caught by a rule.
    """

    def __init__(self, X, y, candidates: CandidateSet, n_classes: int = 2):
        # the seam: distinct rows with class counts, from numpy arrays or a dask DataFrame (dpglass.aggregates)
        table = pattern_table(X, y)
        packed, self.W = table.by_class(n_classes)
        self._packed = PackedRows(packed, table.n_features)  # bit-packed: d/8 bytes a distinct row
        m, d = self._packed.n_rows, table.n_features
        del table, packed
        self.n_classes = int(n_classes)
        self.candidates = candidates
        self.alive = np.ones(m, dtype=bool)
        self._cover_cache: dict = {}
        # one d x d Gram matrix a class: pairwise counting while they fit in MAX_GRAM_ENTRIES
        self._pairwise = candidates.max_card <= 2 and self.n_classes * d * d <= MAX_GRAM_ENTRIES
        if self._pairwise:
            self._G = self._grams()
            lit = candidates.literals
            i = lit[:, 0]
            j = np.where(lit[:, 1] >= 0, lit[:, 1], lit[:, 0]) if lit.shape[1] > 1 else lit[:, 0]
            self._pair_plan = _pair_plan(i, j, d)

    def _grams(self, index: np.ndarray | None = None) -> np.ndarray:
        """``G[k] = U.T diag(W[:, k]) U`` for each class k over the distinct rows ``index`` (default all), shape
        (K, d, d), a chunk of rows (and of classes) at a time.

        Entries are integer counts: a chunk's product is taken in float32 when
        its records number below 2**24 (every partial sum is then an exact
        integer), and the chunks are added in float64 (exact below 2**53), so
        the counts are exact whatever the chunking or the number of records.
        """
        d, K = self._packed.n_features, self.n_classes
        G = np.zeros((K, d, d))
        step = max(1, GRAM_COLUMNS // max(d, 1))  # classes a product: at most GRAM_COLUMNS columns
        for at, U in self._packed.chunks(index):
            W = self.W[at]
            dtype = np.float32 if float(W.sum()) < 2**24 else np.float64
            U = U.astype(dtype)
            for k0 in range(0, K, step):
                ks = range(k0, min(k0 + step, K))
                block = np.concatenate([U * W[:, k, None].astype(dtype) for k in ks], axis=1).T @ U
                G[k0 : ks.stop] += block.reshape(len(ks), d, d)
        return G

    @property
    def rows(self) -> np.ndarray:
        """The distinct rows, unpacked (uint8, a full copy: the statistics keep them bit-packed)."""
        return self._packed.unpack()

    def copy(self) -> "SufficientStats":
        """An independent copy of the mutable state (alive rows, Gram matrices).

        The distinct rows, their class counts and the candidates are shared
        (they are never modified), so a copy costs about K Gram matrices.
        """
        new = object.__new__(SufficientStats)
        new.__dict__.update(self.__dict__)
        new.alive = self.alive.copy()
        if self._pairwise:
            new._G = self._G.copy()
        return new

    # ----------------------------------------------------------------- totals
    def remaining_counts(self) -> np.ndarray:
        """The remaining records of each class, shape (K,) (exact integers in float64)."""
        return np.array([float(self.W[self.alive, k].sum()) for k in range(self.n_classes)])

    def remaining(self) -> tuple[float, ...]:
        """The remaining records of each class, in class order (for two classes: negatives, positives)."""
        return tuple(float(v) for v in self.remaining_counts())

    # ------------------------------------------------------------------ counts
    def class_counts(self) -> np.ndarray:
        """Caught records of each class for every candidate on the remaining records, shape (K, candidates)."""
        if self._pairwise:
            return np.stack([self._pair_counts(self._G[k], self.W[:, k]) for k in range(self.n_classes)])
        return self._chunked_counts()

    def caught_counts(self) -> tuple[np.ndarray, ...]:
        """Caught records of each class (one array per class, in class order) of every candidate."""
        return tuple(self.class_counts())

    def _pair_counts(self, G: np.ndarray, w: np.ndarray) -> np.ndarray:
        # inclusion-exclusion over negations: count = b*G[fi,fj] + i*G[fi,fi] + j*G[fj,fj] + t*total
        # with integer coefficients per candidate (see _pair_plan); exact in float64
        both_at, i_at, j_at, coef = self._pair_plan
        flat = G.ravel()
        total = float(w[self.alive].sum())
        out = coef[0] * flat[both_at] + coef[1] * flat[i_at] + coef[2] * flat[j_at] + coef[3] * total
        return np.rint(out) + 0.0  # + 0.0: no negative zeros

    def _chunked_counts(self, chunk: int = 1024) -> np.ndarray:
        # blocks of rows x candidates; the counts are integers, exact in float64 whatever the blocking
        lit = self.candidates.literals
        alive = np.flatnonzero(self.alive)
        C = np.zeros((self.n_classes, len(lit)))
        for at, rows in self._packed.chunks(alive):
            rows = rows.astype(bool)
            W = self.W[at]
            for s in range(0, len(lit), chunk):
                block = lit[s : s + chunk]
                cover = np.ones((rows.shape[0], block.shape[0]), dtype=bool)
                for col in range(block.shape[1]):
                    ids = block[:, col]
                    valid = ids >= 0
                    test = rows[:, ids // 2] == (ids % 2 == 0)
                    cover &= test | ~valid
                C[:, s : s + chunk] += W.T @ cover
        return C

    # ---------------------------------------------------------------- updates
    def covers(self, index: int, rows: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of the given rows (default: distinct rows) caught by candidate ``index``."""
        mask = np.ones(self._packed.n_rows if rows is None else rows.shape[0], dtype=bool)
        for feature, value in self.candidates.conditions(index):
            column = self._packed.column(feature) if rows is None else rows[:, feature]
            mask &= column == (1 if value else 0)
        return mask

    def remove(self, index: int) -> None:
        """Remove the remaining rows caught by candidate ``index``."""
        cover = self._cover_cache.get(index)
        if cover is None:
            cover = self.covers(index)
            # shared by copies (distinct rows never change); at most ~64 MB
            if (len(self._cover_cache) + 1) * cover.size <= 2**26:
                self._cover_cache[index] = cover
        caught = cover & self.alive
        if self._pairwise and caught.any():
            self._G -= self._grams(np.flatnonzero(caught))
        self.alive &= ~caught


class CountCache:
    """Candidate counts on the records left after removing a set of candidates.

    The remaining records after rules ``r1, ..., rk`` have been added are the
    records no ``ri`` catches: they depend on the *set* of removed candidates,
    not on its order.  Learners ask for ``counts(removed)`` with the tuple of
    candidates removed so far; the counts are computed on a working copy of
    ``stats`` that is extended by one removal when ``removed`` extends the
    previous request (a greedy run costs what it costs without the cache), and
    rebuilt from ``stats`` otherwise.

    With ``max_entries > 0`` results are also memoised by the set of removed
    candidates, so that many runs on the same training data (an epsilon grid,
    several mechanisms) share them: the first step's counts are the same for
    every run.  The memo is cleared when it holds ``max_entries`` sets.
    Counts are exact integers (stored as float64), so a memoised answer is
    bit-identical to a recomputed one.

    Parameters
    ----------
    stats : SufficientStats
        The statistics of the full training set; never modified.
    max_entries : int, default=0
        Memo size; 0 disables memoisation.
    """

    def __init__(self, stats: SufficientStats, max_entries: int = 0):
        self.stats = stats
        self.max_entries = int(max_entries)
        self.n = float(stats.W.sum())
        self._memo: dict = {}
        self._work: SufficientStats | None = None
        self._work_removed: tuple = ()
        self.hits = 0
        self.misses = 0

    def _working_stats(self, removed: tuple) -> SufficientStats:
        k = len(self._work_removed)
        if self._work is None or removed[:k] != self._work_removed:
            self._work, self._work_removed, k = self.stats.copy(), (), 0
        for index in removed[k:]:
            self._work.remove(index)
        self._work_removed = removed
        return self._work

    def remaining(self, removed: tuple) -> tuple[float, ...]:
        """The records of each class that no candidate in ``removed`` catches (for two: negatives, positives)."""
        hit = self._memo.get(frozenset(removed)) if self.max_entries else None
        if hit is not None:
            return tuple(float(v) for v in hit[0])
        return self._working_stats(tuple(removed)).remaining()

    def class_counts(self, removed: tuple) -> tuple[np.ndarray, np.ndarray]:
        """``(N, C)``: the remaining records of each class, shape (K,), and every candidate's caught records of
        each class, shape (K, candidates).

        The arrays are shared with the memo: do not modify them.
        """
        key = frozenset(removed) if self.max_entries else None
        if key is not None:
            hit = self._memo.get(key)
            if hit is not None:
                self.hits += 1
                return hit
        self.misses += 1
        stats = self._working_stats(tuple(removed))
        out = (stats.remaining_counts(), stats.class_counts())
        if key is not None:
            if len(self._memo) >= self.max_entries:
                self._memo.clear()
            self._memo[key] = out
        return out

    def counts(self, removed: tuple) -> tuple:
        """The K remaining totals, then the K arrays of every candidate's caught counts: ``(n0, n1, c0, c1)``
        for two classes (:meth:`class_counts` flattened; shared with the memo: do not modify them)."""
        N, C = self.class_counts(removed)
        return (*(float(v) for v in N), *C)


def _part_cache(table, candidates: CandidateSet, n_classes: int) -> CountCache:
    return CountCache(SufficientStats(table, None, candidates, n_classes))


def _remaining_counts(cache: CountCache, removed: tuple) -> np.ndarray:
    return np.asarray(cache.remaining(removed), dtype=np.float64)


def _class_counts(cache: CountCache, removed: tuple):
    return cache.class_counts(removed)


class PartCounts:
    """:class:`CountCache`'s questions asked of every part of the training data (:mod:`dpglass.aggregates.parts`).

    Each part keeps its own :class:`CountCache` where it lives (in memory: the
    one local table; on a Dask cluster: the persisted key ranges, on the
    workers), and the parts' counts -- exact integers -- are summed, so the
    counts are the whole table's whatever the parts.  A step moves the
    candidates' K x candidates counts to the client, never the rows.

    Parameters
    ----------
    X, y : the training data as :func:`~dpglass.aggregates.parts.table_parts` reads it (0/1 arrays and class
        codes, a :class:`~dpglass.aggregates.PatternTable`, or a Dask fit's
        :class:`~dpglass.aggregates.parts.DistributedTable`)
    candidates : CandidateSet
    n_classes : int
    """

    def __init__(self, X, y, candidates: CandidateSet, n_classes: int = 2):
        self._caches = table_parts(X, y).map(_part_cache, candidates, int(n_classes))

    def remaining(self, removed: tuple) -> tuple[float, ...]:
        """The records of each class that no candidate in ``removed`` catches (:meth:`CountCache.remaining`)."""
        return tuple(float(v) for v in self._caches.sum(_remaining_counts, tuple(removed)))

    def class_counts(self, removed: tuple) -> tuple[np.ndarray, np.ndarray]:
        """``(N, C)`` as :meth:`CountCache.class_counts`, summed over the parts."""
        return self._caches.sum(_class_counts, tuple(removed))

    def counts(self, removed: tuple) -> tuple:
        """:meth:`CountCache.counts`, summed over the parts."""
        N, C = self.class_counts(removed)
        return (*(float(v) for v in N), *C)
