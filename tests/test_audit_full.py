"""The full empirical privacy audit (issue 4): ``python -m pytest -m audit tests/test_audit_full.py``.

Excluded from the default run (``-m 'not slow and not audit'``).  Every dpglass
mechanism, every rule-list selection step, every registered DP estimator and
every zoo entry is audited at 95% confidence with the sample sizes of its
:class:`~dpglass.audit.cases.AuditCase`.  With ``DPGLASS_AUDIT_REPORT=path`` the
measured rows are written there as the markdown table of ``docs/audit.md``.
About 10 minutes on one core.
"""

import os
import sys

import pytest

from dpglass.audit import audit_learner
from dpglass.audit.cases import mechanism_cases, selection_case
from dpglass.audit.cli import _audit_data
from dpglass.models.rule_list.selection import MECHANISMS
from dpglass.registry import REGISTRY

sys.path.insert(0, os.path.dirname(__file__))
from audit_zoo import QUICK_FLAGGED, zoo_cases  # noqa: E402

pytestmark = pytest.mark.audit

_ROWS = []

#: The worst neighbouring pairs the exact search (dpglass.audit.selection) found for
#: the paper-claim selections: (mechanism, eps_node, delta_sel, cells, removed).
#: docs/audit.md gives their exact effective epsilon.
WORST_SMOOTH_PAIRS = [
    ("smooth-laplace", 1.0, 1e-2, ((0, 4), (0, 6), (0, 1), (12, 0)), (2, 1)),
    ("smooth-laplace", 0.5, 1e-4, ((0, 32), (1, 18), (35, 22), (39, 0)), (1, 0)),
    ("smooth-cauchy", 0.5, 0.0, ((0, 0), (0, 0), (0, 2), (1, 0)), (3, 0)),
]


def _row(kind, name, guarantee, res, expect):
    eps, delta = res.claim
    runs = res.audit.n_samples if hasattr(res, "audit") else res.n_samples
    seconds = res.seconds
    _ROWS.append(
        f"| {kind} | `{name}` | {guarantee} | ({eps:g}, {delta:.3g}) | {res.epsilon_lower:.3f} | {runs:,} | "
        f"{seconds:.1f} | {res.verdict} | {expect} |"
    )


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    path = os.environ.get("DPGLASS_AUDIT_REPORT")
    if path:
        head = ("| kind | name | guarantee | claim (eps, delta) | lower bound (95%) | runs per input | seconds | "
                "verdict | expected |\n|---|---|---|---|---|---|---|---|---|\n")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(head + "\n".join(_ROWS) + "\n")


@pytest.mark.parametrize("name", list(mechanism_cases()))
def test_mechanism(name):
    case = mechanism_cases()[name]
    res = case.run(rng=2024)
    _row("mechanism" if "/" not in name else "selection", name, case.guarantee, res, "PASS")
    assert res.verdict == "PASS", res.summary()


@pytest.mark.parametrize("spec", WORST_SMOOTH_PAIRS, ids=lambda s: f"{s[0]}-eps{s[1]}-delta{s[2]}")
def test_paper_claim_selection_on_its_worst_pair(spec):
    mech, eps, delta, cells, removed = spec
    case = selection_case(mech, epsilon=eps, delta=delta, cells=cells, removed=removed,
                          name=f"selection/{mech} worst pair {list(map(list, cells))} -{removed}")
    res = case.run(rng=2025)
    _row("selection", case.name, case.guarantee, res, "PASS")
    assert res.verdict == "PASS", res.summary()


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_dp_rule_list(mechanism):
    from dpglass.models import DPRuleListClassifier

    X, y = _audit_data()
    est = DPRuleListClassifier(epsilon=8.0, mechanism=mechanism, max_length=1, max_card=1, min_support=0.0)
    res = audit_learner(est, X, y, n_runs=5000, rng=7)
    _row("estimator", f"dp-rule-list --mechanism {mechanism} (K=1, eps=8)", "proven" if mechanism not in
         ("smooth-laplace", "smooth-cauchy") else "paper-claim", res, "PASS")
    assert res.verdict == "PASS", res.summary()


@pytest.mark.parametrize("name", [n for n, s in REGISTRY.items() if s.private and n != "dp-rule-list"])
def test_other_dp_estimators(name):
    spec = REGISTRY[name]
    X, y = _audit_data()
    params = dict(spec.test_params)
    params["epsilon"] = 8.0
    try:
        est = spec.make(**params)
        est.fit(X, y)
    except Exception as exc:  # an estimator still being written
        pytest.skip(f"{name} does not fit yet: {exc!r}")
    res = audit_learner(est, X, y, n_runs=3000, n_candidates=6, n_pilot=40, rng=8)
    shown = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
    _row("estimator", f"{name} ({shown})", "paper-claim" if spec.guarantee.startswith("paper-claim") else "proven",
         res, "PASS")
    assert res.verdict == "PASS", res.summary()


@pytest.mark.parametrize("name", list(zoo_cases()))
def test_zoo(name):
    case = zoo_cases()[name]
    res = case.run(rng=2026)
    expect = "VIOLATION" if name in QUICK_FLAGGED else "not caught (see below)"
    _row("zoo", name, "broken", res, expect)
    if name in QUICK_FLAGGED:
        assert res.violation, res.summary()


@pytest.mark.parametrize("split", ["coins", "fixed-size"])
def test_the_whole_cli_run(split, monkeypatch):
    """``dpglass fit`` as a black box (issue 26, item 1): 3,000 runs a side of the real command on the review's
    pair, events fixed in advance.  The coins pass at the claim; the fixed-size split it replaced must fail
    (power)."""
    import dpglass.privacy.splits as splits
    from dpglass.cli.fit_audit import cli_split_audit
    from test_audit_cli import fixed_size_split

    if split == "fixed-size":
        monkeypatch.setattr(splits, "split_rows", fixed_size_split)
    res = cli_split_audit(3000, epsilon=2.0, rng=2026)
    expect = "PASS" if split == "coins" else "VIOLATION"
    _row("CLI run", f"dpglass fit, {split} held-out split", "proven" if split == "coins" else "(the old split)",
         res, expect)
    assert res.verdict == expect, res.summary()
