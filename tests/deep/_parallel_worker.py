"""One process of the two-process fits of ``test_parallel.py`` (started by ``torch.distributed.run``).

Every process fits the three semi-supervised nets on the same digits with
``accelerator=Accelerator(cpu=True)`` and saves what must agree across the
processes (weights, EMA weights, masking state, predictions); process 0 also
fits each net alone (no accelerator) for the accuracy comparison.
"""

import pickle
import sys
from pathlib import Path

import numpy as np
import torch
from accelerate import Accelerator
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skssl.datasets import make_semi_supervised
from skssl.deep import AdshClassifier, FixMatchClassifier, FreeMatchClassifier

NETS = {"fixmatch": FixMatchClassifier, "freematch": FreeMatchClassifier, "adsh": AdshClassifier}
SETTINGS = dict(max_epochs=8, iterations_per_epoch=25, batch_size=32, random_state=0)


def digits_images():
    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)  # images: the default CNN, with BatchNorm
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    return X_train, make_semi_supervised(y_train, 100, random_state=0), X_test, y_test


def state_of(net):
    policy = net.masking_
    return {
        "weights": {k: v.clone() for k, v in net.module_.state_dict().items()},
        "ema": {k: v.clone() for k, v in net.ema_state_.module.state_dict().items()},
        "policy": {k: np.asarray(v) for k, v in vars(policy).items() if k.endswith("_") and not k.startswith("_")},
        "proba": net.predict_proba(X_test),
        "accuracy": float(net.score(X_test, y_test)),
        "steps": net.ema_state_.steps,
        "n_batches": len(net.history_[-1]["batches"]),
        "plain_module": not isinstance(net.module_, torch.nn.parallel.DistributedDataParallel),
        "pickles": len(pickle.dumps(net)) > 0,
    }


def fit_different_labels(out, accelerator):
    """Process 1 hides one more label than process 0: every process must raise the same clear error."""
    X_train, y_semi, _, _ = digits_images()
    if accelerator.process_index == 1:
        y_semi = y_semi.copy()
        y_semi[np.flatnonzero(y_semi != -1)[0]] = -1
    try:
        FixMatchClassifier(accelerator=accelerator, device=accelerator.device, **SETTINGS).fit(X_train, y_semi)
        message = "no error"
    except ValueError as error:
        message = str(error)
    (out / f"rank{accelerator.process_index}.txt").write_text(message)


def end_processes(accelerator):
    """Wait for every process, then close the process group before the interpreter exits.

    A process that exits with its gloo group still open can abort in its
    threads' destructors (SIGABRT, "terminate called without an active
    exception") when the other process has already gone, which the tests saw
    on a loaded machine after the expected ``ValueError``.
    """
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    out = Path(sys.argv[1])
    if sys.argv[2:3] == ["different-labels"]:
        accelerator = Accelerator(cpu=True)
        fit_different_labels(out, accelerator)
        end_processes(accelerator)
        sys.exit(0)
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(NETS)
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    accelerator = Accelerator(cpu=True)
    X_train, y_semi, X_test, y_test = digits_images()
    result = {"world_size": accelerator.num_processes, "rank": accelerator.process_index}
    for name in names:
        settings = {**SETTINGS, "random_state": seed}
        net = NETS[name](accelerator=accelerator, device=accelerator.device, **settings).fit(X_train, y_semi)
        result[name] = state_of(net)
        if accelerator.is_main_process:
            alone = NETS[name](**settings).fit(X_train, y_semi)
            result[name + "_alone"] = state_of(alone)
    torch.save(result, out / f"rank{accelerator.process_index}.pt")
    end_processes(accelerator)
