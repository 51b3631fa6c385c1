"""One private estimator over raw columns: a public schema, its encoder, a DP model, one ledger.

:class:`DPPipeline` is what a practitioner fits on a table as it arrives
(numeric, categorical and id columns): the schema turns it into the columns
its model takes (:func:`~dpglass.models.pipeline.route.model_route`): named
0/1 features for a 0/1 model (spending budget only where the schema asks for
DP quantiles), numeric columns as numbers with their public bounds for a model
that bins numbers itself (dp-gbdt, dp-gam), categorical columns as codes for
one that reads categories (dp-gam); plus one noisy count of out-of-bounds
records.  The model is fitted on them with the rest of the budget, and ``privacy_ledger_`` holds the encoder's releases and the
model's, never more than the budget given.  The saved JSON carries the
encoding, so ``predict`` and ``dpglass predict`` take raw records and the
printout speaks in the table's own terms ("age>37 and
occupation=Exec-managerial then >50K").
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from dpglass._validation import InstanceOf, Interval, Options
from dpglass.aggregates import is_distributed
from dpglass.exceptions import BudgetExceededError, DataValidationError, InvalidParameterError, WeakGuaranteeWarning
from dpglass.models._base import CLASSES, DELTA_OR_NONE, EPSILON, RANDOM_STATE, ClassifierBase
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.rng import check_random_state, is_replayable, spawn
from dpglass.models.pipeline.auto import (
    AUTO_CANDIDATES, AUTO_RULE, AUTO_SHARE, auto_plan, candidates, choose_model, rule_version,
)
from dpglass.models.pipeline.route import column_digests, load_encoding, model_inputs, model_route, with_cut_codes
from dpglass.registry import get_spec
from dpglass.schema import Encoding, Schema, fit_encoding, load_schema
from dpglass.schema.encoding import encoder_epsilons  # noqa: F401  (re-exported: the pipeline's budget split)

__all__ = ["DPPipeline", "model_inputs", "model_route", "source_columns"]

_SHARE = [Interval(numbers.Real, 0, 1, closed="left")]


class DPPipeline(ClassifierBase):
    """A DP model fitted on raw columns through a public schema, with one ledger.

    Parameters
    ----------
    schema : Schema, dict or path
        The public description of the table (:mod:`dpglass.schema`).
    model : estimator or "auto"
        ``"auto"``: a default model for the table, by a versioned rule on
        public facts and one noisy count of records (version 2, what new fits
        follow and write as the file's ``auto_rule``): ``dp-gam`` when
        ``epsilon >= 1`` and ``records_noisy * epsilon >= 1000``; else, when
        ``records_noisy * epsilon >= 100 * d`` (``d`` feature columns),
        ``dp-gam`` if a feature column is numeric or categorical and
        ``dp-gbdt`` if all are binary; else ``dp-rule-list`` (registry
        defaults); at ``delta=0`` ``dp-gbdt`` takes ``dp-gam``'s place (its
        Gaussian noise needs delta > 0).  The count is a discrete Laplace release at 2% of epsilon
        (sensitivity 1), the ledger's first entry; the rest of the budget is
        shared by the encoder and the model as below.  The rule was set on
        validation parts of the training parts of every built-in table, raw
        and 0/1, at epsilon 0.1, 0.4, 1 and 5 (``benchmarks/auto_rule.py``;
        docs/privacy.md, "model='auto'").  Files written before versions (no
        ``auto_rule``) were chosen by version 1 (``dp-gbdt`` when
        ``epsilon >= 0.25`` and ``records_noisy * epsilon >= 500``, else
        ``dp-rule-list``); they load and are checked under it
        (:mod:`dpglass.models.pipeline.auto`).
        Otherwise an unfitted dpglass DP estimator (``DPRuleListClassifier()``,
        ``SmoothBoostClassifier(...)``, ...); its ``epsilon`` and
        ``random_state`` are set by the pipeline, and its ``delta`` when the
        pipeline's ``delta`` is given.  A model with a ``bounds`` parameter
        (``DPGradientBoostingClassifier``, ``DPGAMClassifier``) gets each
        numeric column as its values clipped to the schema's bounds, and
        ``bounds`` set to them (None for the other columns): it bins them
        within its own plan (its grid or DP quantiles), so the schema's
        grid or DP-quantile thresholds are not used and no encoder
        quantile is released; a missing value (``missing="none"``) is the
        lower bound, above no cut point, as on the 0/1 route.  A model with a
        ``categories`` parameter gets each categorical column as codes
        ``0..m-1`` (plus a last code for a missing or unlisted value under
        ``missing="none"``) and ``categories`` set to those counts, and each
        numeric column that lists its cut points (``thresholds=[...]``) as
        the code of its interval between them (the number it is above; a
        missing value the extra last code), no bounds, ``categories`` set
        (:class:`~dpglass.models.pipeline.route.CutCodeEncoding`); otherwise
        categorical columns are one-hot 0/1 (dp-gbdt's trees split a 0/1
        column at 0.5).  A model with ``feature_groups=None``
        (``DPGAMClassifier``) gets each encoded column's raw column as its
        group, so that it reads (prints, explains) per raw column.  Every
        other model gets the 0/1 columns.
    epsilon : float > 0, default=1.0
        The whole budget: encoder and model together.
    delta : float in [0, 1) or None, default=None
        Set on the model when it has a ``delta``.  None: the model keeps its
        own ``delta`` (``SmoothBoostClassifier()`` stays pure epsilon-DP,
        ``DPRuleListClassifier()`` takes its public default 1e-8).
    quantile_share : float in [0, 1), default=0.1
        Share of epsilon for the DP quantiles, spent only if the schema asks
        for ``"dp-quantiles"`` thresholds.
    clip_share : float in [0, 1), default=0.02
        Share of epsilon for one noisy count of the records with values
        outside the bounds (spent only if the schema has numeric columns),
        and a :class:`~dpglass.schema.ClippingWarning` when that count is
        clearly above its noise (false alarm at most 1/1000).  0: no count is
        made or released, nothing is warned, and that share goes to the model;
        the ledger says so in a zero-epsilon entry.
    random_state : None, int, SeedSequence or Generator
    classes : list of K >= 2 labels or None, default=None
        The public label set, given to the model (to the chosen one with
        ``model="auto"``); None: the model's own ``classes``.

    Attributes
    ----------
    encoding_ : Encoding
        The public cut points and categories.
    model_ : estimator
        The fitted model (on the encoded columns).
    privacy_ledger_ : PrivacyLedger
        The encoder's releases followed by the model's (``model: ...``).
    model_choice_, records_noisy_, auto_rule_ : str, int, int
        ``model="auto"`` only: the registered name chosen, the released
        noisy count of records it was chosen from, and the version of the
        rule that chose it (the file's ``auto_rule``; absent: 1).
    clipped_records_noisy_ : int or None
        The released noisy count of records with clipped values (None with
        ``clip_share=0`` or without numeric columns).
    """

    _private = True
    #: Through Dask when the model fits through Dask (the encoding is a per-partition map).
    _distributed_fit = True
    _parameter_constraints = {
        "schema": [InstanceOf((Schema, dict, str)), InstanceOf(type(None))],
        "model": [InstanceOf(ClassifierBase, "an unfitted dpglass estimator"), Options(("auto",))],
        "epsilon": EPSILON,
        "delta": DELTA_OR_NONE,
        "quantile_share": _SHARE,
        "clip_share": _SHARE,
        "random_state": RANDOM_STATE,
        "classes": CLASSES,
    }

    @property
    def _max_classes(self) -> int:
        """The pipeline learns the classes its model learns (scikit-learn's ``multi_class`` tag follows)."""
        if isinstance(self.model, str):  # "auto": what every model the rule may choose learns
            return min(get_spec(name).cls._max_classes for name in AUTO_CANDIDATES)
        return getattr(self.model, "_max_classes", 2)

    def __init__(self, *, schema=None, model=None, epsilon=1.0, delta=None, quantile_share=0.1, clip_share=0.02,
                 random_state=None, classes=None):
        self.schema = schema
        self.model = model
        self.epsilon = epsilon
        self.delta = delta
        self.quantile_share = quantile_share
        self.clip_share = clip_share
        self.random_state = random_state
        self.classes = classes

    # ------------------------------------------------------------------ fit
    def _schema(self) -> Schema:
        if isinstance(self.schema, Schema):
            return self.schema
        if isinstance(self.schema, dict):
            return Schema.from_dict(self.schema)
        if isinstance(self.schema, str):
            return load_schema(self.schema)
        raise InvalidParameterError("DPPipeline needs a schema: a Schema, its dict, or a schema file's path.")

    def _spendable(self) -> float:
        """The epsilon the encoder and the model share: all of it, but for ``model="auto"``'s noisy count."""
        return float(self.epsilon) * (1 - AUTO_SHARE) if isinstance(self.model, str) else float(self.epsilon)

    def _budget(self, schema: Schema, numbers: bool = False) -> tuple[float, float, float]:
        eps = self._spendable()
        eps_q, eps_clip = encoder_epsilons(schema, eps, self.quantile_share, self.clip_share, numbers)
        asking = [c.name for c in schema.features if c.kind == "numeric" and c.thresholds == "dp-quantiles"]
        if asking and eps_q <= 0 and not numbers:
            raise InvalidParameterError(
                f"quantile_share=0 leaves nothing for the DP quantiles the schema asks for (column {asking[0]!r}); "
                "give them a share > 0, or cut the column at \"grid\" or listed cut points."
            )
        if eps_q + eps_clip >= eps:
            raise InvalidParameterError(
                f"quantile_share + clip_share = {self.quantile_share + self.clip_share:g} leaves no budget for the "
                "model; keep their sum below 1."
            )
        return eps_q, eps_clip, eps - eps_q - eps_clip

    def fit(self, X, y, X_public=None):
        """Encode the raw table with the schema and fit the model; one ledger for both.

        ``X_public``: for a model that also learns from a declared public part
        (``SubsampleAggregateClassifier``, ``DPBaggingClassifier``), those
        records as a raw table with the schema's columns; they are encoded
        with the same cut points and categories (public: no budget).
        """
        self._validate_params()
        schema = self._schema()
        rng = check_random_state(self.random_state)
        selector = None
        if isinstance(self.model, str):  # "auto": one noisy count first, from its own child of the generator
            count_rng, rng = spawn(rng, 2)
            selector, base = self._auto_model(X, y, schema, count_rng)
        else:
            base = self.model
        if not getattr(base, "_private", False):
            raise InvalidParameterError("DPPipeline's model must be a differentially private dpglass estimator.")
        if base.get_params().get("feature_groups") is not None:  # the file check binds them to the schema
            raise InvalidParameterError(
                f"DPPipeline groups {type(base).__name__}'s features by the schema's columns itself; leave "
                "feature_groups=None on the pipeline's model.")
        if self.classes is not None and "classes" in base.get_params():
            base = clone(base).set_params(classes=list(self.classes))
        enc_rng, model_rng = spawn(rng, 2)
        encoded = self._fit_encoding(X, y, schema, enc_rng, **model_route(type(base)))
        params = {"epsilon": encoded.model_epsilon, "random_state": model_rng, **model_inputs(base, encoded.encoding)}
        if self.delta is not None and "delta" in base.get_params():
            params["delta"] = self.delta  # None: the model keeps its own (a pure model stays pure)
        model = clone(base).set_params(**params)
        self._warn_about_guarantee(float(self.epsilon))  # at the pipeline's epsilon, not the model's share of it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", WeakGuaranteeWarning)
            model.fit(encoded.X, encoded.y, **self._public_part(X_public, encoded.encoding, model))
        self._set_fitted(schema, encoded, model, is_replayable(rng), selector)
        return self

    def _auto_model(self, X, y, schema: Schema, rng):
        """``model="auto"``: release the noisy count of records (:func:`~dpglass.models.pipeline.auto.auto_plan`)
        and build the model :func:`~dpglass.models.pipeline.auto.choose_model` picks from it and public facts.
        Returns ``(the selector's ledger, the unfitted model)``."""
        for name in candidates(AUTO_RULE):  # the shares must suit whichever model the count picks: refused before it
            self._budget(schema, model_route(get_spec(name).cls)["numbers"])
        if is_distributed(X) or is_distributed(y):
            n = int(len(y))  # one pass over the labels' partitions, summed on the cluster
        else:
            n = len(self._check_labels(X, y, schema))
        eps = float(self.epsilon) * AUTO_SHARE
        plan = auto_plan(eps)
        ledger = PrivacyLedger(epsilon=eps).follow(plan)
        self.records_noisy_ = ledger.release(plan[0], n, rng)
        self.auto_rule_ = AUTO_RULE  # the rule version the file names (its auto_rule)
        self.model_choice_ = choose_model(schema, float(self.epsilon), self.delta, self.records_noisy_, AUTO_RULE)
        return ledger, get_spec(self.model_choice_).make()

    def _fit_encoding(self, X, y, schema: Schema, rng, numbers: bool = False, codes: bool = False,
                      missing_bins: bool = False) -> "_Encoded":
        """The encoder's part of ``fit``: the budget split, the labels checked, the encoding fitted (its DP
        releases drawn from ``rng``) and the table encoded, on the route ``numbers``/``codes``
        (:class:`~dpglass.schema.Encoding`).  :class:`~dpglass.models.PrivateGridSearch` calls it too, once,
        on the 0/1 route, before selecting the model on the encoded table."""
        eps_q, eps_clip, eps_model = self._budget(schema, numbers)
        route = {"numbers": numbers, "codes": codes, "missing_bins": missing_bins}
        if is_distributed(X) or is_distributed(y):
            encoding, enc_ledger, noisy, Xenc = self._encode_partitioned(X, y, schema, eps_q, eps_clip, rng, route)
        else:
            y = self._check_labels(X, y, schema)
            encoding, enc_ledger, noisy = fit_encoding(X, schema, quantile_epsilon=eps_q, clip_epsilon=eps_clip,
                                                    rng=rng, **route)
            encoding = with_cut_codes(encoding)  # listed cut points as codes where the model takes codes
            Xenc = pd.DataFrame(encoding.transform(X), columns=encoding.feature_names(), index=X.index)
        return _Encoded(encoding, enc_ledger, noisy, Xenc, y, eps_model, eps_clip)

    def _set_fitted(self, schema: Schema, encoded: "_Encoded", model, replayable: bool, selector=None) -> None:
        """The fitted state: the encoding, the fitted model and one ledger, the encoder's entries then the model's
        (``model: ...``).  ``model`` is any fitted private estimator of the encoded table (PrivateGridSearch
        passes its selection over the encoded table)."""
        inner = model.privacy_ledger_
        # the model's accountant composes the encoding's pure releases too (compose() takes the smaller of its
        # tight view and the basic sum; a pure release above accounting.PLD_MAX_EPSILON leaves a PLD model only
        # the basic sum, which can exceed the budget when the encoder takes most of it: refused below); each part
        # was released through its own plan and ledger
        parts = [(selector, ""), (encoded.ledger, ""), (inner, "model: ")]
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=inner.delta, accountant=inner.accountant,
                               replayable=replayable)
        try:
            for part, prefix in parts:
                if part is not None:
                    ledger.include(part, prefix)
        except BudgetExceededError:  # a function of the parameters only (the plans), never of the data
            whole = PrivacyLedger(delta=inner.delta, accountant=inner.accountant)
            for part, prefix in parts:
                if part is not None:
                    whole.include(part, prefix)
            total = whole.total()
            raise BudgetExceededError(
                f"The encoder's and the model's releases compose to ({total[0]:g}, {total[1]:g}), above the "
                f"pipeline's budget ({ledger.epsilon:g}, {ledger.delta:g}): the encoder's shares "
                f"(quantile_share={self.quantile_share:g}, clip_share={self.clip_share:g}, epsilon "
                f"{self._spendable() - encoded.model_epsilon:g} of {self.epsilon:g}) are too large for "
                f"{inner.accountant!r} composition with the model's releases. Lower those shares"
                + (" (PLD composes a pure release above 2 only basically), or give the model accountant='rdp'."
                   if inner.accountant == "pld" else ".")) from None
        self.encoding_, self.model_, self.privacy_ledger_ = encoded.encoding, model, ledger
        self.clipped_records_noisy_ = encoded.noisy
        self.classes_ = model.classes_
        self.feature_names_in_ = np.array([c.name for c in schema.features], dtype=object)
        self.n_features_in_ = len(self.feature_names_in_)

    def _encode_partitioned(self, X, y, schema, eps_q, eps_clip, rng, route):
        """The encoding of a dask DataFrame, and the encoded dask DataFrame the model then fits on.

        The schema's binarisation is a per-partition map with public cut
        points.  What the encoding reads from the data (the counts behind DP
        quantiles, the number of records outside the bounds) is counted by
        each partition and summed on the cluster; the releases are drawn on the
        client from the same generator, in the same order, as in memory, so
        the encoding, and then the model, are the in-memory ones.
        """
        from dpglass.aggregates import dask_backend
        from dpglass.schema.encoding import (
            check_columns, encoding_from_statistics, merge_statistics, needs_statistics,
        )

        if not isinstance(self.model, str) and not getattr(self.model, "_distributed_fit", False):  # auto's do
            raise DataValidationError(
                f"DPPipeline fits through Dask when its model does; {type(self.model).__name__} does not fit on "
                "dask collections yet. Call .compute() on X and y to fit in memory."
            )
        if not (is_distributed(X) and is_distributed(y) and hasattr(X, "columns")):
            raise DataValidationError("Through Dask, X must be a dask DataFrame of the raw columns and y a dask "
                                      "Series of labels partitioned like it (take both from one DataFrame).")
        check_columns(X._meta, schema, fitting=True)  # the columns are public structure: no pass over the data
        clip = eps_clip > 0
        if needs_statistics(schema, clip, route["numbers"]):
            stats = merge_statistics(dask_backend.partition_results(X, _statistics, schema, clip, route["numbers"]))
        else:  # nothing to count; values are checked as the partitions are encoded
            stats = {"quantiles": {}, "clipped": None}
        encoding, enc_ledger, noisy = encoding_from_statistics(schema, stats, quantile_epsilon=eps_q,
                                                            clip_epsilon=eps_clip, rng=rng, **route)
        encoding = with_cut_codes(encoding)  # as in memory
        names = encoding.feature_names()
        dtype = np.float64 if encoding.numbers or encoding.codes else np.uint8  # Encoding.transform's
        meta = pd.DataFrame({c: pd.Series(dtype=dtype) for c in names})
        Xenc = dask_backend.map_partitions_named(X, _encode, encoding, meta=meta)
        return encoding, enc_ledger, noisy, Xenc

    def _public_part(self, X_public, encoding, model) -> dict:
        """``{"X_public": encoded public records}`` for the model's fit, or ``{}`` when none is given."""
        if X_public is None:
            return {}
        import inspect

        if "X_public" not in inspect.signature(model.fit).parameters:
            raise InvalidParameterError(
                f"X_public: {type(model).__name__} does not learn from a public part."
            )
        if is_distributed(X_public):  # public and small: brought to the client
            X_public = X_public.compute()
        if not isinstance(X_public, pd.DataFrame):
            raise DataValidationError("X_public is a table with the schema's named columns: pass a DataFrame.")
        return {"X_public": pd.DataFrame(encoding.transform(X_public), columns=encoding.feature_names())}

    def _check_labels(self, X, y, schema):
        if not isinstance(X, pd.DataFrame):
            raise DataValidationError("DPPipeline reads a table with named columns: pass a pandas DataFrame.")
        if y is None:
            raise DataValidationError(f"Pass the labels y (the schema's target is {schema.target!r}).")
        y = np.asarray(y)
        if y.shape[0] != len(X):
            raise DataValidationError(f"X has {len(X)} rows but y has {y.shape[0]} labels; they must match.")
        if y.dtype.kind == "f" and np.isnan(y).any():
            raise DataValidationError(
                f"The target {schema.target or 'y'!r} has missing values; drop or label those records first."
            )
        return y

    # -------------------------------------------------------------- predict
    def _encode(self, X):
        check_is_fitted(self, "model_")
        if not isinstance(X, pd.DataFrame):
            raise DataValidationError("DPPipeline reads a table with named columns: pass a pandas DataFrame.")
        return pd.DataFrame(self.encoding_.transform(X), columns=self.encoding_.feature_names(), index=X.index)

    def predict_proba(self, X):
        """Class probabilities of the model on the encoded raw records."""
        return self.model_.predict_proba(self._encode(X))

    def predict(self, X):
        """Predictions of the model on the encoded raw records (columns matched by name)."""
        return self.model_.predict(self._encode(X))

    def feature_names(self) -> list[str]:
        return self.encoding_.feature_names()

    def to_text(self) -> str:
        eps, delta = self.privacy_ledger_.total()
        guarantee = self.privacy_ledger_.guarantee
        head = (f"DPPipeline: {type(self.model_).__name__} on {len(self.feature_names())} encoded features of "
                f"{self.n_features_in_} columns; ({eps:.4g}, {delta:.3g})-DP in all, encoder and model"
                + ("" if guarantee == "proven" else f" (guarantee: {guarantee})")
                + (f"; model='auto'{self._rule_words()} chose {self.model_choice_} from a noisy count of "
                   f"{self.records_noisy_} records" if isinstance(self.model, str) else "")
                + "; the model's line below counts its part")
        return head + "\n" + self.model_.to_text()

    def _rule_words(self) -> str:
        """`` (rule N)`` for rule versions after the first (files of version 1 print as they always did)."""
        return "" if self.auto_rule_ == 1 else f" (rule {self.auto_rule_})"

    # ----------------------------------------------------------- serialising
    def to_dict(self) -> dict:
        check_is_fitted(self, "model_")
        auto = {"model": "auto"} if isinstance(self.model, str) else {}  # only then: other files are unchanged
        digests = column_digests(self.encoding_, auto=bool(auto))
        out = {
            "model": "DPPipeline",
            "params": {"epsilon": float(self.epsilon), "delta": self.delta, "quantile_share": self.quantile_share,
                       "clip_share": self.clip_share, "random_state": None, **auto},
            "classes": [c.item() if hasattr(c, "item") else c for c in self.classes_],
            "n_features_in": int(self.n_features_in_),
            "feature_names": [str(c) for c in self.feature_names_in_],
            "encoding": self.encoding_.to_dict(),
            **({} if digests is None else {"column_digests": digests}),  # numbers/codes routes only
            "clipped_records_noisy": self.clipped_records_noisy_,
            "inner_model": self.model_.to_dict(),
            "privacy_ledger": self.privacy_ledger_.to_dict(),
        }
        if auto:
            out["records_noisy"] = int(self.records_noisy_)
            if self.auto_rule_ != 1:  # absent: version 1, as files written before rule versions say it
                out["auto_rule"] = int(self.auto_rule_)
        return out

    @classmethod
    def _verify_dict(cls, data: dict) -> None:
        """The pipeline file's checks (``verify_model_dict`` calls them for this class)."""
        from dpglass.models.pipeline.verify import verify_pipeline_dict

        verify_pipeline_dict(data, cls)

    @classmethod
    def from_dict(cls, data: dict):
        from dpglass.models._verify import verify_model_dict

        verify_model_dict(data, cls)
        inner_cls = _model_class(data["inner_model"]["model"])
        inner = inner_cls.from_dict(data["inner_model"])
        encoding = load_encoding(data["encoding"])
        params = dict(data["params"])
        auto = params.pop("model", None)  # "auto": the file names the rule, and the model it chose is inner
        model = cls(schema=encoding.schema, model=auto or clone(inner), **params)
        if auto:
            model.records_noisy_ = int(data["records_noisy"])
            model.auto_rule_ = rule_version(data.get("auto_rule"))
            model.model_choice_ = _registered_name(type(inner))
        model.encoding_, model.model_ = encoding, inner
        model.privacy_ledger_ = PrivacyLedger.from_dict(data["privacy_ledger"])
        model.clipped_records_noisy_ = data.get("clipped_records_noisy")
        model.classes_ = np.array(data["classes"])
        model.feature_names_in_ = np.array(data["feature_names"], dtype=object)
        model.n_features_in_ = int(data["n_features_in"])
        return model


@dataclass(frozen=True)
class _Encoded:
    """What the encoder's part of a fit gives the model's part."""

    encoding: Encoding
    ledger: PrivacyLedger  # the encoder's releases, through its plan (schema.encoding.encoder_plan)
    noisy: int | None  # the released noisy count of clipped records
    X: object  # the encoded table (a DataFrame, or a dask DataFrame)
    y: object  # the checked labels
    model_epsilon: float  # what the encoder's shares leave for the model
    clip_epsilon: float


def source_columns(encoding: Encoding) -> list:
    """The raw column each encoded column comes from, in the encoding's column order (public: the schema)."""
    return encoding.source_columns()


def _statistics(part, schema, clip, numbers):
    from dpglass.schema.encoding import encoding_statistics

    return encoding_statistics(part, schema, clip=clip, numbers=numbers)


def _encode(part, encoding):
    """One partition of raw records as the encoded 0/1 frame (the per-record map, public cut points)."""
    return pd.DataFrame(encoding.transform(part), columns=encoding.feature_names(), index=part.index)


def _registered_name(cls) -> str:
    return next(name for name in AUTO_CANDIDATES if get_spec(name).cls is cls)


def _model_class(name: str):
    from dpglass.registry import registered_class

    cls = registered_class(name)
    if cls is None:
        raise DataValidationError(f"The pipeline's inner model {name!r} is not a dpglass model.")
    return cls