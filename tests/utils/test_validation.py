"""Malformed sparse input gets a ValueError before any scipy or compiled routine reads it."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.utils import validation
from skssl.utils.validation import check_sparse_structure

# Every way a hand-edited CSR matrix can be broken; each takes (X, rng) and breaks X in place.
MALFORMATIONS = {
    "index equal to n_features": lambda X, rng: X.indices.__setitem__(rng.randint(X.nnz), _n_minor(X)),
    "index -1": lambda X, rng: X.indices.__setitem__(rng.randint(X.nnz), -1),
    "index 10**8": lambda X, rng: X.indices.__setitem__(rng.randint(X.nnz), 10**8),
    "index -2**31+5": lambda X, rng: X.indices.__setitem__(rng.randint(X.nnz), -(2**31) + 5),
    "int64 index 2**40": lambda X, rng: _set_int64(X, "indices", rng.randint(X.nnz), 2**40),
    "indptr[-1] beyond nnz": lambda X, rng: X.indptr.__setitem__(-1, X.nnz + 1 + rng.randint(5)),
    "indptr[-1] short of nnz": lambda X, rng: X.indptr.__setitem__(-1, X.nnz - 1 - rng.randint(3)),
    "negative jump in indptr": lambda X, rng: _jump(X, rng, -1 - rng.randint(5)),
    "huge jump in indptr": lambda X, rng: _jump(X, rng, 10**9),
    "indptr starts above 0": lambda X, rng: X.indptr.__setitem__(0, 1 + rng.randint(3)),
    "indptr too long": lambda X, rng: setattr(X, "indptr", np.append(X.indptr, X.indptr[-1])),
    "indptr too short": lambda X, rng: setattr(X, "indptr", X.indptr[:-1].copy()),
    "indices shorter than data": lambda X, rng: setattr(X, "indices", X.indices[: -1 - rng.randint(3)].copy()),
    "float indices": lambda X, rng: setattr(X, "indices", X.indices.astype(np.float64)),
    "2-D indptr": lambda X, rng: setattr(X, "indptr", X.indptr[:, None].copy()),
}


def _set_int64(X, name, position, value):
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    getattr(X, name)[position] = value


def _jump(X, rng, delta):
    """indptr[line] moved to delta past indptr[line - 1] (negative: below it)."""
    line = 1 + rng.randint(X.indptr.size - 2)
    X.indptr[line] = X.indptr[line - 1] + delta


def _n_minor(X):
    """The bound of the stored indices: columns for CSR, rows for CSC."""
    return X.shape[1] if X.format == "csr" else X.shape[0]


def _sound_csr(rng, n_rows=60, n_features=12):
    X = sp.random(n_rows, n_features, density=0.3, format="csr", random_state=rng)
    X.sum_duplicates()
    return X


@pytest.mark.parametrize("kind", sorted(MALFORMATIONS))
def test_every_malformation_is_named(kind):
    for seed in range(25):
        rng = np.random.RandomState(seed)
        X = _sound_csr(rng)
        assert X.nnz > 10
        MALFORMATIONS[kind](X, rng)
        with pytest.raises(ValueError, match="malformed structure"):
            check_sparse_structure(X)


@pytest.mark.parametrize("compiled", [True, False])
def test_random_corruptions_never_pass(compiled, monkeypatch):
    """A random entry of indptr or indices set to a random value: sound iff scipy's full check passes."""
    if not compiled:
        monkeypatch.setattr(validation, "_compiled_first_error", None)
    elif validation._compiled_first_error is None:
        pytest.skip("skssl's compiled structure check is not built")
    for seed in range(300):
        rng = np.random.RandomState(seed)
        X = _sound_csr(rng, n_rows=1 + rng.randint(30), n_features=1 + rng.randint(10))
        name = "indptr" if rng.rand() < 0.5 else "indices"
        array = getattr(X, name)
        if array.size == 0:
            continue
        array[rng.randint(array.size)] = rng.randint(-3, 2 * max(X.shape) + 3)
        try:
            X.check_format(full_check=True)
            # scipy accepts indptr ending short of the stored arrays (it prunes); skssl does not.
            sound = X.indptr[-1] == X.indices.size
        except ValueError:
            sound = False
        if sound:
            assert check_sparse_structure(X) is X
        else:
            with pytest.raises(ValueError, match="malformed structure"):
                check_sparse_structure(X)


def test_sound_input_is_not_copied():
    X = _sound_csr(np.random.RandomState(0))
    assert check_sparse_structure(X) is X
    assert check_sparse_structure(X.tocsc()).format == "csc"
    dense = np.ones((3, 2))
    assert check_sparse_structure(dense) is dense


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.uint32, np.int8])
def test_other_integer_index_types_are_converted_without_touching_the_input(dtype):
    X = _sound_csr(np.random.RandomState(0))
    Y = X.copy()
    Y.indices = Y.indices.astype(dtype)
    Y.indptr = Y.indptr.astype(np.int64 if dtype != np.int16 else np.int32)
    checked = check_sparse_structure(Y)
    assert checked is not Y and checked.indices.dtype in (np.int32, np.int64)
    assert Y.indices.dtype == dtype
    assert (checked != X).nnz == 0


@pytest.mark.parametrize(
    "indptr_dtype, indices_dtype", [(np.int64, np.int32), (np.int32, np.int64), (np.uint32, np.int32)]
)
def test_index_arrays_of_different_types_get_one_type(indptr_dtype, indices_dtype):
    # scipy 1.9.2 (the oldest supported) refuses to index the rows of a matrix whose two index arrays differ.
    X = sp.random(20, 7, density=0.3, format="csr", random_state=0)
    X.indptr, X.indices = X.indptr.astype(indptr_dtype), X.indices.astype(indices_dtype)
    checked = check_sparse_structure(X)
    assert checked.indptr.dtype == checked.indices.dtype == np.int64
    assert X.indptr.dtype == indptr_dtype and X.indices.dtype == indices_dtype  # the input is not touched
    np.testing.assert_array_equal(checked[[3, 1, 5]].toarray(), X.toarray()[[3, 1, 5]])


def test_strided_arrays_become_contiguous():
    X = _sound_csr(np.random.RandomState(0))
    Y = X.copy()
    Y.data = np.repeat(Y.data, 2)[::2]
    checked = check_sparse_structure(Y)
    assert checked.data.flags.c_contiguous and not Y.data.flags.c_contiguous
    assert (checked != X).nnz == 0


@pytest.mark.parametrize("fmt", ["csc", "coo", "bsr"])
def test_other_formats_are_checked_against_their_own_axes(fmt):
    X = _sound_csr(np.random.RandomState(0), n_rows=60, n_features=12)
    Y = X.asformat(fmt) if fmt != "bsr" else X.tobsr(blocksize=(2, 3))
    assert check_sparse_structure(Y) is Y
    if fmt == "csc":
        Y.indices[0] = X.shape[0]
    elif fmt == "coo":
        Y.col[0] = X.shape[1]
    else:
        Y.indices[0] = X.shape[1] // 3
    with pytest.raises(ValueError, match="out of range"):
        check_sparse_structure(Y)


def test_lil_and_dok_are_checked_after_a_safe_conversion():
    X = _sound_csr(np.random.RandomState(0))
    assert check_sparse_structure(X.tolil()).format == "csr"
    assert check_sparse_structure(X.todok()).format == "coo"


# Each malformation reaches every entry point in a child process: a crash (a signal) or a
# silent fit fails the test, whatever the interpreter's state afterwards.
_CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    sys.path.insert(0, {tests_dir!r})
    from test_validation import MALFORMATIONS, _sound_csr
    from sklearn.linear_model import LogisticRegression
    from skssl.model_selection import SemiSupervisedKFold, labeled_scorer
    from skssl.self_training import CurriculumLabelingClassifier, LabeledOnlyClassifier
    from skssl.svm import (DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC,
                           TransductiveSVC)

    n_jobs = int(sys.argv[1])
    rng = np.random.RandomState(0)
    X_good = _sound_csr(rng)
    y = np.where(np.arange(60) % 4 == 0, np.arange(60) % 3, -1)
    fitted = {{Est: Est(max_iter=3, n_jobs=n_jobs).fit(X_good, y)
              for Est in (LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC,
                          PottsDeterministicAnnealingSVC)}}
    curriculum = CurriculumLabelingClassifier(LogisticRegression()).fit(X_good, y)
    baseline = LabeledOnlyClassifier(LogisticRegression()).fit(X_good, y)
    failures = []

    def expect_value_error(what, call):
        try:
            call()
        except ValueError:
            return
        except Exception as exc:  # a TypeError or IndexError is not a clear error either
            failures.append(f"{{what}}: {{type(exc).__name__}}: {{exc}}")
            return
        failures.append(f"{{what}}: no error")

    for kind, corrupt in sorted(MALFORMATIONS.items()):
        for fmt in ("csr", "csc"):
            X = X_good.asformat(fmt, copy=True)
            corrupt(X, np.random.RandomState(1))
            for Est, est in fitted.items():
                name = Est.__name__
                expect_value_error(f"{{kind}} {{fmt}} {{name}}.fit",
                                   lambda: Est(max_iter=3, n_jobs=n_jobs).fit(X, y))
                expect_value_error(f"{{kind}} {{fmt}} {{name}}.predict", lambda: est.predict(X))
                expect_value_error(f"{{kind}} {{fmt}} {{name}}.score", lambda: est.score(X, y))
            expect_value_error(f"{{kind}} {{fmt}} Curriculum.fit",
                               lambda: CurriculumLabelingClassifier(LogisticRegression()).fit(X, y))
            expect_value_error(f"{{kind}} {{fmt}} Curriculum.predict", lambda: curriculum.predict(X))
            expect_value_error(f"{{kind}} {{fmt}} LabeledOnly.fit",
                               lambda: LabeledOnlyClassifier(LogisticRegression()).fit(X, y))
            for method in ("predict", "predict_proba", "decision_function"):
                expect_value_error(f"{{kind}} {{fmt}} LabeledOnly.{{method}}", lambda: getattr(baseline, method)(X))
            expect_value_error(f"{{kind}} {{fmt}} split", lambda: list(SemiSupervisedKFold(3).split(X, y)))
            expect_value_error(f"{{kind}} {{fmt}} scorer",
                               lambda: labeled_scorer("accuracy")(fitted[LinearL2SVC], X, y))
    print("\\n".join(failures) if failures else "all clean")
    """
)


# Two threads in the whole suite: the input checks come before the kernels, whatever their threads.
@pytest.mark.parametrize("n_jobs", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_malformed_input_never_crashes_an_entry_point(n_jobs, tmp_path):
    import os

    tests_dir = os.path.dirname(__file__)
    script = tmp_path / "child.py"
    script.write_text(_CHILD.format(tests_dir=tests_dir))
    result = subprocess.run([sys.executable, str(script), str(n_jobs)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"child died (code {result.returncode}):\n{result.stderr[-3000:]}"
    assert result.stdout.strip().endswith("all clean"), result.stdout[-3000:]
