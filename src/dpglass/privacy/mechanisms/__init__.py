"""Differentially private mechanisms: the only place dpglass draws privacy noise.

One module per family, as in diffprivlib's ``mechanisms/``:

``laplace``
    :class:`DiscreteLaplaceMechanism` (counts, integers out) and
    :class:`LaplaceMechanism` (real values, released on a public grid),
    both sampled exactly; ``sample_laplace`` (NumPy's float sampler, for the
    audit's reference cases only).
``gaussian``
    :class:`GaussianMechanism` (Dwork & Roth 2014, Thm A.1; Balle & Wang 2018)
    and :class:`DiscreteGaussianMechanism` (Canonne, Kamath & Steinke 2020;
    counts, integers out, sampled exactly).
``smooth``
    :class:`SmoothLaplaceMechanism`, :class:`SmoothCauchyMechanism`
    (Nissim, Raskhodnikova & Smith 2007, "NRS").
``selection``
    :class:`ExponentialMechanism` (McSherry & Talwar 2007),
    :class:`PermuteAndFlip` (McKenna & Sheldon 2020),
    :class:`ReportNoisyMax` (Dwork & Roth 2014, Claim 3.9), sampled exactly.

Every mechanism is a small immutable object whose parameters are validated at
construction.  Randomness comes only from the :class:`numpy.random.Generator`
passed as ``rng`` (:mod:`dpglass.privacy.rng`); exact samplers live in
:mod:`dpglass.privacy.samplers`.  ``docs/privacy.md`` (section "Mechanisms")
gives, for each mechanism, what it releases, its guarantee, the proof or
reference and the assumptions.
"""

from dpglass.privacy.mechanisms.gaussian import DiscreteGaussianMechanism, GaussianMechanism
from dpglass.privacy.mechanisms.laplace import DiscreteLaplaceMechanism, LaplaceMechanism, sample_laplace
from dpglass.privacy.mechanisms.selection import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from dpglass.privacy.mechanisms.smooth import (
    SmoothCauchyMechanism,
    SmoothLaplaceMechanism,
    cauchy_like_cdf,
    sample_cauchy_like,
)

__all__ = [
    "count_fields",
    "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism",
    "ExponentialMechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "PermuteAndFlip",
    "ReportNoisyMax",
    "SmoothCauchyMechanism",
    "SmoothLaplaceMechanism",
    "cauchy_like_cdf",
    "sample_cauchy_like",
    "sample_laplace",
]


def count_fields(mech) -> dict:
    """The ledger fields of a count (or count vector) released by ``mech``: a record moves one cell by 1.

    ``mech`` is a :class:`DiscreteLaplaceMechanism` or :class:`DiscreteGaussianMechanism`;
    add ``release`` (and a ``note``) to make a :class:`~dpglass.privacy.ledger.LedgerEntry`.
    """
    name = "discrete gaussian" if isinstance(mech, DiscreteGaussianMechanism) else "discrete laplace"
    return dict(mechanism=name, epsilon=mech.epsilon, delta=mech.delta, sensitivity=1.0, scale=mech.scale,
                curve=mech.curve)
