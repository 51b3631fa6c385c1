"""Issue 12: rule-list accuracy on the shipped datasets (small; one dataset per call).

Three parts, each printing a markdown table and writing a CSV into
``docs/results/rule-lists/`` (rows of the dataset are replaced, others kept):

``diagnose``
    Adult's 117 columns (canonical split): why greedy Gini lists stay near
    the majority class.  Non-private GreedyRL by criterion, candidate set
    (max_card, negations), min_support and K; a depth-4 tree for reference;
    the first rule each criterion picks.  -> ``issue12_adult_diagnosis.csv``
``validate DATASET [--epsilon E]``
    errors-pf settings (K, the counts' share of epsilon, the stop bonus) at
    epsilon E (default 1) on validation splits cut from the training part
    (25% of it; the test part is never read).  -> ``issue12_validation.csv``
``report``
    Renders the report's issue-12 section from these CSVs
    (:mod:`dpglass_experiments.rule_lists.benchmark_section`) and splices it into
    ``report.md``, before "Tight accounting".
``test DATASET``
    The defaults on the test part: majority class, GreedyRL (gini, errors),
    the old default certified-pf and the new default errors-pf at
    epsilon 0.1, 1, 10; accuracy, rules and epsilon spent.  ->
    ``issue12_test.csv``

Splits: 70/30, one seeded split per seed (``split_indices``, as the paper
reproduction); ``adult`` uses its canonical train/test files and the seeds
vary the noise only.  Seeds: 10 (``--seeds``).  Settings are the library's
defaults (max_card=2, negations) unless a row says otherwise.

    DPGLASS_DATA=... PYTHONPATH=src python benchmarks/rule_list_accuracy.py test compas
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpglass.datasets import load_dataset  # noqa: E402
from dpglass_experiments import cell_seed, split_indices  # noqa: E402
from dpglass.models import DPRuleListClassifier, GreedyRuleListClassifier  # noqa: E402
from dpglass.models.rule_list.candidates import CountCache, SufficientStats, build_candidates, count_candidates  # noqa: E402
from dpglass.models.rule_list.errors import fit_errors_rule_list  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "docs" / "results" / "rule-lists"
DATASETS = ("breast-cancer", "compas", "compas-corels", "compas-rules", "german", "german-rules", "adult",
            "adult-corels", "mushroom", "cod-rna")
VALIDATION_GRID = [dict(K=K, count_share=r, bonus=b) for K in (3, 5, 7) for r in (0.1, 0.2, 0.35)
                   for b in (0.0, 0.5, 1.0, 1.5)]
TEST_EPSILONS = (0.1, 1.0, 10.0)


def splits(name: str, n_seeds: int, holdout: str):
    """``(seed, X_fit, y_fit, X_eval, y_eval)`` as numpy arrays; ``holdout`` is "test" or "validation"."""
    if name == "adult":
        X_tr, y_tr = load_dataset("adult", split="train")
        X_tr = X_tr.to_numpy()
        if holdout == "test":
            X_te, y_te = load_dataset("adult", split="test")
            X_te = X_te.to_numpy()
            for seed in range(n_seeds):
                yield seed, X_tr, y_tr, X_te, y_te
            return
        for seed in range(n_seeds):
            fit, val = split_indices(len(y_tr), cell_seed(0, name, seed), test_size=0.0, holdout="validation")
            yield seed, X_tr[fit], y_tr[fit], X_tr[val], y_tr[val]
        return
    X, y = load_dataset(name)
    X = X.to_numpy()
    for seed in range(n_seeds):
        fit, held = split_indices(len(y), cell_seed(0, name, seed), holdout=holdout)
        yield seed, X[fit], y[fit], X[held], y[held]


def rule_gains(model) -> str:
    """The training errors each rule of a fitted GreedyRL removes (its exact counts), ";"-separated."""
    gains, left = [], np.add(model.default_rule_.counts, [0.0, 0.0])
    for rule in reversed(model.rules_):  # the remaining counts before rule k are those after it plus its own
        before = left + np.array(rule.counts)
        gains.append(min(before) - (min(rule.counts) + min(left)))
        left = before
    return ";".join(str(int(g)) for g in reversed(gains))


def majority(y_fit, y_eval) -> float:
    return float(np.mean(y_eval == int(y_fit.mean() >= 0.5)))


def release_accuracy(release, cands, X, y) -> float:
    """Held-out accuracy of a release, predicted as the fitted model does (``1`` unless c0 > c1)."""
    pred = np.full(len(y), int(release.default_counts[1] >= release.default_counts[0]))
    done = np.zeros(len(y), dtype=bool)
    for cand, (c0, c1) in release.selected:
        mask = ~done
        for feature, value in cands.conditions(cand):
            mask &= X[:, feature] == int(value)
        pred[mask] = int(c1 >= c0)
        done |= mask
    return float(np.mean(pred == y))


def write(rows: list, name: str, dataset: str, epsilon=None) -> pd.DataFrame:
    """Replace the rows of ``dataset`` (and ``epsilon``, if given) in the CSV ``name``."""
    new = pd.DataFrame(rows)
    path = OUT / name
    if path.exists():
        old = pd.read_csv(path)
        mine = old["dataset"] == dataset
        if epsilon is not None:
            mine &= old["epsilon"] == epsilon
        new = pd.concat([old[~mine], new], ignore_index=True)
    new.to_csv(path, index=False, float_format="%.6g")
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame, by: list) -> pd.DataFrame:
    g = df.groupby(by, sort=False, dropna=False)
    out = g["accuracy"].agg(["mean", "sem"]).rename(columns={"mean": "accuracy", "sem": "se"})
    for col in ("rules", "epsilon_spent"):
        if col in df:
            out[col] = g[col].mean()
    return out.reset_index()


# ------------------------------------------------------------------ parts
def diagnose(n_seeds: int) -> None:
    from sklearn.tree import DecisionTreeClassifier

    X_tr, y_tr = load_dataset("adult", split="train")  # data frames: the rules print with feature names
    X_te, y_te = load_dataset("adult", split="test")
    rows = [dict(dataset="adult", what="majority class", accuracy=majority(y_tr, y_te), rules=0)]
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X_tr, y_tr)
    rows.append(dict(dataset="adult", what="decision tree, depth 4", accuracy=tree.score(X_te, y_te), rules=16))
    for criterion in ("gini", "errors"):
        for card, neg in ((1, False), (1, True), (2, False), (2, True)):
            for K in (5, 10):
                for ms in (0.0, 0.01, 0.05):
                    m = GreedyRuleListClassifier(criterion=criterion, max_card=card, allow_negations=neg,
                                                 max_length=K, min_support=ms).fit(X_tr, y_tr)
                    rows.append(dict(dataset="adult", what=f"GreedyRL {criterion}", max_card=card, negations=neg,
                                     K=K, min_support=ms, accuracy=m.score(X_te, y_te), rules=len(m.rules_),
                                     first_rule=str(m).splitlines()[0]))
    for mech in ("certified-pf", "errors-pf"):
        for seed in range(n_seeds):
            m = DPRuleListClassifier(epsilon=1.0, mechanism=mech, random_state=seed).fit(X_tr, y_tr)
            rows.append(dict(dataset="adult", what=f"DP {mech}, epsilon 1", accuracy=m.score(X_te, y_te),
                             rules=len(m.rules_), seed=seed, first_rule=str(m).splitlines()[0]))
    df = pd.DataFrame(rows)
    df.to_csv(OUT / "issue12_adult_diagnosis.csv", index=False, float_format="%.6g")
    with pd.option_context("display.width", 250, "display.max_colwidth", 90, "display.max_rows", 200):
        print(df.drop(columns=["dataset"]).to_string(index=False))
    first_step_candidates(X_tr, y_tr).to_csv(OUT / "issue12_adult_candidates.csv", index=False, float_format="%.6g")


def first_step_candidates(X, y, top: int = 30) -> pd.DataFrame:
    """The first step on Adult's training part (max_card=2, negations): the best candidates by Gini and by errors.

    Columns: the rule, its caught (negatives, positives), weighted Gini, training errors of the list ended by
    it, and both ranks (1 = best; "no rule" excluded).
    """
    from dpglass.privacy.sensitivity import weighted_gini

    names = list(X.columns)
    cands = build_candidates(X.shape[1], 2, True)
    st = SufficientStats(X.to_numpy(), y, cands)
    n0, n1 = st.remaining()
    c0, c1 = st.caught_counts()
    gini = weighted_gini(c1, c0, n1 - c1, n0 - c0)
    errors = np.minimum(c0, c1) + np.minimum(n0 - c0, n1 - c1)
    gini_rank = np.argsort(np.argsort(gini, kind="stable"), kind="stable") + 1
    errors_rank = np.argsort(np.argsort(errors, kind="stable"), kind="stable") + 1
    keep = np.flatnonzero((gini_rank <= top) | (errors_rank <= top))
    rule = [" and ".join(("" if v else "not ") + names[f] for f, v in cands.conditions(i)) for i in keep]
    return pd.DataFrame({"rule": rule, "caught_negatives": c0[keep], "caught_positives": c1[keep],
                         "gini": gini[keep], "errors": errors[keep], "gini_rank": gini_rank[keep],
                         "errors_rank": errors_rank[keep], "n_negatives": n0, "n_positives": n1,
                         "stop_gini": float(weighted_gini(n1, n0, 0, 0)), "stop_errors": min(n0, n1),
                         "n_candidates": len(cands)}).sort_values("gini_rank")


def validate(name: str, n_seeds: int, epsilon: float) -> None:
    rows = []
    for seed, X_fit, y_fit, X_val, y_val in splits(name, n_seeds, "validation"):
        cands = build_candidates(X_fit.shape[1], 2, True)
        cache = CountCache(SufficientStats(X_fit, y_fit, cands), max_entries=256)
        rows.append(dict(dataset=name, epsilon=epsilon, seed=seed, K=0, count_share=np.nan, bonus=np.nan,
                         accuracy=majority(y_fit, y_val), rules=0))
        for i, cfg in enumerate(VALIDATION_GRID):
            rng = np.random.default_rng(cell_seed(0, name, seed, f"errors-pf validation {i}", epsilon))
            rel = fit_errors_rule_list(X_fit, y_fit, candidates=cands, epsilon=epsilon, delta=0.0,
                                       max_length=cfg["K"], rng=rng, cache=cache, count_share=cfg["count_share"],
                                       bonus=cfg["bonus"])
            rows.append(dict(dataset=name, epsilon=epsilon, seed=seed, **cfg,
                             accuracy=release_accuracy(rel, cands, X_val, y_val), rules=len(rel.selected)))
    df = write(rows, "issue12_validation.csv", name, epsilon)
    print(summary(df, ["K", "count_share", "bonus"]).to_string(index=False, float_format="%.4f"))


def test(name: str, n_seeds: int) -> None:
    rows = []
    for seed, X_tr, y_tr, X_te, y_te in splits(name, n_seeds, "test"):
        rows.append(dict(dataset=name, seed=seed, method="majority class", epsilon=np.nan,
                         accuracy=majority(y_tr, y_te), rules=0))
        if seed == 0 or name != "adult":  # GreedyRL is deterministic: one fit per split
            for criterion in ("gini", "errors"):
                m = GreedyRuleListClassifier(criterion=criterion).fit(X_tr, y_tr)
                rows.append(dict(dataset=name, seed=seed, method=f"GreedyRL {criterion}", epsilon=np.nan,
                                 accuracy=m.score(X_te, y_te), rules=len(m.rules_), gains=rule_gains(m)))
        for mech in ("certified-pf", "errors-pf"):
            for eps in TEST_EPSILONS:
                rs = cell_seed(0, name, seed, mech, eps)
                m = DPRuleListClassifier(epsilon=eps, mechanism=mech, classes=[0, 1], random_state=rs).fit(X_tr, y_tr)
                rows.append(dict(dataset=name, seed=seed, method=mech, epsilon=eps, accuracy=m.score(X_te, y_te),
                                 rules=len(m.rules_), epsilon_spent=m.privacy_ledger_.total()[0],
                                 n_options=count_candidates(X_tr.shape[1], 2, True) + 1))
    df = write(rows, "issue12_test.csv", name)
    print(summary(df, ["method", "epsilon"]).to_string(index=False, float_format="%.4f"))


def report() -> None:
    """Render the report's issue-12 section from the CSVs and splice it into report.md."""
    from dpglass_experiments.report import Report
    from dpglass_experiments.rule_lists.benchmark_section import splice, write_section

    w = Report()
    write_section(w, OUT)
    splice(OUT / "report.md", w.lines)
    print("\n".join(w.lines))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("part", choices=("diagnose", "validate", "test", "report"))
    p.add_argument("dataset", nargs="?", choices=DATASETS)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--epsilon", type=float, default=1.0, help="validate: the budget (default 1)")
    args = p.parse_args(argv)
    if args.part == "diagnose":
        diagnose(args.seeds)
    elif args.part == "report":
        report()
    elif args.dataset is None:
        p.error(f"{args.part} needs a dataset")
    else:
        validate(args.dataset, args.seeds, args.epsilon) if args.part == "validate" else test(args.dataset, args.seeds)


if __name__ == "__main__":
    main()
