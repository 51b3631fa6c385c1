"""The CLI's split of private records (issue 26, item 1): one split function, per-record coins.

The black-box audit of the whole ``dpglass fit`` run at its claim, and its
power on the fixed-size split that the CLI used before, run in the full audit
(``tests/test_audit_full.py``, ``-m audit``): 3,000 runs a side take about a
minute each.  Here: that the CLI splits through :mod:`dpglass.privacy.splits`,
the law of the split, and that no part of the run fails on a part of size 0.
"""

import numpy as np
import pytest

import dpglass.privacy.splits as splits
from dpglass.cli.fit_audit import parse_fit_output
from dpglass.cli import accuracy_estimate, main


def fixed_size_split(n_rows, fraction, rng):
    """The split ``dpglass fit`` used before issue 26 (shuffle, hold out ceil(fraction n)): both part sizes are
    functions of n.  Kept here only to show that the audit sees it."""
    order = rng.permutation(n_rows)
    cut = int(np.ceil(fraction * n_rows))
    return order[cut:], order[:cut]


def _csv(tmp_path, records, name="d.csv"):
    path = tmp_path / name
    path.write_text("f,y\n" + "".join(f"{f},{y}\n" for f, y in records))
    return str(path)


def test_the_cli_splits_through_the_one_split_function(tmp_path, monkeypatch, capsys):
    calls = []
    original = splits.split_rows

    def spy(n_rows, fraction, rng):
        calls.append((n_rows, fraction))
        return original(n_rows, fraction, rng)

    monkeypatch.setattr(splits, "split_rows", spy)
    path = _csv(tmp_path, [(0, 0), (1, 1)] * 10)
    assert main(["fit", "--data", path, "--target", "y", "--seed", "1", "--test-size", "0.4"]) == 0
    assert calls == [(20, 0.4)]


def test_each_row_is_held_out_by_its_own_coin():
    f, n, reps = 0.3, 4, 40_000
    rng = np.random.default_rng(5)
    sizes = np.array([len(splits.split_rows(n, f, rng)[1]) for _ in range(reps)])
    # Binomial(4, 0.3), not ceil(0.3 * 4) = 2 every time
    assert set(np.unique(sizes)) == {0, 1, 2, 3, 4}
    assert abs(sizes.mean() - n * f) < 0.03
    assert abs(np.mean(sizes == 0) - (1 - f) ** n) < 0.01
    # a row's coin does not depend on the others: the first row's rate is f whatever n is
    for m in (1, 2, 7):
        first = np.mean([0 in splits.split_rows(m, f, rng)[1] for _ in range(20_000)])
        assert abs(first - f) < 0.015


def test_the_fixed_size_split_is_a_function_of_n():
    rng = np.random.default_rng(0)
    assert {len(fixed_size_split(4, 0.3, rng)[1]) for _ in range(50)} == {2}
    assert {len(fixed_size_split(3, 0.3, rng)[1]) for _ in range(50)} == {1}


@pytest.mark.parametrize("seed", range(12))
def test_no_part_of_the_run_fails_on_an_empty_part(tmp_path, seed, capsys):
    """Four records held out by coins: some seeds hold out none or all of them; the run prints either way
    (whether fit succeeds must not depend on n)."""
    path = _csv(tmp_path, [(0, 0)] * 3 + [(1, 1)])
    assert main(["fit", "--data", path, "--target", "y", "--epsilon", "2", "--seed", str(seed),
                 "--test-size", "0.5"]) == 0
    assert "held-out accuracy" in capsys.readouterr().out


def test_a_private_fit_with_declared_classes_takes_zero_records():
    from dpglass.registry import list_estimators

    X, y = np.zeros((0, 3), dtype=np.uint8), np.zeros(0, dtype=int)
    public = np.random.default_rng(0).integers(0, 2, (20, 3))
    for spec in list_estimators():
        if not spec.private:
            continue
        model = spec.make(classes=[0, 1], random_state=0)
        if "X_public" in spec.cls.fit.__code__.co_varnames:
            model.fit(X, y, X_public=public)
        else:
            model.fit(X, y)
        assert model.predict(public).shape == (20,), spec.name


def test_parse_fit_output_reads_the_printed_counts():
    text = ("if f then 1   (noisy counts 0: -1, 1: 3)\nelse 0   (noisy counts 0: 2, 1: 0)\n\n"
            "held-out accuracy (DP estimate): 0.5, 95% interval 0 to 1 (noise only) = 1 / 2 (noisy counts)\n")
    assert parse_fit_output(text) == (1, 3, 1, 2)
    assert parse_fit_output(accuracy_estimate(5, 2, 3)) == (0, 0, 5, 2)


def test_accuracy_estimate_never_prints_an_impossible_accuracy():
    # the cases: 154 / 121 printed as 1.000, 5 / 0 as nan
    for c, s, k in [(154, 121, 9), (5, 0, 4), (3, -2, 4), (0, 1, 4)]:
        line = accuracy_estimate(c, s, k)
        assert "nan" not in line and "1.000 =" not in line
    assert "too few held-out records" in accuracy_estimate(5, 0, 4)
    assert "no estimate" in accuracy_estimate(154, 121, 9)
    line = accuracy_estimate(80, 100, 3)
    assert "interval 0.748 to 0.856" in line
