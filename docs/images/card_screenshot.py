"""How docs/images/card.png was made: dp-gam in a DPPipeline on five raw columns of Adult (epsilon 1, cryptographic
noise, so each run draws another model), its card, and a headless Chromium screenshot scaled to 3/4 and reduced to
64 colours.

    DPGLASS_DATA=/work/shared/data python docs/images/card_screenshot.py /tmp/card_png
"""

import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
from PIL import Image

from dpglass.models import DPGAMClassifier, DPPipeline
from dpglass.datasets import get_data_home

COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
           "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income"]
SCHEMA = {"target": "income", "columns": [
    {"name": "age", "kind": "numeric", "bounds": [17, 90], "thresholds": [25, 35, 45, 55, 65]},
    {"name": "education-num", "kind": "numeric", "bounds": [1, 16], "thresholds": [8.5, 9.5, 12.5, 13.5]},
    {"name": "hours-per-week", "kind": "numeric", "bounds": [1, 99], "thresholds": [34.5, 40.5, 50.5]},
    {"name": "marital-status", "kind": "categorical", "missing": "none",
     "categories": ["Married-civ-spouse", "Never-married", "Divorced", "Separated", "Widowed"]},
    {"name": "sex", "kind": "categorical", "categories": ["Female", "Male"]}]}


def main(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    frame = pd.read_csv(Path(get_data_home()) / "raw" / "adult" / "adult.data", names=COLUMNS, skipinitialspace=True)
    X = frame[[c["name"] for c in SCHEMA["columns"]]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPPipeline(schema=SCHEMA, model=DPGAMClassifier(classes=["<=50K", ">50K"]), epsilon=1.0)
        model.fit(X, frame["income"])
    model.save(work / "adult_gam.json")
    subprocess.run([sys.executable, "-m", "dpglass.cli", "card", str(work / "adult_gam.json"), "--out",
                    str(work / "card.html")], check=True)
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=820,2100", f"--screenshot={work / 'full.png'}", (work / "card.html").as_uri()],
                   check=True, capture_output=True)
    im = Image.open(work / "full.png").convert("RGB")
    im = im.resize((im.width * 3 // 4, im.height * 3 // 4), Image.LANCZOS)
    im.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(Path(__file__).with_name("card.png"), optimize=True)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "card_png"))
