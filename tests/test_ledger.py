import json
import math

import pytest

from dpglass.exceptions import BudgetExceededError, InvalidParameterError
from dpglass.privacy.ledger import LedgerEntry, PrivacyLedger


def test_sequential_composition_adds():
    ledger = PrivacyLedger()
    ledger.spend("a", "laplace", 0.3)
    ledger.spend("b", "gaussian", 0.2, 1e-6)
    assert ledger.total() == pytest.approx((0.5, 1e-6))


def test_parallel_composition_takes_max_per_partition():
    ledger = PrivacyLedger()
    ledger.spend("left", "laplace", 0.5, partition="split", part="left")
    ledger.spend("right", "laplace", 0.2, partition="split", part="right")
    ledger.spend("right again", "laplace", 0.4, partition="split", part="right")
    ledger.spend("all", "laplace", 0.1)
    # right part: 0.6 sequentially; max(0.5, 0.6) = 0.6; plus 0.1
    assert ledger.total() == pytest.approx((0.7, 0.0))


def test_budget_refused_and_not_recorded():
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    ledger.spend("a", "laplace", 0.9)
    with pytest.raises(BudgetExceededError, match="above the budget"):
        ledger.spend("b", "laplace", 0.2)
    assert len(ledger) == 1
    with pytest.raises(BudgetExceededError):
        ledger.spend("c", "gaussian", 0.05, 2e-5)


def test_float_split_sums_to_budget():
    eps = 0.7
    k = 16
    ledger = PrivacyLedger(epsilon=eps)
    for i in range(k):
        ledger.spend(f"r{i}", "laplace", eps / k)
    assert ledger.total()[0] == pytest.approx(eps)


def test_json_round_trip():
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-6)
    ledger.spend("a", "laplace", 0.5, sensitivity=1.0, scale=2.0)
    ledger.spend("b", "smooth-laplace", 0.5, 1e-7, guarantee="paper-claim", note="see docs")
    back = PrivacyLedger.from_json(ledger.to_json())
    assert back.entries == ledger.entries
    assert back.total() == ledger.total()
    assert json.loads(ledger.to_json())["guarantee"] == "paper-claim"


def test_guarantee_is_weakest():
    ledger = PrivacyLedger()
    ledger.spend("a", "laplace", 0.1)
    assert ledger.guarantee == "proven"
    ledger.spend("b", "x", 0.1, guarantee="paper-claim")
    assert ledger.guarantee == "paper-claim"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": -0.1},
        {"epsilon": math.inf},
        {"epsilon": 0.1, "delta": 1.0},
        {"epsilon": 0.1, "partition": "p"},
        {"epsilon": 0.1, "guarantee": "maybe"},
    ],
)
def test_invalid_entries(kwargs):
    with pytest.raises(InvalidParameterError):
        LedgerEntry(release="r", mechanism="m", **kwargs)


def test_str_lists_entries_and_total():
    ledger = PrivacyLedger(epsilon=1.0)
    ledger.spend("rule 1: selection", "permute-and-flip", 0.25)
    text = str(ledger)
    assert "rule 1: selection" in text and "permute-and-flip" in text and "total: epsilon=0.25" in text
