"""Splitting private records into parts by public coins: the one implementation every split uses.

Neighbouring datasets differ by adding or removing one record, so a split may
depend on nothing but each record's own coin.  Every dpglass split is one of:

* :func:`coin_counts`: each record independently goes to the second part with
  probability ``p`` (a public Bernoulli(p) coin of its own).  On a pattern
  table (``c`` interchangeable records per entry) that is Binomial(c, p) per
  entry, the same law (docs/privacy.md, "Splits of private records").  Used by
  ``dpglass fit``'s held-out part (:func:`split_rows`), ``PrivateGridSearch``'s
  validation part and DPBoost's per-ensemble tree subsets.
* :func:`keyed_parts`: each record draws a part in ``0..k-1`` (the teacher
  ensembles) as a function of public seeds and of the record itself (its
  row, label and index among the identical records before it), so that the
  draw is the same wherever its entry is (in memory, or on whichever Dask
  worker holds it).

A fixed-size split (shuffle, then hold out ``ceil(f n)`` records) is **not** one
of them: both part sizes are functions of n, so adding one record can move
another from one part to the other, which for the model is a replace-one
neighbour (issue 26: ε ≥ 2.85 measured through ``dpglass fit`` against a claimed
2).  Do not write a split of private records outside this module.
"""

from __future__ import annotations

import numpy as np

__all__ = ["coin_counts", "entry_hashes", "keyed_parts", "part_seeds", "split_rows"]


def coin_counts(counts, p, rng) -> np.ndarray:
    """How many of each entry's records go to the second part: ``Binomial(counts[i], p[i])``, int64.

    ``counts`` holds the records of each entry (1 for a row); ``p`` is one
    probability or one per entry (a public function of the released past).
    Each record's coin is its own, independent of every other record's.
    """
    return rng.binomial(np.asarray(counts, dtype=np.int64), p).astype(np.int64)


def split_rows(n_rows: int, fraction: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """``(kept, held_out)`` row indices: each row is held out by its own Bernoulli(``fraction``) coin.

    The held-out size is Binomial(n, fraction), not ``ceil(fraction n)``: it is
    never printed (it is private), only its noisy count.
    """
    held = coin_counts(np.ones(int(n_rows), dtype=np.int64), float(fraction), rng).astype(bool)
    return np.flatnonzero(~held), np.flatnonzero(held)


#: Records whose parts are drawn at a time (memory: a few uint64 a record).
_BLOCK = 1 << 20
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(h: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (a bijection of uint64 that mixes every bit into every other)."""
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def part_seeds(n_draws: int, rng) -> np.ndarray:
    """The public seeds of ``n_draws`` keyed splits (:func:`keyed_parts`): uint64, drawn from ``rng``."""
    return rng.integers(0, 2**64, size=int(n_draws), dtype=np.uint64)


def entry_hashes(packed: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """A uint64 hash of every pattern-table entry's key (its packed row's bytes, then its label)."""
    packed = np.asarray(packed, dtype=np.uint8)
    m, B = packed.shape
    words = np.zeros((m, -(-B // 8) * 8), dtype=np.uint8)
    words[:, :B] = packed
    h = np.full(m, np.uint64(B), dtype=np.uint64)
    for w in words.view("<u8").T:
        h = _mix(h + w + _GOLDEN)
    return _mix(h + np.asarray(labels, dtype=np.uint64) + _GOLDEN)


def _below(h: np.ndarray, n_parts: int) -> np.ndarray:
    """``floor(h * n_parts / 2**64)``, exactly (32-bit halves): a part in ``0..n_parts-1``."""
    n = np.uint64(n_parts)
    hi, lo = h >> np.uint64(32), h & np.uint64(0xFFFFFFFF)
    return ((hi * n + ((lo * n) >> np.uint64(32))) >> np.uint64(32)).astype(np.int64)


def keyed_parts(hashes: np.ndarray, counts: np.ndarray, n_parts: int, seeds: np.ndarray) -> np.ndarray:
    """``(len(seeds), records)``: the part in ``0..n_parts-1`` of every record in every split.

    The records are those of a table's entries (``hashes`` from
    :func:`entry_hashes`, ``counts`` records each), entry by entry: the
    ``j``-th record of an entry (``j = 0..c-1``) goes, in split ``p``, to part
    ``floor(n_parts * H(seeds[p], hash, j) / 2**64)``, ``H`` a 64-bit mixing
    hash.  A record's part is thus a function of the public seed and of the
    record alone (its row, its label and ``j``); adding a record of an
    entry gives it index ``c`` and leaves the other records' parts as they
    were (docs/privacy.md, teacher ensembles).  It does not depend on where
    the entry is: the same in memory and on any Dask worker.  With ``H``
    pseudorandom, parts are uniform and independent across records (to
    within ``n_parts / 2**64``); the privacy argument does not need that.
    """
    hashes = np.asarray(hashes, dtype=np.uint64)
    counts = np.asarray(counts, dtype=np.int64)
    seeds = np.asarray(seeds, dtype=np.uint64)
    ends = np.cumsum(counts)
    n = int(ends[-1]) if ends.size else 0
    out = np.empty((seeds.size, n), dtype=np.int64 if n_parts > 65535 else np.uint16)
    for start in range(0, n, _BLOCK):
        records = np.arange(start, min(start + _BLOCK, n))
        entry = np.searchsorted(ends, records, side="right")  # the entry of each record
        j = (records - (ends[entry] - counts[entry])).astype(np.uint64)  # its index among the entry's records
        for p, seed in enumerate(seeds):
            out[p, records] = _below(_mix(_mix(hashes[entry] ^ seed) + j * _GOLDEN), int(n_parts))
    return out
