"""The held-out accuracy that ``dpglass fit`` prints: a DP estimate from two noisy counts.

The held-out part is disjoint from the training part (a split by public
coins, :mod:`dpglass.privacy.splits`), so two discrete-Laplace counts on it at
epsilon/2 each keep the whole run within epsilon by parallel composition
(docs/privacy.md, "The CLI's held-out accuracy").
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["HELD_OUT_ALPHA", "accuracy_estimate", "print_accuracy"]

HELD_OUT_ALPHA = 0.05  # the interval covers both counts' noise with probability >= 95% (a union bound)


def print_accuracy(model, X_te, y_te, exact: bool, rng) -> None:
    """A DP estimate of the held-out accuracy (stdout); the exact one only on request, on stderr.

    Two discrete-Laplace counts at half the model's epsilon each, on the held-out
    records ``X_te, y_te`` (disjoint from the training part: see the module).
    """
    correct = int(np.sum(model.predict(X_te) == np.asarray(y_te))) if len(y_te) else 0  # the coins may hold none out
    ledger = getattr(model, "privacy_ledger_", None)
    if ledger is None:
        print(f"\nheld-out accuracy: {correct / max(len(y_te), 1):.4f} of {len(y_te)} records (non-private model)")
        return
    from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism

    eps = float(ledger.epsilon)
    mech = DiscreteLaplaceMechanism(eps / 2)
    noisy_correct, noisy_size = (int(v) for v in mech.randomise(np.array([correct, len(y_te)]), rng))
    print("\n" + accuracy_estimate(noisy_correct, noisy_size, mech.tail_bound(HELD_OUT_ALPHA / 2)))
    print(f"(noisy counts of the correct predictions and of the held-out records, discrete Laplace at "
          f"epsilon={eps / 2:.4g} each, on records disjoint from the training part: parallel composition keeps the "
          "run within the budget)")
    if exact:
        exact_text = f"{correct / len(y_te):.4f}" if len(y_te) else "none (no record held out)"
        print(f"held-out accuracy (exact, NOT private, curator only): {exact_text}", file=sys.stderr)


def accuracy_estimate(noisy_correct: int, noisy_size: int, k: int) -> str:
    """The held-out accuracy line from its two noisy counts, each within ``k`` of its true value w.p. >= 1 - alpha/2.

    On that event the exact accuracy lies in ``[(c - k) / (s + k), (c + k) / (s - k)]``
    (intersected with [0, 1]); when ``s - k < 1`` the size may be 0 and nothing
    is estimated.  The interval covers the noise only, not the sampling of the
    held-out records.  Post-processing of the two counts.

    >>> print(accuracy_estimate(80, 100, 3))
    held-out accuracy (DP estimate): 0.800, 95% interval 0.748 to 0.856 (noise only) = 80 / 100 (noisy counts)
    >>> print(accuracy_estimate(103, 100, 3).split(" = ")[0])
    held-out accuracy (DP estimate): 1.030, 95% interval 0.971 to 1.000 (noise only; the noisy ratio lies outside [0, 1])
    >>> print(accuracy_estimate(154, 121, 3))  # doctest: +ELLIPSIS
    held-out accuracy: no estimate: the noisy counts 154 correct of 121 are farther from any possible pair than ...
    >>> print(accuracy_estimate(5, 2, 3))
    held-out accuracy: too few held-out records to estimate (noisy counts 5 correct of 2, each give or take 3 at 95%)
    """
    c, s = int(noisy_correct), int(noisy_size)
    if s - k < 1:
        return (f"held-out accuracy: too few held-out records to estimate (noisy counts {c} correct of {s}, each "
                f"give or take {k} at {1 - HELD_OUT_ALPHA:.0%})")
    ratio, lo, hi = c / s, (c - k) / (s + k), (c + k) / (s - k)
    if hi < 0.0 or lo > 1.0:
        return (f"held-out accuracy: no estimate: the noisy counts {c} correct of {s} are farther from any possible "
                f"pair than their noise's {1 - HELD_OUT_ALPHA:.0%} bound ({k} each); a rare draw, or a tiny held-out part")
    note = "noise only" if 0.0 <= ratio <= 1.0 else "noise only; the noisy ratio lies outside [0, 1]"
    return (f"held-out accuracy (DP estimate): {ratio:.3f}, {1 - HELD_OUT_ALPHA:.0%} interval {max(lo, 0.0):.3f} to "
            f"{min(hi, 1.0):.3f} ({note}) = {c} / {s} (noisy counts)")
