"""Basic vs tight accounting: ``dpglass reproduce accounting`` (issue 16).

The same models at the same (epsilon, delta) with ``accountant="basic"``
(sums, or advanced composition for boosting: what papers 001 and 002 do)
and ``accountant="auto"`` (the tighter of PLD and RDP composition,
:mod:`dpglass.privacy.accounting`), on Adult and COMPAS.  Only the per-release
noise differs: the tight accountant proves the same guarantee with less
noise.  Output: ``accuracy.csv``, ``accuracy.png`` and ``report.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dpglass_experiments import figures
from dpglass_experiments.reproduction import Reproduction
from dpglass_experiments.specs import DatasetSpec, MethodSpec
from dpglass_experiments.sweep import summarise

__all__ = ["FULL", "QUICK", "REPRODUCTION", "methods", "reproduce"]

DELTA = 1e-6
RULES = {"max_card": 1, "allow_negations": True, "min_support": 0.05, "max_length": 5}
#: Rule lists on the rule-list reproduction's files; boosting on Adult's 117 columns (canonical split).
RULE_DATASETS = (DatasetSpec("compas-corels", params=dict(RULES, max_card=2)), DatasetSpec("adult-corels", params=RULES))
BOOST_DATASETS = (DatasetSpec("compas-corels"), DatasetSpec("adult", split="canonical"))
PANELS = {"compas-corels": "COMPAS (compas-corels)", "adult-corels": "Adult (adult-corels)", "adult": "Adult (adult)"}
#: Paper 002's Figure 2 settings for stumps; the boosting reproduction's tuned trees at epsilon = 1.
STUMPS = {"n_rounds": 99, "density": 0.25, "learning_rate": 0.25}
TREES = {"n_rounds": 51, "density": 0.25, "learning_rate": 0.4, "tree_learner": "top-down"}  # paper 002's trees


@dataclass(frozen=True)
class Plan:
    epsilons: tuple
    n_seeds: int


FULL = Plan(epsilons=(0.1, 0.2, 0.5, 1.0, 2.0, 5.0), n_seeds=10)
QUICK = Plan(epsilons=(0.5, 2.0), n_seeds=2)


def methods(family: str, quick: bool = False) -> tuple:
    """Each model with the basic and the tight (auto) accountant at delta = 1e-6."""
    models = {
        "rules": (("rule list (certified-pf)", "dp-rule-list", {"mechanism": "certified-pf"}),
                  ("rule list (exponential)", "dp-rule-list", {"mechanism": "exponential"})),
        "boosting": (("LazyBB stumps", "smooth-boost-stumps", dict(STUMPS, n_rounds=9) if quick else STUMPS),
                     ("LazyBB trees", "smooth-boost-trees", dict(TREES, n_rounds=5) if quick else TREES)),
    }[family]
    return tuple(MethodSpec(f"{label} / {acct}", est, dict(params, delta=DELTA, accountant=acct))
                 for label, est, params in models for acct in ("basic", "auto"))


def _experiments(run) -> dict:
    plan = run.plan
    frames = []
    for family, datasets in (("rules", RULE_DATASETS), ("boosting", BOOST_DATASETS)):
        config = run.config(datasets, methods(family, run.quick), plan.epsilons, plan.n_seeds)
        frames.append(run.sweep(config, f"sweep_{family}.csv", family, f"{family}: basic vs tight"))
    acc = summarise(pd.concat(frames, ignore_index=True), "test_accuracy")
    acc.to_csv(run.out / "accuracy.csv", index=False, float_format="%.6g")
    for family, datasets in (("rules", RULE_DATASETS), ("boosting", BOOST_DATASETS)):
        names = {d.name for d in datasets}
        panels = {k: v for k, v in PANELS.items() if k in names}
        part = acc[acc["method"].isin([m.name for m in methods(family, run.quick)])]
        figures.plot_accuracy_vs_epsilon(
            part, run.out, f"accuracy_{family}", value_label="test accuracy", panels=panels,
            title=f"Basic vs tight accounting at δ = {DELTA:g} (mean ± s.e.)", xticks=plan.epsilons)
    return {"acc": acc}


def _table(acc: pd.DataFrame) -> str:
    acc = acc.assign(model=acc["method"].str.rsplit(" / ", n=1).str[0], acct=acc["method"].str.rsplit(" / ", n=1).str[1])
    mean = acc.pivot_table(index=["dataset", "model", "epsilon"], columns="acct", values="mean")
    se = acc.pivot_table(index=["dataset", "model", "epsilon"], columns="acct", values="se")
    lines = ["| dataset | model | ε | basic | tight | gain |", "|---|---|---|---|---|---|"]
    for (dataset, model, eps), m in mean.iterrows():
        e = se.loc[(dataset, model, eps)]
        lines.append(f"| {dataset} | {model} | {eps:g} | {m['basic']:.4f} ± {e['basic']:.4f} "
                     f"| {m['auto']:.4f} ± {e['auto']:.4f} | {m['auto'] - m['basic']:+.4f} |")
    return "\n".join(lines)


def budgets(epsilons) -> str:
    """Per-release epsilon under each accountant: what the tight accountant buys, from the parameters alone."""
    from dpglass.models.boosting.estimator import round_budget
    from dpglass.models.rule_list.estimator import delta_plan, rule_list_budget

    K = RULES["max_length"]
    rows = ["| ε | rule list (certified-pf) | rule list (exponential) | stumps (τ = 99) | trees (τ = 51, 3 splits) |",
            "|---|---|---|---|---|"]
    for eps in epsilons:
        cells = []
        for mech in ("certified-pf", "exponential"):
            plan = delta_plan(mech, None, "corrected")
            b, t = (rule_list_budget(eps, DELTA, K, plan, a, mech, table=True)[0] for a in ("basic", "auto"))
            cells.append(f"{b:.4g} → {t:.4g} (×{t / b:.2f})")
        for wl, tau in (("stump", STUMPS["n_rounds"]), ("tree", TREES["n_rounds"])):
            (b, how_b), (t, how_t) = (round_budget(eps, DELTA, tau, wl, 3, a, TREES["tree_learner"])
                                      for a in ("basic", "auto"))
            cells.append(f"{b:.4g} ({how_b}) → {t:.4g} ({how_t}, ×{t / b:.2f})")
        rows.append(f"| {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _rule_gain(mechanism: str, eps: float = 1.0) -> str:
    """The tight accountant's per-release epsilon over the basic one for a rule list, e.g. "×1.12"."""
    from dpglass.models.rule_list.estimator import delta_plan, rule_list_budget

    plan = delta_plan(mechanism, None, "corrected")
    b, t = (rule_list_budget(eps, DELTA, RULES["max_length"], plan, a, mechanism, table=True)[0]
            for a in ("basic", "auto"))
    return f"×{t / b:.2f}"


def _report(run, results) -> None:
    plan = run.plan
    text = f"""# Basic vs tight accounting

`dpglass reproduce accounting{' --quick' if run.quick else ''}`: test accuracy of each model at the same
(ε, δ = {DELTA:g}) with `accountant="basic"` (sums of ε; for boosting the better of basic and
advanced composition: what papers 001 and 002 do) and `accountant="auto"` (the tighter of
privacy-loss-distribution and Rényi composition, chosen from the parameters alone;
docs/privacy.md, "Accounting"). Both rows carry the same proven (ε, δ) guarantee; the tight one
adds less noise per release. {plan.n_seeds} seeds per cell (COMPAS: a random 70/30 split per
seed; Adult: the canonical split, seeds vary the noise). Settings are fixed in advance (rule
lists K = 5, λ = 0.05; stumps: paper 002's Figure 2, τ = 99, κ = λ = 1/4; trees: the boosting
reproduction's settings at ε = 1, τ = 51, κ = 0.25, λ = 0.4), never tuned on the test split.

## What each release may spend

Per-release ε (rule lists) and per-round ε (boosting), basic → tight, at δ = {DELTA:g}:

{budgets(plan.epsilons)}

## Test accuracy (mean ± standard error)

![rule lists](accuracy_rules.png)

![boosting](accuracy_boosting.png)

{_table(results['acc'])}

## What it shows

- **Boosting gains most**: its τ rounds are τ exponential-mechanism selections, which the Rényi
  accountant counts as bounded range (ε²/8-zCDP each, Cesar & Rogers 2021) instead of
  worst-case pure ε; each round may spend about 2.4 times what advanced composition allows.
  The accuracy gain is largest at small ε, where noise is what limits the model.
- **Rule lists gain little**: a list of K = 5 rules is only 2K + 1 = 11 releases, too few
  for composition to beat the sum by much at δ = {DELTA:g} (at ε = 1: {_rule_gain("certified-pf")} for
  certified-pf, {_rule_gain("exponential")} for the exponential mechanism), and under basic accounting a
  list that stops early gives its table of class counts all the budget it left, which the tight
  accountants' fixed plan cannot. The accuracy differences are within the seeds' noise (about two
  standard errors either way); the rule lists' gap to the non-private list is not a matter of
  accounting (issue 12).
"""
    (run.out / "report.md").write_text(text)


REPRODUCTION = Reproduction(full=FULL, quick=QUICK, experiments=_experiments, report=_report)
reproduce = REPRODUCTION.reproduce
