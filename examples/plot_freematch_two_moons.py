"""
FreeMatch on two moons with one label per class
===============================================

The FreeMatch paper opens with this case (its Fig. 1): two interleaving
moons, a thousand points, and a single labeled point per class. A
supervised net draws a boundary between the two labeled points and cuts
both moons. FixMatch's fixed confidence threshold (0.95) admits almost no
unlabeled point early on, so it learns slowly from them. FreeMatch's
self-adaptive thresholds start at ``1 / C`` and rise with the model's
confidence (its Fig. 3), so the unlabeled points are used from the first
epochs.

Every net here is skssl's default MLP, trained on the CPU in seconds.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from skssl.deep import FixMatchClassifier, FreeMatchClassifier, SupervisedNetClassifier

X, y = make_moons(n_samples=1000, noise=0.08, random_state=0)
X = X.astype(np.float32)
y_semi = np.full_like(y, -1)
for k in (0, 1):
    y_semi[np.flatnonzero(y == k)[0]] = k
labeled = y_semi != -1

models = {
    "supervised (2 labeled points)": SupervisedNetClassifier(random_state=0).fit(X[labeled], y[labeled]),
    "FixMatch (threshold 0.95)": FixMatchClassifier(random_state=0).fit(X, y_semi),
    "FreeMatch (self-adaptive)": FreeMatchClassifier(random_state=0).fit(X, y_semi),
}
for name, model in models.items():
    print(f"{name:32s} accuracy on all 1,000 points: {np.mean(model.predict(X) == y):.3f}")

# %%
# Decision boundaries
# -------------------
xx, yy = np.meshgrid(np.linspace(-1.5, 2.5, 200), np.linspace(-1.0, 1.5, 200))
grid = np.c_[xx.ravel(), yy.ravel()].astype(np.float32)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
for ax, (name, model) in zip(axes, models.items()):
    proba = model.predict_proba(grid)[:, 1].reshape(xx.shape)
    ax.contourf(xx, yy, proba, levels=20, cmap="RdBu_r", alpha=0.6)
    ax.contour(xx, yy, proba, levels=[0.5], colors="k")
    ax.scatter(X[:, 0], X[:, 1], c=y, s=4, cmap="RdBu_r", alpha=0.5)
    ax.scatter(X[labeled, 0], X[labeled, 1], c=y[labeled], s=150, marker="*", edgecolor="k", cmap="RdBu_r")
    ax.set_title(f"{name}\naccuracy {np.mean(model.predict(X) == y):.2f}")
fig.tight_layout()

# %%
# Threshold trajectories and mask rates
# -------------------------------------
# Each net records its per-class thresholds and the fraction of unlabeled
# rows that passed the mask in its skorch ``history``, once per epoch.
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
for name, color in (("FixMatch (threshold 0.95)", "C3"), ("FreeMatch (self-adaptive)", "C0")):
    history = models[name].history
    thresholds = np.array(history[:, "thresholds"])
    for k in range(thresholds.shape[1]):
        axes[0].plot(
            history[:, "epoch"], thresholds[:, k], color=color, ls=["-", "--"][k], label=f"{name.split()[0]}, class {k}"
        )
    axes[1].plot(history[:, "epoch"], history[:, "mask_rate"], color=color, label=name.split()[0])
axes[0].set_title("per-class threshold")
axes[1].set_title("fraction of unlabeled rows passing the mask")
for ax in axes:
    ax.set_xlabel("epoch")
    ax.legend()
fig.tight_layout()
plt.show()
