"""Readouts of a fitted model, all post-processing of the released model: ``explain()`` (a tidy DataFrame per
family), ``plot()`` (a matplotlib Figure; the ``plot`` extra) and the model card (one self-contained HTML page
built from a verified model file, ``dpglass card``)."""

from dpglass.models.readout.explain import explain_model, family_of

__all__ = ["explain_model", "family_of", "model_card", "plot_model"]


def plot_model(model, **kwargs):
    """``model.plot()``: see :func:`dpglass.models.readout.plot.plot_model`."""
    from dpglass.models.readout.plot import plot_model as _plot

    return _plot(model, **kwargs)


def model_card(model, path=None) -> str:
    """``model.card()``: see :func:`dpglass.models.readout.card.model_card`."""
    from dpglass.models.readout.card import model_card as _card

    return _card(model, path)
