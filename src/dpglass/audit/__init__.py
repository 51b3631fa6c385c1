"""Empirical privacy audits: evidence that dpglass's guarantees hold, and power to see when not.

* :func:`audit_mechanism` -- an epsilon lower bound for a mechanism on one
  neighbouring pair (Clopper-Pearson bounds, union bound over the events tried,
  events chosen on a disjoint half of the samples); :class:`AuditResult`.
* :func:`audit_learner` -- the same for a whole training algorithm, the
  released model's structure being the discrete output; the neighbour is
  chosen adversarially.
* :mod:`dpglass.audit.membership` -- distributional overfitting (paper 001,
  Sec. V-E), loss threshold attacks, one-run canary audits (Steinke, Nasr &
  Jagielski 2023).
* :mod:`dpglass.audit.artifact` -- the whole-artifact check: no field of a
  saved model, its printout or the CLI output is a deterministic function of
  the data (:func:`deterministic_leaks`), released noisy values lie on a
  public grid (:func:`non_grid_numbers`).
* :mod:`dpglass.audit.floating_point` -- the floating-point attack of
  Mironov (2012) on NumPy's Laplace sampler, to show what the grid prevents.
* :mod:`dpglass.audit.cases` -- the catalogue of every dpglass mechanism with
  its claim and a hard neighbouring pair (what ``dpglass audit`` runs).
* :mod:`dpglass.audit.selection` -- exact output distributions of one rule-list
  selection step and a search for neighbouring pairs that break a claim.

See ``docs/audit.md`` for the measured table.
"""

from dpglass.audit.artifact import deterministic_leaks, model_artifact, non_grid_numbers
from dpglass.audit.learners import LearnerAuditResult, audit_learner, rule_list_structure
from dpglass.audit.mechanisms import AuditResult, Event, EventBound, audit_mechanism, clopper_pearson, epsilon_lower_bound
from dpglass.audit.membership import (
    canary_audit,
    canary_audit_estimator,
    distributional_overfitting,
    loss_scores,
    model_vulnerability,
    one_run_epsilon_lower_bound,
    one_run_p_value,
    threshold_attack,
)

__all__ = [
    "AuditResult",
    "Event",
    "EventBound",
    "LearnerAuditResult",
    "audit_learner",
    "audit_mechanism",
    "canary_audit",
    "canary_audit_estimator",
    "deterministic_leaks",
    "model_artifact",
    "non_grid_numbers",
    "clopper_pearson",
    "distributional_overfitting",
    "epsilon_lower_bound",
    "loss_scores",
    "model_vulnerability",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
    "rule_list_structure",
    "threshold_attack",
]
