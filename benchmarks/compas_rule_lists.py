"""What limits the DP rule list on COMPAS: the criterion or the privacy? (issue 12)

On the five stratified 70/30 splits of ``benchmarks/peers.py`` (seed r), fits
the non-private greedy list with paper 001's Gini criterion and with the
errors criterion the DP default selects by, and the DP default
(``errors-pf``) at epsilon = 0.4, 1 and 10**4, and reports accuracy on

* validation parts (a seeded 70/30 cut of each training part: what a
  setting could be chosen on), and
* the test parts (reported only; nothing is chosen on them).

Run: ``DPGLASS_DATA=../shared/data PYTHONPATH=src python benchmarks/compas_rule_lists.py``
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.model_selection import train_test_split

from dpglass.datasets import load_dataset
from dpglass.models import DPRuleListClassifier, GreedyRuleListClassifier

MODELS = {
    "GreedyRL, Gini (paper 001)": lambda eps, seed: GreedyRuleListClassifier(),
    "GreedyRL, errors criterion": lambda eps, seed: GreedyRuleListClassifier(criterion="errors"),
    "dp-rule-list (errors-pf) eps=0.4": lambda eps, seed: DPRuleListClassifier(epsilon=0.4, random_state=seed),
    "dp-rule-list (errors-pf) eps=1": lambda eps, seed: DPRuleListClassifier(epsilon=1.0, random_state=seed),
    "dp-rule-list (errors-pf) eps=1e4": lambda eps, seed: DPRuleListClassifier(epsilon=1e4, random_state=seed),
}


def main(reps: int = 5) -> None:
    warnings.simplefilter("ignore")  # the weak-guarantee warning of eps = 1e4
    X, y = (np.asarray(a) for a in load_dataset("compas"))
    scores = {name: {"validation": [], "test": []} for name in MODELS}
    for r in range(reps):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=r)
        Xa, Xv, ya, yv = train_test_split(Xtr, ytr, test_size=0.3, stratify=ytr, random_state=100 + r)
        for name, make in MODELS.items():
            scores[name]["validation"].append(make(None, r).fit(Xa, ya).score(Xv, yv))
            scores[name]["test"].append(make(None, r).fit(Xtr, ytr).score(Xte, yte))
    print("| model | validation parts | test parts (reported only) |")
    print("|---|---|---|")
    for name, s in scores.items():
        v, t = np.array(s["validation"]), np.array(s["test"])
        print(f"| {name} | {v.mean():.3f} ± {v.std():.3f} | {t.mean():.3f} ± {t.std():.3f} |")


if __name__ == "__main__":
    main()
