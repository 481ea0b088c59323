"""Where the CPU of the S3VMs' default fits goes, stage by stage, against one solve at the values they chose::

    python benchmarks/defaults_profile.py --section before|after [--allow-dirty]

Each estimator with its defaults (``TransductiveSVC()``, ``DeterministicAnnealingSVC()``, and
``PottsDeterministicAnnealingSVC()`` on the multi-class set) is fitted on three sets of ``user_value.py`` that
no default was tuned on: a text set (``ng-med-space``, unseen: tf-idf, 50 labels), a binary tabular set
(``winequality-white``, held out) and a multi-class table (``abalone``, held out, 3 classes), the tables cut to
``MAX_ROWS`` training rows (stratified, seed 0) with 10% of their labels, label draw 0. The stage functions the
fit calls are wrapped here (never in the package) and the process's CPU time (``time.process_time``, all
threads) between their entries and exits is credited to the stage the outermost wrapper names:

* class fractions (the k-means of ``defaults._cluster_fractions``), alpha (the labeled rows' check of
  ``defaults._penalty_check``), temperature check (``defaults._annealing_start``), main solve;
* the safeguard's candidates, its agreement refit (the l2-SVM on the agreed rows), its cross-validated
  check's folds (with the share of the folds' own alpha, temperature and class-fraction work), and the
  final refit of the supervised model where the check falls back;
* the rest (validation, predictions).

The work is also counted, free of the machine's noise: the Newton steps and CGLS iterations of every
l2-SVM-MFN solve (``solvers._mfn.newton_solve``, on which every estimator's solves are built) in the default
fit and in the one solve below, and a second table gives each stage's CGLS iterations in one solves, the check's
supervised and semi-supervised folds apart.

Then the same estimator is fitted once at the values the default fit chose (``alpha_``,
``intercept_scaling_``, ``initial_temperature_``, the class fractions it used, ``safeguard=None``), and the
ratio of the two CPU times is given. A run writes its section of ``results/defaults_profile.md``; the other
section is kept, so that the file holds the profile before and after a change.
"""

import argparse
import functools
import time
import warnings
from collections import defaultdict

import numpy as np
import user_value as uv
from _harness import RESULTS_DIR, ResultsFile, add_allow_dirty, finish_sections, markdown_table, provenance

import skssl.svm._base as base
import skssl.svm._classes as classes
import skssl.svm.solvers._mfn as mfn
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC

#: Training rows of the tables (stratified cap, seed 0), so that the run stays within about ten CPU minutes.
MAX_ROWS = 1200
SETS = (("ng-med-space", ("tsvm", "da")), ("winequality-white", ("tsvm", "da")), ("abalone", ("tsvm", "da", "potts")))
ESTIMATORS = {"tsvm": TransductiveSVC, "da": DeterministicAnnealingSVC, "potts": PottsDeterministicAnnealingSVC}
STAGES = (
    "class fractions",
    "alpha",
    "temperature check",
    "main solve",
    "candidates",
    "agreement refit",
    "cross-validated check",
    "final refit",
    "rest",
)
NESTED = ("alpha", "temperature check", "class fractions")
SECTIONS = ("before", "after")
#: The stages of the main fit outside the safeguard; the outermost one on the stack takes the time.
TOP_LEVEL = ("temperature check", "alpha", "class fractions", "main solve")


class Profile:
    """CPU seconds by stack of stage labels; the wrappers push and pop labels as the fit enters and leaves them."""

    def __init__(self):
        self.stack = []
        self.seconds = defaultdict(float)
        self.mark = time.process_time()
        self.top_fractions = None

    def _credit(self):
        now = time.process_time()
        self.seconds[tuple(self.stack)] += now - self.mark
        self.mark = now

    def wrap(self, owner, name, label, record=None):
        original = getattr(owner, name, None)
        if original is None:
            return lambda: None
        profile = self

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            profile._credit()
            profile.stack.append(label(args) if callable(label) else label)
            try:
                out = original(*args, **kwargs)
                if record is not None:
                    record(profile, out)
                return out
            finally:
                profile._credit()
                profile.stack.pop()

        setattr(owner, name, wrapper)
        return lambda: setattr(owner, name, original)

    def stage_of(self, stack):
        """The stage of ``stack`` (labels, outermost first) and, inside the check's folds, the nested stage."""
        if "check" in stack:
            if "folds" not in stack:
                return "final refit", None
            nested = next((s for s in reversed(stack) if s in NESTED), None)
            return "cross-validated check", nested
        if "safeguard" in stack:
            inner = stack[stack.index("safeguard") + 1 :]
            if "joint refit" in inner or (inner and inner[0] == "fit LinearL2SVC"):
                return "agreement refit", None
            return ("candidates" if inner else "rest"), None
        return next((s for s in stack if s in TOP_LEVEL), "rest"), None

    def shares(self):
        total = sum(self.seconds.values())
        return (total, *self.by_stage(self.seconds))

    def by_stage(self, per_stack):
        """``per_stack`` (a figure by stack of labels) summed by stage, and inside the check's folds by nested stage."""
        out, nested = defaultdict(float), defaultdict(float)
        for stack, value in per_stack.items():
            stage, inner = self.stage_of(stack)
            out[stage] += value
            if inner:
                nested[inner] += value
        return out, nested


def _record_top_fractions(profile, out):
    if profile.stack == ["fit", "class fractions"]:
        profile.top_fractions = np.asarray(out, dtype=np.float64)


def instrument(profile):
    """Wrap the stage functions; returns the functions that undo it."""
    fit_label = lambda args: "fit" if not profile.stack else f"fit {type(args[0]).__name__}"  # noqa: E731
    undo = [
        profile.wrap(base._LinearFitMixin, "fit", fit_label),
        profile.wrap(base._LinearFitMixin, "_fit_for_parent", fit_label),
        profile.wrap(base, "fractions_from_clusters", "class fractions", _record_top_fractions),
        profile.wrap(base._LinearFitMixin, "_check_penalty_on_labeled_rows", "alpha"),
        profile.wrap(classes, "choose_initial_temperature", "temperature check"),
        profile.wrap(base._LinearFitMixin, "_apply_safeguard", "safeguard"),
        profile.wrap(base._LinearFitMixin, "_refit_jointly", "joint refit"),
        profile.wrap(base._LinearFitMixin, "_fall_back_where_held_out_labels_say", "check"),
        profile.wrap(base, "cross_validated_scores", "folds"),
        profile.wrap(base, "compare_on_folds", "folds"),
        profile.wrap(classes, "potts_annealing", "main solve"),
    ]
    for cls in (LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC):
        undo.append(profile.wrap(cls, "_solve", "main solve"))
    return undo


def load_split(name):
    dataset = uv.BY_NAME[name]
    data = dataset.load()
    if "X" in data and data.X.shape[0] * (1 - uv.TEST_SIZE) > MAX_ROWS:
        keep = uv._stratified_cap(data.y, int(MAX_ROWS / (1 - uv.TEST_SIZE)))
        data = type(data)(X=data.X.iloc[keep].reset_index(drop=True), y=data.y[keep], categorical=data.categorical)
    split = dataset.protocol(data, 0)
    X = split.X_train
    for step in split.preprocess:
        X = step.fit_transform(X)
    return X, split.y_semi


def used_fractions(est, profile):
    """The class fractions the default fit used: its ``class_fractions_``, else those the wrapper saw."""
    fractions = getattr(est, "class_fractions_", None)
    if fractions is None:
        fractions = profile.top_fractions
    fractions = np.asarray(fractions, dtype=np.float64)
    if fractions.shape[0] == 2 and not isinstance(est, PottsDeterministicAnnealingSVC):
        return float(fractions[-1])
    return fractions


def one_solve(est, fractions):
    params = {
        "alpha": est.alpha_,
        "intercept_scaling": est.intercept_scaling_,
        "positive_fraction": fractions,
        "safeguard": None,
    }
    if hasattr(est, "initial_temperature_"):
        params["initial_temperature"] = est.initial_temperature_
    return type(est)(**params)


class CountedWork:
    """Newton steps and CGLS iterations of the l2-SVM-MFN solves run inside the ``with`` block; with a
    ``profile``, the CGLS iterations also by the stack of stage labels the solve ran in (``cgls_by_stack``)."""

    def __init__(self, profile=None):
        self.profile = profile

    def __enter__(self):
        self.newton = self.cgls = 0
        self.cgls_by_stack = defaultdict(int)
        self._original = mfn.newton_solve

        def counting(*args, **kwargs):
            result = self._original(*args, **kwargs)
            self.newton += result.n_iter
            self.cgls += result.n_cg_iter
            if self.profile is not None:
                self.cgls_by_stack[tuple(self.profile.stack)] += result.n_cg_iter
            return result

        mfn.newton_solve = counting
        return self

    def __exit__(self, *exc):
        mfn.newton_solve = self._original


def profile_fit(method, X, y):
    profile = Profile()
    undo = instrument(profile)
    try:
        est = ESTIMATORS[method]()
        with CountedWork(profile) as work:
            profile.mark = time.process_time()
            est.fit(X, y)
            profile._credit()
    finally:
        for restore in reversed(undo):
            restore()
    total, shares, nested = profile.shares()
    cgls_stages, _ = profile.by_stage(work.cgls_by_stack)
    single = one_solve(est, used_fractions(est, profile))
    with CountedWork() as single_work:
        start = time.process_time()
        single.fit(X, y)
        solve_cpu = time.process_time() - start
    return {
        "total": total,
        "shares": dict(shares),
        "nested": dict(nested),
        "solve": solve_cpu,
        "fell_back": getattr(est, "safeguard_fell_back_", None),
        "cgls": (work.cgls, single_work.cgls),
        "newton": (work.newton, single_work.newton),
        "cgls_stages": dict(cgls_stages),
        "cgls_check_supervised": sum(n for stack, n in work.cgls_by_stack.items() if _in_supervised_fold(stack)),
    }


def run(lines_out):
    rows, work_rows = [], []
    for name, methods in SETS:
        X, y = load_split(name)
        shape = f"{X.shape[0]} x {X.shape[1]}, {int((y != -1).sum())} labels, {np.unique(y[y != -1]).size} classes"
        for method in methods:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = profile_fit(method, X, y)
            cells = [name, shape, type(ESTIMATORS[method]()).__name__, f"{r['total']:.2f}"]
            cells += [f"{100 * r['shares'].get(s, 0.0) / r['total']:.0f}" for s in STAGES]
            cells += [f"{100 * r['nested'].get(s, 0.0) / r['total']:.0f}" for s in NESTED]
            cells += [f"{r['solve']:.2f}", f"{r['total'] / r['solve']:.1f}", str(r["fell_back"])]
            (newton, newton_one), (cgls, cgls_one) = r["newton"], r["cgls"]
            cells += [f"{newton} / {newton_one}", f"{cgls} / {cgls_one}", f"{cgls / cgls_one:.1f}"]
            print(" | ".join(cells), flush=True)
            rows.append(cells)
            work_rows.append([name, cells[2], str(cgls_one), *_in_one_solves(r, cgls_one)])
    header = ["set", "rows", "estimator", "CPU s", *[f"{s} %" for s in STAGES]]
    header += [f"check's folds: {s} %" for s in NESTED]
    header += ["one solve CPU s", "ratio", "fell back"]
    header += ["Newton steps: default / one solve", "CGLS iterations: default / one solve", "CGLS ratio"]
    lines_out.append(markdown_table(header, rows))
    work_header = ["set", "estimator", "one solve: CGLS iterations", *WORK_COLUMNS]
    lines_out.append(WORK_TITLE + markdown_table(work_header, work_rows))


#: The second table's stages: the first table's, with the cross-validated check split into its supervised fits
#: (with their own alpha checks) and its semi-supervised ones, and the whole default fit last.
WORK_COLUMNS = (
    *[s for s in STAGES if s != "cross-validated check"][:-2],
    "check: supervised folds",
    "check: semi-supervised folds",
    "final refit",
    "rest",
    "all",
)
WORK_TITLE = (
    "\n\nThe same fits' CGLS iterations by stage, in one solves: a stage's CGLS iterations over those of the one "
    "solve (deterministic, unlike the CPU shares above).\n\n"
)


def _in_one_solves(r, cgls_one):
    """The cells of the second table for one profiled fit ``r``."""
    by_stage = defaultdict(float, r["cgls_stages"])
    check = by_stage.pop("cross-validated check", 0.0)
    supervised = r["cgls_check_supervised"]
    by_stage["check: supervised folds"], by_stage["check: semi-supervised folds"] = supervised, check - supervised
    by_stage["all"] = r["cgls"][0]
    return [f"{by_stage[column] / cgls_one:.2f}" for column in WORK_COLUMNS]


def _in_supervised_fold(stack):
    """Whether ``stack`` is inside a supervised fit of the cross-validated check's folds."""
    if "check" not in stack or "folds" not in stack:
        return False
    inner = stack[stack.index("folds") + 1 :]
    return bool(inner) and inner[0] == "fit LinearL2SVC"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--section", choices=SECTIONS, required=True, help="which section of the file this run is")
    add_allow_dirty(parser)
    args = parser.parse_args()
    results = ResultsFile(RESULTS_DIR / "defaults_profile.md", allow_dirty=args.allow_dirty)
    # A tiny fit first, so that no profile pays for the first imports and compilations.
    warm_X, warm_y = load_split("winequality-white")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TransductiveSVC(safeguard=None).fit(warm_X[:200], np.where(np.arange(200) < 40, warm_y[:200], -1))
    lines = []
    run(lines)
    header = (
        "# The S3VMs' default fits, stage by stage, against one solve at the values they chose\n\n"
        "Written by `benchmarks/defaults_profile.py` (its docstring gives the protocol). Shares in % of the "
        "default fit's CPU; the three `check's folds` columns are the part of the cross-validated check's share "
        "spent in the folds' own alpha check, temperature check and class fractions. `one solve`: the estimator "
        "at `alpha_`, `intercept_scaling_`, `initial_temperature_`, the class fractions used and "
        "`safeguard=None`; `ratio`: the default fit's CPU over it; `fell back`: whether the cross-validated check "
        "returned the supervised model (None: the check did not run); the last three columns count the work of "
        "every l2-SVM-MFN solve in the default fit and in the one solve, and the second table each stage's CGLS "
        "iterations over the one solve's (the before section predates both).\n\n"
    )
    titles = {
        "before": "Before (the stages as they were)",
        "after": "After (nothing computed twice, the check before the candidates)",
    }
    body = f"## {titles[args.section]}\n\n{provenance()}\n\n" + "".join(lines)
    finish_sections(results, header, {args.section: body}, SECTIONS, only=[args.section])


if __name__ == "__main__":
    main()
