"""One registry of estimators: it drives the tests, the CLI and the experiments, and says which class a model file
names.

Each :class:`EstimatorSpec` names an estimator by a short CLI name and says how
to build it.  Imports are lazy (``"module:Class"``) so the registry stays cheap
to import.

Two tables, on purpose.  :data:`REGISTRY` holds the estimators a short name
builds (``make``) and fits on 0/1 columns with its ``test_params``: what every
loop over it relies on (``dpglass models``, ``dpglass fit --model``, the audit,
the experiments, the registry-wide tests).  :data:`LOADABLE_ONLY` holds the
other public classes a model file may name, which that contract does not fit
(a DPPipeline reads raw columns through a schema; the local-DP classifier has
no central ledger).  Loading a file is one lookup in both,
:func:`loadable_class`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from dpglass.exceptions import InvalidParameterError

__all__ = ["EstimatorSpec", "LOADABLE_ONLY", "REGISTRY", "get_spec", "list_estimators", "loadable_class",
           "make_estimator", "registered_class"]


@dataclass(frozen=True)
class EstimatorSpec:
    """How to build one registered estimator.

    Attributes
    ----------
    name : str
        Short name used by the CLI and the experiments (``"dp-rule-list"``).
    target : str
        ``"module:Class"`` of the estimator.
    private : bool
        Whether the estimator is differentially private (has a ledger).
    guarantee : str
        The guarantee in words, for tables and ``--help``.
    description : str
        One line for humans.
    params : dict
        What makes this name what it says (e.g. ``weak_learner="tree"``):
        applied by :meth:`make` under any parameters the caller passes, so the
        CLI, the experiments and the audit build the same thing.
    test_params : dict
        Small, fast parameters for the test-suite (tiny data, few rounds).
    """

    name: str
    target: str
    private: bool
    guarantee: str
    description: str
    test_params: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    @property
    def cls(self):
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)

    def make(self, **params):
        """Instantiate with the name's own ``params`` plus ``params`` (which may not contradict them)."""
        clash = {k: v for k, v in params.items() if k in self.params and v != self.params[k]}
        if clash:
            raise InvalidParameterError(
                f"Model {self.name!r} is {self.cls.__name__} with {self.params!r}; {clash!r} contradicts that. "
                "Choose the registered name that builds what you want (see `dpglass models`)."
            )
        return self.cls(**{**self.params, **params})


REGISTRY: dict[str, EstimatorSpec] = {}


def _register(spec: EstimatorSpec) -> None:
    REGISTRY[spec.name] = spec


_register(
    EstimatorSpec(
        name="greedy-rule-list",
        target="dpglass.models.rule_list.estimator:GreedyRuleListClassifier",
        private=False,
        guarantee="none (non-private baseline)",
        description="Greedy rule list (GreedyRL), the non-private reference of paper 001 (criterion='gini', the "
                    "paper's; criterion='errors' is errors-pf's).",
        test_params={"max_length": 3},
    )
)
_register(
    EstimatorSpec(
        name="dp-rule-list",
        target="dpglass.models.rule_list.estimator:DPRuleListClassifier",
        private=True,
        guarantee="pure epsilon-DP proven (errors-pf, default; local-pf and the global baselines); (epsilon, delta) "
                  "for certified-pf; smooth-* are paper claims",
        description="DP greedy rule list: errors-pf (default), or paper 001's Algorithm 1 with a choice of "
                    "selection mechanism.",
        test_params={"max_length": 3, "epsilon": 1.0},
    )
)
_register(
    EstimatorSpec(
        name="smooth-boost-stumps",
        target="dpglass.models.boosting.estimator:SmoothBoostClassifier",
        private=True,
        guarantee="pure epsilon-DP (the default, delta=0); (epsilon, delta)-DP when delta > 0, the rounds "
                  "composed by Renyi or PLD accounting (accountant='basic': advanced composition)",
        description="LazyBB smooth boosting of DP 1-Rules (paper 002, Algorithms 1 and 3).",
        test_params={"n_rounds": 5, "epsilon": 1.0},
        params={"weak_learner": "stump"},
    )
)
_register(
    EstimatorSpec(
        name="smooth-boost-trees",
        target="dpglass.models.boosting.estimator:SmoothBoostClassifier",
        private=True,
        guarantee="pure epsilon-DP (the default, delta=0); (epsilon, delta)-DP when delta > 0, the rounds "
                  "composed by Renyi or PLD accounting (accountant='basic': advanced composition)",
        description="LazyBB smooth boosting of DP trees of depth 2 (paper 002, Algorithm 1; one exponential "
                    "mechanism per tree; paper 002's DP-TopDown with tree_learner='top-down').",
        test_params={"n_rounds": 3, "epsilon": 1.0},
        params={"weak_learner": "tree"},
    )
)
_register(
    EstimatorSpec(
        name="dp-logistic-regression",
        target="dpglass.models.logistic.estimator:DPLogisticRegression",
        private=True,
        guarantee="pure epsilon-DP (output perturbation, discrete Laplace on a public grid)",
        description="DP logistic regression: n-free regularised objective, output perturbation with exact noise.",
        test_params={"epsilon": 1.0},
    )
)
_register(
    EstimatorSpec(
        name="dp-gbdt",
        target="dpglass.models.gbdt.estimator:DPGradientBoostingClassifier",
        private=True,
        guarantee="(epsilon, delta)-DP proven (PLD or RDP over trees, 'auto'); pure epsilon-DP with delta=0",
        description="DP gradient boosted trees on 0/1 and bounded numeric features (Newton leaves; DPBoost variant).",
        test_params={"n_estimators": 3, "epsilon": 1.0},
    )
)
_register(
    EstimatorSpec(
        name="dp-gam",
        target="dpglass.models.gam.estimator:DPGAMClassifier",
        private=True,
        guarantee="(epsilon, delta)-DP proven (discrete Gaussian sums, RDP or PLD over the plan, 'auto')",
        description="DP generalised additive model: a shape per raw column (numeric with public bounds, categorical "
                    "codes, 0/1, missing bins), private cyclic Newton boosting from noisy per-bin gradient and Hessian "
                    "sums (DP-EBM-like).",
        test_params={"n_cycles": 1, "epsilon": 1.0},
    )
)
_register(
    EstimatorSpec(
        name="subsample-aggregate",
        target="dpglass.models.teachers.estimator:SubsampleAggregateClassifier",
        private=True,
        guarantee="(epsilon, delta)-DP proven (noisy vote counts, tight composition); pure epsilon-DP with delta=0",
        description="Subsample-and-aggregate: teachers on disjoint parts label public records (fit's X_public) "
                    "with a noisy plurality vote; a logistic student is released.",
        test_params={"n_teachers": 5, "noise_scale": 2.0, "n_public": 60, "epsilon": 1.0},
    )
)
_register(
    EstimatorSpec(
        name="dp-bag",
        target="dpglass.models.teachers.estimator:DPBaggingClassifier",
        private=True,
        guarantee="paper-claim: DP-Bag's data-dependent moments accountant (Jordon et al. 2019), not proven",
        description="DP bagging (paper 002's DP-Bag baseline): teachers on k random partitions label public records "
                    "(fit's X_public) by report-noisy-max; a logistic student is released.",
        test_params={"n_teachers": 4, "n_partitions": 3, "noise_scale": 20.0, "n_public": 60, "epsilon": 1.0},
    )
)


def get_spec(name: str) -> EstimatorSpec:
    """The spec registered under ``name``."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise InvalidParameterError(
            f"Unknown model {name!r}. Known models: {', '.join(sorted(REGISTRY))}."
        ) from None


def make_estimator(name: str, **params):
    """Build the estimator registered under ``name`` with ``params``."""
    return get_spec(name).make(**params)


def list_estimators(private: bool | None = None) -> list[EstimatorSpec]:
    """Registered specs, optionally only the private (or non-private) ones."""
    return [s for s in REGISTRY.values() if private is None or s.private == private]


def registered_class(class_name: str):
    """The class of the registered estimator named ``class_name`` (as a model file names it), or None.

    Only :data:`REGISTRY`'s: what a DPPipeline's inner model may be.  A whole file's class is
    :func:`loadable_class`'s.
    """
    return next((s.cls for s in list_estimators() if s.cls.__name__ == class_name), None)


#: The public classes a model file may name besides the registry's estimators, by class name: ``"module:Class"``
#: and why it is not a registry entry.  (PrivateGridSearch is not here either: it writes no file of its own; its
#: file is the selected model's, carrying ``selected_by``, and loads as that model's class.)
LOADABLE_ONLY: dict[str, tuple[str, str]] = {
    "DPPipeline": ("dpglass.models.pipeline.estimator:DPPipeline",
                   "a public schema's encoder over raw columns, then a registered model (dpglass fit --schema): "
                   "it is built from a schema, not by a short name on 0/1 columns"),
    "LDPHistogramClassifier": ("dpglass.local.classifier:LDPHistogramClassifier",
                               "local DP over bounded numeric features, no central ledger (dpglass ldp): "
                               "another trust model than the registry's estimators"),
}


def loadable_class(class_name):
    """The class a model file names (its ``"model"``): a registered estimator's, or one of
    :data:`LOADABLE_ONLY`; None if dpglass has no such model.  ``load_model`` and ``dpglass inspect`` read files
    through it (:func:`dpglass.models._files.model_class`)."""
    if not isinstance(class_name, str):
        return None
    cls = registered_class(class_name)
    if cls is None and class_name in LOADABLE_ONLY:
        module, _, attr = LOADABLE_ONLY[class_name][0].partition(":")
        cls = getattr(importlib.import_module(module), attr)
    return cls
