"""Splitting private records into parts by public coins: the one implementation every split uses.

Neighbouring datasets differ by adding or removing one record, so a split may
depend on nothing but each record's own coin.  Every dpglass split is one of:

* :func:`coin_counts`: each record independently goes to the second part with
  probability ``p`` (a public Bernoulli(p) coin of its own).  On a pattern
  table (``c`` interchangeable records per entry) that is Binomial(c, p) per
  entry, the same law (docs/privacy.md, "Splits of private records").  Used by
  ``dpglass fit``'s held-out part (:func:`split_rows`), ``PrivateGridSearch``'s
  validation part and DPBoost's per-ensemble tree subsets.
* :func:`uniform_parts`: each record independently draws a part in
  ``0..k-1`` (the teacher ensembles).

A fixed-size split (shuffle, then hold out ``ceil(f n)`` records) is **not** one
of them: both part sizes are functions of n, so adding one record can move
another from one part to the other, which for the model is a replace-one
neighbour (issue 26: ε ≥ 2.85 measured through ``dpglass fit`` against a claimed
2).  Do not write a split of private records outside this module.
"""

from __future__ import annotations

import numpy as np

__all__ = ["coin_counts", "split_rows", "uniform_parts"]


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


def uniform_parts(n_records: int, n_parts: int, n_draws: int, rng) -> np.ndarray:
    """``(n_draws, n_records)``: each record's part in ``0..n_parts-1`` in each of ``n_draws`` independent
    splits, uniform and independent across records."""
    return rng.integers(0, n_parts, size=(int(n_draws), int(n_records)))
