"""20 Newsgroups ("bydate" split) from a local tarball or scikit-learn, with one fixed protocol.

SVMlin's reference runs on "comp.* + sci.* vs the rest" need the very same
matrix, so every step is fixed:

1. read every message as latin-1, replace each tab by a newline and drop
   everything up to the first blank line (a message without one is kept);
2. groups in sorted order, the files of a group in numeric order of names;
3. positive class = the groups whose name starts with ``comp.`` or ``sci.``;
4. ``TfidfVectorizer(min_df=2)`` fitted on the training split (11,314 rows,
   53,724 features) and applied to the test split (7,532 rows);
5. the labeled subset of seed ``s``: ``rng = np.random.RandomState(s)``, draw
   ``np.sort(rng.choice(n, l, replace=False))`` until both classes appear.

The tarball (``20ng/20news-bydate-{train,test}/<group>/<id>``) is read member
by member. Without it, :func:`fetch_20newsgroups_bydate` takes the raw
messages from :func:`sklearn.datasets.fetch_20newsgroups` (``remove=()``)
and applies steps 1-2 itself: one header rule whatever the source.
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
    # One sequential pass: a gzip stream cannot seek, so reading members in
    # another order than the archive's would decompress it again and again.
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
    """The same documents through :func:`sklearn.datasets.fetch_20newsgroups`.

    scikit-learn reads the very same "bydate" files (as latin-1, headers kept
    with ``remove=()``), so applying this module's header rule and order to its
    raw texts gives the documents the archive reader gives.
    """
    # ``datasets.fetch_*`` is looked up at call time, so that tests can replace the downloader.
    members = {split: {} for split in _SPLITS}
    for split in _SPLITS:
        with warnings.catch_warnings():  # one line on failure, not one warning per retry
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

    Where the documents come from, in order:

    1. ``path``, when given (a missing file raises, it never falls back);
    2. a local ``20news-bydate.tgz`` found in ``$SKSSL_DATA`` or in a
       ``shared/data`` folder of the current directory, the source tree, or
       one of their parents;
    3. :func:`sklearn.datasets.fetch_20newsgroups` (its cache in
       ``data_home``, else a 14 MB download when ``download_if_missing``).

    The documents, their order and the header removal are the same whichever
    way they come (see the module notes), so the derived matrices are
    identical.

    Parameters
    ----------
    path : str or path-like, default=None
        The ``20news-bydate.tgz`` file. None looks for one, then downloads.
    data_home : str or path-like, default=None
        The download and cache folder of scikit-learn (``~/scikit_learn_data`` when
        None).
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
        If ``path`` is missing, or no local copy is found and scikit-learn
        cannot provide the data (no network, ``download_if_missing=False``).
        The message is one line; catch it to skip.

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
        The ``20news-bydate.tgz`` file. None looks for a local copy, then
        downloads through scikit-learn (see :func:`fetch_20newsgroups_bydate`).
    positive_prefixes : tuple of str, default=("comp.", "sci.")
        Groups whose name starts with one of these are class 1.
    data_home : str or path-like, default=None
        The download and cache folder of scikit-learn, used when no local archive
        is found.
    download_if_missing : bool, default=True
        Whether scikit-learn may download the data when it is not cached.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``X_train`` (CSR float64, 11,314 x 53,724 for the standard tarball),
        ``y_train`` (0/1, fully labeled: pick a labeled subset with
        :func:`newsgroups_labeled_subset`), ``X_test``, ``y_test``,
        ``vectorizer`` (the fitted ``TfidfVectorizer(min_df=2)``),
        ``groups_train``, ``groups_test``, ``target_names`` and ``source``
        (where the documents were read).

    Raises
    ------
    DatasetUnavailableError
        When the documents can be neither found nor downloaded (one line;
        catch it to skip).
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

    Draws ``np.sort(rng.choice(n, n_labeled, replace=False))`` with
    ``rng = np.random.RandomState(seed)`` until the drawn rows hold at least
    two classes.

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
