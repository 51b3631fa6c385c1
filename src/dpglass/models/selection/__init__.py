"""PrivateGridSearch: private hyper-parameter selection (`plan`: its release plan, `candidates`: the grid's checks,
`law`: the law of the number of runs, `rdp`: its Rényi accounting, `verify`: its file check)."""

from dpglass.models.selection.estimator import PrivateGridSearch

__all__ = ["PrivateGridSearch"]
