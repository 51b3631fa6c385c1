"""One policy for randomness.

* ``random_state=None`` gives a generator seeded from operating-system entropy
  (``numpy.random.default_rng()``): unpredictable to anyone who does not see the
  process.  NumPy's PCG64 is **not** a cryptographically secure generator: an
  adversary who observes many raw outputs could in principle recover its state.
  dpglass never releases raw draws, only noisy statistics, but a deployment that
  needs CSPRNG-grade noise should wrap :func:`secrets`-based sampling.
* An ``int`` or :class:`numpy.random.SeedSequence` gives a reproducible stream.
* A :class:`numpy.random.Generator` is used as given (shared, not copied).
* Independent child streams come from :func:`spawn`, never from re-seeding.

No function in dpglass touches NumPy's or Python's global random state.
"""

from __future__ import annotations

import numbers

import numpy as np

from dpglass.exceptions import InvalidParameterError

__all__ = ["check_random_state", "spawn"]


def check_random_state(random_state=None) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None``: fresh OS entropy (unpredictable).  ``int`` (>= 0) or
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
        return np.random.default_rng()
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
