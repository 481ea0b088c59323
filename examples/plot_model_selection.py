"""
Tuning with unlabeled rows: why plain cross-validation lies
===========================================================

A semi-supervised ``y`` marks unlabeled rows with ``-1``. Hand it to
``cross_val_score`` and every unlabeled row that falls in a test fold is
scored as an error, so the estimate collapses to roughly the labeled
fraction, whatever the model. :class:`~skssl.model_selection.SemiSupervisedKFold`
splits the labeled rows only and keeps every unlabeled row in every training
fold, so its estimate tracks the accuracy on a held-out labeled test set.

This example measures the three numbers (plain CV, ``SemiSupervisedKFold``,
held-out accuracy) as the labeled fraction grows, then tunes a
:class:`~skssl.svm.TransductiveSVC` on the pcmac text task with
``GridSearchCV``.
"""

# %%
# Plain CV against SemiSupervisedKFold against the truth
# -------------------------------------------------------
# sklearn's own ``SelfTrainingClassifier`` on the breast cancer data, with
# 5% to 50% of the training labels kept.
import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier

from skssl.datasets import load_pcmac, make_semi_supervised
from skssl.model_selection import SemiSupervisedKFold
from skssl.svm import TransductiveSVC

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
model = make_pipeline(StandardScaler(), SelfTrainingClassifier(LogisticRegression(max_iter=2000)))

fractions = [0.05, 0.1, 0.2, 0.3, 0.5]
plain, ours, held_out = [], [], []
for fraction in fractions:
    y_semi = make_semi_supervised(y_train, fraction, random_state=0)
    plain.append(cross_val_score(model, X_train, y_semi, cv=5).mean())
    ours.append(cross_val_score(model, X_train, y_semi, cv=SemiSupervisedKFold(5)).mean())
    held_out.append(model.fit(X_train, y_semi).score(X_test, y_test))
    print(
        f"{fraction:4.0%} labeled: plain CV {plain[-1]:.3f}  "
        f"SemiSupervisedKFold {ours[-1]:.3f}  held-out {held_out[-1]:.3f}"
    )

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(fractions, held_out, "k-o", label="held-out labeled test set")
ax.plot(fractions, ours, "C0-s", label="SemiSupervisedKFold(5)")
ax.plot(fractions, plain, "C3-^", label="plain cross_val_score(cv=5)")
ax.set_xlabel("fraction of training rows labeled")
ax.set_ylabel("accuracy")
ax.set_ylim(0, 1.02)
ax.legend(loc="lower right")
ax.set_title("Cross-validation estimates with unlabeled rows")
fig.tight_layout()

# %%
# Tuning a Transductive SVM with GridSearchCV
# -------------------------------------------
# pcmac has 50 labeled documents among 1,460. ``SemiSupervisedKFold(5)``
# tests on 10 labeled documents per fold and trains on the other 40 plus all
# 1,410 unlabeled ones; any scorer works.
data = load_pcmac()
search = GridSearchCV(
    TransductiveSVC(positive_fraction=0.5),
    {"alpha": [1e-4, 1e-3, 1e-2, 1e-1]},
    cv=SemiSupervisedKFold(5),
    scoring="accuracy",
)
search.fit(data.X_train, data.y_train)
print("best:", search.best_params_, f"CV accuracy {search.best_score_:.3f}")
print(f"test accuracy of the refitted model: {search.score(data.X_test, data.y_test):.3f}")

alphas = search.cv_results_["param_alpha"].data.astype(float)
fig, ax = plt.subplots(figsize=(6, 4))
ax.errorbar(
    alphas,
    search.cv_results_["mean_test_score"],
    yerr=search.cv_results_["std_test_score"],
    fmt="C0-o",
    capsize=3,
    label="SemiSupervisedKFold(5) accuracy",
)
test_scores = [
    TransductiveSVC(alpha=a, positive_fraction=0.5).fit(data.X_train, data.y_train).score(data.X_test, data.y_test)
    for a in alphas
]
ax.plot(alphas, test_scores, "k--s", label="test accuracy")
ax.set_xscale("log")
ax.set_xlabel("alpha (regularization)")
ax.set_ylabel("accuracy")
ax.legend()
ax.set_title("TransductiveSVC on pcmac: CV estimate vs test")
fig.tight_layout()
plt.show()
