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

Run it with ``python examples/quickstart.py`` (under 2 minutes on one CPU
core).
"""

import importlib
import time

from sklearn.base import clone
from sklearn.decomposition import TruncatedSVD
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from skssl.datasets import load_pcmac


def _candidates():
    """(name, estimator, semi_supervised) for every estimator available here.

    ``semi_supervised=False`` estimators are fitted on the labeled rows only.
    """
    yield "LinearSVC (labeled rows only)", LinearSVC(), False
    svm = _optional("skssl.svm")
    if svm is not None:
        yield "skssl LinearL2SVC (labeled rows only)", svm.LinearL2SVC(alpha=1e-3), False
        yield "skssl TransductiveSVC", svm.TransductiveSVC(alpha=1e-3, positive_fraction=0.5), True
        yield "skssl DeterministicAnnealingSVC", svm.DeterministicAnnealingSVC(alpha=1e-3, positive_fraction=0.5), True
    self_training = _optional("skssl.self_training")
    if self_training is not None:
        yield (
            "skssl CurriculumLabeling(LogisticRegression)",
            self_training.CurriculumLabelingClassifier(LogisticRegression(C=100.0, max_iter=1000)),
            True,
        )
    deep = _optional("skssl.deep")
    if deep is None:
        return
    import torch

    # Nets this small gain nothing from several threads, and on a busy machine
    # idle OpenMP threads spinning for work cost many times the fit itself.
    torch.set_num_threads(1)
    for name in ("FixMatchClassifier", "FreeMatchClassifier", "AdshClassifier"):
        net = getattr(deep, name)(random_state=0)
        lsa = make_pipeline(TruncatedSVD(100, random_state=0), StandardScaler(), net)
        yield f"skssl {name} (on 100 LSA components)", lsa, True


def _optional(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def main():
    data = load_pcmac()
    labeled = data.y_train != -1
    print(
        f"pcmac: {data.X_train.shape[0]} training rows ({labeled.sum()} labeled), "
        f"{data.X_test.shape[0]} test rows, {data.X_train.shape[1]} features\n"
    )
    print(f"{'estimator':52s} {'test accuracy':>13s} {'fit time (s)':>12s}")
    for name, estimator, semi_supervised in _candidates():
        estimator = clone(estimator)
        rows = slice(None) if semi_supervised else labeled
        X, y = data.X_train[rows], data.y_train[rows]
        start = time.process_time()
        estimator.fit(X, y)
        elapsed = time.process_time() - start
        accuracy = estimator.score(data.X_test, data.y_test)
        print(f"{name:52s} {accuracy:13.1%} {elapsed:12.2f}")
    if _optional("skssl.deep") is None:
        print("\nFixMatch, FreeMatch and Adsh skipped: they need torch and skorch (pip install '.[deep]').")


if __name__ == "__main__":
    main()
