"""The local-DP classifiers' label set: public, two or more distinct labels (read by the classifier and the
report files, :mod:`dpglass.local.io`)."""

from __future__ import annotations

import json
import numbers

import numpy as np

from dpglass.exceptions import InvalidParameterError


#: The most labels a report can encode (one byte; the central models' limit too).
MAX_LABELS = 255


def _declared_classes(classes):
    """The public label set as an array: two or more distinct labels (strings or numbers), or None."""
    if classes is None:
        return None
    labels = list(classes)
    if not 2 <= len(labels) <= MAX_LABELS or len({json.dumps(_plain(c)) for c in labels}) != len(labels):
        raise InvalidParameterError(f"The 'classes' parameter must be two or more distinct class labels (at most "
                                    f"{MAX_LABELS}), in order; for two, the negative first. Got {classes!r} instead.")
    if not all(isinstance(_plain(c), (str, numbers.Real)) and not isinstance(_plain(c), bool) for c in labels):
        raise InvalidParameterError(f"The 'classes' labels must be strings or numbers. Got {classes!r} instead.")
    return np.asarray(labels)


def _plain(value):
    """A numpy scalar as its Python value (JSON-ready)."""
    return value.item() if hasattr(value, "item") else value
