"""``DPPipeline(model="auto")``: a default model for a table, chosen from public facts and one noisy count.

The rule (:func:`choose_model`) reads the schema, epsilon and delta, and the
number of records, which is private: it is released once, as a discrete
Laplace count at ``AUTO_SHARE`` of epsilon (sensitivity 1 under adding or
removing a record), through :func:`auto_plan`, before anything else is drawn.
The choice is a post-processing of that release and of public parameters, so
the pipeline's guarantee is sequential composition of the count, the encoder
and the model (docs/privacy.md, "DPPipeline", "model='auto'").  The file keeps
the noisy count (``records_noisy``), and its check recomputes the choice from it.
"""

from __future__ import annotations

from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
from dpglass.privacy.plan import Integers, PlannedRelease

__all__ = ["AUTO_CANDIDATES", "AUTO_RELEASE", "AUTO_SHARE", "SIGNAL", "MIN_EPSILON", "auto_plan", "choose_model"]

#: The registered models the rule chooses from.
AUTO_CANDIDATES = ("dp-gbdt", "dp-rule-list")
#: Share of the pipeline's epsilon for the noisy count of records the rule reads.
AUTO_SHARE = 0.02
#: The ledger's name for that count.
AUTO_RELEASE = "selector: noisy count of records (model='auto')"
#: dp-gbdt when (noisy records) x epsilon reaches this and epsilon reaches MIN_EPSILON; else dp-rule-list.
SIGNAL = 500.0
MIN_EPSILON = 0.25


def auto_plan(epsilon: float) -> list[PlannedRelease]:
    """The selector's one release: the number of records plus discrete Laplace noise of scale ``1/epsilon``
    (an integer, in the file's ``records_noisy``)."""
    mech = DiscreteLaplaceMechanism(epsilon)
    entry = LedgerEntry(AUTO_RELEASE, "discrete laplace", epsilon=epsilon, sensitivity=1.0, scale=mech.scale,
                        note="one record changes the count by at most 1; read only by the model='auto' rule")
    return [PlannedRelease(entry, lambda n, rng: int(mech.randomise(int(n), rng)), Integers(), ("records_noisy",))]


def choose_model(schema, epsilon: float, delta, records_noisy: int) -> str:
    """The registered model ``model="auto"`` fits: a function of public facts and the released count only.

    ``"dp-gbdt"`` (numeric columns as numbers, boosted trees) when
    ``epsilon >= MIN_EPSILON`` and ``records_noisy * epsilon >= SIGNAL``;
    ``"dp-rule-list"`` otherwise (small tables, small epsilon: a short list of
    rules whose noisy counts stay at or above the majority class).  Measured
    on validation parts of training parts (docs/privacy.md, "model='auto'").
    ``schema`` and ``delta`` do not move the choice today: both models take
    every column kind and K classes, and both run at the pipeline's delta.
    """
    if float(epsilon) >= MIN_EPSILON and int(records_noisy) * float(epsilon) >= SIGNAL:
        return "dp-gbdt"
    return "dp-rule-list"
