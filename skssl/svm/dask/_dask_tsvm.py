"""TSVM on a Dask cluster: its rows interface (:class:`DaskTSVMRows`) and the block steps behind it.

The loop is the in-memory one (:func:`~skssl.svm.solvers._tsvm.tsvm_loop`), run
through :class:`DaskTSVMRows` on the blocks' states of
:mod:`skssl.svm.dask._dask_problem`; each solve is :func:`~skssl.svm.dask._dask_mfn.dask_mfn`.
The switches are a distributed top-k: each block returns its ``S`` best
candidates of each kind, and :func:`~skssl.svm.solvers._tsvm.switch_labels` on their
union picks exactly the pairs it picks on all rows. The initial labels need
a k-th largest output, found by a selection over integer keys. Candidates
and objective come with each solve's last round.

Design decisions: user guide, Implementation decisions: linear S3VMs, "Dask fits".
"""

from dataclasses import replace

import numpy as np

from ._dask_mfn import dask_mfn
from ._dask_problem import _half_penalty, _s3vm_part, _set_outputs, new_states, s3vm_objective, solve_norm
from ..solvers._tsvm import _smallest, switch_labels

__all__ = [
    "DaskTSVMRows",
]

#: Thresholds per round of the k-th largest selection.
SELECTION_THRESHOLDS = 255


def _with_costs(s, lam):
    """TSVM's costs: the labeled rows' and ``lam`` spread over the unlabeled ones."""
    cost = np.empty(s.X.shape[0])
    cost[s.problem.lab] = s.problem.lab_cost
    if s.problem.n_unl:
        cost[s.problem.unl] = s.problem.unlabeled_cost(lam)
    return replace(s, cost=cost, reply=None)


def _order_keys(x):
    """Integers in the order of the float64 values ``x`` (-0.0 and 0.0 equal)."""
    i = x.view(np.int64)
    return np.where(i >= 0, i, np.int64(-(2**63)) - i)


def _unlabeled_keys(s):
    return _order_keys(s.o[s.problem.unl])


def _key_range(s):
    k = _unlabeled_keys(s)
    return (int(k.min()), int(k.max())) if k.size else None


def _key_counts(s, thresholds):
    k = np.sort(_unlabeled_keys(s))
    return k.size - np.searchsorted(k, np.asarray(thresholds, dtype=np.int64), side="left")


def _top_labels(s, key, n_ties):
    """Temporary labels: +1 on unlabeled rows with a key above ``key`` and on the first ``n_ties`` equal to it."""
    unl = s.problem.unl
    k = _unlabeled_keys(s)
    positive = k > key
    positive[np.flatnonzero(k == key)[:n_ties]] = True
    targets = s.targets.copy()
    targets[unl] = np.where(positive, 1.0, -1.0)
    return replace(s, targets=targets, reply=None)


def _candidates(s, o, max_switches):
    """The block's best switch candidates at the outputs ``o``: (outputs, rows) of each kind, at most
    ``max_switches``, in row order."""
    unl = s.problem.unl
    yu, ou = s.targets[unl], o[unl]
    out = []
    for kind, keys in ((yu > 0) & (ou < 1.0), ou), ((yu < 0) & (ou > -1.0), -ou):
        idx = np.flatnonzero(kind)
        if idx.size > max_switches:
            idx = np.sort(_smallest(idx, keys[idx], max_switches))
        out.append((ou[idx], idx))
    return out


def _switch_candidates(s, max_switches):
    return _candidates(s, s.o, max_switches)


def _solve_tail(s, o, max_switches):
    """What a solve's last round returns besides its own: the block's S3VM part and switch candidates at ``o``."""
    return {}, (_s3vm_part(s, o), _candidates(s, o, max_switches))


def _switch(s, to_negative, to_positive):
    targets = s.targets.copy()
    unl = s.problem.unl
    targets[unl[to_negative]] = -1.0
    targets[unl[to_positive]] = 1.0
    return replace(s, targets=targets, reply=None)


class DaskTSVMRows:
    """TSVM's rows interface (see :func:`~skssl.svm.solvers._tsvm.tsvm_loop`) on a cluster's blocks.

    ``mfn_options`` are the keyword arguments of every :func:`dask_mfn` solve;
    with ``max_switches``, every solve returns that many switch candidates per
    block and kind with its last round (``None``: a round of their own).
    """

    def __init__(self, rows, spec, mfn_options, max_switches=None):
        self.rows = rows
        self.spec = spec
        self.options = mfn_options
        self.alpha = mfn_options["alpha"]
        self.alpha_b = mfn_options.get("alpha_b")
        self.n_unl = spec.totals.n_unl
        self.max_switches = max_switches
        self.states = new_states(rows, spec)
        self.x_norm = solve_norm(rows)

    @property
    def states(self):
        """The blocks' states (futures); setting them forgets the last solve's tail."""
        return self._states

    @states.setter
    def states(self, states):
        self._states, self._tail = states, None

    def solve_labeled(self):
        return dask_mfn(
            self.rows, new_states(self.rows, self.spec, supervised=True), first=True,
            x_norm=solve_norm(self.rows, supervised=True), **self.options,
        )  # fmt: skip

    def supervised_result(self, res):
        states = self.rows.submit(_set_outputs, self.states, res.w, res.b)
        return states, s3vm_objective(self.rows, states, self.alpha, res.w, res.b, self.alpha_b)

    def start_labels(self, res, n_pos):
        rows = self.rows
        states = rows.submit(_set_outputs, self.states, res.w, res.b)
        if n_pos == 0:
            self.states = rows.submit(_top_labels, states, np.iinfo(np.int64).max, 0)
            return
        ranges = [r for r in rows.query(_key_range, states) if r is not None]
        # The n_pos-th largest key v: count(key >= lo) >= n_pos > count(key >= hi).
        lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges) + 1
        per_block_lo = per_block_hi = None
        while hi - lo > 1:
            step = max((hi - lo) // (SELECTION_THRESHOLDS + 1), 1)
            thresholds = list(range(lo + step, hi, step))[:SELECTION_THRESHOLDS]
            counts = np.array(rows.query(_key_counts, states, thresholds))  # (blocks, thresholds)
            enough = counts.sum(axis=0) >= n_pos
            j = int(np.count_nonzero(enough))  # counts fall with the threshold
            if j:
                lo, per_block_lo = thresholds[j - 1], counts[:, j - 1]
            if j < len(thresholds):
                hi, per_block_hi = thresholds[j], counts[:, j]
        if per_block_lo is None:
            per_block_lo = np.array(rows.query(_key_counts, states, [lo]))[:, 0]
        if per_block_hi is None:
            per_block_hi = np.array(rows.query(_key_counts, states, [hi]))[:, 0]
        # Keys above lo are positive, then the ties at lo in row order up to n_pos.
        ties = per_block_lo - per_block_hi
        room = n_pos - int(per_block_hi.sum())
        quota = np.minimum(ties, np.maximum(room - np.concatenate([[0], np.cumsum(ties)[:-1]]), 0))
        self.states = rows.submit(_top_labels, states, lo, each=[int(q) for q in quota])

    def set_unlabeled_cost(self, lam):
        self.states = self.rows.submit(_with_costs, self.states, lam)

    def solve(self, res, first):
        seed = {} if first else {"w": res.w, "b": res.b}
        tail = None if self.max_switches is None else (_solve_tail, self.max_switches)
        res = dask_mfn(self.rows, self.states, first=first, tail=tail, x_norm=self.x_norm, **seed, **self.options)
        self.states = res.outputs
        self._tail = res.tail  # (S3VM part, candidates) per block at these states, or None
        return res

    def switch(self, res, max_switches):
        if self._tail is not None and max_switches == self.max_switches:
            cands = [t[1] for t in self._tail]
        else:
            cands = self.rows.query(_switch_candidates, self.states, max_switches)
        pos = [c[0] for c in cands]
        neg = [c[1] for c in cands]
        n_p = np.array([p[0].size for p in pos])
        outputs = np.concatenate([p[0] for p in pos] + [q[0] for q in neg])
        labels = np.concatenate([np.ones(n_p.sum()), -np.ones(outputs.size - n_p.sum())])
        n = switch_labels(labels, outputs, np.arange(outputs.size), max_switches)
        if n == 0:
            return 0  # the states, and the tail, are unchanged
        # Split the switched candidates back into blocks.
        went_negative = np.flatnonzero(labels[: n_p.sum()] < 0)
        went_positive = np.flatnonzero(labels[n_p.sum() :] > 0)
        starts_p = np.concatenate([[0], np.cumsum(n_p)])
        n_n = np.array([q[0].size for q in neg])
        starts_n = np.concatenate([[0], np.cumsum(n_n)])
        each = []
        for i in range(len(cands)):
            to_neg = pos[i][1][went_negative[(went_negative >= starts_p[i]) & (went_negative < starts_p[i + 1])]
                               - starts_p[i]]  # fmt: skip
            to_pos = neg[i][1][went_positive[(went_positive >= starts_n[i]) & (went_positive < starts_n[i + 1])]
                               - starts_n[i]]  # fmt: skip
            each.append((to_neg, to_pos))
        self.states = self.rows.submit(_switch_each, self.states, each=each)
        return n

    def full_outputs(self, res):
        return res

    def objective(self, res):
        if self._tail is not None:  # the states are the solve's, at (res.w, res.b)
            return _half_penalty(self.alpha, res.w, res.b, self.alpha_b) + sum(t[0] for t in self._tail)
        return s3vm_objective(self.rows, self.states, self.alpha, res.w, res.b, self.alpha_b)

    def labels(self):
        return self.states


def _switch_each(s, switches):
    return _switch(s, *switches)
