"""
Quickstart: semi-supervised classifiers on pcmac
================================================

pcmac is the text task of the SVMlin paper: 1,460 training documents of which
only 50 are labeled, and 486 labeled test documents. This script fits every
skssl estimator on it, next to a supervised ``LinearSVC`` that sees only the
50 labeled rows, and prints test accuracy and fit time: the linear S3VMs and
Curriculum Labeling always; FixMatch, FreeMatch and Adsh when torch and skorch
are installed (``pip install ".[deep]"``), else it says so.

The deep nets take dense inputs: they are fitted in a pipeline on 100 latent
semantic components of the TF-IDF matrix (``TruncatedSVD``, fitted on all
rows, labeled or not), standardized. They are made for images and dense
features with meaningful augmentations; on 50 labeled documents the linear
S3VMs are the right tool (see the user guide, "When to use which").

Every row is labelled with the estimator exactly as it is built here, so a
row's figure is what that line of code gives: the skssl estimators run with
their defaults (``TransductiveSVC()``, ``DeterministicAnnealingSVC()``,
``LinearL2SVC()``).

Run it with ``python examples/quickstart.py`` (under 2 minutes on one CPU
core); ``--no-deep`` leaves the nets out.
"""

import argparse
import importlib
import time

from sklearn.base import clone
from sklearn.decomposition import TruncatedSVD
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from skssl.datasets import load_pcmac


def _candidates(deep=True):
    """(estimator, semi_supervised, note) for every estimator available here (the nets only with ``deep``).

    ``semi_supervised=False`` estimators are fitted on the labeled rows only.
    """
    yield LinearSVC(), False, "labeled rows only"
    svm = _optional("skssl.svm")
    if svm is not None:
        yield svm.LinearL2SVC(), False, "labeled rows only"
        yield svm.TransductiveSVC(), True, ""
        yield svm.DeterministicAnnealingSVC(), True, ""
    self_training = _optional("skssl.self_training")
    if self_training is not None:
        yield self_training.CurriculumLabelingClassifier(LogisticRegression(C=100.0, max_iter=1000)), True, ""
    deep = _optional("skssl.deep") if deep else None
    if deep is None:
        return
    import torch

    # Nets this small gain nothing from several threads, and on a busy machine
    # idle OpenMP threads spinning for work cost many times the fit itself.
    torch.set_num_threads(1)
    for name in ("FixMatchClassifier", "FreeMatchClassifier", "AdshClassifier"):
        net = getattr(deep, name)(random_state=0)
        yield make_pipeline(TruncatedSVD(100, random_state=0), StandardScaler(), net), True, "on 100 LSA components"


def _optional(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _label(estimator, note):
    """The estimator as its code reads (the last step of a pipeline), and how it is fitted."""
    shown = repr(estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator)
    return f"{' '.join(shown.split())}" + (f" ({note})" if note else "")


def main(argv=None):
    parser = argparse.ArgumentParser(description="skssl's estimators on pcmac, next to a supervised LinearSVC")
    parser.add_argument("--no-deep", action="store_true", help="leave out the deep nets (FixMatch, FreeMatch, Adsh)")
    args = parser.parse_args(argv)
    data = load_pcmac()
    labeled = data.y_train != -1
    print(
        f"pcmac: {data.X_train.shape[0]} training rows ({labeled.sum()} labeled), "
        f"{data.X_test.shape[0]} test rows, {data.X_train.shape[1]} features\n"
    )
    print(f"{'test accuracy':>13s} {'fit CPU s':>9s}  estimator")
    for estimator, semi_supervised, note in _candidates(deep=not args.no_deep):
        name = _label(estimator, note)
        estimator = clone(estimator)
        rows = slice(None) if semi_supervised else labeled
        X, y = data.X_train[rows], data.y_train[rows]
        start = time.process_time()
        estimator.fit(X, y)
        elapsed = time.process_time() - start
        accuracy = estimator.score(data.X_test, data.y_test)
        print(f"{accuracy:13.1%} {elapsed:9.2f}  {name}")
    if not args.no_deep and _optional("skssl.deep") is None:
        print("\nFixMatch, FreeMatch and Adsh skipped: they need torch and skorch (pip install '.[deep]').")


if __name__ == "__main__":
    main()
