"""Readers of the data sets of ``user_value.py`` that ``skssl.datasets`` has no loader for.

Each reader returns a :class:`~sklearn.utils.Bunch`. Random-split sets give ``X`` and ``y``; sets with a fixed
train/test split give ``X_train``, ``y_train``, ``X_test`` and ``y_test``. Labels are integers ``0 .. K-1``
(``target_names`` gives the original names). Tabular sets also give ``categorical`` (the columns to one-hot
encode). Files are looked up like ``skssl.datasets`` does (``$SKSSL_DATA``, then ``shared/data`` beside the
repository); a missing file raises :class:`~skssl.datasets.DatasetUnavailableError`.
"""

import csv
import re
import tarfile
import zipfile

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import Bunch

from skssl.datasets import DatasetUnavailableError
from skssl.datasets._locate import find_data_file

__all__ = [
    "load_nltk",
    "load_reuters_earn",
    "load_reuters_r8",
    "load_sms",
    "load_tabular",
    "suspect_columns",
    "tabular_bunch",
]


def _path(*names):
    path = find_data_file(*names)
    if path is None:
        raise DatasetUnavailableError(
            f"{'/'.join(names)} not found (put it in $SKSSL_DATA or ../shared/data beside the repository)"
        )
    return path


def _encode(y):
    encoder = LabelEncoder()
    return encoder.fit_transform(np.asarray(y)).astype(np.int64), encoder.classes_


def _read_arff(path):
    """An ARFF file as a DataFrame (``?`` is missing) and the set of its nominal columns."""
    names, nominal, data_lines = [], set(), None
    with open(path, encoding="latin-1") as fh:
        lines = fh.read().splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.lower().startswith("@attribute"):
            match = re.match(r"@attribute\s+('([^']*)'|\S+)\s+(.*)$", stripped, flags=re.IGNORECASE)
            name = match.group(2) if match.group(2) is not None else match.group(1)
            names.append(name)
            if match.group(3).strip().startswith("{"):
                nominal.add(name)
        elif stripped.lower().startswith("@data"):
            data_lines = [x for x in lines[i + 1 :] if x.strip() and not x.startswith("%")]
            break
    rows = list(csv.reader(data_lines, quotechar="'", skipinitialspace=True))
    frame = pd.DataFrame(rows, columns=names).replace("?", np.nan)
    for name in names:
        if name not in nominal:
            frame[name] = pd.to_numeric(frame[name])
    return frame, nominal


def _read_csv(name, **kwargs):
    return pd.read_csv(
        _path("tabular", name), header=None, na_values="?", skipinitialspace=True, quotechar="'", **kwargs
    )


def _tabular_frame(name):
    if name == "adult":
        train = _read_csv("adult-train.csv")
        test = _read_csv("adult-test.csv", comment="|")
        frame = pd.concat([train, test], ignore_index=True)
        target = frame.pop(14).astype(str).str.rstrip(".")
        return frame, target, None
    if name in ("hypothyroid", "soybean", "vote"):
        frame, nominal = _read_arff(_path("tabular", f"{name}.arff"))
        target = frame.pop(frame.columns[-1])
        return frame, target, [c for c in frame.columns if c in nominal]
    frame = _read_csv("banknote_authentication.csv" if name == "banknote" else f"{name}.csv")
    if name == "horse-colic":
        target = frame.pop(22)  # outcome: lived / died / euthanized
        frame = frame.drop(columns=[2])  # the hospital number, an identifier
        keep = target.notna()
        frame, target = frame[keep], target[keep].astype(int)
    else:
        target = frame.pop(frame.columns[-1])
    if name == "abalone":
        target = pd.cut(target, [0, 8, 10, np.inf], labels=["1-8", "9-10", "11+"]).astype(str)
    elif name.startswith("winequality"):
        target = (target >= 6).map({True: ">=6", False: "<6"})
    return frame, target, None


def load_tabular(name, *, min_class_size=10):
    """A tabular set from ``tabular/`` as a DataFrame ``X`` (missing values as NaN) and integer ``y``.

    Classes with fewer than ``min_class_size`` rows are dropped (a 70/30 split
    and a 10% label draw cannot represent them). Non-numeric columns, and the
    ARFF files' nominal ones, are listed in ``categorical``.
    """
    frame, target, categorical = _tabular_frame(name)
    return tabular_bunch(frame, target, categorical, min_class_size=min_class_size)


def tabular_bunch(frame, target, categorical=None, *, min_class_size=10):
    """``frame`` and ``target`` as a benchmark's tabular set: small classes dropped, labels ``0 .. K-1``.

    ``categorical`` (default: the non-numeric columns) lists the columns to one-hot encode.
    """
    target = pd.Series(target).astype(str).to_numpy()
    names, counts = np.unique(target, return_counts=True)
    keep = np.isin(target, names[counts >= min_class_size])
    frame = frame.loc[keep].reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    if categorical is None:
        categorical = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    categorical = [str(c) for c in categorical]
    y, target_names = _encode(target[keep])
    return Bunch(X=frame, y=y, categorical=categorical, target_names=target_names)


def suspect_columns(X, y, categorical=()):
    """Columns of a tabular set that a reader should drop: identifiers, and columns that determine the outcome.

    Run it on a new batch when it is listed, before any fit (it reads the outcome, but fits nothing): an
    identifier one-hot encodes into a column per row, which lets a model memorize its labeled rows, and a column
    that the outcome is coded from turns the task into a lookup. ``pd-status`` had both (``lab``, ``abc``)
    until 2026-11-28.

    * **identifier**: a column of ``categorical`` (or non-numeric) with a distinct value on more than half of
      the rows;
    * **determines the outcome**: among the rows whose value of the column (missing values aside) is shared
      with at least one other row, at least two distinct values, a single class for each value, and those rows
      at least 90% of the rows with a value, which are at least half of all rows.

    Returns ``{column: reason}``; a column may be a fair predictor all the same (a car's model name fixes its
    drive train), which the reader's comment then says.
    """
    y = np.asarray(y)
    n_rows = len(y)
    found = {}
    for name in X.columns:
        column = X[name]
        numeric = pd.api.types.is_numeric_dtype(column) and name not in categorical
        distinct = column.nunique(dropna=True)
        if not numeric and distinct > n_rows / 2:
            found[name] = f"identifier ({distinct} distinct values in {n_rows} rows)"
            continue
        present = column.notna().to_numpy()
        if present.sum() < n_rows / 2 or np.unique(y[present]).shape[0] < 2:
            continue
        groups = pd.DataFrame({"value": column[present].to_numpy(), "y": y[present]}).groupby("value")["y"]
        stats = groups.agg(["nunique", "size"])
        shared = stats[stats["size"] >= 2]
        if len(shared) >= 2 and (shared["nunique"] == 1).all() and shared["size"].sum() >= 0.9 * present.sum():
            found[name] = f"determines the outcome ({len(stats)} values, one class each)"
    return found


def load_sms():
    """The SMS Spam Collection: messages and ``ham`` / ``spam``."""
    texts, labels = [], []
    with open(_path("sms.tsv"), encoding="utf-8") as fh:
        for line in fh:
            label, _, text = line.rstrip("\n").partition("\t")
            texts.append(text)
            labels.append(label)
    y, names = _encode(labels)
    return Bunch(X=np.array(texts, dtype=object), y=y, target_names=names)


def load_nltk(name):
    """``movie_reviews``, ``sentence_polarity`` or ``subjectivity`` from nltk_data's zip files."""
    texts, labels = [], []
    with zipfile.ZipFile(_path("nltk", f"{name}.zip")) as archive:
        if name == "movie_reviews":
            for member in sorted(archive.namelist()):
                parts = member.split("/")
                if len(parts) == 3 and parts[2].endswith(".txt"):
                    texts.append(archive.read(member).decode("utf-8"))
                    labels.append(parts[1])
        else:
            files = {
                "sentence_polarity": {"neg": "rt-polarity.neg", "pos": "rt-polarity.pos"},
                "subjectivity": {"objective": "plot.tok.gt9.5000", "subjective": "quote.tok.gt9.5000"},
            }[name]
            for label, file in files.items():
                lines = archive.read(f"{name}/{file}").decode("latin-1").splitlines()
                texts.extend(line for line in lines if line.strip())
                labels.extend(label for line in lines if line.strip())
    y, names = _encode(labels)
    return Bunch(X=np.array(texts, dtype=object), y=y, target_names=names)


_REUTERS = re.compile(r"<REUTERS([^>]*)>(.*?)</REUTERS>", flags=re.DOTALL)


def _tag(text, tag):
    """The content of ``<tag>`` in ``text``, ``None`` without one."""
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, flags=re.DOTALL)
    return match and match.group(1)


def _reuters(path=None, sort=False):
    """``(attributes, markup, topics)`` of every article in Reuters-21578's ``.sgm`` files (archive order; file
    name order with ``sort``)."""
    with tarfile.open(path or _path("reuters21578.tgz")) as archive:
        names = [m.name for m in archive.getmembers() if re.search(r"reut2-\d+\.sgm$", m.name)]
        for name in sorted(names) if sort else names:
            for attrs, doc in _REUTERS.findall(archive.extractfile(name).read().decode("latin-1")):
                yield attrs, doc, re.findall(r"<D>(.*?)</D>", _tag(doc, "TOPICS") or "")


def load_reuters_r8():
    """Reuters-21578, 8 topics: LEWISSPLIT train/test, the articles with exactly one topic among the 8 most frequent.

    The 8 topics are the most frequent among the training articles that have a single topic (acq, crude, earn,
    interest, money-fx, money-supply, ship, trade: 5,567 training and 2,207 test articles); the text is the title
    and the body.
    """
    docs = {"TRAIN": [], "TEST": []}
    for attrs, doc, topics in _reuters():
        split = re.search(r'LEWISSPLIT="(\w+)"', attrs)
        if split is not None and split.group(1) in docs and 'TOPICS="YES"' in attrs and len(topics) == 1:
            text = (_tag(doc, "TITLE") or "") + "\n" + (_tag(doc, "BODY") or "")
            docs[split.group(1)].append((topics[0], text.replace("&lt;", "<").replace("&amp;", "&")))
    names, counts = np.unique([t for t, _ in docs["TRAIN"]], return_counts=True)
    top = sorted(names[np.argsort(-counts, kind="stable")[:8]])
    out = Bunch(target_names=np.array(top))
    for split, key in (("TRAIN", "train"), ("TEST", "test")):
        kept = [(t, x) for t, x in docs[split] if t in top]
        out[f"X_{key}"] = np.array([x for _, x in kept], dtype=object)
        out[f"y_{key}"] = np.array([top.index(t) for t, _ in kept], dtype=np.int64)
    return out


def load_reuters_earn(path=None, topic="earn"):
    """Reuters-21578 (``path``, else found): every article with a body, tf-idf (min_df=2); class 1 = ``topic``."""
    docs = [(_tag(doc, "BODY"), topic in topics) for _, doc, topics in _reuters(path, sort=True)]
    docs = [(body, label) for body, label in docs if body is not None]
    X = TfidfVectorizer(min_df=2).fit_transform([body for body, _ in docs]).tocsr()
    return X, np.asarray([label for _, label in docs], dtype=np.int64)
