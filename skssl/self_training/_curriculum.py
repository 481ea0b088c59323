"""Curriculum Labeling: percentile-paced self-training around any classifier.

Cascante-Bonilla et al., "Curriculum Labeling: Revisiting Pseudo-Labeling for
Semi-Supervised Learning", AAAI 2021. Round 0 fits the wrapped
classifier on the labeled rows. Round ``t = 1, 2, ...`` scores *every*
unlabeled row with the model of round ``t - 1``, takes one global threshold at
the percentile ``100 - step * t`` of the maximum class probability, pseudo-
labels the rows at or above it and fits a *fresh* model on the labeled and the
pseudo-labeled rows as one pool. The last round is the one at percentile 0,
where every unlabeled row is used. Pseudo-label rounds are class-weighted
(``class_weighting``), a held-out fraction of the labels can pick the best
round (``validation_fraction``), and the cross-validated safeguard
(:mod:`skssl.self_training._safeguard`) returns round 0's model where the
curriculum does not help.

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
        # skssl.deep is an optional leaf of the package that nothing imports by name (it needs torch): the default
        # net is loaded here, by the estimator that defaults to it, when a fit asks for it.
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
    """Per-row class weights of one pseudo-label round's pool, averaging 1 over the pool.

    ``rule`` is ``"labeled_prior"`` (``N pi_k / n_k``: class ``k`` weighs its share ``pi_k`` of
    the labeled rows) or ``"inverse_frequency"`` (``(N - n_k) / (n_k (K - 1))``, the reference
    program's rule). ``labeled_share`` holds ``pi_k`` for every class; ``row_weight`` (the
    user's weights of the pool's rows, or ``None``) makes ``"labeled_prior"`` count rows by
    weight, so that the products ``row_weight * class_weight`` sum to ``N pi_k`` per class.
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
    """Keyword arguments of one round's fit on the rows ``rows``.

    Values with one entry per row of ``X`` are cut to ``rows``, others pass unchanged
    (sklearn's rule for the fit parameters of cross-validation). ``weight`` is the
    full-length row weight (or ``None``); ``class_weight`` the round's class weights over
    ``rows`` (or ``None``), multiplied into it.
    """
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

    Round 0 fits a clone of ``estimator`` on the labeled rows (``y != -1``).
    Round ``t`` scores every unlabeled row with the previous round's model,
    sets one threshold at the percentile ``100 - step * t`` of the maximum
    class probability, pseudo-labels the rows at or above it and fits a fresh
    clone on the labeled plus pseudo-labeled rows. Fitting stops after the
    round at percentile 0, which uses every unlabeled row. Rows pseudo-labeled
    in one round may leave (or change label) in the next. A cross-validated
    safeguard, on by default, returns the supervised model of round 0
    instead when the labeled rows show the curriculum doing worse.

    With ``sklearn.set_config(enable_metadata_routing=True)`` the metadata
    passed to ``fit`` and the prediction methods reaches the wrapped
    estimator as it requests (see :meth:`get_metadata_routing`).

    Parameters
    ----------
    estimator : estimator object, default=None
        A classifier with ``fit`` and ``predict_proba``. ``None`` uses skssl's
        MLP net ``skssl.deep.SupervisedNetClassifier`` (needs the
        ``skssl[deep]`` extra: torch and skorch).
    step : float, default=20
        Percentile step per round, in ``(0, 100]``: 20 gives percentiles
        80, 60, 40, 20, 0 (six fits in all).
    reinitialize : bool, default=True
        Fit a fresh clone every round (the paper's choice). ``False`` keeps
        training one model through ``warm_start`` or ``partial_fit``.
    class_weighting : {"auto", "labeled_prior", "inverse_frequency"} or bool, \
            default="auto"
        Class weights of the pseudo-label rounds, passed as ``sample_weight``.
        ``"labeled_prior"`` weights a row of class ``k`` by ``N pi_k / n_k``
        (``n_k`` rows of class ``k`` among the round's ``N``, ``pi_k`` its
        share of the labeled rows), so each class weighs its labeled share
        whatever the pseudo-labels say. ``"inverse_frequency"`` is the
        reference program's ``(N - n_k) / n_k`` rescaled to average 1, which
        swaps the classes' balance on imbalanced data. ``"auto"`` applies
        ``"labeled_prior"`` when the estimator's ``fit`` takes
        ``sample_weight`` and fits unweighted otherwise; ``True`` means
        ``"labeled_prior"`` and, like a rule's name, requires
        ``sample_weight``; ``False`` never weights.
    validation_fraction : float or None, default=None
        Fraction in ``(0, 1)`` of each class's labeled rows held out to score
        every round; the best round's model is kept. ``None`` keeps the last.
    safeguard : {"cross_validation"} or None, default="cross_validation"
        Return the curriculum's model only where the labeled rows support
        it: the whole curriculum is run once per stratified fold of the
        labeled rows (3 folds, fewer for classes with fewer rows), and when
        its model classifies fewer held-out labeled rows correctly than the
        supervised model of round 0, the supervised model of the full fit
        is returned instead. About four times the cost of a fit; ``None``
        returns the curriculum's model as the paper does.
    verbose : int, default=0
        When positive, print one line per round (``round t/N``, with its
        duration) and one per fold of the safeguard, which runs the
        curriculum again on each of its folds.
    random_state : int, RandomState instance or None, default=None
        Seeds the validation split and each round's clone: every
        ``random_state`` of the estimator, or of an estimator nested in it
        (a ``Pipeline``'s steps), that is ``None``.

    Attributes
    ----------
    estimator_ : estimator object
        The final model (the best round's when ``validation_fraction`` is set).
    classes_ : ndarray of shape (n_classes,)
        The labeled classes.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows: given labels, else ``estimator_``'s prediction.
    labeled_iter_ : ndarray of shape (n_samples,)
        Round in which each row was first pseudo-labeled; 0 for labeled rows,
        -1 for rows never pseudo-labeled.
    thresholds_ : ndarray of shape (`n_iter_`,)
        Confidence threshold of each round (``nan`` for round 0).
    n_iter_ : int
        Number of rounds run, round 0 included.
    best_iter_ : int
        Round whose model is ``estimator_`` (0 when the safeguard returned
        the supervised model).
    safeguard_scores_ : ndarray of shape (2,) or None
        With the safeguard: the cross-validated accuracy, on the labeled
        rows, of the supervised model of round 0 and of the curriculum's
        model. ``None`` when the safeguard is off, there are no unlabeled
        rows, or the labeled rows are too few to form folds with two classes
        in each training part.
    safeguard_fell_back_ : bool or None
        Whether the safeguard returned the supervised model of round 0
        (``True``) or kept the curriculum's model (``False``); ``None`` when
        it did not run (``safeguard_scores_`` is ``None``).
    history_ : list of dict
        One entry per round: ``round``, ``percentile``, ``threshold``,
        ``n_pseudo`` (pseudo-labeled rows used), ``n_left`` (rows of the
        previous round's pseudo-labeled set not used now), ``n_train``
        (rows fitted), ``class_weighted`` and ``validation_score``.
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

    # fit's sample_weight is routed to the wrapped estimator (with routing enabled), not
    # requested by this meta-estimator: it has no set_fit_request.
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
        # The estimator's own parameter and those of the estimators nested in it (the steps
        # of a Pipeline, a grid search's estimator), in the order of their names so that the
        # seeds drawn do not depend on the order get_params lists them in. Written here rather
        # than with scikit-learn's private ensemble helper _set_random_states, which also
        # overwrites a random_state the user set; a set one is kept here.
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
            Non-negative row weights passed to the estimator's ``fit`` (cut to
            each round's rows and multiplied by the class weights in pseudo
            rounds) and weighing the validation accuracy; the estimator must
            accept them. With metadata routing enabled they are routed like
            ``**fit_params``: the estimator must request them
            (``estimator.set_fit_request(sample_weight=True)``).
        **fit_params : dict
            Metadata routed to the wrapped estimator's ``fit`` (and to its
            ``partial_fit`` when ``reinitialize=False`` keeps training through
            it) in every round. Values with one entry per row of ``X`` are cut
            to the round's rows. Only available if
            ``enable_metadata_routing=True``, which can be set by using
            ``sklearn.set_config(enable_metadata_routing=True)``; see
            scikit-learn's Metadata Routing User Guide. Without routing any
            such parameter raises a ``ValueError``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        # On a working copy, its attributes stored at the end: fits of this object that overlap (in threads)
        # never append to or write into each other's history_ and labeled_iter_ (the module's decisions).
        work = working_copy(self, fit_state=("_round0_estimator",))
        with convergence_tally() as (tally, outermost):
            work._fit_curriculum(X, y, sample_weight, fit_params, tally)
        if outermost:
            tally.warn(type(self).__name__)
        # round 0's model stays only where the safeguard's caller asked for it (_keep_round0_estimator)
        return publish_fitted(self, work, private=("_round0_estimator",))

    def _fit_curriculum(self, X, y, sample_weight, fit_params, tally):
        """The body of :meth:`fit`, on the working copy; every inner fit runs in ``tally.fit``."""
        _raise_for_params(fit_params, self, "fit")
        sample_weight_arg = sample_weight
        y = _as_1d_target(y)
        # Only rows of X are selected here; the wrapped estimator validates X itself.
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
        # Rows are selected by fancy indexing and weights multiplied into new arrays, so the
        # caller's array is never written to.
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
            # drawn among the rows of positive weight: a row of weight 0 is a row left out (it would make
            # the validation score undefined, or its split unlike the split without that row)
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
        # round 0's model is kept (a deep copy when the model trains on) only where it may be used:
        # by the safeguard, or by the safeguard's caller on its folds' clones
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
                # the supervised model, returned instead of the curriculum's when the safeguard says so
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
        """Whether ``fit`` keeps training through ``partial_fit`` (``reinitialize=False``, no ``warm_start``)."""
        return not self.reinitialize and "warm_start" not in base.get_params(deep=False)

    def _route_fit_params(self, sample_weight, fit_params):
        """Keyword arguments of the estimator's ``fit`` and ``partial_fit``, full length, per method.

        Without routing only ``sample_weight`` (``fit_params`` is empty, checked by the caller)
        goes to both; with routing each method gets what it requested.
        """
        if not _routing_enabled():
            return {"fit": {"sample_weight": sample_weight}, "partial_fit": {"sample_weight": sample_weight}}
        metadata = dict(fit_params)
        if sample_weight is not None:
            metadata["sample_weight"] = sample_weight
        routed = process_routing(self, "fit", **metadata).estimator
        return {"fit": dict(routed.get("fit", {})), "partial_fit": dict(routed.get("partial_fit", {}))}

    def _route(self, method, params):
        """Keyword arguments routed to ``estimator_.<method>`` (an error without routing if any are given)."""
        _raise_for_params(params, self, method)
        if not _routing_enabled():
            return {}
        return dict(process_routing(self, method, **params).estimator.get(method, {}))

    def get_metadata_routing(self):
        """Get the metadata routing of this object.

        ``fit`` routes to the wrapped estimator's ``fit`` (and to its
        ``partial_fit`` when ``reinitialize=False`` keeps training through
        it); ``predict``, ``predict_proba``, ``predict_log_proba`` and
        ``decision_function`` route to the same method. ``score`` consumes
        ``sample_weight`` itself. See scikit-learn's Metadata Routing User
        Guide.

        Returns
        -------
        routing : MetadataRouter
            A :class:`~sklearn.utils.metadata_routing.MetadataRouter`
            encapsulating the routing information.
        """
        base = self._base_estimator()
        return estimator_routing(self, base, ("fit", "partial_fit") if self._uses_partial_fit(base) else ("fit",))

    def _check_X(self, X):
        # The wrapped estimator validates X (shape, features, NaN); COO becomes CSR.
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

    # predict_proba, predict_log_proba and decision_function return those of estimator_ (through _delegate).
    predict_proba, predict_log_proba, decision_function = delegated_predictions(
        "CurriculumLabelingClassifier",
        _estimator_has,
        x_shape="(n_samples, n_features)",
        params_doc="Metadata routed to ``estimator_.{method}``. Only available if "
        "``enable_metadata_routing=True`` (see :meth:`fit`).",
    )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Sparse input works exactly when the wrapped estimator takes it; the default net is
        # declared dense here so that asking for tags never imports torch.
        tags.input_tags.sparse = self.estimator is not None and get_tags(self.estimator).input_tags.sparse
        return tags
