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

from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from functools import partial

import numpy as np

from ..defaults._annealing_start import given_or_hot
from .._base import (
    ALPHA_MIN,
    FIT_BACKENDS,
    _alpha_error,
    _check_alpha,
    check_every_class_weighted,
    checked_class_weight,
)
from .._callback import current_callback
from ._dask_da import dask_deterministic_annealing
from ._dask_mfn import dask_mfn
from ._dask_problem import ProblemSpec, new_states, solve_norm
from ._dask_rows import BlockLost, DaskRows
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
        # On Dask "auto" is always the hot start (no label check), for the fit and its safeguard's clones alike.
        "initial_temperature": given_or_hot(estimator.initial_temperature),
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


def _fit_rows(estimator, rows):
    """The fit on a :class:`~skssl.svm.dask._dask_rows.DaskRows` (its labels and weights as they are)."""
    stats = rows.stats
    classes, counts, class_sums, positive = _merge_labels(stats)
    if classes.size == 0:
        raise ValueError("y has no labeled rows (every entry is -1); at least two classes must be labeled.")
    if classes.size < 2:
        raise ValueError(f"y has a single labeled class {classes.tolist()}; at least two are needed.")
    estimator.classes_ = classes
    estimator.n_features_in_ = rows.n_features
    n_classes = classes.size
    cw = _class_weights(estimator, classes, counts)
    weighted = (rows.sample_weight_given and not all(s.all_unit for s in stats)) or (cw is not None and np.any(cw != 1))
    # The class fractions and alpha="auto" count rows by sample_weight (without class weights), as in memory.
    if getattr(estimator, "positive_fraction", None) is not None:
        fractions = estimator._class_fractions(None, None)
    else:
        fractions = (class_sums if rows.sample_weight_given else counts) / (
            class_sums.sum() if rows.sample_weight_given else counts.sum()
        )
    lam_u = getattr(estimator, "unlabeled_weight", 1.0) if estimator._uses_unlabeled_rows else 0.0
    n_lab_w, n_unl_w = rows.sums("sw_labeled"), (rows.sums("sw_unlabeled") if lam_u else 0.0)
    scaling = estimator.intercept_scaling
    # As resolve_regularization does in memory, without the labeled rows' check of skssl.svm.defaults._penalty_check (no
    # fold pass runs over the blocks): the rule's value.
    estimator._penalty_factor = 1.0
    if isinstance(estimator.alpha, str):
        norms = rows.sums("norms_labeled") + (rows.sums("norms_unlabeled") if lam_u else 0.0)
        estimator.alpha_ = auto_alpha_from_sums(norms, n_lab_w + n_unl_w, n_lab_w, n_unl_w, lam_u)
        columns = rows.sums("columns_labeled") + (rows.sums("columns_unlabeled") if lam_u else 0.0)
        auto_scaling = auto_intercept_scaling(norms, n_lab_w + n_unl_w, columns)
    else:
        estimator.alpha_, auto_scaling = float(estimator.alpha), 1.0
    estimator.intercept_scaling_ = auto_scaling if isinstance(scaling, str) else float(scaling)
    _check_alpha(estimator)
    loss_lab = class_sums if cw is None else class_sums * cw
    n_lab = int(positive.sum() if cw is None else positive[cw > 0].sum())
    if n_lab == 0 or not loss_lab.sum() > 0:
        raise ValueError("sample_weight (times class_weight) is 0 on every labeled row; nothing to fit.")
    check_every_class_weighted(classes, loss_lab)
    n_unl = rows.sums("n_unlabeled")
    totals = ProblemTotals(n_lab, n_unl)
    if weighted:
        totals = ProblemTotals(n_lab, n_unl, float(loss_lab.sum()), rows.sums("sw_unlabeled"))
    positives = [1] if n_classes == 2 else list(range(n_classes))
    problem_fractions = fractions[1:] if n_classes == 2 else fractions
    specs = [ProblemSpec(classes, k, cw, weighted, lam_u, totals) for k in positives]
    try:
        with ThreadPoolExecutor(max_workers=len(specs)) as pool:
            jobs = [
                pool.submit(copy_context().run, _SOLVERS[estimator._dask_solver], estimator, rows, spec, float(r))
                for spec, r in zip(specs, problem_fractions)
            ]
            results = [job.result() for job in jobs]
    except FloatingPointError as error:
        raise _alpha_error(estimator, error) from error
    estimator._store_results(results)
    if estimator._has_safeguard:
        estimator.safeguard_agreement_ = None
        estimator.safeguard_scores_ = None  # the cross-validated check runs in memory only
        estimator.safeguard_fell_back_ = None
        if estimator.safeguard is not None and estimator.positive_fraction is None and n_unl:
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
    candidates = estimator._safeguard_candidates(fractions, n_labeled_weight, estimator.class_weight, {})
    with ThreadPoolExecutor(max_workers=len(candidates)) as pool:
        for job in [pool.submit(copy_context().run, _fit_rows, c, rows) for c in candidates]:
            job.result()
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
