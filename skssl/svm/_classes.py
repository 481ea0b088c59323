"""The scikit-learn estimators of the linear family: thin wrappers around the solvers.

:class:`LinearL2SVC` (supervised l2-SVM-MFN), :class:`TransductiveSVC` (TSVM),
:class:`DeterministicAnnealingSVC` (DA S3VM) and :class:`PottsDeterministicAnnealingSVC`
(multi-class DA with the Potts glass). The binary problems are SVMlin's (Sindhwani &
Keerthi, SIGIR 2006), the bias regularized like a weight. Shared fit: :mod:`skssl.svm._base`;
shared parameter text: :mod:`skssl.svm._docs`.

Design decisions: user guide, "Mathematical formulation of the linear
S3VMs", Implementation decisions, "Shared by the estimators".
"""

import warnings
from dataclasses import replace

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin

from ..base import SemiSupervisedClassifierMixin
from ._base import (
    _ANNEALING_CONSTRAINTS,
    _MFN_CAP_MESSAGE,
    _TSVM_CONSTRAINTS,
    _alpha_error,
    _annealing_messages,
    _BaseLinearSVC,
    _capped_message,
    _check_finite_fit,
    _LinearFitMixin,
    _safeguard_failures_named,
    expanded_coef,
)
from ..utils._dask import is_dask_array
from ..utils._warnings import user_stacklevel
from .defaults._annealing_start import choose_initial_temperature, given_or_hot
from .solvers._da import DA_INNER_ITERMAX, DA_OUTER_ITERMAX, deterministic_annealing
from ._docs import fill_doc
from .solvers._mfn import MFNITERMAX, RELATIVE_STOP_EPS, l2_svm_mfn
from .safeguard._safeguard import as_positive_fraction
from .solvers._potts import potts_annealing
from .solvers._problem import S3VMProblem
from .kernels._rowblocks import fit_threads
from .solvers._tsvm import TSVM_MAX_ITER, tsvm
from .kernels._validation import on_used_columns

__all__ = ["DeterministicAnnealingSVC", "LinearL2SVC", "PottsDeterministicAnnealingSVC", "TransductiveSVC"]


@fill_doc
class LinearL2SVC(_BaseLinearSVC):
    """Linear l2-SVM trained by the modified finite Newton method (supervised).

    Minimizes SVMlin's supervised objective
    ``1/2 (alpha (|w|^2 + b^2) + (1/l) sum_i max(0, 1 - y_i (x_i . w + b))^2)``
    over the labeled rows; rows with ``y == -1`` are ignored. It is the
    baseline of the semi-supervised SVMs and their inner solver.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularization ``lambda``.
        %(alpha_auto_labeled)s
        SVMlin's supervised ``-W W`` is ``alpha = W / l`` (it sums the loss);
        ``LinearSVC(C=C, loss="squared_hinge")`` fits the same model at
        ``C = 1 / (2 alpha l)`` and ``intercept_scaling=intercept_scaling_``.
    %(intercept_scaling_labeled)s
    tol : float, default=1e-9
        Stop when the objective changes by less than ``tol`` times its value.
    max_iter : int, default=50
        Maximum number of Newton steps (``n_iter_``); reaching it warns.
    %(class_weight)s
    %(n_jobs_one_vs_rest)s
    verbose : int, default=0
        Print a summary per binary problem when > 0.

    Attributes
    ----------
    %(model_one_vs_rest)s
    objective_ : ndarray of shape (n_problems,)
        Objective of each binary problem at the solution.
    %(transduction)s
    n_iter_ : int
        Largest number of Newton steps over the binary problems.
    %(n_features_in)s

    See Also
    --------
    TransductiveSVC : Uses the unlabeled rows through a transductive SVM.
    DeterministicAnnealingSVC : Uses them through deterministic annealing.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm import LinearL2SVC
    >>> X = np.array([[-2.0], [-1.0], [-0.5], [0.5], [1.0], [2.0]])
    >>> y = np.array([0, 0, -1, -1, 1, 1])
    >>> clf = LinearL2SVC(alpha=1e-2).fit(X, y)
    >>> clf.predict([[-3.0], [3.0]])
    array([0, 1])
    """

    # Supervised: -1 rows are ignored, so a fully labeled y is the normal case.
    _uses_unlabeled_rows = False

    def __init__(
        self,
        alpha="auto",
        *,
        intercept_scaling="auto",
        tol=RELATIVE_STOP_EPS,
        max_iter=MFNITERMAX,
        class_weight=None,
        n_jobs=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _solve(self, X, y, labeled, positive_fraction, n_threads, sample_weight=None):
        problem = S3VMProblem(
            y, labeled, alpha=self.alpha_, unlabeled_weight=0.0, sample_weight=sample_weight, alpha_b=self._alpha_b
        )
        lab = problem.lab
        all_rows = lab.size == X.shape[0]  # no copy of X when every row is labeled (the safeguard's refit)
        with fit_threads(n_threads) as threads:
            res = l2_svm_mfn(
                X if all_rows else X[lab],
                problem.y if all_rows else problem.y_lab,
                problem.lab_cost,
                alpha=self.alpha_,
                alpha_b=self._alpha_b,
                rel_tol=self.tol,
                max_iter=self.max_iter,
                schedule=threads,
                n_threads=n_threads,
            )
        if self.verbose:
            print(
                f"[LinearL2SVC] {res.n_iter} Newton step(s), {res.n_cg_iter} CGLS iteration(s), "
                f"objective {res.objective:.6g}"
            )
        # The result on every row, with the objective as the semi-supervised estimators define it.
        outputs = X @ res.w + res.b
        return replace(res, outputs=outputs, objective=problem.objective(res.w, res.b, outputs))

    #: The solver of a fit on a Dask array, by its name in skssl.svm.dask._dask_fit's table.
    _dask_solver = "mfn"

    def _convergence_messages(self, res):
        return [] if res.converged else [_capped_message("max_iter", self.max_iter, "Newton steps")]


# The supervised l2-SVM that the base fits for the penalty check of alpha="auto", the safeguard's refit and its
# fallback check, for every estimator built on it (a variant of its own too): handed to the base here, where the
# class is defined, rather than imported by the base.
_LinearFitMixin._supervised_estimator = LinearL2SVC


def _semi_supervised_args(estimator, positive_fraction, n_threads, sample_weight):
    """Keyword arguments that ``tsvm`` and ``deterministic_annealing`` take alike, from ``estimator``."""
    return {
        "alpha": estimator.alpha_,
        "alpha_b": estimator._alpha_b,
        "unlabeled_weight": estimator.unlabeled_weight,
        "positive_fraction": positive_fraction,
        "max_iter": estimator.max_iter,
        "verbose": estimator.verbose,
        "n_threads": n_threads,
        "sample_weight": sample_weight,
    }


@fill_doc
class TransductiveSVC(_BaseLinearSVC):
    """Transductive linear l2-SVM with multiple label switching (TSVM).

    Sindhwani & Keerthi (SIGIR 2006), SVMlin's algorithm 2: minimizes SVMlin's
    transductive objective over ``w``, ``b`` and the unlabeled rows' labels (a
    fraction ``positive_fraction`` positive), raising their weight from 1e-5
    to ``unlabeled_weight`` and switching up to ``max_switches`` pairs a round.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularization ``lambda`` (SVMlin ``-W``).
        %(alpha_auto)s
    %(intercept_scaling)s
    unlabeled_weight : float, default=1.0
        ``lambda_u`` (SVMlin ``-U``), the weight of the unlabeled rows.
    positive_fraction : float or array-like of shape (n_classes,), default=None
        ``r`` (SVMlin ``-R``): fraction of unlabeled rows labeled positive.
        ``None`` estimates it from the labeled rows; a multi-class model
        takes one fraction per class.
        With ``None``, the k-means clusters' sizes replace the labels'
        fractions where the rows form one cluster per class.
    %(safeguard)s
    max_switches : int, default=10000
        ``S`` (SVMlin ``-S``): pairs switched per round at most; 1 gives
        Joachims' single-switch TSVM.
    tol : float, default=1e-9
        Relative stopping rule of each l2-SVM-MFN solve.
    max_iter : int, default=10000
        Maximum number of l2-SVM-MFN solves (``n_iter_``; each of at most 50
        Newton steps); reaching it stops the fit with a ``ConvergenceWarning``.
    %(class_weight)s
    %(n_jobs_one_vs_rest)s
    verbose : int, default=0
        Print the progress of the annealing of ``lambda_0`` when > 0.

    Attributes
    ----------
    %(model_one_vs_rest)s
    objective_ : ndarray of shape (n_problems,)
        SVMlin's ``transductive_cost`` of each binary problem.
    %(safeguard_agreement)s
    %(class_fractions_one_vs_rest)s
    n_switches_ : ndarray of shape (n_problems,)
        Label pairs switched in each binary problem.
    %(transduction)s
    n_iter_ : int
        Largest number of l2-SVM-MFN solves over the binary problems.
    %(n_features_in)s

    See Also
    --------
    DeterministicAnnealingSVC : The same objective, optimized by annealing.
    LinearL2SVC : The supervised baseline.

    Examples
    --------
    %(example_transduction)s
    >>> clf.predict([[-1.0], [1.0]])
    array([0, 1])
    """

    _parameter_constraints: dict = _TSVM_CONSTRAINTS

    #: SVMlin's annealing of ``lam_u`` from a small value; the safeguard's second TSVM candidate turns it off.
    _anneals_unlabeled_weight = True

    def __init__(
        self,
        alpha="auto",
        *,
        intercept_scaling="auto",
        unlabeled_weight=1.0,
        positive_fraction=None,
        safeguard="auto",
        max_switches=10000,
        tol=RELATIVE_STOP_EPS,
        max_iter=TSVM_MAX_ITER,
        class_weight=None,
        n_jobs=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.intercept_scaling = intercept_scaling
        self.unlabeled_weight = unlabeled_weight
        self.positive_fraction = positive_fraction
        self.safeguard = safeguard
        self.max_switches = max_switches
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _solve(self, X, y, labeled, positive_fraction, n_threads, sample_weight=None):
        shared = _semi_supervised_args(self, positive_fraction, n_threads, sample_weight)
        return tsvm(
            X,
            y,
            labeled,
            max_switches=self.max_switches,
            rel_tol=self.tol,
            anneal_unlabeled_weight=self._anneals_unlabeled_weight,
            **shared,
        )

    def _second_opinion(self, fractions, class_weight):
        """The safeguard's TSVM without SVMlin's annealing of ``lam_u`` (:mod:`skssl.svm.safeguard._safeguard`)."""
        candidate = clone(self).set_params(class_weight=class_weight, safeguard=None, verbose=0)
        candidate._anneals_unlabeled_weight = False
        return candidate

    #: The solver of a fit on a Dask array, by its name in skssl.svm.dask._dask_fit's table.
    _dask_solver = "tsvm"

    def _convergence_messages(self, res):
        return [
            *([] if res.converged else [_capped_message("max_iter", self.max_iter, "l2-SVM-MFN solves")]),
            *([] if res.mfn_converged else [_MFN_CAP_MESSAGE]),
        ]

    def _store_extra(self, results):
        self.n_switches_ = np.array([res.n_switches for res in results])


class _AnnealingParameters:
    """The parameters of both annealing estimators: one ``__init__``, one constraints dict."""

    _parameter_constraints: dict = _ANNEALING_CONSTRAINTS

    def _second_opinion(self, fractions, class_weight):
        """The safeguard's TSVM at this fit's class fractions (:mod:`skssl.svm.safeguard._safeguard`)."""
        return TransductiveSVC(
            alpha=self.alpha_,
            intercept_scaling=self.intercept_scaling_,
            unlabeled_weight=self.unlabeled_weight,
            positive_fraction=as_positive_fraction(fractions),
            safeguard=None,
            class_weight=class_weight,
            n_jobs=self.n_jobs,
        )

    def __init__(
        self,
        alpha="auto",
        *,
        intercept_scaling="auto",
        unlabeled_weight=1.0,
        positive_fraction=None,
        safeguard="auto",
        initial_temperature="auto",
        tol=1e-6,
        max_iter=DA_OUTER_ITERMAX,
        max_inner_iter=DA_INNER_ITERMAX,
        class_weight=None,
        n_jobs=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.intercept_scaling = intercept_scaling
        self.unlabeled_weight = unlabeled_weight
        self.positive_fraction = positive_fraction
        self.safeguard = safeguard
        self.initial_temperature = initial_temperature
        self.tol = tol
        self.max_iter = max_iter
        self.max_inner_iter = max_inner_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _resolved_parameters(self):
        """The safeguard's candidates start where this fit started."""
        return {"initial_temperature": self.initial_temperature_}


@fill_doc
class DeterministicAnnealingSVC(_AnnealingParameters, _BaseLinearSVC):
    """Semi-supervised linear l2-SVM by deterministic annealing (DA S3VM).

    Sindhwani & Keerthi (SIGIR 2006), SVMlin's algorithm 3: the unlabeled
    labels are relaxed to probabilities ``p`` (``mean(p) = positive_fraction``)
    with an entropy term at temperature ``T``, lowered by 1.5 from
    ``initial_temperature * unlabeled_weight`` while ``w`` and ``p`` alternate.
    The model with the lowest transductive objective on the path is returned.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularization ``lambda`` (SVMlin ``-W``).
        %(alpha_auto)s
    %(intercept_scaling)s
    unlabeled_weight : float, default=1.0
        ``lambda_u`` (SVMlin ``-U``), the weight of the unlabeled rows.
    positive_fraction : float or array-like of shape (n_classes,), default=None
        ``r`` (SVMlin ``-R``): the mean of ``p``. ``None`` estimates it from
        the labeled rows; a multi-class model takes one fraction per class.
        With ``None``, the k-means clusters' sizes replace the labels'
        fractions where the rows form one cluster per class.
    %(safeguard)s
    %(initial_temperature)s
    tol : float, default=1e-6
        Threshold in bits of the mean KL divergence between successive ``p``
        (ends a temperature) and of the mean entropy of ``p`` (ends the annealing).
    max_iter : int, default=30
        Maximum number of temperatures (``n_iter_``, SVMlin's ``DA_OUTER_ITERMAX``);
        stopping there above ``tol`` gives a ``ConvergenceWarning``.
    max_inner_iter : int, default=100
        Maximum ``p``/``w`` alternations at one temperature (``DA_INNER_ITERMAX``;
        each ``w`` step at most 50 Newton steps); reaching it warns.
    %(class_weight)s
    %(n_jobs_one_vs_rest)s
    verbose : int, default=0
        Print the annealing progress when > 0.

    Attributes
    ----------
    %(model_one_vs_rest)s
    %(safeguard_agreement)s
    %(initial_temperature_used)s
    %(class_fractions_one_vs_rest)s
    objective_ : ndarray of shape (n_problems,)
        SVMlin's ``transductive_cost`` of each binary problem (the lowest on the path).
    %(transduction)s
    n_iter_ : int
        Largest number of temperatures over the binary problems (1 without
        unlabeled rows); the w-steps are not counted.
    %(n_features_in)s

    See Also
    --------
    TransductiveSVC : The same objective, optimized by label switching.
    LinearL2SVC : The supervised baseline.

    Examples
    --------
    %(example_transduction)s
    """

    _checked_results = {**_BaseLinearSVC._checked_results, "beliefs": "p"}
    #: The safeguard's check keeps DA's model only one standard error of the paired difference ahead of the
    #: supervised l2-SVM (user guide, Implementation decisions, "The cross-validated fallback check").
    _check_margin = 1.0

    def _resolve_from_data(self, rows, fractions):
        # On either backend: the check's fits are fits of clones on the same backend (skssl.svm._base).
        if self.initial_temperature == "auto" and self._given.initial_temperature is not None:
            self.initial_temperature_ = self._given.initial_temperature  # the start of the fit that started this one
        elif self.initial_temperature == "auto":
            self.initial_temperature_ = choose_initial_temperature(self, rows, fractions)
        else:
            self.initial_temperature_ = given_or_hot(self.initial_temperature)

    def _solve(self, X, y, labeled, positive_fraction, n_threads, sample_weight=None):
        shared = _semi_supervised_args(self, positive_fraction, n_threads, sample_weight)
        return deterministic_annealing(
            X,
            y,
            labeled,
            tol=self.tol,
            max_inner_iter=self.max_inner_iter,
            initial_temperature=self.initial_temperature_,
            **shared,
        )

    #: The solver of a fit on a Dask array, by its name in skssl.svm.dask._dask_fit's table.
    _dask_solver = "da"

    def _convergence_messages(self, res):
        return _annealing_messages(res, self, "beliefs")


@fill_doc
class PottsDeterministicAnnealingSVC(
    _AnnealingParameters, _LinearFitMixin, SemiSupervisedClassifierMixin, LinearClassifierMixin, BaseEstimator
):
    """Multi-class semi-supervised linear l2-SVM by Potts-glass deterministic annealing.

    The multi-class DA S3VM that Sindhwani & Keerthi sketch (SIGIR 2006,
    footnote 4): each unlabeled row carries one distribution over the classes
    that couples the K one-vs-rest l2-SVM losses, with its entropy at
    temperature ``T`` and the class fractions as constraints. The weights and
    the distributions (an entropy-regularised transport problem) alternate as
    ``T`` falls; the model with the lowest objective on the path is returned.
    Unlike one-vs-rest DA, the guesses form one consistent labeling; for two
    classes the model is :class:`DeterministicAnnealingSVC`'s.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularization ``lambda`` of every class's weights and bias.
        %(alpha_auto)s
    %(intercept_scaling)s
    unlabeled_weight : float, default=1.0
        ``lambda_u``, the weight of the unlabeled rows.
    positive_fraction : float or array-like of shape (n_classes,), default=None
        Class fractions of the unlabeled rows, in ``classes_`` order
        (positive, summing to 1). ``None`` estimates them from the labeled
        rows; a binary problem also takes one float, the fraction of
        ``classes_[1]``.
        With ``None``, the k-means clusters' sizes replace the labels'
        fractions where the rows form one cluster per class.
    %(safeguard)s
    %(initial_temperature)s
    tol : float, default=1e-6
        Threshold in bits of the mean KL divergence between successive
        distributions (ends a temperature) and of their mean entropy.
    max_iter : int, default=30
        Maximum number of temperatures (``n_iter_``); stopping there above
        ``tol`` gives a ``ConvergenceWarning``.
    max_inner_iter : int, default=100
        Maximum distribution/weight alternations at one temperature (each
        weight step at most 50 Newton steps per class); reaching it warns.
    %(class_weight)s
    n_jobs : int, default=None
        Threads for the fit (``None`` means 1, ``-1`` all cores), shared
        between the classes' weight solves; the result is the same up to rounding.
        %(busy_cores)s
    verbose : int, default=0
        Print the annealing progress when > 0.

    Attributes
    ----------
    %(classes_alpha)s
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights of each class; for a binary problem the single row is
        ``classes_[1]``'s (the other class's is its negative).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Biases.
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Final distribution over classes of every training row (one-hot on
        the labeled rows), as in :class:`sklearn.semi_supervised.LabelSpreading`.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows (the most probable class where unlabeled).
    %(safeguard_agreement)s
    %(initial_temperature_used)s
    %(class_fractions_joint)s
    objective_ : float
        Zero-temperature objective of the returned model (SVMlin's
        ``transductive_cost`` for two classes).
    n_iter_ : int
        Number of temperatures (1 without unlabeled rows); weight solves are not counted.
    %(n_features_in)s

    See Also
    --------
    DeterministicAnnealingSVC : Binary DA, one-vs-rest for several classes.
    TransductiveSVC : The binary objective, optimized by label switching.

    Notes
    -----
    A separate class rather than a ``multi_class`` option: the models and
    fitted attributes differ. Prefer it to one-vs-rest DA on text and images
    with several classes; the user guide's "When to use which" has the figures.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm import PottsDeterministicAnnealingSVC
    >>> X = np.array([[0.0, 3.0], [0.2, 2.8], [3.0, 0.0], [2.8, 0.3], [-3.0, -3.0], [-2.7, -3.1]])
    >>> y = np.array([0, -1, 1, -1, 2, -1])
    >>> clf = PottsDeterministicAnnealingSVC(alpha=1e-2).fit(X, y)
    >>> clf.transduction_
    array([0, 0, 1, 1, 2, 2])
    """

    _binary_fraction_pair = True

    def _fit(self, X, y, sample_weight=None):
        if is_dask_array(X):
            raise ValueError(
                "PottsDeterministicAnnealingSVC does not fit on Dask arrays (its transport problem couples every "
                "unlabeled row); use DeterministicAnnealingSVC (one-vs-rest) or compute X first."
            )
        data = self._prepare_fit(X, y, sample_weight)
        # "auto": SVMlin's hot start; the label check of the binary DA is not run for a multi-class problem.
        self.initial_temperature_ = given_or_hot(self.initial_temperature)
        X, y_enc, mask = data.X, data.y_enc, data.mask
        n_classes = self.classes_.shape[0]
        fractions = data.fractions
        if np.ndim(self.positive_fraction) == 1:
            # Given fractions may sum to 1 within 1e-6; the transport problem needs 1.
            fractions = fractions / fractions.sum()
        self._store_class_fractions(fractions)
        # The solve sees the used columns only; the weights of the others are 0 (skssl.svm.kernels._validation).
        X_used, columns = on_used_columns(X)
        X_fit, mask_fit = data.rows(X_used), data.rows(mask)
        try:
            res = potts_annealing(
                X_fit,
                data.rows(y_enc),
                mask_fit,
                alpha=self.alpha_,
                alpha_b=self._alpha_b,
                unlabeled_weight=self.unlabeled_weight,
                class_fractions=fractions,
                tol=self.tol,
                max_iter=self.max_iter,
                max_inner_iter=self.max_inner_iter,
                initial_temperature=self.initial_temperature_,
                n_threads=self.n_jobs,
                verbose=self.verbose,
                sample_weight=data.sample_weight,
            )
        except FloatingPointError as error:
            raise _alpha_error(self, error) from error
        _check_finite_fit(
            self, {"W": res.W, "b": res.b, "objective": res.objective, "outputs": res.outputs, "beliefs": res.P}
        )
        for message in _annealing_messages(res, self, "distributions"):
            warnings.warn(f"{type(self).__name__}: {message}", ConvergenceWarning, stacklevel=user_stacklevel())
        del X_fit
        first = 1 if n_classes == 2 else 0
        self.coef_ = expanded_coef(res.W[first:], columns, X.shape[1])
        self.intercept_ = res.b[first:].copy()
        distributions = np.zeros((X.shape[0], n_classes))
        distributions[np.flatnonzero(mask), y_enc[mask]] = 1.0
        unlabeled_in_fit = np.flatnonzero(~mask) if data.keep is None else data.keep[~mask_fit]
        distributions[unlabeled_in_fit] = res.P
        if data.keep is not None:
            # Unlabeled rows of weight 0 were not in the problem: one-hot on the model's prediction.
            dropped = np.setdiff1d(np.flatnonzero(~mask), unlabeled_in_fit)
            if dropped.size:
                scores = X_used[dropped] @ res.W.T + res.b
                distributions[dropped, scores.argmax(axis=1)] = 1.0
        self.label_distributions_ = distributions
        self._set_transduction(y_enc, distributions.argmax(axis=1))
        self.objective_ = res.objective
        # Without unlabeled rows the fit is one supervised solve: one iteration.
        self.n_iter_ = int(max(res.n_temperatures, 1))
        del X_used, res  # the solve's arrays are not kept through the safeguard's fits
        with _safeguard_failures_named(self):
            self._apply_safeguard(data)
        return self

    def _apply_safeguard(self, data):
        super()._apply_safeguard(data)
        if self.safeguard_agreement_ is None and not self.safeguard_fell_back_:
            return  # the model was not replaced
        # Where the safe model predicts another class than the distribution's most probable one, the
        # distribution becomes one-hot on the prediction, so that transduction_ is still its argmax.
        final = np.searchsorted(self.classes_, self.transduction_)
        changed = np.flatnonzero(self.label_distributions_.argmax(axis=1) != final)
        self.label_distributions_[changed] = 0.0
        self.label_distributions_[changed, final[changed]] = 1.0
