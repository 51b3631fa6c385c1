"""The model card (issue 29): ``dpglass card MODEL.json --out card.html`` and ``model.card()``.

A real headless browser (Chromium from the system's packages, driven by ``chromium --headless --screenshot
--dump-dom``, one start per card) opens the card of each registered model family and of a DPPipeline: no console
message, no network request made by the page (Chromium's network log: a request whose isolation key is the
card's file:// page), the model's chart and the budget chart drawn (their colours hold pixels in the screenshot),
and its text holds the file's epsilon and every rule.  Without a browser those tests skip, saying why; the checks
that need none (an edited file refused, a self-contained page, the card a function of the file) always run.
"""

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

from dpglass.cli import main
from dpglass.exceptions import ModelFileError
from dpglass.models import DPPipeline, load_model
from dpglass.models.readout import explain_model
from dpglass.models.readout.card import card_of_file
from dpglass.models.readout.svg import BUDGET_COLOURS, CLASS_COLOURS
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.registry import list_estimators

sys.path.insert(0, os.path.dirname(__file__))
from test_explain import SCHEMA, _raw, fit_spec  # noqa: E402

BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no headless browser (Chromium) is installed, so the "
                                   "card's rendering is not checked: apt-get install chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
         "--disable-default-apps", "--window-size=900,3000", "--enable-logging=stderr", "--v=0"]
SPECS = list_estimators()


class _Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts = []

    def handle_data(self, data):
        self.parts.append(data)


def text_of(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    return re.sub(r"\s+", " ", "".join(parser.parts))


def render(page_path, tmp_path):
    """One browser start: the DOM as rendered, the screenshot's pixels, console lines, the page's requests."""
    png, net = tmp_path / "shot.png", tmp_path / "net.json"
    proc = subprocess.run([BROWSER, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
                           f"--log-net-log={net}", "--dump-dom", page_path.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert png.exists(), proc.stderr[-2000:]
    from PIL import Image

    pixels = np.asarray(Image.open(png).convert("RGB")).astype(int)
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    requests = set()
    for event in json.loads(net.read_text() or '{"events": []}').get("events", []):
        p = event.get("params", {})
        url = p.get("url", "")
        if url and not url.startswith(("file:", "data:")) and str(p.get("network_isolation_key", "")).startswith("file:"):
            requests.add(url)  # a request made by the card's page (the browser's own are keyed otherwise)
    return proc.stdout, pixels, console, requests


def colour_pixels(pixels, colours) -> int:
    total = 0
    for c in colours:
        rgb = np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)])
        total += int(np.sum(np.all(np.abs(pixels - rgb) <= 6, axis=2)))
    return total


def _pipeline(tmp_path):
    spec = next(s for s in SPECS if s.name == "dp-gam")
    raw = _raw()
    model = spec.make(**{k: v for k, v in spec.test_params.items() if k != "epsilon"}, classes=["no", "yes"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPPipeline(schema=SCHEMA, model=model, epsilon=2.0, random_state=0).fit(raw.drop(columns="y"), raw["y"])


CASES = [pytest.param(s.name, id=s.name) for s in SPECS] + [pytest.param("pipeline", id="DPPipeline")]


def _fitted(name, tmp_path):
    if name == "pipeline":
        return _pipeline(tmp_path)
    spec = next(s for s in SPECS if s.name == name)
    return fit_spec(spec, K=3 if name in ("dp-gbdt", "dp-rule-list") else 2)[0]


def _card(name, tmp_path):
    model = _fitted(name, tmp_path)
    path, out = tmp_path / "model.json", tmp_path / "card.html"
    model.save(path)
    assert main(["card", str(path), "--out", str(out)]) == 0
    return model, path, out


#: The families whose card a browser opens in the default run (a rule table, shape plots of raw columns, a pipeline's
#: schema); every other card under -m slow (one browser start each: the default run stays under 5 minutes).
BROWSER_DEFAULT = ("dp-rule-list", "dp-gam", "pipeline")
BROWSER_CASES = [c if c.values[0] in BROWSER_DEFAULT else pytest.param(*c.values, id=c.id, marks=pytest.mark.slow)
                 for c in CASES]


@needs_browser
@pytest.mark.parametrize("name", BROWSER_CASES)
def test_the_card_renders_in_a_browser_offline_with_its_charts_and_text(name, tmp_path, capsys):
    model, path, out = _card(name, tmp_path)
    data = json.loads(path.read_text())
    dom, pixels, console, requests = render(out, tmp_path)
    assert console == [], console
    assert requests == set(), requests
    text = text_of(dom)
    assert colour_pixels(pixels, CLASS_COLOURS) > 200, "the model's chart is blank or missing"
    if "privacy_ledger" in data:
        eps = PrivacyLedger.from_dict(data["privacy_ledger"]).total()[0]
        assert f"\u03b5 = {eps:.4g}" in text, text[:600]
        assert colour_pixels(pixels, list(BUDGET_COLOURS.values())) > 200, "the budget chart is blank or missing"
    else:
        assert "None. This is a non-private model" in text
    frame = explain_model(load_model(path))
    if frame.attrs["kind"] == "rules":
        for cond in frame["condition"].iloc[:-1]:
            assert cond in text, cond
    if name == "pipeline":
        assert "Schema" in text and "missing value" in text


@needs_browser
def test_the_network_check_sees_a_page_that_calls_out(tmp_path):
    """The detector itself: a page loading an image from the network is caught, so the empty set above means
    something."""
    page = tmp_path / "calls_out.html"
    page.write_text('<!DOCTYPE html><html><body><img src="https://example.invalid/x.png"></body></html>')
    _, _, _, requests = render(page, tmp_path)
    assert requests == {"https://example.invalid/x.png"}


@pytest.mark.parametrize("name", ["dp-rule-list", "dp-bag", "greedy-rule-list", "pipeline"])
def test_the_card_is_one_self_contained_page_built_from_the_file(name, tmp_path, capsys):
    model, path, out = _card(name, tmp_path)
    page = out.read_text()
    assert "<script" not in page.lower() and "<link" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I), "an external resource"
    assert "url(" not in page and "@import" not in page
    # the card is a function of the file alone: model.card() and the saved file's card agree (but their source)
    assert model.card().replace("model.card()", "model.json") == page
    if name == "dp-bag":  # paper-claim in red
        assert 'class="paper-claim"' in page and "Do not publish this model" in page


def test_model_card_writes_to_a_path(tmp_path):
    model = _fitted("dp-gbdt", tmp_path)
    html = model.card(tmp_path / "c.html")
    assert (tmp_path / "c.html").read_text() == html and html.startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("edit", ["epsilon", "rule", "class"])
def test_the_card_of_an_edited_file_is_refused(edit, tmp_path, capsys):
    model = _fitted("dp-rule-list", tmp_path)
    data = model.to_dict()
    if edit == "epsilon":
        data["privacy_ledger"]["entries"][0]["epsilon"] /= 2
    elif edit == "rule":
        data["rules"][0]["counts"][0] += 0.5
    else:
        data["classes"][0] = 7
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError):
        card_of_file(path)
    assert main(["card", str(path), "--out", str(tmp_path / "c.html")]) == 2
    assert not (tmp_path / "c.html").exists()
    assert "edited.json" in capsys.readouterr().err


def test_a_model_without_a_readout_is_refused_with_the_reason(tmp_path, capsys):
    from dpglass.local import LDPHistogramClassifier

    rng = np.random.default_rng(0)
    X, y = rng.random((200, 2)), rng.integers(0, 2, 200)
    clf = LDPHistogramClassifier(alpha=2.0, bounds=([0.0, 0.0], [1.0, 1.0]), random_state=0).fit(X, y)
    clf.save(tmp_path / "ldp.json")
    assert main(["card", str(tmp_path / "ldp.json"), "--out", str(tmp_path / "c.html")]) == 2
    assert "has no readout" in capsys.readouterr().err


def test_the_card_of_a_private_selection_is_its_selected_models_file(tmp_path, capsys):
    from dpglass.models import DPRuleListClassifier, PrivateGridSearch
    from test_explain import _data

    X, y = _data()
    search = PrivateGridSearch(estimator=DPRuleListClassifier(classes=[0, 1]), param_grid={"max_length": [1, 2]},
                               epsilon=2.0, random_state=0).fit(X, y)
    search.save(tmp_path / "sel.json")
    assert main(["card", str(tmp_path / "sel.json"), "--out", str(tmp_path / "c.html")]) == 0
    page = (tmp_path / "c.html").read_text()
    assert "Selected by" in page and search.card().replace("model.card()", "sel.json") == page


def test_bad_paths_get_one_clear_line(tmp_path, capsys):
    assert main(["card", str(tmp_path / "missing.json"), "--out", str(tmp_path / "c.html")]) == 2
    assert "could not read a dpglass model file" in capsys.readouterr().err
    model = _fitted("dp-rule-list", tmp_path)
    model.save(tmp_path / "m.json")
    assert main(["card", str(tmp_path / "m.json"), "--out", str(tmp_path / "no" / "such" / "c.html")]) == 2
    assert "could not write the card" in capsys.readouterr().err
