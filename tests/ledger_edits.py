"""Edits of saved model files that the verifier tests share: where a ledger's entries are, how to make its
recorded total agree with edited entries, a cheaper entry, and loading an edited dict as a user would."""

import json
import pathlib
import tempfile

from dpglass.models import load_model
from dpglass.privacy.ledger import PrivacyLedger


def entries(data: dict) -> list:
    """The file's ledger entries (edited in place)."""
    return data["privacy_ledger"]["entries"]


def recompose(data: dict) -> None:
    """Make the ledger's recorded total and guarantee agree with its (edited) entries, as a forger would."""
    ledger = PrivacyLedger.from_dict(data["privacy_ledger"])
    eps, delta = ledger.total()
    data["privacy_ledger"]["total"] = {"epsilon": eps, "delta": delta}
    data["privacy_ledger"]["guarantee"] = ledger.guarantee


def cheaper(data: dict, i: int) -> None:
    """Entry ``i`` claims half its epsilon (its curve too), the totals recomposed."""
    entries(data)[i]["epsilon"] /= 2
    if (entries(data)[i].get("curve") or {}).get("epsilon"):
        entries(data)[i]["curve"]["epsilon"] /= 2
    recompose(data)


def load_dict(data: dict):
    """``load_model`` on the dict written to a file (the path a user's file takes)."""
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "model.json"
        path.write_text(json.dumps(data))
        return load_model(path)
