"""Built-in data, readers of the benchmark data sets, and experiment helpers.

* :func:`load_pcmac` -- the pcmac text task of SVMlin, built in;
* :func:`fetch_20newsgroups_bydate`, :func:`load_newsgroups_binary`,
  :func:`newsgroups_labeled_subset` -- 20 Newsgroups from a local copy of the
  "bydate" archive, else from scikit-learn's download, with the protocol of
  the linear benchmarks; :func:`load_20newsgroups_archive` reads a given
  archive only;
* :func:`fetch_mnist` -- MNIST from a local copy, else from OpenML;
* :class:`DatasetUnavailableError` -- raised, with a one-line message, when a
  data set can be neither found nor downloaded;
* :func:`make_semi_supervised` -- hide labels to set up an experiment.
"""

from ._locate import DatasetUnavailableError
from ._mnist import fetch_mnist
from ._newsgroups import (
    fetch_20newsgroups_bydate,
    load_20newsgroups_archive,
    load_newsgroups_binary,
    newsgroups_labeled_subset,
)
from ._pcmac import load_pcmac
from ._semi_supervised import make_semi_supervised

__all__ = [
    "DatasetUnavailableError",
    "fetch_20newsgroups_bydate",
    "fetch_mnist",
    "load_20newsgroups_archive",
    "load_newsgroups_binary",
    "load_pcmac",
    "make_semi_supervised",
    "newsgroups_labeled_subset",
]
