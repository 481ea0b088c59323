"""benchmarks/defaults_vs_svmlin.py on tiny problems: one solve at the defaults' values, the rows, the run."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils import Bunch

from skssl.svm import DeterministicAnnealingSVC, TransductiveSVC

from ._benchmarks import as_repository, load_benchmark


@pytest.fixture(scope="module")
def dvs():
    return load_benchmark("defaults_vs_svmlin")


@pytest.fixture(scope="module")
def lsp(dvs):
    return dvs.lsp


def _blobs(seed=0, n=200, n_features=20):
    """Two blobs of nonnegative sparse rows; the labeled rows say 80% / 20%, the clusters half and half."""
    rng = np.random.RandomState(seed)
    y = np.repeat([0, 1], n // 2)
    centres = np.zeros((2, n_features))
    centres[0, : n_features // 2] = centres[1, n_features // 2 :] = 1.0
    X = np.abs(centres[y] + 0.3 * rng.randn(n, n_features)) * (rng.rand(n, n_features) < 0.6)
    y_semi = np.full(n, -1)
    y_semi[:16] = 0
    y_semi[n // 2 : n // 2 + 4] = 1
    return sp.csr_matrix(X), y, y_semi


@pytest.mark.parametrize("estimator", [TransductiveSVC, DeterministicAnnealingSVC])
def test_one_solve_at_the_values_the_defaults_chose_is_the_defaults_solve(lsp, estimator):
    # Without the safeguard, a fit with the defaults is one solve at the values it chose: the benchmark's
    # "one solve" column must be that solve, the class fraction from the clusters included.
    X, _, y_semi = _blobs()
    defaults = estimator(safeguard=None).fit(X, y_semi)
    resolved = lsp.resolved_values(defaults, X, y_semi)
    assert abs(resolved["positive_fraction"] - 0.2) > 0.1  # the clusters moved it off the labeled rows' 0.2
    assert ("initial_temperature" in resolved) == (estimator is DeterministicAnnealingSVC)
    one = estimator(**lsp.one_solve_params(resolved)).fit(X, y_semi)
    assert one.safeguard is None and one.alpha == defaults.alpha_
    np.testing.assert_allclose(one.coef_, defaults.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(one.intercept_, defaults.intercept_, rtol=1e-10, atol=1e-12)


def test_a_given_fraction_is_the_fraction_used(lsp):
    X, _, y_semi = _blobs(1)
    est = TransductiveSVC(alpha=1e-2, positive_fraction=0.3).fit(X, y_semi)
    assert lsp.fraction_used(est, X, y_semi) == (0.3, "given")


def _corpus(name, seed):
    X, y, _ = _blobs(seed, n=240)
    X_test, y_test, _ = _blobs(seed + 10, n=60)
    return Bunch(name=name, X=X, y=y, X_test=X_test, y_test=y_test)


@pytest.mark.slow  # a whole run of the script on a tiny problem, in child processes
def test_a_run_without_svmlin_writes_the_skssl_columns_to_a_partial_table(dvs, tmp_path, monkeypatch):
    as_repository(tmp_path, monkeypatch)
    results = tmp_path / "benchmarks" / "results" / "defaults_vs_svmlin.md"
    monkeypatch.setattr(dvs, "RESULTS", results)
    monkeypatch.setattr(dvs, "LOADERS", {"20ng": lambda data: _corpus("tiny", 0), "polarity": None})
    argv = ["--svmlin-src", str(tmp_path / "no-svmlin"), "--corpora", "20ng", "--methods", "DA"]
    dvs.main([*argv, "--configs", "20:0", "--repeats", "1"])
    assert not results.exists()
    text = results.with_name("defaults_vs_svmlin.partial.md").read_text()
    assert "SVMlin not measured: no SVMlin source in" in text
    row = next(line for line in text.splitlines() if line.startswith("| tiny |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    head = [c.strip() for c in dvs.markdown_row(dvs.HEADER).strip("|").split("|")]
    assert len(cells) == len(head)
    cell = dict(zip(head, cells))
    assert cell["method"] == "DA" and cell["T0"] != "–"
    assert cell["SVMlin wall s"] == cell["wall (2) / SVMlin"] == cell["test % SVMlin"] == "–"
    assert float(cell["defaults / one solve CPU (1)"]) > 0 and 0 <= float(cell["test % one solve"]) <= 100
    assert "r used: skssl's estimators do not yet expose" in text or "class_fractions_" in text
    assert "tiny DA: the defaults cost" in text


@pytest.mark.slow  # builds SVMlin and runs both programs in child processes
def test_rows_beside_svmlin(dvs, lsp, tmp_path):
    svmlin, how = lsp.build_svmlin(lsp.DEFAULT_SVMLIN_SRC, tmp_path)
    if svmlin is None:
        pytest.skip(f"SVMlin cannot be built here: {how}")
    assert "not part of the repository" in how and "../shared" not in how  # the GPL source is named by its option
    lines = []
    rows = dvs.run_corpus(_corpus("tiny", 3), [(20, 0)], ["TSVM"], svmlin, tmp_path, 1, lines.append)
    (row,) = rows
    assert row["ratio2"] > 0 and 0 <= row["acc_svmlin"] <= 100 and row["price_wall"] > 0
    cells = [c.strip() for c in lines[0].strip("|").split("|")]
    assert len(cells) == len(dvs.HEADER) and cells[7] == "–"  # no T0 for TSVM
    assert "target <= 1.0: met on" in dvs.summary("tiny", rows)[0]


def test_reductions(dvs):
    assert dvs.reductions(dvs.parse_args([])) == []
    for argv, word in [
        (["--quick"], "--quick"),
        (["--repeats", "1"], "--repeats 1"),
        (["--methods", "TSVM"], "--methods"),
        (["--corpora", "20ng"], "--corpora"),
        (["--configs", "100:0"], "--configs"),
    ]:
        assert any(word in r for r in dvs.reductions(dvs.parse_args(argv))), argv
    assert dvs.configs_of(dvs.parse_args(["--configs", "100:0", "500:2"])) == [(100, 0), (500, 2)]
    assert dvs.configs_of(dvs.parse_args(["--quick"])) == dvs.QUICK_CONFIGS
