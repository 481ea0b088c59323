"""The solvers' callback: its events, their counts and fields, and that it leaves every fit unchanged."""

from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm._callback import SolverEvent, solver_callback
from skssl.svm.solvers._da import deterministic_annealing
from skssl.svm.solvers._mfn import l2_svm_mfn
from skssl.svm.solvers._potts import potts_annealing
from skssl.svm.solvers._tsvm import tsvm

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _data(seed=0, n=200, d=20, k=2, sparse=True):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, k, n)
    X = rng.randn(k, d)[y] * 1.5 + rng.randn(n, d)
    if sparse:
        X[rng.rand(n, d) < 0.6] = 0.0
        X = sp.csr_matrix(X)
    labeled = np.zeros(n, dtype=bool)
    for c in range(k):
        labeled[np.flatnonzero(y == c)[:3]] = True
    return X, y, labeled


def _same(a, b):
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def _binary_fits(solver, seed, **kw):
    """``solver`` on a binary problem with a :class:`Recorder` callback, and without: (result, plain result, events)."""
    X, y, labeled = _data(seed)
    t = np.where(y == 1, 1.0, -1.0)
    rec = Recorder()
    res = solver(X, t, labeled, alpha=1e-2, unlabeled_weight=1.0, positive_fraction=0.5, callback=rec, **kw)
    plain = solver(X, t, labeled, alpha=1e-2, unlabeled_weight=1.0, positive_fraction=0.5, **kw)
    return res, plain, rec


class Recorder(list):
    def __call__(self, event):
        assert isinstance(event, SolverEvent)
        self.append(event)

    def stages(self):
        return Counter(e.stage for e in self)

    def of(self, stage):
        return [e for e in self if e.stage == stage]


@pytest.mark.parametrize("sparse", [True, False])
def test_mfn_events(sparse):
    X, y, labeled = _data(sparse=sparse)
    t = np.where(y == 1, 1.0, -1.0)
    cost = np.full(X.shape[0], 1.0 / X.shape[0])
    rec = Recorder()
    res = l2_svm_mfn(X, t, cost, alpha=1e-3, callback=rec)
    plain = l2_svm_mfn(X, t, cost, alpha=1e-3)
    _same((res.w, res.b, res.outputs, res.objective), (plain.w, plain.b, plain.outputs, plain.objective))
    cgls = rec.of("cgls")
    assert [e.newton_step for e in cgls] == list(range(1, res.n_iter + 1))
    assert sum(e.n_iter for e in cgls) == res.n_cg_iter
    assert all(set(e) == {"newton_step", "n_rows", "n_iter", "converged", "eps", "cpu_time"} for e in cgls)
    assert all(0 <= e.n_rows <= X.shape[0] and e.cpu_time >= 0 for e in cgls)
    searches = rec.of("line_search")
    assert len(searches) <= res.n_iter
    assert all(e.n_breakpoints >= 0 and e.step >= 0 for e in searches)
    (done,) = rec.of("mfn")
    assert rec[-1] is done
    assert dict(done) == {
        "n_iter": res.n_iter,
        "n_cg_iter": res.n_cg_iter,
        "n_empty_steps": res.n_empty_steps,
        "converged": res.converged,
        "objective": res.objective,
    }


def test_tsvm_events():
    res, plain, rec = _binary_fits(tsvm, 1)
    _same((res.w, res.b, res.objective, res.labels), (plain.w, plain.b, plain.objective, plain.labels))
    assert rec.stages()["mfn"] == res.n_iter
    switches = rec.of("switch")
    assert sum(e.n_switched for e in switches) == res.n_switches
    assert switches[-1].n_switched == 0 and switches[-1].unlabeled_weight == 1.0
    assert [e.n_solves for e in switches] == sorted(e.n_solves for e in switches)


def test_da_events():
    res, plain, rec = _binary_fits(deterministic_annealing, 2)
    _same((res.w, res.b, res.objective, res.p), (plain.w, plain.b, plain.objective, plain.p))
    stages = rec.stages()
    assert stages["init"] == 1 and rec[0].stage != "init"  # the first w-step's MFN events come first
    assert stages["w"] == stages["p"] == res.n_w_steps - 1
    assert stages["mfn"] == res.n_w_steps
    w_events = rec.of("w")
    assert {e.n_temperatures for e in w_events} == set(range(1, res.n_temperatures + 1))
    assert res.objective == min(e.objective for e in [*rec.of("init"), *w_events])
    assert all(e.annealed_objective is None for e in w_events)
    assert all(e.beliefs.mean() == pytest.approx(0.5, abs=1e-9) for e in rec.of("p"))
    with pytest.raises(ValueError):
        w_events[0].beliefs[0] = 0.0  # read-only


@pytest.mark.parametrize("k", [2, 4])
def test_potts_events(k):
    X, y, labeled = _data(3, k=k)
    kw = {"alpha": 1e-2, "unlabeled_weight": 1.0, "class_fractions": np.full(k, 1 / k)}
    rec = Recorder()
    res = potts_annealing(X, y, labeled, callback=rec, **kw)
    plain = potts_annealing(X, y, labeled, **kw)
    _same((res.W, res.b, res.objective, res.P), (plain.W, plain.b, plain.objective, plain.P))
    assert res.n_extrapolated == plain.n_extrapolated
    stages = rec.stages()
    assert stages["init"] == 1
    assert stages["w"] == stages["p"] == res.n_w_steps - 1
    assert stages["mfn"] == res.n_w_steps * (1 if k == 2 else k)
    assert all(e.annealed_objective is not None for e in rec.of("p"))


def test_event_is_read_only():
    event = SolverEvent("cgls", n_iter=3)
    assert event.n_iter == event["n_iter"] == 3 and dict(event) == {"n_iter": 3}
    with pytest.raises(AttributeError):
        event.n_iter = 4
    with pytest.raises(AttributeError):
        event.missing  # noqa: B018


def _context_cases():
    """Each estimator and n_jobs with the defaults and without the safeguard.

    The annealers' defaults (their safeguard refits each model on held-out labels) are the slow cases; the
    TSVM's defaults stay in the fast suite, so that the context reaching a safeguard's fits is checked there too.
    """
    cases = []
    for make in (TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC):
        for n_jobs in (None, 2):
            for params, tag in (({}, "defaults"), ({"safeguard": None}, "no-safeguard")):
                # The annealers' two-thread fits without the safeguard are in the whole suite only, too.
                slow = make is not TransductiveSVC and (params == {} or n_jobs == 2)
                marks = [pytest.mark.slow] if slow else []
                cases.append(pytest.param(make, n_jobs, params, marks=marks, id=f"{n_jobs}-{make.__name__}-{tag}"))
    return cases


@pytest.mark.parametrize("make, n_jobs, params", _context_cases())
def test_solver_callback_context_reaches_estimator_fits(make, n_jobs, params):
    X, y, labeled = _data(4, n=80, k=3)
    y_semi = np.where(labeled, y, -1)
    rec = Recorder()
    with solver_callback(rec):
        fitted = make(n_jobs=n_jobs, **params).fit(X, y_semi)
    plain = make(n_jobs=n_jobs, **params).fit(X, y_semi)
    _same((fitted.coef_, fitted.intercept_), (plain.coef_, plain.intercept_))
    assert rec.stages()["mfn"] > 0
    rec.clear()
    make(**params).fit(X, y_semi)  # outside the block: no events
    assert not rec
