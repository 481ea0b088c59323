"""End-to-end checks on pcmac (SVMlin's example data) against SVMlin 1.0's reference runs.

SVMlin's reference settings: lam = 0.001, lam_u = 1, r = 0.5 (``alpha``, ``unlabeled_weight``,
``positive_fraction`` here).
"""

import numpy as np
import pytest

from skssl.datasets import load_pcmac
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC

pytestmark = pytest.mark.slow

PARAMS = {"alpha": 1e-3, "unlabeled_weight": 1.0, "positive_fraction": 0.5}


@pytest.fixture(scope="module")
def pcmac():
    return load_pcmac()


@pytest.mark.parametrize(
    "make, min_accuracy, svmlin_objective",
    [
        (lambda: TransductiveSVC(**PARAMS), 0.92, 0.133878),
        (lambda: TransductiveSVC(max_switches=1, **PARAMS), 0.92, 0.135374),
        (lambda: DeterministicAnnealingSVC(**PARAMS), 0.93, 0.123867),
    ],
    ids=["tsvm", "tsvm-single-switch", "da"],
)
def test_pcmac_matches_svmlin(pcmac, make, min_accuracy, svmlin_objective):
    est = make().fit(pcmac.X_train, pcmac.y_train)
    assert est.objective_[0] <= svmlin_objective * 1.005
    assert est.score(pcmac.X_test, pcmac.y_test) >= min_accuracy
    # The transductive accuracy cannot be checked (pcmac ships no labels for
    # its unlabeled rows), but the balance constraint shows in the predictions.
    unl = pcmac.y_train == -1
    assert 0.4 < np.mean(est.transduction_[unl] == 1) < 0.6


def test_pcmac_supervised_baseline(pcmac):
    est = LinearL2SVC(alpha=1e-3).fit(pcmac.X_train, pcmac.y_train)
    accuracy = est.score(pcmac.X_test, pcmac.y_test)
    # SVMlin's l2-SVM-MFN on the 50 labeled rows: 66.7%; the unlabeled rows are what helps.
    assert 0.6 < accuracy < 0.75
