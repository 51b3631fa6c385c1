"""One policy for randomness.

* ``random_state=None`` (the default, for release) gives a generator driven by
  ChaCha20 (20 rounds, ``randomgen.ChaCha``), a cryptographically secure stream
  cipher, keyed with 256 bits from the operating system's CSPRNG
  (:func:`secrets.randbits`).  Its outputs do not reveal its state, so noise
  drawn from it cannot be predicted or replayed.
* An ``int`` or :class:`numpy.random.SeedSequence` gives a reproducible PCG64
  stream: for experiments and tests.  Noise drawn from it is **replayable** by
  anyone who knows the seed; a model fitted with one says so in its ledger
  (:func:`is_replayable`).  Never publish such a model.
* A :class:`numpy.random.Generator` is used as given (shared, not copied).
* Independent child streams come from :func:`spawn`, never from re-seeding.

No function in dpglass touches NumPy's or Python's global random state.
"""

from __future__ import annotations

import numbers
import secrets

import numpy as np
from randomgen import ChaCha

from dpglass.exceptions import InvalidParameterError

__all__ = ["check_random_state", "is_replayable", "secure_generator", "spawn"]

# Entropy of the generators made by secure_generator (children share it).
_OS_ENTROPY: set[int] = set()


def secure_generator() -> np.random.Generator:
    """A ChaCha20 generator keyed with 256 bits of operating-system entropy.

    Examples
    --------
    >>> is_replayable(secure_generator())
    False
    """
    entropy = secrets.randbits(256)
    _OS_ENTROPY.add(entropy)
    return np.random.Generator(ChaCha(np.random.SeedSequence(entropy), rounds=20))


def is_replayable(rng: np.random.Generator) -> bool:
    """Whether ``rng``'s draws could be replayed by someone who knows how it was made.

    False only for generators from :func:`secure_generator` and their
    :func:`spawn` children; any seeded or user-built generator counts as
    replayable.

    Examples
    --------
    >>> is_replayable(check_random_state(0))
    True
    """
    seq = getattr(rng.bit_generator, "seed_seq", None)
    return not (isinstance(rng.bit_generator, ChaCha) and getattr(seq, "entropy", None) in _OS_ENTROPY)


def check_random_state(random_state=None) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None``: a ChaCha20 CSPRNG keyed from OS entropy (for release).  ``int`` (>= 0) or
        ``SeedSequence``: reproducible.  ``Generator``: returned as is.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    InvalidParameterError
        For any other type (including the legacy ``numpy.random.RandomState``,
        whose global-state semantics dpglass does not support).

    Examples
    --------
    >>> g = check_random_state(0)
    >>> h = check_random_state(0)
    >>> float(g.random()) == float(h.random())
    True
    """
    if random_state is None:
        return secure_generator()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise InvalidParameterError(
                f"The 'random_state' parameter must be a non-negative int, a "
                f"numpy SeedSequence or Generator, or None. Got {random_state!r} instead."
            )
        return np.random.default_rng(int(random_state))
    raise InvalidParameterError(
        "The 'random_state' parameter must be a non-negative int, a numpy "
        f"SeedSequence or Generator, or None. Got {random_state!r} instead."
    )


def spawn(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """Return ``n`` independent child generators of ``rng``.

    Uses :meth:`numpy.random.Generator.spawn`, so children are statistically
    independent of each other and of later draws from ``rng``.

    Examples
    --------
    >>> a, b = spawn(check_random_state(1), 2)
    >>> float(a.random()) != float(b.random())
    True
    """
    return list(rng.spawn(int(n)))
