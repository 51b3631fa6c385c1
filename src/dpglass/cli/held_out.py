"""The held-out accuracy that ``dpglass fit`` prints and writes into its file: a DP estimate from two noisy counts.

The held-out part is disjoint from the training part (a split by public
coins, :mod:`dpglass.privacy.splits`), so two discrete-Laplace counts on it at
epsilon/2 each keep the whole run within epsilon by parallel composition
(docs/privacy.md, "The CLI's held-out accuracy").  The counts are released
through their plan (:func:`dpglass.models._held_out.held_out_plan`), which the
file check replays on the ``held_out`` section ``--out`` writes.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from dpglass.models._held_out import (
    HELD_OUT_ALPHA,
    accuracy_estimate,
    held_out_bound,
    held_out_plan,
    held_out_section,
)
from dpglass.privacy.ledger import PrivacyLedger

__all__ = ["HELD_OUT_ALPHA", "accuracy_estimate", "print_accuracy", "save_with_held_out"]


def print_accuracy(model, X_te, y_te, exact: bool, rng, test_size: float):
    """A DP estimate of the held-out accuracy (stdout); the exact one only on request, on stderr.

    Two discrete-Laplace counts at half the model's epsilon each, on the held-out
    records ``X_te, y_te`` (disjoint from the training part: see the module).
    Returns the file's ``held_out`` section (:func:`~dpglass.models._held_out.held_out_section`), or None for a
    non-private model (nothing DP to write).
    """
    correct = int(np.sum(model.predict(X_te) == np.asarray(y_te))) if len(y_te) else 0  # the coins may hold none out
    ledger = getattr(model, "privacy_ledger_", None)
    if ledger is None:
        print(f"\nheld-out accuracy: {correct / max(len(y_te), 1):.4f} of {len(y_te)} records (non-private model)")
        return None
    eps = float(ledger.epsilon)
    (step,) = plan = held_out_plan(eps)
    own = PrivacyLedger(epsilon=eps).follow(plan)  # the held-out part's own budget (parallel to the model's)
    noisy_correct, noisy_size = (int(v) for v in own.release(step, np.array([correct, len(y_te)]), rng))
    print("\n" + accuracy_estimate(noisy_correct, noisy_size, held_out_bound(eps)))
    print(f"(noisy counts of the correct predictions and of the held-out records, discrete Laplace at "
          f"epsilon={eps / 2:.4g} each, on records disjoint from the training part: parallel composition keeps the "
          "run within the budget)")
    if exact:
        exact_text = f"{correct / len(y_te):.4f}" if len(y_te) else "none (no record held out)"
        print(f"held-out accuracy (exact, NOT private, curator only): {exact_text}", file=sys.stderr)
    return held_out_section(eps, test_size, noisy_correct, noisy_size)


def save_with_held_out(model, path, section) -> None:
    """Write the model file as ``model.save`` does, with the ``held_out`` section last when there is one."""
    if section is None:
        model.save(path)
        return
    data = model.to_dict()
    data["held_out"] = section
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
