"""Pin the models of a fixed set of problems before a refactor, and check after it that none moved.

    python tools/pin_models.py save PATH      # fit every case, write the fitted attributes to PATH (.npz)
    python tools/pin_models.py compare PATH   # fit again, compare with PATH; exit 1 if a model moved
    python tools/pin_models.py backends       # fit in memory and on Dask; exit 1 where the two differ

The cases are the four linear S3VMs with their defaults and with ``safeguard=None``, on dense, CSR, standardized
tabular and 3-class rows, in memory; with ``--dask`` the same estimators also fit on a Dask array of the same rows
(a local cluster of 2 workers), so that the in-memory and the Dask fit can be compared with each other and with
the pins. Coefficients are compared to ``RTOL`` relative (solver tolerance), labels exactly.
"""

import argparse
import logging
import sys
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_wine, make_classification
from sklearn.preprocessing import StandardScaler

from skssl.datasets import make_semi_supervised
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC

RTOL = 1e-5
ATOL = 1e-8
ATTRIBUTES = ("coef_", "intercept_", "transduction_", "alpha_", "intercept_scaling_", "initial_temperature_")
FLAGS = ("safeguard_fell_back_", "n_iter_")


def problems():
    """``name -> (X, y)``: small problems of each kind the estimators meet."""
    X, y = make_classification(240, 8, n_informative=5, n_redundant=0, random_state=0)
    out = {"dense": (X, make_semi_supervised(y, 20, random_state=0))}
    rng = np.random.RandomState(1)
    X_text = sp.random(300, 400, density=0.03, random_state=rng, format="csr")
    w = rng.randn(400)
    y_text = (X_text @ w > np.median(X_text @ w)).astype(int)
    out["csr"] = (X_text, make_semi_supervised(y_text, 30, random_state=1))
    X_bc, y_bc = load_breast_cancer(return_X_y=True)
    out["tabular"] = (StandardScaler().fit_transform(X_bc), make_semi_supervised(y_bc, 40, random_state=2))
    X_w, y_w = load_wine(return_X_y=True)
    out["wine3"] = (StandardScaler().fit_transform(X_w), make_semi_supervised(y_w, 24, random_state=3))
    return out


def estimators(n_classes):
    out = {"LinearL2SVC": LinearL2SVC()}
    for safeguard in ("default", None):
        params = {} if safeguard == "default" else {"safeguard": None}
        out[f"TransductiveSVC-{safeguard}"] = TransductiveSVC(**params)
        out[f"DeterministicAnnealingSVC-{safeguard}"] = DeterministicAnnealingSVC(**params)
        out[f"PottsDeterministicAnnealingSVC-{safeguard}"] = PottsDeterministicAnnealingSVC(**params)
    return out


def _record(est, X):
    rec = {}
    for name in ATTRIBUTES + FLAGS:
        value = getattr(est, name, None)
        if value is None:
            continue
        if hasattr(value, "compute"):
            value = value.compute()
        rec[name] = np.asarray(value, dtype=float)
    rec["predict"] = np.asarray(est.predict(X), dtype=float)
    return rec


def fit_all(dask):
    client = None
    if dask:
        import dask.array as da  # optional backend: only with --dask
        import distributed

        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, silence_logs=logging.ERROR
        )
        client = distributed.Client(cluster)
    out = {}
    try:
        for pname, (X, y) in problems().items():
            n_classes = len(np.unique(y[y != -1]))
            for ename, est in estimators(n_classes).items():
                if n_classes > 2 and ename.startswith(("Transductive", "DeterministicAnnealing")):
                    continue
                key = f"{pname}/{ename}"
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out[key] = _record(est.fit(X, y), X)
                    if dask:
                        chunks = (X.shape[0] // 2, X.shape[0] - X.shape[0] // 2)
                        X_d = da.from_array(X, chunks=(chunks, (X.shape[1],)), asarray=False)
                        y_d = da.from_array(y, chunks=(chunks,))
                        try:
                            out[key + "@dask"] = _record(est.fit(X_d, y_d), X)
                        except Exception as error:  # noqa: BLE001 - a fit that fails on Dask is reported, not fatal
                            print(f"{key}@dask: {type(error).__name__}: {error}", file=sys.stderr)
                print(key, file=sys.stderr)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    return out


def compare(pinned, fitted):
    moved = []
    for key, rec in fitted.items():
        if key not in pinned:
            moved.append(f"{key}: not pinned")
            continue
        for name, value in rec.items():
            old = pinned[key].get(name)
            if old is None:
                moved.append(f"{key}.{name}: not pinned")
            elif old.shape != value.shape:
                moved.append(f"{key}.{name}: shape {old.shape} -> {value.shape}")
            elif name in ("transduction_", "predict", "safeguard_fell_back_"):
                if not np.array_equal(old, value):
                    moved.append(f"{key}.{name}: {int((old != value).sum())} entries differ")
            elif not np.allclose(value, old, rtol=RTOL, atol=ATOL):
                scale = np.maximum(np.abs(old), ATOL)
                moved.append(f"{key}.{name}: max relative change {np.max(np.abs(value - old) / scale):.3g}")
    return moved


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("save", "compare", "backends"))
    parser.add_argument("path", nargs="?")
    parser.add_argument("--dask", action="store_true", help="also fit on a Dask array of the same rows")
    args = parser.parse_args(argv)
    if args.action != "backends" and args.path is None:
        parser.error(f"{args.action} needs a PATH")
    fitted = fit_all(args.dask or args.action == "backends")
    if args.action == "backends":
        in_memory = {key: rec for key, rec in fitted.items() if not key.endswith("@dask")}
        on_dask = {key[: -len("@dask")]: rec for key, rec in fitted.items() if key.endswith("@dask")}
        moved = compare(in_memory, on_dask)
        for line in moved:
            print(line)
        print(f"{len(on_dask)} Dask fits compared with their in-memory fits, {len(moved)} differences")
        return 1 if moved else 0
    if args.action == "save":
        flat = {f"{key}|{name}": value for key, rec in fitted.items() for name, value in rec.items()}
        np.savez(args.path, **flat)
        print(f"pinned {len(fitted)} models to {args.path}")
        return 0
    pinned = {}
    with np.load(args.path) as data:
        for flat_key in data.files:
            key, name = flat_key.split("|")
            pinned.setdefault(key, {})[name] = data[flat_key]
    moved = compare(pinned, fitted)
    for line in moved:
        print(line)
    print(f"{len(fitted)} models compared, {len(moved)} differences")
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main())
