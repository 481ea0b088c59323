"""Built-in data, readers of the benchmark data sets, and experiment helpers.

* :func:`load_pcmac` -- the pcmac text task of SVMlin, built in;
* :func:`load_20newsgroups_archive`, :func:`load_newsgroups_binary`,
  :func:`newsgroups_labeled_subset` -- 20 Newsgroups read from a local copy
  of the "bydate" archive with the protocol of the linear benchmarks;
* :func:`make_semi_supervised` -- hide labels to set up an experiment.
"""

from ._newsgroups import load_20newsgroups_archive, load_newsgroups_binary, newsgroups_labeled_subset
from ._pcmac import load_pcmac
from ._semi_supervised import make_semi_supervised

__all__ = [
    "load_20newsgroups_archive",
    "load_newsgroups_binary",
    "load_pcmac",
    "make_semi_supervised",
    "newsgroups_labeled_subset",
]
