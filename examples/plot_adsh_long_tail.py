"""
Adsh against FixMatch on a long-tailed split
============================================

When the classes are imbalanced, a fixed confidence threshold lets the
majority classes through and starves the minority ones: their predictions
are less confident, so few of their unlabeled rows ever pass 0.95. Adsh
(Guo & Li, ICML 2022) learns one threshold per class after every epoch, from
the confidence of the majority class, so that every class passes about the
same fraction of its predicted rows.

We build a long-tailed version of sklearn's digits with the protocol of the
Adsh paper, ``n_k = n_1 * gamma ** (-(k - 1) / (K - 1))`` with an imbalance
ratio ``gamma = 10``, keep 20% of the labels of every class, and compare the
recall of each class.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import balanced_accuracy_score, recall_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

from skssl.deep import AdshClassifier, FixMatchClassifier, SupervisedNetClassifier

X, y = load_digits(return_X_y=True)
X = MinMaxScaler().fit_transform(X).astype(np.float32)
X_pool, X_test, y_pool, y_test = train_test_split(X, y, test_size=0.4, random_state=0, stratify=y)

gamma, n_max = 10, int(np.bincount(y_pool).min())
rng = np.random.RandomState(0)
sizes = [int(n_max * gamma ** (-k / 9)) for k in range(10)]
rows = np.concatenate([rng.choice(np.flatnonzero(y_pool == k), n, replace=False) for k, n in enumerate(sizes)])
X_train, y_train = X_pool[rows], y_pool[rows]
y_semi = np.full_like(y_train, -1)
for k in range(10):
    members = np.flatnonzero(y_train == k)
    keep = rng.choice(members, max(1, len(members) // 5), replace=False)
    y_semi[keep] = k
print("training rows per class:", sizes)
print("labeled rows per class: ", np.bincount(y_semi[y_semi != -1]).tolist())

labeled = y_semi != -1
common = dict(random_state=0, max_epochs=20)
models = {
    "supervised": SupervisedNetClassifier(random_state=0).fit(X_train[labeled], y_train[labeled]),
    "FixMatch": FixMatchClassifier(mu=2, **common).fit(X_train, y_semi),
    "Adsh": AdshClassifier(mu=2, **common).fit(X_train, y_semi),
}
recalls = {}
for name, model in models.items():
    predicted = model.predict(X_test)
    recalls[name] = recall_score(y_test, predicted, average=None)
    print(
        f"{name:10s} balanced accuracy {balanced_accuracy_score(y_test, predicted):.3f}  "
        f"recall of the 3 smallest classes {np.round(recalls[name][-3:], 2).tolist()}"
    )

# %%
# Per-class recall and Adsh's learned thresholds
# ----------------------------------------------
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
width = 0.27
for i, (name, recall) in enumerate(recalls.items()):
    axes[0].bar(np.arange(10) + (i - 1) * width, recall, width, label=name)
axes[0].set_xticks(range(10))
axes[0].set_xlabel("class (training rows shrink to the right)")
axes[0].set_ylabel("test recall")
axes[0].legend(loc="lower left")
thresholds = np.array(models["Adsh"].history[:, "thresholds"])
for k in range(10):
    axes[1].plot(models["Adsh"].history[:, "epoch"], thresholds[:, k], color=plt.cm.viridis(k / 9), label=str(k))
axes[1].set_xlabel("epoch")
axes[1].set_title("Adsh per-class thresholds")
axes[1].legend(ncol=2, fontsize=7, title="class")
fig.tight_layout()
plt.show()
