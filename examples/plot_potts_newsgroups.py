"""
One labeling for all topics: Potts DA against one-vs-rest DA
=============================================================

:class:`~skssl.svm.DeterministicAnnealingSVC` is binary; on several classes
it fits one-vs-rest, and each of its binary problems guesses the labels of
the unlabeled documents on its own: a document may end up "positive" for
two topics or for none. :class:`~skssl.svm.PottsDeterministicAnnealingSVC`
gives every unlabeled document one distribution over the topics (a Potts
glass, as Sindhwani & Keerthi sketch in "Large Scale Semi-supervised Linear
SVMs", SIGIR 2006) so that the guesses form one consistent labeling whose
class fractions are met exactly.

To run in about a minute, this example uses four related newsgroups (two
computer-hardware groups and two religion/atheism groups), 250 training
documents of each and 5 labeled documents per topic, with the remaining
training documents unlabeled; the
benchmark ``benchmarks/potts_newsgroups.py`` runs all 20 groups. The data
come from :func:`~skssl.datasets.fetch_20newsgroups_bydate`: a local copy of
the archive (in ``$SKSSL_DATA`` or ``../shared/data`` beside the repository),
else scikit-learn's download; without either the example says so and stops.
"""

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import ConfusionMatrixDisplay, accuracy_score

from skssl.datasets import DatasetUnavailableError, fetch_20newsgroups_bydate, make_semi_supervised
from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC

try:
    news = fetch_20newsgroups_bydate()
except DatasetUnavailableError as exc:
    news = None
    print(f"skipping this example: {exc}")
HAVE_DATA = news is not None

# %%
# Four topics, five labels each
# -----------------------------
groups = ["alt.atheism", "comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware", "soc.religion.christian"]
if HAVE_DATA:
    codes = [news.target_names.index(g) for g in groups]

    def subset(texts, targets):
        targets = np.asarray(targets)
        keep = np.flatnonzero(np.isin(targets, codes))
        return [texts[i] for i in keep], np.searchsorted(codes, targets[keep])

    docs_train, y_train = subset(news.data_train, news.target_train)
    # Keep 250 training documents per topic so that the example runs quickly.
    keep = np.sort(np.concatenate([np.flatnonzero(y_train == k)[:250] for k in range(len(groups))]))
    docs_train, y_train = [docs_train[i] for i in keep], y_train[keep]
    docs_test, y_test = subset(news.data_test, news.target_test)
    vectorizer = TfidfVectorizer(min_df=2)
    X_train = vectorizer.fit_transform(docs_train)
    X_test = vectorizer.transform(docs_test)
    y_semi = make_semi_supervised(y_train, 5, per_class=True, random_state=0)
    print(f"{X_train.shape[0]} training documents ({np.sum(y_semi != -1)} labeled), {X_test.shape[0]} test")

# %%
# Fit both models
# ---------------
# Both take the class fractions of the unlabeled documents from the labeled
# ones (here uniform) and the same ``alpha`` and ``unlabeled_weight``.
if HAVE_DATA:
    models = {
        "one-vs-rest DA": DeterministicAnnealingSVC(alpha=1e-3),
        "Potts DA": PottsDeterministicAnnealingSVC(alpha=1e-3),
    }
    for name, model in models.items():
        start = time.process_time()
        model.fit(X_train, y_semi)
        print(
            f"{name}: test accuracy {accuracy_score(y_test, model.predict(X_test)):.3f} "
            f"in {time.process_time() - start:.1f} CPU s"
        )

# %%
# How consistent are the one-vs-rest guesses?
# -------------------------------------------
# Count the unlabeled documents that no one-vs-rest problem calls positive,
# or that several do. The Potts model has one distribution per document.
if HAVE_DATA:
    unlabeled = y_semi == -1
    positives = (models["one-vs-rest DA"].decision_function(X_train[unlabeled]) > 0).sum(axis=1)
    print(f"one-vs-rest: {np.mean(positives == 0):.1%} of the unlabeled documents positive for no topic, ")
    print(f"             {np.mean(positives > 1):.1%} positive for several")
    shares = models["Potts DA"].label_distributions_[unlabeled].mean(axis=0)
    print("Potts: mean distribution over the topics of the unlabeled documents", np.round(shares, 3))

# %%
# Confusion matrices on the test documents
# ----------------------------------------
if HAVE_DATA:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), constrained_layout=True)
    short = ["atheism", "pc", "mac", "christian"]
    for ax, (name, model) in zip(axes, models.items()):
        ConfusionMatrixDisplay.from_predictions(
            y_test, model.predict(X_test), display_labels=short, ax=ax, colorbar=False, normalize="true"
        )
        ax.set_title(f"{name}: accuracy {accuracy_score(y_test, model.predict(X_test)):.2f}")
    plt.show()
