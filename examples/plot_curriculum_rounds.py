"""
Curriculum Labeling, round by round
===================================

:class:`~skssl.self_training.CurriculumLabelingClassifier` turns any
classifier with ``predict_proba`` into a semi-supervised one. Round 0 fits
the labeled rows. Each later round scores every unlabeled row with the
previous model, keeps the rows whose confidence is above a percentile that
falls by ``step`` each round (80, 60, 40, 20, 0) and fits a *fresh* model on
labeled plus pseudo-labeled rows. Here it wraps ``LogisticRegression`` on the
digits with 10 labels per class; we follow the threshold, the rows used and
the accuracy of each round's model, and compare with the supervised model
and with the fine-tuning ablation (``reinitialize=False``).
"""

# %%
import matplotlib.pyplot as plt
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skssl.datasets import make_semi_supervised
from skssl.self_training import CurriculumLabelingClassifier

X, y = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
y_semi = make_semi_supervised(y_train, 100, random_state=0)  # 10 labels per class
labeled = y_semi != -1

base = LogisticRegression(C=0.1, max_iter=2000)
supervised = clone(base).fit(X_train[labeled], y_train[labeled])
print(f"supervised on {labeled.sum()} labeled rows: test accuracy {supervised.score(X_test, y_test):.3f}")

# %%
# The accuracy of each round
# --------------------------
# ``history_`` records the threshold and the rows of every round; the
# rounds' models themselves are not kept (each round fits a fresh clone). To
# score each of them on the test set, this example wraps the classifier in a
# small subclass that remembers every fitted copy.


class RecordingLogisticRegression(LogisticRegression):
    """LogisticRegression that remembers every fitted copy (for this example only)."""

    fitted = []

    def fit(self, X, y, sample_weight=None):
        super().fit(X, y, sample_weight=sample_weight)
        RecordingLogisticRegression.fitted.append(self)
        return self


# ``safeguard=None``: the default safeguard runs the curriculum again on folds of
# the labeled rows (and may return round 0's model); here we follow the rounds alone.
curriculum = CurriculumLabelingClassifier(
    RecordingLogisticRegression(C=0.1, max_iter=2000), safeguard=None, random_state=0
)
curriculum.fit(X_train, y_semi)
round_accuracy = [model.score(X_test, y_test) for model in RecordingLogisticRegression.fitted]
for entry, accuracy in zip(curriculum.history_, round_accuracy):
    print(
        f"round {entry['round']}: percentile {entry['percentile']:5.1f}  threshold {entry['threshold']:.3f}  "
        f"pseudo-labeled {entry['n_pseudo']:4d}  left {entry['n_left']:3d}  test accuracy {accuracy:.3f}"
    )

finetuned = CurriculumLabelingClassifier(clone(base), reinitialize=False, safeguard=None, random_state=0)
finetuned.fit(X_train, y_semi)
print(
    f"Curriculum Labeling: {curriculum.score(X_test, y_test):.3f}   "
    f"reinitialize=False: {finetuned.score(X_test, y_test):.3f}"
)

# %%
rounds = [h["round"] for h in curriculum.history_]
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
axes[0].plot(rounds[1:], curriculum.thresholds_[1:], "C0-o")
axes[0].set_title("confidence threshold")
axes[1].bar(rounds, [h["n_train"] for h in curriculum.history_], color="C1")
axes[1].set_title("rows fitted (labeled + pseudo)")
axes[2].plot(rounds, round_accuracy, "C2-o", label="round model")
axes[2].axhline(supervised.score(X_test, y_test), color="k", ls="--", label="supervised")
axes[2].set_title("test accuracy")
axes[2].legend(loc="lower right")
for ax in axes:
    ax.set_xlabel("round")
fig.suptitle("Curriculum Labeling on digits, 10 labels per class")
fig.tight_layout()
plt.show()
