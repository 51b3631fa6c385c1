"""What every dpglass classifier shares: parameter checks, input checks, delta.

Estimators follow scikit-learn's conventions: ``__init__`` only stores
keyword-only parameters; ``fit`` validates them once (constraints declared as
data in ``_parameter_constraints``), resolves ``random_state`` once, never
mutates a parameter, and stores learned state in attributes ending in ``_``.
"""

from __future__ import annotations

import json
import math
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from dpglass._validation import InstanceOf, Interval, check_binary_X, check_labels, validate_params
from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.accounting import DEFAULT_DELTA
from dpglass.privacy.ledger import PrivacyLedger

__all__ = ["ClassifierBase", "CLASSES", "DEFAULT_DELTA", "EPSILON", "DELTA_OR_NONE", "RANDOM_STATE"]

#: Above this, ``fit`` warns that delta is large (whatever the data).
LARGE_DELTA = 1e-5
#: Above this epsilon, ``fit`` warns that the guarantee is weak.
WEAK_EPSILON = 10.0

#: Common constraint declarations.
#: epsilon is finite: an infinite budget is no guarantee at all.
EPSILON = [Interval(numbers.Real, 0, math.inf, closed="neither")]
DELTA_OR_NONE = [Interval(numbers.Real, 0, 1, closed="left"), None]
RANDOM_STATE = ["random_state"]
#: The public label set: two labels, or None to read it from y (then a y
#: holding one class is refused, which depends on the data: declare it).
CLASSES = [InstanceOf((list, tuple), "a list of the class labels (two or more, in the order of predict_proba's columns)"), None]


class ClassifierBase(ClassifierMixin, BaseEstimator):
    """Base for dpglass classifiers on 0/1 features (two classes, or K up to ``_max_classes``).

    Subclasses declare ``_parameter_constraints`` and implement ``fit`` and
    ``predict_proba``; ``predict`` and ``decision_function`` helpers live here.
    """

    _parameter_constraints: dict = {}
    #: Whether ``fit`` accepts dask collections (it then learns from their
    #: :class:`~dpglass.aggregates.PatternTable`, see ``_check_fit_data``).
    _distributed_fit = False
    #: DP models trade accuracy for privacy: scikit-learn's fixed accuracy bar
    #: in check_classifiers_train does not apply to them (``poor_score`` tag).
    _private = False
    #: The most classes the model learns (2: binary only; a multiclass family raises it).
    _max_classes = 2

    # ----------------------------------------------------------- validation
    def _validate_params(self) -> None:
        from dpglass._validation import InstanceOf, Options

        expanded = {}
        for name, accepted in self._parameter_constraints.items():
            cons = []
            for c in accepted:
                if c is None:
                    cons.append(InstanceOf(type(None)))
                elif c == "random_state":
                    cons.extend(
                        [
                            InstanceOf(type(None)),
                            Interval(numbers.Integral, 0, None, closed="left"),
                            InstanceOf((np.random.SeedSequence, np.random.Generator), "a numpy SeedSequence or Generator"),
                        ]
                    )
                elif isinstance(c, (list, tuple, set)):
                    cons.append(Options(tuple(c)))
                else:
                    cons.append(c)
            expanded[name] = cons
        validate_params(self.get_params(deep=False), expanded, type(self).__name__)

    def _check_fit_data(self, X, y):
        """Validate ``X`` (0/1) and ``y`` (two classes, or up to ``_max_classes``); set ``classes_``.

        Dask ``X`` and ``y`` (models with ``_distributed_fit``) are checked and
        reduced on the cluster: the result is then ``(PatternTable, None)``.
        Such models also take a :class:`~dpglass.aggregates.PatternTable`
        carrying its ``classes`` as ``X`` (``y`` ignored), returned as is.

        A caller that knows the label set (the public schema, e.g.
        :class:`~dpglass.models.PrivateGridSearch` fitting on part of the
        data) sets ``_schema_classes``; then ``y`` may hold a single class.
        """
        declared = self.__dict__.get("_schema_classes")
        if declared is None:
            declared = getattr(self, "classes", None)
        if declared is None and self._private:
            self._warn_undeclared_classes()
        from dpglass.aggregates import PatternTable, adopt_table, is_distributed

        if isinstance(X, PatternTable):
            # a table built by a caller (PrivateGridSearch's parts, a pipeline): labels are in it
            if not self._distributed_fit:
                from dpglass.exceptions import DataValidationError

                raise DataValidationError(f"{type(self).__name__} does not fit on a PatternTable; pass records.")
            return adopt_table(self, X, declared), None
        if is_distributed(X) or is_distributed(y):
            # partitioned data: checked and reduced to its pattern table on the cluster (dpglass.aggregates)
            from dpglass.aggregates.dask_backend import fit_table

            return fit_table(self, X, y, classes=declared), None
        # with a public label set a private fit takes zero records: whether fit succeeds must not depend on n
        X01 = check_binary_X(self, X, reset=True, allow_empty=declared is not None)
        y01, classes = check_labels(y, classes=declared, max_classes=self._max_classes, model=type(self).__name__)
        if y01.shape[0] != X01.shape[0]:
            from dpglass.exceptions import DataValidationError

            raise DataValidationError(
                f"X has {X01.shape[0]} rows but y has {y01.shape[0]} labels; they must match."
            )
        self.classes_ = classes
        return X01, y01

    def _fit_table(self, X, y):
        """``_check_fit_data``, then the :class:`~dpglass.aggregates.PatternTable` of the records.

        Dask input and tables come back as they are; in-memory records are
        reduced here (with the estimator's classes and feature names), so both
        paths learn from the same table.
        """
        from dpglass.aggregates import pattern_table

        X01, y01 = self._check_fit_data(X, y)
        if y01 is None:  # a table already (a PatternTable, or a DistributedTable left on the workers)
            return X01
        table = pattern_table(X01, y01)
        table.classes = list(self.classes_)
        table.columns = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        return table

    def _check_predict_data(self, X):
        check_is_fitted(self)
        return check_binary_X(self, X, reset=False)

    def _warn_undeclared_classes(self) -> None:
        """Every private fit without a declared label set warns, whatever the data (docs/privacy.md, "The label
        set"): the labels read from y are published."""
        from dpglass.exceptions import UndeclaredClassesWarning

        warnings.warn(f"{type(self).__name__}: classes=None, so the label set is read from y and published in "
                      "the model: which classes occur in the private data. Declare it (classes=[A, B, ...], "
                      "--classes A,B,...) unless it is public.", UndeclaredClassesWarning, stacklevel=4)

    def _resolve_delta(self, delta) -> float:
        """``delta=None`` means :data:`DEFAULT_DELTA`, a public constant (n is private).

        The default never depends on the data: a default of 1/n² would publish
        n through the ledger.  A large delta gets a data-independent warning.
        """
        if delta is None:
            return DEFAULT_DELTA
        if delta > LARGE_DELTA:
            warnings.warn(
                f"delta={delta:g} is large: delta should be well below 1/n (a mechanism may publish "
                f"about delta * n records in the clear), and {LARGE_DELTA:g} is already 1/n for "
                f"n = {1 / LARGE_DELTA:.0f}. The default is {DEFAULT_DELTA:g}.",
                UserWarning,
                stacklevel=3,
            )
        return float(delta)

    def _warn_about_guarantee(self, epsilon, unproven: str | None = None) -> None:
        """Data-independent warnings at fit time: a paper-claim mechanism, a very large epsilon."""
        from dpglass.exceptions import UnprovenGuaranteeWarning, WeakGuaranteeWarning

        if unproven:
            warnings.warn(
                f"{type(self).__name__}: {unproven} is a paper's claim that dpglass could not prove; the ledger "
                "marks it 'paper-claim'. Do not publish this model as differentially private (docs/privacy.md).",
                UnprovenGuaranteeWarning, stacklevel=3)
        if epsilon > WEAK_EPSILON:
            warnings.warn(
                f"epsilon={epsilon:g} is above {WEAK_EPSILON:g}: the guarantee then says little (an observer's odds "
                f"about any one person may change by a factor up to e^{epsilon:g}).",
                WeakGuaranteeWarning, stacklevel=3)

    # ------------------------------------------------------------ utilities
    def feature_names(self) -> list[str]:
        """The feature names seen in ``fit`` (``x0, x1, ...`` for arrays)."""
        check_is_fitted(self)
        if hasattr(self, "feature_names_in_"):
            return [str(c) for c in self.feature_names_in_]
        return [f"x{i}" for i in range(self.n_features_in_)]

    def predict(self, X):
        """Predict class labels for ``X``."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]  # a tie goes to the first class, as before for two

    # ---------------------------------------------------- printing, JSON
    def to_text(self) -> str:  # pragma: no cover - every model overrides it
        """The fitted model as people read it, with feature names."""
        raise NotImplementedError

    # ------------------------------------------ readouts: post-processing of the fitted model
    def explain(self):
        """The fitted model as a tidy DataFrame, one per family (:mod:`dpglass.models.readout`)."""
        from dpglass.models.readout import explain_model

        return explain_model(self)

    def plot(self, **kwargs):
        """The fitted model as a matplotlib Figure (the ``plot`` extra: ``pip install dpglass[plot]``)."""
        from dpglass.models.readout import plot_model

        return plot_model(self, **kwargs)

    def card(self, path=None) -> str:
        """The model card: one self-contained HTML page built from the verified file of this model (written to
        ``path`` when given; the HTML is returned)."""
        from dpglass.models.readout import model_card

        return model_card(self, path)

    def __str__(self) -> str:
        try:
            check_is_fitted(self)
        except Exception:
            return repr(self)
        return self.to_text()

    def _state_to_dict(self) -> dict:  # pragma: no cover - every model overrides it
        """The model-specific learned state, JSON-ready."""
        raise NotImplementedError

    def _state_from_dict(self, data: dict) -> None:  # pragma: no cover
        """Restore what :meth:`_state_to_dict` wrote."""
        raise NotImplementedError

    @classmethod
    def _params_from_dict(cls, params: dict) -> dict:
        """Turn JSON parameters back into constructor arguments (hook)."""
        return params

    def to_dict(self) -> dict:
        """A JSON-ready description of the fitted model (no pickle).

        A private model's ``random_state`` is written as None: publishing the
        seed of its noise would void its guarantee.
        """
        check_is_fitted(self)
        params = self.get_params(deep=False)
        rs = params.get("random_state")
        if self._private or not (rs is None or isinstance(rs, numbers.Integral)):
            # a DP model's seed would let anyone replay and subtract its noise;
            # a Generator or SeedSequence is not JSON anyway
            params["random_state"] = None
        data = {
            "model": type(self).__name__,
            "params": params,
            "classes": [c.item() if hasattr(c, "item") else c for c in self.classes_],
            "n_features_in": int(self.n_features_in_),
            "feature_names": self.feature_names(),
            "has_feature_names": hasattr(self, "feature_names_in_"),
            **self._state_to_dict(),
        }
        if hasattr(self, "privacy_ledger_"):
            data["privacy_ledger"] = self.privacy_ledger_.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict):
        """Rebuild a model written by :meth:`to_dict`.

        The dict is verified first (``dpglass.models._verify``): an incomplete,
        inconsistent or edited file raises :class:`~dpglass.exceptions.ModelFileError`.
        """
        from dpglass.models._verify import verify_model_dict

        verify_model_dict(data, cls)
        if data.get("model") != cls.__name__:
            raise InvalidParameterError(f"This is a {data.get('model')!r} model, not a {cls.__name__}.")
        model = cls(**cls._params_from_dict(dict(data["params"])))
        model.classes_ = np.array(data["classes"])
        model.n_features_in_ = int(data["n_features_in"])
        if data.get("has_feature_names"):
            model.feature_names_in_ = np.array(data["feature_names"], dtype=object)
        if "privacy_ledger" in data:
            model.privacy_ledger_ = PrivacyLedger.from_dict(data["privacy_ledger"])
        model._state_from_dict(data)
        return model

    def save(self, path) -> None:
        """Write the model as JSON (``dpglass.models.load_model`` reads it back)."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=2)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self._max_classes > 2
        tags.classifier_tags.poor_score = self._private
        tags.non_deterministic = False
        return tags
