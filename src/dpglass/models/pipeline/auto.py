"""``DPPipeline(model="auto")``: a default model for a table, chosen from public facts and one noisy count.

The rule (:func:`choose_model`) reads the schema, epsilon and delta, and the
number of records, which is private: it is released once, as a discrete
Laplace count at ``AUTO_SHARE`` of epsilon (sensitivity 1 under adding or
removing a record), through :func:`auto_plan`, before anything else is drawn.
The choice is a post-processing of that release and of public parameters, so
the pipeline's guarantee is sequential composition of the count, the encoder
and the model (docs/privacy.md, "DPPipeline", "model='auto'").  The file keeps
the noisy count (``records_noisy``) and the rule's version (``auto_rule``, :data:`AUTO_RULE` for new fits;
absent in files written before versions: version 1), and its check recomputes the choice with that version.
A new rule is a new version: the old ones stay, so that every file ever written still verifies.
"""

from __future__ import annotations

from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
from dpglass.privacy.plan import Integers, PlannedRelease

__all__ = ["AUTO_CANDIDATES", "AUTO_RELEASE", "AUTO_RULE", "AUTO_SHARE", "GAM_EPSILON", "GAM_SIGNAL", "MIN_EPSILON",
           "PER_COLUMN", "RULES", "SIGNAL",
           "auto_plan", "candidates", "choose_model", "rule_version"]

#: The rule version new fits follow and write (the file's ``auto_rule``; absent: version 1).
AUTO_RULE = 2
#: The registered models each rule version chooses from.
RULES = {1: ("dp-gbdt", "dp-rule-list"), 2: ("dp-gam", "dp-gbdt", "dp-rule-list")}
#: The registered models some rule version chooses from (a file of any version names one of them).
AUTO_CANDIDATES = tuple(dict.fromkeys(name for names in RULES.values() for name in names))
#: Share of the pipeline's epsilon for the noisy count of records the rule reads.
AUTO_SHARE = 0.02
#: The ledger's name for that count.
AUTO_RELEASE = "selector: noisy count of records (model='auto')"
#: dp-gbdt when (noisy records) x epsilon reaches this and epsilon reaches MIN_EPSILON; else dp-rule-list.
SIGNAL = 500.0
MIN_EPSILON = 0.25
#: Version 2 (:func:`_rule_2`): dp-gam when epsilon >= GAM_EPSILON and (noisy records) x epsilon >= GAM_SIGNAL;
#: else dp-gam or dp-gbdt when (noisy records) x epsilon >= PER_COLUMN x (feature columns); else dp-rule-list.
GAM_EPSILON = 1.0
GAM_SIGNAL = 1000.0
PER_COLUMN = 100.0


def auto_plan(epsilon: float) -> list[PlannedRelease]:
    """The selector's one release: the number of records plus discrete Laplace noise of scale ``1/epsilon``
    (an integer, in the file's ``records_noisy``)."""
    mech = DiscreteLaplaceMechanism(epsilon)
    entry = LedgerEntry(AUTO_RELEASE, "discrete laplace", epsilon=epsilon, sensitivity=1.0, scale=mech.scale,
                        note="one record changes the count by at most 1; read only by the model='auto' rule")
    return [PlannedRelease(entry, lambda n, rng: int(mech.randomise(int(n), rng)), Integers(), ("records_noisy",))]


def rule_version(value) -> int:
    """The rule version a file names (its ``auto_rule``; None, absent: version 1, the rule before versions); an
    unknown one is refused."""
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or value not in RULES:
        raise InvalidParameterError(f"model='auto' rule version {value!r} is not one this dpglass knows "
                                    f"({sorted(RULES)}); a newer dpglass wrote it?")
    return value


def candidates(rule: int = AUTO_RULE) -> tuple:
    """The registered models rule version ``rule`` chooses from."""
    return RULES[rule_version(rule)]


def choose_model(schema, epsilon: float, delta, records_noisy: int, rule: int = AUTO_RULE) -> str:
    """The registered model ``model="auto"`` fits under rule version ``rule``: a function of public facts and the
    released count only.  Version 1 (files without ``auto_rule``): :func:`_rule_1`; version 2: :func:`_rule_2`."""
    return (_rule_1 if rule_version(rule) == 1 else _rule_2)(schema, float(epsilon), delta, int(records_noisy))


def _rule_1(schema, epsilon: float, delta, records_noisy: int) -> str:
    """Version 1.  ``"dp-gbdt"`` (numeric columns as numbers, boosted trees) when
    ``epsilon >= MIN_EPSILON`` and ``records_noisy * epsilon >= SIGNAL``;
    ``"dp-rule-list"`` otherwise (small tables, small epsilon: a short list of
    rules whose noisy counts stay at or above the majority class).  Measured
    on validation parts of training parts (docs/privacy.md, "model='auto'").
    ``schema`` and ``delta`` do not move the choice: both models take
    every column kind and K classes, and both run at the pipeline's delta.
    """
    if epsilon >= MIN_EPSILON and records_noisy * epsilon >= SIGNAL:
        return "dp-gbdt"
    return "dp-rule-list"


def _rule_2(schema, epsilon: float, delta, records_noisy: int) -> str:
    """Version 2.  With ``signal = records_noisy * epsilon`` and ``d`` the schema's number of feature columns:

    * ``"dp-gam"`` when ``epsilon >= GAM_EPSILON`` and ``signal >= GAM_SIGNAL`` (enough records and budget for
      one shape per column);
    * else, when ``signal >= PER_COLUMN * d`` (a small epsilon, but many records for each column):
      ``"dp-gam"`` if some feature column is numeric or categorical (dp-gam reads numbers and categories as
      they are), ``"dp-gbdt"`` if every one is binary (on 0/1 columns its trees, which combine them, led);
    * else ``"dp-rule-list"`` (small tables, small epsilon: a short list of rules whose noisy counts stay at
      or above the majority class).

    Measured on validation parts of training parts of every built-in table, raw and 0/1
    (``benchmarks/auto_rule.py``; docs/privacy.md, "model='auto'").  K does not move the choice (every
    candidate learns K classes; the tables measured have two).  ``delta=0`` (pure epsilon-DP) does: dp-gam's
    Gaussian noise needs ``delta > 0``, so there ``"dp-gbdt"`` takes its place (it reads numbers and
    categories too), and a pure fit never fails on the choice of a model that refuses its delta.
    """
    signal, features = records_noisy * epsilon, schema.features
    gam = "dp-gbdt" if delta is not None and float(delta) == 0.0 else "dp-gam"
    if epsilon >= GAM_EPSILON and signal >= GAM_SIGNAL:
        return gam
    if signal >= PER_COLUMN * len(features):
        return gam if any(c.kind in ("numeric", "categorical") for c in features) else "dp-gbdt"
    return "dp-rule-list"
