"""The 20 Newsgroups readers (local tarball, scikit-learn's download) and the benchmark protocol."""

import hashlib
import io
import shutil
import tarfile
import urllib.error
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.datasets import DatasetUnavailableError, fetch_20newsgroups_bydate
from skssl.datasets import _locate as locate
from skssl.datasets._newsgroups import (
    load_20newsgroups_archive,
    load_newsgroups_binary,
    newsgroups_labeled_subset,
)

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "20news-bydate.tgz"

# sha256 of the binary task's matrices and labels, computed from the local archive
# before the scikit-learn fallback was added (see _protocol_checksum).
PROTOCOL_SHA256 = "badef9269724f50ef30bbf2e032c62af8accea6c8622058ef9564ec535d83212"


def _protocol_checksum(data):
    h = hashlib.sha256()
    for X in (data.X_train, data.X_test):
        X = X.copy()
        X.sort_indices()
        for a in (np.asarray(X.shape), X.indptr, X.indices, X.data):
            h.update(np.ascontiguousarray(a, dtype=np.float64 if a is X.data else np.int64).tobytes())
    for y in (data.y_train, data.y_test, data.groups_train, data.groups_test):
        h.update(np.ascontiguousarray(y, dtype=np.int64).tobytes())
    return h.hexdigest()


@pytest.fixture
def no_local_data(monkeypatch):
    """Hide every local copy: no $SKSSL_DATA, no shared/data folder anywhere."""
    monkeypatch.delenv(locate.ENV_VAR, raising=False)
    monkeypatch.setattr(locate, "_search_roots", lambda: [])


def _fake_download(monkeypatch, archive):
    """Make scikit-learn's 20NG downloader copy ``archive`` instead of using the network.

    Everything else (extraction, ``load_files``, the cache, ``fetch_20newsgroups``) is
    scikit-learn's real code.
    """
    twenty = pytest.importorskip("sklearn.datasets._twenty_newsgroups")
    if not hasattr(twenty, "_fetch_remote"):
        pytest.skip("this scikit-learn version downloads 20 Newsgroups differently")
    calls = []

    def fetch_remote(remote, dirname=None, n_retries=3, delay=1):
        calls.append(remote.url)
        target = Path(dirname) / remote.filename
        shutil.copyfile(archive, target)
        return str(target)

    monkeypatch.setattr(twenty, "_fetch_remote", fetch_remote)
    return calls


def _sklearn_layout(src, dst):
    """Repack a bydate tarball as the original download is laid out: no leading folder."""
    with tarfile.open(src, "r:*") as tin, tarfile.open(dst, "w:gz") as tout:
        for info in tin:
            parts = info.name.split("/")
            if info.isfile() and len(parts) >= 3 and parts[-3].startswith("20news-bydate-"):
                data = tin.extractfile(info).read()
                info.name = "/".join(parts[-3:])
                tout.addfile(info, io.BytesIO(data))
    return dst


def _add(tar, name, text):
    raw = text.encode("latin-1")
    info = tarfile.TarInfo(name)
    info.size = len(raw)
    tar.addfile(info, io.BytesIO(raw))


@pytest.fixture
def tiny_tarball(tmp_path):
    path = tmp_path / "tiny.tgz"
    with tarfile.open(path, "w:gz") as tar:
        # Archive order is deliberately not the protocol's order.
        _add(tar, "20ng/20news-bydate-train/sci.space/10", "Subject: b\n\nrocket orbit moon")
        _add(tar, "20ng/20news-bydate-train/sci.space/9", "Subject: a\n\nrocket launch\tmoon")
        _add(tar, "20ng/20news-bydate-train/alt.atheism/100", "From: x\n\ngod belief \xe9t\xe9")
        _add(tar, "20ng/20news-bydate-train/comp.graphics/5", "From: y\tz\n\npixel image")
        _add(tar, "20ng/20news-bydate-train/rec.autos/7", "no header blank line here")
        _add(tar, "20ng/20news-bydate-test/sci.space/11", "Subject: c\n\nmoon rocket")
        _add(tar, "20ng/20news-bydate-test/rec.autos/8", "Subject: d\n\ncar engine image")
    return path


def test_protocol_order_headers_and_tabs(tiny_tarball):
    raw = load_20newsgroups_archive(tiny_tarball)
    assert raw.target_names == ["alt.atheism", "comp.graphics", "rec.autos", "sci.space"]
    # Groups sorted, files in numeric order (9 before 10), headers dropped.
    assert raw.data_train[0] == "god belief \xe9t\xe9"
    assert raw.data_train[2] == "no header blank line here"
    assert raw.data_train[3:] == ["rocket launch\nmoon", "rocket orbit moon"]
    np.testing.assert_array_equal(raw.target_train, [0, 1, 2, 3, 3])
    assert raw.data_test == ["car engine image", "moon rocket"]
    np.testing.assert_array_equal(raw.target_test, [2, 3])


def test_tab_is_replaced_before_the_header_is_cut(tiny_tarball):
    raw = load_20newsgroups_archive(tiny_tarball)
    # "From: y\tz\n\npixel image" -> "From: y\nz\n\npixel image" -> body "pixel image"
    assert raw.data_train[1] == "pixel image"


def test_binary_task_and_vectorizer_fitted_on_train(tiny_tarball):
    data = load_newsgroups_binary(tiny_tarball)
    np.testing.assert_array_equal(data.y_train, [0, 1, 0, 1, 1])
    np.testing.assert_array_equal(data.y_test, [0, 1])
    # min_df=2 on train only: "moon" and "rocket" appear in 2+ train documents.
    assert sorted(data.vectorizer.vocabulary_) == ["moon", "rocket"]
    assert sp.isspmatrix_csr(data.X_train) and data.X_train.shape == (5, 2)
    assert data.X_test.shape == (2, 2) and data.X_test[0].nnz == 0


def test_bad_tarball(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_20newsgroups_archive(tmp_path / "missing.tgz")
    path = tmp_path / "other.tgz"
    with tarfile.open(path, "w:gz") as tar:
        _add(tar, "docs/readme.txt", "hello")
    with pytest.raises(ValueError, match="20news-bydate"):
        load_20newsgroups_archive(path)


def test_labeled_subset_follows_the_protocol():
    y = np.array([0] * 95 + [1] * 5)
    y_semi, r = newsgroups_labeled_subset(y, 4, seed=3)
    rng = np.random.RandomState(3)
    while True:  # the protocol, spelled out
        rows = np.sort(rng.choice(100, 4, replace=False))
        if len(set(y[rows])) == 2:
            break
    np.testing.assert_array_equal(np.flatnonzero(y_semi != -1), rows)
    np.testing.assert_array_equal(y_semi[rows], y[rows])
    assert r == pytest.approx(np.mean(y[y_semi == -1] == 1))
    again, _ = newsgroups_labeled_subset(y, 4, seed=3)
    np.testing.assert_array_equal(again, y_semi)
    with pytest.raises(ValueError, match="n_labeled"):
        newsgroups_labeled_subset(y, 1, seed=0)
    with pytest.raises(ValueError, match="one class"):
        newsgroups_labeled_subset(np.zeros(10), 3, seed=0)


@pytest.mark.slow
def test_real_tarball_has_design_shape():
    if not DATA.is_file():
        pytest.skip(f"20 Newsgroups tarball not found at {DATA}")
    data = load_newsgroups_binary(DATA)
    assert data.X_train.shape == (11314, 53724)
    assert data.X_test.shape == (7532, 53724)
    assert abs(data.X_train.nnz - 1_540_000) < 10_000
    assert len(data.target_names) == 20
    assert 0.4 < data.y_train.mean() < 0.55


def _same_documents(a, b):
    assert a.target_names == b.target_names
    for split in ("train", "test"):
        assert a[f"data_{split}"] == b[f"data_{split}"]
        np.testing.assert_array_equal(a[f"target_{split}"], b[f"target_{split}"])


def test_missing_given_path_raises_one_catchable_error(tmp_path):
    with pytest.raises(DatasetUnavailableError, match="not found"):
        fetch_20newsgroups_bydate(tmp_path / "missing.tgz")
    # Old callers catching FileNotFoundError keep working.
    assert issubclass(DatasetUnavailableError, FileNotFoundError)


def test_local_archive_found_through_the_environment(tiny_tarball, no_local_data, monkeypatch):
    monkeypatch.setenv(locate.ENV_VAR, str(tiny_tarball.parent))
    target = tiny_tarball.parent / "20news-bydate.tgz"
    tiny_tarball.rename(target)
    news = fetch_20newsgroups_bydate()
    assert news.source == str(target)
    assert news.target_names == ["alt.atheism", "comp.graphics", "rec.autos", "sci.space"]


def test_local_archive_found_in_a_parent_shared_data_folder(tiny_tarball, tmp_path, monkeypatch):
    monkeypatch.delenv(locate.ENV_VAR, raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    tiny_tarball.rename(tmp_path / "shared" / "data" / "20news-bydate.tgz")
    (tmp_path / "repo" / "examples").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo" / "examples")
    monkeypatch.setattr(locate, "_search_roots", lambda: [Path.cwd(), *Path.cwd().parents])
    assert fetch_20newsgroups_bydate().source == str(tmp_path / "shared" / "data" / "20news-bydate.tgz")


def test_sklearn_fallback_gives_the_archive_documents(tiny_tarball, tmp_path, no_local_data, monkeypatch):
    calls = _fake_download(monkeypatch, _sklearn_layout(tiny_tarball, tmp_path / "download.tar.gz"))
    news = fetch_20newsgroups_bydate(data_home=tmp_path / "home")
    assert len(calls) == 1 and news.source == "sklearn.datasets.fetch_20newsgroups"
    _same_documents(news, load_20newsgroups_archive(tiny_tarball))
    # The second call reads scikit-learn's cache: no download.
    _same_documents(fetch_20newsgroups_bydate(data_home=tmp_path / "home"), news)
    assert len(calls) == 1
    binary = load_newsgroups_binary(data_home=tmp_path / "home")
    np.testing.assert_array_equal(binary.y_train, [0, 1, 0, 1, 1])


def test_no_local_copy_and_no_network_is_one_line(tmp_path, no_local_data, monkeypatch):
    twenty = pytest.importorskip("sklearn.datasets._twenty_newsgroups")

    def offline(*args, **kwargs):
        raise urllib.error.URLError("[Errno -2] Name or service not known")

    monkeypatch.setattr(twenty, "_fetch_remote", offline)
    with pytest.raises(DatasetUnavailableError, match="20 Newsgroups unavailable") as info:
        load_newsgroups_binary(data_home=tmp_path)
    assert "\n" not in str(info.value) and "Name or service not known" in str(info.value)
    with pytest.raises(DatasetUnavailableError, match="not found"):
        fetch_20newsgroups_bydate(data_home=tmp_path, download_if_missing=False)


@pytest.mark.slow
def test_real_tarball_protocol_is_unchanged():
    if not DATA.is_file():
        pytest.skip(f"20 Newsgroups tarball not found at {DATA}")
    assert _protocol_checksum(load_newsgroups_binary(DATA)) == PROTOCOL_SHA256


@pytest.mark.slow
def test_real_tarball_through_sklearn_gives_the_same_matrices(tmp_path, no_local_data, monkeypatch):
    if not DATA.is_file():
        pytest.skip(f"20 Newsgroups tarball not found at {DATA}")
    _fake_download(monkeypatch, _sklearn_layout(DATA, tmp_path / "download.tar.gz"))
    data = load_newsgroups_binary(data_home=tmp_path / "home")
    assert data.source == "sklearn.datasets.fetch_20newsgroups"
    assert _protocol_checksum(data) == PROTOCOL_SHA256
