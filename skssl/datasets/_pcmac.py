"""The pcmac text task shipped with SVMlin, built into skssl.

SVMlin 1.0's example files (Sindhwani and Keerthi, SIGIR 2006; provenance
in ``skssl/datasets/data/README.md``), relabeled: SVMlin's 0 (unlabeled), -1
and +1 become -1, 0 and 1.
"""

from importlib import resources

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.utils import Bunch

N_FEATURES = 7510

_DESCR = """pcmac (SVMlin 1.0 example data)
-------------------------------
20 Newsgroups comp.sys.ibm.pc.hardware vs comp.sys.mac.hardware, the split used
in Sindhwani & Keerthi (SIGIR 2006) and shipped with SVMlin.

Training set: 1,460 rows x 7,510 features (sparse), 50 labeled (21 of class 1,
29 of class 0), the other 1,410 marked -1 (their true labels are not
distributed). Test set: 486 labeled rows (242 of class 1, 244 of class 0).
Class 1 is SVMlin's +1.
"""


def _read(name):
    with resources.as_file(resources.files("skssl.datasets") / "data" / name) as path:
        X, y = load_svmlight_file(str(path), n_features=N_FEATURES, dtype=np.float64)
    return X.tocsr(), y


def _svmlin_to_skssl(y):
    """SVMlin labels (+1, -1, 0 = unlabeled) -> skssl labels (1, 0, -1)."""
    out = np.full(y.shape[0], -1, dtype=np.int64)
    out[y > 0] = 1
    out[y < 0] = 0
    return out


def load_pcmac(*, return_X_y=False):
    """Load the pcmac semi-supervised text task (SVMlin's example split).

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(X_train, y_train, X_test, y_test)`` instead of a
        :class:`~sklearn.utils.Bunch`.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With the fields

        X_train : scipy.sparse.csr_matrix of shape (1460, 7510)
            Training documents.
        y_train : ndarray of int64, shape (1460,)
            ``0`` / ``1`` for the 50 labeled rows, ``-1`` for the others.
        X_test : scipy.sparse.csr_matrix of shape (486, 7510)
            Test documents.
        y_test : ndarray of int64, shape (486,)
            Test labels, ``0`` or ``1``.
        target_names : ndarray of str
            ``["svmlin_negative", "svmlin_positive"]`` (the files do not say
            which newsgroup is which).
        DESCR : str
            Description of the data.

    (X_train, y_train, X_test, y_test) : tuple
        If ``return_X_y`` is True.

    Examples
    --------
    >>> from skssl.datasets import load_pcmac
    >>> data = load_pcmac()
    >>> data.X_train.shape, int((data.y_train != -1).sum()), data.X_test.shape
    ((1460, 7510), 50, (486, 7510))
    """
    X_train, y_train = _read("pcmac_train.svmlight.gz")
    X_test, y_test = _read("pcmac_test.svmlight.gz")
    y_train, y_test = _svmlin_to_skssl(y_train), _svmlin_to_skssl(y_test)
    if return_X_y:
        return X_train, y_train, X_test, y_test
    return Bunch(
        X_train=X_train,
        y_train=y_train,
        X_test=X_test,
        y_test=y_test,
        target_names=np.array(["svmlin_negative", "svmlin_positive"]),
        DESCR=_DESCR,
    )
