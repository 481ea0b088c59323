"""The linear benchmarks' shared parts: SVMlin's build and run, skssl fits in a child process.

Each fit of either program runs in its own child process. SVMlin: the solver's CPU time as it prints it
(``clock()`` around the solver, file parsing left out), wall time between the lines that end the file reading
and report the solver's time, peak RSS (``VmHWM``) polled from ``/proc`` every 20 ms. skssl
(``_harness.run_in_child``): CPU (all threads) and wall time of ``fit`` alone, peak RSS during ``fit``
(high-water mark reset just before it) and that peak minus the RSS just before ``fit``.

SVMlin 1.0 is GPL: it is copied from its source folder into a temporary folder and built there with the system
C++ compiler, never into the repository. Its supervised mode (``-A 1``) reads past the end of the row subset
in ``Read()``; the build copy gets a one-line bounds guard (its only change).
"""

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _harness import ROOT, peak_rss_mb, run_in_child, shown_path, timed

from skssl.svm.defaults._cluster_fractions import fractions_from_clusters


def _svmlin_source():
    """``shared/reference/svmlin`` beside the repository, else in the first folder above the current one that
    holds it (the data's rule, ``skssl.datasets``); the former when neither has it."""
    beside = ROOT.parent / "shared" / "reference" / "svmlin"
    if beside.is_dir():
        return beside
    for folder in [Path.cwd(), *Path.cwd().parents]:
        if (folder / "shared" / "reference" / "svmlin").is_dir():
            return folder / "shared" / "reference" / "svmlin"
    return beside


DEFAULT_SVMLIN_SRC = _svmlin_source()

# The bounds guard for SVMlin's Read(): the row loop compares Subset->vec[t]
# with the row number after t has passed the last subset entry.
_GUARD_FROM = "if(Subset->vec[t]==i)"
_GUARD_TO = "if(t<Subset->d && Subset->vec[t]==i)"


ALPHA, LAM_U = 1e-3, 1.0  # SVMlin's lam and lam_u, every linear benchmark's
ESTIMATORS = {"TSVM": "TransductiveSVC", "DA": "DeterministicAnnealingSVC"}


def params(r, **more):
    """The S3VMs' parameters of the linear benchmarks, with class fraction ``r``."""
    return {"alpha": ALPHA, "unlabeled_weight": LAM_U, "positive_fraction": r, **more}


def objective(X, y_semi, w, b):
    """SVMlin's objective ``F`` (``transductive_cost``, lam = ALPHA, lam_u = LAM_U) of ``(w, b)`` on ``X``."""
    from skssl.svm.solvers._problem import transductive_cost

    y_pm = np.where(y_semi == 1, 1.0, -1.0)
    return transductive_cost(w, b, X @ w + b, y_pm, y_semi != -1, ALPHA, LAM_U)


def test_accuracy(w, b, X_test, y_test):
    """Accuracy (%) of the linear model ``(w, b)`` on the test rows (class 1 where ``X @ w + b > 0``)."""
    return float(100 * np.mean((X_test @ w + b > 0).astype(int) == y_test))


def csr_bytes(X):
    """Bytes of a CSR matrix's three arrays."""
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


# --------------------------------------------------------------------------- SVMlin


def build_svmlin(src, workdir):
    """Copy SVMlin's source to ``workdir/svmlin``, guard ``Read()``, build; return the binary or a reason."""
    src = Path(src)
    if not (src / "ssl.cpp").is_file():
        return None, f"no SVMlin source in {src}"
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if cxx is None:
        return None, "no C++ compiler (g++ / c++) on PATH"
    build = Path(workdir) / "svmlin"
    build.mkdir(parents=True, exist_ok=True)
    for name in ("ssl.cpp", "ssl.h", "svmlinear.cpp"):
        shutil.copy(src / name, build / name)
    main = (build / "svmlinear.cpp").read_text()
    if main.count(_GUARD_FROM) == 1:
        (build / "svmlinear.cpp").write_text(main.replace(_GUARD_FROM, _GUARD_TO))
    cmd = [cxx, "-O3", "-std=c++11", "svmlinear.cpp", "ssl.cpp", "-o", "svmlinear", "-lm"]
    proc = subprocess.run(cmd, cwd=build, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, "SVMlin build failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    where = shown_path(src)
    if Path(where).is_absolute() or where.startswith("../"):  # not in the repository: named by its option
        where = "SVMlin 1.0's source (`--svmlin-src`, not part of the repository)"
    return build / "svmlinear", f"built from {where} with {Path(cxx).name} -O3 -std=c++11 (Read() bounds guard)"


def write_svmlin_examples(X, path):
    """Rows of CSR ``X`` as SVMlin examples: ``index:value`` pairs, 1-based, one row a line."""
    X = sp.csr_matrix(X)
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            f.write(" ".join(f"{j + 1}:{v!r}" for j, v in zip(X.indices[lo:hi].tolist(), X.data[lo:hi].tolist())))
            f.write("\n")


def corpus_files(workdir, name, X, y):
    """Write a corpus for both programs once: SVMlin's examples and skssl's problem; returns their paths."""
    examples = Path(workdir) / f"{name}.examples"
    write_svmlin_examples(X, examples)
    return examples, save_problem(Path(workdir) / name, X, y)


def draw_files(workdir, name, l, seed, y_semi):
    """Write one label draw for both programs: SVMlin's labels and skssl's ``.npy`` target; returns their paths."""
    tag = Path(workdir) / f"{name}_l{l}_s{seed}"
    write_svmlin_labels(y_semi, tag.with_suffix(".labels"))
    np.save(tag.with_suffix(".y.npy"), y_semi)
    return tag.with_suffix(".labels"), str(tag.with_suffix(".y.npy"))


def write_svmlin_labels(y_semi, path):
    """skssl's target (0/1 classes, -1 unlabeled) as SVMlin labels (-1/+1, 0 unlabeled)."""
    lab = np.where(y_semi == -1, 0, np.where(y_semi == 1, 1, -1))
    np.savetxt(path, lab, fmt="%d")


_SOLVER_TIME = re.compile(r"([0-9.eE+-]+)\s+seconds")


def run_svmlin(binary, examples, labels, workdir, *, algo, r, n_features):
    """Run SVMlin's TSVM (``algo=2``, S = 10,000) or DA (``3``) once; return its weights, bias and measurements.

    SVMlin sizes its weights by the largest feature index it read; ``n_features`` pads them with zeros to the
    data's width.
    """
    workdir = Path(workdir)
    cmd = [str(binary), "-A", str(algo), "-W", repr(ALPHA), "-U", repr(LAM_U), "-R", repr(r)]
    cmd += ["-S", "10000", str(examples), str(labels)]
    # The line SVMlin prints when its solver ends (with the solver's CPU time).
    done = {2: "Transductive L2_SVM_MFN took", 3: "DA-SVM took"}[algo]
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # SVMlin allocates while it reads and keeps its memory to the end: poll its
    # VmHWM until it exits (ru_maxrss would report the forked Python parent).
    hwm = [0.0]
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            v = peak_rss_mb(proc.pid)
            if v is not None:
                hwm[0] = max(hwm[0], v)
            stop.wait(0.02)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    t_read = t_done = solver_cpu = None
    out = []
    for line in proc.stdout:
        now = time.perf_counter()
        out.append(line)
        if "Reading took" in line:
            t_read = now
        elif t_read is not None and solver_cpu is None and re.match(done, line):
            solver_cpu = float(_SOLVER_TIME.search(line).group(1))
            t_done = now
    # The solver has ended (its last line is read): the peak is reached; stop polling before reaping.
    stop.set()
    poller.join()
    proc.returncode = os.waitstatus_to_exitcode(os.waitpid(proc.pid, 0)[1])
    if proc.returncode != 0 or solver_cpu is None:
        raise RuntimeError(f"SVMlin failed ({proc.returncode}): {''.join(out[-5:])}")
    weights = np.loadtxt(workdir / (Path(examples).name + ".weights"))
    w = np.concatenate([weights[:-1], np.zeros(max(0, n_features - weights.size + 1))])
    return {"w": w, "b": float(weights[-1]), "cpu": solver_cpu, "wall": t_done - t_read, "rss_mb": hwm[0]}


# --------------------------------------------------------------------------- skssl in a child


def save_problem(path, X, y_semi):
    """Write a problem for :func:`run_skssl` (``.npz`` files beside ``path``)."""
    path = Path(path)
    sp.save_npz(path.with_suffix(".X.npz"), sp.csr_matrix(X), compressed=False)
    np.savez(path.with_suffix(".y.npz"), y_semi=np.asarray(y_semi))
    return path


def run_skssl(problem, estimator, params, *, threads=0, y_semi=None, timeout=None, resolved=False):
    """Fit ``estimator`` (a class name of ``skssl.svm``) with ``params`` on a saved problem in a child.

    ``threads=0`` gives the child the user's environment without thread variables; an int sets them
    all to it (``_harness.child_env``). ``y_semi`` (a path to a ``.npy`` file) overrides the saved target.
    ``resolved``: also return, under ``"resolved"``, what the fit chose (:func:`resolved_values`).
    """
    return run_in_child(
        fit_problem, str(problem), estimator, params, y_semi, resolved, threads=threads, timeout=timeout
    )


def fraction_used(est, X, y_semi):
    """``(fraction, how)``: the positive class's fraction of the unlabeled rows that the fit of ``est`` solved at.

    A given ``positive_fraction`` is that; a fitted ``class_fractions_`` is read where the estimator has one.
    Without it (skssl does not expose the fraction yet) the fraction is recomputed as ``fit`` computes it: the
    labeled rows' fractions, then the clusters' rule (``skssl.svm.defaults._cluster_fractions``), on the same
    rows. ``how`` says which of the three it was.
    """
    if est.positive_fraction is not None:
        return float(est.positive_fraction), "given"
    fitted = getattr(est, "class_fractions_", None)
    if fitted is not None:
        return float(np.ravel(fitted)[-1]), "class_fractions_"
    mask = y_semi != -1
    y_enc = np.where(mask, np.searchsorted(est.classes_, y_semi), 0)
    fractions = fractions_from_clusters(X, y_enc, mask, est._class_fractions(y_enc, mask))
    return float(fractions[-1]), "recomputed as fit computes it"


def resolved_values(est, X, y_semi):
    """What a fit of ``est`` chose for its one solve: ``alpha_``, ``intercept_scaling_``, the class fraction
    (:func:`fraction_used`; ``fraction_from`` says how it was found) and DA's ``initial_temperature_``."""
    fraction, how = fraction_used(est, X, y_semi)
    out = dict(alpha=float(est.alpha_), intercept_scaling=float(est.intercept_scaling_), positive_fraction=fraction)
    if hasattr(est, "initial_temperature_"):
        out["initial_temperature"] = float(est.initial_temperature_)
    return dict(out, fraction_from=how)


def one_solve_params(resolved):
    """The parameters of one solve at the values a fit with the defaults chose (:func:`resolved_values`)."""
    return {k: v for k, v in resolved.items() if k != "fraction_from"} | {"safeguard": None}


def fit_problem(problem, estimator, params, y_semi=None, resolved=False):
    """The child of :func:`run_skssl`: load the problem, time ``fit`` with its peak memory."""
    import skssl.svm

    problem = Path(problem)
    X = sp.load_npz(problem.with_suffix(".X.npz")).tocsr()
    y_semi = np.load(y_semi) if y_semi else np.load(problem.with_suffix(".y.npz"))["y_semi"]
    est = getattr(skssl.svm, estimator)(**params)
    with timed(memory=True) as t:
        est.fit(X, y_semi)
    out = dict(cpu=t.cpu, wall=t.wall, rss_mb=t.peak_rss_mb, fit_rss_growth_mb=t.rss_growth_mb)
    out.update(w=np.ravel(est.coef_), b=float(np.ravel(est.intercept_)[0]), n_iter=int(np.max(est.n_iter_)))
    if resolved:  # after the timed fit: the fraction may take a clustering of the rows to recompute
        out["resolved"] = resolved_values(est, X, y_semi)
    return dict(out, objective=float(np.ravel(est.objective_)[0]))
