"""The scikit-learn estimators of the linear family: thin wrappers around the solvers.

* :class:`LinearL2SVC` -- supervised l2-SVM-MFN on the labeled rows;
* :class:`TransductiveSVC` -- TSVM with multiple switching;
* :class:`DeterministicAnnealingSVC` -- the DA S3VM;
* :class:`PottsDeterministicAnnealingSVC` -- the multi-class DA S3VM with
  the Potts glass (see :mod:`skssl.svm._potts`).

The first three solve SVMlin's binary problems (Sindhwani & Keerthi, SIGIR
2006) with the bias regularized like a weight. A binary model stores ``coef_`` of
shape (1, n_features) and ``intercept_`` of shape (1,) with
``X @ coef_.T + intercept_`` equal to SVMlin's output and ``classes_[1]`` the
positive class.

Decisions
---------
* **Multi-class** is one-vs-rest (SVMlin is binary only): one binary problem
  per class, each with its own positive fraction, fitted in parallel with
  joblib. Threads are preferred: scipy's sparse products release the GIL,
  and threads share ``X`` instead of copying it to every worker process (a
  ``parallel_config`` backend still overrides it).
* **n_jobs has two levels.** ``n_jobs`` threads are shared: ``min(n_jobs,
  n_problems)`` one-vs-rest problems run at once, and each gets
  ``n_jobs // that`` threads for its row-block products (see
  :mod:`skssl.svm._rowblocks`). Problems first, because they are independent
  (no synchronisation per product); the leftover threads go to the
  products, so a binary problem uses all of them. The default stays one
  thread, as in scikit-learn.
* **BLAS threads**: a fit changes no process-wide setting. The solvers'
  many vector dot products are summed by numpy's own loop rather than BLAS
  (:func:`skssl.svm._kernels.dot`), so they never wake the BLAS thread pool,
  and no BLAS thread limit is set: one would be process-wide, shared by
  fits running at once in threads, and threadpoolctl lets only one Python
  thread change OpenBLAS's pool. Parallelism comes from ``n_jobs``.
* **positive_fraction** (SVMlin's ``-R``): ``None`` estimates each problem's
  fraction from the labeled rows. A float is accepted for a binary problem
  only; a multi-class model takes one fraction per class (in ``classes_``
  order), because one number cannot be the positive fraction of every
  one-vs-rest problem; those fractions describe one partition of the
  unlabeled rows, so they must sum to 1 (within 1e-6) or ``fit`` raises.
* **Scale**: ``X`` with values above 1e15 in absolute value is rejected with
  a ``ValueError`` asking to scale it (see :mod:`skssl.svm._mfn`).
* **transduction_** holds, for unlabeled rows, the prediction of the final
  model (so it equals ``predict`` on the training rows), not TSVM's temporary
  labels, which meet the balance constraint but not always the sign of the
  final outputs.
* **objective_** is SVMlin's ``transductive_cost`` of each binary problem at
  the returned model (for :class:`LinearL2SVC`, its labeled part, which is
  the supervised objective).
* **max_iter and n_iter_** count the same thing, each estimator's own
  iteration: Newton steps for :class:`LinearL2SVC`, l2-SVM-MFN solves
  (switching rounds and ``lambda_0`` levels) for :class:`TransductiveSVC`,
  temperatures for :class:`DeterministicAnnealingSVC` (whose inner cap is
  ``max_inner_iter``). ``n_iter_`` is the largest count over the binary
  problems, an int as in sklearn's ``LinearSVC``. A fit stopped by any cap
  -- these, or the 50 Newton steps of an inner solve -- emits
  ``sklearn.exceptions.ConvergenceWarning``.
* **One base for the parameter handling.** :class:`_LinearFitMixin` holds
  what all four estimators share: the core parameter constraints, ``fit``
  and its docstring, the validation of ``sample_weight`` and
  ``class_weight``, the class fractions (``positive_fraction`` given or
  estimated) and the dropping of zero-weight rows. The one-vs-rest family
  adds its loop over binary problems (:class:`_BaseLinearSVC`), the Potts
  estimator its single joint solve. The two annealing estimators share
  their parameter constraints and their ``ConvergenceWarning`` messages.
  Where their public behaviour differs it is a class attribute: a binary
  Potts model also takes ``positive_fraction`` as a pair of fractions
  (``_binary_fraction_pair``), each family keeping its own error message.
* **sample_weight** (SVMlin's per-example cost) scales each row's loss,
  and the labeled and unlabeled means of the objective become weighted
  means (normalized by the weight sums instead of ``l`` and ``u``), so a
  weight of 2 is the row counted twice -- exactly, in the objective -- and
  weights of 1 give SVMlin's objective. Rows of weight 0 are dropped before
  the solve (their ``transduction_`` is the model's prediction). DA's
  constraint ``mean(p) = positive_fraction`` and its entropy and KL
  tests become weighted means too; TSVM's balance constraint keeps
  counting unlabeled rows (a weighted count would break its pairwise
  switches, which keep the count fixed), so there a weight of 2 on an
  unlabeled row scales its loss but counts it once. An estimated
  ``positive_fraction`` is the weighted class fraction of the labeled rows.
  Potts DA weights like the binary DA: a row's weight scales all of its
  terms, including its entropy and its share of the class fractions
  (derivation in :mod:`skssl.svm._potts`). If the rows left after dropping
  the zero weights all weigh 1, the fit runs unweighted, so it is the fit
  without those rows to the bit. A dropped unlabeled row of a Potts model
  gets the one-hot distribution of the model's prediction in
  ``label_distributions_`` (it took no part in the transport problem).
  ``fit`` never changes the caller's ``sample_weight``; the class weights
  multiply a copy.
* **class_weight** follows scikit-learn's ``LinearSVC``: a dict or
  ``"balanced"`` (``n_labeled / (n_classes * count)`` over the labeled
  rows), multiplying ``sample_weight`` on the labeled rows; in a
  one-vs-rest fit every binary problem sees the same row weights (liblinear
  weights only the positive class of each problem), and in a Potts fit
  every class's problem sees them too. Class weights do not enter the
  estimated class fractions, which count labeled rows by ``sample_weight``
  only.
* The algorithms have no random step (ties are broken by row index), so the
  estimators take no ``random_state``; the same data give the same model.
* **Smallest alpha.** ``fit`` refuses ``alpha`` below float64's machine
  epsilon (2.2e-16) with a ``ValueError``. The labeled costs sum to 1, so
  the Newton system's entry for the bias is ``alpha + 1`` at the start of
  every fit, and below epsilon that is 1 to the bit: the regularization
  does not exist in float64. Its effect is the solvers': the CGLS residual
  ``X^T z - alpha w`` must resolve ``alpha w`` against ``z``, which cannot
  fall below the rounding of the outputs, so CGLS runs to its cap of 10,000
  iterations in every Newton step, its steps along the null space of the
  active rows are rounding noise divided by ``alpha``, and the model grows
  without bound: NaN or infinite weights or objectives (CSR and dense input
  add in different orders, so they break at different ``alpha``), weights
  of 1e30 with an objective of 1e30 where ``w = 0`` scores 1, and fits of
  minutes on 8 rows (CGLS and the Potts p-step at their caps, over and
  over). The bound
  is relative to the bias, whose column of ones no scaling of ``X``
  changes, so it holds for any data; above it, the weights of rows of
  unit norm are accurate down to ``alpha`` of about 1e-20. The fitted
  weights, bias, objective, training outputs and (DA) beliefs are still
  checked before they are stored: a non-finite value raises a
  ``ValueError`` that asks for a larger ``alpha`` or scaled data, and so
  does a solver's ``FloatingPointError``.
* ``float32`` data are upcast to float64 once per fit; the solvers need
  float64 accumulation (see :mod:`skssl.svm._mfn`).
"""

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import _check_sample_weight

from ..base import SemiSupervisedClassifierMixin
from ..utils.validation import check_sparse_structure
from ._da import DA_INNER_ITERMAX, DA_OUTER_ITERMAX, deterministic_annealing
from ._mfn import MFNITERMAX, RELATIVE_STOP_EPS, as_float64_design, check_design_scale, l2_svm_mfn
from ._objective import transductive_cost
from ._potts import potts_annealing
from ._regularization import resolve_alpha
from ._rowblocks import thread_pool
from ._safeguard import candidate_fractions, candidates_agree
from ._tsvm import TSVM_MAX_ITER, tsvm

__all__ = ["DeterministicAnnealingSVC", "LinearL2SVC", "PottsDeterministicAnnealingSVC", "TransductiveSVC"]

#: Per-class positive fractions must sum to 1 within this tolerance (room for
#: fractions rounded to 6 decimals, e.g. typed from a table).
POSITIVE_FRACTION_SUM_TOL = 1e-6

#: Smallest ``alpha`` the estimators accept: float64's machine epsilon, below
#: which ``1 + alpha == 1`` (see the module's decisions).
ALPHA_MIN = float(np.finfo(np.float64).eps)

_ALPHA_ADVICE = (
    "Use a larger alpha (typical values are 1e-6 to 1 for rows of norm about 1; alpha >= 1e-12 is safe there) "
    "or scale X (e.g. with sklearn.preprocessing.MaxAbsScaler or StandardScaler)."
)


def _check_alpha(estimator):
    """Refuse an ``alpha`` below :data:`ALPHA_MIN` with a ``ValueError`` that says why."""
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
            raise ValueError(
                f"{type(estimator).__name__}: the fit produced a non-finite {name}; alpha_={estimator.alpha_!r} is "
                "too small for float64 arithmetic on this data (the Newton systems are singular to working "
                "precision and their solutions overflow). " + _ALPHA_ADVICE
            )


def _alpha_error(estimator, error):
    """The ``ValueError`` raised in place of a solver's ``FloatingPointError``."""
    return ValueError(
        f"{type(estimator).__name__}: {error} With alpha_={estimator.alpha_!r} this may also mean that alpha is too "
        "small for float64 arithmetic on this data. " + _ALPHA_ADVICE
    )


_MFN_CAP_MESSAGE = (
    f"an inner l2-SVM-MFN solve stopped at its cap of {MFNITERMAX} Newton steps before its stopping rule; "
    "the data may be badly scaled (try MaxAbsScaler or StandardScaler) or alpha too small."
)


def _capped_message(name, value, what):
    return f"stopped at {name}={value} {what} before converging; increase {name} or check the data's scale."


def _share_cores(n_jobs, n_problems):
    """Split ``n_jobs`` threads between one-vs-rest problems and row blocks.

    Returns ``(n_outer, n_inner)``: ``n_outer = min(n_jobs, n_problems)``
    problems run at once, each with ``n_jobs // n_outer`` threads for its
    row-block products.
    """
    n_total = effective_n_jobs(n_jobs)
    n_outer = max(1, min(n_total, n_problems))
    return n_outer, max(1, n_total // n_outer)


class _LinearFitMixin:
    """What every linear estimator shares: its core parameters, ``fit``'s row weights and class fractions.

    Both :class:`_BaseLinearSVC` (the one-vs-rest family) and
    :class:`PottsDeterministicAnnealingSVC` derive from it, so the
    validation of ``sample_weight``, ``class_weight`` and
    ``positive_fraction`` and the dropping of zero-weight rows exist once.
    Subclasses give ``_fit(X, y, sample_weight)``.
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
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

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model; rows with ``y == -1`` are unlabeled.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is used as CSR and never densified.
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row, labeled or unlabeled (SVMlin's
            per-example cost). A weight of 2 counts the row twice; a weight
            of 0 drops it. ``None`` gives every row weight 1.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight)

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
        return super().decision_function(check_sparse_structure(X))

    def _apply_safeguard(self, data, sample_weight):
        """Replace the semi-supervised model by its safe version (:mod:`skssl.svm._safeguard`)."""
        self.safeguard_agreement_ = None
        if getattr(self, "safeguard", None) is None or self.positive_fraction is not None:
            return  # given class fractions are known, not estimated: nothing for the candidates to vary
        X, y_enc, mask = data.X, data.y_enc, data.mask
        weights = np.ones(X.shape[0])
        if sample_weight is not None:
            weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        unlabeled = np.flatnonzero(~mask & (weights > 0))
        if unlabeled.size == 0:
            return
        n_classes = self.classes_.shape[0]
        labeled = np.flatnonzero(mask & (weights > 0))
        # Predictions on all rows, then indexed: slicing X by the unlabeled rows would copy most of it.
        predictions = [self._predicted_indices(X)[unlabeled]]
        for fractions in candidate_fractions(data.fractions, weights[labeled].sum()):
            # The candidates and the supervised model are fitted on the encoded labels 0 .. n_classes - 1.
            candidate = clone(self).set_params(
                positive_fraction=float(fractions[1]) if n_classes == 2 else fractions,
                class_weight=self._encoded_class_weight(),
                safeguard=None,
                verbose=0,
            )
            predictions.append(candidate.fit(X, y_enc, sample_weight=sample_weight)._predicted_indices(X)[unlabeled])
        agree = candidates_agree(predictions)
        labels = predictions[0]
        # The semi-supervised objective with the agreed labels fixed and the disputed rows left out: labeled
        # costs summing to 1, agreed unlabeled ones to unlabeled_weight. LinearL2SVC scales its costs to sum
        # to 1, hence alpha / (1 + unlabeled_weight) (alpha itself when no row is agreed on).
        lab_weights = weights[labeled]
        if self.class_weight is not None:
            lab_weights = (
                lab_weights
                * compute_class_weight(self.class_weight, classes=self.classes_, y=self.classes_[y_enc[labeled]])[
                    y_enc[labeled]
                ]
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
        refit = LinearL2SVC(alpha=refit_alpha, n_jobs=self.n_jobs)
        refit.fit(X, y_refit, sample_weight=refit_weights)
        self.coef_ = refit.coef_
        self.intercept_ = refit.intercept_
        self._set_transduction(y_enc, self._predicted_indices(X))
        self.safeguard_agreement_ = float(np.mean(agree))
        if self.verbose:
            print(
                f"[{type(self).__name__}] safeguard: the three candidates agree on {self.safeguard_agreement_:.1%} "
                f"of the unlabeled rows; the other {np.count_nonzero(~agree)} are left out of the refit"
            )

    def _encoded_class_weight(self):
        """``class_weight`` with the class indices as keys (a dict's labels become 0 .. n_classes - 1)."""
        if not isinstance(self.class_weight, Mapping):
            return self.class_weight
        return {k: self.class_weight[c] for k, c in enumerate(self.classes_.tolist()) if c in self.class_weight}

    def _predicted_indices(self, X):
        """Index in ``classes_`` of the class each row of ``X`` is predicted."""
        scores = X @ self.coef_.T + self.intercept_
        return (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 else scores.argmax(axis=1)

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

    def _row_weights(self, X, y_enc, mask, sample_weight):
        """(loss weights, weights for the class-fraction estimate), or (None, None) for unit weights."""
        class_weight = getattr(self, "class_weight", None)
        if sample_weight is None and class_weight is None:
            return None, None
        # A copy: class_weight is multiplied in below, and the caller's array must not change.
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True, copy=True)
        estimate_weights = sw.copy()
        if class_weight is not None:
            labels = self.classes_[y_enc[mask]]
            cw = compute_class_weight(class_weight, classes=self.classes_, y=labels)
            sw[mask] *= cw[y_enc[mask]]
        if np.all(sw == 1.0):
            return None, None
        if not np.any(sw[mask] > 0):
            raise ValueError("sample_weight (times class_weight) is 0 on every labeled row; nothing to fit.")
        return sw, estimate_weights

    def _prepare_fit(self, X, y, sample_weight):
        """Validate the data and weights; returns a :class:`_FitData`."""
        X, y_enc, mask = self._validate_semi_supervised_data(X, y, accept_sparse="csr")
        X = as_float64_design(X)
        check_design_scale(X)
        sw, estimate_weights = self._row_weights(X, y_enc, mask, sample_weight)
        fractions = self._class_fractions(y_enc, mask, estimate_weights)
        unlabeled_weight = getattr(self, "unlabeled_weight", 1.0) if self._uses_unlabeled_rows else 0.0
        self.alpha_ = resolve_alpha(self.alpha, X, mask, estimate_weights, unlabeled_weight=unlabeled_weight)
        _check_alpha(self)
        keep = None
        if sw is not None and not np.all(sw > 0):
            # Zero weight: the row is not part of the problem at all.
            keep = np.flatnonzero(sw > 0)
            sw = sw[keep]
            if np.all(sw == 1.0):
                sw = None  # the rest is unweighted: the same arithmetic as a fit without those rows
        return _FitData(X, y_enc, mask, fractions, sw, keep)


@dataclass
class _FitData:
    """Validated training data of one fit.

    ``X``, ``y_enc`` and ``mask`` cover every row; ``sample_weight`` (None for
    unit weights) covers the rows ``keep`` (None: all rows), those of
    positive weight; ``fractions`` has one entry per class.
    """

    X: object
    y_enc: np.ndarray
    mask: np.ndarray
    fractions: np.ndarray
    sample_weight: np.ndarray | None
    keep: np.ndarray | None

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
    """Shared one-vs-rest fit: validation, one problem per class, attributes. Subclasses give ``_solve``."""

    def _fit(self, X, y, sample_weight=None):
        data = self._prepare_fit(X, y, sample_weight)
        X, y_enc, mask, sw = data.X, data.y_enc, data.mask, data.sample_weight
        n_classes = self.classes_.shape[0]
        fractions = data.fractions[1:] if n_classes == 2 else data.fractions
        positives = [1] if n_classes == 2 else list(range(n_classes))
        targets = [data.rows(np.where(y_enc == k, 1.0, -1.0)) for k in positives]
        X_fit, mask_fit = data.rows(X), data.rows(mask)
        n_outer, n_inner = _share_cores(self.n_jobs, len(targets))
        try:
            results = Parallel(n_jobs=n_outer, prefer="threads")(
                delayed(self._solve)(X_fit, t, mask_fit, r, n_inner, sw) for t, r in zip(targets, fractions)
            )
        except FloatingPointError as error:
            raise _alpha_error(self, error) from error
        if X_fit is not X:
            for res in results:
                with np.errstate(over="ignore", invalid="ignore"):
                    res["outputs"] = X @ res["w"] + res["b"]
        for res in results:
            _check_finite_fit(self, {k: res[k] for k in ("w", "b", "objective", "outputs", "beliefs") if k in res})
        self.coef_ = np.vstack([res["w"] for res in results])
        self.intercept_ = np.array([res["b"] for res in results])
        self.objective_ = np.array([res["objective"] for res in results])
        self.n_iter_ = int(max(res["n_iter"] for res in results))
        for res in results:
            for message in res.get("warnings", ()):
                warnings.warn(f"{type(self).__name__}: {message}", ConvergenceWarning, stacklevel=3)
        outputs = np.column_stack([res["outputs"] for res in results])
        indices = (outputs[:, 0] > 0).astype(np.intp) if n_classes == 2 else outputs.argmax(axis=1)
        self._set_transduction(y_enc, indices)
        self._store_extra(results)
        self._apply_safeguard(data, sample_weight)
        return self

    def _store_extra(self, results):
        """Hook for estimator-specific attributes."""


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
        ``"auto"`` (the default) sets it from the data:
        ``0.2 * mean_i |x_i|^2 / n_labeled``, with the mean over the labeled rows (the rows it learns from),
        so that one default suits tf-idf rows (norm 1) and standardized
        tabular rows (squared norm = number of features) alike; the value
        used is stored in ``alpha_``. A number is used as given; it must be at least 2.2e-16 (float64's machine
        epsilon): below it ``1 + alpha == 1``, the regularization is lost to
        rounding next to the loss (whose curvature along the bias is 1) and
        ``fit`` raises a ``ValueError``. The loss is averaged over the
        ``l`` labeled rows here, and SVMlin's supervised mode (``-A 1``)
        sums it, so SVMlin's ``-W W`` is ``alpha = W / l`` (its
        semi-supervised modes average, and there ``alpha`` is ``-W``).
        scikit-learn's ``LinearSVC(C=C, loss="squared_hinge")``, whose bias
        is regularized like a weight at the default ``intercept_scaling=1``,
        fits the same model at ``C = 1 / (2 alpha l)``.
    tol : float, default=1e-9
        Stop when the objective changes by less than ``tol`` times its value.
    max_iter : int, default=50
        Maximum number of Newton steps, as counted by ``n_iter_``; reaching
        it before the stopping rule gives a ``ConvergenceWarning``.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes of the labeled rows, as in scikit-learn's
        ``LinearSVC``: ``{label: weight}`` or ``"balanced"`` (``n_labeled /
        (n_classes * count)``, counted over the labeled rows). They multiply
        ``sample_weight`` on the labeled rows; unlabeled rows are not
        affected.
    n_jobs : int, default=None
        Threads for the fit (``None`` means 1, ``-1`` all cores; joblib's
        convention). Up to ``n_jobs`` one-vs-rest problems run at once, and
        each running problem computes its sparse products ``X @ w`` and
        ``X.T @ z`` over row blocks with ``n_jobs // (problems running)``
        threads; a binary problem gets all ``n_jobs`` threads for its
        products. The result is the same up to rounding. On a machine whose
        cores are busy with other work, a fit times its iterations on one
        thread and on all and keeps the faster (the result does not depend
        on it), so ``n_jobs=2`` is then not much slower than ``n_jobs=1``.
    verbose : int, default=0
        Print a summary per binary problem when > 0.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Labeled classes.
    alpha_ : float
        The regularization used: ``alpha``, or its value for ``"auto"``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights; for a binary problem ``classes_[1]`` is the positive class.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Biases.
    objective_ : ndarray of shape (n_problems,)
        Objective of each binary problem at the solution.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows (predictions for the unlabeled ones).
    n_iter_ : int
        Largest number of Newton steps over the binary problems.
    n_features_in_ : int
        Number of features seen in ``fit``.

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
        self, alpha="auto", *, tol=RELATIVE_STOP_EPS, max_iter=MFNITERMAX, class_weight=None, n_jobs=None, verbose=0
    ):
        self.alpha = alpha
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _solve(self, X, y, labeled, positive_fraction, n_threads, sample_weight=None):
        lab = np.flatnonzero(labeled)
        if sample_weight is None:
            cost = np.full(lab.size, 1.0 / lab.size)
        else:
            cost = sample_weight[lab] / sample_weight[lab].sum()
        all_rows = lab.size == X.shape[0]  # no copy of X when every row is labeled (the safeguard's refit)
        with thread_pool(n_threads) as executor:
            res = l2_svm_mfn(
                X if all_rows else X[lab],
                y if all_rows else y[lab],
                cost,
                alpha=self.alpha_,
                rel_tol=self.tol,
                max_iter=self.max_iter,
                executor=executor,
                n_threads=n_threads,
            )
        outputs = X @ res.w + res.b
        if self.verbose:
            print(
                f"[LinearL2SVC] {res.n_iter} Newton step(s), {res.n_cg_iter} CGLS iteration(s), "
                f"objective {res.objective:.6g}"
            )
        objective = transductive_cost(res.w, res.b, outputs, y, labeled, self.alpha_, 0.0, sample_weight)
        messages = [] if res.converged else [_capped_message("max_iter", self.max_iter, "Newton steps")]
        return {
            "w": res.w,
            "b": res.b,
            "outputs": outputs,
            "objective": objective,
            "n_iter": res.n_iter,
            "warnings": messages,
        }


class TransductiveSVC(_BaseLinearSVC):
    """Transductive linear l2-SVM with multiple label switching (TSVM).

    Sindhwani & Keerthi's large-scale TSVM (SIGIR 2006), SVMlin's algorithm 2:
    minimizes, over ``w``, ``b`` and +1 / -1 labels of the unlabeled rows
    with a fraction ``positive_fraction`` of them positive,
    ``1/2 (alpha (|w|^2 + b^2) + (1/l) sum_labeled max(0, 1 - y o)^2
    + (unlabeled_weight/u) sum_unlabeled max(0, 1 - y o)^2)``, raising the
    weight of the unlabeled rows from 1e-5 to ``unlabeled_weight`` and
    switching up to ``max_switches`` pairs of labels per round.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularization ``lambda`` (SVMlin ``-W``).
        ``"auto"`` (the default) sets it from the data:
        ``0.2 * mean_i |x_i|^2 / n_labeled``, with the mean over all rows of the fit,
        so that one default suits tf-idf rows (norm 1) and standardized
        tabular rows (squared norm = number of features) alike; the value
        used is stored in ``alpha_``. A number is used as given; it must be at least 2.2e-16 (float64's machine
        epsilon): below it ``1 + alpha == 1``, the regularization is lost to
        rounding next to the loss (whose curvature along the bias is 1) and
        ``fit`` raises a ``ValueError``.
    unlabeled_weight : float, default=1.0
        ``lambda_u`` (SVMlin ``-U``), the weight of the unlabeled rows.
    positive_fraction : float or array-like of shape (n_classes,), default=None
        ``r`` (SVMlin ``-R``): fraction of unlabeled rows labeled positive.
        ``None`` estimates it from the labeled rows; a multi-class model
        takes one fraction per class.
    safeguard : {"agreement"} or None, default="agreement"
        Follow the unlabeled rows only where the answer is stable, in the
        spirit of S4VM (Li & Zhou, IEEE TPAMI 2015). ``"agreement"`` fits two
        more candidates with the class fractions moved by one standard
        error of their estimate from the labeled rows; the returned model is
        the l2-SVM fitted to the labeled rows and the unlabeled rows on whose
        label all three agree (the same objective, labels fixed); the
        disputed rows are left out. It costs about 3 times the CPU of a fit without it.
        It acts only when ``positive_fraction`` is estimated (``None``): a
        given fraction is taken as known. ``None`` returns the
        semi-supervised fit itself, as SVMlin does.
    max_switches : int, default=10000
        ``S`` (SVMlin ``-S``): pairs switched per round at most; 1 gives
        Joachims' single-switch TSVM.
    tol : float, default=1e-9
        Relative stopping rule of each l2-SVM-MFN solve.
    max_iter : int, default=10000
        Maximum number of l2-SVM-MFN solves (the iterations of TSVM: one per
        switching round and one per level of ``lambda_0``), as counted by
        ``n_iter_``. Reaching it stops the fit with a ``ConvergenceWarning``.
        Each solve takes at most 50 Newton steps (SVMlin's cap).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes of the labeled rows, as in scikit-learn's
        ``LinearSVC``: ``{label: weight}`` or ``"balanced"`` (``n_labeled /
        (n_classes * count)``, counted over the labeled rows). They multiply
        ``sample_weight`` on the labeled rows; unlabeled rows are not
        affected.
    n_jobs : int, default=None
        Threads for the fit (``None`` means 1, ``-1`` all cores; joblib's
        convention). Up to ``n_jobs`` one-vs-rest problems run at once, and
        each running problem computes its sparse products ``X @ w`` and
        ``X.T @ z`` over row blocks with ``n_jobs // (problems running)``
        threads; a binary problem gets all ``n_jobs`` threads for its
        products. The result is the same up to rounding. On a machine whose
        cores are busy with other work, a fit times its iterations on one
        thread and on all and keeps the faster (the result does not depend
        on it), so ``n_jobs=2`` is then not much slower than ``n_jobs=1``.
    verbose : int, default=0
        Print the progress of the annealing of ``lambda_0`` when > 0.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Labeled classes.
    alpha_ : float
        The regularization used: ``alpha``, or its value for ``"auto"``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights; for a binary problem ``classes_[1]`` is the positive class.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Biases.
    objective_ : ndarray of shape (n_problems,)
        SVMlin's ``transductive_cost`` of each binary problem.
    safeguard_agreement_ : float or None
        With the safeguard: the fraction of the unlabeled rows on which the
        three candidates agree (the others were left out of the refit).
        ``None`` when it did not act: ``safeguard=None``, a given
        ``positive_fraction``, or no unlabeled rows.
        ``coef_``, ``intercept_`` and ``transduction_`` are those of the
        returned (safe) model, while ``objective_`` and ``n_iter_`` describe
        the semi-supervised solve at the given or estimated class fractions.
    n_switches_ : ndarray of shape (n_problems,)
        Label pairs switched in each binary problem.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows (predictions for the unlabeled ones).
    n_iter_ : int
        Largest number of l2-SVM-MFN solves over the binary problems.
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    DeterministicAnnealingSVC : The same objective, optimized by annealing.
    LinearL2SVC : The supervised baseline.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm import TransductiveSVC
    >>> X = np.array([[-2.0], [-1.8], [-1.5], [1.5], [1.8], [2.0]])
    >>> y = np.array([0, -1, -1, -1, -1, 1])
    >>> clf = TransductiveSVC(alpha=1e-2).fit(X, y)
    >>> clf.transduction_
    array([0, 0, 0, 1, 1, 1])
    >>> clf.predict([[-1.0], [1.0]])
    array([0, 1])
    """

    _parameter_constraints: dict = {
        **_BaseLinearSVC._parameter_constraints,
        "unlabeled_weight": [Interval(Real, 0, None, closed="neither")],
        "positive_fraction": [Interval(Real, 0, 1, closed="neither"), "array-like", None],
        "max_switches": [Interval(Integral, 1, None, closed="left")],
        "safeguard": [StrOptions({"agreement"}), None],
    }

    def __init__(
        self,
        alpha="auto",
        *,
        unlabeled_weight=1.0,
        positive_fraction=None,
        safeguard="agreement",
        max_switches=10000,
        tol=RELATIVE_STOP_EPS,
        max_iter=TSVM_MAX_ITER,
        class_weight=None,
        n_jobs=None,
        verbose=0,
    ):
        self.alpha = alpha
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
        res = tsvm(
            X,
            y,
            labeled,
            alpha=self.alpha_,
            unlabeled_weight=self.unlabeled_weight,
            positive_fraction=positive_fraction,
            max_switches=self.max_switches,
            rel_tol=self.tol,
            max_iter=self.max_iter,
            verbose=self.verbose,
            n_threads=n_threads,
            sample_weight=sample_weight,
        )
        objective = transductive_cost(
            res.w, res.b, res.outputs, y, labeled, self.alpha_, self.unlabeled_weight, sample_weight
        )
        return {
            "w": res.w,
            "b": res.b,
            "outputs": res.outputs,
            "objective": objective,
            "n_iter": res.n_iter,
            "n_switches": res.n_switches,
            "warnings": [
                *([] if res.converged else [_capped_message("max_iter", self.max_iter, "l2-SVM-MFN solves")]),
                *([] if res.mfn_converged else [_MFN_CAP_MESSAGE]),
            ],
        }

    def _store_extra(self, results):
        self.n_switches_ = np.array([res["n_switches"] for res in results])


#: The parameters of both annealing estimators (binary DA and Potts DA).
_ANNEALING_CONSTRAINTS = {
    **_LinearFitMixin._parameter_constraints,
    "unlabeled_weight": [Interval(Real, 0, None, closed="neither")],
    "positive_fraction": [Interval(Real, 0, 1, closed="neither"), "array-like", None],
    "max_inner_iter": [Interval(Integral, 1, None, closed="left")],
    "safeguard": [StrOptions({"agreement"}), None],
}


class DeterministicAnnealingSVC(_BaseLinearSVC):
    """Semi-supervised linear l2-SVM by deterministic annealing (DA S3VM).

    Sindhwani & Keerthi (SIGIR 2006), SVMlin's algorithm 3: the labels of the
    unlabeled rows are relaxed to probabilities ``p`` with ``mean(p)`` equal
    to ``positive_fraction``, an entropy term at temperature ``T`` is added,
    and ``T`` is lowered from ``10 unlabeled_weight`` by a factor 1.5 while
    ``w`` and ``p`` are optimized alternately. The model with the lowest
    transductive objective seen along the path is returned.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularization ``lambda`` (SVMlin ``-W``).
        ``"auto"`` (the default) sets it from the data:
        ``0.2 * mean_i |x_i|^2 / n_labeled``, with the mean over all rows of the fit,
        so that one default suits tf-idf rows (norm 1) and standardized
        tabular rows (squared norm = number of features) alike; the value
        used is stored in ``alpha_``. A number is used as given; it must be at least 2.2e-16 (float64's machine
        epsilon): below it ``1 + alpha == 1``, the regularization is lost to
        rounding next to the loss (whose curvature along the bias is 1) and
        ``fit`` raises a ``ValueError``.
    unlabeled_weight : float, default=1.0
        ``lambda_u`` (SVMlin ``-U``), the weight of the unlabeled rows.
    positive_fraction : float or array-like of shape (n_classes,), default=None
        ``r`` (SVMlin ``-R``): the mean of ``p``. ``None`` estimates it from
        the labeled rows; a multi-class model takes one fraction per class.
    safeguard : {"agreement"} or None, default="agreement"
        Follow the unlabeled rows only where the answer is stable, in the
        spirit of S4VM (Li & Zhou, IEEE TPAMI 2015). ``"agreement"`` fits two
        more candidates with the class fractions moved by one standard
        error of their estimate from the labeled rows; the returned model is
        the l2-SVM fitted to the labeled rows and the unlabeled rows on whose
        label all three agree (the same objective, labels fixed); the
        disputed rows are left out. It costs about 3 times the CPU of a fit without it.
        It acts only when ``positive_fraction`` is estimated (``None``): a
        given fraction is taken as known. ``None`` returns the
        semi-supervised fit itself, as SVMlin does.
    tol : float, default=1e-6
        Threshold, in bits, of the mean KL divergence between successive
        ``p`` (ends a temperature) and of the mean entropy of ``p`` (ends the
        annealing).
    max_iter : int, default=30
        Maximum number of temperatures (outer iterations, SVMlin's
        ``DA_OUTER_ITERMAX``), as counted by ``n_iter_``. Stopping there with
        the mean entropy still above ``tol`` gives a ``ConvergenceWarning``.
    max_inner_iter : int, default=100
        Maximum alternations of the ``p`` and ``w`` steps at one temperature
        (SVMlin's ``DA_INNER_ITERMAX``); a temperature that reaches it with
        the mean KL divergence above ``tol`` gives a ``ConvergenceWarning``.
        Each ``w`` step takes at most 50 Newton steps (SVMlin's cap).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes of the labeled rows, as in scikit-learn's
        ``LinearSVC``: ``{label: weight}`` or ``"balanced"`` (``n_labeled /
        (n_classes * count)``, counted over the labeled rows). They multiply
        ``sample_weight`` on the labeled rows; unlabeled rows are not
        affected.
    n_jobs : int, default=None
        Threads for the fit (``None`` means 1, ``-1`` all cores; joblib's
        convention). Up to ``n_jobs`` one-vs-rest problems run at once, and
        each running problem computes its sparse products ``X @ w`` and
        ``X.T @ z`` over row blocks with ``n_jobs // (problems running)``
        threads; a binary problem gets all ``n_jobs`` threads for its
        products. The result is the same up to rounding. On a machine whose
        cores are busy with other work, a fit times its iterations on one
        thread and on all and keeps the faster (the result does not depend
        on it), so ``n_jobs=2`` is then not much slower than ``n_jobs=1``.
    verbose : int, default=0
        Print the annealing progress (temperature, KL, entropy, objective)
        when > 0.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Labeled classes.
    alpha_ : float
        The regularization used: ``alpha``, or its value for ``"auto"``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights; for a binary problem ``classes_[1]`` is the positive class.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Biases.
    safeguard_agreement_ : float or None
        With the safeguard: the fraction of the unlabeled rows on which the
        three candidates agree (the others were left out of the refit).
        ``None`` when it did not act: ``safeguard=None``, a given
        ``positive_fraction``, or no unlabeled rows.
        ``coef_``, ``intercept_`` and ``transduction_`` are those of the
        returned (safe) model, while ``objective_`` and ``n_iter_`` describe
        the semi-supervised solve at the given or estimated class fractions.
    objective_ : ndarray of shape (n_problems,)
        SVMlin's ``transductive_cost`` of each binary problem (the lowest
        seen along the annealing path).
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows (predictions for the unlabeled ones).
    n_iter_ : int
        Largest number of temperatures visited over the binary problems.
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    TransductiveSVC : The same objective, optimized by label switching.
    LinearL2SVC : The supervised baseline.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm import DeterministicAnnealingSVC
    >>> X = np.array([[-2.0], [-1.8], [-1.5], [1.5], [1.8], [2.0]])
    >>> y = np.array([0, -1, -1, -1, -1, 1])
    >>> clf = DeterministicAnnealingSVC(alpha=1e-2).fit(X, y)
    >>> clf.transduction_
    array([0, 0, 0, 1, 1, 1])
    """

    _parameter_constraints: dict = _ANNEALING_CONSTRAINTS

    def __init__(
        self,
        alpha="auto",
        *,
        unlabeled_weight=1.0,
        positive_fraction=None,
        safeguard="agreement",
        tol=1e-6,
        max_iter=DA_OUTER_ITERMAX,
        max_inner_iter=DA_INNER_ITERMAX,
        class_weight=None,
        n_jobs=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.unlabeled_weight = unlabeled_weight
        self.positive_fraction = positive_fraction
        self.safeguard = safeguard
        self.tol = tol
        self.max_iter = max_iter
        self.max_inner_iter = max_inner_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _solve(self, X, y, labeled, positive_fraction, n_threads, sample_weight=None):
        res = deterministic_annealing(
            X,
            y,
            labeled,
            alpha=self.alpha_,
            unlabeled_weight=self.unlabeled_weight,
            positive_fraction=positive_fraction,
            tol=self.tol,
            max_iter=self.max_iter,
            max_inner_iter=self.max_inner_iter,
            verbose=self.verbose,
            n_threads=n_threads,
            sample_weight=sample_weight,
        )
        messages = _annealing_messages(res, self, "beliefs")
        return {
            "w": res.w,
            "b": res.b,
            "outputs": res.outputs,
            "objective": res.objective,
            "beliefs": res.p,
            # Without unlabeled rows DA is one supervised solve: one iteration.
            "n_iter": max(res.n_outer, 1),
            "warnings": messages,
        }


class PottsDeterministicAnnealingSVC(
    _LinearFitMixin, SemiSupervisedClassifierMixin, LinearClassifierMixin, BaseEstimator
):
    """Multi-class semi-supervised linear l2-SVM by Potts-glass deterministic annealing.

    The multi-class extension of the deterministic annealing S3VM that
    Sindhwani & Keerthi sketch ("Large Scale Semi-supervised Linear SVMs",
    SIGIR 2006, footnote 4): every unlabeled row carries one distribution
    over the classes, the K one-vs-rest l2-SVM losses are coupled through it,
    its entropy at temperature ``T`` is added, and the class fractions of the
    unlabeled rows are constraints. ``T`` is lowered from
    ``10 unlabeled_weight`` by a factor 1.5 while the weights (K weighted
    l2-SVM-MFN problems) and the distributions (an entropy-regularised
    transport problem, solved exactly) are optimized alternately; the model
    with the lowest objective seen along the path is returned.

    Where :class:`DeterministicAnnealingSVC` fits one-vs-rest, its K binary
    problems guess the labels of the unlabeled rows independently (a row may
    be "positive" for several classes or for none, and each balance
    constraint ignores the others); here the guesses form one consistent
    labeling. For two classes the model is exactly
    :class:`DeterministicAnnealingSVC`'s.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularization ``lambda`` of every class's weights and bias.
        ``"auto"`` (the default) sets it from the data:
        ``0.2 * mean_i |x_i|^2 / n_labeled``, with the mean over all rows of the fit,
        so that one default suits tf-idf rows (norm 1) and standardized
        tabular rows (squared norm = number of features) alike; the value
        used is stored in ``alpha_``. A number is used as given; it must be
        at least 2.2e-16 (float64's machine
        epsilon): below it ``1 + alpha == 1``, the regularization is lost to
        rounding next to the loss (whose curvature along the bias is 1) and
        ``fit`` raises a ``ValueError``.
    unlabeled_weight : float, default=1.0
        ``lambda_u``, the weight of the unlabeled rows.
    positive_fraction : float or array-like of shape (n_classes,), default=None
        Class fractions of the unlabeled rows, in ``classes_`` order
        (positive, summing to 1). ``None`` estimates them from the labeled
        rows; a binary problem also takes one float, the fraction of
        ``classes_[1]``.
    safeguard : {"agreement"} or None, default="agreement"
        Follow the unlabeled rows only where the answer is stable, in the
        spirit of S4VM (Li & Zhou, IEEE TPAMI 2015). ``"agreement"`` fits two
        more candidates with the class fractions moved by one standard
        error of their estimate from the labeled rows; the returned model is
        the l2-SVM fitted to the labeled rows and the unlabeled rows on whose
        label all three agree (the same objective, labels fixed); the
        disputed rows are left out. It costs about 3 times the CPU of a fit without it.
        It acts only when ``positive_fraction`` is estimated (``None``): a
        given fraction is taken as known. ``None`` returns the
        semi-supervised fit itself, as SVMlin does.
    tol : float, default=1e-6
        Threshold, in bits, of the mean KL divergence between successive
        distributions (ends a temperature) and of their mean entropy (ends
        the annealing).
    max_iter : int, default=30
        Maximum number of temperatures, as counted by ``n_iter_``. Stopping
        there with the mean entropy still above ``tol`` gives a
        ``ConvergenceWarning``.
    max_inner_iter : int, default=100
        Maximum alternations of the distribution and weight steps at one
        temperature; a temperature that reaches it with the mean KL
        divergence above ``tol`` gives a ``ConvergenceWarning``. Each weight
        step takes at most 50 Newton steps per class.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes of the labeled rows, as in scikit-learn's
        ``LinearSVC``: ``{label: weight}`` or ``"balanced"`` (``n_labeled /
        (n_classes * count)``, counted over the labeled rows). They multiply
        ``sample_weight`` on the labeled rows; unlabeled rows are not
        affected.
    n_jobs : int, default=None
        Threads for the fit (``None`` means 1, ``-1`` all cores; joblib's
        convention). Up to ``n_jobs`` classes have their weights solved at
        once, each with ``n_jobs // (classes at once)`` threads for its
        sparse products over row blocks. The result is the same up to
        rounding. On a machine whose cores are busy with other work, a fit
        times its iterations on one thread and on all and keeps the faster
        (the result does not depend on it), so ``n_jobs=2`` is then not much
        slower than ``n_jobs=1``.
    verbose : int, default=0
        Print the annealing progress when > 0.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Labeled classes.
    alpha_ : float
        The regularization used: ``alpha``, or its value for ``"auto"``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights of each class; for a binary problem the single row is
        ``classes_[1]``'s (the other class's is its negative).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Biases.
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        The final distribution over classes of every training row (one-hot
        on the labeled rows), as in
        :class:`sklearn.semi_supervised.LabelSpreading`.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows: the label of a labeled row, the most
        probable class of ``label_distributions_`` for an unlabeled one.
    safeguard_agreement_ : float or None
        With the safeguard: the fraction of the unlabeled rows on which the
        three candidates agree (the others were left out of the refit).
        ``None`` when it did not act: ``safeguard=None``, a given
        ``positive_fraction``, or no unlabeled rows.
        ``coef_``, ``intercept_`` and ``transduction_`` are those of the
        returned (safe) model, while ``objective_`` and ``n_iter_`` describe
        the semi-supervised solve at the given or estimated class fractions.
    objective_ : float
        The zero-temperature multi-class objective of the returned model
        (for two classes, SVMlin's ``transductive_cost``).
    n_iter_ : int
        Number of temperatures visited (as
        :class:`DeterministicAnnealingSVC`'s).
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    DeterministicAnnealingSVC : Binary DA, one-vs-rest for several classes.
    TransductiveSVC : The binary objective, optimized by label switching.

    Notes
    -----
    This is a separate class rather than a ``multi_class`` parameter of
    :class:`DeterministicAnnealingSVC`: the two fit different models with
    different fitted attributes (``label_distributions_``, a scalar
    ``objective_``), scikit-learn deprecated ``LogisticRegression``'s
    ``multi_class`` switch (version 1.5) for the same reason, and
    one-vs-rest remains available by wrapping or by the binary class.

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

    _parameter_constraints: dict = _ANNEALING_CONSTRAINTS
    _binary_fraction_pair = True

    def __init__(
        self,
        alpha="auto",
        *,
        unlabeled_weight=1.0,
        positive_fraction=None,
        safeguard="agreement",
        tol=1e-6,
        max_iter=DA_OUTER_ITERMAX,
        max_inner_iter=DA_INNER_ITERMAX,
        class_weight=None,
        n_jobs=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.unlabeled_weight = unlabeled_weight
        self.positive_fraction = positive_fraction
        self.safeguard = safeguard
        self.tol = tol
        self.max_iter = max_iter
        self.max_inner_iter = max_inner_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _fit(self, X, y, sample_weight=None):
        data = self._prepare_fit(X, y, sample_weight)
        X, y_enc, mask = data.X, data.y_enc, data.mask
        n_classes = self.classes_.shape[0]
        fractions = data.fractions
        if np.ndim(self.positive_fraction) == 1:
            # Given fractions may sum to 1 within 1e-6; the transport problem needs 1.
            fractions = fractions / fractions.sum()
        X_fit, mask_fit = data.rows(X), data.rows(mask)
        try:
            res = potts_annealing(
                X_fit,
                data.rows(y_enc),
                mask_fit,
                alpha=self.alpha_,
                unlabeled_weight=self.unlabeled_weight,
                class_fractions=fractions,
                tol=self.tol,
                max_iter=self.max_iter,
                max_inner_iter=self.max_inner_iter,
                n_jobs=self.n_jobs,
                verbose=self.verbose,
                sample_weight=data.sample_weight,
            )
        except FloatingPointError as error:
            raise _alpha_error(self, error) from error
        _check_finite_fit(
            self, {"W": res.W, "b": res.b, "objective": res.objective, "outputs": res.outputs, "beliefs": res.P}
        )
        for message in _annealing_messages(res, self, "distributions"):
            warnings.warn(f"{type(self).__name__}: {message}", ConvergenceWarning, stacklevel=3)
        if n_classes == 2:
            self.coef_ = res.W[1:].copy()
            self.intercept_ = res.b[1:].copy()
        else:
            self.coef_ = res.W
            self.intercept_ = res.b
        distributions = np.zeros((X.shape[0], n_classes))
        distributions[np.flatnonzero(mask), y_enc[mask]] = 1.0
        unlabeled_in_fit = np.flatnonzero(~mask) if data.keep is None else data.keep[~mask_fit]
        distributions[unlabeled_in_fit] = res.P
        if data.keep is not None:
            # Unlabeled rows of weight 0 were not in the problem: one-hot on the model's prediction.
            dropped = np.setdiff1d(np.flatnonzero(~mask), unlabeled_in_fit)
            if dropped.size:
                scores = X[dropped] @ res.W.T + res.b
                distributions[dropped, scores.argmax(axis=1)] = 1.0
        self.label_distributions_ = distributions
        self._set_transduction(y_enc, distributions.argmax(axis=1))
        self.objective_ = res.objective
        # Without unlabeled rows the fit is one supervised solve: one iteration.
        self.n_iter_ = int(max(res.n_outer, 1))
        self._apply_safeguard(data, sample_weight)
        return self

    def _apply_safeguard(self, data, sample_weight):
        super()._apply_safeguard(data, sample_weight)
        if self.safeguard_agreement_ is None:
            return
        # Where the safe model predicts another class than the distribution's most probable one, the
        # distribution becomes one-hot on the prediction, so that transduction_ is still its argmax.
        final = np.searchsorted(self.classes_, self.transduction_)
        changed = np.flatnonzero(self.label_distributions_.argmax(axis=1) != final)
        self.label_distributions_[changed] = 0.0
        self.label_distributions_[changed, final[changed]] = 1.0
