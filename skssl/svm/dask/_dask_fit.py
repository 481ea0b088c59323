"""``fit`` of the one-vs-rest linear estimators on a Dask array: the estimator's side of a fit on a cluster.

:func:`fit_on_dask` is what ``fit`` runs when ``X`` is a ``dask.array``
(see :mod:`skssl.svm.dask._dask_rows` for the blocks and
:mod:`skssl.svm.dask._dask_problem`, :mod:`skssl.svm.dask._dask_mfn`,
:mod:`skssl.svm.dask._dask_tsvm` and :mod:`skssl.svm.dask._dask_da` for the
solvers). It does what the in-memory ``fit`` does (:mod:`skssl.svm._base`)
with sums over the row blocks in place of arrays, gathering nothing
row-sized; one-vs-rest problems run at once in client threads, the
safeguard runs on the cluster, and ``transduction_`` is a lazy Dask array.
Each estimator names its binary solver on the blocks (``_dask_solver``, a
key of ``_SOLVERS`` here); importing this module adds :func:`fit_on_dask`
to the estimators' base's ``FIT_BACKENDS``, which ``fit`` loads by name.
:class:`~skssl.svm.PottsDeterministicAnnealingSVC` and labels that are not
numbers are not supported.

Design decisions: user guide, Implementation decisions: linear S3VMs, "Dask fits".
"""

import copy
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from functools import cached_property, partial

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets

from .._base import (
    ALPHA_MIN,
    FIT_BACKENDS,
    _alpha_error,
    _check_alpha,
    _safeguard_failures_named,
    check_every_class_weighted,
    checked_class_weight,
)
from ...utils._fit_state import publish_fitted, working_copy
from ...utils._warnings import user_stacklevel
from .._callback import current_callback
from ..defaults._cluster_fractions import MIN_LABELED
from ._dask_da import dask_deterministic_annealing
from ._dask_mfn import dask_mfn
from ._dask_problem import ProblemSpec, new_states, solve_norm
from ._dask_rows import BlockLost, DaskRows, _check_block, _reply_of
from ._dask_tsvm import DaskTSVMRows
from ..solvers._mfn import CGTolerance
from ..solvers._problem import ProblemTotals
from ..defaults._regularization import auto_alpha_from_sums, auto_intercept_scaling, rows_are_centred
from ..solvers._weston_watkins import data_curvature as weston_watkins_curvature
from ..solvers._tsvm import tsvm_loop
from ..solvers._weston_watkins import data_term as weston_watkins_term

__all__ = ["fit_on_dask"]

#: Restarts of a fit whose workers are lost before it gives up with a ``RuntimeError``.
MAX_RESTARTS = 3


def _merge_labels(stats):
    """(classes, rows per class, weight per class, positive-weight rows per class) over the blocks."""
    classes = np.unique(np.concatenate([s.labels for s in stats])) if stats else np.empty(0)
    counts, weights, positive = (np.zeros(classes.size) for _ in range(3))
    for s in stats:
        at = np.searchsorted(classes, s.labels)
        counts[at] += s.counts
        weights[at] += s.weights
        positive[at] += s.positive
    return classes, counts, weights, positive


def _class_weights(estimator, classes, counts):
    if estimator.class_weight is None:
        return None
    labels = np.repeat(classes, counts.astype(np.int64))
    return checked_class_weight(estimator.class_weight, classes, labels)


def _solve_mfn(estimator, rows, spec, positive_fraction):
    """:class:`~skssl.svm.LinearL2SVC`'s binary problem ``spec`` on a cluster's row blocks."""
    states = new_states(rows, spec, supervised=True)
    return dask_mfn(
        rows, states, alpha=estimator.alpha_, alpha_b=estimator._alpha_b, rel_tol=estimator.tol,
        max_iter=estimator.max_iter, x_norm=solve_norm(rows, supervised=True),
    )  # fmt: skip


def _solve_tsvm(estimator, rows, spec, positive_fraction):
    """:class:`~skssl.svm.TransductiveSVC`'s binary problem ``spec`` on a cluster's row blocks."""
    callback = current_callback()
    options = {
        "alpha": estimator.alpha_,
        "alpha_b": estimator._alpha_b,
        "tolerance": CGTolerance(),
        "rel_tol": estimator.tol,
        "callback": callback,
    }
    return tsvm_loop(
        DaskTSVMRows(rows, spec, options, max_switches=estimator.max_switches),
        unlabeled_weight=estimator.unlabeled_weight,
        positive_fraction=positive_fraction,
        max_switches=estimator.max_switches,
        max_iter=estimator.max_iter,
        verbose=estimator.verbose,
        callback=callback,
        anneal_unlabeled_weight=estimator._anneals_unlabeled_weight,
    )


def _solve_da(estimator, rows, spec, positive_fraction):
    """:class:`~skssl.svm.DeterministicAnnealingSVC`'s binary problem ``spec`` on a cluster's row blocks."""
    caps = {
        "tol": estimator.tol,
        "max_iter": estimator.max_iter,
        "max_inner_iter": estimator.max_inner_iter,
        # Resolved before the solve, on the cluster as in memory (skssl.svm.defaults._annealing_start).
        "initial_temperature": estimator.initial_temperature_,
    }
    return dask_deterministic_annealing(
        rows,
        spec,
        alpha=estimator.alpha_,
        alpha_b=estimator._alpha_b,
        positive_fraction=positive_fraction,
        verbose=estimator.verbose,
        **caps,
    )


#: The solver of each estimator's binary problem on the blocks, by the estimator's ``_dask_solver``: the estimators
#: name their solver and never import this leaf of the package.
_SOLVERS = {"mfn": _solve_mfn, "tsvm": _solve_tsvm, "da": _solve_da}


def fit_on_dask(estimator, X, y, sample_weight=None):
    """Fit ``estimator`` (a one-vs-rest linear estimator) on the Dask array ``X`` with labels ``y``; returns it."""
    if X.ndim == 2 and X.shape[1] == 0:  # (the message of the in-memory fit's check_array)
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required by "
            f"{type(estimator).__name__}."
        )
    for attempt in range(MAX_RESTARTS + 1):
        # After a lost worker the blocks are persisted and checked again: Dask recomputes the lost ones from
        # their lineage, and the fit starts over from them (it is deterministic, so it ends with the same model).
        rows = DaskRows(X, y, sample_weight)
        try:
            _fit_rows(estimator, rows)
            break
        except BlockLost as lost:
            if attempt == MAX_RESTARTS:
                blocks = ", ".join(f"{i} (rows {start}-{start + n - 1})" for i, start, n in lost.blocks)
                raise RuntimeError(
                    f"The Dask fit lost the worker holding row block(s) {blocks} {attempt + 1} times and "
                    f"stops rather than return a different model (last: {lost}). Check the workers' memory "
                    "and logs, then fit again."
                ) from lost
    estimator.transduction_ = _lazy_transduction(estimator, rows)
    return estimator


def _labeled_part(block):
    """The block's labeled rows of positive weight: their rows, labels, weights and indices in the block."""
    keep = np.flatnonzero((block.y != -1) & (block.sw > 0))
    return block.X[keep], block.y[keep], block.sw[keep], keep


def _hiding_in_block(block, classes, where):
    """The block with its labels as class indices and those of its rows ``where[1]`` hidden, checked again."""
    index, hidden = where
    y = np.full(block.y.shape[0], -1, dtype=np.int64)
    labeled = block.y != -1
    y[labeled] = np.searchsorted(classes, block.y[labeled])
    y[hidden] = -1
    return _check_block(block.X, y, block.sw, index)


class _LabeledRowsOnClient:
    """A Dask fit's rows as the stages that refit on them see them (as ``skssl.svm._base._RowsInMemory``).

    The stages read the labeled rows: they are few, so they are gathered to the client as an in-memory array
    (once, at the first stage that reads them, in the order of the rows of ``X``). Their fits with some labels
    hidden are Dask fits of the clone on the same blocks, with the labels as class indices (as the in-memory
    stages fit on the encoded labels), the hidden ones -1.
    """

    def __init__(self, rows, classes):
        self.rows, self.classes = rows, classes
        self.n_unlabeled = int(rows.sums("n_unlabeled"))
        self.clusters = None  # no k-means of a Dask fit's rows (the fractions stay the labels')

    @cached_property
    def _gathered(self):
        parts = self.rows.query(_labeled_part, self.rows.blocks)
        Xs = [p[0] for p in parts]
        X = sp.vstack(Xs, format="csr") if sp.issparse(Xs[0]) else np.concatenate(Xs)
        y = np.concatenate([p[1] for p in parts])
        weights = np.concatenate([p[2] for p in parts])
        # Where each labeled row is: (position in rows.blocks, row in that block).
        where = [(k, p[3]) for k, p in enumerate(parts)]
        return X, np.searchsorted(self.classes, y), weights, where

    @property
    def X(self):
        return self._gathered[0]

    @property
    def y_enc(self):
        return self._gathered[1]

    @property
    def weights(self):
        return self._gathered[2]

    @property
    def labeled(self):
        return np.arange(self.X.shape[0])

    @property
    def mask(self):
        return np.ones(self.X.shape[0], dtype=bool)

    def fit_hiding(self, estimator, hidden, given):
        """``estimator`` fitted on the cluster's blocks with the labels of the gathered rows ``hidden`` hidden."""
        rows = self.rows
        hide = np.zeros(self.X.shape[0], dtype=bool)
        hide[hidden] = True
        each, at = [], 0
        for k, local in self._gathered[3]:
            each.append((rows.block_rows[k][0], local[hide[at : at + local.size]]))
            at += local.size
        # A store on the same blocks (as DaskRows.derived makes one), its blocks checked again where they are.
        hiding = copy.copy(rows)
        hiding.n_rounds = hiding.bytes_sent = hiding.bytes_received = 0
        hiding.blocks = rows.submit(_hiding_in_block, rows.blocks, self.classes, each=each)
        hiding.stats = rows.query(_reply_of, hiding.blocks)
        return _fit_for_parent(estimator, hiding, given)


def _fit_for_parent(estimator, rows, given):
    """``estimator`` fitted on ``rows`` as a fit started by another one, handed ``given`` (as in memory)."""
    work = working_copy(estimator, fit_state=estimator._fit_state)
    work._given = given
    _fit_rows(work, rows)
    return publish_fitted(estimator, work)


def _warn_without_clusters(estimator, fractions, class_sums, rows):
    """Say that the class fractions are the labels' where the in-memory fit would also ask k-means clusters."""
    n_classes = fractions.shape[0]
    labeled_weight = float(class_sums.sum())
    unlabeled_weight = rows.sums("sw_unlabeled")
    if labeled_weight < max(MIN_LABELED, 2 * n_classes) or unlabeled_weight < 2 * n_classes:
        return  # too few rows: the in-memory fit keeps the labels' fractions too
    warnings.warn(
        f"{type(estimator).__name__} on a Dask array: the class fractions of the unlabeled rows are the labeled "
        f"rows' ({np.round(fractions, 3).tolist()}). An in-memory fit also compares them with the sizes of k-means "
        "clusters of all rows (skssl.svm.defaults._cluster_fractions), which a Dask fit does not run; give "
        "positive_fraction to set them.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def _fit_rows(estimator, rows):
    """The fit on a :class:`~skssl.svm.dask._dask_rows.DaskRows` (its labels and weights as they are)."""
    stats = rows.stats
    classes, counts, class_sums, positive = _merge_labels(stats)
    if classes.size == 0:
        raise ValueError("y has no labeled rows (every entry is -1); at least two classes must be labeled.")
    if classes.size < 2:
        raise ValueError(f"y has a single labeled class {classes.tolist()}; at least two are needed.")
    check_classification_targets(classes)  # labels such as 0.5 are a regression target, as in memory
    estimator.classes_ = classes
    estimator.n_features_in_ = rows.n_features
    n_classes = classes.size
    cw = _class_weights(estimator, classes, counts)
    # Before alpha="auto" and the class fractions, which divide by the labeled rows' weight.
    loss_lab = class_sums if cw is None else class_sums * cw
    n_lab = int(positive.sum() if cw is None else positive[cw > 0].sum())
    if n_lab == 0 or not loss_lab.sum() > 0:
        raise ValueError("sample_weight (times class_weight) is 0 on every labeled row; nothing to fit.")
    check_every_class_weighted(classes, loss_lab)
    weighted = (rows.sample_weight_given and not all(s.all_unit for s in stats)) or (cw is not None and np.any(cw != 1))
    # The class fractions and alpha="auto" count rows by sample_weight (without class weights), as in memory.
    if getattr(estimator, "positive_fraction", None) is not None:
        fractions = estimator._class_fractions(None, None)
    else:
        fractions = (class_sums if rows.sample_weight_given else counts) / (
            class_sums.sum() if rows.sample_weight_given else counts.sum()
        )
    if estimator._uses_unlabeled_rows and getattr(estimator, "positive_fraction", None) is None:
        if estimator._given.fractions is not None:
            fractions = estimator._given.fractions  # a safeguard candidate: its parent's fractions
        elif estimator._given.warns_on_caps:
            _warn_without_clusters(estimator, fractions, class_sums if rows.sample_weight_given else counts, rows)
    estimator._store_class_fractions(fractions)
    # The labeled rows, gathered to the client where a stage reads them (few: see _LabeledRowsOnClient).
    view = _LabeledRowsOnClient(rows, classes)
    lam_u = getattr(estimator, "unlabeled_weight", 1.0) if estimator._uses_unlabeled_rows else 0.0
    n_lab_w, n_unl_w = rows.sums("sw_labeled"), (rows.sums("sw_unlabeled") if lam_u else 0.0)
    scaling = estimator.intercept_scaling
    # As resolve_regularization does in memory, from the blocks' sums; then the labeled rows' check of
    # skssl.svm.defaults._penalty_check, on the labeled rows gathered to the client.
    estimator._penalty_factor = None
    if isinstance(estimator.alpha, str):
        norms = rows.sums("norms_labeled") + (rows.sums("norms_unlabeled") if lam_u else 0.0)
        estimator.alpha_ = auto_alpha_from_sums(norms, n_lab_w + n_unl_w, n_lab_w, n_unl_w, lam_u)
        columns = rows.sums("columns_labeled") + (rows.sums("columns_unlabeled") if lam_u else 0.0)
        auto_scaling = auto_intercept_scaling(norms, n_lab_w + n_unl_w, columns)
    else:
        estimator.alpha_, auto_scaling = float(estimator.alpha), 1.0
    estimator.intercept_scaling_ = auto_scaling if isinstance(scaling, str) else float(scaling)
    if isinstance(estimator.alpha, str):
        estimator._check_penalty_on_labeled_rows(view)
    _check_alpha(estimator)
    n_unl = rows.sums("n_unlabeled")
    totals = ProblemTotals(n_lab, n_unl)
    if weighted:
        totals = ProblemTotals(n_lab, n_unl, float(loss_lab.sum()), rows.sums("sw_unlabeled"))
    positives = [1] if n_classes == 2 else list(range(n_classes))
    problem_fractions = fractions[1:] if n_classes == 2 else fractions
    specs = [ProblemSpec(classes, k, cw, weighted, lam_u, totals) for k in positives]
    # The parameters resolved from the data (DA's start), on the cluster as in memory.
    estimator._resolve_from_data(view, fractions)
    if estimator._dask_solver is None:
        solve = type(estimator)._solve_dask  # a variant's own solve on the blocks
    else:
        solve = _SOLVERS[estimator._dask_solver]
    try:
        with ThreadPoolExecutor(max_workers=len(specs)) as pool:
            jobs = [
                pool.submit(copy_context().run, solve, estimator, rows, spec, float(r))
                for spec, r in zip(specs, problem_fractions)
            ]
            results = [job.result() for job in jobs]
    except FloatingPointError as error:
        raise _alpha_error(estimator, error) from error
    estimator._store_results(results)
    if estimator._has_safeguard:
        estimator.safeguard_agreement_ = None
        estimator.safeguard_scores_ = None
        estimator.safeguard_fell_back_ = None
        if estimator.safeguard is not None and estimator.positive_fraction is None and n_unl:
            # The cross-validated check first, as in memory (supervised fits on the gathered labeled rows, Dask
            # fits with a fold hidden): where it returns the supervised model, no candidate is fitted.
            with _safeguard_failures_named(estimator):
                if not estimator._check_with_held_out_labels(view):
                    _safeguard(estimator, rows, fractions, float(class_sums.sum()), cw, float(loss_lab.sum()))
    estimator.dask_rounds_ = rows.n_rounds
    return estimator


def _transduction_block(X, y, coef, intercept, classes):
    if X.shape[0] == 0:
        return np.empty(0, dtype=classes.dtype)
    scores = X @ coef.T + intercept
    idx = (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 else scores.argmax(axis=1)
    return np.where(y != -1, y, classes[idx]).astype(classes.dtype)


def _lazy_transduction(estimator, rows):
    """``transduction_`` as a lazy Dask array with the row chunks of ``X`` (user guide, Implementation decisions)."""
    import dask.array as da

    X, y, _ = rows.source
    dtype = estimator.classes_.dtype
    model = (estimator.coef_, None, estimator.intercept_, None, estimator.classes_, None)
    meta = np.empty((0,), dtype=dtype)
    return da.blockwise(_transduction_block, "i", X, "ij", y, "i", *model, dtype=dtype, concatenate=True, meta=meta)


def _indices(X, models):
    out = []
    for coef, intercept in models:
        scores = X @ coef.T + intercept
        out.append((scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 else scores.argmax(axis=1))
    return out


def _agreement(block, models):
    """The candidates' agreement on the block's unlabeled rows of positive weight, and the main model's labels."""
    unl = (block.y == -1) & (block.sw > 0)
    preds = _indices(block.X, models)
    agree = unl.copy()
    for other in preds[1:]:
        agree &= other == preds[0]
    return unl, agree, preds[0]


def _agreement_sums(block, models):
    """(unlabeled rows of positive weight, rows agreed on, the agreed rows' weight)."""
    unl, agree, _ = _agreement(block, models)
    return int(unl.sum()), int(agree.sum()), float(block.sw[agree].sum())


def _refit_rows(block, models, classes, cw, lab_sum, agreed_sum, share):
    """The refit's labels and weights on one block (see :mod:`skssl.svm.safeguard._safeguard`)."""
    y, sw = block.y, block.sw
    _, agree, labels = _agreement(block, models)
    labeled = (y != -1) & (sw > 0)
    weights = np.zeros(y.shape[0])
    lab_w = sw[labeled]
    if cw is not None:
        lab_w = lab_w * cw[np.searchsorted(classes, y[labeled])]
    weights[labeled] = lab_w / lab_sum
    if agreed_sum > 0:
        weights[agree] = share * sw[agree] / agreed_sum
    y_refit = np.where(y != -1, y, classes[labels]).astype(np.float64)
    y_refit[weights == 0] = -1
    return y_refit, weights


def _weston_watkins_block(block, block_term, classes, *model):
    """``block_term`` (the joint refit's data term or curvature) on one block's rows of positive weight."""
    keep = block.sw > 0  # the others are the refit's -1: disputed rows and rows of weight 0
    y = np.searchsorted(classes, block.y[keep])
    return block_term(block.X[keep], y, block.sw[keep], *model)


def _safeguard(estimator, rows, fractions, n_labeled_weight, cw, lab_sum):
    """The safeguard of :mod:`skssl.svm.safeguard._safeguard` on the cluster's blocks.

    User guide, Implementation decisions.
    """
    n_classes = estimator.classes_.size
    candidates = estimator._safeguard_candidates(
        fractions, n_labeled_weight, estimator.class_weight, estimator._resolved_parameters()
    )
    given = estimator._candidates_given(fractions)
    with ThreadPoolExecutor(max_workers=len(candidates)) as pool:
        jobs = [pool.submit(copy_context().run, _fit_for_parent, c, rows, given) for c in candidates]
        candidates = [job.result() for job in jobs]
    models = [(estimator.coef_, estimator.intercept_)] + [(c.coef_, c.intercept_) for c in candidates]
    sums = rows.query(_agreement_sums, rows.blocks, models)
    n_unl, n_agree, agreed_sum = (sum(s[k] for s in sums) for k in range(3))
    if n_unl == 0:
        return
    share = estimator.unlabeled_weight if n_agree else 0.0
    refit_rows = DaskRows.derived(rows, _refit_rows, models, estimator.classes_, cw, lab_sum, agreed_sum, share)
    refit_alpha = max(estimator.alpha_ / (1.0 + share), ALPHA_MIN)
    weight_sum = rows.sums("sw_labeled") + rows.sums("sw_unlabeled")
    centred = rows_are_centred(
        rows.sums("norms_labeled") + rows.sums("norms_unlabeled"),
        weight_sum,
        rows.sums("columns_labeled") + rows.sums("columns_unlabeled"),
    )
    if n_classes > 2 and centred:  # the joint refit (solvers._weston_watkins), blocks' sums in each evaluation

        def summed(block_term, *model):
            parts = refit_rows.query(_weston_watkins_block, refit_rows.blocks, block_term, estimator.classes_, *model)
            return tuple(sum(part[k] for part in parts) for k in range(len(parts[0])))

        estimator._refit_jointly(
            partial(summed, weston_watkins_term), partial(summed, weston_watkins_curvature), refit_alpha
        )
    else:
        refit = _fit_rows(
            estimator._supervised_estimator(alpha=refit_alpha, intercept_scaling=estimator.intercept_scaling_),
            refit_rows,
        )
        estimator.coef_ = refit.coef_
        estimator.intercept_ = refit.intercept_
    estimator.safeguard_agreement_ = float(n_agree / n_unl)
    if estimator.verbose:
        print(
            f"[{type(estimator).__name__}] safeguard: the {len(models)} candidates agree on "
            f"{estimator.safeguard_agreement_:.1%} of the unlabeled rows; the other {int(n_unl - n_agree)} are "
            "left out of the refit"
        )


# What the estimators' fit runs on a Dask array (skssl.svm._base loads this module by name).
FIT_BACKENDS["dask._dask_fit"] = fit_on_dask
