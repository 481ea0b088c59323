"""Curriculum Labeling: percentile-paced self-training around any classifier.

Cascante-Bonilla et al., "Curriculum Labeling: Revisiting Pseudo-Labeling for
Semi-Supervised Learning", AAAI 2021. Round ``t`` pseudo-labels the unlabeled
rows above the percentile ``100 - step * t`` of the previous model's
confidence and fits a fresh model on them and the labeled rows; a
cross-validated safeguard (:mod:`skssl.self_training._safeguard`) keeps
round 0's model where the curriculum does not help.

Design decisions: user guide, Implementation decisions (deep, self-training), "Curriculum Labeling".
"""

import copy
import importlib
import importlib.util
import time
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.metrics import accuracy_score
from sklearn.utils import _safe_indexing, check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metadata_routing import (
    UNUSED,
    _raise_for_params,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.validation import (
    _check_method_params,
    _check_sample_weight,
    check_is_fitted,
    has_fit_parameter,
    indexable,
)

from ..base import SemiSupervisedClassifierMixin, _as_1d_target, encode_semi_supervised_target
from ..utils._fit_state import publish_fitted, working_copy
from ..utils._weights import check_weight_total
from ..utils.validation import check_sparse_structure
from ._delegation import (
    delegated_predictions,
    estimator_routing,
    fill_doc,
    fitted_estimator_attribute,
    meta_fit,
)
from ._convergence import convergence_tally
from ._safeguard import cross_validated_scores

__all__ = ["CurriculumLabelingClassifier"]


def _default_estimator():
    """Return skssl's supervised MLP net, importing torch only now."""
    missing = [name for name in ("torch", "skorch") if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(
            "CurriculumLabelingClassifier(estimator=None) uses skssl's MLP net, which needs "
            f"{' and '.join(missing)}; install the extra with `pip install skssl[deep]` or pass "
            "any scikit-learn classifier with predict_proba as `estimator`."
        )
    try:
        # skssl.deep is an optional leaf (it needs torch), loaded only when a fit asks for the default net
        SupervisedNetClassifier = importlib.import_module("..deep", __package__).SupervisedNetClassifier
    except ImportError as exc:
        raise ImportError(
            "CurriculumLabelingClassifier(estimator=None) needs skssl.deep.SupervisedNetClassifier "
            "(the `skssl[deep]` extra), which could not be imported; pass any scikit-learn "
            "classifier with predict_proba as `estimator`."
        ) from exc
    return SupervisedNetClassifier()


def _estimator_has(attr):
    """Check ``attr`` on the fitted model, else on ``estimator`` (the default net has predict_proba)."""

    def check(self):
        if hasattr(self, "estimator_"):
            return hasattr(self.estimator_, attr)
        if self.estimator is None:
            return attr in ("predict", "predict_proba")
        return hasattr(self.estimator, attr)

    return check


def _percentile_schedule(step):
    """Percentiles of rounds 1, 2, ...: ``100 - step * t`` clamped at 0, ending at 0."""
    percentiles = []
    t = 1
    while True:
        p = max(100.0 - step * t, 0.0)
        percentiles.append(p)
        if p <= 0.0:
            return percentiles
        t += 1


def _class_weights(y_pool, rule, labeled_share, row_weight=None):
    """Per-row class weights of a round's pool: ``N pi_k / n_k`` or ``(N - n_k) / (n_k (K - 1))``.

    ``row_weight`` makes ``"labeled_prior"`` count rows by weight.
    """
    n_classes = labeled_share.shape[0]
    if rule == "labeled_prior":
        mass = np.bincount(y_pool, weights=row_weight, minlength=n_classes).astype(np.float64)
        present = mass > 0
        share = labeled_share[present] / labeled_share[present].sum()
        weight = np.zeros(n_classes)
        weight[present] = mass.sum() * share / mass[present]
        return weight[y_pool]
    counts = np.bincount(y_pool, minlength=n_classes).astype(np.float64)
    present = counts > 0
    n_present = int(present.sum())
    if n_present < 2:
        return np.ones(y_pool.shape[0])
    weight = np.zeros(n_classes)
    n = float(y_pool.shape[0])
    weight[present] = (n - counts[present]) / (counts[present] * (n_present - 1))
    return weight[y_pool]


def _validation_split(y_labeled, fraction, rng):
    """Per class, hold out ``floor(fraction * n_k)`` of the labeled rows; return (train, validation)."""
    train, valid = [], []
    for k in np.unique(y_labeled):
        rows = rng.permutation(np.flatnonzero(y_labeled == k))
        n_valid = int(np.floor(fraction * rows.shape[0]))
        valid.append(rows[:n_valid])
        train.append(rows[n_valid:])
    valid = np.sort(np.concatenate(valid))
    if valid.shape[0] == 0:
        raise ValueError(
            f"validation_fraction={fraction} holds out no labeled row (it takes floor(fraction * n_k) of the n_k "
            "labeled rows of positive weight of each class k); use a larger fraction, more labeled rows, or "
            "validation_fraction=None."
        )
    return np.sort(np.concatenate(train)), valid


def _round_params(X, params, weight, rows, class_weight):
    """Keyword arguments of one round's fit on ``rows``; ``class_weight`` is multiplied into ``weight``."""
    out = _check_method_params(X, params, indices=rows)
    w = None if weight is None else weight[rows]
    if class_weight is not None:
        w = class_weight if w is None else w * class_weight
    if w is not None:
        out["sample_weight"] = w
    return out


@fill_doc
class CurriculumLabelingClassifier(SemiSupervisedClassifierMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Curriculum Labeling: self-training paced by percentiles, re-initialised every round.

    Round 0 fits a clone of ``estimator`` on the labeled rows. Round ``t``
    pseudo-labels the unlabeled rows at or above the percentile
    ``100 - step * t`` of the previous model's maximum class probability and
    fits a fresh clone on all of them, up to percentile 0. A cross-validated
    safeguard returns round 0's model when the curriculum does worse.

    Parameters
    ----------
    estimator : estimator object, default=None
        A classifier with ``predict_proba``. ``None`` uses
        ``skssl.deep.SupervisedNetClassifier`` (the ``skssl[deep]`` extra).
    step : float, default=20
        Percentile step per round, in ``(0, 100]``.
    reinitialize : bool, default=True
        Fit a fresh clone every round; ``False`` keeps training one model
        (``warm_start`` or ``partial_fit``).
    class_weighting : {"auto", "labeled_prior", "inverse_frequency"} or bool, \
            default="auto"
        Class weights of the pseudo-label rounds (as ``sample_weight``).
        ``"labeled_prior"`` gives each class its share of the labeled rows;
        ``"inverse_frequency"`` is the reference program's rule. ``"auto"``
        is ``"labeled_prior"`` when ``fit`` takes ``sample_weight``, else
        none; ``True`` is ``"labeled_prior"``; ``False`` never weights.
    validation_fraction : float or None, default=None
        Fraction of each class's labeled rows held out to pick the best
        round; ``None`` keeps the last.
    safeguard : {"cross_validation"} or None, default="cross_validation"
        Compare the curriculum with round 0 by 3-fold cross-validation on
        the labeled rows and keep round 0's model if it does better (about
        four times the cost); ``None`` keeps the curriculum's model.
    verbose : int, default=0
        When positive, print a line per round and per safeguard fold.
    random_state : int, RandomState instance or None, default=None
        Seeds the validation split and every ``random_state`` left at
        ``None`` in each round's clone.

    Attributes
    ----------
    estimator_ : estimator object
        The final model (the best round's when ``validation_fraction`` is set).
    classes_ : ndarray of shape (n_classes,)
        The labeled classes.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows: given labels, else ``estimator_``'s prediction.
    labeled_iter_ : ndarray of shape (n_samples,)
        Round of each row's first pseudo-label (0: labeled, -1: never).
    thresholds_ : ndarray of shape (`n_iter_`,)
        Confidence threshold of each round (``nan`` for round 0).
    n_iter_ : int
        Number of rounds run, round 0 included.
    best_iter_ : int
        Round whose model is ``estimator_``.
    safeguard_scores_ : ndarray of shape (2,) or None
        Cross-validated accuracy of round 0 and of the curriculum; ``None``
        when the safeguard did not run.
    safeguard_fell_back_ : bool or None
        Whether the safeguard returned round 0's model; ``None`` when it did not run.
    history_ : list of dict
        Per round: ``round``, ``percentile``, ``threshold``, ``n_pseudo``,
        ``n_left``, ``n_train``, ``class_weighted``, ``validation_score``.
    %(features_in)s

    See Also
    --------
    sklearn.semi_supervised.SelfTrainingClassifier : Self-training with a fixed threshold.

    References
    ----------
    P. Cascante-Bonilla, F. Tan, Y. Qi, V. Ordonez. "Curriculum Labeling:
    Revisiting Pseudo-Labeling for Semi-Supervised Learning", AAAI 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skssl.self_training import CurriculumLabelingClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> y_semi = y.copy()
    >>> y_semi[np.random.RandomState(0).rand(y.shape[0]) < 0.8] = -1
    >>> clf = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y_semi)
    >>> clf.n_iter_
    6
    >>> [float(h["percentile"]) for h in clf.history_[1:]]
    [80.0, 60.0, 40.0, 20.0, 0.0]
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "step": [Interval(Real, 0, 100, closed="right")],
        "reinitialize": ["boolean"],
        "class_weighting": ["boolean", StrOptions({"auto", "labeled_prior", "inverse_frequency"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "safeguard": [StrOptions({"cross_validation"}), None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    # sample_weight is routed to the wrapped estimator, not requested here
    __metadata_request__fit = {"sample_weight": UNUSED}

    def __init__(
        self,
        estimator=None,
        step=20,
        reinitialize=True,
        class_weighting="auto",
        validation_fraction=None,
        safeguard="cross_validation",
        verbose=0,
        random_state=None,
    ):
        self.estimator = estimator
        self.step = step
        self.reinitialize = reinitialize
        self.class_weighting = class_weighting
        self.validation_fraction = validation_fraction
        self.safeguard = safeguard
        self.verbose = verbose
        self.random_state = random_state

    def _base_estimator(self):
        return _default_estimator() if self.estimator is None else self.estimator

    def _new_model(self, base, rng):
        """A fresh clone, each ``random_state`` in it left at ``None`` seeded from ``rng``."""
        model = clone(base)
        # sorted names: the seeds do not depend on get_params' order (unlike sklearn's
        # _set_random_states, a random_state the user set is kept)
        unseeded = sorted(
            name
            for name, value in model.get_params(deep=True).items()
            if (name == "random_state" or name.endswith("__random_state")) and value is None
        )
        for name in unseeded:
            model.set_params(**{name: int(rng.randint(np.iinfo(np.int32).max))})
        return model

    @meta_fit
    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit the curriculum of rounds on ``(X, y)``, ``y == -1`` marking unlabeled rows.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights for the estimator's ``fit`` (times the
            class weights) and the validation accuracy; routed like
            ``**fit_params`` when metadata routing is enabled.
        **fit_params : dict
            Metadata routed to the estimator's ``fit`` (or ``partial_fit``)
            every round, cut to the round's rows. Only available if
            ``enable_metadata_routing=True``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        # a working copy: fits that overlap in threads never share history_ or labeled_iter_
        work = working_copy(self, fit_state=("_round0_estimator",))
        with convergence_tally() as (tally, outermost):
            work._fit_curriculum(X, y, sample_weight, fit_params, tally)
        if outermost:
            tally.warn(type(self).__name__)
        return publish_fitted(self, work, private=("_round0_estimator",))

    def _fit_curriculum(self, X, y, sample_weight, fit_params, tally):
        """The body of :meth:`fit`, on the working copy; every inner fit runs in ``tally.fit``."""
        _raise_for_params(fit_params, self, "fit")
        sample_weight_arg = sample_weight
        y = _as_1d_target(y)
        # the wrapped estimator validates X itself
        X, y = indexable(check_sparse_structure(X), y)
        self.classes_, y_enc, labeled = encode_semi_supervised_target(y)
        base = self._base_estimator()
        if not hasattr(base, "predict_proba"):
            raise ValueError(
                f"{type(base).__name__} has no predict_proba; Curriculum Labeling ranks unlabeled "
                "rows by their maximum class probability. Use a classifier with predict_proba (for "
                "an SVM, e.g. sklearn.calibration.CalibratedClassifierCV(LinearSVC()))."
            )
        takes_weight = has_fit_parameter(base, "sample_weight")
        weighting = self.class_weighting
        insist = weighting is True or weighting in ("labeled_prior", "inverse_frequency")
        if insist and not takes_weight:
            raise ValueError(
                f"class_weighting={weighting!r} needs an estimator whose fit takes sample_weight; "
                f"{type(base).__name__}.fit does not. Use class_weighting='auto' or False."
            )
        if weighting is False or not takes_weight:
            weight_rule = None
        else:
            weight_rule = weighting if weighting in ("labeled_prior", "inverse_frequency") else "labeled_prior"
        if not self.reinitialize:
            can_warm = "warm_start" in base.get_params(deep=False)
            if not can_warm and not hasattr(base, "partial_fit"):
                raise ValueError(
                    f"reinitialize=False keeps training one model, which needs an estimator with a "
                    f"warm_start parameter or a partial_fit method; {type(base).__name__} has neither."
                )
        method_params = self._route_fit_params(sample_weight, fit_params)
        weights = {}
        for method, params in method_params.items():
            weight = params.pop("sample_weight", None)
            if weight is not None:
                weight = _check_sample_weight(weight, X, dtype=np.float64, ensure_non_negative=True)
                check_weight_total(weight)
            weights[method] = weight
        sample_weight = weights["fit"]
        if sample_weight is not None and not takes_weight:
            raise ValueError(f"sample_weight was given but {type(base).__name__}.fit does not take sample_weight.")

        rng = check_random_state(self.random_state)
        n_classes = self.classes_.shape[0]
        labeled_rows = np.flatnonzero(labeled)
        unlabeled_rows = np.flatnonzero(~labeled)
        if self.validation_fraction is not None:
            # rows of weight 0 count as left out
            candidates = labeled_rows if sample_weight is None else labeled_rows[sample_weight[labeled_rows] > 0]
            _, valid_pos = _validation_split(y_enc[candidates], self.validation_fraction, rng)
            valid_rows = candidates[valid_pos]
            train_rows = np.setdiff1d(labeled_rows, valid_rows, assume_unique=True)
            X_valid = _safe_indexing(X, valid_rows)
            y_valid = y_enc[valid_rows]
            w_valid = None if sample_weight is None else sample_weight[valid_rows]
        else:
            train_rows, valid_rows = labeled_rows, None
        train_weight = None if sample_weight is None else sample_weight[train_rows]
        labeled_mass = np.bincount(y_enc[train_rows], weights=train_weight, minlength=n_classes)
        if not labeled_mass.sum() > 0:
            raise ValueError("sample_weight is zero on every labeled training row; nothing could be learned.")
        labeled_share = labeled_mass / labeled_mass.sum()

        X_unlabeled = _safe_indexing(X, unlabeled_rows) if unlabeled_rows.shape[0] else None
        self.labeled_iter_ = np.full(y_enc.shape[0], -1, dtype=np.int64)
        self.labeled_iter_[labeled_rows] = 0
        self.history_ = []
        thresholds = []
        best_score, best_model, self.best_iter_ = -np.inf, None, 0
        previous_pseudo = np.zeros(0, dtype=np.intp)

        schedule = [None] + (_percentile_schedule(self.step) if X_unlabeled is not None else [])
        keep_round0 = getattr(self, "_keep_round0_estimator", False)
        needs_round0 = keep_round0 or (self.safeguard is not None and X_unlabeled is not None)
        model = None
        for t, percentile in enumerate(schedule):
            round_start = time.monotonic()
            if t == 0:
                pseudo_rows = np.zeros(0, dtype=np.intp)
                pseudo_labels = np.zeros(0, dtype=np.int64)
                threshold = np.nan
            else:
                pseudo_rows, pseudo_labels, threshold = self._select(model, X_unlabeled, unlabeled_rows, percentile, t)
                first = self.labeled_iter_[pseudo_rows] == -1
                self.labeled_iter_[pseudo_rows[first]] = t
            n_left = int(np.setdiff1d(previous_pseudo, pseudo_rows, assume_unique=True).shape[0])
            previous_pseudo = pseudo_rows

            rows = np.concatenate([train_rows, pseudo_rows])
            order = np.argsort(rows, kind="stable")
            rows = rows[order]
            y_pool = np.concatenate([y_enc[train_rows], pseudo_labels])[order]
            weighted = t > 0 and weight_rule is not None
            class_weight = None
            if weighted:
                pool_weight = None if sample_weight is None else sample_weight[rows]
                class_weight = _class_weights(y_pool, weight_rule, labeled_share, pool_weight)
            X_pool = _safe_indexing(X, rows)
            round_kwargs = {
                method: _round_params(X, params, weights[method], rows, class_weight)
                for method, params in method_params.items()
            }

            if model is None or self.reinitialize:
                model = self._new_model(base, rng)
                with tally.fit(model):
                    model.fit(X_pool, y_pool, **round_kwargs["fit"])
            else:
                with tally.fit(model):
                    self._keep_training(model, X_pool, y_pool, round_kwargs, n_classes)
            if t == 0 and needs_round0:
                self._round0_estimator = model if self.reinitialize else copy.deepcopy(model)
            if not hasattr(model, "predict_proba"):
                raise ValueError(
                    f"{type(model).__name__} has no predict_proba after fitting; Curriculum Labeling "
                    "ranks unlabeled rows by their maximum class probability."
                )

            score = None
            if valid_rows is not None:
                score = float(accuracy_score(y_valid, self._indices(model, X_valid), sample_weight=w_valid))
                if score >= best_score:
                    best_score, self.best_iter_ = score, t
                    best_model = model if self.reinitialize else copy.deepcopy(model)
            else:
                self.best_iter_ = t
            thresholds.append(threshold)
            self.history_.append(
                {
                    "round": t,
                    "percentile": 100.0 if percentile is None else float(percentile),
                    "threshold": float(threshold),
                    "n_pseudo": int(pseudo_rows.shape[0]),
                    "n_left": n_left,
                    "n_train": int(rows.shape[0]),
                    "class_weighted": weighted,
                    "validation_score": score,
                }
            )
            if self.verbose:
                extra = "" if score is None else f", validation accuracy {score:.4f}"
                print(
                    f"[CurriculumLabeling] round {t}/{len(schedule) - 1}: percentile "
                    f"{self.history_[-1]['percentile']:g}, threshold {threshold:.4g}, {pseudo_rows.shape[0]} "
                    f"pseudo-labeled rows ({n_left} left), {rows.shape[0]} rows fitted{extra} "
                    f"({time.monotonic() - round_start:.1f}s)"
                )

        self.estimator_ = best_model if valid_rows is not None else model
        self.safeguard_scores_ = self.safeguard_fell_back_ = None
        if self.safeguard is not None and X_unlabeled is not None:
            self.safeguard_scores_ = cross_validated_scores(
                self,
                X,
                y,
                labeled_rows,
                y_enc[labeled_rows],
                sample_weight_arg,
                fit_params,
                sample_weight,
                seed=int(rng.randint(np.iinfo(np.int32).max)),
            )
            if self.safeguard_scores_ is not None:
                self.safeguard_fell_back_ = bool(self.safeguard_scores_[1] < self.safeguard_scores_[0])
                if self.safeguard_fell_back_:
                    self.estimator_, self.best_iter_ = self._round0_estimator, 0
            if self.verbose:
                print(f"[CurriculumLabeling] safeguard: {self._safeguard_message()}")
        if needs_round0 and not keep_round0:
            del self._round0_estimator
        self.thresholds_ = np.asarray(thresholds, dtype=np.float64)
        self.n_iter_ = len(schedule)
        predicted = np.zeros(y_enc.shape[0], dtype=np.int64)
        if X_unlabeled is not None:
            predicted[unlabeled_rows] = self._indices(self.estimator_, X_unlabeled)
        self._set_transduction(y_enc, predicted)
        return self

    def _safeguard_message(self):
        """One line on what the safeguard measured and chose."""
        if self.safeguard_scores_ is None:
            return "not applied (the labeled rows cannot be split into folds of two classes or more)"
        supervised, curriculum = self.safeguard_scores_
        kept = "the supervised model of round 0" if self.safeguard_fell_back_ else "the curriculum's model"
        return (
            f"cross-validated accuracy {supervised:.4f} for round 0, {curriculum:.4f} for the curriculum; kept {kept}"
        )

    @staticmethod
    def _indices(model, X, **params):
        """Class indices (0 .. K-1) predicted by a model fitted on encoded labels."""
        return np.asarray(model.predict(X, **params)).astype(np.int64, copy=False)

    def _select(self, model, X_unlabeled, unlabeled_rows, percentile, t):
        """Rows at or above the round's percentile of max probability, with their pseudo-labels."""
        proba = np.asarray(model.predict_proba(X_unlabeled), dtype=np.float64)
        bad = ~np.isfinite(proba).all(axis=1)
        if bad.any():
            raise ValueError(
                f"{type(model).__name__}.predict_proba returned non-finite values (NaN or infinity) for "
                f"{int(bad.sum())} of {proba.shape[0]} unlabeled rows when the model of round {t - 1} scored "
                f"them for round {t}; Curriculum Labeling ranks unlabeled rows by their maximum class "
                "probability and cannot rank these. Check the wrapped estimator: remove or impute the rows "
                "it cannot score, or make its fit converge (scale X, lower a learning rate)."
            )
        confidence = proba.max(axis=1)
        threshold = float(np.percentile(confidence, percentile))
        chosen = np.flatnonzero(confidence >= threshold)
        inner_classes = np.asarray(model.classes_)
        labels = inner_classes[proba[chosen].argmax(axis=1)].astype(np.int64)
        return unlabeled_rows[chosen], labels, threshold

    @staticmethod
    def _keep_training(model, X_pool, y_pool, round_kwargs, n_classes):
        """Continue training one model on the round's pool (``reinitialize=False``)."""
        if "warm_start" in model.get_params(deep=False):
            model.set_params(warm_start=True)
            model.fit(X_pool, y_pool, **round_kwargs["fit"])
        else:
            model.partial_fit(X_pool, y_pool, classes=np.arange(n_classes), **round_kwargs["partial_fit"])

    def _uses_partial_fit(self, base):
        """Whether ``fit`` keeps training through ``partial_fit``."""
        return not self.reinitialize and "warm_start" not in base.get_params(deep=False)

    def _route_fit_params(self, sample_weight, fit_params):
        """Full-length keyword arguments of the estimator's ``fit`` and ``partial_fit``."""
        if not _routing_enabled():
            return {"fit": {"sample_weight": sample_weight}, "partial_fit": {"sample_weight": sample_weight}}
        metadata = dict(fit_params)
        if sample_weight is not None:
            metadata["sample_weight"] = sample_weight
        routed = process_routing(self, "fit", **metadata).estimator
        return {"fit": dict(routed.get("fit", {})), "partial_fit": dict(routed.get("partial_fit", {}))}

    def _route(self, method, params):
        """Keyword arguments routed to ``estimator_.<method>``."""
        _raise_for_params(params, self, method)
        if not _routing_enabled():
            return {}
        return dict(process_routing(self, method, **params).estimator.get(method, {}))

    def get_metadata_routing(self):
        """Get the metadata routing of this object.

        Each method routes to the wrapped estimator's method of the same name
        (``fit`` also to ``partial_fit`` when it trains through it).

        Returns
        -------
        routing : MetadataRouter
            A :class:`~sklearn.utils.metadata_routing.MetadataRouter`
            encapsulating the routing information.
        """
        base = self._base_estimator()
        return estimator_routing(self, base, ("fit", "partial_fit") if self._uses_partial_fit(base) else ("fit",))

    def _check_X(self, X):
        check_is_fitted(self)
        (X,) = indexable(check_sparse_structure(X))
        return X

    @property
    def n_features_in_(self):
        """Number of features seen during ``fit`` (that of ``estimator_``)."""
        return fitted_estimator_attribute(self, "n_features_in_")

    @property
    def feature_names_in_(self):
        """Names of the features seen during ``fit`` (those of ``estimator_``)."""
        return fitted_estimator_attribute(self, "feature_names_in_")

    def predict(self, X, **params):
        """Predict the class of each row of ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to classify.
        **params : dict
            Metadata routed to ``estimator_.predict``. Only available if
            ``enable_metadata_routing=True`` (see :meth:`fit`).

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted labels, taken from ``classes_``.
        """
        X = self._check_X(X)
        params = self._route("predict", params)
        return self._decode(self._indices(self.estimator_, X, **params))

    def _delegate(self, method, X, params):
        """``estimator_.<method>`` on the checked ``X``, with the routed ``params``."""
        X = self._check_X(X)
        params = self._route(method, params)
        return getattr(self.estimator_, method)(X, **params)

    predict_proba, predict_log_proba, decision_function = delegated_predictions(
        "CurriculumLabelingClassifier",
        _estimator_has,
        x_shape="(n_samples, n_features)",
        params_doc="Metadata routed to ``estimator_.{method}``. Only available if "
        "``enable_metadata_routing=True`` (see :meth:`fit`).",
    )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the default net is declared dense so that tags never import torch
        tags.input_tags.sparse = self.estimator is not None and get_tags(self.estimator).input_tags.sparse
        return tags
