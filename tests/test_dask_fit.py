"""Fitting the linear estimators on a Dask cluster: the in-memory model, from row blocks that stay on the workers.

Every fit here runs on a ``LocalCluster`` of 2 workers of one thread each and
is compared with the same estimator fitted in memory: the objective to 1e-9
relative and the predictions exactly, over chunkings with uneven and empty
chunks, CSR and dense blocks, binary and 3-class problems, with and without
``sample_weight``; the defaults' stages (the check of ``alpha``, the annealing
start, the safeguard's cross-validated check) decide on the cluster as in
memory. The fault test kills a worker (a real process) in the
middle of a fit: Dask recomputes the lost blocks from their lineage, the
fit starts over on them and gives the same model.
"""

import collections
import gc
import logging
import os
import threading
import time
import types
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from skssl.datasets import make_semi_supervised
from skssl.svm import (
    DeterministicAnnealingSVC,
    LinearL2SVC,
    PottsDeterministicAnnealingSVC,
    TransductiveSVC,
)
from skssl.svm._callback import solver_callback
from skssl.svm.solvers._mfn import newton_solve
from skssl.svm.defaults import _annealing_start
from skssl.svm.defaults._regularization import auto_alpha

from ._large_scale import very_large_scale_problem

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'skssl[scale]')"
)
da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'skssl[scale]')")

N_ROWS, N_FEATURES = 90, 5
CHUNKINGS = [(45, 45), (30, 0, 55, 5)]


def _cluster(processes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # port-in-use and similar start-up chatter
        return distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=None, silence_logs=logging.ERROR
        )


@pytest.fixture(scope="module")
def client():
    with _cluster(False) as cluster, distributed.Client(cluster) as client:
        yield client


def _problem(n_classes, sparse, n_rows=N_ROWS):
    X, y = make_classification(
        n_rows, N_FEATURES, n_informative=4, n_redundant=0, n_classes=n_classes, random_state=n_classes
    )
    if sparse:
        X = sp.csr_matrix(X * (np.abs(X) > 0.5))
    return X, make_semi_supervised(y, 15 * n_classes, random_state=0)


def _dask(X, y, chunks, weight=None):
    X_dask = da.from_array(X, chunks=(chunks, (N_FEATURES,)), asarray=False)
    y_dask = da.from_array(y, chunks=(chunks,))
    return X_dask, y_dask, None if weight is None else da.from_array(weight, chunks=(chunks,))


def _assert_same_model(on_dask, in_memory, X):
    relative = np.abs(on_dask.objective_ - in_memory.objective_) / np.abs(in_memory.objective_)
    assert relative.max() < 1e-9, relative
    np.testing.assert_array_equal(on_dask.predict(X), in_memory.predict(X))
    np.testing.assert_allclose(on_dask.coef_, in_memory.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(on_dask.classes_, in_memory.classes_)
    return relative.max()


#: TSVM is cut to 8 solves and DA to 2 temperatures to keep the round trips of these tests few (the same caps
#: in memory and on the cluster; the slow tests run the defaults).
CASES = [
    (LinearL2SVC, {}),
    (TransductiveSVC, {"safeguard": None, "max_iter": 8}),
    (DeterministicAnnealingSVC, {"safeguard": None, "max_iter": 2}),
    # A cold start and the bias regularized apart (intercept_scaling), given explicitly.
    (
        DeterministicAnnealingSVC,
        {"safeguard": None, "max_iter": 2, "initial_temperature": 0.1, "intercept_scaling": 5.0},
    ),
]

pytestmark = [
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    # The Dask fit's note that it does not compare the class fractions with clusters (tested on its own below).
    pytest.mark.filterwarnings("ignore:.*k-means clusters of all rows:UserWarning"),
]


@pytest.mark.parametrize("n_classes, sparse", [(2, True), (3, False)])
@pytest.mark.parametrize(
    "estimator, params", CASES, ids=[c[0].__name__ + ("-cold" if len(c[1]) > 2 else "") for c in CASES]
)
def test_fit_on_a_dask_array_is_the_in_memory_fit(client, estimator, params, n_classes, sparse):
    X, y = _problem(n_classes, sparse)
    in_memory = estimator(**params).fit(X, y)
    chunkings = CHUNKINGS if estimator is LinearL2SVC else CHUNKINGS[n_classes - 2 :][:1]
    for chunks in chunkings:
        X_dask, y_dask, _ = _dask(X, y, chunks)
        with distributed.get_task_stream(client) as stream:
            on_dask = estimator(**params).fit(X_dask, y_dask)
        _assert_same_model(on_dask, in_memory, X)
        assert on_dask.n_iter_ == in_memory.n_iter_
        # The work ran as tasks on the workers.
        assert stream.data and {t["worker"] for t in stream.data} <= set(client.scheduler_info()["workers"])
        transduction = on_dask.transduction_
        assert isinstance(transduction, da.Array) and transduction.chunks[0] == X_dask.chunks[0]
        np.testing.assert_array_equal(transduction.compute(), in_memory.transduction_)


@pytest.mark.parametrize("seed", [2, 4, 10])
def test_data_of_a_very_large_scale_on_dask_is_the_in_memory_fit(client, seed):
    # At values of 1e9 and more, CGLS's residual cannot fall below the rounding of X^T z; the tolerance stays
    # above that floor (skssl.svm.solvers._mfn.CG_ROUNDING_FLOOR times the norm of the rows the solve sees), on the
    # cluster as in memory. Without it these problems end in NaN (ValueError) or at the cap of Newton steps.
    # (The supervised solve, which also starts TSVM and DA; their later solves still meet CGLS's cap at this
    # scale, in memory too, so their rounding differs and they are not compared here.)
    X, _, y_semi, scale = very_large_scale_problem(seed)
    X = X * scale
    n, d = X.shape
    in_memory = LinearL2SVC().fit(X, y_semi)
    X_dask = da.from_array(X, chunks=((n // 2, n - n // 2), (d,)))
    on_dask = LinearL2SVC().fit(X_dask, da.from_array(y_semi, chunks=((n // 2, n - n // 2),)))
    assert np.all(np.isfinite(on_dask.coef_))
    _assert_same_model(on_dask, in_memory, X)
    assert on_dask.n_iter_ == in_memory.n_iter_


@pytest.mark.parametrize("more_needed", [-1000, 1000])
def test_auto_start_on_dask_runs_the_label_check(client, monkeypatch, more_needed):
    """initial_temperature="auto" hides each half of the labels in turn on the cluster too, and counts as in memory."""
    X, y = _problem(2, True)
    counts = []
    counter = _annealing_start.count_correct_on_hidden_halves
    monkeypatch.setattr(
        _annealing_start, "count_correct_on_hidden_halves", lambda *a: counts.append(counter(*a)) or counts[-1]
    )
    # The margin moved far either way: the check's answer (cold or hot) must come from a check that ran.
    monkeypatch.setattr(_annealing_start, "MIN_MORE_CORRECT", more_needed)
    in_memory = DeterministicAnnealingSVC(safeguard=None, max_iter=2).fit(X, y)
    on_dask = DeterministicAnnealingSVC(safeguard=None, max_iter=2).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    assert on_dask.initial_temperature_ == in_memory.initial_temperature_ == (0.1 if more_needed < 0 else 10.0)
    assert len(counts) == 2 and counts[0] == counts[1] and counts[0] is not None
    _assert_same_model(on_dask, in_memory, X)


def test_the_penalty_check_of_alpha_runs_on_dask(client):
    """Collinear measurements: the labeled rows (gathered to the client) call for a lighter alpha on Dask too."""
    rng = np.random.RandomState(0)
    n = 150
    y = rng.randint(0, 2, n)
    X = rng.randn(n, 1) * 3 + 0.1 * rng.randn(n, 5)
    X[:, 0] += 0.25 * (2 * y - 1)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y_semi = np.where(rng.rand(n) < 0.3, y, -1)
    in_memory = LinearL2SVC().fit(X, y_semi)
    X_dask = da.from_array(X, chunks=((70, 80), (X.shape[1],)))
    on_dask = LinearL2SVC().fit(X_dask, da.from_array(y_semi, chunks=((70, 80),)))
    assert on_dask.alpha_ == pytest.approx(in_memory.alpha_, rel=1e-12)
    # A lighter value than the rule's: the check ran and chose a factor below 1.
    assert on_dask.alpha_ < 0.5 * auto_alpha(X, y_semi != -1, unlabeled_weight=0.0)
    np.testing.assert_allclose(on_dask.coef_, in_memory.coef_, rtol=1e-6, atol=1e-9)


def test_a_dask_fit_says_that_it_does_not_ask_the_clusters(client):
    """The class fractions from k-means clusters need all rows: a Dask fit warns once that it uses the labels'."""
    X, y = _problem(2, True)
    X_dask, y_dask, _ = _dask(X, y, CHUNKINGS[0])
    with pytest.warns(UserWarning, match="k-means clusters of all rows") as record:
        TransductiveSVC(max_iter=4, safeguard="agreement").fit(X_dask, y_dask)
    # One warning: the safeguard's candidates are handed this fit's fractions and say nothing.
    assert sum("k-means" in str(w.message) for w in record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        TransductiveSVC(max_iter=4, safeguard="agreement", positive_fraction=0.5).fit(X_dask, y_dask)


@pytest.mark.parametrize(
    "estimator, params", CASES, ids=[c[0].__name__ + ("-cold" if len(c[1]) > 2 else "") for c in CASES]
)
def test_sample_weight_on_dask_is_the_in_memory_fit(client, estimator, params):
    X, y = _problem(2, True)
    weight = np.random.RandomState(0).uniform(0.5, 2.0, X.shape[0])
    weight[[3, 10, 50]] = 0.0  # dropped rows, labeled or not
    in_memory = estimator(**params).fit(X, y, sample_weight=weight)
    on_dask = estimator(**params).fit(*_dask(X, y, CHUNKINGS[1], weight))
    _assert_same_model(on_dask, in_memory, X)


def test_class_weight_and_alpha_on_dask(client):
    X, y = _problem(3, True)
    params = {"class_weight": "balanced", "alpha": 0.05}
    in_memory = LinearL2SVC(**params).fit(X, y)
    on_dask = LinearL2SVC(**params).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    _assert_same_model(on_dask, in_memory, X)
    assert on_dask.alpha_ == in_memory.alpha_


def test_a_class_without_labeled_weight_is_named_on_dask_too(client):
    X, y = _problem(3, True)
    weight = np.where(y == 1, 0.0, 1.0)  # every labeled row of class 1 weighs 0
    with pytest.raises(ValueError, match=r"every labeled row of class \[1\]"):
        TransductiveSVC(max_iter=4).fit(*_dask(X, y, CHUNKINGS[0], weight))


def test_the_safeguard_on_dask_is_the_in_memory_one(client):
    """alpha="auto", the estimated class fraction and the safeguard (four fits, a refit, the check) on the cluster."""
    X, y = _problem(2, False)
    X = X - X.mean(axis=0)  # centred rows: intercept_scaling="auto" frees the bias
    # The default safeguard: the agreement, then the cross-validated check (30 labeled rows, 5 features).
    in_memory = TransductiveSVC(max_iter=4).fit(X, y)
    on_dask = TransductiveSVC(max_iter=4).fit(*_dask(X, y, CHUNKINGS[1])[:2])
    assert in_memory.safeguard_scores_ is not None
    np.testing.assert_array_equal(on_dask.safeguard_scores_, in_memory.safeguard_scores_)
    assert on_dask.safeguard_fell_back_ == in_memory.safeguard_fell_back_
    _assert_same_model(on_dask, in_memory, X)
    assert on_dask.alpha_ == pytest.approx(in_memory.alpha_, rel=1e-12)
    # intercept_scaling="auto" with alpha="auto": the bias's lighter regularization on the cluster too.
    assert on_dask.intercept_scaling_ == pytest.approx(in_memory.intercept_scaling_, rel=1e-12)
    assert in_memory.intercept_scaling_ > 1.0
    assert on_dask.safeguard_agreement_ == in_memory.safeguard_agreement_


def test_a_refit_in_memory_keeps_nothing_of_the_dask_fit(client):
    """dask_rounds_ is a Dask fit's only; LinearL2SVC has no safeguard, so no safeguard_* attributes either."""
    X, y = _problem(2, False)
    est = LinearL2SVC().fit(*_dask(X, y, CHUNKINGS[0])[:2])
    assert est.dask_rounds_ > 0 and not hasattr(est, "safeguard_fell_back_")
    est.fit(X, y)
    fresh = LinearL2SVC().fit(X, y)
    assert sorted(k for k in vars(est) if k.endswith("_")) == sorted(k for k in vars(fresh) if k.endswith("_"))
    np.testing.assert_array_equal(est.coef_, fresh.coef_)


@pytest.mark.slow
@pytest.mark.parametrize("estimator", [TransductiveSVC, DeterministicAnnealingSVC])
def test_defaults_on_dask_are_the_in_memory_fit(client, estimator):
    X, y = _problem(2, True)
    in_memory = estimator().fit(X, y)
    on_dask = estimator().fit(*_dask(X, y, CHUNKINGS[1])[:2])
    _assert_same_model(on_dask, in_memory, X)
    assert on_dask.safeguard_agreement_ == in_memory.safeguard_agreement_
    assert on_dask.safeguard_fell_back_ == in_memory.safeguard_fell_back_


@pytest.mark.slow
@pytest.mark.parametrize("estimator", [TransductiveSVC, DeterministicAnnealingSVC])
def test_defaults_on_standardized_tabular_rows_are_the_in_memory_estimator(client, estimator):
    """Breast cancer (200 rows, standardized, 40 labels): the penalty check, the start and the safeguard's check
    decide on the cluster as in memory, and the model is the in-memory one."""
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.sort(np.random.RandomState(0).choice(X.shape[0], 200, replace=False))
    X = StandardScaler().fit_transform(X[rows])
    y_semi = make_semi_supervised(y[rows], 40, random_state=0)
    in_memory = estimator().fit(X, y_semi)
    X_dask = da.from_array(X, chunks=((120, 80), (X.shape[1],)))
    on_dask = estimator().fit(X_dask, da.from_array(y_semi, chunks=((120, 80),)))
    assert on_dask.alpha_ == pytest.approx(in_memory.alpha_, rel=1e-12)
    assert getattr(on_dask, "initial_temperature_", None) == getattr(in_memory, "initial_temperature_", None)
    assert in_memory.safeguard_fell_back_ is not None
    assert on_dask.safeguard_fell_back_ == in_memory.safeguard_fell_back_
    np.testing.assert_allclose(on_dask.coef_, in_memory.coef_, rtol=1e-5, atol=1e-5 * np.abs(in_memory.coef_).max())


@pytest.mark.slow
@pytest.mark.parametrize(
    "estimator, sparse, weighted",
    [
        (LinearL2SVC, True, True),
        (LinearL2SVC, False, False),
        (TransductiveSVC, False, True),
        (DeterministicAnnealingSVC, True, False),
    ],
)
def test_defaults_on_dask_multiclass(client, estimator, sparse, weighted):
    """Three classes (three one-vs-rest problems at once, each with its safeguard) with the default parameters."""
    X, y = _problem(3, sparse)
    weight = np.random.RandomState(1).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    in_memory = estimator().fit(X, y, sample_weight=weight)
    on_dask = estimator().fit(*_dask(X, y, CHUNKINGS[1], weight))
    _assert_same_model(on_dask, in_memory, X)


def test_line_search_bisects_when_breakpoints_are_many(client, monkeypatch):
    """With room for only 1 breakpoint on the client, the line search narrows its bracket on the workers first."""
    from skssl.svm.dask import _dask_mfn

    X, y = _problem(2, True)
    in_memory = TransductiveSVC(safeguard=None, max_iter=8).fit(X, y)
    gathered = TransductiveSVC(safeguard=None, max_iter=8).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    monkeypatch.setattr(_dask_mfn, "GATHER_BREAKPOINTS", 1)
    bisected = TransductiveSVC(safeguard=None, max_iter=8).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    _assert_same_model(bisected, in_memory, X)
    assert bisected.dask_rounds_ > gathered.dask_rounds_  # the probes' round trips


def test_one_round_trip_per_cgls_iteration(client):
    """Rounds = CGLS iterations + 2 per Newton step (+ 1 per re-solve at a tighter tolerance, + the start)."""
    X, y = _problem(2, True)
    events = []
    with solver_callback(events.append):
        # A given alpha: alpha="auto" would add its check's supervised fits on the client, whose solves the
        # callback sees too.
        est = LinearL2SVC(alpha=0.05).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    cgls = [e for e in events if e.stage == "cgls"]
    n_cg = sum(e.n_iter for e in cgls)
    assert n_cg + 2 * len(cgls) <= est.dask_rounds_ <= n_cg + 3 * len(cgls) + 1


def test_the_dask_solve_is_the_shared_newton_loop(client, monkeypatch):
    """dask_mfn runs solvers._mfn.newton_solve on the blocks' backend: the Newton steps of the in-memory solve."""
    from skssl.svm.dask import _dask_mfn

    backends = []

    def recorded(rows, **kwargs):
        backends.append(rows)
        return newton_solve(rows, **kwargs)

    monkeypatch.setattr(_dask_mfn, "newton_solve", recorded)
    X, y = _problem(2, True)
    steps = {}
    for where, data in (("memory", (X, y)), ("dask", _dask(X, y, CHUNKINGS[1])[:2])):
        events = []
        with solver_callback(events.append):
            LinearL2SVC().fit(*data)
        # The final solve's steps (the defaults' own solves before it need not run on both backends).
        ends = [k for k, e in enumerate(events) if e.stage == "mfn"]
        start = ends[-2] + 1 if len(ends) > 1 else 0
        steps[where] = [(e.stage, e.get("newton_step"), e.get("n_iter")) for e in events[start : ends[-1] + 1]]
    assert backends and all(isinstance(b, _dask_mfn.DaskNewtonRows) for b in backends)
    assert steps["dask"] == steps["memory"] and steps["memory"]


def _count_rounds(monkeypatch):
    """Round trips per block step, counted as the fits make them."""
    from skssl.svm.dask import _dask_rows

    counts = collections.Counter()
    for name in ("round", "query"):
        original = getattr(_dask_rows.DaskRows, name)

        def counted(self, func, *args, _original=original, **kwargs):
            counts[func.__name__] += 1
            return _original(self, func, *args, **kwargs)

        monkeypatch.setattr(_dask_rows.DaskRows, name, counted)
    return counts


def test_small_steps_ride_on_the_solves_rounds(client, monkeypatch):
    """TSVM's switch candidates, DA's gaps and first thresholds, and the objective come with a solve's last round;
    DA's new beliefs with the next Newton system; its threshold takes few rounds of its own."""
    counts = _count_rounds(monkeypatch)
    X, y = _problem(2, True)
    TransductiveSVC(safeguard=None).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    assert counts["_cgls_step"] and not {"_switch_candidates", "_s3vm_part"} & set(counts), counts
    counts.clear()
    events = []
    with solver_callback(events.append):
        # At the start that "auto" takes here, without its check's fits (test_auto_start_on_dask_runs_the_label_check).
        DeterministicAnnealingSVC(safeguard=None, initial_temperature=10.0).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    n_p_steps = sum(e.stage == "p" for e in events)
    assert counts["_beliefs_and_system"] == n_p_steps > 10
    assert counts["_belief_sums"] <= n_p_steps  # brentq took a dozen evaluations per p-step
    assert not {"_s3vm_part", "_belief_gaps", "_new_beliefs"} & set(counts), counts


@pytest.mark.parametrize("estimator", [TransductiveSVC, DeterministicAnnealingSVC])
def test_without_the_solves_tail_the_rounds_of_their_own_give_the_same_model(client, monkeypatch, estimator):
    from skssl.svm.dask import _dask_mfn

    X, y = _problem(2, True)
    params = dict(CASES)[estimator]
    with_tail = estimator(**params).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    counts = _count_rounds(monkeypatch)
    monkeypatch.setattr(_dask_mfn, "_tail_of", lambda replies, k: None)
    without = estimator(**params).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    assert counts["_switch_candidates" if estimator is TransductiveSVC else "_belief_gaps"]
    np.testing.assert_array_equal(without.objective_, with_tail.objective_)
    np.testing.assert_array_equal(without.coef_, with_tail.coef_)


@pytest.mark.parametrize("sparse", [True, False], ids=["csr", "dense"])
def test_a_block_with_nearly_all_rows_active_is_not_sliced(client, monkeypatch, sparse):
    """As in memory, CGLS runs on the whole block (zero costs on its inactive rows) rather than on a near-copy."""
    from skssl.svm.dask import _dask_mfn

    X, y = _problem(2, sparse)
    X_dask, y_dask = _dask(X, y, CHUNKINGS[0])[:2]
    shares, share = [], _dask_mfn._active_share

    def recorded(block, J):
        shares.append(share(block, J))
        return shares[-1]

    monkeypatch.setattr(_dask_mfn, "_active_share", recorded)
    # TSVM's own solves have nearly every row of a block active; the agreement safeguard's fits add solves with
    # fewer (its cross-validated check, which the defaults run here, would only add time).
    whole = TransductiveSVC(safeguard="agreement").fit(X_dask, y_dask)
    assert any(s > _dask_mfn.SLICE_FRACTION for s in shares) and any(s <= _dask_mfn.SLICE_FRACTION for s in shares)
    monkeypatch.setattr(_dask_mfn, "SLICE_FRACTION", 1.0)  # always slice
    sliced = TransductiveSVC(safeguard="agreement").fit(X_dask, y_dask)
    np.testing.assert_allclose(whole.objective_, sliced.objective_, rtol=1e-9)
    np.testing.assert_allclose(whole.coef_, sliced.coef_, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("safeguard", ["cross_validation", "agreement"])
@pytest.mark.parametrize("on_dask", [False, True], ids=["memory", "dask"])
def test_a_fit_that_fails_inside_the_safeguard_names_the_estimator_on_both_backends(
    client, monkeypatch, on_dask, safeguard
):
    """An overflow in one of the safeguard's fits is the same ValueError on a cluster as in memory."""
    from skssl.svm import _base
    from skssl.svm.dask import _dask_fit

    def overflowing(*args, **kwargs):
        raise FloatingPointError("l2-SVM-MFN produced non-finite weights")

    # The cross-validated check's folds, and the agreement's candidates on each backend.
    monkeypatch.setattr(_base, "compare_on_folds", overflowing)
    monkeypatch.setattr(_base, "candidates_agree", overflowing)
    monkeypatch.setattr(_dask_fit, "_safeguard", overflowing)
    X, y = _problem(2, False)
    data = _dask(X, y, CHUNKINGS[0])[:2] if on_dask else (X, y)
    with pytest.raises(ValueError, match=r"^TransductiveSVC: a fit of its safeguard failed .*non-finite weights"):
        TransductiveSVC(safeguard=safeguard, max_iter=8).fit(*data)


#: Inputs that an in-memory fit refuses, each with what the Dask fit's ValueError must say (None: any message).
REFUSED_INPUTS = {
    "complex-X": (lambda X, y: (X.astype(complex), y, None), "complex data is not supported"),
    "no-features": (lambda X, y: (X[:, :0], y, None), "0 feature"),
    "continuous-labels": (lambda X, y: (X, np.where(y == 1, 0.5, y), None), "continuous"),
    "zero-weights": (lambda X, y: (X, y, np.zeros(y.size)), "0 on every labeled row"),
    "zero-weights-labeled": (lambda X, y: (X, y, np.where(y == -1, 1.0, 0.0)), "0 on every labeled row"),
    "nan-weight": (lambda X, y: (X, y, np.where(np.arange(y.size) == 3, np.nan, 1.0)), None),
    "negative-weights": (lambda X, y: (X, y, -np.ones(y.size)), None),
    "inf-in-X": (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 7, np.inf, X), y, None), None),
    "one-class-labeled": (lambda X, y: (X, np.where(y == 1, -1, y), None), None),
}


@pytest.mark.parametrize("case", sorted(REFUSED_INPUTS))
@pytest.mark.parametrize("estimator", [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC])
def test_input_that_an_in_memory_fit_refuses_is_refused_on_dask(client, estimator, case):
    """A Dask fit divided by a zero labeled weight, and fitted complex X, no features or labels like 0.5."""
    mutate, message = REFUSED_INPUTS[case]
    X, y = _problem(2, False)
    X, y, weight = mutate(X, y.astype(float))
    with pytest.raises(ValueError):
        estimator().fit(X, y, sample_weight=weight)
    chunks = CHUNKINGS[0]
    X_dask = da.from_array(X, chunks=(chunks, (X.shape[1],)), asarray=False)
    y_dask = da.from_array(y, chunks=(chunks,))
    weight_dask = None if weight is None else da.from_array(weight, chunks=(chunks,))
    with pytest.raises(ValueError, match=message):
        estimator().fit(X_dask, y_dask, sample_weight=weight_dask)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda X, y: (X, da.from_array(np.asarray(y), chunks=((50, 40),))), "row chunks of y"),
        (lambda X, y: (X.map_blocks(lambda b: b * np.nan), y), "NaN"),
        (lambda X, y: (X, da.from_array(np.full(len(y), -1), chunks=(X.chunks[0],))), "no labeled rows"),
        (lambda X, y: (X, np.asarray(y)[:, None]), "1-d"),
        (lambda X, y: (X[:, 0], y), "2-D"),
    ],
    ids=["mismatched-chunks", "nan", "no-labels", "y-2d", "x-1d"],
)
def test_bad_dask_input_raises_a_clear_value_error(client, mutate, message):
    X, y = _problem(2, False)
    X_dask, y_dask, _ = _dask(X, y, CHUNKINGS[0])
    with pytest.raises(ValueError, match=message):
        LinearL2SVC().fit(*mutate(X_dask, y_dask))


def test_column_chunks_are_joined_into_rows(client):
    X, y = _problem(2, True)
    X_dask = da.from_array(X, chunks=((45, 45), (2, 3)), asarray=False)
    np.testing.assert_allclose(LinearL2SVC().fit(X_dask, y).coef_, LinearL2SVC().fit(X, y).coef_, rtol=1e-9)


def test_sparse_blocks_are_never_densified(client, monkeypatch):
    """The workers are threads of this process here, so a densified CSR block would call this toarray."""
    X, y = _problem(2, True)

    def refuse(*args, **kwargs):
        raise AssertionError("a sparse block was densified")

    for cls in (sp.csr_matrix, sp.csr_array):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    on_dask = TransductiveSVC(safeguard=None, max_iter=6).fit(*_dask(X, y, CHUNKINGS[0])[:2])
    monkeypatch.undo()
    _assert_same_model(on_dask, TransductiveSVC(safeguard=None, max_iter=6).fit(X, y), X)


def test_potts_refuses_a_dask_array(client):
    X, y = _problem(3, False)
    with pytest.raises(ValueError, match="does not fit on Dask arrays"):
        PottsDeterministicAnnealingSVC().fit(*_dask(X, y, CHUNKINGS[0])[:2])


def test_a_check_that_dask_gives_up_on_raises_a_clear_error(client, monkeypatch):
    """When Dask cannot recompute a block for its check (KilledWorker), the fit stops with an error naming it."""
    from skssl.svm.dask._dask_rows import DaskRows

    X, y = _problem(2, True)
    rows = DaskRows(*_dask(X, y, CHUNKINGS[1])[:2])
    checked = rows._checked

    class Worker:  # the scheduler's record of the last worker that died running the task
        address = "tcp://127.0.0.1:1234"

    def gather(futures, key="_check_block-123"):
        raise distributed.KilledWorker(key, Worker(), 3)

    monkeypatch.setattr(rows.client, "gather", gather)
    with pytest.raises(RuntimeError, match=r"row block\(s\) 0 \(rows 0-29\), 2 \(rows 30-84\), 3 .*checking"):
        rows._gather(checked, "checking")
    with pytest.raises(RuntimeError, match=r"row block\(s\) 2 \(rows 30-84\) .*tcp://127.0.0.1:1234"):
        rows.client.gather = lambda futures: gather(futures, checked[1].key)
        rows._gather(checked, "checking")


def test_a_lost_actor_names_its_block_and_the_fit_gives_up_after_its_restarts(client, monkeypatch):
    """An actor whose worker is gone raises BlockLost naming the block; a fit that keeps losing stops clearly."""
    from skssl.svm.dask import _dask_fit
    from skssl.svm.dask._dask_rows import BlockLost, DaskRows

    X, y = _problem(2, True)
    rows = DaskRows(*_dask(X, y, CHUNKINGS[1])[:2])

    class Unreachable:  # an actor whose worker died: its calls' futures raise as distributed's do
        def call(self, *args):
            return self

        def result(self):
            raise OSError("Unable to contact Actor's worker")

    rows._actors[1] = Unreachable()
    with pytest.raises(BlockLost, match=r"row block 2 \(rows 30-84\) was lost while running _reply_of_state"):
        rows.query(_reply_of_state, rows.blocks)
    attempts = []

    def always_lost(self, *args):
        attempts.append(self)
        raise BlockLost("the worker holding row block 0 (rows 0-29) was lost", [self.block_rows[0]])

    monkeypatch.setattr(DaskRows, "_call", always_lost)
    with pytest.raises(RuntimeError, match=r"lost the worker holding row block\(s\) 0 \(rows 0-29\) 4 times"):
        TransductiveSVC(safeguard=None).fit(*_dask(X, y, CHUNKINGS[1])[:2])
    assert len({id(r) for r in attempts}) == _dask_fit.MAX_RESTARTS + 1  # each attempt on freshly checked blocks


def _next(state, k):
    return types.SimpleNamespace(X=state.X, reply=k)


def test_workers_forget_the_states_no_handle_refers_to(client):
    """A long chain of rounds holds a few states per block on the workers, and a finished fit leaves no actor."""
    from skssl.svm.dask import _dask_rows

    X, y = _problem(2, True)
    rows = _dask_rows.DaskRows(*_dask(X, y, CHUNKINGS[1])[:2])
    states, kept = rows.blocks, []
    for k in range(60):
        states, replies = rows.round(_next, states, k)
        assert replies == [k] * len(rows.blocks)
        if k % 20 == 0:
            kept.append(states)  # still referred to: must stay on the workers
    rows.round(_next, states, -1)
    held = [a.n_states().result() for a in rows._actors]
    assert all(n <= 3 + len(kept) for n in held), held  # the block, the kept states, the last two
    assert rows.query(_dask_rows._reply_of, kept[0]) == [0] * len(rows.blocks)
    del rows, states, kept
    gc.collect()
    TransductiveSVC(safeguard=None, max_iter=3).fit(*_dask(X, y, CHUNKINGS[1])[:2])
    gc.collect()
    # The workers drop the actors once the scheduler has released their keys, which happens after the fit
    # returns: the wait is bounded by a count of round trips to the workers (each one a chance for them to
    # handle the release), not by a clock, so a busy machine cannot fail it.
    for _ in range(MAX_RELEASE_POLLS):
        if sum(client.run(_n_actors).values()) == 0:
            break
        time.sleep(0.05)
    assert sum(client.run(_n_actors).values()) == 0


#: Round trips to the workers within which a finished fit's actors must be gone.
MAX_RELEASE_POLLS = 200


def _n_actors(dask_worker):
    return len(dask_worker.state.actors)


def _reply_of_state(block):
    return block


def _die():
    threading.Timer(0.05, os._exit, (1,)).start()


def test_a_worker_lost_in_the_middle_of_a_fit_restarts_and_ends_the_same():
    """A worker process is killed after the 2nd CGLS solve; the fit restarts on the recomputed blocks, same model."""
    X, y = _problem(2, True, n_rows=60)
    chunks = (20, 15, 25)
    params = {"safeguard": None, "max_iter": 4}
    with _cluster(True) as cluster, distributed.Client(cluster) as client:
        reference = TransductiveSVC(**params).fit(*_dask(X, y, chunks)[:2])
        victim = sorted(client.scheduler_info()["workers"])[0]
        solves = []

        def kill_after_two(event):
            if event.stage == "cgls":
                solves.append(event)
                if len(solves) == 2:
                    client.run(_die, workers=[victim])

        with solver_callback(kill_after_two):
            survived = TransductiveSVC(**params).fit(*_dask(X, y, chunks)[:2])
        assert len(solves) > 2
    np.testing.assert_array_equal(survived.coef_, reference.coef_)
    np.testing.assert_array_equal(survived.intercept_, reference.intercept_)
    np.testing.assert_array_equal(survived.objective_, reference.objective_)


def test_blocks_whose_holder_is_unknown_are_checked_where_the_scheduler_puts_them(client, monkeypatch):
    """A block whose holder was just lost has none in who_has; distributed refuses allow_other_workers= without
    workers= (ValueError), so such a block goes where the scheduler puts it and the fit is the in-memory one."""
    X, y = _problem(2, True)
    monkeypatch.setattr(type(client), "who_has", lambda self, futures=None, **kwargs: {})
    on_dask = LinearL2SVC().fit(*_dask(X, y, CHUNKINGS[1])[:2])
    _assert_same_model(on_dask, LinearL2SVC().fit(X, y), X)
