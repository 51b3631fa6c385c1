"""Rule lists: DP greedy rule lists (errors-pf by default, the Gini criterion of Fletcher and Islam) and the non-private GreedyRL baseline; each with its release plan (`gini_plan`, `errors`) and file check (`verify`)."""

from dpglass.models.rule_list.estimator import DPRuleListClassifier, GreedyRuleListClassifier

__all__ = ["DPRuleListClassifier", "GreedyRuleListClassifier"]
