"""What every mechanism shares: parameter validation, immutability, ``guarantee``.

Constraint declarations and input checks used by the mechanism families in this
package.  Nothing here draws randomness.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpglass._validation import InstanceOf, Interval, validate_params
from dpglass.exceptions import InvalidParameterError

_POSITIVE = [Interval(numbers.Real, 0, math.inf, "neither")]  # finite and > 0
_PROBABILITY = [Interval(numbers.Real, 0, 1, "neither")]
_GAMMA = [Interval(numbers.Real, 1, math.inf, "neither")]
_BOOL = [InstanceOf(bool, "a bool")]
_SIZE = [InstanceOf((numbers.Integral, tuple), "an int or a tuple of ints"), InstanceOf(type(None))]
_RNG = [InstanceOf(np.random.Generator, "a numpy.random.Generator (see dpglass.privacy.rng)")]

#: Selections round their exponents up to multiples of 2**-40 (exact sampling,
#: dpglass.privacy.samplers); that moves each utility by less than
#: 2**-40 / rate, which costs at most 2**-39 of epsilon.  Mechanisms reserve it.
GRID_SLACK = 2.0 ** -39


def _check_rng(rng, owner):
    if not isinstance(rng, np.random.Generator):
        validate_params({"rng": rng}, {"rng": _RNG}, owner)


def _describe(x) -> str:
    try:
        shape = np.shape(x) if not isinstance(x, str) else ()
    except ValueError:  # ragged nested sequence
        return f"a ragged sequence of length {len(x)}"
    return f"an array of shape {shape}" if math.prod(shape) > 10 else repr(x)


def _as_finite_array(x):
    if isinstance(x, (str, bytes)):
        return None
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return arr if np.isfinite(arr).all() else None


def _check_values(value, owner, name="value") -> np.ndarray:
    arr = _as_finite_array(value)
    if arr is None:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a finite number or an array of finite "
            f"numbers. Got {_describe(value)} instead."
        )
    return arr


def _check_integers(value, owner) -> np.ndarray:
    """Integer-valued (counts) finite values within 2**52, as a float array; else a typed error."""
    arr = _check_values(value, owner)
    if not np.all(arr == np.round(arr)) or np.any(np.abs(arr) > 2.0 ** 52):
        raise InvalidParameterError(
            f"The 'value' parameter of {owner} must hold integers (counts). Got {_describe(value)} instead."
        )
    return arr


def _check_scores(scores, owner, name) -> np.ndarray:
    arr = _as_finite_array(scores)
    if arr is None or arr.ndim != 1 or arr.size == 0:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a non-empty 1-d array of finite numbers. "
            f"Got {_describe(scores)} instead."
        )
    return arr


def _as_output(arr: np.ndarray):
    return float(arr) if arr.ndim == 0 else arr


class _Mechanism:
    """Shared plumbing: validation, immutability, ``repr`` and ``guarantee``."""

    _parameter_constraints: dict = {}
    delta = 0.0

    def _set_params(self, **params):
        validate_params(params, self._parameter_constraints, type(self).__name__)
        for name, value in params.items():
            if isinstance(value, numbers.Real) and not isinstance(value, bool):
                value = float(value)
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable; build a new mechanism instead.")

    def __repr__(self):
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._parameter_constraints)
        return f"{type(self).__name__}({args})"

    @property
    def curve(self) -> dict | None:
        """The privacy curve for tight composition (dpglass.privacy.accounting); None: the (epsilon, delta) pair."""
        return None

    @property
    def guarantee(self) -> tuple[float, float]:
        """The ``(epsilon, delta)`` this mechanism satisfies (under its stated assumptions)."""
        return (self.epsilon, self.delta)


