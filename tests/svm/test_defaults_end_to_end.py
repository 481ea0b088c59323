"""The S3VMs with their defaults on built-in data, with accuracy floors a regression of the defaults would break."""

import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skssl.datasets import load_pcmac, make_semi_supervised
from skssl.svm import DeterministicAnnealingSVC, TransductiveSVC

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pcmac():
    return load_pcmac()


@pytest.mark.parametrize("Estimator, floor", [(TransductiveSVC, 0.925), (DeterministicAnnealingSVC, 0.93)])
def test_pcmac_defaults_find_the_balance_the_labels_miss(pcmac, Estimator, floor, capsys):
    """pcmac is balanced, its 50 labels say 0.42 positive: the clusters' fraction is what reaches the floor."""
    fitted = Estimator(verbose=1).fit(pcmac.X_train, pcmac.y_train)
    assert "class fractions from clusters of the rows" in capsys.readouterr().out
    assert fitted.score(pcmac.X_test, pcmac.y_test) >= floor


@pytest.mark.parametrize("Estimator, floor", [(TransductiveSVC, 0.93), (DeterministicAnnealingSVC, 0.94)])
def test_breast_cancer_defaults_keep_their_accuracy(Estimator, floor):
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    y_semi = make_semi_supervised(y_train, 40, random_state=0)
    assert Estimator().fit(X_train, y_semi).score(X_test, y_test) >= floor
