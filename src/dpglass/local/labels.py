"""The local-DP classifiers' label set: public, two distinct labels (read by the classifier and the report
files, :mod:`dpglass.local.io`)."""

from __future__ import annotations

import json
import numbers

import numpy as np

from dpglass.exceptions import InvalidParameterError


def _declared_classes(classes):
    """The public label set as an array: two distinct labels (strings or numbers), or None."""
    if classes is None:
        return None
    labels = list(classes)
    if len(labels) != 2 or len({json.dumps(_plain(c)) for c in labels}) != 2:
        raise InvalidParameterError(f"The 'classes' parameter must be the two distinct class labels, negative "
                                    f"first. Got {classes!r} instead.")
    if not all(isinstance(_plain(c), (str, numbers.Real)) and not isinstance(_plain(c), bool) for c in labels):
        raise InvalidParameterError(f"The 'classes' labels must be strings or numbers. Got {classes!r} instead.")
    return np.asarray(labels)


def _plain(value):
    """A numpy scalar as its Python value (JSON-ready)."""
    return value.item() if hasattr(value, "item") else value
