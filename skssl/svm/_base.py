"""What the linear estimators share: data, weights and class fractions, the one-vs-rest fit, the checks.

:class:`_LinearFitMixin` is the base of every estimator of :mod:`skssl.svm._classes`
(parameters, ``fit``, validation, weights, the ``alpha`` checks, the safeguard);
:class:`_BaseLinearSVC` adds the one-vs-rest fit (SVMlin is binary only).

Design decisions: user guide, "Mathematical formulation of the linear
S3VMs", Implementation decisions, "Shared by the estimators".
"""

import importlib
import warnings
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import _check_sample_weight

from ..base import UNLABELED, SemiSupervisedClassifierMixin
from ..utils._dask import is_dask_array, map_row_blocks
from ..utils._fit_state import publish_fitted, working_copy
from ..utils._weights import check_weight_total
from ..utils.validation import check_sparse_structure
from ._callback import current_callback, solver_callback
from .solvers._mfn import MFNITERMAX
from .defaults._penalty_check import labeled_rows_penalty_factor
from .defaults._regularization import auto_alpha, fit_rows_are_centred, resolve_regularization
from .kernels._rowblocks import share_threads
from .defaults._cluster_fractions import RowClusters, fractions_from_clusters
from .defaults._handed_down import HandedDown
from .safeguard._fallback_check import asks_held_out_labels, compare_on_folds, prefers_supervised
from .safeguard._safeguard import as_positive_fraction, candidate_fractions, candidates_agree
from .kernels._validation import (
    as_float64_design,
    check_design_scale,
    fit_scope,
    on_used_columns,
    rows_of_positive_weight,
    without_duplicate_entries,
)
from .solvers._weston_watkins import JointLoss, fit_weston_watkins
from ..utils._warnings import user_stacklevel

#: Per-class positive fractions must sum to 1 within this tolerance (room for
#: fractions rounded to 6 decimals, e.g. typed from a table).
POSITIVE_FRACTION_SUM_TOL = 1e-6

#: Smallest ``alpha`` the estimators accept: float64's machine epsilon, below
#: which ``1 + alpha == 1`` (user guide, Implementation decisions).
ALPHA_MIN = float(np.finfo(np.float64).eps)

_ALPHA_ADVICE = (
    "Use a larger alpha (typical values are 1e-6 to 1 for rows of norm about 1; alpha >= 1e-12 is safe there) "
    "or scale X (e.g. with sklearn.preprocessing.MaxAbsScaler or StandardScaler)."
)


def checked_class_weight(class_weight, classes, labels):
    """scikit-learn's ``compute_class_weight``, refusing a weight that is negative or not finite.

    scikit-learn passes a dict's values on unchecked; a negative or NaN weight would otherwise surface as
    "every labeled row of the class has weight 0", which names the wrong problem.
    """
    weights = compute_class_weight(class_weight, classes=classes, y=labels)
    bad = ~(np.isfinite(weights) & (weights >= 0))
    if bad.any():
        given = {cls: float(w) for cls, w in zip(np.asarray(classes)[bad].tolist(), weights[bad])}
        raise ValueError(f"class_weight must be finite and non-negative; got {given}.")
    return weights


_WEIGHT_SCALE_ADVICE = (
    ' With alpha="auto" a weight counts rows (a weight of 2 is the row counted twice): keep them near 1.'
)


def _check_alpha(estimator):
    """Refuse an ``alpha`` below :data:`ALPHA_MIN`, or a bias penalty float64 cannot hold, with a ``ValueError``."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        bias_penalty = np.float64(estimator.alpha_) / np.square(np.float64(estimator.intercept_scaling_))
    if not (np.isfinite(bias_penalty) and bias_penalty > 0):
        raise ValueError(
            f"intercept_scaling_={estimator.intercept_scaling_!r} puts the bias's penalty alpha_ / "
            f"intercept_scaling_**2 (alpha_={estimator.alpha_!r}) outside float64's range. The bias is the weight "
            "of a constant feature of this value: give one of the order of the rows' norm (1 for tf-idf rows, the "
            "square root of the number of features for standardized rows), or intercept_scaling='auto'."
        )
    if estimator.alpha_ < ALPHA_MIN:
        given = "" if estimator.alpha == estimator.alpha_ else f" (alpha={estimator.alpha!r})"
        raise ValueError(
            f"alpha_={estimator.alpha_!r}{given} is too small for float64 arithmetic: below {ALPHA_MIN:.3g} (float64's "
            "machine epsilon) 1 + alpha == 1, so the regularization is lost to rounding next to the loss, whose "
            "curvature along the bias is 1, and the solver's Newton systems are singular to working precision. "
            + _ALPHA_ADVICE
        )


def _check_finite_fit(estimator, values):
    """Raise a ``ValueError`` unless every array of ``values`` (name -> array) is finite."""
    for name, value in values.items():
        if not np.all(np.isfinite(value)):
            against = _against_unlabeled_weight(estimator)
            raise ValueError(
                f"{type(estimator).__name__}: the fit produced a non-finite {name}; alpha_={estimator.alpha_!r} is "
                f"too small for float64 arithmetic on this data{against} (the Newton systems are singular to "
                "working precision and their solutions overflow). " + _ALPHA_ADVICE
            )


def _against_unlabeled_weight(estimator):
    """The clause that names ``unlabeled_weight`` beside ``alpha_`` in an overflow's message, where it applies."""
    weight = getattr(estimator, "unlabeled_weight", None)
    return "" if weight is None else f", or unlabeled_weight={weight!r} too large against it,"


def _alpha_error(estimator, error):
    """The ``ValueError`` raised in place of a solver's ``FloatingPointError``."""
    return ValueError(
        f"{type(estimator).__name__}: {error} With alpha_={estimator.alpha_!r} this may also mean that alpha is too "
        f"small for float64 arithmetic on this data{_against_unlabeled_weight(estimator)}. " + _ALPHA_ADVICE
    )


@contextmanager
def _safeguard_failures_named(estimator):
    """Run the ``with`` block (the safeguard's fits); a ``ValueError`` or ``FloatingPointError`` it raises becomes
    a ``ValueError`` that names the user's estimator and its ``alpha_``, on every backend."""
    try:
        yield
    except (ValueError, FloatingPointError) as error:
        raise ValueError(
            f"{type(estimator).__name__}: a fit of its safeguard failed with alpha_={estimator.alpha_!r}, which may "
            f"be too small for float64 arithmetic on this data{_against_unlabeled_weight(estimator)} ({error})"
        ) from error


_MFN_CAP_MESSAGE = (
    f"an inner l2-SVM-MFN solve stopped at its cap of {MFNITERMAX} Newton steps before its stopping rule; "
    "the data may be badly scaled (try MaxAbsScaler or StandardScaler) or alpha too small."
)


def _solve_with_callback(callback, solve, *args):
    """``solve(*args)`` with ``callback`` installed (see :func:`~skssl.svm._callback.solver_callback`)."""
    with solver_callback(callback):
        return solve(*args)


#: The fits on arrays of an optional backend, by the backend's module under skssl.svm: each backend module adds its
#: own ``fit(estimator, X, y, sample_weight)`` here when it is imported (``"dask._dask_fit"``).
FIT_BACKENDS = {}


def _backend_fit(module):
    """The ``fit`` of the optional backend ``module`` (under skssl.svm), which is loaded at its first fit.

    Dask is optional and its modules are a leaf of the package: nothing imports them by name, so an in-memory
    fit never loads them and they may use everything below the estimators (user guide, Implementation decisions,
    "Dask fits").
    """
    if module not in FIT_BACKENDS:
        importlib.import_module(f".{module}", __package__)
    return FIT_BACKENDS[module]


class _RowsInMemory:
    """The rows of an in-memory fit as the stages that refit on them see them (the backend-neutral view).

    The stages (the penalty check of ``alpha="auto"``, the annealing start, the safeguard's cross-validated check)
    read the labeled rows and fit clones of the estimator on all rows with some labels hidden. Each backend gives
    this view: ``X`` (in memory; it holds at least the rows ``labeled``), ``y_enc`` (class indices on them),
    ``labeled`` (the labeled rows of positive weight, indices into ``X``), ``weights`` (row weights of ``X``),
    ``n_unlabeled`` (unlabeled rows of positive weight in the fit) and :meth:`fit_hiding`. A Dask fit's view
    (:mod:`skssl.svm.dask._dask_fit`) holds the labeled rows only, gathered to the client.
    """

    def __init__(self, X, y_enc, mask, sample_weight, clusters=None):
        self.X, self.y_enc, self.mask, self.sample_weight = X, y_enc, mask, sample_weight
        self.clusters = clusters  # the k-means of the rows (skssl.svm.defaults._cluster_fractions), shared
        self.weights, self.labeled, unlabeled = rows_of_positive_weight(X, mask, sample_weight)
        self.n_unlabeled = int(unlabeled.size)

    def fit_hiding(self, estimator, hidden, given):
        """``estimator`` fitted on every row with the labels of the rows ``hidden`` (of ``labeled``) hidden."""
        y = self.y_enc.copy()  # -1 on the unlabeled rows already
        y[hidden] = -1
        return estimator._fit_for_parent(self.X, y, self.sample_weight, given)


def _capped_message(name, value, what):
    return f"stopped at {name}={value} {what} before converging; increase {name} or check the data's scale."


class _LinearFitMixin:
    """What every linear estimator shares: its core parameters, ``fit``'s row weights and class fractions.

    Both :class:`_BaseLinearSVC` (the one-vs-rest family) and
    :class:`PottsDeterministicAnnealingSVC` derive from it, so the
    validation of ``sample_weight``, ``class_weight`` and
    ``positive_fraction`` and the dropping of zero-weight rows exist once.
    Subclasses give ``_fit(X, y, sample_weight)``.
    """

    #: The supervised l2-SVM (:class:`~skssl.svm.LinearL2SVC`) that the penalty check of ``alpha="auto"``, the
    #: safeguard's refit and its fallback check fit; skssl.svm._classes sets it once that class, built on this
    #: base, is defined.
    _supervised_estimator = None

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        # 0 threads is meaningless (joblib fails deep inside); -1 is all cores, -2 all but one.
        "n_jobs": [Interval(Integral, 1, None, closed="left"), Interval(Integral, None, -1, closed="right"), None],
        "verbose": ["verbose"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    #: Whether a binary problem also takes ``positive_fraction`` as a pair
    #: (one fraction per class); the one-vs-rest family takes one number.
    _binary_fraction_pair = False

    #: Whether a fit stopped by a cap warns (a class-wide switch). The internal fits of a label check are handed
    #: ``warns_on_caps=False`` instead (:class:`~skssl.svm.defaults._handed_down.HandedDown`), since their caps
    #: say nothing of the model the user gets (and a warnings filter would be process state).
    _warns_on_caps = True
    #: How far ahead the safeguard's cross-validated check wants the semi-supervised model, in standard errors of
    #: the paired difference; None: the supervised model is returned when strictly ahead (``_fallback_check``).
    _check_margin = None
    #: What the fit that started this one handed it (:class:`~skssl.svm.defaults._handed_down.HandedDown`); a fit
    #: the user starts is handed nothing.
    _given = HandedDown()
    #: Private attributes a fit sets for the fits it starts (safeguard candidates, label checks): a new fit
    #: starts without them, and they stay on its working copy.
    _fit_state = ("_penalty_factor", "_given")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model; rows with ``y == -1`` are unlabeled.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Training data; sparse input is used as CSR and never densified.
            A Dask array of row blocks (CSR or dense) is fitted on the
            cluster of the current ``distributed.Client``, its blocks staying
            on the workers (not :class:`~skssl.svm.PottsDeterministicAnnealingSVC`; see
            the user guide, "Fitting on a Dask cluster").
        y : array-like or dask array of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows (numbers for a Dask ``X``,
            chunked like its rows).
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Non-negative weight of each row, labeled or unlabeled (SVMlin's
            per-example cost). A weight of 2 counts the row twice; a weight
            of 0 drops it. ``None`` gives every row weight 1.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        # The fit works on a copy of its own and stores its attributes at the end, so that fits of this object
        # that overlap (in threads) or follow one another never read or scale each other's (module's decisions).
        work = working_copy(self, fit_state=self._fit_state)
        with fit_scope():  # the fits run inside this one do not check its rows for duplicate entries again
            work._fit(X, y, sample_weight)
        return publish_fitted(self, work)

    def _fit_for_parent(self, X, y, sample_weight, given=None):
        """``fit`` as a fit started by another one, which hands it ``given``
        (:class:`~skssl.svm.defaults._handed_down.HandedDown`; None: nothing).

        ``X`` holds rows of the parent's validated ones and ``y`` their class indices (``-1``: unlabeled); neither
        they nor the parameters (set by the parent from validated ones) are validated again. The fit's working
        copy holds ``given``.
        """
        work = working_copy(self, fit_state=self._fit_state)
        work._given = replace(HandedDown() if given is None else given, rows_validated=True)
        work._penalty_factor = None  # alpha's factor, where alpha="auto" checks it: read by the fit's parent
        with fit_scope():
            work._fit(X, y, sample_weight)
        return publish_fitted(self, work, private=("_penalty_factor",))

    @property
    def _warns(self):
        """Whether this fit's caps warn: not in a fit whose parent says they say nothing of the user's model."""
        return self._warns_on_caps and self._given.warns_on_caps

    def decision_function(self, X):
        """Confidence scores: the signed distance of each row to each class's hyperplane.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to score; sparse input is checked (index arrays within
            the matrix's shape) and used as CSR.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``X @ coef_.T + intercept_``; for a binary problem, positive
            scores predict ``classes_[1]``.
        """
        if is_dask_array(X):  # lazily, block by block where the rows are (skssl.utils._dask)
            n_columns = None if self.coef_.shape[0] == 1 else self.coef_.shape[0]
            return map_row_blocks(self.decision_function, X, n_columns=n_columns)
        return super().decision_function(check_sparse_structure(X))

    def predict(self, X):
        """Predicted class of each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to label; a Dask array is labeled lazily, block by block.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Labels among ``classes_`` (a Dask array for a Dask ``X``).
        """
        if is_dask_array(X):
            return map_row_blocks(self.predict, X, dtype=self.classes_.dtype)
        return super().predict(X)

    def _apply_safeguard(self, data):
        """Replace the semi-supervised model by its safe version (:mod:`skssl.svm.safeguard._safeguard`)."""
        if not self._has_safeguard:
            return  # LinearL2SVC: no safeguard, and no attributes of one
        self.safeguard_agreement_ = None
        self.safeguard_scores_ = None
        self.safeguard_fell_back_ = None
        if getattr(self, "safeguard", None) is None or self.positive_fraction is not None:
            return  # given class fractions are known, not estimated: nothing for the candidates to vary
        X, y_enc, mask, sample_weight = data.X, data.y_enc, data.mask, data.checked_weight
        weights, labeled, unlabeled = rows_of_positive_weight(X, mask, sample_weight)
        if unlabeled.size == 0:
            return
        n_classes = self.classes_.shape[0]
        # The held-out labels first: their check compares the supervised model with this estimator's fits on
        # folds, never with the agreement's model, so where it returns the supervised model the candidates would
        # only describe a model that is not returned, and they are not fitted.
        if self._check_with_held_out_labels(_RowsInMemory(X, y_enc, mask, sample_weight, data.clusters)):
            self._set_transduction(y_enc, self._predicted_indices(X))
            return
        # Predictions on all rows, then indexed: slicing X by the unlabeled rows would copy most of it.
        predictions = [self._predicted_indices(X)[unlabeled]]
        # The candidates are fitted on the encoded labels 0 .. n_classes - 1, one at a time: each is dropped once
        # it has predicted, so that no more than one candidate's coef_ is alive beside this fit's.
        candidates = self._safeguard_candidates(
            data.fractions, weights[labeled].sum(), self._encoded_class_weight(), self._resolved_parameters()
        )
        given = self._candidates_given(data.fractions, data.clusters)
        while candidates:
            candidate = candidates.pop(0)._fit_for_parent(X, y_enc, sample_weight, given)
            predictions.append(candidate._predicted_indices(X)[unlabeled])
            del candidate
        agree = candidates_agree(predictions)
        labels = predictions[0]
        # The semi-supervised objective with the agreed labels fixed and the disputed rows left out: labeled
        # costs summing to 1, agreed unlabeled ones to unlabeled_weight. LinearL2SVC scales its costs to sum
        # to 1, hence alpha / (1 + unlabeled_weight) (alpha itself when no row is agreed on).
        lab_weights = weights[labeled]
        if self.class_weight is not None:
            lab_weights = (
                lab_weights
                * checked_class_weight(self.class_weight, self.classes_, self.classes_[y_enc[labeled]])[y_enc[labeled]]
            )
        refit_weights = np.zeros(X.shape[0])
        refit_weights[labeled] = lab_weights / lab_weights.sum()
        agreed = unlabeled[agree]
        share = self.unlabeled_weight if agreed.size else 0.0
        if agreed.size:
            refit_weights[agreed] = self.unlabeled_weight * weights[agreed] / weights[agreed].sum()
        y_refit = y_enc.copy()
        y_refit[unlabeled] = labels
        y_refit[refit_weights == 0] = -1  # disputed rows and rows of weight 0 stay out
        # (Never below ALPHA_MIN, which only an alpha_ within a factor 1 + unlabeled_weight of it reaches.)
        refit_alpha = max(self.alpha_ / (1.0 + share), ALPHA_MIN)
        if n_classes > 2 and fit_rows_are_centred(X, sample_weight):
            # Standardized rows: all classes jointly (skssl.svm.solvers._weston_watkins), from the candidates' model.
            rows = np.flatnonzero(refit_weights > 0)
            # On the used columns of X, where this model's weights are (it is 0 on the others).
            X_used, columns = on_used_columns(X)
            joint = JointLoss(X_used[rows], y_refit[rows], refit_weights[rows])
            del X_used
            self._refit_jointly(joint.terms, joint.curvature, refit_alpha, columns)
            del joint
        else:
            refit = self._fit_supervised(
                X,
                y_refit,
                refit_weights,
                alpha=refit_alpha,
                intercept_scaling=self.intercept_scaling_,
                n_jobs=self.n_jobs,
            )
            self.coef_ = refit.coef_
            self.intercept_ = refit.intercept_
        self._set_transduction(y_enc, self._predicted_indices(X))
        self.safeguard_agreement_ = float(np.mean(agree))
        if self.verbose:
            print(
                f"[{type(self).__name__}] safeguard: the {len(predictions)} candidates agree on "
                f"{self.safeguard_agreement_:.1%} "
                f"of the unlabeled rows; the other {np.count_nonzero(~agree)} are left out of the refit"
            )

    def _check_with_held_out_labels(self, rows):
        """The safeguard's check of the held-out labels, before its candidates: True where the supervised model won.

        ``rows``: the fit's rows as the stages see them (:class:`_RowsInMemory` or a Dask fit's view); the caller
        updates what depends on the model (``transduction_``).
        """
        checks = asks_held_out_labels(self.safeguard, rows.X, rows.labeled)
        if self.verbose and self.safeguard == "auto":
            print(
                f"[{type(self).__name__}] safeguard='auto': "
                + (
                    "the distinct labeled rows outnumber the features, so the labels are asked too"
                    if checks
                    else f"no more distinct labeled rows than the {rows.X.shape[1]} features, so the agreement alone"
                )
            )
        return bool(checks) and self._fall_back_where_held_out_labels_say(rows)

    def _fall_back_where_held_out_labels_say(self, rows):
        """Keep the supervised l2-SVM where the held-out labels prefer it, by this estimator's ``_check_margin``.

        Returns whether it did. The supervised fits are on the labeled rows of ``rows`` (in memory on every
        backend), the semi-supervised ones on all rows with a fold's labels hidden (:meth:`_RowsInMemory.fit_hiding`),
        handed this fit's annealing start and the k-means clusters of its rows, so that no fold works them out
        again. Each fold's factor of ``alpha="auto"`` is checked once, on the fold's own labels, by its supervised
        fit, and handed to its semi-supervised fit (the parent's factor, whose labels include the held-out ones,
        would favour it).
        """
        X, y_enc, weights = rows.X, rows.y_enc, rows.weights
        class_weight = self._encoded_class_weight()

        def supervised(train_rows):
            return self._fit_supervised(
                X[train_rows],
                y_enc[train_rows],
                weights[train_rows],
                alpha=self.alpha,
                intercept_scaling=self.intercept_scaling,
                class_weight=class_weight,
                n_jobs=self.n_jobs,
            )

        handed = HandedDown(
            initial_temperature=getattr(self, "initial_temperature_", None), clusters=rows.clusters, warns_on_caps=False
        )

        factors = {}  # alpha's factor of each fold's labels, by the fold's held-out rows

        def predict_supervised(train_rows, test_rows):
            model = supervised(train_rows)
            factors[test_rows.tobytes()] = model._penalty_factor
            return model._predict_validated(X[test_rows])

        def predict_semi(hidden, test_rows):
            # The folds' fits have no safeguard of their own (user guide, Implementation decisions).
            fold_fit = clone(self).set_params(safeguard=None, class_weight=class_weight, verbose=0)
            # Its caps say nothing of the model the user gets.
            given = replace(handed, penalty_factor=factors[test_rows.tobytes()])
            fold_fit = rows.fit_hiding(fold_fit, hidden, given)
            return fold_fit._predicted_indices(X[test_rows])

        comparison = compare_on_folds(
            X,
            y_enc,
            rows.labeled,
            weights,
            predict_semi,
            predict_supervised,
            until_settled=True,  # the folds left are not fitted once they cannot change the outcome
            margin=self._check_margin,
        )
        if comparison is None:
            return False
        self.safeguard_scores_ = comparison.scores
        fall_back = prefers_supervised(comparison, margin=self._check_margin)
        self.safeguard_fell_back_ = bool(fall_back)
        if self.verbose:
            found = (
                f"the supervised l2-SVM classifies {comparison.scores[0]:.1%} of the held-out rows right, this "
                f"estimator {comparison.scores[1]:.1%}"
            )
            if self._check_margin is not None:
                b, c = comparison.discordant
                found += (
                    f" (rows only one of them gets right: {b:g} and {c:g}; this estimator must lead by more than "
                    f"{self._check_margin:g} standard error of the difference)"
                )
            outcome = "the supervised model is returned" if fall_back else "the semi-supervised model stays"
            if comparison.n_fitted < comparison.n_folds:
                outcome += f" (on {comparison.n_fitted} of {comparison.n_folds} folds: the others could not change it)"
            print(f"[{type(self).__name__}] safeguard: cross-validated on the labeled rows, {found}; {outcome}")
        if fall_back:
            model = supervised(rows.labeled)
            self.coef_, self.intercept_ = model.coef_, model.intercept_
        return bool(fall_back)

    def _safeguard_candidates(self, fractions, n_labeled_weight, class_weight, resolved):
        """The safeguard's extra candidates, unfitted: two of this kind at moved ``fractions``, and
        :meth:`_second_opinion` if any; ``resolved`` holds the parameters resolved from the data."""
        candidates = [
            clone(self).set_params(
                positive_fraction=as_positive_fraction(moved),
                class_weight=class_weight,
                safeguard=None,
                verbose=0,
                **resolved,
            )
            for moved in candidate_fractions(fractions, n_labeled_weight)
        ]
        second = self._second_opinion(fractions, class_weight)
        return candidates + ([] if second is None else [second])

    def _candidates_given(self, fractions, clusters=None):
        """What the safeguard's candidates are handed (:class:`~skssl.svm.defaults._handed_down.HandedDown`).

        Fitted on this fit's rows: this fit's class fractions (clusters included; read only where a candidate
        estimates them), alpha's factor and the k-means ``clusters`` of the rows, not worked out again.
        """
        return HandedDown(fractions=fractions, penalty_factor=getattr(self, "_penalty_factor", None), clusters=clusters)

    def _label_check_given(self, clusters=None):
        """What the fits of a label check on this fit's rows are handed: alpha's factor, the clusters, no warnings."""
        return HandedDown(penalty_factor=getattr(self, "_penalty_factor", None), warns_on_caps=False, clusters=clusters)

    def _second_opinion(self, fractions, class_weight):
        """The safeguard's candidate from a second optimizer of the same objective, unfitted.

        Deterministic annealing asks :class:`TransductiveSVC` at ``fractions``;
        TSVM asks itself without SVMlin's annealing of ``lam_u`` (see
        :mod:`skssl.svm.safeguard._safeguard`). ``None`` (here): no such candidate.
        """
        return None

    def _refit_jointly(self, data_terms, data_curvatures, refit_alpha, columns=None):
        """The multi-class refit: the Weston-Watkins l2-SVM of the rows behind ``data_terms``, from this model.

        ``columns``: the columns of X the data terms are on (None: all); ``coef_`` is 0 on the others.
        """
        # Twice the penalty: with two classes the joint loss is then the binary l2-SVM at refit_alpha.
        alpha = 2.0 * refit_alpha
        start = self.coef_ if columns is None else self.coef_[:, columns]
        coef, intercept, converged = fit_weston_watkins(
            data_terms, data_curvatures, start, self.intercept_, alpha, alpha / self.intercept_scaling_**2
        )
        del start
        if columns is not None:
            coef = expanded_coef(coef, columns, self.coef_.shape[1])
        if not converged and self._warns:
            warnings.warn(
                f"{type(self).__name__}: the safeguard's multi-class refit stopped at its cap on Newton iterations "
                "before meeting its tolerance.",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
        self.coef_, self.intercept_ = coef, intercept

    def _resolved_parameters(self):
        """Parameters resolved from the data in this fit, as the values a clone of it must take (none here)."""
        return {}

    @property
    def _has_safeguard(self):
        """Whether this estimator takes a ``safeguard`` (and so has its fitted attributes)."""
        return "safeguard" in self._parameter_constraints

    @property
    def _alpha_b(self):
        """The regularization of the bias (of every class's bias): ``alpha_ / intercept_scaling_**2``."""
        return self.alpha_ / self.intercept_scaling_**2

    def _encoded_class_weight(self):
        """``class_weight`` with the class indices as keys (a dict's labels become 0 .. n_classes - 1)."""
        if not isinstance(self.class_weight, Mapping):
            return self.class_weight
        return {k: self.class_weight[c] for k, c in enumerate(self.classes_.tolist()) if c in self.class_weight}

    def _predicted_indices(self, X):
        """Index in ``classes_`` of the class each row of ``X`` is predicted."""
        if sp.issparse(X):
            # One product per class: X @ coef_.T would copy the transposed coef_ first (scipy wants it contiguous).
            scores = np.column_stack([X @ w for w in self.coef_]) + self.intercept_
        else:
            scores = X @ self.coef_.T + self.intercept_
        return (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 else scores.argmax(axis=1)

    def _predict_validated(self, X):
        """``predict`` on rows of a fit's validated ones, without validating them again: the same products."""
        # scikit-learn's product, not _predicted_indices' one per class: the checks' predictions stay those of
        # predict to the last bit on sparse rows too.
        scores = safe_sparse_dot(X, self.coef_.T, dense_output=True) + self.intercept_
        indices = (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 else scores.argmax(axis=1)
        return self.classes_[indices]

    def _fit_supervised(self, X, y, sample_weight, **params):
        """The supervised l2-SVM with ``params``, fitted on rows and class indices that this fit validated."""
        return self._supervised_estimator(**params)._fit_for_parent(X, y, sample_weight)

    def _supervised_predict(self, X, y, sample_weight, **params):
        """The ``predict`` of :meth:`_fit_supervised`'s model, for rows of this fit's validated ones."""
        return self._fit_supervised(X, y, sample_weight, **params)._predict_validated

    def _class_fractions(self, y_enc, mask, sample_weight=None):
        """Fraction of every class among the unlabeled rows, in ``classes_`` order (shape (n_classes,)).

        Estimated from the labeled rows (weighted by ``sample_weight``) when
        ``positive_fraction`` is None, else the validated given fractions.
        """
        n_classes = self.classes_.shape[0]
        given = getattr(self, "positive_fraction", None)
        if isinstance(given, Mapping):
            raise ValueError(
                f"positive_fraction is a {type(given).__name__}; give the fractions as a float (binary problems) or "
                "a sequence in classes_ order, e.g. [fractions[c] for c in sorted(fractions)]."
            )
        if given is None:
            y_lab = y_enc[mask]
            if sample_weight is None:
                return np.bincount(y_lab, minlength=n_classes) / y_lab.shape[0]
            sw_lab = sample_weight[mask]  # a row of weight 2 counts twice
            return np.bincount(y_lab, weights=sw_lab, minlength=n_classes) / sw_lab.sum()
        if np.ndim(given) == 0:
            if n_classes > 2:
                raise ValueError(
                    f"positive_fraction={given!r} is a single number but y has {n_classes} classes; "
                    "pass one fraction per class (in classes_ order) or None to estimate them "
                    "from the labeled rows."
                )
            return np.array([1.0 - float(given), float(given)])
        try:
            fractions = np.asarray(given, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"positive_fraction must hold numbers, one per class; got {given!r}.") from exc
        if fractions.shape != (n_classes,) or (n_classes == 2 and not self._binary_fraction_pair):
            takes = (
                f"y has {n_classes} classes, so it takes"
                if self._binary_fraction_pair
                else f"a binary problem takes one number and a problem with {n_classes} classes takes"
            )
            raise ValueError(
                f"positive_fraction has shape {fractions.shape}; {takes} {n_classes} fractions "
                "(one per class, in classes_ order)."
            )
        if not np.all((fractions > 0) & (fractions < 1)):
            raise ValueError(f"positive_fraction must lie in (0, 1), got {fractions}.")
        total = float(fractions.sum())
        if abs(total - 1.0) > POSITIVE_FRACTION_SUM_TOL:
            raise ValueError(
                f"positive_fraction gives the fraction of each class among the unlabeled rows, so the "
                f"fractions must sum to 1; got {fractions} (sum {total:.6g})."
            )
        return fractions

    def _checked_sample_weight(self, sample_weight, X):
        """``sample_weight`` as float64 weights, one per row of ``X`` (None stays None), validated once a user fit.

        A fit on validated rows takes its parent's checked weights (or weights computed from them) as they are.
        The fit's own copy: the caller's array is never handed on.
        """
        if sample_weight is None:
            return None
        if (
            self._given.rows_validated
            and isinstance(sample_weight, np.ndarray)
            and sample_weight.dtype == np.float64
            and sample_weight.shape == (X.shape[0],)
        ):
            return sample_weight  # the kernels read it by row: its length is checked all the same
        return _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True, copy=True)

    def _row_weights(self, y_enc, mask, sample_weight):
        """(loss weights, weights for the class-fraction estimate), or (None, None) for unit weights.

        ``sample_weight``: checked weights (:meth:`_checked_sample_weight`) or None.
        """
        class_weight = getattr(self, "class_weight", None)
        if sample_weight is None and class_weight is None:
            return None, None
        # A copy: class_weight is multiplied in below, and the checked weights are handed on unchanged.
        sw = np.ones(y_enc.shape[0]) if sample_weight is None else sample_weight.copy()
        estimate_weights = sw.copy()
        if class_weight is not None:
            labels = self.classes_[y_enc[mask]]
            cw = checked_class_weight(class_weight, self.classes_, labels)
            with np.errstate(over="ignore"):  # an infinite product is refused below, by name
                sw[mask] *= cw[y_enc[mask]]
        if np.all(sw == 1.0):
            return None, None
        for weights, name in ((estimate_weights, "sample_weight"), (sw, "sample_weight (times class_weight)")):
            check_weight_total(weights, name, advice=_WEIGHT_SCALE_ADVICE)
        if not np.any(sw[mask] > 0):
            raise ValueError("sample_weight (times class_weight) is 0 on every labeled row; nothing to fit.")
        check_every_class_weighted(
            self.classes_, np.bincount(y_enc[mask], weights=sw[mask], minlength=len(self.classes_))
        )
        return sw, estimate_weights

    def _store_class_fractions(self, fractions):
        """``class_fractions_``, the fractions the solve uses, for the estimators that use the unlabeled rows."""
        if self._uses_unlabeled_rows:
            self.class_fractions_ = np.array(fractions, dtype=np.float64)

    def _check_penalty_on_labeled_rows(self, rows):
        """Scale the rule's ``alpha_`` by the factor the labeled rows support.

        See :mod:`skssl.svm.defaults._penalty_check`. ``rows``: the fit's rows as the stages see them on its
        backend (:class:`_RowsInMemory`; only the labeled rows are read).
        """
        # A safeguard candidate or a start check fitted on its parent's rows is handed the parent's answer.
        factor = self._given.penalty_factor
        if factor is None:
            X, mask, weights = rows.X, rows.mask, rows.weights
            factor = labeled_rows_penalty_factor(
                X,
                rows.y_enc,
                mask,
                weights,
                auto_alpha(X, mask, weights, unlabeled_weight=0.0),
                self.intercept_scaling_,
                self._encoded_class_weight(),
                self.n_jobs,
                supervised=self._supervised_predict,
            )
        self._penalty_factor = factor
        if factor != 1.0:
            self.alpha_ *= factor
            if self.verbose:
                print(
                    f"[{type(self).__name__}] alpha: {factor:g} times the rule's value ({self.alpha_:.3g}); the "
                    "labeled rows classify better with it in cross-validation by more than a standard error"
                )

    def _adopt_validated_rows(self, X, y):
        """``_validate_semi_supervised_data`` for rows and class indices that the parent fit validated.

        Only ``classes_`` and ``n_features_in_`` are set; where the full validation would raise or warn (fewer
        than two classes labeled, no unlabeled row for an estimator that uses them) it runs, for its message.
        The sparse structure is checked again all the same (one compiled pass): the kernels read these indices.
        """
        if y.dtype.kind != "i":
            return self._validate_semi_supervised_data(X, y, accept_sparse="csr")
        mask = y != UNLABELED
        classes, codes = np.unique(y[mask], return_inverse=True)
        if classes.shape[0] < 2 or (self._uses_unlabeled_rows and mask.all()):
            return self._validate_semi_supervised_data(X, y, accept_sparse="csr")
        X = check_sparse_structure(X)
        self.n_features_in_ = X.shape[1]
        self.classes_ = classes
        y_enc = np.full(y.shape[0], UNLABELED, dtype=np.int64)
        y_enc[mask] = codes.ravel()
        return X, y_enc, mask

    def _prepare_fit(self, X, y, sample_weight):
        """Validate the data and weights; returns a :class:`_FitData` (read ``self._given``, the parent's answers)."""
        handed = self._given
        if handed.rows_validated:
            X, y_enc, mask = self._adopt_validated_rows(X, y)
        else:
            X, y_enc, mask = self._validate_semi_supervised_data(X, y, accept_sparse="csr")
        X = without_duplicate_entries(as_float64_design(X))  # the sums, as scipy reads them (see _validation)
        check_design_scale(X)
        sample_weight = self._checked_sample_weight(sample_weight, X)
        sw, estimate_weights = self._row_weights(y_enc, mask, sample_weight)
        fractions = self._class_fractions(y_enc, mask, estimate_weights)
        # The k-means of the class fractions runs at most once on these rows, shared with the fits started on them.
        clusters = RowClusters(X, estimate_weights) if handed.clusters is None else handed.clusters
        if self._uses_unlabeled_rows and getattr(self, "positive_fraction", None) is None:
            labels_say = fractions
            # A safeguard candidate fitted on its parent's rows is handed the parent's answer: same rows, same rule.
            fractions = self._given.fractions
            if fractions is None:
                fractions = fractions_from_clusters(X, y_enc, mask, labels_say, estimate_weights, clusters=clusters)
            if self.verbose and fractions is not labels_say:
                print(
                    f"[{type(self).__name__}] class fractions from clusters of the rows: "
                    f"{np.round(fractions, 3).tolist()} (the labeled rows say {np.round(labels_say, 3).tolist()})"
                )
        unlabeled_weight = getattr(self, "unlabeled_weight", 1.0) if self._uses_unlabeled_rows else 0.0
        self.alpha_, self.intercept_scaling_ = resolve_regularization(
            self.alpha, self.intercept_scaling, X, mask, estimate_weights, unlabeled_weight=unlabeled_weight
        )
        if isinstance(self.alpha, str):  # "auto": the labeled rows may call for less (defaults._penalty_check)
            self._check_penalty_on_labeled_rows(_RowsInMemory(X, y_enc, mask, sample_weight))
        _check_alpha(self)
        keep = None
        if sw is not None and not np.all(sw > 0):
            # Zero weight: the row is not part of the problem at all.
            keep = np.flatnonzero(sw > 0)
            sw = sw[keep]
            if np.all(sw == 1.0):
                sw = None  # the rest is unweighted: the same arithmetic as a fit without those rows
        return _FitData(X, y_enc, mask, fractions, sw, keep, clusters, sample_weight)


def expanded_coef(weights, columns, n_features):
    """``coef_`` of shape (len(weights), n_features) from weight vectors on ``columns`` (None: on all columns).

    The other columns held no entry of the rows fitted (:func:`~skssl.svm.kernels._validation.on_used_columns`);
    their weights are 0. Written row by row into one array, never stacked first.
    """
    n_features = weights[0].shape[0] if columns is None else n_features
    coef = np.zeros((len(weights), n_features))
    for k, w in enumerate(weights):
        if columns is None:
            coef[k] = w
        else:
            coef[k, columns] = w
    return coef


def check_every_class_weighted(classes, class_totals):
    """Raise when the labeled rows of some class all have weight 0 (times ``class_weight``).

    Such a class is in ``classes_`` but no row teaches it: the S3VMs would estimate its share of the
    unlabeled rows as 0 and fail on it, or never predict it. A ``ValueError`` names the class instead.
    """
    empty = np.flatnonzero(~(np.asarray(class_totals) > 0))
    if empty.size:
        raise ValueError(
            f"sample_weight (times class_weight) is 0 on every labeled row of class {classes[empty].tolist()} (of "
            f"{np.asarray(classes).tolist()}): nothing teaches the fit that class; give those rows a positive "
            "weight, or mark them unlabeled (-1) to leave the class out."
        )


@dataclass
class _FitData:
    """Validated training data of one fit.

    ``X``, ``y_enc`` and ``mask`` cover every row; ``sample_weight`` (None for
    unit weights) covers the rows ``keep`` (None: all rows), those of
    positive weight; ``fractions`` has one entry per class. ``clusters``: the k-means of the rows, shared with
    the fits started on them. ``checked_weight``: the user's ``sample_weight`` checked (None for none), every
    row, what the fits started on these rows are handed.
    """

    X: object
    y_enc: np.ndarray
    mask: np.ndarray
    fractions: np.ndarray
    sample_weight: np.ndarray | None
    keep: np.ndarray | None
    clusters: RowClusters | None = None
    checked_weight: np.ndarray | None = None

    def rows(self, a):
        """``a`` restricted to the rows in the problem."""
        return a if self.keep is None else a[self.keep]


def _annealing_messages(res, estimator, what):
    """ConvergenceWarning messages of an annealing result; ``what``: the name of the beliefs."""
    messages = []
    if not res.converged:
        messages.append(
            _capped_message("max_iter", estimator.max_iter, "temperatures")
            + f" (the mean entropy of the {what} is still above tol={estimator.tol})"
        )
    if not res.inner_converged:
        messages.append(
            _capped_message("max_inner_iter", estimator.max_inner_iter, "alternations at some temperature")
            + f" (the mean KL divergence stayed above tol={estimator.tol})"
        )
    if not res.mfn_converged:
        messages.append(_MFN_CAP_MESSAGE)
    return messages


class _BaseLinearSVC(_LinearFitMixin, SemiSupervisedClassifierMixin, LinearClassifierMixin, BaseEstimator):
    """Shared one-vs-rest fit: validation, one binary problem per class (in parallel), the fitted attributes.

    A subclass gives the solve of one binary problem::

        _solve(X, y, labeled, positive_fraction, n_threads, sample_weight=None) -> result

    on the float64 rows (zero-weight rows dropped), +1 / -1 targets, a boolean
    ``labeled`` mask and positive row weights (``None``: unit). It returns its
    solver's result (``MFNResult``, ``TSVMResult``, ``DAResult``) with ``w``,
    ``b``, ``outputs`` (``X @ w + b``, reassigned on all rows), ``objective``
    and ``n_iter``. On a Dask array :meth:`_solve_dask` (or ``_dask_solver``)
    solves it on the row blocks. Optional hooks, declared below:
    ``_convergence_messages``, ``_store_extra``, ``_resolve_from_data`` and
    ``_checked_results``; a missing solve fails at ``fit`` with a
    ``NotImplementedError`` naming it. :class:`~skssl.svm.PottsDeterministicAnnealingSVC`
    solves its classes jointly and gives ``_fit`` itself.
    """

    #: Fields of a result that must be finite, by the name used in the error message.
    _checked_results = {"w": "w", "b": "b", "objective": "objective", "outputs": "outputs"}

    def _fit(self, X, y, sample_weight=None):
        on_dask = is_dask_array(X)
        self._check_hooks(on_dask)
        if on_dask:  # on the cluster of the current distributed.Client (skssl.svm.dask._dask_fit)
            return _backend_fit("dask._dask_fit")(self, X, y, sample_weight)
        data = self._prepare_fit(X, y, sample_weight)
        self._resolve_from_data(
            _RowsInMemory(data.X, data.y_enc, data.mask, data.checked_weight, data.clusters), data.fractions
        )
        self._store_class_fractions(data.fractions)
        X, y_enc, mask, sw = data.X, data.y_enc, data.mask, data.sample_weight
        n_classes = self.classes_.shape[0]
        fractions = data.fractions[1:] if n_classes == 2 else data.fractions
        positives = [1] if n_classes == 2 else list(range(n_classes))
        targets = [data.rows(np.where(y_enc == k, 1.0, -1.0)) for k in positives]
        # The solvers see the used columns only; the weights of the others are 0 (skssl.svm.kernels._validation).
        X_used, columns = on_used_columns(X)
        X_fit, mask_fit = data.rows(X_used), data.rows(mask)
        n_outer, n_inner = share_threads(self.n_jobs, len(targets))
        try:
            # A solver callback installed here goes with each problem to the thread (or worker) that solves it.
            callback = current_callback()
            solve = self._solve if callback is None else partial(_solve_with_callback, callback, self._solve)
            problems = [(X_fit, t, mask_fit, r, n_inner, sw) for t, r in zip(targets, fractions)]
            if n_outer == 1:  # in this thread, as joblib would run them, without its set-up per fit
                results = [solve(*problem) for problem in problems]
            else:
                results = Parallel(n_jobs=n_outer, prefer="threads")(delayed(solve)(*problem) for problem in problems)
        except FloatingPointError as error:
            raise _alpha_error(self, error) from error
        if X_fit is not X_used:
            for res in results:
                with np.errstate(over="ignore", invalid="ignore"):
                    res.outputs = X_used @ res.w + res.b
        del X_fit, X_used
        self._store_results(results, columns, X.shape[1])
        outputs = np.column_stack([res.outputs for res in results])
        indices = (outputs[:, 0] > 0).astype(np.intp) if n_classes == 2 else outputs.argmax(axis=1)
        self._set_transduction(y_enc, indices)
        with _safeguard_failures_named(self):
            self._apply_safeguard(data)
        return self

    def _check_hooks(self, on_dask):
        """Raise a ``NotImplementedError`` that says which hook this variant lacks for a fit on this backend."""
        name = type(self).__name__
        if type(self)._solve is _BaseLinearSVC._solve:
            raise NotImplementedError(
                f"{name} gives no _solve(X, y, labeled, positive_fraction, n_threads, sample_weight=None), the solve "
                "of one binary problem that every variant of _BaseLinearSVC defines (CONTRIBUTING.md, 'Adding a "
                "linear S3VM variant')."
            )
        if on_dask and self._dask_solver is None and type(self)._solve_dask is _BaseLinearSVC._solve_dask:
            raise NotImplementedError(
                f"{name} does not fit on Dask arrays: it gives no _solve_dask(rows, spec, positive_fraction), the "
                "solve of one binary problem on the cluster's row blocks (CONTRIBUTING.md, 'Adding a linear S3VM "
                "variant'). Fit it on an in-memory array (e.g. X.compute())."
            )

    def _solve(self, X, y, labeled, positive_fraction, n_threads, sample_weight=None):
        """Solve one binary problem in memory; returns the solver's result (see the class docstring).

        Every variant defines it; the base raises a ``NotImplementedError`` at ``fit`` where one does not.
        """
        raise NotImplementedError  # (never reached: _check_hooks names the missing hook first)

    #: The name of a built-in estimator's block solver in :mod:`skssl.svm.dask._dask_fit`'s table; a variant of
    #: one's own gives :meth:`_solve_dask` instead (None: no solver named).
    _dask_solver = None

    def _solve_dask(self, rows, spec, positive_fraction):
        """Solve one binary problem (``spec``, a ``ProblemSpec``) on the Dask row blocks ``rows``.

        Returns :meth:`_solve`'s result with ``outputs`` left on the workers; ``CONTRIBUTING.md`` has an example.
        """
        raise NotImplementedError  # (never reached: _check_hooks names the missing hook first)

    def _resolve_from_data(self, rows, fractions):
        """Resolve the parameters that depend on the validated data before the solve (none by default).

        ``rows``: the fit's rows as the stages see them on either backend (:class:`_RowsInMemory`), ``fractions``
        the class fractions of the unlabeled rows. Called by the in-memory and the Dask fit alike.
        """

    def _store_results(self, results, columns=None, n_features=None):
        """Check the binary problems' results and store the model, its objectives and counts; warn if capped.

        Fields of a result that are not arrays or numbers (a Dask fit's outputs are the blocks' states,
        which stay on the workers) are not checked. ``columns``: the columns of X that the results' weights
        belong to, of ``n_features`` (None: all of them).
        """
        for res in results:
            values = {name: getattr(res, field) for name, field in self._checked_results.items()}
            _check_finite_fit(self, {k: v for k, v in values.items() if isinstance(v, (float, np.ndarray))})
        self.coef_ = expanded_coef([res.w for res in results], columns, n_features)
        self.intercept_ = np.array([res.b for res in results])
        self.objective_ = np.array([res.objective for res in results])
        self.n_iter_ = int(max(res.n_iter for res in results))
        for res in results:
            for message in self._convergence_messages(res) if self._warns else ():
                warnings.warn(f"{type(self).__name__}: {message}", ConvergenceWarning, stacklevel=user_stacklevel())
        self._store_extra(results)

    def _convergence_messages(self, res):
        """The ``ConvergenceWarning`` messages of one result (none by default)."""
        return []

    def _store_extra(self, results):
        """Store estimator-specific attributes from the results of all binary problems (nothing by default)."""


#: The parameters of every estimator that uses the unlabeled rows (TSVM, DA, Potts DA).
_SEMI_SUPERVISED_CONSTRAINTS = {
    **_LinearFitMixin._parameter_constraints,
    "unlabeled_weight": [Interval(Real, 0, None, closed="neither")],
    "positive_fraction": [Interval(Real, 0, 1, closed="neither"), "array-like", None],
    "safeguard": [StrOptions({"auto", "cross_validation", "agreement"}), None],
}

#: The parameters of TSVM.
_TSVM_CONSTRAINTS = {
    **_SEMI_SUPERVISED_CONSTRAINTS,
    "max_switches": [Interval(Integral, 1, None, closed="left")],
}

#: The parameters of both annealing estimators (binary DA and Potts DA).
_ANNEALING_CONSTRAINTS = {
    **_SEMI_SUPERVISED_CONSTRAINTS,
    "initial_temperature": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "max_inner_iter": [Interval(Integral, 1, None, closed="left")],
}
