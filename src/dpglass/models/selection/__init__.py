"""PrivateGridSearch: private hyper-parameter selection (`law`: the selection's law, `rdp`: its Rényi accounting)."""

from dpglass.models.selection.estimator import PrivateGridSearch

__all__ = ["PrivateGridSearch"]
