"""20 Newsgroups ("bydate" split) from a local tarball or scikit-learn, with one fixed protocol.

SVMlin's runs on "comp.* + sci.* vs the rest" (Sindhwani and Keerthi, 2006)
need the same matrix: latin-1 messages without headers (up to the first
blank line, tabs read as newlines), groups sorted and files in numeric
order, ``TfidfVectorizer(min_df=2)`` fitted on the training split. Both
sources (the tarball, scikit-learn's download) go through the same rules.
"""

import tarfile
import warnings
from pathlib import Path

import numpy as np
from sklearn import datasets
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.utils import Bunch

from ._locate import DatasetUnavailableError, _skip_example, find_data_file

__all__ = [
    "fetch_20newsgroups_bydate",
    "load_20newsgroups_archive",
    "load_newsgroups_binary",
    "newsgroups_labeled_subset",
]

ARCHIVE_NAME = "20news-bydate.tgz"

_SPLITS = ("train", "test")


def _strip_header(text):
    text = text.replace("\t", "\n")
    _, sep, body = text.partition("\n\n")
    return body if sep else text


def _numeric_key(name):
    stem = name.rsplit("/", 1)[-1]
    return (0, int(stem), stem) if stem.isdigit() else (1, 0, stem)


def _assemble(members, source):
    """Documents in the protocol's order from ``members[split][group] = [(key, text), ...]``."""
    groups = sorted(set(members["train"]) | set(members["test"]))
    out = Bunch(target_names=groups, source=source)
    for split in _SPLITS:
        docs, target = [], []
        for k, group in enumerate(groups):
            for _, text in sorted(members[split].get(group, []), key=lambda item: item[0]):
                docs.append(text)
                target.append(k)
        out[f"data_{split}"] = docs
        out[f"target_{split}"] = np.asarray(target, dtype=np.int64)
    return out


def load_20newsgroups_archive(path):
    """Read the 20 Newsgroups "bydate" tarball into documents and group labels.

    Parameters
    ----------
    path : str or path-like
        The ``20news-bydate.tgz`` file.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data_train``, ``data_test`` (lists of str, headers removed),
        ``target_train``, ``target_test`` (int group indices),
        ``target_names`` (the 20 groups, sorted) and ``source`` (the path read).

    Raises
    ------
    DatasetUnavailableError
        If ``path`` does not exist (a :class:`FileNotFoundError`).
    ValueError
        If the tarball does not have the bydate layout.

    See Also
    --------
    fetch_20newsgroups_bydate : Find a local copy or download, then read it the same way.
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetUnavailableError(f"20 Newsgroups tarball not found: {path}")
    # one sequential pass: a gzip stream cannot seek
    members = {split: {} for split in _SPLITS}
    with tarfile.open(path, "r:*") as tar:
        for info in tar:
            if not info.isfile():
                continue
            parts = info.name.split("/")
            if len(parts) < 3 or not parts[-3].startswith("20news-bydate-"):
                continue
            split = parts[-3].rsplit("-", 1)[-1]
            if split in members:
                text = _strip_header(tar.extractfile(info).read().decode("latin-1"))
                members[split].setdefault(parts[-2], []).append((_numeric_key(info.name), text))
    if not members["train"] or not members["test"]:
        raise ValueError(
            f"{path} does not look like 20news-bydate.tgz: expected members "
            "'<dir>/20news-bydate-train/<group>/<id>' and '.../20news-bydate-test/...'."
        )
    return _assemble(members, str(path))


def _from_sklearn(data_home, download_if_missing):
    """The same documents through :func:`sklearn.datasets.fetch_20newsgroups` (``remove=()``, this module's rules)."""
    # looked up at call time, so that tests can replace the downloader
    members = {split: {} for split in _SPLITS}
    for split in _SPLITS:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Retry downloading")
            bunch = datasets.fetch_20newsgroups(
                subset=split, data_home=data_home, shuffle=False, remove=(), download_if_missing=download_if_missing
            )
        for text, filename in zip(bunch.data, bunch.filenames):
            file = Path(str(filename))
            members[split].setdefault(file.parent.name, []).append((_numeric_key(file.name), _strip_header(text)))
    return _assemble(members, "sklearn.datasets.fetch_20newsgroups")


@_skip_example("fetch_20newsgroups_bydate", "news", 'raise SystemExit(f"skipped: {exc}")')
def fetch_20newsgroups_bydate(path=None, *, data_home=None, download_if_missing=True):
    """20 Newsgroups "bydate" documents from a local archive, else from scikit-learn's download.

    Sources in order: ``path``; a local ``20news-bydate.tgz`` in
    ``$SKSSL_DATA`` or a ``shared/data`` folder; scikit-learn's cache or
    download. Every source gives the same documents in the same order.

    Parameters
    ----------
    path : str or path-like, default=None
        The ``20news-bydate.tgz`` file. None looks for one, then downloads.
    data_home : str or path-like, default=None
        The download and cache folder of scikit-learn.
    download_if_missing : bool, default=True
        Whether scikit-learn may download the data when it is not cached.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data_train``, ``data_test`` (lists of str, headers removed),
        ``target_train``, ``target_test`` (int group indices), ``target_names``
        (the 20 groups, sorted) and ``source`` (the archive path, or
        ``"sklearn.datasets.fetch_20newsgroups"``).

    Raises
    ------
    DatasetUnavailableError
        If ``path`` is missing, or no copy is found and none can be downloaded.

    See Also
    --------
    load_newsgroups_binary : The "comp.* + sci.* vs the rest" task as tf-idf matrices.
    """
    if path is not None:
        return load_20newsgroups_archive(path)
    local = find_data_file(ARCHIVE_NAME)
    if local is not None:
        return load_20newsgroups_archive(local)
    try:
        return _from_sklearn(data_home, download_if_missing)
    except OSError as exc:  # URLError, socket and checksum errors, sklearn's "not found"
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise DatasetUnavailableError(
            f"20 Newsgroups unavailable: no local {ARCHIVE_NAME} (pass its path, or put it in $SKSSL_DATA "
            f"or ../shared/data) and scikit-learn's fetch_20newsgroups failed ({reason})."
        ) from exc


def load_newsgroups_binary(path=None, *, positive_prefixes=("comp.", "sci."), data_home=None, download_if_missing=True):
    """The "comp.* + sci.* vs the rest" task as tf-idf matrices.

    Parameters
    ----------
    path : str or path-like, default=None
        The ``20news-bydate.tgz`` file (see :func:`fetch_20newsgroups_bydate`).
    positive_prefixes : tuple of str, default=("comp.", "sci.")
        Groups whose name starts with one of these are class 1.
    data_home : str or path-like, default=None
        The download and cache folder of scikit-learn.
    download_if_missing : bool, default=True
        Whether scikit-learn may download the data when it is not cached.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``X_train``, ``y_train`` (0/1, fully labeled), ``X_test``, ``y_test``,
        ``vectorizer``, ``groups_train``, ``groups_test``, ``target_names``
        and ``source``.

    Raises
    ------
    DatasetUnavailableError
        When the documents can be neither found nor downloaded.
    """
    raw = fetch_20newsgroups_bydate(path, data_home=data_home, download_if_missing=download_if_missing)
    positive = np.array([name.startswith(tuple(positive_prefixes)) for name in raw.target_names])
    vectorizer = TfidfVectorizer(min_df=2)
    X_train = vectorizer.fit_transform(raw.data_train).tocsr()
    X_test = vectorizer.transform(raw.data_test).tocsr()
    return Bunch(
        X_train=X_train,
        y_train=positive[raw.target_train].astype(np.int64),
        X_test=X_test,
        y_test=positive[raw.target_test].astype(np.int64),
        vectorizer=vectorizer,
        groups_train=raw.target_train,
        groups_test=raw.target_test,
        target_names=raw.target_names,
        source=raw.source,
    )


def newsgroups_labeled_subset(y, n_labeled, seed):
    """Semi-supervised target of the SVMlin-style protocol: ``n_labeled`` random rows kept, the rest -1.

    Redraws ``np.sort(rng.choice(n, n_labeled, replace=False))`` until two classes appear.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Full labels.
    n_labeled : int
        Number of labeled rows, ``2 <= n_labeled <= n_samples``.
    seed : int
        Seed of the draw.

    Returns
    -------
    y_semi : ndarray of shape (n_samples,)
        ``y`` on the drawn rows, ``-1`` elsewhere.
    positive_fraction : float
        The true fraction of class 1 among the unlabeled rows (SVMlin's ``r``);
        NaN when no row is left unlabeled.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.datasets import newsgroups_labeled_subset
    >>> y_semi, r = newsgroups_labeled_subset(np.array([0, 1, 0, 1, 1, 0]), 2, seed=0)
    >>> np.unique(y_semi[y_semi != -1]).tolist()
    [0, 1]
    """
    y = np.asarray(y)
    n = y.shape[0]
    if len(np.unique(y)) < 2:
        raise ValueError("y holds one class; a labeled subset with two classes cannot be drawn.")
    if not 2 <= n_labeled <= n:
        raise ValueError(f"n_labeled must be in [2, {n}], got {n_labeled}.")
    rng = np.random.RandomState(seed)
    while True:
        rows = np.sort(rng.choice(n, n_labeled, replace=False))
        if len(np.unique(y[rows])) >= 2:
            break
    y_semi = np.full(n, -1, dtype=np.int64)
    y_semi[rows] = y[rows]
    unlabeled = y_semi == -1
    r = float(np.mean(y[unlabeled] == 1)) if unlabeled.any() else float("nan")
    return y_semi, r
