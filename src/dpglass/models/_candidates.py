"""Candidate rules and their counts, computed on sufficient statistics.

A candidate is a conjunction of up to ``max_card`` literals over binary
features; a literal tests ``x_j = 1`` or (with negations) ``x_j = 0``.  The set
is built from the schema alone (data-independent, so it costs no budget).

Counting works on the distinct rows of the training data with their label
counts.  For conjunctions of at most two literals every candidate's
caught-positive and caught-negative counts come from one Gram matrix
``U.T @ diag(w) @ U`` of the positive literals, by inclusion-exclusion for the
negated ones; when a rule is added, the rows it catches are subtracted from the
Gram matrices, so a whole greedy run costs about one Gram product.  Longer
conjunctions are counted in chunks of candidates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

from dpglass.exceptions import InvalidParameterError

__all__ = ["CandidateSet", "SufficientStats", "count_candidates", "build_candidates", "MAX_CANDIDATES"]

#: Refuse candidate sets larger than this (memory: ~100 bytes per candidate and step).
MAX_CANDIDATES = 5_000_000


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


class SufficientStats:
    """Distinct rows of (X, y) with label counts, and candidate counting.

    Parameters
    ----------
    X : ndarray of uint8, shape (n, d)
    y : ndarray of uint8, shape (n,)
    candidates : CandidateSet

    Attributes
    ----------
    alive : ndarray of bool
        The distinct rows not yet caught by a rule.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, candidates: CandidateSet):
        packed = np.packbits(X, axis=1) if X.shape[1] else np.zeros((X.shape[0], 1), np.uint8)
        keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1])))[:, 0]
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        self.rows = X[first].astype(np.uint8)
        self.row_of_sample = inverse.ravel()
        m = self.rows.shape[0]
        self.w1 = np.bincount(self.row_of_sample, weights=y, minlength=m)
        self.w0 = np.bincount(self.row_of_sample, minlength=m) - self.w1
        self.candidates = candidates
        self.alive = np.ones(m, dtype=bool)
        self._dtype = np.float32 if X.shape[0] < 2**24 else np.float64
        self._pairwise = candidates.max_card <= 2
        if self._pairwise:
            U = self.rows.astype(self._dtype)
            self._G1 = (U * self.w1[:, None].astype(self._dtype)).T @ U
            self._G0 = (U * self.w0[:, None].astype(self._dtype)).T @ U
            lit = candidates.literals
            self._i = lit[:, 0]
            self._j = np.where(lit[:, 1] >= 0, lit[:, 1], lit[:, 0]) if lit.shape[1] > 1 else lit[:, 0]

    # ----------------------------------------------------------------- totals
    def remaining(self) -> tuple[float, float]:
        """(negatives, positives) among the remaining records."""
        return float(self.w0[self.alive].sum()), float(self.w1[self.alive].sum())

    # ------------------------------------------------------------------ counts
    def caught_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Caught (negatives, positives) of every candidate on the remaining records."""
        if self._pairwise:
            return self._pair_counts(self._G0, self.w0), self._pair_counts(self._G1, self.w1)
        return self._chunked_counts()

    def _pair_counts(self, G: np.ndarray, w: np.ndarray) -> np.ndarray:
        total = float(w[self.alive].sum())
        diag = np.diag(G).astype(np.float64)
        fi, fj = self._i // 2, self._j // 2
        ni, nj = self._i % 2 == 1, self._j % 2 == 1
        both = G[fi, fj].astype(np.float64)
        ci, cj = diag[fi], diag[fj]
        # inclusion-exclusion over negations; singles have fi == fj, ni == nj
        out = np.where(
            ~ni & ~nj, both,
            np.where(ni & ~nj, cj - both, np.where(~ni & nj, ci - both, total - ci - cj + both)),
        )
        single = fi == fj
        out[single] = np.where(ni[single], total - ci[single], ci[single])
        return np.rint(out)

    def _chunked_counts(self, chunk: int = 4096):
        lit = self.candidates.literals
        rows = self.rows[self.alive].astype(bool)
        w0, w1 = self.w0[self.alive], self.w1[self.alive]
        c0 = np.empty(len(lit))
        c1 = np.empty(len(lit))
        for s in range(0, len(lit), chunk):
            block = lit[s : s + chunk]
            cover = np.ones((rows.shape[0], block.shape[0]), dtype=bool)
            for col in range(block.shape[1]):
                ids = block[:, col]
                valid = ids >= 0
                test = rows[:, ids // 2] == (ids % 2 == 0)
                cover &= test | ~valid
            c0[s : s + chunk] = w0 @ cover
            c1[s : s + chunk] = w1 @ cover
        return c0, c1

    # ---------------------------------------------------------------- updates
    def covers(self, index: int, rows: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of the given rows (default: distinct rows) caught by candidate ``index``."""
        rows = self.rows if rows is None else rows
        mask = np.ones(rows.shape[0], dtype=bool)
        for feature, value in self.candidates.conditions(index):
            mask &= rows[:, feature] == (1 if value else 0)
        return mask

    def remove(self, index: int) -> None:
        """Remove the remaining rows caught by candidate ``index``."""
        caught = self.covers(index) & self.alive
        if self._pairwise and caught.any():
            U = self.rows[caught].astype(self._dtype)
            self._G1 -= (U * self.w1[caught, None].astype(self._dtype)).T @ U
            self._G0 -= (U * self.w0[caught, None].astype(self._dtype)).T @ U
        self.alive &= ~caught
