"""The 20 Newsgroups tarball reader and DESIGN's protocol."""

import io
import tarfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.datasets._newsgroups import (
    load_20newsgroups_archive,
    load_newsgroups_binary,
    newsgroups_labeled_subset,
)

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "20news-bydate.tgz"


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
