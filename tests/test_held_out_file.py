"""The DP held-out accuracy ``dpglass fit --out`` writes into its model file (issue 29): the ``held_out`` section,
its check, ``dpglass inspect`` and the card; its privacy map on both sides of the limit; files without it."""

import itertools
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from test_card import needs_browser, render, text_of

from dpglass.cli import main
from dpglass.exceptions import ModelFileError
from dpglass.models import load_model
from dpglass.models._held_out import (
    HELD_OUT_ALPHA,
    check_held_out,
    held_out_mechanism,
    held_out_plan,
)
from dpglass.models.readout.card import card_of_file

LINE = re.compile(r"held-out accuracy \(DP estimate\): [^\n]*")


def _read(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _csv(tmp_path, n=160, seed=0, name="t.csv"):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(18, 80, n), "colour": rng.choice(["red", "green", "blue"], n)})
    frame["y"] = np.where(frame.age + rng.normal(0, 10, n) > 50, "yes", "no")
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path, frame


def _fit(path, out, *extra, seed=1, model="dp-rule-list"):
    return main(["fit", "--data", str(path), "--target", "y", "--bounds", "age=18:80", "--categorical",
                 "colour=red,green,blue", "--classes", "no,yes", "--model", model, "--seed", str(seed),
                 "--out", str(out), *extra])


@pytest.fixture
def fitted(tmp_path, capsys):
    path, _ = _csv(tmp_path)
    out = tmp_path / "m.json"
    assert _fit(path, out, "--epsilon", "0.8") == 0
    return out, capsys.readouterr().out


def test_fit_writes_the_estimate_it_prints_and_the_card_and_inspect_show_it(fitted, tmp_path, capsys):
    out, printed = fitted
    line = LINE.search(printed).group(0)
    sec = _read(out)["held_out"]
    assert sec["epsilon_each"] == 0.4 and sec["alpha"] == HELD_OUT_ALPHA and sec["test_size"] == 0.3
    assert f"= {sec['noisy_correct']} / {sec['noisy_records']} (noisy counts)" in line
    assert set(sec) == {"rule", "test_size", "composition", "alpha", "epsilon_each", "noisy_correct",
                        "noisy_records", "release"}  # nothing else: no exact figure, no true size
    load_model(out)  # verifies
    assert main(["inspect", str(out)]) == 0
    assert line in capsys.readouterr().out
    assert main(["card", str(out), "--out", str(tmp_path / "c.html")]) == 0
    page = (tmp_path / "c.html").read_text()
    assert "<h2>Held-out accuracy</h2>" in page and line.replace("'", "&#x27;") in page
    assert "parallel composition" in page and "&epsilon; = 0.4" in page


def test_the_sections_epsilon_follows_the_budget():
    for eps in (0.1, 0.8, 1.0, 3.0):
        (step,) = held_out_plan(eps)
        mech = held_out_mechanism(eps)
        assert step.entry.epsilon == eps and step.entry.sensitivity == 2.0 and mech.scale == 2 / eps
        assert step.entry.curve == {"kind": "discrete-laplace", "parameter": eps / 2, "sensitivity": 2}
        assert step.entry.partition == "public-coin split"


def test_the_counts_sensitivity_by_brute_force():
    """On every dataset of up to 5 held-out records (each predicted correctly or not), removing one record moves
    (correct, records) by l1 distance at most 2, and 2 is reached: the plan's sensitivity is the least bound."""
    worst = 0
    for n in range(1, 6):
        for flags in itertools.product((0, 1), repeat=n):
            c, s = sum(flags), n
            for i in range(n):
                c2, s2 = c - flags[i], s - 1
                worst = max(worst, abs(c - c2) + abs(s - s2))
    assert worst == 2


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_the_privacy_map_on_both_sides_of_the_limit(eps):
    """The released pair's pmf changes by at most e^eps between neighbours (all neighbours of a small domain, all
    outputs in a window); with the noise of a claimed sensitivity 1 (epsilon/2 on the pair) it changes by more."""
    def worst(scale_mech):
        g = scale_mech.decay
        logp = lambda z: -g * abs(z)  # the normalising constants cancel in the ratio
        most = 0.0
        for c, s in itertools.product(range(4), range(1, 5)):
            if c > s:
                continue
            for c2, s2 in ((c, s - 1), (c - 1, s - 1)):  # the removed record was wrong, or right
                if c2 < 0 or c2 > s2:
                    continue
                for a, b in itertools.product(range(-15, 20), repeat=2):
                    most = max(most, abs(logp(a - c) + logp(b - s) - logp(a - c2) - logp(b - s2)))
        return most

    assert worst(held_out_mechanism(eps)) <= eps * (1 + 1e-9)
    assert worst(held_out_mechanism(eps)) > eps * 0.99  # tight
    from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism

    assert worst(DiscreteLaplaceMechanism(eps, sensitivity=1)) > eps * 1.5  # a smaller bound is violated


def _edited(out, tmp_path, edit):
    data = _read(out)
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


EDITS = {
    "held_out.noisy_correct": lambda d: d["held_out"].__setitem__("noisy_correct", d["held_out"]["noisy_correct"] + 0.5),
    "held_out.noisy_records": lambda d: d["held_out"].__setitem__("noisy_records", 12.0),
    "held_out.epsilon_each": lambda d: d["held_out"].__setitem__("epsilon_each", 0.2),
    "held_out.release.epsilon": lambda d: d["held_out"]["release"].__setitem__("epsilon", 0.4),
    "held_out.release.scale": lambda d: d["held_out"]["release"].__setitem__("scale", 1.0),
    "held_out.release.partition": lambda d: d["held_out"]["release"].__setitem__("partition", None),
    "held_out.alpha": lambda d: d["held_out"].__setitem__("alpha", 0.2),
    "held_out.composition": lambda d: d["held_out"].__setitem__("composition", "sequential"),
    "held_out.test_size": lambda d: d["held_out"].__setitem__("test_size", 1.0),
    "held_out.exact_accuracy": lambda d: d["held_out"].__setitem__("exact_accuracy", 0.91),
    "held_out.rule": lambda d: d["held_out"].pop("rule"),
    "held_out": lambda d: d["inner_model"].__setitem__("held_out", d["held_out"]),
}


@pytest.mark.parametrize("field", sorted(EDITS))
def test_an_edited_section_is_refused_naming_the_field(fitted, tmp_path, capsys, field):
    out, _ = fitted
    path = _edited(out, tmp_path, EDITS[field])
    with pytest.raises(ModelFileError) as exc:
        load_model(path)
    msg = str(exc.value)
    assert f"field '{field}'" in msg
    assert main(["card", str(path), "--out", str(tmp_path / "c.html")]) == 2
    assert main(["inspect", str(path)]) == 2
    assert not (tmp_path / "c.html").exists()


def test_the_sections_epsilon_is_checked_against_the_files_own_budget(fitted):
    """The section is checked against the budget of the file it sits in: beside a budget of 0.4 (another file's),
    a section written for 0.8 is refused."""
    data = _read(fitted[0])
    data["privacy_ledger"]["budget"]["epsilon"] = 0.4
    with pytest.raises(ModelFileError, match="'held_out.epsilon_each' is 0.4; expected 0.2"):
        check_held_out(data)


def test_the_section_only_on_a_private_models_file(fitted, tmp_path):
    path, _ = _csv(tmp_path, name="g.csv")
    X = pd.get_dummies(pd.read_csv(path)[["colour"]]).astype(int)
    X["y"] = pd.read_csv(path)["y"]
    X.to_csv(tmp_path / "bin.csv", index=False)
    assert main(["fit", "--data", str(tmp_path / "bin.csv"), "--target", "y", "--model", "greedy-rule-list",
                 "--seed", "0", "--out", str(tmp_path / "g.json")]) == 0
    data = _read(tmp_path / "g.json")
    assert "held_out" not in data  # a non-private model: nothing DP to write
    data["held_out"] = _read(fitted[0])["held_out"]
    (tmp_path / "g2.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="'held_out' is present on a file without a privacy budget"):
        load_model(tmp_path / "g2.json")


def test_files_without_the_section_load_as_before(tmp_path, capsys):
    path, _ = _csv(tmp_path)
    out = tmp_path / "none.json"
    assert _fit(path, out, "--test-size", "0") == 0  # nothing held out: no section
    assert "held_out" not in _read(out)
    model = load_model(out)
    model.save(tmp_path / "py.json")  # a model saved from Python has none
    assert "held_out" not in _read(tmp_path / "py.json")
    assert "Held-out accuracy" not in card_of_file(tmp_path / "py.json")
    assert "Held-out accuracy" not in model.card()
    assert main(["inspect", str(tmp_path / "py.json")]) == 0
    assert "held-out accuracy" not in capsys.readouterr().out


def test_artifact_check_the_sections_public_fields_do_not_depend_on_the_data(tmp_path, capsys):
    """Fit on D and on D minus one record with many seeds: every field of the section that is constant across
    seeds is equal on both sides (only the noisy counts vary, and they are noisy)."""
    path, frame = _csv(tmp_path, n=120)
    smaller = tmp_path / "d1.csv"
    frame.iloc[1:].to_csv(smaller, index=False)
    sections = {}
    for side, data in (("D", path), ("D-1", smaller)):
        runs = []
        for seed in range(12):
            out = tmp_path / f"{side}{seed}.json"
            assert _fit(data, out, seed=seed) == 0
            runs.append(_read(out)["held_out"])
        sections[side] = runs
    capsys.readouterr()
    for runs in sections.values():
        assert len({json.dumps(sorted(s)) for s in runs}) == 1
    keys = sections["D"][0]
    constant = {k for k in keys if len({json.dumps(s[k]) for s in sections["D"] + sections["D-1"]}) == 1}
    for k in keys:
        values = {side: {json.dumps(s[k]) for s in sections[side]} for side in sections}
        if len(values["D"]) == 1 and len(values["D-1"]) == 1:
            assert values["D"] == values["D-1"], k  # constant across seeds on each side: equal on both
    assert constant == set(keys) - {"noisy_correct", "noisy_records"}
    for s in sections["D"] + sections["D-1"]:
        assert math.isfinite(s["noisy_correct"]) and isinstance(s["noisy_records"], int)


@needs_browser
def test_the_cli_card_renders_its_held_out_estimate_in_a_browser(fitted, tmp_path, capsys):
    out, printed = fitted
    line = LINE.search(printed).group(0)
    assert main(["card", str(out), "--out", str(tmp_path / "c.html")]) == 0
    dom, _, console, requests = render(tmp_path / "c.html", tmp_path)
    assert console == [] and requests == set()
    text = text_of(dom)
    assert "Held-out accuracy" in text and line in text and "costs no privacy beyond the budget" in text
